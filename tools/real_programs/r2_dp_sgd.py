"""R2: one DP-SGD step (Abadi et al. 2016) for a 50-64-1 logistic MLP, batch 256:
per-example gradients by ``vmap(grad(loss_one), in_axes=(None, 0, 0))``, each
clipped to L2 norm ``CLIP`` by a ``tree_map`` under ``vmap``, summed, Gaussian noise
from ``random.normal`` added per leaf, an SGD update; all in one ``jit``."""

import jax.numpy as jnp
from jax import grad, jit, random, vmap
from jax.tree_util import tree_leaves, tree_map, tree_structure, tree_unflatten

FEATURES = 50
HIDDEN = 64
BATCH = 256
CLIP = 1.0
NOISE_MULTIPLIER = 1.1
LEARNING_RATE = 0.1


def make_inputs(rng):
    import numpy as np

    params = {
        "w1": (rng.standard_normal((FEATURES, HIDDEN)) / np.sqrt(FEATURES)).astype(np.float32),
        "b1": np.zeros(HIDDEN, np.float32),
        "w2": (rng.standard_normal((HIDDEN, 1)) / np.sqrt(HIDDEN)).astype(np.float32),
        "b2": np.zeros(1, np.float32),
    }
    x = rng.standard_normal((BATCH, FEATURES)).astype(np.float32)
    y = (rng.random(BATCH) < 0.5).astype(np.float32)
    key = np.array([0, 42], dtype=np.uint32)
    return params, x, y, key


def loss_one(params, x, y):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    logit = (h @ params["w2"] + params["b2"])[0]
    # binary cross-entropy on the logit, written stably
    return jnp.maximum(logit, 0.0) - logit * y + jnp.log1p(jnp.exp(-jnp.abs(logit)))


def clip_one(g):
    norm = jnp.sqrt(sum(jnp.sum(leaf * leaf) for leaf in tree_leaves(g)))
    scale = jnp.minimum(1.0, CLIP / (norm + 1e-6))
    return tree_map(lambda leaf: leaf * scale, g)


@jit
def step(params, x, y, key):
    per_example = vmap(grad(loss_one), in_axes=(None, 0, 0))(params, x, y)
    clipped = vmap(clip_one)(per_example)
    summed = tree_map(lambda g: jnp.sum(g, axis=0), clipped)
    leaves = tree_leaves(summed)
    keys = random.split(key, len(leaves))
    noise = [random.normal(k, leaf.shape) for k, leaf in zip(keys, leaves)]
    noise = tree_unflatten(tree_structure(summed), noise)
    noisy = tree_map(lambda g, n: (g + NOISE_MULTIPLIER * CLIP * n) / BATCH, summed, noise)
    return tree_map(lambda p, g: p - LEARNING_RATE * g, params, noisy)
