"""``jax.lax``'s structural functions beyond ``_ops`` (``sort``/``sort_key_val``,
``split``, ``tile``, ``axis_size``, ``optimization_barrier`` ...), as
compositions of primitives."""

from __future__ import annotations

import builtins as _builtins
from typing import Any, Optional, Sequence

from ...primitives.ad import broadcast_to as _broadcast_to
from ...primitives.ad import expand_dims as _expand_dims
from ...primitives.ad import reshape as _reshape
from ...primitives.collectives import psum as _psum
from ...primitives.creation import asarray as _asarray
from ...primitives.creation import shape as _shape
from ...primitives.elementwise import where as _where
from ...primitives.linalg import matmul as _matmul
from ...primitives.structural import argsort as _argsort
from ...primitives.structural import dynamic_slice as _dynamic_slice
from ...primitives.structural import dynamic_update_slice as _dynamic_update_slice
from ...primitives.structural import moveaxis as _moveaxis
from ...primitives.structural import split as _split
from ...primitives.structural import squeeze as _squeeze
from ...primitives.structural import stack as _stack
from ...primitives.structural import take_along_axis as _take_along_axis
from ...primitives.structural import tile as _tile
from ...tree_util import tree_map as _tree_map
from .._ops import iota
from ._static import _static
from .precision import PrecisionLike

# structural


