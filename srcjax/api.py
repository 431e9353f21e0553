"""Public transformations: thin wrappers that build, cache and call generated code."""

from __future__ import annotations

import collections
import functools
import importlib
import linecache
import threading
import types
import weakref
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from . import dtypes
from ._array import Array as _Array
from ._array import unwrap_args as _unwrap_args
from ._array import unwrap_kwargs as _unwrap_kwargs
from ._array import unwrap_tree as _unwrap_tree
from ._array import wrap as _wrap
from ._array import wrap_tree as _wrap_tree
from .codegen import diskcache, emit
from .driver import Generated, transform
from .errors import NonDifferentiableError, TransformTypeError, TransformValueError
from .frontend import nodes as N
from .frontend.normalize import (
    ClassKind,
    _static_callable,
    dependencies_valid,
    type_tree,
)
from .frontend.source import get_source, unwrap_callable
from .transforms.reverse import reverse
from .tree_util import _sorted_keys, tree_leaves

_cfg = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)

__all__ = ["grad", "value_and_grad", "source", "Transformed"]


def _x64() -> bool:
    return _cfg.x64_enabled


_TREE_TYPES = (dict, list, tuple)
_LEAF1 = ("leaf",)
_F32 = np.float32
_F64 = np.float64
_ONE32 = np.float32(1.0)
if (_ONE32 * 1.0).dtype == np.float32:  # NumPy >= 2 (NEP 50): a Python float is weak

    def _as_f32(x: float) -> np.float32:
        """``np.float32(x)`` in a quarter of the time (one scalar multiply)."""
        return _ONE32 * x

else:  # pragma: no cover - NumPy 1.x promotes float32 * float to float64
    _as_f32 = np.float32


def _writeable(x: Any) -> Any:
    """``x`` with read-only arrays (broadcast views), also in tuples, namedtuples,
    lists and dicts, replaced by copies; dicts (and defaultdicts) in sorted key
    order, as JAX's outputs (see tree_util._jax_dict_order)."""
    t = type(x)
    if t is _F32 or t is _F64:
        return _wrap(x)  # the common scalar case first (W3's per-call cost)
    if t is np.ndarray:
        return _wrap_tree(x if x.flags.writeable else x.copy())
    if isinstance(x, tuple):
        items = [_writeable(v) for v in x]
        if all(a is b for a, b in zip(items, x)):
            return x
        return t(*items) if hasattr(x, "_fields") else t(items)
    if t is list:
        return [_writeable(v) for v in x]
    if t is dict or t is collections.defaultdict:
        keys = _sorted_keys(x) if len(x) > 1 else tuple(x)
        items = {k: _writeable(x[k]) for k in keys}
        return items if t is dict else collections.defaultdict(x.default_factory, items)
    return _wrap_tree(x)


def _kind(x: Any) -> str:
    """``"leaf"`` or ``"tree"``; for a tree holding instances of registered pytree
    classes, a ``ClassKind`` (equal to ``"tree"``) that carries where they are,
    so generated code can inline their methods (``model(x)``)."""
    if isinstance(x, _TREE_TYPES) or x is None:
        if x is None or not x:
            return "tree"
        ty = type_tree(x)
        return "tree" if ty is None else ClassKind(ty)
    from . import tree_util

    if type(x) in tree_util._REGISTRY:
        return ClassKind(type_tree(x))
    if callable(x) and not isinstance(x, np.ndarray) and _static_callable(x):
        # a function argument (mlp(ws, x, act=jnp.tanh)): calls of it resolve to it,
        # so it is part of the key (another function specializes again)
        return ClassKind(("fn", x))
    if _plain_object(x):
        # an instance of a user class that is no pytree (a bound method's self): a
        # value JAX cannot trace either, known while transforming as a closure is
        # for JAX, so `grad(self.energy)` and `self.k` resolve (user X)
        return ClassKind(("fn", x))
    return "leaf"


