"""Dead values released: after their loop (:func:`release_after_loops`), and
large arrays after their last read in straight-line code
(:func:`release_after_last_read`)."""

from __future__ import annotations

from typing import Any, Dict, List, Set

import gast

from ...frontend import nodes as N
from .avals import Aval
from .common import _assigned, _is_assign


def release_after_loops(fdef: Any) -> Any:
    """After each loop of the function's top level, ``name = None`` for every
    name the loop assigns that no later statement reads.

    A value bound inside a loop stays alive until the function returns unless
    something rebinds its name: the last trip's temporaries of a reversed loop
    (a layer's cotangents in R1, 128 x 256 float32 each) were still held while
    the update after it allocated the new parameters, a third of the step's
    peak memory above JAX's. Reads are counted anywhere after the loop (a
    later loop that reads the name before rebinding it keeps it), so only
    names that are surely dead are released; nothing else changes."""
    body = fdef.body
    out: List[Any] = []
    for k, s in enumerate(body):
        out.append(s)
        if not isinstance(s, (gast.For, gast.While)):
            continue
        later: Set[str] = set()
        for t in body[k + 1 :]:
            later.update(N.names_in(t))
        small = _scalars(s)
        for name in N.assigned_names([s]):
            if name not in later and name not in small and not _released_next(body, k, name):
                out.append(_release(name, s, "released: not read after the loop"))
    fdef.body = out
    return fdef


def _scalars(loop: Any) -> Set[str]:
    """Names in ``loop`` that hold scalars only (not worth a line): a ``range``
    loop's counter, and names every assignment of which has a 0-d abstract value."""
    out: Set[str] = set()
    if isinstance(loop, gast.For) and isinstance(loop.target, gast.Name):
        it = loop.iter
        if (
            isinstance(it, gast.Call)
            and isinstance(it.func, gast.Name)
            and it.func.id == "reversed"
        ):
            it = it.args[0] if it.args else it
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range":
            out.add(loop.target.id)
    shapes: dict = {}
    for stmt in N.walk_stmts(loop.body):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
            t = stmt.targets[0]
            if isinstance(t, gast.Name):
                aval = getattr(stmt, "sj_aval", None)
                scalar = getattr(aval, "shape", None) == ()
                shapes[t.id] = shapes.get(t.id, True) and scalar
    return out | {n for n, scalar in shapes.items() if scalar}


def _released_next(body: List[Any], k: int, name: str) -> bool:
    """Whether the statements right after the loop already set ``name`` to None."""
    for t in body[k + 1 :]:
        if not (
            isinstance(t, gast.Assign)
            and len(t.targets) == 1
            and isinstance(t.targets[0], gast.Name)
            and isinstance(t.value, gast.Constant)
            and t.value.value is None
        ):
            return False
        if t.targets[0].id == name:
            return True
    return False


#: arrays at least this large (elements) are released after their last read
RELEASE_MIN_SIZE = 1024


def release_after_last_read(fdef: Any) -> int:
    """``a = None`` after the top-level statement that reads array ``a`` for the
    last time (arrays of at least ``RELEASE_MIN_SIZE`` elements by their
    abstract value, computed by a primitive in a top-level assignment before (not
    an attribute or item of another value), and lists made empty at the top
    level, never read by the return): in straight-line code every temporary otherwise stays alive until the
    function returns (an unrolled backward pass keeps every layer's cotangents),
    where a loop reassigning it freed the last one (the straight-line
    counterpart of :func:`release_after_loops`). Run after
    ``inline_temporaries``; returns how many names it releases."""
    body = fdef.body
    big: Dict[str, int] = {}  # name -> index of its (first) top-level binding
    last: Dict[str, int] = {}  # name -> index of the top-level statement reading it last
    unsafe: set = set()
    for i, s in enumerate(body):
        for n in N.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                last[n.id] = i
        if isinstance(s, gast.Return):
            unsafe |= {n.id for n in N.walk(s) if isinstance(n, gast.Name)}
        if _is_assign(s):
            a = getattr(s, "sj_aval", None)
            t = s.targets[0].id
            op = s.sj_op
            made = op.kind == "copy" or (op.kind == "prim" and op.prim.part is None)  # (no part)
            if made and isinstance(a, Aval) and a.size >= RELEASE_MIN_SIZE and t not in big:
                big[t] = i
            elif isinstance(s.value, gast.List) and not s.value.elts and t not in big:
                big[t] = i  # (a list loops append to: a scan's ys holds every trip's row)
        elif not isinstance(s, gast.Assign):
            unsafe |= _assigned(s)  # (bound in a branch or loop: maybe unbound later)
    params = {a.id for a in fdef.args.args}
    after: Dict[int, List[str]] = {}
    for name, i in big.items():
        j = last.get(name)
        if j is None or j < i or name in unsafe or name in params:
            continue
        if any(_rebinds(body[k], name) for k in range(i + 1, len(body))):
            continue  # (rebound later: its last value is another array)
        after.setdefault(j, []).append(name)
    if not after:
        return 0
    fdef.body = _with_releases(body, after, "released: not read after this")
    return sum(len(v) for v in after.values())


