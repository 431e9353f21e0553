"""Tests for srcjax.tree_util (JAX's pytree API)."""

import collections
import dataclasses

import numpy as np
import pytest

from srcjax import tree_util as tu

Point = collections.namedtuple("Point", ["x", "y"])


@tu.register_pytree_node_class
class Box:
    """A registered class with aux data (a name) and two children."""

    def __init__(self, name, a, b):
        self.name, self.a, self.b = name, a, b

    def tree_flatten(self):
        return (self.a, self.b), self.name

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(aux, *children)

    def __eq__(self, other):
        return type(other) is Box and (self.name, self.a, self.b) == (other.name, other.a, other.b)


class Pair:
    def __init__(self, first, second):
        self.first, self.second = first, second


tu.register_pytree_node(
    Pair,
    lambda p: ([p.first, p.second], None),
    lambda aux, children: Pair(*children),
)


# -- flatten / unflatten ------------------------------------------------------


def test_dict_keys_are_sorted():
    leaves, treedef = tu.tree_flatten({"b": 1, "a": 2, "c": 3})
    assert leaves == [2, 1, 3]
    assert tu.tree_unflatten(treedef, [20, 10, 30]) == {"a": 20, "b": 10, "c": 30}
    assert tu.tree_structure({"b": 0, "a": 0}) == tu.tree_structure({"a": 0, "b": 0})


def test_ordered_dict_keeps_insertion_order():
    od = collections.OrderedDict([("z", 1), ("a", 2)])
    leaves, treedef = tu.tree_flatten(od)
    assert leaves == [1, 2]
    back = tu.tree_unflatten(treedef, leaves)
    assert type(back) is collections.OrderedDict and list(back) == ["z", "a"]
    assert treedef != tu.tree_structure({"z": 1, "a": 2})


def test_defaultdict_roundtrip():
    dd = collections.defaultdict(list, {"b": 1, "a": 2})
    leaves, treedef = tu.tree_flatten(dd)
    assert leaves == [2, 1]
    back = tu.tree_unflatten(treedef, leaves)
    assert type(back) is collections.defaultdict and back.default_factory is list
    assert back == dd


def test_none_has_no_leaves():
    leaves, treedef = tu.tree_flatten(None)
    assert leaves == [] and treedef.num_leaves == 0
    assert tu.tree_unflatten(treedef, []) is None
    assert tu.tree_leaves([None, 1, (None, 2)]) == [1, 2]
    assert tu.tree_map(lambda x: x + 1, {"a": None, "b": 1}) == {"a": None, "b": 2}


def test_nested_roundtrip_and_types():
    x = np.arange(3.0)
    tree = {"w": [x, (1.0, Point(2, 3))], "b": None, "e": ()}
    leaves, treedef = tu.tree_flatten(tree)
    assert treedef.num_leaves == len(leaves) == 4
    assert leaves[0] is x
    back = tu.tree_unflatten(treedef, leaves)
    assert type(back["w"]) is list and type(back["w"][1]) is tuple
    assert type(back["w"][1][1]) is Point
    assert back["b"] is None and back["e"] == ()
    assert back["w"][0] is x


def test_single_leaf():
    x = np.ones((2, 2), np.float32)
    leaves, treedef = tu.tree_flatten(x)
    assert leaves == [x] or leaves[0] is x
    assert treedef.num_leaves == 1 and tu.treedef_is_leaf(treedef)
    assert tu.tree_unflatten(treedef, [5]) == 5
    assert tu.tree_flatten(1.0)[1] == treedef


def test_unregistered_subclasses_are_leaves():
    class MyList(list):
        pass

    class MyDict(dict):
        pass

    assert tu.tree_leaves(MyList([1, 2])) == [MyList([1, 2])]
    assert tu.tree_leaves(MyDict(a=1)) == [MyDict(a=1)]
    # ...but any namedtuple is a node.
    assert tu.tree_leaves(Point(1, [2, 3])) == [1, 2, 3]


def test_namedtuple_structure_distinguishes_type():
    Other = collections.namedtuple("Other", ["x", "y"])
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure(Other(1, 2))
    assert tu.tree_structure(Point(1, 2)) != tu.tree_structure((1, 2))
    assert tu.tree_structure(Point(1, 2)) == tu.tree_structure(Point(3, 4))


def test_registered_class():
    box = Box("k", np.float64(1.0), [2.0, 3.0])
    leaves, treedef = tu.tree_flatten(box)
    assert leaves == [1.0, 2.0, 3.0]
    back = tu.tree_unflatten(treedef, [4.0, 5.0, 6.0])
    assert back == Box("k", 4.0, [5.0, 6.0])
    # aux data is part of the structure
    assert tu.tree_structure(Box("k", 0, 0)) != tu.tree_structure(Box("other", 0, 0))
    assert "Box" in repr(tu.tree_structure(Box("k", 0, 0)))


def test_register_pytree_node_function_form():
    leaves, treedef = tu.tree_flatten(Pair(1, Pair(2, 3)))
    assert leaves == [1, 2, 3]
    p = tu.tree_unflatten(treedef, [7, 8, 9])
    assert (p.first, p.second.first, p.second.second) == (7, 8, 9)


