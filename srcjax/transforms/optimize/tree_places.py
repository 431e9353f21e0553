"""The parts of a pytree whose structure jit knows, for :mod:`.pytrees`.

A *place* (:class:`_Place`) is a part of a parameter of known structure (its
abstract value: dicts, lists, tuples and :class:`ClassAval` of registered
classes) with the numbers of its leaves in JAX's flattening order; attribute
reads and constant indexing (``model.layers[:-1][0]``, ``pt.x``) give its
children. A cotangent known leaf by leaf is a :class:`_Table`, a tree of known
structure built from known leaves a :class:`_Built`. Anything this model cannot
follow raises :class:`_Abort` (the pass then changes nothing). The statements
the pass writes from this model: a place's leaves read by attribute and index
(:func:`_leaf_reads`), a cotangent built from its leaves (:func:`_materialize`).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Tuple

import gast

from ..._dict_order import sorted_keys
from ...frontend import nodes as N
from ...frontend.normalize import Op
from .avals import Aval, ClassAval


class _Abort(Exception):
    """A use of a cotangent table this pass cannot follow: change nothing."""


def _table_for(t: Any, x: Any, places: dict) -> Any:
    """The cotangent table ``t`` when the primal ``x`` it is taken against is a
    known place with ``t``'s leaves (the same ids and parameter); else _Abort."""
    if not (isinstance(x, gast.Name) and x.id in places):
        raise _Abort
    if places[x.id].ids != t.place.ids or places[x.id].param != t.place.param:
        raise _Abort
    return t


def _children(aval: Any) -> Optional[List[Tuple[Any, Any]]]:
    """``[(key, child aval), ...]`` in JAX's flattening order (a class child's key
    is its index), or None for a leaf; raises _Abort where the structure is unknown."""
    if isinstance(aval, ClassAval):
        return list(enumerate(aval.children))
    if isinstance(aval, dict):
        return [(k, aval[k]) for k in sorted_keys(aval)]
    if isinstance(aval, (list, tuple)):
        return list(enumerate(aval))
    if isinstance(aval, Aval):
        return None
    raise _Abort


def _count(aval: Any) -> int:
    kids = _children(aval)
    return 1 if kids is None else sum(_count(c) for _, c in kids)


def _shape_key(aval: Any) -> Any:
    """The structure of ``aval`` without its leaves' abstract values (what
    ``flatten_up_to`` compares)."""
    kids = _children(aval)
    if kids is None:
        return "*"
    if isinstance(aval, ClassAval):
        return ("class", aval.type, aval.aux, tuple(_shape_key(c) for _, c in kids))
    if isinstance(aval, dict):
        return ("dict", type(aval), tuple((k, _shape_key(c)) for k, c in kids))
    return (type(aval), tuple(_shape_key(c) for _, c in kids))


class _Place:
    """A part of parameter ``param``: its abstract value and its leaves' numbers."""

    __slots__ = ("param", "aval", "ids")

    def __init__(self, param: str, aval: Any, ids: tuple) -> None:
        self.param, self.aval, self.ids = param, aval, ids

    def child(self, key: Any) -> "_Place":
        kids = _children(self.aval)
        if kids is None:
            raise _Abort
        start = 0
        for k, c in kids:
            n = _count(c)
            if k == key:
                return _Place(self.param, c, self.ids[start : start + n])
            start += n
        raise _Abort

    def attr(self, name: str) -> "_Place":
        if name in (getattr(self.aval, "_fields", None) or ()):  # a named tuple's (pt.x)
            return self.child(self.aval._fields.index(name))
        if not isinstance(self.aval, ClassAval) or name not in self.aval.layout:
            raise _Abort
        return self.child(self.aval.layout[name])

    def item(self, idx: Any) -> "_Place":
        if isinstance(self.aval, dict):
            if idx not in self.aval:
                raise _Abort
            return self.child(idx)
        if not isinstance(self.aval, (list, tuple)) or isinstance(self.aval, ClassAval):
            raise _Abort
        n = len(self.aval)
        if isinstance(idx, slice):
            picked = range(*idx.indices(n))
            parts = [self.child(j) for j in picked]
            avals = [p.aval for p in parts]
            aval = type(self.aval)(avals) if not hasattr(self.aval, "_fields") else tuple(avals)
            return _Place(self.param, aval, tuple(i for p in parts for i in p.ids))
        if type(idx) is not int or not -n <= idx < n:
            raise _Abort
        return self.child(idx % n)


