"""``srcjax.scipy.stats.beta``: the beta distribution on ``[loc, loc + scale]``
(jax.scipy.stats.beta). Arguments broadcast; results have their broadcast shape
and JAX's inexact promotion of their dtypes. Compositions of primitives
(differentiable in every argument, jit and vmap)."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import promote5

__all__ = ["logpdf", "pdf"]


def logpdf(x, a, b, loc=0, scale=1):
    """``xlogy(a - 1, y) + xlog1py(b - 1, -y) - betaln(a, b) - log(scale)`` with
    ``y = (x - loc)/scale``; -inf outside ``[loc, loc + scale]``, NaN where
    ``a``, ``b`` or ``scale`` is ``<= 0`` (jax.scipy.stats.beta.logpdf)."""
    x, a, b, loc, scale = promote5(x, a, b, loc, scale)
    y = (x - loc) / scale
    log_linear_term = special.xlogy(a - 1, y) + special.xlog1py(b - 1, -y)
    log_probs = -special.betaln(a, b) + log_linear_term - jnp.log(scale)
    result = jnp.where((x > loc + scale) | (x < loc), -np.inf, log_probs)
    return jnp.where((a <= 0) | (b <= 0) | (scale <= 0), np.nan, result)


def pdf(x, a, b, loc=0, scale=1):
    """``exp(logpdf(x, a, b, loc, scale))`` (jax.scipy.stats.beta.pdf)."""
    return jnp.exp(logpdf(x, a, b, loc, scale))
