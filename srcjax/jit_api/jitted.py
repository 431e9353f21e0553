"""The jitted function object (``_Jit``): its cache of specializations keyed by
abstract signature (:mod:`.signature`), the call path (a dictionary lookup on
a hit), the rebuild when a dependency changed, ``lower``/``trace``/
``eval_shape`` and the printing of its source; and ``_WeakTyped``, the jit
that only gives a transform's code JAX's types. The build of one
specialization is :mod:`.specialize` (``_Jit._build``)."""

from __future__ import annotations

import importlib
import inspect
import threading
import warnings
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from .. import _debug_nans, backends, dtypes, tree_util
from .._array import (
    _LEAF_TYPES,
    Array,
    _WeakArray,
    unwrap_args_weak,
    unwrap_kwargs,
    unwrap_tree,
    wrap,
    wrap_weak,
)
from .._dict_order import args_in_jax_order
from .._fp_warnings import CHECKING as _fp_checking
from .._fp_warnings import CLEAN as _fp_clean
from .._fp_warnings import IGNORE as _fp_ignore
from .._fp_warnings import reset as _fp_reset
from .._fp_warnings import set_ as _fp_set
from ..api import Transformed, _as_f32, fixed_arity
from ..api import transformed as _transformed
from ..api.transformed import Untypeable
from ..backends import _devices, numba_cpu
from ..errors import TransformValueError, runtime_error
from ..frontend.normalize import dependencies_valid
from ..frontend.source import unwrap_callable
from . import fastpath as _fastpath
from .global_facts import rebound
from .outputs import (
    _KEYWORD_KINDS,
    _NUMPY_SCALARS,
    _WIDE_SCALARS,
    _as_tuple,
    _built,
    _input_roots,
    _is_input,
    _plan_flat,
    _unalias,
)
from .signature import _F32, _F64, _WEAK, _canon, _static_key
from .specialize import build as _build_specialization

_cfg = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)

#: how often a global (a scalar, an array's shape) may be rebound before jit stops specializing on it
_MAX_REBINDS = 2


