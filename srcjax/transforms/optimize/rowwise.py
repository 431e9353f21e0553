"""Exact elementwise work on a loop's rows, made once for all rows
(:func:`rowwise_for_all_rows`).

In ``for k in range(n)`` (or ``reversed(range(n))``), ``r = ad.tree_slice(S, k)``
reads row ``k`` of an array the loop does not change. An elementwise operation
whose array operands are such rows (of the row's shape) or loop invariants (of
no higher rank), computing an array of the row's shape, gives on trip ``k`` row
``k`` of the same operation on the whole arrays: ``Y = op(S, ...)`` is made
once before the loop and the trip reads ``y = ad.tree_slice(Y, k)``. R3's
reverse loop computes tanh's derivative ``1 - h * h`` from the stacked hidden
states (:mod:`.tape_rows`): two NumPy calls on 32 x 64 a trip become two on
50 x 32 x 64 before the loop.

Only the operations IEEE arithmetic rounds once per element (``+ - * /``,
negation, ``abs``, ``max``/``min``): every element gets the same bits whatever
computes it, a NumPy loop over rows or over the whole array, or a fused kernel.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Dict, List

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .avals import Aval
from .common import _is_assign, _new_assign, _subst_stmt
from .rowmaps import _reversed_trips, _trips
from .tape_rows import _ROW_READS
from .trips import statement_blocks

#: elementwise primitives rounded once per element (the same bits on any shape)
EXACT = frozenset(
    {
        "jnp.add",
        "jnp.subtract",
        "jnp.multiply",
        "jnp.true_divide",
        "jnp.divide",
        "jnp.negative",
        "jnp.abs",
        "jnp.maximum",
        "jnp.minimum",
    }
)


def rowwise_for_all_rows(fdef: Any, namer: Any) -> bool:
    """Make the loops' exact elementwise work on rows once before them (see
    the module); returns whether anything changed (re-infer the abstract
    values then)."""
    if namer is None or {"range", "reversed"} & set(N.assigned_names(fdef.body)):
        return False
    changed = False
    for block in list(statement_blocks(fdef.body)):
        for loop in [s for s in block if isinstance(s, gast.For)]:
            n = _trips(loop)
            n = _reversed_trips(loop) if n is None else n
            if n is None or n < 1 or loop.orelse:
                continue
            made = _in_loop(loop, n, namer)
            if made:
                i = block.index(loop)
                block[i:i] = made
                changed = True
    return changed


def _in_loop(loop: Any, n: int, namer: Any) -> List[Any]:
    """The statements to put before ``loop`` (its body rewritten in place)."""
    k = loop.target.id
    variant = set(N.assigned_names(loop.body)) | {k}
    if k in N.assigned_names(loop.body):
        return []
    rows: Dict[str, tuple] = {}  # name -> (S, S's aval): it holds row k of S now
    made: List[Any] = []
    for s in loop.body:
        found = _row_read(s, k, n, variant) if _is_assign(s) else None
        whole = None if found is not None else _whole(s, rows, variant)
        for t in N.assigned_names([s]):
            rows.pop(t, None)
        if found is not None:
            rows[s.targets[0].id] = found
        if whole is None:
            continue
        table, aval = whole
        name = namer.fresh(f"{s.targets[0].id}_rows")
        op = replace(s.sj_op, bound={p: N.clone(v) for p, v in s.sj_op.bound.items()})
        before = _new_assign(name, N.clone(s.value), op, s)
        _subst_stmt(before, {r: N.name(x) for r, (x, _) in table.items()})
        made.append(before)
        prim = registry.REGISTRY["ad.tree_slice"]
        s.value = N.call("ad.tree_slice", [N.name(name), N.name(k)])
        s.sj_op = Op("prim", prim=prim, bound={"xs": N.name(name), "i": N.name(k)})
        rows[s.targets[0].id] = (name, Aval((n,) + aval.shape, aval.dtype, None, aval.wt))
    return made


def _row_read(s: Any, k: str, n: int, variant: set):
    """``(S, S's aval)`` of ``r = ad.tree_slice(S, k)`` (or ``S[k]``), ``S`` an
    invariant array of ``n`` rows of rank >= 1, else None."""
    op = s.sj_op
    if op.kind != "prim" or op.prim.public not in _ROW_READS:
        return None
    a, b = _ROW_READS[op.prim.public]
    xs, i = op.bound.get(a), op.bound.get(b)
    if not (isinstance(xs, gast.Name) and isinstance(i, gast.Name) and i.id == k):
        return None
    aval = (getattr(s, "sj_avals_in", None) or {}).get(xs.id)
    if xs.id in variant or not isinstance(aval, Aval) or aval.ptype is not None:
        return None
    return (xs.id, aval) if len(aval.shape) >= 2 and aval.shape[0] == n else None


def _whole(s: Any, rows: Dict[str, tuple], variant: set):
    """``({row name: (S, aval)}, result aval)`` when ``s`` is an exact elementwise
    operation of rows and invariants (see the module), else None."""
    if not _is_assign(s) or not getattr(s, "sj_sure", False):
        return None
    op = s.sj_op
    if op.kind != "prim" or op.prim.public not in EXACT:
        return None
    out = getattr(s, "sj_aval", None)
    if not isinstance(out, Aval) or out.ptype is not None:
        return None
    ins = getattr(s, "sj_avals_in", None) or {}
    table: Dict[str, tuple] = {}
    for v in op.bound.values():
        if isinstance(v, gast.Constant) and type(v.value) in (int, float):
            continue
        if not isinstance(v, gast.Name):
            return None
        if v.id in rows:
            x, aval = rows[v.id]
            if aval.shape[1:] != out.shape:
                return None
            table[v.id] = rows[v.id]
        elif v.id in variant:
            return None
        else:
            a = ins.get(v.id)
            if not isinstance(a, Aval) or len(a.shape) > len(out.shape):
                return None
    if not table:
        return None
    bound = {v.id for v in op.bound.values() if isinstance(v, gast.Name)}
    if (set(N.names_in(s.value)) - bound) & (set(rows) | variant):
        return None  # (a name the bound operands do not show: leave it)
    return table, out
