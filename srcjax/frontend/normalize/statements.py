"""Statements to ANF: assignments (tuple and starred targets, augmented
assignment, subscript and attribute targets), expression statements, ``if``,
``return``, ``del`` and nested ``def`` (loops: :mod:`.loops`).
"""

from __future__ import annotations

import functools
from typing import Any

import gast

from ...errors import (
    UnsupportedSyntaxError,
)
from ...primitives import registry
from .. import nodes as N
from .analyses import _branch_bound_functions, _surely_bound
from .anf import Op
from .common import _FnChoice, _GlobalFn, _is_static_callable, _unsupported, syntax_refusal
from .receivers import bind_instance, plain_instance


def _as_load(node):
    for n in gast.walk(node):
        if hasattr(n, "ctx"):
            n.ctx = gast.Load()
    return node


def _as_store(node):
    node.ctx = gast.Store()
    return node


class StatementsMixin:
    """Statement converters of :class:`Normalizer`."""

    def stmt(self, s: Any) -> None:
        prev_origin = self.origin
        if hasattr(s, "lineno"):
            self.origin = s
        try:
            self._stmt(s)
        finally:
            self.origin = prev_origin

    def _stmt(self, s: Any) -> None:
        if isinstance(s, gast.Assign):
            if len(s.targets) > 1:
                v = self.atom(s.value)
                for t in s.targets:
                    self.assign_target(t, v)
                return
            if self.function_list_binding(s.targets[0], s.value):
                return  # lax.switch's branch list, resolved where the switch is
            t = s.targets[0]
            if getattr(s, "sj_snapshot", False):  # b = items, items changed later
                self._prim_into(self.var(t.id), "ad.shallow_copy", self.atom(s.value))
                return
            if isinstance(t, gast.Name) and t.id in self.flag_names:
                if isinstance(s.value, gast.Constant) and isinstance(s.value.value, bool):
                    self.known_flags[t.id] = s.value.value
                else:
                    self.known_flags.pop(t.id, None)
            self.assign_target(s.targets[0], s.value)
        elif isinstance(s, gast.AnnAssign):
            if s.value is not None:
                self.assign_target(s.target, s.value)
        elif isinstance(s, gast.AugAssign):
            if (
                isinstance(s.target, gast.Name)
                and isinstance(s.op, gast.Add)
                and "list" in (self.seq_kind(s.target), self.seq_kind(s.value))
            ):
                # l += xs extends the list in place (any iterable xs, as l.extend)
                self.extend(self.var(s.target.id), s.value)
                return
            op = gast.BinOp(left=_as_load(N.clone(s.target)), op=s.op, right=s.value)
            N.copy_origin(op, s)
            self.assign_target(s.target, op)
        elif isinstance(s, gast.Expr):
            if isinstance(s.value, gast.Constant):
                return
            self.expr_statement(s.value)
        elif isinstance(s, gast.If):
            known = self._static_truth(s.test)
            if known is not None:
                # `if USE_FAST_PATH:` on a module constant: only the branch taken
                # is transformed (the other may call what srcjax cannot read)
                for st in s.body if known else s.orelse:
                    self.stmt(st)
                return
            chosen = _branch_bound_functions(s, self._is_local_fn, self._returns_function)
            outer = {}
            surely = _surely_bound([s]) if chosen else set()
            for n in chosen:
                # a local function bound in a branch: its name becomes a choice
                v = self.var(n)
                outer[v] = self.fn_choices.pop(v, None)
                choice = _FnChoice(self._source_alias(None, f"{n}_which"))
                self.fn_choices[v] = choice
                if v in self.local_fns:  # the function bound before the `if`
                    self.bind_local_fn(v, self.local_fns[v])
                elif n not in surely and "*" not in surely:
                    # bound before to a value known at run time only, which a path
                    # past the `if` keeps: an alternative calling it (bug 38: the
                    # branch's function was used on every path)
                    self.bind_local_fn(v, self._runtime_fn(v))
            test = self.condition(s.test)
            self.forget_flags([s])
            flags = dict(self.known_flags)
            body = self.block(s.body)
            self.known_flags = flags
            orelse = self.block(s.orelse)
            self.forget_flags([s])
            node = gast.If(test=test, body=body or [gast.Pass()], orelse=orelse)
            self.emit(node)
            for v, prev in outer.items():
                choice = self.fn_choices.pop(v)
                if prev is not None:
                    self.fn_choices[v] = prev
                self.bind_local_fn(v, choice)
        elif isinstance(s, gast.While):
            self.forget_flags([s])
            self.while_loop(s)
            self.forget_flags([s])
        elif isinstance(s, gast.For):
            self.for_loop(s)
        elif isinstance(s, gast.Return):
            fn = self._returned_function(s.value)
            if fn is not None:
                # an inlined factory (`def make(k): return lambda t: t * k`): the
                # caller binds the function; nothing is returned at run time
                self.returned_fn = fn
                self.emit(gast.Return(value=N.const(None)))
                return
            val = N.const(None) if s.value is None else self.atom(s.value, base="out")
            self.emit(gast.Return(value=val))
        elif isinstance(s, gast.FunctionDef):
            if s.decorator_list:
                raise _unsupported(s, "decorated nested functions", src=self.src)
            self.bind_local_fn(self.var(s.name), self.snapshot_defaults(s))
        elif isinstance(s, gast.Pass):
            return
        elif isinstance(s, (gast.Assert, gast.Raise)):
            self.emit(self.rename_all(s), Op("inactive", what="assert"))
        elif isinstance(s, gast.Delete):
            for t in s.targets:
                self.delete(t)
        else:
            raise syntax_refusal(s, "statements", self.src)

    def _runtime_fn(self, var: str) -> _GlobalFn:
        """An alternative of a choice calling the run-time value of ``var``."""
        return _GlobalFn(N.name(var), runtime=True)

    def assign_target(self, target: Any, value: Any, as_value: bool = False) -> None:
        if (
            isinstance(target, gast.Name)
            and not as_value
            and isinstance(value, gast.Call)
            and self.store_counts.get(target.id) == 1
        ):
            obj = plain_instance(self, value)
            if obj is not None:  # m = MLP(2): built now, a known object (receivers.py)
                ref = bind_instance(self, obj, target.id)
                self.emit(N.assign(self.var(target.id), ref), Op("copy", elts=[ref]))
                return
        if isinstance(target, gast.Name) and not as_value:
            lam = self.fn_expr(value) if isinstance(value, gast.Call) else value
            if lam is value and isinstance(value, gast.Call):
                lam = self._transform_as_lambda(value) or value
            if isinstance(lam, gast.Lambda):
                # f = partial(model, params), f = checkpoint(layer): a local function,
                # so transforms and calls of f inline it; a partial of a module
                # function is also a value at run time (returned, stored)
                from ..source import _lambda_to_def

                partial = isinstance(value, gast.Call) and self.resolve(value.func) == (
                    "found",
                    functools.partial,
                )
                valued = partial and not (
                    isinstance(value.args[0], gast.Name) and value.args[0].id in self.locals
                )
                if valued:
                    self.assign_target(target, value, as_value=True)
                fdef = _lambda_to_def(lam)
                fdef.name = target.id
                fdef.srcjax_runtime_value = valued  # (it may be stored: expressions.py)
                self.bind_local_fn(self.var(target.id), fdef)
                return
        if isinstance(target, gast.Name) and self._jit_of_local(value):
            # j = jit(inner) with a local def or lambda: jit is an identity for the
            # transforms, so j names the same local function
            value = value.args[0]
            if isinstance(value, gast.Name):
                self.bind_local_fn(self.var(target.id), self.local_fns[self.var(value.id)])
                return
        if isinstance(target, gast.Name) and isinstance(value, gast.Lambda):
            from ..source import _lambda_to_def

            fdef = _lambda_to_def(value)
            fdef.name = target.id
            self.bind_local_fn(self.var(target.id), fdef)
            return
        if (
            isinstance(target, gast.Name)
            and isinstance(value, gast.Name)
            and value.id in self.locals
            and self.var(value.id) in self.local_fns
        ):
            # h = g, g a local function: h names the function g names now; where g
            # also holds it at run time (g = jnp.sin), so does h (it may be passed
            # on as a value: odeint(h, ...), helper(h, x))
            bound = self.local_fns[self.var(value.id)]
            if getattr(bound, "held", False):
                self.compute_into(self.var(target.id), value)
            self.bind_local_fn(self.var(target.id), bound)
            return
        if isinstance(target, gast.Name) and isinstance(value, (gast.Name, gast.Attribute)):
            status, obj = self.resolve(value)
            if status == "found" and callable(obj) and not isinstance(obj, type):
                if target.id in self.fn_names or self.var(target.id) in self.fn_choices:
                    # act = jnp.tanh, where act is elsewhere a nested def or lambda
                    self.bind_local_fn(self.var(target.id), _GlobalFn(value))
                    return
                if _is_static_callable(obj):
                    # g = jnp.sin: the value at run time, and calls of g call jnp.sin
                    # as written (so they are differentiated: bug 39)
                    node = N.clone(value)
                    self.compute_into(self.var(target.id), value)
                    self.bind_local_fn(self.var(target.id), _GlobalFn(node, held=True))
                    return
        if isinstance(target, gast.Name) and isinstance(value, gast.IfExp):
            as_if = N.copy_origin(
                gast.If(
                    test=value.test,
                    body=[N.copy_origin(gast.Assign(targets=[target], value=value.body), value)],
                    orelse=[
                        N.copy_origin(gast.Assign(targets=[target], value=value.orelse), value)
                    ],
                ),
                value,
            )
            if _branch_bound_functions(as_if, self._is_local_fn, self._returns_function):
                # g = (lambda t: ...) if c else (lambda t: ...): a choice of functions
                self._stmt(as_if)
                return
        if isinstance(target, gast.Name) and isinstance(value, gast.ListComp):
            # fs = [lambda v, j=j: v * j for j in range(3)]: the display of its lambdas
            value = self.lambdas_unrolled(value) or value
        if (
            isinstance(target, gast.Name)
            and isinstance(value, (gast.List, gast.Tuple))
            and self._only_iterated(target.id, called=True)
        ):
            fns = self._function_list(value)
            if fns is not None:  # acts = [jnp.tanh, lambda t: t * 2]; for a in acts: / acts[i](x)
                self.fn_lists[self.var(target.id)] = fns
                return
        if isinstance(target, gast.Name):
            tname = self.var(target.id)
            self.pending_fn = None
            if self.store_counts.get(target.id, 0) == 1 and self._is_host(value):
                self.host_names.add(tname)
            self.compute_into(tname, value)
            if self.pending_fn is not None:
                fn, self.pending_fn = self.pending_fn, None
                self.bind_local_fn(tname, fn)
            elif tname in self.fn_choices:  # (a branch binding a run-time value)
                self.bind_local_fn(tname, self._runtime_fn(tname))
            else:  # a function bound before no longer is what the name holds
                self.local_fns.pop(tname, None)
        elif isinstance(target, (gast.Tuple, gast.List)):
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
                atoms = [self.atom(e) for e in value.elts]
                tnames = {self.var(n) for n in N.assigned_names([gast.Expr(value=target)])}
                fixed = []
                for a in atoms:
                    if isinstance(a, gast.Name) and a.id in tnames:
                        t = self.temp(a.id + "_old")
                        self.emit(N.assign(t, a), Op("copy", elts=[a]))
                        a = N.name(t)
                    fixed.append(a)
                for t, a in zip(target.elts, fixed):
                    self.assign_target(t, a)
                return
            whole = self.atom(value, base="packed")
            stars = [i for i, t in enumerate(target.elts) if isinstance(t, gast.Starred)]
            if len(stars) > 1:
                raise _unsupported(target.elts[stars[1]], "two starred targets", src=self.src)
            n = len(target.elts)
            for i, t in enumerate(target.elts):
                if stars and i == stars[0]:
                    # `*hidden, last = layers`: the middle items, as a list
                    after = n - i - 1
                    sl = gast.Slice(
                        lower=N.const(i), upper=N.const(-after) if after else None, step=None
                    )
                    part = gast.Subscript(value=N.clone(whole), slice=sl, ctx=gast.Load())
                    self.assign_target(
                        t.value, gast.Call(func=N.name("list"), args=[part], keywords=[])
                    )
                    continue
                j = i if not stars or i < stars[0] else i - n  # from the end after a star
                item = gast.Subscript(value=N.clone(whole), slice=N.const(j), ctx=gast.Load())
                item.sj_unpack = True  # (an item of an unpacking: in bounds, a subscript)
                self.assign_target(t, item)
        elif isinstance(target, gast.Subscript):
            # d[k] = v  ->  d = ad.setitem(d, k, v)  (functional; arrays raise as JAX does)
            base = target.value
            root = base
            while isinstance(root, gast.Subscript):
                root = root.value
            if isinstance(root, gast.Name) and root.id not in self.locals:
                # a module-level (or closed-over) container: rebinding it would make
                # the name local to the generated function (an internal
                # UnboundLocalError, user Y's METRICS["loss"] = l)
                raise UnsupportedSyntaxError(
                    f"assigning to an item of `{root.id}`, which is not a variable of the "
                    "transformed function, is not supported",
                    self.loc(target),
                    "return the value instead (has_aux=True for grad), or copy the "
                    f"container into a local first: `mine = dict({root.id})`",
                )
            if isinstance(target.slice, gast.Slice):
                # (emitted as a call argument, `0:1` was invalid Python)
                raise _unsupported(
                    target,
                    "assigning to a slice (`x[i:j] = v`)",
                    "build a new list instead (`xs = xs[:i] + v + xs[j:]`); for an array, "
                    "`x = x.at[i:j].set(v)`",
                    self.src,
                )
            if not isinstance(base, gast.Name):
                inner = self.atom(_as_load(N.clone(base)))
            else:
                inner = N.name(self.var(base.id))
            idx = self.index(target.slice)
            val = self.atom(value)
            prim = registry.by_public("ad.setitem")
            bound = {"x": inner, "idx": idx, "v": val}
            expr = N.call(prim.public, [N.clone(inner), idx, val])
            dest = base
            while isinstance(dest, gast.Subscript):
                dest = dest.value
            if isinstance(dest, gast.Attribute):
                # self.metrics["k"] = v: the container lives in an object
                raise _unsupported(
                    target,
                    f"assigning to an item of `{N.to_source(dest).strip()}` (an attribute)",
                    "keep the container in a local variable, or return the value "
                    "(has_aux=True for grad)",
                    src=self.src,
                )
            if not isinstance(base, gast.Name):
                # nested container update: x[a][b] = v -> t = x[a]; t = setitem(t, b, v);
                # x = setitem(x, a, t)
                tmp = inner.id
                self.emit(N.assign(tmp, expr), Op("prim", prim=prim, bound=bound))
                self.assign_target(_as_store(N.clone(base)), N.name(tmp))
                return
            self.emit(N.assign(self.var(base.id), expr), Op("prim", prim=prim, bound=bound))
        elif isinstance(target, gast.Attribute):
            raise _unsupported(
                target,
                "assigning to an attribute",
                "build a new object, or keep the value in a local variable",
                src=self.src,
            )
        else:
            raise _unsupported(target, f"assignment to {type(target).__name__}", src=self.src)

    def compute_into(self, tname: str, value: Any) -> None:
        """Emit statements computing ``value`` with the final result stored in ``tname``."""
        node, op = self.simple(value, tname)
        if node is None:
            return
        if isinstance(node, gast.Name) and node.id == tname:
            return
        self.emit(N.assign(tname, node), op)

    def expr_statement(self, value: Any) -> None:
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute):
            done = self.container_method(value, None, discard=True)
            if done is not None:
                node, op = done
                if not isinstance(node, gast.Constant):
                    self.emit(N.expr_stmt(node), op)
                return
            status, root = self.resolve(value.func.value)
            if (
                status == "local"
                and value.func.attr == "append"
                and isinstance(value.func.value, gast.Name)
            ):
                lst = self.var(value.func.value.id)
                if len(value.args) != 1:
                    raise _unsupported(value, "append with several arguments", src=self.src)
                v = self.atom(value.args[0])
                call = N.call(N.attr(N.name(lst), "append"), [v])
                self.emit(N.expr_stmt(call), Op("append", elts=[v], target=lst))
                return
        node, op = self.simple(value, None)
        if node is not None:
            self.emit(N.expr_stmt(node), op)
