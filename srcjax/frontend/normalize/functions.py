"""Functions as values: lambdas and partials as lambdas, function lists
(``lax.switch`` branches), factories that return local functions, and
calls of function values.
"""

from __future__ import annotations

import functools
import inspect
import types
from typing import Any, List, Optional

import gast
import numpy as np

from ...errors import (
    UnsupportedSyntaxError,
)
from .. import nodes as N
from .common import (
    _FnChoice,
    _fold_constant,
    _ForeignFn,
    _GlobalFn,
    _is_static_callable,
    _plain_method,
    _tree_registry,
)


def _lambda_of(params: List[str], call: Any, origin: Any) -> Any:
    """``lambda <params>: <call>`` located at ``origin`` (see Normalizer.fn_expr)."""
    lam = gast.Lambda(args=N.arguments(params), body=N.copy_origin(call, origin))
    return N.copy_origin(lam, origin)


def _is_lax_switch(resolved: tuple) -> bool:
    """Whether ``resolved`` (a ``Normalizer.resolve`` result) is ``lax.switch``
    (by its marker: the lax module marks its control flow functions)."""
    status, obj = resolved
    return status == "found" and getattr(obj, "__srcjax_lax__", None) == "switch"


class FunctionsMixin:
    """Function values of :class:`Normalizer`."""

    def fn_expr(self, node: Any, objects: bool = True) -> Any:
        """An expression naming a function, as one the transforms take (a lambda,
        a local function's name, a module function): ``jit(f)`` and
        ``checkpoint(f)`` without options are ``f`` (identities here);
        ``functools.partial(...)`` and a callable registered-class instance
        (``vmap(model)``, Equinox's idiom) become lambdas (see
        :meth:`partial_as_lambda`; not with ``objects=False``: a helper's
        argument); other nodes come back unchanged."""
        if (
            isinstance(node, gast.Call)
            and len(node.args) == 1
            and not node.keywords
            and getattr(self.resolve(node.func)[1], "__srcjax_jit__", False)
        ):
            inner = self.fn_expr(node.args[0])
            if isinstance(inner, gast.Lambda) or (
                isinstance(inner, gast.Name) and self.var(inner.id) in self.local_fns
            ):
                return inner
            status, obj = self.resolve(inner)
            if status == "found" and isinstance(obj, types.FunctionType):
                lam = self._call_lambda(inner, [], [], node)
                if lam is not None:
                    return lam
            return node
        lam = self.partial_as_lambda(node)
        if lam is not None:
            return lam
        named = isinstance(node, (gast.Name, gast.Attribute))
        ty = self.expr_type(node) if objects and named else None
        if ty is not None and ty[0] == "class" and _plain_method(ty[1], "__call__"):
            lam = self._call_lambda(node, [], [], node)
            if lam is not None:
                return lam
        return node

    def _transform_as_lambda(self, node: Any) -> Optional[Any]:
        """``g = grad(h)`` (vmap, jacfwd, ... of a function known here, options
        constant): ``lambda x, ...: grad(h)(x, ...)``, with ``h``'s positional
        parameters, so a call ``g(x)`` is the transform's call inlined (user L
        r29: 'no derivative rule for g'); else None."""
        if not (
            node.args
            and not any(isinstance(a, gast.Starred) for a in node.args)
            and getattr(self.resolve(node.func)[1], "__srcjax_factory__", False)
        ):
            return None
        fn = node.args[0]
        while (  # vmap(grad(h)): h's parameters
            isinstance(fn, gast.Call)
            and fn.args
            and getattr(self.resolve(fn.func)[1], "__srcjax_factory__", False)
        ):
            fn = fn.args[0]
        if isinstance(fn, gast.Lambda):
            if fn.args.vararg or fn.args.kwonlyargs or fn.args.defaults:
                return None
            names = [a.id for a in fn.args.args]
        else:
            params = self._positional_params(self.fn_expr(fn))
            if params is None:
                return None
            names = [n for n, d in params if d is inspect.Parameter.empty]
        call = gast.Call(func=N.clone(node), args=[N.name(n) for n in names], keywords=[])
        return _lambda_of(names, call, node)

    def partial_as_lambda(self, node: Any) -> Optional[Any]:
        """``functools.partial(fn, a, k=v)`` of a function known here (a module
        function, a local def or lambda) as the lambda ``lambda x, ...: fn(a', x,
        ..., k=v')``, where ``a'``/``v'`` are copies of the bound values made now
        (partial binds values, not names); else None. So the transforms and calls
        that take lambdas take partials (``vmap(partial(model, params))(xs)``).
        The lambda's parameters are ``fn``'s positional ones left over up to the
        first with a default (those take ``fn``'s defaults)."""
        if not (
            isinstance(node, gast.Call)
            and node.args
            and all(k.arg is not None for k in node.keywords)
            and not any(isinstance(a, gast.Starred) for a in node.args)
            and self.resolve(node.func) == ("found", functools.partial)
        ):
            return None
        return self._call_lambda(node.args[0], node.args[1:], node.keywords, node)

    def _call_lambda(self, fn: Any, bound: list, keywords: list, node: Any) -> Optional[Any]:
        """``lambda x, ...: fn(a', x, ..., k=v')`` (see :meth:`partial_as_lambda`)."""
        params = self._positional_params(fn)
        if params is None:
            return None
        taken = {k.arg for k in keywords}
        rest = []
        for name, default in params[len(bound) :]:
            if default is not inspect.Parameter.empty:
                break  # (left to fn's own default)
            if name not in taken:
                rest.append(name)
        values = [self.atom(a, base="bound", force_name=True) for a in bound]
        kws = [
            gast.keyword(arg=k.arg, value=self.atom(k.value, base=k.arg, force_name=True))
            for k in keywords
        ]
        call = gast.Call(func=N.clone(fn), args=values + [N.name(n) for n in rest], keywords=kws)
        return _lambda_of(rest, call, node)

    def _positional_params(self, fn: Any) -> Optional[List[tuple]]:
        """``[(name, default or Parameter.empty), ...]``: the positional parameters
        of a function known here (see :meth:`partial_as_lambda`), else None."""
        ty = self.expr_type(fn) if isinstance(fn, (gast.Name, gast.Attribute)) else None
        if ty is not None and ty[0] == "class":
            method = _plain_method(ty[1], "__call__")  # model(x): __call__ less self
            params = self._signature_params(method) if method is not None else None
            return params[1:] if params else None
        if isinstance(fn, gast.Name) and fn.id in self.locals:
            fdef = self.local_fns.get(self.var(fn.id))
            if isinstance(fdef, _ForeignFn):
                fdef = fdef.fdef
            if not isinstance(fdef, gast.FunctionDef) or fdef.args.vararg:
                return None
            names = [a.id for a in fdef.args.args]
            n_plain = len(names) - len(fdef.args.defaults)
            return [
                (n, inspect.Parameter.empty if i < n_plain else None) for i, n in enumerate(names)
            ]
        status, obj = self.resolve(fn)
        if status != "found" or not callable(obj) or isinstance(obj, type):
            return None
        return self._signature_params(obj)

    @staticmethod
    def _signature_params(obj: Any) -> Optional[List[tuple]]:
        try:
            sig = inspect.signature(obj)
        except (TypeError, ValueError):
            return None
        kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        if any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in sig.parameters.values()):
            return None
        return [(p.name, p.default) for p in sig.parameters.values() if p.kind in kinds]

    def _jit_of_local(self, value: Any) -> bool:
        """Whether ``value`` is ``jit(f, ...)`` of a local def or a lambda."""
        if not (isinstance(value, gast.Call) and value.args):
            return False
        st, factory = self.resolve(value.func)
        if st != "found" or not getattr(factory, "__srcjax_jit__", False):
            return False
        f = value.args[0]
        if isinstance(f, gast.Lambda):
            return True
        return isinstance(f, gast.Name) and self.var(f.id) in self.local_fns

    def _returned_function(self, value: Any) -> Any:
        """The local function a ``return`` of an inlined function gives (a lambda or
        a local function's name), else None."""
        if not self.inlined or value is None:
            return None
        if isinstance(value, gast.Lambda):
            from ..source import _lambda_to_def

            return _lambda_to_def(value)
        if isinstance(value, gast.Name):
            return self.local_fns.get(self.var(value.id))
        return None

    def _function_list(self, it: Any) -> Optional[List[Any]]:
        """The functions a loop iterates over: a list/tuple display of lambdas,
        local functions or known module-level functions, or a local bound to one
        (see :meth:`assign_target`); else None."""
        if isinstance(it, gast.Name) and it.id in self.locals:
            return self.fn_lists.get(self.var(it.id))
        if not isinstance(it, (gast.List, gast.Tuple)) or not it.elts:
            return None
        from ..source import _lambda_to_def

        fns: List[Any] = []
        for e in it.elts:
            if isinstance(e, gast.Lambda):
                fns.append(_lambda_to_def(e))
            elif (
                isinstance(e, gast.Name)
                and e.id in self.locals
                and self.var(e.id) in self.local_fns
            ):
                fns.append(self.local_fns[self.var(e.id)])
            elif isinstance(e, (gast.Name, gast.Attribute)):
                status, obj = self.resolve(e)
                if status != "found" or not _is_static_callable(obj):
                    return None
                fns.append(_GlobalFn(e))
            else:
                return None
        return fns

    def call_list_item(self, fns: List[Any], idx: Any, args: list, kws: dict, e: Any) -> tuple:
        """``acts[i](x)`` for a local list of functions ``acts`` (see
        :meth:`_function_list`): the function itself where ``i`` is a constant,
        else an ``if`` chain on ``i % len(acts)`` (a Python int at run time, as in
        JAX, where a list index is never traced), each function inlined in its
        branch (a choice of functions: differentiated and batched as a branch)."""
        folded = _fold_constant(idx)
        if isinstance(folded, gast.Constant) and type(folded.value) is int:
            k = folded.value
            if not -len(fns) <= k < len(fns):
                raise UnsupportedSyntaxError(
                    f"index {k} of a list of {len(fns)} functions is out of range",
                    self.loc(idx),
                    "index within the list",
                )
            return self.call_local(fns[k], args, kws, e)
        choice = _FnChoice(self._source_alias(None, "which"))
        choice.fdefs = list(fns)
        which = gast.BinOp(left=N.clone(idx), op=gast.Mod(), right=N.const(len(fns)))
        self._stmt(N.copy_origin(N.assign(choice.tag, N.copy_origin(which, idx)), e))
        return self.call_local(choice, args, kws, e)

    def _static_objects(self, e: Any) -> Optional[List[Any]]:
        """The items of a module-level or closed-over tuple/list (or one an object
        known here holds) of objects that are neither arrays nor numbers (an optax-style chain's transformations,
        namedtuples of functions), for a loop unrolled over them with the loop
        variable bound to each (its attributes and methods resolve); else None."""
        if isinstance(e, gast.Name) and e.id in self.locals:
            return None
        if not isinstance(e, (gast.Name, gast.Attribute)):
            return None  # (an attribute: of an object known here, `self.layers`)
        status, seq = self.resolve(e)
        if status != "found" or type(seq) not in (tuple, list) or not seq:
            return None
        for v in seq:
            if isinstance(v, (np.ndarray, np.generic, int, float, complex, str, bool)):
                return None
            if v is None or type(v) in (tuple, list, dict) or type(v) in _tree_registry():
                return None
            if not (hasattr(v, "_fields") or hasattr(v, "__dict__")):
                return None
        self._record_dependency(e, seq)
        return list(seq)

    def _seq_items(self, node: Any, n: int) -> List[Any]:
        """The items of a display, or ``node[0]``, ..., ``node[n - 1]`` for a name
        holding a display of length ``n`` (read at run time: always current)."""
        if isinstance(node, (gast.Tuple, gast.List)):
            return list(node.elts)
        items = []
        for i in range(n):
            item = gast.Subscript(value=N.clone(node), slice=N.const(i), ctx=gast.Load())
            items.append(N.copy_origin(item, node))
        return items

    # -- lax: structured control flow becomes Python control flow ------------------
    def factory_made(self, node: Any) -> Any:
        """A lax function argument made by a factory call (``lax.fori_loop(0, n,
        make_step(jnp, dt), x)``): the factory inlined now, once (as Python calls
        it before the loop), and the local function it returns (its free names
        are the factory's parameters, bound here), which :meth:`call_value`
        calls; any other node as it is (a factory srcjax cannot inline stays
        call_value's error at the user's line)."""
        if not (isinstance(node, gast.Call) and self._inlined_factory(node.func)):
            return node
        if self.partial_as_lambda(node) is not None:
            return node  # (functools.partial and the like: call_value's lambda)
        saved, self.pending_fn = self.pending_fn, None
        self.atom(node)
        fn, self.pending_fn = self.pending_fn, saved
        return node if fn is None else fn

    def call_value(self, fn_node: Any, args: list, e: Any) -> Any:
        """Call a function given as an expression (lambda, local, global, a
        functools.partial of one) or a local function a factory returned (see
        :meth:`factory_made`); return an atom."""
        if isinstance(fn_node, _ForeignFn):
            node, op = self.call_local(fn_node, args, {}, e)
            return self._call_value_atom(node, op)
        fn_node = self.fn_expr(fn_node)
        if isinstance(fn_node, gast.Lambda):
            from ..source import _lambda_to_def

            node, op = self.inline_local(_lambda_to_def(fn_node), args, {}, e)
        elif (
            isinstance(fn_node, gast.Name)
            and fn_node.id in self.locals
            and self.var(fn_node.id) in self.local_fns
        ):
            node, op = self.call_local(self.local_fns[self.var(fn_node.id)], args, {}, e)
        else:
            status, obj = self.resolve(fn_node)
            if status != "found":
                raise UnsupportedSyntaxError(
                    f"cannot tell statically which function `{N.to_source(fn_node)}` is",
                    self.loc(fn_node),
                    "pass a lambda, a nested def or a module-level function",
                )
            fake = gast.Call(func=fn_node, args=list(args), keywords=[])
            N.copy_origin(fake, e)
            node, op = self.call(fake, None)
        return self._call_value_atom(node, op)

    def _call_value_atom(self, node: Any, op: Any) -> Any:
        if isinstance(node, (gast.Name, gast.Constant)):
            return node
        t = self.temp("r")
        self.emit(N.assign(t, node), op)
        return N.name(t)

    def switch_branches(self, node: Any) -> Optional[List[Any]]:
        """The branch functions of ``lax.switch(i, node, ...)`` as expressions
        (``call_value`` calls each), resolved now; None when they cannot be.

        ``node`` is a list/tuple display, a list comprehension over static items,
        a local bound once to either (see :meth:`function_list_binding`), or a
        global/closed-over list or tuple of functions, read now: its binding and
        (for a list) its items are dependencies, so changing them transforms the
        function again."""
        if isinstance(node, (gast.List, gast.Tuple)):
            return list(node.elts)
        if isinstance(node, gast.ListComp):
            return self._unrolled_comprehension(node)
        if isinstance(node, gast.Name) and node.id in self.locals:
            held = self.function_lists.get(self.var(node.id))
            return None if held is None else self.switch_branches(held)
        items = self._static_items(node)
        if items is None or not all(callable(f) for f in self._static_seq(node) or ()):
            return None
        return items

    def function_list_binding(self, target: Any, value: Any) -> bool:
        """``branches = [lambda v: ..., f]`` (or a list comprehension) where the
        name is bound nowhere else and passed as ``lax.switch``'s branches:
        remembered for the switch. True when the name is used only there (no
        run-time value then: the lambdas are inlined at the switch); else it is
        also bound as usual."""
        if not (
            isinstance(target, gast.Name)
            and isinstance(value, (gast.List, gast.Tuple, gast.ListComp))
            and target.id in self.locals
        ):
            return False
        stores = loads = switches = 0
        for n in gast.walk(self.src.node):
            if isinstance(n, gast.Name) and n.id == target.id:
                if isinstance(n.ctx, gast.Store):
                    stores += 1
                elif isinstance(n.ctx, gast.Load):
                    loads += 1
            elif (
                isinstance(n, gast.Call)
                and len(n.args) >= 2
                and isinstance(n.args[1], gast.Name)
                and n.args[1].id == target.id
                and isinstance(n.func, (gast.Name, gast.Attribute))
                and _is_lax_switch(self.resolve(n.func))
            ):
                switches += 1
        if stores != 1 or switches == 0:
            return False
        self.function_lists[self.var(target.id)] = value
        if loads == switches:
            return True
        # used otherwise too (br[0](x)): bound as usual as well, which works for a
        # display of named functions (lambdas as values stay an error)
        return False


