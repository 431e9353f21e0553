"""The pytree core (no primitives): node kinds and their registry
(:func:`register_pytree_node` and friends), :class:`PyTreeDef`, and
flattening (:func:`tree_flatten`, :func:`tree_leaves`, :func:`tree_structure`,
:func:`tree_unflatten`, :func:`tree_map`).

Semantics follow JAX's ``jax.tree_util`` (see :mod:`srcjax.tree_util`, the
public module, which re-exports these): ``dict`` children in sorted-key order,
``OrderedDict`` in insertion order, ``None`` a container without children,
unregistered ``list``/``dict`` subclasses leaves, any namedtuple a container.
:func:`tree_flatten` runs on every ``grad`` call, so it is written for speed:
flattening a single array or float costs a couple of dictionary lookups."""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable, Hashable, Iterable
from typing import Any

from ._dict_order import sorted_keys as _sorted_keys

# --------------------------------------------------------------------------
# Key paths
# --------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class DictKey:
    """Path entry for a dict child: ``["key"]``."""

    key: Hashable

    def __str__(self):
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True)
class SequenceKey:
    """Path entry for a list/tuple child: ``[index]``."""

    idx: int

    def __str__(self):
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True)
class GetAttrKey:
    """Path entry for a namedtuple/dataclass field: ``.name``."""

    name: str

    def __str__(self):
        return f".{self.name}"


@dataclasses.dataclass(frozen=True)
class FlattenedIndexKey:
    """Path entry for a child of a custom node: ``[<flat index>]``."""

    key: int

    def __str__(self):
        return f"[<flat index {self.key}>]"


def keystr(keys: tuple) -> str:
    """A key path as text, e.g. ``['params'][0].w``."""
    return "".join(str(k) for k in keys)


# --------------------------------------------------------------------------
# Node kinds
# --------------------------------------------------------------------------


class _NodeKind:
    """How one container type flattens and unflattens.

    ``flatten(node) -> (children, aux)`` where ``aux`` is hashable data that,
    together with the children, is enough to rebuild the node;
    ``unflatten(aux, children_tuple) -> node``; ``keys(node, aux, n_children)``
    gives one path entry per child (for :func:`tree_flatten_with_path` and
    error messages).
    """

    __slots__ = ("type", "flatten", "unflatten", "keys", "name")

    def __init__(self, type_, flatten, unflatten, keys, name):
        self.type = type_
        self.flatten = flatten
        self.unflatten = unflatten
        self.keys = keys
        self.name = name

    def __repr__(self):
        return f"<pytree node kind {self.name}>"


#: exact type -> _NodeKind.  A type missing from here is a leaf, except
#: namedtuple classes, which are added the first time they are seen.
_registry: dict[type, _NodeKind] = {}
#: The same dict, under the name srcjax internals use: ``type(x) in _REGISTRY``
#: tells a container from a leaf (namedtuple classes appear once flattened).
_REGISTRY = _registry
#: The registered classes that are no list, tuple or dict (subclass): exact type ->
#: _NodeKind, for the per-call walkers of jit's boundary (unwrap, key, unalias,
#: wrap), which test it before their isinstance chains (a model class is the
#: common registered node; a namedtuple or dict subclass keeps its own branch).
CLASS_KINDS: dict[type, _NodeKind] = {}


def _jax_dict_order(x: Any) -> Any:
    """``x`` (a transform's output) with every ``dict`` and ``defaultdict`` in it
    rebuilt in sorted key order, as JAX's outputs come back (they are rebuilt
    from the flattened tree: ``grad(f)({"w": w, "b": b})`` has keys b, w).
    Lists, tuples and namedtuples are rebuilt only around a dict that moved;
    OrderedDicts keep their order, registered classes are left as they are.
    Costs a type test for an array output."""
    t = type(x)
    if t is dict or t is collections.defaultdict:
        keys = list(x)
        order = _sorted_keys(x) if len(keys) > 1 else keys
        new = {k: _jax_dict_order(x[k]) for k in order}
        if list(order) == keys and all(new[k] is x[k] for k in keys):
            return x
        if t is dict:
            return new
        return collections.defaultdict(x.default_factory, new)
    if t is tuple or t is list or (isinstance(x, tuple) and hasattr(x, "_fields")):
        items = [_jax_dict_order(v) for v in x]
        if all(a is b for a, b in zip(items, x)):
            return x
        if t is list:
            return items
        return t(*items) if t is not tuple else tuple(items)
    return x