class _Table:
    """A cotangent known leaf by leaf: ``entries`` maps a leaf number of
    ``place`` to the name holding its cotangent (absent: zero)."""

    __slots__ = ("place", "entries")

    def __init__(self, place: _Place, entries: Dict[int, Any]) -> None:
        self.place, self.entries = place, entries


class _Built:
    """A pytree of known structure ``aval`` whose leaves are known: ``leaves`` (a
    list of atoms) or ``list_name`` (a list built at run time)."""

    __slots__ = ("aval", "leaves", "list_name")

    def __init__(self, aval: Any, leaves: Optional[list], list_name: Optional[str]) -> None:
        self.aval, self.leaves, self.list_name = aval, leaves, list_name


def _const_index(node: Any, slices: Dict[str, slice]) -> Any:
    if isinstance(node, gast.Name) and node.id in slices:
        return slices[node.id]
    sl = N.static_slice(node)
    if sl is not None:
        return sl
    ok, v = N._int_constant(node)
    if ok and v is not None:
        return v
    if isinstance(node, gast.Constant) and isinstance(node.value, str):
        return node.value
    raise _Abort


def _leaf_avals(aval: Any) -> list:
    kids = _children(aval)
    if kids is None:
        return [aval]
    return [a for _, c in kids for a in _leaf_avals(c)]


def _leaf_reads(place: _Place, root: str, at: Any, fresh: Callable[[str], str]) -> Optional[tuple]:
    """Statements reading every leaf of ``place`` (held by ``root``) by
    attribute and index, and the names they bind (``fresh`` names them), in
    flattening order; None where a child is not an attribute (a class computing
    its children)."""
    from ...primitives import registry

    getattr_p = registry.by_public("ad.getattr")
    getitem_p = registry.by_public("ad.getitem")
    stmts: List[Any] = []
    atoms: List[str] = []

    def walk(aval: Any, holder: str) -> bool:
        kids = _children(aval)
        if kids is None:
            atoms.append(holder)
            return True
        names = {j: a for a, j in aval.layout.items()} if isinstance(aval, ClassAval) else None
        for k, c in kids:
            name = fresh("leaf" if _children(c) is None else "part")
            if names is not None:
                if k not in names:
                    return False
                value = N.attr(N.name(holder), names[k])
                op = Op(
                    "prim",
                    prim=getattr_p,
                    bound={"x": N.name(holder), "name": N.const(names[k])},
                )
            else:
                value = N.call(getitem_p.public, [N.name(holder), N.const(k)])
                op = Op("prim", prim=getitem_p, bound={"x": N.name(holder), "idx": N.const(k)})
            st = N.copy_origin(N.assign(name, value), at)
            st.sj_op = op
            stmts.append(st)
            if not walk(c, name):
                return False
        return True

    return (stmts, atoms) if walk(place.aval, root) else None


def _materialize(s: Any, target: str, like: Any, atoms: list, dense: bool, fresh) -> list:
    """Statements that build ``target``, the cotangent of ``like`` whose leaves are
    ``atoms`` (None: zero): the leaf list and one ``ad.tree_unflatten_like``; where
    a leaf is missing or needs a broadcast or cast, ``ad.cotangent_like`` after it."""
    from ...primitives import registry

    lst = fresh("ct_leaves")
    elts = [N.const(None) if a is None else N.name(a) for a in atoms]
    pack = N.copy_origin(N.assign(lst, gast.List(elts=elts, ctx=gast.Load())), s)
    pack.sj_op = Op("pack", elts=[N.clone(e) for e in elts])
    unflat = registry.by_public("ad.tree_unflatten_like")
    tmp = target if dense else fresh("ct_tree")
    build = N.copy_origin(N.assign(tmp, N.call(unflat.public, [N.clone(like), N.name(lst)])), s)
    build.sj_op = Op("prim", prim=unflat, bound={"tree": N.clone(like), "leaves": N.name(lst)})
    out = [pack, build]
    if not dense:
        fill = registry.by_public("ad.cotangent_like")
        last = N.copy_origin(N.assign(target, N.call(fill.public, [N.name(tmp), N.clone(like)])), s)
        last.sj_op = Op("prim", prim=fill, bound={"ct": N.name(tmp), "x": N.clone(like)})
        out.append(last)
    return out
