"""Kernel specifications: a fused region -> the arguments of one CuPy kernel.

A region of elementwise steps becomes one ``cupy.ElementwiseKernel``::

    ElementwiseKernel(
        "float32 x, float32 b",              # in_params: the region's inputs
        "float32 y",                         # out_params: values read after it
        "float t = tanh(x);\\ny = (t * b);",   # operation: the C renderer's statements
        "sj_f_3f9a0c1e",                     # name: function + source hash
        preamble=c_render.prelude("cuda"),
    )

A region ending in a full reduction becomes one ``cupy.ReductionKernel`` whose
``map_expr`` calls a ``__device__`` function holding the region's statements
(``sj_map_<hash>(x, b)``), ``reduce_expr`` is JAX's combination (``a + b``;
``sj_max``/``sj_min`` propagate NaN) and ``post_map_expr`` writes the result
(``mean`` divides by the element count). When the region also has outputs
that are read later, an ElementwiseKernel computes them and the reduction
operand, and a ReductionKernel reduces it.

Nothing here depends on shapes: a kernel is keyed on its source (dtypes and
operations), and CuPy compiles it once per argument dtypes and number of
dimensions (after merging contiguous axes), so a new batch size reuses it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ...codegen import c_render

__all__ = ["KernelSpec", "elementwise_spec", "reduction_spec", "CUPY_TYPES"]


@dataclass(frozen=True)
class KernelSpec:
    """The constructor arguments of one CuPy kernel (``kind`` is
    ``"elementwise"`` or ``"reduction"``) and the region names it reads/writes."""

    kind: str
    name: str
    in_params: str
    out_params: str
    operation: str = ""  # elementwise
    map_expr: str = ""  # reduction
    reduce_expr: str = ""
    post_map_expr: str = ""
    identity: str = ""
    reduce_type: str = ""
    preamble: str = ""
    inputs: Tuple[str, ...] = ()
    outputs: Tuple[str, ...] = ()
    in_dtypes: Tuple[str, ...] = ()
    out_dtypes: Tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """The hash of everything the kernel's source depends on."""
        return _hash(repr(self))


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:8]


#: CuPy's parameter type names
CUPY_TYPES = {
    "bool": "bool", "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "float16": "float16", "float32": "float32", "float64": "float64",
    "complex64": "complex64", "complex128": "complex128",
}  # fmt: skip


def _params(names: Sequence[str], dtypes: Sequence[np.dtype], cnames: Dict[str, str]) -> str:
    return ", ".join(f"{CUPY_TYPES[np.dtype(d).name]} {cnames[n]}" for n, d in zip(names, dtypes))


def _safe(fname: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in fname)
    return out[:40] or "f"


def elementwise_spec(
    steps: Sequence[c_render.Step],
    inputs: Dict[str, np.dtype],
    outputs: Sequence[str],
    fname: str = "f",
    weak_inputs: Sequence[str] = (),
) -> KernelSpec:
    """One ElementwiseKernel computing ``steps`` (raises
    :class:`srcjax.codegen.c_render.NotRenderable`)."""
    r = c_render.render(steps, inputs, outputs, "cuda", weak_inputs)
    used = [n for n in inputs if _reads(r.body, r.in_names[n])]
    in_params = _params(used, [inputs[n] for n in used], r.in_names)
    out_params = _params(list(outputs), [r.outputs[o] for o in outputs], r.names)
    body = r.body
    name = f"sj_{_safe(fname)}_{_hash(in_params + '|' + out_params + '|' + body)}"
    return KernelSpec(
        "elementwise", name, in_params, out_params, operation=body,
        preamble=c_render.prelude("cuda"), inputs=tuple(used), outputs=tuple(outputs),
        in_dtypes=tuple(np.dtype(inputs[n]).name for n in used),
        out_dtypes=tuple(r.outputs[o].name for o in outputs),
    )  # fmt: skip


def _reads(body: str, cname: str) -> bool:
    import re  # noqa: PLC0415

    return re.search(rf"(?<![\w.]){re.escape(cname)}(?!\w)", body) is not None


_REDUCE = {"sum": "a + b", "mean": "a + b", "max": "sj_max(a, b)", "min": "sj_min(a, b)"}


def _identity(kind: str, dt: np.dtype) -> str:
    dt = np.dtype(dt)
    if kind in ("sum", "mean"):
        return "0"
    big = kind == "min"
    if dt.kind == "f":
        return "SJ_INF" if big else "(-SJ_INF)"
    if dt.kind == "b":
        return "true" if big else "false"
    info = np.iinfo(dt)
    v = info.max if big else info.min
    return c_render._literal(int(v), dt, "cuda")