def _plain_object(x: Any) -> bool:
    """A user-class instance that is no pytree (normalize.plain_object) and can be
    part of a specialization key (hashable; an unhashable one stays a run-time
    value)."""
    from .frontend.normalize import plain_object

    if not plain_object(x):
        return False
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _canon_leaf(x: Any, wrt: bool) -> Any:
    """JAX's argument canonicalization: Python floats become float32 (float64 with
    x64), float64/int64 arrays are narrowed when x64 is off; an Array is its
    buffer (generated code computes on buffers)."""
    if type(x) is _Array:
        x = x._buf
    if isinstance(x, np.ndarray):
        k = x.dtype.kind
        if not _x64() and x.dtype.itemsize == 8 and k in "fiu":
            return x.astype(np.float32 if k == "f" else np.int32)
        return x
    if isinstance(x, float):
        return np.float64(x) if _x64() else np.float32(x)
    if isinstance(x, complex):  # complex64 unless x64, as JAX
        return np.complex128(x) if _x64() else np.complex64(x)
    if isinstance(x, np.floating) and not _x64() and x.dtype == np.float64:
        return np.float32(x)
    if wrt and isinstance(x, (bool, int, np.integer, np.bool_)):
        if isinstance(x, int) and not isinstance(x, bool):  # a Python int is int32 in JAX
            return np.asarray(x, np.int64 if _x64() else np.int32)
        return np.asarray(x)
    return x


def _check_float(x: Any, argnum: int, what: str = "grad", allow_int: bool = False) -> None:
    dt = getattr(x, "dtype", None)
    if dt is None:
        if isinstance(x, (bool, int)):
            if allow_int:
                return
            dt = np.dtype(np.int32) if not isinstance(x, bool) else np.dtype(bool)
        elif isinstance(x, (float, complex)):
            return
        else:
            raise TransformTypeError(
                f"Argument {argnum} of type {type(x)} is not a valid JAX type: "
                "a differentiated argument must be an array, a Python number or a pytree of them",
                hint="pass a float array, e.g. jnp.asarray(x, jnp.float32)",
            )
    if dt.kind == "V" and dt.name.startswith(("bfloat16", "float8", "float6", "float4")):
        raise TransformTypeError(
            f"srcjax does not support the {dt.name} dtype yet (argument {argnum}): it is an "
            "ml_dtypes extension type that srcjax's dtype rules do not know, so results "
            "would not have JAX's dtypes",
            hint=f"convert it first, e.g. x.astype(np.float32), and back to {dt.name} "
            "after the transformed call if needed",
        )
    if allow_int and dt.kind in "biu":
        return
    if dt.kind not in "fc":
        raise NonDifferentiableError(
            f"{what} requires real- or complex-valued inputs (input dtype that is a sub-dtype "
            f"of np.inexact), but got {dt.name}. (argument {argnum})",
            hint="pass a float array, e.g. jnp.asarray(x, jnp.float32), or keep the integer "
            "values out of the differentiated argument (a closure or another argnum), "
            "or pass allow_int=True to grad (their gradient is then float0 zeros)",
        )


def _map_leaves(fn: Callable, x: Any) -> Any:
    if isinstance(x, dict):
        items = ((k, _map_leaves(fn, v)) for k, v in x.items())
        if isinstance(x, collections.defaultdict):  # keeps its factory, as JAX
            return type(x)(x.default_factory, items)
        return type(x)(items)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_map_leaves(fn, v) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_map_leaves(fn, v) for v in x)
    if x is None:
        return None
    from . import tree_util

    reg = getattr(tree_util, "_REGISTRY", {})
    if type(x) in reg:
        return tree_util.tree_map(fn, x)
    return fn(x)


def _check_leaves(x: Any, argnum: int, what: str = "grad", allow_int: bool = False) -> None:
    """``_check_float`` on every leaf of ``x`` (without rebuilding ``x``: a
    registered class need not accept non-array children)."""
    from . import tree_util

    for v in tree_util.tree_leaves(x):
        _check_float(v, argnum, what, allow_int)


#: python function -> {transform key: generated function}; shared by every
#: transform object, so ``srcjax.grad(f)(x)`` in a loop transforms ``f`` once.
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
    prim = None
    if code.co_filename.startswith(_PRIM_FILE):
        from .primitives.registry import REGISTRY

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


