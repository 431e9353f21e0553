"""vmap over nested lists/tuples/dicts of batched and unbatched arrays.

The batching analysis must know that ``rows[i]`` of ``rows = [[a, b], [c, d]]``
(or of a list built by a comprehension) is itself a list: before, such an item
was taken for a batched array, ``len`` read its per-example length and indexing
went through ``ad.bgetitem`` (``jnp.block([[v, v], [v, v]])`` under vmap raised
IndexError). Oracles: a Python loop over the examples (eager srcjax), and values
recorded from JAX 0.10.2 where noted.
"""

from __future__ import annotations

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

X = np.arange(6.0, dtype=np.float32).reshape(3, 2) / 3
Y = np.arange(2.0, dtype=np.float32) + 10


def loop(f, *args):
    return np.stack([f(*[a[i] for a in args]) for i in range(np.shape(args[0])[0])])


def block2(v):
    return jnp.block([[v, v], [v, v]])


def block_mixed(v):
    return jnp.block([[v, Y], [Y * 2, v]])


def block3(v):
    return jnp.block([[[v]], [[Y]]])


def block_comp(v):
    return jnp.block([[v, v * i] for i in range(3)])


def stack_nested(v):
    return jnp.stack([jnp.stack([v, Y]), jnp.stack([Y, v])])


def concat_rows(v):
    return jnp.concatenate([jnp.stack(r) for r in [[v, Y], [Y, -v]]])


def array_nested(v):
    return jnp.array([[v[0], 1.0], [2.0, v[1]]])


def rows_loop(v):
    rows = [[v, Y], (Y, v * 3)]
    out = []
    for r in rows:
        out.append(jnp.concatenate(r))
    return jnp.stack(out)


def tuple_of_lists(v):
    rows = ([v, Y], (Y, v))
    total = 0.0
    for i, r in enumerate(rows):
        total = total + jnp.sum(jnp.stack(r) * (i + 1))
    return total


def dict_of_lists(v):
    d = {"a": [v, Y], "b": [Y, v * v]}
    return jnp.concatenate(d["b"]) + jnp.concatenate(d["a"])


def list_of_lists_len(v):
    rows = [[v, v, Y], [Y, v, v]]
    return jnp.stack([jnp.sum(jnp.stack(r)) * len(r) for r in rows])


def zip_rows(v):
    rows = [[v, Y], [Y, v]]
    return sum(jnp.sum(jnp.stack(r)) * w for r, w in zip(rows, [1.0, 2.0]))


def enumerate_slice(v):
    rows = [[v, Y], [Y, v], [v, v]]
    return jnp.stack([jnp.concatenate(r) * i for i, r in enumerate(rows[1:])])


def unpack_rows(v):
    a, b = [[v, Y], [Y, 2 * v]]
    c, d = b
    return jnp.concatenate(a) + jnp.concatenate([d, c])


def append_in_while(v):
    rows = [[v, Y]]
    while len(rows) < 3:
        rows.append([rows[-1][1], rows[-1][0] * 2])
    return jnp.array(rows)


def loop_nesting(v):
    # the structure of `rows` changes every trip: not known statically
    rows = [v]
    for _ in range(2):
        rows = [rows, rows]
    return jnp.array(rows)


def branch_structures(v, nested=True):
    if nested:
        rows = [[v, Y], [Y, v]]
    else:
        rows = [v, Y]
    return jnp.array(rows)


def flat_branch(v):
    return branch_structures(v, False)


def asarray_list(v):
    return jnp.asarray([v, Y])


def asarray_nested(v):
    return jnp.asarray([[v, Y], (Y, v * 2)])


def asarray_tuple_scalars(v):
    return jnp.asarray((v[0], 2.0))


def unknown_structure(v, flat=False):
    # the analysis takes `rows` after the `if` for the branch it saw last (a list
    # of arrays): its items are found to be lists at run time
    rows = [[v * 2, Y], [Y, v]]
    if flat:
        rows = [v, Y]
    return jnp.stack(rows[0])[0] + jnp.array(rows[1]) + jnp.asarray(rows[0])


CASES = [
    asarray_list,
    asarray_nested,
    asarray_tuple_scalars,
    unknown_structure,
    zip_rows,
    enumerate_slice,
    unpack_rows,
    append_in_while,
    loop_nesting,
    branch_structures,
    flat_branch,
    block2,
    block_mixed,
    block3,
    block_comp,
    stack_nested,
    concat_rows,
    array_nested,
    rows_loop,
    tuple_of_lists,
    dict_of_lists,
    list_of_lists_len,
]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_vmap_nested_displays(f):
    out = srcjax.vmap(f)(X)
    np.testing.assert_allclose(out, loop(f, X), rtol=1e-6)
    assert out.dtype == np.float32


