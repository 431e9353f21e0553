"""``jax.lax``'s shape operations (``reshape`` ... ``pad``) and its products,
creation, reductions and sort (``dot_general``, ``iota``, ``argmax``,
``cumsum``, ``sort`` ...), as compositions of primitives."""

from __future__ import annotations

from ...primitives.ad import astype as _astype
from ...primitives.ad import broadcast_to as _broadcast_to
from ...primitives.ad import expand_dims as _expand_dims
from ...primitives.ad import reshape as _reshape
from ...primitives.creation import arange as _arange
from ...primitives.creation import asarray as _asarray
from ...primitives.creation import full as _full
from ...primitives.creation import shape as _shape
from ...primitives.linalg import dot as _dot
from ...primitives.linalg import einsum as _einsum
from ...primitives.reductions import argmax as _argmax
from ...primitives.reductions import argmin as _argmin
from ...primitives.reductions import cumprod as _cumprod
from ...primitives.reductions import cumsum as _cumsum
from ...primitives.structural import argsort as _argsort
from ...primitives.structural import at_set as _at_set
from ...primitives.structural import concatenate as _concatenate
from ...primitives.structural import flip as _flip
from ...primitives.structural import sort as _sort
from ...primitives.structural import squeeze as _squeeze
from ...primitives.structural import take_along_axis as _take_along_axis
from ...primitives.structural import transpose as _transpose
from ._static import (
    _bid_shape,
    _canonical_dtype,
    _dot_check,
    _dot_general_spec,
    _list_dtypes,
    _pad_plan,
    _same_dtypes,
    _slice_index,
    _sort_arity,
    _sort_shapes,
    _value_dtype,
)

# ---------------------------------------------------------------------------
# shapes


def reshape(operand, new_sizes, dimensions=None):
    """``operand`` (transposed by ``dimensions`` first, when given) in the shape
    ``new_sizes`` (jax.lax.reshape): same size and dtype."""
    if dimensions is not None:
        operand = _transpose(operand, tuple(dimensions))
    return _reshape(operand, tuple(new_sizes))


def transpose(operand, permutation):
    """Axes of ``operand`` permuted (jax.lax.transpose): result axis ``i`` is
    ``operand``'s axis ``permutation[i]``."""
    return _transpose(operand, tuple(permutation))


def concatenate(operands, dimension):
    """Concatenation along ``dimension`` (jax.lax.concatenate): operands of one
    dtype (else TypeError) and equal shapes elsewhere."""
    _list_dtypes("concatenate", operands)
    return _concatenate(operands, dimension)


def squeeze(array, dimensions):
    """``array`` without the size-1 axes ``dimensions`` (jax.lax.squeeze; negative
    axes count from the end). ValueError for an axis of another size."""
    return _squeeze(array, tuple(dimensions))


def expand_dims(array, dimensions):
    """``array`` with size-1 axes inserted at ``dimensions`` (jax.lax.expand_dims),
    positions in the result (negative count from its end)."""
    return _expand_dims(array, tuple(dimensions))


def rev(operand, dimensions):
    """``operand`` reversed along ``dimensions`` (jax.lax.rev)."""
    return _flip(operand, tuple(dimensions))


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001
    """``operand[start:limit:stride, ...]`` per axis (jax.lax.slice): one start and
    one limit (and stride, default 1) per axis of ``operand``. Eagerly an Array
    of its own memory (``asarray``: a NumPy ``operand``'s slice is a view)."""
    return _asarray(
        operand[_slice_index(len(_shape(operand)), start_indices, limit_indices, strides)]
    )


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``operand[start_index:limit_index:stride]`` along ``axis``
    (jax.lax.slice_in_dim; None and negative indices as in Python)."""
    nd = len(_shape(operand))
    return _asarray(operand[_slice_index(nd, start_index, limit_index, stride, axis)])


def index_in_dim(operand, index, axis=0, keepdims=True):
    """Item ``index`` of ``operand`` along ``axis`` (jax.lax.index_in_dim; negative
    counts from the end); the axis is kept with size 1 unless ``keepdims`` is False."""
    nd = len(_shape(operand))
    i = index % _shape(operand)[axis]
    out = _asarray(operand[_slice_index(nd, i, i + 1, 1, axis)])
    if not keepdims:
        out = _squeeze(out, axis)
    return out


def broadcast(operand, sizes):
    """``operand`` broadcast to ``tuple(sizes) + operand.shape`` (jax.lax.broadcast)."""
    return _broadcast_to(operand, tuple(sizes) + tuple(_shape(operand)))


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """``operand`` broadcast to ``shape``, its axis ``i`` becoming axis
    ``broadcast_dimensions[i]`` (jax.lax.broadcast_in_dim; sizes 1 or equal)."""
    mid = _bid_shape(_shape(operand), shape, broadcast_dimensions)
    return _broadcast_to(_reshape(operand, mid), tuple(shape))


def pad(operand, padding_value, padding_config):
    """``operand`` padded with the 0-d ``padding_value`` (jax.lax.pad): per axis a
    triple ``(lo, hi, interior)``: ``interior`` values between neighbours, then
    ``lo``/``hi`` before/after (negative: that many removed). ``padding_value``
    must have ``operand``'s dtype (TypeError, as JAX). Differentiable in both."""
    _same_dtypes("pad", "any", operand, padding_value)
    pv = _asarray(padding_value, dtype=_value_dtype(operand))
    plan = _pad_plan(_shape(operand), padding_config)
    mid = _at_set(_broadcast_to(pv, plan[0]), plan[1], operand)
    return _at_set(_broadcast_to(pv, plan[3]), plan[4], mid[plan[2]])


