"""Helpers whose operands jit knows, as the one NumPy call they make for them
(:func:`direct_calls`).

``ad.sum_of_products``, ``ad.bmatmul`` and ``ad.bmatmul_right`` check their
operands at each call to pick a fast path; where the abstract values decide
that path now, jit writes the path itself:

- ``ad.sum_of_products(x, y, (k,))`` over the last axis of float32/float64
  arrays of one shape and dtype (at most ``_DOT_TERMS`` terms a sum) ->
  ``ad.vecdot(x, y)``;
- ``ad.bmatmul(a, v, True, True)``, a stack of matrices by a stack of vectors
  of one float dtype -> ``ad.matvec(a, v)``;
- ``ad.bmatmul_right(g, a, v, True, True)`` (its cotangent for ``v``) ->
  ``ad.vecmat(g, a)``.

Each saves the dispatch, ~0.3-0.5 us a call: R6's Newton-CG makes four such
calls in each of its 16 CG trips."""

from __future__ import annotations

from typing import Any, Optional

import gast
import numpy as np

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from ...primitives.ad.sums import _DOT_TERMS, _VECDOT
from ...primitives.batch_rules.runtime_products import _MATVEC, _VECMAT
from ...primitives.direct_forms import COPY, Literal
from .avals import Aval
from .common import _is_assign
from .operators import _AS_OPERATOR

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def direct_calls(fdef: Any) -> bool:
    """Rewrite the helpers above where the abstract values decide their path
    (run :func:`infer_avals` first); returns whether anything changed."""
    changed = False
    for s in N.walk_stmts(fdef.body):
        if not _is_assign(s) or not getattr(s, "sj_sure", False):
            continue  # (inside a loop whose abstract values did not converge)
        form = _direct_form(s)
        if form is None:
            continue
        name, bound = form
        if name == COPY:  # (the helper would hand its operand back)
            (node,) = bound.values()
            public = s.sj_op.prim.public
            s.value = N.clone(node)
            s.sj_op = Op("copy", elts=[node])
            s.sj_note = f"{public}: nothing to do"
            changed = True
            continue
        prim = registry.REGISTRY[name]
        operator = _AS_OPERATOR.get(prim.op) if prim.kind == "elementwise" else None
        if operator is not None and len(bound) == 2:  # (an operator: `g * b`, `a + b`)
            left, right = (N.clone(v) for v in bound.values())
            s.value = N.copy_origin(gast.BinOp(left=left, op=operator(), right=right), s.value)
        else:
            s.value = N.call(name, [N.clone(v) for v in bound.values()])
        s.sj_op = Op("prim", prim=prim, bound=bound)
        s.sj_note = "known operands: the helper's one call"
        changed = True
    return changed


def _direct_form(s: Any) -> Optional[tuple]:
    op = s.sj_op
    if op.kind != "prim":
        return None
    public = op.prim.public
    b = op.bound
    if op.prim.direct is not None:  # the primitive's own rule (registry: ``direct``)
        return _rule_form(s, op)
    if public == "ad.sum_of_products" and set(b) == {"x", "y", "axis"} and _VECDOT is not None:
        x, y = _float(s, b["x"]), _float(s, b["y"])
        if x is None or y is None or x.shape != y.shape or x.dtype != y.dtype or not x.shape:
            return None
        axis = b["axis"]
        last = len(x.shape) - 1
        if not (
            isinstance(axis, gast.Tuple)
            and len(axis.elts) == 1
            and isinstance(axis.elts[0], gast.Constant)
            and axis.elts[0].value in (last, -1)
        ):
            return None
        if not 0 < x.shape[-1] <= _DOT_TERMS:
            return None
        return "ad.vecdot", {"x": N.clone(b["x"]), "y": N.clone(b["y"])}
    if public in ("ad.bmatmul", "ad.bmatmul_right"):
        if not (_is_true(b.get("ab")) and _is_true(b.get("bb"))):
            return None
        a, v = _float(s, b.get("a")), _float(s, b.get("b"))
        if a is None or v is None or len(a.shape) != 3 or len(v.shape) != 2:
            return None
        if a.dtype != v.dtype or a.shape[0] != v.shape[0]:
            return None
        if public == "ad.bmatmul" and set(b) == {"a", "b", "ab", "bb"} and _MATVEC is not None:
            if a.shape[2] != v.shape[1]:
                return None
            return "ad.matvec", {"a": N.clone(b["a"]), "v": N.clone(b["b"])}
        if public == "ad.bmatmul_right" and set(b) == {"g", "a", "b", "ab", "bb"}:
            g = _float(s, b["g"])
            if _VECMAT is None or g is None or g.dtype != a.dtype:
                return None
            if g.shape != (a.shape[0], a.shape[1]) or a.shape[2] != v.shape[1]:
                return None
            return "ad.vecmat", {"g": N.clone(b["g"]), "a": N.clone(b["a"])}
    return None


def _rule_form(s: Any, op: Any) -> Optional[tuple]:
    """``(public name, bound)`` from the primitive's ``direct`` rule, given the
    abstract values of its operands (names; None for anything else)."""
    ins = getattr(s, "sj_avals_in", None) or {}
    avals = {k: _operand(ins, v) for k, v in op.bound.items()}
    form = op.prim.direct(avals)
    if form is None:
        return None
    name, operands = form
    if name == COPY:
        return name, {operands[0]: N.clone(op.bound[operands[0]])}
    params = list(registry.REGISTRY[name].signature.parameters)
    return name, {
        p: N.const(k.value) if isinstance(k, Literal) else N.clone(op.bound[k])
        for p, k in zip(params, operands)
    }


def _operand(ins: dict, node: Any) -> Any:
    """What a direct rule sees of an operand: a name's abstract value, a constant's
    value as a ``Literal`` (``ad.maybe_mT(x, False)``), else None."""
    if isinstance(node, gast.Name):
        return ins.get(node.id)
    if isinstance(node, gast.Constant):
        return Literal(node.value)
    return None


def _float(s: Any, node: Any) -> Optional[Aval]:
    """The abstract value of operand ``node`` (a name) when it is a float32 or
    float64 array that is not weakly typed, else None."""
    if not isinstance(node, gast.Name):
        return None
    a = (getattr(s, "sj_avals_in", None) or {}).get(node.id)
    if not isinstance(a, Aval) or a.weak or a.dtype not in _FLOATS:
        return None
    return a


def _is_true(node: Any) -> bool:
    return isinstance(node, gast.Constant) and node.value is True
