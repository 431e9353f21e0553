"""Numba kernels of :mod:`srcjax.random`'s exact arithmetic (used when Numba is
installed: ``pip install "srcjax[numba]"``; see :mod:`srcjax.backends.numba_cpu`).

The same computations as :mod:`srcjax.random._threefry` (SPEC.md §2, §5-§9),
element by element in one compiled loop instead of dozens of NumPy passes, so a
``normal`` of 1e6 values costs what XLA's does. Bit for bit the NumPy path's
results (tests/test_random_numba.py compares them): threefry's uint32 arithmetic
is converted back to uint32 after each operation (mod 2**32 whatever width Numba
types it), float32 values stay float32 (no fastmath), and each fused
multiply-add of XLA:CPU is :func:`srcjax.backends.numba_cpu.fma32`, a correctly
rounded ``llvm.fma.f32`` (the NumPy path emulates the same rounding in float64).
"""

from __future__ import annotations

import math
import sys

import numpy as np

from ..backends.numba_cpu import bitcasts, fma32, njit
from . import _threefry as _tf

_fma = fma32()
_bits, _from_bits = bitcasts()

_M = np.uint64(0xFFFFFFFF)
_U32 = np.uint32
_PARITY32 = np.uint32(0x1BD11BDA)
_R = (13, 15, 26, 6, 17, 29, 16, 24)
_NINE = np.uint64(9)
_THIRTYTWO = np.uint64(32)

_F0 = np.float32(0.0)
_F1 = np.float32(1.0)
_TWO_M23 = np.float32(2.0**-23)
_TINY = np.float32(2.0**-126)
_INF = np.float32(np.inf)
_NAN = np.float32(np.nan)
_HALF = np.float32(-0.5)
_FIVE = np.float32(5.0)
_TWO_HALF = np.float32(2.5)
_THREE = np.float32(3.0)
_LP = tuple(np.float32(v) for v in _tf._LOG_P)
_LQ1 = np.float32(_tf._LOG_Q1)
_LQ2 = np.float32(_tf._LOG_Q2)
_SQRTHF = np.float32(_tf._SQRTHF)
_NN = tuple(np.float32(v) for v in _tf._L1P_N)
_ND = tuple(np.float32(v) for v in _tf._L1P_D)
_L1P_SMALL = np.float32(_tf._L1P_SMALL)
_CS = tuple(np.float32(v) for v in _tf._ERFINV_CS)
_CL = tuple(np.float32(v) for v in _tf._ERFINV_CL)
_NLO = np.float32(_tf._NORMAL_LO)
_NSPAN = np.float32(np.float32(1.0) - _tf._NORMAL_LO)
_SQRT2 = np.float32(_tf._SQRT2)


@njit(inline="always")
def _rotl(v, r):
    return _U32((v << _U32(r)) | (v >> _U32(32 - r)))


@njit(inline="always")
def threefry(k0, k1, x0, x1):
    """threefry2x32-20 of the counter words ``(x0, x1)`` under ``(k0, k1)``
    (values below 2**32; uint32 results). Computed in uint32, each result
    converted back to uint32 (whatever width Numba types an intermediate, the
    conversion keeps the low 32 bits: arithmetic mod 2**32): twice the SIMD
    lanes of the masked uint64 arithmetic it replaces (a partitionable
    ``normal`` of 4096 x 64 values: 0.89 -> 0.62 ms)."""
    k0 = _U32(k0)
    k1 = _U32(k1)
    k2 = _U32(k0 ^ k1 ^ _PARITY32)
    a = _U32(_U32(x0) + k0)
    b = _U32(_U32(x1) + k1)
    for s in range(1, 6):
        base = 0 if s % 2 else 4
        for j in range(4):
            a = _U32(a + b)
            b = _rotl(b, _R[base + j])
            b = _U32(b ^ a)
        m = s % 3
        ka = k0 if m == 0 else (k1 if m == 1 else k2)
        m = (s + 1) % 3
        kb = k0 if m == 0 else (k1 if m == 1 else k2)
        a = _U32(a + ka)
        b = _U32(b + kb + _U32(s))
    return a, b


