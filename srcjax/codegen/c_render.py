"""The C renderer: a fused elementwise region -> C++ statements, from the registry.

Every C expression comes from the registry: a primitive's ``c_expr`` is a
template over its parameter names (``"sin({x})"``, ``"({condition} ? {x} :
{y})"``), either one string or a dict keyed by the kinds of the dtype it is
computed in (``{"f": "fabs({x})", "iu": ..., "c": "abs({x})"}``; a plain string
covers ``"fiub"``, never complex). A primitive without one ends the region.

The renderer is dtype-aware (float16, float32, float64, int32, int64, uint32,
bool, complex64, complex128) and applies JAX's semantics on top of the
templates:

- each step is computed in its *compute dtype*: the step's result dtype (the
  jit's abstract values carry JAX's promotion), except that comparisons and
  predicates (a bool result) compute in the promoted operand dtype, and
  ``real``/``imag``/``abs`` of a complex operand in the operand's dtype;
  float16 computes in float32 and is rounded to float16 after every step, as
  XLA does;
- operands of another dtype are cast explicitly (``(float)(n)``); a weakly typed
  Python constant is written as a literal of the compute dtype (``0.5f``: the
  float32 value JAX would make of it, printed exactly);
- ``where`` is a select, comparisons are exact in the promoted dtype, and
  ``maximum``/``minimum`` propagate NaN (the prelude's ``sj_max``/``sj_min``);
  integer ``//`` and ``%`` follow JAX's signs and its values for division by
  zero (``sj_floor_divide``/``sj_remainder``).

One text serves both targets: the statements use C++ overloads (``exp`` of a
``float`` is the float function on CUDA and with ``<cmath>``), and only the
prelude differs (:func:`prelude`: ``__device__`` helpers on CUDA, plain inline
functions on the CPU). The CUDA backend (:mod:`srcjax.backends.cupy_cuda`)
puts the statements into ``cupy.ElementwiseKernel`` / ``ReductionKernel``
bodies; :func:`cpu_function` wraps them in a loop for the CPU (the test
compiles that with g++ and checks it against NumPy).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .. import dtypes as _dt

__all__ = [
    "Step",
    "Rendered",
    "NotRenderable",
    "c_type",
    "template_for",
    "render",
    "renderable_prefix",
    "prelude",
    "cpu_function",
    "steps_of_region",
]


class NotRenderable(Exception):
    """A step has no C expression for its dtypes (it ends the region)."""


@dataclass
class Step:
    """One elementwise statement of a region.

    ``operands`` are ``("in", name)`` (a region input), ``("val", name)`` (an
    earlier step's result) or ``("const", value)`` (a Python or NumPy scalar),
    in the primitive's positional-parameter order; ``params`` holds keyword
    values that are constants (``alpha=2.0``)."""

    prim: Any
    operands: List[Tuple[str, Any]]
    target: str
    dtype: np.dtype
    params: Dict[str, Any] = field(default_factory=dict)


@dataclass
class Rendered:
    """A rendered region: ``body`` reads each input by its C name
    (``in_names``) and assigns each output's C name (``names``: values and
    outputs)."""

    body: str
    inputs: Dict[str, np.dtype]
    outputs: Dict[str, np.dtype]
    names: Dict[str, str]
    values: Dict[str, np.dtype]  # every step's result dtype
    in_names: Dict[str, str] = field(default_factory=dict)  # input -> C name


#: C++ storage types of each dtype on the two targets (CuPy's spellings on CUDA)
_TYPES = {
    "bool": ("bool", "bool"),
    "int8": ("signed char", "signed char"),
    "int16": ("short", "short"),
    "int32": ("int", "int"),
    "int64": ("long long", "long long"),
    "uint8": ("unsigned char", "unsigned char"),
    "uint16": ("unsigned short", "unsigned short"),
    "uint32": ("unsigned int", "unsigned int"),
    "uint64": ("unsigned long long", "unsigned long long"),
    "float16": ("float16", None),  # CuPy's float16 class; no CPU type (tested by NVRTC)
    "float32": ("float", "float"),
    "float64": ("double", "double"),
    "complex64": ("complex<float>", "std::complex<float>"),
    "complex128": ("complex<double>", "std::complex<double>"),
}


def c_type(dt: Any, target: str = "cuda") -> str:
    """The C++ type of dtype ``dt`` on ``target`` (``"cuda"`` or ``"cpu"``)."""
    name = np.dtype(dt).name
    if name not in _TYPES:
        raise NotRenderable(f"no C type for {name}")
    t = _TYPES[name][0 if target == "cuda" else 1]
    if t is None:
        raise NotRenderable(f"{name} has no C type on {target}")
    return t


def template_for(prim: Any, compute: np.dtype) -> Optional[str]:
    """The registry's C template of ``prim`` for compute dtype ``compute``."""
    ce = getattr(prim, "c_expr", None)
    if ce is None:
        return None
    kind = np.dtype(compute).kind
    if isinstance(ce, str):
        return ce if kind in "fiub" else None
    for kinds, text in ce.items():
        if kind in kinds:
            return text
    return None


