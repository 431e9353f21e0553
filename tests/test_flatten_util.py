"""srcjax.flatten_util.ravel_pytree (and tree_unflatten inside transformed code).

Expected values were recorded from JAX 0.10.2 (CPU) by running the same
programs with ``jax``/``jax.flatten_util`` (noted at each constant); the rest are
checked against float64 finite differences or a Python loop over examples.
"""

from __future__ import annotations

import numpy as np
import pytest
from helpers import fd_grad

import srcjax
import srcjax.numpy as jnp
from srcjax import tree_util as tu
from srcjax.flatten_util import ravel_pytree

P = {
    "w": np.array([[0.5, -1.0], [2.0, 0.25]], np.float32),
    "b": (np.array([0.1, 0.2, 0.3], np.float32), np.float32(1.5)),
}
FLAT, UNRAVEL = ravel_pytree(P)
X = np.linspace(-1, 1, 8).astype(np.float32)

# mixed dtypes: float32, int32 and float16 leaves
PM = {
    "w": np.array([1.0, 2.0], np.float32),
    "n": np.array([3, 4], np.int32),
    "h": np.array([0.5, 1.5], np.float16),
}
FLAT2, UNRAVEL2 = ravel_pytree(PM)
X2 = np.array([0.25, 0.75, 3.7, -2.2, 1.0, -3.0], np.float32)


def loss(v):
    q = UNRAVEL(v)
    return jnp.sum(jnp.tanh(q["w"] @ q["b"][0][:2])) * q["b"][1] + jnp.sum(q["b"][0] ** 3)


def loss2(v):
    q = UNRAVEL2(v)
    s = jnp.sum(q["w"] ** 2) * jnp.sum(q["n"]).astype(jnp.float32)
    return s + jnp.sum(q["h"].astype(jnp.float32) ** 3)


def test_ravel_values_and_dtypes():
    # JAX: ravel_pytree(P)[0] == [0.1, 0.2, 0.3, 1.5, 0.5, -1., 2., 0.25] float32
    np.testing.assert_array_equal(
        FLAT, np.array([0.1, 0.2, 0.3, 1.5, 0.5, -1.0, 2.0, 0.25], np.float32)
    )
    assert FLAT.dtype == np.float32
    # JAX: [0.5, 1.5, 3., 4., 1., 2.] float32 (keys sorted: h, n, w)
    np.testing.assert_array_equal(FLAT2, np.array([0.5, 1.5, 3, 4, 1, 2], np.float32))
    assert FLAT2.dtype == np.float32
    # dtypes JAX gives (promotion of the leaves' canonical dtypes; Python
    # scalars count as float32/int32, not weakly typed)
    cases = [
        ([1.0, 2], np.float32),
        ([np.float16(1.5), np.arange(2, dtype=np.int8)], np.float16),
        ([np.ones(2, np.float32), np.array([1 + 2j], np.complex64)], np.complex64),
        ([True, np.ones(1, np.int32)], np.int32),
        ([np.ones(2, np.uint8), np.ones(2, np.int8)], np.int16),
        ([np.array(1.0, np.float64)], np.float32),
        ([np.bool_(True)], np.bool_),
        ({}, np.float32),
    ]
    for tree, want in cases:
        flat, _ = ravel_pytree(tree)
        assert flat.dtype == want, tree
    flat, unravel = ravel_pytree({})
    assert flat.shape == (0,) and unravel(flat) == {}


def test_unravel_round_trip_and_dtypes():
    back = UNRAVEL(FLAT)
    assert tu.tree_structure(back) == tu.tree_structure(P)
    for a, b in zip(tu.tree_leaves(back), tu.tree_leaves(P)):
        np.testing.assert_array_equal(a, b)
        assert np.shape(a) == np.shape(b)
    # JAX: unr2(X2) == {'h': [0.25, 0.75] f16, 'n': [3, -2] i32, 'w': [1., -3.] f32}
    q = UNRAVEL2(X2)
    np.testing.assert_array_equal(q["h"], np.array([0.25, 0.75], np.float16))
    np.testing.assert_array_equal(q["n"], np.array([3, -2], np.int32))
    np.testing.assert_array_equal(q["w"], np.array([1.0, -3.0], np.float32))
    assert (q["h"].dtype, q["n"].dtype, q["w"].dtype) == (np.float16, np.int32, np.float32)
    # one dtype: unravel is dtype-polymorphic (JAX: int32 leaves from an int32 vector)
    _, u = ravel_pytree([np.ones(2, np.float32)])
    assert u(np.ones(2, np.int32))[0].dtype == np.int32
    # complex flat vector: real leaves keep the real part (JAX: [1.5, 2.5], [3+4j])
    _, uc = ravel_pytree([np.ones(2, np.float32), np.array([1 + 2j], np.complex64)])
    r = uc(np.array([1.5 + 1j, 2.5 - 1j, 3 + 4j], np.complex64))
    np.testing.assert_array_equal(r[0], np.array([1.5, 2.5], np.float32))
    np.testing.assert_array_equal(r[1], np.array([3 + 4j], np.complex64))
    # Python scalars come back as 0-d arrays of their canonical dtype
    _, us = ravel_pytree([1.0, 2])
    a, b = us(np.array([1.5, 2.0], np.float32))
    assert (a.dtype, a.shape, b.dtype, b.shape) == (np.float32, (), np.int32, ())