class _Grad(Transformed):
    kind = "grad"

    def __init__(self, fun, argnums, has_aux, with_value, allow_int=False, holomorphic=False):
        super().__init__(fun)
        self.allow_int = bool(allow_int)
        self.holomorphic = bool(holomorphic)
        if isinstance(argnums, (list, tuple)):
            argnums_t = tuple(int(a) for a in argnums)
            self.tuple_out = True
        else:
            argnums_t = (int(argnums),)
            self.tuple_out = False
        if not argnums_t:
            raise TransformValueError("argnums must be non-empty")
        self.argnums = argnums_t
        self.has_aux = has_aux
        self.with_value = with_value
        inner = fun
        bound: tuple = ()
        bkw: dict = {}
        if not isinstance(fun, Transformed):
            inner, bound, bkw = unwrap_callable(fun)
        else:
            # grad(grad(obj.method)): the inner transform's bound arguments
            # (self) come first in its generated code too
            bound = tuple(getattr(fun, "_bound", ()) or ())
            bkw = dict(getattr(fun, "_bound_kwargs", None) or {})
        self._bound = _unwrap_tree(bound)  # (bound Arrays: buffers for generated code)
        self._bound_kwargs = _unwrap_kwargs(bkw)
        self._pyfn = inner
        self._wrt_fixed = None
        if all(a >= 0 for a in argnums_t):
            self._wrt_fixed = tuple(sorted(a + len(bound) for a in argnums_t))
        self._fast1 = not bound and not bkw and self._wrt_fixed == (0,) and not holomorphic

    def _build(self, kinds):
        if isinstance(self._pyfn, Transformed):  # (grad(jit(lambda *xs: ...)))
            target = fixed_arity(self._pyfn._generated(kinds), len(kinds))
        else:
            target = fixed_arity(self._pyfn, len(kinds))
        key = (
            self.kind,
            self.argnums,
            self.has_aux,
            self.with_value,
            self.tuple_out,
            len(self._bound),
            kinds,
            self.allow_int,
        )
        per_fn = _TRANSFORM_CACHE.get(target)
        if per_fn is not None and key in per_fn:
            return per_fn[key]
        fn = diskcache.cached(
            key + (self.holomorphic,),
            target,
            f"{getattr(target, '__name__', 'fn')}_{self.kind}",
            lambda: self._transform(target, kinds),
        )
        with _CACHE_LOCK:
            _TRANSFORM_CACHE.setdefault(target, {})[key] = fn
        return fn

    def _transform(self, target, kinds):
        def reverse_pass(stage):
            src, norm = stage.src, stage.norm
            nparams = len(src.node.args.args) - stage.n_kwonly
            argnums = tuple(a + len(self._bound) if a >= 0 else nparams + a for a in self.argnums)
            for a in argnums:
                if not 0 <= a < nparams:
                    raise TransformValueError(
                        f"argnums {self.argnums} out of range for a function of {nparams} "
                        "positional arguments"
                    )
            norm.tuple_wrt = self.tuple_out
            params = [a.id for a in norm.node.args.args]  # as generated code names them
            wrt = [params[a] for a in argnums]
            pkinds = {p: (kinds[i] if i < len(kinds) else "leaf") for i, p in enumerate(params)}
            label = "value_and_grad" if self.with_value else "grad"
            fdef = reverse(
                norm,
                wrt,
                pkinds,
                has_aux=self.has_aux,
                with_value=self.with_value,
                name=f"{src.name}_{label}",
                holomorphic=self.holomorphic,
            )
            if self.allow_int:
                _float0_for_ints(fdef, wrt, self.with_value, self.has_aux)
            return Generated(fdef, f"{label} of", f"with respect to {', '.join(wrt)}")

        return transform(target, kinds, reverse_pass, kwonly=True)

    def __call__(self, *args, **kwargs):
        args = _unwrap_args(args)  # the boundary: generated code computes on buffers
        if kwargs:
            kwargs = _unwrap_kwargs(kwargs)
        if self._fast1 and len(args) == 1 and not kwargs:
            # fast path: one array or float argument, differentiated; the generated
            # function for it exists and calls no user function that could change
            fn = self._cache.get(_LEAF1)
            if fn is not None and not fn.__srcjax_deps__:
                x = args[0]
                t = type(x)
                if t is _F32:
                    out = _writeable(fn(x))
                    return out if not _cfg.checks_enabled else self._checked(out, args)
                if t is float:
                    out = _writeable(fn(_F64(x) if _cfg.x64_enabled else _as_f32(x)))
                    return out if not _cfg.checks_enabled else self._checked(out, args)
                if t is np.ndarray or t is _F64:
                    dt = x.dtype
                    if dt.kind == "f" and (dt.itemsize == 4 or _cfg.x64_enabled):
                        out = _writeable(fn(x))
                        return out if not _cfg.checks_enabled else self._checked(out, args)
        if self._bound:
            args = self._bound + args
        if self._bound_kwargs:
            kwargs = {**self._bound_kwargs, **kwargs}
        if not kwargs:
            # parameters left to a function default (act=jnp.tanh): passed explicitly,
            # so the function is part of the key and its calls resolve to it
            args = args + self._function_defaults(len(args) - len(self._bound or ()))
        n = len(args)
        wrt = self._wrt_fixed
        if wrt is None or wrt[-1] >= n:
            wrt = self._wrt_positions(n)
        x64 = _cfg.x64_enabled
        new_args = list(args)
        kinds = []
        for i, x in enumerate(args):
            t = type(x)
            if t is np.ndarray:
                kinds.append("leaf")
                dt = x.dtype
                if dt.itemsize == 8 and not x64 and dt.kind in "fiu":
                    new_args[i] = x.astype(np.float32 if dt.kind == "f" else np.int32)
                if i in wrt and dt.kind not in "fc":
                    _check_float(new_args[i], i, "grad", self.allow_int)  # (int32 unless x64)
            elif t is float:
                kinds.append("leaf")
                new_args[i] = np.float64(x) if x64 else np.float32(x)
            elif isinstance(x, np.generic):
                kinds.append("leaf")
                dt = x.dtype
                if dt.itemsize == 8 and not x64 and dt.kind in "fiu":
                    new_args[i] = (np.float32 if dt.kind == "f" else np.int32)(x)
                if i in wrt and dt.kind not in "fc":
                    _check_float(new_args[i], i, "grad", self.allow_int)  # (int32 unless x64)
            else:
                k = _kind(x)
                kinds.append(k)
                if i in wrt:
                    # allow_int: Python ints stay weakly typed (a * n is float32)
                    x = _map_leaves(lambda v: _canon_leaf(v, not self.allow_int), x)
                    _check_leaves(x, i, "grad", self.allow_int)
                elif k == "leaf":
                    x = _canon_leaf(x, False)
                new_args[i] = x
        if self.holomorphic:
            for i in wrt:
                _check_complex_leaves(new_args[i])
        key = tuple(kinds)
        fn = self._cache.get(key)
        if fn is None:
            fn = self._generated(key)
        if fn.__srcjax_deps__ and not dependencies_valid(fn.__srcjax_deps__):
            fn = self._rebuild(key)
        if kwargs and fn.__srcjax_renamed__:
            kwargs = {fn.__srcjax_renamed__.get(k, k): v for k, v in kwargs.items()}
        # a broadcast view (grad of jnp.sum) is returned as an ordinary array (g *= 0.5)
        out = _writeable(fn(*new_args, **kwargs))
        return out if not _cfg.checks_enabled else self._checked(out, args)

    def _checked(self, out: Any, args: tuple) -> Any:
        """``jax_enable_checks``: ``out``'s gradients have their primals' shapes
        and dtypes (see :mod:`srcjax._cotangent_check`)."""
        from . import _cotangent_check as cc
        from . import tree_util

        n = len(args)
        pos = [a + len(self._bound) if a >= 0 else n + a for a in self.argnums]
        cts = cc.grad_output_cotangents(out, self.with_value, self.has_aux, self.tuple_out)
        names = [f"argument {a}" for a in self.argnums]
        primals = [_map_leaves(lambda v: _canon_leaf(v, True), args[i]) for i in pos]
        cc.check_cotangents(tree_util, cts, primals, self.kind_label(), names)
        return out

    def kind_label(self) -> str:
        return "value_and_grad" if self.with_value else "grad"

    def _rebuild(self, key):
        """A callee was redefined since this code was generated: transform again."""
        with self._lock:
            self._cache.pop(key, None)
            target = self._pyfn
            if not isinstance(target, Transformed):
                _TRANSFORM_CACHE.pop(target, None)
        return self._generated(key)

    def _check_jit_args(self, args: tuple, kwargs: dict) -> None:
        full = tuple(self._bound or ()) + tuple(args)
        nb = len(full) - len(args)
        for i in sorted(self._wrt_positions(len(full))):
            _check_leaves(full[i], i - nb, "grad", self.allow_int)

    def _wrt_positions(self, n: int) -> frozenset:
        out = set()
        for a in self.argnums:
            i = a + len(self._bound) if a >= 0 else n + a
            if not 0 <= i < n:
                raise TransformValueError(
                    f"argnums {self.argnums} out of range: called with {n - len(self._bound)} "
                    "positional arguments"
                )
            out.add(i)
        return frozenset(out)


