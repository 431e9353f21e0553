"""Tape entries no adjoint reads, dropped (:func:`drop_unread_tape_entries`).

grad's forward loop pushes each value it overwrites on a tape list and the
reverse loop pops it back (``T.append(x)`` ... ``x = T.pop()``), whether or not an
adjoint reads the restored value: R3's scan cell pushes ``x @ wx``, ``h @ wh`` and
their sum on each of its 50 trips and its reverse loop pops them into names it
never reads. Where jit sees both loops, it drops such a push and its pop.

Pairs are matched as the Numba tape planner matches them (see
``backends/numba_cpu/tapes.py``): the top-level loops using the tape, each only
pushing (a forward loop) or only popping (a reverse loop) at the top level of
its body, nested like parentheses (F1 F2 R2 R1), a pair with as many pops as
pushes over the same constant trip count; push ``i`` of a forward trip is pop
``m - 1 - i`` of the reverse trip. A pop is unread when its name is not live
after it: in the rest of the trip, the next trip, or after the loop."""

from __future__ import annotations

from typing import Any, List, Optional, Set

import gast

from ...analysis.liveness import live_in
from ...analysis.tapes import pure_tape_lists
from ...frontend import nodes as N
from .loop_facts import trip_count
from .trips import _is_empty_list


def drop_unread_tape_entries(fdef: Any) -> bool:
    """Drop the pushes whose pops nothing reads, and those pops (see the module);
    returns whether anything changed."""
    drop: Set[int] = set()
    local = set(N.assigned_names(fdef.body)) | {a.id for a in fdef.args.args}
    for tape in sorted(pure_tape_lists(fdef.body)):
        loops = _tape_loops(fdef.body, tape)
        if loops is None:
            continue
        stack: List[int] = []
        for i, (kind, _) in enumerate(loops):
            if kind == "push":
                stack.append(i)
            elif stack:
                drop |= _pair(fdef.body, loops[stack.pop()][1], loops[i][1], tape, local)
            else:
                break
    if not drop:
        return False
    _remove(fdef, drop)
    return True


def _site(s: Any, tape: str) -> Optional[str]:
    """ "push" for ``tape.append(x)`` (``x`` a name), "pop" for ``x = tape.pop()``,
    "other" for any other use of ``tape`` in ``s``, None when ``s`` has none."""
    op = getattr(s, "sj_op", None)
    if op is not None and op.target == tape:
        v = s.value if isinstance(s, (gast.Expr, gast.Assign)) else None
        call = v if isinstance(v, gast.Call) else None
        plain = (
            call is not None
            and isinstance(call.func, gast.Attribute)
            and isinstance(call.func.value, gast.Name)
            and call.func.value.id == tape
            and not call.keywords
        )
        if (
            op.kind == "append"
            and isinstance(s, gast.Expr)
            and plain
            and call.func.attr == "append"
        ):
            if len(call.args) == 1 and isinstance(call.args[0], gast.Name):
                return "push"
        if (
            op.kind == "pop"
            and isinstance(s, gast.Assign)
            and plain
            and call.func.attr == "pop"
            and not call.args
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
        ):
            return "pop"
    for n in N.walk(s):
        if isinstance(n, gast.Name) and n.id == tape:
            return "other"
    return None


def _tape_loops(body: List[Any], tape: str) -> Optional[List[tuple]]:
    """``[(kind, loop)]`` of the top-level ``for`` loops using ``tape``, each
    "push" or "pop" (every use a top-level push, or pop, of its body); None when
    another statement uses it (its ``tape = []`` aside)."""
    out = []
    for s in body:
        if isinstance(s, gast.For):
            kinds = set()
            for t in s.body:
                k = _site(t, tape)
                if k is not None:
                    kinds.add(k)
            nested = [
                n
                for t in s.body
                if _site(t, tape) is None
                for n in N.walk(t)
                if isinstance(n, gast.Name) and n.id == tape
            ]
            if nested or len(kinds) > 1 or "other" in kinds:
                return None
            if kinds:
                out.append((kinds.pop(), s))
            continue
        if _is_empty_list(s, tape):
            continue
        if _site(s, tape) is not None:
            return None
    return out


def _pair(body: List[Any], fwd: Any, rev: Any, tape: str, local: set) -> Set[int]:
    """The statements to drop from one forward/reverse pair of loops."""
    if "reversed" in local:
        return set()
    n = trip_count(fwd.iter, {}, local)
    if n is None or n < 1 or trip_count(rev.iter, {}, local) != n:
        return set()
    pushes = [t for t in fwd.body if _site(t, tape) == "push"]
    pops = [(i, t) for i, t in enumerate(rev.body) if _site(t, tape) == "pop"]
    if len(pushes) != len(pops):
        return set()
    after = body[body.index(rev) + 1 :]
    live_next = live_in(rev.body) | live_in(after)
    out: Set[int] = set()
    dropped = 0
    for push, (i, pop) in zip(pushes, reversed(pops)):
        name = pop.targets[0].id
        if name in live_next or name in live_in(rev.body[i + 1 :]):
            continue
        out |= {id(push), id(pop)}
        dropped += 1
    if dropped in (len(fwd.body), len(rev.body)):
        return set()  # (a loop left empty: keep it as it is)
    return out


def _remove(fdef: Any, drop: Set[int]) -> None:
    for node in N.walk(fdef):
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if isinstance(block, list) and any(id(s) in drop for s in block):
                setattr(node, field, [s for s in block if id(s) not in drop])
