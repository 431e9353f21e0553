"""Triangular solves and the Cholesky derivative rules (user K bug 3: a GP's
jit(grad(nlml)) ran general ``np.linalg.solve`` seven times per call).

``solve_triangular`` of one matrix is LAPACK's triangular solve through SciPy;
the Cholesky rules use triangular solves; both adjoints of ``solve_triangular``
share one call (``ad.solve_triangular_adjoint``), which jit computes once.
Oracles: float64 NumPy solves of the masked matrix, values recorded from JAX
0.10.2 (CPU, float32) for the same programs written with ``jax``.
"""

import re

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
import srcjax.scipy.linalg as sla

pytest.importorskip("scipy")


def _op(a, trans, lower, unit):
    t = np.tril(a) if lower else np.triu(a)
    if unit:
        np.fill_diagonal(t, 1)
    if trans in (1, "T"):
        return t.T
    if trans in (2, "C"):
        return t.conj().T
    return t


@pytest.mark.parametrize("trans", [0, 1, 2, "T"])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("unit", [False, True])
def test_solve_triangular_matches_numpy(trans, lower, unit):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(4, 4)) + 4 * np.eye(4)
    for b in (rng.normal(size=4), rng.normal(size=(4, 3)), rng.normal(size=(2, 5, 4, 3))):
        got = sla.solve_triangular(a.astype(np.float32), b.astype(np.float32), trans, lower, unit)
        op = _op(a, trans, lower, unit)
        want = np.linalg.solve(op, b[:, None])[:, 0] if b.ndim == 1 else np.linalg.solve(op, b)
        assert got.dtype == np.float32 and got.shape == b.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_solve_triangular_complex_conjugate_transpose():
    rng = np.random.default_rng(1)
    a = (rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3)) + 3 * np.eye(3)).astype(
        np.complex64
    )
    b = (rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))).astype(np.complex64)
    got = sla.solve_triangular(a, b, trans=2, lower=True)
    want = np.linalg.solve(np.tril(a.astype(np.complex128)).conj().T, b)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_solve_triangular_singular_and_batched_rhs_as_jax():
    a = np.tril(np.ones((3, 3), np.float32))
    a[1, 1] = 0
    # recorded from JAX 0.10.2: substitution's inf/NaN at an exact zero pivot
    np.testing.assert_array_equal(
        sla.solve_triangular(a, np.ones(3, np.float32), lower=True), [1.0, np.nan, np.nan]
    )
    np.testing.assert_array_equal(
        sla.solve_triangular(a, np.array([1.0, 2.0, 3.0], np.float32), lower=True, trans=1),
        [np.inf, -np.inf, 3.0],
    )
    b = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    m = np.array([[2.0, 0, 0], [1, 3, 0], [-1, 2, 4]], np.float32)
    want = [  # recorded from JAX 0.10.2
        [[0.5, 1.0416666269302368], [0.0, 0.1666666716337204], [1.0, 1.25]],
        [[3.75, 4.291666507720947], [1.0, 1.1666667461395264], [2.5, 2.75]],
    ]
    np.testing.assert_allclose(sla.solve_triangular(m, b, lower=True, trans="T"), want, rtol=1e-6)


# -- the GP marginal likelihood of user K (n = 12 here) --------------------------------
_rng = np.random.default_rng(0)
X = jnp.asarray(_rng.uniform(-3, 3, (12, 2)), dtype=jnp.float32)
Y = jnp.sin(X[:, 0])


def _kernel(h):
    d2 = jnp.sum((X[:, None] - X[None]) ** 2, -1)
    return jnp.exp(h[1]) * jnp.exp(-0.5 * d2 / jnp.exp(2 * h[0])) + (
        jnp.exp(h[2]) + 1e-3
    ) * jnp.eye(12)


def nlml(h):
    L = jnp.linalg.cholesky(_kernel(h))
    a = srcjax.scipy.linalg.cho_solve((L, True), Y)
    return 0.5 * Y @ a + jnp.sum(jnp.log(jnp.diag(L)))


def nlml_upper_slogdet(h):
    K = _kernel(h)
    c, low = srcjax.scipy.linalg.cho_factor(K)
    a = srcjax.scipy.linalg.cho_solve((c, low), Y)
    return 0.5 * Y @ a + 0.5 * jnp.linalg.slogdet(K)[1]


H = jnp.asarray([0.1, -0.2, -1.0])
GRAD = [-2.2338075637817383, 1.8909112215042114, 2.36216139793396]  # recorded from JAX


