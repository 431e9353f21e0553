"""Jacobians in generated loops (``jacfwd``/``jacrev`` called inside ``jit``,
``grad`` or a loop body: one jvp/vjp per basis element) under ``vmap``: the
one-hot basis is built once for all examples and the columns or rows are
assembled with their batch axis kept (``ad.basis``/``ad.jac_columns``/
``ad.jac_rows`` batching rules), not by a Python loop over the examples. The
oracle is the same function run one example at a time (the unbatched code)."""

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax import lax


def residual(x, a):
    return jnp.array(
        [
            x[0] ** 2 + x[1] ** 2 + x[2] ** 2 - a[0],
            jnp.exp(x[0]) + x[1] * x[2] - a[1],
            jnp.sin(x[1]) + x[0] * x[2] ** 3 - a[2],
        ]
    )


def newton(a, x0):
    J = srcjax.jacfwd(residual)

    def cond(s):
        return (s[2] > 1e-6) & (s[1] < 50)

    def body(s):
        x, it, _ = s
        r = residual(x, a)
        return x + jnp.linalg.solve(J(x, a), -r), it + 1, jnp.max(jnp.abs(r))

    x, it, _ = lax.while_loop(cond, body, (x0, 0, jnp.inf))
    return x, it


A = np.array(
    [[3.0, 3.5, 1.2], [3.1, 3.4, 1.25], [2.9, 3.6, 1.1], [3.2, 3.3, 1.3], [3.0, 3.0, 1.0]],
    np.float32,
)
X0 = np.array([0.5, 1.0, 1.0], np.float32)


def test_newton_jacfwd_in_while_loop_under_vmap_matches_per_example():
    xb, itb = srcjax.jit(srcjax.vmap(newton, in_axes=(0, None)))(A, X0)
    one = srcjax.jit(newton)
    for k in range(len(A)):
        x, it = one(A[k], X0)
        # (the residual may cross the tolerance one step apart by roundoff, as in JAX)
        assert abs(int(itb[k]) - int(it)) <= 1
        np.testing.assert_allclose(np.asarray(xb[k]), np.asarray(x), rtol=1e-5, atol=1e-6)
    assert np.asarray(xb).dtype == np.float32
    # the solutions solve the system
    for k in range(len(A)):
        r = np.asarray(residual(np.asarray(xb[k]), A[k]))
        assert np.max(np.abs(r)) < 1e-5


def test_newton_jacfwd_in_while_loop_matches_jax():
    # recorded from JAX 0.10.2 (CPU, float32): jit(newton)([3, 3.5, 1.2], [0.5, 1, 1])
    x, it = srcjax.jit(newton)(A[0], X0)
    np.testing.assert_allclose(
        np.asarray(x), [0.9944456, 1.272375, 0.62621063], rtol=2e-6, atol=1e-7
    )
    assert int(it) == 6 and np.asarray(x).dtype == np.float32


def test_basis_items_typed_in_jit_loop():
    # ``seq[i]`` of jacfwd's basis has the items' abstract value (all alike), so
    # jit drops the tangents' broadcasts to the primals' (equal) shapes
    text = srcjax.source(srcjax.jit(newton), A[0], X0)
    assert "ad.basis(" in text and "ad.broadcast_like" not in text


def test_newton_under_vmap_has_no_loop_over_examples_for_the_jacobian():
    text = srcjax.source(srcjax.jit(srcjax.vmap(newton, in_axes=(0, None))), A, X0)
    assert "ad.basis(" in text and "lead=1" in text
    assert "no batching rule" not in text and "for row" not in text


def f_tree(p):
    return {"u": jnp.sin(p["a"]) * p["b"], "v": p["a"][0] * p["b"] ** 2}


def jac_tree(x):
    return srcjax.jacfwd(f_tree)({"a": x[:2], "b": x[2]})


def jacrev_pair(x):
    def g(u, v):
        return jnp.tanh(u * v[0]) + v[1] ** 2

    return srcjax.jacrev(g, argnums=(0, 1))(x[:2], x[1:])


P = np.array([[0.1, 0.2, 0.3], [0.4, -0.5, 0.6], [0.7, 0.8, -0.9], [1.0, 0.1, 0.2]], np.float32)


def _per_example(fn, P):
    rows = [srcjax.jit(fn)(p) for p in P]
    return srcjax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *rows)


def _assert_trees_close(got, want):
    g, gd = srcjax.tree_util.tree_flatten(got)
    w, wd = srcjax.tree_util.tree_flatten(want)
    assert gd == wd
    for a, b in zip(g, w):
        assert np.shape(a) == np.shape(b) and np.asarray(a).dtype == np.asarray(b).dtype
        np.testing.assert_allclose(np.asarray(a), b, rtol=1e-6, atol=1e-7)


def test_jacfwd_of_pytrees_in_jit_under_vmap():
    _assert_trees_close(srcjax.jit(srcjax.vmap(jac_tree))(P), _per_example(jac_tree, P))


def test_jacrev_of_two_arguments_in_jit_under_vmap():
    _assert_trees_close(srcjax.jit(srcjax.vmap(jacrev_pair))(P), _per_example(jacrev_pair, P))


def test_grad_through_batched_jacobian_assembly():
    # the transposes (ad.jac_columns_t / jac_rows_t) with batch axes
    def loss(P):
        t = srcjax.vmap(jac_tree)(P)
        j = srcjax.vmap(jacrev_pair)(P)
        return jnp.sum(t["u"]["a"] ** 2) + jnp.sum(t["v"]["b"]) + jnp.sum(j[0] * j[1][..., :1])

    def loss1(p):
        t = jac_tree(p)
        j = jacrev_pair(p)
        return jnp.sum(t["u"]["a"] ** 2) + jnp.sum(t["v"]["b"]) + jnp.sum(j[0] * j[1][..., :1])

    got = np.asarray(srcjax.jit(srcjax.grad(loss))(P))
    want = np.stack([np.asarray(srcjax.jit(srcjax.grad(loss1))(p)) for p in P])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
