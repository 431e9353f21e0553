"""Cotangents of every item of a list or tuple, as one display
(:func:`item_cotangents`).

Reverse mode gives the cotangent of ``x`` from those of its items one item at a
time: ``t3 = ad.tree_index_adjoint(o_bar, parts, 3)`` is a list with ``o_bar``
at 3 and holes (``None``) elsewhere, ``ad.tree_add`` merges two such lists, and
``ad.fill_none(s, parts)`` fills what is left (U1's LSTM: the four gates of
``jnp.split``, and the ``(h, c)`` carry, on each of the 40 reverse trips: eight
Python calls where one list display does). Where every index ``0 .. n-1`` of
a list or tuple ``x`` of ``n`` items gets exactly one cotangent, each an array
or scalar (its abstract value known and sure: never a hole), the merged value is the list ``[g0, ..., g(n-1)]``
(``tree_index_adjoint`` gives a list for a tuple ``x`` too; ``tree_add`` of two
lists with disjoint entries takes each entry as it is): the last merge becomes
that display, and a ``fill_none`` of it, which has nothing to fill, the same
display (a new list, as ``fill_none`` gives). The pieces are then dead where
nothing else reads them (:func:`.dce`).
"""

from __future__ import annotations

from typing import Any, Dict, Optional, Tuple

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op
from .avals import Aval
from .common import _is_assign, _new_assign
from .trips import statement_blocks


def item_cotangents(fdef: Any) -> bool:
    """Write the merges of item cotangents that cover a list or tuple as a display
    (see the module); returns whether anything changed."""
    changed = False
    seen: list = []  # the piece statements met
    for stmts in list(statement_blocks(fdef.body)):
        changed |= _in_block(stmts, seen)
    if changed:
        _drop_unread(fdef, {id(s) for s in seen})
    return changed


