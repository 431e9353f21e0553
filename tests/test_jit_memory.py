"""What a jitted function keeps alive: dead loop values released after their loop
(transforms/optimize/release.py) and ``a - c*b`` with a float scalar ``c`` computed
as ``(-c)*b + a`` (transforms/optimize/algebra.py), so NumPy adds into the
product's temporary. Oracles: the same NumPy expressions (bit for bit), and
tracemalloc's peak against the bytes the result itself needs."""

import tracemalloc

import numpy as np

import srcjax
import srcjax.numpy as jnp

RATE = 0.01


def _peak(call):
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = call()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return out, peak


def _sgd(w, g):
    return w - RATE * g


def _sgd_const(w, g):
    return w - 0.5 * g


def _sgd_list(params, grads):
    return [p - RATE * q for p, q in zip(params, grads)]


def test_scaled_update_is_bit_exact_and_needs_one_buffer():
    rng = np.random.default_rng(0)
    w = rng.standard_normal(1 << 18).astype(np.float32)  # 1 MiB: NumPy elides from 256 KiB
    g = rng.standard_normal(1 << 18).astype(np.float32)
    # signed zeros, infinities and NaN where the order of operations could show
    w[:6] = [-0.0, 0.0, np.inf, -np.inf, 1.0, np.nan]
    g[:6] = [0.0, -0.0, np.inf, 1.0, np.inf, 2.0]
    for fn, c in ((_sgd, RATE), (_sgd_const, 0.5)):
        f = srcjax.jit(fn)
        with np.errstate(invalid="ignore"):
            want = w - c * g
            got = f(w, g)
        assert got.dtype == want.dtype == np.float32
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
        with np.errstate(invalid="ignore"):
            _, peak = _peak(lambda f=f: f(w, g))
        assert peak < 1.25 * w.nbytes, peak  # the result alone, no second buffer
        assert "+" in srcjax.source(f, w, g)


def test_scaled_update_over_list_leaves_of_unknown_shape():
    # R1's SGD step: the leaves' shapes are unknown to jit inside the loop
    rng = np.random.default_rng(1)
    params = [rng.standard_normal((512, 256)).astype(np.float32), np.ones(7, np.float32)]
    grads = [rng.standard_normal((512, 256)).astype(np.float32), np.arange(7, dtype=np.float32)]
    f = srcjax.jit(_sgd_list)
    got = f(params, grads)
    for a, p, q in zip(got, params, grads):
        assert np.array_equal(a, p - RATE * q) and a.dtype == np.float32
    _, peak = _peak(lambda: f(params, grads))
    assert peak < 1.25 * params[0].nbytes, peak


def _int_grads(w, g):
    return w - 2.0 * g


def _int_scale(w, g):
    return w - 3 * g


def test_scaled_update_keeps_numpy_promotion():
    w = np.arange(6, dtype=np.float32)
    g = np.arange(6, dtype=np.uint8)
    got = srcjax.jit(_int_grads)(w, g)
    want = jnp.asarray(w) - 2.0 * jnp.asarray(g)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    # an int scale is left as written (-3 * uint8 would be NumPy's OverflowError)
    got = srcjax.jit(_int_scale)(np.arange(6, dtype=np.uint8), g)
    assert got.dtype == np.uint8 and np.array_equal(got, np.arange(6, dtype=np.uint8) - 3 * g)


def _loop(x, n):
    acc = jnp.zeros_like(x)
    for i in range(n):
        big = x * (i + 1.0)
        tmp = big * 2.0
        acc = acc + tmp
    kept = big
    return acc + kept


def test_loop_values_are_released_after_the_loop_unless_read():
    x = np.linspace(0.0, 1.0, 5, dtype=np.float32)
    f = srcjax.jit(_loop, static_argnums=1)
    got = f(x, 3)
    want = 2.0 * (x * 1.0 + x * 2.0 + x * 3.0) + x * 3.0
    assert np.allclose(got, want, rtol=1e-6)
    text = srcjax.source(f, x, 3)
    released = [line.split("=")[0].strip() for line in text.splitlines() if "released" in line]
    # an array not read after the loop is released; one read after it, the
    # result, and the range counter (a scalar: not worth a line) are not
    assert "tmp" in released
    assert "big" not in released and "acc" not in released and "i" not in released
