"""The normalization of ``x.at[idx].<mode>(v)`` calls (JAX's functional
index updates), the ``at_update`` rule of :data:`.resolve.CALL_RULES`: ``set``,
``add``, ``multiply``, ``min``, ``max`` as the primitives ``ad.at_<mode>``;
``subtract``, ``divide``, ``power``, ``apply`` and ``get`` by JAX's
definitions in terms of them (or of ``x[idx]``); the ``mode``/``fill_value``
keywords checked as JAX does, its hints dropped. ``c`` is a
:class:`.resolve.Callee`, ``norm`` the normalizer.
"""

from __future__ import annotations

from typing import Any, Dict, Optional

import gast
import numpy as np

from ...errors import UnsupportedSyntaxError
from ...primitives import registry
from .. import nodes as N
from .anf import Op
from .common import _bind, _unsupported


def _is_at_update(norm: Any, c: Any) -> bool:
    func = c.func
    if not (
        isinstance(func, gast.Attribute)
        and isinstance(func.value, gast.Subscript)
        and isinstance(func.value.value, gast.Attribute)
        and func.value.value.attr == "at"
    ):
        return False
    status, base_obj = norm.resolve(func.value.value.value)
    if status == "found" and isinstance(base_obj, (np.ndarray, np.generic)):
        status = "dynamic"  # a module-level array (user R: base.at[i].set(v))
    c.at_status = status
    return status in ("local", "dynamic")


def _at_update(norm: Any, c: Any, target: Optional[str]) -> tuple:
    e, func = c.e, c.func
    if func.attr == "subtract" and len(e.args) == 1:
        # x.at[idx].subtract(v) is x.at[idx].add(-v), JAX's definition
        neg = gast.UnaryOp(op=gast.USub(), operand=e.args[0])
        gast.copy_location(neg, e.args[0])
        add = gast.Attribute(value=func.value, attr="add", ctx=gast.Load())
        gast.copy_location(add, func)
        call = gast.Call(func=add, args=[neg], keywords=e.keywords)
        return norm.call(N.copy_origin(call, e), target)
    if func.attr == "apply" and len(e.args) == 1:
        # x.at[idx].apply(f) is x.at[idx].set(f(x.at[idx].get(mode="clip"))): the
        # update's mode drops (or clamps) what the clamped read computed, as eagerly
        at = func.value
        get = gast.Call(
            func=gast.Attribute(value=N.clone(at), attr="get", ctx=gast.Load()),
            args=[],
            keywords=[gast.keyword(arg="mode", value=N.const("clip"))],
        )
        applied = gast.Call(func=e.args[0], args=[get], keywords=[])
        put = gast.Call(
            func=gast.Attribute(value=at, attr="set", ctx=gast.Load()),
            args=[applied],
            keywords=e.keywords,
        )
        for node in (get, get.func, applied, put, put.func):
            gast.copy_location(node, e)
        return norm.call(N.copy_origin(put, e), target)
    if func.attr in ("divide", "power") and len(e.args) == 1:
        # x.at[idx].divide(v) is x / ones_like(x).at[idx].multiply(v) (power: x **),
        # JAX's definition: duplicate indices multiply, out-of-bounds ones drop
        x = norm.atom(func.value.value.value)
        ones = registry.by_public("jnp.ones_like")
        t = norm.temp("ones")
        norm.emit(
            N.assign(t, N.call(ones.public, [x])), Op("prim", prim=ones, bound=_bind(ones, x))
        )
        node, op = _at_prim(norm, e, "multiply", N.name(t), func.value.slice)
        m = norm.temp("factors")
        norm.emit(N.assign(m, node), op)
        binop = gast.BinOp(
            left=x, op=gast.Div() if func.attr == "divide" else gast.Pow(), right=N.name(m)
        )
        return norm.simple(N.copy_origin(gast.copy_location(binop, e), e), target)
    if func.attr == "get" and not e.args:
        # x.at[idx].get() is x[idx] (clamping out of bounds, as JAX's default);
        # with a mode or fill_value: ad.at_get
        kws = _at_keywords(norm, e, "get")
        if kws.get("mode") is None and kws.get("fill_value") is None:
            sub = gast.Subscript(
                value=func.value.value.value, slice=func.value.slice, ctx=gast.Load()
            )
            gast.copy_location(sub, e)
            return norm.simple(sub, target)
        prim = registry.by_public("ad.at_get")
        x = norm.atom(func.value.value.value)
        idx = N.index_value(norm.index(func.value.slice))
        fill = kws.get("fill_value")
        fill = N.const(None) if fill is None else fill
        args = [x, idx, N.const(kws.get("mode")), fill]
        return N.call(prim.public, args), Op("prim", prim=prim, bound=_bind(prim, *args))
    return _at_prim(norm, e, func.attr, norm.atom(func.value.value.value), func.value.slice)


