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
from srcjax.transforms.rules import call_rule


def vjp(p, g, *args, wrt, **kw):
    ans = p(*args, **kw)
    return call_rule(p.vjps[wrt], p, g, ans, *args, **kw)


def vjp_va(p, g, *operands, argnum, subscripts):
    ans = p(subscripts, *operands)
    return call_rule(p.vjps["operands"], p, g, ans, subscripts, *operands, argnum=argnum)


A = np.linspace(-1, 1, 6).reshape(2, 3)
B = np.linspace(0, 2, 12).reshape(3, 4)


def test_products_match_numpy(x64):  # float64 references
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


def test_einsum_adjoints_trace_and_diag(x64):  # float64 references
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


def test_decompositions(x64):  # float64 references
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
    parts = call_rule(
        C.array.vjps["object"],
        C.array,
        np.arange(4.0).reshape(2, 2),
        stacked,
        [np.ones(2), np.zeros(2)],
    )
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


def test_qr_svd_pinv_dtypes():
    f32 = M43.astype(np.float32)
    assert L.qr(f32)[0].dtype == L.svd(f32)[1].dtype == L.pinv(f32).dtype == np.float32
    assert L.qr(np.eye(2, dtype=np.int32))[0].dtype == np.float32


def test_qr_svd_pinv_matrix_power_match_numpy(x64):  # float64 references
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


# -- scipy.linalg: solve_triangular / cho_factor / cho_solve; polyval, convolve, cross(2) --
import srcjax.scipy.linalg as SL  # noqa: E402

TRI = np.random.default_rng(21).normal(size=(4, 4)) + 4 * np.eye(4)
RHS = np.random.default_rng(22).normal(size=(4, 2))


@pytest.mark.parametrize("trans", [0, 1, 2, "N", "T"])
@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit_diagonal", [False, True])
def test_solve_triangular_matches_scipy(trans, lower, unit_diagonal):
    sl = pytest.importorskip("scipy.linalg")
    kw = {"trans": trans, "lower": lower, "unit_diagonal": unit_diagonal}
    np.testing.assert_allclose(SL.solve_triangular(TRI, RHS, **kw),
                               sl.solve_triangular(TRI, RHS, **kw), rtol=1e-5)  # fmt: skip
    np.testing.assert_allclose(SL.solve_triangular(TRI, RHS[:, 0], **kw),
                               sl.solve_triangular(TRI, RHS[:, 0], **kw), rtol=1e-5)  # fmt: skip


def test_solve_triangular_batches_dtypes_and_errors():
    a = np.stack([TRI, TRI.T + np.eye(4)])
    b = np.stack([RHS, 2 * RHS])
    got = SL.solve_triangular(a, b, lower=True)
    want = np.stack([np.linalg.solve(np.tril(m), r) for m, r in zip(a, b)])
    np.testing.assert_allclose(got, want, rtol=1e-5)
    assert SL.solve_triangular(a[:, :, :], b[:, :, 0]).shape == (2, 4)  # a vector per matrix
    assert SL.solve_triangular(TRI.astype(np.float32), RHS.astype(np.float32)).dtype == np.float32
    assert SL.solve_triangular(np.eye(2, dtype=np.int32), np.ones(2, np.int32)).dtype == np.float32
    with pytest.raises(ValueError, match="trans"):
        SL.solve_triangular(TRI, RHS, trans=3)
    with pytest.raises(ValueError):
        SL.solve_triangular(TRI, np.ones(3))
    singular = np.tril(TRI)
    singular[1, 1] = 0.0
    assert not np.all(np.isfinite(SL.solve_triangular(singular, RHS, lower=True)))


def test_cho_factor_cho_solve_match_numpy():
    m = np.random.default_rng(23).normal(size=(4, 4))
    a = m @ m.T + 4 * np.eye(4)
    for lower in (False, True):
        c, low = SL.cho_factor(a, lower=lower)
        assert low is lower
        np.testing.assert_allclose(c, np.linalg.cholesky(a) if lower else np.linalg.cholesky(a).T,
                                   rtol=1e-6)  # fmt: skip
        np.testing.assert_allclose(SL.cho_solve((c, lower), RHS), np.linalg.solve(a, RHS),
                                   rtol=1e-6)  # fmt: skip
        np.testing.assert_allclose(SL.cho_solve((c, lower), RHS[:, 0]),
                                   np.linalg.solve(a, RHS[:, 0]), rtol=1e-6)  # fmt: skip
    np.testing.assert_allclose(SL.cholesky(a), np.linalg.cholesky(a).T, rtol=1e-6)
    import srcjax.scipy as sp_root

    assert sp_root.linalg is SL


def tri_loss(a, b):
    x = SL.solve_triangular(a, b, lower=True)
    y = SL.solve_triangular(a, x, trans=1, unit_diagonal=True)
    return jnp.sum(jnp.sin(x) * y)


def cho_loss(a, b):
    return jnp.sum(SL.cho_solve(SL.cho_factor(a @ a.T + 4.0 * jnp.eye(4)), b) ** 2)


