"""Reverse mode's adjoint sweep over straight-line statements: each
assignment's inlined vjp rules, list appends and pops, and row reads of a loop
(``xs[k]`` whose cotangents are stacked once after the reverse loop)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ..rules import (
    ITERATOR_HINT,
    active_operands,
    inline_rule,
    no_rule_checks,
)
from .prune import _list_restore, _prune_block, _Restore


class _AdjointSweep:
    """The adjoint statements of assignments (a mixin of :class:`~.generate.Reverse`)."""

    # ------------------------------------------------------------------ adjoint sweep
    def rev_block(self, stmts: List[Any], nz: Set[str], defined: Set[str], in_loop: bool):
        """Adjoint code for ``stmts`` (a list in execution order of the sweep)."""
        # names defined before each statement, in forward order
        before: List[Set[str]] = []
        cur = set(defined)
        for s in stmts:
            before.append(set(cur))
            cur |= set(N.assigned_names([s]))
            if isinstance(s, gast.Expr) and getattr(s, "sj_op", None) is not None:
                pass
        out: List[Any] = []
        for s, defs in zip(reversed(stmts), reversed(before)):
            out.extend(self.rev_stmt(s, nz, defs, in_loop))
        return out

    def rev_stmt(self, s: Any, nz: Set[str], defined: Set[str], in_loop: bool) -> List[Any]:
        op: Optional[Op] = getattr(s, "sj_op", None)
        out: List[Any] = []
        if isinstance(s, gast.Assign) and op is not None and op.kind == "append":
            return self._rev_append(s, op, nz)
        if isinstance(s, gast.Expr) and op is not None and op.kind == "pop":
            lst = op.target
            if lst in self.active:  # a discarded pop: its adjoint pushes a zero
                push = N.call(
                    "ad.push",
                    [N.name(self.bar(lst)) if lst in nz else N.const(None), N.const(None)],
                )
                out.append(self._at(N.assign(self.bar(lst), push), s))
                nz.add(lst)
            return out
        if isinstance(s, gast.Assign) and op is not None and op.kind == "pop":
            t = s.targets[0].id
            lst = op.target
            if lst in self.active:
                # the adjoint of `t = lst.pop()` pushes t's cotangent (None = zero), so
                # the adjoint of the matching `lst.append(v)` pops it
                g = N.name(self.bar(t)) if t in nz else N.const(None)
                push = N.call("ad.push", [N.name(self.bar(lst)) if lst in nz else N.const(None), g])
                out.append(self._at(N.assign(self.bar(lst), push), s))
                nz.add(lst)
                # the list as it was before the pop (a new one), for the adjoints
                # of earlier reads (`a = l[-1]; b = l.pop()`)
                back = gast.BinOp(
                    left=N.name(lst),
                    op=gast.Add(),
                    right=gast.List(elts=[N.name(t)], ctx=gast.Load()),
                )
                # (a copy: kept only where an earlier read needs it, see
                # prune_list_restores, which then records what it reads)
                out.append(_list_restore(self._at(N.assign(lst, back), s), lst, t))
            nz.discard(t)
            out.append(_Restore(t, s, in_loop, t in defined))
            return out
        if isinstance(s, gast.Assign) and id(s) in self.row_sites:
            return self._rev_row_read(s, nz, defined, in_loop)
        if isinstance(s, gast.Assign):
            t = s.targets[0].id
            if op is not None and t in self.active and t in nz:
                if t in op.operand_names():
                    # `t = f(t, ...)`: the rule reads the old t (operand) and the new
                    # one (ans): keep the new value aside and restore the old first
                    new_name = self.namer.fresh(t + "_new")
                    code = self.adjoint_of_assign(s, op, t, nz, ans=new_name)
                    self._collect_reads(code)
                    if any(new_name in N.names_in(c) for c in code):
                        out.append(self._at(N.assign(new_name, N.name(t)), s))
                        self.reads.add(t)
                    out.append(_Restore(t, s, in_loop, True))
                    out.extend(code)
                    return out
                code = self.adjoint_of_assign(s, op, t, nz)
                self._collect_reads(code)
                out.extend(code)
            else:
                nz.discard(t)
            out.append(_Restore(t, s, in_loop, t in defined))
            return out
        if isinstance(s, gast.Expr) and op is not None and op.kind == "append":
            return self._rev_append(s, op, nz)
        if isinstance(s, gast.Expr):
            return out
        if isinstance(s, gast.If):
            return self.rev_if(s, nz, defined, in_loop)
        if isinstance(s, (gast.While, gast.For)):
            return self.rev_loop(s, nz, defined)
        if isinstance(s, gast.Return):
            return out
        return out

    def index_assigns(self, stmts: List[Any]) -> None:
        """Record where each name is bound (assignments and ``for`` targets)."""
        for s in N.walk_stmts(stmts):
            if isinstance(s, gast.Assign):
                for t in s.targets:
                    if isinstance(t, gast.Name):
                        self.assign_sites.setdefault(t.id, []).append(s)
            elif isinstance(s, gast.For):
                for t in N.assigned_names([gast.Expr(value=s.target)]):
                    self.assign_sites.setdefault(t, []).append(s)

    def _fixed_count(self, node: Any) -> bool:
        """Whether a ``range`` bound is the same for every example of any later
        vmap: an int constant, or a name bound once to lax.scan's length, the
        length of a sequence or an entry of an array's shape."""
        if isinstance(node, gast.Constant):
            return type(node.value) is int
        if not isinstance(node, gast.Name) or node.id in self.params:
            return False
        sites = self.assign_sites.get(node.id, [])
        if len(sites) != 1 or not isinstance(sites[0], gast.Assign):
            return False
        op = getattr(sites[0], "sj_op", None)
        if op is None or op.kind != "prim":
            return False
        if op.prim.trip_count:
            return True
        base, idx = op.bound.get("x"), op.bound.get("idx")
        if op.prim.part == "item" and isinstance(base, gast.Name):
            shape = self.assign_sites.get(base.id, [])
            return (
                isinstance(idx, gast.Constant)
                and type(idx.value) is int
                and len(shape) == 1
                and isinstance(shape[0], gast.Assign)
                and isinstance(shape[0].value, gast.Attribute)
                and shape[0].value.attr == "shape"
            )
        return False

    def fixed_range(self, s: Any) -> bool:
        """Whether ``s`` is ``for ... in range(a[, b])`` over bounds no later vmap
        can make per-example (see :meth:`_fixed_count`)."""
        it = s.iter if isinstance(s, gast.For) else None
        if not isinstance(it, gast.Call) or not isinstance(it.func, gast.Name):
            return False
        if it.func.id != "range" or it.keywords or len(it.args) not in (1, 2):
            return False
        return all(self._fixed_count(a) for a in it.args)

    def row_reads(self, s: Any) -> Dict[int, Tuple[str, Any, bool]]:
        """The statements at the top level of ``for k in range(...)`` that read
        row ``k`` (or ``n - 1 - k``, lax.scan with ``reverse=True``) of an array
        the loop does not change: ``x1 = ad.tree_slice(xs, k)``, ``row = xs[k]``.
        Their adjoints push the row's cotangent on a list, stacked once after
        the reverse loop (``ad.rows_adjoint``), instead of adding an array of
        ``xs``'s size per trip. Only for bounds no later vmap can make
        per-example (a masked reverse loop would push rows of finished
        examples). Maps statement id -> (array, first row, whether the list
        holds the rows from the last back)."""
        if not self.fixed_range(s) or not isinstance(s.target, gast.Name):
            return {}
        it = s.iter
        k = s.target.id
        counts: Dict[str, int] = {}
        for nm in N.assigned_names(s.body):
            counts[nm] = counts.get(nm, 0) + 1
        if k in counts:
            return {}
        start = it.args[0] if len(it.args) == 2 else N.const(0)
        flipped = f"{N.to_source(it.args[0]).strip()} - 1 - {k}" if len(it.args) == 1 else None
        index: Dict[str, bool] = {k: True}  # name of the row index -> last_first
        found: Dict[int, Tuple[str, Any, bool]] = {}
        for st in s.body:
            op = getattr(st, "sj_op", None)
            if not isinstance(st, gast.Assign) or op is None:
                continue
            t = st.targets[0].id
            if counts.get(t) == 1 and op.kind == "copy":
                v = op.elts[0]
                if isinstance(v, gast.Name) and v.id in index:
                    index[t] = index[v.id]
                continue
            if counts.get(t) == 1 and op.kind == "inactive" and flipped is not None:
                if N.to_source(st.value).strip() == flipped:
                    index[t] = False
                continue
            if op.kind != "prim" or not op.prim.row_operands:
                continue
            xs_param, i_param = op.prim.row_operands  # (ad.tree_slice, ad.getitem)
            xs, i = op.bound.get(xs_param), op.bound.get(i_param)
            if op.prim.part == "item" and isinstance(xs, gast.Name) and self.may_be_sparse(xs.id):
                continue  # a list's items: their cotangents are sparse already
            if (
                isinstance(xs, gast.Name)
                and isinstance(i, gast.Name)
                and i.id in index
                and xs.id not in counts
                and xs.id != k
                and xs.id != t
                and xs.id in self.active
            ):
                found[id(st)] = (xs.id, N.clone(start), index[i.id])
        return found

    def _rev_row_read(self, s: Any, nz: Set[str], defined: Set[str], in_loop: bool) -> List[Any]:
        """Adjoint of a row read of a loop (see :meth:`row_reads`): push the row's
        cotangent (``None`` = zero) on the loop's list for that array."""
        t = s.targets[0].id
        xs = self.row_sites[id(s)][0]
        rows = self.rows_names.get(id(s))
        if rows is None:
            rows = self.rows_names[id(s)] = self.namer.fresh(f"{xs}_rows_bar")
        g = N.name(self.bar(t)) if t in nz else N.const(None)
        push = N.expr_stmt(N.call(N.attr(N.name(rows), "append"), [g]))
        self.rows_used.add(id(s))
        nz.discard(t)
        return [self._at(push, s), _Restore(t, s, in_loop, t in defined)]

    def _rev_append(self, s: Any, op: Op, nz: Set[str]) -> List[Any]:
        """Adjoint of ``lst.append(v)`` / ``lst = ad.push(lst, v)``: pop ``v``'s
        cotangent from the list's cotangent."""
        out: List[Any] = []
        lst = op.target
        if lst not in nz:
            return self._restore_before_append(s, lst, out)
        v = op.elts[0]
        lbar = N.name(self.bar(lst))
        if isinstance(v, gast.Name) and v.id in self.active:
            if v.id in self.containers:
                pop = N.call("ad.pop", [lbar])
            else:
                pop = N.call("ad.pop_like", [lbar, N.name(v.id)])
            if v.id in nz:
                # a tape may hold placeholders (None) whose cotangent is None
                pop = N.call("ad.tree_add", [N.name(self.bar(v.id)), pop])
                out.append(self._at(N.assign(self.bar(v.id), pop), s))
            else:
                self.accumulate(out, v.id, pop, nz, s)
            self._collect_reads(out[-1:])
        else:
            out.append(self._at(N.expr_stmt(N.call("ad.pop", [lbar])), s))
        return self._restore_before_append(s, lst, out)

    def _restore_before_append(self, s: Any, lst: str, out: List[Any]) -> List[Any]:
        """The list as it was before ``lst.append(v)``, for the adjoints of earlier
        reads (``hist.append(hist[-1] * 2)``: -1 is the old last item). A new
        list: the one the user's code holds is left alone."""
        if isinstance(s, gast.Expr) and lst in self.active:
            drop = gast.Subscript(
                value=N.name(lst),
                slice=gast.Slice(lower=None, upper=N.const(-1), step=None),
                ctx=gast.Load(),
            )
            # a copy of the list (O(len) per pop): kept only where an earlier read
            # needs the shorter list (see prune_list_restores)
            out.append(_list_restore(self._at(N.assign(lst, drop), s), lst))
        return out

    def prune_list_restores(self, stmts: List[Any], live_after: Set[str]) -> None:
        """Drop the list restores (``l = l[:-1]``, ``l = l + [t]``) of the adjoint
        sweep ``stmts`` whose list no later statement of the sweep reads (a
        backward liveness pass; loops to a fixed point), so that a loop that
        appends to a list (lax.scan's stacked outputs) is not reversed by copying
        the list once per trip. The restores kept are recorded as reads."""
        _prune_block(stmts, set(live_after))
        for st in N.walk_stmts(stmts):
            restore = getattr(st, "sj_list_restore", None)
            if restore is not None:
                self.reads.update(restore)

    def adjoint_of_assign(
        self, s: Any, op: Op, t: str, nz: Set[str], ans: Optional[str] = None
    ) -> List[Any]:
        out: List[Any] = []
        ans = ans or t
        g = N.name(self.bar(t))
        contribs: List[Tuple[str, Any]] = []  # (operand name, expression)
        kind = op.kind
        if kind == "copy":
            v = op.elts[0]
            if isinstance(v, gast.Name) and v.id in self.active:
                if self.may_be_sparse(t) and not self.may_be_sparse(v.id):
                    g = self.dense(g, v.id)  # t's cotangent may be a hole, v's may not
                contribs.append((v.id, g))
        elif kind == "pack":
            value = s.value
            if isinstance(value, gast.Dict):
                pairs = list(zip(value.keys, value.values))
            else:
                pairs = [(N.const(i), v) for i, v in enumerate(op.elts)]
            for k, v in pairs:
                if isinstance(v, gast.Name) and v.id in self.active:
                    args = [N.clone(g), N.clone(k)]
                    if v.id not in self.containers:
                        args.append(N.name(v.id))
                    contribs.append((v.id, N.call("ad.part", args)))
        elif kind == "unknown" or op.keeps:
            if any(n in self.active for n in op.operand_names()):
                hint = ITERATOR_HINT if op.keeps else op.hint
                raise self._no_rule(s, op, op.what or N.to_source(s.value), hint)
        elif kind == "prim":
            prim = op.prim
            if not prim.differentiable:
                nz.discard(t)
                return out
            if (
                self.may_be_sparse(t)
                and not self._tree_valued(op)
                and any(n in self.active for n in op.operand_names())
            ):
                # t also names containers elsewhere, so its cotangent may be a hole
                # here, where t is an array: the rules below need a dense one
                out.append(self._at(N.assign(self.bar(t), self.dense(g, ans)), s))
            for pname, p, arg, active_items in active_operands(prim, op.bound, self.active):
                rule = prim.vjps.get(pname)
                if rule is None:
                    if not prim.vjps:
                        raise self._no_rule(s, op, prim.public, prim.missing_rule_hint)
                    # not differentiable in this argument (shapes, indices): a float
                    # value there is an error at run time, not a silent zero
                    err = self._no_rule(s, op, f"{prim.public}` with respect to `{pname}")
                    for st in no_rule_checks(prim, pname, active_items, err):
                        out.append(self._at(st, s))
                    continue
                if prim.part == "item" and arg.id in self.containers:
                    expr = N.call(
                        "ad.tree_index_adjoint",
                        [N.clone(g), N.name(arg.id), N.index_value(op.bound["idx"])],
                    )
                    contribs.append((arg.id, expr))
                    continue
                for i, a in active_items:
                    extra = {"argnum": i} if p.kind == p.VAR_POSITIONAL else None
                    pre, expr = inline_rule(
                        rule,
                        N.clone(g),
                        N.name(ans),
                        prim,
                        op.bound,
                        self.namer,
                        self.bindings,
                        extra,
                    )
                    for st in pre:
                        out.append(self._at(st, s))
                    if prim.broadcasting and self._may_broadcast(op, a.id, t):
                        expr = N.call("ad.unbroadcast", [expr, N.name(a.id)])
                    contribs.append((a.id, expr))
        # contributions to other names first (they read t_bar), then t's own
        own = [e for n, e in contribs if n == t]
        grouped: Dict[str, Any] = {}
        for n, e in contribs:  # x * x: one statement for both contributions
            if n != t:
                prev = grouped.get(n)
                grouped[n] = e if prev is None else self.add_cotangents(n, prev, e)
        for n, e in grouped.items():
            if not self.defer_sum(out, n, e, s):  # (a lax loop's invariant operand)
                self.accumulate(out, n, e, nz, s)
        nz.discard(t)
        if own:
            total = own[0]
            for e in own[1:]:
                total = self.add_cotangents(t, total, e)
            out.append(self._at(N.assign(self.bar(t), total), s))
            nz.add(t)
        return out

    def _may_broadcast(self, op: Op, name: str, target: Optional[str] = None) -> bool:
        """False when the output surely has ``name``'s shape: every other operand is a
        Python number, or the output and ``name`` are in the same shape class."""
        if target is not None:
            c = self.shape_class.get(target)
            if c is not None and c == self.shape_class.get(name):
                return False
        for v in op.bound.values():
            items = v if isinstance(v, list) else [v]
            for it in items:
                if isinstance(it, gast.Name) and it.id != name:
                    return True
        return False