def _at_prim(norm: Any, e: Any, mode: str, x: Any, index: Any) -> tuple:
    """``(node, Op)`` of ``x.at[index].<mode>(v, **keywords)`` (``e``'s argument
    and keywords) as the primitive ``ad.at_<mode>`` (``x`` an atom)."""
    if mode == "mul":
        mode = "multiply"  # (JAX's alias, as the eager Array's .at[i].mul)
    try:
        prim = registry.by_public(f"ad.at_{mode}")
    except KeyError:
        raise UnsupportedSyntaxError(
            f"`.at[...].{mode}` is not supported",
            norm.loc(e),
            "use .set, .add, .subtract, .multiply, .divide, .power, .min, .max, .apply or .get",
        ) from None
    idx = norm.index(index)
    if len(e.args) != 1:
        raise _unsupported(e, f"`.at[...].{mode}` with these arguments", src=norm.src)
    kws = _at_keywords(norm, e, mode)
    if "fill_value" in kws:
        raise UnsupportedSyntaxError(
            f"`.at[...].{mode}` got an unexpected keyword argument 'fill_value'", norm.loc(e)
        )
    v = norm.atom(e.args[0])
    idx = N.index_value(idx)  # slices as slice(...) objects in a call
    args = [x, idx, v]
    mode = kws.get("mode")
    if mode not in ("clip", "promise_in_bounds"):
        # (None, "fill", "drop": the primitives' default, "drop")
        node = N.call(prim.public, args)
    else:  # (promise_in_bounds drops too, but its gradient reads clamped, as JAX's)
        args.append(N.const(mode))
        node = N.call(prim.public, args[:3], {"mode": args[3]})
    return node, Op("prim", prim=prim, bound=_bind(prim, *args))


#: keywords of JAX's .at[...] methods that are hints (results do not depend on them)
_AT_HINTS = ("indices_are_sorted", "unique_indices", "wrap_negative_indices", "out_sharding")


def _at_keywords(norm: Any, e: Any, what: str) -> Dict[str, Any]:
    """The keywords of ``x.at[idx].<what>(...)``: ``mode`` (a value known while
    transforming, checked as JAX does), ``fill_value`` (an atom), the hints
    (dropped); anything else a located error."""
    from ...errors import TransformValueError
    from ...primitives.ad.oob import check_mode

    out: Dict[str, Any] = {}
    for k in e.keywords:
        if k.arg in _AT_HINTS:
            continue
        if k.arg == "fill_value":
            out["fill_value"] = norm.atom(k.value)
            continue
        if k.arg != "mode":
            raise UnsupportedSyntaxError(
                f"`.at[...].{what}` got an unexpected keyword argument {k.arg!r}", norm.loc(e)
            )
        node = k.value
        if isinstance(node, gast.Constant):
            value = node.value
        else:
            status, value = norm.resolve(node)
            if status != "found":
                raise UnsupportedSyntaxError(
                    f"`.at[...].{what}(mode=...)`: the mode must be known while "
                    "transforming (a string constant), as in JAX (a static argument)",
                    norm.loc(e),
                )
        try:
            out["mode"] = check_mode(value, f".at[...].{what}()")
        except ValueError as err:
            raise TransformValueError(str(err), norm.loc(e)) from None
    return out
