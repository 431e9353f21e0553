"""The build of one jit specialization: the jit pass over the function's
normalized IR (bind the static arguments and the module globals it folds,
optimize, mark weak returns, lower fused regions on the device's backend,
release buffers early), then render and load (:mod:`srcjax.codegen`), cached
on disk (:mod:`srcjax.codegen.diskcache`) unless bound values are involved.
``_Jit._build`` (:mod:`.jitted`) is :func:`build`; the jitted object keeps the
cache of specializations and the per-call path."""

from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any, Callable, Dict, Tuple

import gast
import numpy as np

from .. import backends
from ..api import Transformed, _kind, fixed_arity, keywords_bound
from ..backends import _devices, numpy_cpu
from ..codegen import diskcache, emit
from ..driver import Generated, header, transform
from ..frontend import nodes as N
from ..frontend.normalize import ClassKind, dependencies_valid
from ..frontend.source import unwrap_callable
from ..transforms import optimize as opt
from .global_facts import _globals_to_fold, _resolver, fold_object_attributes
from .outputs import _static_object
from .scalar_params import fold_attributes
from .signature import _WEAK, _aval_tree, _describe

_cfg = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)


def build(jit, key, args, kwargs) -> Tuple[Callable, str]:
    """The specialization of the jitted function ``jit`` (a ``_Jit``) for the
    signature ``key`` of the canonical arguments ``args``/``kwargs``: (the
    loaded function, its source). ``_Jit._build`` is this function."""
    # (exact type trees: the key holds every list's length, so loops over a
    # list of layers are unrolled)
    kinds = tuple(_kind(a, exact=True) for a in args)
    if isinstance(jit.fun, Transformed):
        jit.fun._check_jit_args(args, kwargs)  # jit(grad(f)) of ints: TypeError
        # grad(obj.method): the transform's bound arguments come first
        fb = tuple(getattr(jit.fun, "_bound", ()) or ())
        kinds = tuple(_kind(a) for a in fb) + kinds
        if not kwargs and hasattr(jit.fun, "_function_defaults"):
            # a function default (act=jnp.tanh) specializes the transform, as
            # when it is called directly (api._Grad.__call__)
            kinds = kinds + tuple(_kind(v) for v in jit.fun._function_defaults(len(args)))
        bkw = dict(getattr(jit.fun, "_bound_kwargs", None) or {})
        fun = jit.fun
        if getattr(fun, "_varkw", False):  # jit(grad(apply))(x, scale=2.0), **kwargs
            fun = fun._with_keywords(tuple(sorted(kwargs)))
        target, bargs = fun._generated(kinds), fb
        inner = getattr(target, "__srcjax_deps__", ())
        if inner and not dependencies_valid(inner) and hasattr(fun, "_rebuild"):
            target = fun._rebuild(kinds)
    else:
        target, bargs, bkw = unwrap_callable(jit.fun)
        kinds = tuple(_kind(a) for a in bargs) + kinds
        # jit(jnp.atleast_2d), jit(lambda *xs: ...): a wrapper of the call's arity
        target = fixed_arity(target, len(kinds))
        # jit(apply_fun)(params, x, rng=key) of `def apply_fun(params, x, **kwargs)`
        target = keywords_bound(target, list(bkw) + list(kwargs))
    # a static argument that is an object (a method's `self` under
    # @partial(jit, static_argnums=0)): known while transforming, as a function
    # argument is, so `grad(jit.loss)` and `jit.lr` resolve (user K r3); its
    # value is part of the key already
    kinds = list(kinds)
    lead = len(kinds) - len(args)
    for i in jit._static_pos:
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
            passed = set(bound.arguments)
            bound.apply_defaults()
            values = {renamed.get(k, k): v for k, v in bound.arguments.items()}
        except TypeError as e:
            raise TypeError(f"{src.name}() {e}") from None
        # a literal default the call left out: a constant of this specialization, as
        # JAX's trace sees a Python constant (weakly typed, static for control flow
        # and shapes); the disk cache's key holds the defaults (_literal_defaults)
        defaulted = {
            renamed.get(k, k)
            for k, v in bound.arguments.items()
            if k not in passed and opt.is_literal(v)
        }
        nb = len(bargs)
        params = [a.id for a in fdef.args.args]
        static_names = {renamed.get(n, n) for n in jit._static_names}
        static_names |= {params[i + nb] for i in jit._static_pos if i + nb < len(params)}
        arg_keys = dict(zip(params[nb:], key[0]))
        arg_keys.update((renamed.get(k, k), v) for k, v in key[1])
        avals: Dict[str, Any] = {}
        statics: Dict[str, Any] = {}
        defaults: Dict[str, Any] = {}
        for p in params + [a.id for a in fdef.args.kwonlyargs if a.id in defaulted]:
            if p not in values:
                avals[p] = None
                continue
            v = values[p]
            if p in static_names or p in defaulted:
                (statics if p in static_names else defaults)[p] = v
                avals[p] = opt.Aval.of(v) if isinstance(v, (bool, int, float)) else None
            else:
                avals[p] = _aval_tree(v, arg_keys.get(p))
        opt.bind_static(fdef, statics)
        opt.bind_static(fdef, defaults, note="default argument")
        # x.size / x.shape / x.dtype of a Python int or bool argument (JAX: a weak 0-d array)
        fold_attributes(
            fdef,
            {
                p: "bool" if k == _WEAK[bool] else ("int64" if key[2] else "int32")
                for p, k in arg_keys.items()
                if k in (_WEAK[int], _WEAK[bool]) and p not in statics
            },
        )
        # module globals holding Python scalars (HIDDEN in zeros((n, HIDDEN))):
        # constants of this specialization, guarded (rebinding one specializes
        # again), as JAX bakes them in at trace time
        folded, guards, arrays = _globals_to_fold(fdef, src, norm.bindings, jit._volatile)
        opt.bind_static(fdef, folded, note="module global")
        # a static object's instance attributes holding Python scalars (jit(Net(2.0))'s
        # self.s): constants too, guarded, as JAX bakes them in at trace time
        objects = {
            p: k.types[1]
            for p, k in zip(params, kinds)
            if isinstance(k, ClassKind) and isinstance(k.types, tuple) and k.types[:1] == ("fn",)
        }
        guards += fold_object_attributes(fdef, objects, jit._volatile)
        made["guards"] = guards
        resolve = _resolver(src, norm.bindings, arrays)  # (global arrays' avals)
        boxed = {
            p: np.asarray(values[p]).dtype
            for p in params
            if p in values
            and p not in statics
            and arg_keys.get(p) in (_WEAK[float], _WEAK[complex])
        }
        sig_text = ", ".join(
            f"{p}={values[p]!r} (static)"
            if p in statics
            else f"{p}={values[p]!r} (default)"
            if p in defaults
            else f"{p}: {_describe(values[p])}"
            for p in list(params) + [p for p in defaults if p not in params]
            if p in values and (p in statics or p in defaults or params.index(p) >= nb)
        )
        user_names = {n.id for n in N.walk(src.node) if isinstance(n, gast.Name)}
        if jit._types_only:
            # the transform's code as it generated it, with JAX's dtypes and weak
            # types for this signature (no optimization, no fusion: see _WeakTyped)
            opt.jax_types(fdef, avals, resolve, norm.namer, boxed)
            opt.inline_temporaries(fdef, user_names)
            fdef.name = f"{src.name}_typed"
            made.update(renamed=renamed, backend=None, device=None)
            return Generated(fdef, "JAX's types of", f"for {sig_text or 'no arguments'}")
        device = jit._device_obj
        if device is None:  # the arguments' GPU, else the default device (JAX's rule)
            named = list(zip(params[nb:], args)) + list(kwargs.items())
            device = _devices.check_same_device(named, f"jit of {src.name}")
            if device is None:
                device = _devices.default_device()
        backend = backends.for_device(device)
        # (rows written into stacks jit allocates: NumPy arrays, the CPU backend's)
        opt.optimize(fdef, avals, resolve, norm.namer, boxed, cpu=backend.name == "cpu")
        # results computed from weak Python scalars only come back weakly typed
        opt.mark_weak_returns(fdef, opt.infer_avals(fdef, avals, resolve))
        donatable = tuple(
            params[i + nb]
            for i in sorted(jit._donate_pos)
            if i + nb < len(params) and params[i + nb] not in static_names
        )
        if nb == 0 and backend.name == "cpu":
            # trees of a known structure returned as their leaves: the boundary
            # builds them once (optimize/flat_results.py)
            made["flat"] = opt.flat_results(fdef, params[: len(args)])
        backend.lower(fdef, norm.namer, src.filename, donatable)
        opt.inline_temporaries(fdef, user_names)
        opt.take_dead_items(fdef)
        opt.release_after_loops(fdef)  # (last: the passes above read single stores)
        opt.release_after_last_read(fdef)
        opt.release_in_loops(fdef)
        fdef.name = f"{src.name}_jit"
        made.update(renamed=renamed, backend=backend, device=device)
        return Generated(fdef, "jit of", f"for {sig_text or 'no arguments'}")

    def jit_finish(src, norm, out, defaults):
        fdef = out.fdef
        text = emit.render(fdef, header(src, out.what, out.detail), src.filename)
        bindings = dict(norm.bindings)
        backend, device, renamed = made["backend"], made["device"], made["renamed"]
        if backend is not None:
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
        deps += made["guards"]
        if bargs or bkw:
            fn = functools.partial(fn, *bargs, **bkw)
        if backend is not None:
            # (the CUDA backend moves host arguments to the GPU)
            fn = backend.entry(fn, device)
        fn.__srcjax_deps__ = deps
        fn.__srcjax_backend__ = backend.name if backend is not None else None
        if made.get("flat") is not None:
            fn.__srcjax_flat_result__ = made["flat"]
        return fn, text

    def build():
        return transform(target, containers, jit_pass, kwonly=True, finish_with=jit_finish)

    if bargs or bkw:  # (bound values: memory only)
        return build()
    what = (
        "jit" if not jit._types_only else "jax_types",
        key,
        kinds,
        tuple(sorted(jit._static_pos)),
        tuple(sorted(jit._static_names)),
        tuple(sorted(jit._donate_pos)),
        # the device (and so the backend) the code is built for, and the
        # thresholds its lowering reads
        str(jit._device_obj if jit._device_obj is not None else _devices.default_device()),
        numpy_cpu.lowering_facts(_cfg.config.read("numba_loops")),
        _literal_defaults(target),  # (constants of the code where a call leaves them out)
    )
    built: Dict[str, str] = {}

    def build_fn():
        fn, built["text"] = build()
        return fn

    fn = diskcache.cached(what, target, f"{getattr(target, '__name__', 'fn')}_jit", build_fn)
    return fn, built.get("text") or fn.__srcjax_source__


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


def _literal_defaults(fn: Any) -> tuple:
    """The defaults of ``fn`` a specialization may bind as constants (literals;
    any other default as a marker): part of the disk cache's key, since a
    default evaluated at definition (``n=N``, ``N`` read from the environment)
    may differ between processes with the same source text."""
    pos = getattr(fn, "__defaults__", None) or ()
    kw = getattr(fn, "__kwdefaults__", None) or {}
    mark = ("object",)
    return (
        tuple(("literal", v) if opt.is_literal(v) else mark for v in pos),
        tuple((k, ("literal", v) if opt.is_literal(v) else mark) for k, v in sorted(kw.items())),
    )
