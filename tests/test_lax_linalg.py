"""srcjax.lax.linalg against JAX 0.10.2 (values, gradients, vmap and jit
recorded in tests/data/lax_linalg_jax.npz by tools/record_jax_values.py, i.e.
SRCJAX_RECORD_JAX=1 with JAX installed) and NumPy/SciPy oracles."""

import os

import numpy as np
import pytest
import scipy.linalg as sl
from helpers import assert_matches_recorded, jax_recorded

import srcjax
import srcjax.numpy as jnp
from srcjax.lax import linalg as lin

RECORDED = os.path.join(os.path.dirname(__file__), "data", "lax_linalg_jax.npz")

F32 = np.float32
_R = np.random.RandomState(7)
X = _R.normal(size=(4, 4)).astype(F32)
SPD = (X @ X.T + 4 * np.eye(4)).astype(F32)
RECT = _R.normal(size=(5, 3)).astype(F32)
B = _R.normal(size=(4, 2)).astype(F32)
BR = _R.normal(size=(2, 4)).astype(F32)
LOW = (np.tril(X) + 3 * np.eye(4)).astype(F32)
BATCH = np.stack([SPD, SPD + np.eye(4, dtype=F32)])
DL = np.array([0.0, 1.0, -0.5, 2.0], F32)
D = np.array([4.0, 5.0, 6.0, 3.0], F32)
DU = np.array([1.0, 0.5, -1.0, 0.0], F32)
W = _R.normal(size=(4, 4)).astype(F32)  # weights of the losses


def _signs(v, axis=-2):
    """Each column (``axis=-2``) of ``v`` with its largest entry positive: the
    sign of an eigenvector or singular vector is LAPACK's choice."""
    v = np.asarray(v)
    idx = np.argmax(np.abs(v), axis=axis)
    big = np.take_along_axis(v, np.expand_dims(idx, axis), axis)
    return v * np.sign(big)


