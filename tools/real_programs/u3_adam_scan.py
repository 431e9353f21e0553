"""U3: 50 steps of a hand-written Adam with global-norm clipping inside
``lax.scan``, the carry a pytree ``(params, m, v, t)`` (a dict holding a list of
layer dicts), ``value_and_grad`` of a 2-layer tanh MLP in the body, all in one
``jit``.

A fresh user's program (round 6, p05: 31x jax.jit)."""

import jax
import jax.numpy as jnp

tree_map, tree_leaves = jax.tree_util.tree_map, jax.tree_util.tree_leaves


def make_inputs(rng):
    import numpy as np

    w = [rng.standard_normal((8, 8)).astype(np.float32) * 0.3 for _ in range(2)]
    p = {"l": [{"w": w[i], "b": np.zeros(8, np.float32)} for i in range(2)]}
    p["o"] = rng.standard_normal(8).astype(np.float32)
    x = rng.standard_normal((32, 8)).astype(np.float32)
    y = rng.standard_normal(32).astype(np.float32)
    return p, x, y


def loss(p, x, y):
    h = x
    for layer in p["l"]:
        h = jnp.tanh(h @ layer["w"] + layer["b"])
    return jnp.mean((h @ p["o"] - y) ** 2)


@jax.jit
def step(p, x, y):
    def body(c, _):
        p, m, v, t = c
        lo, g = jax.value_and_grad(loss)(p, x, y)
        n = jnp.sqrt(sum(jnp.sum(a * a) for a in tree_leaves(g)))
        g = tree_map(lambda a: a * jnp.minimum(1.0, 1.0 / (n + 1e-6)), g)
        t = t + 1
        m = tree_map(lambda a, b: 0.9 * a + 0.1 * b, m, g)
        v = tree_map(lambda a, b: 0.999 * a + 0.001 * b * b, v, g)
        p = tree_map(
            lambda q, a, b: q - 1e-2 * (a / (1 - 0.9**t)) / (jnp.sqrt(b / (1 - 0.999**t)) + 1e-8),
            p,
            m,
            v,
        )
        return (p, m, v, t), lo

    z = tree_map(jnp.zeros_like, p)
    return jax.lax.scan(body, (p, z, z, 0), None, length=50)[1]
