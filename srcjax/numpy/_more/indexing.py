"""``jax.numpy`` creation from ranges and shapes (``geomspace``, ``indices``,
``vander``), index arithmetic (``unravel_index``, ``ravel_multi_index``) and
``insert``/``delete``, as compositions of primitives."""

from __future__ import annotations

import operator as _operator

import numpy as _np

from ... import dtypes as _dt
from ...primitives.ad import broadcast_to, default_int, moveaxis, reshape, sum, zeros_like
from ...primitives.creation import arange, asarray, full, ones, shape, size, zeros
from ...primitives.elementwise import clip, floor_divide, log10, power, remainder, sign, where
from ...primitives.setops import flatnonzero as _flatnonzero
from ...primitives.structural import argsort, concatenate, diag, ravel, sort, stack, take
from ...primitives.structural import at_add as _at_add
from ...primitives.structural import at_set as _at_set
from .._functions import logspace
from ._static import (
    _checker,
    _static,
    broadcast_shapes_of,
    canon_dtype,
    dtype_kind,
    inexact_of,
    norm_axis,
)

# ---------------------------------------------------------------------------
# creation


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` numbers spaced evenly on a log scale from ``start`` to ``stop``
    (jax.numpy.geomspace): ``sign(start) * logspace(log10(start/sign),
    log10(stop/sign))``. Shape ``(num,)`` (array endpoints add their broadcast
    shape, samples at ``axis``). Dtype: ``dtype``, else JAX's inexact promotion
    of ``start``/``stop``. Differentiable in ``start`` and ``stop``. ``num`` and
    ``axis`` must be ints (TypeError otherwise)."""
    num = _operator.index(num)
    axis = _operator.index(axis)
    if dtype is None:
        dtype = inexact_of(start, stop)
    else:
        dtype = canon_dtype(dtype)
    cdt = inexact_of(zeros((), dtype=dtype))
    start = asarray(start, dtype=cdt)
    stop = asarray(stop, dtype=cdt)
    sg = sign(start)
    res = sg * logspace(log10(start / sg), log10(stop / sg), num, endpoint, 10.0, cdt, 0)
    if axis != 0:
        res = moveaxis(res, 0, axis)
    return asarray(res, dtype=dtype)


def indices(dimensions, dtype=None, sparse=False):
    """A grid of indices (jax.numpy.indices): for ``dimensions = (d0, ..., dk)``
    an int array of shape ``(k+1, d0, ..., dk)`` whose ``i``-th slice varies
    along axis ``i``; with ``sparse``, a tuple of arrays of shape ``(1, .., di,
    .., 1)``. Dtype: ``dtype``, else the default int. Raises TypeError for
    non-integer dimensions."""
    dtype = default_int() if dtype is None else canon_dtype(dtype)
    dims = tuple(_operator.index(d) for d in dimensions)
    n = len(dims)
    out = []
    for i in range(n):
        s = (1,) * i + (dims[i],) + (1,) * (n - i - 1)
        idx = reshape(arange(dims[i], dtype=dtype), s)
        if sparse:
            out.append(idx)
        else:
            out.append(broadcast_to(idx, dims))
    if sparse:
        return tuple(out)
    if n == 0:
        return zeros((0,), dtype=dtype)
    return stack(out, 0)


def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on diagonal ``k`` (jax.numpy.diagflat):
    shape ``(n + |k|, n + |k|)`` for ``n = v.size``; dtype ``v``'s.
    Differentiable."""
    return diag(ravel(asarray(v)), k)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of 1-D ``x`` (jax.numpy.vander): column ``j`` is
    ``x ** (N - 1 - j)`` (``x ** j`` with ``increasing``). Shape ``(len(x),
    N)``, ``N`` defaulting to ``len(x)``; dtype ``x``'s. Differentiable. Raises
    ValueError for ``x`` that is not 1-D or a negative ``N``."""
    x = asarray(x)
    if len(shape(x)) != 1:
        raise ValueError("x must be a one-dimensional array")
    if N is None:
        N = shape(x)[0]
    N = _operator.index(N)
    if N < 0:
        raise ValueError("N must be nonnegative")
    p = arange(N, dtype=x.dtype)
    if not increasing:
        p = (N - 1) - p
    return power(reshape(x, (-1, 1)), reshape(p, (1, -1)))


# ---------------------------------------------------------------------------
# index arithmetic


def unravel_index(indices, shape):  # noqa: F811 (JAX's parameter name)
    """Flat indices into an array of shape ``shape`` as a tuple of coordinate
    arrays (jax.numpy.unravel_index), row-major. Out-of-range indices are
    clipped (JAX's semantics: too large gives the last coordinate in every
    axis, below ``-1`` the first). Shapes: ``indices``'s; dtypes: ``indices``'s
    int dtype. Raises ValueError for a ``shape`` that is not a scalar or
    1-D sequence."""
    idx = asarray(indices)
    dims = _unravel_dims(shape)
    n = len(dims)
    out = [0] * n
    for i in range(n - 1, -1, -1):
        out[i] = remainder(idx, dims[i])
        idx = floor_divide(idx, dims[i])
    oob_pos = idx > 0
    oob_neg = idx < -1
    if dtype_kind(idx) == "u":
        oob_neg = zeros_like(oob_pos)
    return tuple(where(oob_pos, dims[i] - 1, where(oob_neg, 0, out[i])) for i in range(n))


def _unravel_dims_impl(shape_):
    """Static: unravel_index's shape as a tuple of ints (JAX's ValueError)."""
    try:
        dims = list(shape_)
    except TypeError:
        dims = [shape_]
    if any(_np.ndim(s) != 0 for s in dims):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    return tuple(int(d) for d in dims)


_unravel_dims = _static("ad.more_unravel_dims", _unravel_dims_impl)


def ravel_multi_index(multi_index, dims, mode="raise", order="C", dtype=None):
    """Flat indices from a tuple of coordinate arrays into an array of shape
    ``dims`` (jax.numpy.ravel_multi_index). ``mode``: ``"raise"`` (ValueError
    for an out-of-range coordinate), ``"wrap"``, ``"clip"`` or ``"ignore"``;
    ``order``: ``"C"`` or ``"F"``. Shape: the coordinates' broadcast shape;
    dtype: ``dtype``, else JAX's promotion of the default int and the
    coordinates. Raises TypeError for non-integer coordinates, ValueError for
    an unknown mode/order or a dtype too small for ``prod(dims)``."""
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(_operator.index(d) for d in dims)
    idx = [asarray(i) for i in multi_index]
    dt = _ravel_dtype(idx, dtype, dims)
    for i in idx:
        if dtype_kind(i) not in "iu":
            raise TypeError("only int indices permitted")
    if mode == "raise":
        _ravel_check(idx, dims)
    elif mode == "clip":
        idx = [clip(idx[k], 0, dims[k] - 1) for k in range(len(dims))]
    elif mode == "wrap":
        idx = [remainder(idx[k], dims[k]) for k in range(len(dims))]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    strides = _ravel_strides(dims, order)
    out = asarray(0, dtype=dt)
    for k in range(len(dims)):
        out = out + asarray(idx[k], dtype=dt) * strides[k]
    return out


def _ravel_dtype_impl(idx, dtype, dims):
    """Static: ravel_multi_index's result dtype (JAX's checks)."""
    dt = _dt.result_type(int, *idx) if dtype is None else _dt.canonicalize_dtype(dtype)
    if dt.kind not in "iu":
        raise ValueError(f"dtype={dt} is not an integer type.")
    if int(_np.prod(dims, dtype=object)) - 1 > _np.iinfo(dt).max:
        raise ValueError(
            f"jnp.ravel_multi_index: dtype={dt} not large enough to hold flattened"
            f" index for dims={dims}. Use the dtype argument to pass a suitable dtype."
        )
    return dt


def _ravel_strides_impl(dims, order):
    """Static: the flat strides of ``dims`` in ``order`` ("C" or "F")."""
    if order == "F":
        return tuple(int(s) for s in _np.cumprod((1,) + tuple(dims[:-1])))
    if order == "C":
        return tuple(int(s) for s in _np.cumprod((1,) + tuple(dims[1:])[::-1])[::-1])
    raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")


def _ravel_check_impl(idx, dims):
    """ravel_multi_index(mode="raise")'s check of the coordinates' values."""
    for i, d in zip(idx, dims):
        if _np.any((_np.asarray(i) < 0) | (_np.asarray(i) >= d)):
            raise ValueError("invalid entry in coordinates array")
    return True


_ravel_dtype = _static("ad.more_ravel_dtype", _ravel_dtype_impl)
_ravel_strides = _static("ad.more_ravel_strides", _ravel_strides_impl)
_ravel_check = _checker("ad.more_ravel_check", _ravel_check_impl)


def insert(arr, obj, values, axis=None):
    """``values`` inserted into ``arr`` before the indices ``obj`` along ``axis``
    (jax.numpy.insert; ``axis=None`` flattens ``arr`` first). ``obj``: an int, a
    slice or a 1-D int array (indices of the input; negative ones count from
    the end, then clipped to ``[0, n]``); ``values`` broadcast to the inserted
    slots, cast to ``arr``'s dtype. Shape: ``arr``'s with ``axis`` longer by the
    number inserted. Differentiable in ``arr`` and ``values``. Raises ValueError
    for ``obj`` of rank > 1 or not integer."""
    a = asarray(arr)
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = norm_axis(axis, len(shape(a)))
    n_in = shape(a)[ax]
    if isinstance(obj, slice):
        ind = _slice_indices(obj, n_in)
    else:
        ind = asarray(obj)
    if len(shape(ind)) > 1:
        raise ValueError(
            f"jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got {obj}"
        )
    if dtype_kind(ind) not in "iu":
        if size(ind) == 0 and not isinstance(obj, _np.ndarray):
            ind = asarray(ind, dtype=default_int())
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    v = asarray(values, dtype=a.dtype)
    nd = len(shape(a))
    if len(shape(v)) < nd:
        v = reshape(v, (1,) * (nd - len(shape(v))) + shape(v))
    if size(ind) == 1:
        index = ravel(ind)[0]
        if len(shape(ind)) == 0:
            v = moveaxis(v, 0, ax)
        ind = full((shape(v)[ax],), index)
    n_ins = broadcast_shapes_of([shape(ind), (shape(v)[ax],)])[0]
    ind = where(ind < 0, ind + n_in, ind)
    ind = clip(ind, 0, n_in)
    order = argsort(ind, stable=True)
    values_ind = _at_add(ind, order, arange(n_ins, dtype=ind.dtype))
    keep = ones((n_in + n_ins,), dtype=bool)
    keep = _at_set(keep, values_ind, False)
    arr_ind = _flatnonzero(keep, size=n_in)
    moved = moveaxis(a, ax, 0)
    vm = moveaxis(v, ax, 0)
    out = zeros((n_in + n_ins,) + shape(moved)[1:], dtype=a.dtype)
    slot = (n_ins,) + shape(moved)[1:]
    out = _at_set(out, values_ind, broadcast_to(vm, slot))
    out = _at_set(out, arr_ind, moved)
    return moveaxis(out, 0, ax)


def _slice_indices_impl(obj, n):
    """Static: the indices a slice ``obj`` selects from ``range(n)``."""
    return _np.arange(*obj.indices(n)).astype(_dt.default_int())


_slice_indices = _static("ad.more_slice_indices", _slice_indices_impl)


def delete(arr, obj, axis=None, assume_unique_indices=False):
    """``arr`` without the entries ``obj`` along ``axis`` (jax.numpy.delete;
    ``axis=None`` flattens first). ``obj``: an int, a slice, an int array
    (duplicates allowed; its values must be known, as JAX needs them static)
    or a bool mask of the axis' length. With ``assume_unique_indices`` an int
    array is used in JAX's jit-compatible way (out-of-range indices clipped).
    Differentiable in ``arr``. Raises ValueError/IndexError for a bad mask or
    out-of-range index, and for float ``obj``."""
    a = asarray(arr)
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = norm_axis(axis, len(shape(a)))
    n = shape(a)[ax]
    if isinstance(obj, (int, _np.integer)) and not isinstance(obj, bool):
        k = norm_axis(obj, n, "index")
        moved = moveaxis(a, ax, 0)
        return moveaxis(concatenate([moved[:k], moved[k + 1 :]], axis=0), 0, ax)
    if isinstance(obj, slice):
        o = _slice_indices(obj, n)
        assume_unique_indices = True
    else:
        o = asarray(obj)
    if assume_unique_indices and dtype_kind(o) in "iu":
        o = ravel(o)
        o = clip(where(o < 0, o + n, o), 0, n)
        o = sort(o)
        o = o - arange(size(o), dtype=o.dtype)
        i = arange(n - size(o), dtype=o.dtype)
        i = i + sum(reshape(i, (1, -1)) >= reshape(o, (-1, 1)), axis=0, dtype=i.dtype)
        return take(a, i, axis=ax)
    return take(a, _delete_keep(o, n), axis=ax)


def _delete_keep_impl(o, n):
    """The indices ``delete`` keeps for an int or bool ``obj`` (read from its
    values, as JAX needs them static; JAX's errors)."""
    o = _np.asarray(o)
    if o.dtype.kind in "iu":
        mask = _np.ones(n, dtype=bool)
        mask[o] = False
    elif o.dtype == bool:
        if o.shape != (n,):
            raise ValueError(
                "np.delete(arr, obj): for boolean indices, obj must be one-dimensional "
                "with length matching specified axis."
            )
        mask = ~o
    else:
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={o.dtype}; must be integer or bool.")
    return _np.nonzero(mask)[0].astype(_dt.default_int())


_delete_keep = _checker("ad.more_delete_keep", _delete_keep_impl)
