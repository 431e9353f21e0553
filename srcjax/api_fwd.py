"""Forward mode and the rest of JAX's differentiation API.

``jvp``, ``linearize`` and ``vjp``, with JAX's signatures and semantics
(https://docs.jax.dev/en/latest/jax.html), and the generated jvp/vjp/primal
code that :mod:`srcjax.api_jac` builds ``jacfwd``, ``jacrev`` and ``hessian``
on. Every one of them runs generated code that ``srcjax.source`` can print,
and every generated function is itself valid srcjax input, so they compose:
``jacfwd(jacrev(f))``, ``jvp`` of ``grad``, ``grad`` of ``jvp``, ``vjp`` of a
``vjp`` function.
"""

from __future__ import annotations

import functools
import importlib
import threading
import weakref
from typing import Any, Callable, Sequence, Tuple

import gast
import numpy as np

from ._array import _WeakArray, unwrap_args, unwrap_kwargs, wrap, wrap_tree
from .api import (
    _TRANSFORM_CACHE,
    Transformed,
    _canon_args,
    _kind,
    _map_leaves,
    _missing_defaults,
    fastcall,
    fixed_arity,
)
from .api.args import _F32, positional_names
from .api.transformed import Untypeable
from .codegen import emit
from .driver import Generated, transform
from .errors import TransformTypeError, TransformValueError
from .frontend import hooks as frontend_hooks
from .frontend import nodes as N
from .frontend.normalize import dependencies_valid
from .frontend.source import FunctionSource, unwrap_callable
from .jit_api import _unalias
from .jit_api.jitted import weak_typed
from .primitives import hooks as _hooks
from .transforms.forward import forward
from .transforms.reverse import reverse

_cfg = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)

__all__ = ["jvp", "linearize", "vjp"]

_LOCK = threading.Lock()


def _target(fun: Any, kinds: Tuple[str, ...]):
    """(python function with source, leading bound args) for ``fun``."""
    if isinstance(fun, Transformed):  # (jit(lambda *xs: ...): jit passes its function on)
        gen = fixed_arity(fun._generated(kinds), len(kinds), keywords=False)
        return gen, tuple(getattr(fun, "_bound", ()))
    pyfn, bound, bkw = unwrap_callable(fun)
    if bkw:
        raise TransformTypeError("functools.partial with keyword arguments is not supported here")
    # `*args` (jnp.atleast_2d): a wrapper of this many parameters
    return fixed_arity(pyfn, len(kinds), keywords=False), bound


def _cached(target, key, build):
    per = _TRANSFORM_CACHE.get(target)
    if per is not None and key in per:
        fn = per[key]
        deps = getattr(fn, "__srcjax_deps__", ())
        if not deps or dependencies_valid(deps):
            return fn
        # an inlined callee was redefined since: transform again
    fn = build()
    with _LOCK:
        _TRANSFORM_CACHE.setdefault(target, {})[key] = fn
    return fn


def _jvp_function(
    fun: Any, kinds: Tuple[str, ...], has_aux: bool, tangent_only: bool, positions=None
):
    """Generated ``f_jvp(*primals, *tangents)``; returns (out, out_dot[, aux]), or just
    out_dot with ``tangent_only``. Leading bound arguments of a partial come first.
    ``positions`` (indices among all parameters): only those get tangents."""
    target, bound = _target(fun, kinds)

    def forward_pass(stage):
        src, norm = stage.src, stage.norm
        params = [a.id for a in norm.node.args.args]  # as generated code names them
        wrt = params[len(bound) :]
        if positions is not None:
            wrt = [params[i] for i in positions]
        label = "linearize" if tangent_only else "jvp"
        fdef = forward(norm, wrt, has_aux=has_aux, name=f"{src.name}_{label}")
        if tangent_only:
            ret = fdef.body[-1]
            ret.value = ret.value.elts[1]
        return Generated(fdef, f"{label} of", f"with tangents for {', '.join(wrt)}")

    def build():
        return transform(target, kinds, forward_pass, defaults=False)

    fn = _cached(target, ("jvp", kinds, has_aux, tangent_only, positions, len(bound)), build)
    return fn, bound


# srcjax.jvp(f, ...) called inside transformed code (the normalizer's hook)
frontend_hooks.jvp_function.set(_jvp_function)


