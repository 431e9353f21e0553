"""Reverse mode through control flow: which names are surely defined where an
``if`` or a loop starts, shape classes of cotangents, and the adjoints of
``if`` (branch on the recorded condition) and of loops (a ``while``'s trip
count, a ``for`` reversed)."""

from __future__ import annotations

from typing import Any, Dict, List, Set

import gast

from ...frontend import nodes as N
from .prune import _is_reversed, _one, _Restore


class _ControlFlow:
    """Adjoints of ``if``, ``while`` and ``for`` (a mixin of :class:`~.generate.Reverse`)."""

    # ------------------------------------------------------------------ shapes
    def must_defined(self, stmts: List[Any], have: Set[str]) -> Set[str]:
        """Record, for each if/loop, the names surely defined when it starts
        (``self.must_at``); return the names surely defined after ``stmts``."""
        have = set(have)
        for s in stmts:
            if isinstance(s, gast.Assign):
                self.must_at[id(s)] = set(have)
                have.add(s.targets[0].id)
            elif isinstance(s, gast.If):
                self.must_at[id(s)] = set(have)
                a = self.must_defined(s.body, have)
                b = self.must_defined(s.orelse, have)
                have |= a & b
            elif isinstance(s, (gast.While, gast.For)):
                self.must_at[id(s)] = set(have)
                self.must_defined(s.body, have)  # the body may not run
        return have

    def shape_classes(self, stmts: List[Any]) -> None:
        """Names that surely share one shape (an elementwise chain from one input):
        ``exp(x)``, ``1.0 + e``, ``e / a`` all have ``x``'s shape. A name assigned
        with two different classes gets none (flow-insensitive, conservative)."""
        seen: Dict[str, set] = {p: {p} for p in self.params}

        def visit(block):
            for s in block:
                if isinstance(s, gast.Assign):
                    t = s.targets[0].id
                    op = getattr(s, "sj_op", None)
                    cls = None
                    if op is not None and op.kind == "copy":
                        v = op.elts[0]
                        if isinstance(v, gast.Name):
                            cls = _one(seen.get(v.id))
                    elif (
                        op is not None
                        and op.kind == "prim"
                        and op.prim.kind == "elementwise"
                        and not op.prim.shape_changing
                    ):
                        classes = set()
                        ok = True
                        for v in op.bound.values():
                            for it in v if isinstance(v, list) else [v]:
                                if isinstance(it, gast.Name):
                                    c = _one(seen.get(it.id))
                                    if c is None:
                                        ok = False
                                    classes.add(c)
                                elif not isinstance(it, gast.Constant):
                                    ok = False
                        if ok and len(classes) == 1:
                            cls = classes.pop()
                    seen.setdefault(t, set()).add(cls if cls is not None else object())
                elif isinstance(s, gast.If):
                    visit(s.body)
                    visit(s.orelse)
                elif isinstance(s, (gast.While, gast.For)):
                    if isinstance(s, gast.For):
                        seen.setdefault(s.target.id, set()).add(object())
                    visit(s.body)
                    visit(s.body)

        visit(stmts)
        self.shape_class = {n: c for n, cs in seen.items() if (c := _one(cs)) is not None}

    def rev_if(self, s, nz, defined, in_loop) -> List[Any]:
        nz_then = set(nz)
        nz_else = set(nz)
        # a branch may run on no trip of the loop: its contributions to a loop-
        # invariant cotangent are added at once, not deferred to lists stacked
        # after the loop (an empty list: deferred.py's sums assume every trip)
        defer, self.defer = self.defer, None
        try:
            b_then = self.rev_block(s.body, nz_then, defined, in_loop)
            b_else = self.rev_block(s.orelse, nz_else, defined, in_loop)
        finally:
            self.defer = defer
        after = (nz_then | nz_else) & (defined | set(self.params))
        for names, block in ((nz_then, b_then), (nz_else, b_else)):
            for n in sorted(after - names):
                surely = n in self.must_at.get(id(s), set(self.params))
                block.append(N.assign(self.bar(n), self.zero_for(n, surely)))
                self._collect_reads(block[-1:])  # zeros_like(n) needs n's value here
                self.materialized.add(n)
        nz.clear()
        nz.update(after)
        cond = N.clone(s.test)
        self._collect_reads([cond])
        node = gast.If(test=cond, body=b_then, orelse=b_else)
        return [node]

    def fill_carried_holes(self, s, state, must) -> List[Any]:
        """``c_bar = ad.fill_holes(c_bar, c, inexact=True)`` before the reverse of
        a lax loop (a scan, fori_loop or while_loop body, which checks its carry
        ``c``: ``ad.check_carry``) whose carry holds a container and has a
        cotangent that may be nonzero in the loop (``state``). A loss reading only ``h`` of a scan's carry
        ``(h, c)`` leaves ``(h_bar, None)`` after the loop, a trip leaves
        ``(h_bar, c_bar)``; filled, every trip starts from one structure and jit
        types the loop (JAX instantiates the zero cotangents of a scan's carry
        with the carry's abstract value). Only a checked carry: its structure,
        shapes and dtypes are the same after every trip, so ``c`` at the loop's
        exit gives the zeros every trip's cotangent has. The other names a loop
        carries may change structure from trip to trip (a tape grad pushed on,
        a list that grows: b47f94c filled those too, and a third derivative
        through tapes came out wrong). Integer and bool leaves keep their holes."""
        out = []
        for n in sorted(_checked_carries(s)):
            if n in state and n in must and n in self.containers:
                fill = N.call(
                    "ad.fill_holes", [N.name(self.bar(n)), N.name(n)], {"inexact": N.const(True)}
                )
                out.append(self._at(N.assign(self.bar(n), fill), s))
                self.read_at_exit(s, n)
        return out

    def read_at_exit(self, s, n: str) -> None:
        """The reverse of loop ``s`` reads ``n``'s value at the loop's exit (the
        zeros of its cotangent, its holes filled): restored from the tape where
        ``s`` is in a loop (each trip's value: a slice of that trip's length) or
        ``n`` is bound more than once outside it; else ``n`` holds that value
        there already (bound once before the loop and in it, the loop in no other)."""
        inside = {id(t) for t in N.walk_stmts(s.body)}
        outside = [t for t in self.assign_sites.get(n, []) if id(t) not in inside]
        if getattr(s, "sj_in_loop", False) or len(outside) > 1:
            self._collect_reads([N.name(n)])

    def rev_loop(self, s, nz, defined) -> List[Any]:
        depth = getattr(self, "_rev_depth", 0)
        self._rev_depth = depth + 1
        try:
            return self._rev_loop(s, nz, defined, depth)
        finally:
            self._rev_depth = depth

    def _rev_loop(self, s, nz, defined, depth) -> List[Any]:
        # fixpoint of adjoints that may be nonzero at the start of a reverse iteration
        body_defs = set(N.assigned_names(s.body))
        if isinstance(s, gast.For):
            body_defs.add(s.target.id)
        inner_defined = defined | body_defs
        sites = self.row_reads(s)
        self.row_sites.update(sites)
        outer_defer = self.defer
        defer = self.defer = self.deferral_for(s, defined, body_defs)
        try:
            state = set(nz)
            saved = self.emit_code, set(self.reads), set(self.materialized)
            while True:
                trial = set(state)
                if defer is not None:
                    defer.sites = []
                self.rev_block(s.body, trial, inner_defined, True)
                new = state | trial
                if new == state:
                    break
                state = new
            self.emit_code, self.reads, self.materialized = saved
            out: List[Any] = []
            must = self.must_at.get(id(s), set(self.params))
            for n in sorted(state - nz):
                zero = self.zero_for(n, n in must)
                out.append(N.assign(self.bar(n), zero))
                if n in N.names_in(zero):
                    self.read_at_exit(s, n)
                self.materialized.add(n)
            out.extend(self.fill_carried_holes(s, state, must))
            body_nz = set(state)
            if defer is not None:
                defer.sites = []
            body = self.rev_block(s.body, body_nz, inner_defined, True)
        finally:
            self.defer = outer_defer
        for n in sorted(state - body_nz):
            body.append(N.assign(self.bar(n), self.zero_for(n, n in must)))
            self._collect_reads(body[-1:])  # zeros_like(n) needs n's value here
        if isinstance(s, gast.While):
            # "_" unless nested in another reversed while: names must differ, or the
            # generated code, read back by another transform, reassigns a loop variable
            header_target = N.name("_" if depth == 0 else f"_{depth}", store=True)
            # reversed: under vmap, examples with fewer trips are then active in the
            # last steps, which pop their own (first-pushed) tape entries
            it = N.call(N.name("reversed"), [N.call(N.name("range"), [N.name(s.sj_count)])])
            self.reads.add(s.sj_count)
        else:
            header_target = N.name(s.target.id, store=True)
            if _is_reversed(s.iter):
                it = N.clone(s.iter.args[0])  # the reverse of reversed(range) is range
            else:
                it = N.call(N.name("reversed"), [N.clone(s.iter)])
            self._collect_reads([s.iter])
        loop = gast.For(
            target=header_target, iter=it, body=body or [gast.Pass()], orelse=[], type_comment=None
        )
        self._at(loop, s)
        loop.sj_note = "reverse of the loop"
        loop.sj_fixed = self.fixed_range(s)  # (see lasttrip.py)
        out.append(loop)
        nz.clear()
        nz.update(state & (defined | set(self.params)))
        for sid, (xs, start, last_first) in sites.items():
            if sid not in self.rows_used:
                continue
            # the rows' cotangents, pushed by the reverse loop, stacked once
            rows = self.rows_names[sid]
            out.insert(
                out.index(loop), self._at(N.assign(rows, gast.List(elts=[], ctx=gast.Load())), s)
            )
            kws: Dict[str, Any] = {}
            if not (isinstance(start, gast.Constant) and start.value == 0):
                kws["start"] = N.clone(start)
            if last_first:
                kws["last_first"] = N.const(True)
            expr = N.call("ad.rows_adjoint", [N.name(rows), N.name(xs)], kws)
            self._collect_reads([N.name(xs), start])
            self.accumulate(out, xs, expr, nz, s)
        if defer is not None:
            self.deferred_sums(defer, loop, out, nz, must)
        if isinstance(s, gast.While):
            out.append(_Restore(s.sj_count, s, s.sj_in_loop, s.sj_in_loop))
        else:
            out.append(_Restore(s.target.id, s, s.sj_in_loop, s.target.id in defined))
            if s.target.id in state and s.target.id in defined:
                # `for x in range(3)` rebound a differentiable x: when the loop ran,
                # the x before it (restored above) did not reach the output this way
                t = s.target.id
                rng = s.iter.args[0] if _is_reversed(s.iter) else s.iter
                ran = gast.Compare(
                    left=N.call(N.name("len"), [N.clone(rng)]),
                    ops=[gast.Gt()],
                    comparators=[N.const(0)],
                )
                kill = N.assign(self.bar(t), self.zero_for(t, t in must))
                out.append(self._at(gast.If(test=ran, body=[kill], orelse=[]), s))
                self._collect_reads([rng, N.name(t)])
        return out


def _checked_carries(loop: Any) -> Set[str]:
    """The carries a lax loop's body checks (``ad.check_carry(what, init, c)`` at
    its top level, see frontend/normalize/lax_calls.py): names whose structure,
    shapes and dtypes every trip keeps (JAX's TypeError otherwise)."""
    out = set()
    for t in loop.body:
        op = getattr(t, "sj_op", None)
        if (
            isinstance(t, (gast.Expr, gast.Assign))  # (`unused = ad.check_carry(...)`: vmap's)
            and op is not None
            and op.kind == "prim"
            and op.prim.carry_check
        ):
            after = op.bound.get("after")
            if isinstance(after, gast.Name):
                out.add(after.id)
    return out
