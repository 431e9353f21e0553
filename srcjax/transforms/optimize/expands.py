"""Broadcast cotangents read by an elementwise operation: the operation
broadcasts them itself (:func:`fold_expands`).

Reverse mode broadcasts a reduction's cotangent back to the reduced operand's
shape, ``e = ad.expand_reduced(g, x, axis, keepdims)``, a read-only view; the
operation that reads it, ``t = a * e`` with ``a`` of ``e``'s shape, is the same
elementwise operation on ``g`` itself whenever NumPy's broadcasting of ``g``
against ``a`` gives ``a``'s shape: a cotangent kept with its reduced axes
(``keepdims``) or a scalar (a mean's seed, broadcast twice in R5's cross-entropy,
``y * expand(expand(s, sum_), mul, 1)``: 10 us for a (64, 10) product). Each
element is the same operation on the same two numbers: bit for bit the same.

Only where it cannot change the result's type: ``a``, ``g``, ``e`` and ``t``
non-weak, of one dtype, ``t`` of ``a``'s shape and ``e`` broadcast to it (an
unbatched penalty's seed against a batched operand: NumPy's broadcasting
composes, ``g`` -> ``e`` -> ``a`` is ``g`` -> ``a``), no ``where`` mask.
A scalar broadcast twice (``e = expand(expand(s, ...), ...)``) reads ``s``;
a copy of an expansion (``e2 = e``) is the expansion.
The expansions left unread are dead-code elimination's. Top-level straight-line
statements, between which neither name is assigned again, and the statements
of a top-level loop that assigns none of the names the expansion reads.
``ad.batch_broadcast(s, n)`` of a 0-d ``s`` (vmap's broadcast of an unbatched
scalar, R6's mean seed) is a scalar's expansion too: a CG loop's
``mul2_bar * d`` on 16 x 20 is ``mul4 * d`` (~0.7 -> ~0.5 us).
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import gast
import numpy as np

from ...frontend import nodes as N
from ...primitives import registry
from .avals import Aval
from .common import _assigned, _is_assign

#: elementwise binary operations (operator spelling) that broadcast their operands
_OPS = ("*", "+", "-", "/")


def _plain(a: Any) -> bool:
    return isinstance(a, Aval) and not a.weak and not a.wt


def _source(s: Any, prim: Any, defs: Dict[str, Any]) -> Optional[tuple]:
    """``(g, aval of g)`` when ``s`` is ``ad.expand_reduced(g, ...)`` of a name
    without a mask; the expansion of a scalar's expansion reads the scalar."""
    if not _is_assign(s) or s.sj_op.kind != "prim" or s.sj_op.prim is not prim:
        return None
    b = s.sj_op.bound
    g, where = b.get("g"), b.get("where")
    if not isinstance(g, gast.Name) or not (
        where is None or (isinstance(where, gast.Constant) and where.value is None)
    ):
        return None
    ag, ae = getattr(s, "sj_avals_in", {}).get(g.id), getattr(s, "sj_aval", None)
    if not (_plain(ag) and _plain(ae)) or ag.dtype != ae.dtype:
        return None
    if g.id in defs:  # (every element of an expanded scalar is that scalar)
        inner = _source(defs[g.id], prim, defs) or _scalar_rows(defs[g.id], ag)
        if inner is not None and inner[1].shape == ():
            return inner
    if ag.shape == () or _leading(b, len(ae.shape) - len(ag.shape), len(ae.shape)):
        return g.id, ag
    return None


def _scalar_rows(s: Any, ag: Any) -> Optional[tuple]:
    """``(v, aval of v)`` when ``s`` is ``ad.batch_broadcast(v, n)`` of a 0-d
    ``v`` of ``ag``'s dtype (vmap's broadcast of an unbatched scalar: every
    element is ``v``)."""
    if not _is_assign(s) or s.sj_op.kind != "prim" or s.sj_op.prim.public != "ad.batch_broadcast":
        return None
    b = s.sj_op.bound
    v, axis = b.get("x"), b.get("axis")
    if not isinstance(v, gast.Name) or not (
        axis is None or (isinstance(axis, gast.Constant) and axis.value == 0)
    ):
        return None
    av = getattr(s, "sj_avals_in", {}).get(v.id)
    if not _plain(av) or av.shape != () or av.dtype != ag.dtype or len(ag.shape) != 1:
        return None
    return v.id, av