@pytest.mark.parametrize("loss", [tri_loss, cho_loss])
def test_triangular_solves_grads_match_finite_differences(loss, x64):
    ga, gb = srcjax.grad(loss, argnums=(0, 1))(TRI, RHS)
    np.testing.assert_allclose(ga, fd_grad(lambda a: loss(a, RHS), TRI), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gb, fd_grad(lambda b: loss(TRI, b), RHS), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(srcjax.jit(loss)(TRI, RHS), loss(TRI, RHS), rtol=1e-12)
    aa = np.stack([TRI, TRI + 0.5 * np.eye(4)])
    got = srcjax.vmap(srcjax.grad(loss), in_axes=(0, None))(aa, RHS)
    np.testing.assert_allclose(got, np.stack([srcjax.grad(loss)(a, RHS) for a in aa]), rtol=1e-10)
    h = srcjax.hessian(loss, argnums=1)(TRI, RHS[:, 0])
    fd = np.stack(
        [
            fd_grad(lambda b, i=i: srcjax.grad(loss, argnums=1)(TRI, b)[i], RHS[:, 0])
            for i in range(4)
        ]
    )
    np.testing.assert_allclose(h, fd, rtol=1e-5, atol=1e-7)


def test_polyval_convolve_cross2_match_numpy():
    rng = np.random.default_rng(24)
    p, x = rng.normal(size=4), rng.normal(size=(2, 3))
    np.testing.assert_allclose(jnp.polyval(p, x), np.polyval(p, x), rtol=1e-6)
    np.testing.assert_array_equal(jnp.polyval(np.array([1, 2, 3]), np.array([2, 0])), [11, 3])
    a, v = rng.normal(size=6), rng.normal(size=3)
    for mode in ("full", "same", "valid"):
        np.testing.assert_allclose(jnp.convolve(a, v, mode), np.convolve(a, v, mode), rtol=1e-6)
        np.testing.assert_allclose(jnp.convolve(v, a, mode), np.convolve(v, a, mode), rtol=1e-6)
    assert jnp.convolve(a.astype(np.float32), v.astype(np.float32)).dtype == np.float32
    with pytest.raises(ValueError):
        jnp.convolve(a, v, "bad")
    with pytest.raises(ValueError):
        jnp.convolve(np.ones((2, 2)), v)
    u, w = rng.normal(size=(4, 2)), rng.normal(size=2)
    np.testing.assert_allclose(jnp.cross(u, w), u[:, 0] * w[1] - u[:, 1] * w[0])
    assert jnp.cross(u, w).shape == (4,)
    w3 = rng.normal(size=3)
    np.testing.assert_allclose(jnp.cross(u, w3), np.cross(np.pad(u, ((0, 0), (0, 1))), w3))
    np.testing.assert_allclose(jnp.cross(u.T, w, axisa=0), jnp.cross(u, w))
    with pytest.raises(ValueError, match="2 or 3"):
        jnp.cross(np.ones(4), np.ones(3))


def poly_conv_loss(p, a):
    y = jnp.polyval(p, a)
    return jnp.sum(jnp.convolve(y, p, "same") ** 2) + jnp.sum(jnp.cross(a[:2], p[1:3]))


def test_polyval_convolve_cross2_grads_match_finite_differences(x64):
    rng = np.random.default_rng(25)
    p, a = rng.normal(size=4), rng.normal(size=5)
    gp, ga = srcjax.grad(poly_conv_loss, argnums=(0, 1))(p, a)
    np.testing.assert_allclose(gp, fd_grad(lambda p: poly_conv_loss(p, a), p), rtol=1e-6)
    np.testing.assert_allclose(ga, fd_grad(lambda a: poly_conv_loss(p, a), a), rtol=1e-6)
    np.testing.assert_allclose(srcjax.grad(jnp.polyval, argnums=1)(p, 0.0), p[-2])  # exact at 0
    ps = np.stack([p, 2.0 * p])
    got = srcjax.vmap(poly_conv_loss, in_axes=(0, None))(ps, a)
    np.testing.assert_allclose(got, [poly_conv_loss(q, a) for q in ps], rtol=1e-10)
    np.testing.assert_allclose(srcjax.jit(poly_conv_loss)(p, a), poly_conv_loss(p, a), rtol=1e-12)


def test_norm_of_complex_values_is_not_silently_differentiated():
    # no rule for complex inputs yet: a clear error, not a wrong number (user report P4)
    f = lambda a: jnp.linalg.norm(jnp.exp(1j * a) * jnp.ones(2))  # noqa: E731
    with pytest.raises(srcjax.errors.NonDifferentiableError, match="norm of complex"):
        srcjax.grad(f)(0.5)


def test_slogdet_returns_jax_named_result(x64):
    """jnp.linalg.slogdet returned a plain tuple (no .sign / .logabsdet, JAX's
    SlogdetResult; fresh-user P9). Oracle: NumPy, and d log|det A| = A^-T."""
    import srcjax

    a = np.array([[2.0, 0.5], [0.3, 1.5]])
    r = jnp.linalg.slogdet(a)
    assert type(r).__name__ == "SlogdetResult"
    np.testing.assert_allclose([r.sign, r.logabsdet], np.linalg.slogdet(a))

    def f(m):
        out = jnp.linalg.slogdet(m)
        return out.logabsdet * out.sign

    np.testing.assert_allclose(srcjax.grad(f)(a), np.linalg.inv(a).T, rtol=1e-10)
    np.testing.assert_allclose(srcjax.jit(f)(a), np.log(abs(np.linalg.det(a))), rtol=1e-12)


_CH_A = np.array([[4.0, 2.0, 0.5], [1.0, 3.0, 0.2], [0.3, -0.4, 2.0]], np.float32)
_CH_B = np.array([1.0, -1.0, 2.0], np.float32)


def _cho_lower_loss(S):
    return jnp.sum(SL.cho_solve(SL.cho_factor(S, lower=True), _CH_B))


def _cho_upper_loss(S):
    return jnp.sum(SL.cho_solve(SL.cho_factor(S), _CH_B) ** 2)


def _cholesky_weighted(S):
    return jnp.sum(SL.cholesky(S) * jnp.arange(9.0).reshape(3, 3))


def test_scipy_cholesky_reads_one_triangle_as_jax():
    """Fresh-user F9: jax.scipy.linalg.cholesky/cho_factor read only one triangle
    (SciPy, JAX); srcjax symmetrized the input: wrong factors and solves for a
    matrix stored as one triangle, and JAX's non-symmetric matrix gradient
    differed. Values recorded from JAX 0.10.2 (A is not symmetric)."""
    A = _CH_A
    np.testing.assert_allclose(
        SL.cholesky(A),
        [[2.0, 1.0, 0.25], [0.0, 1.4142135, -0.0353553], [0.0, 0.0, 1.391492]],
        rtol=1e-6,
        atol=1e-7,
    )
    np.testing.assert_allclose(
        SL.cholesky(A, lower=True),
        [[2.0, 0.0, 0.0], [0.5, 1.6583124, 0.0], [0.15, -0.2864358, 1.3767551]],
        rtol=1e-6,
        atol=1e-7,
    )
    lower_only = np.tril(np.array([[4.0, 2.0], [2.0, 3.0]], np.float32))
    np.testing.assert_allclose(
        SL.cho_solve(SL.cho_factor(lower_only, lower=True), np.ones(2, np.float32)),
        [0.125, 0.25],
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        srcjax.grad(_cho_lower_loss)(A),
        [
            [-0.0298379, -0.0215758, 0.0592863],
            [-0.0385586, 0.1102052, -0.0866492],
            [-0.3069662, -0.079673, -0.5016534],
        ],
        rtol=2e-6,
        atol=1e-7,
    )
    np.testing.assert_allclose(
        srcjax.grad(_cho_upper_loss)(A),
        [
            [-0.3023817, 0.7654661, -1.1373236],
            [0.1490373, -0.6908689, 1.5711774],
            [0.1162977, -0.021145, -0.8458012],
        ],
        rtol=2e-6,
        atol=1e-7,
    )
    np.testing.assert_allclose(
        srcjax.grad(_cholesky_weighted)(A),
        [
            [0.4524209, -0.2390853, -1.1630261],
            [-1.181027, 1.4602041, 3.6073992],
            [-0.3952592, 0.0718653, 2.8746123],
        ],
        rtol=2e-6,
        atol=1e-7,
    )
    tangent = srcjax.jvp(_cholesky_weighted, (A,), (np.ones((3, 3), np.float32),))[1]
    assert tangent == pytest.approx(5.4881043, rel=1e-6)
    batched = srcjax.vmap(SL.cholesky)(np.stack([A, A.T]))
    np.testing.assert_allclose(batched[1], SL.cholesky(A.T), rtol=1e-6)
    np.testing.assert_allclose(batched[1, 0], [2.0, 0.5, 0.15], rtol=1e-6)


# User B bug 2: the gradient of an eigenvalue-only loss through eigh was all NaN
# at repeated eigenvalues (the eigenvector term 1/(w_i - w_j) times a zero
# cotangent). JAX skips that term when the eigenvector cotangent is a symbolic
# zero and gives NaN/inf when it is not; values recorded from JAX 0.10.2 (x64).
EIGH_RECORDED = __import__("pathlib").Path(__file__).parent / "data" / "linalg_eigh_jax.npz"
RING = np.array([[2.0, -1, 0, -1], [-1, 2, -1, 0], [0, -1, 2, -1], [-1, 0, -1, 2]])
NONDEG = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.3], [0.1, 0.3, -1.0]])


