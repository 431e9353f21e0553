"""Loops over scalars compiled with Numba, inside jit's CPU code.

A jitted ``for``/``while`` loop (``lax.fori_loop``, ``lax.while_loop`` and
``scan``/``for`` bodies arrive as Python loops) whose every value is a scalar
(shape ``()``, float32/float64/int32/int64/bool, abstract values from jit's
inference) and whose every statement is an arithmetic operator, a comparison,
an ``if`` or a loop of the same kind, or a call of an elementwise function in
:data:`_CALLS`, becomes a *region*: a kernel function, written to the cache
directory and compiled with :func:`srcjax.backends.numba_cpu.njit` for the
argument types the abstract values give, replaces the loop in the generated
code. Anything else (arrays, BLAS/LAPACK/FFT calls, containers, helpers of the
transforms) keeps NumPy; so does a loop Numba cannot compile (decided once per
kernel: a failure is remembered, never retried).

JAX's dtype semantics are kept: every operand is converted to the dtype of the
operation's result as jit inferred it (a weak Python scalar is the default
float or int dtype, as in JAX), and every result is converted to its own dtype
(Numba computes int32 arithmetic in int64: the conversion wraps as XLA does).
float32 stays float32: no operation sees a float64 operand unless its result
is float64.

The generated code names the kernel (``_nbr.region("nbloop_<digest>")``) and
shows its source in comments; ``srcjax.source(jitted, *args)`` therefore shows
which loops were compiled and which kept NumPy (with Numba's reason).
"""

from __future__ import annotations

import hashlib
from typing import Any, Dict, List, Optional, Set, Tuple

import gast
import numpy as np

from ...frontend import nodes as N

__all__ = ["lower_loops", "region"]

#: primitives (as generated code names them) -> the NumPy function Numba compiles
_CALLS = {
    f"jnp.{n}": f"np.{n}"
    for n in (
        "sin",
        "cos",
        "tan",
        "arcsin",
        "arccos",
        "arctan",
        "sinh",
        "cosh",
        "tanh",
        "exp",
        "expm1",
        "log",
        "log1p",
        "sqrt",
        "abs",
        "floor",
        "ceil",
        "maximum",
        "minimum",
        "arctan2",
        "hypot",
    )
}
_CALLS["jnp.absolute"] = "np.abs"
_CALLS["jnp.square"] = "np.square"
_CALLS["jnp.negative"] = "np.negative"

_BINOPS = {
    gast.Add: "+",
    gast.Sub: "-",
    gast.Mult: "*",
    gast.Div: "/",
    gast.Pow: "**",
}
_CMPOPS = {
    gast.Lt: "<",
    gast.LtE: "<=",
    gast.Gt: ">",
    gast.GtE: ">=",
    gast.Eq: "==",
    gast.NotEq: "!=",
}
_DTYPES = {"float32", "float64", "int32", "int64", "bool"}


class _Refuse(Exception):
    """This loop is no region (the reason, for the comment in generated code)."""


# ---------------------------------------------------------------------------- typing
def _runtime_dtype(aval: Any, x64: bool) -> str:
    """The dtype a scalar has at run time in JAX's semantics (a weak Python
    scalar: the default float/int dtype)."""
    shape = getattr(aval, "shape", None)
    if shape is None or not hasattr(aval, "ptype") or tuple(shape) != ():
        raise _Refuse("not a scalar")
    dt = np.dtype(aval.dtype)
    if aval.ptype is not None:
        if aval.ptype is bool:
            dt = np.dtype(bool)
        elif aval.ptype is int:
            dt = np.dtype(np.int64 if x64 else np.int32)
        else:
            dt = np.dtype(np.float64 if x64 else np.float32)
    name = dt.name
    if name not in _DTYPES:
        raise _Refuse(f"dtype {name}")
    return name


