"""srcjax/frontend/normalize/typetree.py: the static type trees of arguments and
of their attributes and items."""

import collections
import dataclasses

import gast
import numpy as np

from srcjax import tree_util
from srcjax.frontend.normalize.typetree import (
    ClassKind,
    _attr_type,
    _item_type,
    _static_callable,
    type_tree,
)

State = collections.namedtuple("State", ["pos", "model"])


@tree_util.register_dataclass
@dataclasses.dataclass
class Dense:
    w: object
    b: object


def test_plain_values_have_no_type_tree():
    assert type_tree(np.ones(3)) is None
    assert type_tree({"a": np.ones(2), "b": [1.0, 2.0]}) is None
    assert type_tree(None) is None


def test_classes_are_found_where_they_are():
    layer = Dense(np.ones((2, 2)), np.zeros(2))
    ty = type_tree(layer)
    assert ty[0] == "class" and ty[1] is Dense
    assert type_tree([layer, layer])[0] == "seq"  # every item alike
    d = type_tree({"x": np.ones(1), "layer": layer})
    assert d[0] == "dict" and dict(d[1])["layer"] == ty and dict(d[1])["x"] is None
    nt = type_tree(State(np.ones(2), layer))
    assert nt[0] == "items" and nt[2] == ("pos", "model")


def test_attribute_and_item_types():
    layer = Dense(np.ones((2, 2)), np.zeros(2))
    ty = type_tree(layer)
    nt = type_tree(State(np.ones(2), layer))
    assert _attr_type(nt, gast.Constant(value="model", kind=None)) == ty
    assert _attr_type(nt, gast.Constant(value="pos", kind=None)) is None
    assert _item_type(nt, gast.Constant(value=1, kind=None)) == ty
    seq = type_tree([layer, layer, layer])
    assert (
        _item_type(seq, gast.Name(id="i", ctx=gast.Load(), annotation=None, type_comment=None))
        == ty
    )


def test_class_kind_is_tree_but_keys_by_type():
    a = ClassKind(("fn", len))
    b = ClassKind(("fn", abs))
    assert a == "tree" and b == "tree" and a != b
    assert hash(a) != hash(b) and {a: 1}[ClassKind(("fn", len))] == 1


def test_static_callables():
    assert _static_callable(len) and not _static_callable(int) and not _static_callable(3.0)