def _eigh_values(jax, jnp):
    def vals(a):
        return jnp.sum(jnp.linalg.eigh(a)[0] ** 2)  # trace(a @ a): gradient 2a

    def vec_too(a):  # a nonzero eigenvector cotangent: NaN at the ring, as in JAX
        w, v = jnp.linalg.eigh(a)
        return jnp.sum(w) + jnp.sum(v[:, 0] ** 2)

    def both(a):
        w, v = jnp.linalg.eigh(a)
        return jnp.sum(w**3) + jnp.sum(v[0] ** 2)

    r = {
        "ring": jax.grad(vals)(RING),
        "eye3": jax.grad(vals)(np.eye(3)),
        "jit_grad": jax.jit(jax.grad(vals))(RING),
        "batched": jax.grad(vals)(np.stack([RING, 2 * RING, np.eye(4)])),
        "vmap_grad": jax.vmap(jax.grad(vals))(np.stack([RING, np.eye(4)])),
        "vec_too_ring": jax.grad(vec_too)(RING),
        "both_nondeg": jax.grad(both)(NONDEG),
        "both_nondeg_jit": jax.jit(jax.grad(both))(NONDEG),
    }
    return {k: np.asarray(v) for k, v in r.items()}


def _eigh_with_jax():
    import jax
    import jax.numpy as jjnp

    jax.config.update("jax_enable_x64", True)
    try:
        return _eigh_values(jax, jjnp)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_eigh_eigenvalue_gradient_at_repeated_eigenvalues(x64):
    from helpers import assert_matches_recorded, jax_recorded

    recorded = jax_recorded(EIGH_RECORDED, _eigh_with_jax)
    np.testing.assert_allclose(recorded["ring"], 2 * RING, atol=1e-12)  # analytic
    with np.errstate(all="ignore"):
        ours = _eigh_values(srcjax, jnp)
    assert_matches_recorded(ours, recorded, rtol=1e-10, atol=1e-12)