def _vjp_function(fun: Any, kinds: Tuple[str, ...], has_aux: bool, argnums=None):
    """Generated ``f_vjp(*primals, ct)`` returning the tuple of cotangents of the
    primals (after bound arguments)."""
    target, bound = _target(fun, kinds)

    def vjp_pass(stage):
        src, norm = stage.src, stage.norm
        norm.tuple_wrt = True
        params = [a.id for a in norm.node.args.args]  # as generated code names them
        wrt = params[len(bound) :]
        if argnums is not None:
            wrt = [wrt[a] for a in argnums]
        pkinds = {p: (kinds[i] if i < len(kinds) else "leaf") for i, p in enumerate(params)}
        ct = norm.namer.fresh("out_bar_in")
        fdef = reverse(
            norm,
            wrt,
            pkinds,
            has_aux=has_aux,
            with_value=False,
            name=f"{src.name}_vjp",
            cotangent=ct,
        )
        if has_aux:  # the vjp function returns cotangents only
            ret = fdef.body[-1]
            ret.value = ret.value.elts[0]
        return Generated(fdef, "vjp of", f"with respect to {', '.join(wrt)}")

    def build():
        return transform(target, kinds, vjp_pass, defaults=False)

    fn = _cached(target, ("vjp", kinds, has_aux, argnums, len(bound)), build)
    return fn, bound


def _primal_function(fun: Any, kinds: Tuple[str, ...]):
    """(generated ``f(*args)`` computing ``fun``'s output, leading bound args).

    Used wherever a transform needs the primal output (its shape for a Jacobian's
    basis, ``vjp``'s and ``linearize``'s first result, ``has_aux`` outputs): user
    code is never called as it is, since transformed-only syntax (``x.at[...]``,
    ``lax`` loops on arrays) only works once normalized. A srcjax transform's
    generated code is already such code and is used directly.
    """
    target, bound = _target(fun, kinds)
    if isinstance(fun, Transformed):
        return target, bound

    def primal_pass(stage):
        fdef = stage.norm.node  # the normalized code itself
        fdef.name = f"{stage.src.name}_primal"
        return Generated(fdef, "primal of")

    def build():
        return transform(target, kinds, primal_pass)

    return _cached(target, ("primal", len(bound), kinds), build), bound


def _call_primal(fun: Any, args: tuple) -> Any:
    """``fun(*args)`` through its generated primal code (see :func:`_primal_function`)."""
    fn, bound = _primal_function(fun, _kinds(tuple(bound_of(fun)) + tuple(args)))
    # as jit's outputs: dicts in sorted key order, 32-bit unless x64, no aliasing
    return _unalias(fn(*bound, *args), tuple(args), {}, frozenset())


def _kinds(args) -> Tuple[str, ...]:
    return tuple(_kind(a) for a in args)


def _check_tangents(primals, tangents) -> None:
    """JAX's checks: same pytree structure, shapes, and dtypes for tangents."""
    from .tree_util import tree_flatten

    for i, (p, t) in enumerate(zip(primals, tangents)):
        pl, pdef = tree_flatten(p)
        tl, tdef = tree_flatten(t)
        if pdef != tdef:
            raise TransformTypeError(
                f"primal and tangent arguments to jvp must have the same tree structure; "
                f"argument {i}: primal {pdef} and tangent {tdef}"
            )
        for a, b in zip(pl, tl):
            if np.shape(a) != np.shape(b):
                raise TransformValueError(
                    "jvp called with different primal and tangent shapes; argument "
                    f"{i}: primal shape {np.shape(a)}, tangent shape {np.shape(b)}"
                )
            da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
            if da is not None and db is not None and da.kind in "fc" and db.kind in "biu":
                # an integer tangent for a floating primal (user X; JAX's TypeError)
                raise TransformTypeError(
                    "primal and tangent arguments to jvp do not match; dtypes must be "
                    f"equal: argument {i}: primal dtype {da}, tangent dtype {db}"
                )
            if da is not None and db is not None and da != db and da.kind == db.kind:
                raise TransformTypeError(
                    "primal and tangent arguments to jvp must have equal types; argument "
                    f"{i}: primal dtype {da}, tangent dtype {db}"
                )


def _check_inexact(args, what: str) -> None:
    """Differentiated arguments must be floating (JAX: integers need float0 tangents)."""
    from .api import _check_leaves

    for i, a in enumerate(args):
        _check_leaves(a, i, what)


