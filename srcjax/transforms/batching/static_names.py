"""Which names of a normalized body are static under vmap (the same for every
example: constants, shape metadata, tapes that only restore), and which lists
are tapes or stacks."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

import gast

from ...frontend import nodes as N


def _tape_names(stmts: List[Any]) -> Set[str]:
    """Names of the lists anything in ``stmts`` pushes to or pops from."""
    out: Set[str] = set()
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        op = getattr(node, "sj_op", None)
        if op is not None and op.kind in ("append", "pop") and op.target:
            out.add(op.target)
    return out


#: methods that change a list or dict in place
_IN_PLACE = {"append", "pop", "extend", "insert", "remove", "clear", "popitem", "update"}


def _pure_tapes(stmts: List[Any]) -> Set[str]:
    """Lists that are read nowhere but as the list an append/pop works on."""
    loads: Dict[str, int] = {}
    tape_uses: Dict[str, int] = {}
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
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
            uses = [s for s in gast.walk(node.value) if isinstance(s, gast.Name) and s.id == n]
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
            for sub in gast.walk(node.value):
                if isinstance(sub, gast.Name) and sub.id == op.target:
                    tape_uses[op.target] = tape_uses.get(op.target, 0) + 1
    return {n for n, k in tape_uses.items() if loads.get(n, 0) == k}


def _stacks(stmts: List[Any], tapes: Optional[Set[str]] = None) -> Set[str]:
    """Lists a block only pushes to (``lst = ad.push(lst, v)``) and pops from
    (``ad.pop_like(lst, like)``, ``lst.pop()``): the tapes and cotangent tapes
    of generated adjoint code. A name also bound otherwise is a value, not a
    stack."""
    pushed: Dict[str, int] = {}
    stores: Dict[str, int] = {}
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        op = getattr(node, "sj_op", None)
        if _is_none_init(node) and (tapes is None or node.targets[0].id in tapes):
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


def _is_static_expr(e: Any) -> bool:
    """A slice of constants, or a tuple of them and constants (an index a branch
    of generated adjoint code binds: ``slice(None, None, -1)``). Plain
    constants are not: ``k = 1`` / ``k = 2`` in two branches is per-example data."""
    if isinstance(e, gast.Tuple):
        return any(_is_static_expr(x) for x in e.elts) and all(
            _is_static_expr(x) or _is_constant(x) for x in e.elts
        )
    if isinstance(e, gast.Call) and isinstance(e.func, gast.Name) and e.func.id == "slice":
        return not e.keywords and all(_is_constant(a) for a in e.args)
    return False


def _is_constant(e: Any) -> bool:
    if isinstance(e, gast.Constant):
        return True
    return (
        isinstance(e, gast.UnaryOp)
        and isinstance(e.op, gast.USub)
        and isinstance(e.operand, gast.Constant)
    )


def _static_names(stmts: List[Any]) -> Set[str]:
    """Names every binding of which in ``stmts`` (the whole function) is static
    metadata: a shape or rank query, an axis from constants
    (``ad.axis_or_zero(None)``), a constant slice. Generated adjoint code binds
    such values in the branches of an ``if``; under a batched condition they
    must stay Python values (joined by ``ad.static_join``), not become
    per-example arrays selected like data."""
    found: Set[str] = set()
    constants = _constant_names(stmts)
    while True:  # static metadata computed from static metadata: to a fixed point
        more = _static_names_given(stmts, found, constants)
        if more <= found:
            return found
        found |= more


def _literal_bindings(stmts: List[Any]) -> Dict[str, Optional[list]]:
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


def _constant_values(stmts: List[Any]) -> Dict[str, Any]:
    """``name -> value`` for names every binding of which in ``stmts`` is one and
    the same constant (a string, number, bool or tuple of them)."""
    return {
        n: vals[0]
        for n, vals in _literal_bindings(stmts).items()
        if vals
        and isinstance(vals[0], (str, int, float, bool, tuple))
        and all(type(v) is type(vals[0]) and v == vals[0] for v in vals)
    }


def _constant_names(stmts: List[Any]) -> Set[str]:
    """Names every binding of which is a constant or a tuple/list display of them
    (an option a composition passes on: ``window_dimensions = (1, 2, 2)``)."""
    return {n for n, vals in _literal_bindings(stmts).items() if vals}


def _static_names_given(stmts: List[Any], known: Set[str], constants: Set[str]) -> Set[str]:
    """One round of :func:`_static_names`, taking the names ``known`` as static:
    a ``static_result`` primitive (the conv plans) or an index into a tuple is
    static when its operands are (static names, constants, or names bound only
    to constant displays)."""

    def operand_ok(v: Any) -> bool:
        if isinstance(v, gast.Name):
            return v.id in known or v.id in constants
        return v is None or _is_constant(v) or _is_static_expr(v)

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
        ok = _is_static_expr(node.value)
        if not ok and op is not None and op.kind == "prim":
            # the shape queries are static whatever their operands are; others
            # when their operands are constants
            ok = op.prim.shape_query is not None or (
                op.prim.static_for_constants
                and all(
                    _is_constant(v)
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


def _appended_lists(stmts: List[Any]) -> Set[str]:
    """Names of the lists ``stmts`` append to (``lst.append(v)``)."""
    out: Set[str] = set()
    for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        op = getattr(node, "sj_op", None)
        if op is not None and op.kind == "append" and op.target:
            out.add(op.target)
    return out


def _is_none_init(node: Any) -> bool:
    return (
        isinstance(node, gast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], gast.Name)
        and isinstance(node.value, gast.Constant)
        and node.value.value is None
    )
