"""A tape's pushes and pops paired in straight-line code (:func:`pair_tape_entries`).

Once jit has written out grad's forward and reverse loops over a list of known
length (:mod:`.unroll`), every push on the tape (``tape.append(v)``) and every
pop (``x = tape.pop()``) is a top-level statement, so which push each pop takes
back is known now: the tape is a stack run in program order. A pop becomes a
copy of the pushed name (``x = v``), or of a copy made at the push where ``v``
is bound again between the two; the tape and its pushes go. Only a tape that
nothing else reads, bound once to ``[]`` before any push, every pop matched by
a push, is changed.
"""

from __future__ import annotations

from typing import Any, List

from ...analysis.tapes import pure_tape_lists
from ...frontend import nodes as N
from ...frontend.normalize import Op
from .common import _new_assign
from .dead_pops import _site
from .trips import _is_empty_list


def pair_tape_entries(fdef: Any, fresh) -> bool:
    """Pair the pushes and pops of the tapes used only at the top level of
    ``fdef`` (see the module); returns whether anything changed."""
    changed = False
    for tape in sorted(pure_tape_lists(fdef.body)):
        body = _paired(fdef.body, tape, fresh)
        if body is not None:
            fdef.body = body
            changed = True
    return changed


def _paired(body: List[Any], tape: str, fresh) -> Any:
    """``body`` with ``tape``'s pushes and pops paired, or None where they are not
    all top-level statements of a stack run in order."""
    kinds = []
    made = None
    for k, s in enumerate(body):
        if _is_empty_list(s, tape):
            if made is not None or any(kinds):
                return None  # (bound twice, or pushed on before it is bound)
            made = k
            kinds.append(None)
            continue
        kind = _site(s, tape)
        if kind is None:
            kinds.append(None)
            continue
        if kind == "other" or made is None:
            return None  # (a use in a nested block, or another use)
        kinds.append(kind)
    if made is None:
        return None
    stack: List[int] = []
    copy_of = {}  # index of a pop -> index of its push
    for k, kind in enumerate(kinds):
        if kind == "push":
            stack.append(k)
        elif kind == "pop":
            if not stack:
                return None  # (a pop from an empty tape raises: left to run time)
            copy_of[k] = stack.pop()
    snapshot = {}  # index of a push -> the name holding its value
    for p, k in copy_of.items():
        v = body[k].value.args[0].id
        if v in N.assigned_names(body[k + 1 : p]):
            snapshot[k] = fresh(f"{v}_pushed")
    out: List[Any] = []
    for k, s in enumerate(body):
        if k == made:
            continue
        if kinds[k] == "push":
            if k in snapshot:
                v = s.value.args[0].id
                out.append(_new_assign(snapshot[k], N.name(v), Op("copy", elts=[N.name(v)]), s))
            continue
        if kinds[k] == "pop":
            push = body[copy_of[k]]
            held = snapshot.get(copy_of[k], push.value.args[0].id)
            new = _new_assign(s.targets[0].id, N.name(held), Op("copy", elts=[N.name(held)]), s)
            new.sj_note = "the tape's entry, paired in straight-line code"
            out.append(new)
            continue
        out.append(s)
    return out