def _compute(jax, jnp, lin):
    r = {}
    r["chol"] = lin.cholesky(SPD)
    r["chol_lower_only"] = lin.cholesky(np.tril(SPD) + np.triu(X, 1), symmetrize_input=False)
    r["chol_batch"] = lin.cholesky(BATCH)
    v, w = lin.eigh(SPD)
    r["eigh_w"], r["eigh_v"] = w, _signs(v)
    lu, piv, perm = lin.lu(X)
    r["lu"], r["lu_piv"], r["lu_perm"] = lu, piv, perm
    lu, piv, perm = lin.lu(RECT)
    r["lu_rect"], r["lu_rect_piv"], r["lu_rect_perm"] = lu, piv, perm
    r["piv_to_perm"] = lin.lu_pivots_to_permutation(np.array([2, 2, 3], np.int32), 5)
    q, rr = lin.qr(RECT)
    r["qr_q"], r["qr_r"] = q, rr
    q, rr = lin.qr(RECT, full_matrices=False)
    r["qr_q_red"], r["qr_r_red"] = q, rr
    u, s, vh = lin.svd(RECT, full_matrices=False)
    r["svd_s"], r["svd_u"], r["svd_vh"] = s, _signs(u), _signs(vh, -1)
    r["svd_s_only"] = lin.svd(RECT, compute_uv=False)
    u, s, vh = lin.svd(RECT)
    r["svd_full_shapes"] = np.array(u.shape + vh.shape)
    for name, kw in {
        "ts_left_lower": dict(left_side=True, lower=True),
        "ts_left_lower_t": dict(left_side=True, lower=True, transpose_a=True),
        "ts_left_lower_unit": dict(left_side=True, lower=True, unit_diagonal=True),
        "ts_left_upper_t": dict(left_side=True, lower=False, transpose_a=True),
    }.items():
        r[name] = lin.triangular_solve(LOW if kw["lower"] else LOW.T, B, **kw)
    r["ts_right_lower"] = lin.triangular_solve(LOW, BR, lower=True)
    r["ts_right_upper_t"] = lin.triangular_solve(LOW.T, BR, lower=False, transpose_a=True)
    cl = (LOW + 1j * np.tril(W)).astype(np.complex64)
    r["ts_complex_conj"] = lin.triangular_solve(
        cl, B.astype(np.complex64), left_side=True, lower=True, conjugate_a=True
    )
    r["ts_complex_h"] = lin.triangular_solve(
        cl, B.astype(np.complex64), left_side=True, lower=True, transpose_a=True, conjugate_a=True
    )
    w, vl, vr = lin.eig(X)
    r["eig_w"], r["eig_vl"], r["eig_vr"] = w, vl, vr
    r["eig_w_only"] = lin.eig(X, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[
        0
    ]
    r["v_eig_vl"] = jax.vmap(lambda a: lin.eig(a, compute_right_eigenvectors=False)[1])(
        np.stack([X, X.T])
    )
    r["hess_a"], r["hess_taus"] = lin.hessenberg(X)
    qr_packed, qr_taus = sl.lapack.sgeqrf(RECT)[:2]
    r["hh_product"] = lin.householder_product(qr_packed, qr_taus)
    for lower in (True, False):
        a, d, e, taus = lin.tridiagonal(SPD, lower=lower)
        key = f"tridiag_{'lower' if lower else 'upper'}"
        r[key + "_a"], r[key + "_d"], r[key + "_e"], r[key + "_taus"] = a, d, e, taus
    r["v_hess_taus"] = jax.vmap(lambda a: lin.hessenberg(a)[1])(np.stack([X, X.T]))
    r["tri_solve"] = lin.tridiagonal_solve(DL, D, DU, B)
    r["sym_prod"] = lin.symmetric_product(RECT.T, SPD[:3, :3], alpha=0.5, beta=2.0)
    r["chol_update"] = lin.cholesky_update(np.linalg.cholesky(SPD).T, X[0])

    # gradients
    r["g_chol"] = jax.grad(lambda a: (lin.cholesky(a) * W).sum())(SPD)
    r["g_eigh"] = jax.grad(lambda a: (lin.eigh(a)[1] * W[0]).sum())(SPD)
    r["g_lu"] = jax.grad(lambda a: (lin.lu(a)[0] * W).sum())(X)
    r["g_qr"] = jax.grad(lambda a: (lin.qr(a, full_matrices=False)[1] * W[:3, :3]).sum())(RECT)
    r["g_svd"] = jax.grad(lambda a: (lin.svd(a, compute_uv=False) * W[0, :3]).sum())(RECT)
    ga, gb = jax.grad(
        lambda a, b: (lin.triangular_solve(a, b, left_side=True, lower=True) * W[:, :2]).sum(),
        (0, 1),
    )(LOW, B)
    r["g_ts_a"], r["g_ts_b"] = ga, gb
    gs = jax.grad(
        lambda dl, d, du, b: (lin.tridiagonal_solve(dl, d, du, b) * W[:, :2]).sum(), (1, 3)
    )(DL, D, DU, B)
    r["g_tri_d"], r["g_tri_b"] = gs
    # vmap and jit
    r["v_chol"] = jax.vmap(lin.cholesky)(BATCH)
    r["v_eigh_w"] = jax.vmap(lambda a: lin.eigh(a)[1])(BATCH)
    r["v_ts"] = jax.vmap(lambda b: lin.triangular_solve(LOW, b, left_side=True, lower=True))(
        np.stack([B, 2 * B])
    )
    r["j_lu"] = jax.jit(lambda a: lin.lu(a)[0])(X)
    r["j_tri"] = jax.jit(lambda d, b: lin.tridiagonal_solve(DL, d, DU, b))(D, B)
    return {k: np.asarray(v) for k, v in r.items()}


def _with_jax():
    import jax
    import jax.numpy as jjnp
    from jax.lax import linalg as jlin

    return _compute(jax, jjnp, jlin)


def test_lax_linalg_matches_jax():
    """Values, dtypes and shapes of every function, their gradients, vmap and
    jit. Oracle: JAX 0.10.2, recorded (eigenvector and singular-vector signs
    normalized: they are LAPACK's choice)."""
    recorded = jax_recorded(RECORDED, _with_jax)
    ours = _compute(srcjax, jnp, lin)
    assert_matches_recorded(ours, recorded, rtol=2e-5, atol=2e-5)


def test_against_numpy_scipy():
    np.testing.assert_allclose(lin.cholesky(SPD), np.linalg.cholesky(SPD), rtol=1e-5)
    v, w = lin.eigh(SPD)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(SPD), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(v) @ np.diag(w) @ np.asarray(v).T, SPD, atol=1e-4)
    v2, w2 = lin.eigh(SPD, subset_by_index=(1, 3))  # (JAX's CPU eigh refuses subsets)
    np.testing.assert_allclose(w2, np.asarray(w)[1:3], rtol=1e-6)
    np.testing.assert_allclose(_signs(v2), _signs(v)[:, 1:3], rtol=1e-6)
    lu, piv, perm = lin.lu(X)
    lu_s, piv_s = sl.lu_factor(X)
    np.testing.assert_allclose(lu, lu_s, rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(piv, piv_s)
    low = np.tril(np.asarray(lu), -1) + np.eye(4)
    np.testing.assert_allclose(X[np.asarray(perm)], low @ np.triu(np.asarray(lu)), atol=1e-5)
    for lower in (True, False):
        for trans in (0, 1):
            a = LOW if lower else LOW.T
            got = lin.triangular_solve(a, B, left_side=True, lower=lower, transpose_a=bool(trans))
            want = sl.solve_triangular(a, B, trans=trans, lower=lower)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    got = lin.triangular_solve(LOW, BR, lower=True)  # x @ a = b
    np.testing.assert_allclose(np.asarray(got) @ LOW, BR, atol=1e-5)
    banded = np.stack([np.r_[0.0, DU[:-1]], D, np.r_[DL[1:], 0.0]])
    np.testing.assert_allclose(
        lin.tridiagonal_solve(DL, D, DU, B), sl.solve_banded((1, 1), banded, B), rtol=1e-5
    )
    q, r = lin.qr(RECT)
    np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), RECT, atol=1e-5)
    s = lin.svd(RECT, compute_uv=False)
    np.testing.assert_allclose(s, np.linalg.svd(RECT, compute_uv=False), rtol=1e-5)
    t, z = lin.schur(X)
    np.testing.assert_allclose(np.asarray(z) @ np.asarray(t) @ np.asarray(z).T, X, atol=1e-5)
    w, vl, vr = lin.eig(X)
    np.testing.assert_allclose(X @ np.asarray(vr), np.asarray(vr) * np.asarray(w), atol=1e-5)
    vlh = np.conj(np.asarray(vl)).T
    np.testing.assert_allclose(vlh @ X, np.asarray(w)[:, None] * vlh, atol=1e-5)
    h, taus = lin.hessenberg(X)
    assert np.allclose(np.tril(np.asarray(h), -2) != 0, np.tril(np.ones((4, 4)), -2) != 0)
    a, d, e, taus = lin.tridiagonal(SPD)
    t = np.diag(np.asarray(d)) + np.diag(np.asarray(e), 1) + np.diag(np.asarray(e), -1)
    np.testing.assert_allclose(np.linalg.eigvalsh(t), np.linalg.eigvalsh(SPD), rtol=1e-5)
    r_new = lin.cholesky_update(np.linalg.cholesky(SPD).T, X[0])
    np.testing.assert_allclose(
        np.asarray(r_new).T @ np.asarray(r_new), SPD + np.outer(X[0], X[0]), rtol=1e-5
    )


