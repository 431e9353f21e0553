"""srcjax.scipy.special (srcjax/primitives/special.py) against JAX."""

import numpy as np

import srcjax
import srcjax.scipy.special as SS


def test_digamma_is_nan_at_its_poles():
    """User B (lower priority): digamma(0) was -inf (SciPy), JAX 0.10.2 gives NaN
    there, at -0.0 and at the negative integers; elsewhere SciPy's values
    (digamma(1) = -euler_gamma, digamma(-2.5) = 1.10315664...)."""
    x = np.array([0.0, -0.0, -1.0, -2.0, -2.5, 1.0], np.float32)
    got = SS.digamma(x)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.isnan(got), [True, True, True, True, False, False])
    np.testing.assert_allclose(got[4:], [1.1031566, -0.5772157], rtol=1e-6)
    assert np.isnan(SS.digamma(0.0))
    assert np.isnan(srcjax.jit(SS.digamma)(np.float32(0.0)))
    np.testing.assert_array_equal(np.isnan(srcjax.vmap(SS.digamma)(x)), np.isnan(got))


def test_gammaln_of_minus_infinity_is_plus_infinity_as_jax():
    # jax.scipy.special.gammaln / lax.lgamma (0.10.2) give +inf at -inf (log|gamma| grows
    # without bound; C's lgamma agrees); SciPy's gammaln gives -inf. Values recorded from JAX.
    x = np.array([-np.inf, -1.0, 0.0, np.inf, np.nan], np.float32)
    want = np.array([np.inf, np.inf, np.inf, np.inf, np.nan], np.float32)
    for f in (SS.gammaln, srcjax.jit(SS.gammaln), srcjax.lax.lgamma):
        got = np.asarray(f(x))
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.float32


def test_erfinv_keeps_the_sign_of_zero_as_jax():
    # jax.scipy.special.erfinv(-0.0) is -0.0 (recorded from jax 0.10.2); SciPy's gives +0.0.
    got = np.asarray(SS.erfinv(np.array([-0.0, 0.0], np.float32)))
    assert np.signbit(got).tolist() == [True, False]
