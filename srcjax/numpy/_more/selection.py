"""``jax.numpy`` ``choose``/``compress``/``extract``/``place``/``put``/
``put_along_axis``, cumulative products, ``matvec``/``vecmat``, bit packing and
the window functions, as compositions of primitives."""

from __future__ import annotations

import builtins as _builtins
import operator as _operator

import numpy as _np

from ... import dtypes as _dt
from ...primitives.ad import (
    broadcast_to,
    default_int,
    expand_dims,
    moveaxis,
    reshape,
    sum,
    zeros_like,
)
from ...primitives.creation import arange, asarray, ones, ones_like, shape, size, zeros
from ...primitives.elementwise import abs as _abs
from ...primitives.elementwise import bitwise_and as _bitwise_and
from ...primitives.elementwise import clip, conj, cos, remainder, sqrt, where
from ...primitives.elementwise import left_shift as _left_shift
from ...primitives.linalg import matmul
from ...primitives.more import i0
from ...primitives.reductions import cumprod as _cumprod
from ...primitives.setops import flatnonzero as _flatnonzero
from ...primitives.structural import at_set as _at_set
from ...primitives.structural import concatenate, flip, ravel, sort, stack, take, take_along_axis
from .._functions import iscomplexobj
from ._static import _checker, _static, broadcast_shapes_of, dtype_kind, norm_axis, shapes_broadcast
from .indexing import unravel_index

# ---------------------------------------------------------------------------
# choose / compress / extract / place / put / put_along_axis


def sort_complex(a):
    """``a`` sorted along its last axis (real parts first, then imaginary ones)
    as a complex array (jax.numpy.sort_complex): complex64 for float32 and
    smaller or integer input, complex128 for float64 (x64). Differentiable as
    ``jnp.sort``."""
    kind = dtype_kind(a)
    wide = kind in "fc" and _np.dtype(_dt.dtype_of(a)).itemsize >= (8 if kind == "f" else 16)
    return asarray(sort(a, axis=-1), dtype=_np.complex128 if wide else _np.complex64)


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` elementwise (jax.numpy.choose): ``a`` an int array
    and ``choices`` a sequence of arrays, all broadcast together. ``mode``:
    ``"raise"`` (ValueError for an index outside ``[0, len(choices))``),
    ``"wrap"`` or ``"clip"``. Dtype: the choices' promotion. Differentiable in
    the choices. Raises ValueError for a non-integer ``a`` or an unknown mode;
    ``out`` raises NotImplementedError."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a = asarray(a)
    if dtype_kind(a) not in "iu":
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        _choose_check(a, n)
    elif mode == "wrap":
        a = remainder(a, n)
    elif mode == "clip":
        a = clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    cs = [asarray(c) for c in choices]
    s = broadcast_shapes_of([shape(a)] + [shape(c) for c in cs])
    stacked = stack([broadcast_to(c, s) for c in cs], 0)
    idx = expand_dims(broadcast_to(a, s), 0)
    return take_along_axis(stacked, idx, 0)[0]


def _choose_check_impl(a, n):
    """choose(mode="raise")'s check of the index values."""
    a = _np.asarray(a)
    if _np.any((a < 0) | (a >= n)):
        raise ValueError("invalid entry in choice array")
    return True


_choose_check = _checker("ad.more_choose_check", _choose_check_impl)


def compress(condition, a, axis=None, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` (flattened for None) where the 1-D
    ``condition`` is true (jax.numpy.compress). Without ``size`` the length
    is the number of true entries (read at run time); with ``size`` the
    selected slices come first and the rest is ``fill_value`` (JAX's rule;
    needed under vmap). Dtype ``a``'s; differentiable in ``a``. Raises
    ValueError for a condition that is not 1-D, true entries beyond ``a``'s
    length (without ``size``) or a ``size`` out of range; ``out`` raises
    NotImplementedError."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    c = asarray(asarray(condition), dtype=bool)
    if len(shape(c)) != 1:
        raise ValueError("condition must be a 1D array")
    arr = asarray(a)
    if axis is None:
        axis = 0
        arr = ravel(arr)
    else:
        arr = moveaxis(arr, axis, 0)
    m = _builtins.min(shape(c)[0], shape(arr)[0])
    extra = c[m:]
    c = c[:m]
    arr = arr[:m]
    if size is not None and not 0 <= size <= shape(arr)[0]:
        raise ValueError(
            "size must be positive and not greater than the size of the array axis;"
            f" got size={size} for a.shape[axis]={shape(arr)[0]}"
        )
    # one call for both cases (vmap sees the branch not taken too)
    idx = _flatnonzero(c, size=size, fill_value=0)
    if size is None:
        _compress_check(extra)
        result = take(arr, idx, axis=0)
    else:
        rows = take(arr, idx, axis=0)
        count = sum(c, dtype=default_int())
        keep = reshape(arange(size) < count, (size,) + (1,) * (len(shape(arr)) - 1))
        result = where(keep, rows, asarray(fill_value, dtype=arr.dtype))
    return moveaxis(result, 0, axis)


