"""``srcjax.scipy.stats.gamma``: the gamma distribution (jax.scipy.stats.gamma).
Arguments broadcast; results have their broadcast shape and JAX's inexact
promotion of their dtypes. Compositions of primitives (differentiable in every
argument, jit and vmap)."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import promote4

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, loc=0, scale=1):
    """``xlogy(a - 1, y) - y - gammaln(a) - log(scale)`` with ``y = (x -
    loc)/scale``; -inf for ``x < loc`` (jax.scipy.stats.gamma.logpdf)."""
    x, a, loc, scale = promote4(x, a, loc, scale)
    ok = x >= loc
    y = jnp.where(ok, (x - loc) / scale, 1)
    log_linear_term = special.xlogy(a - 1, y) - y
    shape_terms = special.gammaln(a) + jnp.log(scale)
    return jnp.where(ok, log_linear_term - shape_terms, -np.inf)


def pdf(x, a, loc=0, scale=1):
    """``exp(logpdf(x, a, loc, scale))`` (jax.scipy.stats.gamma.pdf)."""
    return jnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    """``gammainc(a, clip((x - loc)/scale, 0, inf))`` (jax.scipy.stats.gamma.cdf).
    Differentiable in ``x``, ``loc``, ``scale``; not in ``a`` (gammainc's
    derivative in ``a`` is not implemented: a clear error)."""
    x, a, loc, scale = promote4(x, a, loc, scale)
    return special.gammainc(a, jnp.clip((x - loc) / scale, 0, np.inf))


def logcdf(x, a, loc=0, scale=1):
    """``log(cdf(x, a, loc, scale))`` (jax.scipy.stats.gamma.logcdf)."""
    return jnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    """``gammaincc(a, (x - loc)/scale)``, 1 below ``loc`` (jax.scipy.stats.gamma.sf)."""
    x, a, loc, scale = promote4(x, a, loc, scale)
    y = (x - loc) / scale
    return jnp.where(y < 0, 1, special.gammaincc(a, jnp.maximum(y, 0)))


def logsf(x, a, loc=0, scale=1):
    """``log(sf(x, a, loc, scale))`` (jax.scipy.stats.gamma.logsf)."""
    return jnp.log(sf(x, a, loc, scale))