def test_duplicate_registration_rejected():
    with pytest.raises(ValueError):
        tu.register_pytree_node(Pair, lambda p: ((), None), lambda a, c: Pair(0, 0))
    with pytest.raises(ValueError):
        tu.register_pytree_node(list, lambda p: ((), None), lambda a, c: [])


def test_register_dataclass():
    @dataclasses.dataclass
    class Layer:
        w: object
        b: object
        act: str = dataclasses.field(default="tanh", metadata={"static": True})

    tu.register_dataclass(Layer)
    leaves, treedef = tu.tree_flatten(Layer(1.0, 2.0, "relu"))
    assert leaves == [1.0, 2.0]
    back = tu.tree_unflatten(treedef, [3.0, 4.0])
    assert back == Layer(3.0, 4.0, "relu")
    assert treedef != tu.tree_structure(Layer(1.0, 2.0, "tanh"))


def test_is_leaf():
    tree = {"a": (1, 2), "b": [3, (4, 5)]}
    leaves = tu.tree_leaves(tree, is_leaf=lambda x: isinstance(x, tuple))
    assert leaves == [(1, 2), 3, (4, 5)]
    out = tu.tree_map(
        lambda t: sum(t) if isinstance(t, tuple) else -t,
        tree,
        is_leaf=lambda x: isinstance(x, tuple),
    )
    assert out == {"a": 3, "b": [-3, 9]}


def test_is_leaf_sees_none():
    seen = []
    tu.tree_leaves([None, 1], is_leaf=lambda x: seen.append(x) or False)
    assert None in seen
    assert tu.tree_leaves([None, 1], is_leaf=lambda x: x is None) == [None, 1]


def test_unflatten_wrong_leaf_count():
    treedef = tu.tree_structure([1, (2, 3)])
    with pytest.raises(ValueError, match="Too few"):
        tu.tree_unflatten(treedef, [1, 2])
    with pytest.raises(ValueError, match="Too many"):
        tu.tree_unflatten(treedef, [1, 2, 3, 4])


def test_unflatten_accepts_any_iterable():
    treedef = tu.tree_structure({"a": 0, "b": [0, 0]})
    assert tu.tree_unflatten(treedef, iter([1, 2, 3])) == {"a": 1, "b": [2, 3]}
    assert treedef.unflatten(x for x in [1, 2, 3]) == {"a": 1, "b": [2, 3]}


def test_mixed_key_types_are_deterministic():
    a = tu.tree_structure({1: 0, "a": 0})
    b = tu.tree_structure({"a": 0, 1: 0})
    assert a == b and hash(a) == hash(b)


# -- PyTreeDef -----------------------------------------------------------------


def test_treedef_equality_and_hash_as_cache_key():
    t1 = tu.tree_structure({"w": [np.zeros(2), 1.0], "b": (None, 2)})
    t2 = tu.tree_structure({"b": (None, 7), "w": [3, np.ones(5)]})
    t3 = tu.tree_structure({"w": [0, 0, 0], "b": (None, 2)})
    assert t1 == t2 and hash(t1) == hash(t2)
    assert t1 != t3
    cache = {(t1, "float32"): "hit"}
    assert cache[(t2, "float32")] == "hit"
    assert (t3, "float32") not in cache


def test_treedef_properties():
    treedef = tu.tree_structure({"a": [1, 2], "b": None, "c": 3})
    assert treedef.num_leaves == 3
    # dict, list, 2 leaves, None, leaf
    assert treedef.num_nodes == 6
    kids = tu.treedef_children(treedef)
    assert [k.num_leaves for k in kids] == [2, 0, 1]
    assert treedef.node_type is dict
    assert not tu.treedef_is_leaf(treedef)


def test_treedef_repr():
    treedef = tu.tree_structure({"a": [1, (2,)], "b": None, "c": Point(1, 2)})
    assert repr(treedef) == "PyTreeDef({'a': [*, (*,)], 'b': None, 'c': Point(x=*, y=*)})"
    assert repr(tu.tree_structure(1.0)) == "PyTreeDef(*)"
    assert repr(tu.tree_structure(None)) == "PyTreeDef(None)"
    assert repr(tu.tree_structure((1, 2))) == "PyTreeDef((*, *))"


# -- tree_map and friends -----------------------------------------------------


def test_tree_map_single_and_multiple_trees():
    a = {"x": 1.0, "y": [2.0, 3.0]}
    b = {"x": 10.0, "y": [20.0, 30.0]}
    assert tu.tree_map(lambda v: v * 2, a) == {"x": 2.0, "y": [4.0, 6.0]}
    assert tu.tree_map(lambda u, v: u + v, a, b) == {"x": 11.0, "y": [22.0, 33.0]}
    assert tu.tree_map(lambda u, v, w: u + v + w, a, b, b) == {"x": 21.0, "y": [42.0, 63.0]}


def test_tree_map_on_leaf():
    assert tu.tree_map(lambda v: v + 1, 1.0) == 2.0
    assert tu.tree_map(lambda u, v: u + v, 1.0, 2.0) == 3.0