# ---------------------------------------------------------------------------
# products, creation, reductions, sort


def dot(x, y, precision=None, preferred_element_type=None):
    """Vector/matrix product (jax.lax.dot): ``x`` and ``y`` 1-D or 2-D; the dtype
    JAX promotes them to, or ``preferred_element_type``."""
    _dot_check(_shape(x), _shape(y))
    if preferred_element_type is None:
        return _dot(x, y)
    return _dot(x, y, preferred_element_type=_canonical_dtype(preferred_element_type))


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """General contraction (jax.lax.dot_general): ``dimension_numbers`` is
    ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``; result axes:
    batch, then ``lhs``'s free axes, then ``rhs``'s (an ``einsum``)."""
    spec = _dot_general_spec(_shape(lhs), _shape(rhs), dimension_numbers)
    if preferred_element_type is None:
        return _einsum(spec, lhs, rhs)
    return _einsum(spec, lhs, rhs, preferred_element_type=_canonical_dtype(preferred_element_type))


def iota(dtype, size):
    """``[0, 1, ..., size - 1]`` of ``dtype`` (jax.lax.iota)."""
    return _arange(size, dtype=_canonical_dtype(dtype))


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value`` (jax.lax.full); dtype:
    ``dtype``, else ``fill_value``'s (a Python float is float32)."""
    return _full(shape, fill_value, dtype)


def argmax(operand, axis, index_dtype):
    """Index of the maximum along ``axis`` (jax.lax.argmax; first of ties, NaN
    counts as the maximum), as ``index_dtype``."""
    return _astype(_argmax(operand, axis), _canonical_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    """Index of the minimum along ``axis`` (jax.lax.argmin), as ``index_dtype``."""
    return _astype(_argmin(operand, axis), _canonical_dtype(index_dtype))


def cumsum(operand, axis=0, reverse=False):
    """Running sum along ``axis`` (jax.lax.cumsum; from the end with ``reverse``).
    Shape and dtype: ``operand``'s (no promotion of small integers)."""
    dt = _value_dtype(operand)
    if reverse:
        return _flip(_cumsum(_flip(operand, axis), axis, dt), axis)
    return _cumsum(operand, axis, dt)


def cumprod(operand, axis=0, reverse=False):
    """Running product along ``axis`` (jax.lax.cumprod); as :func:`cumsum`."""
    dt = _value_dtype(operand)
    if reverse:
        return _flip(_cumprod(_flip(operand, axis), axis, dt), axis)
    return _cumprod(operand, axis, dt)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """``operand`` sorted along ``dimension`` (jax.lax.sort).

    ``operand``: one array (sorted; the result has its shape and dtype) or a
    tuple/list of arrays of one shape, returned as a tuple of those arrays all
    permuted the same way: the order is lexicographic over the first
    ``num_keys`` operands (the first primary). -0.0 equals 0.0, NaN sorts last,
    complex numbers compare by real then imaginary part; ties keep their order
    (the sort is always stable, also for ``is_stable=False``). Differentiable in
    every inexact operand (the permutation is constant), under jit and vmap.
    Raises TypeError for no operands or operands of different shapes and
    ValueError for ``num_keys`` outside ``1..len(operand)`` (or not 1 for one
    array), as JAX."""
    n = _sort_arity(operand, num_keys)
    if n < 0:
        return _sort(operand, dimension)
    ax = _sort_shapes([_shape(operand[i]) for i in range(n)], dimension)
    # stable argsorts from the least significant key up (as jnp.lexsort)
    idx = _argsort(operand[num_keys - 1], axis=ax, stable=True)
    for i in range(num_keys - 2, -1, -1):
        k = _take_along_axis(operand[i], idx, ax)
        idx = _take_along_axis(idx, _argsort(k, axis=ax, stable=True), ax)
    out = []
    for i in range(n):
        out.append(_take_along_axis(operand[i], idx, ax))
    return tuple(out)
