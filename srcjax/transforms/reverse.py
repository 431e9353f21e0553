"""Reverse mode (vjp / grad) as an AST -> AST pass over normalized code.

The generated function runs the user's (normalized) code forward, then an
adjoint sweep in reverse order. Design (Tangent's model, tightened):

- **Activity.** Only values that depend on the differentiated inputs get
  adjoints; statements whose result's adjoint is statically zero emit nothing.
- **Adjoints** are named ``x_bar``. Each statement's adjoint code is its
  primitive's rules inlined as templates (:mod:`srcjax.transforms.rules`).
- **Control flow.** An ``if`` records its condition in a variable (it already
  is one after normalization) and the adjoint sweep branches on it. A ``while``
  counts its trips; its adjoint is ``for _ in range(n)``. A ``for i in
  range(...)`` is reversed as ``for i in reversed(range(...))``.
- **What is recorded.** The adjoint sweep needs a primal value exactly when an
  inlined rule reads it. Such a value is saved only where the forward code
  later overwrites it: outside loops in a plain variable (``x_prev = x``),
  inside loops on a tape (``tape.append(x)`` / ``x = tape.pop()``). Straight
  line code without overwrites records nothing.
- **Zeros.** Adjoints are symbolic zeros until their first contribution;
  control flow materializes them (``0.0`` for arrays, ``None`` -- a hole -- for
  containers, whose cotangents are sparse: reading ``params["w"]`` contributes
  ``{"w": w_bar}``) only where a branch or a loop needs a value;
  ``ad.cotangent_like`` fills holes with zeros once, at the end.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

import gast

from ..analysis.activity import analyze_activity
from ..errors import NoDerivativeRuleError
from ..frontend import nodes as N
from ..frontend.normalize import Normalized, Op
from ..primitives import registry
from .rules import (
    active_operands,
    inline_rule,
    no_rule_checks,
    primal_by_rule,
)

__all__ = ["reverse"]


class _Restore:
    """Placeholder in the adjoint sweep: restore `name` if its old value was saved."""

    def __init__(self, name: str, site: Any, in_loop: bool, defined_before: bool):
        self.name = name
        self.site = site  # the forward statement that overwrites `name`
        self.in_loop = in_loop
        self.defined_before = defined_before


class Reverse:
    def __init__(self, norm: Normalized, wrt: List[str], param_kinds: Dict[str, str]):
        self.norm = norm
        self.fdef = norm.node
        self.src = norm.src
        self.namer = norm.namer
        self.bindings = norm.bindings
        self.wrt = wrt
        self.params = [a.id for a in self.fdef.args.args]
        self.param_kinds = param_kinds
        self.active: Set[str] = set(wrt)
        self.containers: Set[str] = {p for p, k in param_kinds.items() if k == "tree"}
        # names that may hold a container though nothing proves it (a parameter of
        # a nested transform, whose argument types are unknown; the result of a
        # call we know nothing about, like ``dict(params)``): their cotangents
        # are summed with ``ad.tree_add``, which also adds arrays
        self.maybe: Set[str] = {p for p, k in param_kinds.items() if k == "any"}
        self.reads: Set[str] = set()  # primal names the adjoint sweep reads
        self.materialized: Set[str] = set()
        self.tape: Optional[str] = None
        self.shape_class: Dict[str, Any] = {}
        self.must_at: Dict[int, Set[str]] = {}
        self.emit_code = True
        self.bars: Dict[str, str] = {}
        # row reads of loops (see row_reads): statement id -> (array, start, order),
        # the name of the list of their cotangents, and those that pushed one
        self.row_sites: Dict[int, Tuple[str, Any, bool]] = {}
        self.rows_names: Dict[int, str] = {}
        self.rows_used: Set[int] = set()
        self.assign_sites: Dict[str, List[Any]] = {}

    def bar(self, name: str) -> str:
        """The adjoint's name: ``x_bar``, unless that name is taken by a primal
        (as in the generated code of a first derivative, differentiated again)."""
        b = self.bars.get(name)
        if b is None:
            b = self.namer.fresh(f"{name}_bar")
            self.bars[name] = b
        return b

    # ------------------------------------------------------------------ analysis
    def analyze(self, stmts: List[Any]) -> None:
        """The active names, and those holding (maybe holding) containers
        (:func:`srcjax.analysis.activity.analyze_activity`)."""
        act = analyze_activity(
            stmts,
            self.active,
            src=self.src,
            containers=self.containers,
            maybe=self.maybe,
            loop_passes=2,
        )
        self.active, self.containers, self.maybe = act.active, act.containers, act.maybe

    # ------------------------------------------------------------------ helpers
    def zero_for(self, name: str, defined: bool = False) -> Any:
        """A materialized zero cotangent: zeros like the primal where it is surely
        defined, else a scalar 0.0 (fixed up by ``ad.cotangent_like``)."""
        if name in self.containers:
            return N.const(None)  # a hole: container cotangents are sparse
        if defined:
            return N.call("ad.zeros_like", [N.name(name)])
        return N.const(0.0)

    def may_be_sparse(self, name: str) -> bool:
        """Whether ``name``'s cotangent may be a container or a hole (``None``)."""
        return name in self.containers or name in self.maybe

    def add_cotangents(self, name: str, a: Any, b: Any) -> Any:
        """``a + b`` for two contributions to ``name``'s cotangent: ``ad.tree_add``
        (``None`` is zero, containers add leafwise) where either may be sparse."""
        if self.may_be_sparse(name):
            return N.call("ad.tree_add", [a, b])
        return gast.BinOp(left=a, op=gast.Add(), right=b)

    def dense(self, g: Any, like: str) -> Any:
        """Cotangent ``g``, which may be a hole (``None``), where an array's is
        needed: a hole becomes zeros like the primal ``like``."""
        return N.call("ad.densify", [g, N.name(like)])

    @staticmethod
    def _tree_valued(op: Op) -> bool:
        """Whether the primitive call ``op`` may return a container (helpers of
        generated adjoint code pass their operands' kind through)."""
        prim = op.prim
        return prim.returns_tree or (prim.namespace == "ad" and not prim.array_result)

    def accumulate(self, out: List[Any], name: str, expr: Any, nz: Set[str], origin) -> None:
        bar = self.bar(name)
        if name in nz:
            value = self.add_cotangents(name, N.name(bar), expr)
        else:
            value = expr
            nz.add(name)
        out.append(self._at(N.assign(bar, value), origin))

    def _at(self, stmt: Any, origin: Any) -> Any:
        if origin is not None:
            if hasattr(origin, "sj_origin"):
                stmt.sj_origin = origin.sj_origin
            if hasattr(origin, "sj_file"):
                stmt.sj_file = origin.sj_file
            stmt.sj_note = getattr(origin, "sj_note", None)
        return stmt

    def _collect_reads(self, nodes_: List[Any]) -> None:
        self._bar_names = set(self.bars.values())
        for n in nodes_:
            for nm in N.names_in(n):
                if nm not in self._bar_names:
                    self.reads.add(nm)

    def _no_rule(self, s: Any, op: Op, what: str, hint: Optional[str] = None) -> Exception:
        loc = self.src.location(s) if hasattr(s, "lineno") else None
        return NoDerivativeRuleError(
            f"no derivative rule for `{what}` on a path from a differentiated input to the output",
            loc,
            hint
            or "use a srcjax.numpy function that has a rule, wrap the value in "
            "srcjax.lax.stop_gradient if it should not be differentiated, or register "
            "a rule with @srcjax.custom_vjp",
        )

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
        if op.prim.public in ("ad.scan_length", "ad.seq_len"):
            return True
        base, idx = op.bound.get("x"), op.bound.get("idx")
        if op.prim.public == "ad.getitem" and isinstance(base, gast.Name):
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
        it = s.iter if isinstance(s, gast.For) else None
        if (
            not isinstance(it, gast.Call)
            or not isinstance(it.func, gast.Name)
            or it.func.id != "range"
            or not 1 <= len(it.args) <= 2
            or it.keywords
            or not isinstance(s.target, gast.Name)
            or not all(self._fixed_count(a) for a in it.args)
        ):
            return {}
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
            if op.kind != "prim" or op.prim.public not in ("ad.tree_slice", "ad.getitem"):
                continue
            if op.prim.public == "ad.tree_slice":
                xs, i = op.bound.get("xs"), op.bound.get("i")
            else:
                xs, i = op.bound.get("x"), op.bound.get("idx")
                if isinstance(xs, gast.Name) and self.may_be_sparse(xs.id):
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
        elif kind == "unknown":
            if any(n in self.active for n in op.operand_names()):
                raise self._no_rule(s, op, op.what or N.to_source(s.value), op.hint)
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
                if prim.public == "ad.getitem" and arg.id in self.containers:
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
        b_then = self.rev_block(s.body, nz_then, defined, in_loop)
        b_else = self.rev_block(s.orelse, nz_else, defined, in_loop)
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
        state = set(nz)
        saved_emit, saved_reads, saved_mat = self.emit_code, set(self.reads), set(self.materialized)
        while True:
            trial = set(state)
            self.rev_block(s.body, trial, inner_defined, True)
            new = state | trial
            if new == state:
                break
            state = new
        self.reads, self.materialized = saved_reads, saved_mat
        self.emit_code = saved_emit
        out: List[Any] = []
        must = self.must_at.get(id(s), set(self.params))
        for n in sorted(state - nz):
            out.append(N.assign(self.bar(n), self.zero_for(n, n in must)))
            self.materialized.add(n)
        body_nz = set(state)
        body = self.rev_block(s.body, body_nz, inner_defined, True)
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

    # ------------------------------------------------------------------ forward sweep
    def prepare_forward(self, stmts: List[Any], in_loop: bool) -> None:
        """Add trip counters to while loops; mark loop nesting."""
        for s in stmts:
            if isinstance(s, gast.If):
                self.prepare_forward(s.body, in_loop)
                self.prepare_forward(s.orelse, in_loop)
            elif isinstance(s, (gast.While, gast.For)):
                s.sj_in_loop = in_loop
                if isinstance(s, gast.While):
                    s.sj_count = self.namer.fresh("n_iter")
                self.prepare_forward(s.body, True)

    def forward(self, stmts: List[Any], saves: Dict[int, str]) -> List[Any]:
        out: List[Any] = []
        for s in stmts:
            if isinstance(s, gast.Assign):
                key = id(s)
                if key in saves:
                    out.append(self._save_stmt(s.targets[0].id, saves[key], s))
                out.append(self._primal_by_fwd(s))
            elif isinstance(s, gast.If):
                s.body = self.forward(s.body, saves) or [gast.Pass()]
                s.orelse = self.forward(s.orelse, saves)
                out.append(s)
            elif isinstance(s, gast.While):
                key = id(s)
                if key in saves:
                    out.append(self._save_stmt(s.sj_count, saves[key], s))
                out.append(self._at(N.assign(s.sj_count, N.const(0)), s))
                s.body = self.forward(s.body, saves) + [
                    N.assign(
                        s.sj_count,
                        gast.BinOp(left=N.name(s.sj_count), op=gast.Add(), right=N.const(1)),
                    )
                ]
                out.append(s)
            elif isinstance(s, gast.For):
                key = id(s)
                if key in saves:
                    out.append(self._save_stmt(s.target.id, saves[key], s))
                s.body = self.forward(s.body, saves) or [gast.Pass()]
                out.append(s)
            else:
                out.append(s)
        return out

    def _primal_by_fwd(self, s: Any) -> Any:
        """``y = f(x)`` for a custom_vjp/custom_jvp ``f`` on a differentiated path:
        ``y`` by the user's rule (see :func:`rules.primal_by_rule`)."""
        op: Optional[Op] = getattr(s, "sj_op", None)
        if op is not None and s.targets[0].id in self.active:
            primal_by_rule(s, op, self.namer, self.bindings)
        return s

    def _save_stmt(self, name: str, how: str, origin) -> Any:
        if how == "tape":
            st = N.expr_stmt(N.call(N.attr(N.name(self.tape), "append"), [N.name(name)]))
        else:
            st = N.assign(how, N.name(name))
        return self._at(st, origin)

    def resolve_restores(
        self, stmts: List[Any], saves: Dict[int, str], preinit: Set[str]
    ) -> List[Any]:
        out: List[Any] = []
        for s in stmts:
            if isinstance(s, _Restore):
                if s.name in self.reads and (s.in_loop or s.defined_before):
                    if s.in_loop:
                        if self.tape is None:
                            self.tape = self.namer.fresh("tape")
                        saves[id(s.site)] = "tape"
                        if s.name not in self.params:
                            preinit.add(s.name)
                        pop = N.call(N.attr(N.name(self.tape), "pop"), [])
                        out.append(self._at(N.assign(s.name, pop), s.site))
                    else:
                        prev = self.namer.fresh(s.name + "_prev")
                        saves[id(s.site)] = prev
                        sure = self.must_at.get(id(s.site))
                        if sure is not None and s.name not in sure and s.name not in self.params:
                            # defined before on some paths only (in one branch of
                            # an earlier if): the save must not read an unbound name
                            preinit.add(s.name)
                        out.append(self._at(N.assign(s.name, N.name(prev)), s.site))
                continue
            if isinstance(s, gast.If):
                s.body = self.resolve_restores(s.body, saves, preinit) or [gast.Pass()]
                s.orelse = self.resolve_restores(s.orelse, saves, preinit)
                if not _has_code(s.body) and not s.orelse:
                    continue
                if (
                    self.tape is not None
                    and _pops(s.body, self.tape)
                    and _pops(s.orelse, self.tape)
                ):
                    # both branches pop the tape: under vmap both run, the forward
                    # one in order then/else, so the adjoint must pop else's first
                    s.test = gast.UnaryOp(op=gast.Not(), operand=s.test)
                    s.body, s.orelse = s.orelse or [gast.Pass()], s.body
            elif isinstance(s, gast.For):
                s.body = self.resolve_restores(s.body, saves, preinit) or [gast.Pass()]
            out.append(s)
        return out


