"""srcjax/frontend/normalize/trees.py: tree_map (with is_leaf) and the other
tree_util functions expanded statically. Oracle: srcjax.tree_util run eagerly
on the same values (and plain Python for the structures)."""

import collections

import numpy as np
import pytest
from frontend_run import assert_same, normalized_text

import srcjax.numpy as jnp
from srcjax import tree_util

P = collections.namedtuple("P", ["w", "b"])


def tree_map_dict(params):
    return tree_util.tree_map(lambda v: v * 2.0, params)


def tree_map_two_trees(a, b):
    return tree_util.tree_map(lambda u, v: u - v, a, b)


def tree_map_is_leaf(tree):
    return tree_util.tree_map(lambda t: t[0] * 3.0, tree, is_leaf=lambda n: isinstance(n, tuple))


def leaves_and_structure(params):
    leaves = tree_util.tree_leaves(params)
    return [jnp.sum(v) for v in leaves]


def namedtuple_tree(p):
    q = tree_util.tree_map(lambda v: v + 1.0, p)
    return q.w * q.b


W = jnp.asarray(np.array([[1.0, 2.0], [3.0, 4.0]]))
B = jnp.asarray(np.array([0.5, -0.5]))


@pytest.mark.parametrize(
    "f, args",
    [
        (tree_map_dict, ({"w": W, "b": B},)),
        (tree_map_two_trees, ({"w": W, "b": B}, {"w": B, "b": B})),
        (tree_map_is_leaf, ({"x": (W, 1), "y": (B, 2)},)),
        (leaves_and_structure, ({"w": W, "b": [B, B]},)),
        (namedtuple_tree, (P(W, B),)),
    ],
    ids=lambda v: getattr(v, "__name__", ""),
)
def test_expanded_tree_functions_give_the_eager_values(f, args):
    assert_same(f, *args, kinds=None)


def test_tree_map_is_expanded_per_leaf():
    text = normalized_text(tree_map_dict)
    assert "tree_map(" not in text.split("\n", 1)[1]  # (the body: no call left)
