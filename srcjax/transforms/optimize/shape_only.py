"""Operands read only for their shape and dtype, given a stand-in
(:func:`shape_only_operands`).

Reverse mode reads a reduction's operand for its shape alone
(``ad.expand_reduced(g, x, axis, keepdims)`` broadcasts ``g`` back to
``np.shape(x)``), as vmap's ``ad.row_stand_in(x)`` does; a primitive says which
of its parameters it reads so (``Primitive.shape_only``). Such a read keeps the
work computing ``x`` alive though no value depends on it: R6's Newton-CG
computed its loss's ``logaddexp(0, z) - y * z`` and ``w * w`` every Newton step
only for the shapes of their sums' cotangents. Where the abstract value of
``x`` is known (a non-weak array), jit gives the primitive another value of
that shape and dtype instead: an unassigned parameter of that abstract value,
else one ``ad.shape_stand_in(shape, dtype)`` (a zero-stride view) made at the
top of the function; dead-code elimination then drops what computed ``x``.
Only for a name no other operation reads (else it is computed anyway: R4's
``path``, read by its mean). The results are the same bit for bit: they never
read ``x``'s values.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Dict, List

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .avals import Aval
from .common import _is_assign, _new_assign


def shape_only_operands(fdef: Any, params: Dict[str, Any], namer: Any) -> bool:
    """Rewrite the shape-only operands whose abstract values are known (see the
    module; run :func:`infer_avals` first, dead-code elimination after);
    returns whether anything changed."""
    assigned = set(N.assigned_names(fdef.body))
    given = {}  # (shape, dtype) -> a parameter or stand-in of that abstract value
    for k, a in params.items():
        if k not in assigned and _plain(a):
            given.setdefault((a.shape, a.dtype), k)
    made_before = set()  # (the stand-ins of earlier rounds)
    for s in fdef.body:
        if _is_assign(s) and s.sj_op.kind == "prim" and s.sj_op.prim.public == "ad.shape_stand_in":
            made_before.add(s.targets[0].id)
    sites = [x for x in _sites(fdef, params, assigned) if x[2].id not in made_before]
    loads = Counter(n.id for n in N.walk(fdef) if isinstance(n, gast.Name) and _loads(n))
    shape_reads = Counter(v.id for _, _, v in sites)
    made: List[Any] = []
    changed = False
    for s, p, v in sites:
        if loads[v.id] != shape_reads[v.id]:
            continue  # (a value read elsewhere too: computed anyway)
        ins = s.sj_avals_in
        a = ins[v.id]
        key = (a.shape, a.dtype)
        if key not in given:
            given[key] = namer.fresh("shape_of_" + v.id)
            made.append(_stand_in(given[key], a, s))
        if _replace(s, s.sj_op, p, v.id, given[key]):
            ins[given[key]] = a
            changed = True
    fdef.body[:0] = made
    return changed


def _sites(fdef: Any, params: Dict[str, Any], assigned: set):
    """``(statement, parameter, name)`` of each shape-only operand, a name of a
    known abstract value that is not an unassigned parameter."""
    for s in N.walk_stmts(fdef.body):
        if not _is_assign(s) or not getattr(s, "sj_sure", False):
            continue  # (inside a loop whose abstract values did not converge)
        op = s.sj_op
        if op.kind != "prim" or not op.prim.shape_only or not isinstance(s.value, gast.Call):
            continue
        ins = getattr(s, "sj_avals_in", None) or {}
        for p in op.prim.shape_only:
            v = op.bound.get(p)
            if not isinstance(v, gast.Name) or (v.id in params and v.id not in assigned):
                continue
            if _plain(ins.get(v.id)):
                yield s, p, v


def _loads(n: Any) -> bool:
    return isinstance(n.ctx, gast.Load)


def _plain(a: Any) -> bool:
    """A non-weak array of a known shape (whose value the stand-in need not be)."""
    return isinstance(a, Aval) and not a.weak and not a.wt and all(type(n) is int for n in a.shape)


def _stand_in(name: str, a: Aval, like: Any) -> Any:
    """``name = ad.shape_stand_in(shape, dtype)`` of ``a`` (origin: ``like``)."""
    prim = registry.REGISTRY["ad.shape_stand_in"]
    value = N.call("ad.shape_stand_in", [N.const(a.shape), N.const(a.dtype.name)])
    bound = {"shape": N.const(a.shape), "dtype": N.const(a.dtype.name)}
    s = _new_assign(name, value, Op("prim", prim=prim, bound=bound), like)
    s.sj_note = "the shape and dtype " + like.targets[0].id + " reads"
    return s


def _replace(s: Any, op: Any, param: str, old: str, new: str) -> bool:
    """Put name ``new`` for the operand ``old`` bound to ``param`` in the call
    ``s.value`` (positional or keyword); whether it was found."""
    call = s.value
    params = list(op.prim.signature.parameters)
    node = None
    for i, arg in enumerate(call.args):
        if i < len(params) and params[i] == param:
            node = arg
    for kw in call.keywords:
        if kw.arg == param:
            node = kw.value
    if not (isinstance(node, gast.Name) and node.id == old):
        return False
    node.id = new
    op.bound[param] = N.name(new)
    return True