@njit(inline="always")
def _partitionable_pair(keys, bi, i):
    """§5's partitionable words of counter ``i`` under key ``b``: threefry of
    the counter pair ``(i >> 32, i & 0xFFFFFFFF)``."""
    ii = np.uint64(i)
    return threefry(keys[bi, 0], keys[bi, 1], _U32(ii >> _THIRTYTWO), _U32(ii & _M))


@njit
def bits32_partitionable(keys, n, out):
    """``out[b, i]``: the 32-bit words of §5's partitionable layout for key ``b``."""
    for bi in range(keys.shape[0]):
        for i in range(n):
            y0, y1 = _partitionable_pair(keys, bi, i)
            out[bi, i] = np.uint32(y0 ^ y1)


@njit
def split_partitionable(keys, n, out):
    """``out[b, i] = (y0, y1)``: key ``i`` of §5's partitionable split of key ``b``."""
    for bi in range(keys.shape[0]):
        for i in range(n):
            y0, y1 = _partitionable_pair(keys, bi, i)
            out[bi, i, 0] = np.uint32(y0)
            out[bi, i, 1] = np.uint32(y1)


@njit
def fold_in_words(keys, data, out):
    """``out[b] = threefry(keys[b], (0, data[b]))`` (§4)."""
    for bi in range(keys.shape[0]):
        y0, y1 = threefry(
            np.uint64(keys[bi, 0]), np.uint64(keys[bi, 1]), np.uint64(0), np.uint64(data[bi])
        )
        out[bi, 0] = np.uint32(y0)
        out[bi, 1] = np.uint32(y1)


@njit
def bits32_legacy(keys, m, out):
    """``out[b, :m]``: helper H of §2a on the counters ``iota(m)`` (odd ``m``: the
    last counter pair's second word is the padding 0)."""
    h = (m + 1) // 2
    for bi in range(keys.shape[0]):
        k0 = np.uint64(keys[bi, 0])
        k1 = np.uint64(keys[bi, 1])
        for j in range(h):
            c1 = h + j
            x1 = np.uint64(0) if (m % 2 == 1 and c1 == 2 * h - 1) else np.uint64(c1)
            y0, y1 = threefry(k0, k1, np.uint64(j), x1)
            out[bi, j] = np.uint32(y0)
            if c1 < m:
                out[bi, c1] = np.uint32(y1)


@njit(inline="always")
def _log32(y):
    """XLA:CPU's float32 ``log`` (Cephes/Eigen style): ``_threefry.log32``, with
    selects instead of branches (the loops vectorize)."""
    yc = max(y, _TINY)
    u = _bits(yc)
    e = np.float32(np.int32((u >> np.uint32(23)) & np.uint32(0xFF)) - np.int32(127)) + _F1
    m = _from_bits(np.uint32((u & np.uint32(0x807FFFFF)) | np.uint32(0x3F000000)))
    low = m < _SQRTHF
    e = e - _F1 if low else e
    x = (m - _F1) + (m if low else _F0)
    x2 = x * x
    x3 = x2 * x
    a = _fma(_fma(_LP[0], x, _LP[1]), x, _LP[2])
    b = _fma(_fma(_LP[3], x, _LP[4]), x, _LP[5])
    c = _fma(_fma(_LP[6], x, _LP[7]), x, _LP[8])
    yy = _fma(a, x3, b)
    yy = _fma(yy, x3, c)
    yy = _fma(yy, x3, e * _LQ1)
    r = _fma(_HALF, x2, x)
    out = _fma(_LQ2, e, r + yy)
    out = -_INF if y == _F0 else out
    out = _INF if y == _INF else out
    return _NAN if (y < _F0 or y != y) else out


@njit(inline="always")
def _log1p32(t):
    """XLA:CPU's float32 ``log1p``: both of ``_threefry.log1p32``'s paths, selected."""
    t = _F0 * t if abs(t) < _TINY else t  # denormals flush to zero
    small = abs(t) < _L1P_SMALL
    t2 = t * t
    num = _NN[0]
    den = _ND[0]
    for k in range(1, 7):
        num = _fma(num, t, _NN[k])
        den = _fma(den, t, _ND[k])
    q = (t * t2) * (num / den)
    near = t + _fma(_HALF, t2, q)
    far = _log32(t + _F1)
    return near if small else far


