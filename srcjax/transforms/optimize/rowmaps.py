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
GEMM)."""

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
    for s in N.walk_stmts(fdef.body):
        if isinstance(s, gast.For) and "range" not in local:
            changed |= _in_loop(s, namer)
    return changed


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
