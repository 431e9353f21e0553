"""The steady-state eager call of a transform with one leaf argument
(``grad(f)(1.0)`` in a loop: bench row W3).

The full call path canonicalizes every argument (Python floats to float32,
64-bit arrays narrowed), classifies it into a specialization key, looks the
generated code up, checks its dependencies and wraps the results. For one
argument whose canonical form follows from its type alone (a Python float, a
float32 scalar, a float32 Array) all of that is decided by the first call: it
installs an *entry* in the transform's ``_fast`` table (argument type ->
function of the argument), and later calls of that type run the entry, which
converts the argument, calls the generated code and finishes its result, and
nothing else. An entry is a shortcut of the full path, never a different
semantics: it is installed only where the full path would do exactly that
(no callee that could be redefined, no ``jax_enable_checks``, no
``jax_debug_nans``/``infs``), it uses the same conversion (:func:`float_arg`)
and result finishing as the full path, and any other argument (an Array with a
float64 buffer, an int) goes the full way.

Every table is emptied when an option changes (``jax_enable_x64`` changes what
a Python float becomes) and by ``srcjax.clear_caches``.

A full path that takes another route for some argument type (say, a weakly
typed specialization for Python floats) installs that route as the type's
entry itself, where it computes its result: ``table[float] =
leaf_entry(float, fn, finish, finish)`` with ``fn`` the code that route
calls and ``finish`` what it does to ``fn``'s result; installing nothing for
the type leaves every such call on the full path (correct, slower).
"""

from __future__ import annotations

import importlib
import weakref
from typing import Any, Callable, Optional

import numpy as np

from .._array import Array, _new, _WeakArray
from .args import _F32, _F64, _ONE32, _as_f32
from .transformed import TRANSFORMED

_cfg = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)

#: the default of a transform's single positional parameter (``__call__(self, x=NO, /)``):
#: no argument was passed
NO = object()
#: what an entry returns for an argument it does not take (an Array of another
#: dtype): the caller takes its full path. (Entries hold no reference to their
#: transform or function: tables are shared and kept per function, weakly.)
MISS = object()

_SCALARS32 = frozenset({np.float16, np.float32})
_SCALARS64 = _SCALARS32 | {np.float64}


def float_arg(x64: bool) -> Callable[[float], Any]:
    """What a Python float argument becomes in generated code: a float32 scalar
    (float64 with x64). One function for the full call path and the entries."""
    return _F64 if x64 else _as_f32


def enabled() -> bool:
    """Whether entries may be installed now: the full path does no checks that an
    entry would skip."""
    return not (_cfg.checks_enabled or _cfg.debug_nonfinite)


def leaf_entry(
    t: type,
    fn: Callable,
    finish: Callable[[Any], Any],
    finish_weak: Callable[[Any], Any],
    scalar_weak: Optional[type] = None,
) -> Optional[Callable[[Any], Any]]:
    """The entry for one argument of type ``t`` passed on to the generated ``fn``
    as the full path canonicalizes it, or None when ``t``'s canonical form is not
    decided by the type. ``finish`` makes the result of ``fn`` what the call
    returns; ``finish_weak`` does so for a Python float argument (weakly typed
    gradients); an Array or ndarray whose dtype the entry does not take gives
    :data:`MISS`. ``scalar_weak``: the Array class ``finish_weak``
    gives a float32 scalar result, made here without calling it (W3's case)."""
    x64 = _cfg.x64_enabled
    if t is float:
        conv = float_arg(x64)
        if conv is _as_f32 and scalar_weak is not None:

            def float_entry(x: float) -> Any:
                out = fn(_ONE32 * x)  # (_as_f32 inlined)
                if type(out) is _F32:
                    a = _new(scalar_weak)  # (finish_weak inlined)
                    a._buf = out
                    return a
                return finish_weak(out)

            return float_entry
        return lambda x: finish_weak(fn(conv(x)))
    keep = _SCALARS64 if x64 else _SCALARS32  # NumPy scalars canonicalization keeps
    if t in keep:
        return lambda x: finish(fn(x))
    if t is np.float64:  # (narrowed to float32 without x64, as JAX's)
        return lambda x: finish(fn(_F32(x)))
    dtypes = frozenset(np.dtype(k) for k in keep)
    if t is Array:

        def array_entry(x: Any) -> Any:
            b = x._buf
            tb = type(b)
            if tb in keep or (tb is np.ndarray and b.dtype in dtypes):
                return finish(fn(b))
            return MISS

        return array_entry
    if t is np.ndarray:

        def ndarray_entry(x: Any) -> Any:
            if x.dtype in dtypes:
                return finish(fn(x))
            return MISS

        return ndarray_entry
    return None


