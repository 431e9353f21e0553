"""R7: per-example Hessians, ``jit(vmap(hessian(f)))``, of a scalar function
mixing elementwise terms and ``jnp.prod`` (fresh user 8's p14), for 64 points
of dimension 6: forward-over-reverse under ``vmap``, second derivatives of a
product included."""

import jax
import jax.numpy as jnp

POINTS = 64
DIM = 6


def make_inputs(rng):
    import numpy as np

    return (rng.standard_normal((POINTS, DIM)).astype(np.float32),)


def scalar(x):
    return jnp.sum(jnp.sin(x) * x**2) + jnp.prod(x)


step = jax.jit(jax.vmap(jax.hessian(scalar)))
