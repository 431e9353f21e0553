"""Pytree flattening with ``is_leaf`` inside transformed code.

``tree_map(f, tree, *rest, is_leaf=p)`` and ``tree_leaves(tree, is_leaf=p)``
inside a transformed function become (see ``Normalizer.tree_map_call``)::

    leaves = ad.leaves_upto(tree, tree, p)      # tree's leaves, `p` subtrees whole
    leaves_r = ad.leaves_upto(r, tree, p)       # each rest tree up to that structure
    mapped = [f(*items) for items in zip(...)]  # a loop the transforms see into
    out = ad.unflatten_upto(tree, mapped, p)    # back into tree's structure

``p`` is a function known when transforming (a global, or a lambda / nested
def reading no local variable), bound as a constant of the generated code; it
runs on the actual (sub)trees at run time, so the structure may differ between
calls. ``tree_flatten(t, is_leaf)`` is ``(ad.leaves_upto(t, t, p), ad.tree_def(t,
p))``, ``tree_structure`` is ``ad.tree_def`` and ``tree_unflatten(treedef,
leaves)`` is ``ad.unflatten_upto(treedef, leaves)`` (``like`` may be a treedef),
whose adjoint flattens the cotangent only down to the treedef's leaves (right
also for is_leaf treedefs, whose leaves are subtrees). Derivatives: ``leaves_upto`` in ``tree`` and ``unflatten_upto`` in
``leaves`` are each other's transposes (cotangent holes are zeros; the
structure always comes from ``like``). Under vmap the subtrees ``p`` sees are
the batched ones (a predicate on types or ``None`` behaves as per example; one
on shapes sees the batch axis).
"""

from __future__ import annotations

from typing import Any, Callable, List, Optional

from .control import fill_holes
from .registry import Primitive, register

__all__ = ["leaves_upto", "tree_def", "unflatten_upto"]


def _structure(like: Any, is_leaf: Optional[Callable[[Any], bool]]):
    from ..tree_util import PyTreeDef, tree_structure

    if isinstance(like, PyTreeDef):  # tree_unflatten(treedef, leaves)
        return like
    return tree_structure(like, is_leaf)


def _leaves_upto(tree: Any, like: Any, is_leaf: Optional[Callable[[Any], bool]] = None) -> List:
    """The subtrees of ``tree`` at the leaf positions of ``like`` flattened with
    ``is_leaf`` (jax.tree_util.tree_flatten(like, is_leaf)'s treedef
    ``.flatten_up_to(tree)``): a list, in flattening order. ``tree`` must have
    ``like``'s structure down to those positions (ValueError naming the first
    difference otherwise)."""
    return _structure(like, is_leaf).flatten_up_to(tree)


def _unflatten_upto(like: Any, leaves: Any, is_leaf: Optional[Callable[[Any], bool]] = None):
    """A pytree of the structure of ``like`` flattened with ``is_leaf``, with
    ``leaves`` (a list in flattening order; ``None``: a cotangent hole, every
    item ``None``) at its leaf positions."""
    td = _structure(like, is_leaf)
    items = [None] * td.num_leaves if leaves is None else list(leaves)
    return td.unflatten(items)


leaves_upto = register(Primitive("ad.leaves_upto", _leaves_upto, kind="internal"))
leaves_upto.returns_tree = True
unflatten_upto = register(Primitive("ad.unflatten_upto", _unflatten_upto, kind="internal"))
unflatten_upto.returns_tree = True


def _leaves_upto_vjp(g, ans, tree, like, is_leaf=None):
    return unflatten_upto(like, g, is_leaf)


def _leaves_upto_jvp(t, ans, tree, like, is_leaf=None):
    return leaves_upto(fill_holes(t, tree), like, is_leaf)


def _unflatten_upto_vjp(g, ans, like, leaves, is_leaf=None):
    return leaves_upto(fill_holes(g, ans), like, is_leaf)


def _unflatten_upto_jvp(t, ans, like, leaves, is_leaf=None):
    return unflatten_upto(like, t, is_leaf)


def _tree_def(tree: Any, is_leaf: Optional[Callable[[Any], bool]] = None):
    """``tree_structure(tree, is_leaf)`` (the treedef of ``tree_flatten``) inside
    transformed code: not differentiable, the same for every example under vmap."""
    return _structure(tree, is_leaf)


tree_def = register(Primitive("ad.tree_def", _tree_def, kind="internal", differentiable=False))
tree_def.facts(pure=True)
tree_def.def_batch(lambda c: (c.rebuild(), False))
tree_def.samples = lambda rng: []

leaves_upto.def_vjp(tree=_leaves_upto_vjp)
leaves_upto.def_jvp(tree=_leaves_upto_jvp)
unflatten_upto.def_vjp(leaves=_unflatten_upto_vjp)
unflatten_upto.def_jvp(leaves=_unflatten_upto_jvp)


def _leaves_upto_batch(c):
    # the structure comes from `like`; the items are `tree`'s, batched with it
    # (every leaf of a batched container is batched)
    return c.rebuild(), c.batched("tree")


def _unflatten_upto_batch(c):
    return c.rebuild(), c.batched("leaves")


leaves_upto.def_batch(_leaves_upto_batch)
unflatten_upto.def_batch(_unflatten_upto_batch)
# containers and a function argument: tested through tree_map/grad/vmap in
# tests/test_tree_map_is_leaf.py
leaves_upto.samples = lambda rng: []
unflatten_upto.samples = lambda rng: []
