"""``srcjax.jit``: specialize a function on its abstract signature, optimize its
source, fuse elementwise chains into chunked multi-threaded NumPy, and cache.

Pipeline for one signature (shapes, dtypes, weak types, static values, device)::

    source -> normalize (ANF, inlined calls) -> bind static arguments
           -> propagate / fold constants / infer abstract values / simplify
              (x**3 -> x*x*x ...) / CSE / DCE          (srcjax.transforms.optimize)
           -> fused regions -> backend code             (srcjax.transforms.fusion,
                                                         srcjax.backends: the protocol
                                                         in backends.base; on the CPU
                                                         chunked NumPy, numpy_cpu)
           -> render -> load                            (srcjax.codegen.emit)

A cache hit costs a dictionary lookup keyed by the arguments' shapes and
dtypes (a few microseconds). ``srcjax.source(jitted, *example_args)`` prints
the code for the example arguments' signature.

Differences from ``jax.jit`` (documented, by design):

- There is no tracing: Python ``if``/``while``/``for`` on array values run
  natively in the generated code, at every call. ``print(...)`` prints values
  (not tracers) at every call, and ``breakpoint()`` stops in the generated
  file, which is a real file registered with ``linecache``.
- Global and closure *scalars* are read at every call, but specialization
  assumes they keep their type (a Python float stays a Python float).
- ``donate_argnums``: an output may be written into the donated argument's
  buffer (when shapes and dtypes match and it is C-contiguous); reading a
  donated array afterwards gives undefined contents, as in JAX (where it
  raises).
- Composition: ``jit(grad(f))`` transforms grad's generated source like any
  user function. Other transforms of a jitted function (``grad(jit(f))``, or a
  jitted function called inside a function being differentiated) *see through*
  jit to the original function: jit is an identity for them, and the result is
  not re-specialized (apply ``jit`` outermost for speed).
- Dtypes: the generated code computes what the eager primitives (JAX)
  compute. Operators are emitted as NumPy operators, and where NumPy's
  promotion differs from JAX's for the specialized abstract values
  (``int32 / 2``, ``int32 * 1.5``, ``int32 + float32``; a Python float argument,
  weakly typed) the operands are converted first
  (:func:`srcjax.transforms.optimize.promote`); elsewhere the code is plain.
- Outputs are never (views of) non-donated arguments: ``jit(lambda a: a)(x)``
  returns a copy of ``x``, as JAX arrays are immutable and NumPy arrays are
  not. Python scalar results become NumPy scalars of the default dtype.
- Outputs of large fused regions live in pooled buffers (see
  :mod:`srcjax.backends.runtime`): ``srcjax.backends.runtime.clear_pool()``
  returns idle memory to the system.
"""

from __future__ import annotations

import collections
import functools
import importlib
import inspect
import threading
import types
import weakref
from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import gast
import numpy as np

from . import backends, dtypes, tree_util
from ._array import unwrap_args, unwrap_kwargs, unwrap_tree, wrap, wrap_tree
from ._prng_key import PRNGKeyArray
from .api import Transformed, _as_f32, _kind, fixed_arity, keywords_bound
from .backends import _devices
from .codegen import diskcache, emit
from .driver import Generated, header, transform
from .errors import TransformValueError
from .frontend.normalize import ClassKind, dependencies_valid
from .frontend.source import unwrap_callable
from .transforms import optimize as opt

_cfg = importlib.import_module("srcjax.config")

__all__ = ["jit"]

_WEAK = {float: ("weak", "float"), int: ("weak", "int"), bool: ("weak", "bool")}
_F32 = np.float32
_F64 = np.float64


def _static_key(x: Any) -> tuple:
    try:
        hash(x)
    except TypeError as e:
        raise TransformValueError(
            "Non-hashable static arguments are not supported. An error occurred while "
            f"trying to hash an object of type {type(x)}, {x!r}. The error was:\n"
            f"TypeError: {e}",
            hint="pass a tuple instead of a list or array, or make the argument non-static",
        ) from None
    return ("static", type(x), x)


