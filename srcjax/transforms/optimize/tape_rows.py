"""The values a reverse loop restores from grad's tape, read as rows of stacks
the program already made (:func:`restored_values_as_rows`).

grad's forward loop ``for k in range(n)`` pushes each value it overwrites on a
tape and the reverse loop ``for k in reversed(range(n))`` pops them back, so
that reverse trip ``k`` sees the values forward trip ``k`` left. Many of those
values are also rows of arrays the program holds: R3's scan appends the new
hidden state ``cell_h`` to ``ys`` on every trip (stacked after the loop as
``S = ad.tree_stack(ys)``), and reads its input ``x = ad.tree_slice(xs, k)``.
The reverse loop reads ``cell_h`` (for tanh's derivative) and ``cell_x`` before
any pop rebinds them: they are ``S[k]`` and ``xs[k]`` there.

The identity is proved from the two loops' code, not guessed from names:

1. The forward body's top-level statements are run symbolically: a name's
   value is the value some statement of the trip bound (a copy ``a = b`` shares
   ``b``'s), the value it had when the trip began (``start``), or the trip's
   row of an invariant array (``x = ad.tree_slice(xs, k)``). Any other statement,
   a nested one included, binds the names it assigns to values of its own. The
   values each name holds at the end of the trip, and the value each list
   ``L.append(v)`` receives (``L`` appended once a trip at the top level and
   used nowhere else in the loop), follow.
2. A list made empty before the loop and read after it only by ``S =
   ad.tree_stack(L)`` (``S`` bound once in the function) before the reverse
   loop holds, as row ``k`` of ``S``, the value appended on trip ``k``.
3. The tape's pushes and pops are paired as :mod:`.dead_pops` pairs them (push
   ``i`` of a forward trip is pop ``m - 1 - i`` of the reverse trip). A name
   ``v`` holds, at the start of reverse trip ``k``, what forward trip ``k``
   left in it when: nothing between the loops binds it (trip ``n - 1``), and
   the last statement of the reverse body that binds it is a top-level pop
   paired with a push of ``v`` made before the forward body binds ``v`` (it
   restores the value trip ``k`` began with, which trip ``k - 1`` left).
4. Where that end-of-trip value is row ``k`` of ``S`` (or of an invariant
   ``xs``) and the reverse body reads ``v`` before binding it, the reverse
   body begins with ``v = ad.tree_slice(S, k)``: a binding to the value ``v``
   already holds. The pops that restored ``v`` for the next trip are then
   unread, and :func:`~.dead_pops.drop_unread_tape_entries` drops them with
   their pushes; ``v``'s work on the row (``1 - v * v``) can be made for all
   rows at once (:mod:`.rowwise`).

5. Then (a second call, ``starts=True``, after the unread entries are gone) a
   pop whose paired push pushed a row (row ``k`` of ``S``), or the value a
   name ``x`` began the trip with where ``x``'s end-of-trip values are the
   rows of ``S`` (row ``k - 1``; on trip 0 the value ``x`` had before the
   loop, kept as ``x_init = x`` there), reads it: ``ad.tree_slice(S, k)`` or
   ``ad.row_before(S, k, x_init)``, and its push goes with it (pairs go
   together: the other pairs still match). Step 4 reads these values too. R3's
   tape is then empty: the hidden states are held once, by the stack.

Only arrays of rank >= 1 are rows here (the row of a stack of 0-d arrays is a
NumPy scalar, not the array the tape held)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import gast

from ...analysis.liveness import live_in
from ...analysis.tapes import pure_tape_lists
from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .avals import Aval
from .common import _is_assign, _new_assign
from .dead_pops import _site, _tape_loops
from .rowmaps import _reversed_trips, _trips
from .trips import _appended, _fresh_before


def restored_values_as_rows(fdef: Any, namer: Any, starts: bool = False) -> bool:
    """Begin the reverse loops with the row reads of the values they restore
    (see the module); returns whether anything changed (then drop the unread
    tape entries and re-infer the abstract values)."""
    if namer is None or {"range", "reversed"} & set(N.assigned_names(fdef.body)):
        return False
    counts = N.store_counts(fdef)  # name -> how many times the function binds it
    changed = False
    for tape in sorted(pure_tape_lists(fdef.body)):
        loops = _tape_loops(fdef.body, tape)
        if loops is None:
            continue
        stack: List[Any] = []
        for kind, loop in loops:
            if kind == "push":
                stack.append(loop)
            elif stack:
                changed |= _pair(fdef.body, stack.pop(), loop, tape, counts, namer, starts)
            else:
                break
    return changed


def drop_dead_loop_copies(body: List[Any]) -> None:
    """After :func:`restored_values_as_rows` (and the unread tape entries
    dropped): in the top-level loops, drop the copies ``v = w`` whose value nothing
    reads: not the rest of the trip, the next trip, nor the code after the loop
    (a forward trip's ``cell_x = x`` once its push went: the reverse loop reads
    the row of ``xs``; a copy the Numba planner would type from ``cell_x =
    None``)."""
    for i, loop in enumerate(body):
        if not isinstance(loop, gast.For):
            continue
        after = live_in(body[i + 1 :]) | live_in(loop.body)
        keep = []
        for j, s in enumerate(loop.body):
            if (
                _is_assign(s)
                and isinstance(s.value, gast.Name)
                and s.targets[0].id not in after | live_in(loop.body[j + 1 :])
            ):
                continue
            keep.append(s)
        loop.body = keep


def _pair(
    body: List[Any], fwd: Any, rev: Any, tape: str, counts: Dict[str, int], namer, starts: bool
) -> bool:
    n = _trips(fwd)
    if n is None or n < 1 or _reversed_trips(rev) != n or fwd.orelse or rev.orelse:
        return False
    k, kr = fwd.target.id, rev.target.id
    if k in N.assigned_names(fwd.body) or kr in N.assigned_names(rev.body):
        return False
    i, j = body.index(fwd), body.index(rev)
    between = body[i + 1 : j]
    fixed = set(N.assigned_names(fwd.body + between + rev.body)) | {k, kr}
    pushed, end, appended = _run_trip(fwd, tape, n, fixed)
    if pushed is None:
        return False
    stacks = _stacks(body[:i], between, fwd, appended, counts, n)
    pops = [s for s in rev.body if _site(s, tape) == "pop"]
    if len(pops) != len(pushed):
        return False
    inits: Dict[str, Any] = {}  # x -> `x_init = x`, put before the forward loop
    if starts:
        changed = _pops_as_rows(fwd, rev, tape, pushed, end, stacks, inits, namer)
    else:
        changed = _reads_at_trip_start(between, rev, tape, pushed, end, stacks, inits, namer)
    i = body.index(fwd)
    body[i:i] = list(inits.values())
    return changed


def _reads_at_trip_start(between, rev, tape, pushed, end, stacks, inits, namer) -> bool:
    """Step 4 of the module: the reverse body begins with the row reads of the
    values its names hold there."""
    pops = [s for s in rev.body if _site(s, tape) == "pop"]
    bound_between = set(N.assigned_names(between))
    reads: List[Any] = []
    for v in sorted(live_in(rev.body) - bound_between):
        form = _trip_value(end.get(v, ("start", v)), end, stacks)
        if form is None:
            continue
        last = [s for s in rev.body if v in N.assigned_names([s])]
        if not last or _site(last[-1], tape) != "pop":
            continue
        p = len(pops) - 1 - pops.index(last[-1])  # (the push it takes back)
        if pushed[p] != ("start", v):
            continue
        reads.append(_read_of(v, form, rev.target.id, rev.body[0], inits, namer))
    rev.body[:0] = reads
    return bool(reads)


def _pops_as_rows(fwd, rev, tape, pushed, end, stacks, inits, namer) -> bool:
    """Step 5 of the module: a pop of a value that is a row (or the row before)
    reads it; its push goes with it."""
    pushes = [s for s in fwd.body if _site(s, tape) == "push"]
    pops = [s for s in rev.body if _site(s, tape) == "pop"]
    drop = set()
    for j, pop in enumerate(pops):
        p = len(pops) - 1 - j  # (the push it takes back)
        form = _trip_value(pushed[p], end, stacks)
        if form is None:
            continue
        new = _read_of(pop.targets[0].id, form, rev.target.id, pop, inits, namer)
        pop.value, pop.sj_op, pop.sj_aval, pop.sj_sure = new.value, new.sj_op, new.sj_aval, True
        drop.add(id(pushes[p]))
    fwd.body[:] = [s for s in fwd.body if id(s) not in drop]
    return bool(drop)


def _trip_value(value: Any, end: Dict[str, Any], stacks: Dict[Any, tuple]) -> Optional[tuple]:
    """What a value of forward trip ``k`` is: ``("row", xs, aval)`` (row ``k``
    of ``xs``), ``("before", xs, aval, x)`` (the value ``x`` began the trip
    with, ``x``'s end-of-trip values being the rows of ``xs``: row ``k - 1``,
    and ``x``'s value before the loop on trip 0), or None."""
    row = _row_form(value, stacks)
    if row is not None:
        return ("row",) + tuple(row)
    if value[0] == "start":
        x = value[1]
        row = _row_form(end.get(x, ("start", x)), stacks)
        if row is not None:
            return ("before",) + tuple(row) + (x,)
    return None


def _run_trip(fwd: Any, tape: str, n: int, fixed: set) -> tuple:
    """``(pushed, end, appended)`` of one forward trip run symbolically (step 1
    of the module): the values pushed on ``tape`` in order, each name's value at
    the end of the trip, and each list's appended value; pushed is None where
    the body uses the tape other than by top-level pushes."""
    k = fwd.target.id
    env: Dict[str, Any] = {}
    pushed: List[Any] = []
    appended: Dict[str, Any] = {}
    uses: Dict[str, int] = {}
    for node in N.walk(fwd):
        if isinstance(node, gast.Name):
            uses[node.id] = uses.get(node.id, 0) + 1
    for s in fwd.body:
        site = _site(s, tape)
        if site == "push":
            v = s.value.args[0].id
            pushed.append(env.get(v, ("start", v)))
            continue
        if site is not None:
            return None, None, None
        got = _appended(s)
        if got is not None:
            lst, v = got
            ok = uses.get(lst) == 1 and lst not in appended
            appended[lst] = env.get(v, ("start", v)) if ok else None
            continue
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            t = s.targets[0]
            if isinstance(t, gast.Name) and isinstance(s.value, gast.Name):
                env[t.id] = env.get(s.value.id, ("start", s.value.id))
                continue
            xs = _row_of_invariant(s, k, n, fixed)
            if xs is not None:
                env[t.id] = ("slice", xs, s.sj_avals_in[xs])
                continue
        for t in N.assigned_names([s]):
            env[t] = ("bound", id(s), t)
    return pushed, env, appended


#: the row reads ``x = P(xs, k)``: primitive -> (array operand, index operand)
_ROW_READS = {"ad.tree_slice": ("xs", "i"), "ad.getitem": ("x", "idx")}


def _row_of_invariant(s: Any, k: str, n: int, fixed: set) -> Optional[str]:
    """``xs`` of ``x = ad.tree_slice(xs, k)`` (or ``xs[k]``), ``xs`` an array of
    rank >= 2 and at least ``n`` rows that neither loop nor the code between
    them binds (else None)."""
    if not _is_assign(s) or s.sj_op.kind != "prim" or s.sj_op.prim.public not in _ROW_READS:
        return None
    a, b = _ROW_READS[s.sj_op.prim.public]
    xs, i = s.sj_op.bound.get(a), s.sj_op.bound.get(b)
    if not (isinstance(xs, gast.Name) and isinstance(i, gast.Name) and i.id == k):
        return None
    aval = (getattr(s, "sj_avals_in", None) or {}).get(xs.id)
    if xs.id in fixed or not isinstance(aval, Aval) or aval.ptype is not None:
        return None
    return xs.id if len(aval.shape) >= 2 and aval.shape[0] >= n else None


def _stacks(
    before: List[Any],
    between: List[Any],
    fwd: Any,
    appended: Dict[str, Any],
    counts: Dict[str, int],
    n: int,
) -> Dict[Any, tuple]:
    """The value appended on each trip -> ``(S, S's aval)`` of the stack whose
    row it is (step 2 of the module)."""
    out: Dict[Any, tuple] = {}
    for lst, value in appended.items():
        if value is None or not _fresh_before(before, lst):
            continue
        sites = [s for s in between if N.mentions(s, lst)]
        if len(sites) != 1:
            continue
        s = sites[0]
        if not (
            _is_assign(s)
            and s.sj_op.kind == "prim"
            and s.sj_op.prim.public == "ad.tree_stack"
            and isinstance(s.value, gast.Call)
            and len(s.value.args) == 1
            and isinstance(s.value.args[0], gast.Name)
            and s.value.args[0].id == lst
            and counts.get(s.targets[0].id) == 1
        ):
            continue
        aval = getattr(s, "sj_aval", None)
        if not isinstance(aval, Aval) or aval.ptype is not None or not getattr(s, "sj_sure", 0):
            continue
        items = (getattr(s, "sj_avals_in", None) or {}).get(lst)
        if not (
            isinstance(items, list) and len(items) == n and all(_row_like(a, aval) for a in items)
        ):
            continue  # (the rows must be arrays the stack copies as they are)
        if len(aval.shape) >= 2 and aval.shape[0] == n and value not in out:
            out[value] = (s.targets[0].id, aval)
    return out


def _row_like(item: Any, stacked: Aval) -> bool:
    """Whether ``item`` is an array of the shape and dtype of a row of ``stacked``."""
    return (
        isinstance(item, Aval)
        and item.ptype is None
        and item.shape == stacked.shape[1:]
        and item.dtype == stacked.dtype
    )


def _row_form(value: Any, stacks: Dict[Any, tuple]) -> Optional[tuple]:
    """``(xs, xs's aval)`` of the array whose row ``k`` a trip's end value is,
    or None."""
    if value[0] == "slice":
        return value[1:]
    return stacks.get(value)


def _read_of(v: str, form: tuple, k: str, like: Any, inits: Dict[str, Any], namer) -> Any:
    """``v = ad.tree_slice(xs, k)`` or ``v = ad.row_before(xs, k, x_init)`` of a
    :func:`_trip_value`, annotated with its abstract value (the next inference
    reads it for the values a pop restores: see
    :func:`~.loop_facts._tape_restores`)."""
    xs, aval = form[1], form[2]
    if form[0] == "row":
        prim = registry.REGISTRY["ad.tree_slice"]
        bound = {"xs": N.name(xs), "i": N.name(k)}
    else:
        x = form[3]
        if x not in inits:
            inits[x] = _new_assign(namer.fresh(f"{x}_init"), N.name(x), Op("copy"), like)
        prim = registry.REGISTRY["ad.row_before"]
        bound = {"xs": N.name(xs), "i": N.name(k), "first": N.name(inits[x].targets[0].id)}
    value = N.call(prim.public, [N.clone(a) for a in bound.values()])
    s = _new_assign(v, value, Op("prim", prim=prim, bound=bound), like)
    s.sj_aval = Aval(aval.shape[1:], aval.dtype, None, aval.wt)
    s.sj_sure = True
    return s
