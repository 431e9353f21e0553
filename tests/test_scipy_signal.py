"""srcjax.scipy.signal (session 16's debt: missing): convolve, correlate,
convolve2d, correlate2d. Oracles: scipy.signal in float64 (every mode, odd and
even kernels, either operand larger, 1-3 dimensions) and values recorded from
JAX 0.10.2 (grad, vmap, integer inputs, complex, the error messages)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.scipy import signal

A1 = np.array([1.0, 2.0, -1.0, 0.5, 3.0], np.float32)
B1 = np.array([0.5, -1.0, 2.0], np.float32)
RNG = np.random.default_rng(5)
SHAPES = [
    ((7,), (3,)),
    ((6,), (4,)),
    ((3,), (5,)),
    ((3, 4), (2, 2)),
    ((5, 6), (3, 2)),
    ((2, 3), (4, 5)),
    ((4, 3, 5), (2, 3, 2)),
]


@pytest.mark.parametrize("s1,s2", SHAPES, ids=[f"{a}x{b}" for a, b in SHAPES])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("name", ["convolve", "correlate", "convolve2d", "correlate2d"])
def test_against_scipy(name, mode, s1, s2):
    sps = pytest.importorskip("scipy.signal")
    if name.endswith("2d") and len(s1) != 2:
        pytest.skip("2-D functions")
    x = RNG.standard_normal(s1).astype(np.float32)
    k = RNG.standard_normal(s2).astype(np.float32)
    want = getattr(sps, name)(x.astype(np.float64), k.astype(np.float64), mode=mode)
    for f in (getattr(signal, name), srcjax.jit(getattr(signal, name), static_argnums=2)):
        got = f(x, k, mode)
        assert np.asarray(got).dtype == np.float32
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def test_values_recorded_from_jax():
    np.testing.assert_array_equal(
        np.asarray(signal.convolve(A1, B1)), [0.5, 0.0, -0.5, 5.25, -1.0, -2.0, 6.0]
    )
    np.testing.assert_array_equal(
        np.asarray(signal.correlate(A1, B1, "same")), [3, -3.5, 3, 5, -2.75]
    )
    np.testing.assert_array_equal(np.asarray(signal.convolve(B1, A1, "valid")), [-0.5, 5.25, -1.0])
    np.testing.assert_array_equal(np.asarray(signal.correlate(B1, A1, "valid")), [5.0, 3.0, -3.5])
    r = signal.convolve(jnp.array([1, 2, 3]), jnp.array([1, 1]))  # ints: the default float
    assert np.asarray(r).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(r), [1.0, 3.0, 5.0, 3.0])
    r = signal.correlate(A1 * (1 + 1j), B1 * 1j)
    want = np.array([2, 3, -3.5, 3, 5, -2.75, 1.5]) * (1 - 1j)
    np.testing.assert_allclose(np.asarray(r), want, rtol=1e-6)
    assert np.asarray(r).dtype == np.complex64


def test_grad_and_vmap_match_jax():
    g = srcjax.grad(lambda a: jnp.sum(signal.convolve(a, B1, mode="same") ** 2))(A1)
    np.testing.assert_allclose(np.asarray(g), [-2.0, 22.0, -15.0, -0.75, 3.0], rtol=1e-6)
    a2 = np.arange(12.0, dtype=np.float32).reshape(3, 4) / 7.0
    k2 = np.array([1.0, -2.0], np.float32)
    got = srcjax.vmap(lambda r: signal.convolve(r, k2))(a2)
    want = [[0.0, 0.14286, 0.0, -0.14286, -0.85714], [0.57143, -0.42857, -0.57143, -0.71429, -2.0]]
    want += [[1.14286, -1.0, -1.14286, -1.28571, -3.14286]]
    np.testing.assert_allclose(np.asarray(got), want, atol=1e-5)


def test_errors_as_jax():
    with pytest.raises(ValueError, match=r"mode must be one of \['full', 'same', 'valid'\]"):
        signal.convolve(A1, B1, mode="x")
    with pytest.raises(ValueError, match="in1 and in2 must have the same number of dimensions"):
        signal.convolve(A1, np.ones((2, 2), np.float32))
    with pytest.raises(ValueError, match="One input must be smaller than the other in every"):
        signal.convolve(np.ones((2, 5)), np.ones((3, 2)), mode="valid")
    with pytest.raises(ValueError, match=r"convolve2d\(\) only supports 2-dimensional inputs"):
        signal.convolve2d(A1, B1)
    with pytest.raises(NotImplementedError, match="boundary='fill', fillvalue=0"):
        signal.convolve2d(np.ones((3, 3)), np.ones((2, 2)), boundary="wrap")
