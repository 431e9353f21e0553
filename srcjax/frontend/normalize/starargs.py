"""Star-arguments in calls: ``f(*xs, y)`` becomes ``f(xs[0], xs[1], y)`` when
the length of ``xs`` is known while transforming: a tuple/list display, a local
name every assignment of which is a display of one length (an inlined
function's ``*args`` parameter), a module-level tuple or list, or -- for a
callee whose signature fixes it (a user function without ``*args`` or
defaults to fill) -- the number of parameters the star has to fill
(``model(*params, x)`` with ``def model(w, b, x)``). Anything else is a
located :class:`UnsupportedSyntaxError`.
"""

from __future__ import annotations

import types
from typing import Any, List, Optional

import gast

from ...errors import UnsupportedSyntaxError
from ...primitives import registry
from .. import nodes as N
from .anf import Op
from .common import _bind, _is_library_function

_HINT = "pass the arguments explicitly, or pass a tuple whose length is known and index it"


def has_star_args(e: Any) -> bool:
    """Whether the call ``e`` has a ``*xs`` argument."""
    return any(isinstance(a, gast.Starred) for a in e.args)


def star_arg_nodes(body: Any) -> set:
    """The ids of the ``Starred`` nodes under ``body`` that are call arguments
    (expanded by :func:`expand_star_args`; other star expressions are refused)."""
    return {
        id(a)
        for n in N.walk(body)
        if isinstance(n, gast.Call)
        for a in n.args
        if isinstance(a, gast.Starred)
    }


def expand_star_args(norm: Any, e: Any) -> Any:
    """The call ``e`` with each ``*xs`` argument replaced by the items of ``xs``
    (``xs[0], xs[1], ...``; a display by its elements, an expression other than a
    name evaluated once, first). Raises UnsupportedSyntaxError where the length
    is not known while transforming."""
    stars = [a for a in e.args if isinstance(a, gast.Starred)]
    lengths = [_known_length(norm, s.value) for s in stars]
    checked = None  # the star whose length the callee fixes: checked when it runs
    if lengths.count(None) == 1:
        n = _length_from_callee(norm, e)
        if n is not None:
            checked = stars[lengths.index(None)]
            lengths[lengths.index(None)] = n
    args: List[Any] = []
    for a in e.args:
        if not isinstance(a, gast.Starred):
            args.append(a)
            continue
        n = lengths[stars.index(a)]
        if n is None:
            raise UnsupportedSyntaxError(
                "star-arguments (`*args`) whose length is not known while transforming"
                " are not supported in transformed functions",
                norm.loc(a),
                _HINT,
            )
        args.extend(_items(norm, a.value, n, check=a is checked))
    return N.copy_origin(gast.Call(func=e.func, args=args, keywords=e.keywords), e)


def _known_length(norm: Any, v: Any) -> Optional[int]:
    n = norm.static_seq_len(v)
    if n is not None:
        return n
    if isinstance(v, gast.Name) and v.id not in norm.locals:
        status, obj = norm.resolve(v)
        if status == "found" and type(obj) in (tuple, list):
            return len(obj)
    return None


def _length_from_callee(norm: Any, e: Any) -> Optional[int]:
    """How many positional arguments the one star of unknown length must give
    for the call to bind the callee's parameters (a user function, global or
    local, without ``*args`` and with no default left to fill); None otherwise."""
    args = _callee_args(norm, e.func)
    if args is None or args.vararg is not None or args.posonlyargs:
        return None
    given = {k.arg for k in e.keywords}
    if None in given:
        return None
    params = [a.id for a in args.args]
    n_default = len(args.defaults)
    free = [p for i, p in enumerate(params) if p not in given]
    if any(params.index(p) >= len(params) - n_default for p in free):
        return None  # (a default may or may not be filled by the star)
    n = len(free) - (len(e.args) - 1)
    return n if n >= 0 else None


def _callee_args(norm: Any, func: Any) -> Any:
    """The ``gast.arguments`` of the callee ``func`` when it is a user function
    srcjax inlines (a local ``def``, or a Python function of the user's)."""
    if isinstance(func, gast.Name) and func.id in norm.locals:
        fdef = norm.local_fns.get(norm.var(func.id))
        return fdef.args if isinstance(fdef, gast.FunctionDef) else None
    status, obj = norm.resolve(func)
    if status != "found" or not isinstance(obj, types.FunctionType):
        return None
    if _is_library_function(obj) or (obj.__module__ or "").split(".")[0] == "srcjax":
        return None
    from ..source import get_source

    try:
        return get_source(obj).node.args
    except Exception:  # noqa: BLE001 - no source: the call is refused as before
        return None


def _items(norm: Any, v: Any, n: int, check: bool = False) -> List[Any]:
    if isinstance(v, (gast.Tuple, gast.List)):
        return list(v.elts)
    if not isinstance(v, gast.Name):
        a = norm.atom(v, base="star")
        if check:
            _emit_length_check(norm, a, n)
        if not isinstance(a, gast.Name):
            return [
                N.copy_origin(gast.Subscript(value=a, slice=N.const(i), ctx=gast.Load()), v)
                for i in range(n)
            ]
        v = N.copy_origin(N.name(norm._source_alias(a.id, "star")), v)
    elif check:
        _emit_length_check(norm, norm.atom(v, base="star"), n)
    return [
        N.copy_origin(gast.Subscript(value=N.clone(v), slice=N.const(i), ctx=gast.Load()), v)
        for i in range(n)
    ]


def _emit_length_check(norm: Any, xs: Any, n: int) -> None:
    """``ad.check_star_len(xs, n)``: Python's TypeError when the star's value has
    another length than the ``n`` items the callee's parameters take."""
    chk = registry.by_public("ad.check_star_len")
    size = N.const(n)
    norm.emit(
        N.expr_stmt(N.call(chk.public, [N.clone(xs), size])),
        Op("prim", prim=chk, bound=_bind(chk, N.clone(xs), size)),
    )
