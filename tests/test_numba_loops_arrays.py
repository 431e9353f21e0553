"""Jitted loops over small fixed-shape arrays compiled with Numba
(backends/numba_cpu/kernel.py scalarizes them; loops.py runs the kernel).

Oracles: the same loop in plain NumPy on float32 (or int32) arrays: +, -, *, /
round the same way element by element whether NumPy or the kernel computes
them, so those results must be equal bit for bit; a float64 loop shows that no
float64 crept in. Transcendentals (Numba's sinf vs NumPy's SIMD sin) and sums
(C order vs NumPy's pairwise order) are compared to a few ulps.
"""

import numpy as np
import pytest

pytest.importorskip("numba")

from test_numba_loops import numba_loops  # noqa: E402, F401 - the option on, per test

import srcjax  # noqa: E402
import srcjax.numpy as jnp  # noqa: E402
from srcjax import lax  # noqa: E402
from srcjax.backends.numba_cpu import loops  # noqa: E402


def _pendulum(x, v):
    # fresh-user bug_36: 100-250x slower than JAX while this loop ran in NumPy
    def body(i, c):
        x, v = c
        a = -jnp.sin(x) - 0.1 * v
        v = v + 0.01 * a
        x = x + 0.01 * v
        return x, v

    return lax.fori_loop(0, 1000, body, (x, v))


def test_pendulum_over_float32_vectors_is_compiled():
    x0 = np.linspace(0.5, 2.0, 4).astype(np.float32)
    v0 = np.zeros(4, np.float32)
    f = srcjax.jit(_pendulum)
    x, v = f(x0, v0)
    assert "Numba region nbloop_" in srcjax.source(f, x0, v0)
    wx, wv = x0.copy(), v0.copy()
    for _ in range(1000):
        a = -np.sin(wx) - np.float32(0.1) * wv
        wv = wv + np.float32(0.01) * a
        wx = wx + np.float32(0.01) * wv
    assert x.dtype == np.float32 and v.dtype == np.float32 and x.shape == (4,)
    np.testing.assert_allclose(x, wx, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(v, wv, rtol=2e-5, atol=1e-6)


def _leapfrog(q, p, k):
    def body(i, c):
        q, p = c
        p = p - 0.005 * k * q
        q = q + 0.01 * p
        p = p - 0.005 * k * q
        return q, p

    return lax.fori_loop(0, 3000, body, (q, p))


def test_leapfrog_float32_is_bitwise_numpys_and_not_float64():
    q0 = np.array([[1.0, 0.5, -0.25], [0.1, 2.0, 3.0]], np.float32)
    p0 = np.zeros((2, 3), np.float32)
    k = np.float32(1.7)
    f = srcjax.jit(_leapfrog)
    q, p = f(q0, p0, k)
    assert "Numba region nbloop_" in srcjax.source(f, q0, p0, k)
    wq, wp = q0.copy(), p0.copy()
    h, d = np.float32(0.005), np.float32(0.01)
    for _ in range(3000):
        wp = wp - h * k * wq
        wq = wq + d * wp
        wp = wp - h * k * wq
    q64, p64 = q0.astype(np.float64), p0.astype(np.float64)
    for _ in range(3000):
        p64 = p64 - 0.005 * 1.7 * q64
        q64 = q64 + 0.01 * p64
        p64 = p64 - 0.005 * 1.7 * q64
    assert q.dtype == np.float32 and p.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(q), wq)
    np.testing.assert_array_equal(np.asarray(p), wp)
    assert np.abs(np.asarray(q) - q64).max() > 0  # float64 arithmetic gives other numbers


def _newton(a):
    def body(c):
        x, k = c
        return x - (x * x - a) / (2 * x), k + 1

    def cond(c):
        return (jnp.max(jnp.abs(c[0] * c[0] - a)) > 1e-6) & (c[1] < 100)

    return lax.while_loop(cond, body, (a, 0))


def test_while_loop_with_a_max_reduction_and_a_counter():
    a = np.arange(1.0, 9.0, dtype=np.float32)
    f = srcjax.jit(_newton)
    x, k = f(a)
    assert "Numba region nbloop_" in srcjax.source(f, a)
    wx, wk = a.copy(), 0
    while np.max(np.abs(wx * wx - a)) > np.float32(1e-6) and wk < 100:
        wx = wx - (wx * wx - a) / (np.float32(2) * wx)
        wk += 1
    assert x.dtype == np.float32 and int(k) == wk
    np.testing.assert_array_equal(np.asarray(x), wx)


def _broadcast(m, s):
    def body(i, c):
        m, s = c
        s = s + m[1, 2] - jnp.max(m[0])
        m = m * 0.5 + s
        m = jnp.where(m > 1.0, m - m[0], jnp.minimum(m, 0.75))
        return m, s

    return lax.fori_loop(0, 50, body, (m, s))


def test_constant_indices_rows_broadcasting_and_where():
    m0 = np.array([[0.1, 0.9, -0.3], [1.5, 0.2, 2.5]], np.float32)
    s0 = np.float32(0.25)
    f = srcjax.jit(_broadcast)
    m, s = f(m0, s0)
    assert "Numba region nbloop_" in srcjax.source(f, m0, s0)
    wm, ws = m0.copy(), s0
    for _ in range(50):
        ws = ws + wm[1, 2] - np.max(wm[0])
        wm = wm * np.float32(0.5) + ws
        wm = np.where(wm > np.float32(1.0), wm - wm[0], np.minimum(wm, np.float32(0.75)))
    assert m.dtype == np.float32 and np.asarray(s).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(m), wm)
    assert np.asarray(s) == ws