def _release(name: str, s: Any, note: str) -> Any:
    """``name = None``, placed at ``s``'s line, with ``note`` as its comment."""
    free = N.copy_origin(N.assign(name, N.const(None)), s)
    free.sj_note = note
    if getattr(s, "sj_file", None):
        free.sj_file = s.sj_file
    return free


def _with_releases(body: List[Any], after: Dict[int, List[str]], note: str) -> List[Any]:
    """``body`` with ``name = None`` after statement ``i`` for each name of ``after[i]``."""
    out: List[Any] = []
    for i, s in enumerate(body):
        out.append(s)
        out.extend(_release(name, s, note) for name in sorted(after.get(i, ())))
    return out


def _rebinds(s: Any, name: str) -> bool:
    return any(
        isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
        for n in N.walk(s)
    )


def take_dead_items(fdef: Any) -> int:
    """``g = ad.getitem(c, i)`` (or ``c[i]``) in a top-level ``for i in range(...)``
    loop -> ``g = ad.take_item(c, i)`` where that is the loop's only use of the
    list ``c`` and nothing reads ``c`` after the loop; and every name that may
    still hold ``c`` or its items (the names its top-level bindings before the
    loop read, transitively) released after its last use before the loop.

    A gradient is read so by an update loop (R1's ``[(w - lr * dw, b - lr * db)
    for (w, b), (dw, db) in zip(params, grads)]``): without this, every layer's
    gradient stayed alive until the function returned, beside all the new
    parameters (R1's peak: 1.6x XLA's). :func:`take_item` clears each slot only
    when the list has no other holder (checked at run time), so the item is freed
    as soon as the loop is done with it. Run last (after ``inline_temporaries``,
    before the other releases); returns how many reads it changed."""
    body = fdef.body
    params = {a.id for a in fdef.args.args}
    changed = 0
    k = 0
    while k < len(body):
        s = body[k]
        target = getattr(s, "target", None)
        if not (isinstance(s, gast.For) and isinstance(target, gast.Name) and _over_range(s)):
            k += 1
            continue
        later: Set[str] = set()
        for t in body[k + 1 :]:
            later.update(N.names_in(t))
        inside = _name_counts(s)
        assigned = set(N.assigned_names([s]))
        taken = []
        for st in s.body:
            c = _item_read(st, target.id)
            if c is None or c in params or c in later or c in assigned or inside.get(c) != 1:
                continue
            g = st.targets[0].id
            by_item = g not in later and _items_only(s, g, st)
            args = [N.name(c), N.name(target.id)] + ([N.const(True)] if by_item else [])
            st.value = N.call("ad.take_item", args)
            if by_item:
                _TakeItems(g).visit(
                    gast.Module(body=[t for t in s.body if t is not st], type_ignores=[])
                )
            taken.append(c)
        if taken:
            changed += len(taken)
            k += _release_holders(body, k, taken, params | later | set(inside))
        k += 1
    return changed


def _items_only(loop: Any, g: str, binding: Any) -> bool:
    """Whether the loop reads ``g`` (bound once, by ``binding``, a statement of its
    body) only after that binding, as ``g[k]`` with distinct integer constants
    ``k``, none of them in a loop inside (each read once per pass)."""
    before = loop.body[: loop.body.index(binding)]
    if any(g in _name_counts(t) for t in before):
        return False
    for t in N.walk_stmts(loop.body):
        if isinstance(t, (gast.For, gast.While)) and g in _name_counts(t):
            return False
    seen: Set[int] = set()
    subs = set()
    for n in N.walk(loop):
        if (
            isinstance(n, gast.Subscript)
            and isinstance(n.value, gast.Name)
            and n.value.id == g
            and isinstance(n.slice, gast.Constant)
            and type(n.slice.value) is int
        ):
            if n.slice.value in seen:
                return False
            seen.add(n.slice.value)
            subs.add(id(n.value))
    for n in N.walk(loop):
        if isinstance(n, gast.Name) and n.id == g and id(n) not in subs:
            if n is not binding.targets[0]:
                return False
    return bool(seen)


