"""The adjoint of max/min pooling over windows that do not overlap
(``chooser._scatter_disjoint``: strides at least the dilated window, no padding,
no base dilation) against a Python loop over the windows: the cotangent of
each window goes to its first extreme in window order, a NaN winning."""

import itertools

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.primitives.conv.chooser import (
    _disjoint_windows,
    _reduce_window_chooser_impl,
    _window_scatter_impl,
)


def scatter_loop(g, x, select_max, window, strides, wd):
    """The definition, window by window, in float64 (complex128 for complex)."""
    x = np.asarray(x)
    out_sp = tuple(
        max(0, (n - ((k - 1) * r + 1)) // s + 1) for n, k, r, s in zip(x.shape, window, wd, strides)
    )
    out = np.zeros(x.shape, np.complex128 if np.iscomplexobj(g) else np.float64)
    for o in itertools.product(*[range(n) for n in out_sp]):
        best, where = None, None
        for k in itertools.product(*[range(n) for n in window]):
            i = tuple(oo * s + kk * r for oo, s, kk, r in zip(o, strides, k, wd))
            v = x[i]
            if best is None:
                best, where = v, i
            elif np.isnan(best):
                continue
            elif np.isnan(v) or (v > best if select_max else v < best):
                best, where = v, i
        out[where] += g[o]
    return out


CASES = [
    ((8, 8, 8, 4), (1, 2, 2, 1), (1, 2, 2, 1), (1, 1, 1, 1)),  # R8's pool
    ((2, 7, 9), (1, 2, 3), (1, 3, 3), (1, 1, 1)),  # remainders
    ((3, 10), (2, 2), (3, 4), (1, 2)),  # window dilation, strides beyond the window
    ((4, 6, 6), (1, 3, 2), (2, 3, 2), (1, 1, 1)),
]


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("select_max", [True, False])
@pytest.mark.parametrize("gdt", [np.float32, np.complex64])
def test_disjoint_windows_adjoint_matches_a_loop(case, select_max, gdt):
    shape, window, strides, wd = case
    pads, bd = ((0, 0),) * len(shape), (1,) * len(shape)
    assert _disjoint_windows(window, strides, pads, bd, wd)
    rng = np.random.default_rng(7)
    x = rng.integers(0, 3, shape).astype(np.float32)  # many ties
    x.flat[3] = np.nan
    out_sp = tuple(
        (n - ((k - 1) * r + 1)) // s + 1 for n, k, r, s in zip(shape, window, wd, strides)
    )
    g = rng.normal(size=out_sp).astype(np.float32)
    if gdt is np.complex64:
        g = (g + 1j * rng.normal(size=out_sp)).astype(np.complex64)
    got = _window_scatter_impl(g, x, select_max, window, strides, pads, bd, wd)
    assert got.dtype == gdt and got.shape == shape
    np.testing.assert_array_equal(got, scatter_loop(g, x, select_max, window, strides, wd))


def test_r8_max_pool_gradient_under_jit_matches_a_loop():
    rng = np.random.default_rng(8)
    x = rng.integers(0, 4, (2, 6, 6, 3)).astype(np.float32)
    g = rng.normal(size=(2, 3, 3, 3)).astype(np.float32)

    def f(x):
        y = lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        return jnp.sum(y * g)

    got = srcjax.jit(srcjax.grad(f))(x)
    want = scatter_loop(g, x, True, (1, 2, 2, 1), (1, 2, 2, 1), (1, 1, 1, 1))
    np.testing.assert_array_equal(got, want.astype(np.float32))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("select_max", [True, False])
def test_disjoint_windows_extremes_match_a_loop(case, select_max):
    # (the forward's kept slices: the same folds as the general path)
    shape, window, strides, wd = case
    pads, bd = ((0, 0),) * len(shape), (1,) * len(shape)
    rng = np.random.default_rng(9)
    x = rng.normal(size=shape).astype(np.float32)
    x.flat[5] = np.nan
    got = _reduce_window_chooser_impl(x, select_max, window, strides, pads, bd, wd)
    out_sp = tuple(
        (n - ((k - 1) * r + 1)) // s + 1 for n, k, r, s in zip(shape, window, wd, strides)
    )
    want = np.empty(out_sp, np.float32)
    for o in itertools.product(*[range(n) for n in out_sp]):
        vals = [
            x[tuple(oo * s + kk * r for oo, s, kk, r in zip(o, strides, k, wd))]
            for k in itertools.product(*[range(n) for n in window])
        ]
        want[o] = np.max(vals) if select_max else np.min(vals)  # (NaN propagates)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
