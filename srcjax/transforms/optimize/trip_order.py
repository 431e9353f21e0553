"""A reverse loop's per-trip lists stacked in the forward trips' order, and the
stacks of a loop's rows read as the arrays they are rows of
(:func:`stacks_in_trip_order`).

Reverse mode sums a loop-invariant operand's cotangent over the trips in one
call after the reverse loop (:mod:`srcjax.transforms.reverse.deferred`): each
trip appends its operands to lists, and ``ad.bmatmul_right(ad.tree_stack(G),
ad.tree_stack(A), w, True, False)`` contracts the stacks over the trip axis.
The reverse loop appends in reverse trip order, so where a list receives a row
of an array the program holds (R3: the hidden state ``ys1_rows[k]``, the input
``xs[k]``, the output cotangent ``sub_bar[k]``), its stack is that array
reversed, a copy of it.

1. The result of such a call (the primitive named by a ``stack_sum`` fact, see
   :mod:`srcjax.primitives.registry`) is the sum over the leading axis of its
   stacked operands of per-trip results: permuting that axis in all of them
   alike changes only the order of the sum. Where every read of the stacks of a
   reverse loop's lists is a stacked operand of such a call, each call's
   stacked operands all come from those lists, and the call sums the trip axis
   (the batched products' flags, as reverse mode writes them, say which operand
   is unbatched: its cotangent is summed; ``ad.unbroadcast``'s result has fewer
   axes than its operand), every stack is made last first
   (``ad.tree_stack_rev``): the forward trips' order. (The sum's rounding
   order changes; its value does not.)
2. A stack in the forward trips' order (``ad.tree_stack`` of a list a ``for k
   in range(n)`` loop appends to, ``ad.tree_stack_rev`` of one a ``for k in
   reversed(range(n))`` loop appends to) of a list that receives, on every
   trip, ``r = ad.tree_slice(X, k)`` (``X`` an array of ``n`` rows the loop does
   not bind, ``r`` not rebound before the append) is ``X`` itself: the stack is
   ``X``, the list and its appends go (dead-code elimination).
3. Such a stack of a list that receives ``r = ad.row_before(X, k, x0)`` on every
   trip (the states the forward trips began with: ``x0``, then rows ``0 .. n - 2``
   of ``X``; ``x0`` bound once, outside the loop, a row of ``X``'s shape and
   dtype) is ``ad.rows_before(X, x0)``, one copy made after the loop; the list,
   its appends and the row reads nothing else reads go. (R3: ``wh``'s gradient.
   Where the reverse trip reads the row for nothing else, as ``ad.matrix_dot``,
   ``ad.matmul_left_t``'s direct form, does not, the trip reads no state.)
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

import gast

from ...analysis.liveness import live_in
from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .avals import Aval
from .common import _is_assign, _new_assign
from .rowmaps import _reversed_trips, _trips
from .tape_rows import _ROW_READS
from .trips import _appended, _fresh_before, _is_empty_list


def _summed_forms() -> Dict[str, tuple]:
    """target -> (positions of its stacked operands, operand count, flags) of the
    ``stack_sum`` facts."""
    out = {}
    for prim in set(registry.REGISTRY.values()):
        form = registry.stack_sum_form(prim)
        if form is None or form[4] != "stack":
            continue  # (a concatenating form leaves no trip-list stacks)
        stacked, target, flags, _, _ = form
        params = list(prim.signature.parameters)
        out[target] = (tuple(params.index(p) for p in stacked), len(params), tuple(flags))
    return out


def stacks_in_trip_order(fdef: Any) -> bool:
    """Steps 1 to 3 of the module on the top-level loops of ``fdef``; returns
    whether anything changed (run dead-code elimination and :func:`infer_avals`)."""
    if {"range", "reversed"} & set(N.assigned_names(fdef.body)):
        return False
    counts = N.store_counts(fdef)
    forms = _summed_forms()
    changed = False
    body = fdef.body
    for loop in [s for s in body if isinstance(s, gast.For)]:
        rev = _reversed_trips(loop)
        n = rev if rev is not None else _trips(loop)
        if n is None or n < 1 or loop.orelse:
            continue
        stacks = _loop_stacks(body, loop, counts)
        if rev is not None:
            flipped = _flippable(body, loop, stacks, forms)
            for lst in flipped:
                _flip(stacks[lst][1])
                changed = True
            ordered = {lst: stacks[lst] for lst in flipped}
        else:
            ordered = stacks
        for lst, (value, site) in ordered.items():
            rows = _row_source(loop, lst, value, n)
            if rows is None or any(counts.get(x, 0) > 1 for x in rows if x is not None):
                continue
            xs, first = rows
            if first is None:
                _as_copy(site, xs)
            else:
                _as_rows_before(site, xs, first)
            # (the list is read no more: it and its appends go)
            loop.body = [t for t in loop.body if (_appended(t) or ("",))[0] != lst]
            body[:] = [t for t in body if not _is_empty_list(t, lst)]
            changed = True
            _drop_overwritten_rows(loop)
            _drop_unread_rows(body, loop)
    return changed


def _drop_unread_rows(body: List[Any], loop: Any) -> None:
    """Drop the row reads (``ad.tree_slice``, ``ad.row_before``) of ``loop``'s
    body whose value nothing reads: not the rest of the trip, the next trip, nor
    the code after the loop (the appends that read them are gone; the name may
    be read elsewhere, where dead-code elimination's count sees it)."""
    after = live_in(body[body.index(loop) + 1 :]) | live_in(loop.body)
    keep = []
    for j, s in enumerate(loop.body):
        if (
            _is_assign(s)
            and s.sj_op.kind == "prim"
            and s.sj_op.prim.public in ("ad.tree_slice", "ad.row_before")
            and s.targets[0].id not in after | live_in(loop.body[j + 1 :])
        ):
            continue
        keep.append(s)
    loop.body = keep


def _drop_overwritten_rows(loop: Any) -> None:
    """Drop the row reads ``v = ad.tree_slice(X, k)`` of ``loop``'s body that
    the trip binds again, at the top level, before reading (the appends that
    read them are gone)."""
    keep = []
    for i, s in enumerate(loop.body):
        if _is_assign(s) and s.sj_op.kind == "prim" and s.sj_op.prim.public == "ad.tree_slice":
            v = s.targets[0].id
            for t in loop.body[i + 1 :]:
                if N.mentions(t, v):
                    bound = _is_assign(t) and t.targets[0].id == v
                    if bound and v not in N.names_in(t.value):
                        s = None  # (overwritten unread)
                    break
        if s is not None:
            keep.append(s)
    loop.body = keep


def _loop_stacks(
    body: List[Any], loop: Any, counts: Dict[str, int], public: str = "ad.tree_stack"
) -> Dict[str, tuple]:
    """list -> (appended name, the statement ``S = ad.tree_stack(L)``) of the
    lists made empty before ``loop``, appended once a trip at the top level of its
    body (no other use in it) and read after it only by that statement (``S``
    bound once; ``public``: the stacking helper)."""
    i = body.index(loop)
    before, after = body[:i], body[i + 1 :]
    uses: Dict[str, int] = {}
    for node in N.walk(loop):
        if isinstance(node, gast.Name):
            uses[node.id] = uses.get(node.id, 0) + 1
    out = {}
    for s in loop.body:
        got = _appended(s)
        if got is None or uses.get(got[0]) != 1:
            continue
        lst, v = got
        if not _fresh_before(before, lst):
            continue
        sites = [t for t in _simple(after) if N.mentions(t, lst)]
        if len(sites) != 1 or not _is_stack_of(sites[0], lst, public):
            continue
        if counts.get(sites[0].targets[0].id) != 1:
            continue
        out[lst] = (v, sites[0])
    return out


def _flippable(body: List[Any], loop: Any, stacks: Dict[str, tuple], forms) -> List[str]:
    """The lists of ``stacks`` whose stacks may all be made last first (step 1)."""
    after = body[body.index(loop) + 1 :]
    names = {site.targets[0].id: lst for lst, (_, site) in stacks.items()}
    ok: Set[str] = set(names)
    for _ in range(len(names) + 1):
        bad = set()
        for stmt in _simple(after):
            for node in N.walk(stmt):
                if isinstance(node, gast.Name) and node.id in ok:
                    if not _summed_read(stmt, node, ok, forms):
                        bad.add(node.id)
        if not bad:
            break
        ok -= bad
    return [names[s] for s in sorted(ok)]


def _summed_read(stmt: Any, node: Any, ok: Set[str], forms) -> bool:
    """Whether ``node`` (a read of a stack in ``ok``) is the target of its stack
    statement, or a stacked operand of a summing call whose stacked operands
    all are stacks in ``ok``."""
    if isinstance(node.ctx, gast.Store):
        return _is_assign(stmt) and stmt.targets[0] is node
    if not _is_assign(stmt) or not isinstance(stmt.value, gast.Call):
        return False
    call = stmt.value
    form = forms.get(N.to_source(call.func).strip())
    if form is None or call.keywords or stmt.sj_op.kind != "prim":
        return False
    positions, count, flags = form
    if len(call.args) != count + len(flags):
        return False
    for a, f in zip(call.args[count:], flags):
        if not (isinstance(a, gast.Constant) and a.value is f):
            return False
    out = getattr(stmt, "sj_aval", None)
    ins = getattr(stmt, "sj_avals_in", None) or {}
    for j, a in enumerate(call.args[:count]):
        stacked = isinstance(a, gast.Name) and a.id in ok
        if stacked != (j in positions):
            return False
        if stacked and not flags:
            # (the batched helpers' flags say which operand is unbatched: its
            # cotangent, the result, is summed over the trips; ad.unbroadcast
            # sums the trip axis where its result has fewer axes)
            aval = ins.get(a.id)
            if not (isinstance(out, Aval) and isinstance(aval, Aval)):
                return False
            if len(out.shape) >= len(aval.shape):
                return False
    return any(a is node for a in call.args[:count])


def _flip(site: Any) -> None:
    prim = registry.REGISTRY["ad.tree_stack_rev"]
    arg = site.value.args[0]
    site.value = N.call("ad.tree_stack_rev", [N.clone(arg)])
    site.sj_op = Op("prim", prim=prim, bound={"items": N.clone(arg)})


def _row_source(loop: Any, lst: str, value: str, n: int) -> Optional[tuple]:
    """``(X, None)`` where the loop appends ``value``, row ``k`` of ``X``, to
    ``lst`` on every trip (step 2), ``(X, x0)`` where it appends ``value =
    ad.row_before(X, k, x0)`` (step 3), else None."""
    k = loop.target.id
    variant = set(N.assigned_names(loop.body)) | {k}
    if k in N.assigned_names(loop.body):
        return None
    rows: Dict[str, tuple] = {}
    for s in loop.body:
        got = _appended(s)
        if got is not None and got[0] == lst:
            return rows.get(value)
        found = _row_of(s, k, n, variant)
        for t in N.assigned_names([s]):
            rows.pop(t, None)
        if found is not None:
            rows[s.targets[0].id] = found
    return None


def _row_of(s: Any, k: str, n: int, variant: Set[str]) -> Optional[tuple]:
    if not _is_assign(s) or s.sj_op.kind != "prim":
        return None
    public = s.sj_op.prim.public
    if public not in _ROW_READS and public != "ad.row_before":
        return None
    a, b = _ROW_READS.get(public, ("xs", "i"))
    xs, i = s.sj_op.bound.get(a), s.sj_op.bound.get(b)
    if not (isinstance(xs, gast.Name) and isinstance(i, gast.Name) and i.id == k):
        return None
    ins = getattr(s, "sj_avals_in", None) or {}
    aval = ins.get(xs.id)
    if xs.id in variant or not isinstance(aval, Aval) or aval.ptype is not None:
        return None
    if len(aval.shape) < 2 or aval.shape[0] != n:
        return None
    if public != "ad.row_before":
        return xs.id, None
    # (the row before row 0 is ``first``: one of X's rows, bound outside the loop)
    first = s.sj_op.bound.get("first")
    f = ins.get(first.id) if isinstance(first, gast.Name) else None
    if first is None or not isinstance(f, Aval) or f.ptype is not None or first.id in variant:
        return None
    return (xs.id, first.id) if (f.shape, f.dtype) == (aval.shape[1:], aval.dtype) else None


def _as_copy(site: Any, rows: str) -> None:
    """``S = ad.tree_stack(L)`` (or ``_rev``) becomes ``S = rows``."""
    new = _new_assign(site.targets[0].id, N.name(rows), Op("copy"), site)
    site.value = new.value
    site.sj_op = new.sj_op


def _as_rows_before(site: Any, rows: str, first: str) -> None:
    """``S = ad.tree_stack(L)`` (or ``_rev``) becomes ``S = ad.rows_before(rows,
    first)``: the rows ``ad.row_before(rows, k, first)`` read on trips 0 .. n - 1."""
    prim = registry.REGISTRY["ad.rows_before"]
    bound = {"xs": N.name(rows), "first": N.name(first)}
    value = N.call(prim.public, [N.clone(a) for a in bound.values()])
    new = _new_assign(site.targets[0].id, value, Op("prim", prim=prim, bound=bound), site)
    site.value = new.value
    site.sj_op = new.sj_op


def _is_stack_of(s: Any, lst: str, public: str) -> bool:
    return (
        _is_assign(s)
        and s.sj_op.kind == "prim"
        and s.sj_op.prim.public == public
        and isinstance(s.value, gast.Call)
        and len(s.value.args) == 1
        and not s.value.keywords
        and isinstance(s.value.args[0], gast.Name)
        and s.value.args[0].id == lst
    )


def _simple(stmts: List[Any]) -> List[Any]:
    """The statements of ``stmts`` and of their nested blocks, each compound
    statement as its header alone (an ``if``'s test, a loop's target and iter)."""
    out = []
    for s in N.walk_stmts(stmts):
        if isinstance(s, gast.If) or isinstance(s, gast.While):
            out.append(gast.Expr(value=s.test))
        elif isinstance(s, gast.For):
            out.append(gast.Expr(value=gast.Tuple(elts=[s.target, s.iter], ctx=gast.Load())))
        else:
            out.append(s)
    return out
