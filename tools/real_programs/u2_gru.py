"""U2: a bidirectional GRU (two ``lax.scan``, one ``reverse=True``) over 20 steps
(16 hidden, 8 inputs), ``vmap`` over a batch of 4 sequences, softmax cross
entropy; the step is ``jit(value_and_grad(loss))``.

A fresh user's program (round 7, p23: 36x jax.jit)."""

import jax
import jax.numpy as jnp
from jax import lax

HIDDEN = 16
INPUTS = 8


def make_inputs(rng):
    import numpy as np

    shapes = [("wz", (INPUTS, HIDDEN)), ("uz", (HIDDEN, HIDDEN)), ("wr", (INPUTS, HIDDEN))]
    shapes += [("ur", (HIDDEN, HIDDEN)), ("wn", (INPUTS, HIDDEN)), ("un", (HIDDEN, HIDDEN))]
    shapes += [("o", (2 * HIDDEN, 5))]
    p = {k: (rng.normal(size=s) * 0.3).astype(np.float32) for k, s in shapes}
    xs = rng.normal(size=(4, 20, INPUTS)).astype(np.float32)
    ys = rng.integers(0, 5, (4, 20)).astype(np.int32)
    return p, xs, ys


def gru_cell(p, h, x):
    z = jax.nn.sigmoid(x @ p["wz"] + h @ p["uz"])
    r = jax.nn.sigmoid(x @ p["wr"] + h @ p["ur"])
    n = jnp.tanh(x @ p["wn"] + (r * h) @ p["un"])
    return (1 - z) * n + z * h


def birnn(p, xs):
    h0 = jnp.zeros(p["uz"].shape[0])

    def cell(h, x):
        h = gru_cell(p, h, x)
        return h, h

    _, fwd = lax.scan(cell, h0, xs)
    _, bwd = lax.scan(cell, h0, xs, reverse=True)
    return jnp.concatenate([fwd, bwd], -1)


def loss(p, xs, ys):
    out = jax.vmap(birnn, in_axes=(None, 0))(p, xs)
    logits = out @ p["o"]
    return -jnp.mean(jnp.sum(jax.nn.one_hot(ys, 5) * jax.nn.log_softmax(logits), -1))


step = jax.jit(jax.value_and_grad(loss))