class _TakeItems(gast.NodeTransformer):
    """``g[k]`` -> ``ad.take_item(g, k)``, and ``c * ad.take_item(g, k)`` ->
    ``ad.scaled_item(c, g, k)`` (``c`` a name or a constant: the update's scale)."""

    def __init__(self, g: str) -> None:
        self.g = g

    def visit_Subscript(self, node: Any) -> Any:
        self.generic_visit(node)
        if isinstance(node.value, gast.Name) and node.value.id == self.g:
            return N.call("ad.take_item", [N.name(self.g), N.const(node.slice.value)])
        return node

    def visit_BinOp(self, node: Any) -> Any:
        self.generic_visit(node)
        r = node.right
        if (
            isinstance(node.op, gast.Mult)
            and isinstance(node.left, (gast.Name, gast.Constant))
            and isinstance(r, gast.Call)
            and N.to_source(r.func).strip() == "ad.take_item"
        ):
            return N.call("ad.scaled_item", [node.left] + list(r.args))
        return node


def _over_range(loop: Any) -> bool:
    """``for i in range(...)`` or ``for i in reversed(range(...))``: each index once."""
    it = loop.iter
    for _ in range(2):
        if not (isinstance(it, gast.Call) and isinstance(it.func, gast.Name)):
            return False
        if it.func.id == "range":
            return True
        if it.func.id != "reversed" or len(it.args) != 1:
            return False
        it = it.args[0]
    return False


def _name_counts(node: Any) -> Dict[str, int]:
    counts: Dict[str, int] = {}
    for n in N.walk(node):
        if isinstance(n, gast.Name):
            counts[n.id] = counts.get(n.id, 0) + 1
    return counts


def _item_read(st: Any, index: str):
    """The list name ``c`` of ``g = ad.getitem(c, index)`` / ``g = c[index]``, else None."""
    if not (isinstance(st, gast.Assign) and len(st.targets) == 1):
        return None
    if not isinstance(st.targets[0], gast.Name):
        return None
    v = st.value
    if isinstance(v, gast.Subscript):
        c, i = v.value, v.slice
    elif (
        isinstance(v, gast.Call)
        and not v.keywords
        and len(v.args) == 2
        and N.to_source(v.func).strip() == "ad.getitem"
    ):
        c, i = v.args
    else:
        return None
    if isinstance(c, gast.Name) and isinstance(i, gast.Name) and i.id == index:
        if isinstance((getattr(st, "sj_avals_in", None) or {}).get(c.id), Aval):
            return None  # (an array's row, xs[k]: no slot to clear)
        return c.id
    return None


def _release_holders(body: List[Any], k: int, taken: List[str], keep: Set[str]) -> int:
    """``a = None`` after the last top-level statement before ``body[k]`` that
    mentions ``a``, for every name ``a`` whose value may hold one of ``taken``'s
    lists or their items: the names read by their top-level bindings before the
    loop, transitively through containers and values of unknown kind (an array
    holds nothing else; never a name in ``keep``: parameters, and names used in
    or after the loop). Memory only: each of them is dead there, and whether a
    list is cleared is :func:`take_item`'s check at run time. Returns how many
    statements it inserted."""
    local = set(N.assigned_names(body))
    holders: Set[str] = set()
    todo = list(taken)
    while todo:
        name = todo.pop()
        for t in body[:k]:
            if not (
                isinstance(t, gast.Assign)
                and any(isinstance(x, gast.Name) and x.id == name for x in t.targets)
            ):
                continue
            if isinstance(getattr(t, "sj_aval", None), Aval):
                continue  # (an array: it may be an item, it holds no other)
            for r in N.names_in(t.value):
                if r in local and r not in holders and r not in keep and r not in taken:
                    holders.add(r)
                    todo.append(r)
    last: Dict[int, List[str]] = {}
    for name in sorted(holders):
        where = [j for j in range(k) if name in _name_counts(body[j])]
        if where and not _scalar_binding(body, where, name) and not _is_release(body[where[-1]]):
            last.setdefault(where[-1], []).append(name)
    added = 0
    for j in sorted(last, reverse=True):
        note = "released: dead, and may hold what a loop below takes"
        frees = [_release(name, body[j], note) for name in last[j]]
        body[j + 1 : j + 1] = frees
        added += len(frees)
    return added


