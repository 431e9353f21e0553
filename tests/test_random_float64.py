"""float64 samplers built on XLA:CPU's float64 ``log``/``log1p`` (with
``jax_enable_x64``): exponential, gumbel, laplace, logistic, categorical and
choice with float64 probabilities, bit for bit with JAX 0.10.2 (recorded in
tests/data/random_float64_jax.npz; SRCJAX_RECORD_JAX=1 records again). They
raised NotImplementedError (session 11). XLA's float64 ``log`` is the C
library's (``math.log``), which NumPy's SIMD ``log`` is not on about 0.3% of the
arguments; its ``log1p`` is the Cephes rational with fused Horner steps."""

import math
import os

import numpy as np
import pytest
from helpers import jax_recorded

import srcjax
import srcjax.numpy as jnp
from srcjax import random
from srcjax.random import _threefry as tf

pytestmark = pytest.mark.usefixtures("x64")

PATH = os.path.join(os.path.dirname(__file__), "data", "random_float64_jax.npz")
N = 2000
SAMPLERS = ("exponential", "gumbel", "laplace", "logistic")
P = [0.1, 0.2, 0.3, 0.05, 0.35]


def _record():
    import jax

    jax.config.update("jax_enable_x64", True)
    import jax.numpy as jjnp

    out = {}
    k = jax.random.key(7)
    ks = jax.random.split(k, 3)
    p = jjnp.array(P)
    for seed in (0, 42):
        for name in SAMPLERS:
            out[f"{name}_{seed}"] = np.asarray(
                getattr(jax.random, name)(jax.random.key(seed), (N,), jjnp.float64)
            )
    for name in SAMPLERS:
        fn = getattr(jax.random, name)
        out[f"{name}_scalar"] = np.asarray(fn(k, (), jjnp.float64))
        out[f"{name}_2x5"] = np.asarray(fn(k, (2, 5), jjnp.float64))
        out[f"{name}_vmap"] = np.asarray(jax.vmap(lambda kk, fn=fn: fn(kk, (4,), jjnp.float64))(ks))
        out[f"{name}_default"] = np.asarray(fn(k, (6,)))
    logits = jjnp.log(jjnp.stack([p, p[::-1]]))
    out["categorical"] = np.asarray(jax.random.categorical(k, logits, axis=-1, shape=(3, 2)))
    out["categorical_many"] = np.asarray(
        jax.random.categorical(k, jjnp.linspace(-2, 2, 7), shape=(N,))
    )
    out["categorical_nr"] = np.asarray(
        jax.random.categorical(k, jjnp.linspace(-2, 2, 7), shape=(4,), replace=False)
    )
    out["choice_nr"] = np.asarray(jax.random.choice(k, 5, shape=(3,), replace=False, p=p))
    out["choice_r"] = np.asarray(jax.random.choice(k, 5, shape=(8,), replace=True, p=p))
    jax.config.update("jax_enable_x64", False)
    return out


def _same(got, want):
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got.reshape(-1).view(np.uint8), want.reshape(-1).view(np.uint8))


@pytest.fixture(scope="module")
def want():
    return jax_recorded(PATH, _record)


@pytest.mark.parametrize("name", SAMPLERS)
def test_float64_samplers_are_jaxs_bit_for_bit(name, want):
    fn = getattr(random, name)
    k = random.key(7)
    for seed in (0, 42):
        _same(fn(random.key(seed), (N,), jnp.float64), want[f"{name}_{seed}"])
    _same(fn(k, (), jnp.float64), want[f"{name}_scalar"])
    _same(fn(k, (2, 5), jnp.float64), want[f"{name}_2x5"])
    _same(fn(k, (6,)), want[f"{name}_default"])  # float64 is the default with x64
    _same(
        srcjax.vmap(lambda kk: fn(kk, (4,), jnp.float64))(random.split(k, 3)), want[f"{name}_vmap"]
    )
    _same(srcjax.jit(lambda kk: fn(kk, (2, 5), jnp.float64))(k), want[f"{name}_2x5"])


def test_float64_categorical_and_choice_are_jaxs(want):
    k = random.key(7)
    p = jnp.array(P)
    logits = jnp.log(jnp.stack([p, p[::-1]]))
    _same(random.categorical(k, logits, axis=-1, shape=(3, 2)), want["categorical"])
    _same(random.categorical(k, jnp.linspace(-2, 2, 7), shape=(N,)), want["categorical_many"])
    _same(
        random.categorical(k, jnp.linspace(-2, 2, 7), shape=(4,), replace=False),
        want["categorical_nr"],
    )
    _same(random.choice(k, 5, shape=(3,), replace=False, p=p), want["choice_nr"])
    _same(random.choice(k, 5, shape=(8,), replace=True, p=p), want["choice_r"])


def test_log64_is_the_c_librarys_log_and_log1p64_the_cephes_rational():
    """The kernels by themselves: log64 is math.log (special values too);
    log1p64 is within 3e-14 of math.log1p (XLA's rational loses a few digits
    near |t| = sqrt(2) - 1, where it hands over to log(1 + t); the samplers above
    check its bits)."""
    x = np.random.RandomState(0).rand(3000) * 4
    np.testing.assert_array_equal(tf.log64(x), [math.log(v) for v in x])
    np.testing.assert_array_equal(
        tf.log64(np.array([0.0, -1.0, np.inf, np.nan])), [-np.inf, np.nan, np.inf, np.nan]
    )
    t = np.random.RandomState(1).rand(3000) * 1.6 - 0.8
    np.testing.assert_allclose(tf.log1p64(t), [math.log1p(v) for v in t], rtol=3e-14)
