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

__all__ = ["logpdf", "pdf"]


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