class _Kernel:
    """Translates one loop into kernel source."""

    def __init__(self, x64: bool) -> None:
        self.x64 = x64
        self.dtypes: Dict[str, str] = {}
        self.lines: List[str] = []

    def note(self, name: str, aval: Any) -> None:
        dt = _runtime_dtype(aval, self.x64)
        old = self.dtypes.setdefault(name, dt)
        if old != dt:
            raise _Refuse(f"{name} is {old} and {dt}")

    def atom(self, node: Any, dt: str) -> str:
        """An operand converted to ``dt``."""
        if isinstance(node, gast.Constant):
            v = node.value
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                if isinstance(v, bool):
                    return f"np.bool_({v})" if dt == "bool" else f"np.{dt}({int(v)})"
                raise _Refuse(f"constant {v!r}")
            return f"np.{dt}({v!r})"
        if isinstance(node, gast.Name):
            have = self.dtypes.get(node.id)
            if have is None:
                raise _Refuse(f"{node.id} has no known dtype")
            if have == dt:
                return node.id
            return f"np.{'bool_' if dt == 'bool' else dt}({node.id})"
        raise _Refuse(f"operand {gast.unparse(node).strip()}")

    def operand_dtype(self, nodes: List[Any]) -> str:
        """JAX's promoted dtype of comparison operands (constants are weak)."""
        strong = [self.dtypes[n.id] for n in nodes if isinstance(n, gast.Name)]
        if not strong:
            raise _Refuse("a comparison of constants")
        return np.result_type(*[np.dtype(d) for d in strong]).name

    def expr(self, value: Any, dt: str) -> str:
        """``value`` (an ANF right-hand side) computed in ``dt``."""
        if isinstance(value, (gast.Name, gast.Constant)):
            return self.atom(value, dt)
        if isinstance(value, gast.BinOp) and type(value.op) in _BINOPS:
            if dt == "bool":
                raise _Refuse("boolean arithmetic")
            if dt.startswith("int") and isinstance(value.op, (gast.Div, gast.Pow)):
                raise _Refuse("integer / or **")
            op = _BINOPS[type(value.op)]
            return f"{self.atom(value.left, dt)} {op} {self.atom(value.right, dt)}"
        if isinstance(value, gast.UnaryOp):
            if isinstance(value.op, gast.USub) and dt != "bool":
                return f"-{self.atom(value.operand, dt)}"
            if isinstance(value.op, gast.Not):
                return f"not {self.atom(value.operand, 'bool')}"
            raise _Refuse("unary operator")
        if isinstance(value, gast.Compare) and len(value.ops) == 1:
            if type(value.ops[0]) not in _CMPOPS:
                raise _Refuse("comparison")
            pd = self.operand_dtype([value.left, value.comparators[0]])
            op = _CMPOPS[type(value.ops[0])]
            return f"{self.atom(value.left, pd)} {op} {self.atom(value.comparators[0], pd)}"
        if isinstance(value, gast.Call) and not value.keywords:
            fname = gast.unparse(value.func).strip()
            if fname == "jnp.where" and len(value.args) == 3:
                c, a, b = value.args
                return f"({self.atom(a, dt)} if {self.atom(c, 'bool')} else {self.atom(b, dt)})"
            target = _CALLS.get(fname)
            if target is None:
                raise _Refuse(f"call of {fname}")
            if dt not in ("float32", "float64") and fname not in (
                "jnp.abs",
                "jnp.absolute",
                "jnp.maximum",
                "jnp.minimum",
                "jnp.square",
                "jnp.negative",
            ):
                raise _Refuse(f"{fname} of {dt}")
            return f"{target}({', '.join(self.atom(a, dt) for a in value.args)})"
        raise _Refuse(f"expression {gast.unparse(value).strip()[:40]}")

    def test(self, node: Any) -> str:
        if isinstance(node, gast.Name):
            if self.dtypes.get(node.id) != "bool":
                raise _Refuse("a test that is no bool")
            return node.id
        if isinstance(node, gast.Compare):
            return self.expr(node, "bool")
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
            return f"not ({self.test(node.operand)})"
        if isinstance(node, gast.BoolOp):
            op = " and " if isinstance(node.op, gast.And) else " or "
            return op.join(f"({self.test(v)})" for v in node.values)
        raise _Refuse(f"test {gast.unparse(node).strip()[:40]}")

    def range_arg(self, node: Any) -> str:
        if isinstance(node, gast.Constant) and type(node.value) is int:
            return repr(node.value)
        if isinstance(node, gast.Name) and self.dtypes.get(node.id, "").startswith("int"):
            return node.id
        raise _Refuse("range bounds")

    def block(self, stmts: List[Any], indent: int) -> None:
        pad = "    " * indent
        if not stmts:
            self.lines.append(pad + "pass")
        for s in stmts:
            if isinstance(s, gast.Assign):
                if len(s.targets) != 1 or not isinstance(s.targets[0], gast.Name):
                    raise _Refuse("assignment target")
                t = s.targets[0].id
                dt = self.dtypes[t]
                conv = "np.bool_" if dt == "bool" else f"np.{dt}"
                self.lines.append(f"{pad}{t} = {conv}({self.expr(s.value, dt)})")
            elif isinstance(s, gast.If):
                self.lines.append(f"{pad}if {self.test(s.test)}:")
                self.block(s.body, indent + 1)
                if s.orelse:
                    self.lines.append(f"{pad}else:")
                    self.block(s.orelse, indent + 1)
            elif isinstance(s, gast.While) and not s.orelse:
                self.lines.append(f"{pad}while {self.test(s.test)}:")
                self.block(s.body, indent + 1)
            elif isinstance(s, gast.For) and not s.orelse:
                self.lines.append(f"{pad}for {self.for_head(s)}:")
                self.block(s.body, indent + 1)
            elif isinstance(s, gast.Pass):
                self.lines.append(pad + "pass")
            else:
                raise _Refuse(f"statement {type(s).__name__}")

    def for_head(self, s: Any) -> str:
        it = s.iter
        if not (
            isinstance(s.target, gast.Name)
            and isinstance(it, gast.Call)
            and gast.unparse(it.func).strip() == "range"
            and not it.keywords
            and 1 <= len(it.args) <= 3
        ):
            raise _Refuse("a for loop over something else than range")
        return f"{s.target.id} in range({', '.join(self.range_arg(a) for a in it.args)})"