@njit(inline="always")
def _erfinv32(x):
    """XLA's float32 ``erf_inv`` (Giles): ``_threefry.erfinv32``."""
    w = -_log1p32(-(x * x))
    small = w < _FIVE
    t = w - _TWO_HALF if small else np.float32(math.sqrt(np.float64(w))) - _THREE
    p = _CS[0] if small else _CL[0]
    for k in range(1, 9):
        p = _fma(p, t, _CS[k] if small else _CL[k])
    return x * _INF if abs(x) == _F1 else p * x


@njit(inline="always")
def _unit(w):
    """§7: ``1.f - 1`` from the top 23 bits of a 32-bit word."""
    return _from_bits(np.uint32((np.uint64(w) >> _NINE) | np.uint64(0x3F800000))) - _F1


@njit(inline="always")
def _normal32(w):
    """§9: the float32 ``normal`` of the 32-bit word ``w``."""
    u = max(_NLO, _fma(_unit(w), _NSPAN, _NLO))
    return _SQRT2 * _erfinv32(u)


@njit
def normal_words(words, out):
    """``out[i]``: float32 ``normal`` of the 32-bit word ``words[i]`` (§9)."""
    for i in range(words.shape[0]):
        out[i] = _normal32(words[i])


@njit
def normal_partitionable(keys, n, out):
    """``out[b, i]``: the float32 ``normal`` values of key ``b`` (partitionable
    counters): bits and transform in one pass, no temporaries."""
    for bi in range(keys.shape[0]):
        for i in range(n):
            y0, y1 = _partitionable_pair(keys, bi, i)
            out[bi, i] = _normal32(y0 ^ y1)


@njit
def log_values(x, out):
    """``out[i]``: XLA:CPU's float32 ``log`` of ``x[i]`` (``_threefry.log32``)."""
    for i in range(x.shape[0]):
        out[i] = _log32(x[i])


@njit
def log1p_values(x, out):
    """``out[i]``: XLA:CPU's float32 ``log1p`` of ``x[i]`` (``_threefry.log1p32``)."""
    for i in range(x.shape[0]):
        out[i] = _log1p32(x[i])


@njit
def uniform_words(words, lo, span, out):
    """``out[i] = max(lo, fma(f, span, lo))`` with ``f`` from §7 (float32)."""
    for i in range(words.shape[0]):
        out[i] = max(lo, _fma(_unit(words[i]), span, lo))


#: values below which a kernel over a batch of keys runs on the calling thread
#: alone (handing rows to the pool costs ~20-50 us; 2**16 normals take ~150 us)
PARALLEL_MIN = 1 << 16


