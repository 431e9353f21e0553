"""Tapes and stacks: which lists of a normalized body are only pushed to and
popped from (the tapes and cotangent tapes of generated adjoint code), as
opposed to lists that hold values.

- :func:`tape_lists`: lists anything pushes to or pops from;
- :func:`pure_tape_lists`: lists read nowhere but by their own pushes and pops;
- :func:`stack_lists`: lists a block only pushes to and pops from (bound
  nowhere else);
- :func:`appended_lists`: lists a block appends to.

vmap reads them: a pure tape of unbatched values stays unbatched, and the
stacks of a batched ``if`` are shared by both branches
(:mod:`srcjax.transforms.batching`).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

import gast

from ..frontend import nodes as N
from .static_names import is_none_init

__all__ = ["IN_PLACE", "appended_lists", "pure_tape_lists", "stack_lists", "tape_lists"]


def tape_lists(stmts: List[Any]) -> Set[str]:
    """Names of the lists anything in ``stmts`` pushes to or pops from."""
    out: Set[str] = set()
    for node in N.walk(gast.Module(body=list(stmts), type_ignores=[])):
        op = getattr(node, "sj_op", None)
        if op is not None and op.kind in ("append", "pop") and op.target:
            out.add(op.target)
    return out


#: methods that change a list or dict in place
IN_PLACE = {"append", "pop", "extend", "insert", "remove", "clear", "popitem", "update"}


def pure_tape_lists(stmts: List[Any]) -> Set[str]:
    """Lists that are read nowhere but as the list an append/pop works on."""
    loads: Dict[str, int] = {}
    tape_uses: Dict[str, int] = {}
    for node in N.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            loads[node.id] = loads.get(node.id, 0) + 1
        if (
            isinstance(node, gast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)
        ):
            # `tape = tape + [v]`: higher-order adjoint code replaying pops
            n = node.targets[0].id
            if isinstance(node.value, gast.Name):
                # `tape_then = tape`: a copy made by an earlier vmap's branches
                m = node.value.id
                tape_uses[m] = tape_uses.get(m, 0) + 1
                continue
            uses = [s for s in N.walk(node.value) if isinstance(s, gast.Name) and s.id == n]
            if uses:
                tape_uses[n] = tape_uses.get(n, 0) + len(uses)
                continue
        op = getattr(node, "sj_op", None)
        if (
            op is not None
            and op.kind in ("append", "pop")
            and op.target
            and isinstance(node, (gast.Expr, gast.Assign))
        ):
            for sub in N.walk(node.value):
                if isinstance(sub, gast.Name) and sub.id == op.target:
                    tape_uses[op.target] = tape_uses.get(op.target, 0) + 1
    return {n for n, k in tape_uses.items() if loads.get(n, 0) == k}


def stack_lists(stmts: List[Any], tapes: Optional[Set[str]] = None) -> Set[str]:
    """Lists a block only pushes to (``lst = ad.push(lst, v)``) and pops from
    (``ad.pop_like(lst, like)``, ``lst.pop()``): the tapes and cotangent tapes
    of generated adjoint code. A name also bound otherwise is a value, not a
    stack."""
    pushed: Dict[str, int] = {}
    stores: Dict[str, int] = {}
    for node in N.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        op = getattr(node, "sj_op", None)
        if is_none_init(node) and (tapes is None or node.targets[0].id in tapes):
            # `tape_bar = None`: a cotangent tape started empty
            pushed[node.targets[0].id] = pushed.get(node.targets[0].id, 0) + 1
        elif (
            isinstance(node, gast.Assign)
            and op is not None
            and op.kind == "append"
            and [t.id for t in node.targets if isinstance(t, gast.Name)] == [op.target]
        ):
            pushed[op.target] = pushed.get(op.target, 0) + 1
        elif op is not None and op.kind == "pop" and isinstance(node, (gast.Assign, gast.Expr)):
            pushed.setdefault(op.target, 0)
    return {n for n, k in pushed.items() if stores.get(n, 0) == k}


def appended_lists(stmts: List[Any]) -> Set[str]:
    """Names of the lists ``stmts`` append to (``lst.append(v)``)."""
    out: Set[str] = set()
    for node in N.walk(gast.Module(body=list(stmts), type_ignores=[])):
        op = getattr(node, "sj_op", None)
        if op is not None and op.kind == "append" and op.target:
            out.add(op.target)
    return out
