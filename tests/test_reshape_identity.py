"""jit: a reshape to the shape its operand already has is that operand
(jnp.reshape's identity_operand, decided by fold_static); values against NumPy,
JAX's dtypes and weak types kept."""

import re

import numpy as np

import srcjax
import srcjax.numpy as jnp


def _calls(src, name):
    return len(re.findall(rf"\b{name}\(", src))


def test_same_shape_reshape_is_the_operand():
    def f(x):
        y = jnp.reshape(x * 2.0, (2, 3))
        return jnp.sum(jnp.reshape(y, (3, 2)) ** 2) + jnp.sum(y)

    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = np.sum((2.0 * x) ** 2) + np.sum(2.0 * x)
    np.testing.assert_allclose(srcjax.jit(f)(x), want, rtol=1e-6)
    g = srcjax.jit(srcjax.grad(f))(x)
    np.testing.assert_allclose(g, 8.0 * x + 2.0, rtol=1e-6)
    src = srcjax.source(srcjax.jit(f), x)
    assert _calls(src, "jnp.reshape") == 1  # (to (3, 2) only; (2, 3) is x's own)


def test_weak_and_strong_results_keep_their_types():
    def f(x, s):
        return jnp.reshape(x, (3,)), jnp.reshape(s, ())

    x = np.ones(3, np.float16)
    a, b = srcjax.jit(f)(x, 2.0)
    assert a.dtype == np.float16 and not getattr(a, "weak_type", False)
    assert b.dtype == np.float32 and b.weak_type  # (JAX: a reshaped Python float stays weak)
    np.testing.assert_array_equal(np.asarray(a), x)
    assert float(b) == 2.0
