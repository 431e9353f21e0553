"""Contiguous transposes of loop-invariant matrices (:func:`transposed_operands`).

``ad.matmul_left(g, a, b)`` (the cotangent of ``a`` in ``a @ b``) computes
``g @ b.T``. NumPy's BLAS product by the transposed view of a small matrix is
about twice as slow as by a contiguous one (R3's reverse scan: 32 x 64 by
64 x 64, 3.4 against 1.8 us). Inside a loop where ``b`` does not change, jit
writes ``bt = ad.transposed(b)`` (a contiguous copy of ``b.T``) before the
product and ``ad.matmul_left_t(g, a, bt)``; loop-invariant code motion then
makes the copy once, before the loop."""

from __future__ import annotations

from typing import Any, List

import gast
import numpy as np

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .avals import Aval
from .common import _is_assign, _new_assign, each_for_loop


def transposed_operands(fdef: Any, namer: Any) -> bool:
    """Rewrite the loops' ``ad.matmul_left`` by invariant matrices (see the
    module); returns whether anything changed (run :func:`infer_avals` then)."""
    return each_for_loop(fdef, namer, _in_loop)


def _in_loop(loop: Any, namer: Any) -> bool:
    variant = N.loop_variant(loop)
    out: List[Any] = []
    changed = False
    for s in loop.body:
        b = _invariant_matrix(s, variant)
        if b is None:
            out.append(s)
            continue
        op = s.sj_op
        bt = namer.fresh(f"{b.id}_t")
        prim_t = registry.REGISTRY["ad.transposed"]
        value = N.call("ad.transposed", [N.name(b.id)])
        out.append(_new_assign(bt, value, Op("prim", prim=prim_t, bound={"x": N.name(b.id)}), s))
        g, a = op.bound["g"], op.bound["a"]
        s.value = N.call("ad.matmul_left_t", [N.clone(g), N.clone(a), N.name(bt)])
        s.sj_op = Op(
            "prim",
            prim=registry.REGISTRY["ad.matmul_left_t"],
            bound={"g": N.clone(g), "a": N.clone(a), "bt": N.name(bt)},
        )
        out.append(s)
        changed = True
    loop.body = out
    return changed


def _invariant_matrix(s: Any, variant: set) -> Any:
    """``b`` of ``x = ad.matmul_left(g, a, b)`` when ``b`` is a name the loop does
    not assign holding a float32/float64 matrix of more than one column whose
    transpose is worth copying, and ``a`` a matrix too (the product's fast path)."""
    if not _is_assign(s):
        return None
    op = s.sj_op
    if op.kind != "prim" or op.prim.public != "ad.matmul_left" or set(op.bound) != {"g", "a", "b"}:
        return None
    b, a = op.bound["b"], op.bound["a"]
    if not isinstance(b, gast.Name) or b.id in variant or not isinstance(a, gast.Name):
        return None
    ins = getattr(s, "sj_avals_in", None) or {}
    ab, aa = ins.get(b.id), ins.get(a.id)
    if not (isinstance(ab, Aval) and isinstance(aa, Aval)) or ab.weak or aa.weak:
        return None
    if len(ab.shape) != 2 or len(aa.shape) != 2 or ab.shape[1] < 2:
        return None  # (an outer product, k = 1: np.dot by the view is as fast)
    if ab.dtype not in (np.dtype(np.float32), np.dtype(np.float64)):
        return None
    return b
