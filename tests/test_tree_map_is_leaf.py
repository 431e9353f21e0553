"""tree_map / tree_leaves / tree_flatten with ``is_leaf`` inside transformed code.

They used to be refused ("`tree_map` with `is_leaf` ... not supported in
transformed functions"); now ``is_leaf`` (a global or a lambda reading no local
variable) is a constant of the generated code and the structure is computed at
run time (``ad.leaves_upto`` / ``ad.unflatten_upto`` / ``ad.tree_def``).
Oracles: values recorded from JAX 0.10.2, float64 central differences of a
NumPy version, and eager srcjax.tree_util (plain Python).
"""

from __future__ import annotations

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import tree_util as tu

X = np.array([[0.25, -0.5], [1.0, 0.75], [-1.25, 0.5]], np.float32)
Y = np.array([[0.5, 1.5], [-0.25, 0.125], [2.0, -1.0]], np.float32)
TR = {"a": (X, Y), "b": [(Y, X), (X, X)]}
OTHER = {"a": Y, "b": [X, Y]}


def is_pair(n):
    return isinstance(n, tuple)


def loss(tr, other):
    out = tu.tree_map(lambda p, o: jnp.sin(p[0]) * p[1] + o, tr, other, is_leaf=is_pair)
    return sum(jnp.sum(v**2) for v in tu.tree_leaves(out))


def loss_np(tr, other):
    pairs = [tr["a"], tr["b"][0], tr["b"][1]]
    others = [other["a"], other["b"][0], other["b"][1]]
    return sum(np.sum((np.sin(p[0]) * p[1] + o) ** 2) for p, o in zip(pairs, others))


def fd_grad(f, tree):
    """float64 central differences of ``f`` in every leaf of ``tree``."""
    leaves, td = tu.tree_flatten(tree)
    leaves = [np.asarray(v, np.float64) for v in leaves]
    out = []
    for k, v in enumerate(leaves):
        g = np.zeros_like(v)
        for idx in np.ndindex(*v.shape):
            hi = [w.copy() for w in leaves]
            lo = [w.copy() for w in leaves]
            hi[k][idx] += 1e-6
            lo[k][idx] -= 1e-6
            g[idx] = (f(tu.tree_unflatten(td, hi)) - f(tu.tree_unflatten(td, lo))) / 2e-6
        out.append(g)
    return tu.tree_unflatten(td, out)


def assert_trees_close(a, b, **kw):
    assert tu.tree_structure(a) == tu.tree_structure(b)
    for u, v in zip(tu.tree_leaves(a), tu.tree_leaves(b)):
        np.testing.assert_allclose(u, v, **kw)


def test_value_jit_and_vmap_match_jax():
    # recorded from JAX 0.10.2: loss(TR, OTHER), jax.vmap(loss)(TR, OTHER)
    np.testing.assert_allclose(loss(TR, OTHER), 26.395428, rtol=1e-6)
    np.testing.assert_allclose(srcjax.jit(loss)(TR, OTHER), 26.395428, rtol=1e-6)
    vm = np.array([5.475316, 2.288653, 18.631458], np.float32)
    np.testing.assert_allclose(srcjax.vmap(loss)(TR, OTHER), vm, rtol=1e-6)
    np.testing.assert_allclose(srcjax.jit(srcjax.vmap(loss))(TR, OTHER), vm, rtol=1e-6)


def test_grad_over_several_trees_against_finite_differences():
    g_tr, g_other = srcjax.grad(loss, argnums=(0, 1))(TR, OTHER)
    assert_trees_close(g_tr, fd_grad(lambda t: loss_np(t, OTHER), TR), rtol=1e-4, atol=1e-5)
    assert_trees_close(g_other, fd_grad(lambda o: loss_np(TR, o), OTHER), rtol=1e-4, atol=1e-5)
    # (JAX 0.10.2 gives g_other["a"][0] == [1.247404, 1.5617234])
    np.testing.assert_allclose(g_other["a"][0], [1.247404, 1.5617234], rtol=1e-5)
    jit_g = srcjax.jit(srcjax.grad(loss, argnums=(0, 1)))(TR, OTHER)
    assert_trees_close(jit_g, (g_tr, g_other), rtol=1e-6)


def row(tree, i):
    return tu.tree_map(lambda v: v[i], tree)


def test_vmap_of_grad_and_in_axes_none():
    g = srcjax.vmap(srcjax.grad(loss))(TR, OTHER)
    rows = [srcjax.grad(loss)(row(TR, i), row(OTHER, i)) for i in range(3)]
    assert_trees_close(g, tu.tree_map(lambda *r: np.stack(r), *rows), rtol=1e-6)
    out = srcjax.vmap(loss, in_axes=(None, 0))(TR, OTHER)
    ref = [loss(TR, row(OTHER, i)) for i in range(3)]
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def loss_v(v):
    return loss({"a": (v, Y[0]), "b": [(Y[1], v), (v, X[2])]}, {"a": Y[2], "b": [X[0], X[1]]})