def jvp(
    fun: Callable, primals: Sequence[Any], tangents: Sequence[Any], has_aux: bool = False
) -> Any:
    """Jacobian-vector product (``jax.jvp``).

    Args:
        fun: function of ``len(primals)`` positional arguments (pytrees allowed).
        primals: tuple of the point to evaluate at.
        tangents: tuple of tangents, same structure, shapes and dtypes as ``primals``.
        has_aux: ``fun`` returns ``(out, aux)``.

    Returns:
        ``(fun(*primals), J @ tangents)`` (plus ``aux`` with ``has_aux``); the
        tangent has ``out``'s structure.

    Raises:
        TypeError if ``primals``/``tangents`` are not tuples or lists of equal length.
    """
    try:
        fast = _JVP_FAST.get(fun)
    except TypeError:  # (a callable that cannot be hashed or weakly referenced)
        fast = None
    if fast is not None:
        tp = type(primals)
        if (tp is tuple or tp is list) and type(tangents) is tp:
            entry = fast.get((has_aux, len(primals), *map(type, primals), *map(type, tangents)))
            if entry is not None:
                out = entry(primals, tangents)
                if out is not fastcall.MISS:
                    return out
    try:
        return _jvp_full(fun, primals, tangents, has_aux)
    except Exception as e:
        located = _call_error(e, fun, primals, True)
        if located is e:
            raise
        raise located from None


def _call_error(err: Exception, fun: Any, primals: Any, tangents: bool = False) -> Exception:
    """The error to raise for ``err``, which escaped the generated code of a
    transformation of ``fun`` called at ``primals``: at the user's line
    (errors.runtime_error), a call that does not bind naming ``fun``; with
    ``tangents`` (f_jvp, which takes the tangents too) the parameters of
    ``fun`` that were not bound, as JAX's call of it."""
    from .errors import _binding_error, runtime_error

    if tangents and isinstance(err, TypeError) and _binding_error(err, fun) is not None:
        import inspect

        try:
            inspect.signature(fun).bind(*primals)
        except (TypeError, ValueError) as bind:
            return TypeError(f"{getattr(fun, '__name__', 'function')}() {bind}")
    return runtime_error(err, fun)


def _jvp_full(fun: Callable, primals: Any, tangents: Any, has_aux: bool) -> Any:
    """:func:`jvp`'s full path: checks, canonical arguments, the generated code
    for their kinds (installing an entry for later calls where it can)."""
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TransformTypeError(
            "primal and tangent arguments to jvp must be tuples or lists; found "
            f"{type(primals).__name__} and {type(tangents).__name__}."
        )
    if len(primals) != len(tangents):
        raise TransformValueError(
            "jvp called with different primal and tangent lengths; primals have length "
            f"{len(primals)} and tangents have length {len(tangents)}"
        )
    raw = (primals, tangents)
    primals, tangents = _canon_args(primals), _canon_args(tangents)
    extra = _defaults_args(fun, len(primals))
    _check_inexact(primals, "jvp")
    _check_tangents(primals, tangents)
    primals, tangents = primals + extra, tangents + _zero_tangents(extra)
    fn, bound = _jvp_function(fun, _kinds(tuple(bound_of(fun)) + tuple(primals)), has_aux, False)
    if any(type(p) is float or type(p) is _WeakArray for p in raw[0]):
        # a Python float (or weakly typed Array) primal: the generated code specialized
        # on the arguments' abstract signature with JAX's dtypes and weak types, as
        # jit specializes it (what is computed from weak scalars only is weak)
        p, t = unwrap_args(tuple(raw[0])), unwrap_args(tuple(raw[1]))
        try:
            return weak_typed(fn)(*bound, *p, *extra, *t, *_zero_tangents(extra))
        except Untypeable:
            pass  # (code jit cannot transform again: NumPy's types, as below)
    if not extra and not fn.__srcjax_deps__ and fastcall.enabled():
        _install_jvp(fun, has_aux, raw, fn, bound)
    return _jvp_finish(fn(*bound, *primals, *tangents), primals + tangents)


#: fun -> {(has_aux, number of primals, primal types, tangent types): entry}: the
#: steady-state call of jvp with leaf arguments (fastcall); installed by the full path
_JVP_FAST = fastcall.table(weakref.WeakKeyDictionary())


