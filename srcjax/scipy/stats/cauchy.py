"""``srcjax.scipy.stats.cauchy``: the Cauchy distribution
(jax.scipy.stats.cauchy). Arguments broadcast; results have their broadcast
shape and JAX's inexact promotion of their dtypes. Compositions of primitives
(differentiable in every argument, jit and vmap)."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ._util import promote3

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """``-log(pi scale) - log1p(((x - loc)/scale)**2)``
    (jax.scipy.stats.cauchy.logpdf)."""
    x, loc, scale = promote3(x, loc, scale)
    scaled_x = (x - loc) / scale
    return -(jnp.log(np.pi * scale) + jnp.log1p(scaled_x * scaled_x))


def pdf(x, loc=0, scale=1):
    """``exp(logpdf(x, loc, scale))`` (jax.scipy.stats.cauchy.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """``1/2 + arctan((x - loc)/scale)/pi`` (jax.scipy.stats.cauchy.cdf)."""
    x, loc, scale = promote3(x, loc, scale)
    return 0.5 + (1.0 / np.pi) * jnp.arctan((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    """``log(cdf(x, loc, scale))`` (jax.scipy.stats.cauchy.logcdf)."""
    return jnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """``cdf(-x, -loc, scale)`` (jax.scipy.stats.cauchy.sf)."""
    x, loc, scale = promote3(x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """``logcdf(-x, -loc, scale)`` (jax.scipy.stats.cauchy.logsf)."""
    x, loc, scale = promote3(x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """``tan(pi q - pi/2) * scale + loc`` (jax.scipy.stats.cauchy.ppf)."""
    q, loc, scale = promote3(q, loc, scale)
    return jnp.tan(np.pi * q - np.pi / 2) * scale + loc


def isf(q, loc=0, scale=1):
    """``tan(pi/2 - pi q) * scale + loc`` (jax.scipy.stats.cauchy.isf)."""
    q, loc, scale = promote3(q, loc, scale)
    return jnp.tan(np.pi / 2 - np.pi * q) * scale + loc
