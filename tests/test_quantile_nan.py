"""A NaN in the data makes jnp.quantile/percentile/median NaN for its slice, for
every method, eagerly, under jit and vmap, with zero derivative in the data
(user9's report, item 1). Expected values recorded from JAX 0.10.2."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

NAN = float("nan")
X = np.array([1.0, NAN, 3.0, 0.5], np.float32)
ROWS = np.stack([X, X + 1, np.array([1.0, 2.0, 3.0, 4.0], np.float32)])
METHODS = ["linear", "lower", "higher", "midpoint", "nearest"]


@pytest.mark.parametrize("method", METHODS)
def test_nan_makes_the_quantile_nan_for_every_method(method):
    assert np.isnan(jnp.percentile(X, 50.0, method=method))
    assert np.isnan(jnp.quantile(X, jnp.array([0.1, 0.9]), method=method)).all()
    assert np.isnan(srcjax.jit(lambda v: jnp.quantile(v, 0.5, method=method))(X))
    g = srcjax.grad(lambda v: jnp.quantile(v, 0.5, method=method))(X)
    np.testing.assert_array_equal(g, np.zeros(4, np.float32))
    gq = srcjax.grad(lambda q: jnp.quantile(X, q, method=method))(0.3)
    # JAX: NaN for linear (the weights move with q), 0 for the others
    assert np.isnan(gq) if method == "linear" else gq == 0.0


def test_nan_only_poisons_its_own_slice_along_axis():
    np.testing.assert_allclose(jnp.quantile(ROWS, 0.5, axis=1), [NAN, NAN, 2.5])
    np.testing.assert_allclose(
        jnp.percentile(ROWS, 30, axis=1, keepdims=True).ravel(), [NAN, NAN, 1.9], rtol=1e-6
    )
    np.testing.assert_allclose(srcjax.vmap(lambda v: jnp.quantile(v, 0.3))(ROWS), [NAN, NAN, 1.9])
    g = srcjax.grad(lambda v: jnp.quantile(v, 0.3, axis=1).sum())(ROWS)
    np.testing.assert_allclose(g, [[0, 0, 0, 0], [0, 0, 0, 0], [0.1, 0.9, 0, 0]], atol=1e-6)
    gm = srcjax.jit(srcjax.grad(lambda v: jnp.median(v, axis=1).sum()))(ROWS)
    np.testing.assert_array_equal(gm, [[0, 0, 0, 0], [0, 0, 0, 0], [0, 0.5, 0.5, 0]])
    out, tan = srcjax.jvp(lambda v: jnp.quantile(v, 0.3, axis=1), (ROWS,), (np.ones_like(ROWS),))
    np.testing.assert_allclose(out, [NAN, NAN, 1.9])
    np.testing.assert_array_equal(tan, [0, 0, 1])
    gv = srcjax.jit(srcjax.vmap(srcjax.grad(lambda v: jnp.quantile(v, 0.5))))(ROWS[::2])
    np.testing.assert_array_equal(gv, [[0, 0, 0, 0], [0, 0.5, 0.5, 0]])


def test_nan_variants_still_skip_nans():
    np.testing.assert_allclose(jnp.nanmedian(ROWS, axis=1), [1.0, 2.0, 2.5])
    np.testing.assert_allclose(jnp.nanquantile(ROWS, 0.3, axis=1), [0.8, 1.8, 1.9], rtol=1e-6)
    np.testing.assert_allclose(jnp.nanpercentile(ROWS, 30, axis=1), [0.8, 1.8, 1.9], rtol=1e-6)
    g = srcjax.grad(lambda v: jnp.nanquantile(v, 0.3, axis=1).sum())(ROWS)
    np.testing.assert_allclose(g, [[0.6, 0, 0, 0.4], [0.6, 0, 0, 0.4], [0.1, 0.9, 0, 0]], atol=1e-6)