def test_gp_gradient_eager_and_jit():
    np.testing.assert_allclose(srcjax.grad(nlml)(H), GRAD, rtol=1e-5)
    np.testing.assert_allclose(srcjax.jit(srcjax.grad(nlml))(H), GRAD, rtol=1e-5)
    np.testing.assert_allclose(srcjax.grad(nlml_upper_slogdet)(H), GRAD, rtol=1e-5)


def test_gp_hessian_and_vmap_grad():
    want = [  # recorded from JAX
        [0.2617626190185547, -0.6232534646987915, 1.3122307062149048],
        [-0.6232536435127258, 1.8323280811309814, -0.47556835412979126],
        [1.3122309446334839, -0.4755684435367584, 0.8636382818222046],
    ]
    np.testing.assert_allclose(srcjax.hessian(nlml)(H), want, rtol=2e-5, atol=2e-6)
    want_v = [  # recorded from JAX
        [-2.233807325363159, 1.8909112215042114, 2.36216139793396],
        [-1.6717654466629028, 1.8370904922485352, 2.7052459716796875],
    ]
    got = srcjax.vmap(srcjax.grad(nlml))(jnp.stack([H, H * 0.5]))
    np.testing.assert_allclose(got, want_v, rtol=1e-5)


def test_gp_gradient_uses_no_general_solve(monkeypatch):
    # the Cholesky and cho_solve rules are triangular solves: np.linalg.solve
    # (an LU factorization of the 12 x 12 matrix per call) is never reached
    g = srcjax.jit(srcjax.grad(nlml))
    g(H)

    def refuse(*args, **kwargs):
        raise AssertionError("np.linalg.solve called")

    monkeypatch.setattr(np.linalg, "solve", refuse)
    np.testing.assert_allclose(g(H), GRAD, rtol=1e-5)
    np.testing.assert_allclose(srcjax.grad(nlml)(H), GRAD, rtol=1e-5)


def test_cho_solve_gradient_shares_the_adjoint_solve():
    # both adjoints of each triangular solve need the same transposed solve: the
    # jitted gradient computes it once (two forward solves, two adjoint solves)
    def f(c, b):
        return jnp.sum(srcjax.scipy.linalg.cho_solve((c, True), b) ** 2)

    c = np.array([[2.0, 0, 0], [1, 3, 0], [-1, 2, 4]], np.float32)
    b = np.array([1.0, -2.0, 0.5], np.float32)
    text = srcjax.source(srcjax.jit(srcjax.grad(f, argnums=(0, 1))), c, b)
    # (`lower` is the display's True: jit writes the branch test as the constant)
    branch = re.split(r"if (?:lower|True):", text)[2].split("else:")[0]
    assert branch.count("solve_triangular_adjoint(") == 2
    gc, gb = srcjax.jit(srcjax.grad(f, argnums=(0, 1)))(c, b)
    # float64 central differences
    c64, b64 = c.astype(np.float64), b.astype(np.float64)

    def f64(cc, bb):
        x = np.linalg.solve(np.tril(cc) @ np.tril(cc).T, bb)
        return np.sum(x**2)

    eps = 1e-6
    for i in range(3):
        e = np.zeros(3)
        e[i] = eps
        np.testing.assert_allclose(
            gb[i], (f64(c64, b64 + e) - f64(c64, b64 - e)) / (2 * eps), rtol=1e-4
        )
        for j in range(i + 1):
            E = np.zeros((3, 3))
            E[i, j] = eps
            fd = (f64(c64 + E, b64) - f64(c64 - E, b64)) / (2 * eps)
            np.testing.assert_allclose(gc[i, j], fd, rtol=1e-4, atol=1e-6)
    np.testing.assert_array_equal(np.triu(gc, 1), 0)


def test_vmap_over_right_hand_sides_with_one_factor():
    # vmap broadcasts the shared factor along the batch (stride 0): one triangular
    # solve with the examples as columns. Oracle: float64 NumPy solves
    rng = np.random.default_rng(3)
    m = rng.normal(size=(5, 5))
    L = np.linalg.cholesky(m @ m.T + 5 * np.eye(5)).astype(np.float32)
    Ys = rng.normal(size=(7, 5)).astype(np.float32)

    def f(yy):
        return srcjax.scipy.linalg.cho_solve((L, True), yy)

    K = L.astype(np.float64) @ L.T.astype(np.float64)
    np.testing.assert_allclose(srcjax.vmap(f)(Ys), np.linalg.solve(K, Ys.T).T, rtol=1e-4, atol=1e-6)
    got = srcjax.vmap(srcjax.grad(lambda yy: jnp.sum(f(yy) ** 2)))(Ys)
    want = 2 * np.linalg.solve(K, np.linalg.solve(K, Ys.T)).T  # K symmetric
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    A = np.broadcast_to(np.tril(L), (7, 5, 5))
    x = sla.solve_triangular(A, Ys, lower=True, trans=1)
    np.testing.assert_allclose(
        x, np.linalg.solve(np.tril(L).T.astype(np.float64), Ys.T).T, rtol=1e-4
    )


