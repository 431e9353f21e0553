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
        if not removed[0]:
            return fdef


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
