"""``srcjax.scipy.stats.poisson``: the Poisson distribution
(jax.scipy.stats.poisson). Arguments broadcast; results have their broadcast
shape and JAX's inexact promotion of their dtypes (``k`` is promoted to a float
too). Compositions of primitives (differentiable in ``mu``; in ``k`` the
derivative of ``logpmf``/``pmf`` is the formula's, as JAX, and that of ``cdf``
zero), jit and vmap."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ...lax import stop_gradient
from .. import special
from ._util import promote3

__all__ = ["cdf", "logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    """``xlogy(k', mu) - gammaln(k' + 1) - mu`` with ``k' = k - loc``; -inf for
    ``k' < 0`` or a non-integer ``k`` (jax.scipy.stats.poisson.logpmf)."""
    k, mu, loc = promote3(k, mu, loc)
    x = k - loc
    log_probs = special.xlogy(x, mu) - special.gammaln(x + 1) - mu
    return jnp.where((x < 0) | (jnp.round(k) != k), -np.inf, log_probs)


def pmf(k, mu, loc=0):
    """``exp(logpmf(k, mu, loc))`` (jax.scipy.stats.poisson.pmf)."""
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """``gammaincc(floor(k' + 1), mu)`` with ``k' = k - loc``; 0 for ``k' < 0``
    (jax.scipy.stats.poisson.cdf)."""
    k, mu, loc = promote3(k, mu, loc)
    x = k - loc
    # floor's derivative is zero: the shape parameter needs no derivative
    p = special.gammaincc(stop_gradient(jnp.floor(1 + x)), mu)
    return jnp.where(x < 0, 0, p)
