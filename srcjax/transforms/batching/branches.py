"""Batching of ``if``: an unbatched condition stays an ``if``; a batched one
runs both branches and selects per example (or, where a branch has effects,
runs per example), with the checks JAX makes of ``lax.cond`` branches."""

from __future__ import annotations

import collections
import contextlib
from typing import Any, Dict, List, Set, Tuple

import gast

from ...analysis.liveness import reads_before_write
from ...analysis.static_names import is_none_init
from ...analysis.tapes import IN_PLACE, stack_lists
from ...errors import Location, TransformValueError
from ...frontend import nodes as N
from ...frontend.normalize import Namer
from .rename import _rename


class _Branches:
    """``if`` statements under vmap (a mixin of :class:`~.batcher.Batcher`)."""

    # ------------------------------------------------------------------ joins
    def _dry(self, fn, *args):
        """Run ``fn`` on copies for the analysis only: (batched set after, containers)."""
        saved = (self.bat, self.containers, self.namer, self.bindings, self.dry)
        self.bat = set(self.bat)
        self.containers = set(self.containers)
        self.namer = Namer(set(self.namer.taken))
        self.namer.comprehension_results = saved[2].comprehension_results
        self.bindings = dict(self.bindings)
        self.dry = True
        try:
            args = N.clone(args)
            fn(*args)
            res = (self.bat, self.containers)
        finally:
            self.bat, self.containers, self.namer, self.bindings, self.dry = saved
        return res

    def if_stmt(self, s: Any, defined: Set[str]) -> List[Any]:
        cond = s.test
        known, value = self._constant_test(cond)
        if known:
            # `a if False else b`, `if DEBUG:` on a constant: the dead branch never
            # runs, so it is not batched (its batching may be impossible: a slice
            # with a per-example bound)
            if value:
                s.body = self.block(s.body, set(defined)) or [gast.Pass()]
                s.orelse = []
            else:
                s.body = [gast.Pass()]
                s.orelse = self.block(s.orelse, set(defined))
            return [s]
        if not self.is_batched(cond):
            entry = set(self.bat)
            body = self.block(s.body, set(defined))
            bat_then = self.bat
            self.bat = set(entry)
            orelse = self.block(s.orelse, set(defined))
            bat_else = self.bat
            joined = bat_then | bat_else
            for names, blk, stmts in ((bat_then, body, s.body), (bat_else, orelse, s.orelse)):
                reach = defined | set(N.assigned_names(stmts))
                for n in sorted(joined - names):
                    if n in reach:
                        blk.append(self.broadcast_stmt(n, s))
            s.body = body or [gast.Pass()]
            s.orelse = orelse
            self.bat = joined
            return [s]
        check: List[Any] = []
        if isinstance(cond, gast.Name):
            # one bool per example, or the ambiguity error (ad.batched_pred)
            check = [self.at(N.assign(cond.id, self._pred_check(N.name(cond.id), s)), s)]
        return check + self.batched_if(s, cond, defined)

    @staticmethod
    def _pred_check(cond: Any, s: Any) -> Any:
        """``ad.batched_pred(cond, 1, "file:line:col")``: one bool per example, or
        the ambiguity error located at the user's ``if``/``while``."""
        loc = Location.of(s)
        where = f"{loc.filename}:{loc.lineno}:{loc.col + 1}" if loc is not None else ""
        return N.call("ad.batched_pred", [cond, N.const(1), N.const(where)])

    def _constant_test(self, test: Any) -> Tuple[bool, Any]:
        """(True, value) when an ``if``'s test is a constant: a literal, or a name
        every binding of which is the same literal (the normalizer's ``cond =
        False`` for a conditional expression)."""
        if isinstance(test, gast.Constant) and isinstance(test.value, (bool, int, str)):
            return True, test.value
        seen = set()
        while (
            isinstance(test, gast.Name)
            and test.id not in self.bat
            and test.id not in self.params
            and test.id not in seen
        ):
            if isinstance(self.constant_values.get(test.id), (bool, int, str)):
                return True, self.constant_values[test.id]
            seen.add(test.id)
            test = self._copy_of(test.id)  # `cond = use_slice`: follow the copy
        return False, None

    def _copy_of(self, name: str) -> Any:
        """The name that every binding of ``name`` copies (``cond = flag``), or None."""
        src = self._copies.get(name)
        return (
            gast.Name(id=src, ctx=gast.Load(), annotation=None, type_comment=None) if src else None
        )

    def batched_if(self, s: Any, cond: Any, defined: Set[str]) -> List[Any]:
        take = cond
        assigned = [n for n in N.assigned_names(s.body + s.orelse)]
        entry = set(self.bat)
        # fast paths: every example takes the same branch
        all_then = self.block(N.clone(s.body), set(defined))
        bat1 = self.bat
        self.bat = set(entry)
        none_then = self.block(N.clone(s.orelse), set(defined))
        bat2 = self.bat
        self.bat = set(entry)
        static = self.static & set(assigned)
        mixed, bat3 = self.mixed_if(s, take, defined, assigned, static)
        # a name either branch assigns differs between the examples, unless both
        # bind it to static metadata (an axis, a shape): that stays unbatched
        joined = bat1 | bat2 | bat3 | (set(assigned) - static)
        for names, blk, stmts in ((bat1, all_then, s.body), (bat2, none_then, s.orelse)):
            reach = defined | set(N.assigned_names(stmts))
            for n in sorted(joined - names):
                if n in reach:
                    blk.append(self.broadcast_stmt(n, s))
        self.bat = joined
        all_test = N.call("jnp.all", [N.clone(take)])
        none_test = gast.UnaryOp(op=gast.Not(), operand=N.call("jnp.any", [N.clone(take)]))
        inner = gast.If(test=none_test, body=none_then or [gast.Pass()], orelse=mixed)
        self.at(inner, s)
        if not s.orelse:
            # no else branch: when no example takes the branch, nothing happens
            inner = gast.If(test=N.call("jnp.any", [N.clone(take)]), body=mixed, orelse=[])
            self.at(inner, s)
        node = gast.If(test=all_test, body=all_then or [gast.Pass()], orelse=[inner])
        self.at(node, s)
        node.sj_note = "batched condition"
        return [node]

    def _read_outside(self, n: str, s: Any) -> bool:
        """Whether the function reads ``n`` outside statement ``s`` (a name bound
        in one branch only and never read after it needs no per-example value)."""
        if self._loads is None:
            self._loads = collections.Counter(
                x.id
                for x in gast.walk(self.fdef)
                if isinstance(x, gast.Name) and isinstance(x.ctx, gast.Load)
            )
        inside = sum(
            1
            for x in gast.walk(s)
            if isinstance(x, gast.Name) and isinstance(x.ctx, gast.Load) and x.id == n
        )
        return self._loads[n] > inside

    def _returned_names(self) -> Set[str]:
        """The names the function's ``return`` statements return (``return result``,
        ``return (a, b)``)."""
        out: Set[str] = set()
        for x in gast.walk(self.fdef):
            if isinstance(x, gast.Return) and x.value is not None:
                vals = x.value.elts if isinstance(x.value, gast.Tuple) else [x.value]
                out.update(v.id for v in vals if isinstance(v, gast.Name))
        return out

    def _check_in_place(self, s: Any) -> None:
        """A list changed in place (``append``/``pop``) in a branch of a batched ``if``
        or the body of a masked loop, that the branch did not create: both branches
        (every pass of the loop) run for every example on the same list object, so
        it would hold the items of the other branch (of the examples that finished):
        other examples' values (user E F15/F17). No per-example answer exists in
        one array (the lengths differ per example); JAX refuses too."""
        stmts = s.body + s.orelse
        local = set(N.assigned_names(stmts))
        for node in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
            if not isinstance(node, (gast.Expr, gast.Assign)):
                continue
            op = getattr(node, "sj_op", None)
            target, what = None, None
            if op is not None and op.kind in ("append", "pop") and op.target:
                target, what = op.target, op.kind
            elif (
                isinstance(node.value, gast.Call)
                and isinstance(node.value.func, gast.Attribute)
                and isinstance(node.value.func.value, gast.Name)
                and node.value.func.attr in IN_PLACE
                and node.value.func.value.id in self.containers
            ):
                target, what = node.value.func.value.id, node.value.func.attr
            if target is None:
                continue
            if target in local or target in self.pure_tapes:
                continue
            if isinstance(node, gast.Assign) and [
                t.id for t in node.targets if isinstance(t, gast.Name)
            ] == [target]:
                continue  # `lst = ad.push(lst, v)`: a stack of generated adjoint code
            loc = Location.of(node)
            if target in self.namer.comprehension_results:
                raise TransformValueError(
                    "under vmap, the filter (`if`) of this comprehension or generator "
                    "keeps different items per example: the number of items would differ "
                    "per example",
                    loc,
                    hint="keep every item and mask the ones filtered out, e.g. "
                    "sum(jnp.where(e > 0, e * e, 0.0) for e in v)",
                )
            raise TransformValueError(
                f"under vmap, the branches of this `if` (or the passes of this loop) differ "
                f"per example and change the list `{target}` in place ({what}): for a "
                "mixed batch both branches run (every pass runs for every example) on the "
                "same list, so each example would also get the other branch's items (the "
                "other examples' passes)",
                loc,
                hint="keep one length for every example: build the values with jnp.where "
                "(or a fixed number of appends outside the per-example `if`/loop), or "
                "rebind a new list in both branches",
            )

    @contextlib.contextmanager
    def _some_examples(self):
        """While batching code that only some examples run (a per-example branch,
        a masked loop): collectives there are refused (``mixed_depth``)."""
        self.mixed_depth += 1
        try:
            yield
        finally:
            self.mixed_depth -= 1

    def mixed_if(
        self, s, take, defined, assigned, static: Set[str] = frozenset()
    ) -> Tuple[List[Any], Set[str]]:
        with self._some_examples():
            return self._mixed_if(s, take, defined, assigned, static)

    def _mixed_if(
        self, s, take, defined, assigned, static: Set[str] = frozenset()
    ) -> Tuple[List[Any], Set[str]]:
        out: List[Any] = []
        entry = set(self.bat)
        results = {}
        shared: Set[str] = set()  # lists both branches mutate in place (tapes)
        # stacks of generated adjoint code (`lst = ad.push(lst, v)`, popped by
        # `ad.pop_like(lst, like)`) are pushed and popped on every pass, as tapes
        # are, so that a masked loop that pushes and the masked loop that pops stay
        # in step: never masked (ad.branch_input copies a list) nor selected
        stacks = stack_lists(s.body + s.orelse, self.tapes)
        self._check_in_place(s)
        for which, stmts, flag in (("then", s.body, True), ("else", s.orelse, False)):
            # both branches run one after the other on the same list objects: a list
            # the then branch made batched is batched when the else branch starts
            self.bat = set(entry) | shared
            stmts = N.clone(stmts)
            if not flag:
                # the then branch ran first on the same stacks: a stack it started
                # (`tape_bar = None`) holds its pushes, which the else branch must
                # not drop by starting it again
                started = set(N.assigned_names(s.body)) & stacks
                stmts = [
                    st for st in stmts if not (is_none_init(st) and st.targets[0].id in started)
                ]
            local_assigned = [n for n in N.assigned_names(stmts) if n not in stacks]
            reads = [n for n in reads_before_write(stmts) if n not in stacks]
            renames: Dict[str, str] = {}
            pre: List[Any] = []
            mask_args = [N.clone(take)] if flag else [N.clone(take), N.const(False)]
            for n in sorted(set(local_assigned) | set(reads)):
                needs_mask = (
                    n in reads and n in self.bat and n not in self.containers and n in defined
                )
                if n in local_assigned or needs_mask:
                    r = self.namer.fresh(f"{n}_{which}")
                    renames[n] = r
                    self.renamed.add(r)
                    if n in self.static:
                        self.static.add(r)
                    if needs_mask:
                        pre.append(
                            self.at(
                                N.assign(
                                    r,
                                    N.call(
                                        "ad.branch_input", [mask_args[0], N.name(n)] + mask_args[1:]
                                    ),
                                ),
                                s,
                            )
                        )
                        self.bat.add(r)
                    elif n in defined:
                        pre.append(self.at(N.assign(r, N.name(n)), s))
                        if n in self.bat:
                            self.bat.add(r)
                        if n in self.containers:
                            self.containers.add(r)
            _rename(stmts, renames)
            pre_defined = {renames[n] for n in renames if n in defined}
            self.example_masks.append((take, flag))
            try:
                body = self.block(stmts, set(defined) | pre_defined)
            finally:
                self.example_masks.pop()
            out.extend(pre)
            out.extend(body)
            results[which] = (renames, set(self.bat))
            shared = {n for n in self.bat if n in self.containers and n not in renames}
            shared |= {n for n in stacks if n in self.bat}
        # select
        r_then, bat_t = results["then"]
        r_else, bat_e = results["else"]
        self.bat = bat_t | bat_e
        take_id = take.id if isinstance(take, gast.Name) else None
        # the condition itself is selected last: the other selects read its old value
        order = sorted(set(assigned) - stacks, key=lambda n: (n == take_id, n))
        none_in_branches = {
            st.targets[0].id
            for st in gast.walk(gast.Module(body=list(s.body) + list(s.orelse), type_ignores=[]))
            if isinstance(st, gast.Assign)
            and isinstance(st.targets[0], gast.Name)
            and isinstance(st.value, gast.Constant)
            and st.value.value is None
        }
        for n in order:
            a = r_then.get(n, n if n in defined else None)
            b = r_else.get(n, n if n in defined else None)
            if a is None and b is None:
                continue
            if a is None or b is None:
                out.append(self.at(N.assign(n, N.name(a or b)), s))
                self._set(n, (a or b) in self.bat)
                continue
            lax_branches = getattr(s, "sj_lax_branches", None)
            if lax_branches is not None and lax_branches[1] == n:
                # lax.cond / lax.switch: JAX's output type check of the branches,
                # which both ran (for one branch taken by every example, only one
                # runs and nothing is checked)
                what, _, (name_a, name_b) = lax_branches
                check = N.call(
                    "ad.check_cond_types",
                    [
                        N.clone(take),
                        N.name(a),
                        N.name(b),
                        N.const(a in self.bat),
                        N.const(b in self.bat),
                        N.const(what),
                        N.const(name_a),
                        N.const(name_b),
                    ],
                )
                out.append(self.at(N.expr_stmt(check), s))
            if n in static and a not in self.bat and b not in self.bat:
                join = N.call("ad.static_join", [N.name(a), N.name(b)])
                out.append(self.at(N.assign(n, join), s))
                self._set(n, False)
                continue
            user = self.spec.user_names
            # (in a user's function, a name a branch sets to None itself is the
            # user's None: `y = x if c else None` lowers to such a temporary)
            set_none = user is None and n in none_in_branches
            # (the name a user function's `return`s assign is made by srcjax but
            # holds the user's value: bug 26, () and (2,) were broadcast together)
            returned = user is None and n in self._returned_names()
            if (
                (n in user if user is not None else True)
                and (n not in self.namer.made or set_none or returned)
                and n not in self.tapes
                and self._read_outside(n, s)
            ):
                # a variable of the user's: both branches must give it one structure
                check = N.call(
                    "ad.check_branch_values",
                    [
                        N.clone(take),
                        N.name(a),
                        N.name(b),
                        N.const(a in self.bat),
                        N.const(b in self.bat),
                        N.const("" if returned else n),
                        # None on a path that left the name unset (the batcher's and
                        # generated code's forward declarations): not checked; only
                        # the user's own `= None` is a value (a name read later only
                        # where it was set is valid Python)
                        N.const(n in self.spec.user_none or set_none),
                    ],
                )
                out.append(self.at(N.expr_stmt(check), s))
            av = (
                N.name(a)
                if a in self.bat
                else N.call("ad.batch_broadcast", [N.name(a), N.name(self.size_name)])
            )
            bv = (
                N.name(b)
                if b in self.bat
                else N.call("ad.batch_broadcast", [N.name(b), N.name(self.size_name)])
            )
            st = self.at(N.assign(n, N.call("ad.select", [N.clone(take), av, bv])), s)
            out.append(st)
            self.bat.add(n)
            if a in self.containers or b in self.containers:
                self.containers.add(n)
        return out, set(self.bat)