def _canon(x: Any, x64: bool) -> Tuple[Any, Any]:
    """(canonical argument, its key): JAX's argument canonicalization (float64 ->
    float32 without x64; a Python float becomes a float32 scalar that remembers
    it was weakly typed)."""
    t = type(x)
    if t is np.ndarray:
        dt = x.dtype
        if not x64 and dt.itemsize == 8 and dt.kind in "fiu":
            if dt.kind != "f":
                dtypes.check_int32_range(x)
            x = x.astype(np.float32 if dt.kind == "f" else np.int32)
            dt = x.dtype
        return x, (x.shape, dt)
    if t is float:
        return (np.float64(x) if x64 else np.float32(x)), _WEAK[float]
    if t is int or t is bool:
        if t is int and not x64:
            dtypes.check_int32_range(x)
        return x, _WEAK[t]
    if isinstance(x, np.generic):
        dt = x.dtype
        if not x64 and dt.itemsize == 8 and dt.kind in "fiu":
            x = (np.float32 if dt.kind == "f" else np.int32)(x)
        return x, ((), x.dtype)
    if _devices.is_device_array(x):  # a GPU array: its device is part of the key
        dt = x.dtype
        if not x64 and dt.itemsize == 8 and dt.kind in "fiu":
            x = x.astype(np.float32 if dt.kind == "f" else np.int32)
        return x, ("gpu", int(x.device.id), tuple(x.shape), np.dtype(x.dtype))
    if isinstance(x, dict):
        items = [(k, _canon(v, x64)) for k, v in x.items()]
        keys = tuple((k, v[1]) for k, v in items)
        if isinstance(x, collections.defaultdict):  # (its factory comes first)
            kind = ("dict", type(x), x.default_factory)
        else:
            kind = ("dict", type(x))
        if all(v[0] is x[k] for k, v in items):
            return x, kind + (keys,)  # nothing canonicalized: the dict as it is
        pairs = ((k, v[0]) for k, v in items)
        if isinstance(x, collections.defaultdict):
            new = type(x)(x.default_factory, pairs)
        else:
            new = type(x)(pairs)
        return new, kind + (keys,)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        items = [_canon(v, x64) for v in x]
        return type(x)(*[v[0] for v in items]), ("tuple", type(x), tuple(v[1] for v in items))
    if isinstance(x, (list, tuple)):
        items = [_canon(v, x64) for v in x]
        return type(x)(v[0] for v in items), ("seq", type(x), tuple(v[1] for v in items))
    if x is None:
        return x, None
    if type(x) in tree_util._REGISTRY:
        # a registered pytree class: the generated code inlines its methods, which
        # depend on its static fields and callables (the type tree), not only its type
        return x, ("class", _kind(x))
    if isinstance(x, PRNGKeyArray):  # a typed key: its shape, as an array's
        return x, ("key", x.shape, x._impl)
    if isinstance(x, (str, bytes)):
        raise TypeError(
            f"jit: an argument of type {type(x).__name__} ({x!r:.40}) is not an array; "
            "mark it static (static_argnums / static_argnames), as in JAX"
        )
    return x, ("object", type(x))


def _aval_tree(x: Any, weak_key: Any = None) -> Any:
    """Abstract value (or pytree of them) of a canonical argument."""
    if weak_key is not None and weak_key[0] == "weak":
        if weak_key[1] == "float":  # a Python float, now a float32 scalar: weak
            return opt.Aval.of(1.0)  # (held boxed: see optimize.promote)
        return opt.Aval.of(x)
    if isinstance(x, (np.ndarray, np.generic)):
        return opt.Aval(np.shape(x), x.dtype)
    if isinstance(x, (bool, int, float)):
        return opt.Aval.of(x)
    if _devices.is_device_array(x):
        return opt.Aval(tuple(x.shape), x.dtype)
    if isinstance(x, dict):
        return {k: _aval_tree(v) for k, v in x.items()}
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        return tuple(_aval_tree(v) for v in x)
    if isinstance(x, tuple):  # a named tuple (optimizer state): its fields by name too
        try:
            return type(x)(*[_aval_tree(v) for v in x])
        except TypeError:
            return None
    if isinstance(x, list):
        return [_aval_tree(v) for v in x]
    return None


def _describe(x: Any) -> str:
    if _devices.is_device_array(x):
        return f"{np.dtype(x.dtype).name}[{','.join(map(str, x.shape))}] on gpu:{x.device.id}"
    if isinstance(x, PRNGKeyArray):
        return f"{x.dtype}[{','.join(map(str, x.shape))}]"
    if isinstance(x, (np.ndarray, np.generic)):
        return f"{np.dtype(x.dtype).name}[{','.join(map(str, np.shape(x)))}]"
    if isinstance(x, dict) and type(x) is dict and len(x) <= 8:
        # a parameter dict: its structure, as srcjax show --args describes it
        return (
            "{" + ", ".join(f"{k!r}: {_describe(v)}" for k, v in sorted(x.items(), key=str)) + "}"
        )
    if type(x) in (list, tuple) and len(x) <= 8:
        inner = ", ".join(_describe(v) for v in x)
        return f"[{inner}]" if type(x) is list else f"({inner}{',' if len(x) == 1 else ''})"
    return type(x).__name__


