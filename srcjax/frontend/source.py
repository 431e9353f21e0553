"""Find the source of a Python function and parse it into a gast tree.

Handles plain functions, nested functions and closures, lambdas (several on one
line, or inside a call), functions decorated with srcjax transforms, functions
defined in notebook cells (IPython registers cells in :mod:`linecache`) and
functions srcjax generated itself (their files are registered in ``linecache``
too, so generated code is valid input for the next transform).

``functools.partial`` objects and bound methods are unwrapped by the API layer
(:func:`unwrap_callable`) into a function plus leading bound arguments.
"""

from __future__ import annotations

import copy
import functools
import linecache
import types
from dataclasses import dataclass, field
from typing import Any, Dict, Optional, Tuple

import gast

from ..errors import Location, SourceUnavailableError
from . import hooks
from . import nodes as N
from .source_check import check_current

__all__ = ["FunctionSource", "get_source", "unwrap_callable"]


@dataclass
class FunctionSource:
    """A parsed function and the environment its names resolve in."""

    fn: types.FunctionType
    node: Any  # gast.FunctionDef (lambdas are converted to a FunctionDef)
    filename: str
    globals: Dict[str, Any]
    closure: Dict[str, Any] = field(default_factory=dict)  # free var name -> cell

    @property
    def name(self) -> str:
        return self.node.name

    def location(self, node: Any) -> Location:
        lineno = getattr(node, "lineno", None) or self.node.lineno
        col = getattr(node, "col_offset", 0) or 0
        end_col = getattr(node, "end_col_offset", None)
        if getattr(node, "end_lineno", lineno) != lineno:
            end_col = None
        # a statement inlined from another function (or generated file) keeps its file
        filename = getattr(node, "sj_file", None) or self.filename
        return Location(filename, lineno, col, end_col)


_TREE_CACHE: Dict[Tuple[str, int, int], Any] = {}


def _parse_file(filename: str) -> Any:
    # the file as it is now: linecache keeps what it read first, so after an edit
    # and importlib.reload (or IPython's %run / %autoreload) transforms read the
    # old source (user Y: grad of the reloaded f used its previous body). Cells
    # and other entries without a file on disk are kept as they are.
    linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    if not lines:
        return None
    text = "".join(lines)
    key = (filename, len(text), hash(text))
    tree = _TREE_CACHE.get(key)
    if tree is None:
        tree = gast.parse(text)
        _TREE_CACHE[key] = tree
    return tree


def _definitions(tree: Any) -> Tuple[Dict[str, list], Dict[int, list]]:
    """``(function definitions by name, lambdas by line)`` of a parsed file, built
    once per tree: looking a function up walked the whole file each time (80 ms
    per function inlined from a 1,900-line module)."""
    index = _INDEX_CACHE.get(id(tree))
    if index is None or index[0] is not tree:
        defs: Dict[str, list] = {}
        lambdas: Dict[int, list] = {}
        for node in N.walk(tree):
            if isinstance(node, gast.FunctionDef):
                defs.setdefault(node.name, []).append(node)
            elif isinstance(node, gast.Lambda):
                lambdas.setdefault(node.lineno, []).append(node)
        index = _INDEX_CACHE[id(tree)] = (tree, defs, lambdas)
    return index[1], index[2]


_INDEX_CACHE: Dict[int, tuple] = {}


def unwrap_callable(fun: Any) -> Tuple[types.FunctionType, tuple, dict]:
    """Split ``fun`` into (python function, leading bound args, bound kwargs).

    ``functools.partial(f, a)(x)`` is ``f(a, x)``; ``obj.method(x)`` is
    ``type(obj).method(obj, x)``; a callable object ``obj(x)`` is
    ``type(obj).__call__(obj, x)``. Raises :class:`SourceUnavailableError` for
    callables that are not Python functions (builtins, ufuncs, classes).
    """
    if type(fun) is types.FunctionType and not hasattr(fun, "__srcjax_wrapped__"):
        return fun, (), {}  # a plain function, the common case (grad(f) per call)
    args: tuple = ()
    kwargs: dict = {}
    while True:
        if isinstance(fun, functools.partial):
            args = tuple(fun.args) + args
            kwargs = {**fun.keywords, **kwargs}
            fun = fun.func
        elif isinstance(fun, types.MethodType):
            args = (fun.__self__,) + args
            fun = fun.__func__
            target = getattr(fun, "__srcjax_method_of__", None)
            if target is not None:
                fun = target()  # x.sum: jnp.sum with x first (Array's forwarders)
        elif _is_primitive(fun):
            from ..primitives.registry import lookup_callable

            # (a partial's keywords are parameters of the wrapper: partial(nn.softmax, axis=-1))
            fun = primitive_function(lookup_callable(fun), tuple(sorted(kwargs)))
        elif hasattr(fun, "__srcjax_wrapped__"):
            # a srcjax-transformed function: its generated python function
            fun = fun.__srcjax_wrapped__
        elif _is_callable_object(fun):
            # an instance with a Python __call__: obj(x) is type(obj).__call__(obj, x)
            args = (fun,) + args
            fun = type(fun).__call__
        else:
            break
    if not isinstance(fun, types.FunctionType):
        raise SourceUnavailableError(
            f"cannot transform {fun!r}: it is not a Python function with source",
            hint="pass a function defined with `def` or `lambda` in a file or notebook cell",
        )
    from .._array import unwrap_kwargs, unwrap_tree

    # bound arguments go to generated code, which computes on buffers
    return fun, unwrap_tree(args), unwrap_kwargs(kwargs)


