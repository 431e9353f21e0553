"""``jnp.logaddexp`` on float32 arrays (issue 17): the SIMD formulation
``max + log1p(exp(-|x - y|))`` (float64 inside) against float64 NumPy and
JAX-recorded values."""

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax import nn

F32 = np.float32
INF, NAN = np.inf, np.nan

# recorded with jax 0.10.2: jnp.logaddexp(jnp.array(X, float32), jnp.array(Y, float32))
X = [INF, -INF, INF, -INF, NAN, 1.0, INF, -INF, 3e38, -3e38, 3e38, -3e38, 0.0, 1e-45, 88.0,
     -100.0, 1000.0, -1000.0, 20.0, 0.0]  # fmt: skip
Y = [INF, -INF, -INF, INF, 1.0, NAN, NAN, NAN, -3e38, 3e38, 3e38, -3e38, -0.0, 1e-45, 88.0,
     -100.0, 1001.0, 5.0, -20.0, -104.0]  # fmt: skip
JAX = [INF, -INF, INF, INF, NAN, NAN, NAN, NAN, 3.0000000054977558e38, 3.0000000054977558e38,
       3.0000000054977558e38, -3.0000000054977558e38, 0.6931471824645996, 0.6931471824645996,
       88.69314575195312, -99.30685424804688, 1001.313232421875, 5.0, 20.0, 0.0]  # fmt: skip
# jax.nn.softplus / jax.nn.log_sigmoid of S (float32)
S = [-104.0, -20.0, -1.0, 0.0, 1.0, 20.0, INF, -INF]
SOFTPLUS = [0.0, 2.06115369216775e-09, 0.3132616877555847, 0.6931471824645996,
            1.3132617473602295, 20.0, INF, 0.0]  # fmt: skip
LOG_SIGMOID = [-104.0, -20.0, -1.3132617473602295, -0.6931471824645996,
               -0.3132616877555847, -2.06115369216775e-09, -0.0, -INF]  # fmt: skip


def _tile(v, n=100):  # 100 elements: the SIMD path (small arrays keep np.logaddexp)
    return np.repeat(np.asarray(v, F32), n)


def test_special_values_match_jax_and_warn_nothing():
    with np.errstate(invalid="raise", over="raise", divide="raise"):  # as debug_nans/infs
        got = np.asarray(jnp.logaddexp(_tile(X[:4] + X[8:]), _tile(Y[:4] + Y[8:])))
    np.testing.assert_array_equal(got, _tile(JAX[:4] + JAX[8:]))
    got = np.asarray(jnp.logaddexp(_tile(X), _tile(Y)))
    assert got.dtype == F32
    np.testing.assert_array_equal(got, _tile(JAX))
    # small arrays (np.logaddexp) agree on them too
    with np.errstate(all="ignore"):  # NumPy's loop warns at 3e38 and on a NaN
        small = jnp.logaddexp(np.asarray(X, F32), np.asarray(Y, F32))
    np.testing.assert_array_equal(np.asarray(small), np.asarray(JAX, F32))


def test_softplus_log_sigmoid_match_jax():
    # JAX's softplus(1) is 1 ulp above the correctly rounded value these give
    s64 = np.asarray(S, np.float64)
    for fn, jax_vals, ref in (
        (nn.softplus, SOFTPLUS, np.logaddexp(s64, 0)),
        (nn.log_sigmoid, LOG_SIGMOID, -np.logaddexp(0, -s64)),
    ):
        got = np.asarray(fn(_tile(S)))
        assert got.dtype == F32
        np.testing.assert_allclose(got, _tile(jax_vals), rtol=1.2e-7, atol=0)
        np.testing.assert_array_equal(got, _tile(ref.astype(F32)))


def _pairs(n=10**6, seed=0):
    rng = np.random.default_rng(seed)
    k = n // 4
    scale = rng.choice([1e-3, 1.0, 10.0, 100.0], k)
    a = (rng.standard_normal(k) * scale).astype(F32)
    b = (a + rng.standard_normal(k) * rng.choice([1e-3, 1.0, 10.0], k)).astype(F32)
    c = (rng.standard_normal(k) * 5).astype(F32)
    d = (rng.standard_normal(k) * 5).astype(F32)
    wide = np.sign(rng.standard_normal((2, 2 * k))) * 10.0 ** rng.uniform(-30, 38, (2, 2 * k))
    e, f = wide.astype(F32)
    return np.concatenate([a, c, e]), np.concatenate([b, d, f])


def test_accuracy_against_float64():
    """Correctly rounded (NumPy's float32 loop is off by one ulp in ~4% of these,
    also where the result cancels to near 0)."""
    x, y = _pairs()
    got = np.asarray(jnp.logaddexp(x, y))
    assert got.dtype == F32
    ref = np.logaddexp(x.astype(np.float64), y.astype(np.float64))
    ulps = np.abs(got - ref) / np.spacing(np.abs(ref).astype(F32))
    assert ulps.max() <= 0.5001, ulps.max()


def test_weak_scalar_operand_and_derivative_unchanged():
    z = np.linspace(-30, 30, 200, dtype=F32)
    got = jnp.logaddexp(0.0, z)
    assert got.dtype == F32
    np.testing.assert_allclose(
        np.asarray(got), np.logaddexp(0.0, z.astype(np.float64)), rtol=2e-7, atol=1e-37
    )
    g = srcjax.grad(lambda v: jnp.sum(jnp.logaddexp(0.0, v)))(z)
    np.testing.assert_allclose(np.asarray(g), 1 / (1 + np.exp(-z.astype(np.float64))), rtol=2e-6)


def test_a_finite_scalar_operand_is_correctly_rounded_and_warns_nothing():
    # the scalar form (no fmin, no errstate: a finite scalar meets no equal
    # infinities), on both sides, with the special values of the other operand
    x, _ = _pairs(4 * 10**5, seed=1)
    z = np.concatenate([x, np.asarray([NAN, INF, -INF, 0.0, -0.0, 1e-45, 3.4e38, -3.4e38], F32)])
    for c in (0.0, 1.0, -2.5, 3e37):
        with np.errstate(invalid="raise", over="raise", divide="raise"):
            left, right = np.asarray(jnp.logaddexp(c, z)), np.asarray(jnp.logaddexp(z, c))
        assert left.dtype == right.dtype == F32
        np.testing.assert_array_equal(left, right)
        with np.errstate(invalid="ignore"):  # (NumPy's own loop warns on the NaN)
            ref = np.logaddexp(np.float64(F32(c)), z.astype(np.float64))
        finite = np.isfinite(ref)
        np.testing.assert_array_equal(np.isnan(left), np.isnan(ref))
        np.testing.assert_array_equal(left[~finite & ~np.isnan(ref)], ref[~finite & ~np.isnan(ref)])
        ulps = np.abs(left[finite] - ref[finite]) / np.spacing(np.abs(ref[finite]).astype(F32))
        assert ulps.max() <= 0.5001, (c, ulps.max())
