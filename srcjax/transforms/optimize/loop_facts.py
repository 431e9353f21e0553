"""What jit's abstract interpretation knows about loops and their lists
(used by :mod:`.interp`): whether a ``for`` loop surely runs (:func:`_runs`),
its trip count when known now (:func:`trip_count`), the lists a loop of known
trip count grows by one item a trip (:func:`grown_lists`: a scan's stacked
outputs), and the abstract values of reverse mode's tape restores
(:func:`_tape_restores`)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import gast

from ...frontend import nodes as N
from .avals import Aval, _merge
from .common import _Static

_range_args = N.range_args

#: the longest list whose growth in a loop jit follows (see grown_lists)
_MAX_GROWN = 4096


def grown_lists(
    s: Any, before: Dict[str, Any], last: Dict[str, Any], out, locals_: set, sole: Any
) -> Any:
    """After a ``for`` loop of a trip count known now whose facts converged:
    each list the body appends one value to on every trip (``ys.append(y)``
    at the top of the body, the list read nowhere else in it) holds the
    items it held before and one more per trip, each of the appended value's
    abstract value (a scan's stacked outputs: ``ad.tree_stack(ys)`` then has
    a shape). Only for the lists :func:`sole_growths` gives for this loop
    (``sole``: loop id -> names): no other change of the list anywhere, so its
    display is what it holds when the loop starts and this is what it holds
    after it. ``out`` updated; unchanged when nothing applies."""
    allowed = sole.get(id(s), ())
    if not allowed:
        return out
    n = trip_count(s.iter, before, locals_)
    if n is None or n > _MAX_GROWN:
        return out
    found: Dict[str, Any] = {}
    loads: Dict[str, int] = {}
    for node in N.walk(gast.Module(body=s.body, type_ignores=[])):
        if isinstance(node, gast.Name):
            loads[node.id] = loads.get(node.id, 0) + 1
    for i, st in enumerate(s.body):
        if not isinstance(st, gast.Expr):
            continue
        name = _tape_list(st.value, "append", 1)
        item = st.value.args[0] if name is not None else None
        if name is None or not isinstance(item, gast.Name):
            continue
        if name not in allowed:
            continue
        if name in found or loads.get(name) != 1 or name in N.assigned_names(s.body):
            found[name] = None  # (appended twice, or read in the loop)
            continue
        if item.id in N.assigned_names(s.body[i + 1 :]):
            found[name] = None  # (the value at the append is not the last one)
            continue
        held = before.get(name)
        a = last.get(item.id)
        ok = type(held) is list and all(isinstance(x, Aval) for x in held)
        found[name] = held + [a] * n if ok and isinstance(a, Aval) else None
    if not any(v is not None for v in found.values()):
        return out
    out = dict(out)
    for name, v in found.items():
        if v is not None:
            out[name] = v
    return out


#: helpers that read a list operand and keep no reference to it (an item, a
#: count, a new list or array): a list read only by them is changed by nothing else
_KEEP_NOTHING = frozenset(
    {
        "ad.getitem",
        "ad.seq_len",
        "ad.pysum",
        "ad.tree_stack",
        "ad.btree_stack",
        "ad.tree_unstack",
        "ad.btree_unstack",
        "ad.tree_index_adjoint",
        "ad.tree_leaves",
        "ad.leaves_upto",
    }
)


def sole_growths(fdef: Any) -> Dict[int, frozenset]:
    """The lists whose length :func:`grown_lists` may follow through a loop, by
    the loop's id: a list ``L`` bound once in ``fdef``, to a display in the
    same statement list as the ``for`` loop and before it (then maybe vmap's
    ``L = ad.batch_broadcast(L, batch)``, a new list as long), appended to by a
    statement at the top of the loop's body (no ``break``, ``continue`` or
    ``return`` in it), and read nowhere else but by helpers that keep no
    reference to it (``ad.tree_stack(L)``, ``L[::-1]``, ``len(L)``). Then
    nothing else changes the list: each time the loop starts, ``L`` holds its
    display's items (the display ran just before, in the same statement list),
    and after the loop what the loop left, for every read of it. Anything else
    (a list bound outside an enclosing loop and grown in each of its trips, an
    append before or after the loop, a copy, a call) is refused."""
    nodes, parents = N.walk_with_parents(fdef)
    stores: Dict[str, int] = {}
    loads: Dict[str, List[Any]] = {}
    for node in nodes:
        if isinstance(node, gast.Name):
            if isinstance(node.ctx, gast.Load):
                loads.setdefault(node.id, []).append(node)
            else:
                stores[node.id] = stores.get(node.id, 0) + 1
    found: Dict[int, set] = {}
    appends: Dict[str, List[Any]] = {}
    kept: set = set()  # reads of L in L = ad.batch_broadcast(L, batch)
    for node in nodes:
        for field in ("body", "orelse", "finalbody"):
            stmts = getattr(node, field, None)
            if isinstance(stmts, list):
                _sole_in(stmts, stores, found, appends, kept)
    out: Dict[int, frozenset] = {}
    for loop_id, names in found.items():
        ok = {L for L in names if _only_read(L, loads[L], appends[L], parents, kept)}
        if ok:
            out[loop_id] = frozenset(ok)
    return out


def _sole_in(stmts: List[Any], stores, found: Dict[int, set], appends, kept: set) -> None:
    """Candidates of :func:`sole_growths` in one statement list: a display
    bound to a name, then maybe vmap's ``L = ad.batch_broadcast(L, batch)`` (a
    new list of the same length; its read of ``L`` goes into ``kept``), then
    the loop."""
    displays: Dict[str, int] = {}  # a name -> its bindings in this list so far
    for st in stmts:
        t = _bound_name(st)
        if t is not None:
            if isinstance(st.value, gast.List):
                displays[t] = 1
            elif t in displays and _rebroadcast(st.value, t):
                displays[t] += 1
                kept.add(id(st.value.args[0]))
            else:
                displays.pop(t, None)
            continue
        if not (isinstance(st, gast.For) and displays) or st.orelse:
            continue
        body = gast.Module(body=st.body, type_ignores=[])
        if any(isinstance(n, (gast.Break, gast.Continue, gast.Return)) for n in N.walk(body)):
            continue
        for b in st.body:
            name = _tape_list(b.value, "append", 1) if isinstance(b, gast.Expr) else None
            if name is not None and displays.get(name) == stores.get(name):
                found.setdefault(id(st), set()).add(name)
                appends.setdefault(name, []).append(b.value.func.value)


def _bound_name(st: Any) -> Optional[str]:
    if (
        isinstance(st, gast.Assign)
        and len(st.targets) == 1
        and isinstance(st.targets[0], gast.Name)
    ):
        return st.targets[0].id
    return None


def _rebroadcast(value: Any, name: str) -> bool:
    """Whether ``value`` is ``ad.batch_broadcast(name, ...)``."""
    return (
        isinstance(value, gast.Call)
        and N.to_source(value.func).strip() == "ad.batch_broadcast"
        and bool(value.args)
        and isinstance(value.args[0], gast.Name)
        and value.args[0].id == name
    )


def _only_read(name: str, loads: List[Any], appends: List[Any], parents, kept: set) -> bool:
    """Whether every read of ``name`` is its one append or an operand of a helper
    that keeps no reference to it (see :func:`sole_growths`)."""
    if len(appends) != 1:
        return False
    from ...primitives.registry import REGISTRY

    for n in loads:
        if n is appends[0] or id(n) in kept:
            continue
        call = parents.get(id(n))
        if isinstance(call, gast.Subscript) and call.value is n:
            if not isinstance(parents.get(id(call)), gast.Assign):
                return False
            continue  # (``t = L[::-1]``, ``t = L[0]``: a new list, an item)
        if not (isinstance(call, gast.Call) and n in call.args):
            return False
        f = call.func
        if isinstance(f, gast.Name):
            if f.id != "len":
                return False
            continue
        if not (isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name)):
            return False
        prim = REGISTRY.get(f"{f.value.id}.{f.attr}")
        if prim is None or prim.public not in _KEEP_NOTHING:
            return False
    return True


def trip_count(it: Any, env: Dict[str, Any], locals_: set) -> Optional[int]:
    """The number of trips of ``for _ in it`` when known now: ``range`` (or
    ``reversed(range)``) of int constants or names of known int value."""
    args = _range_args(it)
    if args is None or "range" in env or "range" in locals_:
        return None
    vals = []
    for a in args:
        if isinstance(a, gast.Constant) and type(a.value) is int:
            vals.append(a.value)
        elif (
            isinstance(a, gast.Name)
            and isinstance(env.get(a.id), _Static)
            and type(env[a.id].value) is int
        ):
            vals.append(env[a.id].value)
        else:
            return None
    try:
        return len(range(*vals))
    except ValueError:
        return None


def _runs(loop: Any, aval_of: Any = None) -> bool:
    """Whether a ``for`` loop surely runs at least one trip: ``range`` (or
    ``reversed(range)``) of int constants with a positive length (a name
    whose abstract value ``aval_of`` gives as a static int counts as one:
    ``ad.scan_length(None, 300)``)."""
    if not isinstance(loop, gast.For):
        return False
    args = _range_args(loop.iter)
    if args is None:
        return False
    bounds = []
    for a in args:
        if isinstance(a, gast.Name) and aval_of is not None:
            v = aval_of(a.id)
            a = gast.Constant(value=v.value, kind=None) if isinstance(v, _Static) else a
        if not (isinstance(a, gast.Constant) and type(a.value) is int):
            return False
        bounds.append(a.value)
    try:
        return len(range(*bounds)) > 0
    except ValueError:
        return False


def _tape_list(node: Any, attr: str, nargs: int) -> Optional[str]:
    """The list name of ``L.<attr>(...)`` with ``nargs`` arguments, or None."""
    if (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and node.func.attr == attr
        and isinstance(node.func.value, gast.Name)
        and len(node.args) == nargs
        and not node.keywords
    ):
        return node.func.value.id
    return None


def _tape_restores(fdef: Any, params: Dict[str, Any], nodes: Optional[List[Any]] = None) -> tuple:
    """The abstract values of reverse mode's restores ``x = tape.pop()``.

    A tape is a local list (``tape = []``) used only by ``tape.append(v)``
    statements and ``x = tape.pop()`` assignments: grad saves a name's value
    before a loop trip overwrites it and restores it on the way back, so what
    ``x = tape.pop()`` gives is a value ``x`` held before: its parameter value or
    one of its assignments (copy propagation may have renamed the pushed operand;
    the value is the same). Its abstract value is the merge of those, read from
    the annotations of the previous inference (none yet: unknown). The forward
    declaration ``x = None`` is left out of the merge: its value is pushed by the
    first trip and restored by the last reverse trip, after which grad's code
    never reads it (it is there so the first push finds the name bound). Without
    this every value computed from a restore was unknown, so jit could not fold
    the reverse loops' ``ad.unbroadcast``/``ad.lift`` helpers (R3's scan RNN,
    L3's RK4 gradient). Returns ``({x: aval}, the tapes' names)``."""
    if nodes is None:  # (every node of fdef in walk order; one walk, in each inference)
        nodes = list(N.walk(fdef))
    lists: Dict[str, bool] = {}
    for s in nodes:
        if (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.List)
            and not s.value.elts
        ):
            lists[s.targets[0].id] = lists.get(s.targets[0].id, True)
    if not lists:
        return {}, set()
    # every other use of a list name disqualifies it
    allowed = set()
    popped: Dict[str, List[str]] = {}
    for s in nodes:
        if isinstance(s, gast.Expr):
            name = _tape_list(s.value, "append", 1)
            if name in lists:
                allowed.add(id(s.value.func.value))
        elif isinstance(s, gast.Assign) and len(s.targets) == 1:
            name = _tape_list(s.value, "pop", 0)
            if name in lists and isinstance(s.targets[0], gast.Name):
                allowed.add(id(s.value.func.value))
                popped.setdefault(name, []).append(s.targets[0].id)
            elif isinstance(s.value, gast.List) and not s.value.elts:
                allowed.add(id(s.targets[0]))
    for n in nodes:
        if isinstance(n, gast.Name) and n.id in lists and id(n) not in allowed:
            lists[n.id] = False
    tapes = {name for name, ok in lists.items() if ok}
    targets = {t for name, ts in popped.items() if name in tapes for t in ts}
    if not targets:
        return {}, set()
    seen: Dict[str, List[Any]] = {t: [] for t in targets}
    for t in targets & set(params):
        seen[t].append(params[t])
    for s in nodes:
        if not (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and s.targets[0].id in seen
        ):
            continue
        t = s.targets[0].id
        if _tape_list(s.value, "pop", 0) in tapes:
            continue  # (a restore: what it gives is among the others)
        if isinstance(s.value, gast.Constant) and s.value.value is None:
            continue  # (the forward declaration)
        if not hasattr(s, "sj_aval"):
            seen[t].append(None)  # (not inferred yet)
            continue
        seen[t].append(s.sj_aval if getattr(s, "sj_sure", False) else None)
    out: Dict[str, Any] = {}
    for t, avals in seen.items():
        if not avals or any(a is None for a in avals):
            continue
        merged = avals[0]
        for a in avals[1:]:
            merged = _merge(merged, a)
        if merged is not None:
            out[t] = merged
    return out, tapes
