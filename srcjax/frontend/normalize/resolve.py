"""Call resolution as a table: :data:`CALL_RULES` lists, in order, each
callee kind (a method of ``x.at[i]``, a local function, a transform
factory, a primitive, a user function ...) with the test that recognizes it
and the handler that normalizes the call. :meth:`ResolveMixin.call` runs
the first rule that matches and handles the call. The handlers of a kind
with much to do live in their own modules (``at_update``: :mod:`.at_updates`;
:mod:`.inplace`, :mod:`.receivers`, :mod:`.starargs`).
"""

from __future__ import annotations

import dataclasses
import functools
import types
from typing import Any, Callable, Dict, NamedTuple, Optional, Tuple

import gast
import numpy as np

from ...errors import (
    UnsupportedSyntaxError,
)
from ...primitives import registry
from .. import nodes as N
from . import inplace
from .anf import Op
from .at_updates import _at_update, _is_at_update
from .common import (
    _HostCall,
    _is_library_function,
    _is_namedtuple_class,
    _is_numpy_function,
    _is_user_class,
    _plain_method,
    _positional_construct_args,
    _resolution_error,
    _tree_registry,
    _unsupported,
    runtime_call,
)
from .receivers import built_receiver
from .starargs import expand_star_args, has_star_args

_REGISTER_HINT = (
    "srcjax transforms the classes it knows as pytrees: register {name} "
    "(srcjax.tree_util.register_dataclass, register_pytree_node_class or "
    "register_pytree_node), or use a NamedTuple or a dict"
)


_INACTIVE_BUILTINS = {
    id(f)
    for f in (
        len,
        range,
        print,
        isinstance,
        bool,
        str,
        repr,
        type,
        enumerate,
        zip,
        reversed,
        hasattr,
        format,
        hash,
        id,
        iter,
        any,
        all,
        breakpoint,
        callable,
        issubclass,
        slice,
        np.shape,
        np.ndim,
        np.size,
        np.dtype,
        np.random.default_rng,
    )
}  # results carry no derivative: shapes, flags, strings, printing


class Callee:
    """The callee of one call ``e`` as the rules of :data:`CALL_RULES` see it.
    What it is bound to is resolved lazily, once, when the first rule asks (the
    order of :func:`Normalizer.resolve` calls, which record dependencies, is the
    rules' order)."""

    __slots__ = ("e", "func", "_resolved", "_factory", "at_status", "prim")

    def __init__(self, e: Any) -> None:
        self.e = e
        self.func = e.func
        self._resolved: Optional[tuple] = None
        self._factory: Optional[tuple] = None
        #: the resolution status of ``x`` in ``x.at[idx].<mode>(v)``
        self.at_status: Optional[str] = None
        #: the primitive a ``primitive`` callee is
        self.prim: Any = None

    def resolved(self, norm: Any) -> tuple:
        """``(status, obj)`` of the callee (see ``Normalizer.resolve``)."""
        if self._resolved is None:
            self._resolved = norm.resolve(self.func)
        return self._resolved

    def status(self, norm: Any) -> str:
        return self.resolved(norm)[0]

    def found(self, norm: Any) -> Any:
        """The object the callee is bound to when transforming, else None."""
        status, obj = self.resolved(norm)
        return obj if status == "found" else None

    def obj(self, norm: Any) -> Any:
        return self.resolved(norm)[1]

    def function(self, norm: Any) -> Any:
        """The object called: a jitted function's wrapped function (jit is an
        identity for the other transforms), else what the callee is bound to."""
        obj = self.obj(norm)
        if getattr(obj, "__srcjax_transform__", None) == "jit" and hasattr(
            obj, "__srcjax_wrapped__"
        ):
            return obj.__srcjax_wrapped__
        return obj

    def factory(self, norm: Any) -> tuple:
        """``(status, obj)`` of ``make`` in a call ``make(...)(x)``."""
        if self._factory is None:
            self._factory = norm.resolve(self.func.func)
        return self._factory


class CallRule(NamedTuple):
    """One callee kind: ``matches(norm, callee)`` recognizes it, ``handle(norm,
    callee, target)`` normalizes the call to ``(node, Op)``, or returns None to
    let the next rules try (a typed call on a value of no known class)."""

    kind: str
    matches: Callable[[Any, Callee], bool]
    handle: Callable[[Any, Callee, Optional[str]], Optional[tuple]]


