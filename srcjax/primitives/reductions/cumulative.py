"""``cumsum`` and ``cumprod`` with their adjoints."""

from __future__ import annotations

import numpy as np

from srcjax.dtypes import canonicalize_dtype
from srcjax.primitives.ad import (
    accumulate,
    axis_or_zero,
    cumprod_jvp,
    cumprod_vjp,
    flatten_if_none,
    int_accumulator,
    is_half_float,
    reshape,
)
from srcjax.primitives.structural import (
    flip,
)

from ..lazy_kernels import LazyKernel
from ._common import _reduction

__all__ = ["cumsum", "cumprod"]

# ---------------------------------------------------------------------------
# cumsum / cumprod


def _cumulative_dtype(a):
    """JAX's result dtype of cumsum/cumprod without ``dtype``: integers keep
    their own (canonical) dtype (int8 stays int8, unlike ``sum``), bool
    accumulates in the default int."""
    dt = np.result_type(a)
    if dt.kind in "iu":
        return canonicalize_dtype(dt)
    return int_accumulator(dt)


def _cumsum(a, axis=None, dtype=None):
    """Cumulative sum along ``axis`` (jax.numpy.cumsum); ``axis=None`` works on
    the flattened array. Shape: ``a``'s (flattened with ``axis=None``). Dtype:
    ``dtype``, else integer inputs keep their dtype and bool accumulates in the
    default int (JAX). float16 and bfloat16 scans are XLA's, bit for bit
    (:func:`_xla_half_scan`). float32 (complex64) sums accumulate in float64
    (complex128) and are rounded once: a sequential float32 scan drifts
    (``cumsum(full(10**6, 0.1, float32))[-1]`` was 100958.34; JAX's tree-shaped
    scan gives 100000.016, the truth is 100000.0015). A running sum that
    overflows the result dtype stays infinite from there on, as in a float32
    scan. Raises ``numpy.exceptions.AxisError`` for an axis out of range."""
    if dtype is None:
        dtype = _cumulative_dtype(a)
    dt = np.result_type(a) if dtype is None else np.dtype(dtype)
    if dt.itemsize == 2 and is_half_float(dt):
        a = np.asarray(a).astype(dt, copy=False)
        if axis is None:
            return _xla_half_scan(a.reshape(-1))
        return np.moveaxis(_xla_half_scan(np.moveaxis(a, axis, -1)), -1, axis)
    if dt.kind not in "fc" or dt.itemsize >= (16 if dt.kind == "c" else 8):
        return accumulate(np.cumsum, a, dtype, axis=axis)
    wdt = np.complex128 if dt.kind == "c" else np.float64
    a = np.asarray(a)
    if dt == np.float32 and a.dtype == dt and a.size >= COMPILED_SCAN_MIN:
        r = _compiled_rows(a, axis)
        if r is not None and np.isfinite(r).all():
            return r  # (else the NumPy path below: NaN, or an overflow to make sticky)
    if axis is not None and a.ndim >= 2 and a.size >= _SHORT_SCAN_REST * a.shape[axis]:
        wide = _short_scan(a, axis, wdt)
    else:
        wide = np.cumsum(a, axis=axis, dtype=wdt)
    with np.errstate(over="ignore"):
        r = wide.astype(dt)
    if dt.kind == "f" and not np.isfinite(r).all():
        over = np.isinf(r) & np.isfinite(wide)
        if over.any():
            r = _sticky_overflow(r, wide, over, 0 if axis is None else axis)
    return r


#: float32 scans of at least this many elements run compiled (Numba), when it is
#: available: the first one imports Numba and loads the kernel
COMPILED_SCAN_MIN = 16384
#: the compiled row scan (backends/numba_cpu/scans.py ``rows_f32``); its loader
#: is set by :mod:`srcjax.backends` (a higher layer)
SCAN_KERNEL = LazyKernel("float32 row scan")


def _compiled_rows(a, axis):
    """The float32 running sums of float32 ``a`` along ``axis`` (None: flattened)
    by the compiled kernel, where the scanned axis is the last (rows in memory);
    None where it is not or there is no kernel."""
    if axis is not None and axis not in (-1, a.ndim - 1):
        return None
    k = SCAN_KERNEL.get()
    if k is None:
        return None
    flat = np.ascontiguousarray(a).reshape(-1, a.shape[-1] if axis is not None else a.size)
    out = np.empty(flat.shape, np.float32)
    k(flat, out)
    return out.reshape(a.shape if axis is not None else (a.size,))


#: :func:`_short_scan` is used where the other axes hold at least this many
#: elements per position of the scanned axis
_SHORT_SCAN_REST = 64


def _short_scan(a, axis, wdt):
    """``np.cumsum(a, axis, dtype=wdt)``, the same sums in the same order, as one
    ``np.add`` per position of ``axis`` over a ``wdt`` copy of ``a`` (in place,
    ``a``'s layout kept). NumPy's accumulate walks the scanned axis innermost
    with a cast per element: a float32 (4096, 64) scan along its 64 (R4's
    paths) took ~2x the CPU time of these 64 vectorized adds. (Moving the axis
    first made the adds contiguous, but the transposed result made the
    elementwise products after it, with C-ordered operands, slower by more.)"""
    w = a.astype(wdt)
    index = [slice(None)] * a.ndim
    prev = None
    for j in range(a.shape[axis]):
        index[axis] = j
        cur = w[tuple(index)]
        if prev is not None:
            np.add(prev, cur, out=cur)
        prev = cur
    return w