def _collect(loop: Any, kernel: _Kernel) -> None:
    """The dtypes of every name the loop reads or writes, from jit's avals."""
    for n in gast.walk(loop):
        if isinstance(n, gast.For):
            if isinstance(n.target, gast.Name):
                kernel.dtypes[n.target.id] = "int64"
        avals_in = getattr(n, "sj_avals_in", None)
        if avals_in:
            for name, av in avals_in.items():
                if av is None:
                    raise _Refuse(f"{name} has no abstract value")
                kernel.note(name, av)
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
            av = getattr(n, "sj_aval", None)
            if av is None:
                raise _Refuse(f"{n.targets[0].id} has no abstract value")
            kernel.note(n.targets[0].id, av)


def _names(stmts: List[Any], ctx: type) -> Set[str]:
    out = set()
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, ctx):
                out.add(n.id)
    return out


def _plan(fdef: Any, loop: Any, outside: List[Any], x64: bool) -> Tuple[str, list, list]:
    """``(kernel source, inputs, outputs)`` of ``loop``; raises :class:`_Refuse`."""
    k = _Kernel(x64)
    _collect(loop, k)
    loaded = _names([loop], gast.Load)
    stored = _names([loop], gast.Store)
    defined = {a.id for a in fdef.args.args} | _names(outside, gast.Store)
    inputs = sorted(n for n in loaded | stored if n in defined)
    read_outside = _names(outside, gast.Load)
    outputs = sorted(n for n in stored if n in read_outside)
    if any(o not in inputs for o in outputs):
        raise _Refuse("a value first set inside the loop is read after it")
    for n in inputs + outputs:
        if n not in k.dtypes:
            raise _Refuse(f"{n} has no known dtype")
    # every binding of an input outside the loop must be a scalar of its dtype
    # (a forward declaration `x = None` of generated code is not)
    for st in outside:
        for a in gast.walk(st):
            if (
                isinstance(a, gast.Assign)
                and len(a.targets) == 1
                and isinstance(a.targets[0], gast.Name)
                and a.targets[0].id in k.dtypes
            ):
                name = a.targets[0].id
                if isinstance(a.value, gast.Constant) and a.value.value is None:
                    raise _Refuse(f"{name} may be None")
                if _runtime_dtype(getattr(a, "sj_aval", None), x64) != k.dtypes[name]:
                    raise _Refuse(f"{name} changes dtype")
            elif isinstance(a, (gast.For, gast.AugAssign)) or (
                isinstance(a, gast.Assign) and not all(isinstance(t, gast.Name) for t in a.targets)
            ):
                stored = _names([a], gast.Store) if not isinstance(a, gast.For) else set()
                if stored & set(inputs):
                    raise _Refuse("an input bound by unpacking")
    k.block([loop], 1)
    body = "\n".join(k.lines)
    conv = [
        f"    {n} = np.{'bool_' if k.dtypes[n] == 'bool' else k.dtypes[n]}({n})" for n in inputs
    ]
    ret = ", ".join(outputs) + ("," if len(outputs) == 1 else "")
    src = "\n".join(
        ["import numpy as np", "", "", f"def kernel({', '.join(inputs)}):"]
        + conv
        + [body, f"    return ({ret})", ""]
    )
    sig = [k.dtypes[n] for n in inputs]
    return src, list(zip(inputs, sig)), outputs


# ---------------------------------------------------------------------------- regions
class Region:
    """A compiled kernel (``fn``), or its failure (``error``: then ``fn`` is None)."""

    def __init__(self, key: str, fn: Any, error: str, source: str) -> None:
        self.key = key
        self.fn = fn
        self.error = error
        self.source = source
        self.python: Any = None

    def __call__(self, *args: Any) -> Any:
        try:
            return self.fn(*args)
        except Exception:
            if self.python is None or not hasattr(self.fn, "py_func"):
                raise
            # a lazily compiled kernel whose on-disk Numba cache entry does not load back
            # (one written by another srcjax): compile it afresh, without that cache, once
            from . import njit

            self.fn = njit(self.python, cache=False)
            return self.fn(*args)