# C/C++ keywords and names the kernels reserve (CuPy: i, _ind, _raw_*)
_RESERVED = set(
    """auto bool break case char const continue default do double else enum extern float for
    goto if inline int long register restrict return short signed sizeof static struct switch
    typedef union unsigned void volatile while class delete new this template typename
    namespace operator private public protected friend virtual true false i n half float16
    complex""".split()
) | set(
    # math functions the templates call: a value may not shadow them
    """sin cos tan asin acos atan atan2 sinh cosh tanh asinh acosh atanh exp exp2 expm1 log
    log2 log10 log1p sqrt rsqrt cbrt pow fabs abs floor ceil trunc rint round nearbyint fmod
    fmax fmin hypot erf erfc erfinv erfcinv lgamma tgamma normcdf normcdfinv sinpi cospi isnan
    isinf isfinite signbit copysign real imag conj min max assert printf""".split()
)


def _c_name(name: str) -> str:
    if name in _RESERVED or name.startswith("_") or name.startswith("sj_"):
        return f"v_{name.lstrip('_')}"
    return name


def _float_literal(v: float, dt: np.dtype) -> str:
    if math.isnan(v):
        return "SJ_NAN"
    if math.isinf(v):
        return "SJ_INF" if v > 0 else "(-SJ_INF)"
    if dt == np.float32 or dt == np.float16:
        text = repr(float(np.float32(v)))
        return text + ("f" if "e" in text or "." in text else ".0f")
    text = repr(float(v))
    return text if ("e" in text or "." in text) else text + ".0"


def _literal(v: Any, dt: np.dtype, target: str) -> str:
    """A constant as a literal of dtype ``dt`` (the value JAX gives it)."""
    dt = np.dtype(dt)
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, complex) or dt.kind == "c":
        c = complex(v)
        part = np.float32 if dt == np.complex64 else np.float64
        return f"{c_type(dt, target)}({_float_literal(c.real, np.dtype(part))}, " + (
            f"{_float_literal(c.imag, np.dtype(part))})"
        )
    if dt.kind == "b":
        return "true" if bool(v) else "false"
    if dt.kind in "iu":
        iv = int(v)
        if dt.itemsize == 8:
            return f"{iv}{'ULL' if dt.kind == 'u' else 'LL'}"
        return (
            f"({c_type(dt, target)}){iv}"
            if dt.itemsize < 4
            else f"{iv}{'u' if dt.kind == 'u' else ''}"
        )
    return _float_literal(float(v), np.float32 if dt == np.float16 else dt)


def _proxy(kind: str, value: Any, dt: Optional[np.dtype]) -> Any:
    if kind == "const":
        return value
    return np.zeros((), dt)


