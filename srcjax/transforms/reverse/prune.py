"""Small helpers of reverse mode's generated statements: the restore
placeholder, tape pops, list restores, and backward liveness that prunes dead
restores and copies."""

from __future__ import annotations

from typing import Any, List, Set

import gast

from ...frontend import nodes as N


class _Restore:
    """Placeholder in the adjoint sweep: restore `name` if its old value was saved."""

    def __init__(self, name: str, site: Any, in_loop: bool, defined_before: bool):
        self.name = name
        self.site = site  # the forward statement that overwrites `name`
        self.in_loop = in_loop
        self.defined_before = defined_before


def _one(classes: Any) -> Any:
    """The single class in ``classes`` (a set), or None."""
    if classes and len(classes) == 1:
        (c,) = tuple(classes)
        if isinstance(c, str):
            return c
    return None


def _pops(stmts: List[Any], tape: str) -> bool:
    """Whether ``stmts`` pop from the tape list ``tape``."""
    for n in N.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if (
            isinstance(n, gast.Call)
            and isinstance(n.func, gast.Attribute)
            and n.func.attr == "pop"
            and isinstance(n.func.value, gast.Name)
            and n.func.value.id == tape
        ):
            return True
    return False


def _list_restore(st: Any, *reads: str) -> Any:
    """Mark ``st`` (``l = l[:-1]`` / ``l = l + [t]``) as a restore of list ``l``
    that is dead unless ``l`` is read later in the sweep."""
    st.sj_list_restore = reads
    return st


def _uses(node: Any) -> Set[str]:
    return {n.id for n in N.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def _prune_block(stmts: List[Any], live: Set[str]) -> Set[str]:
    """Backward liveness over ``stmts`` (given the names ``live`` after them),
    removing dead list restores in place; returns the names live before."""
    keep: List[Any] = []
    for s in reversed(stmts):
        if isinstance(s, _Restore):
            keep.append(s)  # (a definition, when resolved: kills nothing here)
            continue
        restore = getattr(s, "sj_list_restore", None)
        if restore is not None:
            if restore[0] not in live:
                continue
            live |= set(restore)
            keep.append(s)
            continue
        if isinstance(s, gast.If):
            a = _prune_block(s.body, set(live))
            b = _prune_block(s.orelse, set(live))
            live = a | b | _uses(s.test)
        elif isinstance(s, (gast.For, gast.While)):
            head = _uses(s.iter if isinstance(s, gast.For) else s.test)
            entry = set(live) | head
            while True:  # the body runs again after itself: to a fixed point
                trial = _prune_copy(s.body)
                new = _prune_block(trial, set(entry)) | entry
                if new == entry:
                    break
                entry = new
            _prune_block(s.body, set(entry))
            live = entry
        elif isinstance(s, gast.Assign):
            for t in s.targets:
                if isinstance(t, gast.Name):
                    live.discard(t.id)
            live |= _uses(s.value)
        else:
            live |= _uses(s)
        keep.append(s)
    stmts[:] = keep[::-1]
    return live


def _prune_copy(stmts: List[Any]) -> List[Any]:
    """A shallow structural copy of a block, for trial liveness passes (which
    remove statements from the lists they walk)."""
    out = []
    for s in stmts:
        if isinstance(s, gast.If):
            c = gast.If(test=s.test, body=_prune_copy(s.body), orelse=_prune_copy(s.orelse))
            out.append(c)
        elif isinstance(s, gast.For):
            c = gast.For(
                target=s.target, iter=s.iter, body=_prune_copy(s.body), orelse=[], type_comment=None
            )
            out.append(c)
        elif isinstance(s, gast.While):
            out.append(gast.While(test=s.test, body=_prune_copy(s.body), orelse=[]))
        else:
            out.append(s)
    return out


def _is_reversed(it: Any) -> bool:
    return (
        isinstance(it, gast.Call)
        and isinstance(it.func, gast.Name)
        and it.func.id == "reversed"
        and len(it.args) == 1
    )


def _has_code(stmts: List[Any]) -> bool:
    return any(not isinstance(s, (_Restore, gast.Pass)) for s in stmts)