def test_second_order():
    # recorded from JAX 0.10.2: jax.hessian(loss_v)(X[0])
    h = srcjax.hessian(loss_v)(X[0])
    np.testing.assert_allclose(h, [[3.4273562, 0.0], [0.0, 1.6538913]], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(srcjax.jacfwd(srcjax.grad(loss_v))(X[0]), h, rtol=1e-5, atol=1e-6)


def none_leaves(tr):
    m = tu.tree_map(
        lambda a: jnp.zeros(()) if a is None else a * 3.0, tr, is_leaf=lambda n: n is None
    )
    return jnp.sum(m["w"] ** 2) + m["b"]


def test_none_as_leaf():
    tr = {"w": X, "b": None}
    g = srcjax.grad(none_leaves)(tr)
    assert g["b"] is None  # as JAX
    np.testing.assert_allclose(g["w"], 18 * X, rtol=1e-6)
    np.testing.assert_allclose(srcjax.vmap(none_leaves)(tr), 9 * np.sum(X**2, 1), rtol=1e-6)


def pair_products(tr):
    return sum(jnp.sum(a * b) for a, b in tu.tree_leaves(tr, is_leaf=is_pair))


def pair_products_positional(tr):
    return sum(jnp.sum(a * b) for a, b in srcjax.tree.leaves(tr, is_pair))


def test_tree_leaves_with_is_leaf():
    ref = sum(np.sum(a * b) for a, b in [(X, Y), (Y, X), (X, X)])
    for f in (pair_products, pair_products_positional):
        np.testing.assert_allclose(srcjax.jit(f)(TR), ref, rtol=1e-6)
    g = srcjax.grad(pair_products)(TR)
    assert_trees_close(g, {"a": (Y, X), "b": [(X, Y), (X, X)]}, rtol=1e-6)
    gv = srcjax.vmap(srcjax.grad(pair_products_positional))(TR)
    assert_trees_close(gv, g, rtol=1e-6)


def flatten_roundtrip(tr):
    leaves, td = tu.tree_flatten(tr, is_leaf=is_pair)
    out = tu.tree_unflatten(td, [(a * 2, jnp.cos(b)) for a, b in leaves])
    return jnp.sum(out["a"][0] * out["b"][1][1]) + tu.tree_structure(tr, is_pair).num_leaves


def flatten_np(tr):
    return np.sum(tr["a"][0] * 2 * np.cos(tr["b"][1][1])) + 3


def test_tree_flatten_unflatten_structure_with_is_leaf():
    np.testing.assert_allclose(srcjax.jit(flatten_roundtrip)(TR), flatten_np(TR), rtol=1e-6)
    g = srcjax.grad(flatten_roundtrip)(TR)
    assert_trees_close(g, fd_grad(flatten_np, TR), rtol=1e-4, atol=1e-5)
    gv = srcjax.vmap(srcjax.grad(flatten_roundtrip))(TR)
    assert_trees_close(gv, g, rtol=1e-6)
    assert_trees_close(srcjax.jacfwd(flatten_roundtrip)(TR), g, rtol=1e-5, atol=1e-6)


def plain_flatten(tr):
    leaves, td = tu.tree_flatten(tr)
    return tu.tree_unflatten(td, [jnp.tanh(v) for v in leaves])


def test_tree_flatten_without_is_leaf_inside_jit_and_grad():
    out = srcjax.jit(plain_flatten)(TR)
    assert_trees_close(out, tu.tree_map(np.tanh, TR), rtol=1e-6)
    g = srcjax.grad(lambda t: jnp.sum(plain_flatten(t)["b"][1][0]))(TR)
    np.testing.assert_allclose(g["b"][1][0], 1 - np.tanh(X) ** 2, rtol=1e-5)
    assert np.all(g["a"][0] == 0)


def test_errors():
    def reads_local(tr, k):
        return tu.tree_map(lambda a: a * 2, tr, is_leaf=lambda n: len(n) == k)

    with pytest.raises(srcjax.errors.UnsupportedSyntaxError, match="is_leaf` reads local"):
        srcjax.jit(reads_local)(TR, 2)

    with pytest.raises(ValueError, match="pytree structure mismatch"):
        srcjax.jit(loss)(TR, {"a": Y, "b": [X]})


def test_tree_reduce_inside_transformed_code_with_and_without_is_leaf():
    # tree_reduce is inlined; its own is_leaf parameter (None, or a function)
    # reaches tree_leaves as a run-time value
    def total(tr):
        return tu.tree_reduce(lambda a, b: a + jnp.sum(b), tr, 0.0)

    def pairs(tr):
        return tu.tree_reduce(lambda a, p: a + jnp.sum(p[0] * p[1]), tr, 0.0, is_leaf=is_pair)

    np.testing.assert_allclose(srcjax.jit(total)(TR), sum(map(np.sum, tu.tree_leaves(TR))))
    ref = sum(np.sum(a * b) for a, b in [(X, Y), (Y, X), (X, X)])
    np.testing.assert_allclose(srcjax.jit(pairs)(TR), ref, rtol=1e-6)
    assert_trees_close(srcjax.grad(pairs)(TR), {"a": (Y, X), "b": [(X, Y), (X, X)]}, rtol=1e-6)
