"""The non-differentiable ``ad.lax_*`` helpers of static values (shapes, dtypes,
reduction plans) that ``srcjax.lax._more``'s compositions call, the same for
every example of a vmap, and their maker ``_static``."""

from __future__ import annotations

from typing import Callable

import numpy as np

from ... import dtypes as _dt
from ...primitives.registry import Primitive, register

# ---------------------------------------------------------------------------
# static helpers (shapes and dtypes only: the same for every example of a vmap)


def _static(public: str, impl: Callable) -> Primitive:
    p = register(Primitive(public, impl, kind="internal", differentiable=False))
    p.def_batch(lambda c: (c.rebuild(), False))
    return p


#: JAX's words for the accepted dtype kinds of the reductions
_REDUCE_KINDS = {
    "num": ("iufc", "number"),
    "any": ("biufc", "number, bool"),
}


def _reduce_check_impl(name, kinds, x, axes):
    """Static: JAX's checks of ``reduce_<op>(x, axes)``: ``x``'s dtype kind, the
    axes in bounds (no negative ones) and distinct. Returns ``(axes, dtype)``."""
    d = _dt.dtype_of(x)
    nd = np.ndim(x)
    if kinds == "logical":
        if d.kind not in "biu":
            raise TypeError(f"logical reduction requires operand dtype bool or int, got {d.name}.")
    else:
        ok, words = _REDUCE_KINDS[kinds]
        if d.kind not in ok:
            raise TypeError(
                f"{name} does not accept dtype {d.name}. Accepted dtypes are subtypes of {words}."
            )
    axes = tuple(int(a) for a in axes)
    if any(not 0 <= a < nd for a in axes):
        raise ValueError(
            f"reduction axes {axes} contains out-of-bounds indices for {d.name}{list(np.shape(x))}."
        )
    if len(set(axes)) != len(axes):
        raise ValueError(f"duplicate value in 'axes' of reduction: {axes}")
    return axes, d


_reduce_check = _static("ad.lax_reduce_check", _reduce_check_impl)
_reduce_check.samples = lambda rng: [(("reduce_sum", "num", np.ones((2, 3)), (1,)), {})]


def _tree_kind_impl(x):
    """Static: ``"tuple"``/``"list"`` for a tuple/list of operands, ``"array"``
    otherwise; NotImplementedError for a dict (JAX takes any pytree)."""
    if isinstance(x, dict):
        raise NotImplementedError(
            "srcjax lax.reduce: operands must be an array or a tuple/list of arrays (not a dict)"
        )
    if isinstance(x, tuple):
        return "tuple"
    if isinstance(x, list):
        return "list"
    return "array"


_tree_kind = _static("ad.lax_tree_kind", _tree_kind_impl)
_tree_kind.samples = lambda rng: [((np.ones(2),), {}), (((np.ones(2), np.ones(2)),), {})]


def _fold_plan_impl(shapes, n_inits, dimensions):
    """Static: how ``reduce`` folds: the permutation putting the reduced axes
    first, their total size ``n``, the kept shape, and the halving schedule
    (each level combines the first ``h`` rows with the next ``h``). JAX's
    errors for mismatched operands and bad dimensions."""
    shapes = [tuple(s) for s in shapes]
    if n_inits != len(shapes):
        raise ValueError(
            "reduce: operands and init_values must have the same number of leaves, got "
            f"{len(shapes)} and {n_inits}"
        )
    if len(set(shapes)) != 1:
        raise ValueError(f"reduce operands must all have the same shape, got {shapes}")
    shape = shapes[0]
    dims = tuple(int(d) for d in dimensions)
    if any(not 0 <= d < len(shape) for d in dims):
        raise ValueError(f"reduction axes {dims} contains out-of-bounds indices for shape {shape}.")
    if len(set(dims)) != len(dims):
        raise ValueError(f"duplicate value in 'axes' of reduction: {dims}")
    kept = tuple(a for a in range(len(shape)) if a not in dims)
    perm = dims + kept
    n = 1
    for d in dims:
        n *= shape[d]
    halves = []
    m = n
    while m > 1:
        halves.append(m // 2)
        m = m // 2 + m % 2
    return perm, n, tuple(shape[a] for a in kept), tuple(halves), len(dims) == 0


_fold_plan = _static("ad.lax_fold_plan", _fold_plan_impl)
_fold_plan.samples = lambda rng: [((((2, 3),), 1, (0,)), {})]


def _approx_k_plan_impl(x, shape, k, reduction_dimension, aggregate_to_topk):
    """Static: ``(axis, k)`` of ``approx_max_k``/``approx_min_k`` on the CPU, where
    JAX computes the exact top k (all of the axis, sorted, without
    ``aggregate_to_topk``); JAX's errors for a non-float operand and a ``k``
    beyond the axis."""
    if _dt.dtype_of(x).kind != "f":
        raise ValueError("operand must be a floating type")
    nd = len(shape)
    axis = reduction_dimension + nd if reduction_dimension < 0 else reduction_dimension
    if not 0 <= axis < nd:
        raise ValueError(f"reduction_dimension {reduction_dimension} out of range for rank {nd}")
    if k > shape[axis]:
        raise ValueError(f"k must be smaller than the size of reduction_dim {shape[axis]}, got {k}")
    return axis, (int(k) if aggregate_to_topk else int(shape[axis]))


_approx_k_plan = _static("ad.lax_approx_k_plan", _approx_k_plan_impl)
_approx_k_plan.samples = lambda rng: [((np.ones((2, 3), np.float32), (2, 3), 2, -1, True), {})]


def _leaves(kind, x):
    """The arrays of ``x`` (structured as ``kind`` says) as a list."""
    if kind == "array":
        return [x]
    return [v for v in x]


def _pack(kind, leaves):
    """``leaves`` in the structure ``kind`` names."""
    if kind == "tuple":
        return tuple(leaves)
    if kind == "list":
        return leaves
    return leaves[0]
