"""grad's generated code for one float32 scalar argument, calling NumPy directly
(the fastcall entry of ``grad(f)(1.0)``: bench row W3).

The generated code of ``grad`` holds for every leaf argument, so its calls go
through the primitives' implementations (``jnp.exp``'s dtype check), seed the
cotangent with ``ad.seed(out)`` and end with ``ad.project_real(x_bar, x)``. For
a float32 scalar argument these are decided before the call: a unary ufunc of a
float32 scalar is the ufunc's float32 scalar (``impl.float32_ufunc``, data on
the implementation), the seed of a float32 output is 1 (written ``1.0``: a
Python float meeting a float32 scalar is converted exactly, so every value is
the same bit for bit), and the gradient of a float32 argument is its float32
cotangent. :func:`specialize` rewrites the generated source so (text edits of
the calls, comments and layout kept), for straight-line code whose every value
it can type; anything else (a loop, a call it does not know, an operand of
unknown type) leaves the generic code in place.
"""

from __future__ import annotations

import ast
import dis
import linecache
import re
import weakref
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ..codegen.emit import synthetic_module

_F32 = "f32"  # a float32 NumPy scalar
_WEAK = "w"  # a Python number (a literal, the seed)
_COMMENT = re.compile(r"( {2,})# ")  # (an origin comment's spaces)
_ARITH = (ast.Add, ast.Sub, ast.Mult, ast.Div)

#: NumPy 2's promotion (NEP 50): a Python number meeting a float32 scalar is
#: float32 (NumPy 1.x made float64 scalars: no specialization there)
_NEP50 = type(np.float32(1.0) + 1.0) is np.float32

#: generated function -> its specialization (None: not specializable)
_DONE: "weakref.WeakKeyDictionary[Any, Optional[Callable]]" = weakref.WeakKeyDictionary()


class _Untyped(Exception):
    """An expression :func:`specialize` cannot type."""


def specialize(fn: Callable) -> Optional[Callable]:
    """``fn`` (grad's generated code of one argument) specialized to a float32
    scalar argument, or None where it cannot be."""
    if not _NEP50:
        return None
    if fn in _DONE:
        return _DONE[fn]
    out = None
    lines = [] if _branches(fn.__code__) else linecache.getlines(fn.__code__.co_filename)
    try:
        tree = ast.parse("".join(lines)) if lines else None  # (once for both seeds)
    except (SyntaxError, ValueError):
        tree = None
    for seed in ("1.0", "np.float32(1.0)"):  # (a Python 1.0 where it meets float32s only)
        if tree is None:
            break
        try:
            out = _specialize(fn, seed, lines, tree)
            break
        except _Untyped:
            continue
        except (OSError, SyntaxError, ValueError):
            break
    _DONE[fn] = out
    return out


#: the opcodes that jump: straight-line code (all :func:`_specialize` types) has none
_JUMPS = frozenset(dis.hasjrel) | frozenset(dis.hasjabs)


def _branches(code: Any) -> bool:
    """Whether ``code`` jumps (a loop, an ``if``, ``and``/``or``, a conditional
    expression, a comparison chain): no such code is specialized, so it is not
    parsed (two parses of grad's text were 2.7 ms of the T1 function's first
    call from the disk cache)."""
    co = code.co_code
    return any(co[i] in _JUMPS for i in range(0, len(co), 2))


def _specialize(fn: Callable, seed: str, lines: List[str], tree: ast.Module) -> Optional[Callable]:
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    if len(defs) != 1 or len(tree.body) != 1:
        return None
    fdef = defs[0]
    a = fdef.args
    if len(a.args) != 1 or a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs:
        return None
    param = a.args[0].arg
    edits: List[Tuple[ast.AST, str]] = []
    types = {param: _F32}
    g = fn.__globals__
    *body, last = fdef.body
    for stmt in body:
        if not (
            isinstance(stmt, ast.Assign)
            and len(stmt.targets) == 1
            and isinstance(stmt.targets[0], ast.Name)
        ):
            return None
        types[stmt.targets[0].id] = _type(stmt.value, types, g, param, seed, edits)
    if not isinstance(last, ast.Return) or last.value is None:
        return None
    if _type(last.value, types, g, param, seed, edits) != _F32:
        return None
    name = f"{fdef.name}_float32"
    edits.append((_DefName(fdef, lines), name))
    new = _apply(lines, edits)
    head = [line for line in new[: fdef.lineno - 1] if line.startswith("# srcjax:")]
    new[: fdef.lineno - 1] = [
        line.rstrip("\n") + f", specialized to {param}: float32[] (NumPy calls)\n" for line in head
    ]
    text = "".join(new)
    special = synthetic_module(text, name, {})[name]
    special.__srcjax_source__ = text
    return special


