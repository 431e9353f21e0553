"""srcjax._dict_order: JAX's key order of dict pytree nodes."""

import collections

import numpy as np
import pytest

import srcjax
from srcjax._dict_order import sorted_keys


def test_sorted_keys():
    assert sorted_keys({"w": 1, "b": 2}) == ("b", "w")
    # mixed types: by type name, then value (int < str)
    assert sorted_keys({"a": 0, 2: 0, 1: 0}) == (1, 2, "a")
    with pytest.raises(TypeError, match="sortable"):
        sorted_keys({(1,): 0, 1: 0, (1, "a"): 0, ("a", 1): 0})


def test_gradients_and_outputs_share_the_order():
    # a gradient's dict (built by cotangent_like) and jit's output walk agree
    p = collections.defaultdict(float, {"w": np.float32(2.0), "b": np.float32(1.0)})
    g = srcjax.grad(lambda q: q["w"] * q["b"])(p)
    assert type(g) is collections.defaultdict and list(g) == ["b", "w"]
    assert float(g["b"]) == 2.0 and float(g["w"]) == 1.0  # d(w b)/db = w, d/dw = b


def _weighted_values(d):
    return sum(v * (i + 1) for i, v in enumerate(d.values()))


def test_a_transformed_function_sees_its_dict_arguments_in_jax_order():
    """Fresh-user bug_04: iterating ``d.values()`` inside a transformed function saw
    the caller's insertion order; JAX hands the function the dict rebuilt from its
    pytree, keys sorted. Values recorded from JAX 0.10.2."""
    d = {"b": 1.0, "a": 2.0}
    assert float(srcjax.jit(_weighted_values)(d)) == 4.0  # a first: 2*1 + 1*2
    g = srcjax.grad(_weighted_values)(d)
    assert list(g) == ["a", "b"] and float(g["a"]) == 1.0 and float(g["b"]) == 2.0
    v, g2 = srcjax.value_and_grad(_weighted_values)(d)
    assert float(v) == 4.0 and float(g2["b"]) == 2.0
    out = srcjax.vmap(_weighted_values)({"b": np.ones(2, np.float32), "a": np.zeros(2, np.float32)})
    np.testing.assert_array_equal(np.asarray(out), [2.0, 2.0])  # b is second: 1*2
    _, t = srcjax.jvp(_weighted_values, (d,), ({"b": 1.0, "a": 0.0},))
    assert float(t) == 2.0
    # nested dicts too; an OrderedDict keeps its order, as in JAX
    nested = {"z": {"y": 1.0, "x": 3.0}}
    assert float(srcjax.jit(lambda p: _weighted_values(p["z"]))(nested)) == 5.0  # 3*1 + 1*2
    od = collections.OrderedDict([("b", 1.0), ("a", 2.0)])
    assert float(srcjax.jit(_weighted_values)(od)) == 5.0
    # the caller's dict is left as it was
    assert list(d) == ["b", "a"]
