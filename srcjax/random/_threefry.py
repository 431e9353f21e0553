"""The arithmetic of :mod:`srcjax.random`, in plain vectorised NumPy.

Everything here follows ``shared/prng/SPEC.md`` (section numbers below refer
to it): the threefry2x32 block function (§2), the two counter layouts (§5,
§6), the word -> float conversion (§7) and the float32 ``uniform`` / ``normal``
transforms with XLA:CPU's rounding (§8, §9), whose fused multiply-adds are
emulated exactly in float64 (§10).

Keys are uint32 arrays of shape ``(..., 2)``; every function takes a batch of
keys and returns one result per key (``keys.shape[:-1] + shape``), so the public
functions and the vmap batching rules share one implementation.
"""

from __future__ import annotations

import math
from typing import Tuple

import numpy as np

from ..primitives.lazy_kernels import LazyKernel

_U32 = np.uint32
_MASK = 0xFFFFFFFF
_ROT_A = (13, 15, 26, 6)
_ROT_B = (17, 29, 16, 24)
_PARITY = _U32(0x1BD11BDA)


# ------------------------------------------------------------------ compiled kernels
#: :mod:`srcjax.random._numba` when Numba is available and its kernels compiled,
#: else None (then everything here is NumPy); its loader is set by srcjax.random
#: (``_base``), which imports ``_numba`` lazily
KERNELS = LazyKernel("threefry and float32 transforms")
kernels = KERNELS.get
use_kernels = KERNELS.use  # (tests and the bench compare both paths)


# ------------------------------------------------------------------ threefry2x32 (§2)
def _rotl(v: np.ndarray, r: int) -> np.ndarray:
    return (v << _U32(r)) | (v >> _U32(32 - r))


def threefry2x32(k0, k1, x0, x1) -> Tuple[np.ndarray, np.ndarray]:
    """``(y0, y1)``: threefry2x32-20 of the counter words ``(x0, x1)`` under the key
    ``(k0, k1)``; all four are uint32 arrays that broadcast together."""
    k0_in, k1_in = k0, k1
    k0 = np.atleast_1d(np.asarray(k0, _U32))
    k1 = np.atleast_1d(np.asarray(k1, _U32))
    ks = (k0, k1, k0 ^ k1 ^ _PARITY)
    a, b = np.broadcast_arrays(np.asarray(x0, _U32) + k0, np.asarray(x1, _U32) + k1)
    a = a.copy()
    b = b.copy()
    for s in range(1, 6):
        for r in _ROT_A if s % 2 else _ROT_B:
            a += b
            b = _rotl(b, r)
            b ^= a
        a += ks[s % 3]
        b += ks[(s + 1) % 3] + _U32(s)
    shape = np.broadcast_shapes(np.shape(x0), np.shape(x1), np.shape(k0_in), np.shape(k1_in))
    return a.reshape(shape), b.reshape(shape)


