"""``srcjax.scipy.stats.logistic``: the logistic distribution
(jax.scipy.stats.logistic). Arguments broadcast; results have their broadcast
shape and JAX's inexact promotion of their dtypes. Compositions of primitives
(differentiable in every argument, jit and vmap)."""

from __future__ import annotations

from ... import numpy as jnp
from .. import special
from ._util import promote3

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """``-2 logaddexp(z/2, -z/2) - log(scale)`` with ``z = (x - loc)/scale``
    (jax.scipy.stats.logistic.logpdf)."""
    x, loc, scale = promote3(x, loc, scale)
    half_z = (x - loc) / scale / 2
    return -2 * jnp.logaddexp(half_z, -half_z) - jnp.log(scale)


def pdf(x, loc=0, scale=1):
    """``exp(logpdf(x, loc, scale))`` (jax.scipy.stats.logistic.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """``expit((x - loc)/scale)`` (jax.scipy.stats.logistic.cdf)."""
    x, loc, scale = promote3(x, loc, scale)
    return special.expit((x - loc) / scale)


def sf(x, loc=0, scale=1):
    """``expit(-(x - loc)/scale)`` (jax.scipy.stats.logistic.sf)."""
    x, loc, scale = promote3(x, loc, scale)
    return special.expit(-((x - loc) / scale))


def ppf(x, loc=0, scale=1):
    """``logit(x) * scale + loc`` (jax.scipy.stats.logistic.ppf)."""
    x, loc, scale = promote3(x, loc, scale)
    return special.logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    """``-logit(x) * scale + loc`` (jax.scipy.stats.logistic.isf)."""
    x, loc, scale = promote3(x, loc, scale)
    return -special.logit(x) * scale + loc
