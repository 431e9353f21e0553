"""srcjax.scipy.optimize.minimize (BFGS) against JAX 0.10.2's results on
Rosenbrock functions and a quadratic (values recorded from
jax.scipy.optimize.minimize on CPU, float32 unless noted), and against the
closed-form minimum of the quadratic."""

from __future__ import annotations

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.config import config
from srcjax.errors import NoDerivativeRuleError
from srcjax.scipy.optimize import OptimizeResults, minimize

A = np.array([[3.0, 1.0, 0.5], [1.0, 2.0, 0.0], [0.5, 0.0, 1.5]], np.float32)
B = np.array([1.0, -2.0, 0.5], np.float32)


def rosen(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


def quad(x, a, b):
    return 0.5 * x @ a @ x - b @ x


def _check(r, want, rtol=1e-4, atol=1e-5):
    assert isinstance(r, OptimizeResults)
    assert r.x.dtype == np.float32 and r.fun.dtype == np.float32
    assert r.nit.dtype == np.int32 and r.status.dtype == np.int32 and r.success.dtype == bool
    for k in ("success", "status", "nfev", "njev", "nit"):
        assert int(getattr(r, k)) == want[k], (k, getattr(r, k), want[k])
    np.testing.assert_allclose(r.x, want["x"], rtol=rtol, atol=atol)
    np.testing.assert_allclose(r.fun, want["fun"], rtol=rtol, atol=atol)
    np.testing.assert_allclose(r.jac, want["jac"], rtol=rtol, atol=atol * 100)


def test_quadratic_matches_jax_and_closed_form():
    r = minimize(quad, np.zeros(3, np.float32), (A, B), method="BFGS")
    # recorded from JAX 0.10.2
    want = dict(
        x=[0.785714328289032, -1.3928571939468384, 0.071428582072258],
        success=True, status=0, fun=-1.8035715818405151,
        jac=[0.0, 0.0, 5.960464477539063e-08], nfev=9, njev=9, nit=7,
    )  # fmt: skip
    _check(r, want, atol=1e-6)
    x_star = np.linalg.solve(A.astype(np.float64), B.astype(np.float64))
    np.testing.assert_allclose(r.x, x_star, rtol=1e-5, atol=1e-6)
    # BFGS on a quadratic: the inverse Hessian estimate approaches A^-1 (JAX's
    # own estimate is as far from it; the last, tiny steps round differently)
    np.testing.assert_allclose(r.hess_inv, np.linalg.inv(A), atol=5e-3)
    want_h = [
        [0.42874088883399963, -0.2145039290189743, -0.14317075908184052],
        [-0.2145039588212967, 0.6074376106262207, 0.07163021713495255],
        [-0.14317075908184052, 0.07163020968437195, 0.7173570990562439],
    ]  # JAX 0.10.2
    np.testing.assert_allclose(r.hess_inv, want_h, atol=5e-3)


def test_rosenbrock_matches_jax():
    # JAX's line search stops Rosenbrock from (-1.2, 1) after 8 iterations with
    # status 3 (zoom failed); srcjax follows it step for step
    r = minimize(rosen, np.array([-1.2, 1.0], np.float32), method="BFGS")
    want = dict(
        x=[-0.2778100073337555, 0.04334153234958649], success=False, status=3,
        fun=1.7472916841506958, jac=[-6.315708160400391, -6.767373561859131],
        nfev=17, njev=17, nit=8,
    )  # fmt: skip
    _check(r, want)
    np.testing.assert_allclose(
        r.hess_inv,
        [[0.06770072132349014, -0.050392720848321915], [-0.05039273574948311, 0.04021638259291649]],
        rtol=1e-4,
    )
    r = minimize(rosen, np.array([1.3, 0.7, 0.8, 1.9], np.float32), method="BFGS")
    want = dict(
        x=[1.0262782573699951, 1.0694106817245483, 1.0724414587020874, 0.9779209494590759],
        success=False, status=3, fun=3.5094118118286133,
        jac=[-6.5827789306640625, 33.827392578125, 59.779258728027344, -34.44193649291992],
        nfev=14, njev=14, nit=7,
    )  # fmt: skip
    _check(r, want, rtol=2e-4, atol=2e-5)


def test_rosenbrock_converges_from_another_start():
    r = minimize(rosen, np.array([0.5, 0.5], np.float32), method="bfgs")
    assert bool(r.success) and int(r.status) == 0
    np.testing.assert_allclose(r.x, [1.0, 1.0], atol=1e-6)  # JAX: [0.99999994, 0.9999999]
    assert np.linalg.norm(r.jac, np.inf) < 1e-5


def test_options():
    r = minimize(rosen, np.array([-1.2, 1.0], np.float32), method="BFGS", options={"maxiter": 5})
    want = dict(
        x=[-0.5093246102333069, 0.24283823370933533], success=False, status=1,
        fun=2.305528163909912, jac=[-6.395130157470703, -3.314664840698242],
        nfev=12, njev=12, nit=5,
    )  # fmt: skip
    _check(r, want)
    r = minimize(quad, np.zeros(3, np.float32), (A, B), method="BFGS", options={"gtol": 1e-2})
    assert bool(r.success) and np.linalg.norm(r.jac, np.inf) < 1e-2


def test_float64_with_x64():
    old = config.jax_enable_x64
    config.update("jax_enable_x64", True)
    try:
        r = minimize(rosen, np.array([-1.2, 1.0]), method="BFGS")
    finally:
        config.update("jax_enable_x64", old)
    # recorded from JAX 0.10.2 with jax_enable_x64
    assert r.x.dtype == np.float64 and r.nit.dtype == np.int64
    assert (int(r.nit), int(r.nfev), int(r.status)) == (8, 17, 3)
    np.testing.assert_allclose(r.x, [-0.2778069614751315, 0.043338775200157394], rtol=1e-9)
    np.testing.assert_allclose(r.fun, 1.7472911993555371, rtol=1e-12)


def test_errors():
    x0 = np.zeros(2, np.float32)
    with pytest.raises(ValueError, match="Method Nelder-Mead not recognized"):
        minimize(rosen, x0, method="Nelder-Mead")
    with pytest.raises(TypeError, match="must be a tuple"):
        minimize(rosen, x0, [1], method="BFGS")
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        minimize(rosen, x0, method="BFGS", options={"foo": 1})
    with pytest.raises(TypeError):
        minimize(rosen, x0)  # method is required, as in JAX
    with pytest.raises(ValueError, match="1-D"):
        minimize(rosen, np.zeros((2, 2), np.float32), method="BFGS")
    with pytest.raises(NotImplementedError, match="L-BFGS"):
        minimize(rosen, x0, method="l-bfgs-experimental-do-not-rely-on-this")


def solve_x(x0):
    return minimize(rosen, x0, method="BFGS").x


def solve_nit(x0):
    return minimize(rosen, x0, method="BFGS").nit


def loss_of_solution(x0):
    return jnp.sum(minimize(rosen, x0, method="BFGS").x)


def test_jit_vmap_grad():
    x0s = np.array([[-1.2, 1.0], [0.5, 0.5]], np.float32)
    got = srcjax.vmap(solve_x)(x0s)
    # recorded from JAX 0.10.2: vmap of minimize
    np.testing.assert_allclose(got, [[-0.27781, 0.043341532], [0.99999994, 0.9999999]], atol=2e-6)
    assert int(srcjax.jit(solve_nit)(x0s[0])) == 8  # JAX: 8
    np.testing.assert_array_equal(srcjax.jit(solve_x)(x0s[1]), solve_x(x0s[1]))
    with pytest.raises(NoDerivativeRuleError, match="no derivative"):
        srcjax.grad(loss_of_solution)(x0s[1])