def _is_callable_object(obj: Any) -> bool:
    """An instance of a user class whose ``__call__`` is a Python function (not a
    class, not one of srcjax's own transformed-function objects)."""
    if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)):
        return False
    if not callable(obj):
        return False
    call = type(obj).__call__
    if not isinstance(call, types.FunctionType):
        return False
    return not (getattr(call, "__module__", "") or "").startswith("srcjax")


def _is_primitive(obj: Any) -> bool:
    from ..primitives.registry import lookup_callable

    return not isinstance(obj, types.FunctionType) and lookup_callable(obj) is not None


_PRIM_FUNCS: Dict[Tuple[str, Tuple[str, ...]], types.FunctionType] = {}


def primitive_function(prim: Any, keywords: Tuple[str, ...] = ()) -> types.FunctionType:
    """A Python function with source that calls ``prim`` (so ``grad(jnp.sin)`` works);
    ``keywords`` (bound by a partial) are parameters too, passed by keyword."""
    fn = _PRIM_FUNCS.get((prim.public, keywords))
    if fn is None:
        params = [
            p.name
            for p in prim.signature.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            and p.default is p.empty
            and p.name not in keywords
        ]
        args = ", ".join(params + list(keywords))
        call = ", ".join(params + [f"{k}={k}" for k in keywords])
        text = f"def {prim.name}({args}):\n    return {prim.public}({call})\n"
        tag = f" {','.join(keywords)}" if keywords else ""
        filename = f"<srcjax primitive {prim.public}{tag}>"
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        ns = dict(hooks.namespaces())
        exec(compile(text, filename, "exec"), ns)
        fn = ns[prim.name]
        _PRIM_FUNCS[(prim.public, keywords)] = fn
    return fn


def _lambda_matches(node: Any, code: types.CodeType) -> bool:
    names = [a.id for a in node.args.args]
    return tuple(names) == code.co_varnames[: code.co_argcount]


_SEGMENT_CACHE: Dict[Tuple[str, int, str], Any] = {}


def _parse_def(filename: str, code: types.CodeType) -> Any:
    """The ``def`` statement of ``code`` (decorators included), parsed alone from
    the lines it spans, with the line numbers and columns it has in the file; or
    None (a lambda, a file that does not say where the block ends).

    Parsing only the function's lines keeps a first transformation cheap: the
    whole-file parse of the modules that hold derivative rules (2,600 lines of
    ``linalg.py``) was most of a first ``grad`` (profiled: 0.7 of 0.9 s)."""
    import inspect

    if code.co_name == "<lambda>":
        return None
    linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    first = code.co_firstlineno
    if not lines or first < 1 or first > len(lines):
        return None
    try:
        block = inspect.getblock(lines[first - 1 :])
    except Exception:  # noqa: BLE001 - tokenizing a partial file; the file parse decides
        return None
    text = "".join(block)
    key = (filename, first, text)
    node = _SEGMENT_CACHE.get(key)
    if node is None:
        indented = block[0][:1] in (" ", "\t")
        # an indented def (a method, a nested function) parses as the body of an
        # `if`, which keeps its columns
        try:
            tree = gast.parse("if 1:\n" + text if indented else text)
        except SyntaxError:
            return None
        body = tree.body[0].body if indented else tree.body
        if len(body) != 1 or not isinstance(body[0], gast.FunctionDef):
            return None
        node = body[0]
        shift = first - 2 if indented else first - 1
        if shift:
            for n in N.walk(node):
                if getattr(n, "lineno", None) is not None:
                    n.lineno += shift
                if getattr(n, "end_lineno", None) is not None:
                    n.end_lineno += shift
        _SEGMENT_CACHE[key] = node
    if node.name != code.co_name:
        return None
    if _on_disk(filename):
        check_current(code, text, first)
    return node