def _through_copies(s: Any, defs: Dict[str, Any]) -> Any:
    """The assignment of the value ``s`` copies (``mul3 = expand_reduced``); a
    name bound more than once has its last binding in ``defs``, so copies may
    form a cycle (``t = t`` or ``a = b ... b = a``): it stops there."""
    seen = {id(s)}
    while isinstance(s.value, gast.Name) and s.value.id in defs:
        s = defs[s.value.id]
        if id(s) in seen:
            break
        seen.add(id(s))
    return s


def _leading(bound: dict, k: int, ndim: int) -> bool:
    """Whether NumPy's broadcasting puts ``g``'s axes where the expansion
    does: ``g`` of the full rank (``keepdims``), or the reduced axes the first
    ``k`` (``sum(x, axis=0)``); not ``sum(x, axis=1)``'s ``(n,)`` cotangent of
    an ``(n, n)`` operand, which the expansion makes a column."""
    keep, axis = bound.get("keepdims"), bound.get("axis")
    if k == 0:
        return isinstance(keep, gast.Constant) and keep.value is True
    if isinstance(keep, gast.Constant) and keep.value is True:
        return False
    if isinstance(axis, gast.Constant) and type(axis.value) is int:
        axes = [axis.value]
    elif isinstance(axis, gast.Tuple) and all(
        isinstance(a, gast.Constant) and type(a.value) is int for a in axis.elts
    ):
        axes = [a.value for a in axis.elts]
    else:
        return False
    if not all(-ndim <= a < ndim for a in axes):
        return False
    return sorted(a % ndim for a in axes) == list(range(k))


def fold_expands(fdef: Any) -> int:
    """Rewrite each operand (see the module); returns how many (run
    :func:`infer_avals` and dead-code elimination after)."""
    prim = registry.by_public("ad.expand_reduced")
    defs: Dict[str, Any] = {}  # name -> its top-level assignment, still holding
    done = 0
    for s in fdef.body:
        if _is_assign(s) and s.sj_op.kind == "prim" and s.sj_op.prim.op in _OPS:
            done += _fold(s, prim, defs)
        elif isinstance(s, (gast.For, gast.While)):
            # (an expansion made before the loop and read in it: R6's CG loop)
            changed = set(N.assigned_names([s]))
            held = {k: d for k, d in defs.items() if k not in changed and not _reads(d) & changed}
            for t in N.walk_stmts(s.body):
                if _is_assign(t) and t.sj_op.kind == "prim" and t.sj_op.prim.op in _OPS:
                    done += _fold(t, prim, held)
        names = _assigned(s)
        for k in [k for k, d in defs.items() if k in names or names & _reads(d)]:
            del defs[k]
        if _is_assign(s):
            if s.targets[0].id not in _reads(s):  # (t = t: its value is the old t's)
                defs[s.targets[0].id] = s
        else:
            defs.clear()
    return done


def _reads(s: Any) -> set:
    return {n.id for n in N.walk(s.value) if isinstance(n, gast.Name)}


def _fold(s: Any, prim: Any, defs: Dict[str, Any]) -> int:
    if not isinstance(s.value, gast.BinOp):
        return 0
    res = getattr(s, "sj_aval", None)
    ins = getattr(s, "sj_avals_in", {})
    done = 0
    for e, a in ((s.value.right, s.value.left), (s.value.left, s.value.right)):
        if not (isinstance(e, gast.Name) and isinstance(a, gast.Name)) or a.id == e.id:
            continue
        if e.id not in defs:
            continue
        got = _source(_through_copies(defs[e.id], defs), prim, defs)
        if got is None:
            continue
        g, ag = got
        aa, ae = ins.get(a.id), ins.get(e.id)
        if not all(_plain(v) for v in (aa, ae, res)) or not (
            aa == res and ae.dtype == ag.dtype == aa.dtype and _broadcasts_to(ae.shape, aa.shape)
        ):
            continue
        if not _broadcasts_to(ag.shape, aa.shape):
            continue
        for v in s.sj_op.bound.values():  # (nodes of their own, or the operator's)
            if isinstance(v, gast.Name) and v.id == e.id:
                v.id = g
        e.id = g
        ins[g] = ag
        done += 1
    return done


def _broadcasts_to(small: tuple, shape: tuple) -> bool:
    try:
        return np.broadcast_shapes(small, shape) == shape
    except ValueError:
        return False
