"""U4: Metropolis-Hastings over a 2-d target, 300 steps by ``lax.scan`` over
PRNG keys (``random.split``, ``random.normal``, ``random.uniform`` per step),
the carry ``(x, log p, accepted count)``, under ``jit``.

A fresh user's program (round 7, p16: 54x jax.jit)."""

import jax
import jax.numpy as jnp
from jax import lax, random


def make_inputs(rng):
    import numpy as np

    return np.array([0, int(rng.integers(0, 2**31))], np.uint32), np.zeros(2, np.float32)


def logp(x):
    return -0.5 * jnp.sum(x**2 / jnp.array([1.0, 4.0])) - 0.1 * jnp.sum(x**4)


def mh_step(state, key):
    x, lp, acc = state
    k1, k2 = random.split(key)
    prop = x + 0.5 * random.normal(k1, x.shape)
    lpp = logp(prop)
    accept = jnp.log(random.uniform(k2)) < lpp - lp
    x = jnp.where(accept, prop, x)
    lp = jnp.where(accept, lpp, lp)
    return (x, lp, acc + accept), x


@jax.jit
def step(key, x0):
    keys = random.split(key, 300)
    (x, lp, acc), xs = lax.scan(mh_step, (x0, logp(x0), 0), keys)
    return xs, acc