# -- solve_triangular through BLAS trsm: operand layouts, dtypes, sizes -------------


@pytest.mark.parametrize("trans", [0, 1, 2])
@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("layout", ["C", "F", "strided"])
def test_solve_triangular_layouts_complex_and_real(trans, lower, layout):
    """trsm reads column-major: a C-ordered ``a`` is passed as its transpose (the
    other triangle, the other ``trans``), except for the conjugate transpose of a
    complex ``a``. Oracle: float64/complex128 NumPy solves of the masked matrix."""
    rng = np.random.default_rng(7)
    for dt in (np.float32, np.complex64):
        a = rng.normal(size=(5, 5)) + 5 * np.eye(5)
        if dt is np.complex64:
            a = a + 1j * rng.normal(size=(5, 5))
        a = a.astype(dt)
        if layout == "F":
            a = np.asfortranarray(a)
        elif layout == "strided":
            a = np.repeat(np.repeat(a, 2, 0), 2, 1)[::2, ::2]
        for b in (rng.normal(size=5), rng.normal(size=(5, 2))):
            b = b.astype(dt)
            got = np.asarray(sla.solve_triangular(a, b, trans=trans, lower=lower))
            want = np.linalg.solve(_op(a.astype(np.complex128), trans, lower, False), b)
            assert got.dtype == dt
            np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def test_solve_triangular_half_precision_solves_in_float32():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(8)
    a64 = np.tril(rng.normal(size=(4, 4))) + 4 * np.eye(4)
    b64 = rng.normal(size=(4, 2))
    for dt in (np.float16, ml_dtypes.bfloat16):
        a, b = a64.astype(dt), b64.astype(dt)
        got = sla.solve_triangular(a, b, lower=True)
        assert got.dtype == dt
        want = np.linalg.solve(np.tril(a.astype(np.float64)), b.astype(np.float64))
        np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=2e-2, atol=2e-2)


def test_solve_triangular_singular_upper_and_unit_diagonal():
    """A zero pivot gives the substitution's inf/NaN (XLA's solve is trsm too);
    with ``unit_diagonal`` the zero diagonal is never read. Oracle: substitution
    in a Python loop (IEEE division, float64)."""
    a = np.array([[2.0, 1.0, -1.0], [0.0, 0.0, 3.0], [0.0, 0.0, 4.0]])
    b = np.array([1.0, 2.0, 8.0])

    def back(t, b):
        x = np.zeros(3)
        with np.errstate(all="ignore"):
            for i in (2, 1, 0):
                x[i] = (b[i] - t[i, i + 1 :] @ x[i + 1 :]) / t[i, i]
        return x

    got = np.asarray(sla.solve_triangular(a.astype(np.float32), b.astype(np.float32)))
    np.testing.assert_array_equal(got, back(a, b).astype(np.float32))
    np.testing.assert_array_equal(got, [np.inf, -np.inf, 2.0])
    unit = a.copy()
    np.fill_diagonal(unit, 1.0)
    got = np.asarray(sla.solve_triangular(a.astype(np.float32), b, unit_diagonal=True))
    np.testing.assert_allclose(got, back(unit, b), rtol=1e-6)


def test_solve_triangular_over_trsm_guard_and_shared_batch():
    """A right-hand side over trsm's own one-thread guard (40 x 40), and one matrix
    broadcast along a batch (vmap over right-hand sides)."""
    rng = np.random.default_rng(9)
    a = (np.triu(rng.normal(size=(40, 40))) + 8 * np.eye(40)).astype(np.float32)
    b = rng.normal(size=(40, 40)).astype(np.float32)
    want = np.linalg.solve(np.triu(a.astype(np.float64)).T, b)
    np.testing.assert_allclose(sla.solve_triangular(a, b, trans=1), want, rtol=1e-4, atol=1e-5)
    ab = np.broadcast_to(a[:6, :6], (3, 6, 6))
    bb = rng.normal(size=(3, 6)).astype(np.float32)
    got = np.asarray(sla.solve_triangular(ab, bb))
    want = [np.linalg.solve(np.triu(a[:6, :6].astype(np.float64)), r) for r in bb]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