def _flatten_dict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], keys


def _unflatten_dict(keys, children):
    return dict(zip(keys, children))


def _flatten_ordered_dict(d):
    keys = tuple(d)
    return list(d.values()), keys


def _unflatten_ordered_dict(keys, children):
    return collections.OrderedDict(zip(keys, children))


def _flatten_defaultdict(d):
    keys = _sorted_keys(d)
    return [d[k] for k in keys], (d.default_factory, keys)


def _unflatten_defaultdict(aux, children):
    factory, keys = aux
    return collections.defaultdict(factory, zip(keys, children))


def _dict_keys(node, aux, n):
    return [DictKey(k) for k in aux]


def _defaultdict_keys(node, aux, n):
    return [DictKey(k) for k in aux[1]]


def _sequence_keys(node, aux, n):
    return [SequenceKey(i) for i in range(n)]


def _namedtuple_keys(node, aux, n):
    return [GetAttrKey(f) for f in type(node)._fields]


def _flat_index_keys(node, aux, n):
    return [FlattenedIndexKey(i) for i in range(n)]


def _no_keys(node, aux, n):
    return []


def _tuple_flatten(t):
    return t, None


def _tuple_unflatten(aux, children):
    return tuple(children)


def _list_flatten(xs):
    return xs, None


def _list_unflatten(aux, children):
    return list(children)


def _none_flatten(x):
    return (), None


def _none_unflatten(aux, children):
    return None


_TUPLE = _NodeKind(tuple, _tuple_flatten, _tuple_unflatten, _sequence_keys, "tuple")
_LIST = _NodeKind(list, _list_flatten, _list_unflatten, _sequence_keys, "list")
_DICT = _NodeKind(dict, _flatten_dict, _unflatten_dict, _dict_keys, "dict")
_NONE = _NodeKind(type(None), _none_flatten, _none_unflatten, _no_keys, "None")
_ORDERED_DICT = _NodeKind(
    collections.OrderedDict,
    _flatten_ordered_dict,
    _unflatten_ordered_dict,
    _dict_keys,
    "OrderedDict",
)
_DEFAULT_DICT = _NodeKind(
    collections.defaultdict,
    _flatten_defaultdict,
    _unflatten_defaultdict,
    _defaultdict_keys,
    "defaultdict",
)
for _kind in (_TUPLE, _LIST, _DICT, _NONE, _ORDERED_DICT, _DEFAULT_DICT):
    _registry[_kind.type] = _kind
del _kind


def _namedtuple_kind(cls) -> _NodeKind | None:
    """The node kind of a namedtuple class (registered on first sight), else None."""
    if not (issubclass(cls, tuple) and hasattr(cls, "_fields")):
        return None

    def unflatten(aux, children, _cls=cls):
        return _cls(*children)

    kind = _NodeKind(cls, _tuple_flatten, unflatten, _namedtuple_keys, "namedtuple")
    _registry[cls] = kind
    return kind


def register_pytree_node(
    nodetype: type,
    flatten_func: Callable[[Any], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], Any],
) -> None:
    """Make ``nodetype`` a pytree container.

    ``flatten_func(node)`` returns ``(children, aux_data)``; ``aux_data`` must be
    hashable and comparable (it becomes part of the :class:`PyTreeDef`).
    ``unflatten_func(aux_data, children)`` rebuilds the node; it receives the
    children as a tuple.
    """
    if not isinstance(nodetype, type):
        raise TypeError(f"register_pytree_node expects a type, got {nodetype!r}")
    if nodetype in _registry:
        raise ValueError(f"Duplicate pytree node type registration for {nodetype!r}")

    kind = _NodeKind(
        nodetype, flatten_func, unflatten_func, _flat_index_keys, nodetype.__qualname__
    )
    _registry[nodetype] = kind
    if not issubclass(nodetype, (tuple, list, dict)):
        CLASS_KINDS[nodetype] = kind


