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
from typing import Any, Dict, List, Optional

import gast

from ...frontend import nodes as N
from .kernel import Refuse, plan

__all__ = ["lower_loops", "region"]


# ---------------------------------------------------------------------------- regions
class Region:
    """A compiled kernel (``fn``), or its failure (``error``: then ``fn`` is None)."""

    def __init__(self, key: str, fn: Any, error: str, source: str) -> None:
        self.key = key
        self.fn = fn
        self.error = error
        self.source = source
        self.python: Any = None
        self.box: Any = None

    def __call__(self, *args: Any) -> Any:
        """The kernel's results, or None: then the generated code runs the loop in
        NumPy (the kernel failed: Numba could not type these arguments, e.g. a
        0-d array where a scalar was expected; remembered, never retried)."""
        fn = self.fn
        if fn is None:
            return None
        try:
            r = fn(*args)
        except Exception as exc:  # noqa: BLE001 - kernels are pure: NumPy reruns the loop
            r = self._again(exc, args)
            if r is None:
                return None
        return r if self.box is None else self.box(r)

    def _again(self, exc: Exception, args: Any) -> Any:
        if self.python is not None and isinstance(exc, ModuleNotFoundError):
            # a lazily compiled kernel whose on-disk Numba cache entry does not load back
            # (one written by another srcjax): compile it afresh, without that cache, once
            from . import njit

            try:
                self.fn = njit(self.python, cache=False)
                return self.fn(*args)
            except Exception as again:  # noqa: BLE001
                exc = again
        self.fn = None
        self.error = f"{type(exc).__name__}: {(str(exc).strip().splitlines() or [''])[0][:120]}"
        return None


_REGIONS: Dict[str, Region] = {}
#: kernel lines shown in the comments of generated code
_SHOWN = 24


def _numba_types(nb: Any, spec: Any) -> Any:
    """The Numba type of an argument type spec of :func:`kernel.plan`."""
    if isinstance(spec, tuple) and spec[0] == "tuple":
        return nb.types.Tuple(tuple(_numba_types(nb, c) for c in spec[1]))
    if isinstance(spec, tuple) and spec[0] == "array":
        return nb.types.Array(_numba_types(nb, spec[1]), spec[2], "C")
    return nb.boolean if spec == "bool" else getattr(nb, spec)


def _compile(key: str, source: str, sig: Optional[List[Any]]) -> Region:
    """Compile ``source``'s ``kernel`` (for the argument type specs ``sig``; None:
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
            types_ = tuple(_numba_types(nb, t) for t in sig)
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
    reg.box = ns.get("box")
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
    return _compile(key, text, None)


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
            src, inputs, outputs = plan(fdef, s, outside, x64)
        except Refuse as why:
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
        body = [ln for ln in src.splitlines()[3:] if ln.strip()]
        lines += ["  " + ln for ln in body[:_SHOWN]]
        if len(body) > _SHOWN:
            lines.append(
                f"  ... ({len(body) - _SHOWN} more lines in {key}_{key[7:]}.py, srcjax's cache directory)"
            )
        out.extend(_comment(ln, s) for ln in lines)
        args = ", ".join(n for n, _ in inputs)
        res = f"_nb_{key[-8:]}"
        text = f"{res} = _nbr.region({key!r})({args})\nif {res} is None:\n    pass\n"
        if outputs:
            targets = ", ".join(outputs) + ("," if len(outputs) == 1 else "")
            text += f"else:\n    {targets} = {res}\n"
        call, test = N.parse_stmts(text)
        test.body = [s]  # (the kernel failed on these arguments: NumPy, as without Numba)
        for node in (call, test) + tuple(test.orelse):
            gast.copy_location(node, s)
            node.sj_origin = getattr(s, "sj_origin", None)
            node.sj_file = getattr(s, "sj_file", None)
        out.extend((call, test))
    fdef.body = out
    return count


def _comment(text: str, like: Any) -> Any:
    node = gast.Pass()
    gast.copy_location(node, like)
    node.sj_comment = text
    return node
