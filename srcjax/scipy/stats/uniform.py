"""``srcjax.scipy.stats.uniform``: the uniform distribution on
``[loc, loc + scale]`` (jax.scipy.stats.uniform). Arguments broadcast; results
have their broadcast shape and JAX's inexact promotion of their dtypes.
Compositions of primitives (differentiable in every argument, jit and vmap)."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ._util import promote3

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """``-log(scale)`` on ``[loc, loc + scale]``, else -inf
    (jax.scipy.stats.uniform.logpdf)."""
    x, loc, scale = promote3(x, loc, scale)
    log_probs = -jnp.log(scale)
    return jnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    """``exp(logpdf(x, loc, scale))`` (jax.scipy.stats.uniform.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """0 below ``loc``, 1 above ``loc + scale``, ``(x - loc)/scale`` between,
    and 0 where none holds (a NaN input), as JAX's ``select``
    (jax.scipy.stats.uniform.cdf)."""
    x, loc, scale = promote3(x, loc, scale)
    below = x < loc
    above = x > loc + scale
    inside = (x >= loc) & (x <= loc + scale)
    mid = (x - loc) / scale
    return jnp.where(below, 0, jnp.where(above, 1, jnp.where(inside, mid, 0)))


def ppf(q, loc=0, scale=1):
    """``loc + scale * q``; NaN for ``q`` outside [0, 1] or NaN
    (jax.scipy.stats.uniform.ppf)."""
    q, loc, scale = promote3(q, loc, scale)
    bad = jnp.isnan(q) | (q < 0) | (q > 1)
    return jnp.where(bad, np.nan, loc + scale * q)
