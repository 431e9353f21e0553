"""The stand-ins of abstract interpretation (:mod:`.interp`): which values
primitives run on in place of arrays (zero-stride zeros whose values are never
read), how large an operand a primitive may run on, and the abstract values
read back from a result.
"""

from __future__ import annotations

from typing import Any

import gast
import numpy as np

from .avals import Aval


def _arrays_only(a: Any) -> bool:
    """Whether ``a`` is the abstract value of an array, or a tuple or dict of them
    (no list, no Python number, nothing unknown)."""
    if isinstance(a, Aval):
        return not a.weak
    if type(a) is tuple or (isinstance(a, tuple) and hasattr(a, "_fields")):
        return bool(a) and all(_arrays_only(x) for x in a)
    if type(a) is dict:
        return bool(a) and all(_arrays_only(x) for x in a.values())
    return False


#: kinds whose implementations on stand-ins cost at most a pass over them (a
#: reshape of a zero-stride stand-in is a view; a reduction or a scan one pass):
#: run up to the budget of the helpers of generated code, not the general one
_LINEAR_KINDS = frozenset({"structural", "reduction"})


def _stand_in_budget(prim: Any) -> int:
    """The most operand elements :meth:`.interp_rules._ResultRules.small` runs ``prim`` on: 4096 for
    linear algebra, 2**20 for the pure helpers and the structural and reduction
    kinds (R4's ``reshape(increments, (4096, -1))`` of 262,144 elements left
    every value after it unknown: nothing released, nothing fused), else 2**16."""
    if prim.kind == "linalg":
        return 4096
    return 1 << 20 if prim.pure or prim.kind in _LINEAR_KINDS else 1 << 16


def _zeros_stand_in(a: Aval) -> Any:
    """A stand-in of ``a`` whose values are never read (only its shape)."""
    if a.weak:
        raise ValueError("a Python number: its value matters")
    return np.broadcast_to(np.zeros((), a.dtype), a.shape)


def _array_tree(r: Any) -> Any:
    """The abstract values of a dict or tuple whose leaves are all arrays, else None."""
    if isinstance(r, (np.ndarray, np.generic)):
        return Aval(np.shape(r), r.dtype)
    if type(r) is dict:
        items = {k: _array_tree(v) for k, v in r.items()}
        return None if any(v is None for v in items.values()) else items
    if type(r) is tuple:
        items = tuple(_array_tree(v) for v in r)
        return None if any(v is None for v in items) else items
    return None


def ruled_aval(op: Any, env: Any, aval_of: Any) -> Any:
    """The abstract value the primitive's ``result_shape`` rule gives from its
    named operands' (``ad.jac_columns``, ``jnp.linalg.solve``; a tuple or list
    display as the tuple or list of its items') and its constant operands'
    values (``ad.bdot``'s batch flags), or None. A rule gives ``(shape, dtype)``,
    ``(shape, dtype, weak)`` for a result that may be a weakly typed array
    (``ad.cotangent_like`` onto a weak primal), or ``{"tree": t}``: a tree of
    such triples and of its operands' abstract values (``ad.carry_canon``)."""

    def operand(v: Any) -> Any:
        if isinstance(v, (gast.Tuple, gast.List)):
            items = [operand(e) for e in v.elts]
            return tuple(items) if isinstance(v, gast.Tuple) else items
        return aval_of(v, env)

    ins = {
        k: operand(v)
        for k, v in op.bound.items()
        if isinstance(v, (gast.Name, gast.Tuple, gast.List))
    }
    ins.update((k, v.value) for k, v in op.bound.items() if isinstance(v, gast.Constant))
    r = op.prim.result_shape(ins)
    if type(r) is dict:
        if "static" in r:  # (a value known now: ad.int_exponent of a known dtype)
            from .common import _Static

            return _Static(r["static"])
        return _tree(r.get("tree"))
    return None if r is None else Aval(r[0], r[1], wt=len(r) > 2 and bool(r[2]))


def _tree(t: Any) -> Any:
    if type(t) is tuple and len(t) == 3 and type(t[0]) is tuple and isinstance(t[1], np.dtype):
        return Aval(t[0], t[1], wt=bool(t[2]))
    if type(t) in (tuple, list):
        return type(t)(_tree(v) for v in t)
    if type(t) is dict:
        return {k: _tree(v) for k, v in t.items()}
    return t