def _compute_dtype(step: Step, operand_dtypes: List[Optional[np.dtype]]) -> np.dtype:
    """The dtype ``step`` computes in: its result dtype, except that a
    predicate or comparison (bool result) computes in its operands' promoted
    dtype, the logical operators in bool, and ``real``/``imag``/``abs`` of a
    complex operand in that complex dtype."""
    res = np.dtype(step.dtype)
    name = step.prim.public
    if name in ("jnp.where",):
        return res
    if name.startswith("jnp.logical_"):
        return np.dtype(bool)
    if res.kind == "b" or name in ("jnp.real", "jnp.imag", "jnp.abs", "jnp.absolute"):
        proxies = [_proxy(k, v, d) for (k, v), d in zip(step.operands, operand_dtypes)]
        arrays = [p for p in proxies if isinstance(p, np.ndarray)]
        if not arrays:
            return res
        ct = _dt.result_type(*proxies)
        if name in ("jnp.real", "jnp.imag", "jnp.abs", "jnp.absolute") and ct.kind != "c":
            return res
        return ct
    return res


def _parameters(prim: Any) -> List[str]:
    return [
        p.name
        for p in prim.signature.parameters.values()
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
    ]


def render(
    steps: Sequence[Step],
    inputs: Dict[str, np.dtype],
    outputs: Sequence[str],
    target: str = "cuda",
    weak_inputs: Sequence[str] = (),
) -> Rendered:
    """C++ statements computing ``steps``.

    ``inputs`` maps each input name to its dtype (inputs named in
    ``weak_inputs`` are weakly typed scalars); ``outputs`` are the step
    targets the caller reads after the region (each becomes an assignment to its
    C name, declared by the caller). Raises :class:`NotRenderable` when a step
    has no C expression for its dtypes."""
    used: set = set()

    def fresh(n: str) -> str:
        c = _c_name(n)
        while c in used:
            c += "_"
        used.add(c)
        return c

    # inputs and values are separate namespaces: a region may compute a new
    # ``acc`` from the input ``acc`` (a loop carry); the value gets its own C name
    in_names = {n: fresh(n) for n in inputs}
    out_names = {n: fresh(n if n not in inputs else f"{n}_out") for n in outputs}
    last = {st.target: k for k, st in enumerate(steps)}  # an output is its last binding
    names: Dict[str, str] = {}
    in_dts: Dict[str, np.dtype] = {n: np.dtype(d) for n, d in inputs.items()}
    dtypes: Dict[str, np.dtype] = {}
    weak = set(weak_inputs)
    lines: List[str] = []
    values: Dict[str, np.dtype] = {}
    for k, step in enumerate(steps):
        op_dts: List[Optional[np.dtype]] = []
        for kind, v in step.operands:
            op_dts.append(in_dts[v] if kind == "in" else dtypes[v] if kind == "val" else None)
        # weak scalar inputs take part in promotion as Python scalars
        ct = _compute_dtype(
            Step(
                step.prim,
                [
                    ("const", in_dts[v].type(0).item()) if k == "in" and v in weak else (k, v)
                    for k, v in step.operands
                ],
                step.target,
                step.dtype,
            ),
            op_dts,
        )
        calc = np.dtype(np.float32) if ct == np.float16 else ct
        tmpl = template_for(step.prim, calc)
        if tmpl is None:
            raise NotRenderable(f"{step.prim.public} has no C expression for {ct.name}")
        params = _parameters(step.prim)
        subst: Dict[str, str] = {}
        # a math function of integers (floor, isnan, fmax: no integer overloads on
        # CUDA) reads them as float64; the result is cast back
        via = np.dtype(np.float64) if calc.kind in "iub" and _LIBM_CALL.search(tmpl) else calc
        for pname, (kind, v), odt in zip(params, step.operands, op_dts):
            want = _operand_dtype(step.prim.public, pname, via)
            if kind == "const":
                if v is None or not isinstance(v, (bool, int, float, complex, np.generic)):
                    raise NotRenderable(f"{step.prim.public}: operand {pname} is {v!r}")
                subst[pname] = _literal(v, want, target)
            else:
                expr = in_names[v] if kind == "in" else names[v]
                if odt is not None and odt.kind == "c" and want.kind != "c":
                    raise NotRenderable(f"{step.prim.public}: complex operand {pname}")
                if odt != want:
                    expr = f"({c_type(want, target)})({expr})"
                subst[pname] = expr
        for pname in params[len(step.operands) :]:
            p = step.prim.signature.parameters[pname]
            v = step.params.get(pname, p.default)
            if f"{{{pname}}}" not in tmpl:
                continue
            if v is p.empty or v is None:
                raise NotRenderable(f"{step.prim.public}: no value for {pname}")
            subst[pname] = _literal(v, calc, target)
        if calc == np.float32:
            tmpl = _FLOAT_LITERAL.sub(r"\1f", tmpl)
        try:
            expr = tmpl.format(**subst)
        except (KeyError, IndexError) as e:
            raise NotRenderable(f"{step.prim.public}: template needs {e}") from None
        res = np.dtype(step.dtype)
        res_c = c_type(res, target)
        if (res == calc and via == calc) or res.kind == "b":
            rhs = expr
        else:
            rhs = (
                f"{res_c}({expr})" if res.kind in "c" or res == np.float16 else f"({res_c})({expr})"
            )
        t = step.target
        if t in out_names and last[t] == k:
            names[t] = out_names[t]
            lines.append(f"{names[t]} = {rhs};")  # (declared by the caller)
        else:
            names[t] = fresh(t)  # a rebinding gets a new C name
            lines.append(f"{res_c} {names[t]} = {rhs};")
        dtypes[t] = res
        values[t] = res
    for o in outputs:
        if o not in values:
            raise NotRenderable(f"output {o} is not computed by the region")
    out_dts = {o: values[o] for o in outputs}
    return Rendered("\n".join(lines), dict(inputs), out_dts, dict(out_names), values, in_names)


