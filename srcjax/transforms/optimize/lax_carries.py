"""The types of a lax loop's carries, as JAX gives them (:func:`carry_merge`,
:func:`carry_casts`).

JAX traces a ``fori_loop``/``while_loop``/``scan`` body with the initial carry's
types. Where an initial leaf is weakly typed (a Python scalar, ``0.0`` or ``1``)
and the body returns another dtype, JAX converts that leaf to the promoted dtype
(a strong value: ``lax.while_loop(..., lambda c: c * 1.5, 1)`` computes in
float32 from the first trip and returns a strong float32) and traces again
(``_promote_weak_typed_input`` in jax/_src/lax/control_flow/loops.py). A carry
whose body output differs in its weak type only keeps the initial type inside
the body (a scan's ``ys`` of a ``0.0`` carry are weak; ``c * 0.5 + x`` makes the
final carry strong).

The normalizer writes a lax loop as a Python loop whose body checks its carry
(``ad.check_carry``, at the body's top level): that check marks the loops this
rule is for. The abstract interpreter merges their values at the loop head with
:func:`carry_merge`; a carry to convert is unknown there (the code does not
convert it yet) and recorded on the loop, and :func:`carry_casts` writes the
conversion before the loop (then the next inference knows it)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Tuple

import gast

from ... import dtypes
from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .avals import Aval, _merge
from .carry_checks import is_lax_loop
from .common import _new_assign


def _plain(k: str, a: Any, b: Any) -> Any:
    return _merge(a, b)


def carry_merge(s: Any, sure: bool) -> Callable[[str, Any, Any], Any]:
    """The merge of name ``k``'s value before a trip (``a``) and after it (``b``)
    at the head of loop ``s``: JAX's carry rule for a lax loop (see the module
    doc), :func:`.avals._merge` for any other. A weakly typed ``a`` (or item of a
    tuple or list ``a``) that JAX would convert is recorded in
    ``s.sj_carry_casts`` (name -> dtype, or name -> (tuple or list, length,
    {index: dtype})) when ``sure``
    (the interpreter's values before the loop hold), and is unknown meanwhile."""
    if not is_lax_loop(s):
        return _plain
    casts: Dict[str, Any] = {}
    s.sj_carry_casts = casts

    def merge(k: str, a: Any, b: Any) -> Any:
        if type(a) in (tuple, list) and type(b) is type(a) and len(a) == len(b):
            items, leaf_casts = [], {}
            for i, (x, y) in enumerate(zip(a, b)):
                m, want = _leaf(x, y)
                items.append(m)
                if want is not None:
                    leaf_casts[i] = want
            if leaf_casts and sure:
                casts[k] = (type(a), len(a), leaf_casts)
            return type(a)(items)
        m, want = _leaf(a, b)
        if want is not None and sure:
            casts[k] = want
        return m

    return merge


def _leaf(a: Any, b: Any) -> Tuple[Any, Any]:
    """The merged value of one carry leaf and the dtype JAX converts it to first
    (or None)."""
    if a == b or not (isinstance(a, Aval) and isinstance(b, Aval)) or a.shape != b.shape:
        return _merge(a, b), None
    da = dtypes.canonicalize_dtype(a.dtype)
    db = dtypes.canonicalize_dtype(b.dtype)
    if da == db:
        # the weak type differs only: the carry keeps the initial type
        return (a if a.ptype is None else Aval(a.shape, da, wt=a.weak_type)), None
    if not a.weak_type or b.ptype is bool or a.ptype is bool:
        return None, None  # (JAX's TypeError: ad.check_carry raises it at run time)
    want, _ = dtypes.weak_promotion([(a.ptype or da, True), (b.ptype or db, b.weak_type)])
    return None, dtypes.canonicalize_dtype(want)


def carry_casts(fdef: Any, namer: Any = None) -> bool:
    """Write the conversions :func:`carry_merge` recorded before their loops, as
    JAX converts a weakly typed initial carry the body promotes: ``k =
    ad.astype(k, 'float32')``, or for items of a tuple or list carry (with a
    ``namer`` for the new names) ``k1 = k[1]; k1_f = ad.astype(k1, 'float32');
    k = (k[0] ..., k1_f)``. Run :func:`.interp.infer_avals` first (and again after
    a change). Returns whether anything changed."""
    state = {"changed": False}
    fdef.body = _block(fdef.body, namer, state)
    return state["changed"]


def _cast(target: str, x: Any, dt: Any, like: Any) -> Any:
    value = N.call("ad.astype", [x, N.const(dt.name)])
    op = Op(
        "prim",
        prim=registry.by_public("ad.astype"),
        bound={"x": N.clone(x), "dtype": N.const(dt.name)},
    )
    return _new_assign(target, value, op, like)


def _item_casts(k: str, kind: type, n: int, items: Dict[int, Any], namer: Any, like: Any) -> list:
    getitem = registry.by_public("ad.getitem")
    out, elts = [], []
    for i in range(n):
        t = namer.fresh(f"{k}_i")
        node = gast.Subscript(value=N.name(k), slice=N.const(i), ctx=gast.Load())
        op = Op("prim", prim=getitem, bound={"x": N.name(k), "idx": N.const(i)})
        out.append(_new_assign(t, node, op, like))
        if i in items:
            c = namer.fresh(f"{k}_i_{items[i].name}")
            out.append(_cast(c, N.name(t), items[i], like))
            t = c
        elts.append(N.name(t))
    display = (gast.Tuple if kind is tuple else gast.List)(elts=elts, ctx=gast.Load())
    out.append(_new_assign(k, display, Op("pack", elts=[N.clone(e) for e in elts]), like))
    return out


def _block(stmts: List[Any], namer: Any, state: Dict[str, bool]) -> List[Any]:
    out: List[Any] = []
    for s in stmts:
        if isinstance(s, gast.If):
            s.body = _block(s.body, namer, state)
            s.orelse = _block(s.orelse, namer, state)
        elif isinstance(s, (gast.For, gast.While)):
            s.body = _block(s.body, namer, state)
            carries = getattr(s, "sj_carry_casts", {})
            for k in sorted(carries):
                want = carries[k]
                if not isinstance(want, tuple):
                    out.append(_cast(k, N.name(k), want, s))
                elif namer is not None:
                    out.extend(_item_casts(k, *want, namer, s))
                else:
                    continue
                state["changed"] = True
            s.sj_carry_casts = {}
        out.append(s)
    return out
