"""JAX's weak types in eager code (srcjax/_array.py ``_WeakArray``, the registry's
``Primitive.weak_result``): an Array made from a Python scalar promotes as that
scalar does. Expected dtypes and ``weak_type`` flags recorded from JAX 0.10.2
(https://docs.jax.dev/en/latest/type_promotion.html#weak-types)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

W = jnp.asarray(1.0)

# (expression, dtype, weak_type) as JAX 0.10.2 gives them
CASES = [
    ("jnp.asarray(1.0)", "float32", True),
    ("jnp.array(2.0)", "float32", True),
    ("jnp.asarray(1)", "int32", True),
    ("jnp.asarray(True)", "bool", False),
    ("jnp.asarray(np.float32(1))", "float32", False),
    ("jnp.asarray(1.0, jnp.float32)", "float32", False),
    ("jnp.asarray(W)", "float32", True),
    ("jnp.sin(1)", "float32", True),
    ("jnp.add(1, 2)", "int32", True),
    ("jnp.maximum(1.0, 2)", "float32", True),
    ("jnp.sqrt(4.0)", "float32", True),
    ("jnp.arctan2(1.0, 2.0)", "float32", True),
    ("jnp.exp(W)", "float32", True),
    ("jnp.abs(jnp.asarray(-1 + 1j))", "float32", True),
    ("jnp.clip(W, 0, 2)", "float32", True),
    ("-W", "float32", True),
    ("W * 2", "float32", True),
    ("2 * W", "float32", True),
    ("W * W", "float32", True),
    ("W ** 2", "float32", True),
    ("W / 2", "float32", True),
    ("jnp.asarray(2) / 2", "float32", True),
    ("jnp.asarray(7) // 2", "int32", True),
    ("W * jnp.float32(2)", "float32", False),
    ("jnp.sum(1.0)", "float32", False),
    ("W.sum()", "float32", False),
    ("W.astype(jnp.float32)", "float32", False),
    ("jnp.asarray(1.0, jnp.float32)", "float32", False),
    ("W + jnp.ones(3)", "float32", False),
    # a weak operand takes the other operand's dtype
    ("W + jnp.ones(2, jnp.float16)", "float16", False),
    ("jnp.ones(2, jnp.float16) + W", "float16", False),
    ("jnp.add(W, jnp.ones(2, jnp.float16))", "float16", False),
    ("jnp.ones(2, jnp.int8) + jnp.asarray(3)", "int8", False),
    ("jnp.ones(2, jnp.int8) * jnp.asarray(3)", "int8", False),
    ("np.ones(2, np.float16) + W", "float16", False),
    ("jnp.multiply(jnp.asarray(0.5), jnp.ones(2, jnp.float16))", "float16", False),
]


@pytest.mark.parametrize("expr, dtype, weak", CASES, ids=[c[0] for c in CASES])
def test_weak_type_as_jax(expr, dtype, weak):
    r = eval(expr)
    assert isinstance(r, srcjax.Array)
    assert r.dtype == np.dtype(dtype)
    assert r.weak_type is weak


def test_weak_values_and_repr():
    w = jnp.asarray(0.1)
    assert repr(w) == "Array(0.1, dtype=float32, weak_type=True)"
    assert repr(jnp.asarray(0.1, jnp.float32)) == "Array(0.1, dtype=float32)"
    # the value is the float32 one, also when it meets a float16 array (JAX: f16(f32(0.1)))
    np.testing.assert_array_equal(np.asarray(w), np.float32(0.1))
    h = jnp.ones(2, jnp.float16) * w
    np.testing.assert_array_equal(np.asarray(h), np.full(2, np.float16(np.float32(0.1))))
    assert float(w) == float(np.float32(0.1)) and bool(w) and f"{w:.2f}" == "0.10"
    # weak with weak computes in float32 (JAX): 0.1 is read as float32(0.1)
    assert (w == 0.1).item() is True and (0.1 == w).item() is True
    assert (jnp.asarray(0.1) + 0.2).dtype == np.float32
    np.testing.assert_array_equal(
        np.asarray(jnp.asarray(0.1) + 0.2), np.float32(0.1) + np.float32(0.2)
    )
    assert w.shape == () and w.ndim == 0 and w.size == 1


def test_weak_arrays_inside_transforms_promote_as_python_scalars():
    def f(x, s):
        return x * s

    h = jnp.ones(3, jnp.float16)
    for g in (f, srcjax.jit(f), srcjax.vmap(f, in_axes=(0, None))):
        r = g(h, jnp.asarray(2.0))
        assert r.dtype == np.float16
        np.testing.assert_array_equal(np.asarray(r), np.full(3, 2.0, np.float16))
    gr = srcjax.grad(lambda s, x: jnp.sum(x * s))(jnp.asarray(2.0), jnp.ones(3, jnp.float32))
    np.testing.assert_allclose(float(gr), 3.0)


def test_vmap_keeps_an_unmapped_python_float_weak():
    # was float32: vmap made the unmapped 2.0 a strong float32 (JAX 0.10.2: float16)
    h = jnp.ones(3, jnp.float16)
    r = srcjax.vmap(lambda x, s: x * s, in_axes=(0, None))(h, 2.0)
    assert r.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(r), np.full(3, 2.0, np.float16))
    r = srcjax.vmap(lambda x, s: x * s, in_axes=(0, None))(jnp.ones(3), 0.5)
    assert r.dtype == np.float32


def test_astype_returns_an_array():
    # jnp.astype / Array.astype returned a NumPy ndarray (found with the weak types)
    for r in (jnp.ones(2).astype(jnp.float16), jnp.astype(jnp.arange(3), jnp.float32)):
        assert isinstance(r, srcjax.Array)
    np.testing.assert_array_equal(np.asarray(jnp.astype(jnp.arange(3), jnp.float32)), [0, 1, 2])
