"""R1: an MLP classifier trained the way JAX's quickstart does it: ``predict`` is
written for one example and batched with ``vmap(predict, in_axes=(None, 0))``; the
SGD step is ``grad`` of the batched loss under ``jit``. 784-256-256-10, batch 128."""

import jax.numpy as jnp
from jax import grad, jit, vmap
from jax.scipy.special import logsumexp

SIZES = (784, 256, 256, 10)
BATCH = 128
LEARNING_RATE = 0.01


def make_inputs(rng):
    import numpy as np

    params = []
    for m, n in zip(SIZES[:-1], SIZES[1:]):
        w = (rng.standard_normal((n, m)) * 0.05).astype(np.float32)
        b = (rng.standard_normal(n) * 0.05).astype(np.float32)
        params.append((w, b))
    images = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    labels = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], BATCH)]
    return params, images, labels


def relu(x):
    return jnp.maximum(0, x)


def predict(params, image):
    activations = image
    for w, b in params[:-1]:
        outputs = jnp.dot(w, activations) + b
        activations = relu(outputs)
    final_w, final_b = params[-1]
    logits = jnp.dot(final_w, activations) + final_b
    return logits - logsumexp(logits)


batched_predict = vmap(predict, in_axes=(None, 0))


def loss(params, images, targets):
    preds = batched_predict(params, images)
    return -jnp.mean(preds * targets)


@jit
def step(params, x, y):
    grads = grad(loss)(params, x, y)
    return [
        (w - LEARNING_RATE * dw, b - LEARNING_RATE * db) for (w, b), (dw, db) in zip(params, grads)
    ]
