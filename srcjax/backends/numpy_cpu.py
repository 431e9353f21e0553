"""CPU backend: fused regions become readable, chunked, multi-threaded NumPy.

:data:`BACKEND` implements the protocol of :mod:`srcjax.backends.base` for the
host CPU (backend name ``"cpu"``, the key of the primitives' NumPy
implementations); arrays are NumPy arrays and the runtime, bound as ``_rt`` in
generated code, is :mod:`srcjax.backends.runtime`.

For each region found by :mod:`srcjax.transforms.fusion` the backend emits,
in place of the region's statements::

    # fused region: 9 elementwise ops over float32[10000000], flat chunks
    y = _rt.empty((10000000,), np.float32)        # output (pooled buffer)
    x_flat = x.reshape(-1)
    y_flat = y.reshape(-1)
    def region(lo, hi, t0, t1):                   # one chunk; t0, t1: scratch
        x_c = x_flat[lo:hi]
        np.multiply(x_c, x_c, out=t0)             # x_sq = x * x
        ...
        np.multiply(t0, t1, out=y_flat[lo:hi])    # y = mul * add1
    _rt.run_chunked(region, n=10000000, chunk=131072, scratch=(np.float32, np.float32))

so a chain of n operations reads its inputs once and writes its outputs once,
with scratch buffers the size of a chunk (reused in place: a value's buffer is
recycled as soon as its last reader has run). A step whose primitive is a NumPy
ufunc writes into its buffer (``out=``); any other elementwise primitive is
called on the chunk and its result stored into the buffer
(``t0[...] = nn.relu(x_c)``). Regions ending in a reduction
return a partial per chunk, combined by :func:`srcjax.backends.runtime.run_chunked`.

Regions below :data:`srcjax.backends.runtime.CHUNK_MIN_ELEMENTS` elements
(``..._CHEAP`` for chains of cheap operations) are not formed at all: their statements stay plain NumPy (small arrays: the thread
hand-off would cost more than it saves). Non-contiguous inputs are still
correct (``reshape(-1)`` copies them), only slower.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import gast
import numpy as np

from ..codegen.emit import register_bound_name
from ..frontend import nodes as N
from ..transforms import fusion
from . import runtime
from .base import Backend

#: ufuncs whose float results differ from JAX's (the primitives' impls follow
#: JAX): the sign of a zero (``signed_zero`` in primitives/elementwise/_base.py),
#: log10 (JAX: ``log(x) * (1 / log(10))``)
_FLOAT_DIFFERS = frozenset((np.sign, np.floor_divide, np.mod, np.log10))

__all__ = ["BACKEND", "NumpyCpu", "emit_region"]


def _dtype_expr(dt: np.dtype) -> str:
    return f"np.{np.dtype(dt).name}"


def _chunk_rows(reg: fusion.Region, itemsize: int) -> Tuple[int, tuple]:
    """(rows per chunk, shape of one row) for the region's chunking mode."""
    elems = max(1024, runtime.CHUNK_BYTES // max(1, itemsize))
    if not reg.plan:
        elems *= 4  # a lone reduction only streams its input: fewer, larger chunks
    elif reg.center is not None:
        # two float32 sums per chunk: halving the chunk count measured 29.5 -> 26 ms
        # on sum((x - mean(x))**2), 1e8 float32 (tools/bench.py W7)
        elems *= 2
    if reg.mode == "flat":
        return elems, ()
    row = tuple(reg.shape[1:])
    row_size = 1
    for d in row:
        row_size *= d
    return max(1, elems // max(1, row_size)), row


def emit_region(reg: fusion.Region, namer: Any, fname: str) -> List[Any]:
    """Statements computing ``reg`` (see the module docstring)."""
    lines: List[str] = []
    inner: List[Tuple[str, Any]] = []  # (text, origin statement) inside the region
    flat = reg.mode == "flat"
    shape_txt = repr(tuple(reg.shape))
    n_rows = reg.size if flat else reg.shape[0]
    out_names: Dict[str, str] = {}  # value -> full array name
    renames: List[Tuple[str, str]] = []
    for t in reg.outputs:
        k = max(i for i, p in enumerate(reg.plan) if p[2] == t)
        dt = reg.plan[k][3].dtype
        full = t if t not in reg.inputs else namer.fresh(f"{t}_new")
        if full != t:
            renames.append((t, full))
        out_names[t] = full
        if t in reg.donate:
            lines.append(
                f"{full} = _rt.donated({reg.donate[t]}, {shape_txt}, {_dtype_expr(dt)})"
                f"  # donated buffer"
            )
        else:
            lines.append(f"{full} = _rt.empty({shape_txt}, {_dtype_expr(dt)})")
    # views read chunk by chunk
    view: Dict[str, str] = {}
    for name in list(reg.inputs) + list(out_names.values()):
        if name in reg.inputs and not reg.sliced(name):
            continue
        if flat:
            v = namer.fresh(f"{name}_flat")
            lines.append(f"{v} = {name}.reshape(-1)")
            view[name] = v
        else:
            view[name] = name
    whole: Dict[str, str] = {}
    for name, a in reg.inputs.items():
        if not reg.sliced(name):
            if flat and not a.weak and a.size == 1 and a.shape:
                v = namer.fresh(f"{name}_0d")
                lines.append(f"{v} = {name}.reshape(())")
                whole[name] = v
            else:
                whole[name] = name
    lo, hi = namer.fresh("lo"), namer.fresh("hi")
    chunk_names: Dict[str, str] = {}
    body_pre: List[str] = []

    def chunk_of(name: str) -> str:
        c = chunk_names.get(name)
        if c is None:
            c = namer.fresh(f"{name}_c")
            chunk_names[name] = c
            body_pre.append(f"{c} = {view[name]}[{lo}:{hi}]")
        return c

    center_vals: Tuple[str, str] = ("", "")
    if reg.center is not None:
        # the chunk's own mean stands in for the mean (corrected when combined)
        m = reg.center.targets[0].id
        x = reg.center.sj_op.bound.get("x", reg.center.sj_op.bound.get("a")).id
        s_c, m_c = namer.fresh(f"{m}_sum_c"), namer.fresh(f"{m}_c")
        dt = _dtype_expr(reg.inputs[x].dtype)
        inner.append((f"{s_c} = np.sum({chunk_of(x)})", reg.center, "partial sum"))
        inner.append((f"{m_c} = {s_c} / {dt}({hi} - {lo})", reg.center, "chunk mean"))
        whole[m] = m_c
        center_vals = (s_c, m_c)
    # scratch allocation: linear scan with reuse after the last read
    last_read: Dict[str, int] = {}
    for k, (_, ops, _, _) in enumerate(reg.plan):
        for kind, v in ops:
            if kind == "val":
                last_read[v] = k
    final_def = {p[2]: k for k, p in enumerate(reg.plan)}
    red_val = reg.reduce_operand if reg.reduction is not None else None
    if red_val is not None and red_val in final_def:
        last_read[red_val] = len(reg.plan)
    slots: List[np.dtype] = []
    free: List[int] = []
    where: Dict[str, str] = {}  # value -> expression of its chunk buffer
    slot_of: Dict[str, Any] = {}  # value -> scratch slot (None: an output view)
    slot_names: List[str] = []
    for k, (prim, ops, t, res) in enumerate(reg.plan):
        args = []
        for kind, v in ops:
            if kind == "val":
                args.append(where[v])
            elif kind == "in":
                args.append(chunk_of(v) if v in view else whole[v])
            else:
                args.append(N.to_source(v))
        # operands whose last read is this statement free their slot first
        for kind, v in ops:
            if kind == "val" and last_read.get(v) == k and slot_of.get(v) is not None:
                if slot_of[v] not in free:
                    free.append(slot_of[v])
        slot_of[t] = None
        if t in out_names and final_def[t] == k:
            dest = chunk_of(out_names[t])
        else:
            for slot in free:
                if slots[slot] == res.dtype:
                    free.remove(slot)
                    slot_of[t] = slot
                    break
            else:
                slots.append(res.dtype)
                slot_names.append(namer.fresh(f"t{len(slots) - 1}"))
                slot_of[t] = len(slots) - 1
            dest = slot_names[slot_of[t]]
        where[t] = dest
        src = N.to_source(reg.stmts[k])
        uf = fusion.ufunc_of(prim)
        if uf is not None:
            text = f"np.{uf.__name__}({', '.join(args)}, out={dest})"
        else:
            text = f"{dest}[...] = {prim.public}({', '.join(args)})"
        inner.append((text, reg.stmts[k], src))
        if t not in last_read and not (t in out_names and final_def[t] == k):
            # never read again: its slot is free at once
            if slot_of[t] is not None:
                free.append(slot_of[t])
    region_name = namer.fresh("region")
    call_kw = ""
    target = None
    if reg.reduction is not None:
        x = reg.reduce_operand
        operand = where[x] if x in where else (chunk_of(x) if x in view else whole[x])
        kind = reg.reduce_kind
        res = reg.reduction.sj_aval
        fn = {"sum": "np.sum", "mean": "np.sum", "max": "np.max", "min": "np.min"}[kind]
        extra = f", dtype={_dtype_expr(res.dtype)}" if kind == "sum" else ""
        value = f"{fn}({operand}{extra})"
        target = reg.reduction.targets[0].id
        call_kw = f", reduce={kind!r}, dtype={_dtype_expr(res.dtype)}"
        if reg.center is not None:
            value = f"{center_vals[0]}, {center_vals[1]}, {value}"
            target = f"{reg.center.targets[0].id}, {target}"
            call_kw = f", reduce='centered', dtype={_dtype_expr(res.dtype)}"
        inner.append((f"return {value}", reg.reduction, N.to_source(reg.reduction)))
        if kind == "mean":
            call_kw += f", count={reg.size}"
    itemsize = max(
        [np.dtype(d).itemsize for d in slots]
        + [a.dtype.itemsize for a in reg.inputs.values() if not a.weak]
        + [1]
    )
    rows, row = _chunk_rows(reg, itemsize)
    params = [lo, hi] + slot_names
    scratch = (
        "(" + ", ".join(_dtype_expr(d) for d in slots) + ("," if len(slots) == 1 else "") + ")"
    )
    call = (
        f"_rt.run_chunked({region_name}, n={n_rows}, chunk={rows}, scratch={scratch}"
        + (f", row={row!r}" if row else "")
        + call_kw
        + ")"
    )
    if target is not None:
        call = f"{target} = {call}"
    # build nodes
    stmts: List[Any] = []
    origin = reg.center or (reg.stmts[0] if reg.stmts else reg.reduction)
    comment = gast.Pass()
    comment.sj_comment = fusion.describe(reg)
    stmts.append(comment)
    for text in lines:
        stmts.extend(_parse(text, origin, fname))
    body: List[Any] = []
    for text in body_pre:
        body.extend(_parse(text, None, fname))
    for text, s, src in inner:
        body.extend(_parse(text, s, fname, note=src))
    fdef = N.function_def(region_name, N.arguments(params), body)
    stmts.append(fdef)
    stmts.extend(_parse(call, origin, fname))
    for t, full in renames:
        stmts.extend(_parse(f"{t} = {full}", None, fname))
    return stmts


def _parse(text: str, origin: Any, fname: str, note: str = "") -> List[Any]:
    nodes = N.parse_stmts(text)
    for s in nodes:
        if origin is not None and getattr(origin, "sj_origin", None):
            s.sj_origin = origin.sj_origin
            s.sj_file = getattr(origin, "sj_file", None) or fname
            if note:
                s.sj_note = note
    return nodes


class NumpyCpu(Backend):
    """The host CPU: chunked, multi-threaded NumPy (see the module docstring)."""

    name = "cpu"
    platform = "cpu"

    def namespaces(self) -> Dict[str, Any]:
        ns: Dict[str, Any] = {"_rt": runtime}
        from . import numba_cpu

        if numba_cpu.loop_mode(_config().read("numba_loops")):
            from .numba_cpu import nbr

            ns["_nbr"] = nbr
        return ns

    def can_fuse(self, prim: Any, operands: List[Any], values: List[Any], res: Any) -> bool:
        uf = fusion.ufunc_of(prim)
        if uf is None:
            return fusion.jax_dtype_matches(prim, operands, values, res)
        if uf is np.power and res.dtype.kind in "iu":
            return False  # np.power refuses negative integer exponents; jnp.power follows JAX
        if uf is np.floor_divide and res.dtype.kind in "iu":
            return False  # NumPy's integer x // 0 is 0; jnp.floor_divide gives JAX's -1/-2
        if uf in _FLOAT_DIFFERS and res.dtype.kind == "f":
            return False  # np.sign(-0.0) is +0.0, np.log10(float32(1000)) 3.0000002
        if len(operands) != uf.nin:
            return False
        try:
            with np.errstate(all="ignore"):
                dt = np.asarray(uf(*values)).dtype
        except Exception:  # noqa: BLE001
            return False
        return dt == res.dtype  # the ufunc writes JAX's dtype into its out= buffer

    def min_region_size(self) -> Tuple[int, Optional[int]]:
        return runtime.CHUNK_MIN_ELEMENTS, runtime.CHUNK_MIN_ELEMENTS_CHEAP

    def lower_region(self, region: fusion.Region, namer: Any, filename: str) -> List[Any]:
        return emit_region(region, namer, filename)

    def prepare(self, fdef: Any, filename: str) -> None:
        """Before the shared region lowering: loops over scalars compiled with
        Numba when it is installed (:mod:`srcjax.backends.numba_cpu.loops`)."""
        from . import numba_cpu

        mode = numba_cpu.loop_mode(_config().read("numba_loops"))
        if mode:
            from .numba_cpu import maps

            if any(isinstance(s, (gast.For, gast.While)) for s in fdef.body):
                # (a function without loops does not import the loops' translator)
                from .numba_cpu import loops

                loops.lower_loops(fdef, filename, bool(_config().x64_enabled), mode == "auto")
            maps.lower_maps(fdef, filename, mode == "auto")


def lowering_facts(numba_loops: Any) -> tuple:
    """The CPU runtime's thresholds (region sizes, chunk bytes) and how loops use
    Numba: lowering decisions that are part of a jit disk-cache entry's key."""
    from . import numba_cpu

    # (Numba is imported only when its loops are compiled at generation: its import
    # costs latency; "auto" generates the same code for every Numba version)
    mode = numba_cpu.loop_mode(numba_loops)
    nb = numba_cpu.numba() if mode == "on" else None
    facts = (
        (k, v) for k, v in vars(runtime).items() if k.isupper() and type(v) in (int, float, bool)
    )
    return tuple(sorted(facts)) + (("numba", getattr(nb, "__version__", None) or mode),)


def _config() -> Any:
    import sys

    return sys.modules["srcjax.config"].config


#: the CPU backend (``srcjax.backends.get("cpu")``)
BACKEND = NumpyCpu()


# this backend's generated code binds the runtime as `_rt` (Backend.namespaces)
register_bound_name("_rt", runtime)
