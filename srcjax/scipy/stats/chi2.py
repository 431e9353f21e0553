"""``srcjax.scipy.stats.chi2``: the chi-squared distribution
(jax.scipy.stats.chi2). Arguments broadcast; results have their broadcast shape
and JAX's inexact promotion of their dtypes. Compositions of primitives
(differentiable in every argument, jit and vmap)."""

from __future__ import annotations

import math

import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import promote4

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, df, loc=0, scale=1):
    """``(df/2 - 1) log(y) - y/2 - gammaln(df/2) - df log(2)/2 - log(scale)``
    with ``y = (x - loc)/scale``; -inf for ``x < loc``
    (jax.scipy.stats.chi2.logpdf)."""
    x, df, loc, scale = promote4(x, df, loc, scale)
    y = (x - loc) / scale
    df_on_two = df / 2
    kernel = (df_on_two - 1) * jnp.log(y) - y / 2
    nrml_cnst = -(special.gammaln(df_on_two) + math.log(2.0) * df / 2)
    log_probs = nrml_cnst - jnp.log(scale) + kernel
    return jnp.where(x < loc, -np.inf, log_probs)


def pdf(x, df, loc=0, scale=1):
    """``exp(logpdf(x, df, loc, scale))`` (jax.scipy.stats.chi2.pdf)."""
    return jnp.exp(logpdf(x, df, loc, scale))


def cdf(x, df, loc=0, scale=1):
    """``gammainc(df/2, clip((x - loc)/(2 scale), 0, inf))``
    (jax.scipy.stats.chi2.cdf); not differentiable in ``df`` (as gamma.cdf)."""
    x, df, loc, scale = promote4(x, df, loc, scale)
    return special.gammainc(df / 2, jnp.clip((x - loc) / (scale * 2), 0, np.inf))


def logcdf(x, df, loc=0, scale=1):
    """``log(cdf(x, df, loc, scale))`` (jax.scipy.stats.chi2.logcdf)."""
    return jnp.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    """``gammaincc(df/2, clip((x - loc)/(2 scale), 0, inf))`` (jax.scipy.stats.chi2.sf)."""
    x, df, loc, scale = promote4(x, df, loc, scale)
    return special.gammaincc(df / 2, jnp.clip((x - loc) / (scale * 2), 0, np.inf))


def logsf(x, df, loc=0, scale=1):
    """``log(sf(x, df, loc, scale))`` (jax.scipy.stats.chi2.logsf)."""
    return jnp.log(sf(x, df, loc, scale))
