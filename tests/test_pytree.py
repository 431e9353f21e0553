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


def test_tree_leaves_without_a_treedef_keeps_the_order():
    # (tree_leaves walks without building the treedef since session 17: the same
    # leaves as tree_flatten's, recorded from jax.tree_util.tree_leaves)
    point = collections.namedtuple("Point", "x y")
    tree = {"b": [1, (2, None)], "a": collections.OrderedDict(z=3, y=4), "c": point(5, [6])}
    assert pytree.tree_leaves(tree) == [3, 4, 1, 2, 5, 6]
    assert pytree.tree_leaves(tree) == pytree.tree_flatten(tree)[0]
    assert pytree.tree_leaves(None) == [] and pytree.tree_leaves([None, ()]) == []


def test_index_adjoint_of_a_dict_puts_the_cotangent_in_place():
    import numpy as np

    from srcjax.primitives.ad.indexing import _index_adjoint

    x = {"w": np.ones((2, 2), np.float32), "b": np.ones(2, np.float32), "s": 3.0}
    out = _index_adjoint(np.full(2, 5.0, np.float32), x, "b")
    assert list(out) == ["w", "b", "s"]  # (x's order, as before: the keys kept in place)
    np.testing.assert_array_equal(out["b"], [5.0, 5.0])
    np.testing.assert_array_equal(out["w"], np.zeros((2, 2), np.float32))
    assert out["w"].dtype == np.float32 and out["s"] == 0.0
    new = _index_adjoint(1.0, x, "new")  # (a key x lacks: added last)
    assert list(new) == ["w", "b", "s", "new"] and new["new"] == 1.0


def test_unflatten_like_is_unflatten_of_the_structure():
    import pytest

    point = collections.namedtuple("Point", "x y")
    tree = {"b": [1, (2, None)], "a": collections.OrderedDict(z=3, y=4), "c": point(5, [6])}
    leaves = [30, 40, 10, 20, 50, 60]
    got = pytree.unflatten_like(tree, leaves)
    assert got == pytree.tree_structure(tree).unflatten(leaves)
    assert got == {
        "b": [10, (20, None)],
        "a": collections.OrderedDict(z=30, y=40),
        "c": point(50, [60]),
    }
    assert type(got["a"]) is collections.OrderedDict and type(got["c"]) is point
    assert pytree.unflatten_like(7, iter([8])) == 8
    for bad in (leaves[:-1], leaves + [70]):
        with pytest.raises(ValueError) as want:
            pytree.tree_structure(tree).unflatten(bad)
        with pytest.raises(ValueError, match="leaves for") as e:
            pytree.unflatten_like(tree, bad)
        assert str(e.value) == str(want.value)