def _jvp_finish(out: Any, args: tuple) -> Any:
    """The generated jvp code's result as ``jvp`` returns it: outputs never share
    memory with the arguments, as in jit (JAX arrays are immutable), as Arrays
    (``_unalias``); a pair of float32 scalars (a scalar function's value and
    tangent) wrapped directly."""
    if type(out) is tuple and len(out) == 2:
        a, b = out
        if type(a) is _F32 and type(b) is _F32:
            return (wrap(a), wrap(b))
    return _unalias(out, args, {}, frozenset())


def _install_jvp(fun: Any, has_aux: bool, raw: tuple, fn: Callable, bound: tuple) -> None:
    """An entry for later ``jvp(fun, primals, tangents)`` calls with arguments of
    the types of ``raw`` (the call's primals and tangents, before canonicalization)
    when each is a leaf that canonicalization leaves as it is (fastcall.leaf_buffers;
    a Python float is not: see there): it checks what the full path would (a float
    dtype; tangents of their primals' dtype and shape), else takes the full path."""
    primals, tangents = raw
    dtypes = fastcall.leaf_dtypes()
    if fastcall.leaf_buffers(primals, dtypes) is None:
        return
    if fastcall.leaf_buffers(tangents, dtypes) is None:
        return
    n = len(primals)

    def entry(primals: Any, tangents: Any) -> Any:
        ps = fastcall.leaf_buffers(primals, dtypes)
        ts = fastcall.leaf_buffers(tangents, dtypes)
        if ps is not None and ts is not None and len(ts) == n:
            for p, t in zip(ps, ts):
                if p.dtype != t.dtype or p.shape != t.shape:
                    break
            else:
                return _jvp_finish(fn(*bound, *ps, *ts), (*ps, *ts))
        return fastcall.MISS  # (the full path: no reference to fun here, a weak key)

    key = (has_aux, n, *map(type, primals), *map(type, tangents))
    try:
        _JVP_FAST.setdefault(fun, {})[key] = entry
    except TypeError:  # (fun cannot be weakly referenced: no entry)
        pass


def _defaults_args(fun: Any, nargs: int) -> tuple:
    """The values of the parameters a call leaves to their defaults, canonicalized,
    to pass explicitly: the generated code's signature also has tangent or
    cotangent parameters, so Python's own defaults cannot apply."""
    return _canon_args(tuple(_missing_defaults(fun, nargs).values()))


def _zero_tangents(values: tuple) -> tuple:
    return tuple(_map_leaves(lambda v: np.zeros_like(v), v) for v in values)


def _snapshot(args: tuple) -> tuple:
    """``args`` with every writeable ndarray leaf copied: the functions vjp and
    linearize return re-run the forward computation when called, which must see
    the primals as they were (JAX's arrays are immutable; a later ``x += 1`` on a
    NumPy array changed vjp_fn's result: user K r15)."""

    def copy(v: Any) -> Any:
        if isinstance(v, np.ndarray) and v.flags.writeable and v.ndim:
            return v.copy()
        return v

    return tuple(_map_leaves(copy, a) for a in args)


def bound_of(fun: Any) -> tuple:
    if isinstance(fun, Transformed):
        return tuple(getattr(fun, "_bound", ()))
    try:
        return unwrap_callable(fun)[1]
    except Exception:  # noqa: BLE001 - reported later with a better message
        return ()


def linearize(fun: Callable, *primals: Any) -> Tuple[Any, Callable]:
    """``(fun(*primals), f_jvp)`` with ``f_jvp(*tangents) = J @ tangents`` (``jax.linearize``).

    ``f_jvp`` is a ``functools.partial`` of generated code with the primals bound;
    unlike JAX it re-evaluates the primal computation on each call.
    """
    primals = _canon_args(primals)
    extra = _defaults_args(fun, len(primals))
    if extra:
        fn, bound = _jvp_function(fun, _kinds(tuple(bound_of(fun)) + primals + extra), False, True)
        zeros = _zero_tangents(extra)
        kept = _snapshot(primals)

        def f_jvp(*tangents):
            tangents = unwrap_args(tangents)
            return wrap_tree(fn(*bound, *kept, *extra, *tangents, *zeros))

        return _call_primal(fun, primals + extra), f_jvp
    fn, bound = _jvp_function(fun, _kinds(tuple(bound_of(fun)) + primals), False, True)
    out = _call_primal(fun, primals)
    return out, _OnArrays(fn, *bound, *_snapshot(primals))