def test_gradients_against_finite_differences(x64):
    """float64: grad of tridiagonal_solve in every diagonal and of
    triangular_solve (right side, transposed) in a, against central differences."""
    from helpers import fd_grad

    dl, d, du, b = (v.astype(np.float64) for v in (DL, D, DU, B))
    w = W[:, :2].astype(np.float64)

    def f(dl, d, du):
        return (lin.tridiagonal_solve(dl, d, du, b) * w).sum()

    grads = srcjax.grad(f, argnums=(0, 1, 2))(dl, d, du)
    fds = (
        fd_grad(lambda v: f(v, d, du), dl),
        fd_grad(lambda v: f(dl, v, du), d),
        fd_grad(lambda v: f(dl, d, v), du),
    )
    for g, want in zip(grads, fds):
        np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-9)
    a = np.ascontiguousarray(LOW.T, dtype=np.float64)  # (fd_grad perturbs C order)
    br = BR.astype(np.float64)

    def g(m):
        return (lin.triangular_solve(m, br, lower=False, transpose_a=True) * w.T).sum()

    np.testing.assert_allclose(srcjax.grad(g)(a), np.triu(fd_grad(g, a)), rtol=1e-6, atol=1e-9)


def test_refusals():
    with pytest.raises(NotImplementedError, match="pivoting"):
        lin.qr(X, pivoting=True)
    with pytest.raises(srcjax.errors.NoDerivativeRuleError):
        srcjax.grad(lambda a: jnp.abs(lin.eig(a)[1]).sum())(X)
    with pytest.raises(srcjax.errors.NoDerivativeRuleError, match="hessenberg"):
        srcjax.grad(lambda a: lin.hessenberg(a)[0].sum())(X)
    with pytest.raises(NotImplementedError, match="perturb_singular"):
        lin.tridiagonal_solve(DL, D, DU, B, perturb_singular=True)


