"""Lists known item by item in jit's straight-line code (for
:mod:`.pytrees`): a list display, ``[]`` grown by ``append``, a tree's leaves;
counts known from them; a ``for i in range(n)`` over such a list written out
trip by trip (:func:`_unroll`: ``tree_map`` over a tree of known structure);
dict displays of known leaves; and the lists left unread once their items are
known (:func:`_drop_unread_lists`)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import gast

from ..._dict_order import sorted_keys
from ...frontend import nodes as N
from ...frontend.normalize import Op
from .avals import Aval
from .common import _assigned, _is_assign, _new_assign, _subst_stmt

#: the most trips of a loop over a known list that :func:`_unroll` writes out, and
#: the most statements it writes for one loop
_UNROLL_TRIPS = 16
_UNROLL_STATEMENTS = 400

#: helpers that read a list argument without keeping or changing it
_LIST_READERS = frozenset(
    {
        "ad.getitem",
        "ad.seq_len",
        "ad.pysum",
        "ad.tree_unflatten_like",
        "ad.unflatten_upto",
        "ad.tree_leaves",
        "ad.leaves_upto",
        "ad.batch_broadcast",
    }
)


def _appended_to(s: Any) -> Optional[Tuple[str, Any]]:
    """``(list name, value node)`` for a statement ``lst.append(v)``, else None."""
    op = getattr(s, "sj_op", None)
    if isinstance(s, gast.Expr) and op is not None and op.kind == "append" and op.elts:
        return op.target, op.elts[0]
    return None


def _builtin_call(s: Any, name: str) -> bool:
    """Whether assignment ``s`` is ``t = name(args...)`` for the builtin ``name``
    (``len``, ``min``: the normalizer keeps them as calls without a rule)."""
    v = s.value
    return (
        s.sj_op.kind == "inactive"
        and isinstance(v, gast.Call)
        and isinstance(v.func, gast.Name)
        and v.func.id == name
        and not v.keywords
    )


def _only_arg(s: Any) -> Any:
    v = s.value
    if isinstance(v, gast.Call) and len(v.args) == 1 and not v.keywords:
        return v.args[0]
    return None


def _reads_list_only(s: Any) -> bool:
    """Whether statement ``s`` reads the lists it names without keeping or
    changing them (a list known item by item stays known after it)."""
    if _appended_to(s) is not None:
        return True  # (the value appended is checked by the caller)
    if not _is_assign(s):
        return False
    op = s.sj_op
    if op.kind == "prim":
        return op.prim.public in _LIST_READERS
    return _builtin_call(s, "len")


def _trip_count(s: Any, lengths: Dict[str, int]) -> Optional[int]:
    """The number of trips of ``for i in range(n)`` with ``n`` a known count."""
    if not isinstance(s, gast.For) or s.orelse or not isinstance(s.target, gast.Name):
        return None
    it = s.iter
    if not (
        isinstance(it, gast.Call)
        and isinstance(it.func, gast.Name)
        and it.func.id == "range"
        and len(it.args) == 1
        and not it.keywords
        and isinstance(it.args[0], gast.Name)
    ):
        return None
    return lengths.get(it.args[0].id)


def _unroll(loop: Any, trips: int, lists: Dict[str, List[str]], fresh) -> Optional[List[Any]]:
    """``for i in range(trips)`` over straight-line statements, written out trip by
    trip (None where the body is not that, or too long; see :func:`write_out`),
    and ``ad.getitem(lst, i)`` of a list known item by item is that item. A list
    the loop appends to is then known item by item, and a tree built from it has
    known leaves (``tree_map`` over known leaves)."""
    from ...primitives import registry

    body = loop.body
    var = loop.target.id
    if trips > _UNROLL_TRIPS or trips * (len(body) + 1) > _UNROLL_STATEMENTS:
        return None
    assigned = {var}
    for st in body:
        if _is_assign(st):
            assigned.add(st.targets[0].id)
            continue
        app = _appended_to(st)
        if app is None:
            return None  # (control flow, an effect, a method call: left as a loop)
    for st in body:
        app = _appended_to(st)
        if app is not None and app[0] in assigned:
            return None
    getitem_p = registry.by_public("ad.getitem")

    def known_item(c: Any, j: int) -> None:
        op = c.sj_op
        if op.kind == "prim" and op.prim is getitem_p:
            x, idx = op.bound.get("x"), op.bound.get("idx")
            if (
                isinstance(x, gast.Name)
                and x.id in lists
                and x.id not in assigned
                and isinstance(idx, gast.Name)
                and idx.id == var
                and j < len(lists[x.id])
                and lists[x.id][j] not in assigned
            ):
                atom = lists[x.id][j]
                c.value = N.name(atom)
                c.sj_op = Op("copy", elts=[N.name(atom)])

    return write_out(loop, range(trips), fresh, known_item)


def write_out(loop: Any, values: Any, fresh, item: Any = None) -> Optional[List[Any]]:
    """The body of ``for var in ...`` written out once for each of ``values`` (the
    loop variable's values, in order), or None where it cannot be. Each trip's
    names are new (a value pushed or appended stays a distinct name), ``var`` is
    the trip's constant, and after the last trip the loop's names are bound to
    their last values, as the loop leaves them. The body may hold assignments to
    one name, expression statements (``tape.append(v)``) and ``if`` statements
    whose test is known on every trip: a comparison of the loop variable with a
    constant (``cond = i != 0``, reverse mode's first-trip test), whose branch is
    written out in its place. ``item(stmt, value)`` may rewrite a copied
    statement before its names are substituted."""
    var = loop.target.id
    current: Dict[str, str] = {}
    out: List[Any] = []
    for j in values:
        iv = fresh(f"{var}_")
        out.append(_new_assign(iv, N.const(j), Op("copy", elts=[N.const(j)]), loop))
        current[var] = iv
        hook = (lambda c, j=j: item(c, j)) if item is not None else (lambda c: None)
        if not _write_trip(loop.body, {var: j}, current, out, fresh, hook):
            return None
    for name, new in current.items():
        out.append(_new_assign(name, N.name(new), Op("copy", elts=[N.name(new)]), loop))
    return out


def _write_trip(stmts, known, current, out, fresh, item) -> bool:
    """One trip of :func:`write_out` (``known``: the names of int or bool value
    known on this trip, by their names in the loop)."""
    for st in stmts:
        if isinstance(st, gast.Pass):
            continue
        if isinstance(st, gast.If):
            test = _known_value(st.test, known)
            if test is None:
                return False  # (a test on a value: left as a loop)
            if not _write_trip(st.body if test else st.orelse, known, current, out, fresh, item):
                return False
            continue
        if not (_is_assign(st) or (isinstance(st, gast.Expr) and hasattr(st, "sj_op"))):
            return False  # (a nested loop, a store into a container)
        c = N.clone(st)
        item(c)
        _subst_stmt(c, {k: N.name(v) for k, v in current.items()})
        if _is_assign(c):
            name = c.targets[0].id
            value = _known_value(st.value, known)
            known.pop(name, None)
            if value is not None:
                known[name] = value
                if isinstance(st.value, gast.Compare):  # (decided: a constant)
                    c.value, c.sj_op = N.const(value), Op("copy", elts=[N.const(value)])
            new = fresh(f"{name}_")
            c.targets[0].id = new
            current[name] = new
        out.append(c)
    return True


_COMPARE = {
    gast.Eq: lambda a, b: a == b,
    gast.NotEq: lambda a, b: a != b,
    gast.Lt: lambda a, b: a < b,
    gast.LtE: lambda a, b: a <= b,
    gast.Gt: lambda a, b: a > b,
    gast.GtE: lambda a, b: a >= b,
}


def _known_value(node: Any, known: Dict[str, Any]) -> Any:
    """The int or bool value of ``node`` from ``known`` and int constants (a name,
    a constant, one comparison, ``not``), else None."""
    if isinstance(node, gast.Name):
        return known.get(node.id)
    if isinstance(node, gast.Constant):
        return node.value if type(node.value) in (int, bool) else None
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
        v = _known_value(node.operand, known)
        return None if v is None else not v
    if isinstance(node, gast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        a = _known_value(node.left, known)
        b = _known_value(node.comparators[0], known)
        if a is None or b is None:
            return None
        return _COMPARE[type(node.ops[0])](a, b)
    return None


def _count_of(node: Any, lengths: Dict[str, int]) -> Optional[int]:
    """A count known now: an int constant or a name in ``lengths``."""
    if isinstance(node, gast.Name):
        return lengths.get(node.id)
    ok, v = N._int_constant(node)
    return v if ok and type(v) is int else None


def _drop_unread_lists(body: List[Any]) -> List[Any]:
    """``body`` without the lists that are built and appended to but never read
    (``tree_map``'s result lists once its tree is known leaf by leaf)."""
    while True:
        built_here: Dict[str, List[int]] = {}
        other_reads: set = set()
        for k, st in enumerate(body):
            app = _appended_to(st)
            if app is not None:
                built_here.setdefault(app[0], []).append(k)
                other_reads.update(
                    n.id
                    for e in app[1:]
                    for n in N.walk(e)
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
                )
                continue
            if _is_assign(st) and isinstance(st.value, gast.List) and not st.value.elts:
                built_here.setdefault(st.targets[0].id, []).append(k)
                continue
            other_reads.update(
                n.id
                for n in N.walk(st)
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)
            )
            other_reads.update(_assigned(st))  # (bound otherwise too: left alone)
        dead = {k for name, ks in built_here.items() if name not in other_reads for k in ks}
        if not dead:
            return body
        body = [st for k, st in enumerate(body) if k not in dead]


def _dict_display(aval: Any, leaves: List[str]) -> Any:
    """``{key: leaf, ...}`` for a plain dict of leaves (keys in JAX's order, as
    ``tree_unflatten`` builds it), else None."""
    if type(aval) is not dict:
        return None
    keys = sorted_keys(aval)
    if any(not isinstance(aval[k], Aval) for k in keys) or len(keys) != len(leaves):
        return None
    if not all(type(k) in (str, int) for k in keys):
        return None
    return gast.Dict(keys=[N.const(k) for k in keys], values=[N.name(a) for a in leaves])


def _display_aval(node: Any, avals: Dict[str, Any]) -> Optional[dict]:
    """The abstract value of a dict display ``{"k": name, ...}`` of arrays with
    known abstract values (string keys), else None."""
    out: dict = {}
    for k, v in zip(node.keys, node.values):
        if not (isinstance(k, gast.Constant) and type(k.value) is str):
            return None
        if not isinstance(v, gast.Name) or not isinstance(avals.get(v.id), Aval):
            return None
        if k.value in out:
            return None
        out[k.value] = avals[v.id]
    return out


def _appended_later(body: List[Any], s: Any, name: str) -> bool:
    """Whether list ``name`` may change after statement ``s`` (an ``append`` to it
    or a new binding anywhere after)."""
    after = False
    for st in body:
        if st is s:
            after = True
            continue
        if not after:
            continue
        for node in N.walk(st):
            if (
                isinstance(node, gast.Name)
                and node.id == name
                and not isinstance(node.ctx, gast.Load)
            ):
                return True
            if (
                isinstance(node, gast.Attribute)
                and isinstance(node.value, gast.Name)
                and node.value.id == name
            ):
                return True  # (.append, .pop, .extend ...)
    return False