def _compress_check_impl(extra):
    """compress's check that no true condition entry is beyond the array."""
    if _np.any(extra):
        raise ValueError("condition contains entries that are out of bounds")
    return True


_compress_check = _checker("ad.more_compress_check", _compress_check_impl)


def extract(condition, arr, size=None, fill_value=0):
    """The elements of ``arr`` where ``condition`` is true, flattened
    (jax.numpy.extract): ``compress(ravel(condition), ravel(arr), size=size,
    fill_value=fill_value)``."""
    return compress(ravel(asarray(condition)), ravel(asarray(arr)), None, size, fill_value)


def place(arr, mask, vals, inplace=True):
    """A copy of ``arr`` whose elements where ``mask`` is true are replaced by
    ``vals`` in order, repeated as needed (jax.numpy.place with
    ``inplace=False``). Shape and dtype ``arr``'s; differentiable in ``arr``
    and ``vals``. Raises ValueError with ``inplace=True`` (JAX arrays are
    immutable), for ``mask`` of another size or empty ``vals``."""
    data = asarray(arr)
    m = asarray(mask)
    v = ravel(asarray(vals))
    if inplace:
        raise ValueError(
            "jax.numpy.place cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array."
        )
    if size(data) != size(m):
        raise ValueError("place: arr and mask must be the same size")
    if size(v) == 0:
        raise ValueError("Cannot place values from an empty array")
    n = size(data)
    if n == 0:
        return data
    idx = _flatnonzero(ravel(m), size=n, fill_value=n)
    vt = take(asarray(v, dtype=data.dtype), remainder(arange(n), size(v)))
    ext = concatenate([ravel(data), zeros((1,), dtype=data.dtype)])
    return reshape(_at_set(ext, idx, vt)[:n], shape(data))


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """A copy of ``a`` with its main diagonal set to ``val`` (flattened and
    repeated as needed, cast to ``a``'s dtype) (jax.numpy.fill_diagonal with
    ``inplace=False``). ``a``: 2-d, or n-d with all dimensions equal.
    Differentiable in ``a`` and ``val``. Raises NotImplementedError with
    ``inplace=True`` (JAX arrays are immutable) or ``wrap=True``, as JAX."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented, must use wrap=False")
    arr = asarray(a)
    dims = shape(arr)
    if len(dims) < 2:
        raise ValueError("array must be at least 2-d")
    if len(dims) > 2 and len(set(dims)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = _builtins.min(dims)
    step = 0  # the flat distance between (i, i, ...) and (i + 1, i + 1, ...)
    for k in range(len(dims)):
        step = step * dims[k] + 1
    vv = ravel(asarray(val))
    if n == 0 or size(vv) == 0:
        return arr
    vt = take(asarray(vv, dtype=arr.dtype), remainder(arange(n), size(vv)))
    return reshape(_at_set(ravel(arr), arange(n) * step, vt), dims)


def put(a, ind, v, mode=None, inplace=True):
    """A copy of ``a`` with the flat positions ``ind`` set to ``v`` (repeated as
    needed) (jax.numpy.put with ``inplace=False``). ``mode``: None (indices
    mapped through ``unravel_index``, so out-of-range ones are clipped per
    axis, as JAX), ``"clip"`` or ``"wrap"``. Shape and dtype ``a``'s;
    differentiable in ``a`` and ``v``. Raises ValueError with ``inplace=True``
    or an unknown mode, NotImplementedError for ``mode="raise"``."""
    if inplace:
        raise ValueError(
            "jax.numpy.put cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array."
        )
    arr = asarray(a)
    i = ravel(asarray(ind))
    vv = ravel(asarray(v))
    if size(arr) == 0 or size(i) == 0 or size(vv) == 0:
        return arr
    vv = take(asarray(vv, dtype=arr.dtype), remainder(arange(size(i)), size(vv)))
    if mode is None:
        pass
    elif mode == "clip":
        i = clip(i, 0, size(arr) - 1)
    elif mode == "wrap":
        i = remainder(i, size(arr))
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    coords = unravel_index(i, shape(arr))
    flat = zeros_like(i)
    for k in range(len(coords)):
        flat = flat * shape(arr)[k] + coords[k]
    return reshape(_at_set(ravel(arr), flat, vv), shape(arr))


def put_along_axis(arr, indices, values, axis, inplace=True, mode=None):
    """A copy of ``arr`` with ``values`` written at ``indices`` along ``axis``
    (jax.numpy.put_along_axis with ``inplace=False``; the inverse of
    ``take_along_axis``; ``axis=None`` works on the flattened array).
    ``indices`` has ``arr``'s rank (other axes broadcast); ``values`` broadcast
    to ``indices``. Shape and dtype ``arr``'s; differentiable in ``arr`` and
    ``values``. Raises ValueError with ``inplace=True``, for ``indices`` of
    another rank or ``values`` that do not broadcast. ``mode`` is ignored
    (indices must be in range; negative ones count from the end)."""
    if inplace:
        raise ValueError(
            "jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arrays"
            "are immutable. Pass inplace=False to instead return an updated array."
        )
    a = asarray(arr)
    idx = asarray(indices)
    orig = shape(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    nd = len(shape(a))
    if nd != len(shape(idx)):
        raise ValueError(
            "put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
            f"arr.ndim={nd} and indices.ndim={len(shape(idx))}."
        )
    ax = norm_axis(axis, nd)
    if not shapes_broadcast(shape(values), shape(idx)):
        raise ValueError(
            "put_along_axis argument 'values' must be broadcastable to 'indices'. Got "
            f"values.shape={shape(values)} and indices.shape={shape(idx)}."
        )
    vals = broadcast_to(asarray(values, dtype=a.dtype), shape(idx))
    full_idx = _along_axis_index(shape(a), shape(idx), ax)
    pos = where(idx < 0, idx + shape(a)[ax], idx)
    flat = zeros(shape(idx), dtype=default_int())
    for k in range(nd):
        if k == ax:
            flat = flat * shape(a)[k] + pos
        else:
            flat = flat * shape(a)[k] + full_idx[k]
    out = _at_set(ravel(a), ravel(flat), ravel(vals))
    return reshape(out, orig)


def _along_axis_index_impl(a_shape, i_shape, ax):
    """Static: for each axis but ``ax``, the index along it broadcast to
    ``i_shape`` (``arange`` where ``i_shape`` has the length, else 0)."""
    out = []
    for k, n in enumerate(a_shape):
        if k == ax:
            out.append(None)
            continue
        m = i_shape[k]
        if m != n and m != 1:
            raise ValueError(f"indices shape {i_shape} does not broadcast against {a_shape}")
        r = _np.arange(m).reshape((1,) * k + (m,) + (1,) * (len(a_shape) - k - 1))
        out.append(_np.broadcast_to(r, i_shape).astype(_dt.default_int()))
    return tuple(out)


_along_axis_index = _static("ad.more_along_axis_index", _along_axis_index_impl)


# ---------------------------------------------------------------------------
# cumulative / products / bits


def cumulative_prod(x, axis=None, dtype=None, include_initial=False):
    """Cumulative product along ``axis`` (jax.numpy.cumulative_prod, the
    array-API function): ``axis`` may be omitted only for 1-D input; with
    ``include_initial`` a leading one is added. Dtype: ``x``'s (``dtype`` if
    given). Differentiable. Raises ValueError for a
    0-d input or a missing ``axis`` with N-D input."""
    x = asarray(x)
    if len(shape(x)) == 0:
        raise ValueError(
            "The input must be non-scalar to take a cumulative product, however a "
            "scalar value or scalar array was given."
        )
    if axis is None:
        if len(shape(x)) > 1:
            raise ValueError(
                f"The input array has rank {len(shape(x))}, however axis was not set to an "
                "explicit value. The axis argument is only optional for one-dimensional "
                "arrays."
            )
        axis = 0
    ax = norm_axis(axis, len(shape(x)))
    c = _cumprod(x, axis=ax, dtype=dtype)
    if include_initial:
        first = ones_like(take(c, [0], axis=ax))
        c = concatenate([first, c], axis=ax)
    return c


def matvec(x1, x2):
    """Batched matrix-vector product (jax.numpy.matvec): ``x1`` ``(..., n, m)``,
    ``x2`` ``(..., m)``, leading axes broadcast; result ``(..., n)``. Dtype:
    JAX's promotion. Differentiable."""
    return matmul(x1, expand_dims(x2, -1))[..., 0]


