"""Inlining: the body of a called user function (or local function, lambda,
method) is normalized by a sub-normalizer with its locals renamed, and
spliced in place of the call.
"""

from __future__ import annotations

import os
from typing import Any, Dict, List, Optional

import gast

from ...errors import (
    RecursionUnsupportedError,
    SrcjaxError,
    TransformTypeError,
    UnsupportedSyntaxError,
)
from .. import nodes as N
from ..source import POSONLY, FunctionSource, get_source
from .analyses import _mutated_params, _own_locals, changed_in_place, only_read_in_place
from .anf import Op
from .common import _FnChoice, _ForeignFn, _GlobalFn, runtime_call
from .typetree import _constant_type


def _reads_a_name(node: Any) -> bool:
    """Whether an expression reads a variable (a default's value then depends on when the
    definition ran, not on the call)."""
    return any(isinstance(n, gast.Name) for n in gast.walk(node))


class InlineMixin:
    """Inlining of :class:`Normalizer`."""

    def _refuse_recursion(self, key: Any, name: str, e: Any) -> None:
        """A located RecursionUnsupportedError when ``key`` (a function being
        inlined) is already on the inlining stack."""
        if key in self.stack:
            raise RecursionUnsupportedError(
                f"`{name}` calls itself (recursion) under a transformation",
                self.loc(e),
                "rewrite the recursion as a loop (or srcjax.lax.while_loop)",
            )

    def _callee_normalizer(self, src: Any, prefix: str, stack=None, **more: Any) -> Any:
        """A normalizer for the callee ``src`` that shares this one's names,
        stack (or ``stack``), bindings, dependencies, root scope and types."""
        return type(self)(
            src,
            namer=self.namer,
            stack=self.stack if stack is None else stack,
            bindings=self.bindings,
            deps=self.deps,
            prefix=prefix,
            root_globals=self.root_globals,
            root_closure=self.root_closure,
            types=self.types,
            **more,
        )

    def inline(self, fn, e, target) -> tuple:
        from ..source import unwrap_callable

        pyfn, pre_args, pre_kwargs = unwrap_callable(fn)
        self._refuse_recursion(pyfn, pyfn.__name__, e)
        src = get_source(pyfn)
        # bound partial/method args are constants captured at transform time
        args = []
        for pv in pre_args:
            tmp = self.namer.fresh("bound")
            self.bindings[tmp] = pv
            ty = _constant_type("found", pv)
            if ty is not None:  # model(x), model a constant: its methods inline too
                self.types[tmp] = ty
            args.append(N.name(tmp))
        # (a function passed by keyword, `layer(w, x, act=jnp.sin)`, is known to
        # the callee as a positional one is)
        args += [self.function_atom(a) for a in e.args]
        kws = {k.arg: self.function_atom(k.value) for k in e.keywords}
        for k, v in pre_kwargs.items():
            tmp = self.namer.fresh(k)
            self.bindings[tmp] = v
            kws.setdefault(k, N.name(tmp))
        sub = self._callee_normalizer(src, pyfn.__name__)
        sub.user_call = self.user_call
        if sub.user_call is None and _internal(pyfn, src) and not _internal(None, self.src):
            # srcjax's own code (random.beta) inlined at the user's call: lints
            # (key reuse) name that call, not a line of srcjax's files
            sub.user_call = (self.loc(e), _public_name(pyfn))
        try:
            return self._inline_into(sub, src.node, pyfn.__name__, args, kws, e)
        except SrcjaxError as err:
            raise _at_users_call(err, pyfn.__name__, self.loc(e)) from None

    def inline_method(self, fn: Any, lead: list, e: Any) -> tuple:
        """Inline ``fn`` (a method of a registered pytree class) called on a value
        whose class is known statically, with ``lead`` (the receiver) first."""
        self._refuse_recursion(fn, fn.__name__, e)
        src = get_source(fn)
        args = list(lead) + [self.function_atom(a) for a in e.args]
        kws = {k.arg: self.function_atom(k.value) for k in e.keywords}
        name = fn.__name__.strip("_") or "method"  # __call__'s locals: call_x
        sub = self._callee_normalizer(src, name)
        return self._inline_into(sub, src.node, name, args, kws, e)

    def _is_local_fn(self, n: str) -> bool:
        return n in self.fn_names or (n in self.locals and self.var(n) in self.local_fns)

    def bind_local_fn(self, var: str, fdef: Any) -> None:
        """Bind the local name ``var`` (renamed) to a local function (a FunctionDef
        or a :class:`_FnChoice`); inside an ``if`` whose branches bind it, the
        binding becomes one alternative of the name's choice, selected by an
        assignment of its index to the choice's tag here."""
        choice = self.fn_choices.get(var)
        if choice is None:
            self.local_fns[var] = fdef
            return
        k = len(choice.fdefs)
        choice.fdefs.append(fdef)
        self._stmt(N.assign(choice.tag, N.const(k)))

    def call_local(self, fn: Any, args: list, kws: dict, e: Any) -> tuple:
        """Call a local function: inlined, or for a :class:`_FnChoice` an ``if``
        chain on its tag with each alternative inlined in its branch."""
        if isinstance(fn, _ForeignFn):
            # inlined by the function that defined it, into our current block
            owner = fn.owner
            saved = owner.out, owner.origin, owner.lent_fns
            # our local functions among the arguments (apply(call, sq, x) calling
            # `call(sq, x)`): lent to the owner, as ours, for this call
            lent = dict(owner.lent_fns)
            for a in list(args) + list(kws.values()):
                if isinstance(a, gast.Name) and a.id in self.local_fns:
                    f = self.local_fns[a.id]
                    lent[a.id] = f if isinstance(f, _ForeignFn) else _ForeignFn(self, f)
            owner.out, owner.origin, owner.lent_fns = self.out, self.origin, lent
            try:
                return owner.call_local(fn.fdef, args, kws, e)
            finally:
                owner.out, owner.origin, owner.lent_fns = saved
        if isinstance(fn, _GlobalFn) and fn.runtime:
            return runtime_call(N.clone(fn.node), list(args), dict(kws), fn.node.id)
        if isinstance(fn, _GlobalFn):
            call = gast.Call(func=N.clone(fn.node), args=list(args), keywords=[])
            call.keywords = [gast.keyword(arg=k, value=v) for k, v in kws.items()]
            return self.simple(N.copy_origin(call, e), None)
        if not isinstance(fn, _FnChoice):
            return self.inline_local(fn, args, kws, e)
        if len(fn.fdefs) == 1:
            return self.call_local(fn.fdefs[0], args, kws, e)

        def src_of(a: Any) -> Any:
            if isinstance(a, gast.Name):
                alias = self._source_alias(a.id, a.id)
                return N.name(alias)
            return a

        sargs = [src_of(a) for a in args]
        skws = [gast.keyword(arg=k, value=src_of(v)) for k, v in kws.items()]
        result = self._source_alias(None, "chosen")
        chain: List[Any] = []
        for k in reversed(range(len(fn.fdefs))):
            name = self._source_alias(None, f"choice{k}")
            self.local_fns[self.var(name)] = fn.fdefs[k]
            call = gast.Call(func=N.name(name), args=list(sargs), keywords=list(skws))
            assign = N.copy_origin(gast.Assign(targets=[N.name(result, store=True)], value=call), e)
            if k == len(fn.fdefs) - 1:
                chain = [assign]
            else:
                test = gast.Compare(left=N.name(fn.tag), ops=[gast.Eq()], comparators=[N.const(k)])
                chain = [N.copy_origin(gast.If(test=test, body=[assign], orelse=chain), e)]
        self._stmt(chain[0])
        out = N.name(self.var(result))
        return out, Op("copy", elts=[out])

    def inline_local(self, fdef: Any, args: list, kws: dict, e: Any) -> tuple:
        """Inline a function defined inside this one (a nested ``def`` or a lambda):
        it sees this function's variables, as a closure does."""
        # the node itself, not its id: the stack keeps it alive (AST nodes compare
        # by identity). A lambda's def is a temporary that the clone below frees,
        # and an id on the stack was then taken by a def allocated later (`high`
        # "calls itself": bug 31)
        key = ("local", fdef)
        self._refuse_recursion(key, fdef.name, e)
        # normalizing rewrites the tree in place (early returns lowered): each call
        # inlines its own copy, or a second call would see the first one's names
        fdef = N.clone(fdef)
        src = FunctionSource(
            self.src.fn, fdef, self.src.filename, self.src.globals, self.src.closure
        )
        sub = self._callee_normalizer(src, fdef.name, stack=self.stack + (key,), outer=self)
        sub.nested_def = True
        return self._inline_into(sub, fdef, fdef.name, args, kws, e)

    def _inline_into(self, sub, fnode, fname, args, kws, e) -> tuple:
        if not fname.isidentifier():
            fname = "lambda"
        sub.inlined = True  # this call binds its keyword-only parameters
        sub.seq_lens = self.seq_lens  # (names are unique across inlined callees)
        kwonly = [a.id for a in fnode.args.kwonlyargs]
        vararg = fnode.args.vararg.id if fnode.args.vararg is not None else None
        kwarg = fnode.args.kwarg.id if fnode.args.kwarg is not None else None
        own = {a.id for a in fnode.args.args} | set(kwonly) | _own_locals(fnode.body)
        own |= {vararg} if vararg is not None else set()
        own |= {kwarg} if kwarg is not None else set()
        # default values belong to the scope the function was defined in, not to
        # its own (`def term(x, i=i)` in a loop): resolve them before renaming
        defaults = [
            sub.rename_all(d) if not isinstance(d, gast.Constant) else d
            for d in fnode.args.defaults
        ]
        fn_defaults = getattr(sub.src.fn, "__defaults__", None) or ()
        if getattr(sub, "nested_def", False):  # sub.src.fn is the enclosing function
            fn_defaults = ()
        if defaults and len(fn_defaults) == len(defaults):
            # a default that reads a name (`s=S`, `k=k`, `act=jnp.tanh`) is the value the
            # definition evaluated, as in Python: a number becomes its literal, anything
            # else (a function: calls of the parameter are then static) is bound as such
            for i, v in enumerate(fn_defaults):
                d = fnode.args.defaults[i]
                if isinstance(d, gast.Constant) or not _reads_a_name(d):
                    continue
                if isinstance(v, (bool, int, float, complex, str)) or v is None:
                    defaults[i] = N.const(v)
                    continue
                tmp = self.namer.fresh("default")
                self.bindings[tmp] = v
                d = N.name(tmp)
                d.sj_resolved = True
                defaults[i] = d
        if not defaults and fn_defaults and len(fn_defaults) <= len(fnode.args.args):
            # generated code (vmap(f) inlined): the defaults are the function
            # object's, not in its source; bound as the values they are
            for v in fn_defaults:
                tmp = self.namer.fresh("default")
                self.bindings[tmp] = v
                d = N.name(tmp)
                d.sj_resolved = True
                defaults.append(d)
        kw_defaults = {
            k: (sub.rename_all(d) if not isinstance(d, gast.Constant) else d)
            for k, d in zip(kwonly, fnode.args.kw_defaults)
            if d is not None
        }
        # rename the callee's own locals to fresh names in our namespace
        for local in sorted(own):
            sub.rename[local] = self.namer.fresh(
                f"{fname}_{local}" if local in self.namer.taken else local
            )
        params = [a.id for a in fnode.args.args]
        values: Dict[str, Any] = {}
        if len(args) > len(params) and vararg is None:
            raise TransformTypeError(
                f"{fname}() takes {len(params)} positional arguments but {len(args)} were given",
                self.loc(e),
            )
        for p, a in zip(params, args):
            values[p] = a
        posonly = [k for k in kws if k in getattr(fnode.args, POSONLY, ())]
        if posonly and kwarg is None:
            names = ", ".join(repr(k) for k in posonly)
            raise TransformTypeError(
                f"{fname}() got some positional-only arguments passed as keyword "
                f"arguments: {names}",
                self.loc(e),
            )
        extra_kws: Dict[str, Any] = {}
        for k, v in kws.items():
            if k not in params and k not in kwonly:
                if kwarg is not None:  # `def apply(params, x, **kwargs)`: a dict of these
                    extra_kws[k] = v
                    continue
                raise TransformTypeError(
                    f"{fname}() got an unexpected keyword argument '{k}'", self.loc(e)
                )
            values[k] = v
        first_default = len(params) - len(defaults)
        for i, p in enumerate(params):
            if p not in values:
                if i >= first_default:
                    values[p] = defaults[i - first_default]
                else:
                    raise TransformTypeError(
                        f"{fname}() missing a required positional argument: '{p}'", self.loc(e)
                    )
        for k in kwonly:  # keyword-only parameters: bound like the others
            if k not in values:
                if k not in kw_defaults:
                    raise TransformTypeError(
                        f"{fname}() missing a required keyword-only argument: '{k}'", self.loc(e)
                    )
                values[k] = kw_defaults[k]
        params = params + kwonly
        if vararg is not None:  # `def f(*xs)`: the extra positional arguments, a tuple
            extra = list(args[len(fnode.args.args) :])
            self.origin, saved_origin = e, self.origin
            self.emit(
                N.assign(sub.var(vararg), gast.Tuple(elts=extra, ctx=gast.Load())),
                Op("pack", elts=extra),
            )
            self.origin = saved_origin
            sub.ckinds[vararg] = "tuple"
        if kwarg is not None:  # `**kwargs`: a dict display of the other keywords
            keys = [N.const(k) for k in extra_kws]
            self.origin, saved_origin = e, self.origin
            self.emit(
                N.assign(sub.var(kwarg), gast.Dict(keys=keys, values=list(extra_kws.values()))),
                Op("pack", elts=list(extra_kws.values())),
            )
            self.origin = saved_origin
            sub.kwarg_keys[kwarg] = list(extra_kws)
        reassigned = set(N.assigned_names(fnode.body))
        passed_fns = set()
        for p in params:
            fn = self._known_function(values[p])
            v = values[p]
            if fn is None and p not in reassigned:
                fn = self._known_object(v)  # s.force(x) with a module-level s: self is s
            if fn is not None and p not in reassigned:
                sub.static_params[p] = fn
            elif isinstance(v, gast.Name) and v.id in self.local_fns and p not in reassigned:
                # a nested def / lambda of ours passed on (rk4_step(rhs, y, dt)): the
                # callee's calls of it inline it here, where its free names mean ours
                sub.local_fns[sub.var(p)] = _ForeignFn(self, self.local_fns[v.id])
                passed_fns.add(p)
            elif isinstance(v, gast.Name) and v.id in self.lent_fns and p not in reassigned:
                # a local function of the function calling ours (see call_local)
                sub.local_fns[sub.var(p)] = self.lent_fns[v.id]
                passed_fns.add(p)
        saved_origin = self.origin
        snapshots = self._snapshot_params(fnode, params, values)
        for p in params:
            if p in passed_fns:
                continue  # (not a value at run time)
            self.origin = e
            if p in snapshots:
                self._prim_into(sub.var(p), "ad.shallow_copy", values[p])
                continue
            self.emit(N.assign(sub.var(p), values[p]), Op("copy", elts=[values[p]]))
        self.origin = saved_origin
        sub_fdef = sub.run()
        if sub.returned_fn is not None:
            self.pending_fn = _ForeignFn(sub, sub.returned_fn)
        body = sub_fdef.body
        ret = None
        if body and isinstance(body[-1], gast.Return):
            ret = body[-1].value
            body = body[:-1]
        self.out.extend(body)
        # a callee that mutates a list/dict argument (`lst.append(v)`, `d[k] = v`)
        # mutates the caller's: the caller's name takes the callee's final value,
        # so the derivative passes see the change (and functional setitem lands)
        mutated = _mutated_params(fnode)
        self._refuse_item_arguments(fnode, fname, mutated, e)
        for p in sorted(mutated):
            arg = values.get(p)
            if isinstance(arg, gast.Name) and (
                arg.id in self.locals or arg.id in self.rename.values()
            ):
                self.origin = e
                final = N.name(sub.var(p))
                self.emit(N.assign(arg.id, final), Op("copy", elts=[N.name(sub.var(p))]))
                self.origin = saved_origin
        if ret is None:
            return N.const(None), Op("copy", elts=[N.const(None)])
        return ret, Op("copy", elts=[ret])

    def _snapshot_params(self, fnode: Any, params: List[str], values: Dict[str, Any]) -> set:
        """Parameters bound to a copy of their argument, not the same list: the
        argument is a name our function changes in place (``items.append(x)``
        after the call, in a loop) and the callee only reads the parameter, so
        the copy is the value the call saw. Reverse mode reads a parameter's
        value after the call (a list's length, for the adjoint of its items): the
        shared list had grown by then (grad gave 6 for Python's 7)."""
        changed = {self.var(n) for n in self._changed_in_place()}
        if not changed:
            return set()
        mutated = _mutated_params(fnode)
        return {
            p
            for p in params
            if isinstance(values.get(p), gast.Name)
            and values[p].id in changed
            and p not in mutated
            and only_read_in_place(fnode, p)
        }

    def _changed_in_place(self) -> set:
        got = getattr(self, "_changed_names", None)
        if got is None:
            got = self._changed_names = changed_in_place(self.src.node)
        return got

    def _refuse_item_arguments(self, fnode: Any, fname: str, mutated: Any, e: Any) -> None:
        """A callee that changes a list/dict parameter in place, passed an item or
        attribute of a container (``append_to(p[0], v)``): the caller's container
        would keep the old value (srcjax treats lists and dicts as values, and only
        a name can take the callee's final value back)."""
        if not mutated or not isinstance(e, gast.Call):
            return
        if any(isinstance(a, gast.Starred) for a in e.args):
            return
        params = [a.id for a in fnode.args.args]
        for p in sorted(mutated):
            src = None
            if p in params and params.index(p) < len(e.args):
                src = e.args[params.index(p)]
            else:
                src = next((k.value for k in e.keywords if k.arg == p), None)
            if isinstance(src, (gast.Subscript, gast.Attribute)):
                r = gast.unparse(src).strip()
                raise UnsupportedSyntaxError(
                    f"`{fname}` changes its parameter `{p}` in place, passed `{r}`: "
                    "srcjax treats lists and dicts as values, so the change would not "
                    f"reach `{r}`",
                    self.loc(e),
                    f"give it a name and store it back: `h = {r}`, `{fname}(h, ...)`, `{r} = h`",
                )

    def _source_alias(self, normalized: Optional[str], base: str) -> str:
        """A fresh source-level name standing for ``normalized`` (or for a fresh
        normalized name): lets synthesized source statements refer to values the
        normalizer already computed."""
        src_name = self.namer.fresh(f"_{base}")
        self.locals.add(src_name)
        self.rename[src_name] = normalized or self.namer.fresh(base)
        return src_name


