"""``srcjax.scipy.stats.gamma``: the gamma distribution (jax.scipy.stats.gamma).
Arguments broadcast; results have their broadcast shape and JAX's inexact
promotion of their dtypes. Compositions of primitives (differentiable in every
argument, jit and vmap)."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import promote4

__all__ = ["logpdf", "pdf"]


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
