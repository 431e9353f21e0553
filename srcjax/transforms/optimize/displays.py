"""Trees of a plain known structure built by displays (:func:`structure_displays`).

:mod:`.pytrees` builds a cotangent of a known structure from its leaves with
``t = ad.unflatten_upto(treedef, leaves, None)``, ``treedef = ad.tree_def(p,
None)`` of the parameter ``p`` it has the structure of: a walk of ``p`` and
one of the treedef on every call (R1's gradient of three ``(w, b)`` layers:
~23 us a step). Where that structure is lists, tuples and dicts only (no named
tuple, no registered class, no ``None``), the same tree is nested displays,
``t = [(l0, l1), (l2, l3)]``: the containers ``unflatten_upto`` makes, of the
same types, dict keys in JAX's order. Run last among jit's passes (a display
would let :mod:`.pytrees` write out the update loop that reads the tree,
which then reuses no gradient buffer), and never on a returned tree (the
boundary builds those, :mod:`.flat_results`).
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import gast

from ..._dict_order import sorted_keys
from ...frontend import nodes as N
from ...frontend.normalize import Op
from .avals import Aval
from .common import _is_assign, _new_assign


def structure_displays(fdef: Any, params: Dict[str, Any], fresh) -> bool:
    """Replace each top-level ``t = ad.unflatten_upto(td, leaves, None)`` of a plain
    structure by displays (see the module); returns whether anything changed."""
    body = fdef.body
    if not any(_prim_of(s) == "ad.unflatten_upto" for s in body):
        return False
    stores: Dict[str, int] = {}
    for n in N.walk(fdef):
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            stores[n.id] = stores.get(n.id, 0) + 1
    returned = {
        n.id
        for r in N.walk(fdef)
        if isinstance(r, gast.Return)
        for n in N.walk(r)
        if isinstance(n, gast.Name)
    }
    treedefs: Dict[str, Any] = {}  # a treedef's name -> its parameter's structure
    displays: Dict[str, List[Any]] = {}  # a list display's name -> its items
    out: List[Any] = []
    changed = False
    for s in body:
        prim = _prim_of(s)
        if _is_assign(s) and stores.get(s.targets[0].id) == 1:
            t = s.targets[0].id
            b = s.sj_op.bound
            if prim == "ad.tree_def" and _none(b.get("is_leaf")):
                p = b.get("tree")
                if isinstance(p, gast.Name) and p.id in params and p.id not in stores:
                    if _plain(params[p.id]):
                        treedefs[t] = params[p.id]
            elif s.sj_op.kind == "pack" and isinstance(s.value, gast.List):
                displays[t] = list(s.value.elts)
            elif prim == "ad.unflatten_upto" and t not in returned and _none(b.get("is_leaf")):
                like, leaves = b.get("like"), b.get("leaves")
                shape = treedefs.get(like.id) if isinstance(like, gast.Name) else None
                items = displays.get(leaves.id) if isinstance(leaves, gast.Name) else None
                if shape is not None and items is not None and len(items) == _count(shape):
                    out.extend(_build(shape, list(items), t, s, fresh))
                    changed = True
                    continue
        out.append(s)
    if not changed:
        return False
    read = {n.id for n in N.walk(gast.Module(body=out, type_ignores=[])) if _load(n)}
    fdef.body = [
        s
        for s in out
        if not (
            _prim_of(s) == "ad.tree_def"
            and s.targets[0].id in treedefs
            and s.targets[0].id not in read
        )
    ]
    return True


def _load(n: Any) -> bool:
    return isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)


def _prim_of(s: Any) -> Optional[str]:
    op = getattr(s, "sj_op", None)
    return op.prim.public if op is not None and op.kind == "prim" else None


def _none(node: Any) -> bool:
    return isinstance(node, gast.Constant) and node.value is None


def _plain(aval: Any) -> bool:
    """A structure of lists, tuples and dicts (exactly those types, dict keys
    strings or ints) with array leaves."""
    if isinstance(aval, Aval):
        return True
    if type(aval) in (list, tuple):
        return all(_plain(a) for a in aval)
    if type(aval) is dict:
        return all(type(k) in (str, int) for k in aval) and all(_plain(a) for a in aval.values())
    return False


def _count(aval: Any) -> int:
    if isinstance(aval, Aval):
        return 1
    kids = aval.values() if type(aval) is dict else aval
    return sum(_count(a) for a in kids)


def _build(aval: Any, leaves: List[Any], target: str, like: Any, fresh) -> List[Any]:
    """Statements binding ``target`` to the display of ``aval`` over ``leaves``
    (atoms, consumed in flattening order): inner containers first."""
    stmts: List[Any] = []

    def display(a: Any, name: str) -> None:
        if type(a) is dict:
            keys = sorted_keys(a)
            kids = [a[k] for k in keys]
        else:
            keys, kids = None, list(a)
        elts = []
        for kid in kids:
            if isinstance(kid, Aval):
                elts.append(N.clone(leaves.pop(0)))
            else:
                inner = fresh(f"{target}_part")
                display(kid, inner)
                elts.append(N.name(inner))
        if keys is not None:
            value = gast.Dict(keys=[N.const(k) for k in keys], values=elts)
        elif type(a) is tuple:
            value = gast.Tuple(elts=elts, ctx=gast.Load())
        else:
            value = gast.List(elts=elts, ctx=gast.Load())
        op = Op("pack", elts=[N.clone(e) for e in elts])
        stmts.append(_new_assign(name, value, op, like))

    display(aval, target)
    return stmts