def _operand_dtype(public: str, pname: str, calc: np.dtype) -> np.dtype:
    """The dtype an operand is cast to: the compute dtype, but bool for a
    select's condition and the logical operators."""
    if public == "jnp.where" and pname == "condition":
        return np.dtype(bool)
    return calc


def renderable_prefix(
    steps: Sequence[Step], inputs: Dict[str, np.dtype], target: str = "cuda"
) -> int:
    """How many leading steps render (the first that does not ends the region)."""
    for k in range(len(steps), 0, -1):
        try:
            render(steps[:k], inputs, [steps[k - 1].target], target)
            return k
        except NotRenderable:
            continue
    return 0


_HELPERS = r"""
template <typename T, typename U> SJ_FN T sj_max(T a, U u) {
  T b = (T)u;
  return (a > b || a != a) ? a : b;
}
template <typename T, typename U> SJ_FN T sj_min(T a, U u) {
  T b = (T)u;
  return (a < b || a != a) ? a : b;
}
template <typename T> SJ_FN T sj_sign(T a) { return a != a || a == 0 ? a : (T)((a > 0) - (a < 0)); }
template <typename T> SJ_FN T sj_shl(T a, T b) {
  // XLA: a shift by a negative amount or by the width or more gives 0
  return (b < 0 || b >= (T)(8 * sizeof(T))) ? (T)0 : (T)(a << b);
}
template <typename T> SJ_FN T sj_shr(T a, T b) {
  // arithmetic for signed types: out-of-range amounts fill with the sign
  if (b < 0 || b >= (T)(8 * sizeof(T))) return (T)-1 < (T)0 && a < 0 ? (T)-1 : (T)0;
  return a >> b;
}
template <typename T> SJ_FN T sj_floor_divide(T a, T b) {
  if (b == 0) return (T)((T)-1 < (T)0 ? (a != 0 ? -2 : -1) : ~(T)0);
  T q = a / b;
  if ((T)-1 < (T)0 && (a % b != 0) && ((a < 0) != (b < 0))) q -= 1;
  return q;
}
template <typename T> SJ_FN T sj_remainder(T a, T b) {
  if (b == 0) return (T)0;
  T r = a % b;
  if ((T)-1 < (T)0 && r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}
template <typename T> SJ_FN T sj_fdivmod_q(T a, T b) {
  // JAX's float floor division (NumPy's npy_divmod but for a zero's sign: b's)
  T m = fmod(a, b);
  if (b == 0) return a / b;
  T d = (a - m) / b;
  if (m != 0 && ((b < 0) != (m < 0))) d -= 1;
  if (d != 0) { T f = floor(d); if (d - f > (T)0.5) f += 1; return f; }
  return copysign((T)0, b);
}
template <typename T> SJ_FN T sj_fmod_py(T a, T b) {
  // Python's float remainder (sign of b), as jnp.remainder; a zero keeps a's sign (JAX)
  T m = fmod(a, b);
  if (b == 0) return m;
  if (m != 0 && ((b < 0) != (m < 0))) m += b;
  return m;
}
template <typename T> SJ_FN T sj_logaddexp(T a, T b) {
  T d = a - b;
  if (d != d) return a + b;
  return sj_max(a, b) + log1p(exp(-fabs(d)));
}
template <typename T> SJ_FN T sj_logaddexp2(T a, T b) {
  T d = a - b;
  if (d != d) return a + b;
  return sj_max(a, b) + log1p(exp2(-fabs(d))) * (T)1.4426950408889634;
}
"""


