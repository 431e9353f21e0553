"""Dead-code elimination of pure statements whose result is never read
(:func:`dce`)."""

from __future__ import annotations

import functools
from typing import Any, Dict, List

import gast

from ...frontend import nodes as N
from .common import _is_assign, _is_pure


# ---------------------------------------------------------------------------- DCE
def dce(fdef: Any) -> Any:
    """Remove pure assignments whose target is never read anywhere."""
    while True:
        reads: Dict[str, int] = {}
        for n in N.walk(gast.Module(body=fdef.body, type_ignores=[])):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                reads[n.id] = reads.get(n.id, 0) + 1
        removed = [0]
        fdef.body = _filter(fdef.body, functools.partial(_live, reads=reads, removed=removed))
        if not removed[0] and not _dead_stores(fdef):
            return fdef


def _dead_stores(fdef: Any) -> bool:
    """Drop pure assignments of the function's top level whose value no later
    statement reads: a name assigned again after them (``g_bar = g_bar_new``
    chains of reverse mode, whose last value jacfwd(jacrev(f)) never reads),
    which :func:`dce`'s count of reads keeps. Straight-line top-level code has
    no way back to an earlier statement; names read in nested functions count
    as read everywhere (a closure reads the name's last value). Returns whether
    anything was dropped."""
    closure = set()
    reads = []  # (each statement's reads, from the one walk of it)
    for s in fdef.body:
        got = set()
        for n in N.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                got.add(n.id)
            elif isinstance(n, (gast.FunctionDef, gast.AsyncFunctionDef, gast.Lambda)):
                for m in N.walk(n):
                    if isinstance(m, gast.Name) and isinstance(m.ctx, gast.Load):
                        closure.add(m.id)
        reads.append(got)
    live: set = set()
    kept: List[Any] = []
    for s, got in zip(reversed(fdef.body), reversed(reads)):
        if _is_assign(s):
            t = s.targets[0].id
            if (
                _is_pure(s)
                and not isinstance(s.value, gast.Constant)  # (declarations `x = None` stay)
                and t not in live
                and t not in closure
            ):
                continue
            live.discard(t)
        live |= got
        kept.append(s)
    if len(kept) == len(fdef.body):
        return False
    fdef.body = kept[::-1]
    return True


def _live(s: Any, reads: Dict[str, int], removed: list) -> bool:
    if _is_assign(s) and _is_pure(s) and reads.get(s.targets[0].id, 0) == 0:
        removed[0] += 1
        return False
    return True


def _filter(stmts: List[Any], keep) -> List[Any]:
    out = []
    for s in stmts:
        if isinstance(s, gast.If):
            s.body = _filter(s.body, keep) or [gast.Pass()]
            s.orelse = _filter(s.orelse, keep)
        elif isinstance(s, (gast.While, gast.For)):
            s.body = _filter(s.body, keep) or [gast.Pass()]
        elif not keep(s):
            continue
        out.append(s)
    return out
