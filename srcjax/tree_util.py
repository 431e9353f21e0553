"""Pytrees: nested containers of arrays, with JAX's ``jax.tree_util`` API.

A *pytree* is a value built from registered container types (``tuple``,
``list``, ``dict``, ``collections.OrderedDict``, ``collections.defaultdict``,
namedtuples, ``None`` and any type passed to :func:`register_pytree_node`);
everything else is a *leaf*. :func:`tree_flatten` turns a pytree into a list of
leaves and a :class:`PyTreeDef` describing the containers, and
:func:`tree_unflatten` puts them back together.

The semantics follow JAX:

- ``dict`` children are ordered by sorted key, so ``{"b": 1, "a": 2}`` flattens
  to ``[2, 1]``; ``OrderedDict`` keeps insertion order;
- ``None`` is a container with no children (it has no leaves);
- subclasses of ``list``/``dict`` that are not registered are leaves, while any
  namedtuple is a container;
- :class:`PyTreeDef` objects compare by structure and are hashable, so they can
  be part of a cache key.

:func:`tree_flatten` is called on every ``grad`` call, so it is written for
speed: flattening a single array or float costs a couple of dictionary lookups.

The core (node kinds, registration, :class:`PyTreeDef`, flattening, key-path
entries) is :mod:`srcjax.pytree`; this module re-exports it and adds
reductions, transposition, key paths and :class:`Partial`. Inside transformed
code ``tree_unflatten`` is the primitive ``ad.tree_unflatten``
(:mod:`srcjax.primitives.unflatten`).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Iterable
from typing import Any

from . import _array, _spmd
from ._dict_order import sorted_keys as _sorted_keys  # noqa: F401  (api, jit_api read it here)

__all__ = [
    "Partial",
    "PyTreeDef",
    "all_leaves",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "tree_all",
    "tree_flatten",
    "tree_leaves_with_path",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "SequenceKey",
]


# the core (node kinds, registration, PyTreeDef, flattening): srcjax/pytree.py
# (private names of the core that srcjax reads from tree_util)
from .pytree import (  # noqa: F401
    _LEAF,
    _NONE,
    _NONE_DEF,
    _REGISTRY,
    DictKey,
    FlattenedIndexKey,
    GetAttrKey,
    PyTreeDef,
    SequenceKey,
    _jax_dict_order,
    _kind_of,
    _namedtuple_kind,
    keystr,
    register_dataclass,
    register_pytree_node,
    register_pytree_node_class,
    tree_flatten,
    tree_leaves,
    tree_map,
    tree_structure,
    tree_unflatten,
)

_NO_INITIALIZER = object()


def _initializer_given(initializer: Any) -> bool:
    """Whether ``tree_reduce`` got an initializer (a run-time test in
    transformed code: the sentinel is no constant a generated file can spell)."""
    return initializer is not _NO_INITIALIZER


_initializer_given.__srcjax_inactive__ = True  # type: ignore[attr-defined]


def tree_reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = _NO_INITIALIZER,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """``functools.reduce(function, leaves[, initializer])`` over the leaves of
    ``tree`` (``jax.tree_util.tree_reduce``, ``jax.tree.reduce``): left to right,
    in flattening order. Raises TypeError for a tree without leaves and no
    ``initializer``, as ``functools.reduce`` does.

    A plain loop, so a transformed function that calls it (``tree_reduce(
    operator.add, tree_map(jnp.sum, g))`` inside ``grad``) inlines it and
    differentiates through ``function``."""
    leaves = tree_leaves(tree, is_leaf)
    if not _initializer_given(initializer):
        if len(leaves) == 0:
            raise TypeError("reduce() of empty iterable with no initial value")
        acc = leaves[0]
        rest = leaves[1:]
    else:
        acc = initializer
        rest = leaves
    for x in rest:
        acc = function(acc, x)
    return acc


def tree_all(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True when every leaf is truthy."""
    return all(tree_leaves(tree, is_leaf))


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """True when every element of ``iterable`` is a leaf."""
    for x in iterable:
        if is_leaf is not None and is_leaf(x):
            continue
        if tree_structure(x, is_leaf) is not _LEAF:
            return False
    return True


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """True for the structure of a single leaf."""
    return treedef.kind is None


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The structures of the root's children."""
    return treedef.children()


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Turn an ``outer`` tree of ``inner`` trees into an ``inner`` tree of
    ``outer`` trees, e.g. a list of dicts into a dict of lists
    (``jax.tree_util.tree_transpose``, ``jax.tree.transpose``).

    ``inner_treedef`` None: the structure of the first outer leaf's subtree.
    Raises TypeError when ``pytree_to_transpose`` is not ``outer_treedef`` of
    ``inner_treedef`` subtrees (JAX checks the leaf count only; a subtree of
    another structure with as many leaves is an error here, not a silent
    reinterpretation)."""
    try:
        flat = outer_treedef.flatten_up_to(pytree_to_transpose)
        if inner_treedef is None:
            if not flat:
                raise ValueError("no outer leaves to infer inner_treedef from")
            inner_treedef = tree_structure(flat[0])
        inner_flat = [inner_treedef.flatten_up_to(sub) for sub in flat]
    except ValueError as e:
        raise TypeError(
            f"tree_transpose: the pytree is not {outer_treedef!r} of {inner_treedef!r} "
            f"subtrees: {e}"
        ) from None
    if inner_flat:
        columns = [list(col) for col in zip(*inner_flat)]
    else:
        columns = [[] for _ in range(inner_treedef.num_leaves)]
    subtrees = [outer_treedef.unflatten(col) for col in columns]
    return inner_treedef.unflatten(subtrees)


# --------------------------------------------------------------------------
# Key paths (the entry classes DictKey ... are srcjax/pytree.py's)
# --------------------------------------------------------------------------


def _flatten_with_path(tree, path, out, is_leaf):
    if is_leaf is not None and is_leaf(tree):
        out.append((path, tree))
        return _LEAF
    kind = _kind_of(tree)
    if kind is None:
        out.append((path, tree))
        return _LEAF
    if kind is _NONE:
        return _NONE_DEF
    children, aux = kind.flatten(tree)
    children = list(children)
    keys = kind.keys(tree, aux, len(children))
    defs = tuple(_flatten_with_path(c, path + (k,), out, is_leaf) for c, k in zip(children, keys))
    return PyTreeDef(kind, aux, defs)


def tree_flatten_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None):
    """Like :func:`tree_flatten`, but each leaf comes as ``(key_path, leaf)``."""
    out: list[tuple[tuple, Any]] = []
    treedef = _flatten_with_path(tree, (), out, is_leaf)
    return out, treedef


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Like :func:`tree_map`, but ``f`` receives the key path first."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf)
    others = [treedef.flatten_up_to(r) for r in rest]
    return treedef.unflatten([f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)])


def tree_leaves_with_path(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list:
    """The ``(key_path, leaf)`` pairs of :func:`tree_flatten_with_path`, without
    the treedef (``jax.tree_util.tree_leaves_with_path``)."""
    return tree_flatten_with_path(tree, is_leaf)[0]


class Partial(functools.partial):
    """``functools.partial`` that is a pytree (``jax.tree_util.Partial``): the
    bound positional and keyword arguments are its children, the function is
    static. So a function with bound arrays can be passed through ``jit``,
    ``grad`` or ``tree_map``; ``Partial(f)`` has no leaves at all.

    Calling it calls ``func(*args, *call_args, **keywords, **call_keywords)``;
    inside transformed code it is resolved as a ``functools.partial``."""

    def __new__(cls, func: Callable, *args: Any, **kw: Any):
        if not callable(func):
            raise TypeError(f"Partial expects a callable, got {type(func).__name__}")
        return super().__new__(cls, func, *args, **kw)


def _partial_flatten(p: Partial):
    return (p.args, p.keywords), p.func


def _partial_unflatten(func: Callable, children) -> Partial:
    args, keywords = children
    return Partial(func, *args, **keywords)


register_pytree_node(Partial, _partial_flatten, _partial_unflatten)


_spmd.tree_map = tree_map  # (pmap's collectives combine pytrees: srcjax/_spmd.py)

_array.HOOKS["pytree"] = sys.modules[__name__]  # (Arrays inside registered pytree classes)
_array.HOOKS["class_kinds"] = sys.modules["srcjax.pytree"].CLASS_KINDS  # (its walkers' test)
