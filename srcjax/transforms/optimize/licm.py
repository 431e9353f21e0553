"""Loop-invariant code motion (:func:`hoist_invariants`): pure array
computations inside a ``for`` loop that read nothing the loop changes run once,
before it.

The case that matters is forward-over-reverse (``jvp(grad(f), (w,), (d,))``
inside a conjugate-gradient loop, R6): each iteration recomputed the primal and
its gradient at the same ``w``; only the tangent part depends on ``d``. JAX
traces such a Python loop unrolled and XLA merges the repeats; srcjax keeps the
loop, so it moves them out instead.

Operands whose abstract values are unknown move too when they are arrays for
sure: globals the function never changes in place (a closure's ``X @ w``, read
live at each call, so its shape is not known now) and what moved array
primitives make of them, in loops without effects. With ``ad.seq_len`` known
from shapes, this takes the primal out of jacfwd's loop over the basis (a
``hessian`` inside a jitted function, fresh-user round 5 item 07e)."""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import gast
import numpy as np

from ...frontend import nodes as N
from .avals import Aval
from .common import PURE_KINDS, _assigned, _is_assign, _is_pure, _Static, _Subst, _subst_stmt


def hoist_invariants(fdef: Any, resolve: Optional[Callable[[str], Any]], namer: Any) -> bool:
    """Move loop-invariant statements out of ``for`` loops whose trip count is
    known to be positive (``range`` of constants or of integer globals); returns
    whether any moved. Run :func:`infer_avals` first: only statements whose
    result and operands are known arrays or scalars move (never containers, which
    the loop may change in place)."""
    local = set(N.assigned_names(fdef.body)) | {a.id for a in fdef.args.args}
    ctx = _Ctx(resolve, local, namer, _read_counts(fdef.body))
    changed = _changed_in_place(fdef)
    ctx.fixed_globals = _fixed_globals(fdef, local, changed)
    ctx.changed = changed
    fdef.body = ctx.block(fdef.body)
    return ctx.moved > 0


def _changed_in_place(fdef: Any) -> set:
    """The names some method is called on or an item or attribute of which is
    stored: the values they hold may change in place."""
    changed: set = set()
    for n in N.walk(fdef):
        if isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute):
            if isinstance(n.func.value, gast.Name):
                changed.add(n.func.value.id)
        elif isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, gast.Store):
            if isinstance(n.value, gast.Name):
                changed.add(n.value.id)
    return changed


