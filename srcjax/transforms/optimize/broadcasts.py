"""Materialized broadcasts of loop-invariant operands (:func:`broadcast_operands`).

NumPy's elementwise arithmetic is up to 3x slower when one operand is broadcast
than when both have the result's shape: R3's scan cell adds a bias ``b`` of shape
(64,) to a (32, 64) matrix on every trip, 1.0 against 0.4 us. Inside a loop
where such an operand does not change, jit writes ``b_b = ad.broadcast_copy(b,
shape)`` before the operation and uses ``b_b`` in it; loop-invariant code motion
then makes the copy once, before the loop. The result is the same bit for bit
(each element is the same operation on the same two numbers).

Only where it cannot change a result's type or cost much memory: both operands
non-weak arrays of one dtype and of known shapes, the other operand already of
the result's shape, and at most :data:`MAX_ELEMENTS` elements."""

from __future__ import annotations

import dataclasses
import math
from typing import Any, List, Optional, Tuple

import gast
import numpy as np

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .avals import Aval
from .common import _is_assign, _new_assign, each_for_loop
from .loop_facts import trip_count

#: elementwise binary operations whose broadcast operand is worth materializing
_ARITHMETIC = frozenset(("jnp.add", "jnp.subtract", "jnp.multiply", "jnp.true_divide"))
#: the largest result (elements) whose invariant operand is copied to its shape
#: (beyond it NumPy's per-call overhead, what the copy saves, is small)
MAX_ELEMENTS = 1 << 16


def broadcast_operands(fdef: Any, namer: Any) -> bool:
    """Rewrite the loops' elementwise operations by broadcast invariant operands
    (see the module); returns whether anything changed (run :func:`infer_avals`
    then, and the loop-invariant code motion)."""
    local = set(N.assigned_names(fdef.body))
    # (a loop of constant trips, at least 2: the copy moves out and pays off)
    return each_for_loop(
        fdef, namer, _in_loop, when=lambda s: (trip_count(s.iter, {}, local) or 0) >= 2
    )


def _in_loop(loop: Any, namer: Any) -> bool:
    variant = N.loop_variant(loop)
    out: List[Any] = []
    changed = False
    copies: dict = {}  # (name, shape) -> the copy made earlier in this body
    for s in loop.body:
        found = _broadcast_invariant(s, variant)
        if found is None:
            out.append(s)
            continue
        key, shape = found
        b = s.sj_op.bound[key].id
        copy = copies.get((b, shape))
        if copy is None:
            copy = copies[(b, shape)] = namer.fresh(f"{b}_b")
            shape_node = N.const(shape)
            value = N.call("ad.broadcast_copy", [N.name(b), shape_node])
            op = Op(
                "prim",
                prim=registry.REGISTRY["ad.broadcast_copy"],
                bound={"x": N.name(b), "shape": N.clone(shape_node)},
            )
            out.append(_new_assign(copy, value, op, s))
        _rename_loads(s.value, b, copy)
        bound = dict(s.sj_op.bound)
        bound[key] = N.name(copy)
        s.sj_op = dataclasses.replace(s.sj_op, bound=bound)
        out.append(s)
        changed = True
    loop.body = out
    return changed


def _rename_loads(node: Any, old: str, new: str) -> None:
    for n in N.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id == old:
            n.id = new


def _broadcast_invariant(s: Any, variant: set) -> Optional[Tuple[str, tuple]]:
    """``(key, shape)`` of ``t = x OP y`` (an operation of :data:`_ARITHMETIC`)
    whose operand bound to ``key`` is a name the loop does not assign, of a shape
    smaller than the result's ``shape``, and whose other operand is a name the
    loop assigns, of that shape (see the module for the other conditions)."""
    if not _is_assign(s):
        return None
    op = s.sj_op
    if op.kind != "prim" or op.prim.public not in _ARITHMETIC or set(op.bound) != {"x", "y"}:
        return None
    x, y = op.bound["x"], op.bound["y"]
    if not (isinstance(x, gast.Name) and isinstance(y, gast.Name)) or x.id == y.id:
        return None
    ins = getattr(s, "sj_avals_in", None) or {}
    ax, ay = ins.get(x.id), ins.get(y.id)
    if not (isinstance(ax, Aval) and isinstance(ay, Aval)) or ax.weak_type or ay.weak_type:
        return None
    if ax.dtype != ay.dtype or not isinstance(ax.shape, tuple) or not isinstance(ay.shape, tuple):
        return None
    for key, inv, full, ai, af in (("x", x, y, ax, ay), ("y", y, x, ay, ax)):
        if inv.id in variant or full.id not in variant or ai.shape == af.shape:
            continue
        try:
            shape = tuple(int(d) for d in np.broadcast_shapes(ai.shape, af.shape))
        except (TypeError, ValueError):
            return None
        if shape == tuple(af.shape) and math.prod(shape) <= MAX_ELEMENTS:
            return key, shape
    return None
