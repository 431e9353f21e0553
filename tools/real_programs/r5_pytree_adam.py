"""R5: an Equinox-style model: ``Linear`` and ``MLP`` are classes registered as
pytrees, the model is called as ``model(x)``, and a hand-written Adam step
(Kingma & Ba 2015) updates it with ``tree_map`` under ``jit``. 64-128-128-10,
batch 64, softmax cross-entropy."""

import jax
import jax.numpy as jnp
from jax import jit, value_and_grad
from jax.tree_util import register_pytree_node_class, tree_map

BATCH = 64
SIZES = (64, 128, 128, 10)
LEARNING_RATE = 1e-3
BETA1 = 0.9
BETA2 = 0.999
EPS = 1e-8


@register_pytree_node_class
class Linear:
    def __init__(self, weight, bias):
        self.weight = weight
        self.bias = bias

    def __call__(self, x):
        return x @ self.weight + self.bias

    def tree_flatten(self):
        return (self.weight, self.bias), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


@register_pytree_node_class
class MLP:
    def __init__(self, layers):
        self.layers = layers

    def __call__(self, x):
        for layer in self.layers[:-1]:
            x = jnp.tanh(layer(x))
        return self.layers[-1](x)

    def tree_flatten(self):
        return (self.layers,), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def make_inputs(rng):
    import numpy as np

    layers = []
    for m, n in zip(SIZES[:-1], SIZES[1:]):
        w = (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)
        layers.append(Linear(w, np.zeros(n, np.float32)))
    model = MLP(layers)
    zeros = tree_map(np.zeros_like, model)
    state = (zeros, tree_map(np.zeros_like, model), np.float32(3.0))
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], BATCH)]
    return model, state, x, y


def loss(model, x, y):
    logits = model(x)
    logp = logits - jax.nn.logsumexp(logits, axis=1, keepdims=True)
    return -jnp.mean(jnp.sum(y * logp, axis=1))


@jit
def step(model, state, x, y):
    m, v, t = state
    value, grads = value_and_grad(loss)(model, x, y)
    t = t + 1
    m = tree_map(lambda m, g: BETA1 * m + (1 - BETA1) * g, m, grads)
    v = tree_map(lambda v, g: BETA2 * v + (1 - BETA2) * g * g, v, grads)
    m_scale = 1 / (1 - BETA1**t)
    v_scale = 1 / (1 - BETA2**t)
    model = tree_map(
        lambda p, m, v: p - LEARNING_RATE * (m * m_scale) / (jnp.sqrt(v * v_scale) + EPS),
        model,
        m,
        v,
    )
    return model, (m, v, t), value