class _Jit(Transformed):
    kind = "jit"

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, device):
        super().__init__(fun)
        self._options = (static_argnums, static_argnames, donate_argnums)
        self._specs: Dict[tuple, Callable] = {}
        self._sources: Dict[tuple, str] = {}
        self._build_lock = threading.Lock()
        self._builds = 0
        self._device = None if device is None else str(device)
        self._device_obj = device  # its platform picks the backend (srcjax.backends)
        try:
            sig: Optional[inspect.Signature] = inspect.signature(fun)
        except (TypeError, ValueError):
            sig = None
        params = list(sig.parameters.values()) if sig is not None else []
        names = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        self._param_names = names
        # positional parameters with a default: a static one may be left out
        self._defaults = frozenset(
            i for i, p in enumerate(params[: len(names)]) if p.default is not p.empty
        )
        nums = _as_tuple(static_argnums)
        anames = _as_tuple(static_argnames)
        for a in anames:
            if not isinstance(a, str):
                raise TransformValueError(f"static_argnames must be strings, got {a!r}")
        if sig is not None:
            _validate_argnames(params, anames, "static_argnames")
        pos = set()
        for i in nums:
            i = int(i)
            if i < 0:
                if not names:
                    raise TransformValueError("negative static_argnums need a known signature")
                i += len(names)
            pos.add(i)
        snames = set(anames)
        for i in pos:
            if i < len(names):
                snames.add(names[i])
        for n in anames:
            if n in names:
                pos.add(names.index(n))
        varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
        if sig is not None and not varargs and any(i >= len(names) for i in pos):
            raise ValueError(
                f"Jitted function has static_argnums={tuple(sorted(pos))}, but only accepts "
                f"{len(names)} positional arguments."
            )
        self._static_pos = frozenset(pos)
        self._static_names = frozenset(snames)
        dn = set()
        for i in _as_tuple(donate_argnums):
            i = int(i)
            dn.add(i + len(names) if i < 0 else i)
        self._donate_pos = frozenset(dn)

    # -- composition: other transforms see through jit ---------------------------
    @property
    def __srcjax_wrapped__(self):
        if isinstance(self.fun, Transformed):
            raise AttributeError("__srcjax_wrapped__")
        return self.fun

    @property
    def _bound(self) -> tuple:
        """The leading arguments bound into the jitted callable (a bound method's
        self, a partial's arguments): the other transforms pass them before their
        own, as for grad(obj.method) (vmap(jit(s.force)))."""
        if isinstance(self.fun, Transformed):
            return tuple(getattr(self.fun, "_bound", ()) or ())
        try:
            return tuple(unwrap_callable(self.fun)[1])
        except Exception:  # noqa: BLE001 - reported when it is transformed
            return ()

    def _generated(self, kinds):
        """The function other transforms read: jit is transparent to them."""
        if isinstance(self.fun, Transformed):
            return self.fun._generated(kinds)
        return fixed_arity(unwrap_callable(self.fun)[0], len(kinds))

    def _cache_size(self) -> int:
        return len(self._specs)

    # -- calling -------------------------------------------------------------------
    def _key(self, args: tuple, kwargs: dict) -> Tuple[tuple, tuple, dict]:
        x64 = _cfg.x64_enabled
        static = self._static_pos
        # (a static argument left out takes its default; a missing one without a
        # default fails when the call is bound, with Python's TypeError)
        keys = []
        new_args = None
        for i, x in enumerate(args):
            if i in static:
                keys.append(_static_key(x))
                continue
            if type(x) is np.ndarray:
                dt = x.dtype
                if x64 or dt.itemsize != 8 or dt.kind not in "fiu":
                    keys.append((x.shape, dt))
                    continue
            try:
                y, k = _canon(x, x64)
            except TypeError as e:  # (a str argument: name the parameter, as JAX does)
                raise TypeError(self._argument_error(e, i, None)) from None
            keys.append(k)
            if y is not x:
                if new_args is None:
                    new_args = list(args)
                new_args[i] = y
        if new_args is not None:
            args = tuple(new_args)
        kw_key = ()
        if kwargs:
            items = []
            new_kw = {}
            for k in sorted(kwargs):
                v = kwargs[k]
                if k in self._static_names:
                    items.append((k, _static_key(v)))
                    new_kw[k] = v
                else:
                    try:
                        y, kk = _canon(v, x64)
                    except TypeError as e:
                        raise TypeError(self._argument_error(e, None, k)) from None
                    items.append((k, kk))
                    new_kw[k] = y
            kwargs = new_kw
            kw_key = tuple(items)
        return (tuple(keys), kw_key, x64, self._device), args, kwargs

    def _argument_error(self, error: TypeError, index, name) -> str:
        """``error`` (an argument that is no array) naming the parameter it was
        passed to: ``jit(f)(x, "fast")`` says ``kind``, as JAX names the path."""
        if name is None and index is not None and index < len(self._param_names):
            name = self._param_names[index]
        fname = getattr(self.fun, "__name__", "the function")
        where = f"parameter `{name}`" if name else f"positional argument {index}"
        return f"{error} (passed to {where} of {fname})"

    def __call__(self, *args, **kwargs):
        args = unwrap_args(args)  # the boundary: generated code computes on buffers
        if kwargs:
            kwargs = unwrap_kwargs(kwargs)
        if _cfg.jit_disabled:  # srcjax.disable_jit(): the function as written
            return self.fun(*args, **kwargs)
        fn = None
        if len(args) == 1 and not kwargs and not self._static_pos:
            # fast path (W3's per-call cost): one float or float32 array argument
            # whose specialization exists; the key is the one _key would build
            x = args[0]
            t = type(x)
            x64 = _cfg.x64_enabled
            if t is float:
                fn = self._specs.get(((_WEAK[float],), (), x64, self._device))
                if fn is not None:
                    cargs = ((_F64(x) if x64 else _as_f32(x)),)
            elif t is np.ndarray or t is _F32:
                dt = x.dtype
                if dt.itemsize == 4 or (x64 and dt.itemsize == 8):
                    fn = self._specs.get((((x.shape, dt),), (), x64, self._device))
                    if fn is not None:
                        cargs = args
            if fn is not None:
                if fn.__srcjax_deps__ and not dependencies_valid(fn.__srcjax_deps__):
                    fn = None  # a helper it inlined was redefined: the general path
                else:
                    out = fn(*cargs)
                    ckwargs = kwargs
        if fn is None:
            key, cargs, ckwargs = self._key(args, kwargs)
            fn = self._specs.get(key)
            if fn is not None and fn.__srcjax_deps__ and not dependencies_valid(fn.__srcjax_deps__):
                # a user function inlined into this specialization was redefined
                # (a notebook cell run again): specialize again, as grad does
                with self._build_lock:
                    if self._specs.get(key) is fn:
                        del self._specs[key]
                fn = None
            if fn is None:
                fn = self._specialize(key, cargs, ckwargs)
            out = fn(*cargs, **ckwargs)
        if _cfg.checks_enabled and isinstance(self.fun, Transformed):
            from ._cotangent_check import check_transform_output

            check_transform_output(self.fun, out, args, kwargs)
        t = type(out)
        if t is np.ndarray:
            if (
                out.base is None
                and (out.dtype.itemsize < 8 or _cfg.x64_enabled)
                and not _is_input(out, args, kwargs)
            ):
                return wrap(out)  # the common case: a fresh array of a 32-bit dtype
        elif t in _NUMPY_SCALARS and (t not in _WIDE_SCALARS or _cfg.x64_enabled):
            return wrap(out)  # immutable: nothing to unalias
        elif _devices.is_device_array(out):  # one GPU array (the CUDA backend's result)
            if any(out is a for a in args) or any(out is v for v in kwargs.values()):
                return out.copy()  # (jit(lambda a: a): a new array, as JAX's outputs)
            return out
        return _unalias(out, args, kwargs, self._donate_pos)

    def _specialize(self, key, args, kwargs):
        with self._build_lock:
            fn = self._specs.get(key)
            if fn is None:
                fn, text = self._build(key, args, kwargs)
                self._sources[key] = text
                self._specs[key] = fn
                self._builds += 1
        return fn

    def lower(self, *args, **kwargs):
        """``jit(f).lower(*args)``: the :class:`srcjax.Lowered` program for these
        arguments' shapes, dtypes and static values (``.as_text()`` is the
        generated source, ``.compile()`` the callable stage)."""
        from ._stages import Lowered

        return Lowered(self, self._source_for(*args, **kwargs))

    def trace(self, *args, **kwargs):
        """``jit(f).trace(*args)``: a :class:`srcjax.Traced` (``.jaxpr`` is the
        generated program, ``.out_info`` the output's shapes, ``.lower()``)."""
        from ._stages import GeneratedProgram, Traced
        from .extras import ShapeDtypeStruct, eval_shape

        def in_avals():
            out = []
            for leaf in tree_util.tree_leaves((args, kwargs)):
                dt = leaf.dtype if hasattr(leaf, "dtype") else dtypes.dtype_of(leaf)
                out.append(ShapeDtypeStruct(tuple(np.shape(leaf)), dt))
            return out

        program = GeneratedProgram(
            self._source_for(*args, **kwargs), in_avals, lambda: eval_shape(self, *args, **kwargs)
        )
        return Traced(self, program)

    def eval_shape(self, *args, **kwargs):
        """``jit(f).eval_shape(*args)``: :func:`srcjax.eval_shape` of ``f``."""
        from .extras import eval_shape

        return eval_shape(self, *args, **kwargs)

    def _source_for(self, *example_args, **example_kwargs) -> str:
        """The specialized source for the example arguments' signature
        (``srcjax.source(jitted, *example_args)``)."""
        if not example_args and not example_kwargs:
            if self._sources:
                return next(reversed(self._sources.values()))
            raise TypeError(
                "jit specializes on the shapes and dtypes of its arguments: pass example "
                "arguments (srcjax.source(jitted, x, ...), or srcjax show ... --jit "
                "--args 'f32[3]' ...)"
            )
        example_args, example_kwargs = unwrap_args(example_args), unwrap_kwargs(example_kwargs)
        key, args, kwargs = self._key(example_args, example_kwargs)
        self._specialize(key, args, kwargs)
        return self._sources[key]

    def _source_for_target(self, target: str, *example_args, **example_kwargs) -> str:
        """``srcjax.source(jitted, *args, target=...)``: the code this function
        would run on backend ``target`` (``"cpu"``, ``"cuda"``/``"gpu"``), built
        for that backend's device whether or not one is present; for CUDA the
        host code followed by each kernel's CUDA C."""
        t = str(target).lower()
        if t in ("cuda", "gpu"):
            device: Any = _devices.CudaDevice(0)
        elif t == "cpu":
            device = _devices.CPU
        else:
            raise ValueError(f"srcjax.source: unknown target {target!r} (cpu or cuda)")
        other = _Jit(self.fun, *self._options, device)
        text = other._source_for(*example_args, **example_kwargs)
        if t == "cpu":
            return text
        parts = [text]
        for name, src in backends.get("cuda").kernel_sources(text):
            parts.append(f"\n// ---- CUDA kernel {name} ----\n{src.strip()}\n")
        return "".join(parts)

    # -- building ------------------------------------------------------------------
    def _build(self, key, args, kwargs):
        kinds = tuple(_kind(a) for a in args)
        if isinstance(self.fun, Transformed):
            self.fun._check_jit_args(args, kwargs)  # jit(grad(f)) of ints: TypeError
            # grad(obj.method): the transform's bound arguments come first
            fb = tuple(getattr(self.fun, "_bound", ()) or ())
            kinds = tuple(_kind(a) for a in fb) + kinds
            if not kwargs and hasattr(self.fun, "_function_defaults"):
                # a function default (act=jnp.tanh) specializes the transform, as
                # when it is called directly (api._Grad.__call__)
                kinds = kinds + tuple(_kind(v) for v in self.fun._function_defaults(len(args)))
            bkw = dict(getattr(self.fun, "_bound_kwargs", None) or {})
            target, bargs = self.fun._generated(kinds), fb
            inner = getattr(target, "__srcjax_deps__", ())
            if inner and not dependencies_valid(inner) and hasattr(self.fun, "_rebuild"):
                target = self.fun._rebuild(kinds)
        else:
            target, bargs, bkw = unwrap_callable(self.fun)
            kinds = tuple(_kind(a) for a in bargs) + kinds
            # jit(jnp.atleast_2d), jit(lambda *xs: ...): a wrapper of the call's arity
            target = fixed_arity(target, len(kinds))
            # jit(apply_fun)(params, x, rng=key) of `def apply_fun(params, x, **kwargs)`
            target = keywords_bound(target, list(bkw) + list(kwargs))
        # a static argument that is an object (a method's `self` under
        # @partial(jit, static_argnums=0)): known while transforming, as a function
        # argument is, so `grad(self.loss)` and `self.lr` resolve (user K r3); its
        # value is part of the key already
        kinds = list(kinds)
        lead = len(kinds) - len(args)
        for i in self._static_pos:
            if 0 <= i < len(args) and _static_object(args[i]):
                kinds[lead + i] = ClassKind(("fn", args[i]))
        kinds = tuple(kinds)
        # container arguments (`l * 2` repeats a list, list(l) copies it); arguments
        # holding registered classes keep their type trees, so their methods are
        # inlined and a transform inside (grad(loss)(model, x)) sees through them
        containers = tuple(
            k if isinstance(k, ClassKind) else ("tree" if k == "tree" else "leaf") for k in kinds
        )
        made: Dict[str, Any] = {}  # what the pass hands to the finish step

        def jit_pass(stage):
            src, norm = stage.src, stage.norm
            fdef = norm.node
            all_args = tuple(bargs) + tuple(args)
            all_kwargs = {**bkw, **kwargs}
            # the parameters as generated code names them (`ad` -> `ad_`, see normalize)
            renamed = dict(zip((a.id for a in src.node.args.args), (a.id for a in fdef.args.args)))
            try:
                bound = inspect.signature(target).bind(*all_args, **all_kwargs)
                bound.apply_defaults()
                values = {renamed.get(k, k): v for k, v in bound.arguments.items()}
            except TypeError as e:
                raise TypeError(f"{src.name}() {e}") from None
            nb = len(bargs)
            params = [a.id for a in fdef.args.args]
            static_names = {renamed.get(n, n) for n in self._static_names}
            static_names |= {params[i + nb] for i in self._static_pos if i + nb < len(params)}
            arg_keys = dict(zip(params[nb:], key[0]))
            arg_keys.update((renamed.get(k, k), v) for k, v in key[1])
            avals: Dict[str, Any] = {}
            statics: Dict[str, Any] = {}
            for p in params:
                if p not in values:
                    avals[p] = None
                    continue
                v = values[p]
                if p in static_names:
                    statics[p] = v
                    avals[p] = opt.Aval.of(v) if isinstance(v, (bool, int, float)) else None
                else:
                    avals[p] = _aval_tree(v, arg_keys.get(p))
            opt.bind_static(fdef, statics)
            resolve = _resolver(src, norm.bindings)
            boxed = {
                p: np.asarray(values[p]).dtype
                for p in params
                if p in values and p not in statics and arg_keys.get(p) == _WEAK[float]
            }
            opt.optimize(fdef, avals, resolve, norm.namer, boxed)
            donatable = tuple(
                params[i + nb]
                for i in sorted(self._donate_pos)
                if i + nb < len(params) and params[i + nb] not in static_names
            )
            device = self._device_obj
            if device is None:  # the arguments' GPU, else the default device (JAX's rule)
                named = list(zip(params[nb:], args)) + list(kwargs.items())
                device = _devices.check_same_device(named, f"jit of {src.name}")
                if device is None:
                    device = _devices.default_device()
            backend = backends.for_device(device)
            backend.lower(fdef, norm.namer, src.filename, donatable)
            user_names = {n.id for n in gast.walk(src.node) if isinstance(n, gast.Name)}
            opt.inline_temporaries(fdef, user_names)
            gname = f"{src.name}_jit"
            fdef.name = gname
            sig_text = ", ".join(
                f"{p}={values[p]!r} (static)" if p in statics else f"{p}: {_describe(values[p])}"
                for p in params
                if p in values and (p in statics or params.index(p) >= nb)
            )
            made.update(renamed=renamed, backend=backend, device=device)
            return Generated(fdef, "jit of", f"for {sig_text or 'no arguments'}")

        def jit_finish(src, norm, out, defaults):
            fdef = out.fdef
            text = emit.render(fdef, header(src, out.what, out.detail), src.filename)
            bindings = dict(norm.bindings)
            backend, device, renamed = made["backend"], made["device"], made["renamed"]
            bindings.update(backend.namespaces())
            gname = fdef.name
            fn = emit.load(text, gname, src.globals, src.closure, bindings, gname)
            fn.__defaults__ = target.__defaults__  # the values, as evaluated at definition
            fn.__kwdefaults__ = target.__kwdefaults__
            renamed = {k: v for k, v in renamed.items() if k != v}
            if renamed:
                if fn.__kwdefaults__:
                    fn.__kwdefaults__ = {renamed.get(k, k): v for k, v in fn.__kwdefaults__.items()}
                fn = _keywords_renamed(fn, renamed)
            # the user functions inlined (here, or into the transform jit wraps): a
            # redefinition invalidates this specialization
            deps = tuple(norm.deps) + tuple(getattr(target, "__srcjax_deps__", ()))
            if bargs or bkw:
                fn = functools.partial(fn, *bargs, **bkw)
            fn = backend.entry(fn, device)  # (the CUDA backend moves host arguments to the GPU)
            fn.__srcjax_deps__ = deps
            fn.__srcjax_backend__ = backend.name
            return fn, text

        def build():
            return transform(target, containers, jit_pass, kwonly=True, finish_with=jit_finish)

        if bargs or bkw:  # (bound values: memory only)
            return build()
        what = (
            "jit",
            key,
            kinds,
            tuple(sorted(self._static_pos)),
            tuple(sorted(self._static_names)),
            tuple(sorted(self._donate_pos)),
            # the device (and so the backend) the code is built for, and the
            # thresholds its lowering reads
            str(self._device_obj if self._device_obj is not None else _devices.default_device()),
            _backend_facts(),
        )
        built: Dict[str, str] = {}

        def build_fn():
            fn, built["text"] = build()
            return fn

        fn = diskcache.cached(what, target, f"{getattr(target, '__name__', 'fn')}_jit", build_fn)
        return fn, built.get("text") or fn.__srcjax_source__