#: XLA's ReduceWindowRewriter base length: a longer scan is done in blocks
_SCAN_BLOCK = 16


def _sequential_scan(x):
    """Running sums along the last axis of a float16/bfloat16 ``x``, each step
    computed in float32 and rounded to ``x``'s dtype (XLA's reduce-window)."""
    out = np.empty_like(x)
    s = np.zeros(x.shape[:-1], np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(x.shape[-1]):
            s = (s + x[..., i]).astype(x.dtype).astype(np.float32)
            out[..., i] = s
    return out


def _xla_half_scan(x):
    """JAX's cumsum of a float16/bfloat16 ``x`` along its last axis, bit for bit
    with XLA on CPU (jax 0.10.2): up to 16 elements a rounded sequential scan;
    longer, blocks of 16 scanned so, the block totals scanned the same way
    (recursively), and each block's exclusive prefix added once."""
    n = x.shape[-1] if x.ndim else 0
    if x.ndim == 0 or n <= _SCAN_BLOCK:
        return _sequential_scan(x) if x.ndim else x
    nb = -(-n // _SCAN_BLOCK)
    lead = x.shape[:-1]
    padded = np.zeros(lead + (nb * _SCAN_BLOCK,), x.dtype)
    padded[..., :n] = x
    inner = _sequential_scan(padded.reshape(lead + (nb, _SCAN_BLOCK)))
    outer = _xla_half_scan(inner[..., -1])
    prefix = np.zeros(lead + (nb, 1), np.float32)
    prefix[..., 1:, 0] = outer[..., :-1]
    with np.errstate(over="ignore", invalid="ignore"):
        r = (inner.astype(np.float32) + prefix).astype(x.dtype)
    return r.reshape(lead + (nb * _SCAN_BLOCK,))[..., :n]


def _sticky_overflow(r, wide, over, axis):
    """``r`` (the rounded running sums ``wide``) where a narrow scan's running sum
    would have become ``±inf`` at the first overflow along ``axis`` and stayed
    there: ``inf`` of the overflow's sign plus the later exact sums (NaN once
    an opposite infinity is added, as in the narrow scan)."""
    idx = np.arange(r.shape[axis]).reshape((-1,) + (1,) * (r.ndim - 1 - axis % r.ndim))
    first = np.maximum.accumulate(np.where(over, idx, -1), axis=axis)
    signed = np.take_along_axis(np.sign(wide), np.maximum(first, 0), axis=axis) * np.inf
    with np.errstate(invalid="ignore"):
        return np.where(first >= 0, (signed + wide).astype(r.dtype), r)


def _cumprod(a, axis=None, dtype=None):
    """Cumulative product along ``axis`` (jax.numpy.cumprod); ``axis=None`` works
    on the flattened array. Dtypes as :func:`_cumsum`. Gradient exact with zeros
    in the input."""
    if dtype is None:
        dtype = _cumulative_dtype(a)
    return accumulate(np.cumprod, a, dtype, axis=axis)


cumsum = _reduction("jnp.cumsum", _cumsum, np.cumsum)
cumprod = _reduction("jnp.cumprod", _cumprod, np.cumprod)


def _cumsum_vjp(g, ans, a, axis=None):
    return reshape(
        flip(cumsum(flip(g, axis_or_zero(axis)), axis_or_zero(axis)), axis_or_zero(axis)),
        np.shape(a),
    )


def _cumsum_jvp(t, ans, axis=None, dtype=None):
    return cumsum(t, axis, dtype)


def _cumprod_vjp(g, ans, a, axis=None):
    return reshape(cumprod_vjp(g, flatten_if_none(a, axis), axis_or_zero(axis)), np.shape(a))


def _cumprod_jvp(t, ans, a, axis=None):
    return cumprod_jvp(flatten_if_none(t, axis), flatten_if_none(a, axis), axis_or_zero(axis))


cumsum.def_vjp(_cumsum_vjp)
cumsum.def_jvp(_cumsum_jvp)
cumprod.def_vjp(_cumprod_vjp)
cumprod.def_jvp(_cumprod_jvp)


def _cum_samples(rng):
    z = rng.normal(size=(3, 4))
    z[1, 1] = 0.0
    z[2, 0] = 0.0
    z[2, 2] = 0.0
    return [
        ((rng.normal(size=(3, 4)),), {}),
        ((rng.normal(size=(3, 4)),), {"axis": 1}),
        ((rng.normal(size=(2, 3, 4)),), {"axis": -2}),
        ((z,), {"axis": 1}),
        ((z,), {"axis": 0}),
        ((z,), {}),
    ]


cumsum.samples = _cum_samples
cumprod.samples = _cum_samples
