"""jnp.split into equal sections of an array: basic slices, the same views and
values np.split (the oracle) gives; everything else is np.split's."""

import numpy as np
import pytest

import srcjax.numpy as jnp
from srcjax.primitives.structural.joining import _split


@pytest.mark.parametrize(
    "shape, n, axis",
    [
        ((16, 128), 4, -1),
        ((16, 128), 4, 1),
        ((6, 4), 3, 0),
        ((2, 6, 3), 2, 1),
        ((8,), 8, 0),
        ((2, 0), 2, 1),
        ((3, 4), 1, -2),
    ],
)
def test_equal_sections_are_np_splits_views(shape, n, axis):
    x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    got, want = _split(x, n, axis=axis), np.split(x, n, axis=axis)
    assert type(got) is list and len(got) == len(want) == n
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype and g.strides == w.strides
        assert np.shares_memory(g, x) or not x.size  # (views, as np.split gives)
        np.testing.assert_array_equal(g, w)


def test_other_arguments_are_np_splits():
    x = np.arange(12.0).reshape(3, 4)
    for args in [([1, 3], 1), ([2, 10], 1), (np.array([1]), 0)]:
        got, want = _split(x, *args), np.split(x, *args)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    with pytest.raises(ValueError):
        _split(x, 3, 1)  # 4 columns do not split in 3 equal sections
    with pytest.raises((ValueError, IndexError, np.exceptions.AxisError)):
        _split(x, 2, 2)
    with pytest.raises(ZeroDivisionError):
        _split(x, 0, 1)


def test_jnp_split_values():
    x = np.random.default_rng(0).standard_normal((16, 128)).astype(np.float32)
    parts = jnp.split(x, 4, axis=-1)
    assert len(parts) == 4
    for i, p in enumerate(parts):
        np.testing.assert_array_equal(np.asarray(p), x[:, 32 * i : 32 * (i + 1)])
