"""R4: Monte Carlo price of an arithmetic Asian call under geometric Brownian
motion, and its delta by the pathwise derivative: ``random.split`` into one key
per path, ``vmap`` of a one-path payoff over the keys, ``jit(value_and_grad)``
with respect to the spot price. 4096 paths of 64 steps."""

import jax.numpy as jnp
from jax import jit, random, value_and_grad, vmap

PATHS = 4096
STEPS = 64
STRIKE = 100.0
RATE = 0.03
SIGMA = 0.2
MATURITY = 1.0


def make_inputs(rng):
    import numpy as np

    return np.float32(100.0), np.array([0, 7], dtype=np.uint32)


def payoff(spot, key):
    dt = MATURITY / STEPS
    z = random.normal(key, (STEPS,))
    increments = (RATE - 0.5 * SIGMA**2) * dt + SIGMA * jnp.sqrt(dt) * z
    path = spot * jnp.exp(jnp.cumsum(increments))
    return jnp.exp(-RATE * MATURITY) * jnp.maximum(jnp.mean(path) - STRIKE, 0.0)


def price(spot, key):
    keys = random.split(key, PATHS)
    return jnp.mean(vmap(payoff, in_axes=(None, 0))(spot, keys))


step = jit(value_and_grad(price))