def prelude(target: str = "cuda") -> str:
    """C++ text the rendered statements need: NaN/infinity constants and the
    ``sj_*`` helpers (NaN-propagating max/min, JAX's integer division)."""
    if target == "cuda":
        head = (
            "#define SJ_FN __device__ __forceinline__\n"
            "#define SJ_INF __longlong_as_double(0x7ff0000000000000ULL)\n"
            "#define SJ_NAN __longlong_as_double(0x7ff8000000000000ULL)\n"
        )
    else:
        head = (
            "#include <cmath>\n#include <complex>\n"
            "using std::abs; using std::exp; using std::log; using std::sqrt;\n"
            "using std::isinf; using std::isnan; using std::signbit; using std::isfinite;\n"
            "#define SJ_FN static inline\n"
            "#define SJ_INF HUGE_VAL\n#define SJ_NAN ((double)NAN)\n"
            "static inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }\n"
            "static inline float normcdf(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }\n"
            "static inline double sinpi(double x) { return sin(M_PI * x); }\n"
            "static inline float sinpi(float x) { return sinf((float)M_PI * x); }\n"
        )
    return head + _HELPERS


def cpu_function(rendered: Rendered, name: str) -> str:
    """``extern "C" void name(long sj_n, const T* p_x, long s_x, ..., T* p_out,
    ...)``: the rendered statements in a loop over ``sj_n`` elements, for the
    CPU. An input with ``s_x == 0`` is a scalar (read at index 0)."""
    params = ["long sj_n"]
    loads = []
    for n, dt in rendered.inputs.items():
        c = rendered.in_names[n]
        t = c_type(dt, "cpu")
        params.append(f"const {t}* p_{c}")
        params.append(f"long s_{c}")
        loads.append(f"const {t} {c} = p_{c}[s_{c} ? sj_i : 0];")
    stores = []
    decls = []
    for n, dt in rendered.outputs.items():
        c = rendered.names[n]
        t = c_type(dt, "cpu")
        params.append(f"{t}* p_{c}")
        decls.append(f"{t} {c};")
        stores.append(f"p_{c}[sj_i] = {c};")
    body = "\n    ".join(loads + decls + rendered.body.splitlines() + stores)
    return (
        f'extern "C" void {name}({", ".join(params)}) {{\n'
        f"  for (long sj_i = 0; sj_i < sj_n; ++sj_i) {{\n    {body}\n  }}\n}}\n"
    )


def steps_of_region(reg: Any) -> List[Step]:
    """The steps of a :class:`srcjax.transforms.fusion.Region` (its plan's
    primitives and operands; constants as their Python values)."""
    out = []
    for st in reg.plan:
        operands = []
        for kind, v in st.operands:
            if kind == "const":
                operands.append(("const", getattr(v, "value", v)))
            else:
                operands.append((kind, v))
        out.append(Step(st.prim, operands, st.target, st.aval.dtype))
    return out


#: a call of a math library function in a template (not an sj_ helper)
_LIBM_CALL = re.compile(r"(?<![\w.])(?!sj_)[a-z_][a-z0-9_]*\(")
#: a double literal in a template (written as float for float32 steps)
_FLOAT_LITERAL = re.compile(r"(?<![\w.])(\d+\.\d*(?:[eE][+-]?\d+)?)(?![\w.])")
