"""A scan's readout made once for all trips (:func:`popped_rows_as_reads`, then
:func:`stacked_readouts`).

R3's cell returns ``h @ wo`` as its stacked output: each of the 50 trips of the
forward loop multiplies the new carry by the loop-invariant readout weights
(32 x 64 by 64 x 1, about 0.8 us, mostly NumPy's per-call cost) and appends the
product to the list ``ys`` that ``ad.tree_stack(ys)`` stacks after the loop.
grad also pushes the product on its tape, only for the reverse loop's
``y_bar = ad.pop_like(ys_bar, y)``, which reads ``y`` for its type alone.

1. :func:`popped_rows_as_reads`: in ``for k in reversed(range(n))``,
   ``g = ad.pop_like(L, like)`` once a trip, with ``L = ad.tree_unstack(S, ...)``
   before the loop (the cotangent rows of a stacked output, ``S`` an array of
   ``n`` rows, ``L`` read nowhere else), pops row ``k``: it becomes the row read
   ``g = ad.tree_slice(S, k)``. ``like`` and ``L`` lose their readers (the
   tape's push and pop of ``y`` are then dropped by
   :func:`~.dead_pops.drop_unread_tape_entries`, ``L`` by dead-code elimination).
2. :func:`stacked_readouts`: in ``for k in range(n)``, ``m = a @ w`` (``w`` an
   invariant matrix, ``a`` a matrix of its float dtype) whose one reader is
   ``L.append(m)``, ``L`` a list made empty before the loop and read after it
   only by ``ad.tree_stack(L)``: the loop appends ``a`` instead and each stack
   is ``jnp.matmul(ad.tree_stack(L), w)``. NumPy's stacked matmul multiplies
   each row by the same BLAS call as the loop did: the same bits.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import gast
import numpy as np

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .avals import Aval
from .common import _is_assign, _new_assign, read_counts
from .rowmaps import _reversed_trips, _trips
from .trips import _appended, _is_empty_list, statement_blocks

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


# ------------------------------------------------------------------ popped rows
def popped_rows_as_reads(fdef: Any) -> bool:
    """Rewrite the pops of a stacked cotangent's rows as row reads (step 1 of the
    module); returns whether anything changed."""
    if {"range", "reversed"} & set(N.assigned_names(fdef.body)):
        return False
    loads = read_counts(fdef.body)
    changed = False
    for block in statement_blocks(fdef.body):
        stacks: Dict[str, tuple] = {}  # L -> (S, S's aval) of L = ad.tree_unstack(S, _)
        for s in block:
            for t in N.assigned_names([s]):
                stacks.pop(t, None)  # (rebound: another list, or its source changed)
                for lst in [x for x, v in stacks.items() if v[0] == t]:
                    del stacks[lst]
            if (
                _is_assign(s)
                and s.sj_op.kind == "prim"
                and s.sj_op.prim.public == "ad.tree_unstack"
                and isinstance(s.sj_op.bound.get("ct"), gast.Name)
            ):
                aval = (getattr(s, "sj_avals_in", None) or {}).get(s.sj_op.bound["ct"].id)
                if isinstance(aval, Aval) and aval.shape:
                    stacks[s.targets[0].id] = (s.sj_op.bound["ct"].id, aval, s)
            elif isinstance(s, gast.For):
                for lst in _pops_in_loop(s, stacks, loads):
                    block.remove(stacks.pop(lst)[2])  # (its one reader is gone)
                    changed = True
    return changed


def _pops_in_loop(loop: Any, stacks: Dict[str, tuple], loads: Dict[str, int]) -> List[str]:
    """Rewrite the loop's pops of the lists in ``stacks``; returns those lists."""
    n = _reversed_trips(loop)
    if n is None:
        return []
    k = loop.target.id
    variant = set(N.assigned_names(loop.body)) | {k}
    done = []
    for s in loop.body:
        op = getattr(s, "sj_op", None)
        if not (
            _is_assign(s)
            and op.kind == "pop"
            and op.target in stacks
            and loads.get(op.target) == 1  # (this pop is the list's one reader)
            and isinstance(s.value, gast.Call)
            and N.to_source(s.value.func).strip() == "ad.pop_like"
        ):
            continue
        src, aval, _ = stacks[op.target]
        if src in variant or aval.shape[0] != n:
            continue
        done.append(op.target)
        s.value = N.call("ad.tree_slice", [N.name(src), N.name(k)])
        s.sj_op = Op(
            "prim",
            prim=registry.REGISTRY["ad.tree_slice"],
            bound={"xs": N.name(src), "i": N.name(k)},
        )
        ins = dict(getattr(s, "sj_avals_in", None) or {})
        ins.pop(op.target, None)
        ins[src] = aval  # (for loop_rows_as_subscripts: S[k] is in bounds)
        s.sj_avals_in = ins
    return done