def _backend_facts() -> tuple:
    """The CPU runtime's thresholds (region sizes, chunk bytes): lowering decisions
    that are part of a jit disk-cache entry's key."""
    from .backends import numba_cpu, runtime

    # (Numba is imported only when its loops are on: import costs latency)
    nb = numba_cpu.numba() if _cfg.config.read("numba_loops") else None
    return tuple(
        sorted(
            (k, v)
            for k, v in vars(runtime).items()
            if k.isupper() and type(v) in (int, float, bool)
        )
    ) + (("numba", getattr(nb, "__version__", None)),)


def _keywords_renamed(fn: Callable, renamed: Dict[str, str]) -> Callable:
    """``fn`` called with keyword arguments by the user's parameter names where
    generated code names them otherwise (``ad=`` for the parameter ``ad_``)."""

    def call(*args, **kwargs):
        if kwargs:
            kwargs = {renamed.get(k, k): v for k, v in kwargs.items()}
        return fn(*args, **kwargs)

    call.__srcjax_source__ = fn.__srcjax_source__
    call.__srcjax_path__ = fn.__srcjax_path__
    return call


def _validate_argnames(params: list, argnames: tuple, what: str) -> None:
    """jax.jit's check: every name in ``static_argnames`` is a parameter that can
    be passed by keyword (any name is fine when the function takes ``**kwargs``)."""
    kinds = {p.name: p.kind for p in params}
    posonly = {n for n in argnames if kinds.get(n) is inspect.Parameter.POSITIONAL_ONLY}
    if posonly:
        raise ValueError(
            f"Jitted function has invalid argnames {posonly} in {what}. These are positional-only"
        )
    if inspect.Parameter.VAR_KEYWORD in kinds.values():
        return
    missing = {n for n in argnames if kinds.get(n) not in _KEYWORD_KINDS}
    if missing:
        raise ValueError(
            f"Jitted function has invalid argnames {missing} in {what}. "
            "Function does not take these args."
        )


