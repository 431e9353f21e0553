"""Liveness: the names a block of normalized statements reads before it
writes them.

- :func:`reads_before_write`: in program order, every name some statement
  reads before the block (possibly) writes it, loops counted as a whole.
- :func:`live_in`: the block's live-in set, more precise in nested loops and
  branches (a ``for`` target is written before its body; a branch's writes
  count after it only where both branches make them; a loop may run zero
  times).

vmap uses them to find what a batched ``if`` or loop carries
(:mod:`srcjax.transforms.batching`).
"""

from __future__ import annotations

from typing import Any, List, Set

import gast

from ..frontend import nodes as N

__all__ = ["live_in", "reads_before_write"]


def live_in(stmts: List[Any]) -> Set[str]:
    """Names a block may read before writing them in the same pass (its live-in
    set). More precise than :func:`reads_before_write` in nested loops: a
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


def reads_before_write(stmts: List[Any]) -> List[str]:
    """Names a block reads before (possibly) writing them."""
    written: Set[str] = set()
    out: List[str] = []

    def visit(block):
        for st in block:
            if isinstance(st, gast.If):
                for n in N.names_in(st.test):
                    if n not in written and n not in out:
                        out.append(n)
                visit(st.body)
                visit(st.orelse)
                continue
            if isinstance(st, (gast.While, gast.For)):
                for n in N.names_in(st.test if isinstance(st, gast.While) else st.iter):
                    if n not in written and n not in out:
                        out.append(n)
                for n in N.names_in(gast.Module(body=st.body, type_ignores=[])):
                    if n not in written and n not in out:
                        out.append(n)
                written.update(N.assigned_names([st]))
                continue
            value = st.value if isinstance(st, (gast.Assign, gast.Expr)) else st
            for n in N.names_in(value):
                if n not in written and n not in out:
                    out.append(n)
            written.update(N.assigned_names([st]))

    visit(stmts)
    return out