# ------------------------------------------------------------- stacked readouts
def stacked_readouts(fdef: Any, namer: Any) -> bool:
    """Move the loops' readout products after them (step 2 of the module);
    returns whether anything changed (run :func:`infer_avals` then)."""
    if namer is None or {"range", "reversed"} & set(N.assigned_names(fdef.body)):
        return False
    assigned: Dict[str, int] = {}
    for name in N.assigned_names(fdef.body):
        assigned[name] = assigned.get(name, 0) + 1
    changed = False
    for block in list(statement_blocks(fdef.body)):
        for s in list(block):
            if isinstance(s, gast.For) and _trips(s) is not None:
                loads = read_counts(fdef.body)
                changed |= _readouts_of(block, block.index(s), loads, assigned, namer)
    return changed


def _readouts_of(block: List[Any], i: int, loads, assigned: Dict[str, int], namer: Any) -> bool:
    loop = block[i]
    before = block[:i]
    variant = set(N.assigned_names(loop.body)) | {loop.target.id}
    inside = read_counts(loop.body)
    changed = False
    for s in list(loop.body):
        found = _readout(s, variant, assigned)
        if found is None:
            continue
        m, a, w = found
        # m's one reader: `L.append(m)` later in the trip, `a` unchanged up to it
        j = loop.body.index(s)
        pos = [p for p, t in enumerate(loop.body) if (_appended(t) or ("", ""))[1] == m]
        if len(pos) != 1 or loads.get(m) != 1 or pos[0] <= j:
            continue
        app = loop.body[pos[0]]
        lst = _appended(app)[0]
        if a in N.assigned_names(loop.body[j + 1 : pos[0]]) or inside.get(lst) != 1:
            continue
        if not any(_is_empty_list(b, lst) for b in before):
            continue
        if any(lst in N.names_in(b) for b in before if not _is_empty_list(b, lst)):
            continue
        sites = _stack_sites(block[i + 1 :], lst)
        if not sites:
            continue
        for p in reversed(sites):
            _restack(block, i + 1 + p, lst, w, namer)
        app.value.args[0] = N.name(a)
        if getattr(app, "sj_op", None) is not None and app.sj_op.kind == "append":
            app.sj_op.elts = [N.name(a)]
        loop.body.remove(s)
        changed = True
    return changed


def _readout(s: Any, variant: set, assigned: Dict[str, int]) -> Optional[tuple]:
    """``(m, a, w)`` of ``m = a @ w``: ``w`` an invariant float matrix bound at
    most once in the function, ``a`` a matrix of its dtype (else None)."""
    if not _is_assign(s):
        return None
    op = s.sj_op
    if op.kind != "prim" or op.prim.public != "jnp.matmul" or set(op.bound) != {"a", "b"}:
        return None
    a, w = op.bound["a"], op.bound["b"]
    if not (isinstance(a, gast.Name) and isinstance(w, gast.Name)):
        return None
    if w.id in variant or assigned.get(w.id, 0) > 1 or a.id == w.id:
        return None
    ins = getattr(s, "sj_avals_in", None) or {}
    aa, aw = ins.get(a.id), ins.get(w.id)
    if not (isinstance(aa, Aval) and isinstance(aw, Aval)) or aa.weak_type or aw.weak_type:
        return None
    if len(aa.shape) != 2 or len(aw.shape) != 2 or aa.dtype != aw.dtype:
        return None
    return (s.targets[0].id, a.id, w.id) if aa.dtype in _FLOATS else None


def _stack_sites(after: List[Any], lst: str) -> List[int]:
    """Positions of the statements of ``after`` that read ``lst``, each
    ``t = ad.tree_stack(lst)`` at the top level; empty where another reads it."""
    sites = []
    for p, s in enumerate(after):
        if not any(isinstance(x, gast.Name) and x.id == lst for x in N.walk(s)):
            continue
        if not (
            _is_assign(s)
            and s.sj_op.kind == "prim"
            and s.sj_op.prim.public == "ad.tree_stack"
            and isinstance(s.value, gast.Call)
            and len(s.value.args) == 1
            and isinstance(s.value.args[0], gast.Name)
            and s.value.args[0].id == lst
        ):
            return []
        sites.append(p)
    return sites


def _restack(block: List[Any], p: int, lst: str, w: str, namer: Any) -> None:
    """``t = ad.tree_stack(lst)`` at ``block[p]`` becomes ``rows =
    ad.tree_stack(lst)`` then ``t = jnp.matmul(rows, w)``."""
    s = block[p]
    rows = namer.fresh(f"{lst}_rows")
    stack = _new_assign(
        rows,
        N.call("ad.tree_stack", [N.name(lst)]),
        Op("prim", prim=s.sj_op.prim, bound={k: N.clone(v) for k, v in s.sj_op.bound.items()}),
        s,
    )
    s.value = N.call("jnp.matmul", [N.name(rows), N.name(w)])
    s.sj_op = Op(
        "prim", prim=registry.REGISTRY["jnp.matmul"], bound={"a": N.name(rows), "b": N.name(w)}
    )
    block.insert(p, stack)
