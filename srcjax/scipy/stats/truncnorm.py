"""``srcjax.scipy.stats.truncnorm``: the normal distribution truncated to
``[a, b]`` standard deviations (jax.scipy.stats.truncnorm). Arguments
broadcast; results have their broadcast shape and JAX's inexact promotion of
their dtypes. Compositions of primitives (differentiable in every argument,
jit and vmap)."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from . import norm
from ._util import promote5

__all__ = ["logpdf", "pdf"]


def _log_diff(x, y):
    """``log(exp(x) - exp(y))``, as a weighted logsumexp."""
    return special.logsumexp(
        jnp.stack([x, y]), b=jnp.stack([jnp.ones_like(x), -jnp.ones_like(y)]), axis=0
    )


def _log_gauss_mass(a, b):
    """``log(ndtr(b) - ndtr(a))``, through the tail it lies in (as JAX)."""
    a = a + jnp.zeros_like(b)
    b = b + jnp.zeros_like(a)
    case_left = b <= 0
    case_right = a > 0
    case_central = ~(case_left | case_right)
    a_tail = jnp.where(case_right, -b, a)
    b_tail = jnp.where(case_right, -a, b)
    mass_tail = _log_diff(special.log_ndtr(b_tail), special.log_ndtr(a_tail))
    mass_central = jnp.log1p(-special.ndtr(a) - special.ndtr(-b))
    return jnp.where(case_central, mass_central, mass_tail)


def logpdf(x, a, b, loc=0, scale=1):
    """``norm.logpdf(x, loc, scale) - log(ndtr(b) - ndtr(a))`` on ``a <= (x -
    loc)/scale <= b``, -inf outside, NaN where ``a >= b``
    (jax.scipy.stats.truncnorm.logpdf)."""
    x, a, b, loc, scale = promote5(x, a, b, loc, scale)
    val = norm.logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    x_scaled = (x - loc) / scale
    val = jnp.where((x_scaled < a) | (x_scaled > b), -np.inf, val)
    return jnp.where(a >= b, np.nan, val)


def pdf(x, a, b, loc=0, scale=1):
    """``exp(logpdf(x, a, b, loc, scale))`` (jax.scipy.stats.truncnorm.pdf)."""
    return jnp.exp(logpdf(x, a, b, loc, scale))
