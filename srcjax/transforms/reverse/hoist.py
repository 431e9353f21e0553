"""Rewrites of the normalized body before reverse mode, so that loops carry less:

- loop-invariant reads: ``w = params["w"]`` inside a loop whose body never
  changes ``params`` moves before the loop, so the loop pushes no tape entry for
  ``w`` and the adjoint adds ``w``'s cotangent into ``params``'s once after the
  reverse loop instead of building a container cotangent per trip (lax.scan's
  cell reading its weights from a params dict: issue 17, R3);
- items of a tuple display: ``out = (h, y); carry = out[0]`` reads ``h``
  directly (``carry = h``), and the tuple, read no more, is dropped (a scan
  body's ``return h, y``), so no tuple cotangent is built and split per trip."""

from __future__ import annotations

from typing import Any, List, Set

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op


def hoist_invariant_reads(body: List[Any], containers: Set[str]) -> None:
    """Move, in place, the loop-invariant part reads out of every lax loop of
    ``body`` (:func:`is_lax_loop`; innermost loops first, repeated so a chain ``p = params["l"]; w =
    p["w"]`` moves whole). A statement moves when it is at the top level of a
    ``for``/``while`` body, reads a part (``x[c]`` with a constant ``c`` of a
    name in ``containers``, or ``x.name``) of a name the loop does not assign
    or copies such a name in ``containers`` (``cell_params = params``),
    and its target is assigned nowhere else in the loop, read in the loop only
    after it, and named nowhere outside the loop (so a loop that runs no trip
    leaves nothing observable bound)."""
    outside = _names_outside_loops(body)
    _hoist_block(body, containers, outside)


def _hoist_block(stmts: List[Any], containers: Set[str], outside) -> None:
    i = 0
    while i < len(stmts):
        s = stmts[i]
        if isinstance(s, gast.If):
            _hoist_block(s.body, containers, outside)
            _hoist_block(s.orelse, containers, outside)
        elif isinstance(s, (gast.For, gast.While)):
            _hoist_block(s.body, containers, outside)
            moved = _hoist_loop(s, containers, outside[id(s)])
            if moved:
                stmts[i:i] = moved
                i += len(moved)
        i += 1


def is_lax_loop(loop: Any) -> bool:
    """Whether ``loop`` is a ``for`` whose body checks a lax carry (``lax.scan``,
    ``fori_loop``): JAX traces such a body whatever the trip count, so a read
    moved out of it may fail where the loop runs no trip, as JAX's trace does."""
    return isinstance(loop, gast.For) and any(
        getattr(getattr(st, "sj_op", None), "prim", None) is not None and st.sj_op.prim.carry_check
        for st in loop.body
    )


def _hoist_loop(loop: Any, containers: Set[str], named_outside: Set[str]) -> List[Any]:
    moved: List[Any] = []
    if not is_lax_loop(loop):
        return moved
    while True:
        assigned = _assigned_counts(loop)
        header = set(N.names_in(loop.test if isinstance(loop, gast.While) else loop.iter))
        pick = None
        seen: Set[str] = set(header)  # names read by the loop before the statement
        for s in loop.body:
            if _movable(s, containers, assigned, seen, named_outside):
                pick = s
                break
            seen.update(_reads(s))
        if pick is None:
            return moved
        loop.body.remove(pick)
        if not loop.body:
            loop.body.append(gast.Pass())
        moved.append(pick)


def _movable(s, containers, assigned, seen, named_outside) -> bool:
    op = getattr(s, "sj_op", None)
    if not isinstance(s, gast.Assign) or op is None:
        return False
    if op.kind == "copy" and isinstance(s.value, gast.Name):
        # a container copied in every trip (an inlined cell's parameter,
        # `cell_params = params`): moved, its part reads can move too
        if s.value.id not in containers:
            return False
    elif op.kind != "prim":
        return False
    elif op.prim.part == "item":
        base, idx = op.bound.get("x"), op.bound.get("idx")
        if not isinstance(base, gast.Name) or base.id not in containers:
            return False
        if not isinstance(idx, gast.Constant):
            return False
    elif op.prim.part not in ("attr", "static_attr") or not isinstance(
        op.bound.get("x"), gast.Name
    ):
        return False
    t = s.targets[0].id
    if assigned.get(t) != 1 or t in seen or t in named_outside:
        return False
    return all(n not in assigned for n in N.names_in(s.value))