def test_tree_map_prefix_tree():
    # the first tree's structure may be a prefix of the others'
    out = tu.tree_map(lambda s, sub: (s, sub), {"a": 1, "b": 2}, {"a": [3, 4], "b": (5,)})
    assert out == {"a": (1, [3, 4]), "b": (2, (5,))}


def test_tree_map_structure_mismatch_names_path():
    with pytest.raises(ValueError, match=r"\['b'\]\[1\]"):
        tu.tree_map(lambda u, v: u, {"a": 1, "b": [1, (2, 3)]}, {"a": 1, "b": [1, (2,)]})
    with pytest.raises(ValueError):
        tu.tree_map(lambda u, v: u, {"a": 1}, {"b": 1})
    with pytest.raises(ValueError):
        tu.tree_map(lambda u, v: u, [1, 2], (1, 2))
    with pytest.raises(ValueError):
        tu.tree_map(lambda u, v: u, [None], [1])


def test_tree_map_preserves_numpy_arrays():
    params = {"w": np.ones((2, 3)), "b": np.zeros(3)}
    grads = {"w": np.full((2, 3), 0.5), "b": np.ones(3)}
    new = tu.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    np.testing.assert_allclose(new["w"], 0.95)
    np.testing.assert_allclose(new["b"], -0.1)


def test_reduce_all_transpose():
    assert tu.tree_reduce(lambda a, b: a + b, {"a": 1, "b": [2, 3]}) == 6
    assert tu.tree_reduce(lambda a, b: a + b, [], 0) == 0
    assert tu.tree_all([True, {"a": 1}])
    assert not tu.tree_all([True, {"a": 0}])
    outer = tu.tree_structure([0, 0])
    inner = tu.tree_structure({"a": 0, "b": 0})
    assert tu.tree_transpose(outer, inner, [{"a": 1, "b": 2}, {"a": 3, "b": 4}]) == {
        "a": [1, 3],
        "b": [2, 4],
    }
    assert tu.all_leaves([1, np.ones(2)]) and not tu.all_leaves([1, [2]])


def test_flatten_with_path():
    pairs, treedef = tu.tree_flatten_with_path({"a": [1, Point(2, 3)], "b": None})
    assert [tu.keystr(p) for p, _ in pairs] == ["['a'][0]", "['a'][1].x", "['a'][1].y"]
    assert [v for _, v in pairs] == [1, 2, 3]
    assert treedef == tu.tree_structure({"a": [0, Point(0, 0)], "b": None})
    out = tu.tree_map_with_path(lambda p, v: tu.keystr(p), {"x": (1, 2)})
    assert out == {"x": ("['x'][0]", "['x'][1]")}


def test_transform_outputs_hold_dicts_in_sorted_key_order_as_jax():
    """JAX rebuilds outputs from the flattened tree, so their dicts (and
    defaultdicts) come back with sorted keys; OrderedDicts keep their order.
    Expected key orders recorded from jax 0.10.2 (session 6 known gap, user J)."""
    import srcjax
    import srcjax.numpy as jnp

    p = {"w": np.float32(1.0), "b": np.float32(2.0), "a": {"z": np.float32(1.0), "c": 3.0}}

    def f(p):
        return p["w"] * p["b"] + p["a"]["z"] * p["a"]["c"]

    g = srcjax.grad(f)(p)
    assert list(g) == ["a", "b", "w"] and list(g["a"]) == ["c", "z"]
    assert float(g["w"]) == 2.0 and float(g["a"]["z"]) == 3.0
    assert list(srcjax.value_and_grad(f)(p)[1]) == ["a", "b", "w"]
    assert list(srcjax.jit(lambda p: p)(p)) == ["a", "b", "w"]
    assert list(srcjax.jit(lambda p: {"w": p["w"], "b": p["b"]})(p)) == ["b", "w"]
    v = srcjax.vmap(lambda q: {"w": q * 2, "b": q})(np.ones(2, np.float32))
    assert list(v) == ["b", "w"]
    np.testing.assert_array_equal(v["w"], [2.0, 2.0])
    jac = srcjax.jacrev(lambda q: {"y": q["w"] * q["b"], "x": q["b"]})(p)
    assert list(jac) == ["x", "y"] and list(jac["y"]) == ["a", "b", "w"]
    assert float(jac["y"]["w"]) == 2.0
    out, _ = srcjax.jvp(lambda q: {"w": q, "b": 2 * q}, (np.float32(1.0),), (np.float32(1.0),))
    assert list(out) == ["b", "w"]
    assert list(srcjax.vjp(lambda q: {"w": q, "b": jnp.sin(q)}, np.float32(1.0))[0]) == ["b", "w"]
    od = collections.OrderedDict(w=np.float32(1.0), b=np.float32(2.0))
    assert list(srcjax.jit(lambda d: d)(od)) == ["w", "b"]
    dd = collections.defaultdict(float, w=np.float32(1.0), b=np.float32(2.0))
    out = srcjax.jit(lambda d: d)(dd)
    assert type(out) is collections.defaultdict and list(out) == ["b", "w"]