_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


#: NumPy scalar types (immutable, so a jitted function may return them as they are)
_NUMPY_SCALARS = frozenset(np.dtype(c).type for c in "?bhilqBHILQefdgFDG")
#: those narrowed to 32 bits on the way out unless x64 is on (see _unalias)
_WIDE_SCALARS = frozenset((np.float64, np.int64, np.uint64, np.complex128))
_WIDE = frozenset(np.dtype(t) for t in _WIDE_SCALARS)


def _root(x: np.ndarray) -> int:
    return id(x if x.base is None else x.base)


def _is_input(out: np.ndarray, args: tuple, kwargs: dict) -> bool:
    """Whether ``out`` may be one of the arguments: it is one, or an argument is
    a container (a leaf of it could be ``out``; :func:`_unalias` looks inside)."""
    for a in (*args, *kwargs.values()):
        if a is out:
            return True
        if type(a) is np.ndarray or type(a) in _SCALAR_ARGS or isinstance(a, np.generic):
            continue
        return True
    return False


_SCALAR_ARGS = frozenset({int, float, bool, complex, type(None), str})


def _input_roots(args: tuple, kwargs: dict, donate: frozenset) -> set:
    """The ids of the memory owners of every array in the non-donated arguments."""
    roots: set = set()
    stack = [a for i, a in enumerate(args) if i not in donate]
    stack.extend(kwargs.values())
    while stack:
        x = stack.pop()
        t = type(x)
        if t is np.ndarray:
            b = x.base
            roots.add(id(x if b is None else b))
        elif t is dict:
            stack.extend(x.values())
        elif t is list or t is tuple:
            stack.extend(x)
        elif t in _SCALAR_ARGS or isinstance(x, np.generic):
            pass
        elif isinstance(x, np.ndarray):
            roots.add(_root(x))
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            for v in tree_util.tree_leaves(x):  # a registered pytree class
                if isinstance(v, np.ndarray):
                    roots.add(_root(v))
    return roots