# User B bug 7: grad(det) at a singular matrix raised LinAlgError (det * inv(a));
# JAX returns the adjugate (cofactor) matrix there, and exact second
# derivatives. Values recorded from JAX 0.10.2 (x64).
DET_RECORDED = __import__("pathlib").Path(__file__).parent / "data" / "linalg_det_jax.npz"
SING2 = np.array([[1.0, 2.0], [2.0, 4.0]])  # rank 1: grad det = [[4, -2], [-2, 1]]
SING3 = np.arange(1.0, 10.0).reshape(3, 3)  # rank 2
REG3 = np.array([[2.0, 0.5, 0.1], [0.3, 1.0, 0.3], [0.1, -0.4, -1.0]])


def _det_values(jax, jnp):
    det = jnp.linalg.det
    r = {}
    for name, m in (
        ("sing2", SING2),
        ("sing3", SING3),
        ("zero3", np.zeros((3, 3))),
        ("reg3", REG3),
    ):
        r[f"grad_{name}"] = jax.grad(det)(m)
        r[f"jacfwd_{name}"] = jax.jacfwd(det)(m)
        r[f"hessian_{name}"] = jax.hessian(det)(m)
        r[f"jacrev_jacfwd_{name}"] = jax.jacrev(jax.jacfwd(det))(m)
    stack = np.stack([SING3, REG3])
    r["grad_batched"] = jax.grad(lambda a: jnp.sum(det(a)))(stack)
    r["vmap_grad"] = jax.vmap(jax.grad(det))(stack)
    r["jit_grad"] = jax.jit(jax.grad(det))(SING3)
    r["det_value_loss"] = jax.grad(lambda a: det(a) ** 2 + det(2.0 * a))(REG3)
    logabs = lambda a: jnp.linalg.slogdet(a)[1]  # noqa: E731
    r["slogdet_grad_reg3"] = jax.grad(logabs)(REG3)
    r["slogdet_hessian_reg3"] = jax.hessian(logabs)(REG3)
    r["slogdet_grad_sing2"] = jax.grad(logabs)(SING2)  # inf: 1/det
    return {k: np.asarray(v) for k, v in r.items()}


def _det_with_jax():
    import jax
    import jax.numpy as jjnp

    jax.config.update("jax_enable_x64", True)
    try:
        return _det_values(jax, jjnp)
    finally:
        jax.config.update("jax_enable_x64", False)


def test_det_derivatives_at_singular_matrices(x64):
    from helpers import assert_matches_recorded, jax_recorded

    recorded = jax_recorded(DET_RECORDED, _det_with_jax)
    np.testing.assert_allclose(recorded["grad_sing2"], [[4.0, -2.0], [-2.0, 1.0]])  # analytic
    with np.errstate(all="ignore"):
        ours = _det_values(srcjax, jnp)
    assert_matches_recorded(ours, recorded, rtol=1e-10, atol=1e-12)


def test_norm_gradients_at_zero_entries_follow_abs_convention():
    """User B bug 4: grad of jnp.linalg.norm(x, 1) at a zero entry was 0 and of
    norm(B, 1) 0 in the winning column's zero, where JAX uses abs'(0) = 1 (as
    grad(sum(abs(x))) does here too); the inf-norm of a zero vector splits half
    the cotangent (JAX's max against 0). Values from JAX 0.10.2."""
    import srcjax
    import srcjax.numpy as jnp

    x = np.array([0.0, -0.0, 2.0, -3.0, np.nan], np.float32)
    np.testing.assert_array_equal(
        srcjax.grad(lambda x: jnp.linalg.norm(x, 1))(x), [1.0, 1.0, 1.0, -1.0, -1.0]
    )
    B = np.array([[1.0, 0.0], [0.5, 3.0]], np.float32)
    want = [[0.0, 1.0], [0.0, 1.0]]
    np.testing.assert_array_equal(srcjax.grad(lambda B: jnp.linalg.norm(B, 1))(B), want)
    np.testing.assert_array_equal(srcjax.grad(lambda B: jnp.linalg.norm(B.T, np.inf))(B), want)
    C = np.array([[0.0, 2.0], [0.0, 3.0]], np.float32)
    np.testing.assert_array_equal(
        srcjax.grad(lambda B: jnp.linalg.norm(B, -1))(C), [[1.0, 0.0], [1.0, 0.0]]
    )
    inf_norm = lambda x: jnp.linalg.norm(x, np.inf)  # noqa: E731
    np.testing.assert_allclose(srcjax.grad(inf_norm)(np.zeros(3, np.float32)), [1 / 6] * 3)
    np.testing.assert_array_equal(
        srcjax.grad(inf_norm)(np.array([-2.0, 2.0, 0.0], np.float32)), [-0.5, 0.5, 0.0]
    )
    np.testing.assert_array_equal(
        srcjax.grad(lambda x: jnp.linalg.norm(x, -np.inf))(np.array([0.0, 2.0, 0.0], np.float32)),
        [0.5, 0.0, 0.5],
    )
    np.testing.assert_array_equal(
        srcjax.jit(srcjax.grad(lambda x: jnp.linalg.norm(x, 1)))(x[:4]), [1.0, 1.0, 1.0, -1.0]
    )
    np.testing.assert_array_equal(
        srcjax.vmap(srcjax.grad(lambda x: jnp.linalg.norm(x, 1)))(np.stack([x[:4], -x[:4]])),
        [[1.0, 1.0, 1.0, -1.0], [1.0, 1.0, -1.0, 1.0]],
    )
    t = np.ones(4, np.float32)
    assert srcjax.jvp(lambda x: jnp.linalg.norm(x, 1), (x[:4],), (t,))[1] == 2.0


