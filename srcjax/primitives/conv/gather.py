"""The canonical convolution without groups as one gather and one GEMM.

The index of every (output position, window offset) pair in the flattened,
channels-last input is computed once per geometry (shapes, strides, padding,
dilations) and kept: padding, the holes of an lhs dilation and cropped places
all read one zero row appended to the input. A call then copies the input
channels-last next to that zero row, gathers the ``(N * M, K * C)`` patch
matrix with one ``np.take`` and multiplies it by the ``(K * C, O)`` kernel:
no per-call padding, dilation or ``sliding_window_view`` (R8's small CNN: five
convolutions of 8x8 images a step, each ~55 us of Python-level work that way,
against the few microseconds of their arithmetic).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from .plans import _conv_out_spatial

#: patch matrices of at most this many elements are gathered so: below it a
#: call's Python-level work dominates; above it :func:`canonical._conv_impl`'s
#: layouts (a (32, 3, 32, 32) batch with 16 3x3 filters took ~10x longer as
#: one (N*M, K*C) GEMM: OpenBLAS on a skinny (32768, 27) x (27, 16) product)
GATHER_MAX = 1 << 15


@lru_cache(maxsize=256)
def gather_plan(lshape, rshape, ldt, rdt, strides, padding, ldil, rdil, fgc, bgc):
    """What :func:`conv_by_gather` needs for this geometry, kept; None where it
    does not apply (groups, operands of different dtypes or other than 32/64-bit
    floats and complex, an empty result, a patch matrix over ``GATHER_MAX``).
    TypeError for unhashable options (lists)."""
    if fgc != 1 or bgc != 1 or ldt != rdt or ldt.kind not in "fc" or ldt.itemsize < 4:
        return None
    n, c = lshape[:2]
    o = rshape[0]
    sp, ks = tuple(lshape[2:]), tuple(rshape[2:])
    out_sp = _conv_out_spatial(sp, ks, strides, padding, ldil, rdil)
    m, kk, size = math.prod(out_sp), math.prod(ks), math.prod(sp)
    if rshape[1] != c or 0 in (n, c, o, m, kk) or n * m * kk * c > GATHER_MAX:
        return None
    nsp = len(sp)
    index = _gather_index(
        sp,
        ks,
        tuple(int(s) for s in strides),
        tuple((int(lo), int(hi)) for lo, hi in padding),
        tuple(int(d) for d in ldil),
        tuple(int(r) for r in rdil),
        out_sp,
    )
    return (
        (n, size + 1, c),  # the channels-last input and its zero row
        (n,) + sp + (c,),
        (0,) + tuple(range(2, 2 + nsp)) + (1,),  # lhs to channels last
        index,
        (n * m, kk * c),
        tuple(range(2, 2 + nsp)) + (1, 0),  # rhs to (*K, C, O)
        (kk * c, o),
        (n,) + out_sp + (o,),
        (0, 1 + nsp) + tuple(range(1, 1 + nsp)),  # the result to (N, O, *out)
    )


def _gather_index(sp, ks, strides, padding, ldil, rdil, out_sp):
    """``(M * K,)`` intp: for output position ``m`` (row-major over ``out_sp``)
    and window offset ``k`` (row-major over ``ks``), the flat spatial index of
    the input element under it, or ``prod(sp)`` (the zero row) where that is
    padding or a hole of the lhs dilation. Read only."""
    nsp = len(sp)
    size = math.prod(sp)
    flat = np.zeros(out_sp + ks, np.intp)
    valid = np.ones(out_sp + ks, bool)
    for d in range(nsp):
        o = np.arange(out_sp[d]) * strides[d]
        k = np.arange(ks[d]) * rdil[d]
        q = o[:, None] + k[None, :] - padding[d][0]  # place in the dilated input
        src, rem = np.divmod(q, ldil[d])
        ok = (q >= 0) & (rem == 0) & (src < sp[d])
        shape = [1] * (2 * nsp)
        shape[d], shape[nsp + d] = out_sp[d], ks[d]
        stride = math.prod(sp[d + 1 :])
        flat = flat + (np.where(ok, src, 0) * stride).reshape(shape)
        valid = valid & ok.reshape(shape)
    idx = np.where(valid, flat, size).reshape(-1)
    idx.flags.writeable = False
    return idx


def conv_by_gather(x, w, plan):
    """``ad.conv`` of ``x`` ``(N, C, *S)`` and ``w`` ``(O, C, *K)`` by ``plan``
    (:func:`gather_plan`): ``(N, O, *out)``, a view of the GEMM's ``(N, *out,
    O)`` result."""
    zshape, xshape, xperm, index, cshape, wperm, fshape, yshape, yperm = plan
    xz = np.empty(zshape, x.dtype)
    size = zshape[1] - 1
    xz[:, size] = 0
    np.copyto(xz[:, :size].reshape(xshape), x.transpose(xperm))
    cols = np.take(xz, index, axis=1).reshape(cshape)
    y = np.matmul(cols, w.transpose(wperm).reshape(fshape))
    return y.reshape(yshape).transpose(yperm)
