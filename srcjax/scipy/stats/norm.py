"""``srcjax.scipy.stats.norm``: the normal distribution (jax.scipy.stats.norm).

Every function takes array-likes that broadcast together (``x``/``q``, ``loc``,
``scale``) and returns an array of their broadcast shape in JAX's inexact
promotion of their dtypes (integers and Python scalars give the default float;
``ppf``/``isf`` the default float, as JAX's ``asarray(..., float)``). They are
compositions of ``srcjax.numpy`` and ``srcjax.scipy.special`` primitives, so
grad (in every argument), jit and vmap work through them.
"""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import promote3

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log of the normal density at ``x`` (jax.scipy.stats.norm.logpdf):
    ``-((x - loc)/scale)**2 / 2 - log(2 pi scale**2) / 2``."""
    x, loc, scale = promote3(x, loc, scale)
    scale_sqrd = scale * scale
    log_normalizer = jnp.log(2 * np.pi * scale_sqrd)
    quadratic = (x - loc) * (x - loc) / scale_sqrd
    return (log_normalizer + quadratic) / -2


def pdf(x, loc=0, scale=1):
    """The normal density at ``x``: ``exp(logpdf(x, loc, scale))``
    (jax.scipy.stats.norm.pdf)."""
    return jnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The normal CDF ``ndtr((x - loc) / scale)`` (jax.scipy.stats.norm.cdf)."""
    x, loc, scale = promote3(x, loc, scale)
    return special.ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    """``log_ndtr((x - loc) / scale)``, accurate in the lower tail
    (jax.scipy.stats.norm.logcdf)."""
    x, loc, scale = promote3(x, loc, scale)
    return special.log_ndtr((x - loc) / scale)


def ppf(q, loc=0, scale=1):
    """The quantile function ``ndtri(q) * scale + loc`` (jax.scipy.stats.norm.ppf);
    NaN outside ``[0, 1]``, -inf/inf at 0/1. Dtype: the default float."""
    return jnp.asarray(special.ndtri(q) * scale + loc, dtype=float)


def sf(x, loc=0, scale=1):
    """The survival function ``1 - cdf``, as ``cdf(-x, -loc, scale)``
    (jax.scipy.stats.norm.sf)."""
    x, loc, scale = promote3(x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """``log(sf)``, as ``logcdf(-x, -loc, scale)`` (jax.scipy.stats.norm.logsf)."""
    x, loc, scale = promote3(x, loc, scale)
    return logcdf(-x, -loc, scale)


def isf(q, loc=0, scale=1):
    """The inverse survival function ``ppf(1 - q, loc, scale)``
    (jax.scipy.stats.norm.isf)."""
    return ppf(1 - q, loc, scale)