def _assigned_counts(loop: Any) -> dict:
    """How often the loop binds each name; a container changed in place
    (``l.append(v)``, ``t = l.pop()``, any call statement naming it, a method of
    an object) counts as bound twice, so it is never taken as invariant."""
    counts: dict = {}
    for n in _stores(loop.body):
        counts[n] = counts.get(n, 0) + 1
    for st in N.walk_stmts(loop.body):
        op = getattr(st, "sj_op", None)
        changed = set()
        if op is not None and op.target:
            changed.add(op.target)
        if isinstance(st, gast.Expr) or (op is not None and op.kind in ("unknown", "inactive")):
            changed.update(N.names_in(st))
        elif not isinstance(st, (gast.Assign, gast.If, gast.For, gast.While)):
            changed.update(N.names_in(st))  # (raise, assert, del ...)
        for n in changed:
            counts[n] = counts.get(n, 0) + 2
    if isinstance(loop, gast.For):
        for n in N.target_names(loop):
            counts[n] = counts.get(n, 0) + 2  # never movable, never invariant
    return counts


def _stores(stmts: List[Any]) -> List[str]:
    """Every name stored in ``stmts`` (with repeats: one per store)."""
    out: List[str] = []
    for s in stmts:
        for n in N.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                out.append(n.id)
    return out


def _reads(s: Any) -> List[str]:
    return N.names_in(s)


def _names_outside_loops(body: List[Any]) -> dict:
    """For each loop (by id), the names any statement outside it mentions
    (reads or stores)."""
    everything: List[Any] = list(N.walk_stmts(body))
    total: dict = {}
    for s in everything:
        for n in _own_names(s):
            total[n] = total.get(n, 0) + 1
    out: dict = {}
    for s in everything:
        if isinstance(s, (gast.For, gast.While)):
            inside: dict = {}
            for st in [s, *N.walk_stmts(s.body)]:
                for n in _own_names(st):
                    inside[n] = inside.get(n, 0) + 1
            out[id(s)] = {n for n, k in total.items() if k > inside.get(n, 0)}
    return out


def _own_names(s: Any) -> List[str]:
    """The names a statement mentions itself (a loop or if: its header only;
    none for a declaration ``x = None``, which reads nothing and binds nothing a
    moved statement could be confused with: a read of ``x`` elsewhere counts)."""
    if (
        isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Constant)
        and s.value.value is None
    ):
        return []
    if isinstance(s, gast.For):
        nodes = [s.target, s.iter]
    elif isinstance(s, (gast.While, gast.If)):
        nodes = [s.test]
    else:
        nodes = [s]
    return [n.id for node in nodes for n in N.walk(node) if isinstance(n, gast.Name)]


def forward_tuple_items(body: List[Any]) -> None:
    """Replace, in place, ``c = t[i]`` (a constant ``i``) by ``c = e`` where ``t``
    was bound by the tuple display ``t = (..., e, ...)`` earlier in the same
    block with neither ``t`` nor the name ``e`` rebound since; then drop the
    displays no statement reads any more."""
    changed: List[Any] = []
    _forward_block(body, changed)
    if not changed:
        return
    read = {n for st in N.walk_stmts(body) for n in _read_names(st)}
    _drop_unread(body, {id(st) for st in changed}, read)


def _forward_block(stmts: List[Any], changed: List[Any]) -> None:
    packs: dict = {}  # tuple name -> its display statement
    for s in stmts:
        op = getattr(s, "sj_op", None)
        if isinstance(s, gast.Assign) and op is not None and op.kind == "prim":
            x, idx = op.bound.get("x"), op.bound.get("idx")
            pack = packs.get(x.id) if op.prim.part == "item" and isinstance(x, gast.Name) else None
            if pack is not None and isinstance(idx, gast.Constant) and type(idx.value) is int:
                elts = pack.value.elts
                if -len(elts) <= idx.value < len(elts) and N.is_atom(elts[idx.value]):
                    e = elts[idx.value]
                    s.value = N.clone(e)
                    s.sj_op = Op("copy", elts=[s.value])
                    if pack not in changed:
                        changed.append(pack)
        if isinstance(s, (gast.If, gast.For, gast.While)):
            for block in (s.body, getattr(s, "orelse", [])):
                _forward_block(block, changed)
        stored = set(N.assigned_names([s]))
        for t, pack in list(packs.items()):
            if t in stored or stored & set(N.names_in(pack.value)):
                del packs[t]
        if isinstance(s, gast.Assign) and op is not None and op.kind == "pack":
            if isinstance(s.value, gast.Tuple) and all(N.is_atom(e) for e in s.value.elts):
                packs[s.targets[0].id] = s


def _read_names(s: Any) -> List[str]:
    if isinstance(s, gast.For):
        return N.names_in(s.iter)
    if isinstance(s, (gast.While, gast.If)):
        return N.names_in(s.test)
    return N.names_in(s)


def _drop_unread(stmts: List[Any], packs: Set[int], read: Set[str]) -> None:
    for s in list(stmts):
        if id(s) in packs and s.targets[0].id not in read:
            stmts.remove(s)
        elif isinstance(s, (gast.If, gast.For, gast.While)):
            for block in (s.body, getattr(s, "orelse", [])):
                _drop_unread(block, packs, read)
                if block is s.body and not block:
                    block.append(gast.Pass())