def _on_disk(filename: str) -> bool:
    """Whether linecache read ``filename`` from a file (which can change after
    the import); notebook cells and generated functions are registered text."""
    entry = linecache.cache.get(filename)
    return entry is not None and len(entry) == 4 and entry[1] is not None


def _check_found(code: types.CodeType, filename: str, node: Any, is_lambda: bool) -> None:
    """:func:`check_current` for a function found in the whole-file parse."""
    import inspect

    if not _on_disk(filename):
        return
    lines = linecache.getlines(filename)
    if is_lambda:
        seg = [ln.encode() for ln in lines[node.lineno - 1 : node.end_lineno]]
        if len(seg) == 1:
            seg[0] = seg[0][node.col_offset : node.end_col_offset]
        else:
            seg[0] = seg[0][node.col_offset :]
            seg[-1] = seg[-1][: node.end_col_offset]
        check_current(code, b"".join(seg).decode(), node.lineno, lambda_=True)
        return
    first = code.co_firstlineno
    try:
        block = inspect.getblock(lines[first - 1 :])
    except Exception:  # noqa: BLE001 - a file the tokenizer cannot read alone
        return
    check_current(code, "".join(block), first)


def get_source(fn: types.FunctionType) -> FunctionSource:
    """Parse the source of ``fn``; the returned node keeps real line numbers."""
    code = fn.__code__
    filename = code.co_filename
    node = _parse_def(filename, code)
    if node is not None:
        return _finish_source(fn, code, filename, node)
    tree = _parse_file(filename)
    if tree is None:
        raise SourceUnavailableError(
            f"cannot find the source of {fn.__qualname__} (file {filename!r} is not readable)",
            hint="define the function in a .py file or a notebook cell, not through exec/eval",
        )
    first = code.co_firstlineno
    name = code.co_name  # not fn.__name__: functools.wraps renames the wrapper
    is_lambda = name == "<lambda>"
    candidates = []
    defs, lambdas = _definitions(tree)
    if is_lambda:
        candidates = list(lambdas.get(first, ()))
    else:
        for node in defs.get(name, ()):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if start == first or node.lineno == first:
                candidates.append(node)
    if is_lambda:
        matching = [c for c in candidates if _lambda_matches(c, code)]
        if len(matching) > 1 and hasattr(code, "co_positions"):
            # several lambdas with the same parameters on one line: the columns of
            # the code's instructions say which one this is (Python >= 3.11)
            spans = [
                (p[2], p[3])
                for p in code.co_positions()
                if p[0] == first and p[2] is not None and p[3] and (p[2], p[3]) != (0, 0)
            ]
            if spans:
                lo, hi = min(a for a, _ in spans), max(b for _, b in spans)
                exact = [
                    c
                    for c in matching
                    if c.col_offset <= lo and (c.end_col_offset is None or hi <= c.end_col_offset)
                ]
                # a lambda inside another one on the same line: the innermost
                # enclosing span is this function's
                exact.sort(key=lambda c: (c.end_col_offset or 10**9) - c.col_offset)
                matching = exact or matching
        candidates = matching
    if not candidates:
        raise SourceUnavailableError(
            f"cannot find the source of {fn.__qualname__} in {filename}:{first}",
            hint="the file changed since the function was defined? re-run its definition",
        )
    node = candidates[0]
    _check_found(code, filename, node, is_lambda)
    if is_lambda:
        node = _lambda_to_def(N.clone(node))
    return _finish_source(fn, code, filename, node, copied=is_lambda)


def _finish_source(
    fn: types.FunctionType, code: types.CodeType, filename: str, node: Any, copied: bool = False
) -> FunctionSource:
    if not copied:
        node = N.clone(node)  # transforms edit their tree; the cache stays clean
    _positional_only_merged(node)
    from .normalize.canonical import canonicalize

    canonicalize(node)  # (walrus, loop `else`, `match`: see canonical.py)
    closure: Dict[str, Any] = {}
    if fn.__closure__:
        closure = dict(zip(code.co_freevars, fn.__closure__))
    inner = getattr(fn, "__wrapped__", None)
    if isinstance(inner, types.FunctionType) and _forwards_to(node, closure, fn.__globals__, inner):
        # a decorator's functools.wraps wrapper that only calls the function it
        # wraps (`def wrapper(*args, **kwargs): return f(*args, **kwargs)`): that
        # function's source (its `**kwargs` would be refused; user X)
        return get_source(inner)
    return FunctionSource(fn, node, filename, fn.__globals__, closure)