def test_unravel_errors():
    with pytest.raises(ValueError, match="sum of sizes 8"):
        UNRAVEL(np.ones(9, np.float32))
    with pytest.raises(ValueError, match="sum of sizes 8"):
        UNRAVEL(np.float32(1.0))
    # JAX: TypeError "unravel function given array of dtype int32, but expected dtype float32"
    with pytest.raises(TypeError, match="given array of dtype int32, but expected dtype float32"):
        UNRAVEL2(np.ones(6, np.int32))
    with pytest.raises(ValueError):
        srcjax.jit(UNRAVEL)(np.ones(7, np.float32))


# JAX 0.10.2: loss(X), grad(loss)(X), diag(hessian(loss)(X)), hessian(loss)(X)[0]
LOSS_X = -1.2556583
GRAD_X = [
    2.9622455,
    1.4508919,
    0.5510204,
    -1.3124334,
    0.117529795,
    0.08394986,
    0.029350474,
    0.020964624,
]
HESS_DIAG = [
    -6.028716,
    -4.3562174,
    -2.5714285,
    0.0,
    -0.09897417,
    -0.05049703,
    -0.052324474,
    -0.026696162,
]
HESS_ROW0 = [
    -6.028716,
    -0.043434266,
    0.0,
    0.26428223,
    -0.10339063,
    0.010099406,
    0.008024152,
    0.026696162,
]


def test_grad_jit_hessian_through_unravel():
    np.testing.assert_allclose(loss(X), LOSS_X, rtol=1e-6)
    g = srcjax.grad(loss)(X)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, GRAD_X, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(srcjax.jit(loss)(X), LOSS_X, rtol=1e-6)
    np.testing.assert_allclose(srcjax.jit(srcjax.grad(loss))(X), GRAD_X, rtol=2e-6, atol=1e-7)
    h = srcjax.hessian(loss)(X)
    np.testing.assert_allclose(np.diag(h), HESS_DIAG, rtol=2e-6, atol=1e-7)
    np.testing.assert_allclose(h[0], HESS_ROW0, rtol=2e-6, atol=1e-7)


def test_grad_matches_finite_differences(x64):
    p64 = srcjax.tree_util.tree_map(lambda a: np.asarray(a, np.float64), P)
    _, unravel = ravel_pytree(p64)

    def f(v):
        q = unravel(v)
        return jnp.sum(jnp.sin(q["w"]) * q["b"][1]) + jnp.sum(q["b"][0] ** 3)

    x = np.linspace(-1, 1, 8)
    np.testing.assert_allclose(srcjax.grad(f)(x), fd_grad(f, x), rtol=1e-7, atol=1e-9)


def test_mixed_dtypes_grad_and_jvp():
    # JAX: loss2(X2) = 10.4375, grad = [0.1875, 1.6875, 0, 0, 2, -6]; jvp tangent
    # arange(6) -> -20.3125 (the int32 leaf has no derivative)
    np.testing.assert_allclose(loss2(X2), 10.4375)
    want = np.array([0.1875, 1.6875, 0, 0, 2, -6], np.float32)
    np.testing.assert_allclose(srcjax.grad(loss2)(X2), want)
    np.testing.assert_allclose(srcjax.jit(srcjax.grad(loss2))(X2), want)
    primal, tangent = srcjax.jvp(loss2, (X2,), (np.arange(6, dtype=np.float32),))
    np.testing.assert_allclose(primal, 10.4375)
    np.testing.assert_allclose(tangent, -20.3125)
    # complex flat vector, real and complex leaves: JAX grad = [3, 5, 6-8j]
    _, uc = ravel_pytree([np.ones(2, np.float32), np.array([1 + 2j], np.complex64)])

    def f3(v):
        q = uc(v)
        return jnp.sum(q[0] ** 2) + jnp.abs(q[1][0]) ** 2

    z = np.array([1.5 + 1j, 2.5 - 1j, 3 + 4j], np.complex64)
    np.testing.assert_allclose(srcjax.grad(f3)(z), [3, 5, 6 - 8j], rtol=1e-6)


