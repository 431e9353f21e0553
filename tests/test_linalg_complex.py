"""Complex Hermitian inputs of the linear-algebra functions (user R's silent wrong
numbers: eigh/cholesky symmetrized with the transpose instead of the conjugate
transpose, cho_solve/solve(assume_a='pos')/lu_solve(trans=2) solving with the
transpose) and jacrev of complex outputs (JAX raises TypeError).

Oracles: NumPy in float64 (eigenvalues, Cholesky factors) and values recorded
from JAX 0.10.2 (CPU), marked where used."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
import srcjax.scipy.linalg as jsl
from srcjax.errors import NonDifferentiableError

H2 = np.array([[2, 1j], [-1j, 3]], np.complex64)
H3 = np.array([[4, 1 + 2j, 0.5j], [1 - 2j, 5, -1 + 1j], [-0.5j, -1 - 1j, 3]], np.complex64)
B = np.array([[1, 1j], [2 - 1j, 0], [0.5, -1]], np.complex64)
A = np.array([[2, 1j, 0], [1 - 1j, 3, 1], [0.5j, -1, 1 + 1j]], np.complex64)
HB = np.stack([H3, H3.conj(), H3 + 2 * np.eye(3, dtype=np.complex64)])

# recorded from JAX 0.10.2: jax.scipy.linalg.cho_solve(cho_factor(H3), B), and
# jax.scipy.linalg.solve(H3, B, assume_a='pos') (the same numbers)
CHO_SOLVE_JAX = np.array(
    [
        [2.9802322e-08 - 0.35251796j, 8.6330935e-02 + 0.47482014j],
        [6.7625892e-01 - 0.20143883j, -3.3093524e-01 + 0.02877699j],
        [5.1798558e-01 + 0.15827338j, -5.3237408e-01 - 0.08633093j],
    ]
)
# recorded from JAX 0.10.2: jax.scipy.linalg.lu_solve(lu_factor(A), B, trans=2 / 1)
LU_SOLVE_C_JAX = np.array(
    [
        [-0.00692043 - 0.23702422j, 0.22145328 + 0.5847751j],
        [0.66608995 - 0.31141868j, -0.31487888 - 0.03460207j],
        [-0.23875432 + 0.07266437j, -0.35986158 - 0.3252595j],
    ]
)
LU_SOLVE_T_JAX = np.array(
    [
        [0.31833908 + 0.5968858j, 0.0415225 + 0.5778547j],
        [0.8598616 - 0.3252595j, 0.0034602 + 0.13148788j],
        [-0.01730107 + 0.3425606j, -0.56747407 + 0.43598616j],
    ]
)


def _close(got, want, tol=2e-5):
    got = np.asarray(got)
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


# ---------------------------------------------------------------------------- eigh


def test_eigh_complex_hermitian_values():
    # JAX: [1.3819661, 3.618034] (the old result, [2, 3], dropped the imaginary part)
    _close(jnp.linalg.eigvalsh(H2), [1.3819661, 3.618034])
    for h in (H2, H3):
        want = np.linalg.eigvalsh(h.astype(np.complex128))
        w, v = jnp.linalg.eigh(h)
        assert w.dtype == np.float32 and v.dtype == np.complex64
        _close(w, want)
        _close(h @ v, v * w, 1e-4)  # eigenvectors of the complex matrix
        _close(jnp.linalg.eigvalsh(h), want)
        _close(jnp.linalg.eigh(h, UPLO="U")[0], want)
        _close(jsl.eigh(h)[0], want)
        _close(jsl.eigh(h, lower=False, eigvals_only=True), want)


def test_eigh_complex_jit_vmap():
    want = np.linalg.eigvalsh(HB.astype(np.complex128))
    _close(srcjax.jit(jnp.linalg.eigvalsh)(H3), want[0])
    _close(srcjax.jit(lambda h: jnp.linalg.eigh(h, UPLO="U")[0])(H3), want[0])
    _close(srcjax.vmap(jnp.linalg.eigvalsh)(HB), want)
    _close(srcjax.vmap(lambda h: jnp.linalg.eigh(h)[0])(HB), want)
    _close(srcjax.jit(srcjax.vmap(lambda h: jsl.eigh(h)[0]))(HB), want)


def test_eigh_complex_derivative_still_refused():
    with pytest.raises(NonDifferentiableError, match="complex"):
        srcjax.grad(lambda h: jnp.sum(jnp.linalg.eigh(h)[0]))(H3)


def test_eigh_real_unchanged():
    m = np.array([[1.0, 2.0], [0.0, 3.0]], np.float32)  # symmetrized: (m + m.T) / 2
    _close(jnp.linalg.eigvalsh(m), np.linalg.eigvalsh((m + m.T) / 2))


# ------------------------------------------------------------------------ cholesky


def test_cholesky_complex_hermitian():
    want = np.linalg.cholesky(H3.astype(np.complex128))
    _close(jnp.linalg.cholesky(H3), want)
    # JAX: L[1, 0] = -0.5j for [[4, 1j], [-1j, 3]]
    _close(jnp.linalg.cholesky(np.array([[4, 1j], [-1j, 3]], np.complex64))[1, 0], -0.5j)
    u = jnp.linalg.cholesky(H3, upper=True)
    _close(u, want.conj().T)
    _close(u.conj().T @ u, H3, 1e-4)
    _close(srcjax.jit(jnp.linalg.cholesky)(H3), want)
    _close(srcjax.jit(lambda h: jnp.linalg.cholesky(h, upper=True))(H3), want.conj().T)
    wants = np.linalg.cholesky(HB.astype(np.complex128))
    _close(srcjax.vmap(jnp.linalg.cholesky)(HB), wants)
    _close(jsl.cholesky(H3, lower=True), want)
    _close(jsl.cholesky(H3), want.conj().T)


def test_cho_solve_and_solve_pos_complex():
    for lower in (False, True):
        _close(jsl.cho_solve(jsl.cho_factor(H3, lower=lower), B), CHO_SOLVE_JAX)
        _close(jsl.solve(H3, B, assume_a="pos", lower=lower), CHO_SOLVE_JAX)
        _close(jsl.cho_solve(jsl.cho_factor(H3, lower=lower), B[:, 0]), CHO_SOLVE_JAX[:, 0])
    _close(H3.astype(np.complex128) @ CHO_SOLVE_JAX, B, 1e-5)  # the recorded x solves it
    f = srcjax.jit(lambda h, b: jsl.cho_solve(jsl.cho_factor(h), b))
    _close(f(H3, B), CHO_SOLVE_JAX)
    g = srcjax.jit(lambda h, b: jsl.solve(h, b, assume_a="pos"))
    _close(g(H3, B), CHO_SOLVE_JAX)
    want = np.linalg.solve(HB.astype(np.complex128), np.stack([B] * 3))
    bs = np.stack([B] * 3)
    _close(srcjax.vmap(lambda h, b: jsl.cho_solve(jsl.cho_factor(h, lower=True), b))(HB, bs), want)
    _close(srcjax.vmap(lambda h, b: jsl.solve(h, b, assume_a="pos"))(HB, bs), want)


def test_lu_solve_conjugate_transpose():
    fac = jsl.lu_factor(A)
    _close(jsl.lu_solve(fac, B, trans=2), LU_SOLVE_C_JAX)
    _close(jsl.lu_solve(fac, B, trans=1), LU_SOLVE_T_JAX)
    _close(jsl.lu_solve(fac, B[:, 1], trans=2), LU_SOLVE_C_JAX[:, 1])
    _close(A.conj().T.astype(np.complex128) @ LU_SOLVE_C_JAX, B, 1e-5)
    f = srcjax.jit(lambda a, b: jsl.lu_solve(jsl.lu_factor(a), b, trans=2))
    _close(f(A, B), LU_SOLVE_C_JAX)
    As = np.stack([A, A.conj()])
    want = np.linalg.solve(np.conj(np.swapaxes(As, -1, -2)).astype(np.complex128), B)
    v = srcjax.vmap(lambda a: jsl.lu_solve(jsl.lu_factor(a), B, trans=2))(As)
    _close(v, want)


# ---------------------------------------------------------------- jacrev outputs


def _cplx(t):
    return jnp.exp(1j * t * jnp.arange(3.0))


@pytest.mark.parametrize(
    "make",
    [
        lambda: srcjax.jacrev(_cplx)(0.5),
        lambda: srcjax.jit(srcjax.jacrev(_cplx))(0.5),
        lambda: srcjax.vmap(srcjax.jacrev(_cplx))(jnp.array([0.5, 1.0])),
        lambda: srcjax.jacrev(lambda t: (t * 2, t * 1j))(jnp.ones(2)),
        lambda: srcjax.jacrev(lambda a, b: a * b * 1j, argnums=(0, 1))(jnp.ones(2), jnp.ones(2)),
        lambda: srcjax.jacrev(lambda t: (t * 1j, 2.0), has_aux=True)(jnp.ones(2)),
        lambda: srcjax.hessian(lambda t: t * 1j)(jnp.ones(2)),
    ],
)
def test_jacrev_complex_output_raises(make):
    # JAX 0.10.2: TypeError "jacrev requires real-valued outputs (output dtype that
    # is a sub-dtype of np.floating), but got complex64. ..."
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs.*complex64"):
        make()


def test_jacrev_integer_output_raises():
    with pytest.raises(TypeError, match="jacrev requires real-valued outputs.*int32"):
        srcjax.jacrev(lambda t: jnp.round(t).astype(jnp.int32))(jnp.ones(2))


def test_jacrev_real_output_still_works():
    x = jnp.array([0.5, 1.0])
    # d|x i| / dx = sign(x): the identity here (finite differences agree)
    _close(srcjax.jacrev(lambda t: jnp.abs(t * 1j))(x), np.eye(2))
    _close(srcjax.jacfwd(_cplx)(0.5), 1j * np.arange(3) * np.exp(0.5j * np.arange(3)), 1e-5)
    _close(srcjax.hessian(lambda t: jnp.sum(t**3))(x), np.diag(6 * np.asarray(x)))


# ------------------------------------------- solve_triangular(trans=2) derivatives

# recorded from JAX 0.10.2, with L = lambda z: jnp.sum(jnp.abs(z) ** 2):
# grad(lambda a: L(solve_triangular(a, B, trans=2)))(A)
ST_C_GRAD_A = np.array(
    [
        [-4.1666669e-01 + 0.125j, -2.5000000e-01 + 0.16666666j, 8.3333343e-02 - 0.5j],
        [0, -3.3333337e-01 + 0.02777778j, 1.3038516e-08 - 0.08333334j],
        [0, 0, -3.7500000e-01 + 0.375j],
    ]
)
# grad(lambda b: L(solve_triangular(A, b, trans=2, lower=True)))(B)
ST_C_GRAD_B = np.array(
    [
        [-0.0625 + 0.1875j, 0.125 - 0.5416667j],
        [0.5833334 + 0.125j, -0.33333334 + 0.25j],
        [0.6979167 + 0.2916667j, -1.1875 + 0.125j],
    ]
)
# jvp(lambda a: solve_triangular(a, B, trans=2), (A,), (A.conj() + 1,))[1]
ST_C_JVP_A = np.array(
    [
        [-0.75 + 0.0j, 0.0 - 0.75j],
        [-1.0555556 - 0.19444445j, 0.63888896 - 0.16666667j],
        [-0.5694445 + 0.12500006j, -0.40277782 + 0.51388884j],
    ]
)
# grad(lambda b: L(cho_solve(cho_factor(H3), b)))(B) (equal to central differences)
CHO_SOLVE_GRAD_B = np.array(
    [
        [-0.2302158 + 0.6194296j, 0.19750528 - 0.59707046j],
        [0.7701464 + 0.14429893j, -0.5844417 - 0.0658351j],
        [0.7533771 - 0.27576208j, -0.67118675 + 0.19750528j],
    ]
)
# grad(lambda b: jnp.sum(jnp.abs(grad(lambda a: L(solve_triangular(a, b, trans=2,
# lower=True)))(A)) ** 2))(B): the derivatives of the adjoint solve
ST_C_GRAD_GRAD = np.array(
    [
        [-0.5375435 + 0.63635707j, 0.4076485 - 1.0106579j],
        [0.9899211 - 0.03028547j, -1.0466822 + 0.56298244j],
        [2.8020775 + 0.8282698j, -4.631402 + 0.40764856j],
    ]
)


def _sq(z):
    return jnp.sum(jnp.abs(z) ** 2)


def test_solve_triangular_conjugate_transpose_derivatives():
    ga = srcjax.grad(lambda a: _sq(jsl.solve_triangular(a, B, trans=2)))
    _close(ga(A), ST_C_GRAD_A, 1e-4)
    _close(srcjax.jit(ga)(A), ST_C_GRAD_A, 1e-4)
    _close(srcjax.vmap(ga)(np.stack([A, A])), np.stack([ST_C_GRAD_A] * 2), 1e-4)
    gb = srcjax.grad(lambda b: _sq(jsl.solve_triangular(A, b, trans="C", lower=True)))
    _close(gb(B), ST_C_GRAD_B, 1e-4)
    jv = srcjax.jvp(lambda a: jsl.solve_triangular(a, B, trans=2), (A,), (A.conj() + 1,))[1]
    _close(jv, ST_C_JVP_A, 1e-4)
    gc = srcjax.grad(lambda b: _sq(jsl.cho_solve(jsl.cho_factor(H3), b)))
    _close(gc(B), CHO_SOLVE_GRAD_B, 1e-4)

    def inner(b):
        g = srcjax.grad(lambda a: _sq(jsl.solve_triangular(a, b, trans=2, lower=True)))(A)
        return _sq(g)

    _close(srcjax.grad(inner)(B), ST_C_GRAD_GRAD, 1e-4)


def test_solve_pos_complex_gradient_matches_finite_differences():
    # JAX 0.10.2's own solve(assume_a='pos') gradient in b differs for complex
    # Hermitian a (its cho_solve and general solve agree with the central
    # differences); srcjax gives the central-difference value
    def loss(b):
        return _sq(jsl.solve(H3, b, assume_a="pos"))

    _close(srcjax.grad(loss)(B), CHO_SOLVE_GRAD_B, 1e-4)