def reduction_spec(
    steps: Sequence[c_render.Step],
    inputs: Dict[str, np.dtype],
    operand: str,
    kind: str,
    result: np.dtype,
    fname: str = "f",
    weak_inputs: Sequence[str] = (),
) -> KernelSpec:
    """One ReductionKernel reducing (``kind``: sum, mean, max, min) the value
    ``operand`` computed by ``steps`` from ``inputs`` over all elements, to
    dtype ``result`` (JAX's: the accumulator is ``result``'s type)."""
    result = np.dtype(result)
    if steps:
        r = c_render.render(steps, inputs, [operand], "cuda", weak_inputs)
        used = [n for n in inputs if _reads(r.body, r.in_names[n])]
        odt = r.outputs[operand]
        hsh = _hash(r.body + repr([(n, inputs[n]) for n in used]))
        fn = f"sj_map_{hsh}"
        args = ", ".join(r.in_names[n] for n in used)
        sig = ", ".join(f"const {c_render.c_type(inputs[n])} {r.in_names[n]}" for n in used)
        o = r.names[operand]
        lines = [
            f"{c_render.c_type(odt)} {ln}" if ln.startswith(f"{o} = ") else ln
            for ln in r.body.splitlines()
        ]
        body = "\n  ".join(lines)
        fdef = f"__device__ {c_render.c_type(odt)} {fn}({sig}) {{\n  {body}\n  return {o};\n}}\n"
        map_expr = f"{fn}({args})"
        names = r.in_names
    else:
        used = [operand]
        odt = np.dtype(inputs[operand])
        names = {operand: c_render._c_name(operand)}
        fdef = ""
        map_expr = names[operand]
    acc = c_render.c_type(result)
    if odt != result:
        map_expr = f"({acc})({map_expr})"
    in_params = _params(used, [inputs[n] for n in used], names)
    # (a mean divides by the elements reduced into each output: all of them for
    # a full reduction, as CuPy's own mean does for one over some axes)
    post = f"y = a / ({acc})(_in_ind.size() / _out_ind.size())" if kind == "mean" else "y = a"
    pre = c_render.prelude("cuda") + fdef
    name = f"sj_{_safe(fname)}_{kind}_{_hash(in_params + map_expr + kind + result.name + fdef)}"
    return KernelSpec(
        "reduction", name, in_params, f"{CUPY_TYPES[result.name]} y", map_expr=map_expr,
        reduce_expr=_REDUCE[kind], post_map_expr=post, identity=_identity(kind, result),
        reduce_type=acc, preamble=pre, inputs=tuple(used), outputs=("y",),
        in_dtypes=tuple(np.dtype(inputs[n]).name for n in used), out_dtypes=(result.name,),
    )  # fmt: skip


def source(spec: KernelSpec, ndim: int = 1) -> Optional[str]:
    """The full CUDA source CuPy compiles for ``spec`` (contiguous arguments
    of ``ndim`` dimensions after merging), or None without CuPy installed."""
    from . import offline as off  # noqa: PLC0415

    if off.cupy_or_none() is None:
        return None
    if spec.kind == "elementwise":
        return off.elementwise_source(
            spec.in_params, spec.out_params, spec.operation, spec.name,
            spec.in_dtypes, ndim, spec.preamble,
        )  # fmt: skip
    return off.reduction_source(
        spec.in_params, spec.out_params, spec.map_expr, spec.reduce_expr,
        spec.post_map_expr, spec.identity, spec.name, spec.reduce_type, spec.in_dtypes,
        ndim, 0, spec.preamble,
    )  # fmt: skip


def build(cp: object, spec: KernelSpec) -> object:
    """The CuPy kernel object for ``spec`` (``cp``: cupy or its test double)."""
    if spec.kind == "elementwise":
        return cp.ElementwiseKernel(  # type: ignore[attr-defined]
            spec.in_params, spec.out_params, spec.operation, spec.name, preamble=spec.preamble
        )
    return cp.ReductionKernel(  # type: ignore[attr-defined]
        spec.in_params,
        spec.out_params,
        spec.map_expr,
        spec.reduce_expr,
        spec.post_map_expr,
        spec.identity,
        spec.name,
        reduce_type=spec.reduce_type,
        preamble=spec.preamble,
    )


def describe(spec: KernelSpec) -> List[str]:
    """Comment lines naming the kernel in generated host code."""
    kind = "ElementwiseKernel" if spec.kind == "elementwise" else "ReductionKernel"
    return [f"{kind} {spec.name}({spec.in_params}) -> ({spec.out_params})"]