# ---------------------------------------------------------------------------
# multi_dot, vector_norm, matrix_norm, cond, lstsq (compositions in
# srcjax/numpy/linalg.py): values recorded from JAX 0.10.2 (float32 inputs).
LINALG_EXTRA = __import__("pathlib").Path(__file__).parent / "data" / "linalg_extra_jax.npz"


def _extra_inputs():
    rng = np.random.default_rng(7)
    f = lambda *s: rng.normal(size=s).astype(np.float32)  # noqa: E731
    r = {"A": f(3, 4), "B": f(4, 5), "C": f(5, 2), "v": f(4), "w": f(5), "M": f(3, 3)}
    r["M"] = r["M"] + 2 * np.eye(3, dtype=np.float32)  # (cond ~ 10: float32 rounding)
    r["S"] = f(2, 3, 3)
    r["X"] = f(3, 4)
    r["X"][0, 1] = 0.0
    r["P"] = f(5, 3)  # tall, full rank
    r["b"] = f(5)
    r["b2"] = f(5, 2)
    r["W"] = f(3, 5)  # wide
    r["R"] = np.outer(f(5), f(3)) + np.outer(f(5), f(3))  # rank 2
    return r


def _extra_values(jax, jnp):
    i = _extra_inputs()
    A, B, C, v, w, M, S, X = (i[k] for k in "A B C v w M S X".split())
    r = {}
    la = jnp.linalg
    r["multi_dot3"] = la.multi_dot([A, B, C])
    r["multi_dot_vec"] = la.multi_dot([v, B, w])
    r["multi_dot_vec_first"] = la.multi_dot([v, B, C])
    r["multi_dot2"] = la.multi_dot((A, B))
    r["multi_dot_int"] = la.multi_dot([np.arange(6).reshape(2, 3), np.ones((3, 2), np.int32)])
    r["grad_multi_dot"] = jax.grad(
        lambda a, b, c: jnp.sum(jnp.sin(la.multi_dot([a, b, c]))), argnums=(0, 1, 2)
    )(A, B, C)
    r["vmap_multi_dot"] = jax.vmap(lambda a: la.multi_dot([a, B, C]))(np.stack([A, 2 * A]))
    for name, o in (("2", 2), ("none", None), ("inf", np.inf), ("ninf", -np.inf)):
        r[f"vnorm_{name}"] = la.vector_norm(X, ord=o)
    for name, o in (("0", 0), ("1", 1), ("3", 3), ("half", 0.5)):
        r[f"vnorm_{name}"] = la.vector_norm(X, ord=o, axis=1)
    r["vnorm_keep"] = la.vector_norm(X, axis=(0, 1), keepdims=True)
    r["vnorm_keep_none"] = la.vector_norm(X, keepdims=True)
    r["vnorm_axis0"] = la.vector_norm(X, axis=0)
    r["vnorm_int"] = la.vector_norm(np.arange(4), ord=1)
    r["vnorm_int2"] = la.vector_norm(np.arange(4))
    r["vnorm_complex"] = la.vector_norm(np.array([3 + 4j, 1j], np.complex64))
    for name, o in (("2", 2), ("inf", np.inf), ("1", 1), ("3", 3)):
        r[f"grad_vnorm_{name}"] = jax.grad(lambda x: la.vector_norm(x, ord=o))(X)  # noqa: B023
    r["vmap_vnorm"] = jax.vmap(lambda x: la.vector_norm(x, ord=3))(X)
    for name, o in (("fro", "fro"), ("nuc", "nuc"), ("1", 1), ("ninf", -np.inf), ("2", 2)):
        r[f"mnorm_{name}"] = la.matrix_norm(S, ord=o)
    r["mnorm_keep"] = la.matrix_norm(M, keepdims=True)
    r["grad_mnorm_nuc"] = jax.grad(lambda x: la.matrix_norm(x, ord="nuc"))(M)
    for name, p in (("none", None), ("n2", -2), ("1", 1), ("fro", "fro"), ("inf", np.inf)):
        r[f"cond_{name}"] = la.cond(M, p)
    r["cond_batched"] = la.cond(S)
    r["cond_wide"] = la.cond(A)
    r["cond_singular"] = la.cond(np.array([[1.0, 2.0], [0.0, 0.0]], np.float32))
    r["cond_singular_1"] = la.cond(np.array([[1.0, 2.0], [2.0, 4.0]], np.float32), 1)
    r["cond_int"] = la.cond(np.array([[1, 2], [2, 1]]))
    r["grad_cond"] = jax.grad(lambda x: la.cond(x))(M)
    r["grad_cond_1"] = jax.grad(lambda x: la.cond(x, 1))(M)
    r["vmap_cond"] = jax.vmap(lambda x: la.cond(x, "fro"))(S)
    P, b, b2, W, R = i["P"], i["b"], i["b2"], i["W"], i["R"]
    for name, (a_, b_, rc) in {
        "tall": (P, b, None),
        "tall2": (P, b2, None),
        "wide": (W, b[:3], None),
        "rankdef": (R, b, None),
        "rankdef_rcond": (R, b2, 1e-3),
        "rcond_neg": (P, b, -1.0),
        "rcond_cut": (P, b, 0.9),
        "int": (np.array([[1, 0], [1, 1], [1, 2]]), np.array([1, 2, 2]), None),
    }.items():
        x, res, rank, s = la.lstsq(a_, b_, rc)
        r[f"lstsq_{name}_x"], r[f"lstsq_{name}_res"] = x, res
        r[f"lstsq_{name}_rank"], r[f"lstsq_{name}_s"] = rank, s
    r["grad_lstsq"] = jax.grad(lambda a, b: jnp.sum(jnp.sin(la.lstsq(a, b)[0])), argnums=(0, 1))(
        P, b2
    )
    r["grad_lstsq_wide"] = jax.grad(lambda a, b: jnp.sum(la.lstsq(a, b)[0] ** 2), argnums=(0, 1))(
        W, b[:3]
    )
    r["vmap_lstsq"] = jax.vmap(lambda b: la.lstsq(P, b)[0])(b2.T)
    return {k: np.asarray(v) for k, v in _flat(r).items()}


