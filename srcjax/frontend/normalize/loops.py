"""``while`` and ``for`` loops to ANF: ``for`` over ``range``, arrays, lists,
``zip``/``enumerate`` becomes an index loop; loops over classes or functions
are unrolled.
"""

from __future__ import annotations

from typing import Any, Dict, List, Set

import gast

from ...errors import (
    UnsupportedSyntaxError,
)
from ...primitives import registry
from .. import nodes as N
from .anf import Op
from .common import _bind, _unsupported


def _clone_sharing_ops(stmts: List[Any]) -> List[Any]:
    """Deep copies of ``stmts`` whose nodes (nested ones too) share the originals'
    Ops (a Primitive is never copied)."""
    memo: Dict[int, Any] = {}
    for s in stmts:
        for n in gast.walk(s):
            op = getattr(n, "sj_op", None)
            if op is not None:
                memo[id(op)] = op
    return [N.clone(s, memo) for s in stmts]


class LoopsMixin:
    """The loop converters of :class:`Normalizer`."""

    def while_loop(self, s: Any) -> None:
        saved = self.out
        self.out = []
        test = self.condition(s.test, force_name=False)
        test_stmts, self.out = self.out, saved
        body = self.block(s.body)
        if (
            len(test_stmts) == 1
            and isinstance(test_stmts[0], gast.Assign)
            and getattr(test_stmts[0], "sj_op", None) is not None
            and test_stmts[0].sj_op.kind == "inactive"
            and isinstance(test, gast.Name)
            and test_stmts[0].targets[0].id == test.id
        ):
            test = test_stmts[0].value  # a plain comparison stays in the loop header
            test_stmts = []
        if not test_stmts:
            self.emit(gast.While(test=test, body=body or [gast.Pass()], orelse=[]))
            return
        # the test needs statements: evaluate it before the loop and at the end of the body
        self.out.extend(test_stmts)
        # (a short-circuit test holds `if` statements: their inner statements keep
        # their Ops too)
        again = _clone_sharing_ops(test_stmts)
        self.emit(gast.While(test=test, body=body + again, orelse=[]))

    def for_loop(self, s: Any) -> None:
        if self._is_iter_call(s.iter):  # for v in iter(xs): for v in xs
            s.iter = s.iter.args[0]
        it = s.iter
        target = s.target
        if self._unroll_over_functions(s):
            return
        fns = self._function_list(it) if isinstance(target, gast.Name) else None
        if fns is not None:
            # a loop over functions (`for act in (jnp.tanh, lambda t: t * 2)`): its
            # passes are unrolled, each with the loop variable naming one function
            for fn in fns:
                self.bind_local_fn(self.var(target.id), fn)
                for st in s.body:
                    self.stmt(N.clone(st))
            return
        objs = self._static_objects(it) if self._unrollable_over(s) else None
        if objs is not None:
            # `for layer in self.layers:` over plain objects known here: each pass
            # with the loop variable bound to one, so its methods and attributes
            # resolve (bug 40: `layer.apply(w, h)` was a run-time method call)
            for ob in objs:
                self.static_params[target.id] = ob
                for st in s.body:
                    self.stmt(N.clone(st))
            return
        # for x in range(...)
        rev = False
        if (
            isinstance(it, gast.Call)
            and len(it.args) == 1
            and not it.keywords
            and isinstance(it.args[0], gast.Call)
            and self.resolve(it.func) == ("found", reversed)
            and self.resolve(it.args[0].func) == ("found", range)
        ):
            it, rev = it.args[0], True  # for i in reversed(range(...)): kept as written
        if isinstance(it, gast.Call):
            status, obj = self.resolve(it.func)
            if status == "found" and obj is range and not it.keywords:
                args = [self.atom(a) for a in it.args]
                if not isinstance(target, gast.Name):
                    raise _unsupported(target, "unpacking a range loop variable", src=self.src)
                tname = self.var(target.id)
                # (the body is still source: compare source names, not the renamed
                # one, which may be another source name of an inlined function)
                # (a body that never reads the variable may rebind it: nested
                # `for _ in range(...)` loops, as JAX users write them)
                if target.id in N.assigned_names(s.body) and any(
                    target.id in N.names_in(st) for st in s.body
                ):
                    raise UnsupportedSyntaxError(
                        f"assigning to the loop variable `{target.id}` inside its `for` loop "
                        "is not supported in transformed functions",
                        self.loc(s),
                        "use another name inside the loop body",
                    )
                self.forget_flags(s.body)
                body = self.block(s.body)
                self.forget_flags(s.body)
                rng = N.call(N.name("range"), args)
                loop = gast.For(
                    target=N.name(tname, store=True),
                    iter=N.call(N.name("reversed"), [rng]) if rev else rng,
                    body=body or [gast.Pass()],
                    orelse=[],
                    type_comment=None,
                )
                self.emit(loop)
                return
        if self._unroll_over_classes(s):
            return
        spec = self._iter_spec(it)
        self._index_loop(s, spec)

    def _unrollable_over(self, s: Any) -> bool:
        """Whether the passes of ``for name in ...`` may be unrolled with ``name``
        bound statically: no ``break``/``continue`` and no other binding of it."""
        if not isinstance(s.target, gast.Name) or self.store_counts.get(s.target.id) != 1:
            return False
        body = gast.Module(body=list(s.body), type_ignores=[])
        return not any(isinstance(n, (gast.Break, gast.Continue)) for n in gast.walk(body))

    def _unroll_over_classes(self, s: Any) -> bool:
        """``for layer in self.layers: x = layer(x)`` over a list whose items hold
        instances of different registered classes (type tree ``("items", ...)``: a
        Sequential built from a config): the loop's passes are unrolled, each with
        the loop variable bound to one item, so each item's methods are inlined
        (user J). Only without break/continue in the body; a loop over one class
        stays a loop."""
        target, it = s.target, s.iter
        body = list(s.body)
        count, start, pair = None, N.const(0), None
        if (
            isinstance(it, gast.Call)
            and 1 <= len(it.args) + len(it.keywords) <= 2
            and all(k.arg == "start" for k in it.keywords)
            and self.resolve(it.func) == ("found", enumerate)
        ):
            # for i, layer in enumerate(self.layers): i is each pass's constant (a
            # loop with `break` binds the pair to one name: `for it in ...`)
            if len(it.args) == 2 or it.keywords:
                start = it.args[1] if len(it.args) == 2 else it.keywords[0].value
            it = it.args[0]
            if isinstance(target, gast.Name):
                pair = target.id
            elif (
                isinstance(target, gast.Tuple)
                and len(target.elts) == 2
                and isinstance(target.elts[0], gast.Name)
            ):
                count, target = target.elts[0].id, target.elts[1]
            else:
                return False
        if isinstance(target, gast.Name):
            names, seqs = [target.id], [it]
        elif (
            isinstance(target, gast.Tuple)
            and all(isinstance(e, gast.Name) for e in target.elts)
            and isinstance(it, gast.Call)
            and not it.keywords
            and len(it.args) == len(target.elts)
            and self.resolve(it.func) == ("found", zip)
        ):
            # for layer, spec in zip(self.layers, self.specs)
            names, seqs = [e.id for e in target.elts], list(it.args)
        else:
            return False
        if any(isinstance(q, gast.Call) for q in seqs):
            return False
        n = None
        for q in seqs:
            ty = self.expr_type(q)
            if ty is not None and ty[0] == "items" and ty[1]:
                if any(t is not None and t[0] == "class" for t in ty[1]):
                    n = len(ty[1])
        if n is None:
            return False
        for node in gast.walk(gast.Module(body=body, type_ignores=[])):
            if isinstance(node, gast.Break):
                return False
        has_continue = any(
            isinstance(node, gast.Continue)
            for node in gast.walk(gast.Module(body=body, type_ignores=[]))
        )
        for k in range(n):
            binds = [
                N.copy_origin(
                    N.assign(
                        name, gast.Subscript(value=N.clone(q), slice=N.const(k), ctx=gast.Load())
                    ),
                    s,
                )
                for name, q in zip(names, seqs)
            ]
            i = gast.BinOp(left=N.const(k), op=gast.Add(), right=N.clone(start))
            if count is not None:
                binds.insert(0, N.copy_origin(N.assign(count, i), s))
            if pair is not None:
                item = binds[0].value
                binds = [N.copy_origin(N.assign(pair, gast.Tuple([i, item], gast.Load())), s)]
            body_k = binds + [N.clone(st) for st in body]
            if has_continue:
                # a pass of one trip: `continue` ends this item's pass, as in the loop
                once = gast.For(
                    target=N.name(self.namer.fresh("_once"), store=True),
                    iter=N.call(N.name("range"), [N.const(1)]),
                    body=body_k,
                    orelse=[],
                    type_comment=None,
                )
                self.stmt(N.copy_origin(once, s))
            else:
                for st in body_k:
                    self.stmt(st)
        return True

    def _iter_spec(self, it: Any) -> tuple:
        """("enumerate", inner) | ("zip", [specs]) | ("seq", atom) for a loop iterable."""
        if isinstance(it, gast.Call) and it.keywords and len(it.args) == 1:
            status, obj = self.resolve(it.func)
            kws = {k.arg: k.value for k in it.keywords}
            if status == "found" and obj is enumerate and set(kws) == {"start"}:
                # enumerate(xs, start=1): the index plus start
                start = self.atom(kws["start"], base="start")
                return ("enumerate_from", (self._iter_spec(it.args[0]), start))
        if isinstance(it, gast.Call) and it.args and [k.arg for k in it.keywords] == ["strict"]:
            status, obj = self.resolve(it.func)
            known, strict = self.static_key(it.keywords[0].value)
            if status == "found" and obj is zip and known:
                # zip(a, b, strict=True): zip, its lengths checked where the loop starts
                specs = [self._iter_spec(a) for a in it.args]
                return ("zip_strict" if strict else "zip", specs)
        if isinstance(it, gast.Call) and not it.keywords:
            status, obj = self.resolve(it.func)
            if status == "found" and obj is enumerate and len(it.args) == 1:
                return ("enumerate", self._iter_spec(it.args[0]))
            if status == "found" and obj is enumerate and len(it.args) == 2:
                start = self.atom(it.args[1], base="start")
                return ("enumerate_from", (self._iter_spec(it.args[0]), start))
            if status == "found" and obj is zip and it.args:
                return ("zip", [self._iter_spec(a) for a in it.args])
            if status == "found" and obj is reversed and len(it.args) == 1:
                inner = self._iter_spec(it.args[0])
                return ("reversed", (inner, self._emit_len(inner)))
        if (
            isinstance(it, gast.Call)
            and isinstance(it.func, gast.Attribute)
            and it.func.attr in ("keys", "values", "items")
            and not it.args
            and not it.keywords
        ):
            # for k, v in d.items(): the keys are listed once (they carry no
            # derivative), the values are read as d[k] (differentiable)
            d = self.atom(it.func.value, base="d")
            ks = self.temp("keys")
            prim = registry.by_public("ad.keys")
            self.emit(
                N.assign(ks, N.call("ad.keys", [N.clone(d)])),
                Op("prim", prim=prim, bound=_bind(prim, d)),
            )
            return ("dict", (it.func.attr, d, ks))
        return ("seq", self.atom(it, base="seq"))

    def _emit_len(self, spec) -> str:
        """Emit the trip count of a loop over ``spec``; returns its name. Each
        sequence's length is its own statement (``n = ad.seq_len(xs)``), so vmap
        sees every one: ``zip(u, v)`` of batched arrays runs per-example lengths."""
        kind, val = spec
        if kind == "enumerate":
            return self._emit_len(val)
        if kind == "enumerate_from":
            return self._emit_len(val[0])
        if kind == "reversed":
            return val[1]
        n = self.temp("n")
        if kind == "seq":  # xs may be a dict: refused at run time (ad.seq_len)
            prim = registry.by_public("ad.seq_len")
            xs = N.clone(val)
            op = Op("prim", prim=prim, bound=_bind(prim, xs))
            self.emit(N.assign(n, N.call("ad.seq_len", [xs])), op)
        elif kind == "dict":
            length = N.call(N.name("len"), [N.name(val[2])])
            self.emit(N.assign(n, length), Op("inactive", what="len"))
        else:  # zip
            parts = [N.name(self._emit_len(v)) for v in val]
            if kind == "zip_strict":
                self._emit_strict_checks([p.id for p in parts])
            self.emit(N.assign(n, N.call(N.name("min"), parts)), Op("inactive", what="len"))
        return n

    def _emit_strict_checks(self, lengths) -> None:
        """``zip(..., strict=True)``: Python's ValueError when an argument's length
        differs from the first's (lengths known while transforming fold the tests)."""
        for k, m in enumerate(lengths[1:], start=2):
            for cmp, word in ((gast.Lt(), "shorter"), (gast.Gt(), "longer")):
                c = self.temp("cond")
                test = gast.Compare(left=N.name(m), ops=[cmp], comparators=[N.name(lengths[0])])
                self.emit(N.assign(c, test), Op("inactive", what="comparison"))
                msg = N.const(f"zip() argument {k} is {word} than argument 1")
                exc = N.call(N.name("ValueError"), [msg])
                stop = gast.Raise(exc=exc, cause=None)
                stop.sj_op = Op("inactive", what="assert")
                self.emit(gast.If(test=N.name(c), body=[stop], orelse=[]))

    def _spec_item(self, spec, idx: str) -> Any:
        kind, val = spec
        if kind == "seq":
            return gast.Subscript(value=N.clone(val), slice=N.name(idx), ctx=gast.Load())
        if kind == "enumerate":
            return gast.Tuple(elts=[N.name(idx), self._spec_item(val, idx)], ctx=gast.Load())
        if kind == "enumerate_from":
            inner, start = val
            count = gast.BinOp(left=N.name(idx), op=gast.Add(), right=N.clone(start))
            return gast.Tuple(elts=[count, self._spec_item(inner, idx)], ctx=gast.Load())
        if kind == "reversed":
            inner, n = val
            j = self.temp("j")
            self.emit(N.assign(j, N.parse_expr(f"{n} - 1 - {idx}")), Op("inactive", what="index"))
            return self._spec_item(inner, j)
        if kind == "dict":
            how, d, ks = val
            key = gast.Subscript(value=N.name(ks), slice=N.name(idx), ctx=gast.Load())
            value = gast.Subscript(value=N.clone(d), slice=N.clone(key), ctx=gast.Load())
            if how == "keys":
                return key
            if how == "values":
                return value
            return gast.Tuple(elts=[key, value], ctx=gast.Load())
        return gast.Tuple(elts=[self._spec_item(v, idx) for v in val], ctx=gast.Load())

    def _index_loop(self, s, spec):
        if spec[0] == "seq" and self.type_of(spec[1]) == ("items", ()):
            return  # `for layer in self.layers` with no layers
        idx = self.temp("i")
        n = self._emit_len(spec)
        saved = self.out
        self.out = []
        self.assign_target(s.target, self._spec_item(spec, idx))
        head, self.out = self.out, saved
        self.forget_flags(s.body)
        body = head + self.block(s.body)
        self.forget_flags(s.body)
        loop = gast.For(
            target=N.name(idx, store=True),
            iter=N.call(N.name("range"), [N.name(n)]),
            body=body,
            orelse=[],
            type_comment=None,
        )
        self.emit(loop)

    def _unroll_over_functions(self, s: Any) -> bool:
        """``for i, f in enumerate(fs)`` / ``for f, w in zip(fs, ws)`` with ``fs`` a
        list of functions known now: the passes are unrolled (each binds ``f`` to
        one function, ``i`` to its index, ``w`` to ``ws[j]``). False when the loop
        is not of that form."""
        it, target = s.iter, s.target
        if not (isinstance(it, gast.Call) and isinstance(target, gast.Tuple)):
            return False
        status, obj = self.resolve(it.func)
        if status != "found" or obj not in (enumerate, zip) or not it.args:
            return False
        if not all(isinstance(t, gast.Name) for t in target.elts):
            return False
        if obj is enumerate:
            fns = self._function_list(it.args[0])
            start = 0
            for k in it.keywords:
                if k.arg == "start" and isinstance(k.value, gast.Constant):
                    start = k.value.value
                else:
                    return False
            if fns is None or len(target.elts) != 2 or len(it.args) != 1:
                return False
            for j, fn in enumerate(fns):
                self.assign_target(target.elts[0], N.const(j + start))
                self.bind_local_fn(self.var(target.elts[1].id), fn)
                for st in s.body:
                    self.stmt(N.clone(st))
            return True
        if it.keywords or len(target.elts) != len(it.args):
            return False
        lists = [self._function_list(a) for a in it.args]
        objs = [self._static_objects(a) if fl is None else None for a, fl in zip(it.args, lists)]
        known = [fl for fl in lists if fl is not None] + [o for o in objs if o is not None]
        if not known:
            return False
        n = min(len(fl) for fl in known)
        for j in range(n):
            for t, a, fl, ob in zip(target.elts, it.args, lists, objs):
                if fl is not None:
                    self.bind_local_fn(self.var(t.id), fl[j])
                elif ob is not None:
                    self.static_params[t.id] = ob[j]  # t.update(u, s) resolves to it
                else:
                    item = gast.Subscript(value=N.clone(a), slice=N.const(j), ctx=gast.Load())
                    self.assign_target(t, N.copy_origin(item, s))
            for st in s.body:
                self.stmt(N.clone(st))
        return True

    def _only_pushed_and_popped(self, name: str) -> bool:
        """Whether every read of the source name ``name`` in this function is the
        receiver of ``.append(v)`` or ``.pop()`` (a stack: popping it in place
        changes no value read before), or this function is srcjax's own generated
        code (whose tapes the transforms of it follow as stacks)."""
        if hasattr(getattr(self.src, "fn", None), "__srcjax_deps__"):
            return True
        for n in gast.walk(self.src.node):
            if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load):
                if n not in self._stack_receivers():
                    return False
        return True

    def _stack_receivers(self) -> Set[Any]:
        got = getattr(self, "_receivers", None)
        if got is None:
            got = set()
            for n in gast.walk(self.src.node):
                if (
                    isinstance(n, gast.Call)
                    and isinstance(n.func, gast.Attribute)
                    and isinstance(n.func.value, gast.Name)
                    and (n.func.attr, len(n.args)) in (("append", 1), ("pop", 0))
                    and not n.keywords
                ):
                    got.add(n.func.value)  # (the node, not its id: the tree changes)
            self._receivers = got
        return got

    def _only_iterated(self, name: str, called: bool = False) -> bool:
        """Whether every read of the source name ``name`` in this function is the
        iterable of a ``for`` loop (``called``: or the list of an item called,
        ``name[i](x)``)."""
        loads = iters = 0
        for n in gast.walk(self.src.node):
            if (
                called
                and isinstance(n, gast.Call)
                and isinstance(n.func, gast.Subscript)
                and isinstance(n.func.value, gast.Name)
                and n.func.value.id == name
            ):
                iters += 1
            if isinstance(n, (gast.For, gast.comprehension)):
                its = [n.iter]
                if isinstance(n.iter, gast.Call):  # enumerate(fs), zip(fs, ws)
                    its += list(n.iter.args)
                iters += sum(1 for x in its if isinstance(x, gast.Name) and x.id == name)
            if isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Load):
                loads += 1
        return loads == iters
