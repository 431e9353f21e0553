"""R8: a small CNN's gradient (fresh user 8's p03): ``lax.conv_general_dilated``
(NHWC/HWIO, SAME and explicit padding, stride 2), ``lax.reduce_window`` max
pooling, ``log_softmax`` cross-entropy, ``jit(grad)`` over a dict of
parameters, batch 8 of 8x8 images."""

import jax
import jax.numpy as jnp
from jax import lax


def make_inputs(rng):
    import numpy as np

    p = {
        "c1": rng.standard_normal((3, 3, 1, 4)) * 0.3,
        "b1": rng.standard_normal(4) * 0.1,
        "c2": rng.standard_normal((3, 3, 4, 8)) * 0.2,
        "fc": rng.standard_normal((2 * 2 * 8, 10)) * 0.1,
    }
    p = {k: v.astype(np.float32) for k, v in p.items()}
    x = rng.standard_normal((8, 8, 8, 1)).astype(np.float32)
    y = rng.integers(0, 10, 8).astype(np.int32)
    return p, x, y


def conv(x, w, stride=1, pad="SAME"):
    return lax.conv_general_dilated(
        x, w, (stride, stride), pad, dimension_numbers=("NHWC", "HWIO", "NHWC")
    )


def model(p, x):
    h = jax.nn.relu(conv(x, p["c1"]) + p["b1"])
    h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = jax.nn.relu(conv(h, p["c2"], 2, ((1, 1), (1, 1))))
    h = h.reshape(h.shape[0], -1)
    return h @ p["fc"]


def loss(p, x, y):
    logp = jax.nn.log_softmax(model(p, x))
    return -jnp.mean(jnp.take_along_axis(logp, y[:, None], axis=1))


step = jax.jit(jax.grad(loss))
