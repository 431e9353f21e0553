"""``srcjax.scipy.stats.bernoulli``: the Bernoulli distribution
(jax.scipy.stats.bernoulli). Arguments broadcast; results have their broadcast
shape and JAX's inexact promotion of their dtypes (``k`` is promoted to a float
too). Compositions of primitives (differentiable in ``p``, jit and vmap)."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import promote2, promote3

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k, p, loc=0):
    """``xlogy(k', p) + xlog1py(1 - k', -p)`` with ``k' = k - loc``; -inf for
    ``k'`` outside ``[0, 1]`` (jax.scipy.stats.bernoulli.logpmf; like JAX, a
    non-integer ``k'`` inside is not rejected)."""
    k, p, loc = promote3(k, p, loc)
    x = k - loc
    log_probs = special.xlogy(x, p) + special.xlog1py(1 - x, -p)
    return jnp.where((x < 0) | (x > 1), -np.inf, log_probs)


def pmf(k, p, loc=0):
    """``exp(logpmf(k, p, loc))`` (jax.scipy.stats.bernoulli.pmf)."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """0 for ``k < 0``, ``1 - p`` for ``0 <= k < 1``, 1 for ``k >= 1``; NaN for a
    NaN input or ``p`` outside [0, 1] (jax.scipy.stats.bernoulli.cdf)."""
    k, p = promote2(k, p)
    bad = jnp.isnan(k) | jnp.isnan(p) | (p < 0) | (p > 1)
    out = jnp.where(k >= 1, 1, jnp.where((k >= 0) & (k < 1), 1 - p, 0))
    return jnp.where(bad, np.nan, out)


def ppf(q, p):
    """0 where ``q <= 1 - p``, else 1; NaN for NaN inputs or ``p``/``q``
    outside [0, 1] (jax.scipy.stats.bernoulli.ppf)."""
    q, p = promote2(q, p)
    bad = jnp.isnan(q) | jnp.isnan(p) | (p < 0) | (p > 1) | (q < 0) | (q > 1)
    return jnp.where(bad, np.nan, jnp.where(q <= 1 - p, 0, 1))