def register_pytree_node_class(cls: type) -> type:
    """Class decorator: register ``cls`` using its ``tree_flatten`` method and
    its ``tree_unflatten(aux_data, children)`` classmethod. Returns ``cls``."""
    register_pytree_node(cls, method_flatten, cls.tree_unflatten)
    return cls


def method_flatten(x: Any) -> Any:
    """The flatten function of a class registered by
    :func:`register_pytree_node_class` (jit's guard calls the method itself)."""
    return x.tree_flatten()


def register_dataclass(
    nodetype: type,
    data_fields: Iterable[str] | None = None,
    meta_fields: Iterable[str] | None = None,
) -> type:
    """Register a dataclass as a pytree: ``data_fields`` are children,
    ``meta_fields`` are static (part of the tree structure).

    Without field lists, fields declared with ``metadata={"static": True}`` are
    meta fields and all other ``init`` fields are data fields, as in JAX.
    Usable as a decorator.
    """
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError("register_dataclass without field lists needs a dataclass")
        fields = [f for f in dataclasses.fields(nodetype) if f.init]
        meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
        data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass: give both data_fields and meta_fields, or neither")
    data_fields = tuple(data_fields)
    meta_fields = tuple(meta_fields)

    def flatten(x):
        return [getattr(x, n) for n in data_fields], tuple(getattr(x, n) for n in meta_fields)

    def unflatten(meta, children):
        kwargs = dict(zip(meta_fields, meta))
        kwargs.update(zip(data_fields, children))
        return nodetype(**kwargs)

    register_pytree_node(nodetype, flatten, unflatten)
    _registry[nodetype].keys = lambda node, aux, n: [GetAttrKey(f) for f in data_fields]
    return nodetype


# --------------------------------------------------------------------------
# PyTreeDef
# --------------------------------------------------------------------------


class PyTreeDef:
    """The structure of a pytree: its containers, without the leaves.

    Immutable, comparable and hashable (hashing requires every container's aux
    data to be hashable, as in JAX). ``num_leaves`` and ``num_nodes`` count the
    leaves and all nodes (containers and leaves).
    """

    __slots__ = ("kind", "aux", "children_defs", "num_leaves", "num_nodes", "_hash")

    def __init__(self, kind: _NodeKind | None, aux: Any, children_defs: tuple):
        self.kind = kind  # None for a leaf
        self.aux = aux
        self.children_defs = children_defs
        if kind is None:
            self.num_leaves = 1
            self.num_nodes = 1
        else:
            n_leaves = 0
            n_nodes = 1
            for c in children_defs:
                n_leaves += c.num_leaves
                n_nodes += c.num_nodes
            self.num_leaves = n_leaves
            self.num_nodes = n_nodes
        self._hash = None

    # -- structure --------------------------------------------------------

    @property
    def node_type(self) -> type | None:
        """The container type at the root, or None for a leaf."""
        return None if self.kind is None else self.kind.type

    def node_data(self):
        """``(node_type, aux_data)`` of the root, or None for a leaf."""
        return None if self.kind is None else (self.kind.type, self.aux)

    @property
    def num_children(self) -> int:
        return len(self.children_defs)

    def children(self) -> list[PyTreeDef]:
        """The structures of the root's children."""
        return list(self.children_defs)

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Rebuild a pytree of this structure from ``leaves``."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            what = "Too few" if len(leaves) < self.num_leaves else "Too many"
            raise ValueError(
                f"{what} leaves for {self!r}: expected {self.num_leaves}, got {len(leaves)}"
            )
        if self.kind is None:
            return leaves[0]
        return _build(self, iter(leaves))

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """The subtrees of ``tree`` at this structure's leaf positions.

        ``self`` must be a prefix of ``tree``'s structure; raises ``ValueError``
        naming the first place where they differ.
        """
        out: list[Any] = []
        try:
            _flatten_up_to(self, tree, out)
        except _Mismatch as e:
            where = keystr(tuple(reversed(e.path))) or "the root"
            raise ValueError(f"pytree structure mismatch at {where}: {e.detail}") from None
        return out

    # -- comparison -------------------------------------------------------

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        if (
            self.kind is not other.kind
            or self.num_nodes != other.num_nodes
            or self.num_leaves != other.num_leaves
        ):
            return False
        if self.kind is None:
            return True
        if self.kind.type is not other.kind.type or self.children_defs != other.children_defs:
            return False
        try:
            return bool(self.aux == other.aux)
        except Exception:
            return self.aux is other.aux

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        h = self._hash
        if h is None:
            if self.kind is None:
                h = hash("srcjax.tree_util.leaf")
            else:
                h = hash((self.kind.type, self.aux, self.children_defs))
            self._hash = h
        return h

    def __repr__(self):
        return f"PyTreeDef({_repr_def(self)})"


