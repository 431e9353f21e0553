"""nonzero / flatnonzero / argwhere / unique (srcjax/primitives/setops.py), bincount
and srcjax.ops.segment_sum, against values recorded from JAX 0.10.2
(tests/data/setops_jax.npz): values, shapes and dtypes, with and without
``size``, and under grad, jit and vmap.

To re-record with JAX installed: ``SRCJAX_RECORD_JAX=1 python -m pytest tests/test_setops.py``."""

import pathlib

import numpy as np
import pytest
from helpers import assert_matches_recorded, jax_recorded

import srcjax
import srcjax.numpy as sjnp

DATA = pathlib.Path(__file__).parent / "data" / "setops_jax.npz"


def _compute(jax, jnp):
    x = np.array([[3, 1, 0], [1, 0, 2]])
    a = np.array([3.0, 1.0, 3.0, np.nan, 2.0, np.nan, 1.0], np.float32)
    ids = np.array([0, 0, 1, 3, 5, -1])
    r = {}
    for i, t in enumerate(jnp.nonzero(x)):
        r[f"nonzero_{i}"] = t
    for i, t in enumerate(jnp.nonzero(x, size=6)):
        r[f"nonzero_size_{i}"] = t
    for i, t in enumerate(jnp.nonzero(x, size=2, fill_value=-1)):
        r[f"nonzero_cut_{i}"] = t
    r["flatnonzero"] = jnp.flatnonzero(x, size=5)
    r["argwhere"] = jnp.argwhere(x)
    r["argwhere_size"] = jnp.argwhere(x, size=5, fill_value=9)
    r["unique"] = jnp.unique(a)
    for i, t in enumerate(jnp.unique(a, True, True, True)):
        r[f"unique_all_{i}"] = t
    r["unique_size"] = jnp.unique(a, size=7)
    for i, t in enumerate(jnp.unique(a, True, True, True, size=7, fill_value=-5.0)):
        r[f"unique_size_fill_{i}"] = t
    r["unique_inverse_2d"] = jnp.unique(x, return_inverse=True)[1]
    r["unique_rows"] = jnp.unique(x, axis=0)
    r["unique_bool"] = jnp.unique(np.array([True, False, True]))
    r["bincount"] = jnp.bincount(np.array([0, 1, 1, 3]))
    r["bincount_weights"] = jnp.bincount(
        np.array([0, 1, 1, 3]), weights=np.array([0.5, 1.0, 2.0, 3.0], np.float32), minlength=6
    )
    r["bincount_length"] = jnp.bincount(np.array([0, 1, 1, 3, -1, 7]), length=4)
    r["segment_sum"] = jax.ops.segment_sum(np.arange(6.0, dtype=np.float32), ids, num_segments=4)
    r["segment_sum_rows"] = jax.ops.segment_sum(
        np.arange(12.0, dtype=np.float32).reshape(6, 2), ids, 4
    )
    r["segment_sum_auto"] = jax.ops.segment_sum(
        np.arange(6.0, dtype=np.float32), np.array([0, 0, 1, 3, 2, 1])
    )
    # transforms
    w = np.arange(6.0, dtype=np.float32)
    r["grad_bincount"] = jax.grad(
        lambda w: jnp.sum(jnp.bincount(np.array([0, 1, 1, 3, -1, 7]), w, length=4) ** 2)
    )(w)
    r["grad_segment_sum"] = jax.grad(
        lambda d: jnp.sum(jax.ops.segment_sum(d, ids, 4) ** 2 * jnp.arange(4.0))
    )(w)
    r["jit_segment_sum"] = jax.jit(lambda d: jax.ops.segment_sum(d, ids, 4))(w)
    r["vmap_segment_sum"] = jax.vmap(lambda d: jax.ops.segment_sum(d, ids, 4))(np.stack([w, 2 * w]))
    r["jit_nonzero_size"] = jax.jit(lambda m: jnp.nonzero(m, size=4)[1])(x)
    r["vmap_nonzero_size"] = jax.vmap(lambda m: jnp.nonzero(m, size=3, fill_value=-1)[0])(x)
    r["vmap_unique_size"] = jax.vmap(lambda m: jnp.unique(m, size=3))(x)
    # unique's derivative (JAX's: first occurrences with size=, zero without)
    xu = np.array([3.0, 1.0, 3.0, 2.0], np.float32)
    w5 = jnp.arange(5.0)
    r["grad_unique_size5"] = jax.grad(lambda x: jnp.sum(jnp.unique(x, size=5) * w5))(xu)
    r["grad_unique_size5_fill"] = jax.grad(
        lambda x: jnp.sum(jnp.unique(x, size=5, fill_value=9.0) * w5)
    )(xu)
    r["grad_unique_size2"] = jax.grad(lambda x: jnp.sum(jnp.unique(x, size=2) * w5[:2]))(xu)
    r["grad_unique_nosize"] = jax.grad(lambda x: jnp.sum(jnp.unique(x) * w5[:3]))(xu)
    r["grad_unique_counts"] = jax.grad(
        lambda x: jnp.sum(jnp.unique(x, return_counts=True, size=3)[0] ** 2)
    )(xu)
    # a tuple of a float and an int array per example: stacked position by position
    vals, counts = jax.vmap(lambda m: jnp.unique(m, return_counts=True, size=4))(
        np.array([[1.0, 2.0, 2.0], [3.0, 3.0, 3.0]], np.float32)
    )
    r["vmap_unique_values"], r["vmap_unique_counts"] = vals, counts
    r["jit_argwhere_size"] = jax.jit(lambda m: jnp.argwhere(m > 1, size=3))(x)
    return {k: np.asarray(v) for k, v in r.items()}


def _compute_with_jax():
    import jax
    import jax.numpy as jjnp

    return _compute(jax, jjnp)


def test_values_shapes_dtypes_match_jax():
    recorded = jax_recorded(DATA, _compute_with_jax)
    assert_matches_recorded(_compute(srcjax, sjnp), recorded, rtol=1e-6)


def test_errors():
    with pytest.raises(ValueError, match="0d"):
        sjnp.nonzero(np.float32(1.0))
    with pytest.raises(ValueError, match="1-dimensional"):
        sjnp.bincount(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match="segment_ids"):
        srcjax.ops.segment_sum(np.ones(3), np.array([0, 1]))
    with pytest.raises(NotImplementedError):
        sjnp.unique(np.ones((2, 2)), axis=0, size=3)


def test_without_size_under_jit_the_length_follows_the_data():
    """A difference from JAX, documented: no tracing, so no size= is needed."""
    f = srcjax.jit(lambda m: sjnp.nonzero(m > 0)[0])
    np.testing.assert_array_equal(f(np.array([1.0, -1.0, 2.0])), [0, 2])
    np.testing.assert_array_equal(f(np.array([1.0, 1.0, 2.0])), [0, 1, 2])
