"""Value checks of the linalg and creation primitives against NumPy and JAX's
conventions (norm at 0, einsum adjoints, dtype defaults)."""

import numpy as np
import pytest

from srcjax import config
from srcjax.primitives import creation as C
from srcjax.primitives import linalg as L


def vjp(p, g, *args, wrt, **kw):
    ans = p(*args, **kw)
    return p.vjps[wrt](g, ans, *args, **kw)


def vjp_va(p, g, *operands, argnum, subscripts):
    ans = p(subscripts, *operands)
    return p.vjps["operands"](g, ans, subscripts, *operands, argnum=argnum)


A = np.linspace(-1, 1, 6).reshape(2, 3)
B = np.linspace(0, 2, 12).reshape(3, 4)


def test_products_match_numpy():
    v = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(L.matmul(A, B), A @ B)
    np.testing.assert_allclose(L.dot(A, v), A @ v)
    np.testing.assert_allclose(L.inner(v, v), np.inner(v, v))
    np.testing.assert_allclose(L.outer(v, v), np.outer(v, v))
    np.testing.assert_allclose(L.vdot(A, A), np.vdot(A, A))
    np.testing.assert_allclose(L.tensordot(A, B, 1), np.tensordot(A, B, 1))
    np.testing.assert_allclose(L.einsum("ij,jk->ik", A, B), A @ B)
    np.testing.assert_allclose(L.kron(A, B), np.kron(A, B))
    np.testing.assert_allclose(L.trace(B[:, :3]), np.trace(B[:, :3]))


def test_matmul_adjoints():
    g = np.ones((2, 4))
    np.testing.assert_allclose(vjp(L.matmul, g, A, B, wrt="a"), g @ B.T)
    np.testing.assert_allclose(vjp(L.matmul, g, A, B, wrt="b"), A.T @ g)
    c = np.arange(24.0).reshape(2, 3, 4) / 10
    d = np.arange(8.0).reshape(4, 2) / 10
    gd = vjp(L.matmul, np.ones((2, 3, 2)), c, d, wrt="b")
    np.testing.assert_allclose(gd, sum(c[i].T @ np.ones((3, 2)) for i in range(2)))


def test_einsum_adjoints_trace_and_diag():
    s = np.arange(9.0).reshape(3, 3)
    np.testing.assert_allclose(vjp_va(L.einsum, 1.0, s, argnum=0, subscripts="ii->"), np.eye(3))
    np.testing.assert_allclose(
        vjp_va(L.einsum, np.ones(3), s, argnum=0, subscripts="ij->i"), np.ones((3, 3))
    )
    np.testing.assert_allclose(
        vjp_va(L.einsum, 2.0 * np.ones((2, 4)), A, B, argnum=1, subscripts="ij,jk->ik"),
        A.T @ (2.0 * np.ones((2, 4))),
    )


def test_norm_values_and_gradients():
    x = np.array([3.0, 4.0])
    assert float(L.norm(x)) == 5.0
    np.testing.assert_allclose(vjp(L.norm, 1.0, x, wrt="x"), [0.6, 0.8])
    with np.errstate(all="ignore"):
        assert np.isnan(vjp(L.norm, 1.0, np.zeros(3), wrt="x")).all()  # JAX: nan at 0
    m = np.arange(6.0).reshape(2, 3)
    for ord_ in [None, "fro", 1, -1, 2, np.inf, "nuc"]:
        np.testing.assert_allclose(L.norm(m, ord_), np.linalg.norm(m, ord_))
    for ord_ in [None, 1, np.inf, 3, 0]:
        np.testing.assert_allclose(L.norm(x, ord_), np.linalg.norm(x, ord_))
    np.testing.assert_allclose(
        vjp(L.norm, 1.0, np.array([1.0, -3.0, 3.0]), wrt="x", ord=np.inf), [0.0, -0.5, 0.5]
    )
    np.testing.assert_allclose(
        L.norm(m, axis=1, keepdims=True), np.linalg.norm(m, axis=1, keepdims=True)
    )


def test_decompositions():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 3)) + 3 * np.eye(3)
    b = rng.normal(size=3)
    np.testing.assert_allclose(L.inv(a) @ a, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(a @ L.solve(a, b), b)
    np.testing.assert_allclose(L.det(a), np.linalg.det(a))
    sign, logdet = L.slogdet(a)
    np.testing.assert_allclose(sign * np.exp(logdet), np.linalg.det(a))
    spd = a @ a.T
    low = L.cholesky(spd)
    np.testing.assert_allclose(low @ low.T, spd)
    w, v = L.eigh(spd)
    np.testing.assert_allclose(v @ np.diag(w) @ v.T, spd, atol=1e-10)
    np.testing.assert_allclose(vjp(L.det, 1.0, a, wrt="a"), np.linalg.det(a) * np.linalg.inv(a).T)


def test_creation_dtypes():
    assert C.array([1.0, 2.0]).dtype == np.float32
    assert C.array([1, 2]).dtype == np.int32
    assert C.array(True).dtype == np.bool_
    assert C.arange(3).dtype == np.int32
    assert C.arange(3.0).dtype == np.float32
    assert C.zeros(2).dtype == np.float32
    assert C.asarray(np.ones(2, np.float64)).dtype == np.float32
    assert C.asarray(np.ones(2, np.int64)).dtype == np.int32
    assert C.linspace(0, 1, 5).dtype == np.float32
    assert C.full((2,), 1.0).dtype == np.float32
    assert C.full((2,), 1).dtype == np.int32
    assert C.eye(2).dtype == np.float32
    assert C.zeros_like(np.ones(2, np.int32)).dtype == np.int32
    assert C.shape(np.ones((2, 3))) == (2, 3) and C.ndim(1.0) == 0 and C.size(np.ones(4)) == 4
    stacked = C.array([np.ones(2, np.float32), np.zeros(2, np.float32)])
    assert stacked.shape == (2, 2)
    parts = C.array.vjps["object"](np.arange(4.0).reshape(2, 2), stacked, [np.ones(2), np.zeros(2)])
    assert isinstance(parts, list) and parts[1].tolist() == [2.0, 3.0]


@pytest.fixture
def x64():
    config.update("jax_enable_x64", True)
    yield
    config.update("jax_enable_x64", False)


def test_creation_dtypes_x64(x64):
    assert C.array([1.0]).dtype == np.float64
    assert C.arange(3).dtype == np.int64
