"""Batching of ``while`` and ``for``: unbatched loops stay loops; a batched
condition or trip count runs until every example is done, masking those that
are."""

from __future__ import annotations

from typing import Any, List, Set

import gast

from ...analysis.liveness import live_in
from ...analysis.tapes import appended_lists
from ...errors import TransformValueError
from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .helpers import _range_args


class _Loops:
    """``while`` and ``for`` loops under vmap (a mixin of :class:`~.batcher.Batcher`)."""

    # ------------------------------------------------------------------ loops
    def _loop_head(self, s: Any, defined: Set[str], body_fn) -> Set[str]:
        head = set(self.bat)
        for _ in range(20):
            saved = self.bat
            self.bat = set(head)
            end, _ = self._dry(body_fn, s, set(defined))
            self.bat = saved
            new = head | end
            if new == head:
                break
            head = new
        return head

    def _loop_temporaries(self, s: Any, body: List[Any], test: Any) -> Set[str]:
        """Names a loop body assigns that are temporaries of one pass: every read
        in the body follows a write in the same pass, the test does not read
        them, and nothing outside the loop does. A masked loop needs no
        per-example value for them (an example that stopped never reads its
        stale one), so they stay as the body computes them: a Python loop index
        over a Butcher tableau, the list of stage values it builds (batched only
        when their data is)."""
        live = live_in(body) | set(N.names_in(test) if test is not None else ())
        # a name a tape pop restores is the value of an earlier pass (grad's
        # reverse loops), never a temporary
        popped = {
            st.targets[0].id
            for st in gast.walk(gast.Module(body=list(body), type_ignores=[]))
            if isinstance(st, gast.Assign)
            and isinstance(st.targets[0], gast.Name)
            and getattr(getattr(st, "sj_op", None), "kind", None) == "pop"
        }
        return {
            n
            for n in N.assigned_names(body)
            if n not in live
            and n not in self.tapes
            and n not in popped
            and n not in self.renamed
            and not self._read_outside(n, s)
        }

    def while_stmt(self, s: Any, defined: Set[str]) -> List[Any]:
        temps = self._loop_temporaries(s, s.body, s.test)

        def trial(loop, defs):
            if self.is_batched(loop.test):
                self.bat |= set(N.assigned_names(loop.body)) - temps
                self.bat |= set(n for n in N.names_in(loop.test))
            self.block(loop.body, defs)

        head = self._loop_head(s, defined, trial)
        if not any(n in head for n in N.names_in(s.test)):
            return self._plain_loop(s, defined, head)
        return self.batched_while(s, defined, head)

    def _plain_loop(self, s: Any, defined: Set[str], head: Set[str]) -> List[Any]:
        pre: List[Any] = []
        reach = set(defined)
        for n in sorted(head - self.bat):
            if n in reach:
                pre.append(self.broadcast_stmt(n, s))
        self.bat = set(head)
        inner_defined = set(defined) | set(N.assigned_names(s.body))
        if isinstance(s, gast.For):
            inner_defined.add(s.target.id)
        body = self.block(s.body, inner_defined)
        for n in sorted(head - self.bat):
            body.append(self.broadcast_stmt(n, s))
        self.bat = head | self.bat
        s.body = body or [gast.Pass()]
        return pre + [s]

    def batched_while(self, s: Any, defined: Set[str], head: Set[str]) -> List[Any]:
        with self._some_examples():
            return self._batched_while(s, defined, head)

    def _batched_while(self, s: Any, defined: Set[str], head: Set[str]) -> List[Any]:
        out: List[Any] = []
        test = s.test
        body = list(s.body)
        if isinstance(test, gast.Name):
            cond = test.id
        else:
            cond = self.namer.fresh("running")
            st = N.assign(cond, N.clone(test))
            st.sj_op = Op("inactive", what="loop test")
            self.at(st, s)
            body = body + [N.clone(st)]
            for b in body[-1:]:
                b.sj_op = Op("inactive", what="loop test")
            self.bat = set(self.bat)
            out.extend(self.stmt(st, defined))
        # loop-carried values all become batched (a pass's temporaries stay as the
        # body makes them)
        temps = self._loop_temporaries(s, body, s.test) - {cond}
        assigned = (set(N.assigned_names(body)) | {cond}) - temps
        # values first assigned in the body start as None (ad.select keeps the other
        # operand of a None), so every example keeps its own last value
        for n in sorted(assigned - set(defined) - {cond}):
            out.append(self.at(N.assign(n, N.const(None)), s))
        static = self.static & assigned  # stay Python values (see batched_if)
        # lists the body appends to (tapes) are made batched once, before the loop:
        # in the body, a batch_broadcast would re-broadcast them every iteration
        lists = appended_lists(body) & set(defined)
        for n in sorted(((assigned & set(defined)) | lists) - self.bat - static):
            out.append(self.broadcast_stmt(n, s))
            self.bat.add(n)
        if cond not in self.bat:
            out.append(self.broadcast_stmt(cond, s))
            self.bat.add(cond)
        self.bat |= head & set(defined)
        inner = gast.If(test=N.name(cond), body=body, orelse=[])
        self.at(inner, s)
        inner_defined = set(defined) | assigned | temps
        mixed, bat_m = self.mixed_if(inner, N.name(cond), inner_defined, sorted(assigned), static)
        self.bat = set(bat_m) | (assigned - static)
        check = self.at(N.assign(cond, self._pred_check(N.name(cond), s)), s)
        loop = gast.While(test=N.call("jnp.any", [N.name(cond)]), body=[check] + mixed, orelse=[])
        self.at(loop, s)
        loop.sj_note = "batched loop: runs until every example is done"
        out.append(loop)
        return out

    def batched_for(self, s: Any, defined: Set[str]) -> List[Any]:
        with self._some_examples():
            return self._batched_for(s, defined)

    def _batched_for(self, s: Any, defined: Set[str]) -> List[Any]:
        """``for i in range(n)`` with a per-example ``n``: run to the largest trip
        count; the body is a batched ``if`` on ``start <= i < n``."""
        args = _range_args(s.iter)
        if args is None:
            raise TransformValueError(
                "vmap: a `for` loop over a per-example range with a step (or over "
                "`reversed`) is not supported",
                hint="use a `while` loop with a batched condition",
            )
        start, stop = (N.const(0), args[0]) if len(args) == 1 else (args[0], args[1])
        out: List[Any] = []
        lo = N.call("jnp.min", [N.clone(start)]) if self.is_batched(start) else N.clone(start)
        hi = N.call("jnp.max", [N.clone(stop)]) if self.is_batched(stop) else N.clone(stop)
        i = s.target.id
        active = self.namer.fresh("active")
        st = self.at(N.assign(active, N.const(None)), s)
        less = registry.by_public("jnp.less")
        body_pre = self.prim_assign(
            st, Op("prim", prim=less, bound={"x": N.name(i), "y": N.clone(stop)}), active
        )
        if self.is_batched(start):
            low = self.namer.fresh("started")
            st2 = self.at(N.assign(low, N.const(None)), s)
            ge = registry.by_public("jnp.greater_equal")
            body_pre += self.prim_assign(
                st2, Op("prim", prim=ge, bound={"x": N.name(i), "y": N.clone(start)}), low
            )
            both = N.call("jnp.logical_and", [N.name(active), N.name(low)])
            body_pre.append(self.at(N.assign(active, both), s))
        self.bat.add(active)
        temps = self._loop_temporaries(s, s.body, None) - {i}
        assigned = set(N.assigned_names(s.body)) - temps
        # values first assigned in the body start as None (see batched_while)
        for n in sorted(assigned - set(defined)):
            out.append(self.at(N.assign(n, N.const(None)), s))
        static = self.static & assigned  # stay Python values (see batched_if)
        lists = appended_lists(s.body) & set(defined)  # (see batched_while)
        for n in sorted(((assigned & set(defined)) | lists) - self.bat - static):
            out.append(self.broadcast_stmt(n, s))
            self.bat.add(n)
        inner = gast.If(test=N.name(active), body=list(s.body), orelse=[])
        self.at(inner, s)
        inner_defined = set(defined) | assigned | temps | {i, active}
        mixed, bat_m = self.mixed_if(inner, N.name(active), inner_defined, sorted(assigned), static)
        self.bat = set(bat_m) | (assigned - static)
        descending = isinstance(s.iter, gast.Call) and getattr(s.iter.func, "id", "") == "reversed"
        rng = N.call(N.name("range"), [lo, hi])
        loop = gast.For(
            target=N.name(i, store=True),
            iter=N.call(N.name("reversed"), [rng]) if descending else rng,
            body=body_pre + mixed,
            orelse=[],
            type_comment=None,
        )
        self.at(loop, s)
        loop.sj_note = "batched trip count: runs to the longest example"
        out.append(loop)
        return out

    def for_stmt(self, s: Any, defined: Set[str]) -> List[Any]:
        if self.is_batched(s.iter):
            return self.batched_for(s, defined)

        def trial(loop, defs):
            self.block(loop.body, defs | {loop.target.id})

        head = self._loop_head(s, defined, trial)
        return self._plain_loop(s, defined, head)
