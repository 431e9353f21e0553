"""Eager srcjax.lax control flow (and compositions over ad.* helpers) returns
srcjax.Arrays with JAX's 32-bit dtypes (x64 off)."""

import numpy as np
import pytest

import srcjax


def _hist_counts(w):
    return srcjax.numpy.histogram(np.arange(5.0, dtype=np.float32), bins=2, weights=w)[0][1]


def test_eager_control_flow_and_histogram_return_arrays():
    """Fresh-user bug_03: outside jit, lax.map, scan's stacked outputs, fori_loop /
    while_loop / cond / switch on scalars and jnp.histogram's counts came back as
    NumPy arrays and scalars: NumPy's promotion (int / 2 was float64), mutable, no
    .at. Dtypes as JAX 0.10.2 gives them."""
    jnp = srcjax.numpy
    lax = srcjax.lax
    ys = lax.map(lambda v: v * 2, jnp.arange(3))
    assert isinstance(ys, srcjax.Array) and (ys / 2).dtype == np.float32
    carry, hist = lax.scan(lambda c, t: (c + t, c), 0.0, jnp.arange(3.0))
    assert isinstance(carry, srcjax.Array) and isinstance(hist, srcjax.Array)
    np.testing.assert_array_equal(np.asarray(hist.at[1].set(5.0)), [0.0, 5.0, 1.0])
    with pytest.raises(TypeError, match="immutable"):
        hist[0] = 99.0
    # (JAX 0.10.2: ys of a 0.0 carry are weak, so hist * float16 is float16)
    assert hist.weak_type and (hist * jnp.float16(1)).dtype == np.float16
    assert isinstance(lax.fori_loop(0, 3, lambda i, c: c + 1.0, 0.0), srcjax.Array)
    assert isinstance(lax.while_loop(lambda c: c < 3, lambda c: c + 1, 0), srcjax.Array)
    assert isinstance(lax.cond(True, lambda: 1.0, lambda: 2.0), srcjax.Array)
    assert isinstance(lax.switch(1, [lambda: 1.0, lambda: 2.0]), srcjax.Array)
    counts, edges = jnp.histogram(jnp.arange(5.0))
    assert isinstance(counts, srcjax.Array) and isinstance(edges, srcjax.Array)
    # the composition still differentiates and jits
    np.testing.assert_allclose(np.asarray(srcjax.grad(_hist_counts)(jnp.ones(5))), [0, 0, 1, 1, 1])
    np.testing.assert_allclose(float(srcjax.jit(_hist_counts)(jnp.ones(5))), 3.0)