def _unalias(out: Any, args: tuple, kwargs: dict, donate: frozenset) -> Any:
    """A transform's output as it leaves generated code (the boundary of jit,
    vmap, the jvp family and vjp/linearize's primal): :func:`_unalias_buffers`,
    then every array leaf an ``srcjax.Array``."""
    return wrap_tree(_unalias_buffers(out, args, kwargs, donate))


def _unalias_buffers(out: Any, args: tuple, kwargs: dict, donate: frozenset) -> Any:
    """``out`` as jax.jit returns it: every array that is (a view of) a
    non-donated argument copied, as JAX arrays are immutable, so a jitted
    function's outputs never share memory with its inputs (``y = jit(lambda a:
    a)(x); y += 1`` leaves ``x`` alone; views of other arrays and fresh arrays
    are returned as they are); Python scalars (weakly typed values) as NumPy
    scalars of the default dtype (``jit(lambda n: n * 2)(3)`` is ``int32``);
    64-bit arrays and scalars narrowed to 32 bits unless x64 is on, as JAX never
    returns them then (NumPy's operators promote ``int32 * float32`` to float64:
    vmap and jvp returned such values as float64, JAX float32)."""
    roots: Optional[set] = None
    narrow = not _cfg.x64_enabled

    def fix(x: Any) -> Any:
        nonlocal roots
        t = type(x)
        if t is np.ndarray:  # the common case first
            if narrow and x.dtype in _WIDE:
                return dtypes.canonicalize_value(x)  # a new array: it shares nothing
            if roots is None:
                roots = _input_roots(args, kwargs, donate)
            b = x.base
            return x.copy() if id(x if b is None else b) in roots else x
        if t in _NUMPY_SCALARS:
            return dtypes.canonicalize_value(x) if narrow and x.dtype in _WIDE else x
        if t is int or t is float or t is bool or t is complex:
            return _as_array_scalar(x)
        if narrow and isinstance(x, (np.ndarray, np.generic)) and x.dtype in _WIDE:
            return dtypes.canonicalize_value(x)
        if isinstance(x, np.ndarray):
            if roots is None:
                roots = _input_roots(args, kwargs, donate)
            return x.copy() if _root(x) in roots else x
        if isinstance(x, tuple):
            items = [fix(v) for v in x]
            if all(a is b for a, b in zip(items, x)):
                return x
            return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
        if isinstance(x, list):
            return [fix(v) for v in x]
        if isinstance(x, dict):
            # dicts (and defaultdicts) in sorted key order, as JAX's outputs
            # (see tree_util._jax_dict_order); OrderedDicts keep theirs
            keys = list(x)
            sort = t is dict or t is collections.defaultdict
            order = list(tree_util._sorted_keys(x)) if sort and len(keys) > 1 else keys
            items = {k: fix(x[k]) for k in order}
            if order == keys and all(items[k] is x[k] for k in keys):
                return x
            if t is dict:
                return items
            if t is collections.defaultdict:
                return collections.defaultdict(x.default_factory, items)
            try:
                return t(items)
            except TypeError:
                return items
        if t in tree_util._REGISTRY:  # a registered class: its leaves fixed too
            leaves, treedef = tree_util.tree_flatten(x)
            fixed = [fix(v) for v in leaves]
            if all(a is b for a, b in zip(fixed, leaves)):
                return x
            return tree_util.tree_unflatten(treedef, fixed)
        return x

    return fix(out)


