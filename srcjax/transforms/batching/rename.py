"""Renaming of names in batched statements and in the ops they carry (the
branches of a batched ``if`` run on renamed copies of their names)."""

from __future__ import annotations

from typing import Any, Dict, List

import gast

from ...frontend.normalize import Op


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
