"""More of XLA:CPU's float32 arithmetic, for the samplers in :mod:`._dists`.

What jaxlib 0.10.2's CPU compiler emits, found by reading the LLVM IR it
dumps (``XLA_FLAGS=--xla_dump_to=DIR``) and checked against ``jax.numpy`` on
millions of inputs:

- ``exp``: a Cephes-style polynomial inlined by XLA (Cody-Waite reduction with
  fused multiply-adds, results below ``2**-126`` flushed to zero);
- ``erf``: XLA's rational approximation on ``[-3.7439, 3.7439]`` (FMA Horner
  steps, one division);
- ``tan`` and ``pow``: calls of the C library's ``tanf`` / ``powf``. They are
  called here too (through :mod:`ctypes`), so the values are those JAX gives
  with the same C library.

The backend fuses a multiply whose only use is an add or subtract into one
fused multiply-add; :func:`fma32` (from :mod:`._threefry`) emulates those.
"""

from __future__ import annotations

import ctypes
import ctypes.util

import numpy as np

from ._threefry import _f32, _f32s, fma32

_F = np.float32


# ------------------------------------------------------------------ exp
_EXP_P = tuple(
    _F(c)
    for c in (
        1.9875691500e-4,
        1.3981999507e-3,
        8.3334519073e-3,
        4.1665795894e-2,
        1.6666665459e-1,
        5.0000001201e-1,
    )
)
_LOG2E = _F(1.44269504088896341)
_C1 = _F(-0.693359375)
_C2 = _F(2.12194440e-4)


def exp32(x) -> np.ndarray:
    """XLA:CPU's float32 ``exp``, bit for bit (jaxlib 0.10.2)."""
    x = np.asarray(x, _F)
    xc = np.clip(x, _F(-87.8), _F(88.8))
    n = np.floor(fma32(xc, _LOG2E, _F(0.5)))
    n = np.clip(n, _F(-127.0), _F(127.0)).astype(_F)
    r = fma32(n, _C1, xc)
    r = fma32(n, _C2, r)
    z = fma32(r, _EXP_P[0], _EXP_P[1])
    for c in _EXP_P[2:]:
        z = fma32(z, r, c)
    z = fma32(z, (r * r).astype(_F), r)
    z = (_F(1.0) + z).astype(_F)
    scale = ((n.astype(np.int32) + 127) << 23).astype(np.int32).view(_F)
    with np.errstate(over="ignore", invalid="ignore"):
        out = (z * scale).astype(_F)
    out = np.where(np.abs(out) < _F(2.0**-126), _F(0.0), out)  # flushed to zero
    return np.where(np.isnan(x), x, out).astype(_F)


# ------------------------------------------------------------------ erf
_ERF_CLAMP = _f32(0x406F9C68)
_ERF_BIG = _f32(0x407547CB)
_ERF_N = _f32s((0x39702D51, 0x3B5F5DA2, 0x3D50B6EB, 0x3E3DA740, 0x3F906EBA))
_ERF_D = _f32s((0xB3FD3906, 0x37C588DF, 0x3A856D28, 0x3C6687D4, 0x3DE34C21, 0x3EFEB44A))


def erf32(x, scalar: bool = False) -> np.ndarray:
    """XLA:CPU's float32 ``erf`` (a rational approximation), bit for bit.

    XLA emits two variants: vectorised code evaluates the rational function up
    to ``|x| < 3.832`` (``±1`` beyond); the scalar code of a fusion over a 0-d
    value first clamps ``x`` to ``±3.7439`` and gives ``±1`` from there on
    (``scalar=True``). They differ only for ``3.7439 <= |x| < 3.832``."""
    x = np.asarray(x, _F)
    lim = _ERF_CLAMP if scalar else _ERF_BIG
    big = np.abs(x) >= lim
    xc = np.clip(x, -_ERF_CLAMP, _ERF_CLAMP) if scalar else x
    x2 = (xc * xc).astype(_F)
    p = fma32(x2, _ERF_N[0], _ERF_N[1])
    for c in _ERF_N[2:]:
        p = fma32(p, x2, c)
    num = (xc * p).astype(_F)
    q = fma32(x2, _ERF_D[0], _ERF_D[1])
    for c in _ERF_D[2:] + (_F(1.0),):
        q = fma32(q, x2, c)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        out = (num / q).astype(_F)
    return np.where(big, np.copysign(_F(1.0), x), out).astype(_F)


# ------------------------------------------------------------------ libm tanf / powf
_LIBM = None


def _libm():
    global _LIBM
    if _LIBM is None:
        name = ctypes.util.find_library("m") or "libm.so.6"
        try:
            lib = ctypes.CDLL(name)
            for fn, nargs in (("tanf", 1), ("powf", 2)):
                f = getattr(lib, fn)
                f.restype = ctypes.c_float
                f.argtypes = [ctypes.c_float] * nargs
            _LIBM = (np.frompyfunc(lib.tanf, 1, 1), np.frompyfunc(lib.powf, 2, 1))
        except (OSError, AttributeError):  # no C library math: NumPy's (may differ by an ulp)
            _LIBM = (None, None)
    return _LIBM


def tanf(x) -> np.ndarray:
    """The C library's float32 ``tanf``, which XLA:CPU calls for ``tan``."""
    x = np.asarray(x, _F)
    f = _libm()[0]
    if f is None or x.size == 0:
        return np.tan(x).astype(_F)
    return np.asarray(f(x), dtype=_F).reshape(x.shape)


def powf(x, y) -> np.ndarray:
    """The C library's float32 ``powf``, which XLA:CPU calls for ``pow``."""
    x, y = np.broadcast_arrays(np.asarray(x, _F), np.asarray(y, _F))
    f = _libm()[1]
    if f is None or x.size == 0:
        with np.errstate(all="ignore"):
            return np.power(x, y).astype(_F)
    return np.asarray(f(x, y), dtype=_F).reshape(x.shape)
