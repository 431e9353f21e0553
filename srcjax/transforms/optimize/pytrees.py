"""Pytrees whose structure jit's signature knows (:func:`known_trees`).

Reverse mode builds the cotangent of a container argument piece by piece:
``ad.attr_adjoint(g, layer, 'weight')`` makes a ``Linear`` with one child,
``ad.tree_add`` merges two, ``ad.tree_index_adjoint`` puts one in a list, and
``ad.cotangent_like`` fills the holes at the end; ``tree_map`` flattens its trees
at run time (``ad.tree_leaves``, ``ad.leaves_upto``). Each is a Python call that
walks a tree on every step (R5, an Equinox-style MLP with Adam: two in five of
a step's time). Under jit the argument's structure is part of the key (its
abstract value: dicts, lists, tuples and :class:`ClassAval` of registered
classes, as ``jax.jit`` keys a treedef), so every one of these is decided now:

- names reached from a parameter by constant attribute reads and indexing
  (``model.layers[:-1][0]``, ``pt.x``) are *places*: sets of its leaves, in JAX's order;
- the cotangent helpers on places become a table ``leaf -> cotangent`` at
  transformation time (overlapping entries added with ``+``), and the final
  ``ad.cotangent_like`` builds the cotangent from its leaves in one call
  (``ad.tree_unflatten_like``), zeros where a leaf got none;
- ``ad.leaves_upto(t, like)`` of a ``t`` built from known leaves (that
  cotangent, or a ``tree_map`` result) is the list of those leaves, once the
  structures are known to agree (JAX's ValueError otherwise is left to run time).

Only straight-line statements at the top of the body are changed; a cotangent
table read by anything else (a loop, a branch, another helper) leaves the whole
body as it was. The model of known structures (places, cotangent tables,
built trees) is :mod:`.tree_places`.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op
from .avals import Aval
from .common import _assigned, _is_assign, _new_assign
from .lists import (
    _appended_later,
    _appended_to,
    _builtin_call,
    _count_of,
    _dict_display,
    _display_aval,
    _drop_unread_lists,
    _only_arg,
    _reads_list_only,
    _trip_count,
    _unroll,
)
from .tree_places import (
    _Abort,
    _Built,
    _children,
    _const_index,
    _count,
    _leaf_avals,
    _leaf_reads,
    _materialize,
    _Place,
    _shape_key,
    _Table,
    _table_for,
)

_KNOWN_LEAVES = "the leaves of a tree whose structure jit knows"


def known_trees(fdef: Any, params: Dict[str, Any]) -> bool:
    """Decide at transformation time the pytree work on parameters of known
    structure (see the module's docstring); returns whether anything changed."""
    places: Dict[str, _Place] = {}
    for p, aval in params.items():
        try:
            if _children(aval) is not None:
                places[p] = _Place(p, aval, tuple(range(_count(aval))))
        except _Abort:
            continue
    if not places:
        return False
    try:
        return _rewrite(fdef, places)
    except _Abort:
        return False


def _rewrite(fdef: Any, places: Dict[str, _Place]) -> bool:
    from ...primitives import registry

    tables: Dict[str, _Table] = {}
    built: Dict[str, _Built] = {}
    avals: Dict[str, Any] = {}  # abstract values of the names assigned so far
    slices: Dict[str, slice] = {}
    lists: Dict[str, List[str]] = {}  # a list built here whose items are these names
    lengths: Dict[str, int] = {}  # a name holding a known count (a known list's length)
    tdefs: Dict[str, Any] = {}  # a name holding the treedef of a known structure
    drop: set = set()  # ids of statements that only build a cotangent table
    edits: Dict[int, tuple] = {}  # id of a statement -> (value, op, note), made at the end
    replace: Dict[int, List[Any]] = {}  # id of a statement -> what replaces it
    body = fdef.body
    namer_taken = {n.id for n in N.walk(fdef) if isinstance(n, gast.Name)}

    def fresh(base: str) -> str:
        i = 1
        while f"{base}{i}" in namer_taken:
            i += 1
        namer_taken.add(f"{base}{i}")
        return f"{base}{i}"

    def table_of(node: Any, place: _Place) -> _Table:
        """The cotangent ``node`` of ``place`` as a table."""
        if isinstance(node, gast.Constant) and node.value is None:
            return _Table(place, {})
        if isinstance(node, gast.Name) and node.id in tables:
            t = tables[node.id]
            if t.place.param != place.param or t.place.ids != place.ids:
                raise _Abort
            return t
        if isinstance(node, gast.Name) and _children(place.aval) is None:
            return _Table(place, {place.ids[0]: node.id})
        raise _Abort

    def forget(names: set, compound: bool = False) -> None:
        held = {g for t in tables.values() for g in t.entries.values()}
        if names & held:
            raise _Abort  # (a leaf's cotangent rebound before the table is used)
        for key in [k for k, v in lists.items() if k in names or names.intersection(v)]:
            del lists[key]
        for key in [k for k, v in built.items() if v.leaves and names.intersection(v.leaves)]:
            del built[key]
        for n in names:
            lengths.pop(n, None)
            tdefs.pop(n, None)
            places.pop(n, None)
            built.pop(n, None)
            avals.pop(n, None)
            slices.pop(n, None)
            if n in tables:
                if compound:
                    raise _Abort  # (rebound on some paths only)
                del tables[n]  # (every read of the table came before)

    roots = {p: pl for p, pl in places.items()}  # the parameters, bound at entry
    treedefs: Dict[Any, str] = {}
    head: List[Any] = []

    def treedef_of(aval: Any) -> Optional[str]:
        """A name holding the treedef of structure ``aval`` (computed once, at the
        top, from a parameter of that structure), or None."""
        key = _shape_key(aval)
        if key in treedefs:
            return treedefs[key]
        for p, pl in roots.items():
            if _shape_key(pl.aval) == key:
                from ...primitives import tree_is_leaf

                name = fresh("treedef")
                stmt = N.assign(
                    name, N.call(tree_is_leaf.tree_def.public, [N.name(p), N.const(None)])
                )
                N.copy_origin(stmt, body[0])
                stmt.sj_op = Op(
                    "prim",
                    prim=tree_is_leaf.tree_def,
                    bound={"tree": N.name(p), "is_leaf": N.const(None)},
                )
                head.append(stmt)
                treedefs[key] = name
                return name
        return None

    def count_edit(s: Any, target: str, n: int) -> None:
        """``target = n``: a count known now (its statement then dead once the
        loops it bounded are written out)."""
        nonlocal changed
        edits[id(s)] = (N.const(n), Op("copy", elts=[N.const(n)]), "")
        forget({target})
        lengths[target] = n
        changed = True

    def list_edit(s: Any, target: str, atoms: List[str], note: str) -> None:
        elts = [N.name(a) for a in atoms]
        edits[id(s)] = (
            gast.List(elts=elts, ctx=gast.Load()),
            Op("pack", elts=[N.name(a) for a in atoms]),
            note,
        )
        forget({target})
        lists[target] = list(atoms)

    changed = False
    for s in body:
        reads = {n.id for n in N.walk(s) if isinstance(n, gast.Name)}
        op = getattr(s, "sj_op", None)
        appended = _appended_to(s)
        if appended is not None:  # `lst.append(v)`: a known list grows by v
            lst, v = appended
            if lst in lists and isinstance(v, gast.Name) and v.id not in lists:
                lists[lst].append(v.id)
            else:
                lists.pop(lst, None)
            reads.discard(lst)
        if op is not None and op.kind == "copy" and _is_assign(s):
            src = op.elts[0].id if op.elts and isinstance(op.elts[0], gast.Name) else None
            if src in lists:  # `b = a`: one list, two names (an append through either)
                shared = lists[src]
                forget({s.targets[0].id})
                lists[s.targets[0].id] = shared
                continue
        trips = _trip_count(s, lengths)
        if trips is not None and not reads & set(tables):
            stmts = _unroll(s, trips, lists, fresh)  # (with the lists known before it)
            if stmts is not None:
                replace[id(s)] = stmts
                changed = True
        for n in reads & set(lists):
            if n in lists and not _reads_list_only(s):
                gone = lists[n]  # (it may change through another name or a call)
                for k in [k for k, v in lists.items() if v is gone]:
                    del lists[k]
        if not _is_assign(s):
            if reads & set(tables):
                raise _Abort
            forget(set(_assigned(s)), compound=not isinstance(s, gast.Expr))
            continue
        target = s.targets[0].id
        prim = op.prim.public if op.kind == "prim" else None
        b = op.bound
        handled = False
        if op.kind == "pack" and isinstance(s.value, gast.Dict):
            shape = _display_aval(s.value, avals)
            forget({target})
            if shape is not None:  # (a dict of arrays: its leaves in JAX's order)
                by_key = {k.value: v.id for k, v in zip(s.value.keys, s.value.values)}
                built[target] = _Built(shape, [by_key[k] for k, _ in _children(shape)], None)
            avals[target] = getattr(s, "sj_aval", None)
            continue
        if op.kind == "pack" and isinstance(s.value, gast.List):
            if all(isinstance(e, gast.Name) and e.id not in lists for e in s.value.elts):
                forget({target})
                lists[target] = [e.id for e in s.value.elts]
                avals[target] = getattr(s, "sj_aval", None)
                continue
        elif prim == "ad.seq_len" or _builtin_call(s, "len"):
            xs = b.get("xs") if prim == "ad.seq_len" else _only_arg(s)
            n = None
            if isinstance(xs, gast.Name) and xs.id in lists:
                n = len(lists[xs.id])
            elif isinstance(xs, gast.Name) and isinstance(avals.get(xs.id), Aval):
                shape = avals[xs.id].shape
                n = shape[0] if shape else None  # (an array's rows; a 0-d one raises)
            if n is not None:
                count_edit(s, target, n)
                continue
        elif _builtin_call(s, "min"):
            counts = [_count_of(a, lengths) for a in s.value.args]
            if counts and all(c is not None for c in counts):
                count_edit(s, target, min(counts))
                continue
        elif prim == "ad.tree_axis_size" and isinstance(b.get("x"), gast.Name):
            got = built.get(b["x"].id)
            ok, ax = N._int_constant(b.get("axes"))
            if got is not None and got.leaves and ok and type(ax) is int and ax >= 0:
                sizes = {
                    avals[a].shape[ax]
                    if isinstance(avals.get(a), Aval) and len(avals[a].shape) > ax
                    else None
                    for a in got.leaves
                }
                if len(sizes) == 1 and None not in sizes:  # (every leaf mapped on ax)
                    count_edit(s, target, sizes.pop())
                    continue
        elif prim == "ad.tree_def" and isinstance(b.get("tree"), gast.Name):
            is_leaf = b.get("is_leaf")
            tree = b["tree"].id
            shape = places[tree].aval if tree in places else None
            if tree in built:
                shape = built[tree].aval
            forget({target})
            if shape is not None and isinstance(is_leaf, gast.Constant) and is_leaf.value is None:
                tdefs[target] = shape
                td = treedef_of(shape) if tree not in roots else None
                if td is not None:  # (a parameter's structure, computed once at the top)
                    edits[id(s)] = (N.name(td), Op("copy", elts=[N.name(td)]), "")
                    changed = True
            continue
        elif prim == "ad.unflatten_upto" and isinstance(b.get("like"), gast.Name):
            like, leaves, is_leaf = b["like"].id, b.get("leaves"), b.get("is_leaf")
            if (
                like in tdefs
                and isinstance(leaves, gast.Name)
                and leaves.id in lists
                and isinstance(is_leaf, gast.Constant)
                and is_leaf.value is None
                and len(lists[leaves.id]) == _count(tdefs[like])
            ):
                shape, known = tdefs[like], list(lists[leaves.id])
                display = _dict_display(shape, known)
                if display is not None:  # (a dict of leaves: its display, no treedef walk)
                    edits[id(s)] = (display, Op("pack", elts=[N.name(a) for a in known]), "")
                    changed = True
                forget({target})
                built[target] = _Built(shape, known, None)
                continue
        elif prim == "ad.batch_broadcast" and isinstance(b.get("x"), gast.Name):
            src, axis = b["x"].id, b.get("axis")
            if axis is None or (isinstance(axis, gast.Constant) and axis.value == 0):
                if src in lists and not lists[src]:  # (an empty list stays empty)
                    list_edit(s, target, [], "")
                    changed = True
                    continue
                aval = getattr(s, "sj_aval", None)
                if src in places and aval is not None:
                    try:
                        same = _shape_key(aval) == _shape_key(places[src].aval)
                    except _Abort:
                        same = False
                    if same and _children(aval) is not None:
                        # every leaf repeated along a new batch axis: a place whose
                        # leaves are the same parameter's, with batched avals
                        part = _Place(places[src].param, aval, places[src].ids)
                        forget({target})
                        places[target] = part
                        avals[target] = aval
                        continue
        elif (
            prim == "ad.pysum"
            and isinstance(b.get("x"), gast.Name)
            and lists.get(b["x"].id)
            and _count_of(b.get("start", N.const(0)), {}) == 0
        ):
            # Python's sum of a known list: its additions, from 0, one by one
            add = registry.by_public("jnp.add")
            total: Any = N.const(0)
            chain = []
            items = lists[b["x"].id]
            for k, atom in enumerate(items):
                name = target if k == len(items) - 1 else fresh(f"{target}_")
                value = gast.BinOp(left=N.clone(total), op=gast.Add(), right=N.name(atom))
                op_k = Op("prim", prim=add, bound={"x": N.clone(total), "y": N.name(atom)})
                chain.append(_new_assign(name, value, op_k, s))
                total = N.name(name)
            replace[id(s)] = chain
            forget({target})
            changed = True
            continue
        elif (
            prim == "ad.getitem"
            and isinstance(b.get("x"), gast.Name)
            and b["x"].id in lists
            and not reads & set(tables)
        ):
            ok, k = N._int_constant(b.get("idx"))
            items = lists[b["x"].id]
            if ok and type(k) is int and -len(items) <= k < len(items):
                atom = items[k]
                edits[id(s)] = (N.name(atom), Op("copy", elts=[N.name(atom)]), "")
                forget({target})
                avals[target] = avals.get(atom)
                changed = True
                continue
        if op.kind == "copy" and op.elts and isinstance(op.elts[0], gast.Name):
            src = op.elts[0].id
            if src in tables:
                tables[target] = tables[src]
                drop.add(id(s))
                handled = True
                reads.discard(src)
            elif src in places or src in built:
                new_place, new_built = places.get(src), built.get(src)
                forget({target})
                if new_place is not None:
                    places[target] = new_place
                if new_built is not None:
                    built[target] = new_built
                continue
        elif prim == "ad.getattr" and isinstance(b.get("x"), gast.Name) and b["x"].id in places:
            name = b.get("name")
            if isinstance(name, gast.Constant) and isinstance(name.value, str):
                try:
                    part = places[b["x"].id].attr(name.value)
                except _Abort:
                    part = None
                forget({target})
                if part is not None:
                    places[target] = part
                avals[target] = getattr(s, "sj_aval", None)
                continue
        elif prim == "ad.getitem" and isinstance(b.get("x"), gast.Name) and b["x"].id in places:
            try:
                part = places[b["x"].id].item(_const_index(b.get("idx"), slices))
            except _Abort:
                part = None
            forget({target})
            if part is not None:
                places[target] = part
            avals[target] = getattr(s, "sj_aval", None)
            continue
        elif (
            prim == "ad.zeros_like"
            and isinstance(b.get("x"), gast.Name)
            and b["x"].id in places
            and _children(places[b["x"].id].aval) is not None
        ):
            # (a container's zero cotangent, the start of a written-out layer loop's
            # sum: a table with no entries)
            tables[target] = _Table(places[b["x"].id], {})
            drop.add(id(s))
            handled = True
        elif prim in (
            "ad.attr_adjoint",
            "ad.tree_index_adjoint",
            "ad.index_adjoint",
            "ad.bgetitem_adjoint",
        ):
            x = b.get("x")
            ct = b.get("ct", b.get("g"))
            if isinstance(x, gast.Name) and x.id in places:
                outer = places[x.id]
                if prim == "ad.attr_adjoint":
                    name = b.get("name")
                    if not (isinstance(name, gast.Constant) and isinstance(name.value, str)):
                        raise _Abort
                    part = outer.attr(name.value)
                else:
                    mode = b.get("mode")
                    if mode is not None and not (
                        isinstance(mode, gast.Constant) and mode.value is None
                    ):
                        raise _Abort
                    if _children(outer.aval) is None:
                        raise _Abort  # (an array's index adjoint: a scatter)
                    part = outer.item(_const_index(b.get("idx"), slices))
                inner = table_of(ct, part)
                tables[target] = _Table(outer, dict(inner.entries))
                drop.add(id(s))
                handled = True
                if isinstance(ct, gast.Name):
                    reads.discard(ct.id)
        elif prim == "ad.tree_add":
            a, c = b.get("a"), b.get("b")
            names = [v.id for v in (a, c) if isinstance(v, gast.Name)]
            if any(n in tables for n in names):
                known = [tables[n] for n in names if n in tables]
                place = known[0].place
                ta, tc = table_of(a, place), table_of(c, place)
                entries = dict(ta.entries)
                extra: List[Any] = []
                for leaf, g in tc.entries.items():
                    if leaf in entries:
                        total = fresh("ct_sum")
                        add = registry.by_public("jnp.add")
                        stmt = N.copy_origin(
                            N.assign(
                                total,
                                gast.BinOp(
                                    left=N.name(entries[leaf]), op=gast.Add(), right=N.name(g)
                                ),
                            ),
                            s,
                        )
                        stmt.sj_op = Op(
                            "prim", prim=add, bound={"x": N.name(entries[leaf]), "y": N.name(g)}
                        )
                        extra.append(stmt)
                        entries[leaf] = total
                    else:
                        entries[leaf] = g
                tables[target] = _Table(place, entries)
                if extra:
                    replace[id(s)] = extra
                else:
                    drop.add(id(s))
                handled = True
                reads -= set(names)
        elif prim == "ad.project_real":
            g, x = b.get("g"), b.get("x")
            if isinstance(g, gast.Name) and g.id in tables:
                t = _table_for(tables[g.id], x, places)
                if any(
                    not isinstance(a, Aval) or a.dtype.kind != "f"
                    for a in _leaf_avals(t.place.aval)
                ):
                    raise _Abort  # (complex or integer leaves: left to run time)
                tables[target] = t
                drop.add(id(s))
                handled = True
                reads.discard(g.id)
        elif prim == "ad.cotangent_like":
            ct, x = b.get("ct"), b.get("x")
            if isinstance(ct, gast.Name) and ct.id in tables:
                t = _table_for(tables[ct.id], x, places)
                leaf_avals = _leaf_avals(t.place.aval)
                atoms: List[Any] = []
                dense = True
                for leaf, la in zip(t.place.ids, leaf_avals):
                    g = t.entries.get(leaf)
                    if g is None or avals.get(g) != la:
                        dense = False  # a hole, or a cotangent to broadcast or cast
                        atoms.append(None if g is None else g)
                    else:
                        atoms.append(g)
                replace[id(s)] = _materialize(s, target, x, atoms, dense, fresh)
                reads.discard(ct.id)
                forget({target})
                if dense:
                    built[target] = _Built(t.place.aval, list(atoms), None)
                avals[target] = None
                changed = True
                continue
        elif prim == "ad.tree_unflatten_like":
            tree, leaves = b.get("tree"), b.get("leaves")
            if isinstance(tree, gast.Name) and isinstance(leaves, gast.Name):
                shape = None
                if tree.id in places:
                    shape = places[tree.id].aval
                elif tree.id in built:
                    shape = built[tree.id].aval
                if shape is not None:
                    td = treedef_of(shape)
                    if td is not None:  # one structure computed once, not per call
                        unflat = registry.by_public("ad.unflatten_upto")
                        edits[id(s)] = (
                            N.call(unflat.public, [N.name(td), N.clone(leaves), N.const(None)]),
                            Op(
                                "prim",
                                prim=unflat,
                                bound={
                                    "like": N.name(td),
                                    "leaves": N.clone(leaves),
                                    "is_leaf": N.const(None),
                                },
                            ),
                            "a structure jit knows",
                        )
                        changed = True
                    known = lists.get(leaves.id)
                    forget({target})
                    if known is not None and len(known) == _count(shape):
                        built[target] = _Built(shape, list(known), None)
                    elif not _appended_later(body, s, leaves.id):
                        built[target] = _Built(shape, None, leaves.id)
                    continue
        elif prim == "ad.tree_leaves" and set(b) == {"tree"}:
            tree = b.get("tree")
            if isinstance(tree, gast.Name) and tree.id in built and built[tree.id].leaves:
                if all(a is not None for a in built[tree.id].leaves):
                    list_edit(s, target, built[tree.id].leaves, _KNOWN_LEAVES)
                    changed = True
                    continue
            if isinstance(tree, gast.Name) and tree.id in places:
                reads_of = _leaf_reads(places[tree.id], tree.id, s, fresh)
                if reads_of is not None:
                    stmts, atoms = reads_of
                    edits[id(s)] = (
                        gast.List(elts=[N.name(a) for a in atoms], ctx=gast.Load()),
                        Op("pack", elts=[N.name(a) for a in atoms]),
                        "the leaves of a tree whose structure jit knows",
                    )
                    replace[id(s)] = stmts + [s]
                    changed = True
                    forget({target})
                    continue
        elif prim == "ad.leaves_upto":
            tree, like, is_leaf = b.get("tree"), b.get("like"), b.get("is_leaf")
            if (
                isinstance(tree, gast.Name)
                and tree.id in built
                and isinstance(like, gast.Name)
                and (like.id in places or like.id in built)
                and isinstance(is_leaf, gast.Constant)
                and is_leaf.value is None
            ):
                got = built[tree.id]
                like_aval = places[like.id].aval if like.id in places else built[like.id].aval
                if _shape_key(got.aval) == _shape_key(like_aval):
                    if got.leaves is not None:
                        edits[id(s)] = (
                            gast.List(elts=[N.name(a) for a in got.leaves], ctx=gast.Load()),
                            Op("pack", elts=[N.name(a) for a in got.leaves]),
                            _KNOWN_LEAVES,
                        )
                    else:
                        edits[id(s)] = (
                            N.name(got.list_name),
                            Op("copy", elts=[N.name(got.list_name)]),
                            _KNOWN_LEAVES,
                        )
                    changed = True
                    forget({target})
                    continue
        if reads & set(tables) and not handled:
            raise _Abort  # a cotangent table read by something else
        if not handled:
            forget({target})
            avals[target] = getattr(s, "sj_aval", None)
            if op.kind == "inactive" and isinstance(s.value, gast.Call):
                sl = N.static_slice(s.value)
                if sl is not None:
                    slices[target] = sl
        else:
            changed = True
            places.pop(target, None)
            built.pop(target, None)
    if not changed:
        return False
    out = list(head)
    for s in body:
        if id(s) in drop:
            continue
        if id(s) in edits:
            s.value, s.sj_op, s.sj_note = edits[id(s)]
        out.extend(replace.get(id(s), [s]))
    made = {id(st) for stmts in replace.values() for st in stmts}
    while True:  # a cotangent built but only read through its leaves: not built
        reads = {
            n.id
            for n in N.walk(gast.Module(body=out, type_ignores=[]))
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
        }
        keep = [
            st
            for st in out
            if not (id(st) in made and _is_assign(st) and st.targets[0].id not in reads)
        ]
        if len(keep) == len(out):
            break
        out = keep
    fdef.body = _drop_unread_lists(out)
    return True
