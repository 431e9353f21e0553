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