def _is_release(t: Any) -> bool:
    """``name = None``."""
    return (
        isinstance(t, gast.Assign) and isinstance(t.value, gast.Constant) and t.value.value is None
    )


def _scalar_binding(body: List[Any], where: List[int], name: str) -> bool:
    """Whether ``name`` is bound at the top level to 0-d values only (a count,
    an index: nothing worth a line)."""
    seen = False
    for j in where:
        t = body[j]
        if isinstance(t, gast.Assign) and any(
            isinstance(x, gast.Name) and x.id == name for x in t.targets
        ):
            seen = True
            if getattr(getattr(t, "sj_aval", None), "shape", None) != ():
                return False
    return seen


def release_in_loops(fdef: Any) -> int:
    """``a = None`` inside a loop body, after the body's top-level statement that
    reads array ``a`` for the last time, where ``a`` lives for one trip only: one
    top-level assignment of the body binds it (an array of at least
    ``RELEASE_MIN_SIZE`` elements, computed by a primitive), nothing in the body
    reads it before that assignment (so no trip reads the previous trip's value),
    and nothing outside the body reads it (the loop's test and iterable, the code
    after it, an enclosing loop). Otherwise each trip's temporaries stay alive
    through the rest of the trip and the next trip's computation up to their
    rebinding: R6's Newton step held its gradient's (16, 200) temporaries
    through all eight conjugate-gradient iterations. Run after
    :func:`release_after_loops`; returns how many releases it adds."""
    reads: Dict[str, int] = {}
    stores: Dict[str, int] = {}
    for n in N.walk(fdef):
        if isinstance(n, gast.Name):
            table = reads if isinstance(n.ctx, gast.Load) else stores
            table[n.id] = table.get(n.id, 0) + 1
    nones: Dict[str, int] = {}  # name -> its `name = None` statements
    for s in N.walk_stmts(fdef.body):
        if (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.Constant)
            and s.value.value is None
        ):
            nones[s.targets[0].id] = nones.get(s.targets[0].id, 0) + 1
    params = {a.id for a in fdef.args.args}
    done = 0
    for loop in [s for s in N.walk_stmts(fdef.body) if isinstance(s, (gast.For, gast.While))]:
        done += _release_in_body(loop, reads, stores, nones, params)
    return done


def _release_in_body(
    loop: Any, reads: Dict[str, int], stores: Dict[str, int], nones, params
) -> int:
    body = loop.body
    inner_reads: Dict[str, int] = {}
    inner_stores: Dict[str, int] = {}
    first_read: Dict[str, int] = {}
    last_read: Dict[str, int] = {}
    for i, s in enumerate(body):
        for n in N.walk(s):
            if not isinstance(n, gast.Name):
                continue
            if isinstance(n.ctx, gast.Load):
                inner_reads[n.id] = inner_reads.get(n.id, 0) + 1
                first_read.setdefault(n.id, i)
                last_read[n.id] = i
            else:
                inner_stores[n.id] = inner_stores.get(n.id, 0) + 1
    after: Dict[int, List[str]] = {}
    for i, s in enumerate(body):
        if not _is_assign(s):
            continue
        name = s.targets[0].id
        a = getattr(s, "sj_aval", None)
        op = s.sj_op
        made = op.kind == "copy" or (op.kind == "prim" and op.prim.part is None)
        if not (made and isinstance(a, Aval) and a.size >= RELEASE_MIN_SIZE) or name in params:
            continue
        if inner_stores.get(name) != 1 or reads.get(name, 0) != inner_reads.get(name, 0):
            continue  # (bound twice in the body, or read outside it)
        if stores.get(name, 0) - 1 != nones.get(name, 0):
            continue  # (bound outside the body to something else than None)
        j = last_read.get(name)
        if j is None or first_read[name] <= i or j <= i:
            continue  # (a trip reads the previous trip's value, or nothing reads it)
        after.setdefault(j, []).append(name)
    if not after:
        return 0
    loop.body = _with_releases(body, after, "released: not read after this in the trip")
    return sum(len(v) for v in after.values())