def _flat(r):
    out = {}
    for k, v in r.items():
        if isinstance(v, tuple):
            for j, x in enumerate(v):
                out[f"{k}_{j}"] = x
        else:
            out[k] = v
    return out


def _extra_with_jax():
    import jax
    import jax.numpy as jjnp

    return _extra_values(jax, jjnp)


def test_extra_linalg_match_jax():
    from helpers import assert_matches_recorded, jax_recorded

    recorded = jax_recorded(LINALG_EXTRA, _extra_with_jax)
    with np.errstate(all="ignore"):
        ours = _extra_values(srcjax, jnp)
    assert_matches_recorded(ours, recorded, rtol=2e-5, atol=2e-6)


def _fd_check(f, *args, argnum=0, rtol=1e-5, atol=1e-7):
    """grad of scalar ``f`` in float64 (x64) against central differences."""
    args = [np.asarray(a, np.float64) for a in args]
    g = srcjax.grad(f, argnums=argnum)(*args)
    other = lambda x: f(*args[:argnum], x, *args[argnum + 1 :])  # noqa: E731
    np.testing.assert_allclose(g, fd_grad(other, args[argnum]), rtol=rtol, atol=atol)


def test_extra_linalg_grads_match_finite_differences(x64):
    i = _extra_inputs()
    la = jnp.linalg
    md = lambda a, b, c: jnp.sum(jnp.sin(la.multi_dot([a, b, c])))  # noqa: E731
    for k in range(3):
        _fd_check(md, i["A"], i["B"], i["C"], argnum=k)
    _fd_check(lambda v, b, w: la.multi_dot([v, b, w]) ** 2, i["v"], i["B"], i["w"], argnum=1)
    for o in (2, np.inf, 1, 3, 0.5):
        if o >= 1:  # (X's row 0 has a zero: 0 * inf for p < 1, as in JAX)
            _fd_check(lambda x: la.vector_norm(x, ord=o, axis=1)[1], i["X"])  # noqa: B023
        _fd_check(lambda x: la.vector_norm(x, ord=o), i["P"])  # noqa: B023
    for o in ("fro", "nuc", 1, 2, -2):
        _fd_check(lambda x: jnp.sum(la.matrix_norm(x, ord=o)), i["S"])  # noqa: B023
    for p in (None, -2, 1, "fro"):
        _fd_check(lambda x: la.cond(x, p), i["M"])  # noqa: B023
    ls = lambda a, b: jnp.sum(jnp.sin(la.lstsq(a, b)[0]))  # noqa: E731
    for a_ in (i["P"], i["W"]):
        b_ = i["b2"][: a_.shape[0]]
        _fd_check(ls, a_, b_, argnum=0, rtol=1e-5, atol=1e-6)
        _fd_check(ls, a_, b_, argnum=1, rtol=1e-5, atol=1e-6)
    _fd_check(lambda a, b: jnp.sum(la.lstsq(a, b)[1]), i["P"], i["b2"], argnum=0)


def test_extra_linalg_vmap_and_jit():
    i = _extra_inputs()
    la = jnp.linalg
    cases = [
        (lambda a: la.multi_dot([i["v"], a, i["w"]]), np.stack([i["B"], -i["B"], 2 * i["B"]])),
        (lambda x: la.vector_norm(x, ord=np.inf, axis=0), np.stack([i["X"], -2 * i["X"]])),
        (lambda x: la.matrix_norm(x, ord=2), i["S"]),
        (lambda x: la.cond(x, -2), i["S"]),
        (lambda a: la.lstsq(a, i["b"])[0], np.stack([i["P"], i["P"] + 1.0])),
        (lambda b: la.lstsq(i["R"], b)[1:], np.stack([i["b"], 2 * i["b"]])),
        (srcjax.grad(lambda a: jnp.sum(la.lstsq(a, i["b"])[0])), np.stack([i["P"], -i["P"]])),
    ]
    for f, xs in cases:
        got = srcjax.vmap(f)(xs)
        want = [f(x) for x in xs]
        for g_, w_ in zip(
            srcjax.tree_util.tree_leaves(got), zip(*[srcjax.tree_util.tree_leaves(w) for w in want])
        ):
            np.testing.assert_allclose(g_, np.stack(w_), rtol=1e-5, atol=1e-6)
        for x in xs[:1]:
            for g_, w_ in zip(
                srcjax.tree_util.tree_leaves(srcjax.jit(f)(x)), srcjax.tree_util.tree_leaves(f(x))
            ):
                np.testing.assert_allclose(g_, w_, rtol=1e-6, atol=1e-6)


