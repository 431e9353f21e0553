"""Transforms inside transformed code: ``grad(f)(x)``, ``vmap(f)(x)``,
``jvp(f, primals, tangents)`` called in a function being transformed; local
functions are lifted to module-level ones closing over their free locals.
"""

from __future__ import annotations

import importlib
from typing import Any, Dict, Optional

import gast

from ... import dtypes as _dtypes
from ...errors import (
    UnsupportedSyntaxError,
)
from ...primitives import registry
from .. import hooks
from .. import nodes as N
from .analyses import _own_locals, _value_kind
from .anf import Op
from .common import _bind, _FnChoice, _ForeignFn, _unsupported
from .typetree import ClassKind, _static_callable

_config = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)


def _shift_options(factory: Any, extra: list, kws: dict, k: int, nparams: int) -> None:
    """The options of transform ``factory`` (positional ``extra``, keyword ``kws``,
    edited in place) for a function given ``k`` new leading parameters (the free
    variables of a lifted lambda), which it must not touch: argnums shifted by
    ``k``, in_axes ``None`` for them (``nparams``: the original parameters)."""
    name = getattr(factory, "__name__", "")
    if name in ("grad", "value_and_grad", "jacfwd", "jacrev", "hessian"):
        if extra:
            extra[0] = _shift_argnums(extra[0], k)
        else:
            kws["argnums"] = _shift_argnums(kws.get("argnums", 0), k)
    elif name == "vectorize":
        # jnp.vectorize: the new leading parameters are excluded (passed as they are)
        ex = kws.get("excluded", ())
        kws["excluded"] = frozenset(range(k)) | {e + k if isinstance(e, int) else e for e in ex}
    elif name in ("vmap", "pmap"):
        if name == "pmap":
            extra = []  # (pmap's second positional parameter is axis_name; in_axes a keyword)
        axes = extra[0] if extra else kws.get("in_axes", 0)
        if isinstance(axes, (list, tuple)):
            axes = (None,) * k + tuple(axes)
        else:
            axes = (None,) * k + (axes,) * nparams
        if extra:
            extra[0] = axes
        else:
            kws["in_axes"] = axes


def _shift_argnums(argnums: Any, k: int) -> Any:
    if isinstance(argnums, (tuple, list)):
        return tuple(a + k if a >= 0 else a for a in argnums)
    return argnums + k if argnums >= 0 else argnums


def _is_number_literal(a: Any) -> bool:
    """A Python float or complex constant (``0.0`` in ``grad(f)(0.0)``)."""
    return isinstance(a, gast.Constant) and type(a.value) in (float, complex)


