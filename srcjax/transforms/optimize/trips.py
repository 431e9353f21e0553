"""One list per value pushed on every trip (:func:`merge_trip_lists`).

Reverse mode sums the cotangents of a loop-invariant operand over the trips by
pushing each trip's factor on a list of its own and stacking the list once after
the loop (``wh_g_trips.append(matmul1_bar)`` ... ``ad.tree_stack(wh_g_trips)``).
Once jit has folded the helpers that had nothing to do (``matmul1_bar =
ad.unbroadcast(add_bar, matmul1)`` is ``add1_bar``), several lists receive the
same value on every trip (R3's scan RNN: the bias's, ``wh``'s and ``wx``'s
factors are all ``add1_bar``): one list is kept, and the stacks of the others
read it (CSE then stacks it once). The lists of vmap's batched forms, joined by
``jnp.concatenate`` (U2's GRU: ``x`` is the factor of three weights'
cotangents), merge alike."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import gast

from ...frontend import nodes as N
from .common import _subst_stmt


def merge_trip_lists(fdef: Any) -> bool:
    """Merge lists that a loop pushes the same value on (see the module); returns
    whether anything changed."""
    changed = False
    for _ in range(32):
        if not any(_merge_in_block(b) for b in list(statement_blocks(fdef.body))):
            break
        changed = True
    return changed


def statement_blocks(stmts: List[Any]):
    """The statement lists of a body: it, and the bodies of its ifs and loops, nested."""
    yield stmts
    for s in stmts:
        if isinstance(s, gast.If):
            yield from statement_blocks(s.body)
            yield from statement_blocks(s.orelse)
        elif isinstance(s, (gast.For, gast.While)):
            yield from statement_blocks(s.body)


def _appended(s: Any) -> Optional[tuple]:
    """``(list name, value name)`` of ``L.append(v)``, else None."""
    if not isinstance(s, gast.Expr):
        return None
    c = s.value
    if (
        isinstance(c, gast.Call)
        and isinstance(c.func, gast.Attribute)
        and c.func.attr == "append"
        and isinstance(c.func.value, gast.Name)
        and len(c.args) == 1
        and not c.keywords
        and isinstance(c.args[0], gast.Name)
    ):
        return c.func.value.id, c.args[0].id
    return None


def _is_empty_list(s: Any, name: str) -> bool:
    return (
        isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and s.targets[0].id == name
        and isinstance(s.value, gast.List)
        and not s.value.elts
    )


def _fresh_before(before: List[Any], lst: str) -> bool:
    """Whether ``lst = []`` is among the statements ``before`` and no other of
    them mentions ``lst`` (the list a loop after them appends to starts empty
    there)."""
    return any(_is_empty_list(b, lst) for b in before) and not any(
        N.mentions(b, lst) for b in before if not _is_empty_list(b, lst)
    )


#: the calls that join a trip list's values (reverse mode's deferred sums:
#: ``ad.tree_stack``, or ``jnp.concatenate`` for vmap's batched forms)
_JOINS = ("ad.tree_stack", "jnp.concatenate")


def _only_stacked(stmts: List[Any], names: set) -> bool:
    """Whether every read of ``names`` in ``stmts`` is the operand of
    ``ad.tree_stack(L)`` or ``jnp.concatenate(L)`` (no method call, no other
    use, no assignment)."""
    ok = set()
    for n in N.walk(gast.Module(body=stmts, type_ignores=[])):
        if (
            isinstance(n, gast.Call)
            and N.to_source(n.func).strip() in _JOINS
            and len(n.args) == 1
            and not n.keywords
            and isinstance(n.args[0], gast.Name)
        ):
            ok.add(id(n.args[0]))
    for n in N.walk(gast.Module(body=stmts, type_ignores=[])):
        if isinstance(n, gast.Name) and n.id in names and id(n) not in ok:
            return False
    return True


def _merge_in_block(block: List[Any]) -> bool:
    for i, loop in enumerate(block):
        if not isinstance(loop, gast.For):
            continue
        before, after = block[:i], block[i + 1 :]
        # the lists made empty before the loop and pushed on at its top level
        pushes: Dict[str, tuple] = {}  # list -> (position, value)
        uses: Dict[str, int] = {}
        for n in N.walk(loop):
            if isinstance(n, gast.Name):
                uses[n.id] = uses.get(n.id, 0) + 1
        for j, s in enumerate(loop.body):
            got = _appended(s)
            if got is None:
                continue
            lst, v = got
            if lst in pushes:
                pushes[lst] = None  # (pushed twice a trip)
            elif uses.get(lst) == 1 and any(_is_empty_list(b, lst) for b in before):
                pushes[lst] = (j, v)
        first: Dict[str, str] = {}  # value -> the list kept for it
        merged: Dict[str, str] = {}  # list -> the list it reads instead
        for lst, pv in sorted(
            ((k, p) for k, p in pushes.items() if p is not None), key=lambda kv: kv[1][0]
        ):
            j, v = pv
            keep = first.get(v)
            if keep is None:
                first[v] = lst
                continue
            jk = pushes[keep][0]
            if v in N.assigned_names(loop.body[jk + 1 : j]):
                first[v] = lst  # (another value by now)
                continue
            merged[lst] = keep
        if not merged:
            continue
        # the lists' other reads after the loop: stacks only; none before it
        names = set(merged) | set(merged.values())
        if not _only_stacked(after, names):
            continue
        reads_before = [
            n
            for s in before
            if not any(_is_empty_list(s, x) for x in names)
            for n in N.walk(s)
            if isinstance(n, gast.Name) and n.id in names
        ]
        if reads_before:
            continue
        loop.body[:] = [s for s in loop.body if (_appended(s) or ("", ""))[0] not in merged]
        table = {old: N.name(new) for old, new in merged.items()}
        for s in N.walk_stmts(after):
            if isinstance(s, (gast.Assign, gast.Expr, gast.Return)):
                _subst_stmt(s, table)
        block[:i] = [s for s in before if not any(_is_empty_list(s, x) for x in merged)]
        return True  # (indices moved: the caller looks again)
    return False
