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

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


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


def logcdf(x, a, b, loc=0, scale=1):
    """``log((ndtr(y) - ndtr(a)) / (ndtr(b) - ndtr(a)))`` for ``y = (x - loc)/scale``
    through the Gaussian masses' tails, ``log1p(-sf)`` near 1 (no cancellation),
    0 above ``b``, -inf below ``a``, NaN where ``a >= b``
    (jax.scipy.stats.truncnorm.logcdf)."""
    x, a, b, loc, scale = promote5(x, a, b, loc, scale)
    shape = jnp.shape(x + a + b)
    x = jnp.broadcast_to(x, shape)
    a = jnp.broadcast_to(a, shape)
    b = jnp.broadcast_to(b, shape)
    y = (x - loc) / scale
    # the masses on [a, y] and [y, b] for y inside (a, b) only ("double where"):
    # outside, the result is the constant 0 or -inf, and y there would make the
    # unselected branches NaN, and their zero cotangents NaN derivatives (JAX: 0)
    inside = (y > a) & (y < b)
    yc = jnp.where(inside, y, jnp.where(a < b, (a + b) / 2, a))
    lgm_ab = _log_gauss_mass(a, b)
    lcdf = _log_gauss_mass(a, yc) - lgm_ab
    lsf = _log_gauss_mass(yc, b) - lgm_ab
    out = jnp.where(y > a, lcdf, -np.inf)
    out = jnp.where(lcdf > -0.1, jnp.log1p(-jnp.exp(lsf)), out)
    out = jnp.where(y <= a, -np.inf, out)
    out = jnp.where(y >= b, 0.0, out)
    return jnp.where(a >= b, np.nan, out)


def cdf(x, a, b, loc=0, scale=1):
    """``exp(logcdf(x, a, b, loc, scale))`` (jax.scipy.stats.truncnorm.cdf)."""
    return jnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """``logcdf(-x, -b, -a, -loc, scale)`` (jax.scipy.stats.truncnorm.logsf)."""
    x, a, b, loc, scale = promote5(x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x, a, b, loc=0, scale=1):
    """``exp(logsf(x, a, b, loc, scale))`` (jax.scipy.stats.truncnorm.sf)."""
    return jnp.exp(logsf(x, a, b, loc, scale))