def _drop_unread(fdef: Any, pieces: set) -> None:
    """Drop the piece statements whose value nothing reads any more (``ad.
    tree_index_adjoint`` of a list or tuple and ``ad.tree_add`` build new
    containers and change nothing; :func:`.dce` keeps the first, an internal
    helper it does not know as pure): a piece is dead when, after it in its
    statement list, its name is bound again before any read other than by
    dead pieces, or never read again and read nowhere outside that list (inside
    a loop, the next trip's statements before it count as after it)."""
    outside: Dict[int, set] = {}
    blocks = list(statement_blocks(fdef.body))
    every: Dict[str, int] = {}
    for n in N.walk(fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            every[n.id] = every.get(n.id, 0) + 1
    loops = {  # (every statement list inside a loop: the next trip may read it)
        id(b)
        for s in N.walk(fdef)
        if isinstance(s, (gast.For, gast.While))
        for b in statement_blocks(s.body)
    }
    dead: set = set()
    while True:
        more = False
        for stmts in blocks:
            here: Dict[str, int] = {}
            for st in stmts:
                for n in N.walk(st):
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                        here[n.id] = here.get(n.id, 0) + 1
            outside[id(stmts)] = {k for k, v in every.items() if v > here.get(k, 0)}
            for i, st in enumerate(stmts):
                if id(st) in pieces and id(st) not in dead:
                    if _unread_after(stmts, i, dead, outside[id(stmts)], id(stmts) in loops):
                        dead.add(id(st))
                        more = True
        if not more:
            break
    for stmts in blocks:
        stmts[:] = [st for st in stmts if id(st) not in dead]


def _unread_after(stmts: list, i: int, dead: set, outside: set, loop: bool) -> bool:
    """Whether the value statement ``i`` binds is read by no live statement
    (in a loop's body, the next trip's statements before ``i`` too)."""
    t = stmts[i].targets[0].id
    if t in outside:
        return _killed(stmts[i + 1 :], t, dead) is True
    after = stmts[i + 1 :] + (stmts[: i + 1] if loop else [])
    return _killed(after, t, dead) is not False


def _killed(stmts: list, t: str, dead: set) -> Any:
    """True when ``t`` is bound again before a live read in ``stmts``, False
    when it is read first, None when neither."""
    for st in stmts:
        if id(st) in dead:
            continue
        if any(
            isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id == t
            for n in N.walk(st)
        ):
            return False
        if _is_assign(st) and st.targets[0].id == t:
            return True  # (bound again: the piece's value is gone)
    return None


#: a piece: (x's name, x's length, {index: the name of its cotangent})
_Piece = Tuple[str, int, Dict[int, str]]


def _in_block(stmts: list, seen: list) -> bool:
    pieces: Dict[str, _Piece] = {}
    covered: Dict[str, list] = {}  # a display written here -> its item names
    changed = False
    for i, s in enumerate(stmts):
        if _is_assign(s):
            target = s.targets[0].id
            got = _piece(s, pieces)
            if got is not None and len(got[2]) == got[1]:
                items = [got[2][k] for k in range(got[1])]
                stmts[i] = _display(target, items, s, "the cotangents of every item, as a display")
                _forget(pieces, covered, {target})
                covered[target] = items
                changed = True
                continue
            like = _fill_none_of(s)
            if like is not None and like in covered:
                items = covered[like]
                stmts[i] = _display(target, items, s, "ad.fill_none: no hole to fill")
                _forget(pieces, covered, {target})
                changed = True
                continue
            _forget(pieces, covered, {target})
            if got is not None:
                pieces[target] = got
                seen.append(s)
            continue
        _forget(pieces, covered, set(N.assigned_names([s])))
    return changed


def _display(target: str, items: list, like: Any, note: str) -> Any:
    """``target = [items...]``: a new list, as ``tree_add`` and ``fill_none`` give."""
    elts = [N.name(g) for g in items]
    s = _new_assign(
        target,
        gast.List(elts=elts, ctx=gast.Load()),
        Op("pack", elts=[N.name(g) for g in items]),
        like,
    )
    s.sj_note = note
    return s


def _forget(pieces: Dict[str, _Piece], covered: Dict[str, list], names: set) -> None:
    """Drop the pieces and displays that read or are one of ``names`` (rebound)."""
    for k in [
        k
        for k, (x, _, by) in pieces.items()
        if k in names or x in names or set(by.values()) & names
    ]:
        del pieces[k]
    for k in [k for k, items in covered.items() if k in names or set(items) & names]:
        del covered[k]


def _prim(s: Any) -> Optional[str]:
    op = s.sj_op
    return op.prim.public if op.kind == "prim" else None


def _piece(s: Any, pieces: Dict[str, _Piece]) -> Optional[_Piece]:
    """The piece assignment ``s`` makes: ``ad.tree_index_adjoint(g, x, k)`` of a
    sure array or scalar ``g``, a constant index and a list or tuple ``x`` of
    known length, or ``ad.tree_add`` of two pieces of one ``x`` with disjoint
    indices (the pieces themselves are left as they are: dead once no other
    statement reads them)."""
    prim = _prim(s)
    b = s.sj_op.bound
    if prim == "ad.tree_index_adjoint":
        g, x, k = b.get("ct"), b.get("x"), b.get("idx")
        if not (
            isinstance(g, gast.Name)
            and isinstance(x, gast.Name)
            and isinstance(k, gast.Constant)
            and type(k.value) is int
            and getattr(s, "sj_sure", False)
        ):
            return None
        avals = getattr(s, "sj_avals_in", {})
        xa, ga = avals.get(x.id), avals.get(g.id)
        if type(xa) not in (list, tuple) or not isinstance(ga, Aval):
            return None
        if not 0 <= k.value < len(xa):
            return None
        return (x.id, len(xa), {k.value: g.id})
    if prim == "ad.tree_add":
        a, c = b.get("a"), b.get("b")
        if not (isinstance(a, gast.Name) and isinstance(c, gast.Name)):
            return None
        pa, pc = pieces.get(a.id), pieces.get(c.id)
        if pa is None or pc is None or a.id == c.id:
            return None
        if pa[0] != pc[0] or pa[1] != pc[1] or set(pa[2]) & set(pc[2]):
            return None
        return (pa[0], pa[1], {**pa[2], **pc[2]})
    return None


def _fill_none_of(s: Any) -> Optional[str]:
    """``s``'s operand name of ``ad.fill_none(s, like)``, else None."""
    if _prim(s) != "ad.fill_none":
        return None
    p = s.sj_op.bound.get("pieces")
    return p.id if isinstance(p, gast.Name) else None