_LEAF = PyTreeDef(None, None, ())
_NONE_DEF = PyTreeDef(_NONE, None, ())


def _repr_def(td: PyTreeDef) -> str:
    kind = td.kind
    if kind is None:
        return "*"
    kids = [_repr_def(c) for c in td.children_defs]
    if kind is _NONE:
        return "None"
    if kind is _TUPLE:
        if len(kids) == 1:
            return f"({kids[0]},)"
        return "(" + ", ".join(kids) + ")"
    if kind is _LIST:
        return "[" + ", ".join(kids) + "]"
    if kind is _DICT:
        return "{" + ", ".join(f"{k!r}: {v}" for k, v in zip(td.aux, kids)) + "}"
    if kind is _ORDERED_DICT:
        items = ", ".join(f"{k!r}: {v}" for k, v in zip(td.aux, kids))
        return "OrderedDict({" + items + "})"
    if kind is _DEFAULT_DICT:
        factory, keys = td.aux
        items = ", ".join(f"{k!r}: {v}" for k, v in zip(keys, kids))
        return f"defaultdict({factory!r}, {{{items}}})"
    if kind.name == "namedtuple":
        fields = ", ".join(f"{f}={v}" for f, v in zip(kind.type._fields, kids))
        return f"{kind.type.__name__}({fields})"
    return f"CustomNode({kind.type.__qualname__}[{td.aux!r}], [{', '.join(kids)}])"


def _build(td: PyTreeDef, it):
    kind = td.kind
    if kind is None:
        return next(it)
    return kind.unflatten(td.aux, tuple([_build(c, it) for c in td.children_defs]))


def _kind_of(tree) -> _NodeKind | None:
    cls = type(tree)
    kind = _registry.get(cls)
    if kind is None and isinstance(tree, tuple):
        kind = _namedtuple_kind(cls)
    return kind


class _Mismatch(Exception):
    """Internal: structure mismatch; ``path`` is filled in while unwinding."""

    def __init__(self, detail):
        super().__init__(detail)
        self.detail = detail
        self.path: list = []


def _flatten_up_to(td: PyTreeDef, tree, out: list):
    kind = td.kind
    if kind is None:
        out.append(tree)
        return
    actual = _kind_of(tree)
    if actual is not kind:
        raise _Mismatch(
            f"expected a {kind.name} node matching {_repr_def(td)}, "
            f"got {type(tree).__name__}: {tree!r:.200}"
        )
    children, aux = kind.flatten(tree)
    children = list(children)
    if len(children) != len(td.children_defs):
        raise _Mismatch(
            f"expected {_repr_def(td)} ({len(td.children_defs)} children), "
            f"got a {kind.name} with {len(children)} children"
        )
    if aux != td.aux:
        raise _Mismatch(f"expected {_repr_def(td)}, got a {kind.name} with aux data {aux!r:.200}")
    for i, (child, cdef) in enumerate(zip(children, td.children_defs)):
        try:
            _flatten_up_to(cdef, child, out)
        except _Mismatch as e:
            keys = kind.keys(tree, aux, len(children))
            e.path.append(keys[i] if i < len(keys) else FlattenedIndexKey(i))
            raise


