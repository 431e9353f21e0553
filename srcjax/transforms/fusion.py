"""Fusion: maximal elementwise regions of the normalized IR, for kernel generation.

A *region* is a run of consecutive assignments in one block, each one
elementwise primitive whose result has the region's shape, with
operands that are earlier results of the region, scalars (Python constants,
0-d and size-1 arrays) or arrays that broadcast to the region's shape (lower
rank, or a leading axis of the region's length). A region may end in a full
reduction (``sum``, ``mean``, ``max``, ``min`` with ``axis=None``) of one of its
values or of an input; a lone reduction over a large array is a region too.

For each region the analysis records: its statements, its shape and chunking
mode (``flat``: every array operand has the region's shape, so operands are
read as flat 1-D arrays; ``rows``: some operand broadcasts, so chunks are
slices along axis 0), its external inputs, which of its values are read after
it (*outputs*, materialized as full arrays; everything else lives in per-chunk
scratch), and whether a donated argument may hold an output.

Regions need abstract values (run :func:`srcjax.transforms.optimize.infer_avals`
first): a statement whose shape or dtype is unknown ends a region. A region's
:attr:`Region.plan` holds *primitives* (one :class:`Step` per statement), never
backend objects: which primitives a backend can compute inside a region is the
backend's ``can_fuse`` predicate (see :mod:`srcjax.backends.base`), passed to
:func:`find_regions`; the backend then lowers each region to its own code.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, NamedTuple, Optional, Tuple

import gast
import numpy as np

from ..primitives import registry
from .optimize.avals import Aval
from .optimize.common import _is_assign, _is_scalar_const, read_counts

__all__ = ["Region", "Step", "find_regions", "ufunc_of", "read_counts"]

#: primitive -> the NumPy ufunc computing it (built once, from the registry's aliases)
_UFUNCS: Optional[Dict[Any, np.ufunc]] = None


def ufunc_of(prim: Any) -> Optional[np.ufunc]:
    """The NumPy ufunc computing ``prim`` (from the registry's aliases), or None."""
    global _UFUNCS
    if _UFUNCS is None:
        table: Dict[Any, np.ufunc] = {}
        for obj in registry._ALIAS_KEEP:
            if isinstance(obj, np.ufunc):
                p = registry._ALIASES.get(id(obj))
                if p is not None and p.kind == "elementwise" and obj.nout == 1:
                    table.setdefault(p, obj)
        _UFUNCS = table
    return _UFUNCS.get(prim)


class Step(NamedTuple):
    """One statement of a region: ``target = prim(*operands)``.

    ``operands`` are, in the primitive's positional order, ``("val", name)`` (a
    value computed earlier in the region), ``("in", name)`` (an input of the
    region, see :attr:`Region.inputs`) or ``("const", node)`` (a scalar
    constant's AST node). ``aval`` is the result's abstract value (its shape is
    the region's, its dtype the primitive's result dtype)."""

    prim: Any
    operands: List[tuple]
    target: str
    aval: Aval


#: ``can_fuse(prim, operands, operand_values, result) -> bool``: whether a backend
#: computes ``prim`` inside a region; ``operand_values`` are scalar stand-ins of
#: the operands' dtypes (``Aval.proxy()``, or the constant), ``result`` the Aval
CanFuse = Callable[[Any, List[Any], List[Any], Aval], bool]


def jax_dtype_matches(prim: Any, operands: List[Any], values: List[Any], res: Aval) -> bool:
    """The backend-neutral test: ``prim`` applied to the operands' one-element
    stand-ins gives one one-element array of the result's rank and dtype (the
    default ``can_fuse`` of :func:`find_regions`). That refuses the
    non-elementwise forms of elementwise primitives (``jnp.where(c)`` returns a
    tuple of index arrays)."""
    try:
        with np.errstate(all="ignore"):
            out = prim.impl(*values)
    except Exception:  # noqa: BLE001
        return False
    if not isinstance(out, (np.ndarray, np.generic)) or out.size != 1:
        return False
    if out.ndim != len(res.shape):
        return False
    return out.dtype == res.dtype


@dataclass
class Region:
    stmts: List[Any]
    shape: Tuple[int, ...]
    mode: str = "flat"  # "flat" or "rows"
    inputs: Dict[str, Aval] = field(default_factory=dict)  # external array/scalar operands
    outputs: List[str] = field(default_factory=list)  # values read after the region
    reduction: Any = None  # the terminating reduction statement, if any
    # ``m = mean(x)`` computed by the region itself (see _merge_centered), or None
    center: Any = None
    reduce_kind: Optional[str] = None
    reduce_operand: Optional[str] = None
    # the reduction's axes (sorted, non-negative) when it reduces over some axes
    # only (backends that fuse such reductions: ``find_regions(axis_reductions=True)``)
    reduce_axis: Optional[Tuple[int, ...]] = None
    reduce_keepdims: bool = False  # (keepdims=True: with axis reductions only)
    donate: Dict[str, str] = field(default_factory=dict)  # output -> donated input
    # one Step per statement: primitive, operands, target, result aval
    plan: List[Step] = field(default_factory=list)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    def sliced(self, name: str) -> bool:
        """Whether input ``name`` is read chunk by chunk (else used whole)."""
        a = self.inputs[name]
        if a.weak or a.size == 1 and a.shape != self.shape:
            return False
        if self.mode == "flat":
            return a.shape == self.shape
        return len(a.shape) == len(self.shape) and a.shape[0] == self.shape[0] != 1


def _operands(s: Any) -> Optional[List[Any]]:
    """Positional operands of an elementwise statement, in ufunc order."""
    op = s.sj_op
    params = [
        p.name
        for p in op.prim.signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
    ]
    if set(op.bound) - set(params):
        return None
    out = []
    for p in params:
        if p not in op.bound:
            break
        out.append(op.bound[p])
    if len(out) != len(op.bound):
        return None
    return out


def _fusable(s: Any, min_size: int, can_fuse: CanFuse) -> Optional[tuple]:
    """(primitive, operands, aval) if ``s`` can join a region."""
    if not _is_assign(s) or s.sj_op.kind != "prim" or s.sj_op.prim.kind != "elementwise":
        return None
    prim = s.sj_op.prim
    res = getattr(s, "sj_aval", None)
    if not isinstance(res, Aval) or res.weak or res.size < min_size:
        return None
    ops = _operands(s)
    if ops is None:
        return None
    avals = getattr(s, "sj_avals_in", {})
    proxies = []
    for o in ops:
        if isinstance(o, gast.Name):
            a = avals.get(o.id)
            if not isinstance(a, Aval):
                return None
            try:
                np.broadcast_shapes(a.shape, res.shape)
            except ValueError:
                return None
            if np.broadcast_shapes(a.shape, res.shape) != res.shape:
                return None
            proxies.append(a.proxy())
        elif _is_scalar_const(o):
            proxies.append(o.value)
        else:
            return None
    if not can_fuse(prim, ops, proxies, res):
        return None
    return prim, ops, res


def _reduction(s: Any, min_size: int, axes_ok: bool = False) -> Optional[tuple]:
    """(kind, operand name, operand aval, result aval, axes) for a full
    reduction (axes None), or with ``axes_ok`` one over constant axes (an int or
    a tuple of ints: axes the sorted non-negative tuple; all axes: None)."""
    if not _is_assign(s) or s.sj_op.kind != "prim":
        return None
    kind = s.sj_op.prim.fused_reduction  # (a reduction that may end a region)
    if kind is None:
        return None
    bound = s.sj_op.bound
    x = bound.get("x", bound.get("a"))
    rest = set(bound) - {"x", "a"}
    axis = bound.get("axis")
    keep = bound.get("keepdims")
    keepdims = False
    if keep is not None and axes_ok:
        if not (isinstance(keep, gast.Constant) and isinstance(keep.value, bool)):
            return None
        keepdims = keep.value
        rest = rest - {"keepdims"}
    if rest - {"axis"} or not isinstance(x, gast.Name):
        return None
    axes = None
    if axis is not None and not (isinstance(axis, gast.Constant) and axis.value is None):
        axes = _constant_axes(axis) if axes_ok else None
        if axes is None:
            return None
    a = getattr(s, "sj_avals_in", {}).get(x.id)
    res = getattr(s, "sj_aval", None)
    if not isinstance(a, Aval) or not isinstance(res, Aval) or a.weak or a.size < min_size:
        return None
    if axes is not None:
        nd = len(a.shape)
        if any(not -nd <= k < nd for k in axes):
            return None  # (the primitive's own error)
        axes = tuple(sorted({k % nd for k in axes}))
        if len(axes) == nd:
            axes = None  # every axis: a full reduction
        elif math.prod(a.shape[k] for k in axes) == 0:
            return None  # (an empty reduction: the primitive's identity or error)
    if np.float16 in (a.dtype, res.dtype):
        return None  # JAX accumulates float16 in float32: the primitive does that
    if kind == "mean" and (a.dtype.kind != "f" or res.dtype != a.dtype):
        return None
    if kind in ("max", "min") and res.dtype != a.dtype:
        return None
    return kind, x.id, a, res, axes, keepdims


def _constant_axes(axis: Any) -> Optional[Tuple[int, ...]]:
    """The ints of a constant ``axis`` (an int, or a tuple of ints), else None."""
    if isinstance(axis, gast.Constant):
        v = axis.value
        if isinstance(v, int) and not isinstance(v, bool):
            return (v,)
        if isinstance(v, tuple) and v and all(type(k) is int for k in v):
            return tuple(v)
        return None
    if isinstance(axis, gast.Tuple) and axis.elts:
        out = [_constant_axes(e) for e in axis.elts]
        if all(o is not None and len(o) == 1 for o in out):
            return tuple(o[0] for o in out)  # type: ignore[index]
    return None


#: primitives (by their NumPy ufunc's name) cheap enough that a chain of them is
#: memory-bound
CHEAP = {
    "add", "subtract", "multiply", "negative", "positive", "absolute", "maximum", "minimum",
    "less", "less_equal", "greater", "greater_equal", "equal", "not_equal", "logical_and",
    "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "invert", "left_shift", "right_shift", "copysign", "sign", "square", "fmax", "fmin",
}  # fmt: skip


def find_regions(
    stmts: List[Any],
    reads: Dict[str, int],
    min_size: int,
    donatable: Tuple[str, ...] = (),
    top_level: bool = True,
    min_size_cheap: Optional[int] = None,
    can_fuse: Optional[CanFuse] = None,
    axis_reductions: bool = False,
) -> List[Tuple[int, int, Region]]:
    """Regions among the statements of one block: ``(start, end, region)`` with
    ``stmts[start:end]`` the statements the region replaces. ``reads`` counts
    every read of each name in the whole function (see :func:`read_counts`).
    Regions smaller than ``min_size`` elements are not formed, nor regions of
    only :data:`CHEAP` operations (or a lone reduction) smaller than
    ``min_size_cheap`` (default: ``min_size``). ``can_fuse`` is the backend's
    predicate (default :func:`jax_dtype_matches`)."""
    can_fuse = can_fuse or jax_dtype_matches
    found = _find_regions(stmts, reads, min_size, donatable, top_level, can_fuse, axis_reductions)
    found = _merge_centered(found)
    if min_size_cheap is None:
        return found
    return [r for r in found if r[2].size >= min_size_cheap or not all(map(is_cheap, r[2].plan))]


def is_cheap(step: Step) -> bool:
    """Whether a step's primitive is one of :data:`CHEAP`."""
    uf = ufunc_of(step.prim)
    return uf is not None and uf.__name__ in CHEAP


def _find_regions(stmts, reads, min_size, donatable, top_level, can_fuse, axes_ok=False):
    out = []
    i = 0
    while i < len(stmts):
        f = _fusable(stmts[i], min_size, can_fuse)
        if f is None:
            r = _reduction(stmts[i], min_size, axes_ok)
            if r is not None:
                kind, x, a, res, axes, keep = r
                reg = Region([], a.shape, inputs={x: a})
                reg.reduction, reg.reduce_kind, reg.reduce_operand = stmts[i], kind, x
                reg.reduce_axis, reg.reduce_keepdims = axes, keep
                _finish(reg, reads, donatable, top_level)
                out.append((i, i + 1, reg))
            i += 1
            continue
        shape = f[2].shape
        members = [(stmts[i], f)]
        j = i + 1
        while j < len(stmts):
            g = _fusable(stmts[j], min_size, can_fuse)
            if g is None or g[2].shape != shape:
                break
            members.append((stmts[j], g))
            j += 1
        reg = Region([m[0] for m in members], shape)
        defined: set = set()
        for s, (prim, ops, res) in members:
            plan_ops = []
            for o in ops:
                if isinstance(o, gast.Name):
                    if o.id in defined:
                        plan_ops.append(("val", o.id))
                    else:
                        reg.inputs.setdefault(o.id, s.sj_avals_in[o.id])
                        plan_ops.append(("in", o.id))
                else:
                    plan_ops.append(("const", o))
            t = s.targets[0].id
            reg.plan.append(Step(prim, plan_ops, t, res))
            defined.add(t)
        if j < len(stmts):
            r = _reduction(stmts[j], min_size, axes_ok)
            if r is not None and r[2].shape == shape:
                kind, x, a, res, axes, keep = r
                if x not in defined:
                    reg.inputs.setdefault(x, a)
                reg.reduction, reg.reduce_kind, reg.reduce_operand = stmts[j], kind, x
                reg.reduce_axis, reg.reduce_keepdims = axes, keep
                j += 1
        _finish(reg, reads, donatable, top_level)
        out.append((i, j, reg))
        i = j
    return out


def _centered_square(reg: Region) -> Optional[Tuple[str, str]]:
    """``(x, m)`` when ``reg`` is exactly ``d = x - m; q = d*d; sum(q)`` (or
    ``m - x``, or ``square(d)``) with ``d`` and ``q`` read nowhere else."""
    if reg.reduce_kind != "sum" or reg.outputs or reg.mode != "flat" or len(reg.plan) != 2:
        return None
    if reg.reduce_axis is not None or reg.reduce_keepdims:
        return None
    (p1, ops1, d, _), (p2, ops2, q, _) = reg.plan
    uf1, uf2 = ufunc_of(p1), ufunc_of(p2)
    if uf1 is not np.subtract or reg.reduce_operand != q:
        return None
    if not (uf2 is np.square and ops2 == [("val", d)]) and not (
        uf2 is np.multiply and ops2 == [("val", d), ("val", d)]
    ):
        return None
    if [k for k, _ in ops1] != ["in", "in"]:
        return None
    return ops1[0][1], ops1[1][1]


def _merge_centered(found: List[Tuple[int, int, Region]]) -> List[Tuple[int, int, Region]]:
    """Fold ``m = mean(x)`` into a directly following ``sum((x - m)**2)`` region:
    the backend then reads ``x`` once, computing per-chunk means and squared
    deviations and combining them exactly (see
    :func:`srcjax.backends.runtime.combine_centered`). Without this the mean is
    a pass of its own over ``x``, and on arrays larger than the cache ``x`` is
    read from memory twice."""
    out: List[Tuple[int, int, Region]] = []
    for start, end, reg in found:
        if out and reg.reduction is not None:
            s0, e0, prev = out[-1]
            pair = _centered_square(reg)
            if (
                pair is not None
                and e0 == start
                and not prev.plan
                and prev.reduce_kind == "mean"
                and prev.reduce_axis is None
                and not prev.reduce_keepdims
                and prev.center is None
            ):
                m = prev.reduction.targets[0].id
                x = prev.reduce_operand
                a = prev.inputs[x]
                if set(pair) == {x, m} and a.shape == reg.shape and reg.inputs.get(x) == a:
                    reg.center = prev.reduction
                    del reg.inputs[m]
                    out[-1] = (s0, end, reg)
                    continue
        out.append((start, end, reg))
    return out


def _finish(reg: Region, reads: Dict[str, int], donatable, top_level: bool) -> None:
    """Chunking mode, outputs and donation of a region."""
    S = reg.shape
    flat = all(a.weak or a.size == 1 or a.shape == S for a in reg.inputs.values())
    reg.mode = "flat" if flat or len(S) < 2 else "rows"
    # reads inside the region
    inside: Dict[str, int] = {}
    for s in reg.stmts + ([reg.reduction] if reg.reduction is not None else []):
        for n in gast.walk(s.value):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                inside[n.id] = inside.get(n.id, 0) + 1
    final = {}
    for k, (_, _, t, _) in enumerate(reg.plan):
        final[t] = k
    reg.outputs = [t for t in final if reads.get(t, 0) - inside.get(t, 0) > 0]
    # donation: an output may overwrite a donated input read only by this region,
    # when nothing in the region reads the input after the output is written
    if not top_level:
        return
    for t in reg.outputs:
        k = final[t]
        res = reg.plan[k][3]
        for p in donatable:
            if p in reg.donate.values() or p not in reg.inputs:
                continue
            a = reg.inputs[p]
            if a != res or not reg.sliced(p):
                continue
            if reads.get(p, 0) != inside.get(p, 0):
                continue
            later = any(("in", p) in ops for (_, ops, _, _) in reg.plan[k + 1 :]) or (
                reg.reduction is not None and reg.reduce_operand == p
            )
            if later:
                continue
            reg.donate[t] = p
            break


def describe(reg: Region) -> str:
    """One line for the generated code's comment."""
    n = len(reg.plan)
    what = f"{n} elementwise op{'s' if n != 1 else ''}" if n else "a reduction"
    if reg.center is not None:
        what = "mean and sum of squared deviations, in one pass"
    elif reg.reduce_kind and n:
        what += f" and a {reg.reduce_kind}"
    if reg.reduce_axis is not None:
        what += f" (axis {reg.reduce_axis[0] if len(reg.reduce_axis) == 1 else reg.reduce_axis})"
    dt = reg.plan[-1][3].dtype.name if reg.plan else next(iter(reg.inputs.values())).dtype.name
    shape = ",".join(map(str, reg.shape))
    return f"fused region: {what} over {dt}[{shape}], {reg.mode} chunks"