#: the attribute of a merged ``arguments`` node naming its positional-only parameters
POSONLY = "srcjax_posonly"


def _positional_only_merged(node: Any) -> None:
    """Every ``def``/``lambda`` in ``node`` with positional-only parameters
    (``def f(x, /, y)``) given them as plain leading parameters (the defaults
    already count from the end of both lists), their names kept in the
    attribute :data:`POSONLY` of its ``arguments`` node (a call passing one by
    keyword is Python's TypeError). The transforms read ``args.args`` only; the
    inliner ignored ``posonlyargs`` (``h(x, 3.0)`` was "`h` takes 1 arguments, 2
    given") and the entry refused them."""
    for n in N.walk(node):
        if isinstance(n, (gast.FunctionDef, gast.Lambda)) and n.args.posonlyargs:
            a = n.args
            setattr(a, POSONLY, [p.id for p in a.posonlyargs])
            a.args = list(a.posonlyargs) + list(a.args)
            a.posonlyargs = []


def _forwards_to(node: Any, closure: Dict[str, Any], globals_: dict, inner: Any) -> bool:
    """Whether ``def node(*args, **kwargs)``'s body is ``return f(*args,
    **kwargs)`` (after a docstring) with ``f`` bound to ``inner``."""
    a = node.args
    if a.vararg is None or a.kwarg is None or a.args or a.kwonlyargs or a.posonlyargs:
        return False
    body = [s for s in node.body if not _is_docstring_stmt(s)]
    if len(body) != 1 or not isinstance(body[0], gast.Return):
        return False
    call = body[0].value
    if not isinstance(call, gast.Call) or not isinstance(call.func, gast.Name):
        return False
    star_ok = (
        len(call.args) == 1
        and isinstance(call.args[0], gast.Starred)
        and isinstance(call.args[0].value, gast.Name)
        and call.args[0].value.id == a.vararg.id
    )
    kw_ok = (
        len(call.keywords) == 1
        and call.keywords[0].arg is None
        and isinstance(call.keywords[0].value, gast.Name)
        and call.keywords[0].value.id == a.kwarg.id
    )
    if not (star_ok and kw_ok):
        return False
    name = call.func.id
    cell = closure.get(name)
    try:
        target = cell.cell_contents if cell is not None else globals_.get(name)
    except ValueError:
        return False
    return target is inner


def _is_docstring_stmt(s: Any) -> bool:
    return (
        isinstance(s, gast.Expr)
        and isinstance(s.value, gast.Constant)
        and isinstance(s.value.value, str)
    )


def kwonly_as_positional(src: FunctionSource) -> Tuple[FunctionSource, int]:
    """``(src', n)``: ``src`` with its ``n`` keyword-only parameters appended to
    the positional ones, so the transforms see plain parameters (the generated
    function gets them back as keyword-only: :func:`restore_kwonly`). Defaults
    come from the function object, not the source. ``n`` is 0 (and ``src``
    unchanged) without keyword-only parameters or with ``*args``/``**kwargs``."""
    a = src.node.args
    n = len(a.kwonlyargs)
    if not n or a.vararg or a.kwarg:
        return src, 0
    import dataclasses

    node = copy.copy(src.node)
    a = copy.copy(a)
    a.args = list(a.args) + list(a.kwonlyargs)
    a.kwonlyargs, a.kw_defaults = [], []
    a.defaults = []
    node.args = a
    return dataclasses.replace(src, node=node), n


def restore_kwonly(fdef: Any, n: int) -> None:
    """Make the last ``n`` parameters of generated ``fdef`` keyword-only again
    (their defaults are set on the loaded function: ``__kwdefaults__``)."""
    if n:
        a = fdef.args
        a.kwonlyargs = a.args[len(a.args) - n :]
        a.args = a.args[: len(a.args) - n]
        a.kw_defaults = [None] * n


def gast_fix(tree: Any) -> Any:
    import ast

    return ast.fix_missing_locations(tree)


def _lambda_to_def(lam: Any) -> Any:
    ret = gast.Return(value=lam.body)
    gast.copy_location(ret, lam.body)
    fdef = N.function_def("lambda", lam.args, [ret])
    gast.copy_location(fdef, lam)
    fdef.sj_lambda = lam  # (made a value again: normalize/functions.local_fn_value)
    return fdef


def origin_of(node: Any) -> Optional[int]:
    return getattr(node, "lineno", None)