def _key_words(keys: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    """The words of a batch of keys ``(..., 2)`` shaped ``(..., 1)`` to broadcast
    against a flat counter axis."""
    return keys[..., 0:1], keys[..., 1:2]


def hash_flat(keys: np.ndarray, m: int) -> np.ndarray:
    """Helper H of §2a on the counters ``iota(m)``: ``keys.shape[:-1] + (m,)`` words."""
    if m >= 2**32 - 1:
        raise NotImplementedError(
            "srcjax.random: the legacy threefry scheme for 2**32 - 1 or more words "
            "(SPEC.md §6) is not implemented"
        )
    k0, k1 = _key_words(keys)
    h = (m + 1) // 2
    c = np.arange(2 * h, dtype=_U32)
    if m % 2:
        c[-1] = 0  # the padding word
    y0, y1 = threefry2x32(k0, k1, c[:h], c[h:])
    return np.concatenate([y0, y1], axis=-1)[..., :m]


def _counters(n: int) -> Tuple[np.ndarray, np.ndarray]:
    i = np.arange(n, dtype=np.uint64)
    return (i >> np.uint64(32)).astype(_U32), (i & np.uint64(_MASK)).astype(_U32)


def _size(shape: tuple) -> int:
    n = 1
    for d in shape:
        n *= int(d)
    return n


# ------------------------------------------------------------------ split / fold_in (§4, §5)
def split(keys: np.ndarray, shape: tuple, partitionable: bool) -> np.ndarray:
    """``keys.shape[:-1] + shape + (2,)`` new keys."""
    n = _size(shape)
    batch = keys.shape[:-1]
    if 2 * n < 2**32 - 1:
        k = kernels()
        if k is not None:
            return k.split_keys(keys, tuple(shape), partitionable)
    if partitionable:
        hi, lo = _counters(n)
        k0, k1 = _key_words(keys)
        y0, y1 = threefry2x32(k0, k1, hi, lo)
        out = np.stack([y0, y1], axis=-1)
    else:
        out = hash_flat(keys, 2 * n)
    return out.reshape(batch + tuple(shape) + (2,))


def fold_in(keys: np.ndarray, data: np.ndarray) -> np.ndarray:
    """``threefry2x32(key, (0, data))`` for keys ``(..., 2)`` and uint32 ``data``
    broadcasting against ``keys.shape[:-1]``."""
    k = kernels()
    if k is not None:
        return k.fold_in_keys(keys, data)
    y0, y1 = threefry2x32(keys[..., 0], keys[..., 1], _U32(0), data)
    return np.stack([y0, y1], axis=-1)


# ------------------------------------------------------------------ random_bits (§6)
def bits(keys: np.ndarray, shape: tuple, width: int, partitionable: bool) -> np.ndarray:
    """``keys.shape[:-1] + shape`` random unsigned integers of ``width`` bits."""
    n = _size(shape)
    batch = keys.shape[:-1]
    out_dt = np.dtype(f"uint{width}")
    if width == 32 and n < 2**32 - 1:
        k = kernels()
        if k is not None:
            return k.bits32(keys, tuple(shape), partitionable)
    if partitionable:
        if n > 2**64:
            raise ValueError(f"srcjax.random: too many random bits requested ({n} > 2**64)")
        hi, lo = _counters(n)
        k0, k1 = _key_words(keys)
        y0, y1 = threefry2x32(k0, k1, hi, lo)
        if width == 64:
            out = (y0.astype(np.uint64) << np.uint64(32)) | y1.astype(np.uint64)
        else:
            out = (y0 ^ y1).astype(out_dt)  # the low bits
    elif width == 64:
        w = hash_flat(keys, 2 * n).astype(np.uint64)
        out = (w[..., :n] << np.uint64(32)) | w[..., n:]
    elif width == 32:
        out = hash_flat(keys, n)
    else:
        per = 32 // width
        w = hash_flat(keys, -(-n * width // 32))
        shifts = np.arange(per, dtype=_U32) * _U32(width)
        parts = (w[..., :, None] >> shifts) & _U32((1 << width) - 1)  # least significant first
        out = parts.reshape(batch + (-1,))[..., :n].astype(out_dt)
    return out.reshape(batch + tuple(shape))


# ------------------------------------------------------------------ exact fused multiply-add (§10)
def fma32(a, b, c) -> np.ndarray:
    """``fma(a, b, c)`` of float32 operands: the exact ``a*b + c`` rounded once to
    float32 (XLA:CPU contracts ``a*b + c`` into one FMA instruction).

    The product of two float32 values is exact in float64, so the float64 sum
    ``s = a*b + c`` carries one rounding; rounding ``s`` to float32 then rounds
    the exact value correctly unless ``s`` is inexact and lies exactly halfway
    between two float32 values (a double-rounding tie). Only those elements
    (low 29 mantissa bits ``1 << 28``; about one in 2**29 of uniform draws),
    and those near or in float32's subnormal range (fewer mantissa bits), take
    :func:`_fma32_round_odd`, the exact algorithm; the rest round as they are.
    Measured on 4M elements: 32 -> 7 ms per call (srcjax.random.normal of
    2048x2048 from 1.6 s to ~0.4 s)."""
    a = np.asarray(a, np.float32)
    b = np.asarray(b, np.float32)
    c = np.asarray(c, np.float32)
    if a.size <= _FMA_CHUNK and b.size <= _FMA_CHUNK and c.size <= _FMA_CHUNK:
        return _fma32_block(a, b, c)
    shape = np.broadcast_shapes(a.shape, b.shape, c.shape)
    a, b, c = (np.broadcast_to(v, shape).reshape(-1) for v in (a, b, c))
    out = np.empty(a.size, np.float32)
    for lo in range(0, a.size, _FMA_CHUNK):  # the passes stay in cache
        hi = lo + _FMA_CHUNK
        out[lo:hi] = _fma32_block(a[lo:hi], b[lo:hi], c[lo:hi])
    return out.reshape(shape)


def _fma32_block(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> np.ndarray:
    """:func:`fma32` of one chunk: round the float64 sum, then redo the suspects."""
    s = np.add(np.multiply(a, b, dtype=np.float64), c)
    shape = s.shape
    s = np.atleast_1d(s)
    out = s.astype(np.float32)
    suspect = (s.view(np.int64) & 0x1FFFFFFF) == 0x10000000
    suspect |= np.abs(s) < 2.0**-125  # float32 subnormal range: fewer bits, other ties
    if suspect.any():
        ops = (np.broadcast_to(v, s.shape)[suspect] for v in (a, b, c))
        out[suspect] = _fma32_round_odd(*ops)
    return out.reshape(shape)


#: elements per chunk of :func:`fma32` (float64 scratch of 256 KiB: L2-resident)
_FMA_CHUNK = 32768


def _fma32_round_odd(a, b, c) -> np.ndarray:
    """:func:`fma32` for any operands (the slow, general path): the sum is
    rounded to odd in float64 (TwoSum, then one ulp toward the error where the
    last bit is even), which makes the final rounding to float32 a single
    correct rounding."""
    p = np.multiply(a, b, dtype=np.float64)
    c = np.asarray(c, np.float64)
    s = p + c
    with np.errstate(invalid="ignore"):  # (inf - inf in err, unused for an inf sum)
        bb = s - p
        err = (p - (s - bb)) + (c - bb)
    s = np.atleast_1d(s)
    w = s.view(np.int64)
    # inexact with an even last bit: step one ulp toward the error (s != 0 here);
    # an infinite sum is exact as it is (its err is NaN: helper N, uniform with
    # maxval=inf gave NaN)
    fix = np.isfinite(s) & (err != 0) & ((w & 1) == 0)
    w += fix * np.where((s < 0) == (err < 0), 1, -1)
    return s.astype(np.float32).reshape(np.shape(p))


def _f32(bits: int) -> np.float32:
    return np.array(bits, np.uint32).view(np.float32)[()]


def _f32s(words) -> Tuple[np.float32, ...]:
    return tuple(_f32(w) for w in words)


# ------------------------------------------------------------------ chunked evaluation
#: elements per chunk of the elementwise float32 functions below: their dozens of
#: passes then run over L2-resident temporaries (srcjax.random.normal of 2048x2048:
#: ~0.45 -> ~0.2 s)
_ELEMENTWISE_CHUNK = 65536


def _by_chunks(fn):
    """``fn`` (float32 array -> float32 array of the same shape, elementwise) applied
    to chunks of a large input; small inputs go straight through."""

    def chunked(x):
        x = np.asarray(x, np.float32)
        n = x.size
        if n <= _ELEMENTWISE_CHUNK:
            return fn(x)
        flat = x.reshape(-1)
        out = np.empty(n, np.float32)
        for lo in range(0, n, _ELEMENTWISE_CHUNK):
            hi = min(n, lo + _ELEMENTWISE_CHUNK)
            out[lo:hi] = fn(flat[lo:hi])
        return out.reshape(x.shape)

    chunked.__name__ = fn.__name__
    chunked.__doc__ = fn.__doc__
    return chunked


# ------------------------------------------------------------------ word -> float (§7)
def unit_float32(words: np.ndarray) -> np.ndarray:
    """``(bits >> 9) * 2**-23`` in ``[0, 1)``, float32."""
    return ((words >> _U32(9)) | _U32(0x3F800000)).view(np.float32) - np.float32(1.0)


def unit_float64(words: np.ndarray) -> np.ndarray:
    """``(bits >> 12) * 2**-52`` in ``[0, 1)``, float64, from 64-bit words."""
    v = (words >> np.uint64(12)) | np.uint64(0x3FF0000000000000)
    return v.view(np.float64) - 1.0


# ------------------------------------------------------------------ log32 / log1p32 / erfinv32 (§9)
_LOG_P = _f32s(
    (
        0x3D9021BB,
        0xBDEBD1B8,
        0x3DEF251A,
        0xBDFE5D4F,
        0x3E11E9BF,
        0xBE2AAE50,
        0x3E4CCEAC,
        0xBE7FFFFC,
        0x3EAAAAAA,
    )
)
_LOG_Q1 = _f32(0xB95E8083)
_LOG_Q2 = _f32(0x3F318000)
_SQRTHF = _f32(0x3F3504F3)
_HALF = np.float32(-0.5)


def log32(y: np.ndarray) -> np.ndarray:
    """XLA:CPU's float32 ``log`` (Cephes/Eigen style), bit for bit (SPEC.md §9):
    one compiled pass when the kernels are available (gumbel/categorical, the
    exponential, gamma and discrete samplers call it on small arrays)."""
    k = kernels()
    if k is not None:
        return k.log_of(y)
    return _log32_np(y)


def log1p32(t: np.ndarray) -> np.ndarray:
    """XLA:CPU's float32 ``log1p`` (jaxlib 0.10.2), bit for bit (SPEC.md §9)."""
    k = kernels()
    if k is not None:
        return k.log1p_of(t)
    return _log1p32_np(t)


@_by_chunks
def _log32_np(y: np.ndarray) -> np.ndarray:
    """:func:`log32` in NumPy."""
    y = np.asarray(y, np.float32)
    yc = np.maximum(y, np.float32(2.0**-126))
    u = yc.view(np.uint32)
    e = ((u >> _U32(23)) & _U32(0xFF)).astype(np.int32) - 127
    e = e.astype(np.float32) + np.float32(1.0)
    m = ((u & _U32(0x807FFFFF)) | _U32(0x3F000000)).view(np.float32)
    low = m < _SQRTHF
    e = np.where(low, e - np.float32(1.0), e)
    x = (m - np.float32(1.0)) + np.where(low, m, np.float32(0.0))
    x2 = x * x
    x3 = x2 * x
    p = _LOG_P
    a = fma32(fma32(p[0], x, p[1]), x, p[2])
    b = fma32(fma32(p[3], x, p[4]), x, p[5])
    c = fma32(fma32(p[6], x, p[7]), x, p[8])
    yy = fma32(a, x3, b)
    yy = fma32(yy, x3, c)
    yy = fma32(yy, x3, e * _LOG_Q1)
    r = fma32(_HALF, x2, x)
    out = fma32(_LOG_Q2, e, r + yy)
    with np.errstate(invalid="ignore"):
        out = np.where(y == 0, np.float32(-np.inf), out)
        out = np.where(y == np.inf, np.float32(np.inf), out)
        out = np.where((y < 0) | np.isnan(y), np.float32(np.nan), out)
    return out.astype(np.float32)


_L1P_N = _f32s((0x383DE04B, 0x3EFF40C5, 0x40D284FA, 0x41EF4B9C, 0x4273CC76, 0x426473AD, 0x41A05101))
_L1P_D = (np.float32(1.0),) + _f32s(
    (0x417101AD, 0x42A6185B, 0x435DC32D, 0x439A8CA3, 0x43586D8A, 0x42707982)
)
_L1P_SMALL = _f32(0x3ED413CD)


@_by_chunks
def _log1p32_np(t: np.ndarray) -> np.ndarray:
    """:func:`log1p32` in NumPy."""
    t = np.asarray(t, np.float32)
    tiny = np.abs(t) < np.float32(2.0**-126)
    t = np.where(tiny, np.float32(0.0) * t, t)  # denormals flush to zero
    small = np.abs(t) < _L1P_SMALL
    out = np.empty(t.shape, np.float32)
    if np.any(small):
        ts = t[small]
        t2 = ts * ts
        num = np.full(ts.shape, _L1P_N[0], np.float32)
        den = np.full(ts.shape, _L1P_D[0], np.float32)
        for k in range(1, 7):
            num = fma32(num, ts, _L1P_N[k])
            den = fma32(den, ts, _L1P_D[k])
        q = (ts * t2) * (num / den)
        out[small] = ts + fma32(_HALF, t2, q)
    big = ~small
    if np.any(big):
        out[big] = _log32_np(t[big] + np.float32(1.0))
    return out


_ERFINV_CS = _f32s(
    (
        0x32F16588,
        0x34B84B36,
        0xB66C7357,
        0xB6935AC1,
        0x396532DB,
        0xBAA45408,
        0xBB88E4EF,
        0x3E7C8F63,
        0x3FC02E2F,
    )
)
_ERFINV_CL = _f32s(
    (
        0xB951F09B,
        0x38D3B56B,
        0x3AB0DC72,
        0xBB70BDE7,
        0x3BBC127B,
        0xBBF9C5D7,
        0x3C1AA57E,
        0x3F8036DB,
        0x40354F7E,
    )
)


@_by_chunks
def erfinv32(x: np.ndarray) -> np.ndarray:
    """XLA's float32 ``erf_inv`` (Giles' approximation, FMA Horner steps), bit for
    bit with jaxlib 0.10.2 on CPU (SPEC.md §9)."""
    x = np.asarray(x, np.float32)
    w = -log1p32(-(x * x))
    small = w < np.float32(5.0)
    with np.errstate(invalid="ignore"):
        t = np.where(small, w - np.float32(2.5), np.sqrt(w) - np.float32(3.0))
    p = np.where(small, _ERFINV_CS[0], _ERFINV_CL[0]).astype(np.float32)
    for k in range(1, 9):
        p = fma32(p, t, np.where(small, _ERFINV_CS[k], _ERFINV_CL[k]).astype(np.float32))
    out = p * x
    return np.where(np.abs(x) == np.float32(1.0), x * np.float32(np.inf), out)


# ------------------------------------------------------------------ uniform / normal (§8, §9)
def uniform32(words: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``max(lo, fma(f, hi - lo, lo))`` with ``f`` from §7 (float32 throughout)."""
    lo = np.asarray(lo, np.float32)
    hi = np.asarray(hi, np.float32)
    if lo.ndim == 0 and hi.ndim == 0:
        k = kernels()
        if k is not None:
            return k.uniform_of_words(words, lo[()], hi[()])
    span = hi - lo
    f = unit_float32(words)
    return np.maximum(lo, fma32(f, span, lo))


def uniform_half(words: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """float16 or bfloat16 ``uniform`` (the dtype is ``lo``'s) from uint16
    ``words`` (16 random bits for float16, 8 for bfloat16): the top mantissa-width
    bits as ``1.f - 1``, then ``max(lo, f * (hi - lo) + lo)`` with a rounding to
    the dtype after each operation, as XLA:CPU computes in float32 one
    operation at a time. bfloat16 matched bit for bit with JAX 0.10.2 on 20,000
    draws over five ranges (2026-12-06). float16 was matched on 20,000 draws on
    a host without AVX512-FP16 (2026-12-01); on a host with it, XLA:CPU fuses
    ``f * span + lo`` (one rounding) and JAX's draws differ by 1 ulp in about
    half of them for ranges other than [0, 1)."""
    d = lo.dtype
    lo = np.asarray(lo, d)
    hi = np.asarray(hi, d)
    nmant = 10 if d == np.dtype(np.float16) else 7
    width = 16 if nmant == 10 else 8
    one = np.array(1, d).view(np.uint16)
    bits = (words.astype(np.uint16) >> np.uint16(width - nmant)) | one
    f = (bits.view(d) - d.type(1)).astype(d)
    span = (hi - lo).astype(d)
    return np.maximum(lo, ((f * span).astype(d) + lo).astype(d))


def normal_half(words: np.ndarray, d: np.dtype) -> np.ndarray:
    """float16 or bfloat16 ``normal``: a uniform (:func:`uniform_half`) in
    ``(nextafter(-1, 0), 1)``, float32 ``erf_inv`` of it rounded to ``d``, times
    ``sqrt(2)`` rounded to ``d``, the product rounded to ``d``."""
    lo = (np.array(-1, d).view(np.uint16) - np.uint16(1)).view(d)  # nextafter(-1, 0)
    u = uniform_half(words, lo, np.array(1, d))
    e = erfinv32(u.astype(np.float32)).astype(d)
    return (np.array(np.sqrt(2), d) * e).astype(d)


_NORMAL_LO = _f32(0xBF7FFFFF)
_SQRT2 = _f32(0x3FB504F3)


def normal32(words: np.ndarray) -> np.ndarray:
    """``sqrt(2) * erfinv(uniform(nextafter(-1, 0), 1))`` in float32 (§9)."""
    k = kernels()
    if k is not None:
        return k.normal_of_words(words)
    u = uniform32(words, _NORMAL_LO, np.float32(1.0))
    return (_SQRT2 * erfinv32(u)).astype(np.float32)


# ------------------------------------------------------------------ float64
def _two_sum(a: np.ndarray, b: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split53(a: np.ndarray) -> Tuple[np.ndarray, np.ndarray]:
    c = 134217729.0 * a  # 2**27 + 1 (Veltkamp)
    hi = c - (c - a)
    return hi, a - hi


def _round_odd_sum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    s, err = _two_sum(a, b)
    fix = (err != 0) & ((s.view(np.uint64) & np.uint64(1)) == 0)
    return np.where(fix, np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)


def fma64(a, b, c) -> np.ndarray:
    """``fma(a, b, c)`` of float64 operands, correctly rounded (Dekker's exact
    product, then Boldo and Melquiond's emulation with a sum rounded to odd).
    Exact for finite operands whose product neither overflows nor underflows;
    others take the plain ``a*b + c``."""
    a, b, c = np.broadcast_arrays(*(np.asarray(v, np.float64) for v in (a, b, c)))
    with np.errstate(over="ignore", invalid="ignore"):
        uh = a * b
        ah, al = _split53(a)
        bh, bl = _split53(b)
        ul = ((ah * bh - uh) + ah * bl + al * bh) + al * bl
        th, tl = _two_sum(c, uh)
        v = _round_odd_sum(tl, ul)
        z = th + v
        plain = uh + c
    ok = np.isfinite(z) & np.isfinite(ul) & ((uh == 0) | (np.abs(uh) > 2.0**-900))
    return np.where(ok, z, plain)


def uniform64(words: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """``max(lo, fma(f, hi - lo, lo))`` in float64, ``f`` from 64-bit words."""
    lo = np.asarray(lo, np.float64)
    hi = np.asarray(hi, np.float64)
    f = unit_float64(words)
    return np.maximum(lo, fma64(f, hi - lo, lo))


# XLA:CPU's float64 log1p (jaxlib 0.10.2): the Cephes rational (in float64, the
# same coefficients as _L1P_N/_L1P_D before their rounding to float32) with fused
# Horner steps below sqrt(2) - 1, log(1 + t) above. Bit for bit on 4e5 samples of
# exponential/laplace recorded from JAX; without the FMAs 1.5% differ by 1 ulp.
_L1P_N64 = (
    4.5270000862445199635215e-5,
    4.9854102823193375972212e-1,
    6.5787325942061044846969e0,
    2.9911919328553073277375e1,
    6.0949667980987787057556e1,
    5.7112963590585538103336e1,
    2.0039553499201281259648e1,
)
_L1P_D64 = (
    1.0,
    1.5062909083469192043167e1,
    8.3047565967967209469434e1,
    2.2176239823732856465394e2,
    3.0909872225312059774938e2,
    2.1642788614495947685003e2,
    6.0118660497603843919306e1,
)
_L1P_SMALL64 = 0.41421356237309504880


def log64(y) -> np.ndarray:
    """XLA:CPU's float64 ``log``: the C library's ``log`` (glibc's; ``math.log``),
    bit for bit with jaxlib 0.10.2 on 6e5 uniform arguments, where NumPy's own
    SIMD ``log`` differs by 1 ulp on 0.3% of them. ``log(0) = -inf``, NaN below 0."""
    y = np.asarray(y, np.float64)
    flat = y.reshape(-1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log(flat)  # (the special values: 0, negative, inf, nan)
    ok = np.isfinite(flat) & (flat > 0)
    vals = flat[ok].tolist()
    out[ok] = np.fromiter(map(math.log, vals), np.float64, len(vals))
    return out.reshape(y.shape)


def log1p64(t) -> np.ndarray:
    """XLA:CPU's float64 ``log1p`` (jaxlib 0.10.2), bit for bit: for ``|t| <
    sqrt(2) - 1``, ``t + fma(-0.5, t*t, (t * t*t) * (N(t) / D(t)))`` with the
    Cephes polynomials evaluated by fused Horner steps; else ``log64(t + 1)``."""
    t = np.asarray(t, np.float64)
    out = np.empty_like(t)
    small = np.abs(t) < _L1P_SMALL64
    big = ~small
    if big.any():
        out[big] = log64(t[big] + 1.0)
    if small.any():
        ts = t[small]
        t2 = ts * ts
        num = np.full_like(ts, _L1P_N64[0])
        den = np.full_like(ts, _L1P_D64[0])
        for k in range(1, 7):
            num = fma64(num, ts, _L1P_N64[k])
            den = fma64(den, ts, _L1P_D64[k])
        q = (ts * t2) * (num / den)
        out[small] = ts + fma64(-0.5, t2, q)
    return out
