"""jax_debug_nans / jax_debug_infs (srcjax/_debug_nans.py): user bug 05, the
flags were accepted and ignored. Errors and values recorded from JAX 0.10.2."""

import re
import warnings

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp


@pytest.fixture
def flags():
    def set_flags(nans=False, infs=False):
        srcjax.config.update("jax_debug_nans", nans)
        srcjax.config.update("jax_debug_infs", infs)

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            yield set_flags
    finally:
        set_flags()


def _log2(x):
    return jnp.log(x) * 2.0


def _masked_log(x):
    return jnp.where(x > 0, jnp.log(x), 0.0)


NAN_CASES = [
    # JAX 0.10.2: FloatingPointError: invalid value (nan) encountered in log
    ("eager", lambda: jnp.log(-1.0), "log"),
    ("jit", lambda: srcjax.jit(_log2)(-1.0), "log"),
    # (the gradient, -2, has no NaN: the forward pass's log made one)
    ("grad", lambda: srcjax.grad(_log2)(-1.0), "log"),
    ("vmap", lambda: srcjax.vmap(_log2)(jnp.array([1.0, -1.0])), "log"),
    # a NaN argument: JAX checks every primitive's output ("... in sin")
    ("nan operand", lambda: jnp.sin(jnp.nan), "sin"),
    ("nan argument to jit", lambda: srcjax.jit(jnp.sin)(np.float32("nan")), "jit(sin)"),
]


@pytest.mark.parametrize("what, thunk, where", NAN_CASES, ids=[c[0] for c in NAN_CASES])
def test_debug_nans_raises_floating_point_error(flags, what, thunk, where):
    flags(nans=True)
    with pytest.raises(
        FloatingPointError, match=re.escape(f"invalid value (nan) encountered in {where}")
    ):
        thunk()


def test_debug_nans_off_lets_nan_through(flags):
    assert np.isnan(srcjax.jit(_log2)(-1.0))
    np.testing.assert_allclose(srcjax.grad(_log2)(-1.0), -2.0)
    assert np.isnan(jnp.log(-1.0))


def test_debug_nans_values_without_nan_unchanged(flags):
    flags(nans=True)
    # JAX: 1.3862944, 0.0 (the jitted where's NaN is masked: only outputs are
    # checked), [0, 0.6931472], 1.0
    np.testing.assert_allclose(srcjax.jit(_log2)(2.0), 1.3862944, rtol=1e-6)
    np.testing.assert_allclose(srcjax.jit(_masked_log)(-1.0), 0.0)
    np.testing.assert_allclose(jnp.log(jnp.array([1, 2])), [0.0, 0.6931472], rtol=1e-6)
    np.testing.assert_allclose(srcjax.grad(_log2)(2.0), 1.0)
    np.testing.assert_allclose(srcjax.vmap(_log2)(jnp.array([1.0, 2.0])), [0.0, 1.3862944], 1e-6)


def test_debug_infs(flags):
    flags(infs=True)
    # JAX: invalid value (inf) encountered in log / exp
    with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in log"):
        jnp.log(0.0)
    with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in exp"):
        jnp.exp(100.0)
    with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in"):
        srcjax.jit(lambda x: 1.0 / x)(np.float32(0.0))
    # infs only: a NaN is no error
    assert np.isnan(jnp.log(-1.0))


def test_config_reads_back(flags):
    flags(nans=True)
    assert srcjax.config.jax_debug_nans is True and srcjax.config.read("jax_debug_infs") is False