def test_vmap_through_unravel():
    xs = np.stack([X, X[::-1], 2 * X])
    batched = srcjax.vmap(UNRAVEL)(xs)
    for i in range(3):
        one = UNRAVEL(xs[i])
        for a, b in zip(tu.tree_leaves(batched), tu.tree_leaves(one)):
            np.testing.assert_array_equal(a[i], b)
    np.testing.assert_allclose(srcjax.vmap(loss)(xs), [loss(x) for x in xs], rtol=1e-6)
    grads = srcjax.vmap(srcjax.grad(loss))(xs)
    np.testing.assert_allclose(grads, [srcjax.grad(loss)(x) for x in xs], rtol=1e-6)
    xs2 = np.stack([X2, -X2])
    np.testing.assert_allclose(
        srcjax.vmap(srcjax.grad(loss2))(xs2), [srcjax.grad(loss2)(x) for x in xs2], rtol=1e-6
    )
    # generated code has no per-example loop for unravel
    assert "loop over the examples" not in srcjax.source(srcjax.vmap(lambda v: UNRAVEL(v)))


def g_ravel(p):
    flat, _ = ravel_pytree(p)
    return jnp.sum(jnp.sin(flat) * jnp.arange(flat.shape[0]))


def test_ravel_inside_grad_jit_vmap():
    # JAX: grad(g_ravel)(P)
    g = srcjax.grad(g_ravel)(P)
    np.testing.assert_allclose(g["b"][0], [0.0, 0.9800666, 1.910673], rtol=1e-6)
    np.testing.assert_allclose(g["b"][1], 0.2122116, rtol=1e-6)
    np.testing.assert_allclose(g["w"], [[3.5103302, 2.7015114], [-2.496881, 6.782387]], rtol=1e-6)
    gj = srcjax.jit(srcjax.grad(g_ravel))(P)
    np.testing.assert_allclose(gj["w"], g["w"], rtol=1e-6)
    pb = {"w": np.stack([P["w"], 2 * P["w"]]), "b": P["b"]}
    axes = ({"w": 0, "b": None},)
    out = srcjax.vmap(g_ravel, in_axes=axes)(pb)
    loop = [g_ravel({"w": pb["w"][i], "b": P["b"]}) for i in range(2)]
    np.testing.assert_allclose(out, loop, rtol=1e-6)
    gb = srcjax.vmap(srcjax.grad(g_ravel), in_axes=axes)(pb)
    for i in range(2):
        gi = srcjax.grad(g_ravel)({"w": pb["w"][i], "b": P["b"]})
        np.testing.assert_allclose(gb["w"][i], gi["w"], rtol=1e-6)
        np.testing.assert_allclose(gb["b"][0][i], gi["b"][0], rtol=1e-6)


def test_unravel_made_inside_transformed_code():
    def h(p):
        flat, unravel = ravel_pytree(p)
        return unravel(flat * 2)

    out = srcjax.jit(h)(PM)
    np.testing.assert_array_equal(out["n"], np.array([6, 8], np.int32))
    np.testing.assert_array_equal(out["h"], np.array([1.0, 3.0], np.float16))
    # differentiating through an unravel made at run time: a clear error
    with pytest.raises(srcjax.errors.NoDerivativeRuleError, match="unravel"):
        srcjax.grad(lambda w: jnp.sum(h({"w": w, "n": PM["n"]})["w"]))(PM["w"])


def test_tree_unflatten_inside_transforms():
    _, td = tu.tree_flatten({"a": 1.0, "b": (2.0, 3.0)})

    def k(x):
        t = tu.tree_unflatten(td, [x * 2, jnp.sin(x), x**3])
        return t["a"] * t["b"][0] + t["b"][1]

    x = np.float32(1.5)
    want = 2 * np.sin(x) + 2 * x * np.cos(x) + 3 * x**2
    np.testing.assert_allclose(srcjax.grad(k)(x), want, rtol=1e-6)
    np.testing.assert_allclose(srcjax.jit(srcjax.grad(k))(x), want, rtol=1e-6)
    xs = np.array([0.5, 1.5, -1.0], np.float32)
    np.testing.assert_allclose(
        srcjax.vmap(srcjax.grad(k))(xs), [srcjax.grad(k)(v) for v in xs], rtol=1e-6
    )
    assert srcjax.tree.unflatten(td, [1, 2, 3]) == {"a": 1, "b": (2, 3)}
