"""srcjax.pytree, the pytree core below the primitives: flattening order and
key paths as JAX's (values recorded from jax 0.10.2), and srcjax.tree_util
re-exporting the very same objects (one registry)."""

from __future__ import annotations

import collections

import srcjax.tree_util as tu
from srcjax import pytree


def test_tree_util_reexports_the_core():
    for name in ("tree_flatten", "tree_unflatten", "tree_map", "PyTreeDef", "DictKey", "keystr"):
        assert getattr(tu, name) is getattr(pytree, name)
    assert tu._REGISTRY is pytree._registry


def test_flatten_order_and_round_trip():
    tree = {"b": [1, (2, None)], "a": collections.OrderedDict(z=3, y=4)}
    leaves, treedef = pytree.tree_flatten(tree)
    # jax.tree_util.tree_flatten: dict keys sorted, OrderedDict in insertion order
    assert leaves == [3, 4, 1, 2]
    assert treedef.num_leaves == 4
    assert pytree.tree_unflatten(treedef, leaves) == tree
    assert pytree.tree_map(lambda x: 10 * x, tree)["a"] == collections.OrderedDict(z=30, y=40)


def test_key_paths():
    paths = [tu.keystr(p) for p, _ in tu.tree_flatten_with_path({"w": [5, 6], "b": 7})[0]]
    # jax.tree_util.keystr of jax.tree_util.tree_flatten_with_path
    assert paths == ["['b']", "['w'][0]", "['w'][1]"]