def _one(classes: Any) -> Any:
    """The single class in ``classes`` (a set), or None."""
    if classes and len(classes) == 1:
        (c,) = tuple(classes)
        if isinstance(c, str):
            return c
    return None


def _pops(stmts: List[Any], tape: str) -> bool:
    """Whether ``stmts`` pop from the tape list ``tape``."""
    for n in gast.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if (
            isinstance(n, gast.Call)
            and isinstance(n.func, gast.Attribute)
            and n.func.attr == "pop"
            and isinstance(n.func.value, gast.Name)
            and n.func.value.id == tape
        ):
            return True
    return False


def _list_restore(st: Any, *reads: str) -> Any:
    """Mark ``st`` (``l = l[:-1]`` / ``l = l + [t]``) as a restore of list ``l``
    that is dead unless ``l`` is read later in the sweep."""
    st.sj_list_restore = reads
    return st


def _uses(node: Any) -> Set[str]:
    return {
        n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
    }


def _prune_block(stmts: List[Any], live: Set[str]) -> Set[str]:
    """Backward liveness over ``stmts`` (given the names ``live`` after them),
    removing dead list restores in place; returns the names live before."""
    keep: List[Any] = []
    for s in reversed(stmts):
        if isinstance(s, _Restore):
            keep.append(s)  # (a definition, when resolved: kills nothing here)
            continue
        restore = getattr(s, "sj_list_restore", None)
        if restore is not None:
            if restore[0] not in live:
                continue
            live |= set(restore)
            keep.append(s)
            continue
        if isinstance(s, gast.If):
            a = _prune_block(s.body, set(live))
            b = _prune_block(s.orelse, set(live))
            live = a | b | _uses(s.test)
        elif isinstance(s, (gast.For, gast.While)):
            head = _uses(s.iter if isinstance(s, gast.For) else s.test)
            entry = set(live) | head
            while True:  # the body runs again after itself: to a fixed point
                trial = _prune_copy(s.body)
                new = _prune_block(trial, set(entry)) | entry
                if new == entry:
                    break
                entry = new
            _prune_block(s.body, set(entry))
            live = entry
        elif isinstance(s, gast.Assign):
            for t in s.targets:
                if isinstance(t, gast.Name):
                    live.discard(t.id)
            live |= _uses(s.value)
        else:
            live |= _uses(s)
        keep.append(s)
    stmts[:] = keep[::-1]
    return live


