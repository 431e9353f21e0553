"""Constant slices (``x[1:]``, ``x[::2]``, 2-D rows and columns), ``jnp.concatenate``,
``zeros_like`` and ``.at[i].set/add/multiply/min/max`` in the scalar Numba kernels
(backends/numba_cpu/exprs.py): fresh user8's p07 spring chains, 157-174x jax.jit
while these loops kept NumPy.

Oracle: the same jitted program on the NumPy backend (``numba_loops`` off), which
follows JAX (an update out of bounds is dropped); the kernel must match it bit
for bit, on several sizes. Plain NumPy float32 loops check the NumPy backend.
"""

import numpy as np
import pytest

pytest.importorskip("numba")

from test_numba_loops import numba_loops  # noqa: E402, F401 - the option on, per test

import srcjax  # noqa: E402
import srcjax.numpy as jnp  # noqa: E402
from srcjax import lax  # noqa: E402


def _numpy_only(fn, *args):
    old = srcjax.config.read("numba_loops")
    srcjax.config.update("numba_loops", False)
    try:
        return srcjax.jit(lambda *a: fn(*a))(*args)  # (another jit object than jit(fn))
    finally:
        srcjax.config.update("numba_loops", old)


def _bits(a, b):
    for x, y in zip(np.atleast_1d(a) if not isinstance(a, tuple) else a, b):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes(), (x, y)


def _compiled(fn, *args):
    f = srcjax.jit(fn)
    out = f(*args)
    src = srcjax.source(f, *args)
    assert "Numba region nbloop_" in src and "keeps NumPy" not in src, src
    return out


def _springs_concat(x0, v0):
    def accel(x):
        d = x[1:] - x[:-1] - 1.0
        z = jnp.zeros(1)
        return jnp.concatenate([d, z]) - jnp.concatenate([z, d]) - 0.1

    def body(i, s):
        x, v = s
        v = v + 0.01 * accel(x)
        return (x + 0.01 * v, v)

    return lax.fori_loop(0, 200, body, (x0, v0))


def _springs_at(x0, v0):
    # p07's accel: zeros_like and .at[:-1].add / .at[1:].add
    def body(i, s):
        x, v = s
        d = x[1:] - x[:-1]
        f = jnp.zeros_like(x)
        f = f.at[:-1].add(d - 1.0)
        f = f.at[1:].add(-(d - 1.0))
        v = v + 0.01 * (f - 0.1)
        return (x + 0.01 * v, v)

    return lax.fori_loop(0, 200, body, (x0, v0))


@pytest.mark.parametrize("n", [2, 6, 11, 40])
@pytest.mark.parametrize("fn", [_springs_concat, _springs_at])
def test_p07_spring_chains_compile_bit_for_bit(fn, n):
    rng = np.random.default_rng(n)
    x0 = (np.arange(n) + 0.3 * rng.standard_normal(n)).astype(np.float32)
    v0 = (0.1 * rng.standard_normal(n)).astype(np.float32)
    xs, vs = _compiled(fn, x0, v0)
    _bits((xs, vs), _numpy_only(fn, x0, v0))
    # the NumPy backend itself: plain float32 NumPy
    x, v = x0.copy(), v0.copy()
    for _ in range(200):
        d = x[1:] - x[:-1] - np.float32(1.0)
        f = np.zeros_like(x)
        f[:-1] += d
        f[1:] += -d
        v = v + np.float32(0.01) * (f - np.float32(0.1))
        x = x + np.float32(0.01) * v
    np.testing.assert_allclose(xs, x, rtol=1e-5, atol=1e-5)


def _steps_and_grid(a):
    # steps, negative steps, 2-D rows and columns, an index before a slice
    def body(i, a):
        ev = a[:, ::2]
        row = a[0, 1:]
        flip = a[::-1, :]
        inner = a[1:, :-1]
        b = a * 0.5 + flip * 0.25
        b = b.at[1:, :-1].add(0.125 * inner)
        b = b.at[:, ::2].multiply(ev * 0.0 + 1.0001)
        b = b.at[0, 1:].max(row - 0.01)
        b = b.at[-1].min(0.75)
        return b.at[1, 0].set(b[0, 0] * 0.5)

    return lax.fori_loop(0, 50, body, a)


@pytest.mark.parametrize("shape", [(2, 3), (3, 5), (4, 4)])
def test_strided_and_2d_slices_and_constant_at_updates(shape):
    a = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    _bits(_compiled(_steps_and_grid, a), _numpy_only(_steps_and_grid, a))


def _counter_updates(x):
    # a loop counter as the index: past the end, the update is dropped (JAX, NumPy backend)
    def body(i, x):
        x = x.at[i].add(0.5)
        x = x.at[i - 2].multiply(1.5)  # (negative at first: from the end)
        x = x.at[i + 1].max(x[0])
        x = x.at[i].min(2.0)
        return x.at[i - 1].set(x[-1] * 0.25)

    return lax.fori_loop(0, 9, body, x)


@pytest.mark.parametrize("n", [1, 3, 5, 12])
def test_loop_counter_at_updates_drop_out_of_bounds_as_the_numpy_backend(n):
    x = np.linspace(-1.0, 1.0, n).astype(np.float32)
    out = _compiled(_counter_updates, x)
    want = _numpy_only(_counter_updates, x)
    _bits(out, want)
    w = x.copy()  # JAX's rule by hand: a negative index from the end, beyond dropped
    for i in range(9):

        def upd(w, k, f):
            k = k + n if k < 0 else k
            if 0 <= k < n:
                w[k] = f(w[k])

        upd(w, i, lambda e: e + np.float32(0.5))
        upd(w, i - 2, lambda e: e * np.float32(1.5))
        m = w[0]
        upd(w, i + 1, lambda e, m=m: np.maximum(e, m))
        upd(w, i, lambda e: np.minimum(e, np.float32(2.0)))
        s = w[-1] * np.float32(0.25)
        upd(w, i - 1, lambda e, s=s: s)
    np.testing.assert_array_equal(want, w)


def _clip_mode(x):
    def body(i, x):
        return x.at[i].add(1.0, mode="clip")

    return lax.fori_loop(0, 6, body, x)


def test_at_update_with_a_mode_keeps_numpy_and_is_right():
    x = np.zeros(3, np.float32)
    f = srcjax.jit(_clip_mode)
    out = f(x)
    assert "keeps NumPy" in srcjax.source(f, x)
    np.testing.assert_array_equal(out, [1.0, 1.0, 4.0])
