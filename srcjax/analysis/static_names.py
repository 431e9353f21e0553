"""Static names: the names of a normalized body that hold the same Python
value for every example under vmap (constants, shape metadata, options a
composition passes on, constant slices), found to a fixed point over the whole
function (:func:`static_names`), and the constants every binding of a name
agrees on (:func:`constant_values`). vmap keeps such names Python values where
a batched ``if`` binds them (:mod:`srcjax.transforms.batching`).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

import gast

from ..frontend import nodes as N

__all__ = [
    "constant_names",
    "constant_values",
    "is_constant",
    "is_none_init",
    "is_static_expr",
    "literal_bindings",
    "static_names",
    "static_names_given",
]


def is_static_expr(e: Any) -> bool:
    """A slice of constants, or a tuple of them and constants (an index a branch
    of generated adjoint code binds: ``slice(None, None, -1)``). Plain
    constants are not: ``k = 1`` / ``k = 2`` in two branches is per-example data."""
    if isinstance(e, gast.Tuple):
        return any(is_static_expr(x) for x in e.elts) and all(
            is_static_expr(x) or is_constant(x) for x in e.elts
        )
    if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and e.func.id == "slice":
        return not e.keywords and all(is_constant(a) for a in e.args)
    return False


def is_constant(e: Any) -> bool:
    if isinstance(e, gast.Constant):
        return True
    return (
        isinstance(e, gast.UnaryOp)
        and isinstance(e.op, gast.USub)
        and isinstance(e.operand, gast.Constant)
    )


def static_names(stmts: List[Any]) -> Set[str]:
    """Names every binding of which in ``stmts`` (the whole function) is static
    metadata: a shape or rank query, an axis from constants
    (``ad.axis_or_zero(None)``), a constant slice. Generated adjoint code binds
    such values in the branches of an ``if``; under a batched condition they
    must stay Python values (joined by ``ad.static_join``), not become
    per-example arrays selected like data."""
    found: Set[str] = set()
    constants = constant_names(stmts)
    while True:  # static metadata computed from static metadata: to a fixed point
        more = static_names_given(stmts, found, constants)
        if more <= found:
            return found
        found |= more


def literal_bindings(stmts: List[Any]) -> Dict[str, Optional[list]]:
    """``name -> [value of each binding]`` when every binding of the name in
    ``stmts`` is a literal display (a constant, or a tuple/list of them), else
    ``name -> None``."""
    import ast

    out: Dict[str, Optional[list]] = {}
    seen: Set[int] = set()  # target nodes of the assignments looked at
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, gast.Assign) and len(node.targets) == 1:
            tgt = node.targets[0]
            if isinstance(tgt, gast.Name):
                seen.add(id(tgt))
                vals = out.setdefault(tgt.id, [])
                try:
                    val = ast.literal_eval(N.to_source(node.value).strip())
                except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
                    out[tgt.id] = None
                    continue
                if vals is not None:
                    vals.append(val)
                continue
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            if id(node) not in seen:
                out[node.id] = None
    return out


def constant_values(stmts: List[Any]) -> Dict[str, Any]:
    """``name -> value`` for names every binding of which in ``stmts`` is one and
    the same constant (a string, number, bool or tuple of them)."""
    return {
        n: vals[0]
        for n, vals in literal_bindings(stmts).items()
        if vals
        and isinstance(vals[0], (str, int, float, bool, tuple))
        and all(type(v) is type(vals[0]) and v == vals[0] for v in vals)
    }


def constant_names(stmts: List[Any]) -> Set[str]:
    """Names every binding of which is a constant or a tuple/list display of them
    (an option a composition passes on: ``window_dimensions = (1, 2, 2)``)."""
    return {n for n, vals in literal_bindings(stmts).items() if vals}


def static_names_given(stmts: List[Any], known: Set[str], constants: Set[str]) -> Set[str]:
    """One round of :func:`static_names`, taking the names ``known`` as static:
    a ``static_result`` primitive (the conv plans) or an index into a tuple is
    static when its operands are (static names, constants, or names bound only
    to constant displays)."""

    def operand_ok(v: Any) -> bool:
        if isinstance(v, gast.Name):
            return v.id in known or v.id in constants
        return v is None or is_constant(v) or is_static_expr(v)

    plain: Set[int] = set()  # Name nodes bound by a static assignment
    neutral: Set[int] = set()  # ... by `x = None` (pre-initialized) or a tape pop
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if not isinstance(node, gast.Assign) or len(node.targets) != 1:
            continue
        tgt = node.targets[0]
        if not isinstance(tgt, gast.Name):
            continue
        op = getattr(node, "sj_op", None)
        if (isinstance(node.value, gast.Constant) and node.value.value is None) or (
            op is not None and op.kind == "pop"
        ):
            # a pop restores what the same name pushed (the tape's restore
            # pattern), so it is static when every other binding is
            neutral.add(id(tgt))
            continue
        ok = is_static_expr(node.value)
        if not ok and op is not None and op.kind == "prim":
            # the shape queries are static whatever their operands are; others
            # when their operands are constants
            ok = op.prim.shape_query is not None or (
                op.prim.static_for_constants
                and all(
                    is_constant(v)
                    for v in op.bound.values()
                    for v in (v if isinstance(v, list) else [v])
                )
            )
            if not ok and (op.prim.static_result or (known and op.prim.part == "item")):
                ok = all(
                    operand_ok(v)
                    for v in op.bound.values()
                    for v in (v if isinstance(v, list) else [v])
                )
        elif not ok and op is not None and op.kind == "copy" and known:
            ok = isinstance(node.value, gast.Name) and node.value.id in known
        if ok:
            plain.add(id(tgt))
    good: Dict[str, bool] = {}
    seen: Set[str] = set()
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            if id(node) in neutral:
                good.setdefault(node.id, True)
                continue
            good[node.id] = good.get(node.id, True) and id(node) in plain
            seen.add(node.id)
    return {n for n, ok in good.items() if ok and n in seen}


def is_none_init(node: Any) -> bool:
    return (
        isinstance(node, gast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], gast.Name)
        and isinstance(node.value, gast.Constant)
        and node.value.value is None
    )
