"""grad / jit / vmap over bfloat16 parameters (fresh-user round 4, F4-M2: grad
raised "srcjax does not support the bfloat16 dtype yet"). Gradients are
bfloat16, as JAX's. Values: JAX 0.10.2's, printed by JAX on this project's host.
Tolerance: 2 bfloat16 ulps (steps of the bit pattern): srcjax rounds some
bfloat16 operations differently from XLA (fresh-user F4-04: reductions
accumulate in bfloat16), so a chain of them may end an ulp or two away; the
elementwise chain and the layernorm gain below are equal bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

pytest.importorskip("ml_dtypes")
BF = jnp.bfloat16
X = jnp.asarray(np.array([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]], np.float32)).astype(BF)
W = jnp.asarray(np.array([[0.5, -1.0], [2.0, 0.25], [-0.5, 1.5]], np.float32)).astype(BF)
B = jnp.asarray(np.array([0.1, -0.2], np.float32)).astype(BF)
G = jnp.asarray(np.array([1.0, 0.5, 2.0], np.float32)).astype(BF)
P = {"w": W, "b": B}

MLP_W = [10.5625, 4.0625, 1.7578125, -10.125, -5.28125, 16.25]
MLP_B = [7.03125, 8.125]


def _ln(x, g):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * srcjax.lax.rsqrt(v + 1e-5) * g


def _mlp(p, x):
    h = srcjax.nn.relu(x @ p["w"] + p["b"]) * 1.5 - 0.25
    return (h * h).sum()


def _close(got, want, ulps=2):
    """``got`` is bfloat16 and within ``ulps`` bfloat16 steps of ``want`` (the
    distance of the bit patterns; the values here are away from zero)."""
    assert got.dtype == BF
    a = np.asarray(got).ravel().view(np.int16).astype(np.int64)
    b = np.asarray(want, np.float32).astype(BF).view(np.int16).astype(np.int64)
    assert np.abs(a - b).max() <= ulps, (np.asarray(got.astype(jnp.float32)).ravel(), want)


def test_grad_elementwise_chain_is_bfloat16_and_exact():
    g = srcjax.grad(lambda x: (jnp.sin(x) * jnp.exp(x * 0.5) + x * x / 3.0).sum())(X)
    _close(g, [1.765625, -0.92578125, 1.4296875, 2.203125, 1.3984375, -0.23046875], ulps=0)


def test_grad_layernorm_gain():
    g = srcjax.grad(lambda g: (_ln(X, g) ** 2).sum())(G)
    _close(g, [3.21875, 1.59375, 11.25], ulps=0)


def test_grad_mlp_eager_and_jit():
    g = srcjax.grad(_mlp)(P, X)
    _close(g["w"], MLP_W)
    _close(g["b"], MLP_B)
    g = srcjax.jit(srcjax.grad(_mlp))(P, X)
    _close(g["w"], MLP_W)
    _close(g["b"], MLP_B)


def test_vmap_of_grad_per_example():
    g = srcjax.vmap(srcjax.grad(lambda xi: _mlp(P, xi)))(X)
    _close(g, [-8.125, 2.03125, 12.1875, 3.515625, 14.0625, -3.515625])


def test_bfloat16_named_inside_the_transformed_function():
    # the generated code's jnp namespace finds jnp.bfloat16 (made when ml_dtypes is used)
    x32 = np.array([0.5, -1.25, 2.0], np.float32)
    g = srcjax.grad(lambda x: (x.astype(jnp.bfloat16) ** 2).astype(jnp.float32).sum())(x32)
    assert g.dtype == np.float32
    np.testing.assert_array_equal(g, [1.0, -2.5, 4.0])
