"""Products of a loop's rows by an invariant matrix, made for all rows at once
(:func:`row_products`).

A scan's body multiplies the row it reads, ``x = ad.tree_slice(xs, k)``, by a
weight the loop does not change: R3's cell computes ``x @ wx`` (32 x 16 by
16 x 64) on each of its 50 trips, about 1 us each, mostly NumPy's per-call cost.
In a ``for k in range(n)`` loop over all ``n`` rows of ``xs``, jit writes
``xs_wx = jnp.matmul(xs, wx)`` (one stacked product; loop-invariant code motion
moves it before the loop) and reads the trip's row of it,
``ad.tree_slice(xs_wx, k)``. NumPy's stacked matmul multiplies each row by the
same BLAS call as the loop did, so the results are the same bit for bit.

Only for a row that is a float32/float64 matrix (rank >= 2) and an invariant
matrix of its dtype: a vector operand would change the BLAS call (GEMV for
GEMM).

The reverse sweep's counterpart (:func:`_popped_outer_products`): in ``for k in
reversed(range(n))``, the cotangent ``ad.matmul_left(g, a, w)`` of a readout
``a @ w`` with one output column (``w`` of shape (p, 1), invariant) takes ``g``
popped from the rows of a stacked cotangent ``S`` (``L = ad.tree_unstack(S,
...)`` before the loop, ``g = ad.pop_like(L, ...)`` once a trip: row ``k``). It
is row ``k`` of one product ``jnp.dot(reshape(S, (n * m, 1)), w.T)`` made before the loop
(R3's readout: 50 outer products of 32 x 1 by 1 x 64, 1.3 us each). With one
column every element is one rounded product, so the bits are the same."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import gast
import numpy as np

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .avals import Aval
from .common import _is_assign, _new_assign

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def row_products(fdef: Any, namer: Any) -> bool:
    """Rewrite the loops' products of a row by an invariant matrix (see the
    module); returns whether anything changed (run :func:`infer_avals` then, and
    the loop-invariant code motion)."""
    if namer is None:
        return False
    changed = False
    local = set(N.assigned_names(fdef.body))
    if "range" in local or "reversed" in local:
        return False
    for s in N.walk_stmts(fdef.body):
        if isinstance(s, gast.For):
            changed |= _in_loop(s, namer)
    return _popped_outer_products(fdef, namer) or changed


def _trips(loop: Any) -> Optional[int]:
    """``n`` of ``for k in range(n)``, ``n`` an int constant, else None."""
    it = loop.iter
    if not (
        isinstance(loop.target, gast.Name)
        and isinstance(it, gast.Call)
        and isinstance(it.func, gast.Name)
        and it.func.id == "range"
        and len(it.args) == 1
        and not it.keywords
        and isinstance(it.args[0], gast.Constant)
        and type(it.args[0].value) is int
    ):
        return None
    return it.args[0].value


def _in_loop(loop: Any, namer: Any) -> bool:
    n = _trips(loop)
    if n is None or n < 2:
        return False
    k = loop.target.id
    variant = set(N.assigned_names(loop.body)) | {k}
    assigned: Dict[str, int] = {}
    for name in N.assigned_names(loop.body):
        assigned[name] = assigned.get(name, 0) + 1
    rows: Dict[str, str] = {}  # row name -> the invariant stack it is a row of
    out: List[Any] = []
    changed = False
    for s in loop.body:
        row = _row_of(s, k, n, variant)
        if row is not None and assigned[s.targets[0].id] == 1:
            rows[s.targets[0].id] = row
        found = _row_product(s, rows, variant)
        if found is None:
            out.append(s)
            continue
        xs, w = found
        stacked = namer.fresh(f"{xs}_{w}")
        prim = registry.REGISTRY["jnp.matmul"]
        value = N.call("jnp.matmul", [N.name(xs), N.name(w)])
        out.append(
            _new_assign(
                stacked, value, Op("prim", prim=prim, bound={"a": N.name(xs), "b": N.name(w)}), s
            )
        )
        slice_prim = registry.REGISTRY["ad.tree_slice"]
        s.value = N.call("ad.tree_slice", [N.name(stacked), N.name(k)])
        s.sj_op = Op("prim", prim=slice_prim, bound={"xs": N.name(stacked), "i": N.name(k)})
        out.append(s)
        changed = True
    loop.body = out
    return changed


def _row_of(s: Any, k: str, n: int, variant: set) -> Optional[str]:
    """``xs`` of ``x = ad.tree_slice(xs, k)``, ``xs`` an invariant float array of
    ``n`` rows of rank >= 2 (else None)."""
    if not _is_assign(s):
        return None
    op = s.sj_op
    if op.kind != "prim" or op.prim.public != "ad.tree_slice":
        return None
    xs, i = op.bound.get("xs"), op.bound.get("i")
    if not (isinstance(xs, gast.Name) and isinstance(i, gast.Name)) or i.id != k:
        return None
    if xs.id in variant:
        return None
    aval = (getattr(s, "sj_avals_in", None) or {}).get(xs.id)
    if not isinstance(aval, Aval) or aval.weak_type or aval.dtype not in _FLOATS:
        return None
    if len(aval.shape) < 3 or aval.shape[0] != n:
        return None
    return xs.id


def _row_product(s: Any, rows: Dict[str, str], variant: set) -> Optional[tuple]:
    """``(xs, w)`` of ``y = x @ w``, ``x`` a row of ``xs`` (see :func:`_row_of`)
    and ``w`` an invariant matrix of its dtype (else None)."""
    if not _is_assign(s) or s.targets[0].id in rows:
        return None
    op = s.sj_op
    if op.kind != "prim" or op.prim.public != "jnp.matmul" or set(op.bound) != {"a", "b"}:
        return None
    a, b = op.bound["a"], op.bound["b"]
    if not (isinstance(a, gast.Name) and isinstance(b, gast.Name)) or a.id not in rows:
        return None
    if b.id in variant:
        return None
    ins = getattr(s, "sj_avals_in", None) or {}
    aa, ab = ins.get(a.id), ins.get(b.id)
    if not (isinstance(aa, Aval) and isinstance(ab, Aval)) or ab.weak_type:
        return None
    if len(ab.shape) != 2 or ab.dtype != aa.dtype:
        return None
    return rows[a.id], b.id


def _reversed_trips(loop: Any) -> Optional[int]:
    """``n`` of ``for k in reversed(range(n))``, ``n`` an int constant, else None."""
    it = loop.iter
    if not (
        isinstance(loop.target, gast.Name)
        and isinstance(it, gast.Call)
        and isinstance(it.func, gast.Name)
        and it.func.id == "reversed"
        and len(it.args) == 1
        and not it.keywords
    ):
        return None
    inner = gast.For(target=loop.target, iter=it.args[0], body=[], orelse=[], type_comment=None)
    return _trips(inner)


def _popped_outer_products(fdef: Any, namer: Any) -> bool:
    """Rewrite the reverse loops' outer products of popped rows (see the module)."""
    loads: Dict[str, int] = {}
    for n in N.walk(fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            loads[n.id] = loads.get(n.id, 0) + 1
    stacks: Dict[str, tuple] = {}  # L -> (S, S's aval) of L = ad.tree_unstack(S, _)
    changed = False
    for s in fdef.body:
        if (
            _is_assign(s)
            and s.sj_op.kind == "prim"
            and s.sj_op.prim.public == "ad.tree_unstack"
            and isinstance(s.sj_op.bound.get("ct"), gast.Name)
        ):
            src = s.sj_op.bound["ct"].id
            aval = (getattr(s, "sj_avals_in", None) or {}).get(src)
            if isinstance(aval, Aval) and not aval.weak_type and aval.dtype in _FLOATS:
                stacks[s.targets[0].id] = (src, aval)
        elif isinstance(s, gast.For):
            n = _reversed_trips(s)
            if n is not None:
                changed |= _in_reverse_loop(s, n, stacks, loads, namer)
    return changed


def _in_reverse_loop(loop: Any, n: int, stacks: dict, loads: dict, namer: Any) -> bool:
    k = loop.target.id
    counts: Dict[str, int] = {}
    for name in N.assigned_names(loop.body):
        counts[name] = counts.get(name, 0) + 1
    variant = set(counts) | {k}
    rows: Dict[str, tuple] = {}  # g -> (S, its aval) of g = ad.pop_like(L, _)
    out: List[Any] = []
    changed = False
    for s in loop.body:
        op = getattr(s, "sj_op", None)
        if (
            _is_assign(s)
            and op.kind == "pop"
            and op.target in stacks
            and loads.get(op.target) == 1  # (this pop is the list's one reader)
            and counts.get(s.targets[0].id) == 1
            and N.to_source(s.value.func).strip() == "ad.pop_like"
            and stacks[op.target][0] not in variant
            and stacks[op.target][1].shape[:1] == (n,)
        ):
            rows[s.targets[0].id] = stacks[op.target]
        found = _outer_of_row(s, rows, variant)
        if found is None:
            out.append(s)
            continue
        (src, aval), w, p = found
        m = aval.shape[1]
        names = [namer.fresh(f"{src}_{w}") for _ in range(4)]
        flat, wt, prod, stacked = names
        steps = [
            (flat, "jnp.reshape", {"a": N.name(src), "shape": N.const((n * m, 1))}),
            (wt, "jnp.transpose", {"a": N.name(w)}),
            (prod, "jnp.dot", {"a": N.name(flat), "b": N.name(wt)}),  # (np.matmul: 25x slower)
            (stacked, "jnp.reshape", {"a": N.name(prod), "shape": N.const((n, m, p))}),
        ]
        for target, prim_name, bound in steps:
            args = [N.clone(v) for v in bound.values()]
            value = N.call(prim_name, args)
            op_new = Op("prim", prim=registry.REGISTRY[prim_name], bound=bound)
            out.append(_new_assign(target, value, op_new, s))
        s.value = N.call("ad.tree_slice", [N.name(stacked), N.name(k)])
        s.sj_op = Op(
            "prim",
            prim=registry.REGISTRY["ad.tree_slice"],
            bound={"xs": N.name(stacked), "i": N.name(k)},
        )
        out.append(s)
        changed = True
    loop.body = out
    return changed


def _outer_of_row(s: Any, rows: dict, variant: set) -> Optional[tuple]:
    """``((S, aval), w, p)`` of ``t = ad.matmul_left(g, a, w)``, ``g`` a popped
    row of ``S`` (shape (n, m, 1)), ``w`` an invariant (p, 1) matrix and ``a`` of
    shape (m, p), all of one float dtype (else None)."""
    if not _is_assign(s):
        return None
    op = s.sj_op
    if op.kind != "prim" or op.prim.public != "ad.matmul_left" or set(op.bound) != {"g", "a", "b"}:
        return None
    g, a, w = op.bound["g"], op.bound["a"], op.bound["b"]
    if not all(isinstance(x, gast.Name) for x in (g, a, w)) or g.id not in rows:
        return None
    if w.id in variant:
        return None
    src, aval = rows[g.id]
    ins = getattr(s, "sj_avals_in", None) or {}
    ag, aa, aw = ins.get(g.id), ins.get(a.id), ins.get(w.id)
    if not all(isinstance(x, Aval) and not x.weak_type for x in (ag, aa, aw)):
        return None
    if not (ag.dtype == aa.dtype == aw.dtype == aval.dtype):
        return None
    if len(aval.shape) != 3 or aval.shape[2] != 1 or ag.shape != aval.shape[1:]:
        return None
    if len(aw.shape) != 2 or aw.shape[1] != 1 or aa.shape != (aval.shape[1], aw.shape[0]):
        return None
    return (src, aval), w.id, aw.shape[0]