def local_fn_value(norm: Any, fn: Any) -> Optional[Any]:
    """The local function ``fn`` (a ``FunctionDef`` of ``norm``'s function, or a
    :class:`_ForeignFn` of an enclosing one) made a value now, when it can be: it
    reads none of its function's locals (only its parameters, globals and the
    closure of the transformed function), so its definition alone makes the same
    function. Compiled from its own source (same file and lines, so srcjax finds
    that source again when the function is inlined or transformed later) and bound
    as a constant of the normalized code; the name of that binding, or None
    (decorated, or reading locals: the caller says why it cannot be a value).

    This is JAX's closure conversion for the functions that need none: the
    custom-derivatives tutorial's ``fixed_point(update, a, a)`` with ``update =
    lambda a, x: ...`` inside the differentiated function, an ``odeint`` right-hand
    side defined there. (``nested.NestedMixin._lift`` makes a function closing over
    locals a value too, with those locals as leading parameters, for a transform
    called inside transformed code.)"""
    import ast

    from .common import _closure_reads

    owner, fdef = (fn.owner, fn.fdef) if isinstance(fn, _ForeignFn) else (norm, fn)
    if not isinstance(fdef, gast.FunctionDef) or fdef.decorator_list:
        return None
    made = getattr(fdef, "sj_value", None)
    if made is None:
        if _closure_reads(norm, fn) or _default_reads(owner, fdef):
            return None
        lam = getattr(fdef, "sj_lambda", None)
        src = owner.src
        node = gast.gast_to_ast(N.clone(lam if lam is not None else fdef))
        filename = getattr(fdef, "sj_file", None) or src.filename
        env = dict(src.globals)
        for name, cell in src.closure.items():
            try:
                env[name] = cell.cell_contents
            except ValueError:  # (an empty cell)
                pass
        try:
            if lam is not None:
                code = compile(
                    ast.fix_missing_locations(ast.Expression(body=node)), filename, "eval"
                )
                made = eval(code, env)  # noqa: S307 - the user's own lambda, compiled from its source
            else:
                mod = ast.fix_missing_locations(ast.Module(body=[node], type_ignores=[]))
                scope: dict = {}
                exec(compile(mod, filename, "exec"), env, scope)  # noqa: S102 - the user's def
                made = scope[node.name]
        except Exception:  # noqa: BLE001 - a default value failing now: keep the error
            return None
        fdef.sj_value = made
    # (named after the function: `update_fn`, not `function`)
    tmp = norm.namer.fresh(f"{fdef.name}_fn" if fdef.name.isidentifier() else "local_fn")
    norm.bindings[tmp] = made
    norm.static_params[tmp] = made
    ref = N.name(tmp)
    ref.sj_resolved = True
    return ref


def _default_reads(owner: Any, fdef: Any) -> bool:
    """Whether a default value of ``fdef``'s parameters reads a local of ``owner``."""
    a = fdef.args
    for d in list(a.defaults) + [k for k in a.kw_defaults if k is not None]:
        for n in gast.walk(d):
            if isinstance(n, gast.Name) and n.id in owner.locals:
                return True
    return False
