"""ad.tree_stack (a scan's stacked outputs, reverse mode's trip lists): its fast
path for equal NumPy rows gives what np.stack gives, and falls back otherwise."""

import numpy as np
import pytest

from srcjax.primitives.control.scan import _tree_stack


def test_equal_rows_stack_as_np_stack():
    rng = np.random.default_rng(0)
    for shape in [(32, 1), (3,), (2, 3, 4)]:
        rows = [rng.standard_normal(shape).astype(np.float32) for _ in range(7)]
        out = _tree_stack(rows)
        assert out.dtype == np.float32 and out.shape == (7,) + shape
        np.testing.assert_array_equal(out, np.stack(rows))
        rows[0][...] = 5.0  # a copy: the rows are not views into it
        assert not np.array_equal(out[0], rows[0])


def test_mixed_rows_promote_as_np_stack():
    a = np.ones((2, 3), np.float32)
    for other in [np.ones((2, 3)), [[1, 2, 3], [4, 5, 6]], np.ones((2, 3), np.int8)]:
        got, want = _tree_stack([a, other]), np.stack([a, np.asarray(other)])
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    ints = _tree_stack([np.arange(3, dtype=np.int32), np.arange(3, dtype=np.int8)])
    assert ints.dtype == np.int32


def test_unequal_rows_raise_as_np_stack():
    a = np.ones((2, 3), np.float32)
    with pytest.raises(ValueError, match="same shape"):
        _tree_stack([a, np.ones((3, 3), np.float32)])
    with pytest.raises(ValueError):
        _tree_stack([a, np.ones((2, 3, 1), np.float32)])


def test_trees_stack_leafwise():
    rows = [
        {"h": np.full(2, i, np.float32), "c": (np.float32(i), np.arange(2) + i)} for i in range(3)
    ]
    out = _tree_stack(rows)
    np.testing.assert_array_equal(out["h"], [[0, 0], [1, 1], [2, 2]])
    np.testing.assert_array_equal(out["c"][0], np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(out["c"][1], [[0, 1], [1, 2], [2, 3]])
