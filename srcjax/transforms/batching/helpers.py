"""Small predicates the batching mixins share: user classes, ``range``
arguments, container skeletons, comparisons, builtin conversions."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import gast

from ...frontend import nodes as N
from ...primitives import registry
from .calls import _const_value


def _copy_bindings(fdef: Any) -> Dict[str, Optional[str]]:
    """``name -> other`` for names every binding of which is ``name = other``
    (a plain name), else ``name -> None``."""
    binds: Dict[str, Optional[str]] = {}
    targets = set()
    for node in gast.walk(fdef):
        if (
            isinstance(node, gast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)
        ):
            t, v = node.targets[0].id, node.value
            src = v.id if isinstance(v, gast.Name) else None
            if binds.get(t, src) != src:
                src = None
            binds[t] = src
            targets.add(id(node.targets[0]))
    for node in gast.walk(fdef):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            if id(node) not in targets:
                binds[node.id] = None  # a loop target, a tuple unpacking ...
    return binds


def _user_class(obj: Any) -> bool:
    """Whether ``obj`` is a class of the user's (not a builtin, NumPy or srcjax
    type, nor a class registered as a pytree, whose leaves are batched)."""
    if not isinstance(obj, type):
        return False
    from ...tree_util import _REGISTRY

    module = getattr(obj, "__module__", "") or ""
    if module == "builtins" or module.split(".")[0] in ("numpy", "srcjax"):
        return False
    return obj not in _REGISTRY


def _range_args(it: Any) -> Optional[List[Any]]:
    """``range``'s arguments (1 or 2 of them: no step), or None."""
    args = N.range_args(it)
    return list(args) if args is not None and len(args) <= 2 else None


#: the skeleton of a container whose items' structure is unknown (they are
#: taken for leaves, as for any container of unknown structure)
_SOME_TREE = ("tree", None)


def _item_skeleton(skel: Any, idx: Any) -> Any:
    """The structure of ``x[idx]`` for a container of structure ``skel``."""
    if not isinstance(skel, tuple):
        return None
    kind = skel[0]
    sl = N.static_slice(idx)
    if kind == "seq":
        if isinstance(idx, gast.Slice) or sl is not None:
            return skel
        return skel[1]
    if kind == "items" and sl is not None:  # l[1:3] of a list display: its items
        return ("items", tuple(skel[1][sl]))
    ok, val = _const_value(idx) if idx is not None else (False, None)
    if kind == "items" and ok and isinstance(val, int):
        try:
            return skel[1][val]
        except IndexError:
            return None
    if kind == "items" and not isinstance(idx, gast.Slice) and skel[1]:
        # an index known only at run time (a loop's): the items' common structure
        first = skel[1][0]
        if all(i == first for i in skel[1]):
            return first
    if kind in ("dict", "class") and ok:
        return dict(skel[1]).get(val)
    return None


def _compare_prim(op: Any):
    table = {
        gast.Lt: "jnp.less",
        gast.LtE: "jnp.less_equal",
        gast.Gt: "jnp.greater",
        gast.GtE: "jnp.greater_equal",
        gast.Eq: "jnp.equal",
        gast.NotEq: "jnp.not_equal",
    }
    name = table.get(type(op))
    return registry.by_public(name) if name else None


def _is_builtin_conversion(call: Any) -> bool:
    return isinstance(call.func, gast.Name) and call.func.id in ("float", "int", "bool", "complex")
