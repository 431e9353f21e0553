"""``jax.lax``'s reductions: ``reduce_sum`` ... ``reduce_xor`` and the general
``reduce`` (monoids recognized and sent to the matching primitive; pytrees of
operands), as compositions of primitives."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from ... import dtypes as _dt
from ...primitives.ad import astype as _astype
from ...primitives.ad import broadcast_to as _broadcast_to
from ...primitives.ad import reshape as _reshape
from ...primitives.creation import shape as _shape
from ...primitives.elementwise import bitwise_and as _bitwise_and
from ...primitives.elementwise import bitwise_or as _bitwise_or
from ...primitives.elementwise import bitwise_xor as _bitwise_xor
from ...primitives.reductions import max as _rmax
from ...primitives.reductions import min as _rmin
from ...primitives.reductions import prod as _rprod
from ...primitives.reductions import sum as _rsum
from ...primitives.reductions import top_k as _top_k
from ...primitives.structural import concatenate as _concatenate
from ...primitives.structural import moveaxis as _moveaxis
from ...primitives.structural import transpose as _transpose
from ._static import _approx_k_plan, _fold_plan, _leaves, _pack, _reduce_check, _static, _tree_kind

# ---------------------------------------------------------------------------
# reductions


def reduce_sum(operand: Any, axes: Sequence[int]) -> Any:
    """Sum over ``axes`` (jax.lax.reduce_sum).

    Args:
        operand: array of a number dtype (bool raises TypeError, as JAX).
        axes: distinct axes, each in ``[0, ndim)`` (negative axes raise
            ValueError, as JAX).

    Returns:
        ``operand`` summed over ``axes``: the other axes in order, ``operand``'s
        dtype (no promotion of small integers, unlike ``jnp.sum``).
    """
    ax, dt = _reduce_check("reduce_sum", "num", operand, axes)
    return _rsum(operand, ax, dt)


def reduce_prod(operand: Any, axes: Sequence[int]) -> Any:
    """Product over ``axes`` (jax.lax.reduce_prod); dtypes and checks as
    :func:`reduce_sum`. The derivative is exact at zeros (``jnp.prod``'s)."""
    ax, dt = _reduce_check("reduce_prod", "num", operand, axes)
    return _rprod(operand, ax, dt)


def reduce_max(operand: Any, axes: Sequence[int]) -> Any:
    """Maximum over ``axes`` (jax.lax.reduce_max): any dtype (bool too); NaN
    propagates; the derivative is split evenly among tied maxima, as JAX.
    Axes checked as :func:`reduce_sum`."""
    ax, dt = _reduce_check("reduce_max", "any", operand, axes)
    return _rmax(operand, ax)


def reduce_min(operand: Any, axes: Sequence[int]) -> Any:
    """Minimum over ``axes`` (jax.lax.reduce_min); as :func:`reduce_max`."""
    ax, dt = _reduce_check("reduce_min", "any", operand, axes)
    return _rmin(operand, ax)


def _logical_identity_impl(op, x):
    """Static: the identity of a bitwise reduction in ``x``'s dtype."""
    d = _dt.dtype_of(x)
    if op == "and":
        return np.ones((), d) if d.kind == "b" else np.asarray(-1).astype(d)
    return np.zeros((), d)


_logical_identity = _static("ad.lax_logical_identity", _logical_identity_impl)
_logical_identity.samples = lambda rng: [(("and", np.ones(2, np.int32)), {})]


def reduce_and(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise AND over ``axes`` (jax.lax.reduce_and): bool (logical all) or
    integer operands (TypeError otherwise, as JAX); ``operand``'s dtype. An
    empty reduction gives all bits set (True / -1)."""
    _reduce_check("reduce_and", "logical", operand, axes)
    return reduce(operand, _logical_identity("and", operand), _bitwise_and, axes)


def reduce_or(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise OR over ``axes`` (jax.lax.reduce_or); as :func:`reduce_and`
    (empty: False / 0)."""
    _reduce_check("reduce_or", "logical", operand, axes)
    return reduce(operand, _logical_identity("or", operand), _bitwise_or, axes)


def reduce_xor(operand: Any, axes: Sequence[int]) -> Any:
    """Bitwise XOR over ``axes`` (jax.lax.reduce_xor; for bools: an odd number
    of True); as :func:`reduce_and` (empty: False / 0)."""
    _reduce_check("reduce_xor", "logical", operand, axes)
    return reduce(operand, _logical_identity("xor", operand), _bitwise_xor, axes)


def reduce(
    operands: Any, init_values: Any, computation: Callable, dimensions: Sequence[int]
) -> Any:
    """Reduce ``operands`` over ``dimensions`` with ``computation``
    (jax.lax.reduce).

    The reduced elements are combined pairwise in a balanced tree (rows
    ``[0, h)`` with ``[h, 2h)``, an odd one carried), then combined once with
    the initial values: ``computation(init, folded)``. ``computation`` must be
    associative, as JAX requires (``lax.add``, ``lax.mul``, ``lax.max``,
    ``lax.min``, ``lax.bitwise_and``/``or``/``xor``, or a lambda/def of
    srcjax operations); it is called on whole slices, so it must be
    elementwise. Derivatives, vmap and jit come from ``computation`` (at exact
    ties of a max/min the cotangent is split as the pairwise tree gives;
    JAX's ``lax.reduce(x, -inf, lax.max, ...)`` splits it evenly).

    Args:
        operands: an array, or a tuple or list of arrays of one shape
            (``computation`` then takes and returns such tuples/lists). A dict
            raises NotImplementedError.
        init_values: scalars (one per operand, in ``operands``' structure);
            each is cast to its operand's dtype. Returned, broadcast, when the
            reduced size is 0.
        computation: ``computation(a, b)`` of two values structured as
            ``operands``.
        dimensions: distinct axes in ``[0, ndim)``; ``()`` returns
            ``operands`` unchanged (as JAX).

    Returns:
        ``operands``' structure, each leaf of the kept shape (the other axes in
        order) and the dtype ``computation`` gives.

    Raises:
        ValueError for mismatched shapes/leaf counts or out-of-bounds or
        repeated dimensions.
    """
    kind = _tree_kind(operands)
    leaves = _leaves(kind, operands)
    inits = _leaves(kind, init_values)
    plan = _fold_plan([_shape(v) for v in leaves], len(inits), dimensions)
    perm = plan[0]
    n = plan[1]
    kept = plan[2]
    halves = plan[3]
    if plan[4]:
        out = operands
    else:
        cur = [_reshape(_transpose(v, perm), (n,) + kept) for v in leaves]
        starts = [_astype(i, _dt_of(v)) for i, v in zip(inits, leaves)]
        if n == 0:
            out = _pack(kind, [_broadcast_to(i, kept) for i in starts])
        else:
            for h in halves:
                a = [v[:h] for v in cur]
                b = [v[h : 2 * h] for v in cur]
                c = _leaves(kind, computation(_pack(kind, a), _pack(kind, b)))
                cur = [_concatenate([ci, v[2 * h :]], 0) for ci, v in zip(c, cur)]
            folded = [v[0] for v in cur]
            out = computation(_pack(kind, starts), _pack(kind, folded))
    return out


def _dt_of_impl(x):
    """Static: ``x``'s canonical dtype."""
    return _dt.dtype_of(x)


_dt_of = _static("ad.lax_more_dtype_of", _dt_of_impl)
_dt_of.samples = lambda rng: [((np.ones(2),), {})]


# ---------------------------------------------------------------------------
# approximate top k (the exact top k, as JAX computes it on the CPU)


def approx_max_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> Any:
    """The ``k`` largest values of a float ``operand`` along ``reduction_dimension``
    and their indices (jax.lax.approx_max_k). On the CPU JAX computes them
    exactly (``recall_target`` and ``reduction_input_size_override`` have no
    effect there): :func:`srcjax.lax.top_k` along that axis, in descending order,
    ties in index order; without ``aggregate_to_topk`` the whole axis, sorted.
    Returns ``(values, indices)`` (int32 indices; JAX returns the pair as a list).
    Raises ValueError for a non-float operand or ``k`` beyond the axis."""
    axis, kk = _approx_k_plan(operand, _shape(operand), k, reduction_dimension, aggregate_to_topk)
    values, indices = _top_k(_moveaxis(operand, axis, -1), kk)
    return _moveaxis(values, -1, axis), _moveaxis(indices, -1, axis)


def approx_min_k(
    operand: Any,
    k: int,
    reduction_dimension: int = -1,
    recall_target: float = 0.95,
    reduction_input_size_override: int = -1,
    aggregate_to_topk: bool = True,
) -> Any:
    """The ``k`` smallest values and their indices (jax.lax.approx_min_k), in
    ascending order; as :func:`approx_max_k` (the top k of ``-operand``). NaNs:
    JAX's CPU order differs (not matched)."""
    axis, kk = _approx_k_plan(operand, _shape(operand), k, reduction_dimension, aggregate_to_topk)
    values, indices = _top_k(-_moveaxis(operand, axis, -1), kk)
    return _moveaxis(-values, -1, axis), _moveaxis(indices, -1, axis)
