"""lax.bitcast_convert_type (fresh-user round 4, F4-M6): values, shapes, dtypes
and errors against JAX 0.10.2 (the literals below were printed by JAX 0.10.2),
eagerly and under jit, vmap and grad."""

from __future__ import annotations

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

X = np.array([1.0, -2.5, 3.0, 1e-3], np.float32)


def test_same_width_scalar():
    r = lax.bitcast_convert_type(jnp.float32(1.0), jnp.int32)
    assert isinstance(r, srcjax.Array) and r.shape == () and r.dtype == np.int32
    assert int(r) == 1065353216
    # a Python float is float32 (x64 off); the result is not weakly typed
    r = lax.bitcast_convert_type(3.0, jnp.int32)
    assert r.dtype == np.int32 and int(r) == 1077936128
    assert int(lax.bitcast_convert_type(np.float64(3.0), jnp.int32)) == 1077936128
    r = lax.bitcast_convert_type(np.array([1, 2], np.int32), jnp.float32)
    np.testing.assert_array_equal(r.view(np.int32), [1, 2])


def test_narrower_adds_a_trailing_axis():
    r = lax.bitcast_convert_type(X[:3], jnp.uint16)
    assert r.shape == (3, 2) and r.dtype == np.uint16
    np.testing.assert_array_equal(r, [[0, 16256], [0, 49184], [0, 16448]])
    r = lax.bitcast_convert_type(X[:3], jnp.int8)
    np.testing.assert_array_equal(r, [[0, 0, -128, 63], [0, 0, 32, -64], [0, 0, 64, 64]])
    r = lax.bitcast_convert_type(X[:3], jnp.bfloat16)
    assert r.dtype == jnp.bfloat16
    np.testing.assert_array_equal(np.asarray(r, np.float32), [[0, 1], [0, -2.5], [0, 3]])


def test_wider_removes_the_last_axis():
    r = lax.bitcast_convert_type(np.array([[1, 2], [3, 4]], np.int16), jnp.int32)
    assert r.shape == (2,) and r.dtype == np.int32
    np.testing.assert_array_equal(r, [131073, 262147])
    r = lax.bitcast_convert_type(np.array([1.5, 2], np.float16), jnp.bfloat16)
    np.testing.assert_array_equal(np.asarray(r, np.float32), [0.125, 2.0])


def test_errors_as_jax():
    with pytest.raises(ValueError, match=r"3 \* 16 != 32"):
        lax.bitcast_convert_type(jnp.ones(3, jnp.uint16), jnp.float32)
    with pytest.raises(TypeError, match="does not support bool or complex"):
        lax.bitcast_convert_type(jnp.array([True, False]), jnp.uint8)
    with pytest.raises(TypeError, match="does not support bool or complex"):
        lax.bitcast_convert_type(jnp.array([1 + 2j], jnp.complex64), jnp.float32)
    # float64 is float32 while x64 is off: nothing to convert
    np.testing.assert_array_equal(lax.bitcast_convert_type(X, jnp.float64), X)


def test_jit():
    f = srcjax.jit(lambda r: lax.bitcast_convert_type(r * 2, jnp.uint16))
    r = f(X)
    assert r.dtype == np.uint16
    np.testing.assert_array_equal(r, [[0, 16384], [0, 49312], [0, 16576], [4719, 15107]])


def test_vmap():
    bits = lax.bitcast_convert_type(X.reshape(2, 2), jnp.uint16)
    r = srcjax.vmap(lambda r: lax.bitcast_convert_type(r, jnp.float32))(bits)
    np.testing.assert_array_equal(r, X.reshape(2, 2))
    r = srcjax.vmap(lambda r: lax.bitcast_convert_type(r, jnp.int8), in_axes=1)(X.reshape(2, 2))
    assert r.shape == (2, 2, 4)
    np.testing.assert_array_equal(
        r, [[[0, 0, -128, 63], [0, 0, 64, 64]], [[0, 0, 32, -64], [111, 18, -125, 58]]]
    )
    assert srcjax.vmap(lambda r: lax.bitcast_convert_type(r, jnp.uint8))(
        X[:3].reshape(3, 1)
    ).shape == (3, 1, 4)


def test_grad_is_zero_through_it():
    def f(r):
        return (lax.bitcast_convert_type(r, jnp.int32).astype(jnp.float32) * r).sum()

    np.testing.assert_array_equal(
        srcjax.grad(f)(X), [1065353216.0, -1071644672.0, 1077936128.0, 981668480.0]
    )
    g = srcjax.grad(lambda r: lax.bitcast_convert_type(r, jnp.float32).sum())(X)
    np.testing.assert_array_equal(g, [0.0, 0.0, 0.0, 0.0])