def _scalar_out(x):
    def body(i, c):
        x, t = c
        return x * 1.5, t + jnp.sum(x)

    return lax.fori_loop(0, 5, body, (x, np.float32(0.0)))


def test_a_strong_float32_scalar_result_stays_a_float32():
    x0 = np.array([0.5, 0.25], np.float32)
    f = srcjax.jit(lambda x: _scalar_out(x)[1] * np.float32(3.1))
    out = f(x0)
    t, x = np.float32(0.0), x0.copy()
    for _ in range(5):
        x, t = x * np.float32(1.5), t + (x[0] + x[1])
    assert out.dtype == np.float32
    assert out == t * np.float32(3.1)


def _int_wrap(k):
    return lax.fori_loop(0, 40, lambda i, k: k * 3 + 1, k)


def test_int32_vectors_wrap_as_in_jax():
    k0 = np.array([7, -2, 1], np.int32)
    f = srcjax.jit(_int_wrap)
    out = f(k0)
    assert "Numba region nbloop_" in srcjax.source(f, k0)
    k = k0.copy()
    with np.errstate(over="ignore"):
        for _ in range(40):
            k = k * np.int32(3) + np.int32(1)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(np.asarray(out), k)


def test_a_kernel_that_fails_at_run_time_falls_back_to_numpy_once(monkeypatch):
    calls = []

    def g(x0):
        return lax.fori_loop(0, 7, lambda i, x: x * 1.5 + 0.25, x0)

    x0 = np.array([1.0, 2.0], np.float32)
    f = srcjax.jit(g)
    want = x0.copy()
    for _ in range(7):
        want = want * np.float32(1.5) + np.float32(0.25)
    np.testing.assert_array_equal(np.asarray(f(x0)), want)
    key = srcjax.source(f, x0).split("Numba region ")[1].split()[0]
    reg = loops._REGIONS[key]

    def broken(*args):
        calls.append(1)
        raise TypeError("No matching definition for argument type(s)")

    monkeypatch.setattr(reg, "fn", broken)
    np.testing.assert_array_equal(np.asarray(f(x0)), want)  # NumPy ran the loop
    np.testing.assert_array_equal(np.asarray(f(x0)), want)
    assert len(calls) == 1 and reg.fn is None and "TypeError" in reg.error


def test_off_keeps_arrays_in_numpy():
    srcjax.config.update("numba_loops", False)
    f = srcjax.jit(_int_wrap)
    k0 = np.array([1, 2], np.int32)
    assert f(k0).tolist() == [int(v) for v in _int_wrap_ref(k0)]
    assert "Numba" not in srcjax.source(f, k0)


def _int_wrap_ref(k):
    k = k.copy()
    with np.errstate(over="ignore"):
        for _ in range(40):
            k = k * np.int32(3) + np.int32(1)
    return k


def _oob_item(v):
    def body(i, c):
        return c + c[5]  # out of bounds of float32[3]: JAX clamps to c[2]

    return lax.fori_loop(0, 3, body, v)


def test_an_out_of_bounds_constant_index_clamps_as_in_jax():
    v0 = np.array([0.5, -1.0, 0.25], np.float32)
    got = np.asarray(srcjax.jit(_oob_item)(v0))
    want = v0.copy()
    for _ in range(3):  # JAX's clamped gather, in a Python loop
        want = want + want[2]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)


def _lorenz_rk4(p, y0):
    # bench row L3: jnp.stack of scalars made each step's derivative; the loop kept
    # NumPy ("operand [mul, sub2, sub3]") and ran 1000x slower than jax.jit
    def f(y):
        return jnp.stack(
            [p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1], y[0] * y[1] - p[2] * y[2]]
        )

    def step(i, y):
        k1 = f(y)
        k2 = f(y + 0.5 * 0.01 * k1)
        k3 = f(y + 0.5 * 0.01 * k2)
        k4 = f(y + 0.01 * k3)
        return y + 0.01 / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    return lax.fori_loop(0, 500, step, y0)


def _stack_columns(a):
    def body(i, m):
        return jnp.stack([m[1] * 0.5, m[0] + 1.0], axis=-1)

    return lax.fori_loop(0, 7, body, a)


def test_rk4_with_jnp_stack_of_scalars_is_compiled_and_bitwise_numpys():
    p = np.array([10.0, 28.0, 8.0 / 3.0], np.float32)
    y0 = np.array([1.0, 1.0, 1.0], np.float32)
    f = srcjax.jit(_lorenz_rk4)
    y = f(p, y0)
    assert "Numba region nbloop_" in srcjax.source(f, p, y0)
    h, half, sixth, two = (np.float32(v) for v in (0.01, 0.005, 0.01 / 6.0, 2.0))

    def g(y):
        return np.array(
            [p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1], y[0] * y[1] - p[2] * y[2]],
            np.float32,
        )

    want = y0.copy()
    for _ in range(500):
        k1 = g(want)
        k2 = g(want + half * k1)
        k3 = g(want + half * k2)
        k4 = g(want + h * k3)
        want = want + sixth * (k1 + two * k2 + two * k3 + k4)
    assert y.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(y), want)


def test_jnp_stack_along_the_last_axis_in_a_kernel():
    a = np.arange(4, dtype=np.float32).reshape(2, 2)
    f = srcjax.jit(_stack_columns)
    r = f(a)
    assert "Numba region nbloop_" in srcjax.source(f, a)
    want = a.copy()
    for _ in range(7):
        want = np.stack([want[1] * np.float32(0.5), want[0] + np.float32(1.0)], axis=-1)
    np.testing.assert_array_equal(np.asarray(r), want)
