"""Loops that read a stacked input by row (a scan's ``xs[k]``) compiled with
Numba: the array is passed whole and indexed in the kernel, so its row's size
counts against the kernel's limit (planner._row_reads), not its own.

Oracle: the same jitted function with Numba loops off (the NumPy path), to the
bit: the kernel does the same float32 operations in the same order.
"""

import numpy as np
import pytest

pytest.importorskip("numba")

from test_numba_loops import numba_loops  # noqa: E402, F401 - the option on, per test

import srcjax  # noqa: E402
import srcjax.numpy as jnp  # noqa: E402
from srcjax import lax  # noqa: E402


def _cell(h, x):
    return h * 0.5 + x * x - 0.25 * h * x, None


def _scan_carry(xs):
    return lax.scan(_cell, jnp.zeros(8, jnp.float32), xs)[0]


def _numpy_path(fn, *args):
    srcjax.config.update("numba_loops", False)
    try:
        return srcjax.jit(fn)(*args)
    finally:
        srcjax.config.update("numba_loops", True)


XS = np.linspace(-1.5, 2.0, 160).astype(np.float32).reshape(20, 8)


def test_a_scan_over_20x8_rows_is_compiled_and_bitwise_numpys():
    f = srcjax.jit(_scan_carry)
    got = f(XS)
    src = srcjax.source(f, XS)
    assert "Numba region nbloop_" in src and "elements" not in src
    want = _numpy_path(_scan_carry, XS)
    assert got.dtype == np.float32 and got.shape == (8,)
    np.testing.assert_array_equal(got.view(np.int32), np.asarray(want).view(np.int32))
    # and the plain NumPy loop, as an independent oracle
    h = np.zeros(8, np.float32)
    for x in XS:
        h = h * np.float32(0.5) + x * x - np.float32(0.25) * h * x
    np.testing.assert_array_equal(got, h)


def _whole_too(xs):
    def body(i, c):
        return c + xs[i] * jnp.sum(xs)

    return lax.fori_loop(0, 20, body, jnp.zeros(8, jnp.float32))


def test_an_array_also_used_whole_keeps_the_limit():
    f = srcjax.jit(_whole_too)
    got = f(XS)
    assert "an array of 160 elements" in srcjax.source(f, XS)
    np.testing.assert_array_equal(got, _numpy_path(_whole_too, XS))


def _loss(xs):
    return jnp.sum(_scan_carry(xs) ** 2)


def test_grad_of_a_scan_over_rows_is_compiled_and_bitwise_numpys():
    # the reverse loop builds the rows' cotangents one row a trip (a list the
    # kernel fills as an array: planner._row_lists)
    g = srcjax.jit(srcjax.value_and_grad(_loss))
    v, d = g(XS)
    src = srcjax.source(g, XS)
    assert src.count("Numba region nbloop_") == 2 and "keep NumPy" not in src
    wv, wd = _numpy_path(srcjax.value_and_grad(_loss), XS)
    assert v.dtype == d.dtype == np.float32 and d.shape == (20, 8)
    np.testing.assert_array_equal(np.asarray(v).view(np.int32), np.asarray(wv).view(np.int32))
    np.testing.assert_array_equal(d.view(np.int32), np.asarray(wd).view(np.int32))
    # float64 finite differences on two entries (the gradient is the real one)
    x64 = XS.astype(np.float64)

    def f64(a):
        h = np.zeros(8)
        for x in a:
            h = h * 0.5 + x * x - 0.25 * h * x
        return np.sum(h * h)

    for i, j in ((0, 0), (19, 7)):
        e = np.zeros_like(x64)
        e[i, j] = 1e-6
        fd = (f64(x64 + e) - f64(x64 - e)) / 2e-6
        np.testing.assert_allclose(d[i, j], fd, rtol=1e-4, atol=1e-6)


def _stacked(xs):
    def cell(h, x):
        h = h * 0.5 + x
        return h, h * x

    return lax.scan(cell, jnp.zeros(8, jnp.float32), xs)


def test_a_scans_stacked_outputs_are_built_in_the_kernel():
    f = srcjax.jit(_stacked)
    c, ys = f(XS)
    assert "Numba region nbloop_" in srcjax.source(f, XS)
    wc, wys = _numpy_path(_stacked, XS)
    assert ys.dtype == np.float32 and ys.shape == (20, 8)
    np.testing.assert_array_equal(np.asarray(ys).view(np.int32), np.asarray(wys).view(np.int32))
    np.testing.assert_array_equal(np.asarray(c).view(np.int32), np.asarray(wc).view(np.int32))


def _stacked_loss(xs):
    def cell(h, x):
        h = jnp.tanh(h * 0.5 + x)
        return h, h

    return jnp.sum(lax.scan(cell, jnp.zeros(8, jnp.float32), xs)[1] ** 2)


def test_grad_of_a_scan_whose_stacked_outputs_feed_the_loss():
    # the reverse loop pops the stacked outputs' cotangent rows (ad.pop_like of
    # ad.tree_unstack): trip k of reversed(range(20)) reads row k in the kernel
    g = srcjax.jit(srcjax.value_and_grad(_stacked_loss))
    v, d = g(XS)
    src = srcjax.source(g, XS)
    assert src.count("Numba region nbloop_") == 2 and "keep NumPy" not in src
    wv, wd = _numpy_path(srcjax.value_and_grad(_stacked_loss), XS)
    assert v.dtype == d.dtype == np.float32 and d.shape == (20, 8)
    np.testing.assert_array_equal(np.asarray(v).view(np.int32), np.asarray(wv).view(np.int32))
    np.testing.assert_array_equal(d.view(np.int32), np.asarray(wd).view(np.int32))
    x64 = XS.astype(np.float64)

    def f64(a):
        h, s = np.zeros(8), 0.0
        for x in a:
            h = np.tanh(h * 0.5 + x)
            s += np.sum(h * h)
        return s

    for i, j in ((0, 3), (19, 0)):
        e = np.zeros_like(x64)
        e[i, j] = 1e-6
        fd = (f64(x64 + e) - f64(x64 - e)) / 2e-6
        np.testing.assert_allclose(d[i, j], fd, rtol=1e-3, atol=1e-5)
