"""The one place that builds gast nodes (gast's node classes change between
versions; Tangent died of that), plus small tree utilities."""

from __future__ import annotations

import copy
import math
import re
from collections import deque
from typing import Any, Dict, Iterable, List, Optional, Set, Tuple

import gast

__all__ = [
    "name",
    "const",
    "assign",
    "call",
    "attr",
    "expr_stmt",
    "parse_expr",
    "parse_stmts",
    "dotted",
    "names_in",
    "assigned_names",
    "clone",
    "is_atom",
    "copy_origin",
    "to_source",
    "exact_literal",
    "param",
    "arguments",
    "function_def",
]


def param(id_: str) -> Any:
    """A parameter name of a generated function."""
    return gast.Name(id=id_, ctx=gast.Param(), annotation=None, type_comment=None)


def arguments(params: Iterable[Any]) -> Any:
    """Positional-only-style parameter list: ``params`` are names (str) or Name nodes."""
    return gast.arguments(
        args=[param(p) if isinstance(p, str) else p for p in params],
        posonlyargs=[],
        vararg=None,
        kwonlyargs=[],
        kw_defaults=[],
        kwarg=None,
        defaults=[],
    )


def function_def(name_: str, args: Any, body: List[Any]) -> Any:
    """``def name_(args): body`` (``args``: a gast.arguments, e.g. :func:`arguments`)."""
    return gast.FunctionDef(
        name=name_,
        args=args,
        body=body,
        decorator_list=[],
        returns=None,
        type_comment=None,
        type_params=[],
    )


def name(id_: str, store: bool = False) -> Any:
    return gast.Name(
        id=id_, ctx=gast.Store() if store else gast.Load(), annotation=None, type_comment=None
    )


def const(value: Any) -> Any:
    if isinstance(value, tuple):
        return gast.Tuple(elts=[const(v) for v in value], ctx=gast.Load())
    if isinstance(value, float) and value != value:  # nan
        return parse_expr("float('nan')")
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return parse_expr("float('inf')" if value > 0 else "-float('inf')")
    return gast.Constant(value=value, kind=None)


def dotted(path: str) -> Any:
    """``"jnp.linalg.inv"`` -> Attribute(Attribute(Name(jnp), linalg), inv)."""
    parts = path.split(".")
    node = name(parts[0])
    for p in parts[1:]:
        node = gast.Attribute(value=node, attr=p, ctx=gast.Load())
    return node


def attr(value: Any, attribute: str) -> Any:
    return gast.Attribute(value=value, attr=attribute, ctx=gast.Load())


def call(func: Any, args: Iterable[Any] = (), keywords: Optional[dict] = None) -> Any:
    if isinstance(func, str):
        func = dotted(func)
    kws = [gast.keyword(arg=k, value=v) for k, v in (keywords or {}).items()]
    return gast.Call(func=func, args=list(args), keywords=kws)


def assign(target: Any, value: Any) -> Any:
    if isinstance(target, str):
        target = name(target, store=True)
    return gast.Assign(targets=[target], value=value, type_comment=None)


def expr_stmt(value: Any) -> Any:
    return gast.Expr(value=value)


def parse_expr(text: str) -> Any:
    return gast.parse(text).body[0].value


def parse_stmts(text: str) -> List[Any]:
    return gast.parse(text).body


def clone(node: Any, memo: Optional[dict] = None) -> Any:
    """A deep copy of ``node`` (``copy.deepcopy``'s result, sharing kept through
    ``memo``), walking AST nodes and lists directly: ``deepcopy``'s generic
    reduce protocol was a fifth of a first ``jit(value_and_grad)``."""
    return _clone(node, {} if memo is None else memo)


_ATOMIC = (str, int, float, bool, type(None), bytes, complex, type)


