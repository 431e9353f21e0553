"""jit's known_trees pass on vmap's batched cotangents and on tree_map's loops
(issue 17, R2), and ``ad.sum_of_products``, the one-pass ``sum(x * y)``.

Oracles: per-example gradients of a linear model written out in NumPy (float64),
the same function run eagerly, and ``np.sum(x * y)``."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.primitives.ad.sums import sum_of_products
from srcjax.tree_util import tree_leaves, tree_map

CLIP = 0.5


def _loss_one(params, x, y):
    r = x @ params["w"] + params["b"][0] - y
    return r * r


def _clip_one(g):
    norm = jnp.sqrt(sum(jnp.sum(leaf * leaf) for leaf in tree_leaves(g)))
    scale = jnp.minimum(1.0, CLIP / (norm + 1e-6))
    return tree_map(lambda leaf: leaf * scale, g)


def _clipped_sum(params, x, y):
    per_example = srcjax.vmap(srcjax.grad(_loss_one), in_axes=(None, 0, 0))(params, x, y)
    clipped = srcjax.vmap(_clip_one)(per_example)
    return tree_map(lambda g: jnp.sum(g, axis=0), clipped)


def _inputs(n=16, d=5, seed=0):
    rng = np.random.default_rng(seed)
    params = {
        "w": rng.standard_normal(d).astype(np.float32),
        "b": rng.standard_normal(1).astype(np.float32),
    }
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.standard_normal(n).astype(np.float32)
    return params, x, y


def _clipped_sum_numpy(params, x, y):
    w, b = params["w"].astype(np.float64), params["b"].astype(np.float64)
    gw, gb = np.zeros_like(w), np.zeros_like(b)
    for xi, yi in zip(x.astype(np.float64), y.astype(np.float64)):
        r = xi @ w + b[0] - yi
        dw, db = 2 * r * xi, np.array([2 * r])
        norm = np.sqrt(np.sum(dw * dw) + np.sum(db * db))
        scale = min(1.0, CLIP / (norm + 1e-6))
        gw += dw * scale
        gb += db * scale
    return {"w": gw, "b": gb}


def test_per_example_clipping_in_jit_matches_a_numpy_loop():
    params, x, y = _inputs()
    got = srcjax.jit(_clipped_sum)(params, x, y)
    want = _clipped_sum_numpy(params, x, y)
    assert sorted(got) == ["b", "w"]
    for k in want:
        assert got[k].dtype == np.float32
        np.testing.assert_allclose(got[k], want[k], rtol=2e-5, atol=1e-6, err_msg=k)


def test_per_example_clipping_is_decided_at_transformation_time():
    """The batched cotangent's helpers (ad.bgetitem_adjoint, ad.tree_add, ...),
    tree_map's loops and its flatten/unflatten are gone from the generated code;
    the squared norms and the clipped sums are one product each."""
    params, x, y = _inputs()
    body = srcjax.source(srcjax.jit(_clipped_sum), params, x, y).split("\n", 1)[1]
    # (b[0]'s adjoint, an array's, stays: ad.bgetitem_adjoint of an array)
    for gone in ("for ", "ad.tree_leaves", "batch_broadcast(params", "ad.tree_add", "unflatten"):
        assert gone not in body, gone
    # 2 squared norms, 2 sums over examples (a sum over the last axis of operands
    # of one shape: its one call, ad.vecdot, optimize/direct.py)
    assert body.count("ad.sum_of_products") + body.count("ad.vecdot(") == 4


def _loss_matrix(params, x, y):
    r = x @ params["w"] + params["b"] - y
    return jnp.sum(r * r)


def _clipped_sum_matrix(params, x, y):
    per_example = srcjax.vmap(srcjax.grad(_loss_matrix), in_axes=(None, 0, 0))(params, x, y)
    clipped = srcjax.vmap(_clip_one)(per_example)
    return tree_map(lambda g: jnp.sum(g, axis=0), clipped)


def test_per_example_outer_products_are_never_built():
    """A weight matrix's per-example cotangent is an outer product per example;
    its squared norm is |x_i|^2 |r_i|^2 and the clipped sum one GEMM
    ``x.T @ (scale * r)``: no per-example outer product in the generated code
    (issue 17), the values those of a NumPy loop over the examples."""
    rng = np.random.default_rng(3)
    n, d, m = 12, 4, 3
    params = {
        "w": rng.standard_normal((d, m)).astype(np.float32),
        "b": rng.standard_normal(m).astype(np.float32),
    }
    x = rng.standard_normal((n, d)).astype(np.float32)
    y = rng.standard_normal((n, m)).astype(np.float32)
    f = srcjax.jit(_clipped_sum_matrix)
    got = f(params, x, y)
    w, b = params["w"].astype(np.float64), params["b"].astype(np.float64)
    gw, gb = np.zeros_like(w), np.zeros_like(b)
    for xi, yi in zip(x.astype(np.float64), y.astype(np.float64)):
        r = xi @ w + b - yi
        dw, db = 2 * np.outer(xi, r), 2 * r
        scale = min(1.0, CLIP / (np.sqrt(np.sum(dw * dw) + np.sum(db * db)) + 1e-6))
        gw += scale * dw
        gb += scale * db
    np.testing.assert_allclose(got["w"], gw, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(got["b"], gb, rtol=2e-5, atol=1e-6)
    body = srcjax.source(f, params, x, y).split("\n", 1)[1]
    assert "True, True)" not in body  # (ad.bmatmul_right(g, a, B, True, True): per example)
    assert "ad.bmatmul_right(" in body and "True, False)" in body  # (the GEMM)


def _leaf_total(params, scale):
    total = 0.0
    for leaf in tree_leaves(params):
        total = total + jnp.sum(leaf) * scale  # (a value carried from trip to trip)
    doubled = tree_map(lambda p: 2.0 * p, params)
    return total, doubled


def test_a_written_out_loop_carries_its_values_as_the_loop():
    rng = np.random.default_rng(1)
    params = {
        "c": [rng.standard_normal(3).astype(np.float32), np.float32(2.0)],
        "a": rng.standard_normal((2, 2)).astype(np.float32),
    }
    scale = np.float32(0.5)
    got_total, got_doubled = srcjax.jit(_leaf_total)(params, scale)
    want_total = sum(np.sum(leaf) * scale for leaf in (params["a"], *params["c"]))
    np.testing.assert_allclose(got_total, want_total, rtol=1e-6)
    np.testing.assert_array_equal(got_doubled["a"], 2 * params["a"])
    np.testing.assert_array_equal(got_doubled["c"][0], 2 * params["c"][0])
    np.testing.assert_array_equal(got_doubled["c"][1], np.float32(4.0))


def _grown(params, x):
    leaves = tree_leaves(params)
    leaves.append(x * 2.0)  # (a known list grows by one item)
    return sum(jnp.sum(leaf) for leaf in leaves), len(leaves)


def test_a_known_list_appended_to_keeps_its_new_item():
    params = {"a": np.ones(2, np.float32), "b": np.full(3, 2.0, np.float32)}
    x = np.full(4, 10.0, np.float32)
    f = srcjax.jit(_grown)
    total, n = f(params, x)
    assert int(n) == 3
    np.testing.assert_allclose(total, 2.0 + 6.0 + 80.0)
    assert "for " not in srcjax.source(f, params, x).split("\n", 1)[1]


# --------------------------------------------------------------- ad.sum_of_products


@pytest.mark.parametrize(
    "xs, ys, axis",
    [
        ((6, 4, 3), (6, 4, 3), (1, 2)),  # per-example squared norms: a dot per example
        ((6, 4, 3), (6, 4, 3), (2,)),
        ((6, 4, 3), (6, 1, 1), 0),  # a per-example scale summed over examples
        ((6, 1), (6, 5), 0),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32])
def test_sum_of_products_blas_forms(xs, ys, axis, dtype):
    rng = np.random.default_rng(2)
    x = rng.standard_normal(xs).astype(dtype)
    y = rng.standard_normal(ys).astype(dtype)
    got = sum_of_products(x, y, axis)
    want = np.sum(x.astype(np.float64) * y.astype(np.float64), axis=axis)
    assert np.asarray(got).dtype == dtype and np.shape(got) == np.shape(want)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "x, y, axis",
    [
        (np.arange(12, dtype=np.int32).reshape(3, 4), np.full((3, 4), 3, np.int32), 1),
        (np.ones((3, 4), np.complex64) * (1 + 2j), np.ones((3, 4), np.complex64) * 1j, 1),
        (np.ones((3, 4), np.float32), np.arange(4, dtype=np.float32), 1),  # broadcast
        (np.ones((3, 4), np.float32), np.ones((3, 4), np.float64), 0),  # two dtypes
        (np.ones((0, 4), np.float32), np.ones((0, 4), np.float32), 1),  # empty
        (np.full((5, 7), 0.1, np.float32), np.ones((5, 7), np.float32), None),  # a full sum
        (np.full((2, 70000), 0.1, np.float32), np.ones((2, 70000), np.float32), 1),  # long
    ],
)
def test_sum_of_products_other_operands_are_the_product_then_its_sum(x, y, axis):
    got = sum_of_products(x, y, axis)
    want = srcjax.numpy.sum(x * y, axis=axis)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)