class NestedMixin:
    """Transforms called inside transformed code, for :class:`Normalizer`."""

    def transform_call(self, factory: Any, make: Any, e: Any, target: Optional[str]) -> tuple:
        """``srcjax.grad(f, argnums=1)(x, y)`` inside transformed code: inline the
        generated code of the inner transform (arguments are taken to be arrays)."""
        if not make.args:
            raise _unsupported(make, "a transform without a function", src=self.src)
        extra = [self._static_value(a) for a in make.args[1:]]
        kws = {k.arg: self._static_value(k.value) for k in make.keywords}
        lam = self.fn_expr(make.args[0])
        if lam is not make.args[0]:  # vmap(partial(model, params))(xs), vmap(model)(xs)
            make = gast.Call(func=make.func, args=[lam] + list(make.args[1:]), keywords=[])
            N.copy_origin(make, lam)
        lifted = self._lift(make.args[0]) or self._lift_transformed(make.args[0], len(e.args))
        if lifted is None:
            fobj = self._static_function(make.args[0])
            call = e
        else:
            # a lambda / nested def closing over our locals: they become leading
            # arguments that the transform does not touch
            fobj, free = lifted
            _shift_options(factory, extra, kws, len(free), len(e.args))
            call = gast.Call(
                func=e.func,
                args=[N.name(self.var(f)) for f in free] + list(e.args),
                keywords=e.keywords,
            )
            N.copy_origin(call, e)
        tobj = factory(fobj, *extra, **kws)
        if getattr(tobj, "__srcjax_vectorized__", None) is not None:
            # jnp.vectorize(f, ...)(x): a generated plain function, inlined as one
            return self.inline(tobj, call, target)
        if not hasattr(tobj, "_generated"):  # pmap with static_broadcasted_argnums
            raise _unsupported(
                make,
                f"`{N.to_source(make)}` (with static arguments) inside a transformed function",
                src=self.src,
            )
        bound = tuple(getattr(tobj, "_bound", None) or ())
        if bound:
            # grad(self.loss) of a method bound to an object known here (a static
            # argument): the generated code takes the object first (user K r3)
            names = []
            for b in bound:
                nm = self.namer.fresh("bound_self")
                self.bindings[nm] = b
                names.append(N.name(nm))
            call = N.copy_origin(
                gast.Call(func=call.func, args=names + list(call.args), keywords=call.keywords),
                call,
            )
        call = self._number_arguments(call)
        # arguments known here to hold registered classes keep their type trees
        # (grad(loss)(model, x) inside a jitted train step inlines model's methods)
        kinds = []
        for a in call.args:
            ty = self.expr_type(a)
            fn = self._known_function(a)
            if fn is None and isinstance(a, gast.Attribute):
                st, obj = self.resolve(a)  # jnp.sin, a module's function
                fn = obj if st == "found" else None
            if ty is not None:
                kinds.append(ClassKind(ty))
            elif fn is not None and _static_callable(fn):
                # a function known here (grad(loss)(w, x, model)): as the eager call
                # specializes on it (api.args._kind), so its calls resolve (bug 35)
                kinds.append(ClassKind(("fn", fn)))
            elif _value_kind(a, self.ckinds, self._builtin_of) in ("list", "tuple", "dict", "seq"):
                # a container (a dict of params): the inner transform's code treats
                # it as one (sparse cotangents its own derivative rules expect)
                kinds.append("tree")
            else:
                kinds.append("any")
        gen = tobj._generated(tuple(kinds))
        return self.inline(gen, call, target)

    def _number_arguments(self, call: Any) -> Any:
        """``call`` with each Python float (or complex) literal argument converted
        first (``ad.astype_weak``) to the dtype the eager transform gives it
        (float32 unless x64), weakly typed under jit as JAX's: the inner
        transform's argument is a value, not a literal of Python's arithmetic
        (fresh-user round 6, item 01: ``grad(lambda v: 1 / v)(0.0)`` inside jit
        raised ZeroDivisionError where JAX gives -inf)."""
        if not any(_is_number_literal(a) for a in call.args):
            return call
        cast = registry.by_public("ad.astype_weak")  # (jit types it weak, as JAX's)
        args = []
        for a in call.args:
            if _is_number_literal(a):
                t = self.temp("point")
                bound = [N.const(a.value), N.const(_dtypes.dtype_of(a.value).name)]
                self.emit(
                    N.copy_origin(N.assign(t, N.call(cast.public, bound)), a),
                    Op("prim", prim=cast, bound=_bind(cast, *bound)),
                )
                a = N.copy_origin(N.name(t), a)
            args.append(a)
        return N.copy_origin(gast.Call(func=call.func, args=args, keywords=call.keywords), call)

    def _lift_transformed(self, node: Any, nargs: int) -> Optional[tuple]:
        """``grad(lambda q: loss(q, x))`` (a srcjax transform of a lambda or nested
        def closing over our locals) as ``(transformed function, free names)``: the
        free names lead its parameters, which the transform leaves alone (argnums
        and in_axes shifted), as :meth:`transform_call` does for a call. jvp of it
        (a Hessian-vector product) then gives them no tangents. None otherwise."""
        if not (isinstance(node, gast.Call) and node.args):
            return None
        st, factory = self.resolve(node.func)
        if st != "found" or not getattr(factory, "__srcjax_factory__", False):
            return None
        inner = self._lift(node.args[0]) or self._lift_transformed(node.args[0], nargs)
        if inner is None:
            return None
        fobj, free = inner
        extra = [self._static_value(a) for a in node.args[1:]]
        kws = {k.arg: self._static_value(k.value) for k in node.keywords}
        _shift_options(factory, extra, kws, len(free), nargs)
        return factory(fobj, *extra, **kws), free

    def _lift(self, fn_node: Any) -> Optional[tuple]:
        """A lambda or nested def as a real function whose free local variables are
        leading parameters: ``(function, free names)``; None for other callees."""
        from ..source import _lambda_to_def

        if isinstance(fn_node, gast.Lambda):
            fdef = _lambda_to_def(N.clone(fn_node))
            fdef.name = "lifted"
            self._local_defaults_to_body(fdef)
        elif (
            isinstance(fn_node, gast.Name)
            and fn_node.id in self.locals
            and self.var(fn_node.id) in self.local_fns
        ):
            fdef = self.local_fns[self.var(fn_node.id)]
            if isinstance(fdef, _FnChoice):
                raise UnsupportedSyntaxError(
                    f"`{fn_node.id}` names a function chosen by a branch; it cannot be "
                    "passed to a transformation",
                    self.loc(fn_node),
                    "call the transformation inside each branch instead",
                )
            if isinstance(fdef, _ForeignFn):
                # a local function of the caller (newton(f, x0) doing grad(f)): its
                # free variables are the caller's, in the same generated function;
                # they become leading parameters under fresh names that mean them
                # here (user R: a Newton solver differentiating its argument)
                return self._lift_foreign(fdef, fn_node)
            fdef = N.clone(fdef)
        else:
            return None
        return self._lift_fdef(fdef, fn_node)

    def _local_defaults_to_body(self, fdef: Any) -> None:
        """``lambda r, k=n: ...`` where a default reads a local (``n``, a value of the
        transformed function, perhaps traced): the defaulted parameters become the
        body's first assignments (``k = n``), so the lifted function reads ``n`` as a
        free variable, passed in as the others are. The lambda is lifted where it is
        written, so its defaults are evaluated where Python evaluates them; the
        callee then takes only the other parameters (as the transformation calls
        it: ``vmap(lambda r, k=n: r * k)(x)`` inside jit)."""
        a = fdef.args
        if not a.defaults or not any(n in self.locals for d in a.defaults for n in N.names_in(d)):
            return
        first = len(a.args) - len(a.defaults)
        assigns = [N.copy_origin(N.assign(p.id, d), d) for p, d in zip(a.args[first:], a.defaults)]
        a.args, a.defaults = a.args[:first], []
        fdef.body = assigns + fdef.body

    def _lift_foreign(self, foreign: Any, fn_node: Any) -> tuple:
        owner, fdef = foreign.owner, N.clone(foreign.fdef)
        while isinstance(fdef, _ForeignFn):
            owner, fdef = fdef.owner, N.clone(fdef.fdef)
        if not isinstance(fdef, gast.FunctionDef):
            raise UnsupportedSyntaxError(
                f"`{N.to_source(fn_node)}` names a function chosen by a branch; it cannot "
                "be passed to a transformation",
                self.loc(fn_node),
                "call the transformation inside each branch instead",
            )
        own = {a.id for a in fdef.args.args} | _own_locals(fdef.body)
        names = sorted(
            n
            for n in N.names_in(gast.Module(body=fdef.body, type_ignores=[]))
            if n in owner.locals and n not in own
        )
        aliases = {}
        for n in names:
            self._refuse_local_fn(owner, n, fn_node)
            a = self.namer.fresh(f"{n}_outer")
            aliases[n] = a
            self.rename[a] = owner.var(n)  # (self.var(a): the caller's variable)
            self.locals.add(a)
        for node in gast.walk(fdef):
            if isinstance(node, gast.Name) and node.id in aliases:
                node.id = aliases[node.id]
        return self._lift_fdef(fdef, fn_node, known_free=sorted(aliases.values()))

    def _refuse_local_fn(self, scope: Any, n: str, fn_node: Any) -> None:
        """A lifted function cannot read a local function of ``scope`` (it would be
        a run-time value of generated code, where local functions are inlined)."""
        if scope.var(n) in scope.local_fns:
            raise UnsupportedSyntaxError(
                f"`{n}`, a local function, is used inside a function passed to a transform",
                self.loc(fn_node),
                "define it at module level",
            )

    def closure_converted(self, e: Any, lead: int, first_arg: int) -> Optional[Any]:
        """``odeint(rhs, y0, t, *args)`` with ``rhs`` a local function reading locals
        of this function (``k`` in ``def rhs(y, t): return -k * y``): the call with
        ``rhs`` made a module-level function taking those locals after its own
        parameters, passed at the end of the call's ``*args`` (JAX's
        ``closure_convert``, which its odeint applies). ``lead``: the parameters the
        callee supplies itself (``y, t``); ``first_arg``: where the call's ``*args``
        begin. None when it does not apply (not a local function, one reading no
        locals, star arguments, parameters other than plain positional ones)."""
        if (
            not e.args
            or any(isinstance(a, gast.Starred) for a in e.args)
            or e.keywords
            and any(k.arg is None for k in e.keywords)
        ):
            return None
        f = e.args[0]
        if not (
            isinstance(f, gast.Name)
            and f.id in self.locals
            and isinstance(self.local_fns.get(self.var(f.id)), gast.FunctionDef)
        ):
            return None
        fdef = N.clone(self.local_fns[self.var(f.id)])
        a = fdef.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or fdef.decorator_list:
            return None
        if len(a.args) != lead + len(e.args) - first_arg:
            return None
        fobj, free = self._lift_fdef(fdef, f, trailing=True)
        if not free:
            return None
        tmp = self.namer.fresh(f"{f.id}_converted")
        self.bindings[tmp] = fobj
        self.static_params[tmp] = fobj
        ref = N.copy_origin(N.name(tmp), f)
        ref.sj_resolved = True
        args = [ref] + list(e.args[1:]) + [N.copy_origin(N.name(f), f) for f in free]
        return N.copy_origin(gast.Call(func=e.func, args=args, keywords=e.keywords), e)

    def _lift_fdef(
        self,
        fdef: Any,
        fn_node: Any,
        known_free: Optional[list] = None,
        trailing: bool = False,
    ) -> tuple:
        params = {a.id for a in fdef.args.args}
        own = params | _own_locals(fdef.body)
        free = (
            known_free
            if known_free is not None
            else sorted(
                n
                for n in N.names_in(gast.Module(body=fdef.body, type_ignores=[]))
                if n in self.locals and n not in own
            )
        )
        for n in free:
            self._refuse_local_fn(self, n, fn_node)
        # parameters bound to objects known here (a jitted method's static `self`):
        # globals of the lifted function, so `self.loss` stays resolvable (user K r3)
        known = {n: self.static_params[n] for n in free if n in self.static_params}
        free = [n for n in free if n not in known]
        added = [
            gast.Name(id=n, ctx=gast.Param(), annotation=None, type_comment=None) for n in free
        ]
        # (free names lead, or with ``trailing`` follow, the function's parameters)
        own_params = list(fdef.args.args)
        fdef.args.args = own_params + added if trailing else added + own_params
        fdef.decorator_list = []
        text = N.to_source(fdef) + "\n"
        if _config.checks_enabled:
            hooks.check_reparse(fdef, text, rendered=False)
        import linecache

        filename = (
            f"<srcjax lifted {fdef.name} from {self.src.filename}:{getattr(fn_node, 'lineno', 0)}>"
        )
        linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
        ns: Dict[str, Any] = {}
        code = compile(text, filename, "exec")
        import types as _types

        fcode = next(c for c in code.co_consts if isinstance(c, _types.CodeType))
        scope = self.src.globals
        # what it reads of the transformed function's closure (a function defined in
        # a test or a notebook function): globals of the lifted function too
        cells = {}
        for n in N.names_in(gast.Module(body=fdef.body, type_ignores=[])):
            if n in self.src.closure and n not in own:
                try:
                    cells[n] = self.src.closure[n].cell_contents
                except ValueError:  # (an empty cell)
                    pass
        if known or cells:
            scope = dict(scope)
            scope.update(cells)
            scope.update(known)
        fobj = _types.FunctionType(fcode, scope, fdef.name, self._lifted_defaults(fdef))
        del ns
        return fobj, free

    def _lifted_defaults(self, fdef: Any) -> Optional[tuple]:
        """The values of the lifted function's parameter defaults (``lambda r, k=3:``
        under vmap inside jit: the transform calls it without ``k``), when each is
        known while transforming (a literal, a module-level constant); None where
        there is none or one reads a local variable (left as before)."""
        values = []
        for d in fdef.args.defaults:
            if any(n in self.locals for n in N.names_in(d)):
                return None
            try:
                values.append(self._static_value(d))
            except UnsupportedSyntaxError:
                return None
        return tuple(values) or None

    def jvp_call(self, e: Any, target: Optional[str]) -> tuple:
        """``srcjax.jvp(f, (x,), (v,))`` inside transformed code."""
        lens = [self.static_seq_len(a) for a in e.args[1:]] if len(e.args) == 3 else []
        if len(e.args) != 3 or None in lens:
            raise UnsupportedSyntaxError(
                "jvp inside a transformed function needs primals and tangents whose number "
                "is known when transforming: tuple displays, or local names (arguments of "
                "an inlined function included) bound to tuple displays",
                self.loc(e),
                "write jvp(f, (x,), (v,)) (or (x, y), (vx, vy)), or pass such tuples on",
            )
        primals, tangents = [self._seq_items(a, n) for a, n in zip(e.args[1:], lens)]
        lam = self.fn_expr(e.args[0])
        if lam is not e.args[0]:  # jvp(partial(f, w), (x,), (v,)): as a lambda
            e = gast.Call(func=e.func, args=[lam] + list(e.args[1:]), keywords=e.keywords)
            N.copy_origin(e, lam)
        lifted = self._lift(e.args[0]) or self._lift_transformed(e.args[0], len(primals))
        positions = None
        if lifted is None:
            fobj = self._static_function(e.args[0])
        else:
            # a lambda / nested def closing over our locals: they become leading
            # primals without tangents
            fobj, free = lifted
            positions = tuple(range(len(free), len(free) + len(primals)))
            primals = [N.name(self.var(f)) for f in free] + primals
        has_aux = False
        for k in e.keywords:
            if k.arg == "has_aux":
                has_aux = bool(self._static_value(k.value))
        kinds = ("leaf",) * len(primals)
        gen, bound = hooks.jvp_function(fobj, kinds, has_aux, False, positions=positions)
        if bound:
            raise _unsupported(e, "jvp of a partial inside a transformed function", src=self.src)
        fake = gast.Call(func=e.args[0], args=primals + tangents, keywords=[])
        N.copy_origin(fake, e)
        return self.inline(gen, fake, target)