def test_block_issue_shape_and_values():
    out = srcjax.vmap(block2)(X)
    assert out.shape == (3, 2, 4)
    np.testing.assert_array_equal(out[1], np.block([[X[1], X[1]], [X[1], X[1]]]))


def test_no_per_example_fallback():
    src = srcjax.source(srcjax.vmap(block2))
    assert "no batching rule" not in src


@pytest.mark.parametrize("f", [concat_rows, stack_nested, rows_loop], ids=lambda f: f.__name__)
def test_jit_vmap_and_vmap_jit(f):
    ref = loop(f, X)
    np.testing.assert_allclose(srcjax.jit(srcjax.vmap(f))(X), ref, rtol=1e-6)
    np.testing.assert_allclose(srcjax.vmap(srcjax.jit(f))(X), ref, rtol=1e-6)


def test_vmap_vmap_nested_lists():
    xs = np.stack([X, X + 1])
    out = srcjax.vmap(srcjax.vmap(stack_nested))(xs)
    ref = np.stack([loop(stack_nested, xs[i]) for i in range(2)])
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_list_argument_of_lists_in_axes_none():
    def f(v, rows):
        return jnp.block([[v, rows[0]], [rows[1], v]])

    rows = [Y, Y * 2]
    out = srcjax.vmap(f, in_axes=(0, None))(X, rows)
    np.testing.assert_allclose(out, loop(lambda v: f(v, rows), X))


def loss(v):
    m = jnp.block([[v[:, None], jnp.sin(v)[:, None]], [jnp.ones((2, 1)), v[::-1, None] ** 2]])
    return jnp.sum(m.T @ m)


def test_vmap_through_block_matches_jax():
    # recorded from JAX 0.10.2: jax.vmap(loss)(X) (vmap(grad) through nested
    # lists is tested below on a smaller function: jnp.block's inlined source
    # makes its gradient code slow to generate)
    vals = np.array([2.6708653, 11.128754, 34.38857], dtype=np.float32)
    np.testing.assert_allclose(srcjax.vmap(loss)(X), vals, rtol=1e-5)


def rows_loss(v):
    rows = [[v, jnp.sin(v)], [jnp.ones(2), v[::-1] ** 2]]
    m = jnp.stack([jnp.stack(r) for r in rows]).reshape(4, 2)
    return jnp.sum(m.T @ m)


def rows_loss_np(v):
    m = np.stack([[v, np.sin(v)], [np.ones(2), v[::-1] ** 2]]).reshape(4, 2)
    return np.sum(m.T @ m)


def total_loss(a):
    return jnp.sum(srcjax.vmap(rows_loss)(a))


def test_grad_of_vmap_and_hessian_through_nested_lists():
    x64 = X.astype(np.float64)
    # float64 central differences of the per-example loss (NumPy)
    eps = 1e-6
    fd = np.zeros_like(x64)
    for idx in np.ndindex(*x64.shape):
        d = np.zeros_like(x64)
        d[idx] = eps
        fd[idx] = (sum(map(rows_loss_np, x64 + d)) - sum(map(rows_loss_np, x64 - d))) / (2 * eps)
    np.testing.assert_allclose(srcjax.grad(total_loss)(X), fd, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(srcjax.vmap(srcjax.grad(rows_loss))(X), fd, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(
        srcjax.jit(srcjax.vmap(srcjax.grad(rows_loss)))(X), fd, rtol=1e-5, atol=1e-5
    )
    h = srcjax.vmap(srcjax.hessian(rows_loss))(X)
    np.testing.assert_allclose(h, loop(srcjax.hessian(rows_loss), X), rtol=1e-5)


def asarray_loss(v):
    m = jnp.asarray([[v, jnp.sin(v)], [Y, v * v]])
    return jnp.sum(m[0] * m[1])


def asarray_loss_np(v):
    return np.sum(np.array([v, np.sin(v)]) * np.array([Y, v * v]))


def test_grad_through_asarray_of_lists():
    x64 = X.astype(np.float64)
    fd = np.zeros_like(x64)
    for idx in np.ndindex(*x64.shape):
        d = np.zeros_like(x64)
        d[idx] = 1e-6
        fd[idx] = (
            asarray_loss_np(x64[idx[0]] + d[idx[0]]) - asarray_loss_np(x64[idx[0]] - d[idx[0]])
        ) / 2e-6
    np.testing.assert_allclose(srcjax.vmap(srcjax.grad(asarray_loss))(X), fd, rtol=1e-5, atol=1e-5)
    total = srcjax.grad(lambda a: jnp.sum(srcjax.vmap(asarray_loss)(a)))(X)
    np.testing.assert_allclose(total, fd, rtol=1e-5, atol=1e-5)