def _args(norm: Any, e: Any) -> tuple:
    """The call's positional and keyword arguments as atoms."""
    return [norm.atom(a) for a in e.args], {k.arg: norm.atom(k.value) for k in e.keywords}


# -- local functions and lambdas ---------------------------------------------------
def _is_local_function(norm: Any, c: Callee) -> bool:
    func = c.func
    return (
        isinstance(func, gast.Name)
        and norm.var(func.id) in norm.local_fns
        and (func.id in norm.locals)
    )


def _local_function(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    args, kws = _args(norm, c.e)
    return norm.call_local(norm.local_fns[norm.var(c.func.id)], args, kws, c.e)


def _is_function_list_item(norm: Any, c: Callee) -> bool:
    func = c.func
    return (
        isinstance(func, gast.Subscript)
        and isinstance(func.value, gast.Name)
        and func.value.id in norm.locals
        and norm.var(func.value.id) in norm.fn_lists
    )


def _function_list_item(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    # acts[i](x) with acts = [jnp.tanh, lambda z: z * 2]
    fns = norm.fn_lists[norm.var(c.func.value.id)]
    args, kws = _args(norm, c.e)
    return norm.call_list_item(fns, c.func.slice, args, kws, c.e)


def _lambda(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    # (lambda y: ...)(x)
    from ..source import _lambda_to_def

    args, kws = _args(norm, c.e)
    return norm.inline_local(_lambda_to_def(c.func), args, kws, c.e)


# -- make(...)(x): the result of a call called ---------------------------------------
def _is_jit_of(norm: Any, c: Callee) -> bool:
    if not isinstance(c.func, gast.Call):
        return False
    st, factory = c.factory(norm)
    return st == "found" and getattr(factory, "__srcjax_jit__", False) and bool(c.func.args)


def _jit_of(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    # jit(f, ...)(x) inside transformed code: jit is an identity here
    call = gast.Call(func=c.func.args[0], args=list(c.e.args), keywords=c.e.keywords)
    N.copy_origin(call, c.e)
    return norm.call(call, target)


def _is_transform_factory(norm: Any, c: Callee) -> bool:
    if not isinstance(c.func, gast.Call):
        return False
    st, factory = c.factory(norm)
    return st == "found" and getattr(factory, "__srcjax_factory__", False)


def _transform_factory(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    return norm.transform_call(c.factory(norm)[1], c.func, c.e, target)


def _is_instance_call(norm: Any, c: Callee) -> bool:
    if not isinstance(c.func, gast.Call):
        return False
    st, factory = c.factory(norm)
    return st == "found" and isinstance(factory, type) and factory in _tree_registry()


def _instance_call(norm: Any, c: Callee, target: Optional[str]) -> Optional[tuple]:
    # Linear(w, b)(x): build the instance, then inline its __call__
    factory = c.factory(norm)[1]
    fn = _plain_method(factory, "__call__")
    if fn is None:
        return None
    obj = norm.atom(c.func, base=factory.__name__.lower())
    return norm.inline_method(fn, [obj], c.e)


# -- typed values --------------------------------------------------------------------
def _is_replace(norm: Any, c: Callee) -> bool:
    func = c.func
    return (
        isinstance(func, gast.Attribute)
        and func.attr == "_replace"
        and isinstance(func.value, gast.Name)
        and not c.e.args
    )


def _replace(norm: Any, c: Callee, target: Optional[str]) -> Optional[tuple]:
    return norm.namedtuple_replace(c.e)


def _is_super_method(norm: Any, c: Callee) -> bool:
    func = c.func
    if isinstance(func, gast.Attribute):
        func = func.value.func if isinstance(func.value, gast.Call) else None
    return isinstance(func, gast.Name) and func.id == "super" and "super" not in norm.locals


def _super_method(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    """``super().act(x)`` in a method: the base class's ``act`` inlined with the
    method's first parameter as ``self`` (user bug 07: generated code has no
    ``__class__`` cell, so a zero-argument ``super()`` cannot run there)."""
    attr = c.func.attr if isinstance(c.func, gast.Attribute) else None
    cell = norm.src.closure.get("__class__")
    cls = getattr(cell, "cell_contents", None)
    params = norm.src.node.args.args
    fn = None
    if attr is not None and isinstance(cls, type) and params and not c.func.value.args:
        for base in cls.__mro__[1:]:
            if attr in base.__dict__:
                f = base.__dict__[attr]
                fn = f if isinstance(f, types.FunctionType) else None
                break
    if fn is None:
        raise UnsupportedSyntaxError(
            f"`{N.to_source(c.e)}` is not supported in transformed functions (only "
            "super().method(...), a zero-argument super() in a method calling a plain "
            "method of a base class)",
            norm.loc(c.e),
            hint=f"call the base class explicitly: Base.{attr or 'method'}(self, ...)",
        )
    lead = N.name(norm.var(params[0].id))
    known = norm.static_params.get(params[0].id)
    if known is not None:
        # self a plain object known here (a config object): the base method sees
        # it as known too, so its `self.act` resolves (bug 40)
        lead = N.name(norm.namer.fresh("bound_self"))
        norm.bindings[lead.id] = known
    return norm.inline_method(fn, [lead], c.e)


def _is_dataclass_replace(norm: Any, c: Callee) -> bool:
    return c.obj(norm) is dataclasses.replace


def _dataclass_replace(norm: Any, c: Callee, target: Optional[str]) -> Optional[tuple]:
    return norm.dataclass_replace(c.e)


def _may_be_typed(norm: Any, c: Callee) -> bool:
    return bool(norm.types) or not isinstance(c.func, gast.Name)


def _typed(norm: Any, c: Callee, target: Optional[str]) -> Optional[tuple]:
    return norm.typed_call(c.e, target)


# -- srcjax functions known by their markers ------------------------------------------
def _marked(marker: str) -> Callable[[Any, Callee], bool]:
    def matches(norm: Any, c: Callee) -> bool:
        return c.status(norm) == "found" and bool(getattr(c.obj(norm), marker, None))

    matches.__name__ = f"_has{marker}"
    return matches


def _is_lax(norm: Any, c: Callee) -> bool:
    return c.status(norm) == "found" and getattr(c.obj(norm), "__srcjax_lax__", None) is not None


def _lax(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    return norm.lax_call(c.obj(norm).__srcjax_lax__, c.e, target)


def _jvp(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    return norm.jvp_call(c.e, target)


def _tree_map(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    return norm.tree_map_call(c.e, target)


def _is_found(norm: Any, c: Callee) -> bool:
    return c.status(norm) == "found"


def _tree_function(norm: Any, c: Callee, target: Optional[str]) -> Optional[tuple]:
    return norm.tree_function_call(c.obj(norm), c.e)


def _not_inside(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    not_inside = c.obj(norm).__srcjax_not_inside__
    raise UnsupportedSyntaxError(
        f"`{N.to_source(c.func)}` inside a transformed function is not supported",
        norm.loc(c.e),
        not_inside
        if isinstance(not_inside, str)
        else "use srcjax.grad or srcjax.jvp inside; call vjp/linearize outside",
    )


# -- in-place NumPy (inplace.py) -------------------------------------------------------------
def _is_in_place(norm: Any, c: Callee) -> bool:
    return inplace.may_write(c.e) and inplace.refusal(norm, c) is not None


def _in_place(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    raise inplace.refusal(norm, c)


# -- values of the function's own --------------------------------------------------------
def _is_runtime(norm: Any, c: Callee) -> bool:
    return c.status(norm) in ("local", "dynamic")


def _is_method(norm: Any, c: Callee) -> bool:
    return _is_runtime(norm, c) and isinstance(c.func, gast.Attribute)


def _method(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    return norm.method_call(c.e, target)


def _runtime_value(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    fvar = norm.atom(c.func, base="fn")
    args, kws = _args(norm, c.e)
    return runtime_call(fvar, args, kws, N.to_source(c.func))


def _is_missing(norm: Any, c: Callee) -> bool:
    return c.status(norm) == "missing"


def _missing(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    raise _resolution_error(norm, c.func)


# -- objects found when transforming -------------------------------------------------------
def _is_host_numpy(norm: Any, c: Callee) -> bool:
    return _is_numpy_function(c.obj(norm)) and norm._is_host(c.e)


def _host_numpy(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    # np.prod(x.shape), np.exp(100.0): NumPy on host values, as in JAX
    obj = c.obj(norm)
    fname = norm.namer.fresh(f"np_{getattr(obj, '__name__', 'fn')}")
    norm.bindings[fname] = _HostCall(obj)
    args, kws = _args(norm, c.e)
    return N.call(N.name(fname), args, kws), Op(
        "inactive", what=f"np.{getattr(obj, '__name__', 'function')}"
    )


def _is_primitive(norm: Any, c: Callee) -> bool:
    c.prim = registry.lookup_callable(c.obj(norm))
    return c.prim is not None


def _primitive(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    name = c.func.id if isinstance(c.func, gast.Name) else None
    if name is not None and (name in norm.src.globals or name in norm.src.closure):
        # a name bound to a primitive (``ACT = jnp.sin``; ``from jnp import sin``):
        # rebinding it (``ACT = jnp.tanh``) must transform again, as for an inlined
        # function. (``jnp.sin`` itself, a module attribute, is not watched; a
        # builtin such as ``abs`` is not in the globals.)
        norm._record_dependency(c.func, c.obj(norm))
    return norm.prim_call(c.prim, c.e.args, c.e.keywords, c.e)


def _always(norm: Any, c: Callee) -> bool:
    return True


def _builtin(norm: Any, c: Callee, target: Optional[str]) -> Optional[tuple]:
    return norm.builtin_call(c.obj(norm), c.e, target)


def _is_dict(norm: Any, c: Callee) -> bool:
    e = c.e
    return c.obj(norm) is dict and len(e.args) <= 1 and all(k.arg is not None for k in e.keywords)


def _dict(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    # dict(d), dict(zip(keys, values)), dict(a=x): a new dict, values kept
    # differentiable (not a registered class's construction)
    e = c.e
    kws = {k.arg: k.value for k in e.keywords}
    if not e.args:
        t = N.name(norm.temp("made"))
        norm.emit(N.assign(t.id, gast.Dict(keys=[], values=[])), Op("pack", elts=[]))
        norm.update(t.id, None, kws)
    else:
        t = norm.dict_copy(e.args[0], kws)
    return t, Op("copy", elts=[t])


def _is_pytree_class(norm: Any, c: Callee) -> bool:
    obj = c.obj(norm)
    return isinstance(obj, type) and (obj in _tree_registry() or _is_namedtuple_class(obj))


def _construct(norm: Any, c: Callee, target: Optional[str]) -> Optional[tuple]:
    # Linear(w, b) of a registered pytree class (or a namedtuple's
    # State(pos, vel)): a primitive whose
    # derivative maps the instance's children back to the arguments
    obj = c.obj(norm)
    pos = _positional_construct_args(obj, c.e)
    if pos is None:
        return None
    prim = registry.by_public("ad.construct")
    node, op = norm.prim_call(prim, [c.func] + pos, [], c.e)
    op.construct_class = obj  # its methods are inlined (see track_type)
    return node, op


def _is_inactive(norm: Any, c: Callee) -> bool:
    # (srcjax.debug.print: runs as it is, no derivative)
    obj = c.obj(norm)
    obj_inactive = bool(getattr(obj, "__srcjax_inactive__", False))
    return id(obj) in _INACTIVE_BUILTINS or obj_inactive or isinstance(obj, type)


def _inactive(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    e, func, obj = c.e, c.func, c.obj(norm)
    obj_inactive = bool(getattr(obj, "__srcjax_inactive__", False))
    args, kws = _args(norm, e)
    fnode = norm.rename_all(func)
    kind = "inactive" if id(obj) in _INACTIVE_BUILTINS or obj_inactive else "unknown"
    user_class = kind == "unknown" and _is_user_class(obj)
    return N.call(fnode, args, kws), Op(
        kind,
        elts=args + list(kws.values()),
        what=N.to_source(func),
        effect="construct" if user_class else False,
        hint=_REGISTER_HINT.format(name=obj.__name__) if user_class else None,
        keeps=obj in (iter, zip, enumerate),
    )


def _is_transformed(norm: Any, c: Callee) -> bool:
    fn = c.function(norm)
    return getattr(fn, "__srcjax_transform__", None) is not None and hasattr(fn, "_generated")


def _transformed(norm: Any, c: Callee, target: Optional[str]) -> Optional[tuple]:
    # a transformed function (grad(f), vmap(f) ...) called here: inline its
    # generated code, specialized for array arguments
    if c.e.keywords:
        return None
    return norm.inline(c.function(norm)._generated(("any",) * len(c.e.args)), c.e, target)


def _is_transform_value(norm: Any, c: Callee) -> bool:
    return getattr(c.function(norm), "__srcjax_transform__", None) is not None


def _opaque(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    # (evaluation order of the original: the callee, then the arguments)
    fnode = norm.rename_all(c.func)
    args, kws = _args(norm, c.e)
    return N.call(fnode, args, kws), Op(
        "unknown", elts=args + list(kws.values()), what=N.to_source(c.func)
    )


def _is_user_function(norm: Any, c: Callee) -> bool:
    from ..source import _is_callable_object

    fn = c.function(norm)
    return (
        isinstance(fn, (types.FunctionType, functools.partial, types.MethodType))
        or _is_callable_object(fn)
    ) and not _is_library_function(fn)


def _user_function(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    # (the dependency recorded: what the name is bound to, a jitted function itself)
    norm._record_dependency(c.func, c.obj(norm))
    return norm.inline(c.function(norm), c.e, target)


def _closure_convert(norm: Any, c: Callee, target: Optional[str]) -> Optional[tuple]:
    """``odeint(rhs, y0, t)`` with ``rhs`` a local function reading locals: those
    locals become extra arguments (the callee's marker ``(lead, first_arg)``, see
    ``NestedMixin.closure_converted``), then the call is inlined; else declined."""
    lead, first_arg = c.obj(norm).__srcjax_closure_convert__
    converted = norm.closure_converted(c.e, lead, first_arg)
    if converted is None:
        return None
    return _user_function(norm, Callee(converted), target)


def _unknown(norm: Any, c: Callee, target: Optional[str]) -> tuple:
    args, kws = _args(norm, c.e)
    fnode = norm.rename_all(c.func)
    return N.call(fnode, args, kws), Op(
        "unknown", elts=args + list(kws.values()), what=N.to_source(c.func)
    )


#: callee kind -> (test, handler), tried in this order; the first test that holds
#: and whose handler does not decline (None) normalizes the call. The order is
#: the resolution order: syntax first (x.at[i], local names, lambdas, calls of
#: calls), then typed values, then what the callee is bound to.
CALL_RULES: Tuple[CallRule, ...] = (
    CallRule("at_update", _is_at_update, _at_update),  # x.at[idx].set(v)
    CallRule("local_function", _is_local_function, _local_function),
    CallRule("function_list_item", _is_function_list_item, _function_list_item),  # acts[i](x)
    CallRule("lambda", lambda norm, c: isinstance(c.func, gast.Lambda), _lambda),
    CallRule("jit_of", _is_jit_of, _jit_of),  # jit(f)(x)
    CallRule("transform_factory", _is_transform_factory, _transform_factory),  # grad(f)(x)
    CallRule("instance_call", _is_instance_call, _instance_call),  # Linear(w, b)(x)
    CallRule("namedtuple_replace", _is_replace, _replace),  # state._replace(t=t)
    CallRule("dataclass_replace", _is_dataclass_replace, _dataclass_replace),
    CallRule("super_method", _is_super_method, _super_method),  # super().act(x)
    CallRule("typed", _may_be_typed, _typed),  # model(x), self.layer(x)
    CallRule("lax", _is_lax, _lax),  # lax.scan, lax.cond ...
    CallRule("jvp", _marked("__srcjax_jvp__"), _jvp),
    CallRule("tree_map", _marked("__srcjax_tree_map__"), _tree_map),
    CallRule("tree_function", _is_found, _tree_function),  # tree_leaves, tree_flatten ...
    CallRule("not_inside", _marked("__srcjax_not_inside__"), _not_inside),  # vjp, linearize
    CallRule("in_place", _is_in_place, _in_place),  # np.add.at(x, i, 1), x.fill(0): refused
    CallRule("method", _is_method, _method),  # x.sum(), lst.append(v)
    CallRule("runtime_value", _is_runtime, _runtime_value),  # fns[i](x)
    CallRule("missing", _is_missing, _missing),
    CallRule("host_numpy", _is_host_numpy, _host_numpy),  # np.prod(x.shape)
    CallRule("primitive", _is_primitive, _primitive),  # jnp.sin(x)
    CallRule("builtin", _always, _builtin),  # len, range, isinstance, float ...
    CallRule("dict", _is_dict, _dict),  # dict(a=x)
    CallRule("pytree_class", _is_pytree_class, _construct),  # Linear(w, b)
    CallRule("inactive", _is_inactive, _inactive),  # print, srcjax.debug.print, classes
    CallRule("transformed", _is_transformed, _transformed),  # g = grad(f); g(x)
    CallRule("transform_value", _is_transform_value, _opaque),
    CallRule("closure_convert", _marked("__srcjax_closure_convert__"), _closure_convert),
    CallRule("user_function", _is_user_function, _user_function),  # inlined
    CallRule("unknown", _always, _unknown),
)

#: callee kind -> its handler
CALL_HANDLERS: Dict[str, Callable] = {r.kind: r.handle for r in CALL_RULES}


class ResolveMixin:
    """The call dispatcher of :class:`Normalizer`: :data:`CALL_RULES`."""

    # -- calls -----------------------------------------------------------------
    def call(self, e: Any, target: Optional[str]) -> tuple:
        """Normalize the call ``e`` to ``(node, Op)``: the first rule of
        :data:`CALL_RULES` that recognizes its callee handles it."""
        if has_star_args(e):  # f(*xs): the items of xs, where its length is known
            e = expand_star_args(self, e)
        e = built_receiver(self, e)  # MLP(2).apply(w, x), Lin(w).loss(x)
        if any(k.arg is None for k in e.keywords):
            e = self._expand_kwargs(e)
        e = self.strip_iter(e)  # sum(iter(xs)) is sum(xs); next(iter(d)) is list(d)[0]
        if not isinstance(e, gast.Call):
            return self.simple(e, target)
        e, made = self._call_of_factory(e)
        if made is not None:
            return made
        callee = Callee(e)
        for rule in CALL_RULES:
            if rule.matches(self, callee):
                out = rule.handle(self, callee, target)
                if out is not None:
                    return out
        raise AssertionError("the last call rule handles every call")  # pragma: no cover

    def _call_of_factory(self, e: Any) -> tuple:
        """``make(2.0)(x)`` with ``make`` a function that returns a local function:
        ``(e, the normalized call)`` when it does, else ``(e with make(2.0)
        normalized to an atom, None)``; other calls are returned as they are."""
        func = e.func
        if not (isinstance(func, gast.Call) and self._inlined_factory(func.func)):
            return e, None
        saved, self.pending_fn = self.pending_fn, None
        inner = self.atom(func)
        fn, self.pending_fn = self.pending_fn, saved
        if fn is not None:
            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            return e, self.call_local(fn, args, kws, e)
        return N.copy_origin(gast.Call(func=inner, args=e.args, keywords=e.keywords), e), None

    def _inlined_factory(self, f: Any) -> bool:
        """Whether calling ``f`` inlines user code (a local function, or a Python
        function of the user's): its call may return a local function."""
        if isinstance(f, gast.Name) and f.id in self.locals:
            return self.var(f.id) in self.local_fns
        status, obj = self.resolve(f)
        return (
            status == "found"
            and isinstance(obj, types.FunctionType)
            and not _is_library_function(obj)
            # (srcjax's own functions: grad(f)(x) is a transform call, not a factory)
            and not (getattr(obj, "__module__", None) or "").split(".")[0] == "srcjax"
        )

    def _expand_kwargs(self, e: Any) -> Any:
        """``f(x, **kwargs)`` with ``kwargs`` this inlined function's ``**kwargs``
        parameter (which ``_forwards_kwargs`` checked is never changed): the
        call with the keywords it was bound to, ``f(x, rng=kwargs["rng"])``."""
        keywords = []
        for k in e.keywords:
            if k.arg is not None:
                keywords.append(k)
                continue
            keys = self.kwarg_keys.get(k.value.id) if isinstance(k.value, gast.Name) else None
            if keys is None:  # (_check lets only the parameter through)
                raise _unsupported(k.value, "`**kwargs` in calls", src=self.src)
            for key in keys:
                item = gast.Subscript(value=N.clone(k.value), slice=N.const(key), ctx=gast.Load())
                keywords.append(gast.keyword(arg=key, value=N.copy_origin(item, k.value)))
        return N.copy_origin(gast.Call(func=e.func, args=e.args, keywords=keywords), e)
