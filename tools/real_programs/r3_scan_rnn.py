"""R3: an Elman RNN run by ``lax.scan`` over 50 time steps (batch 32, 16 inputs,
64 hidden units), mean squared error of a linear readout at every step; the
step is ``jit(value_and_grad(loss))`` with respect to a params dict."""

import jax.numpy as jnp
from jax import jit, lax, value_and_grad

STEPS = 50
BATCH = 32
INPUTS = 16
HIDDEN = 64


def make_inputs(rng):
    import numpy as np

    params = {
        "wx": (rng.standard_normal((INPUTS, HIDDEN)) / np.sqrt(INPUTS)).astype(np.float32),
        "wh": (rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32),
        "b": np.zeros(HIDDEN, np.float32),
        "wo": (rng.standard_normal((HIDDEN, 1)) / np.sqrt(HIDDEN)).astype(np.float32),
    }
    xs = rng.standard_normal((STEPS, BATCH, INPUTS)).astype(np.float32)
    ys = rng.standard_normal((STEPS, BATCH, 1)).astype(np.float32)
    return params, xs, ys


def loss(params, xs, ys):
    def cell(h, x):
        h = jnp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
        return h, h @ params["wo"]

    h0 = jnp.zeros((xs.shape[1], HIDDEN), xs.dtype)
    _, outputs = lax.scan(cell, h0, xs)
    return jnp.mean((outputs - ys) ** 2)


step = jit(value_and_grad(loss))
