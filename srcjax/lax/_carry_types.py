"""JAX's carry types for the eager loops (``fori_loop``, ``while_loop``, ``scan``):
:func:`first_trip`, :func:`retype`.

JAX traces a loop body with the initial carry's types; where an initial leaf is
weakly typed (a Python scalar, a weak Array) and the body returns another
dtype, JAX converts that leaf to the promoted dtype (a strong value) and traces
again (jit's form of the rule: transforms/optimize/lax_carries.py). Every trip
then has the types of that trace: the loop's result has the body output's
types (``fori_loop(0, 3, lambda i, c: c + 1.0, 0.0)`` is weak,
``fori_loop(0, 3, lambda i, c: c + x16, 0.0)`` float16), a scan's ``ys`` the
types the first trip gave them (weak ``ys = c`` of a ``0.0`` carry).

An eager loop whose initial carry has weak leaves runs its first trip on the
carry with those leaves as weak Arrays (:func:`first_trip`), so the body
computes with JAX's types; the later trips run on NumPy values (weak Arrays
cost 3.4x per step), and :func:`retype` gives the results the first trip's
types."""

from __future__ import annotations

from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from .. import dtypes
from .._array import _WeakArray
from .._array import unwrap_tree as _unwrap_tree
from .._array import wrap_weak as _wrap_weak
from ..primitives.control import _leaf_dtype

_WEAK_SCALARS = (int, float, complex)


def _is_weak(x: Any) -> bool:
    return type(x) in _WEAK_SCALARS or type(x) is _WeakArray


def _dtype(x: Any) -> Any:
    if type(x) is _WeakArray:
        return x._buf.dtype
    return _leaf_dtype(x)  # (a typed PRNG key's key dtype too)


def types(tree: Any) -> List[Tuple[np.dtype, bool]]:
    """(dtype, weak type) of each leaf of a trip's result."""
    from ..tree_util import tree_leaves

    return [(_dtype(v), _is_weak(v)) for v in tree_leaves(tree)]


def _promoted(init: Any, out: Any) -> Optional[Any]:
    """``init`` with each weak leaf whose dtype the body changed converted, as
    JAX converts it (a strong value of the promoted dtype), or None."""
    from ..tree_util import tree_flatten, tree_unflatten

    li, ti = tree_flatten(init)
    lo, to = tree_flatten(out)
    if ti != to:
        return None  # (the carry check raises JAX's TypeError)
    changed = False
    new = []
    for a, b in zip(li, lo):
        if _is_weak(a) and _dtype(a) != _dtype(b) and type(a) is not bool:
            ta = type(a) if type(a) in _WEAK_SCALARS else _dtype(a)
            want, _ = dtypes.weak_promotion([(ta, True), (_dtype(b), _is_weak(b))])
            a = np.asarray(_unwrap_tree(a)).astype(want)
            changed = True
        new.append(a)
    return tree_unflatten(ti, new) if changed else None


def first_trip(
    init: Any, trip: Callable[[Any], Any], canonical: Callable[[Any], Any]
) -> Tuple[Any, Optional[tuple]]:
    """The initial carry to start from and the first trip run with JAX's types.

    ``trip(carry)`` runs the first trip (``(new_carry, y)``), or returns None
    where there is none (an empty range, a false condition). An ``init`` without
    weak leaves gives ``(init, None)``: the caller runs every trip itself. Else
    (``canonical`` makes its other leaves what the loop computes with)
    the trip runs on ``init`` with its weak leaves as weak Arrays; a leaf the body
    promotes is converted and the trip runs again (as JAX traces again). Returns
    ``(init, (new_carry, y, carry_types, y_types))`` with the results as buffers,
    or ``(init, None)`` when there was no trip."""
    from ..tree_util import tree_leaves, tree_map

    if not any(_is_weak(v) for v in tree_leaves(init)):
        return init, None

    def leaf(x: Any) -> Any:
        if type(x) in _WEAK_SCALARS:
            return _wrap_weak(np.asarray(x, dtypes.dtype_of(x)))
        return x if type(x) is _WeakArray else canonical(x)

    for _ in range(len(tree_leaves(init)) + 1):
        r = trip(tree_map(leaf, init))
        if r is None:
            return init, None
        new, y = r
        conv = _promoted(init, new)
        if conv is None:
            return init, (_unwrap_tree(new), _unwrap_tree(y), types(new), types(y))
        init = conv
    return init, None  # (not reached: each round converts a leaf for good)


def retype(tree: Any, leaf_types: List[Tuple[np.dtype, bool]]) -> Any:
    """``tree``'s leaves in the dtypes and weak types ``leaf_types`` gives them
    (:func:`types` of the first trip's result)."""
    from ..tree_util import tree_flatten, tree_unflatten

    leaves, td = tree_flatten(tree)
    if len(leaves) != len(leaf_types):
        return tree
    out = []
    for v, (dt, weak) in zip(leaves, leaf_types):
        if not isinstance(dt, np.dtype) or (dt.kind == "V" and dt.fields is not None):
            out.append(v)  # (typed PRNG keys, float0 and other structured leaves)
            continue
        a = np.asarray(_unwrap_tree(v))
        if a.dtype != dt:
            a = a.astype(dt)
        out.append(_wrap_weak(a) if weak else a)
    return tree_unflatten(td, out)
