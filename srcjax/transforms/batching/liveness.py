"""Names read before they are written (live on entry) in a block, and renaming
of names in statements and their ops."""

from __future__ import annotations

from typing import Any, Dict, List, Set

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op


def _live_in(stmts: List[Any]) -> Set[str]:
    """Names a block may read before writing them in the same pass (its live-in
    set). More precise than :func:`_reads_before_write` in nested loops: a
    ``for`` target is written before its body runs, and a name the nested body
    writes before reading it is not live there; a loop's or a branch's writes
    count after it only where every path makes them (both branches of an
    ``if``; never for a loop, which may run zero times)."""
    live: Set[str] = set()

    def read(names, written):
        for n in names:
            if n not in written:
                live.add(n)

    def visit(block, written: Set[str]) -> Set[str]:
        written = set(written)
        for st in block:
            if isinstance(st, gast.If):
                read(N.names_in(st.test), written)
                a = visit(st.body, written)
                b = visit(st.orelse, written)
                written |= a & b
                continue
            if isinstance(st, gast.For):
                read(N.names_in(st.iter), written)
                inner = set(written) | {
                    x.id for x in gast.walk(st.target) if isinstance(x, gast.Name)
                }
                # a name the body reads before writing it is carried between its
                # passes: live here unless written before the loop
                visit(st.body, inner)
                continue
            if isinstance(st, gast.While):
                read(N.names_in(st.test), written)
                visit(st.body, written)
                continue
            if isinstance(st, gast.Assign):
                read(N.names_in(st.value), written)
                for t in st.targets:
                    if not isinstance(t, gast.Name):
                        read(N.names_in(t), written)
                written |= set(N.assigned_names([st]))
                continue
            read(N.names_in(st), written)
            written |= set(N.assigned_names([st]))
        return written

    visit(stmts, set())
    return live


def _rename(stmts: List[Any], renames: Dict[str, str]) -> None:
    if not renames:
        return
    for st in stmts:
        for node in gast.walk(st):
            if isinstance(node, gast.Name) and node.id in renames:
                node.id = renames[node.id]
            op = getattr(node, "sj_op", None)
            if op is not None:
                _rename_op(op, renames)
            lax_branches = getattr(node, "sj_lax_branches", None)
            if lax_branches is not None and lax_branches[1] in renames:
                what, t, names = lax_branches
                node.sj_lax_branches = (what, renames[t], names)


def _rename_op(op: Op, renames: Dict[str, str]) -> None:
    def fix(v):
        if isinstance(v, list):
            return [fix(x) for x in v]
        if v is None:
            return v
        for node in gast.walk(v):
            if isinstance(node, gast.Name) and node.id in renames:
                node.id = renames[node.id]
        return v

    op.bound = {k: fix(v) for k, v in op.bound.items()}
    op.elts = [fix(e) for e in op.elts]
    if op.target in renames:
        op.target = renames[op.target]


# --------------------------------------------------------------------------- entry