class _DefName:
    """The position of a ``def``'s name (an edit target like a node's)."""

    def __init__(self, fdef: ast.FunctionDef, lines: List[str]) -> None:
        col = lines[fdef.lineno - 1].index(fdef.name, fdef.col_offset)
        self.lineno = self.end_lineno = fdef.lineno
        self.col_offset, self.end_col_offset = col, col + len(fdef.name)


def _call_of(node: ast.AST, g: Dict[str, Any]) -> Tuple[str, Any]:
    """``("jnp.exp", the implementation)`` for a call of ``ns.name``."""
    f = node.func
    if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)):
        raise _Untyped
    return f"{f.value.id}.{f.attr}", getattr(g.get(f.value.id), f.attr, None)


def _type(node, types, g, param, seed, edits) -> str:
    """The type of ``node`` (``_F32`` or ``_WEAK``), recording the text edits that
    make its calls NumPy's."""
    if isinstance(node, ast.Name):
        if node.id not in types:
            raise _Untyped
        return types[node.id]
    if isinstance(node, ast.Constant):
        if type(node.value) in (float, int):
            return _WEAK
        raise _Untyped
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _type(node.operand, types, g, param, seed, edits)
    if isinstance(node, ast.BinOp) and isinstance(node.op, _ARITH):
        left = _type(node.left, types, g, param, seed, edits)
        right = _type(node.right, types, g, param, seed, edits)
        if _F32 not in (left, right):
            raise _Untyped  # (two Python numbers: a Python number)
        return _F32
    if isinstance(node, ast.Call) and not node.keywords:
        path, impl = _call_of(node, g)
        args = node.args
        if path in ("ad.seed", "ad.project_real") and not all(
            isinstance(a, ast.Name) for a in args
        ):
            raise _Untyped  # (an edit of the whole call: no edits inside it)
        if path == "ad.seed" and len(args) == 1:
            if _type(args[0], types, g, param, seed, edits) != _F32:
                raise _Untyped
            edits.append((node, seed))
            return _WEAK if seed == "1.0" else _F32
        if path == "ad.project_real" and len(args) == 2:
            if not (isinstance(args[1], ast.Name) and args[1].id == param):
                raise _Untyped
            if _type(args[0], types, g, param, seed, edits) != _F32:
                raise _Untyped
            edits.append((node, args[0].id))
            return _F32
        ufunc = getattr(impl, "float32_ufunc", None)
        if ufunc is not None and len(args) == 1 and getattr(np, ufunc.__name__, None) is ufunc:
            if _type(args[0], types, g, param, seed, edits) != _F32:
                raise _Untyped
            edits.append((node.func, f"np.{ufunc.__name__}"))
            return _F32
    raise _Untyped


def _apply(lines: List[str], edits: List[Tuple[Any, str]]) -> List[str]:
    """``lines`` with each edit's span replaced (the spans do not overlap or
    nest: an edited call's arguments are names)."""
    out = list(lines)
    order = sorted(edits, key=lambda e: (e[0].lineno, e[0].col_offset), reverse=True)
    for node, text in order:
        if node.lineno != node.end_lineno:
            raise _Untyped
        i = node.lineno - 1
        s = out[i].encode()
        before, after = s[: node.col_offset].decode(), s[node.end_col_offset :].decode()
        shift = node.end_col_offset - node.col_offset - len(text.encode())
        m = _COMMENT.search(after)
        if m and shift:  # (the origin comment stays in its column)
            pad = " " * max(2, len(m.group(1)) + shift)
            after = after[: m.start()] + pad + after[m.end(1) :]
        out[i] = before + text + after
    return out