def vecmat(x1, x2):
    """Batched vector-matrix product, conjugating the vector
    (jax.numpy.vecmat): ``x1`` ``(..., n)``, ``x2`` ``(..., n, m)``; result
    ``(..., m)``. Dtype: JAX's promotion. Differentiable."""
    x1 = asarray(x1)
    if iscomplexobj(x1):
        x1 = conj(x1)
    return matmul(expand_dims(x1, -2), x2)[..., 0, :]


def packbits(a, axis=None, bitorder="big"):
    """Elements of an int/bool array as bits (non-zero = 1) packed into uint8
    along ``axis`` (flattened for None), zero-padded to a multiple of 8
    (jax.numpy.packbits). ``bitorder``: ``"big"`` or ``"little"``. Raises
    TypeError for float input, ValueError for another bitorder."""
    arr = asarray(a)
    if dtype_kind(arr) not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder != "little" and bitorder != "big":
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = asarray(arr != 0, dtype=_np.uint8)
    shifts = arange(8, dtype=_np.uint8)
    if bitorder == "big":
        shifts = flip(shifts, 0)
    if axis is None:
        bits = ravel(bits)
        axis = 0
    bits = moveaxis(bits, axis, -1)
    n = shape(bits)[-1]
    rem = n % 8
    if rem:
        pad = zeros(shape(bits)[:-1] + (8 - rem,), dtype=_np.uint8)
        bits = concatenate([bits, pad], axis=-1)
    bits = reshape(bits, shape(bits)[:-1] + (shape(bits)[-1] // 8, 8))
    packed = asarray(sum(_left_shift(bits, shifts), axis=-1), dtype=_np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array as uint8 zeros and ones along ``axis``
    (flattened for None) (jax.numpy.unpackbits); ``count`` keeps that many
    (padding with zeros if larger). Raises TypeError for another dtype,
    ValueError for an unknown bitorder."""
    arr = asarray(a)
    if arr.dtype != _np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder != "little" and bitorder != "big":
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = _left_shift(asarray(1, dtype=_np.uint8), arange(8, dtype=_np.uint8))
    if bitorder == "big":
        bits = flip(bits, 0)
    if axis is None:
        arr = ravel(arr)
        axis = 0
    arr = moveaxis(arr, axis, -1)
    un = asarray(_bitwise_and(expand_dims(arr, -1), bits) > 0, dtype=_np.uint8)
    un = reshape(un, shape(un)[:-2] + (-1,))
    if count is not None:
        if count > shape(un)[-1]:
            pad = zeros(shape(un)[:-1] + (count - shape(un)[-1],), dtype=_np.uint8)
            un = concatenate([un, pad], axis=-1)
        else:
            un = un[..., :count]
    return moveaxis(un, -1, axis)


# ---------------------------------------------------------------------------
# window functions (the default float dtype)


def _window_n(M):
    return arange(M, dtype=_dt.default_float())


def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points (jax.numpy.bartlett);
    ones for ``M <= 1``. Dtype: the default float."""
    M = _operator.index(M)
    if M <= 1:
        return ones((M,), dtype=_dt.default_float())
    n = _window_n(M)
    return 1 - _abs(2 * n + 1 - M) / (M - 1)


def blackman(M):
    """The Blackman window of ``M`` points (jax.numpy.blackman); ones for
    ``M <= 1``. Dtype: the default float."""
    M = _operator.index(M)
    if M <= 1:
        return ones((M,), dtype=_dt.default_float())
    n = _window_n(M)
    return 0.42 - 0.5 * cos(2 * _np.pi * n / (M - 1)) + 0.08 * cos(4 * _np.pi * n / (M - 1))


def hamming(M):
    """The Hamming window of ``M`` points (jax.numpy.hamming); ones for
    ``M <= 1``. Dtype: the default float."""
    M = _operator.index(M)
    if M <= 1:
        return ones((M,), dtype=_dt.default_float())
    n = _window_n(M)
    return 0.54 - 0.46 * cos(2 * _np.pi * n / (M - 1))


def hanning(M):
    """The Hann window of ``M`` points (jax.numpy.hanning); ones for
    ``M <= 1``. Dtype: the default float."""
    M = _operator.index(M)
    if M <= 1:
        return ones((M,), dtype=_dt.default_float())
    n = _window_n(M)
    return 0.5 * (1 - cos(2 * _np.pi * n / (M - 1)))


def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape ``beta`` (jax.numpy.kaiser):
    ``i0(beta sqrt(1 - ((n - a)/a)**2)) / i0(beta)``, ``a = (M - 1)/2``; ones
    for ``M <= 1``. Dtype: the default float. Differentiable in ``beta``."""
    M = _operator.index(M)
    if M <= 1:
        return ones((M,), dtype=_dt.default_float())
    n = _window_n(M)
    alpha = 0.5 * (M - 1)
    return i0(beta * sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)
