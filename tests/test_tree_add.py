"""ad.tree_add of sparse cotangents (None = zero): the fast paths for two arrays
and two plain dicts give the sums, keys and holes of the general path."""

import collections

import numpy as np

from srcjax.primitives.control.cotangents import _tree_add


def test_arrays_and_plain_dicts():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 0.5, np.float32)
    np.testing.assert_array_equal(_tree_add(a, b), a + b)
    assert _tree_add(a, b).dtype == np.float32
    x = {"w": a, "b": None, "n": {"u": a}}
    y = {"b": b, "w": b, "n": {"u": None, "v": b}, "extra": None}
    out = _tree_add(x, y)
    assert list(out) == ["w", "b", "n", "extra"]  # a's keys first, then b's new ones
    np.testing.assert_array_equal(out["w"], a + b)
    assert out["b"] is b and out["extra"] is None
    assert out["n"]["u"] is a and out["n"]["v"] is b
    assert x == {"w": a, "b": None, "n": {"u": a}}  # the operands are not changed


def test_dict_subclasses_keep_their_type():
    a = np.ones(2, np.float32)
    od = _tree_add(collections.OrderedDict(w=a), {"w": a})
    assert type(od) is collections.OrderedDict
    np.testing.assert_array_equal(od["w"], 2 * a)
    dd = _tree_add(collections.defaultdict(list, w=a), {"w": a})
    assert type(dd) is collections.defaultdict and dd.default_factory is list