_REGIONS: Dict[str, Region] = {}


def _compile(key: str, source: str, sig: Optional[List[str]]) -> Region:
    """Compile ``source``'s ``kernel`` (for the argument dtypes ``sig``; None:
    on its first call), once per process; a failure is remembered."""
    from ...codegen import cache
    from . import njit, numba

    done = _REGIONS.get(key)
    if done is not None:
        return done
    import sys
    import types

    path = cache.write_source(source, key)
    # a real module in sys.modules: Numba's on-disk cache refers to the kernel's
    # module by name (an exec namespace is "<dynamic>", which does not load back)
    mod = types.ModuleType(f"srcjax_numba_{key}")
    mod.__file__ = path
    sys.modules[mod.__name__] = mod
    ns = mod.__dict__
    try:
        exec(compile(source, path, "exec"), ns)
        nb = numba()
        types_ = None
        if sig is not None:
            types_ = tuple(nb.boolean if t == "bool" else getattr(nb, t) for t in sig)
        try:
            fn = njit(ns["kernel"])
            if types_ is not None:
                fn.compile(types_)
        except nb.core.errors.TypingError:
            raise
        except Exception:  # noqa: BLE001 - an unreadable on-disk cache entry: compile afresh
            fn = njit(ns["kernel"], cache=False)
            if types_ is not None:
                fn.compile(types_)
        reg = Region(key, fn, "", source)
    except Exception as exc:  # noqa: BLE001 - Numba cannot type or compile it: NumPy
        reason = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:120]}"
        reg = Region(key, None, reason, source)
    reg.python = ns.get("kernel")
    _REGIONS[key] = reg
    return reg


def region(key: str) -> Region:
    """The compiled region ``key``, which a generated module reads on each call.
    In another process (a generated module from the disk cache) the kernel is
    read back from its file in the cache directory, hash-checked, and compiled
    on its first call."""
    r = _REGIONS.get(key)
    if r is not None:
        return r
    import os

    from ...codegen import cache

    digest = key[len("nbloop_") :]
    path = os.path.join(cache.cache_dir(), f"{key}_{digest}.py")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] != digest:
        raise RuntimeError(f"srcjax: the Numba kernel {path} was changed; delete it")
    r = _compile(key, text, None)
    if r.fn is None:  # (the kernel's Python function: the same arithmetic, slowly)
        r.fn = r.python
    return r


def lower_loops(fdef: Any, filename: str, x64: bool) -> int:
    """Replace each top-level loop of ``fdef`` that is a region by a call of its
    compiled kernel (comments show the kernel, or why the loop kept NumPy).
    Returns the number of compiled regions."""
    count = 0
    body = fdef.body
    out: List[Any] = []
    for i, s in enumerate(body):
        if not isinstance(s, (gast.For, gast.While)):
            out.append(s)
            continue
        outside = body[:i] + body[i + 1 :]
        try:
            src, inputs, outputs = _plan(fdef, s, outside, x64)
        except _Refuse as why:
            out.append(_comment(f"Numba: this loop keeps NumPy ({why})", s))
            out.append(s)
            continue
        except Exception:  # noqa: BLE001 - something this translation does not know
            out.append(s)
            continue
        key = "nbloop_" + hashlib.sha256(src.encode()).hexdigest()[:16]
        reg = _compile(key, src, [t for _, t in inputs])
        if reg.fn is None:
            out.append(_comment(f"Numba could not compile this loop ({reg.error}): NumPy", s))
            out.append(s)
            continue
        count += 1
        lines = [f"Numba region {key} (compiled, nogil): this loop, as"]
        lines += ["  " + ln for ln in src.splitlines()[3:] if ln.strip()]
        out.extend(_comment(ln, s) for ln in lines)
        args = ", ".join(n for n, _ in inputs)
        if outputs:
            targets = ", ".join(outputs) + ("," if len(outputs) == 1 else "")
            text = f"{targets} = _nbr.region({key!r})({args})"
        else:
            text = f"_nbr.region({key!r})({args})"
        call = N.parse_stmts(text)[0]
        gast.copy_location(call, s)
        call.sj_origin = getattr(s, "sj_origin", None)
        call.sj_file = getattr(s, "sj_file", None)
        out.append(call)
    fdef.body = out
    return count


def _comment(text: str, like: Any) -> Any:
    node = gast.Pass()
    gast.copy_location(node, like)
    node.sj_comment = text
    return node