def _clone(x: Any, memo: dict) -> Any:
    if type(x) in _ATOMIC:
        return x
    key = id(x)
    done = memo.get(key)
    if done is not None:
        return done
    if isinstance(x, gast.AST):
        cls = type(x)
        new = cls.__new__(cls)
        memo[key] = new
        d = new.__dict__
        for k, v in x.__dict__.items():
            d[k] = v if type(v) in _ATOMIC else _clone(v, memo)
        return new
    if type(x) is list:
        new = []
        memo[key] = new
        new.extend([_clone(v, memo) for v in x])
        return new
    return copy.deepcopy(x, memo)


def is_atom(node: Any) -> bool:
    return isinstance(node, (gast.Name, gast.Constant))


_AST = gast.AST


def walk(node: Any):
    """Every node under ``node`` (itself first), in ``ast.walk``'s breadth-first
    order, without its generator per node (``ast.iter_child_nodes`` and
    ``iter_fields``): the walks of the name queries below were a third of a
    first ``jit(value_and_grad)`` (profiled: 48k walks)."""
    todo = deque((node,))
    pop, push = todo.popleft, todo.append
    while todo:
        n = pop()
        for f in n._fields:
            v = getattr(n, f, None)
            if isinstance(v, _AST):
                push(v)
            elif isinstance(v, list):
                for item in v:
                    if isinstance(item, _AST):
                        push(item)
        yield n


def walk_with_parents(node: Any) -> Tuple[List[Any], Dict[int, Any]]:
    """``(every node under node in walk's order, {id(child): parent})``: one walk
    where a pass needs both (a node reached twice keeps its last parent, as a map
    built from ``ast.iter_child_nodes`` over ``ast.walk`` does)."""
    nodes: List[Any] = []
    parents: Dict[int, Any] = {}
    todo = deque((node,))
    pop, push = todo.popleft, todo.append
    while todo:
        n = pop()
        for f in n._fields:
            v = getattr(n, f, None)
            if isinstance(v, _AST):
                push(v)
                parents[id(v)] = n
            elif isinstance(v, list):
                for item in v:
                    if isinstance(item, _AST):
                        push(item)
                        parents[id(item)] = n
        nodes.append(n)
    return nodes, parents


def mentions(node: Any, name: str) -> bool:
    """Whether a :class:`gast.Name` ``name`` (read or bound) occurs anywhere in ``node``."""
    return any(isinstance(n, gast.Name) and n.id == name for n in walk(node))


def store_counts(node: Any) -> Dict[str, int]:
    """name -> how many times a :class:`gast.Name` binds it (Store context)
    anywhere in ``node``, nested functions included."""
    counts: Dict[str, int] = {}
    for n in walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def rebound_names(node: Any) -> Set[str]:
    """The names stored or deleted anywhere in ``node`` (a :class:`gast.Name` in
    Store or Del context), nested functions included."""
    return {
        n.id
        for n in walk(node)
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del))
    }


def names_in(node: Any) -> List[str]:
    """Names read (Load context) anywhere inside ``node``, in order, with repeats removed."""
    out: Dict[str, None] = {}  # (a dict keeps the order; a list's `in` was quadratic)
    for n in walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            out[n.id] = None
    return list(out)


def loads_and_stores(node: Any) -> Tuple[List[str], List[str]]:
    """``(names_in(node), assigned_names([node]))`` from one walk."""
    loads: Dict[str, None] = {}
    stores: Dict[str, None] = {}
    for n in walk(node):
        if isinstance(n, gast.Name):
            if isinstance(n.ctx, gast.Load):
                loads[n.id] = None
            elif isinstance(n.ctx, gast.Store):
                stores[n.id] = None
    return list(loads), list(stores)


def walk_stmts(stmts: Iterable[Any]):
    """Every statement of ``stmts`` and of the ``if``/``for``/``while`` blocks in
    them, in order (normalized code: no nested functions)."""
    for s in stmts:
        yield s
        if isinstance(s, gast.If):
            yield from walk_stmts(s.body)
            yield from walk_stmts(s.orelse)
        elif isinstance(s, (gast.For, gast.While)):
            yield from walk_stmts(s.body)


