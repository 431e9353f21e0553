"""Value checks of the linalg and creation primitives against NumPy and JAX's
conventions (norm at 0, einsum adjoints, dtype defaults)."""

import numpy as np
import pytest
from helpers import fd_grad

import srcjax
import srcjax.numpy as jnp
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


# -- cross / qr / svd / pinv / matrix_power ------------------------------------------


def test_cross_matches_numpy():
    a = np.arange(6.0).reshape(2, 3) - 2
    b = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(L.cross(a, b), np.cross(a, b))
    np.testing.assert_allclose(L.cross(a.T, a.T, axis=0), np.cross(a.T, a.T, axis=0))
    np.testing.assert_allclose(
        L.cross(a.T, b, axisa=0, axisc=0), np.cross(a.T, b, axisa=0, axisc=0)
    )
    assert L.cross(a.astype(np.float32), b.astype(np.float32)).dtype == np.float32
    with pytest.raises(ValueError):
        L.cross(np.ones(2), np.ones(2))


M43 = np.array([[2.0, -1.0, 0.5], [0.3, 1.5, -2.0], [1.0, 0.2, 0.7], [-0.4, 0.9, 1.1]])


def test_qr_svd_pinv_matrix_power_match_numpy():
    q, r = L.qr(M43)
    np.testing.assert_allclose(q @ r, M43, atol=1e-12)
    assert q.shape == (4, 3) and r.shape == (3, 3) and np.allclose(np.tril(r, -1), 0)
    qc, rc = L.qr(M43, mode="complete")
    assert qc.shape == (4, 4) and rc.shape == (4, 3)
    u, s, vh = L.svd(M43, full_matrices=False)
    np.testing.assert_allclose(u @ (s[:, None] * vh), M43, atol=1e-12)
    np.testing.assert_allclose(L.svd(M43, compute_uv=False), np.linalg.svd(M43, compute_uv=False))
    assert L.svd(M43)[0].shape == (4, 4)  # full_matrices=True by default, as in JAX
    np.testing.assert_allclose(L.pinv(M43), np.linalg.pinv(M43), atol=1e-12)
    sq = M43[:3]
    for n in (0, 1, 3, -2):
        np.testing.assert_allclose(L.matrix_power(sq, n), np.linalg.matrix_power(sq, n), rtol=1e-10)
    f32 = M43.astype(np.float32)
    assert L.qr(f32)[0].dtype == L.svd(f32)[1].dtype == L.pinv(f32).dtype == np.float32
    assert L.qr(np.eye(2, dtype=np.int32))[0].dtype == np.float32
    with pytest.raises(NotImplementedError):
        L.qr(M43, mode="r")
    with pytest.raises(TypeError):
        L.matrix_power(sq, 1.5)
    with pytest.raises(ValueError):
        L.matrix_power(M43, 2)


def svd_loss(a):
    u, s, vh = jnp.linalg.svd(a, full_matrices=False)
    return jnp.sum(u[:, 0] ** 2 * a[:, 0]) + jnp.sum(s**3) + jnp.sum(vh[0] * jnp.arange(3.0))


def svdvals_loss(a):
    return jnp.sum(jnp.linalg.svd(a, compute_uv=False) ** 2)


def qr_loss(a):
    q, r = jnp.linalg.qr(a)
    return jnp.sum(q[:, 1] * a[:, 2]) + jnp.sum(jnp.triu(r) ** 2)


def pinv_power_loss(a):
    return jnp.sum(jnp.linalg.pinv(a) ** 2) + jnp.sum(jnp.linalg.matrix_power(a[:3], 3))


def cross_loss(a):
    return jnp.sum(jnp.cross(a[:, :3], a[1]) ** 2)


@pytest.mark.parametrize("loss", [svd_loss, svdvals_loss, qr_loss, pinv_power_loss, cross_loss])
def test_linalg_grads_match_finite_differences(loss, x64):
    np.testing.assert_allclose(srcjax.grad(loss)(M43), fd_grad(loss, M43), rtol=1e-6, atol=1e-8)


def full_svd_loss(a):
    return jnp.sum(jnp.linalg.svd(a)[0])


def test_svd_full_matrices_derivative_needs_a_square_matrix(x64):
    with pytest.raises(NotImplementedError, match="full_matrices"):
        srcjax.grad(full_svd_loss)(M43)
    sq = M43[:3]
    np.testing.assert_allclose(
        srcjax.grad(full_svd_loss)(sq), fd_grad(full_svd_loss, sq), rtol=1e-6
    )
