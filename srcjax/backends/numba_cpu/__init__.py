"""Compiled CPU code with Numba (optional: ``pip install "srcjax[numba]"``).

Numba (``numba.njit``: LLVM-compiled Python over NumPy arrays, the CPU JIT the
scientific Python field already uses) runs the parts of srcjax that NumPy's
one-call-per-operation model makes slow: loops over scalars and elementwise
chains whose many passes would each allocate a temporary.

- :func:`available` says whether Numba can be used (installed, and not turned off
  with ``SRCJAX_NUMBA=0``); everything here falls back to NumPy without it.
- :func:`njit` compiles with ``nogil=True``, no ``fastmath`` (IEEE semantics, NumPy's error model: x / 0 is inf, not ZeroDivisionError;
  float32 stays float32, no reassociation) and an on-disk cache in srcjax's
  cache directory (``<cache>/numba``, see :mod:`srcjax.codegen.cache`).
- :func:`fma32` is LLVM's ``llvm.fma.f32``: ``a * b + c`` rounded once, the
  fused multiply-add XLA:CPU emits (exact whether the CPU has an FMA unit or
  the C library's ``fmaf`` computes it).

Kernels live with what they compute (``srcjax/random/_numba.py``: threefry2x32
and the float32 ``normal``/``uniform`` transforms).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Optional

__all__ = [
    "available",
    "njit",
    "fma32",
    "bitcasts",
    "numba",
    "when_available",
    "loop_mode",
    "tiers_now",
]

_NUMBA: Any = None
_TRIED = False


def _import() -> Any:
    global _NUMBA, _TRIED
    if not _TRIED:
        _TRIED = True
        if _off():
            return None
        try:
            import numba
        except Exception:  # noqa: BLE001 - not installed, or a broken llvmlite
            return None
        _install_locator(numba)
        _NUMBA = numba
    return _NUMBA


def _off() -> bool:
    return os.environ.get("SRCJAX_NUMBA", "1").strip().lower() in ("0", "false", "no", "off")


_FINDABLE: Optional[bool] = None


def findable() -> bool:
    """Whether Numba looks installed (and not turned off), without importing it
    (its import costs 0.3-0.5 s: only a hot loop pays it)."""
    global _FINDABLE
    if _TRIED:
        return _NUMBA is not None
    if _off():
        return False
    if _FINDABLE is None:
        from importlib.util import find_spec

        try:
            _FINDABLE = find_spec("numba") is not None
        except (ImportError, ValueError):
            _FINDABLE = False
    return _FINDABLE


def loop_mode(option: Any) -> str:
    """How jitted loops use Numba for the ``numba_loops`` option's value: "auto"
    (tiered, :mod:`.tiers`; Numba not imported here), "on" (compiled at
    generation) or "" (NumPy only: off, or Numba missing)."""
    if option == "auto":
        return "auto" if findable() else ""
    return "on" if option and available() else ""


def tiers_now(text: str) -> str:
    """Generated code with the tier each Numba-tiered loop is in now (``srcjax.source``)."""
    if "_nbr.tiered(" not in text:
        return text
    from . import tiers

    return tiers.status(text)


def available() -> bool:
    """Whether Numba is installed and not turned off (``SRCJAX_NUMBA=0``)."""
    return _import() is not None


def numba() -> Any:
    """The ``numba`` module (``None`` when :func:`available` is false)."""
    return _import()


def when_available(load: Callable[[], Any]) -> Callable[[], Any]:
    """The loader of a :class:`srcjax.primitives.lazy_kernels.LazyKernel`:
    ``load()`` (it imports and compiles the kernels) where Numba is available,
    else None without importing them."""

    def loader() -> Any:
        return load() if available() else None

    return loader


def _install_locator(numba: Any) -> None:
    """Numba's on-disk cache for srcjax's kernels and generated modules goes to
    ``<srcjax cache dir>/numba`` (other functions keep Numba's own places)."""
    from numba.core import caching

    if any(getattr(c, "_srcjax", False) for c in caching.CacheImpl._locator_classes):
        return

    class _SrcjaxLocator(caching.UserProvidedCacheLocator):
        _srcjax = True

        def __init__(self, py_func: Any, py_file: str) -> None:
            from ...codegen.cache import cache_dir

            self._py_file = py_file
            self._lineno = py_func.__code__.co_firstlineno
            base = os.path.join(cache_dir(), "numba")
            self._cache_path = os.path.join(base, self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func: Any, py_file: str) -> Optional[Any]:
            if not _is_srcjax_file(py_file):
                return None
            return caching._SourceFileBackedLocatorMixin.from_function.__func__(
                cls, py_func, py_file
            )

    caching.CacheImpl._locator_classes.insert(0, _SrcjaxLocator)


def _is_srcjax_file(path: str) -> bool:
    from ...codegen.cache import cache_dir

    p = os.path.abspath(path)
    pkg = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    return p.startswith(pkg + os.sep) or p.startswith(os.path.abspath(cache_dir()) + os.sep)


def njit(fn: Optional[Callable] = None, **options: Any) -> Any:
    """``numba.njit(nogil=True, cache=True)`` (no fastmath); requires :func:`available`."""
    nb = _import()
    if nb is None:  # pragma: no cover - callers check available() first
        raise RuntimeError("numba is not available")
    opts = {"nogil": True, "cache": True, "fastmath": False, "error_model": "numpy", **options}
    if fn is None:
        return nb.njit(**opts)
    return nb.njit(**opts)(fn)


_FMA32 = None


def fma32() -> Any:
    """The ``fma32(a, b, c)`` intrinsic for njit code (float32 operands)."""
    global _FMA32
    if _FMA32 is None:
        nb = _import()
        from llvmlite import ir
        from numba.core import types
        from numba.extending import intrinsic

        @intrinsic
        def fma32_(typingctx: Any, a: Any, b: Any, c: Any) -> Any:
            if not all(t == types.float32 for t in (a, b, c)):
                return None  # float32 operands only: no silent conversion
            sig = types.float32(types.float32, types.float32, types.float32)

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                f32 = ir.FloatType()
                fnty = ir.FunctionType(f32, [f32, f32, f32])
                fn = builder.module.declare_intrinsic("llvm.fma", [f32], fnty)
                return builder.call(fn, args)

            return sig, codegen

        del nb
        _FMA32 = fma32_
    return _FMA32


_BITCASTS = None


def bitcasts() -> Any:
    """``(f32_bits, f32_from_bits)``: float32 <-> uint32 reinterpretation for njit
    code (LLVM ``bitcast``; vectorizes, unlike ``math.frexp``)."""
    global _BITCASTS
    if _BITCASTS is None:
        _import()
        from llvmlite import ir
        from numba.core import types
        from numba.extending import intrinsic

        @intrinsic
        def f32_bits(typingctx: Any, x: Any) -> Any:
            if x != types.float32:
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                return builder.bitcast(args[0], ir.IntType(32))

            return types.uint32(types.float32), codegen

        @intrinsic
        def f32_from_bits(typingctx: Any, u: Any) -> Any:
            if u not in (types.uint32, types.int32):
                return None

            def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
                return builder.bitcast(args[0], ir.FloatType())

            return types.float32(u), codegen

        _BITCASTS = (f32_bits, f32_from_bits)
    return _BITCASTS
