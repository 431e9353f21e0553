"""``vmap``: automatic vectorization by source transformation.

``srcjax.vmap(f)`` reads ``f``'s source and generates a batched version (see
:mod:`srcjax.transforms.batching`); ``srcjax.source(vmap(f), *args)`` prints it.
"""

from __future__ import annotations

import functools
import importlib
import inspect
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from . import _debug_nans
from ._array import unwrap_args_weak, unwrap_kwargs, unwrap_tree, wrap_weak
from ._dict_order import args_in_jax_order
from .api import Transformed, _canon_args, _kind, fixed_arity
from .api.transformed import Untypeable
from .codegen import diskcache
from .driver import Generated, transform, user_none_names
from .dtypes import canonicalize_dtype
from .errors import TransformValueError, runtime_error
from .frontend import nodes as N
from .frontend.normalize import dependencies_valid
from .frontend.source import _is_callable_object, get_source, unwrap_callable
from .jit_api import _unalias
from .jit_api.jitted import weak_typed
from .transforms.batching import BatchSpec, batch
from .tree_util import tree_leaves as _tree_leaves

_AxisError = getattr(np, "exceptions", np).AxisError

_cfg = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)

__all__ = ["vmap"]


def _hashable(spec: Any) -> Any:
    if isinstance(spec, dict):
        return ("dict", tuple(sorted((k, _hashable(v)) for k, v in spec.items())))
    if isinstance(spec, (list, tuple)):
        return (type(spec).__name__, tuple(_hashable(v) for v in spec))
    return spec


