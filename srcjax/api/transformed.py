"""The base class of srcjax's transformed functions (:class:`Transformed`: the
wrapped function, its signature, the per-function cache of transformed
objects, the registry of live ones) and the fixed-arity wrappers
:func:`fixed_arity` and :func:`keywords_bound`, which give a function (or a
primitive) a plain signature the transforms can read, defaults filled in."""

from __future__ import annotations

import functools
import linecache
import threading
import types
import weakref
from typing import Any, Callable, Dict, Tuple

from ..codegen import emit
from ..frontend.normalize import _static_callable
from ..frontend.source import unwrap_callable

_TRANSFORM_CACHE: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_CACHE_LOCK = threading.Lock()


def _missing_defaults(fun: Any, nargs: int) -> dict:
    """The default values of ``fun``'s parameters after the first ``nargs`` (and
    after its bound arguments), when the call leaves them out: ``{name: value}``;
    empty when nothing is missing or ``fun`` is not a plain Python function."""
    if isinstance(fun, Transformed):
        # grad(f) keeps f's defaults: look through it (hessian = jacfwd(grad(f)))
        inner = getattr(fun, "_pyfn", None)
        if not isinstance(inner, types.FunctionType) or getattr(fun, "_bound", ()):
            return {}
        if getattr(fun, "_bound_kwargs", None):
            return {}
        fun = inner
    if hasattr(fun, "__srcjax_wrapped__"):
        return {}
    try:
        py, bargs, bkw = unwrap_callable(fun)
    except Exception:  # noqa: BLE001 - reported later with a better message
        return {}
    code = getattr(py, "__code__", None)
    if code is None:
        return {}
    params = code.co_varnames[: code.co_argcount]
    defaults = py.__defaults__ or ()
    given = len(bargs) + nargs
    first_default = len(params) - len(defaults)
    missing = [p for p in params[given:] if p not in bkw]
    if not missing or any(params.index(p) < first_default for p in missing):
        return {}
    return {p: defaults[params.index(p) - first_default] for p in missing}


_PRIM_FILE = "<srcjax primitive "


def _fresh_names(base: str, count: int, taken: set) -> list:
    """``base_0 ... base_{count-1}``, each lengthened with ``_`` until it is not in
    ``taken`` (another parameter's name)."""
    out = []
    for i in range(count):
        name = f"{base}_{i}"
        while name in taken:
            name += "_"
        taken.add(name)
        out.append(name)
    return out