def test_ormqr_qdwh_and_the_algorithm_enums_x64(x64):
    """Issue 20's audit of jax.lax.linalg (0.10.2): ormqr, qdwh and the enums
    SvdAlgorithm / EigImplementation / EighImplementation were missing. Oracles:
    NumPy's complete Q from the same reflectors (geqrf's raw output) for ormqr,
    SciPy's polar decomposition for qdwh, central differences for its gradient.
    (Checked against JAX 0.10.2 by hand: ormqr within 7e-7, qdwh's u and h within
    5e-7 in float32/complex64; JAX's qdwh is not reverse-differentiable.)"""
    rng = np.random.RandomState(3)
    for x in (rng.normal(size=(5, 3)), rng.normal(size=(5, 3)) + 1j * rng.normal(size=(5, 3))):
        h_raw, taus = np.linalg.qr(x, mode="raw")
        a = h_raw.T
        q = np.linalg.qr(x, mode="complete")[0]
        c_left, c_right = rng.normal(size=(5, 4)), rng.normal(size=(4, 5))
        for left, c in ((True, c_left), (False, c_right)):
            for transpose in (False, True):
                qq = q.conj().T if transpose else q
                want = qq @ c if left else c @ qq
                got = lin.ormqr(a, taus, c, left=left, transpose=transpose)
                np.testing.assert_allclose(got, want, atol=1e-12)
        u, h, num_iters, converged = lin.qdwh(x)
        want_u, want_h = sl.polar(x)
        np.testing.assert_allclose(u, want_u, atol=1e-12)
        np.testing.assert_allclose(h, want_h, atol=1e-12)
        assert int(num_iters) == 0 and bool(converged)
    x = rng.normal(size=(4, 3))
    wts = np.arange(12.0).reshape(4, 3)

    def f(x):
        u, h, _, _ = lin.qdwh(x)
        return jnp.sum(u * wts) + jnp.sum(h**2)

    eps, fd = 1e-6, np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        fd[i] = (f(x + d) - f(x - d)) / (2 * eps)
    np.testing.assert_allclose(srcjax.grad(f)(x), fd, atol=1e-7)
    np.testing.assert_allclose(srcjax.jit(f)(x), f(x), rtol=1e-12)
    with pytest.raises(ValueError, match="at least as many rows"):
        lin.qdwh(x.T)
    s = lin.svd(x, compute_uv=False, algorithm=lin.SvdAlgorithm.QR)
    np.testing.assert_allclose(s, np.linalg.svd(x, compute_uv=False), rtol=1e-12)
    assert lin.EighImplementation.QDWH.value == "qdwh"
    assert lin.EigImplementation.LAPACK.value == "lapack"
