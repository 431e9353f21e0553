"""``tree_unflatten`` inside transformed code: the primitive ``ad.tree_unflatten``.

Eager calls of :func:`srcjax.tree_util.tree_unflatten` (also
``srcjax.tree.unflatten``) stay the plain function; inside a transformed
function the call resolves to this primitive (an alias of the function), which
is differentiable in ``leaves`` (the adjoint is the cotangent tree's leaves,
holes filled with zeros: ``ad.tree_leaves_dense``) and batched leaf by leaf.
(It lives here, in the primitives layer, so that the pytree layer below
imports no primitive.)
"""

from __future__ import annotations

from typing import Any, Iterable

from ..tree_util import PyTreeDef, tree_unflatten
from .control import tree_leaves_dense
from .registry import Primitive, alias, register

__all__ = ["tree_unflatten_p"]


def _unflatten_impl(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """``tree_unflatten`` as the primitive ``ad.tree_unflatten``."""
    return treedef.unflatten(leaves)


def _unflatten_vjp(g, ans):
    return tree_leaves_dense(g, ans)


def _unflatten_jvp(t, ans, treedef):
    return tree_unflatten_p(treedef, t)


def _unflatten_batch(c):
    if c.batched("treedef"):
        return None
    return c.rebuild()  # a batched leaf list: every leaf carries the batch axis


tree_unflatten_p = register(Primitive("ad.tree_unflatten", _unflatten_impl, kind="internal"))
tree_unflatten_p.returns_tree = True
tree_unflatten_p.def_vjp(leaves=_unflatten_vjp)
tree_unflatten_p.def_jvp(leaves=_unflatten_jvp)
tree_unflatten_p.def_batch(_unflatten_batch)
tree_unflatten_p.samples = lambda rng: []  # containers: tests/test_flatten_util.py
alias(tree_unflatten_p, tree_unflatten)