def _skeleton(x: Any) -> Any:
    """The container structure of ``x`` (what the batching analysis needs to know
    about which items are containers)."""
    if isinstance(x, dict):
        return ("dict", tuple((k, _skeleton(v)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        items = tuple(_skeleton(v) for v in x)
        if items and all(i == items[0] for i in items) and not hasattr(x, "_fields"):
            return ("seq", items[0])
        return ("items", items)
    if x is None:
        return "none"
    from .primitives.control import _class_kind, static_attrs

    kind = _class_kind(x)
    if kind is not None:
        # a registered class: the structure of the attributes that are children
        # attributes that are children (their structure), and static ones (aux
        # data, constants: unbatched under vmap)
        children = kind.flatten(x)[0]
        attrs = getattr(x, "__dict__", {})
        named = tuple(
            (a, _skeleton(v)) for a, v in sorted(attrs.items()) if any(v is c for c in children)
        )
        return ("class", named, static_attrs(x))
    return "leaf"


def _is_leaf(x: Any) -> bool:
    return _kind(x) == "leaf"


def _describe(x: Any) -> str:
    """``float32[3]``: the abstract value JAX's message names (64-bit NumPy
    inputs canonicalized, as vmap computes on them, unless x64 is on)."""
    dt = getattr(x, "dtype", None)
    shape = np.shape(x)
    if dt is not None and dt.kind in "biufc":
        dt = canonicalize_dtype(dt)
    name = dt.name if dt is not None else type(x).__name__
    return f"{name}[{','.join(str(s) for s in shape)}]"


def _check_axes(arg: Any, spec: Any, where: str, sizes: List[Tuple[str, int, int, Any]]) -> None:
    """Validate the in_axes prefix ``spec`` against ``arg``; collect mapped sizes."""
    if spec is None:
        return
    if isinstance(spec, bool) or not isinstance(spec, (int, np.integer, dict, list, tuple)):
        raise ValueError(
            f"vmap in_axes must be an int, None, or (nested) container with those types as "
            f"leaves, but got {spec!r} for {where}"
        )
    if isinstance(spec, dict):
        if not isinstance(arg, dict) or set(spec) != set(arg):
            raise ValueError(
                f"vmap in_axes specification must be a tree prefix of the corresponding value, "
                f"got specification {spec!r} for value tree of {where} "
                f"({type(arg).__name__}{'' if not isinstance(arg, dict) else sorted(arg)})"
            )
        for k in spec:
            _check_axes(arg[k], spec[k], f"{where}[{k!r}]", sizes)
        return
    if isinstance(spec, (list, tuple)):
        if not isinstance(arg, (list, tuple)) or len(arg) != len(spec):
            raise ValueError(
                f"vmap in_axes specification must be a tree prefix of the corresponding value, "
                f"got specification {spec!r} for {where} of type {type(arg).__name__}"
            )
        for i, (a, s) in enumerate(zip(arg, spec)):
            _check_axes(a, s, f"{where}[{i}]", sizes)
        return
    ax = int(spec)
    if isinstance(arg, dict):
        for k, v in arg.items():
            _check_axes(v, ax, f"{where}[{k!r}]", sizes)
        return
    if isinstance(arg, (list, tuple)):
        for i, v in enumerate(arg):
            _check_axes(v, ax, f"{where}[{i}]", sizes)
        return
    if arg is None:
        return
    if _kind(arg) == "tree":  # a registered pytree class: every leaf
        from . import tree_util

        for i, v in enumerate(tree_util.tree_leaves(arg)):
            _check_axes(v, ax, f"{where} leaf {i}", sizes)
        return
    if not (hasattr(arg, "shape") or hasattr(arg, "__array__") or type(arg) in _NUMBERS):
        raise TypeError(f"Argument '{arg!r:.60}' of type '{type(arg)}' is not a valid JAX type")
    nd = np.ndim(arg)
    if not -nd <= ax < nd:
        raise ValueError(
            f"vmap was requested to map its argument along axis {ax}, which implies that its "
            f"rank should be at least {ax + 1 if ax >= 0 else -ax}, but is only {nd} "
            f"({where} of type {_describe(arg)})"
        )
    sizes.append((where, ax, np.shape(arg)[ax], arg))


_NUMBERS = (bool, int, float, complex)


def _per_example_reshape(err: Exception) -> Exception:
    """A reshape's ShapeError raised by the batched code's reshape of a batched
    operand, ``jnp.reshape(x, (batch, 4, 2))`` (``batch``: the mapped size, the
    first name the batched function binds), with the shapes of one example, as
    JAX's (``(6,)`` into ``(4, 2)``, not ``(5, 6)`` into ``(5, 4, 2)``); ``err``
    itself otherwise."""
    import ast
    import linecache

    from .errors import ShapeError, _generated_frame

    shapes = getattr(err, "sj_reshape", None)
    tb = _generated_frame(err.__traceback__)
    if shapes is None or tb is None:
        return err
    code = tb.tb_frame.f_code
    line = linecache.getline(code.co_filename, tb.tb_lineno).split("#")[0].strip()
    first = linecache.getline(code.co_filename, code.co_firstlineno + 1).strip()
    try:
        call = ast.parse(line).body[0].value
    except (SyntaxError, IndexError, AttributeError):
        return err
    if not (
        isinstance(call, ast.Call)
        and ast.unparse(call.func) == "jnp.reshape"
        and len(call.args) == 2
        and isinstance(call.args[1], ast.Tuple)
        and call.args[1].elts
        and isinstance(call.args[1].elts[0], ast.Name)
        and first.startswith(call.args[1].elts[0].id + " = ")
    ):
        return err
    sa, shape = shapes
    if not (len(sa) and len(shape) and sa[0] == shape[0]):
        return err
    sa, shape = tuple(sa[1:]), tuple(shape[1:])
    out = ShapeError(
        f"cannot reshape array of shape {sa} (size {int(np.prod(sa))}) into shape {shape}"
    )
    return out.with_traceback(err.__traceback__)


def _canon_axes(spec: Any) -> Any:
    """Lists in in_axes behave as tuples (JAX treats them as pytree nodes)."""
    if isinstance(spec, list):
        return tuple(_canon_axes(s) for s in spec)
    if isinstance(spec, dict):
        return {k: _canon_axes(v) for k, v in spec.items()}
    if isinstance(spec, np.integer):
        return int(spec)
    return spec


class _Vmap(Transformed):
    kind = "vmap"

    def __init__(self, fun, in_axes, out_axes, axis_name, axis_size):
        super().__init__(fun)
        if isinstance(in_axes, list):
            in_axes = tuple(in_axes)
        if not (in_axes is None or isinstance(in_axes, (int, tuple, dict, np.integer))) or (
            isinstance(in_axes, bool)
        ):
            raise TypeError(
                "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
                f"positional arguments passed to the function, but got {in_axes!r}."
            )
        self.in_axes = _canon_axes(in_axes)
        self.out_axes = _canon_axes(out_axes)
        self.axis_name = axis_name
        self.axis_size = axis_size
        # functools.partial layers: leading bound arguments are unbatched constants
        inner = fun
        bound: tuple = ()
        bkw: dict = {}
        import types as _types

        while True:
            if isinstance(inner, functools.partial):
                bound = tuple(inner.args) + bound
                bkw = {**inner.keywords, **bkw}
                inner = inner.func
            elif isinstance(inner, _types.MethodType):
                bound = (inner.__self__,) + bound  # self is an unbatched constant
                inner = inner.__func__
            elif _is_callable_object(inner):  # vmap(model): model.__call__, self unbatched
                bound = (inner,) + bound
                inner = type(inner).__call__
            elif isinstance(inner, Transformed) and getattr(inner, "_bound", ()):
                bound = tuple(inner._bound) + bound  # grad(m.f): its bound self
                break
            else:
                break
        self._inner = inner
        self._pbound = unwrap_tree(bound)  # (bound Arrays: buffers for generated code)
        self._pkw = unwrap_kwargs(bkw)
        self._sig_names: Optional[List[str]] = None

    # ------------------------------------------------------------------ targets
    def _target(self, kinds: Tuple[str, ...]):
        full = tuple(_kind(a) for a in self._pbound) + tuple(kinds)
        if isinstance(self._inner, Transformed):
            # (jit(lambda *xs: ...) passes its function on: fixed here too)
            target = fixed_arity(self._inner._generated(full), len(full), keywords=False)
            deps = getattr(target, "__srcjax_deps__", ())
            if deps and not dependencies_valid(deps) and hasattr(self._inner, "_rebuild"):
                target = self._inner._rebuild(full)  # (grad(f) with a redefined helper)
            return target, full
        pyfn, bargs, bkw = unwrap_callable(self._inner)
        if bargs or bkw:
            raise TransformValueError("vmap: bound methods with partials are not supported")
        return fixed_arity(pyfn, len(full), keywords=False), full  # `*args`

    def _param_names(self) -> List[str]:
        if self._sig_names is None:
            if isinstance(self._inner, Transformed):
                try:
                    names = list(inspect.signature(self._inner).parameters)
                except (TypeError, ValueError):
                    names = []
            else:
                pyfn, _, _ = unwrap_callable(self._inner)
                names = [a.id for a in get_source(pyfn).node.args.args]
            self._sig_names = names
        return self._sig_names

    def _generated(self, kinds: Tuple[str, ...], axes: Any = None, skels: Any = None):
        if axes is None:
            axes = self.in_axes
        key = (tuple(kinds), _hashable(axes), skels)
        fn = self._cache.get(key)
        if fn is not None and fn.__srcjax_deps__ and not dependencies_valid(fn.__srcjax_deps__):
            # something read when transforming changed (a redefined helper, a static
            # flag, lax.switch's branch list): transform again
            fn = None
        if fn is None:
            with self._lock:
                fn = self._cache.get(key)
                if fn is None or not dependencies_valid(fn.__srcjax_deps__):
                    fn = self._build(tuple(kinds), axes, skels)
                    self._cache[key] = fn
        return fn

    def _build(self, kinds: Tuple[str, ...], axes: Any, skels: Any = None):
        target, full = self._target(kinds)

        def batching_pass(stage):
            return self._batching_pass(stage, target, full, axes, skels)

        def build():
            fn = transform(target, full, batching_pass, defaults=True)
            # the inner transform's dependencies (vmap(grad(f))) are this code's too
            fn.__srcjax_deps__ += tuple(getattr(target, "__srcjax_deps__", ()))
            return fn

        if self._pbound or self._pkw:  # (bound values are bindings: memory only)
            return build()
        what = (
            "vmap",
            full,
            _hashable(axes),
            skels,
            _hashable(self.out_axes),
            self.axis_name,
            self.axis_size,
        )
        return diskcache.cached(what, target, f"{getattr(target, '__name__', 'fn')}_vmap", build)

    def _batching_pass(self, stage, target, full, axes, skels):
        src, norm = stage.src, stage.norm
        params = [a.id for a in norm.node.args.args]  # as generated code names them
        renamed = dict(zip((a.id for a in src.node.args.args), params))
        nb = len(self._pbound)
        visible = params[nb:]
        nkw = len(self._pkw)
        pkinds = {p: (full[i] if i < len(full) else "leaf") for i, p in enumerate(params)}
        # per-parameter axes
        per: Dict[str, Any] = {}
        if isinstance(axes, tuple):
            for p, ax in zip(visible, axes):
                per[p] = ax
            for p in visible[len(axes) :]:
                per[p] = 0  # keyword arguments are mapped along axis 0
        else:
            for p in visible:
                per[p] = axes
        for p in params[len(full) :]:
            # left to its default (an outer transform passes only the arguments
            # given: jit(vmap(f))(x) for def f(x, n=4)): unmapped, as in JAX
            per[p] = None
        bound_names = {}
        for p, v in zip(params[:nb], self._pbound):
            bname = norm.namer.fresh(f"{p}_bound")
            norm.bindings[bname] = v
            bound_names[p] = bname
        for k, v in self._pkw.items():
            k = renamed.get(k, k)
            if k in params:
                bname = norm.namer.fresh(f"{k}_bound")
                norm.bindings[bname] = v
                bound_names[k] = bname
        del nkw
        skel_map = {}
        for p, v in zip(params[:nb], self._pbound):
            skel_map[p] = _skeleton(v)
        for p, sk in zip(visible, skels or ()):
            skel_map[p] = sk
        spec = BatchSpec(
            per,
            pkinds,
            self.out_axes,
            self.axis_size,
            bound_names,
            skel_map,
            self.axis_name,
            # a user function (generated code has __srcjax_deps__), or the user's
            # variables of generated code
            user_names=getattr(target, "__srcjax_user_names__", None)
            if hasattr(target, "__srcjax_deps__")
            else None,
            user_none=getattr(target, "__srcjax_user_none__", None)
            if hasattr(target, "__srcjax_deps__")
            else user_none_names(src, frozenset(N.names_in(src.node))),
        )
        gname = f"{src.name}_vmap"
        fdef = batch(norm, spec, name=gname)
        shown = ", ".join(f"{p}={per[p]}" for p in visible if p not in bound_names)
        return Generated(fdef, "vmap of", f"in_axes: {shown}; out_axes={self.out_axes!r}")

    # ------------------------------------------------------------------ calling
    def __call__(self, *args, **kwargs):
        # the boundary: generated code computes on buffers; dicts in JAX's key order
        args, weak = unwrap_args_weak(args)
        args = args_in_jax_order(args)
        if kwargs:
            kwargs = unwrap_kwargs(kwargs)
        if _cfg.debug_nonfinite and not _debug_nans.active():  # jax_debug_nans
            label = f"vmap({getattr(self.fun, '__name__', 'fun')})"
            return _debug_nans.call_checked(
                self.__call__, args, kwargs, label, _tree_leaves, op_by_op=True
            )
        axes = self.in_axes
        if kwargs:
            names = self._param_names()[len(self._pbound) :]
            ordered = list(args)
            rest = dict(kwargs)
            for n in names[len(args) :]:
                if n in rest:
                    ordered.append(rest.pop(n))
                else:
                    break
            if rest:
                raise TypeError(f"vmap: unexpected keyword arguments {sorted(rest)}")
            nkw = len(ordered) - len(args)
            if isinstance(axes, tuple):
                if len(axes) != len(args):
                    raise ValueError(_len_message(axes, args))
                axes = axes + (0,) * nkw
            elif axes is None:
                axes = (None,) * len(args) + (0,) * nkw
            args = tuple(ordered)
        elif isinstance(axes, tuple) and len(axes) != len(args):
            raise ValueError(_len_message(axes, args))
        sizes: List[Tuple[str, int, int, Any]] = []
        names = self._param_names()[len(self._pbound) :]
        for i, a in enumerate(args):
            where = f"argument {names[i]}" if i < len(names) else f"argument {i}"
            spec = axes[i] if isinstance(axes, tuple) else axes
            _check_axes(a, spec, where, sizes)
        if not sizes and self.axis_size is None:
            raise ValueError("vmap must have at least one non-None value in in_axes")
        distinct = {s for _, _, s, _ in sizes}
        if self.axis_size is not None:
            distinct.add(int(self.axis_size))
        if len(distinct) > 1:
            lines = [
                f"  * one axis had size {s}: axis {ax} of {where} of type {_describe(v)}"
                for where, ax, s, v in sizes
            ]
            lines = [ln + ";" for ln in lines[:-1]] + lines[-1:]  # (JAX's punctuation)
            if self.axis_size is not None:
                lines.insert(0, f"  * axis_size was given as {self.axis_size}")
            raise ValueError(
                "vmap got inconsistent sizes for array axes to be mapped:\n" + "\n".join(lines)
            )
        extra = self._default_values(len(args))
        if extra:  # parameters left to their defaults: passed explicitly, unmapped
            axes = axes if isinstance(axes, tuple) else (axes,) * len(args)
            axes = axes + (None,) * len(extra)
            args = args + extra
        kinds = tuple(_kind(a) for a in args)
        skels = tuple(_skeleton(a) if k == "tree" else "leaf" for a, k in zip(args, kinds))
        fn = self._generated(kinds, axes, skels)
        # the batched code specialized on the call's abstract signature with JAX's
        # dtypes and weak types, as jit specializes it (jit_api.jitted._WeakTyped:
        # what is computed from weak scalars only is weak, vmap(lambda x: x *
        # 2.5)(int32_x) too; a weak array argument promotes as a weak value). It
        # canonicalizes as jit does (float64 narrows unless x64 is on; a Python
        # float is a float32 scalar, weakly typed) and never aliases an argument.
        try:
            try:
                if weak:
                    typed = list(args)
                    for i in weak:
                        typed[i] = wrap_weak(typed[i])
                    out = weak_typed(fn)(*typed)
                else:
                    out = weak_typed(fn)(*args)
            except Untypeable:  # (code jit cannot transform again: NumPy's types)
                out = self._plain(fn, args)
        except Exception as e:
            located = self._runtime_error(e)
            if located is e:
                raise
            raise located from None
        if self.out_axes is None or isinstance(self.out_axes, tuple):
            out = _python_numbers(fn, self.out_axes, out)
        if _cfg.checks_enabled:
            from . import tree_util
            from ._cotangent_check import check_vmapped_grad

            # (the primals as grad sees them: an unmapped Python float is float32)
            check_vmapped_grad(tree_util, self, out, _canon_args(args), axes)
        return out

    def _runtime_error(self, err: Exception) -> Exception:
        """The error to raise for ``err`` from the batched code, at the user's
        line (errors.runtime_error); an out_axes beyond the output's rank
        (NumPy's AxisError from the moveaxis placing the mapped axis) is JAX's
        ValueError naming out_axes."""
        if isinstance(err, _AxisError) and str(err).startswith("destination: "):
            message = str(err)[len("destination: ") :]
            err = ValueError(f"vmap out_axes={self.out_axes!r}: {message}").with_traceback(
                err.__traceback__
            )
        return runtime_error(_per_example_reshape(err), self.fun)

    @staticmethod
    def _plain(fn: Callable, args: tuple) -> Any:
        """The batched code called as generated (NumPy's types: a weak result comes
        back strong), where its specialization with JAX's types cannot be built."""
        # JAX's canonicalization: float64/int64 arrays narrow unless x64 is on
        from .api import _map_leaves

        # (an unmapped Python float or complex stays a Python number, as a weak
        # value: vmap(f, in_axes=(0, None))(float16_x, 2.0) is float16)
        args = tuple(_map_leaves(_canon_unmapped, a) for a in args)
        # outputs never share memory with the arguments, as in jit (JAX arrays are
        # immutable: `y = vmap(lambda a: a)(x); y += 1` must leave x alone)
        return _unalias(fn(*args), args, {}, frozenset())


def _python_numbers(fn: Callable, out_axes: Any, out: Any) -> Any:
    """``out`` with the unmapped outputs (``out_axes`` None) that the batched
    code ``fn`` returns as Python number literals given back as those numbers,
    as JAX's vmap does (``vmap(lambda x: 2.0, out_axes=None)(xs)`` is ``2.0``;
    jit's typed boundary made them weak Arrays). Where ``fn``'s final return is a
    literal or a flat tuple display; the literals read once per function."""
    d = getattr(fn, "__dict__", None)
    if d is None:
        return out
    lits = d.get("_srcjax_literal_outs")
    if lits is None:
        lits = d["_srcjax_literal_outs"] = _literal_returns(getattr(fn, "__srcjax_source__", ""))
    if not lits:
        return out
    if out_axes is None:
        return lits.get(None, out)
    if type(out) is tuple and len(out) == len(out_axes):
        return tuple(
            lits[i] if ax is None and i in lits else v
            for i, (ax, v) in enumerate(zip(out_axes, out))
        )
    return out


def _literal_returns(source: Optional[str]) -> dict:
    """{None: value} where the last function of ``source`` ends in ``return``
    of a literal (a number, a bool, a tuple of them), {i: value} for the literal
    items of a returned tuple display; else {}."""
    import ast

    try:
        fdefs = [n for n in ast.parse(source or "").body if isinstance(n, ast.FunctionDef)]
    except SyntaxError:
        return {}
    if not fdefs or not fdefs[-1].body or not isinstance(fdefs[-1].body[-1], ast.Return):
        return {}
    v = fdefs[-1].body[-1].value

    def literal(e: Any) -> Any:
        try:
            x = ast.literal_eval(e)  # (-2.0: a unary minus of a constant)
        except ValueError:
            return _NOT
        ok = type(x) in (bool, int, float, complex) or (
            type(x) is tuple and all(literal(i) is not _NOT for i in e.elts)
        )
        return x if ok else _NOT

    whole = literal(v)
    if whole is not _NOT:
        return {None: whole}
    if isinstance(v, ast.Tuple):
        items = {i: literal(e) for i, e in enumerate(v.elts)}
        return {i: x for i, x in items.items() if x is not _NOT}
    return {}


_NOT = object()  # (not a literal)


def _canon_unmapped(v: Any) -> Any:
    from .api import _canon_leaf

    return v if type(v) is float or type(v) is complex else _canon_leaf(v, False)


def _len_message(axes, args) -> str:
    return (
        "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
        f"positional arguments passed to the function, but got len(in_axes)={len(axes)}, "
        f"len(args)={len(args)}"
    )


def vmap(
    fun: Callable,
    in_axes: Any = 0,
    out_axes: Any = 0,
    axis_name: Optional[str] = None,
    axis_size: Optional[int] = None,
) -> Callable:
    """Vectorizing map (``jax.vmap``) by source transformation.

    ``vmap(f)(xs)`` equals ``stack([f(x) for x in xs])``, computed with array
    operations over the whole batch. Unlike JAX, ``f`` may branch with Python
    ``if`` / ``while`` on batched values: a batched ``if`` evaluates the branches
    the examples take and selects per example (gradients through it are those of
    the branch each example took), a batched ``while`` runs until every example
    is done.

    Args:
        fun: a Python function (lambda, ``functools.partial``, or another srcjax
            transform such as ``grad(f)``) whose source is available.
        in_axes: which axis of each positional argument is mapped: an int
            (negative allowed), ``None`` (not mapped), or a tuple with one entry
            per positional argument, each a pytree prefix of the argument (e.g.
            a dict for a dict argument). Keyword arguments are mapped along axis 0.
        out_axes: where the mapped axis appears in the output: an int, ``None``
            (the output must not depend on the mapped inputs), or a pytree prefix
            of the output.
        axis_name: a name for the mapped axis, so that collectives in ``f``
            (``lax.psum(x, name)``, ``pmean``, ``pmax``, ``pmin``,
            ``all_gather``, ``axis_index``, ``ppermute``) combine the examples,
            as in JAX.
        axis_size: the batch size when no argument is mapped.

    Returns:
        The batched function. ``srcjax.source(vmap(f), *args)`` shows its code.

    Raises:
        ValueError: inconsistent mapped sizes (naming each argument, its axis
            and size), ``in_axes`` not matching the arguments, or no mapped
            argument without ``axis_size``.
    """
    return _Vmap(fun, in_axes, out_axes, axis_name, axis_size)


vmap.__srcjax_factory__ = True