def test_extra_linalg_errors():
    la = jnp.linalg
    a = np.ones((3, 3), np.float32)
    with pytest.raises(ValueError, match="at least two arrays"):
        la.multi_dot([a])
    with pytest.raises(ValueError, match="two-dimensional"):
        la.multi_dot([a, np.ones((3, 3, 3))])
    with pytest.raises(ValueError, match="last dimension"):
        la.multi_dot([a, np.ones((2, 3))])
    with pytest.raises(ValueError, match="Invalid order"):
        la.vector_norm(a, ord="inf")
    with pytest.raises(ValueError, match="at least 2D"):
        la.cond(np.ones(3))
    with pytest.raises(ValueError, match="must be square"):
        la.cond(np.ones((2, 3)), 1)
    with pytest.raises(ValueError, match="Leading dimensions"):
        la.lstsq(a, np.ones(4))
    with pytest.raises(TypeError, match="two-dimensional"):
        la.lstsq(np.ones((2, 3, 3)), np.ones(2))


# User F bugs 1, 2, 4, 5 (JAX 0.10.2 values in tests/data/linalg_userF_jax.npz,
# float32 as the user ran them): cholesky's jvp ignored the symmetrization of a
# non-symmetric tangent (its rule rebinds its tangent parameter, which the rule
# inliner substituted only in reads); grad of lstsq(a, b)[0] was all-NaN where the
# residual is exactly 0 (norm's derivative there, times the residual's zero
# cotangent); hessian of cond crashed (svd's result taken for a tuple under
# vmap); vmap(grad) of multi_dot of non-square matrices crashed.
USERF_RECORDED = __import__("pathlib").Path(__file__).parent / "data" / "linalg_userF_jax.npz"


def _userf_inputs():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((3, 3)).astype(np.float32)
    spd = m @ m.T + 3 * np.eye(3, dtype=np.float32)
    t = rng.standard_normal((3, 3)).astype(np.float32)  # not symmetric
    lst = []
    for seed in range(12):
        r = np.random.default_rng(seed)
        lst.append(
            (
                r.standard_normal((3, 4)).astype(np.float32),
                r.standard_normal((3, 2)).astype(np.float32),
            )
        )
    md = [rng.standard_normal((2,) + s).astype(np.float32) for s in ((4, 3), (3, 4), (4, 2))]
    cm = np.array([[2.0, 1, 0], [0.5, 3, 1], [0, 1, 4]], np.float32)
    return spd, t, lst, md, cm


def _userf_values(jax, jnp):
    spd, t, lst, md, cm = _userf_inputs()
    la = jnp.linalg
    r = {}
    r["chol_jvp"] = jax.jvp(la.cholesky, (spd,), (t,))[1]
    r["chol_jvp_upper"] = jax.jvp(lambda s: la.cholesky(s, upper=True), (spd,), (t,))[1]
    r["chol_jacfwd"] = jax.jacfwd(la.cholesky)(spd)
    r["chol_jacrev"] = jax.jacrev(la.cholesky)(spd)
    r["chol_hessian"] = jax.hessian(lambda s: jnp.sum(la.cholesky(s) ** 3))(spd)
    r["eigh_jvp"] = jax.jvp(lambda s: la.eigh(s)[0], (spd,), (t,))[1]
    r["eigvalsh_jacfwd"] = jax.jacfwd(la.eigvalsh)(spd)
    for i, (a, b) in enumerate(lst):
        r[f"lstsq_grad_{i}"] = jax.grad(lambda a: jnp.sum(la.lstsq(a, b)[0]))(a)  # noqa: B023
    r["multi_dot_vmap_grad"] = jax.vmap(
        jax.grad(lambda a, b, c: jnp.sum(la.multi_dot([a, b, c])), argnums=(0, 1, 2))
    )(*md)
    r["cond_hessian"] = jax.hessian(lambda a: la.cond(a) ** 3)(cm)
    r["cond_hessian_m2"] = jax.hessian(lambda a: la.cond(a, -2) ** 3)(cm)
    return {k: np.asarray(v) for k, v in _flat(r).items()}


def _userf_with_jax():
    import jax
    import jax.numpy as jjnp

    return _userf_values(jax, jjnp)


def test_user_f_linalg_derivatives_match_jax():
    from helpers import assert_matches_recorded, jax_recorded

    recorded = jax_recorded(USERF_RECORDED, _userf_with_jax)
    ours = _userf_values(srcjax, jnp)
    for k, v in ours.items():
        assert np.all(np.isfinite(v)), k
    assert_matches_recorded(ours, recorded, rtol=2e-4, atol=2e-5)


def test_symmetric_input_linalg_jvp_vjp_consistent(x64):
    """<C, jvp(T)> == <vjp(C), T> for a non-symmetric tangent T (user F bug 1:
    cholesky's jvp dropped the symmetrization its vjp applies)."""
    rng = np.random.default_rng(3)
    m = rng.standard_normal((4, 4))
    spd = m @ m.T + 4 * np.eye(4)
    t = rng.standard_normal((4, 4))
    SL = srcjax.scipy.linalg
    for name, f in {
        "cholesky": jnp.linalg.cholesky,
        "cholesky_upper": lambda s: jnp.linalg.cholesky(s, upper=True),
        "cholesky_nosym": lambda s: jnp.linalg.cholesky(s, symmetrize_input=False),
        "eigh_w": lambda s: jnp.linalg.eigh(s)[0],
        "eigh_v": lambda s: jnp.linalg.eigh(s)[1],
        "eigvalsh": jnp.linalg.eigvalsh,
        "scipy_cholesky": SL.cholesky,
        "cho_solve": lambda s: SL.cho_solve(SL.cho_factor(s), np.arange(4.0)),
    }.items():
        out, tan = srcjax.jvp(f, (spd,), (t,))
        c = rng.standard_normal(np.shape(out))
        (ct,) = srcjax.vjp(f, spd)[1](c)
        np.testing.assert_allclose(np.sum(c * tan), np.sum(ct * t), rtol=1e-9, err_msg=name)