def assigned_names(stmts: Iterable[Any]) -> List[str]:
    """Names stored anywhere in ``stmts`` (including nested blocks), in order."""
    out: Dict[str, None] = {}  # (ordered, as names_in's)
    for s in stmts:
        for n in walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                out[n.id] = None
    return list(out)


def target_names(loop: Any) -> List[str]:
    """The names a ``for`` loop's target binds (``i``; ``a, b`` of ``for a, b in``)."""
    return assigned_names([gast.Expr(value=loop.target)])


def loop_variant(loop: Any) -> set:
    """The names a ``for`` loop may change: its target's and every name stored
    in its body (what is not in it is the same on every trip)."""
    return set(assigned_names(loop.body)) | set(target_names(loop))


def copy_origin(dst: Any, src: Any) -> Any:
    """Copy line/column and srcjax origin annotations from ``src`` to ``dst``."""
    for a in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
        if hasattr(src, a):
            setattr(dst, a, getattr(src, a))
    if hasattr(src, "sj_origin"):
        dst.sj_origin = src.sj_origin
    return dst


def to_source(node: Any) -> str:
    """Python text of ``node`` that reads back as ``node``.

    Python has no negative literals: ``-0.1`` is ``-(0.1)``, so a constant node
    holding a negative number (constant folding makes them) printed as its repr
    changes meaning under a tighter operator: ``(-0.1) ** 2`` would print as
    ``-0.1 ** 2``, ``(-1.5).real`` as ``-1.5.real``. Such constants (and complex
    ones whose repr is not one literal) are printed as the expression Python
    reads them as (:func:`exact_literal`), which the unparser parenthesizes by
    its precedence rules."""
    text = gast.unparse(node).strip()
    # (such a constant prints as "-<digit>" or "<digit>j": most statements skip the walk)
    if _MAYBE_NOT_A_LITERAL.search(text) and any(
        isinstance(n, gast.Constant) and _not_a_literal(n.value) for n in gast.walk(node)
    ):
        text = gast.unparse(_ExactLiterals().visit(clone(node))).strip()
    return text


_MAYBE_NOT_A_LITERAL = re.compile(r"-[\d.]|\dj")