def _by_rows(kernel, flat: np.ndarray, n: int, out: np.ndarray) -> None:
    """``kernel(flat, n, out)``, its rows (keys) shared among the runtime's worker
    threads when there are many values (the kernels are nogil; each key's values
    depend on that key alone, so the bits are the same), as XLA:CPU spreads
    a large ``normal`` over its threads."""
    rows = flat.shape[0]
    threads = 1
    if rows > 1 and rows * n >= PARALLEL_MIN:
        from .. import _spmd
        from ..backends import runtime

        threads = min(_spmd.threads(runtime.NUM_THREADS), rows)
    if threads <= 1:
        kernel(flat, n, out)
        return
    bounds = [rows * i // threads for i in range(threads + 1)]
    pool = runtime._pool_executor()
    futures = [
        pool.submit(kernel, flat[lo:hi], n, out[lo:hi]) for lo, hi in zip(bounds[1:-1], bounds[2:])
    ]
    kernel(flat[: bounds[1]], n, out[: bounds[1]])
    for f in futures:
        f.result()


def normal_keys(keys: np.ndarray, shape: tuple) -> np.ndarray:
    """float32 ``normal`` of ``shape`` for each key of ``keys (..., 2)``
    (partitionable counters), in one compiled pass."""
    n = _tf._size(shape)
    flat = np.ascontiguousarray(keys.reshape(-1, 2))
    out = np.empty((flat.shape[0], n), np.float32)
    _by_rows(normal_partitionable, flat, n, out)
    return out.reshape(keys.shape[:-1] + tuple(shape))


def bits32(keys: np.ndarray, shape: tuple, partitionable: bool) -> np.ndarray:
    """``keys.shape[:-1] + shape`` uint32 words (both counter layouts)."""
    n = _tf._size(shape)
    flat = np.ascontiguousarray(keys.reshape(-1, 2))
    out = np.empty((flat.shape[0], n), np.uint32)
    if partitionable:
        bits32_partitionable(flat, n, out)
    else:
        bits32_legacy(flat, n, out)
    return out.reshape(keys.shape[:-1] + tuple(shape))


def split_keys(keys: np.ndarray, shape: tuple, partitionable: bool) -> np.ndarray:
    """``keys.shape[:-1] + shape + (2,)`` new keys (both schemes), one compiled pass."""
    n = _tf._size(shape)
    flat = np.ascontiguousarray(keys.reshape(-1, 2))
    if partitionable:
        out = np.empty((flat.shape[0], n, 2), np.uint32)
        _by_rows(split_partitionable, flat, n, out)
    else:
        out = np.empty((flat.shape[0], 2 * n), np.uint32)
        bits32_legacy(flat, 2 * n, out)
    return out.reshape(keys.shape[:-1] + tuple(shape) + (2,))


def fold_in_keys(keys: np.ndarray, data: np.ndarray) -> np.ndarray:
    """``fold_in`` of keys ``(..., 2)`` and uint32 ``data`` broadcasting against
    ``keys.shape[:-1]``."""
    if keys.shape == (2,) and np.shape(data) == ():  # (one key, one number: no broadcasting)
        out = np.empty((1, 2), np.uint32)
        fold_in_words(
            np.ascontiguousarray(keys.reshape(1, 2), np.uint32),
            np.asarray(data, np.uint32).reshape(1),
            out,
        )
        return out.reshape(2)
    batch = np.broadcast_shapes(keys.shape[:-1], np.shape(data))
    flat = np.ascontiguousarray(np.broadcast_to(keys, batch + (2,)).reshape(-1, 2))
    d = np.ascontiguousarray(np.broadcast_to(data, batch).reshape(-1), np.uint32)
    out = np.empty((flat.shape[0], 2), np.uint32)
    fold_in_words(flat, d, out)
    return out.reshape(batch + (2,))


def _elementwise(kernel, x) -> np.ndarray:
    x = np.asarray(x, np.float32)
    flat = np.ascontiguousarray(x.reshape(-1))
    out = np.empty(flat.size, np.float32)
    kernel(flat, out)
    return out.reshape(x.shape)


def log_of(x) -> np.ndarray:
    """float32 ``log`` of ``x`` (any shape), one compiled pass."""
    return _elementwise(log_values, x)


def log1p_of(x) -> np.ndarray:
    """float32 ``log1p`` of ``x`` (any shape), one compiled pass."""
    return _elementwise(log1p_values, x)


def normal_of_words(words: np.ndarray) -> np.ndarray:
    w = np.ascontiguousarray(words, np.uint32).reshape(-1)
    out = np.empty(w.size, np.float32)
    normal_words(w, out)
    return out.reshape(np.shape(words))


def uniform_of_words(words: np.ndarray, lo: np.float32, hi: np.float32) -> np.ndarray:
    w = np.ascontiguousarray(words, np.uint32).reshape(-1)
    out = np.empty(w.size, np.float32)
    uniform_words(w, np.float32(lo), np.float32(np.float32(hi) - np.float32(lo)), out)
    return out.reshape(np.shape(words))


def load():
    """This module once its kernels are compiled (or loaded from the disk cache),
    or None when Numba is not available; compiling now lets a failure fall back."""
    w = np.zeros(1, np.uint32)
    normal_of_words(w)
    uniform_of_words(w, np.float32(0.0), np.float32(1.0))
    normal_keys(np.zeros((1, 2), np.uint32), (1,))
    bits32(np.zeros((1, 2), np.uint32), (3,), False)
    bits32(np.zeros((1, 2), np.uint32), (3,), True)
    split_keys(np.zeros((1, 2), np.uint32), (2,), True)
    log_of(np.ones(1, np.float32))
    log1p_of(np.ones(1, np.float32))
    split_keys(np.zeros((1, 2), np.uint32), (2,), False)
    fold_in_keys(np.zeros((1, 2), np.uint32), np.zeros(1, np.uint32))
    return sys.modules[__name__]
