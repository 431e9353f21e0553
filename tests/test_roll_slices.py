"""jnp.roll of one int shift along one int axis is two slice copies
(primitives/structural/layout.py): the same values, dtype and layout as np.roll
(the oracle) for every axis, shift (negative, zero, larger than the axis),
empty axes, bool and Fortran-ordered or strided inputs; and a stencil of rolls
in a fori_loop under jit matches a NumPy loop."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.primitives.structural.layout import _roll


@pytest.mark.parametrize("shape", [(5,), (3, 4), (2, 3, 4), (0, 3), (3, 0), (1,)])
def test_roll_matches_numpy(shape):
    rng = np.random.default_rng(len(shape))
    inputs = [
        rng.standard_normal(shape).astype(np.float32),
        np.asfortranarray(rng.standard_normal(shape)),
        rng.standard_normal(shape) > 0,
        rng.integers(-5, 5, shape).astype(np.int32),
    ]
    for a in inputs:
        for axis in range(-len(shape), len(shape)):
            for shift in (-7, -1, 0, 1, 2, 3, 5, 11):
                out, expected = _roll(a, shift, axis), np.roll(a, shift, axis)
                assert out.dtype == expected.dtype and out.shape == expected.shape
                np.testing.assert_array_equal(out, expected)
                assert out is not a and not np.shares_memory(out, a)


def test_strided_input_and_other_forms():
    a = np.arange(24.0).reshape(4, 6)[:, ::2]
    np.testing.assert_array_equal(_roll(a, 1, 1), np.roll(a, 1, 1))
    np.testing.assert_array_equal(_roll(a, 2, None), np.roll(a, 2, None))
    np.testing.assert_array_equal(_roll(a, (1, -1), (0, 1)), np.roll(a, (1, -1), (0, 1)))
    np.testing.assert_array_equal(_roll(a, np.int64(3), 0), np.roll(a, 3, 0))


def test_a_roll_stencil_in_a_loop_under_jit():
    u0 = np.zeros((8, 8), np.float32)
    u0[3:5, 3:5] = 1.0

    def heat(u):
        def lap(u):
            return (
                jnp.roll(u, 1, 0) + jnp.roll(u, -1, 0) + jnp.roll(u, 1, 1) + jnp.roll(u, -1, 1)
            ) - 4 * u

        return lax.fori_loop(0, 20, lambda i, u: u + 0.2 * lap(u), u)

    def heat_np(u, steps=20):
        for _ in range(steps):
            lap = sum(np.roll(u, s, ax) for s, ax in ((1, 0), (-1, 0), (1, 1), (-1, 1))) - 4 * u
            u = u + 0.2 * lap
        return u

    out = srcjax.jit(heat)(u0)
    assert np.asarray(out).dtype == np.float32
    np.testing.assert_allclose(
        np.asarray(out), heat_np(u0.astype(np.float64)), rtol=1e-5, atol=1e-6
    )
    # heat is linear and symmetric (a periodic Laplacian): d/du sum(heat(u)^2) = 2 heat(heat(u))
    g = srcjax.jit(srcjax.grad(lambda u: jnp.sum(heat(u) ** 2)))(u0)
    expected = 2 * heat_np(heat_np(u0.astype(np.float64)))
    np.testing.assert_allclose(np.asarray(g), expected, rtol=1e-4, atol=1e-6)
