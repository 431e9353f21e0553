"""``srcjax.scipy.stats.expon``: the exponential distribution
(jax.scipy.stats.expon). Arguments broadcast; results have their broadcast
shape and JAX's inexact promotion of their dtypes. ``x < loc`` is outside the
support: ``logpdf`` -inf, ``pdf``/``cdf`` 0. Compositions of primitives
(differentiable in every argument, jit and vmap)."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ._util import promote3

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """``-(x - loc)/scale - log(scale)`` on ``x >= loc``, else -inf
    (jax.scipy.stats.expon.logpdf)."""
    x, loc, scale = promote3(x, loc, scale)
    log_probs = -((x - loc) / scale + jnp.log(scale))
    return jnp.where(x < loc, -np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    """``exp(logpdf(x, loc, scale))`` (jax.scipy.stats.expon.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """``1 - exp(-(x - loc)/scale)`` on ``x >= loc``, else 0
    (jax.scipy.stats.expon.cdf)."""
    x, loc, scale = promote3(x, loc, scale)
    neg_scaled_x = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(neg_scaled_x), -jnp.expm1(neg_scaled_x))


def logsf(x, loc=0, scale=1):
    """``-(x - loc)/scale`` on ``x >= loc``, else 0 (jax.scipy.stats.expon.logsf)."""
    x, loc, scale = promote3(x, loc, scale)
    neg_scaled_x = (loc - x) / scale
    return jnp.where(x < loc, jnp.zeros_like(neg_scaled_x), neg_scaled_x)


def sf(x, loc=0, scale=1):
    """``exp(logsf(x, loc, scale))`` (jax.scipy.stats.expon.sf)."""
    return jnp.exp(logsf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """``log1p(-sf(x, loc, scale))`` (jax.scipy.stats.expon.logcdf)."""
    return jnp.log1p(-sf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """``loc - scale * log1p(-q)``; NaN for ``q`` outside [0, 1] or NaN
    (jax.scipy.stats.expon.ppf)."""
    q, loc, scale = promote3(q, loc, scale)
    bad = jnp.isnan(q) | (q < 0) | (q > 1)
    return jnp.where(bad, np.nan, loc - scale * jnp.log1p(-q))
