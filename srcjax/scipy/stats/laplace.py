"""``srcjax.scipy.stats.laplace``: the Laplace distribution
(jax.scipy.stats.laplace). Arguments broadcast; results have their broadcast
shape and JAX's inexact promotion of their dtypes. Compositions of primitives
(differentiable in every argument, jit and vmap)."""

from __future__ import annotations

from ... import numpy as jnp
from ._util import promote3

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, loc=0, scale=1):
    """``-|x - loc|/scale - log(2 scale)`` (jax.scipy.stats.laplace.logpdf)."""
    x, loc, scale = promote3(x, loc, scale)
    return -(jnp.abs(x - loc) / scale + jnp.log(2 * scale))


def pdf(x, loc=0, scale=1):
    """``exp(logpdf(x, loc, scale))`` (jax.scipy.stats.laplace.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """``exp(d)/2`` for ``d = (x - loc)/scale <= 0``, else ``1 - exp(-d)/2``
    (jax.scipy.stats.laplace.cdf)."""
    x, loc, scale = promote3(x, loc, scale)
    diff = (x - loc) / scale
    return jnp.where(diff <= 0, 0.5 * jnp.exp(diff), 1 - 0.5 * jnp.exp(-diff))