def _static_object(v: Any) -> bool:
    """An object passed as a static argument whose attributes the normalizer may
    read (not a literal, an array, a container or a class)."""
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, tuple, list, dict)):
        return False
    if isinstance(v, (np.ndarray, np.generic, type, types.ModuleType)):
        return False
    return hasattr(v, "__dict__")


def _as_array_scalar(x: Any) -> Any:
    """A Python scalar output as the NumPy scalar of its default dtype."""
    if type(x) is bool:
        return np.bool_(x)
    try:
        return dtypes.dtype_of(x).type(x)
    except OverflowError:
        return x


def _resolver(src, bindings):
    def resolve(name: str) -> Any:
        if name in bindings:
            value = bindings[name]
            if not isinstance(value, emit.UserGlobal):
                return value
            name = value.name  # the user's variable, read live
        cell = src.closure.get(name)
        if cell is not None:
            return unwrap_tree(cell.cell_contents)
        return unwrap_tree(src.globals[name])

    return resolve


def _as_tuple(x: Any) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (int, str)):
        return (x,)
    return tuple(x)


def jit(
    fun: Optional[Callable] = None,
    static_argnums: Union[int, Sequence[int]] = (),
    static_argnames: Union[str, Sequence[str]] = (),
    donate_argnums: Union[int, Sequence[int]] = (),
    device: Any = None,
) -> Callable:
    """Compile ``fun`` by source transformation, specialized per abstract signature.

    Semantics follow ``jax.jit``: the function is specialized (and cached) on
    the shapes and dtypes of its array arguments, on whether scalars were Python
    scalars (weak types), on the values of static arguments and on the device;
    a call with a signature seen before dispatches to the cached code in a few
    microseconds; ``fn._cache_size()`` counts specializations. Unhashable static
    arguments raise ``ValueError``. Arguments are canonicalized as JAX does
    (float64 becomes float32 unless ``jax_enable_x64``).

    The CPU code is NumPy: constant folding, CSE, dead-code elimination and
    algebraic simplification (``x**3`` becomes ``x*x*x``) are applied to the
    source, and chains of elementwise operations on large arrays (optionally
    ending in a full ``sum``/``mean``/``max``/``min``) run fused, over
    cache-sized chunks, on a thread pool sized to the cores. Print it with
    ``srcjax.source(jitted, *example_args)``.

    Unlike JAX, Python control flow on array values works inside ``fun``, and
    ``print``/``breakpoint()`` run at every call (see the module docstring).

    Args:
        fun: a Python function (lambda, ``functools.partial``, bound method,
            object with a Python ``__call__``, or another srcjax transform)
            whose source is available; it may have keyword-only parameters.
            Without it, ``jit(static_argnums=...)`` returns a decorator.
        static_argnums: positional arguments treated as compile-time constants
            (one left out of a call takes its default).
        static_argnames: keyword arguments treated as compile-time constants;
            each must name a parameter (``ValueError`` otherwise, as in JAX).
        donate_argnums: arguments whose buffers an output may reuse.
        device: the device to run on (the CPU; recorded in the cache key).

    Returns:
        The jitted function, with ``fun``'s signature.
    """
    if fun is None:
        return functools.partial(
            jit,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            donate_argnums=donate_argnums,
            device=device,
        )
    if not callable(fun):
        raise TypeError(f"jit expects a callable, got {fun!r}")
    if not isinstance(fun, types.FunctionType):
        return _Jit(fun, static_argnums, static_argnames, donate_argnums, device)
    # jit(f)(x) written in a loop: like JAX, which caches compiled code per function,
    # the same plain function with the same options shares one jitted object (and
    # its specializations) instead of transforming again on every call
    try:
        key = (
            _options_key(static_argnums),
            _options_key(static_argnames),
            _options_key(donate_argnums),
            None if device is None else str(device),
        )
        hash(key)
    except TypeError:
        return _Jit(fun, static_argnums, static_argnames, donate_argnums, device)
    with _JIT_LOCK:
        per_fun = _JIT_OBJECTS.get(fun)
        if per_fun is None:
            per_fun = _JIT_OBJECTS[fun] = {}
        jitted = per_fun.get(key)
        if jitted is None:
            jitted = per_fun[key] = _Jit(
                fun, static_argnums, static_argnames, donate_argnums, device
            )
    return jitted


def _options_key(x: Any) -> Any:
    return tuple(x) if isinstance(x, (list, tuple)) else x


#: plain function -> {options: its jitted object}; see jit()
_JIT_OBJECTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_JIT_LOCK = threading.Lock()


jit.__srcjax_jit__ = True  # inside transformed code, jit(f)(x) is just f(x)