def vjp(fun: Callable, *primals: Any, has_aux: bool = False) -> Any:
    """Vector-Jacobian product (``jax.vjp``).

    Returns:
        ``(out, vjp_fn)`` (``(out, vjp_fn, aux)`` with ``has_aux``), where
        ``vjp_fn(ct)`` gives the tuple of cotangents of ``primals`` for an output
        cotangent ``ct`` with ``out``'s structure. ``vjp_fn`` is a
        ``functools.partial`` of generated code, so it can be transformed again
        (``vjp`` of ``vjp``); it re-runs the forward sweep on each call.
    """
    primals = _canon_args(primals)
    _check_inexact(primals, "vjp")
    # parameters left to their defaults are passed explicitly, not differentiated
    extra = _defaults_args(fun, len(primals))
    nums = tuple(range(len(primals))) if extra else None
    primals = primals + extra
    try:
        res = _call_primal(fun, primals)
    except Exception as e:
        located = _call_error(e, fun, primals)
        if located is e:
            raise
        raise located from None
    fn, bound = _vjp_function(fun, _kinds(tuple(bound_of(fun)) + primals), has_aux, nums)
    kept = _snapshot(primals)
    if _cfg.checks_enabled:  # the pullback checks its cotangents' shapes and dtypes
        from . import tree_util
        from ._cotangent_check import checked_pullback

        n = len(primals) - len(extra)
        # (a partial of the checking partial: transformable as one)
        pullback = _OnArrays(checked_pullback(tree_util, fn, (*bound, *kept), kept[:n]))
    else:
        pullback = _OnArrays(fn, *bound, *kept)
    if has_aux:
        out, aux = res
        return out, pullback, aux
    return res, pullback


class _OnArrays(functools.partial):
    """The ``functools.partial`` of generated code that ``vjp`` and ``linearize``
    return (transformable again as a partial), called at the Arrays boundary: its
    arguments' Arrays as buffers, its results as Arrays."""

    def __call__(self, *args, **kwargs):
        if kwargs:
            kwargs = unwrap_kwargs(kwargs)
        return wrap_tree(super().__call__(*unwrap_args(args), **kwargs))


def _first_output(fun: Callable) -> Callable:
    """``lambda *args: fun(*args)[0]`` as a function with source (so it can be
    transformed), with ``fun``'s positional parameters."""
    try:
        params = positional_names(fun)
    except (TypeError, ValueError):
        raise TransformTypeError(f"cannot read the parameters of {fun!r}") from None
    args = ", ".join(params)
    text = f"def value({args}):\n    return fun({args})[0]\n"
    value = emit.synthetic_module(text, "has_aux value", {"fun": fun})["value"]
    value.__defaults__ = getattr(fun, "__defaults__", None)  # (a jit caller fills them)
    return value


def _unused(*_):  # keep imports used by type checkers
    return gast, N, FunctionSource


jvp.__srcjax_jvp__ = True
vjp.__srcjax_not_inside__ = True
linearize.__srcjax_not_inside__ = True


class JvpView(Transformed):
    """The generated jvp code of ``fun`` as a transform object, for ``srcjax.source``
    and ``srcjax show --jvp``: ``f_jvp(*primals, *tangents) -> (out, out_dot)``."""

    kind = "jvp"

    def _build(self, kinds):
        return _jvp_function(self.fun, kinds, False, False)[0]

    def __call__(self, *args):
        n = len(args) // 2
        return jvp(self.fun, args[:n], args[n:])


class VjpView(Transformed):
    """The generated vjp code of ``fun``: ``f_vjp(*primals, ct) -> cotangents``."""

    kind = "vjp"

    def _build(self, kinds):
        return _vjp_function(self.fun, kinds, False)[0]

    def __call__(self, *args):
        return self._generated(_kinds(args[:-1]))(*args)


def _transpose_linear(tangent_map: Callable, ct: Any, position: int, *args: Any) -> Any:
    """``J^T ct`` for the linear map ``t -> tangent_map(*args, t)`` (the tangent of
    argument ``position``), by reverse mode on ``tangent_map``'s source: the hook
    ``ad.custom_transpose`` calls (reverse mode through a ``custom_jvp`` rule)."""
    like = args[position]
    t0 = np.zeros(np.shape(like), dtype=getattr(like, "dtype", np.float32))
    kinds = tuple(_kind(a) for a in args) + ("leaf",)
    fn, _ = _vjp_function(tangent_map, kinds, False, argnums=(len(args),))
    return fn(*args, t0, ct)[0]


_hooks.provide("transpose_linear", _transpose_linear)
