"""lax.approx_max_k / approx_min_k (session 16's debt: missing). On the CPU JAX
computes the exact top k; values and indices recorded from JAX 0.10.2. JAX returns
the pair as a list, srcjax as a tuple. Not matched: the order of NaNs in
approx_min_k."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

X = np.array([[3.0, 1.0, 4.0, 1.0, 5.0], [9.0, 2.0, 6.0, 5.0, 3.0]], np.float32)

# (name, function, JAX's values, JAX's indices)
CASES = [
    ("max", lambda x: lax.approx_max_k(x, 2), [[5, 4], [9, 6]], [[4, 2], [0, 2]]),
    ("min", lambda x: lax.approx_min_k(x, 3), [[1, 1, 3], [2, 3, 5]], [[1, 3, 0], [1, 4, 3]]),
    (
        "max_dim0",
        lambda x: lax.approx_max_k(x, 1, reduction_dimension=0),
        [[9, 2, 6, 5, 5]],
        [[1, 1, 1, 1, 0]],
    ),
    (
        "min_dim0",
        lambda x: lax.approx_min_k(x, 2, reduction_dimension=0),
        [[3, 1, 4, 1, 3], [9, 2, 6, 5, 5]],
        [[0, 0, 0, 0, 1], [1, 1, 1, 1, 0]],
    ),
    (
        "no_aggregate",
        lambda x: lax.approx_max_k(x, 2, aggregate_to_topk=False),
        [[5, 4, 3, 1, 1], [9, 6, 5, 3, 2]],
        [[4, 2, 0, 1, 3], [0, 2, 3, 4, 1]],
    ),
    ("recall", lambda x: lax.approx_max_k(x[1], 3, recall_target=0.5), [9, 6, 5], [0, 2, 3]),
]


@pytest.mark.parametrize("name,f,vals,idx", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_values_and_indices_match_jax(name, f, vals, idx, mode):
    v, i = (srcjax.jit(f) if mode == "jit" else f)(jnp.asarray(X))
    np.testing.assert_array_equal(np.asarray(v), np.asarray(vals, np.float32))
    np.testing.assert_array_equal(np.asarray(i), np.asarray(idx, np.int32))
    assert np.asarray(i).dtype == np.int32


def test_ties_nan_and_float16_as_jax():
    v, i = lax.approx_min_k(jnp.array([1.0, 3.0, 1.0, 2.0]), 2)
    np.testing.assert_array_equal(np.asarray(i), [0, 2])
    v, i = lax.approx_max_k(jnp.array([1.0, np.nan, 1.0, 2.0]), 2)
    np.testing.assert_array_equal(np.asarray(v), [np.nan, 2.0])
    np.testing.assert_array_equal(np.asarray(i), [1, 3])
    v, i = lax.approx_max_k(jnp.array([1.0, 3.0, 1.0, 2.0], jnp.float16), 2)
    assert np.asarray(v).dtype == np.float16
    np.testing.assert_array_equal(np.asarray(i), [1, 3])


def test_grad_and_vmap_match_jax():
    x = jnp.array([1.0, 3.0, 0.0, 2.0])
    g = srcjax.grad(lambda x: jnp.sum(lax.approx_max_k(x, 2)[0] ** 2))(x)
    np.testing.assert_array_equal(np.asarray(g), [0.0, 6.0, 0.0, 4.0])
    g = srcjax.grad(lambda x: jnp.sum(lax.approx_min_k(x, 2)[0] ** 2))(x)
    np.testing.assert_array_equal(np.asarray(g), [2.0, 0.0, 0.0, 0.0])
    v, i = srcjax.vmap(lambda x: lax.approx_max_k(x, 2))(jnp.asarray(X))
    np.testing.assert_array_equal(np.asarray(v), [[5, 4], [9, 6]])
    np.testing.assert_array_equal(np.asarray(i), [[4, 2], [0, 2]])


def test_errors_as_jax():
    with pytest.raises(ValueError, match="operand must be a floating type"):
        lax.approx_max_k(jnp.array([1, 3, 3, 2], jnp.int32), 2)
    with pytest.raises(
        ValueError, match="k must be smaller than the size of reduction_dim 5, got 6"
    ):
        lax.approx_max_k(jnp.asarray(X), 6)