# --------------------------------------------------------------------------
# Flattening
# --------------------------------------------------------------------------


def _flatten(tree, leaves: list, is_leaf) -> PyTreeDef:
    if is_leaf is not None and is_leaf(tree):
        leaves.append(tree)
        return _LEAF
    kind = _registry.get(type(tree))
    if kind is None:
        if isinstance(tree, tuple):
            kind = _namedtuple_kind(type(tree))
        if kind is None:
            leaves.append(tree)
            return _LEAF
    if kind is _NONE:
        return _NONE_DEF
    children, aux = kind.flatten(tree)
    return PyTreeDef(kind, aux, tuple([_flatten(c, leaves, is_leaf) for c in children]))


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """Flatten ``tree`` into ``(leaves, treedef)``.

    ``is_leaf(x)``, when given, is called on every subtree; where it returns
    True the subtree is taken as one leaf.
    """
    if is_leaf is None:
        # Fast path for the commonest argument: a single array or scalar.
        cls = type(tree)
        if cls not in _registry and not isinstance(tree, tuple):
            return [tree], _LEAF
    leaves: list[Any] = []
    treedef = _flatten(tree, leaves, is_leaf)
    return leaves, treedef


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree``, in flattening order."""
    leaves: list[Any] = []
    if is_leaf is None:
        cls = type(tree)
        if cls not in _registry and not isinstance(tree, tuple):
            return [tree]
        _leaves_into(tree, leaves)  # (no treedef built: called on every step)
        return leaves
    _flatten(tree, leaves, is_leaf)
    return leaves


def unflatten_like(tree: Any, leaves: Iterable[Any]) -> Any:
    """``tree_structure(tree).unflatten(leaves)`` in one walk of ``tree`` (no
    treedef built: ``tree_map``'s result inside transformed code, every step);
    the same error where the count of leaves differs."""
    leaves = list(leaves)
    it = iter(leaves)
    try:
        out = _rebuild(tree, it)
    except StopIteration:
        out = it = None
    if it is None or next(it, _END) is not _END:
        return tree_structure(tree).unflatten(leaves)  # (its ValueError: too few/many)
    return out


_END = object()


def _rebuild(tree, it):
    kind = _registry.get(type(tree))
    if kind is None:
        if isinstance(tree, tuple):
            kind = _namedtuple_kind(type(tree))
        if kind is None:
            return next(it)
    if kind is _NONE:
        return None
    children, aux = kind.flatten(tree)
    return kind.unflatten(aux, tuple([_rebuild(c, it) for c in children]))


def _leaves_into(tree, leaves: list) -> None:
    """:func:`_flatten` without ``is_leaf`` and without building the treedef."""
    kind = _registry.get(type(tree))
    if kind is None:
        if isinstance(tree, tuple):
            kind = _namedtuple_kind(type(tree))
        if kind is None:
            leaves.append(tree)
            return
    if kind is _NONE:
        return
    for c in kind.flatten(tree)[0]:
        _leaves_into(c, leaves)


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The :class:`PyTreeDef` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree with structure ``treedef`` from ``leaves``."""
    return treedef.unflatten(leaves)


def tree_map(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Apply ``f`` leafwise: ``f(leaf, *matching leaves of rest)``.

    Every tree in ``rest`` must have ``tree``'s structure, or have it as a
    prefix (the matching subtree is then passed to ``f`` whole), as in JAX.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if treedef is _LEAF:
        return f(tree, *rest)
    if not rest:
        return _build(treedef, iter([f(x) for x in leaves]))
    others = [treedef.flatten_up_to(r) for r in rest]
    return _build(treedef, iter([f(*xs) for xs in zip(leaves, *others)]))


# inside grad/jit/vmap, tree_map(f, tree, *rest) is expanded by the normalizer into
# a loop over the leaves that calls (and so transforms) f: see Normalizer.tree_map_call
tree_map.__srcjax_tree_map__ = True