def _fixed_globals(fdef: Any, local: set, changed: set) -> set:
    """The global names the function reads and never changes in place (not in
    ``changed``, :func:`_changed_in_place`): within one call they hold the same
    value, whatever it is."""
    read = {n.id for n in N.walk(fdef) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
    return read - local - changed


class _Ctx:
    def __init__(self, resolve, local: set, namer, reads: Dict[str, int]) -> None:
        self.resolve = resolve
        self.local = local
        self.namer = namer
        self.reads = reads  # reads of each name in the whole function
        self.moved = 0
        self.fixed_globals: set = set()
        self.changed: set = set()  # (see _changed_in_place)

    def block(self, stmts: List[Any]) -> List[Any]:
        out: List[Any] = []
        for s in stmts:
            if isinstance(s, gast.If):
                s.body = self.block(s.body)
                s.orelse = self.block(s.orelse)
            elif isinstance(s, gast.While):
                s.body = self.block(s.body)
            elif isinstance(s, gast.For):
                s.body = self.block(s.body)
                trips = self.runs(s.iter)
                if trips:
                    out.extend(self.hoist(s, literal=trips == "literal"))
            out.append(s)
        return out

    def runs(self, it: Any) -> Any:
        """Whether ``it`` is ``range(...)`` of known ints with at least one item:
        ``"literal"`` for constants, ``"global"`` when a module global (read live
        by generated code: it may be 0 in a later call) gives a count. A
        ``reversed(range(...))`` (a reverse sweep) runs as often."""
        if (
            isinstance(it, gast.Call)
            and isinstance(it.func, gast.Name)
            and it.func.id == "reversed"
            and it.func.id not in self.local
            and len(it.args) == 1
            and not it.keywords
        ):
            it = it.args[0]
        if not (
            isinstance(it, gast.Call)
            and isinstance(it.func, gast.Name)
            and it.func.id == "range"
            and it.func.id not in self.local
            and not it.keywords
            and 1 <= len(it.args) <= 3
        ):
            return False
        vals = []
        kind = "literal"
        for a in it.args:
            if isinstance(a, gast.Constant) and type(a.value) is int:
                vals.append(a.value)
                continue
            kind = "global"
            if not isinstance(a, gast.Name) or a.id in self.local or self.resolve is None:
                return False
            try:
                v = self.resolve(a.id)
            except Exception:  # noqa: BLE001 - unknown: leave the loop alone
                return False
            if type(v) is not int:
                return False
            vals.append(v)
        try:
            return kind if len(range(*vals)) > 0 else False
        except (TypeError, ValueError):
            return False

    def hoist(self, loop: Any, literal: bool) -> List[Any]:
        """The statements taken out of ``loop``'s body (in their order). Unless
        the trip count is a literal, only values read nowhere after the loop
        move (a later call may run it no times: then only work is wasted)."""
        if self.namer is not None:
            _rename_redefinitions(loop, self.namer)
        body = loop.body
        inside = _read_counts(body)
        counts: Dict[str, int] = {}
        for s in N.walk_stmts(body):
            for k in _assigned(s):
                counts[k] = counts.get(k, 0) + 1
        targets = set(N.target_names(loop))
        variant = set(counts) | targets
        read_before: set = set()
        moved: List[Any] = []
        kept: List[Any] = []
        # arrays whose abstract values are unknown: globals the function never
        # changes (X in a closure's X @ w) and what moved statements make of them,
        # while the loop has no effect that could rebind a global
        arrays = set() if _has_effects(body) else set(self.fixed_globals)
        for s in body:
            t = s.targets[0].id if _is_assign(s) else None
            if (
                t is not None
                and counts.get(t) == 1
                and t not in targets
                and t not in read_before
                and (literal or self.reads.get(t, 0) <= inside.get(t, 0))
                and (_movable(s) or _movable_array(s, arrays) or _constant_display(s, self.changed))
                and not (set(N.names_in(s.value)) & variant)
                and not (set(_operands(s)) & variant)
            ):
                if not _movable(s):
                    arrays.add(t)
                moved.append(s)
                variant.discard(t)
                self.moved += 1
                continue
            kept.append(s)
            read_before |= set(_reads(s))
        loop.body = kept or [gast.Pass()]
        return moved


def _read_counts(stmts: List[Any]) -> Dict[str, int]:
    reads: Dict[str, int] = {}
    for n in N.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            reads[n.id] = reads.get(n.id, 0) + 1
    return reads


def _movable(s: Any) -> bool:
    """A pure computation of a known array or scalar from known arrays or
    scalars (containers may be changed in place by the loop; effects stay)."""
    op = s.sj_op
    if op.kind not in ("prim", "copy") or not _is_pure(s):
        return False
    if op.kind == "copy" and not (N.is_atom(s.value) or isinstance(s.value, gast.Tuple)):
        return False
    if not isinstance(getattr(s, "sj_aval", None), (Aval, _Static)):
        return False
    ins = getattr(s, "sj_avals_in", None) or {}
    return all(isinstance(ins.get(n), (Aval, _Static)) for n in _operands(s))


def _constant_display(s: Any, changed: set) -> bool:
    """A list or tuple display of number constants (``jnp.array([1.0, 4.0])``'s
    operand) whose name nothing changes in place: the same value every trip."""
    if s.sj_op.kind != "pack" or not isinstance(s.value, (gast.List, gast.Tuple)):
        return False
    if s.targets[0].id in changed:
        return False
    return all(
        isinstance(e, gast.Constant) and type(e.value) in (int, float, complex, bool)
        for e in s.value.elts
    )


def _movable_array(s: Any, arrays: set) -> bool:
    """A pure primitive whose result is an array (an array kind, or a helper with
    an array result) or a number from shapes, computed from operands that are known arrays or scalars,
    or in ``arrays`` (see :meth:`_Ctx.hoist`)."""
    op = s.sj_op
    if op.kind != "prim" or not _is_pure(s):
        return False
    if not (op.prim.kind in PURE_KINDS or op.prim.array_result or op.prim.from_shapes):
        return False  # (an array, or a number from shapes: ad.mean_scale's 1 / n)
    ins = getattr(s, "sj_avals_in", None) or {}
    return all(n in arrays or isinstance(ins.get(n), (Aval, _Static)) for n in _operands(s))


def _has_effects(stmts: List[Any]) -> bool:
    """Whether a statement in ``stmts`` (at any depth) has an effect."""
    for s in N.walk_stmts(stmts):
        op = getattr(s, "sj_op", None)
        if op is None:
            continue
        if op.kind == "prim" and op.prim.effectful:
            return True
        if op.kind not in ("prim", "copy", "pack", "inactive", "append", "pop"):
            return True
    return False


def _operands(s: Any) -> List[str]:
    """The names a pure statement computes from (not the namespaces of its call)."""
    op = s.sj_op
    if op.kind == "copy":
        return N.names_in(s.value)
    out: List[str] = []
    for v in op.bound.values():
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, gast.AST):
                out.extend(n for n in N.names_in(x) if n not in out)
    return out