def fixed_arity(pyfn: Any, nargs: int, keywords: bool = True) -> Any:
    """``pyfn`` itself, or, when it takes ``*args`` (``jnp.atleast_2d(*arys)``,
    ``jnp.gradient(f, *varargs, axis=None)``, a user's ``lambda *xs: ...``, or
    the stand-in of a primitive such as ``jnp.meshgrid(*xi)``), a plain function
    of ``nargs`` positional parameters that calls it: the root of transformed
    code has fixed parameters (a call inlines ``*args`` as a tuple), and the
    transforms key their generated code on the number of arguments already.

    Keyword-only parameters and defaults are kept (``jit(jnp.gradient)(x,
    axis=0)``); with ``keywords=False`` (transforms that take no keyword-only
    parameters: vmap, jvp, vjp, jacfwd ...) they keep their defaults inside the
    wrapper instead. One wrapper per ``(pyfn, nargs, keywords)``, kept on ``pyfn``."""
    code = getattr(pyfn, "__code__", None)
    if code is None:
        return pyfn
    prim = varkw = None
    if code.co_filename.startswith(_PRIM_FILE):
        from ..primitives.registry import REGISTRY

        prim = REGISTRY.get(code.co_filename[len(_PRIM_FILE) : -1])
        if prim is None:
            return pyfn
        sig = list(prim.signature.parameters.values())
        pos = [p.name for p in sig if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        var = [p.name for p in sig if p.kind == p.VAR_POSITIONAL]
        # the stand-in takes the required parameters only: the call decides the rest
        if nargs <= code.co_argcount or (not var and nargs > len(pos)):
            return pyfn
        kwonly: list = []
    else:
        if not code.co_flags & 0x04 and (
            keywords or not code.co_kwonlyargcount or code.co_flags & 0x08
        ):
            return pyfn  # no *args (keyword-only parameters: where they are not taken)
        pos = list(code.co_varnames[: code.co_argcount])
        kwonly = list(
            code.co_varnames[code.co_argcount : code.co_argcount + code.co_kwonlyargcount]
        )
        var = []
        if code.co_flags & 0x04:
            var = [code.co_varnames[code.co_argcount + code.co_kwonlyargcount]]
        if not keywords:
            kwonly = []
        elif code.co_flags & 0x08:
            # `def f(*args, **kw)`: the wrapper forwards `**kw` too, and
            # keywords_bound makes the call's keywords its parameters
            varkw = code.co_varnames[code.co_argcount + code.co_kwonlyargcount + len(var)]
    cache = pyfn.__dict__.setdefault("_srcjax_fixed_arity", {})
    fn = cache.get((nargs, keywords))
    if fn is not None:
        return fn
    if nargs <= len(pos):
        params = pos if prim is None else pos[: max(nargs, code.co_argcount)]
        extra: list = []
    else:
        params = list(pos)
        extra = _fresh_names(var[0] if var else "arg", nargs - len(pos), set(pos) | set(kwonly))
    target = prim.public if prim is not None else "_srcjax_varargs_target"
    call_args = ", ".join(params + extra + [f"{k}={k}" for k in kwonly])
    header = ", ".join(params + extra + (["*"] + kwonly if kwonly else []))
    if varkw:
        call_args += f", **{varkw}" if call_args else f"**{varkw}"
        header += f", **{varkw}" if header else f"**{varkw}"
    name = code.co_name if code.co_name.isidentifier() else "varargs_fn"
    text = f"def {name}({header}):\n    return {target}({call_args})\n"
    filename = (
        f"<srcjax {nargs} arguments of {code.co_name} {id(pyfn):x}{'' if keywords else ' p'}>"
    )
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = dict(emit.namespaces()) if prim is not None else {"_srcjax_varargs_target": pyfn}
    exec(compile(text, filename, "exec"), ns)
    fn = ns[name]
    if not extra and prim is None:
        fn.__defaults__ = pyfn.__defaults__
    if kwonly and pyfn.__kwdefaults__:
        fn.__kwdefaults__ = dict(pyfn.__kwdefaults__)
    fn.__doc__ = pyfn.__doc__
    cache[nargs, keywords] = fn
    return fn


def keywords_bound(pyfn: Any, names: Any) -> Any:
    """``pyfn`` itself, or, when it takes ``**kwargs``, a plain function taking
    those of ``names`` (a call's keywords) that are no parameter of ``pyfn`` as
    keyword-only parameters and calling ``pyfn`` with them: the root of
    transformed code has named parameters (an inlined call binds ``**kwargs`` to a
    dict of its extra keywords). One wrapper per ``(pyfn, extra names)``."""
    code = getattr(pyfn, "__code__", None)
    if code is None or not code.co_flags & 0x08:
        return pyfn
    n = code.co_argcount + code.co_kwonlyargcount
    own = set(code.co_varnames[:n])
    extra = tuple(sorted(k for k in names if k not in own))  # (none: kwargs is {})
    cache = pyfn.__dict__.setdefault("_srcjax_keywords_bound", {})
    fn = cache.get(extra)
    if fn is not None:
        return fn
    pos = list(code.co_varnames[: code.co_argcount])
    kwonly = list(code.co_varnames[code.co_argcount : n])
    if code.co_flags & 0x04:  # (*args as well: not a root parameter)
        return pyfn
    header = ", ".join(pos + (["*"] + kwonly + list(extra) if kwonly or extra else []))
    call = ", ".join(pos + [f"{k}={k}" for k in kwonly + list(extra)])
    name = code.co_name if code.co_name.isidentifier() else "kwargs_fn"
    text = f"def {name}({header}):\n    return _srcjax_kwargs_target({call})\n"
    filename = f"<srcjax keywords {','.join(extra)} of {code.co_name} {id(pyfn):x}>"
    linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
    ns = {"_srcjax_kwargs_target": pyfn}
    exec(compile(text, filename, "exec"), ns)
    fn = ns[name]
    fn.__defaults__ = pyfn.__defaults__
    fn.__kwdefaults__ = dict(pyfn.__kwdefaults__ or {})
    fn.__doc__ = pyfn.__doc__
    cache[extra] = fn
    return fn


#: ``fn -> callable``: the specialization of ``fn`` (a transform object or generated
#: function) with JAX's weak types for each call's signature
#: (:class:`srcjax.jit_api.jitted._WeakTyped`, which sets it: this layer imports no jit)
WEAK_TYPED: Dict[str, Any] = {}


class Untypeable(Exception):
    """The specialization with JAX's weak types of a call (``grad`` of a Python
    float, :class:`srcjax.jit_api.jitted._WeakTyped`) could not be built: code
    jit cannot transform again, or a bad call, which the caller's own path
    reports. The caller runs its own code instead, with NumPy's types."""


#: every transformed function alive (``srcjax.clear_caches`` empties their caches)
TRANSFORMED: "weakref.WeakSet[Transformed]" = weakref.WeakSet()


class Transformed:
    """A function transformed by srcjax; calls dispatch to generated code.

    The generated code is specialized on which arguments are pytrees (containers)
    and which are leaves; all else is decided at run time by NumPy.
    """

    kind = "transform"

    def __init__(self, fun: Callable) -> None:
        self.fun = fun
        self._cache: Dict[Tuple, Any] = {}
        TRANSFORMED.add(self)  # (srcjax.clear_caches)
        self._lock = threading.Lock()
        try:
            functools.update_wrapper(self, fun, updated=())  # never share __dict__ (caches)
        except (AttributeError, TypeError):  # partials and callables without names
            pass
        self.__srcjax_transform__ = self.kind

    def _check_jit_args(self, args: tuple, kwargs: dict) -> None:
        """The argument checks of a call (integer inputs to grad ...), for ``jit``,
        which calls the generated code directly: once per specialization, as the
        dtypes are part of its key. Subclasses that check their inputs override it."""

    # subclasses: _build(kinds) -> python function
    def _generated(self, kinds: Tuple[str, ...]):
        fn = self._cache.get(kinds)
        if fn is None:
            with self._lock:
                fn = self._cache.get(kinds)
                if fn is None:
                    fn = self._build(kinds)
                    self._cache[kinds] = fn
        return fn

    def _cache_size(self) -> int:
        return len(self._cache)

    def _default_values(self, nargs: int) -> tuple:
        """Values of the parameters a call with ``nargs`` arguments leaves to their
        defaults (passed explicitly to generated code); looked up once per ``nargs``."""
        cache = self.__dict__.setdefault("_defaults_by_nargs", {})
        vals = cache.get(nargs)
        if vals is None:
            vals = cache[nargs] = tuple(_missing_defaults(self.fun, nargs).values())
        return vals

    def _function_defaults(self, nargs: int) -> tuple:
        """:meth:`_default_values` when one of them is a function (then the call
        passes them all, see api._kind), else ``()``; decided once per ``nargs``."""
        cache = self.__dict__.setdefault("_fn_defaults_by_nargs", {})
        vals = cache.get(nargs)
        if vals is None:
            missing = self._default_values(nargs)
            vals = missing if any(_static_callable(v) for v in missing) else ()
            cache[nargs] = vals
        return vals

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)


def _resolve_target(fun: Any, kinds: Tuple[str, ...]):
    """The Python function (with source) to transform, plus bound leading args."""
    if isinstance(fun, Transformed):
        return fun._generated(kinds), (), {}
    pyfn, bargs, bkwargs = unwrap_callable(fun)
    return pyfn, bargs, bkwargs
