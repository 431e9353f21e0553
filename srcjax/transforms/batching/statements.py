"""Batching of straight-line statements: assignments (primitive calls through
their batching rules, copies, displays, pops), expression statements, and the
per-example loop a call without a rule falls back to."""

from __future__ import annotations

from typing import Any, List, Optional

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .calls import BatchCall, _const_value
from .helpers import (
    _SOME_TREE,
    _compare_prim,
    _is_builtin_conversion,
    _item_skeleton,
    _user_class,
)


class _Statements:
    """Assignments and expression statements (a mixin of :class:`~.batcher.Batcher`)."""

    # ------------------------------------------------------------------ statements
    def assign(self, s: Any, op: Op) -> List[Any]:
        t = s.targets[0].id
        out: List[Any] = []
        kind = op.kind
        if kind == "copy":
            v = op.elts[0] if op.elts else s.value
            self.skel.pop(t, None)
            if isinstance(v, gast.Name) and v.id in self.containers:
                self.containers.add(t)
                if v.id in self.skel:
                    self.skel[t] = self.skel[v.id]
            elif isinstance(v, (gast.Tuple, gast.List)):
                # a folded constant display, as the initial carry `(0.0, 1.0)` of a loop
                self.containers.add(t)
                self.skel[t] = ("items", tuple("leaf" for _ in v.elts))
            else:
                self.containers.discard(t)
            if isinstance(v, gast.Name) and v.id in self.object_batches:
                self.object_batches.add(t)  # (step(s): the callee's parameter s)
            self._set(t, self.is_batched(v))
            return [s]
        if kind == "pack":
            self.containers.add(t)
            self.skel.pop(t, None)
            value = s.value
            if t in self.batched_tapes and isinstance(value, gast.List) and not value.elts:
                # a tape batched somewhere: batched (empty) from its start, so that
                # its entries are each pushed in their final form and never
                # broadcast later with the static ones among them
                self._set(t, True)
                return [s]
            skel = self._display_skeleton(value)
            if skel is not None:
                self.skel[t] = skel
            if any(self.is_batched(e) for e in op.elts):
                s.value = self._materialize_display(value)
                self._set(t, True)
            else:
                self._set(t, False)
            return [s]
        if kind == "pop":
            return self.pop_assign(s, op, t)
        if isinstance(s.value, gast.Call):
            printed = self.print_stmt(s, op)
            if printed is not None:
                # ``t = debug.print(...)`` (a lambda's body): the per-example
                # print, then ``t = None``
                self._set(t, False)
                return printed + [self.at(N.assign(t, N.const(None)), s)]
        if kind == "prim":
            return self.prim_assign(s, op, t)
        if kind in ("inactive", "unknown"):
            return self.inactive_assign(s, op, t)
        self._set(t, self.is_batched(s.value))
        out.append(s)
        return out

    def pop_assign(self, s: Any, op: Op, t: str) -> List[Any]:
        """``t = lst.pop()`` / ``t = ad.pop(lst)`` / ``t = ad.pop_like(lst, like)``.

        Entries of a batched list are batched (pushes materialize them). A hole
        (``None``) in a cotangent tape pops as zeros like ``like``, so for a batched
        list ``like`` is materialized too; for an unbatched list and a batched
        ``like`` an entry is unbatched but a hole is batched, so zeros like ``like``
        are added to make every result batched."""
        lst_b = op.target in self.bat
        v = s.value
        like = None
        if (
            isinstance(v, gast.Call)
            and len(v.args) == 2
            and not v.keywords
            and N.to_source(v.func).strip() == "ad.pop_like"
        ):
            like = v.args[1]
        if like is None and (t in self.static or t in self.tape_static):
            self._set(t, False)  # restores static metadata pushed as it was
            return [s]
        if like is None or lst_b == self.is_batched(like):
            self._set(t, lst_b or (like is not None and self.is_batched(like)))
            return [s]
        value = N.clone(v)
        if lst_b:
            value.args[1] = N.call("ad.batch_broadcast", [value.args[1], N.name(self.size_name)])
        else:
            value = N.call("ad.tree_add", [value, N.call("ad.zeros_like", [N.clone(like)])])
        new = self.at(N.assign(t, value), s)
        new.sj_op = None
        self._set(t, True)
        return [new]

    def _value_skeleton(self, e: Any) -> Any:
        """The structure of one item of a display or of an appended value:
        ``"leaf"`` unless it is a container (its skeleton, or ``_SOME_TREE`` when
        its items are unknown)."""
        if isinstance(e, gast.Name) and e.id in self.containers:
            return self.skel.get(e.id) or _SOME_TREE
        if isinstance(e, (gast.List, gast.Tuple, gast.Dict)):
            return self._display_skeleton(e) or _SOME_TREE
        return "leaf"

    def _display_skeleton(self, value: Any) -> Any:
        """The structure of a list/tuple/dict display (which items are containers),
        so that ``rows[i]`` of ``rows = [[a, b], [c, d]]`` is known to be a list."""
        if isinstance(value, (gast.List, gast.Tuple)):
            items = tuple(self._value_skeleton(e) for e in value.elts)
            if items and all(i == items[0] for i in items):
                return ("seq", items[0])
            return ("items", items)
        if isinstance(value, gast.Dict):
            keys = []
            for k in value.keys:
                ok, key = _const_value(k) if k is not None else (False, None)
                if not ok:
                    return None
                keys.append(key)
            return ("dict", tuple((k, self._value_skeleton(v)) for k, v in zip(keys, value.values)))
        return None

    def _appended_skeleton(self, lst: str, v: Any) -> None:
        """Keep the structure of ``lst`` known across ``lst.append(v)``: a list
        started empty (a comprehension) of items of one structure is a ``seq``."""
        item = self._value_skeleton(v)
        old = self.skel.get(lst)
        if old == ("items", ()) or old == ("seq", item):
            self.skel[lst] = ("seq", item)
        elif old is not None:
            # items of different structures: a container whose items are unknown
            self.skel[lst] = _SOME_TREE

    def _set(self, name: str, batched: bool) -> None:
        if batched:
            self.bat.add(name)
        else:
            self.bat.discard(name)

    def _materialize_display(self, value: Any) -> Any:
        def fix(e):
            if self.is_batched(e):
                return e
            if isinstance(e, gast.Constant) and (e.value is None or isinstance(e.value, str)):
                return e
            return N.call("ad.batch_broadcast", [e, N.name(self.size_name)])

        if isinstance(value, gast.Dict):
            value.values = [fix(v) for v in value.values]
        elif isinstance(value, (gast.List, gast.Tuple)):
            value.elts = [fix(v) for v in value.elts]
        return value

    def prim_assign(self, s: Any, op: Op, t: str) -> List[Any]:
        prim = op.prim
        any_b = False
        for v in op.bound.values():
            items = v if isinstance(v, list) else [v]
            if any(self.is_batched(it) for it in items):
                any_b = True
        operands = [v for v in op.bound.values() if isinstance(v, gast.Name)]
        if (
            prim.op == "+"
            and isinstance(s.value, gast.BinOp)
            and any(v.id in self.containers for v in operands)
        ):
            # `+` of tuples/lists joins them: no lifting; every item batched
            self.skel.pop(t, None)
            self.containers.add(t)
            if not any_b:
                self._set(t, False)
                return [s]
            value = N.clone(s.value)
            for field in ("left", "right"):
                side = getattr(value, field)
                if not self.is_batched(side):
                    bcast = N.call("ad.batch_broadcast", [side, N.name(self.size_name)])
                    setattr(value, field, bcast)
            new = self.at(N.assign(t, value), s)
            new.sj_op = None
            self._set(t, True)
            return [new]
        if not any_b and not prim.batch_unbatched:
            self._track_container(prim, op, t)
            self._set(t, False)
            return [s]
        out: List[Any] = []
        c = BatchCall(self, prim, op.bound, out, s)
        rule = prim.batch
        if rule is None and prim.kind == "elementwise":
            from ...primitives.batch_rules import elementwise_rule

            rule = elementwise_rule
        res = rule(c) if rule is not None else None
        self._track_container(prim, op, t)
        if res is None:
            out = self.loop_fallback(s, op, t, prim.public)
            self._set(t, True)
            return out
        batched = True
        if isinstance(res, tuple):
            res, batched = res
        new = self.at(N.assign(t, res), s)
        new.sj_op = None
        out.append(new)
        self._set(t, batched)
        return out

    def _track_container(self, prim, op: Op, t: str) -> None:
        self.skel.pop(t, None)
        if prim.part in ("item", "attr"):  # x[idx], x.name
            x = op.bound.get("x")
            if isinstance(x, gast.Name) and x.id in self.containers:
                item = _item_skeleton(
                    self.skel.get(x.id), op.bound.get("idx", op.bound.get("name"))
                )
                if item is not None and item != "leaf":
                    self.containers.add(t)
                    self.skel[t] = item
                elif N.static_slice(op.bound.get("idx")) is not None:
                    self.containers.add(t)  # a slice of a list is a list
                else:
                    self.containers.discard(t)
                return
        if prim.returns_tree:
            self.containers.add(t)
        for pname in prim.container_from:
            # (ad.setitem, ad.tree_add, ad.cotangent_like ...: a container in, a container out)
            if pname in op.bound:
                x = op.bound[pname]
                if isinstance(x, gast.Name) and x.id in self.containers:
                    self.containers.add(t)
                break
        for pname in prim.same_structure:
            # helpers whose result has the structure of this operand (an inner
            # vmap's `ad.batch_broadcast(params, n)` of a list of (W, b) under an
            # outer vmap: a list, which ad.cotangent_like's rule must see)
            x = op.bound.get(pname)
            if isinstance(x, gast.Name) and x.id in self.containers:
                self.containers.add(t)
                if x.id in self.skel:
                    self.skel[t] = self.skel[x.id]
                break

    def inactive_assign(self, s: Any, op: Op, t: str) -> List[Any]:
        value = s.value
        names = N.names_in(value)
        if not any(n in self.bat for n in names):
            self._set(t, False)
            return [s]
        # attributes: per-example metadata
        if isinstance(value, gast.Attribute) and isinstance(value.value, gast.Name):
            base = value.value
            if base.id not in self.containers:
                if value.attr == "shape":
                    s.value = gast.Subscript(
                        value=value,
                        slice=gast.Slice(lower=N.const(1), upper=None, step=None),
                        ctx=gast.Load(),
                    )
                    self._set(t, False)
                    return [s]
                if value.attr == "ndim":
                    s.value = gast.BinOp(left=value, op=gast.Sub(), right=N.const(1))
                    self._set(t, False)
                    return [s]
                if value.attr == "size":
                    s.value = N.call("ad.example_size", [N.clone(base)])
                    self._set(t, False)
                    return [s]
                if value.attr == "dtype":
                    self._set(t, False)
                    return [s]
            self._set(t, True)
            return [s]
        if isinstance(value, gast.Call) and isinstance(value.func, gast.Name):
            fname = value.func.id
            if fname == "len" and len(value.args) == 1:
                a = value.args[0]
                if isinstance(a, gast.Name) and a.id not in self.containers:
                    s.value = N.call("ad.example_len", [N.clone(a)])
                self._set(t, False)
                return [s]
            if fname in ("isinstance", "type", "hasattr", "callable", "id", "repr", "str") or (
                op.what in ("isinstance", "hasattr")  # (the frontend's traced_isinstance)
            ):
                self._set(t, False)
                return [s]
        if (
            isinstance(value, gast.Compare)
            and len(value.ops) == 1
            and isinstance(value.ops[0], (gast.In, gast.NotIn))
            and isinstance(value.comparators[0], gast.Name)
            and value.comparators[0].id in self.containers
            and not self.is_batched(value.left)
        ):
            # `k in d`: a batched dict has the same keys in every example
            self._set(t, False)
            return [s]
        if (
            isinstance(value, gast.Compare)
            and len(value.ops) == 1
            and isinstance(value.ops[0], (gast.Is, gast.IsNot))
            and any(
                isinstance(v, gast.Constant) and v.value is None
                for v in (value.left, value.comparators[0])
            )
        ):
            # `w is None`: a batched value is one object, None in no example
            # (histogram's optional weights)
            self._set(t, False)
            return [s]
        if isinstance(value, gast.Compare) and len(value.ops) == 1:
            prim = _compare_prim(value.ops[0])
            if prim is not None:
                bound = {"x": value.left, "y": value.comparators[0]}
                return self.prim_assign(s, Op("prim", prim=prim, bound=bound), t)
        if isinstance(value, gast.BoolOp):
            return self.boolop(s, value, t)
        if isinstance(value, gast.UnaryOp) and isinstance(value.op, gast.Not):
            prim = registry.by_public("jnp.logical_not")
            return self.prim_assign(s, Op("prim", prim=prim, bound={"x": value.operand}), t)
        if (
            isinstance(value, gast.Call)
            and op.kind == "unknown"
            or (isinstance(value, gast.Call) and _is_builtin_conversion(value))
        ):
            out = self.loop_fallback(s, op, t, N.to_source(value.func))
            self._set(t, True)
            return out
        self._set(t, True)
        return [s]

    def boolop(self, s: Any, value: Any, t: str) -> List[Any]:
        """``a and b`` / ``a or b`` per example: ``where(a, b, a)`` / ``where(a, a, b)``."""
        where = registry.by_public("jnp.where")
        vals = list(value.values)
        out: List[Any] = []
        acc = vals[0]
        for i, v in enumerate(vals[1:]):
            last = i == len(vals) - 2
            name = t if last else self.namer.fresh(t + "_part")
            if isinstance(value.op, gast.And):
                bound = {"condition": acc, "x": v, "y": acc}
            else:
                bound = {"condition": acc, "x": acc, "y": v}
            st = self.at(N.assign(name, N.const(None)), s)
            out.extend(self.prim_assign(st, Op("prim", prim=where, bound=bound), name))
            acc = N.name(name)
        return out

    def expr_stmt(self, s: Any, op: Optional[Op]) -> List[Any]:
        printed = self.print_stmt(s, op)
        if printed is not None:
            return printed
        if op is not None and op.kind == "append":
            v = op.elts[0]
            lst = op.target
            self.containers.add(lst)
            self._appended_skeleton(lst, v)
            if self.is_batched(v) and lst not in self.bat:
                self.bat.add(lst)
                return [self.broadcast_stmt(lst, s), s]
            static = isinstance(v, gast.Name) and (v.id in self.static or v.id in self.tape_static)
            if lst in self.bat and not self.is_batched(v) and not static:
                # (static metadata is pushed as it is and popped unbatched)
                s.value.args = [N.call("ad.batch_broadcast", [N.clone(v), N.name(self.size_name)])]
            return [s]
        if (
            op is not None
            and op.kind == "prim"
            and any(
                self.is_batched(n)
                for v in op.bound.values()
                for n in (v if isinstance(v, list) else [v])  # (*args operands too)
            )
        ):
            tmp = self.namer.fresh("_unused")
            st = self.at(N.assign(tmp, s.value), s)
            return self.prim_assign(st, op, tmp)
        return [s]

    # ------------------------------------------------------------------ fallback
    def loop_fallback(self, s: Any, op: Op, t: str, what: str) -> List[Any]:
        """``t = f(args)`` on batched args as a Python loop over the examples."""
        value = s.value
        parts = self.namer.fresh(t + "_rows")
        i = self.namer.fresh("row")
        # (ad.tree_row, not n[i]: n may be a container, or a dict key popped from a
        # batched tape, a str the same in every row)
        body, renamed = self._example_rows({n for n in N.names_in(value) if n in self.bat}, i)
        body.append(N.expr_stmt(N.call(N.attr(N.name(parts), "append"), [renamed(value)])))
        loop = self._example_loop(
            i, body, s, f"no batching rule for {what}: loop over the examples"
        )
        # ad.tree_stack stacks arrays as jnp.stack does, and containers leafwise
        # (a sparse cotangent need not be known as a container here)
        stack = "ad.tree_stack" if t in self.containers or self._may_be_tree(op) else "jnp.stack"
        if isinstance(s.value, gast.Call) and _user_class(self._callee(s.value.func)):
            # an instance of the user's class per example: kept as objects when
            # they are no arrays (ad.bgetitem and operators then act per object)
            stack = "ad.stack_objects"
            self.object_batches.add(t)
        return [
            self.at(N.assign(parts, gast.List(elts=[], ctx=gast.Load())), s),
            loop,
            self.at(N.assign(t, N.call(stack, [N.name(parts)])), s),
        ]

    @staticmethod
    def _may_be_tree(op: Op) -> bool:
        """Whether ``op`` may return a container: helpers of generated adjoint code
        (``ad.forget``, ``ad.tree_add`` ...) pass their argument's kind through."""
        if op is None or op.kind != "prim":
            return op is not None and op.kind == "unknown"
        # custom_jvp/custom_vjp functions may return tuples too
        return op.prim.returns_tree or op.prim.namespace == "ad" or op.prim.kind == "custom"