def _prune_copy(stmts: List[Any]) -> List[Any]:
    """A shallow structural copy of a block, for trial liveness passes (which
    remove statements from the lists they walk)."""
    out = []
    for s in stmts:
        if isinstance(s, gast.If):
            c = gast.If(test=s.test, body=_prune_copy(s.body), orelse=_prune_copy(s.orelse))
            out.append(c)
        elif isinstance(s, gast.For):
            c = gast.For(
                target=s.target, iter=s.iter, body=_prune_copy(s.body), orelse=[], type_comment=None
            )
            out.append(c)
        elif isinstance(s, gast.While):
            out.append(gast.While(test=s.test, body=_prune_copy(s.body), orelse=[]))
        else:
            out.append(s)
    return out


def _is_reversed(it: Any) -> bool:
    return (
        isinstance(it, gast.Call)
        and isinstance(it.func, gast.Name)
        and it.func.id == "reversed"
        and len(it.args) == 1
    )


def _has_code(stmts: List[Any]) -> bool:
    return any(not isinstance(s, (_Restore, gast.Pass)) for s in stmts)


def reverse(
    norm: Normalized,
    wrt: List[str],
    param_kinds: Dict[str, str],
    *,
    has_aux: bool = False,
    with_value: bool = False,
    name: Optional[str] = None,
    cotangent: Optional[str] = None,
    holomorphic: bool = False,
) -> Any:
    """Build the gradient function of a normalized function.

    With ``cotangent`` (a parameter name), the output's cotangent is that extra
    parameter instead of the scalar seed 1 (``vjp``), and the function returns
    ``(value, grads)``.

    Args:
        norm: output of :func:`srcjax.frontend.normalize.normalize`.
        wrt: parameter names to differentiate with respect to, in argnums order.
        param_kinds: parameter name -> ``"leaf"`` (array or scalar) or ``"tree"``.
        has_aux: the function returns ``(value, aux)``.
        with_value: return ``(value, grads)`` as ``value_and_grad``.
        name: the generated function's name.

    Returns:
        A gast ``FunctionDef`` taking the original parameters and returning the
        gradient (a tuple of them when ``len(wrt) > 1``... as decided by the
        caller via ``wrt``), with the aux/value layout of JAX's ``grad`` /
        ``value_and_grad``.
    """
    fdef = norm.node
    body = list(fdef.body)
    assert body and isinstance(body[-1], gast.Return)
    ret = body.pop()
    rv = ret.value
    aux = None
    if has_aux:
        value_name = norm.namer.fresh("value")
        aux = norm.namer.fresh("aux")
        getitem = registry.by_public("ad.getitem")
        check = N.expr_stmt(N.call("ad.check_aux", [N.clone(rv)]))
        check.sj_op = Op("inactive", what="has_aux check")
        body.append(check)
        for nm, i in ((value_name, 0), (aux, 1)):
            st = N.assign(nm, gast.Subscript(value=N.clone(rv), slice=N.const(i), ctx=gast.Load()))
            st.sj_op = Op("prim", prim=getitem, bound={"x": N.clone(rv), "idx": N.const(i)})
            N.copy_origin(st, ret)
            st.sj_origin = getattr(ret, "lineno", None)
            body.append(st)
        out_name = value_name
    elif isinstance(rv, gast.Name):
        out_name = rv.id
    else:
        out_name = norm.namer.fresh("out")
        st = N.assign(out_name, rv)
        st.sj_op = Op("copy", elts=[rv])
        body.append(st)

    rv_ = Reverse(norm, wrt, param_kinds)
    rv_.prepare_forward(body, False)
    rv_.analyze(body)
    rv_.shape_classes(body)
    rv_.must_defined(body, set(rv_.params))
    rv_.index_assigns(body)

    nz: Set[str] = set()
    seed = []
    seed_name = "ad.seed_holomorphic" if holomorphic else "ad.seed"
    if cotangent is not None:
        # checked against the output as jax.vjp's pullback checks it
        check = N.call("ad.check_cotangent", [N.name(cotangent), N.name(out_name)])
        if out_name in rv_.active:
            seed = [N.assign(rv_.bar(out_name), check)]
            nz.add(out_name)
        else:
            seed = [N.expr_stmt(check)]
    elif out_name in rv_.active:
        seed = [N.assign(rv_.bar(out_name), N.call(seed_name, [N.name(out_name)]))]
        nz.add(out_name)
    else:
        seed = [N.expr_stmt(N.call(seed_name, [N.name(out_name)]))]
    bwd = rv_.rev_block(body, nz, set(rv_.params), False)
    # what the code after the sweep reads: the gradients' final forms and the
    # returned value (and aux), all computed from primal names
    tail = set(rv_.params) | {out_name} | ({aux} if aux else set())
    rv_.prune_list_restores(bwd, tail)
    saves: Dict[int, str] = {}
    preinit: Set[str] = set()
    bwd = rv_.resolve_restores(bwd, saves, preinit)
    fwd = rv_.forward(body, saves)
    if with_value and out_name in N.assigned_names(bwd):
        # the sweep restores the output's name to older values (`x = sin(x)`
        # twice): the value returned is kept aside first
        kept = norm.namer.fresh(out_name + "_out")
        fwd.append(N.copy_origin(N.assign(kept, N.name(out_name)), ret))
        out_name = kept

    # a parameter the body rebinds (`y *= x`, `y = y * x`) holds its entry value
    # after the sweep only where the sweep restores it (it reads it); else its
    # entry value is kept aside, so its gradient has its own shape and dtype, not
    # those of the rebinding (issue 21)
    rebound = set(N.assigned_names(body))
    entry: Dict[str, str] = {}
    for p in wrt:
        if p in rebound and p not in rv_.reads:
            entry[p] = norm.namer.fresh(p + "_in")
    results = []
    fix = []
    for p in wrt:
        primal = N.name(entry.get(p, p))
        if p in nz:
            # a real input's gradient is the real part of its cotangent (JAX's
            # convention when complex values are on the path; free otherwise)
            real = N.call("ad.project_real", [N.name(rv_.bar(p)), primal])
            if p in rv_.materialized or p in rv_.containers or p in rv_.maybe:
                # (a parameter of unknown kind, "any": a grad inlined in other
                # transformed code, may be a container: holes filled with zeros and
                # its container types kept, as for a "tree" argument)
                fix.append(
                    N.assign(rv_.bar(p), N.call("ad.cotangent_like", [real, N.clone(primal)]))
                )
                results.append(N.name(rv_.bar(p)))
            else:
                results.append(real)
        else:
            results.append(N.call("ad.zeros_like", [primal]))
    grads = (
        results[0]
        if len(results) == 1 and not getattr(norm, "tuple_wrt", False)
        else (gast.Tuple(elts=results, ctx=gast.Load()))
    )
    if with_value:
        value = N.name(out_name)
        if has_aux:
            value = gast.Tuple(elts=[N.name(out_name), N.name(aux)], ctx=gast.Load())
        retval = gast.Tuple(elts=[value, grads], ctx=gast.Load())
    elif has_aux:
        retval = gast.Tuple(elts=[grads, N.name(aux)], ctx=gast.Load())
    else:
        retval = grads

    head = [N.assign(kept, N.name(p)) for p, kept in entry.items()]
    for n in sorted(preinit):
        head.append(N.assign(n, N.const(None)))
    if rv_.tape is not None:
        head.append(N.assign(rv_.tape, gast.List(elts=[], ctx=gast.Load())))
    new_body = head + fwd
    for st in new_body:
        st.sj_section = getattr(st, "sj_section", None)
    new_body[0:0] = [_Marker("forward")] if new_body else []
    new_body += [_Marker("backward")] + seed + bwd + fix + [gast.Return(value=retval)]
    args = fdef.args
    if cotangent is not None:
        args = N.arguments(list(fdef.args.args) + [cotangent])
    new = N.function_def(name or f"{fdef.name}_grad", args, new_body)
    new.sj_origin = getattr(fdef, "sj_origin", None)
    return new


class _Marker(gast.Pass):
    """A section comment (``# forward`` / ``# backward``) for the emitter."""

    def __init__(self, text: str):
        super().__init__()
        self.sj_comment = text
