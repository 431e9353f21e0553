"""jit: ``ad.getitem(x, idx)`` back to Python's subscript ``x[idx]`` where the
abstract values show the index in bounds (:func:`restore_subscripts`).

Generated code reads an item through ``ad.getitem`` whenever the index could be
an out-of-bounds integer (``frontend.nodes.item``): JAX clamps there, NumPy
raises. Under jit the shapes are known, so for a constant index the question is
settled while compiling: in bounds, the subscript (NumPy's own indexing, no
function call); an array index out of bounds, the subscript of the clamped
constant (``x[7]`` of a ``float32[5]`` is ``x[4]``, as JAX computes it). An item
of a list, tuple or dict argument (``params[0]``) is a subscript too. Indices
known only at run time keep ``ad.getitem``.

A scan's row read ``ad.tree_slice(xs, k)`` in ``for k in range(n)`` (or
``reversed(range(n))``) of an array ``xs`` of ``n`` rows is ``xs[k]`` too (the
helper's ``isinstance`` test and call cost 0.3 us a trip; R3 reads three rows a
trip).
"""

from __future__ import annotations

from typing import Any

import gast

from ...frontend import nodes as N
from ...primitives.ad.oob import clamp_index
from .avals import Aval
from .common import _Static

_NOT_STATIC = object()


def _static_part(node: Any) -> Any:
    if isinstance(node, gast.Constant):
        v = node.value
        if v is None or v is Ellipsis or (type(v) is int) or isinstance(v, str):
            return v
        return _NOT_STATIC
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        v = _static_part(node.operand)
        return -v if type(v) is int else _NOT_STATIC
    if isinstance(node, gast.Call) and getattr(node.func, "id", None) == "slice":
        return slice(0)  # (a slice never raises: its bounds do not matter here)
    return _NOT_STATIC


def _static_index(node: Any) -> Any:
    """The index as a value (slices as ``slice(0)``), or ``_NOT_STATIC``."""
    if isinstance(node, gast.Tuple):
        parts = [_static_part(e) for e in node.elts]
        if any(p is _NOT_STATIC for p in parts):
            return _NOT_STATIC
        return tuple(parts)
    return _static_part(node)


def _container_ok(base: Any, key: Any) -> bool:
    if isinstance(base, _Static):
        base = base.value
    if isinstance(base, dict):
        return type(key) in (int, str) and key in base
    if isinstance(base, (list, tuple)):
        return type(key) is int and -len(base) <= key < len(base)
    return False


def _array_index(aval: Aval, key: Any, node: Any) -> Any:
    """The index node to subscript an array of ``aval`` with: ``node`` when in
    bounds, the clamped constants when an integer is out of bounds, None when
    unsure (too many indices, a string)."""
    parts = key if isinstance(key, tuple) else (key,)
    if any(isinstance(p, str) for p in parts):
        return None
    used = sum(1 for p in parts if p is not None and p is not Ellipsis)
    if used > len(aval.shape) or sum(p is Ellipsis for p in parts) > 1:
        return None  # (NumPy's and JAX's IndexError: left to run time)
    if not any(type(p) is int for p in parts):
        return node
    clamped = clamp_index(aval.shape, key)
    if clamped == key:
        return node
    if any(n == 0 for n in aval.shape):
        return None
    new = list(clamped) if isinstance(clamped, tuple) else [clamped]
    elts = node.elts if isinstance(node, gast.Tuple) else [node]
    # (only the parts out of bounds change: x[-1] stays x[-1])
    out = [
        N.const(int(c)) if type(p) is int and p != c and p != c - n else N.clone(e)
        for p, c, e, n in zip(parts, new, elts, _axis_sizes(aval.shape, parts))
    ]
    return gast.Tuple(elts=out, ctx=gast.Load()) if isinstance(node, gast.Tuple) else out[0]


def _axis_sizes(shape: tuple, parts: tuple) -> list:
    """The size of the axis each part indexes (0 for the parts that index none)."""
    used = sum(1 for p in parts if p is not None and p is not Ellipsis)
    out, axis = [], 0
    for p in parts:
        if p is None:
            out.append(0)
        elif p is Ellipsis:
            out.append(0)
            axis += len(shape) - used
        else:
            out.append(shape[axis])
            axis += 1
    return out


