"""Call resolution: which handler normalizes a call, by what its callee is.
(the next commit makes it a table)
"""

from __future__ import annotations

import functools
import types
from typing import Any, Optional

import gast
import numpy as np

from ...errors import (
    UnsupportedSyntaxError,
)
from ...primitives import registry
from .. import nodes as N
from .anf import Op
from .common import (
    _bind,
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
)

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


class ResolveMixin:
    """The call dispatcher of :class:`Normalizer`."""

    # -- calls -----------------------------------------------------------------
    def call(self, e: Any, target: Optional[str]) -> tuple:
        if any(k.arg is None for k in e.keywords):
            e = self._expand_kwargs(e)
        func = e.func
        if isinstance(func, gast.Call) and self._inlined_factory(func.func):
            # make(2.0)(x), make a function that returns a local function
            saved, self.pending_fn = self.pending_fn, None
            inner = self.atom(func)
            fn, self.pending_fn = self.pending_fn, saved
            if fn is not None:
                args = [self.atom(a) for a in e.args]
                kws = {k.arg: self.atom(k.value) for k in e.keywords}
                return self.call_local(fn, args, kws, e)
            e = N.copy_origin(gast.Call(func=inner, args=e.args, keywords=e.keywords), e)
            func = e.func
        # x.at[idx].set(v)
        if (
            isinstance(func, gast.Attribute)
            and isinstance(func.value, gast.Subscript)
            and isinstance(func.value.value, gast.Attribute)
            and func.value.value.attr == "at"
        ):
            status, base_obj = self.resolve(func.value.value.value)
            if status == "found" and isinstance(base_obj, (np.ndarray, np.generic)):
                status = "dynamic"  # a module-level array (user R: base.at[i].set(v))
            if status in ("local", "dynamic") and func.attr == "subtract" and len(e.args) == 1:
                # x.at[idx].subtract(v) is x.at[idx].add(-v), JAX's definition
                neg = gast.UnaryOp(op=gast.USub(), operand=e.args[0])
                gast.copy_location(neg, e.args[0])
                add = gast.Attribute(value=func.value, attr="add", ctx=gast.Load())
                gast.copy_location(add, func)
                call = gast.Call(func=add, args=[neg], keywords=e.keywords)
                return self.call(N.copy_origin(call, e), target)
            if status in ("local", "dynamic") and func.attr == "get" and not e.args:
                # x.at[idx].get() is x[idx] (JAX's out-of-bounds modes are not supported)
                if e.keywords:
                    raise _unsupported(e, "`.at[...].get` with keyword arguments", src=self.src)
                sub = gast.Subscript(
                    value=func.value.value.value, slice=func.value.slice, ctx=gast.Load()
                )
                gast.copy_location(sub, e)
                return self.simple(sub, target)
            if status in ("local", "dynamic"):
                mode = func.attr
                try:
                    prim = registry.by_public(f"ad.at_{mode}")
                except KeyError:
                    raise UnsupportedSyntaxError(
                        f"`.at[...].{mode}` is not supported",
                        self.loc(e),
                        "use .set, .add, .subtract, .multiply, .min or .max",
                    ) from None
                x = self.atom(func.value.value.value)
                idx = self.index(func.value.slice)
                if len(e.args) != 1:
                    raise _unsupported(e, f"`.at[...].{mode}` with these arguments", src=self.src)
                if e.keywords:  # mode=, indices_are_sorted= ...: never silently ignored
                    raise UnsupportedSyntaxError(
                        f"`.at[...].{mode}` with keyword arguments "
                        f"({', '.join(str(k.arg) for k in e.keywords)}) is not supported",
                        self.loc(e),
                        "srcjax updates in bounds only (an index out of bounds raises "
                        "IndexError); clip or mask the indices yourself (jnp.clip, jnp.where)",
                    )
                v = self.atom(e.args[0])
                idx = N.index_value(idx)  # slices as slice(...) objects in a call
                node = N.call(prim.public, [x, idx, v])
                return node, Op("prim", prim=prim, bound=_bind(prim, x, idx, v))
        if (
            isinstance(func, gast.Name)
            and self.var(func.id) in self.local_fns
            and (func.id in self.locals)
        ):
            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            return self.call_local(self.local_fns[self.var(func.id)], args, kws, e)
        if isinstance(func, gast.Lambda):  # (lambda y: ...)(x)
            from ..source import _lambda_to_def

            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            return self.inline_local(_lambda_to_def(func), args, kws, e)
        if isinstance(func, gast.Call):
            st, factory = self.resolve(func.func)
            if st == "found" and getattr(factory, "__srcjax_jit__", False) and func.args:
                # jit(f, ...)(x) inside transformed code: jit is an identity here
                call = gast.Call(func=func.args[0], args=list(e.args), keywords=e.keywords)
                N.copy_origin(call, e)
                return self.call(call, target)
            if st == "found" and getattr(factory, "__srcjax_factory__", False):
                return self.transform_call(factory, func, e, target)
            if st == "found" and isinstance(factory, type) and factory in _tree_registry():
                # Linear(w, b)(x): build the instance, then inline its __call__
                fn = _plain_method(factory, "__call__")
                if fn is not None:
                    obj = self.atom(func, base=factory.__name__.lower())
                    return self.inline_method(fn, [obj], e)
        if (
            isinstance(func, gast.Attribute)
            and func.attr == "_replace"
            and isinstance(func.value, gast.Name)
            and not e.args
        ):
            replaced = self.namedtuple_replace(e)
            if replaced is not None:
                return replaced
        if self.types or not isinstance(func, gast.Name):
            typed = self.typed_call(e, target)
            if typed is not None:
                return typed
        status, obj = self.resolve(func)
        if status == "found":
            lax_kind = getattr(obj, "__srcjax_lax__", None)
            if lax_kind is not None:
                return self.lax_call(lax_kind, e, target)
            if getattr(obj, "__srcjax_jvp__", False):
                return self.jvp_call(e, target)
            if getattr(obj, "__srcjax_tree_map__", False):
                return self.tree_map_call(e, target)
            tree_fn = self.tree_function_call(obj, e)
            if tree_fn is not None:
                return tree_fn
            not_inside = getattr(obj, "__srcjax_not_inside__", False)
            if not_inside:
                raise UnsupportedSyntaxError(
                    f"`{N.to_source(func)}` inside a transformed function is not supported",
                    self.loc(e),
                    not_inside
                    if isinstance(not_inside, str)
                    else "use srcjax.grad or srcjax.jvp inside; call vjp/linearize outside",
                )
        if status == "local" and isinstance(func, gast.Attribute):
            return self.method_call(e, target)
        if status == "dynamic" and isinstance(func, gast.Attribute):
            return self.method_call(e, target)
        if status in ("local", "dynamic"):
            # a callable computed at run time: it just runs (an error if on the
            # differentiated path, since srcjax cannot see its source)
            fvar = self.atom(func, base="fn")
            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            # the callable is an operand too: calling a differentiated model object
            # (`model(x)`) must not count as a constant
            return N.call(fvar, args, kws), Op(
                "unknown",
                elts=[fvar] + args + list(kws.values()),
                what=N.to_source(func),
                hint="this function is a value computed at run time (a call's result, a "
                "list item, a parameter), whose source srcjax cannot see: call the function "
                "by its name, or through a module-level table (TABLE['name'](x)), or wrap "
                "it with srcjax.custom_vjp",
            )
        if status == "missing":
            raise _resolution_error(self, func)
        if _is_numpy_function(obj) and self._is_host(e):
            # np.prod(x.shape), np.exp(100.0): NumPy on host values, as in JAX
            fname = self.namer.fresh(f"np_{getattr(obj, '__name__', 'fn')}")
            self.bindings[fname] = _HostCall(obj)
            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            return N.call(N.name(fname), args, kws), Op(
                "inactive", what=f"np.{getattr(obj, '__name__', 'function')}"
            )
        prim = registry.lookup_callable(obj)
        if prim is not None:
            return self.prim_call(prim, e.args, e.keywords, e)
        special = self.builtin_call(obj, e, target)
        if special is not None:
            return special
        if obj is dict and len(e.args) <= 1 and all(k.arg is not None for k in e.keywords):
            # dict(d), dict(zip(keys, values)), dict(a=x): a new dict, values kept
            # differentiable (not a registered class's construction)
            kws = {k.arg: k.value for k in e.keywords}
            if not e.args:
                t = N.name(self.temp("made"))
                self.emit(N.assign(t.id, gast.Dict(keys=[], values=[])), Op("pack", elts=[]))
                self.update(t.id, None, kws)
            else:
                t = self.dict_copy(e.args[0], kws)
            return t, Op("copy", elts=[t])
        if isinstance(obj, type) and (obj in _tree_registry() or _is_namedtuple_class(obj)):
            # Linear(w, b) of a registered pytree class (or a namedtuple's
            # State(pos, vel)): a primitive whose
            # derivative maps the instance's children back to the arguments
            pos = _positional_construct_args(obj, e)
            if pos is not None:
                prim = registry.by_public("ad.construct")
                node, op = self.prim_call(prim, [func] + pos, [], e)
                op.construct_class = obj  # its methods are inlined (see track_type)
                return node, op
        # (srcjax.debug.print: runs as it is, no derivative)
        obj_inactive = bool(getattr(obj, "__srcjax_inactive__", False))
        if id(obj) in _INACTIVE_BUILTINS or obj_inactive or isinstance(obj, type):
            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            fnode = self.rename_all(func)
            kind = "inactive" if id(obj) in _INACTIVE_BUILTINS or obj_inactive else "unknown"
            user_class = kind == "unknown" and _is_user_class(obj)
            return N.call(fnode, args, kws), Op(
                kind,
                elts=args + list(kws.values()),
                what=N.to_source(func),
                effect="construct" if user_class else False,
                hint=_REGISTER_HINT.format(name=obj.__name__) if user_class else None,
            )
        bound_obj = obj  # (what the name is bound to: the dependency recorded)
        if getattr(obj, "__srcjax_transform__", None) == "jit" and hasattr(
            obj, "__srcjax_wrapped__"
        ):
            obj = obj.__srcjax_wrapped__  # jit is an identity for other transforms
        if getattr(obj, "__srcjax_transform__", None) is not None and hasattr(obj, "_generated"):
            # a transformed function (grad(f), vmap(f) ...) called here: inline its
            # generated code, specialized for array arguments
            if not e.keywords:
                return self.inline(obj._generated(("any",) * len(e.args)), e, target)
        if getattr(obj, "__srcjax_transform__", None) is not None:
            fnode = self.rename_all(func)
            args = [self.atom(a) for a in e.args]
            kws = {k.arg: self.atom(k.value) for k in e.keywords}
            return N.call(fnode, args, kws), Op(
                "unknown", elts=args + list(kws.values()), what=N.to_source(func)
            )
        fn = obj
        from ..source import _is_callable_object

        if (
            isinstance(fn, (types.FunctionType, functools.partial, types.MethodType))
            or _is_callable_object(fn)
        ) and not _is_library_function(fn):
            self._record_dependency(func, bound_obj)
            return self.inline(fn, e, target)
        args = [self.atom(a) for a in e.args]
        kws = {k.arg: self.atom(k.value) for k in e.keywords}
        fnode = self.rename_all(func)
        return N.call(fnode, args, kws), Op(
            "unknown", elts=args + list(kws.values()), what=N.to_source(func)
        )

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