def dynamic_index_in_dim(
    operand: Any,
    index: Any,
    axis: int = 0,
    keepdims: bool = True,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """Item ``index`` of ``operand`` along ``axis`` (jax.lax.dynamic_index_in_dim).

    Args:
        operand: array of any shape and dtype.
        index: int or 0-d integer array (may vary under vmap); negative counts
            from the end unless ``allow_negative_indices`` is False (then it is
            clamped to 0); clamped into range, as ``dynamic_slice``.
        axis: the axis (negative counts from the end).
        keepdims: keep ``axis`` with size 1.

    Returns:
        A copy of ``operand``'s dtype, ``axis`` of size 1 or removed.
    """
    if not allow_negative_indices:
        index = _where(index < 0, 0, index)
    shape = _shape(operand)
    ax = axis % len(shape)
    starts = [index if k == ax else 0 for k in range(len(shape))]
    sizes = [1 if k == ax else n for k, n in enumerate(shape)]
    out = _dynamic_slice(operand, starts, sizes)
    if not keepdims:
        out = _squeeze(out, ax)
    return out


def dynamic_update_index_in_dim(
    operand: Any,
    update: Any,
    index: Any,
    axis: int,
    *,
    allow_negative_indices: bool = True,
) -> Any:
    """``operand`` with item ``index`` along ``axis`` replaced by ``update``
    (jax.lax.dynamic_update_index_in_dim).

    Args:
        operand: array of any shape and dtype.
        update: array of ``operand``'s shape with ``axis`` of size 1, or with
            ``axis`` removed; cast to ``operand``'s dtype.
        index: int or 0-d integer array; negative counts from the end (unless
            ``allow_negative_indices`` is False: clamped to 0), then clamped.
        axis: the axis (negative counts from the end).

    Returns:
        A copy of ``operand`` (same shape and dtype) with the item written.

    Raises:
        TypeError when ``update`` has the wrong rank or shape.
    """
    if not allow_negative_indices:
        index = _where(index < 0, 0, index)
    nd = len(_shape(operand))
    ax = axis % nd
    if len(_shape(update)) == nd - 1:
        update = _expand_dims(update, ax)
    starts = [index if k == ax else 0 for k in range(nd)]
    return _dynamic_update_slice(operand, update, starts)


def broadcasted_iota(dtype: Any, shape: Sequence[int], dimension: int) -> Any:
    """An array of ``shape`` whose value is its index along ``dimension``
    (jax.lax.broadcasted_iota), of ``dtype`` (canonicalized: int64 is int32
    unless x64)."""
    shape = tuple(shape)
    n = shape[dimension]
    v = iota(dtype, n)
    mid = tuple(n if k == dimension else 1 for k in range(len(shape)))
    return _broadcast_to(_reshape(v, mid), shape)


def collapse(operand: Any, start_dimension: int, stop_dimension: Optional[int] = None) -> Any:
    """``operand`` with axes ``start_dimension:stop_dimension`` merged into one
    (jax.lax.collapse; Python slice semantics, ``None`` = to the end): same
    dtype and size."""
    shape = _shape(operand)
    size = 1
    for n in shape[start_dimension:stop_dimension]:
        size = size * n
    head = shape[:start_dimension]
    tail = () if stop_dimension is None else shape[stop_dimension:]
    return _reshape(operand, tuple(head) + (size,) + tuple(tail))


def _batch_matmul_check_impl(lhs_shape, rhs_shape):
    """Static: JAX's checks of ``batch_matmul``."""
    if len(lhs_shape) != len(rhs_shape):
        raise ValueError(
            "batch_matmul requires lhs and rhs to have the same number of dimensions, "
            f"got {len(lhs_shape)} and {len(rhs_shape)}."
        )
    if len(lhs_shape) < 2:
        raise ValueError(
            f"batch_matmul requires lhs and rhs to have ndim >= 2, got {len(lhs_shape)}"
        )
    if tuple(lhs_shape[:-2]) != tuple(rhs_shape[:-2]):
        raise ValueError(
            "batch_matmul requires lhs batch dimensions and rhs batch dimensions to have"
            f" the same shape, got {tuple(lhs_shape[:-2])} and {tuple(rhs_shape[:-2])}."
        )
    return True


_batch_matmul_check = _static("ad.lax_batch_matmul_check", _batch_matmul_check_impl)
_batch_matmul_check.samples = lambda rng: [(((2, 3, 4), (2, 4, 5)), {})]


def batch_matmul(lhs: Any, rhs: Any, precision: PrecisionLike = None) -> Any:
    """Batched matrix product (jax.lax.batch_matmul): ``lhs`` ``(..., m, k)``
    and ``rhs`` ``(..., k, n)`` of one rank >= 2 and equal batch shapes give
    ``(..., m, n)`` in their promoted dtype. ``precision`` is accepted and
    ignored (see :class:`Precision`). ValueError for other shapes, as JAX."""
    _batch_matmul_check(_shape(lhs), _shape(rhs))
    return _matmul(lhs, rhs)


def sort_key_val(keys: Any, values: Any, dimension: int = -1, is_stable: bool = True) -> Any:
    """``keys`` sorted along ``dimension`` and ``values`` permuted the same way
    (jax.lax.sort_key_val). ``keys`` and ``values`` have one shape; NaN keys
    sort last; ties keep their order (the sort is always stable). Returns
    ``(sorted_keys, values)`` in their dtypes; differentiable in both (the
    permutation is constant)."""
    idx = _argsort(keys, dimension)
    return _take_along_axis(keys, idx, dimension), _take_along_axis(values, idx, dimension)


def stack(operands: Sequence[Any], axis: int = 0) -> Any:
    """Arrays of one shape stacked along a new ``axis`` (jax.lax.stack)."""
    return _stack(operands, axis)


def unstack(x: Any, axis: int = 0) -> Any:
    """The slices of ``x`` along ``axis`` as a tuple of arrays
    (jax.lax.unstack), each of ``x``'s shape without ``axis``."""
    xm = _moveaxis(x, axis, 0)
    return tuple([xm[i] for i in range(_shape(xm)[0])])


def _split_points_impl(shape, sizes, axis):
    """Static: the cut positions of ``split`` (JAX's ValueError when the sizes
    do not add up to the axis length or one is negative)."""
    sizes = [int(s) for s in sizes]
    n = shape[axis]
    if any(s < 0 for s in sizes) or _builtins.sum(sizes) != n:
        raise ValueError(
            f"Sum of sizes {_builtins.sum(sizes)} must be equal to dimension {n} of the"
            f" operand shape {tuple(shape)}"
        )
    points = []
    acc = 0
    for s in sizes[:-1]:
        acc += s
        points.append(acc)
    return points


_split_points = _static("ad.lax_split_points", _split_points_impl)
_split_points.samples = lambda rng: [(((5,), (2, 3), 0), {})]


def split(operand: Any, sizes: Sequence[int], axis: int = 0) -> Any:
    """``operand`` cut along ``axis`` into pieces of the given ``sizes``
    (jax.lax.split): a list of arrays. ValueError when the sizes do not add up
    to the axis length."""
    return _split(operand, _split_points(_shape(operand), sizes, axis), axis)


def tile(operand: Any, reps: Sequence[int]) -> Any:
    """``operand`` repeated ``reps[i]`` times along axis ``i`` (jax.lax.tile;
    ``jnp.tile``'s rule for ``reps`` longer than the rank)."""
    return _tile(operand, tuple(reps))


def axis_size(axis_name: Any) -> Any:
    """The size of the mapped axis ``axis_name`` (jax.lax.axis_size) inside
    ``vmap``/``pmap`` with that name: ``psum(1, axis_name)``. Raises NameError
    outside one, as JAX."""
    return _psum(1, axis_name)


def optimization_barrier(operand: Any) -> Any:
    """``operand`` itself (jax.lax.optimization_barrier: a barrier for XLA's
    scheduling; srcjax does not move computations across calls). Any pytree;
    its leaves as arrays (eagerly Arrays of their own memory, as JAX's)."""
    return _tree_map(_asarray, operand)


def with_sharding_constraint(x: Any, shardings: Any) -> Any:
    """``x`` itself (jax.lax.with_sharding_constraint): srcjax runs on one host
    device, so there is nothing to shard; leaves as arrays, as JAX's)."""
    return _tree_map(_asarray, x)


# ---------------------------------------------------------------------------