def _check_complex_leaves(x: Any) -> None:
    """jax.grad(holomorphic=True)'s check: every differentiated input is complex."""
    for v in tree_leaves(x):
        dt = np.result_type(v)
        if dt.kind != "c":
            raise TransformTypeError(
                f"grad with holomorphic=True requires inputs with complex dtype, but got {dt.name}."
            )


def _unsupported_options(name: str, holomorphic: bool, allow_int: bool, reduce_axes=()) -> None:
    """JAX's keyword arguments srcjax accepts at their defaults only."""
    for opt, on in (("holomorphic", holomorphic), ("allow_int", allow_int)):
        if on:
            raise NotImplementedError(
                f"srcjax.{name}({opt}=True) is not supported yet; JAX's default ({opt}=False) is"
            )
    if reduce_axes:
        raise NotImplementedError(f"srcjax.{name}: reduce_axes is not supported")


def grad(
    fun: Callable,
    argnums: Union[int, Sequence[int]] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable:
    """Gradient of a scalar-valued function, by reverse-mode source transformation.

    Semantics follow ``jax.grad``: ``fun`` must return a real floating scalar
    (else ``TypeError``); differentiated arguments must be floating (integer or
    boolean inputs raise ``TypeError``); ``argnums`` is an int (the gradient has
    that argument's structure) or a tuple (a tuple of gradients); with
    ``has_aux=True``, ``fun`` returns ``(value, aux)`` and the result is
    ``(gradient, aux)``. Arguments may be pytrees (dicts, lists, tuples,
    namedtuples, registered classes); gradients come back in the same structure
    and dtype (float32 unless ``jax_enable_x64``).

    Unlike JAX, ``fun`` may use Python ``if``/``while``/``for`` on array values.

    Args:
        fun: a Python function (or lambda, ``functools.partial``, bound method, or
            another srcjax transform) whose source is available.
        argnums: which positional argument(s) to differentiate.
        has_aux: whether ``fun`` returns a pair ``(value, auxiliary data)``.
        holomorphic: as JAX: ``fun`` maps complex inputs to a complex scalar and the
            result is its complex derivative ``f'(z)`` (inputs and output must be
            complex: TypeError otherwise).
        reduce_axes: accepted empty only (NotImplementedError otherwise).
        allow_int: as JAX: integer or boolean inputs named in ``argnums`` are
            allowed, and their gradient is ``np.zeros(shape, float0)`` (dtype
            ``[('float0', 'V')]``, ``srcjax.api.FLOAT0``; shape ``()`` for Python
            scalars), leaf by leaf inside pytrees; under ``vmap`` it carries the
            batch axis. ``jacrev``/``jacfwd``/``hessian`` still refuse it
            (NotImplementedError).

    Returns:
        A function with ``fun``'s signature returning the gradient.

    Raises:
        srcjax.errors.UnsupportedSyntaxError (a ``NotImplementedError``) for code
        the transform cannot handle; srcjax.errors.NoDerivativeRuleError for calls
        without a rule on the differentiated path; ``TypeError`` as above. Every
        such error names the user's ``file:line:col``.
    """
    _unsupported_options("grad", False, False, reduce_axes)
    return _Grad(
        fun, argnums, has_aux, with_value=False, allow_int=allow_int, holomorphic=holomorphic
    )


def value_and_grad(
    fun: Callable,
    argnums: Union[int, Sequence[int]] = 0,
    has_aux: bool = False,
    holomorphic: bool = False,
    allow_int: bool = False,
    reduce_axes: Sequence[Any] = (),
) -> Callable:
    """``fun``'s value and gradient in one pass (``jax.value_and_grad``).

    Returns a function giving ``(value, grad)``, or ``((value, aux), grad)`` with
    ``has_aux=True``. See :func:`grad` for argument rules (``allow_int``) and
    errors.
    """
    _unsupported_options("value_and_grad", False, False, reduce_axes)
    return _Grad(
        fun, argnums, has_aux, with_value=True, allow_int=allow_int, holomorphic=holomorphic
    )


def source(fn: Callable, *example_args: Any, target: Optional[str] = None) -> str:
    """The generated Python source of a srcjax-transformed function.

    Args:
        fn: the result of ``srcjax.grad`` / ``value_and_grad`` / other transforms,
            or the function ``srcjax.vjp`` / ``linearize`` returned.
        example_args: arguments deciding the specialization (which arguments are
            pytrees); by default every argument is taken to be an array.
        target: for a jitted function, the backend to show the code of
            (``"cpu"``, ``"cuda"``); default: the one the example arguments run
            on. ``"cuda"`` shows the host code and, after it, each kernel's
            CUDA C (no GPU needed).

    Returns:
        The text of the generated module, exactly what runs.

    Raises:
        TransformTypeError: ``target`` given for a function that is not jitted.
    """
    if target is not None:
        for_target = getattr(fn, "_source_for_target", None)
        if for_target is None:
            raise TransformTypeError(
                f"srcjax.source(target={target!r}) needs a jitted function (srcjax.jit)"
            )
        return for_target(target, *example_args)
    inner = fn
    while isinstance(inner, functools.partial):  # (the Arrays boundary wraps a partial)
        inner = inner.func
    if inner is not fn and hasattr(inner, "__srcjax_source__"):
        return inner.__srcjax_source__  # the function vjp/linearize returned
    per_device = getattr(fn, "_pmap_source_for", None)
    if per_device is not None:  # pmap: the program each device runs
        return per_device(*example_args)
    if not isinstance(fn, Transformed):
        raise TransformTypeError(f"srcjax.source expects a transformed function, got {fn!r}")
    example_args = _unwrap_args(example_args)
    specialized = getattr(fn, "_source_for", None)  # jit: specialized on example args
    if specialized is not None:
        return specialized(*example_args)
    if example_args:
        bound = getattr(fn, "_bound", ())
        kinds = tuple(_kind(a) for a in bound + tuple(example_args))
    else:
        kinds = None
        if fn._cache:
            kinds = next(iter(fn._cache))
        else:
            target = fn._pyfn if hasattr(fn, "_pyfn") else fn.fun
            while isinstance(target, Transformed):
                target = target._pyfn if hasattr(target, "_pyfn") else target.fun
            pyfn, bound, _ = unwrap_callable(target)  # (partials, bound methods)
            nparams = len(get_source(pyfn).node.args.args) - len(bound)
            kinds = ("leaf",) * nparams
    return fn._generated(kinds).__srcjax_source__


grad.__srcjax_factory__ = True
value_and_grad.__srcjax_factory__ = True


# --------------------------------------------------------------------------- allow_int
#: JAX's dtype of the gradient of an integer or boolean input (``jax.dtypes.float0``)
FLOAT0 = dtypes.float0


def _is_int_leaf(x: Any) -> bool:
    if isinstance(x, (bool, int, np.bool_, np.integer)):
        return True
    dt = getattr(x, "dtype", None)
    return dt is not None and dt.kind in "biu"


def _int_float0(g: Any, x: Any) -> Any:
    """The gradient ``g`` of input ``x`` with every integer or boolean leaf of
    ``x`` given JAX's ``float0`` gradient: ``np.zeros(shape(leaf), float0)``
    (what ``jax.grad(..., allow_int=True)`` returns for them); floating leaves
    keep their gradient from ``g`` (a pytree of ``x``'s structure, or a leaf)."""
    from . import tree_util

    leaves, td = tree_util.tree_flatten(x)
    if not any(_is_int_leaf(v) for v in leaves):
        return g
    if tree_util.treedef_is_leaf(td):
        return np.zeros(np.shape(x), FLOAT0)
    gs = [None] * len(leaves) if g is None else td.flatten_up_to(g)
    out = [np.zeros(np.shape(v), FLOAT0) if _is_int_leaf(v) else gv for v, gv in zip(leaves, gs)]
    return tree_util.tree_unflatten(td, out)


def _float0_drop(h: Any, g: Any, x: Any) -> Any:
    """The adjoint of :func:`_int_float0` in ``g``: the cotangent ``h`` with the
    leaves at ``x``'s integer positions (``float0``) replaced by zeros of
    ``g``'s leaves there."""
    from . import tree_util

    leaves, td = tree_util.tree_flatten(x)
    if not any(_is_int_leaf(v) for v in leaves):
        return h
    if tree_util.treedef_is_leaf(td):
        return None if g is None else np.zeros_like(g)
    hs = [None] * len(leaves) if h is None else td.flatten_up_to(h)
    gs = [None] * len(leaves) if g is None else td.flatten_up_to(g)
    out = [
        (None if gv is None else np.zeros_like(gv)) if _is_int_leaf(v) else hv
        for v, hv, gv in zip(leaves, hs, gs)
    ]
    return tree_util.tree_unflatten(td, out)


def _register_float0():
    from .primitives.registry import Primitive, register

    f0 = register(Primitive("ad.int_float0", _int_float0, kind="internal"))
    drop = register(Primitive("ad.float0_drop", _float0_drop, kind="internal"))

    def rule(c):
        # the same call on operands all batched (the float0 leaves then carry the
        # batch axis, as JAX's do under vmap)
        if not any(c.batched(p) for p in c.bound):
            return c.rebuild(), False
        return c.rebuild(**{p: c.materialize(c.arg(p)) for p in c.bound})

    for p in (f0, drop):
        p.def_batch(rule)
    return f0, drop


int_float0, float0_drop = _register_float0()


def _int_float0_vjp(h, ans, g, x):
    return float0_drop(h, g, x)


def _int_float0_jvp(t, ans, g, x):
    return int_float0(t, x)


def _float0_drop_vjp(k, ans, h, g, x):
    return int_float0(k, x)


def _float0_drop_jvp(t, ans, h, g, x):
    return float0_drop(t, g, x)


int_float0.def_vjp(g=_int_float0_vjp).def_jvp(g=_int_float0_jvp)
float0_drop.def_vjp(h=_float0_drop_vjp).def_jvp(h=_float0_drop_jvp)
int_float0.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), rng.normal(size=(2, 3))), {}),
    (((rng.normal(size=3), rng.normal(size=2)), (rng.normal(size=3), np.arange(2))), {}),
]
float0_drop.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), rng.normal(size=(2, 3))), {}),
]


def _float0_for_ints(fdef: Any, wrt: Sequence[str], with_value: bool, has_aux: bool) -> None:
    """``allow_int=True``: each gradient in the generated function's final
    ``return`` becomes ``ad.int_float0(gradient, param)``, so integer and
    boolean leaves of the differentiated inputs get ``float0`` zeros at run time
    (the generated code is specialized on pytree structure, not dtypes)."""
    import gast

    ret = fdef.body[-1]
    assert isinstance(ret, gast.Return)
    holder, field = ret, "value"
    if with_value:
        holder, field = ret.value.elts, 1
    elif has_aux:
        holder, field = ret.value.elts, 0
    grads = holder[field] if isinstance(holder, list) else getattr(holder, field)
    if len(wrt) == 1 and not isinstance(grads, gast.Tuple):
        new = N.call("ad.int_float0", [grads, N.name(wrt[0])])
        if isinstance(holder, list):
            holder[field] = new
        else:
            setattr(holder, field, new)
        return
    grads.elts = [N.call("ad.int_float0", [e, N.name(p)]) for e, p in zip(grads.elts, wrt)]
