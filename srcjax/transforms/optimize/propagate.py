"""Constant passes: :func:`bind_static` (static arguments into the body),
:func:`propagate` (copy and constant propagation) and :func:`fold_constants`
(Python arithmetic on constants)."""

from __future__ import annotations

import math
import operator
from typing import Any, Callable, Dict, List, Optional

import gast
import numpy as np

from ...frontend import nodes as N
from ...frontend.normalize import Op
from .common import (
    _SCALAR_TYPES,
    _assigned,
    _is_assign,
    _is_scalar_const,
    _kill,
    _Subst,
    _subst_stmt,
)


def is_literal(v: Any) -> bool:
    """Whether :func:`bind_static` writes ``v`` into the code: an int, a finite
    float, a bool, a string, None, or a tuple of them."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return not (isinstance(v, float) and not math.isfinite(v))
    if isinstance(v, tuple):
        return all(is_literal(x) for x in v)
    return False


def bind_static(fdef: Any, values: Dict[str, Any], note: str = "static argument") -> Any:
    """Prepend ``name = value`` for static arguments whose value is a literal
    (:func:`is_literal`); jit also binds the module globals it specializes on
    and the defaults a call left out this way (``note``: what the value is)."""
    pre = []
    for name, v in values.items():
        if is_literal(v):
            node = N.const(v)
            s = N.assign(name, node)
            s.sj_op = Op("copy", elts=[node])
            s.sj_note = note
            pre.append(s)
    fdef.body[:0] = pre
    return fdef


# ---------------------------------------------------------------------------- propagation
def propagate(fdef: Any) -> Any:
    """Copy and constant propagation (block-local, conservative around control flow)."""
    _propagate_block(fdef.body, {})
    return fdef


def _propagate_block(stmts: List[Any], table: Dict[str, Any]) -> None:
    for s in stmts:
        if isinstance(s, gast.If):
            if isinstance(s.test, gast.Name) and s.test.id in table:
                s.test = N.clone(table[s.test.id])
            if isinstance(s.test, gast.Constant) and not getattr(s, "sj_lax_branches", None):
                # `if False:` (a default argument's branch): only the other block runs
                taken, other = (s.body, s.orelse) if s.test.value else (s.orelse, s.body)
                _propagate_block(other, dict(table))
                _propagate_block(taken, table)
                continue
            _propagate_block(s.body, dict(table))
            _propagate_block(s.orelse, dict(table))
            _kill(table, _assigned(s))
        elif isinstance(s, gast.While):
            _kill(table, _assigned(s))
            inner = dict(table)
            s.test = _Subst(inner).visit(s.test) if inner else s.test
            _propagate_block(s.body, inner)
            _kill(table, _assigned(s))
        elif isinstance(s, gast.For):
            if table:
                s.iter = _Subst(table).visit(s.iter)
            _kill(table, _assigned(s))
            _propagate_block(s.body, dict(table))
            _kill(table, _assigned(s))
        elif isinstance(s, gast.Assign):
            _subst_stmt(s, table)
            _kill(table, _assigned(s))
            op = getattr(s, "sj_op", None)
            if (
                op is not None
                and op.kind == "pack"
                and _is_assign(s)
                and _is_literal_tuple(s.value)
            ):
                table[s.targets[0].id] = N.clone(s.value)
            elif (
                op is not None
                and op.kind == "copy"
                and _is_assign(s)
                and (
                    (isinstance(s.value, gast.Name) and s.value.id != s.targets[0].id)
                    or _is_scalar_const(s.value)
                    or (isinstance(s.value, gast.Constant) and s.value.value is None)
                    # (a window kind, 'max': the branches comparing it fold)
                    or (isinstance(s.value, gast.Constant) and type(s.value.value) is str)
                    or _is_int_tuple(s.value)
                )
            ):
                table[s.targets[0].id] = N.clone(s.value)
        else:
            _subst_stmt(s, table)
            _kill(table, _assigned(s))


def _is_int_tuple(node: Any) -> bool:
    """A tuple display of int constants (an ``axis=(1,)`` or a shape that jit's
    specialization made a constant): propagated, so that two reductions over the
    same axes read the same expression (CSE merges them; R6's ``jnp.mean(sub,
    axis=batch_axis)`` and ``axis=batch_axis7`` were two sums)."""
    return isinstance(node, gast.Tuple) and all(
        isinstance(e, gast.Constant) and type(e.value) is int for e in node.elts
    )


def _is_literal_tuple(node: Any) -> bool:
    """A tuple display of constants (ints, bools, strings, None) and such tuples:
    a convolution's strides ``(2, 2)``, padding ``((1, 1), (1, 1))`` or dimension
    numbers ``("NHWC", "HWIO", "NHWC")`` packed by a call. Propagated, so that
    the static helpers reading them are evaluated at specialization (R8's second
    convolution planned its layout on every step)."""
    if not isinstance(node, gast.Tuple):
        return False
    return all(
        _is_literal_tuple(e)
        or (isinstance(e, gast.Constant) and (e.value is None or type(e.value) in (int, bool, str)))
        for e in node.elts
    )


# ---------------------------------------------------------------------------- folding
_PY_BINOPS = {
    gast.Add: operator.add,
    gast.Sub: operator.sub,
    gast.Mult: operator.mul,
    gast.Div: operator.truediv,
    gast.FloorDiv: operator.floordiv,
    gast.Mod: operator.mod,
    gast.Pow: operator.pow,
}
_PY_UNARY = {gast.USub: operator.neg, gast.UAdd: operator.pos}
_PY_CMP = {
    gast.Lt: operator.lt,
    gast.LtE: operator.le,
    gast.Gt: operator.gt,
    gast.GtE: operator.ge,
    gast.Eq: operator.eq,
    gast.NotEq: operator.ne,
}


def _py_eval(expr: Any) -> Any:
    """Value of a Python operator over scalar constants, or raise."""
    if isinstance(expr, gast.BinOp) and type(expr.op) in _PY_BINOPS:
        if _is_scalar_const(expr.left) and _is_scalar_const(expr.right):
            return _PY_BINOPS[type(expr.op)](expr.left.value, expr.right.value)
    if isinstance(expr, gast.UnaryOp) and type(expr.op) in _PY_UNARY:
        if _is_scalar_const(expr.operand):
            return _PY_UNARY[type(expr.op)](expr.operand.value)
    if (
        isinstance(expr, gast.Compare)
        and len(expr.ops) == 1
        and type(expr.ops[0]) in _PY_CMP
        and _is_scalar_const(expr.left)
        and _is_scalar_const(expr.comparators[0])
    ):
        return _PY_CMP[type(expr.ops[0])](expr.left.value, expr.comparators[0].value)
    if (
        isinstance(expr, gast.Compare)
        and len(expr.ops) == 1
        and isinstance(expr.ops[0], (gast.Is, gast.IsNot))
        and _is_none_or_scalar(expr.left)
        and _is_none_or_scalar(expr.comparators[0])
        and (expr.left.value is None or expr.comparators[0].value is None)
    ):
        same = expr.left.value is None and expr.comparators[0].value is None
        return same if isinstance(expr.ops[0], gast.Is) else not same
    if (
        isinstance(expr, gast.Compare)
        and len(expr.ops) == 1
        and isinstance(expr.ops[0], (gast.Eq, gast.NotEq))
        and all(
            isinstance(e, gast.Constant) and type(e.value) is str
            for e in (expr.left, expr.comparators[0])
        )
    ):  # ('max' == 'add': a window kind known now)
        same = expr.left.value == expr.comparators[0].value
        return same if isinstance(expr.ops[0], gast.Eq) else not same
    raise ValueError("not foldable")


def _is_none_or_scalar(node: Any) -> bool:
    return _is_scalar_const(node) or (isinstance(node, gast.Constant) and node.value is None)


def fold_constants(fdef: Any) -> Any:
    """Evaluate Python operators over constants (``2 * 0.5`` -> ``1.0``).

    Only operator expressions on Python scalars fold, with Python's own
    semantics, which is what the unoptimized code computes; calls such as
    ``jnp.sin(1.0)`` return strongly typed NumPy scalars and are left alone.
    """
    # (a name the function binds itself is no builtin)
    own = {a.id for a in fdef.args.args + fdef.args.kwonlyargs} | set(N.assigned_names(fdef.body))
    changed = True
    while changed:
        changed = False
        for s in N.walk_stmts(fdef.body):
            if not _is_assign(s):
                continue
            convert = _number_conversion(s, own)
            if convert is None and (
                s.sj_op.kind != "prim"
                and not (
                    isinstance(s.value, gast.Compare)
                    and isinstance(s.value.ops[0], (gast.Is, gast.IsNot, gast.Eq, gast.NotEq))
                )
            ):
                continue
            try:
                v = _py_eval(s.value) if convert is None else convert(s.value.args[0].value)
            except (ValueError, ArithmeticError, TypeError):
                continue
            if not isinstance(v, _SCALAR_TYPES) or (isinstance(v, float) and not math.isfinite(v)):
                continue
            node = N.const(v)
            s.value = node
            s.sj_op = Op("copy", elts=[node])
            changed = True
        if changed:
            propagate(fdef)
    return fdef


#: Python's conversions of a number, folded over a constant (``float(n)`` of a
#: default ``n=4`` is the weak Python float 4.0, as in JAX's trace)
_CONVERSIONS = {"float": float, "int": int, "bool": bool}


def _number_conversion(s: Any, own: set) -> Optional[Callable]:
    """The builtin ``float``/``int``/``bool`` that ``s`` (``t = float(4)``, a
    call the normalizer left to run time) applies to one Python number
    constant, or None (also where the function binds that name itself)."""
    e = s.value
    if not (
        s.sj_op.kind in ("inactive", "unknown")
        and not getattr(s.sj_op, "effect", False)
        and isinstance(e, gast.Call)
        and isinstance(e.func, gast.Name)
        and e.func.id in _CONVERSIONS
        and e.func.id not in own
        and s.sj_op.what == e.func.id
        and len(e.args) == 1
        and not e.keywords
        and isinstance(e.args[0], gast.Constant)
        and type(e.args[0].value) in (int, float, bool)
    ):
        return None
    return _CONVERSIONS[e.func.id]


# ---------------------------------------------------------------------------- abstract values


def _py_binop(f: Callable, a: Any, b: Any, exact: bool = False) -> Any:
    """``f(a, b)``, a Python operator on the stand-ins of :mod:`.interp`; Python numbers (weak scalars) divided by zero (a
    constant ``x / 0.0``) give NumPy's value as a Python number, as the generated
    code computes on the NumPy scalars weak arguments are held as (inf, not
    ZeroDivisionError), so the result stays known, and weak. With ``exact``,
    ``a`` and ``b`` are the values themselves (static: ``x.shape[0] // 0``), no
    stand-ins: Python's ZeroDivisionError stands, as in JAX's trace."""
    try:
        return f(a, b)
    except ZeroDivisionError:
        if exact or type(a) not in (int, float) or type(b) not in (int, float):
            raise
        with np.errstate(all="ignore"):
            return f(*[np.float64(v) if type(v) is float else np.int64(v) for v in (a, b)]).item()