def _not_a_literal(value: Any) -> bool:
    """Whether the repr of constant ``value`` is not one atom that reads back as
    ``value`` (a negative number, ``-0.0``, or a complex with a real part)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, complex)):
        return False
    if isinstance(value, complex):
        return not (
            value.real == 0.0
            and math.copysign(1.0, value.real) > 0
            and math.copysign(1.0, value.imag) > 0
            and math.isfinite(value.imag)
        )
    if isinstance(value, float):
        return value == value and math.copysign(1.0, value) < 0  # nan prints in parentheses
    return value < 0


def exact_literal(value: Any) -> Any:
    """An expression node that Python evaluates to the number ``value``, built
    only of non-negative literals: ``-0.1`` -> ``-(0.1)`` (``UnaryOp``),
    ``(1-2j)`` -> ``1.0 - 2j``; a complex that no such sum gives (a
    non-finite or -0.0 imaginary part) -> ``complex(re, im)``."""
    if not _not_a_literal(value):
        return gast.Constant(value=value, kind=None)
    if isinstance(value, complex):
        re, im = value.real, value.imag
        plus = math.copysign(1.0, im) > 0
        neg_zero_re = re == 0.0 and math.copysign(1.0, re) < 0
        # -0.0 + 0j is 0j and no sum has a -0.0 imaginary part: those need the call
        if not math.isfinite(im) or (im == 0.0 and not plus) or (neg_zero_re and plus):
            return call(name("complex"), [exact_literal(re), exact_literal(im)])
        op = gast.Add() if plus else gast.Sub()
        return gast.BinOp(
            left=exact_literal(re),
            op=op,
            right=gast.Constant(value=complex(0.0, abs(im)), kind=None),
        )
    return gast.UnaryOp(op=gast.USub(), operand=gast.Constant(value=-value, kind=None))


class _ExactLiterals(gast.NodeTransformer):
    def visit_Constant(self, node: Any) -> Any:
        if _not_a_literal(node.value):
            return exact_literal(node.value)
        return node


def index_value(node: Any) -> Any:
    """An index expression usable as a value: ``1:n`` becomes ``slice(1, n, None)``."""
    if isinstance(node, gast.Slice):
        parts = [N if N is not None else const(None) for N in (node.lower, node.upper, node.step)]
        return call(name("slice"), [clone(p) for p in parts])
    if isinstance(node, gast.Tuple):
        return gast.Tuple(elts=[index_value(e) for e in node.elts], ctx=gast.Load())
    return clone(node)


def _int_constant(node: Any) -> Tuple[bool, Any]:
    if node is None:
        return True, None
    if isinstance(node, gast.Constant) and (node.value is None or isinstance(node.value, int)):
        return True, node.value
    if (
        isinstance(node, gast.UnaryOp)
        and isinstance(node.op, gast.USub)
        and isinstance(node.operand, gast.Constant)
        and isinstance(node.operand.value, int)
    ):
        return True, -node.operand.value
    return False, None


def static_slice(idx: Any) -> Optional[slice]:
    """The slice an index node denotes (``a[1:-1]``'s ``Slice``, or the
    ``slice(1, -1)`` call :func:`index_value` makes of it) when its bounds are
    integer constants, else None."""
    if isinstance(idx, gast.Slice):
        parts = [idx.lower, idx.upper, idx.step]
    elif isinstance(idx, gast.Call) and getattr(idx.func, "id", None) == "slice" and idx.args:
        parts = list(idx.args)
        parts = [None, parts[0], None] if len(parts) == 1 else parts + [None] * (3 - len(parts))
    else:
        return None
    vals = []
    for p in parts:
        ok, v = _int_constant(p)
        if not ok:
            return None
        vals.append(v)
    return slice(*vals)


def _never_out_of_bounds(part: Any) -> bool:
    if isinstance(part, gast.Slice):
        return True  # (slices clip in NumPy as in JAX)
    if isinstance(part, gast.Call) and getattr(part.func, "id", None) == "slice":
        return True  # (a slice written as a value: index_value's form)
    # (and a dict's key: a string is never an array index)
    return isinstance(part, gast.Constant) and (
        part.value is None or part.value is Ellipsis or isinstance(part.value, str)
    )


def item(value: Any, idx: Any) -> Any:
    """``value[idx]`` as generated code reads an item: Python's subscript when
    the index cannot be out of bounds (only slices, ``None``, ``...`` and string
    keys: NumPy agrees with JAX there), else ``ad.getitem(value, idx)``, whose
    implementation clamps an out-of-bounds integer index as JAX's gather does
    (NumPy would raise IndexError). The jit optimizer turns the call back into
    a subscript where the shapes show the index in bounds."""
    parts = idx.elts if isinstance(idx, gast.Tuple) else [idx]
    if all(_never_out_of_bounds(p) for p in parts):
        return gast.Subscript(value=value, slice=idx, ctx=gast.Load())
    return call("ad.getitem", [value, index_value(idx)])


def range_args(it: Any) -> Optional[list]:
    """The arguments of ``range(...)`` (1 to 3, no keywords) when ``it`` is
    that call or ``reversed`` of it, else None."""
    if (
        isinstance(it, gast.Call)
        and isinstance(it.func, gast.Name)
        and it.func.id == "reversed"
        and len(it.args) == 1
    ):
        it = it.args[0]
    if (
        isinstance(it, gast.Call)
        and isinstance(it.func, gast.Name)
        and it.func.id == "range"
        and 1 <= len(it.args) <= 3
        and not it.keywords
    ):
        return it.args
    return None