def typed_float_entry(fn: Callable, finish: Callable[[Any], Any]) -> Callable[[float], Any]:
    """The entry for one Python float argument passed to ``fn``, a specialization
    with JAX's weak types (``grad``'s ``_typed``: its weak results are weakly
    typed Arrays already); ``finish`` makes any other result what the call
    returns."""
    if _cfg.x64_enabled:
        return lambda x: _weak_or(fn(_F64(x)), finish)

    def float_entry(x: float) -> Any:
        return _weak_or(fn(_ONE32 * x), finish)  # (_as_f32 inlined)

    return float_entry


def _weak_or(out: Any, finish: Callable[[Any], Any]) -> Any:
    """``out`` itself when it is a weakly typed Array or a pair of them (value_and_grad
    of a function of weak scalars), else ``finish(out)``."""
    t = type(out)
    if t is _WeakArray:
        return out
    if t is tuple and len(out) == 2 and type(out[0]) is _WeakArray and type(out[1]) is _WeakArray:
        return out
    return finish(out)


#: the tables of entries not kept on a transform object (``jvp``'s, per function)
_TABLES: list = []


def table(t: Any) -> Any:
    """Register ``t`` (a dict-like of entries) to be emptied with the others."""
    _TABLES.append(t)
    return t


#: function -> {options: table}: the tables shared by transforms of one function
#: with the same options (:func:`shared`)
_SHARED = table(weakref.WeakKeyDictionary())


def shared(fn: Any, options: tuple) -> dict:
    """The entry table of the transforms of ``fn`` with ``options`` (every
    option that decides the generated code and how its results are finished),
    or a table of its own when ``fn`` cannot be a weak key."""
    try:
        per = _SHARED.get(fn)
        if per is None:
            per = _SHARED[fn] = {}
    except TypeError:
        return {}
    tab = per.get(options)
    if tab is None:
        tab = per[options] = {}
    return tab


def leaf_buffers(xs: Any, dtypes: frozenset) -> Optional[list]:
    """The buffers of ``xs`` (a call's positional arguments) when each is a float
    scalar, ndarray or Array whose canonical form is itself (a dtype in
    ``dtypes``: float16/float32, and float64 with x64), else None. No Python
    float: its conversion is the full path's."""
    out = []
    for x in xs:
        t = type(x)
        if t is Array:
            x = x._buf
            t = type(x)
        if t is np.ndarray or t in _SCALAR_TYPES:
            if x.dtype not in dtypes:
                return None
            out.append(x)
        else:
            return None
    return out


_SCALAR_TYPES = frozenset({np.float16, np.float32, np.float64})


def leaf_dtypes() -> frozenset:
    """The dtypes :func:`leaf_buffers` takes now."""
    return _LEAF_DTYPES[bool(_cfg.x64_enabled)]


_LEAF_DTYPES = {
    x64: frozenset(np.dtype(k) for k in (_SCALARS64 if x64 else _SCALARS32))
    for x64 in (False, True)
}


def clear() -> None:
    """Empty every table: each transform's and the registered ones
    (``srcjax.clear_caches``, and every option change)."""
    for t in list(TRANSFORMED):
        tab = getattr(t, "_fast", None)
        if tab:
            tab.clear()
    for tab in _TABLES:
        tab.clear()


def _invalidate(name: str, value: Any) -> None:
    clear()  # (config.on_change)


_cfg.on_change(_invalidate)