class _Jit(Transformed):
    kind = "jit"
    #: only JAX's dtypes and weak types for the signature, no optimization (_WeakTyped)
    _types_only = False

    def __init__(self, fun, static_argnums, static_argnames, donate_argnums, device):
        super().__init__(fun)
        self._options = (static_argnums, static_argnames, donate_argnums)
        self._specs: Dict[tuple, Callable] = {}
        self._sources: Dict[tuple, str] = {}
        self._build_lock = threading.Lock()
        self._builds = 0
        #: [(guard, specialization)] of the last call that took the generic key walk
        #: (fastpath.make_guard), or empty; cleared with _specs (clear_caches)
        self._fast: list = []
        # module globals this function specializes on, and how often each was
        # rebound ((id(scope), name) -> count); past _MAX_REBINDS it is read live
        self._rebinds: Dict[tuple, int] = {}
        self._volatile: set = set()
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
    def _key(
        self, args: tuple, kwargs: dict, weak: Optional[tuple] = (), roots: Any = None
    ) -> Tuple[tuple, tuple, dict]:
        """(the signature key, the canonical arguments and keyword arguments);
        ``weak``: the positions of weakly typed arrays (``unwrap_args_weak``),
        or None for a call's arguments as given: then the same walk makes
        their Arrays buffers (the weakly typed ones of one or more axes keyed
        weak) and orders their dicts as JAX does (``args_in_jax_order``).
        ``roots``: a list that gets the memory owners of the non-donated
        arguments' arrays (see ``signature._canon``)."""
        donate = self._donate_pos
        x64 = _cfg.x64_enabled
        static = self._static_pos
        raw = weak is None
        # (a static argument left out takes its default; a missing one without a
        # default fails when the call is bound, with Python's TypeError)
        keys = []
        new_args = None
        for i, x in enumerate(args):
            t = type(x)
            if raw:
                if t is Array:
                    x = x._buf
                    new_args = list(args) if new_args is None else new_args
                    new_args[i] = x
                    t = type(x)
                elif t is _WeakArray and x._buf.ndim:
                    weak = (weak or ()) + (i,)
                    x = x._buf
                    new_args = list(args) if new_args is None else new_args
                    new_args[i] = x
                    t = type(x)
            if i in static:
                if raw and t not in _LEAF_TYPES:
                    y = unwrap_tree(x)
                    if y is not x:
                        new_args = list(args) if new_args is None else new_args
                        new_args[i] = x = y
                keys.append(_static_key(x))
                continue
            mine = roots if i not in donate else None
            if t is np.ndarray and (not weak or i not in weak):
                dt = x.dtype
                if x64 or dt.itemsize != 8 or dt.kind not in "fiu":
                    keys.append((x.shape, dt))
                    if mine is not None:
                        b = x.base
                        mine.append(id(x if b is None else b))
                    continue
            try:
                y, k = _canon(x, x64, raw, mine)
            except TypeError as e:  # (a str argument: name the parameter, as JAX does)
                raise TypeError(self._argument_error(e, i, None)) from None
            if weak and i in weak:
                k = k + ("weak",)  # (a weakly typed array: promotes as a Python scalar)
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
                    if raw:
                        v = unwrap_tree(v)
                    items.append((k, _static_key(v)))
                    new_kw[k] = v
                else:
                    try:
                        y, kk = _canon(v, x64, False, roots)
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
        # NumPy's inf/nan warnings ignored (JAX has none): _fp_warnings.set_/reset, inline
        # (not while a debug check runs, nor while srcjax's filter alone decides)
        quiet = (
            None
            if _fp_checking[0]
            or (_fp_clean[0] is warnings.filters and len(_fp_clean[0]) == _fp_clean[1])
            else _fp_set(_fp_ignore)
        )
        try:
            weak = None  # (the arguments as given: _key unwraps and orders them)
            if (_cfg.jit_disabled and not self._types_only) or (
                _cfg.debug_nonfinite and not _debug_nans.active()
            ):
                # the boundary: generated code computes on buffers; dicts in JAX's order
                args, weak = unwrap_args_weak(args)
                args = args_in_jax_order(args)
                if kwargs:
                    kwargs = unwrap_kwargs(kwargs)
                if _cfg.jit_disabled and not self._types_only:
                    # srcjax.disable_jit(): the function as written
                    return self.fun(*args, **kwargs)
                label = f"jit({getattr(self.fun, '__name__', 'fun')})"
                return _debug_nans.call_checked(
                    self.__call__, args, kwargs, label, tree_util.tree_leaves, op_by_op=False
                )
            fn = roots = None
            ran = False
            if len(args) == 1 and not kwargs and not self._static_pos:
                # fast path (W3's per-call cost): one float or float32 array argument
                # whose specialization exists; the key is the one _key would build
                x = args[0]
                t = type(x)
                if t is Array:
                    x = x._buf
                    t = type(x)
                    args = (x,)
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
                        ran = True
            if fn is None and not kwargs:
                # the last specialization's own check of the arguments' structure,
                # straight-line (fastpath): its canonical arguments, or None
                for guard, fn in self._fast:  # (one at most; a loop: a clear is no race)
                    got = guard(args)
                    if got is None or (
                        fn.__srcjax_deps__ and not dependencies_valid(fn.__srcjax_deps__)
                    ):
                        fn = None
                    else:
                        cargs, roots = got
                        ckwargs = kwargs
            if fn is None:
                roots = []  # (the arguments' memory owners, for the output boundary)
                key, cargs, ckwargs = self._key(args, kwargs, weak, roots)
                roots = None if None in roots else set(roots)
                fn = self._specs.get(key)
                if (
                    fn is not None
                    and fn.__srcjax_deps__
                    and not dependencies_valid(fn.__srcjax_deps__)
                ):
                    # a user function inlined into this specialization was redefined
                    # (a notebook cell run again), or a global it specialized on
                    # was rebound: specialize again, as grad does
                    self._note_rebinds(fn.__srcjax_deps__)
                    with self._build_lock:
                        if self._specs.get(key) is fn:
                            del self._specs[key]
                    fn = None
                if fn is None:
                    self._check_donated(len(args))
                    fn = self._specialize(key, cargs, ckwargs)
                self._fast[:] = self._guard(fn, key, cargs)
            if not ran:
                out = fn(*cargs, **ckwargs)
                plan = fn.__dict__.get("__srcjax_flat_plan__")
                if plan is not None:  # trees returned as their leaves (flat_results)
                    if not (_cfg.checks_enabled and isinstance(self.fun, Transformed)):
                        # each leaf fixed and each tree built by the plan's straight-line code
                        finish = fn.__dict__.get("__srcjax_finish__")
                        if finish is None:
                            finish = fn.__srcjax_finish__ = _fastpath.make_finish(plan) or False
                        if finish:
                            if roots is None:
                                roots = _input_roots(cargs, ckwargs, self._donate_pos)
                            built = finish(out, roots)
                            if built is not _fastpath.SLOW:
                                return built
                        # one walk wraps the leaves; each tree is built once from them
                        out = _unalias(out, cargs, ckwargs, self._donate_pos, roots)
                        return _built(plan, out)
                    out = _built(plan, out)
            if _cfg.checks_enabled and isinstance(self.fun, Transformed):
                from .._cotangent_check import check_transform_output

                check_transform_output(self.fun, out, cargs, ckwargs)
            t = type(out)
            if t is np.ndarray:
                if (
                    out.base is None
                    and (out.dtype.itemsize < 8 or _cfg.x64_enabled)
                    and not _is_input(out, cargs, ckwargs)
                ):
                    return wrap(out)  # the common case: a fresh array of a 32-bit dtype
            elif t in _NUMPY_SCALARS and (t not in _WIDE_SCALARS or _cfg.x64_enabled):
                return wrap(out)  # immutable: nothing to unalias
            elif t is _WeakArray:  # (ad.weak_value: see transforms/optimize/weak_returns.py)
                return out
            elif t is float:  # a weakly typed result
                return wrap_weak(_F64(out) if _cfg.x64_enabled else _as_f32(out))
            elif _devices.is_device_array(out):  # one GPU array (the CUDA backend's result)
                if any(out is a for a in cargs) or any(out is v for v in ckwargs.values()):
                    out = out.copy()  # (jit(lambda a: a): a new array, as JAX's outputs)
                return wrap(out)  # an Array holding the GPU buffer (.device: its GPU)
            return _unalias(out, cargs, ckwargs, self._donate_pos, roots)
        except Exception as e:
            # an error raised in the generated code: JAX's error for NumPy's,
            # at the user's line (errors.runtime_error)
            located = runtime_error(e, self.fun)
            if located is e:
                raise
            raise located from None
        finally:
            if quiet is not None:
                _fp_reset(quiet)

    def _guard(self, fn: Callable, key: tuple, cargs: tuple) -> list:
        """``[(guard, fn)]``: the straight-line check of a later call's arguments
        against ``fn``'s key (:func:`fastpath.make_guard`, written once per
        specialization), or ``[]`` where the call's signature has keyword
        arguments, static or donated ones, or a structure it does not write."""
        if self._static_pos or self._donate_pos or key[1]:
            return []
        guard = fn.__dict__.get("__srcjax_guard__")
        if guard is None:
            # (compiled at the next call, the first that uses it: fastpath.LazyGuard)
            guard = _fastpath.lazy_guard(key, cargs, fn, self._fast) or False
            fn.__srcjax_guard__ = guard
        return [(guard, fn)] if guard else []

    def _note_rebinds(self, deps: tuple) -> None:
        """Count the rebinding of each global a specialization assumed something
        about (a folded scalar, a global array's shape: see global_facts); one
        rebound more than ``_MAX_REBINDS`` times (a step counter) is read live,
        unknown, by later specializations instead of specializing every call."""
        for dep in deps:
            if not rebound(dep):
                continue
            k = (id(dep[1]), dep[2])
            self._rebinds[k] = n = self._rebinds.get(k, 0) + 1
            if n > _MAX_REBINDS:
                self._volatile.add(k)

    def _check_donated(self, nargs: int) -> None:
        """JAX's check of donate_argnums against the call's positional arguments,
        made when a call first builds a specialization (fresh-user bug F4-E3)."""
        if self._donate_pos and max(self._donate_pos) >= nargs:
            raise TransformValueError(
                f"Jitted function has donate_argnums={tuple(sorted(self._donate_pos))}, "
                f"but only accepts {nargs} positional arguments."
            )

    def _specialize(self, key, args, kwargs):
        with self._build_lock:
            fn = self._specs.get(key)
            if fn is None:
                fn, text = self._build(key, args, kwargs)
                _plan_flat(fn, args)
                self._sources[key] = text
                self._specs[key] = fn
                self._builds += 1
        return fn

    def lower(self, *args, **kwargs):
        """``jit(f).lower(*args)``: the :class:`srcjax.Lowered` program for these
        arguments' shapes, dtypes and static values (``.as_text()`` is the
        generated source, ``.compile()`` the callable stage)."""
        from .._stages import Lowered

        return Lowered(self, self._source_of(args, kwargs))

    def trace(self, *args, **kwargs):
        """``jit(f).trace(*args)``: a :class:`srcjax.Traced` (``.jaxpr`` is the
        generated program, ``.out_info`` the output's shapes, ``.lower()``)."""
        from .._stages import GeneratedProgram, Traced
        from ..extras import ShapeDtypeStruct, eval_shape

        def in_avals():
            out = []
            for leaf in tree_util.tree_leaves((args, kwargs)):
                dt = leaf.dtype if hasattr(leaf, "dtype") else dtypes.dtype_of(leaf)
                out.append(ShapeDtypeStruct(tuple(np.shape(leaf)), dt))
            return out

        program = GeneratedProgram(
            self._source_of(args, kwargs), in_avals, lambda: eval_shape(self, *args, **kwargs)
        )
        return Traced(self, program)

    def eval_shape(self, *args, **kwargs):
        """``jit(f).eval_shape(*args)``: :func:`srcjax.eval_shape` of ``f``."""
        from ..extras import eval_shape

        return eval_shape(self, *args, **kwargs)

    def _source_for(self, *example_args, **example_kwargs) -> str:
        """The specialized source for the example arguments' signature
        (``srcjax.source(jitted, *example_args)``); with none, the last one
        built, else (a function callable without arguments) the call's."""
        if not example_args and not example_kwargs:
            if self._sources:
                return numba_cpu.tiers_now(next(reversed(self._sources.values())))
            if not self._callable_without_arguments():
                raise TypeError(
                    "jit specializes on the shapes and dtypes of its arguments: pass example "
                    "arguments (srcjax.source(jitted, x, ...), or srcjax show ... --jit "
                    "--args 'f32[3]' ...)"
                )
        return self._source_of(example_args, example_kwargs)

    def _callable_without_arguments(self) -> bool:
        """Whether ``fun()`` binds (no parameters, or defaults for all of them)."""
        try:
            inspect.signature(self.fun).bind()
        except (TypeError, ValueError):
            return False
        return True

    def _source_of(self, example_args: tuple, example_kwargs: dict) -> str:
        """The specialized source of the call with these arguments (``lower``,
        ``trace``: no arguments is the call ``f()``, as JAX lowers it)."""
        example_args, weak = unwrap_args_weak(example_args)
        key, args, kwargs = self._key(example_args, unwrap_kwargs(example_kwargs), weak)
        self._specialize(key, args, kwargs)
        return numba_cpu.tiers_now(self._sources[key])

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

    # the build of one specialization (a method: jit_api/specialize.py)
    _build = _build_specialization