def _subscript_of(s: Any) -> Any:
    v = s.value
    if not (
        isinstance(v, gast.Call)
        and N.to_source(v.func).strip() == "ad.getitem"
        and len(v.args) == 2
        and not v.keywords
        and isinstance(v.args[0], gast.Name)
    ):
        return None
    x, idx = v.args
    base = (getattr(s, "sj_avals_in", None) or {}).get(x.id)
    if isinstance(base, (list, tuple)) and not isinstance(idx, gast.Tuple):
        # an item of a list or tuple: Python's subscript is what ad.getitem does
        # with any index (seq[i] in a loop)
        return gast.Subscript(value=N.clone(x), slice=_as_slice(idx), ctx=gast.Load())
    key = _static_index(idx)
    if key is _NOT_STATIC:
        return None
    if isinstance(base, Aval):
        if base.weak:
            return None
        new = _array_index(base, key, idx)
    else:
        new = idx if _container_ok(base, key) else None
    if new is None:
        return None
    return gast.Subscript(value=N.clone(x), slice=_as_slice(new), ctx=gast.Load())


def _as_slice(node: Any) -> Any:
    """``slice(a, b, c)`` calls back to ``a:b:c`` (how a subscript writes them)."""
    if isinstance(node, gast.Tuple):
        return gast.Tuple(elts=[_as_slice(e) for e in node.elts], ctx=gast.Load())
    if (
        isinstance(node, gast.Call)
        and getattr(node.func, "id", None) == "slice"
        and len(node.args) == 3  # (index_value's form: slice(lo, hi, step))
    ):
        lo, hi, step = (None if _is_none(b) else N.clone(b) for b in node.args)
        return gast.Slice(lower=lo, upper=hi, step=step)
    return N.clone(node)


def _is_none(node: Any) -> bool:
    return isinstance(node, gast.Constant) and node.value is None


def restore_subscripts(fdef: Any) -> None:
    """Each ``t = ad.getitem(x, c)`` with a constant index ``c`` that the
    abstract value of ``x`` shows in bounds (or clamps) becomes ``t = x[c]``."""
    for s in N.walk(fdef):
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            sub = _subscript_of(s)
            if sub is not None:
                N.copy_origin(sub, s.value)
                s.value = sub


def loop_rows_as_subscripts(fdef: Any) -> None:
    """Each ``t = ad.tree_slice(xs, k)`` in ``for k in range(n)`` or ``for k in
    reversed(range(n))``, ``n`` a constant, the loop not assigning ``k``, whose
    ``xs`` is an array of ``n`` rows (its abstract value there) becomes ``t =
    xs[k]`` (in bounds: the helper's own subscript)."""
    for loop in N.walk(fdef):
        if not isinstance(loop, gast.For) or not isinstance(loop.target, gast.Name):
            continue
        n = _range_count(loop.iter)
        k = loop.target.id
        if n is None or k in N.assigned_names(loop.body):
            continue
        for s in loop.body:  # (the loop's own statements: a nested loop's k differs)
            v = getattr(s, "value", None) if isinstance(s, gast.Assign) else None
            if not (
                isinstance(v, gast.Call)
                and N.to_source(v.func).strip() == "ad.tree_slice"
                and len(v.args) == 2
                and not v.keywords
                and isinstance(v.args[0], gast.Name)
                and isinstance(v.args[1], gast.Name)
                and v.args[1].id == k
            ):
                continue
            base = (getattr(s, "sj_avals_in", None) or {}).get(v.args[0].id)
            if isinstance(base, Aval) and not base.weak and base.shape[:1] == (n,):
                sub = gast.Subscript(value=N.clone(v.args[0]), slice=N.name(k), ctx=gast.Load())
                N.copy_origin(sub, v)
                s.value = sub


def _range_count(it: Any) -> Any:
    """``n`` of ``range(n)`` or ``reversed(range(n))``, ``n`` an int constant."""
    args = N.range_args(it)
    if args is not None and len(args) == 1:
        n = args[0]
        if isinstance(n, gast.Constant) and type(n.value) is int:
            return n.value
    return None
