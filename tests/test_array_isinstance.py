"""``jnp.ndarray`` is ``srcjax.Array`` (JAX: ``jnp.ndarray is jax.Array``), and
``isinstance(x, jnp.ndarray)`` holds for array values inside every transform, as it
holds for JAX's tracers (fresh-user bug F4-05: it was NumPy's ndarray, so the test
was False on Arrays eagerly, True on NumPy arrays, and flipped under jit)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp


def test_ndarray_is_array():
    assert jnp.ndarray is srcjax.Array
    assert isinstance(jnp.ones(2), jnp.ndarray)
    assert not isinstance(np.arange(3), jnp.ndarray)  # a host array, as in JAX


def double_if_array(x):
    if isinstance(x, jnp.ndarray):
        return x * 2.0
    return x + 100.0


def double_if_array_tuple(x):
    if isinstance(x, (list, srcjax.Array)):
        return x * 2.0
    return x + 100.0


def to_array(x):
    # the porting idiom: convert what is not already an array
    if not isinstance(x, jnp.ndarray):
        x = jnp.asarray(x, jnp.float32)
    return x


@pytest.mark.parametrize("f", [double_if_array, double_if_array_tuple])
def test_isinstance_array_under_transforms(f):
    x = jnp.asarray([1.0, 3.0])
    want = np.array([2.0, 6.0], np.float32)
    np.testing.assert_array_equal(f(x), want)
    np.testing.assert_array_equal(srcjax.jit(f)(x), want)
    np.testing.assert_array_equal(srcjax.vmap(f)(x), want)
    # d/dx of sum(2x) is 2 on the array path (100 + x would give 1)
    g = srcjax.grad(lambda x: f(x).sum())(x)
    np.testing.assert_array_equal(g, np.array([2.0, 2.0], np.float32))


def test_to_array_converts_host_arrays():
    y = to_array(np.arange(3))
    assert isinstance(y, srcjax.Array) and y.dtype == np.float32
    np.testing.assert_array_equal(y, [0.0, 1.0, 2.0])
