"""U1: an LSTM run by ``lax.scan`` over 40 time steps (batch 16, 8 inputs, 32
hidden units), the cell called through a lambda closing over the params dict,
the loss on the last hidden state's readout; the step is ``jit(grad(loss))``.

A fresh user's program (session 13-15 reports: 4.7-6.8x jax.jit)."""

import jax
import jax.numpy as jnp
from jax import lax

STEPS = 40
BATCH = 16
INPUTS = 8
HIDDEN = 32


def make_inputs(rng):
    import numpy as np

    params = {
        "wi": (rng.standard_normal((INPUTS, 4 * HIDDEN)) / np.sqrt(INPUTS)).astype(np.float32),
        "wh": (rng.standard_normal((HIDDEN, 4 * HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32),
        "b": np.zeros(4 * HIDDEN, np.float32),
        "wo": (rng.standard_normal((HIDDEN, 1)) / np.sqrt(HIDDEN)).astype(np.float32),
    }
    xs = rng.standard_normal((STEPS, BATCH, INPUTS)).astype(np.float32)
    return params, xs


def lstm_cell(params, carry, x):
    h, c = carry
    z = x @ params["wi"] + h @ params["wh"] + params["b"]
    i, f, g, o = jnp.split(z, 4, axis=-1)
    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    h = jax.nn.sigmoid(o) * jnp.tanh(c)
    return (h, c), h


def loss(params, xs):
    h0 = jnp.zeros((xs.shape[1], HIDDEN), xs.dtype)
    c0 = jnp.zeros((xs.shape[1], HIDDEN), xs.dtype)
    (h, c), _ = lax.scan(lambda carry, x: lstm_cell(params, carry, x), (h0, c0), xs)
    return jnp.sum(h @ params["wo"])


step = jax.jit(jax.grad(loss))
