"""``jnp.int32(7)`` and the other scalar types of srcjax.numpy: a strongly typed
0-d Array called, NumPy's scalar type wherever a dtype is expected, as
``jax.numpy``'s (reprs recorded from JAX 0.10.2)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

JAX_REPRS = [
    ("jnp.int32(7)", "Array(7, dtype=int32)"),
    ("jnp.float32(7)", "Array(7., dtype=float32)"),
    ("jnp.float16(1.5) * 2.0", "Array(3., dtype=float16)"),
    ("jnp.bool_(1)", "Array(True, dtype=bool)"),
    ("jnp.int8(-3.7)", "Array(-3, dtype=int8)"),
    ("jnp.float32([1, 2])", "Array([1., 2.], dtype=float32)"),
    ("jnp.complex64(1)", "Array(1.+0.j, dtype=complex64)"),
    ("jnp.int32(7) + 1", "Array(8, dtype=int32)"),
    ("jnp.float32(2) * jnp.int32(3)", "Array(6., dtype=float32)"),
]


@pytest.mark.parametrize("expr,want", JAX_REPRS)
def test_called_is_a_strong_array(expr, want):
    got = eval(expr)  # noqa: S307 (the expressions above)
    assert isinstance(got, srcjax.Array) and not got.weak_type
    assert repr(got) == want


def test_stands_for_numpy_scalar_type():
    assert jnp.int32 == np.int32 and np.int32 == jnp.int32 and jnp.int32 != np.int64
    assert {np.float32: 1}[jnp.float32] == 1
    assert np.dtype(jnp.float16) == np.float16 and jnp.float16.dtype == np.dtype(np.float16)
    assert isinstance(np.int32(1), jnp.int32) and not isinstance(np.int64(1), jnp.int32)
    assert jnp.zeros(2, jnp.int8).dtype == np.int8
    assert np.zeros(2, jnp.int8).dtype == np.int8
    assert jnp.asarray([1.5]).astype(jnp.int32).dtype == np.int32
    assert jnp.issubdtype(jnp.float32, jnp.floating)
    assert jnp.bool is jnp.bool_


def cast_then_add(x):
    return x.astype(jnp.int32) + jnp.int32(2)


def mixed(x):
    return jnp.float32(x) * 2.0 + jnp.float16(1.0)


def test_inside_transforms():
    # (JAX 0.10.2: Array([3, 3], dtype=int32); grad 2.0 weak float32; jit 3.0 float32)
    assert repr(srcjax.jit(cast_then_add)(np.ones(2))) == "Array([3, 3], dtype=int32)"
    assert repr(srcjax.grad(mixed)(1.0)) == "Array(2., dtype=float32, weak_type=True)"
    assert repr(srcjax.jit(mixed)(1.0)) == "Array(3., dtype=float32)"
    assert repr(srcjax.vmap(mixed)(np.ones(2, np.float32))) == "Array([3., 3.], dtype=float32)"
