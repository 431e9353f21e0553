"""Static types of values the normalizer tracks: :func:`type_tree` (the
structure of an argument: containers, namedtuples, registered classes) and
the type of a constant, an attribute or an item of a typed value.
"""

from __future__ import annotations

from typing import Any

import gast

from .. import nodes as N


class ClassKind(str):
    """The kind ``"tree"`` of an argument that is an instance of a registered
    pytree class (or a container holding some), carrying its type tree: equal to
    ``"tree"`` for code that only asks that, but a different cache key per type
    tree, since the normalized code inlines those classes' methods."""

    types: Any

    def __new__(cls, types: Any) -> "ClassKind":
        obj = super().__new__(cls, "tree")
        obj.types = types
        return obj

    def __eq__(self, other: Any) -> bool:
        if isinstance(other, ClassKind):
            return self.types == other.types
        return str.__eq__(self, other)

    def __ne__(self, other: Any) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return hash(("tree", self.types))

    def __repr__(self) -> str:
        return f"ClassKind({self.types!r})"


def type_tree(x: Any, exact: bool = False) -> Any:
    """What the normalizer needs to know statically about an argument: the
    registered pytree classes in it, and where. ``("class", cls, ((attr, tree),
    ...), static_attribute_names, fns)``, ``("seq", tree)`` (every item alike), ``("items", trees)``,
    ``("dict", ((key, tree), ...))``; ``None`` when there is no class inside.
    A class's ``fns`` are its static callable attributes ``((name, fn), ...)``:
    calls of them are resolved to ``fn``, so ``fn`` is part of the key; its
    ``consts`` are its static str/int/bool/None attributes ``((name, value),
    ...)``, known while transforming (a table's key, an ``if`` test). A layer
    list's None slots are ``("none",)``, so ``layer is None`` is known too.
    ``exact`` (jit, whose key holds every list's length): lists of one class are
    ``("items", ...)`` too, so loops over them are unrolled as for mixed lists."""
    if isinstance(x, dict):
        subs = tuple((k, type_tree(v, exact)) for k, v in x.items())
        return ("dict", subs) if any(t is not None for _, t in subs) else None
    if isinstance(x, (list, tuple)):
        items = tuple(type_tree(v, exact) for v in x)
        if not any(t is not None for t in items):
            return None
        items = tuple(("none",) if v is None else t for v, t in zip(x, items))
        if hasattr(x, "_fields"):  # a namedtuple: state.model reads an item
            return ("items", items, tuple(x._fields))
        if not exact and all(t == items[0] for t in items):
            return ("seq", items[0])
        return ("items", items)
    from ...tree_util import _REGISTRY

    if x is None or type(x) not in _REGISTRY:
        return None
    attrs = getattr(x, "__dict__", None) or {}
    subs = []
    for a in sorted(attrs):
        t = type_tree(attrs[a], exact)
        if t is None and isinstance(attrs[a], (list, tuple)) and not attrs[a]:
            t = ("items", ())  # an empty layer list: a loop over it does nothing
        if t is not None:
            subs.append((a, t))
    from ...primitives.control import static_attrs

    static = static_attrs(x)
    fns = tuple((a, attrs[a]) for a in static if _static_callable(attrs[a]))
    consts = tuple((a, attrs[a]) for a in static if _static_constant(attrs[a]))
    return ("class", type(x), tuple(subs), static, fns, consts)


def _static_constant(v: Any) -> bool:
    """A static attribute whose value the normalizer may use (``ACTS[self.act]``,
    ``if self.use_bias:``): a str, int, bool or None, so part of the key."""
    return v is None or type(v) in (str, int, bool)


def _static_callable(v: Any) -> bool:
    """A static attribute whose calls (``self.act(y)``) are resolved statically:
    a function or a primitive (hashable, so it can be part of the key)."""
    if isinstance(v, type) or not callable(v):
        return False
    try:
        hash(v)
    except TypeError:
        return False
    return True


def _constant_type(status: str, obj: Any) -> Any:
    """The type tree of a closed-over or global value (read at transform time)."""
    from ...tree_util import _REGISTRY

    if status != "found" or not (type(obj) in _REGISTRY or isinstance(obj, (list, tuple, dict))):
        return None
    return type_tree(obj)


def _attr_type(ty: Any, name: Any) -> Any:
    if ty is None or not isinstance(name, gast.Constant):
        return None
    if ty[0] == "items" and len(ty) > 2 and name.value in ty[2]:
        return ty[1][ty[2].index(name.value)]  # a namedtuple's field
    if ty[0] != "class":
        return None
    return dict(ty[2]).get(name.value)


def _item_type(ty: Any, idx: Any) -> Any:
    if ty is None:
        return None
    sl = N.static_slice(idx)
    if ty[0] == "seq":
        if sl is not None:
            return ty  # a slice of layers is layers (`for layer in self.layers[:-1]`)
        return None if isinstance(idx, gast.Slice) else ty[1]
    if ty[0] == "items" and sl is not None:
        items = ty[1][sl]
        return ("items", items) if items else None
    if not isinstance(idx, gast.Constant):
        return None
    if ty[0] == "items" and isinstance(idx.value, int):
        try:
            return ty[1][idx.value]
        except IndexError:
            return None
    if ty[0] == "dict":
        try:
            return dict(ty[1]).get(idx.value)
        except TypeError:
            return None
    return None
