"""jit makes a number that meets float arrays' arithmetic twice or more a 0-d
array of their dtype, once per call (transforms/optimize/const_operands.py).
Oracle: the same function without jit, bit for bit, and float64 NumPy."""

import numpy as np

import srcjax
import srcjax.numpy as jnp


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def adam_like(m, v, g, w):
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * g * g
    b = 0.9 * w + 1
    return w - 0.001 * m / (jnp.sqrt(v) + 1e-8), m, v, b - 1


def _data(dtype):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(7).astype(dtype) for _ in range(4)]


def test_numbers_met_twice_are_0d_arrays_and_the_values_are_unchanged():
    args = _data(np.float32)
    args[1] = np.abs(args[1])
    f = srcjax.jit(adam_like)
    text = srcjax.source(f, *args)
    assert "ad.const_array(0.9, 'float32')" in text
    assert "ad.const_array(1, 'float32')" in text  # (b + 1 and b - 1)
    assert "ad.const_array(0.1," not in text  # (met once: left as written)
    for got, want in zip(f(*args), adam_like(*args)):
        _same(got, want)
    m, v, g, w = (a.astype(np.float64) for a in args)
    np.testing.assert_allclose(np.asarray(f(*args)[1]), 0.9 * m + 0.1 * g, rtol=1e-6)


def test_float64_arrays_take_float64_arrays():
    args = _data(np.float64)
    args[1] = np.abs(args[1])
    srcjax.config.update("jax_enable_x64", True)
    try:
        f = srcjax.jit(adam_like)
        assert "ad.const_array(0.9, 'float64')" in srcjax.source(f, *args)
        for got, want in zip(f(*args), adam_like(*args)):
            _same(got, want)
    finally:
        srcjax.config.update("jax_enable_x64", False)


def test_scalars_and_numbers_beyond_float32_are_left_as_written():
    def f(s, x):
        return s * 2.0 + s * 2.0 * x, x * 1e300 + x * 1e300

    x = np.ones(3, np.float32)
    s = np.float32(1.5)
    jf = srcjax.jit(f)
    with np.errstate(over="ignore"):  # (x * 1e300 is inf in float32, as in NumPy)
        assert "const_array" not in srcjax.source(jf, s, x)
        for got, want in zip(jf(s, x), f(s, x)):
            _same(got, want)