def _untypeable(*args: Any, **kwargs: Any) -> Any:
    raise Untypeable


def _unbound_globals(fn: Any) -> set:
    """The global names ``fn``'s code (and the functions defined in it) reads that
    neither its module nor the builtins define: a built specialization that would
    raise NameError when it runs."""
    import builtins
    import dis

    code = getattr(fn, "__code__", None)
    if code is None:
        return set()
    glob = fn.__globals__
    missing, stack = set(), [code]
    while stack:
        co = stack.pop()
        for ins in dis.get_instructions(co):
            if ins.opname == "LOAD_GLOBAL":
                name = ins.argval
                if name not in glob and not hasattr(builtins, name):
                    missing.add(name)
        stack.extend(c for c in co.co_consts if hasattr(c, "co_code"))
    return missing


_untypeable.__srcjax_deps__ = ()

#: (function name, names) of each weak-typed build refused because its code read
#: a global name nothing defines (see ``_WeakTyped._build``); stays empty unless a
#: pass loses a binding (c671516 lost odeint's ``odeint_fwd_func = func``)
UNBOUND_FALLBACKS: list = []


class _WeakTyped(_Jit):
    """How ``grad``, ``value_and_grad`` and ``jvp`` run, without jit, a call
    with a weakly typed Python float argument: specialized on the call's
    abstract signature as jit is (the same key, the same build), but the
    transform's generated code is only given JAX's dtypes and weak types
    (:func:`srcjax.transforms.optimize.jax_types`: a Python float, held as a
    float32 NumPy scalar so ``1 / 0.0`` is inf, promotes as a weak scalar, so
    ``x * float16_y`` is float16, and values computed from weak scalars only
    come back weakly typed), never optimized or fused. ``disable_jit`` does
    not apply (it is no jit). A signature whose code cannot be built this way
    raises :class:`Untypeable` at each call, and the caller runs its own code
    (with NumPy's types: a Python float as a float32 scalar)."""

    kind = "weak_types"
    _types_only = True
    #: the key of a call with one Python float argument (by x64): the lookup of
    #: grad's fast path (api.gradient), which calls the specialization itself
    ONE_FLOAT = {x64: ((_WEAK[float],), (), x64, None) for x64 in (False, True)}

    def __init__(self, fun):
        super().__init__(fun, (), (), (), None)

    def _key(self, *args_kwargs):
        try:
            return super()._key(*args_kwargs)
        except Exception:  # noqa: BLE001 - an argument jit refuses (a str): the
            raise Untypeable from None  # caller's path takes it, as before

    def _build(self, key, args, kwargs):
        fn, text = super()._build(key, args, kwargs)
        missing = _unbound_globals(fn)
        if missing:  # a safety net, never silent: counted and warned (tests check
            # that none arises: test_ode, test_function_rebinding); the caller's own
            # code runs instead (strong results)
            name = getattr(self.fun, "__name__", "?")
            UNBOUND_FALLBACKS.append((name, tuple(sorted(missing))))
            warnings.warn(
                f"srcjax: the weak-typed code built for {name} reads "
                f"{', '.join(sorted(missing))}, which nothing defines (a name lost in "
                "srcjax's generated code: please report it, with the function); its "
                "results are computed without JAX's weak types instead",
                RuntimeWarning,
                stacklevel=2,
            )
            raise Untypeable
        return fn, text

    def _specialize(self, key, args, kwargs):
        try:
            return super()._specialize(key, args, kwargs)
        except Exception:  # noqa: BLE001 - the caller's path runs instead (and raises
            # the user's error there, if it is one); remembered for this signature
            with self._build_lock:
                self._specs[key] = _untypeable
            raise Untypeable from None


_transformed.WEAK_TYPED["make"] = _WeakTyped  # (grad's _typed: the api layer imports no jit)


def weak_typed(fn: Callable) -> _WeakTyped:
    """The :class:`_WeakTyped` of a generated function (a transform's code: jvp's),
    made once and kept on it."""
    typed = fn.__dict__.get("_srcjax_weak_typed")
    if typed is None:
        typed = fn.__dict__["_srcjax_weak_typed"] = _WeakTyped(fn)
    return typed


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