def test_lstsq_grad_finite_over_seeds(x64):
    """User F bug 2: grad of lstsq(a, b)[0] w.r.t. a and b against float64 finite
    differences for underdetermined, square and overdetermined a over many seeds
    (a zero residual made it all-NaN)."""
    for seed in range(30):
        r = np.random.default_rng(seed)
        for shp in ((3, 4), (3, 3), (5, 3), (2, 5)):
            a = r.standard_normal(shp)
            b = r.standard_normal((shp[0], 2))
            if np.linalg.cond(a) > 50:  # finite differences too inexact
                continue
            f = lambda a, b: jnp.sum(jnp.sin(jnp.linalg.lstsq(a, b)[0]))  # noqa: E731
            _fd_check(f, a, b, argnum=0, rtol=1e-5, atol=1e-7)
            _fd_check(f, a, b, argnum=1, rtol=1e-5, atol=1e-7)


def test_lstsq_residual_grad_is_twice_residual(x64):
    """The residual's derivative stays that of |r|^2 (2 r), also where r = 0."""
    r = np.random.default_rng(0)
    a = r.standard_normal((5, 3))
    b = r.standard_normal((5, 2))
    f = lambda a, b: jnp.sum(jnp.linalg.lstsq(a, b)[1])  # noqa: E731
    _fd_check(f, a, b, argnum=1)
    g = srcjax.grad(f, argnums=1)(a[:3], b[:3])  # square: residual 0
    np.testing.assert_allclose(g, 0.0, atol=1e-12)


def test_multi_dot_vmap_grad_matches_loop():
    """User F bug 5: vmap(grad) of multi_dot of non-square matrices, and vmap
    of the jacobian, against a per-example loop."""
    rng = np.random.default_rng(1)
    shapes = ((4, 3), (3, 5), (5, 2), (2, 6))
    ops = [rng.standard_normal((3,) + s).astype(np.float32) for s in shapes]
    f = lambda a, b, c, d: jnp.sum(jnp.sin(jnp.linalg.multi_dot([a, b, c, d])))  # noqa: E731
    g = srcjax.grad(f, argnums=(0, 1, 2, 3))
    got = srcjax.vmap(g)(*ops)
    for i in range(3):
        want = g(*(o[i] for o in ops))
        for x, y in zip(got, want):
            np.testing.assert_allclose(x[i], y, rtol=1e-5, atol=1e-6)
    v = rng.standard_normal((3, 3)).astype(np.float32)
    h = lambda v, b, c: jnp.linalg.multi_dot([v, b, c])  # noqa: E731
    got = srcjax.vmap(srcjax.jacrev(h, argnums=1))(v, ops[1], ops[2])
    for i in range(3):
        want = srcjax.jacrev(h, argnums=1)(v[i], ops[1][i], ops[2][i])
        np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-6)


def test_complex_eigh_and_svd_derivatives_are_refused_not_wrong():
    """The eigh/eigvalsh/svd rules are written for real matrices: for a complex
    Hermitian matrix grad of sum(eigh(A)[0] ** 3) was [[15, 15], [15, 30]] (JAX:
    [[18, 15+15j], [15-15j, 33]]) and svd's was conjugated. Now a clear error; real
    matrices unchanged (the registry tests cover them)."""
    a = np.array([[2.0, 1 - 1j], [1 + 1j, 3.0]], np.complex64)
    cases = [
        ("eigh", lambda m: jnp.sum(jnp.linalg.eigh(m)[0] ** 3)),
        ("eigvalsh", lambda m: jnp.sum(jnp.linalg.eigvalsh(m) ** 2)),
        ("svd", lambda m: jnp.sum(jnp.linalg.svd(m)[1] ** 3)),
    ]
    cases += [
        ("qr", lambda m: jnp.sum(jnp.abs(jnp.linalg.qr(m)[1]) ** 2)),
        ("cholesky", lambda m: jnp.sum(jnp.abs(jnp.linalg.cholesky(m @ jnp.conj(m.T))) ** 2)),
    ]
    for name, f in cases:
        with pytest.raises(TypeError, match=f"jnp.linalg.{name} of complex matrices"):
            srcjax.grad(f)(a)
    r = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
    g = srcjax.grad(lambda m: jnp.sum(jnp.linalg.eigh(m)[0] ** 3))(r)
    w, v = np.linalg.eigh(r.astype(np.float64))
    np.testing.assert_allclose(g, v @ np.diag(3 * w**2) @ v.T, rtol=1e-5)


def _vdot_loss(z):
    v = jnp.vdot(z, z[::-1])
    return jnp.real(v * jnp.conj(v)) + jnp.imag(v) * 0.3


def test_vdot_gradient_conjugates_as_jax():
    """vdot(a, b) = dot(conj(a), b): its rules multiplied without conjugating, so
    complex gradients were wrong (silently). Values recorded from JAX 0.10.2."""
    z = np.array([1.0 + 2.0j, -0.5 + 0.3j, 0.7 - 1.1j], np.complex64)
    want = [-7.448 - 11.704j, 5.32 + 3.192j, -10.64 + 21.28j]
    np.testing.assert_allclose(srcjax.grad(_vdot_loss)(z), want, rtol=1e-5)
    np.testing.assert_allclose(srcjax.jit(srcjax.grad(_vdot_loss))(z), want, rtol=1e-5)
