"""``srcjax.random.binomial`` / ``multinomial``: JAX's algorithms, bit for bit.

The expected arrays were recorded from jax 0.10.2 (CPU, default partitionable
threefry) with the same calls; the moment tests compare sample means and
variances with the binomial's ``n p`` and ``n p (1 - p)`` within five standard
errors.
"""

import numpy as np
import pytest

import srcjax as jax
import srcjax.numpy as jnp
from srcjax import random

nan, inf = float("nan"), float("inf")
K0 = random.PRNGKey(0)


def _eq(got, want):
    got = np.asarray(got)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, np.asarray(want, np.float32))


def test_binomial_inversion_and_btrs_match_jax():
    # recorded from jax.random.binomial with the same keys and arguments
    _eq(
        random.binomial(K0, 10, 0.3, (12,)),
        [2.0, 2.0, 1.0, 2.0, 1.0, 4.0, 6.0, 3.0, 4.0, 1.0, 2.0, 2.0],
    )
    _eq(
        random.binomial(random.PRNGKey(7), 200, 0.4, (12,)),
        [88.0, 77.0, 72.0, 72.0, 71.0, 80.0, 83.0, 76.0, 72.0, 74.0, 71.0, 82.0],
    )
    # p >= 0.5 draws n - k with q = 1 - p; n broadcast against shape
    n = np.array([5.0, 40.0, 300.0], np.float32)
    _eq(random.binomial(random.PRNGKey(8), n, 0.85, (2, 3)), [[4, 32, 252], [5, 36, 269]])


def test_binomial_special_values_match_jax():
    n = np.array([0, 0, 5, 5, 5, -1, nan, inf, 5, 5, 3.7, 1e6, 30, 30], np.float32)
    p = np.array(
        [0.3, 1.0, 0.0, 1.0, 1.5, 0.3, 0.3, 0.3, nan, -0.2, 0.5, 0.5, 0.5, 0.99], np.float32
    )
    want = [0, 0, 0, 5, nan, nan, nan, inf, nan, nan, 2, 498570, 12, 30]
    _eq(random.binomial(random.PRNGKey(1), n, p), want)
    # JAX never returns for n = inf with p = 0 (its rejection loop cannot accept)
    _eq(random.binomial(K0, inf, 0.0, (2,)), [inf, inf])


def test_binomial_vmap_jit():
    keys = random.split(K0, 3)
    want = [[16, 14, 16, 10], [16, 14, 12, 15], [13, 12, 13, 16]]  # jax.vmap over keys
    _eq(jax.vmap(lambda k: random.binomial(k, 25.0, 0.5, (4,)))(keys), want)
    _eq(jax.jit(jax.vmap(lambda k: random.binomial(k, 25.0, 0.5, (4,))))(keys), want)
    # vmap over p with one key: jax gives each example its own rejection rounds
    got = jax.vmap(lambda p: random.binomial(K0, 30, p, (3,)))(jnp.array([0.1, 0.5, 0.9]))
    _eq(got, [[2, 1, 1], [19, 16, 19], [28, 29, 29]])
    _eq(
        jax.jit(lambda k: random.binomial(k, 10, 0.3, (12,)))(K0),
        random.binomial(K0, 10, 0.3, (12,)),
    )


@pytest.mark.parametrize("n,p", [(7.0, 0.2), (50.0, 0.3), (400.0, 0.75), (3.0, 0.95)])
def test_binomial_moments(n, p):
    m = 20000
    x = random.binomial(random.PRNGKey(11), n, p, (m,))
    assert np.all((x >= 0) & (x <= n) & (x == np.floor(x)))
    mean, var = n * p, n * p * (1 - p)
    assert abs(x.mean() - mean) < 5 * np.sqrt(var / m)
    # the sample variance's standard error: sqrt((mu4 - var^2) / m), mu4 <= 3 var^2 + var
    assert abs(x.var() - var) < 5 * np.sqrt((2 * var**2 + var) / m)


def test_binomial_dtypes_and_grad():
    x = random.binomial(K0, np.int32(10), np.float32(0.3), (3,))
    assert x.dtype == np.float32 and x.shape == (3,)
    assert random.binomial(K0, 10, 0.3).shape == ()
    assert random.binomial(K0, np.ones(3), 0.3).shape == (3,)
    # the values are piecewise constant in p: jax's gradient is 0.0
    g = jax.grad(lambda p: jnp.sum(random.binomial(K0, 10.0, p, (3,))))(0.3)
    assert g == 0.0


def test_binomial_errors():
    with pytest.raises(ValueError, match="float dtype"):
        random.binomial(K0, 10, 0.3, (2,), dtype=jnp.int32)
    with pytest.raises(TypeError):
        random.binomial(K0, [10], 0.3, (2,))
    with pytest.raises(ValueError):
        random.binomial(K0, np.ones(3), 0.3, (2,))
    with pytest.raises(ValueError):
        random.binomial(random.split(K0, 2), 10, 0.3)
    with pytest.raises(NotImplementedError):
        random.binomial(K0, 10, np.float16(0.3))


def test_multinomial_matches_jax():
    _eq(random.multinomial(K0, 10, jnp.array([0.2, 0.3, 0.5])), [1, 1, 8])
    n = np.array([5.0, 50.0], np.float32)
    p = np.array([[0.2, 0.8], [1.0, 3.0]], np.float32)  # unnormalized rows
    _eq(random.multinomial(random.PRNGKey(5), n, p), [[1, 4], [13, 37]])
    p = np.array([0.25, 0.0, 0.75], np.float32)
    got = random.multinomial(random.PRNGKey(6), 20, p, shape=(3, 3))
    _eq(got, [[5, 0, 15], [3, 0, 17], [6, 0, 14]])
    np.testing.assert_array_equal(got.sum(-1), [20, 20, 20])


def test_multinomial_vmap_jit():
    def f(k):
        return random.multinomial(k, 100.0, jnp.array([0.1, 0.6, 0.3]))

    want = [[11, 54, 35], [10, 62, 28]]  # jax.vmap over split(key, 2)
    _eq(jax.vmap(f)(random.split(K0, 2)), want)
    _eq(jax.jit(jax.vmap(f))(random.split(K0, 2)), want)
    _eq(jax.jit(f)(K0), f(K0))


def test_multinomial_moments():
    m = 4000
    p = np.array([0.1, 0.6, 0.3], np.float32)
    x = jax.vmap(lambda k: random.multinomial(k, 30.0, p))(random.split(random.PRNGKey(3), m))
    assert x.shape == (m, 3)
    np.testing.assert_array_equal(x.sum(-1), np.full(m, 30.0))
    var = 30 * p * (1 - p)
    assert np.all(np.abs(x.mean(0) - 30 * p) < 5 * np.sqrt(var / m))


def test_multinomial_errors():
    with pytest.raises(ValueError):
        random.multinomial(K0, 10, jnp.array([0.5, 0.5]), shape=(3,))
    with pytest.raises(ValueError):
        random.multinomial(K0, 10, 0.5)
    with pytest.raises(ValueError, match="float dtype"):
        random.multinomial(K0, 10, jnp.array([0.5, 0.5]), dtype=jnp.int32)
