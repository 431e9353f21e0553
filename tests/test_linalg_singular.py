"""Singular and non-positive-definite matrices give JAX's values, not errors
(fresh user 8, r_misc1.py): ``jnp.linalg.solve``/``inv`` of a singular matrix
raised NumPy's LinAlgError where JAX returns inf/NaN (a training loop would
crash), and the Cholesky factor of a matrix that is not positive definite was
all NaN where JAX has NaN on and below the diagonal and zeros above.

Every expected value below was recorded from JAX 0.10.2 (CPU), eagerly, under
jit and under grad where shown (/tmp script j3.py of fix8b)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
import srcjax.scipy.linalg as sl

inf, nan = np.inf, np.nan
_A = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
_b = np.array([1.0, 1.0], np.float32)
_Z = np.zeros((2, 2), np.float32)
_NONPD = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)

_CASES = {
    "solve": (lambda: jnp.linalg.solve(_A, _b), [-inf, inf]),
    "solve_jit": (lambda: srcjax.jit(jnp.linalg.solve)(_A, _b), [-inf, inf]),
    "solve_matrix_rhs": (
        lambda: jnp.linalg.solve(_A, np.eye(2, dtype=np.float32)),
        [[-inf, inf], [inf, -inf]],
    ),
    "solve_zero": (lambda: jnp.linalg.solve(_Z, _b), [nan, inf]),
    "inv": (lambda: jnp.linalg.inv(_A), [[-inf, inf], [inf, -inf]]),
    "inv_jit": (lambda: srcjax.jit(jnp.linalg.inv)(_A), [[-inf, inf], [inf, -inf]]),
    "inv_zero": (lambda: jnp.linalg.inv(_Z), [[nan, nan], [nan, inf]]),
    "grad_solve": (
        lambda: srcjax.grad(lambda a: jnp.linalg.solve(a, _b).sum())(_A),
        [[-inf, inf], [inf, -inf]],
    ),
    "grad_inv": (
        lambda: srcjax.grad(lambda a: jnp.linalg.inv(a).sum())(_A),
        [[nan, nan], [nan, nan]],
    ),
    "cholesky": (lambda: jnp.linalg.cholesky(_NONPD), [[nan, 0.0], [nan, nan]]),
    "cholesky_jit": (lambda: srcjax.jit(jnp.linalg.cholesky)(_NONPD), [[nan, 0.0], [nan, nan]]),
    "cholesky_3x3": (
        lambda: jnp.linalg.cholesky(
            np.array([[4.0, 2.0, 0.0], [2.0, -3.0, 1.0], [0.0, 1.0, 2.0]], np.float32)
        ),
        [[nan, 0.0, 0.0], [nan, nan, 0.0], [nan, nan, nan]],
    ),
    "cholesky_batch": (
        lambda: jnp.linalg.cholesky(np.stack([np.eye(2, dtype=np.float32), _NONPD])),
        [[[1.0, 0.0], [0.0, 1.0]], [[nan, 0.0], [nan, nan]]],
    ),
    "scipy_cholesky_upper": (lambda: sl.cholesky(_NONPD, lower=False), [[nan, nan], [0.0, nan]]),
    "cho_factor": (lambda: sl.cho_factor(_NONPD)[0], [[nan, nan], [0.0, nan]]),
}


@pytest.mark.parametrize("name", sorted(_CASES))
def test_singular_values_as_jax(name):
    call, want = _CASES[name]
    got = call()
    assert isinstance(got, srcjax.Array)
    np.testing.assert_array_equal(np.asarray(got), np.array(want, np.float32))


def test_regular_solve_unchanged():
    a = np.array([[2.0, 1.0], [1.0, 3.0]], np.float32)
    np.testing.assert_allclose(
        np.asarray(jnp.linalg.solve(a, _b)), np.linalg.solve(a, _b), rtol=1e-6
    )
    np.testing.assert_allclose(np.asarray(jnp.linalg.inv(a)), np.linalg.inv(a), rtol=1e-6)
