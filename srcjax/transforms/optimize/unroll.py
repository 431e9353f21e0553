"""Loops over Python lists of known length, written out (:func:`unroll_list_loops`).

``for w, b in params[:-1]`` in a function under jit is a loop of ``n =
ad.seq_len(seq)`` trips, and grad makes it two: a forward loop pushing on a
tape and a reverse loop popping from it. jax.jit traces such a loop unrolled;
jit's key holds the list's structure, so its length is known here too. Where
that length cannot change before it is read (:func:`changed_lists`), ``n`` is
that constant and the top-level loops ``for i in range(n)`` / ``reversed(range(n))``
are written out trip by trip (:func:`.lists.write_out`): the code after them is
straight-line, so the tape's pushes and pops pair up (:mod:`.tape_pairs`) and
the pytree work on the list's cotangent is decided now (:mod:`.pytrees`).

Why a length cannot change (:func:`changed_lists`): the only statements that
change a list's length are method calls (``append``, ``pop``, ...), the stack
helpers (``ad.push``, ``ad.pop_like``), slice stores, ``del`` and augmented
assignments. Where every list they change is held by names bound only to new
list displays and read only as what those change (or copied to another such
name, or returned), no other name can hold such a list: the list whose length
``ad.seq_len`` reads is never changed. Any call this cannot see into (a user
object's method, a builtin outside a short list) makes the answer no.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op
from .avals import ClassAval
from .common import _is_assign, close_over_copies, copy_pairs
from .lists import _LIST_READERS, _UNROLL_STATEMENTS, _UNROLL_TRIPS, write_out

#: methods that may change the length of the list they are called on
_MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "popitem", "update", "setdefault"}
)
#: methods that reorder a list in place (its length stays)
_REORDER = frozenset({"sort", "reverse"})
#: builtins that never change a list they are passed
_PURE_BUILTINS = frozenset(
    {"len", "min", "max", "range", "reversed", "slice", "int", "float", "bool", "abs", "tuple"}
)
#: helpers that read a list without keeping it (a new list, an item, a count)
_READERS = _LIST_READERS - {"ad.batch_broadcast"} | {"ad.tree_stack"}


def changed_lists(fdef: Any) -> Optional[Set[str]]:
    """The names of the lists whose length ``fdef`` changes, where no other name
    can reach those lists (see the module's docstring); None where that is not
    sure. The length of a list held by any other name stays what it was."""
    from ...primitives.registry import REGISTRY

    local = set(N.assigned_names(fdef.body)) | {a.id for a in fdef.args.args}
    changed: Set[str] = set()  # names of the lists something changes
    parents: Dict[int, Any] = {}
    names: Dict[str, List[Any]] = {}  # every Name node, by its id
    for node in N.walk(fdef):
        for child in gast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, gast.Name):
            names.setdefault(node.id, []).append(node)
        if isinstance(node, (gast.Delete, gast.AugAssign, gast.Global, gast.Nonlocal)):
            return None
        if isinstance(node, gast.Subscript) and not isinstance(node.ctx, gast.Load):
            if isinstance(node.slice, gast.Slice):
                return None  # (a slice store changes the length)
        if not isinstance(node, gast.Call):
            continue
        f = node.func
        if isinstance(f, gast.Name):
            if f.id in local or f.id not in _PURE_BUILTINS:
                return None
        elif isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
            if f.value.id in local:
                if f.attr not in _MUTATORS | _REORDER:
                    return None  # (a method of an object this cannot see into)
                changed.add(f.value.id)
                continue
            prim = REGISTRY.get(f"{f.value.id}.{f.attr}")
            if prim is None:
                return None
            if prim.stack:
                if not (node.args and isinstance(node.args[0], gast.Name)):
                    return None
                changed.add(node.args[0].id)
        else:
            return None
    # every name a changed list is copied to holds it too
    changed = close_over_copies(changed, copy_pairs(N.walk_stmts(fdef.body)))
    if changed & {a.id for a in fdef.args.args}:
        return None
    for node in N.walk(fdef):
        if isinstance(node, gast.Name) and node.id in changed:
            parent = parents.get(id(node))
            if isinstance(node.ctx, gast.Load):
                if not _list_use(node, parent, parents, names, REGISTRY):
                    return None
            elif not (isinstance(parent, gast.Assign) and _new_list(parent.value, changed)):
                return None  # (a loop target, a binding to anything but a new list)
    return changed


def _new_list(value: Any, changed: Set[str]) -> bool:
    """Whether ``value``, bound to a changed list's name, is a new list (or
    ``None``, or another changed list's name, or ``ad.push``'s result)."""
    if isinstance(value, (gast.List, gast.ListComp)):
        return True
    if isinstance(value, gast.Constant) and value.value is None:
        return True
    if isinstance(value, gast.Name):
        return value.id in changed
    return _helper_of(value) == "ad.push" and isinstance(value.args[0], gast.Name)


def _helper_of(node: Any) -> Optional[str]:
    """``"mod.name"`` of a call ``mod.name(...)``, else None."""
    if (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Attribute)
        and isinstance(node.func.value, gast.Name)
    ):
        return f"{node.func.value.id}.{node.func.attr}"
    return None


def _list_use(node: Any, parent: Any, parents: Dict[int, Any], names, registry) -> bool:
    """Whether the read ``node`` of a changed list keeps it where only a changed
    list's name can reach it: what its methods are called on, a stack helper's
    list, the value of a plain copy (to another changed name), a reader's
    operand (``ad.seq_len``, ``ad.getitem``: a count, an item, a new list), or
    what the function returns (in a display, too)."""
    if isinstance(parent, gast.Attribute) and parent.value is node:
        call = parents.get(id(parent))
        return isinstance(call, gast.Call) and call.func is parent
    if isinstance(parent, gast.Assign) and parent.value is node:
        return True
    if _returned(node, parents, names):
        return True  # (the caller's, once nothing here runs any more)
    if isinstance(parent, gast.Call) and node in parent.args:
        f = parent.func
        if isinstance(f, gast.Name):
            return f.id == "len"
        name = _helper_of(parent)
        prim = registry.get(name) if name is not None else None
        if prim is not None and prim.stack:
            return parent.args[0] is node
        return name in _READERS
    return False


def _returned(node: Any, parents: Dict[int, Any], names: Dict[str, list], depth: int = 0) -> bool:
    """Whether ``node`` is returned, in displays maybe (``return (items, g)``, or
    ``t = (items, g)`` with ``t`` bound once and read only so)."""
    parent = parents.get(id(node))
    while isinstance(parent, (gast.Tuple, gast.List, gast.Dict)):
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, gast.Return):
        return True
    if not (
        depth < 4
        and isinstance(parent, gast.Assign)
        and parent.value is node
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], gast.Name)
    ):
        return False
    name = parent.targets[0].id
    uses = [n for n in names.get(name, ()) if n is not parent.targets[0]]
    return bool(uses) and all(
        isinstance(n.ctx, gast.Load) and _returned(n, parents, names, depth + 1) for n in uses
    )


def unroll_list_loops(fdef: Any, params: Dict[str, Any], fresh) -> bool:
    """Fold the lengths of lists jit's key knows and write out the top-level
    loops over them (see the module); returns whether anything changed."""
    body = fdef.body
    bindings: Dict[str, int] = {}
    for name in _all_stores(fdef):
        bindings[name] = bindings.get(name, 0) + 1
    counts: Dict[str, int] = {}  # a name holding a folded length -> that length
    lengths: Dict[str, int] = {}  # a list's name bound once -> its known length
    for p, aval in params.items():
        if p not in bindings and _list_length(aval) is not None:
            lengths[p] = _list_length(aval)
    changing: Optional[Set[str]] = None
    out: List[Any] = []
    changed = False
    for s in body:
        if isinstance(s, gast.For) and s.target is not None:
            trips = _trips(s, counts)
            if trips is not None and isinstance(s.target, gast.Name):
                n, reverse = trips
                values = range(n - 1, -1, -1) if reverse else range(n)
                stmts = None
                if n <= _UNROLL_TRIPS and n * (len(s.body) + 1) <= _UNROLL_STATEMENTS:
                    stmts = write_out(s, values, fresh)
                if stmts is not None:
                    out.extend(stmts)
                    changed = True
                    for name in N.assigned_names(stmts):
                        counts.pop(name, None)
                    continue
        for name in N.assigned_names([s]):
            counts.pop(name, None)
        out.append(s)
        if not _is_assign(s):
            continue
        target = s.targets[0].id
        if bindings.get(target) == 1 and getattr(s, "sj_sure", False):
            n = _list_length(getattr(s, "sj_aval", None))
            if n is not None:
                lengths[target] = n
        xs = _length_of(s)
        if xs is None or xs not in lengths:
            continue
        if changing is None:
            changing = changed_lists(fdef)
            if changing is None:
                return False  # (nothing folded yet, so no loop written out)
        if xs in changing:
            continue  # (a list appended to: its display's length is not its own)
        n = lengths[xs]
        s.value, s.sj_op = N.const(n), Op("copy", elts=[N.const(n)])
        s.sj_note = "the length of a list jit's key knows"
        counts[target] = n
        changed = True
    fdef.body = out
    return changed


def _all_stores(fdef: Any):
    for node in N.walk(fdef):
        if isinstance(node, gast.Name) and isinstance(node.ctx, (gast.Store, gast.Del)):
            yield node.id


def _list_length(aval: Any) -> Optional[int]:
    """The length of a list or tuple abstract value (a registered class: None)."""
    if isinstance(aval, (list, tuple)) and not isinstance(aval, ClassAval):
        return len(aval)
    return None


def _length_of(s: Any) -> Optional[str]:
    """``xs`` of ``n = ad.seq_len(xs)`` or ``n = len(xs)``, else None."""
    op = s.sj_op
    v = s.value
    if not (isinstance(v, gast.Call) and len(v.args) == 1 and not v.keywords):
        return None
    if op.kind == "prim" and op.prim.public == "ad.seq_len":
        pass
    elif not (op.kind == "inactive" and isinstance(v.func, gast.Name) and v.func.id == "len"):
        return None
    return v.args[0].id if isinstance(v.args[0], gast.Name) else None


def _trips(loop: Any, counts: Dict[str, int]) -> Optional[tuple]:
    """``(n, reversed)`` for ``for i in range(k)`` or ``reversed(range(k))`` with
    ``k`` a folded length, else None."""
    if loop.orelse:
        return None
    it = loop.iter
    reverse = (
        isinstance(it, gast.Call)
        and isinstance(it.func, gast.Name)
        and it.func.id == "reversed"
        and len(it.args) == 1
    )
    args = N.range_args(it)
    if args is None or len(args) != 1 or not isinstance(args[0], gast.Name):
        return None
    n = counts.get(args[0].id)
    return None if n is None else (n, reverse)