def _reads(s: Any) -> List[str]:
    return N.names_in(s)


def _rename_redefinitions(loop: Any, namer: Any) -> None:
    """Give each but the last top-level assignment of a name assigned several
    times in the body a fresh name (reads up to the next assignment renamed),
    so a value computed once per iteration and then updated (``z_bar = z_bar +
    t``) can move. Names read before their first assignment in the body (carried
    from one iteration to the next) or assigned inside nested blocks keep theirs,
    and so does a tape restore ``x = tape.pop()``: jit knows what it gives from
    the other assignments of ``x`` (loop_facts._tape_restores), not of a new name."""
    body = loop.body
    top: Dict[str, List[int]] = {}
    nested: set = set()
    for i, s in enumerate(body):
        if _is_assign(s):
            top.setdefault(s.targets[0].id, []).append(i)
        else:
            nested |= _assigned(s)
    targets = set(N.target_names(loop))
    for name, where in top.items():
        if len(where) < 2 or name in nested or name in targets:
            continue
        if any(name in _reads(body[j]) for j in range(where[0])):
            continue  # carried from the previous iteration
        if name in N.names_in(body[where[0]].value):
            continue
        for k, i in enumerate(where[:-1]):
            if getattr(body[i], "sj_op", None) is not None and body[i].sj_op.kind == "pop":
                continue  # (a tape restore keeps its name: loop_facts._tape_restores)
            fresh = namer.fresh(name)
            body[i].targets[0] = N.name(fresh, store=True)
            table = {name: N.name(fresh)}
            for j in range(i + 1, where[k + 1] + 1):
                u = body[j]
                if isinstance(u, (gast.If, gast.For, gast.While)):
                    _Subst(table).visit(u)
                else:
                    _subst_stmt(u, table)
                _refresh_avals_in(u, name, fresh)


def _refresh_avals_in(s: Any, old: str, new: str) -> None:
    ins = getattr(s, "sj_avals_in", None)
    if ins and old in ins:
        ins[new] = ins.pop(old) if new != old else ins[old]


_SCALARS = (bool, int, float, complex)


def read_globals_once(fdef: Any, resolve: Optional[Callable[[str], Any]], namer: Any) -> bool:
    """A module-level (or closed-over) number read inside a loop is read once per
    call, into a local at the top, not in every trip: generated code reads the
    user's globals live (each read goes through ``emit.GeneratedGlobals``), and
    nothing a loop of generated code runs rebinds a module global. Returns
    whether any read moved."""
    if resolve is None or namer is None:
        return False
    local = set(N.assigned_names(fdef.body)) | {a.id for a in fdef.args.args}
    inside: Dict[str, int] = {}

    def scan(stmts: List[Any], in_loop: bool) -> None:
        for s in stmts:
            if isinstance(s, (gast.For, gast.While)):
                scan(s.body, True)
                scan(getattr(s, "orelse", []), in_loop)
                head = s.iter if isinstance(s, gast.For) else s.test
                if isinstance(s, gast.While):
                    _count(head, inside)
                continue
            if isinstance(s, gast.If):
                if in_loop:
                    _count(s.test, inside)
                scan(s.body, in_loop)
                scan(s.orelse, in_loop)
                continue
            if in_loop:
                _count(s, inside)

    scan(fdef.body, False)
    table: Dict[str, Any] = {}
    for name in inside:
        if name in local:
            continue
        try:
            v = resolve(name)
        except Exception:  # noqa: BLE001 - not a global: left alone
            continue
        if type(v) in _SCALARS or isinstance(v, np.generic):
            table[name] = N.name(namer.fresh(name.lower() + "_once"))
    if not table:
        return False

    def subst(stmts: List[Any], in_loop: bool) -> None:
        for s in stmts:
            if isinstance(s, gast.For):
                subst(s.body, True)
                continue
            if isinstance(s, gast.While):
                s.test = _Subst(table).visit(s.test)
                subst(s.body, True)
                continue
            if isinstance(s, gast.If):
                if in_loop:
                    s.test = _Subst(table).visit(s.test)
                subst(s.body, in_loop)
                subst(s.orelse, in_loop)
                continue
            if in_loop:
                _subst_stmt(s, table)

    subst(fdef.body, False)
    from ...frontend.normalize import Op

    head = []
    for name, node in table.items():
        st = N.assign(node.id, N.name(name))
        st.sj_op = Op("copy", elts=[N.name(name)])
        st.sj_note = "a module-level number, read once per call"
        if fdef.body:
            N.copy_origin(st, fdef.body[0])
        head.append(st)
    fdef.body[:0] = head
    return True


def _count(node: Any, into: Dict[str, int]) -> None:
    for n in N.walk(node):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            into[n.id] = into.get(n.id, 0) + 1