_SRCJAX_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _in_srcjax(loc: Any) -> bool:
    name = getattr(loc, "filename", None)
    return bool(name) and os.path.abspath(name).startswith(_SRCJAX_DIR + os.sep)


def _at_users_call(err: Any, name: str, call: Any) -> Any:
    """``err``, raised inside srcjax's own code inlined for the user's call at
    ``call`` (an optimizer built inside a differentiated function), located at
    that call and saying where inside srcjax; any other error as it is."""
    if not _in_srcjax(err.loc) or call is None or _in_srcjax(call):
        return err
    where = f"{os.path.basename(err.loc.filename)}:{err.loc.lineno}"
    hint = f"call `{name}` outside the transformed function and pass what it returns in"
    if err.hint:
        hint += f"; or: {err.hint}"
    return type(err)(f"inside srcjax's `{name}` ({where}): {err.bare_message}", call, hint)


#: srcjax's package directory (its files are not the user's)
_PACKAGE = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def _internal(fn: Any, src: Any) -> bool:
    """Whether ``src`` (of function ``fn``) is srcjax's: a file of the package or
    generated code (a module holding ``__srcjax_deps__``)."""
    if os.path.abspath(src.filename or "").startswith(_PACKAGE):
        return True
    if fn is None:
        return False
    # (a transform's generated function carries its dependencies; jit's module too)
    return hasattr(fn, "__srcjax_deps__") or "__srcjax_deps__" in (
        getattr(fn, "__globals__", None) or {}
    )


def _public_name(fn: Any) -> Optional[str]:
    """``random.beta`` for ``srcjax.random._compose.beta``; None for generated code."""
    module = getattr(fn, "__module__", None) or ""
    if not module.startswith("srcjax."):
        return None
    parts = [p for p in module.split(".")[1:] if not p.startswith("_")]
    return ".".join(parts[:1] + [fn.__name__])
