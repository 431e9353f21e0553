"""``srcjax.scipy.stats.multivariate_normal``: the multivariate normal
distribution (jax.scipy.stats.multivariate_normal). A composition of
primitives (Cholesky factor and a triangular solve; differentiable in ``x``,
``mean`` and ``cov``, jit and vmap)."""

from __future__ import annotations

import math

from ... import numpy as jnp
from ...primitives.registry import Primitive, register
from ..linalg import solve_triangular
from ._util import promote3

__all__ = ["logpdf", "pdf"]


def _check_cov(cov_shape, n):
    """Static: JAX's check that ``cov`` is ``(..., n, n)`` (``ValueError``)."""
    cov_shape = tuple(cov_shape)
    if len(cov_shape) < 2 or cov_shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    return True


def _allow_singular(allow_singular):
    """Static: JAX's ``NotImplementedError`` for ``allow_singular``."""
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    return True


def _unbatched(c):
    return c.rebuild(), False


check_cov = register(
    Primitive("ad.mvn_check_cov", _check_cov, kind="internal", differentiable=False)
).facts(effectful=True)
check_singular = register(
    Primitive("ad.mvn_allow_singular", _allow_singular, kind="internal", differentiable=False)
)
for _p in (check_cov, check_singular):
    _p.def_batch(_unbatched)
check_cov.samples = lambda rng: [(((3, 3), 3), {})]
check_singular.samples = lambda rng: [((None,), {})]


def logpdf(x, mean, cov, allow_singular=None):
    """Log density of the normal distribution ``N(mean, cov)`` at ``x``
    (jax.scipy.stats.multivariate_normal.logpdf).

    ``mean``: ``()`` (then ``x`` and ``cov`` are scalars, elementwise) or
    ``(..., n)``; ``x``: ``(..., n)``; ``cov``: a scalar (``cov * I``) or ``(...,
    n, n)`` symmetric positive definite (read through its Cholesky factor, NaN
    if it is not positive definite, as JAX). Batch dimensions broadcast; result:
    the broadcast batch shape, dtype JAX's inexact promotion of the three.
    Raises ``ValueError`` for a ``cov`` of the wrong shape and
    ``NotImplementedError`` for ``allow_singular`` (as JAX)."""
    check_singular(allow_singular)
    x, mean, cov = promote3(x, mean, cov)
    if jnp.ndim(mean) == 0:
        return -1 / 2 * jnp.square(x - mean) / cov - 1 / 2 * (math.log(2 * math.pi) + jnp.log(cov))
    n = jnp.shape(mean)[-1]
    if jnp.ndim(cov) == 0:
        y = x - mean
        return -1 / 2 * jnp.sum(y * y, axis=-1) / cov - n / 2 * (
            math.log(2 * math.pi) + jnp.log(cov)
        )
    check_cov(jnp.shape(cov), n)
    chol = jnp.linalg.cholesky(cov)
    # the batch of the right-hand sides broadcast against the factor's (adding
    # zeros), as one column each
    d = (x - mean) + jnp.zeros_like(chol[..., 0])
    y = solve_triangular(chol, jnp.expand_dims(d, -1), lower=True)[..., 0]
    log_det = jnp.sum(jnp.log(jnp.diagonal(chol, axis1=-1, axis2=-2)), axis=-1)
    return -1 / 2 * jnp.sum(y * y, axis=-1) - n / 2 * math.log(2 * math.pi) - log_det


def pdf(x, mean, cov):
    """``exp(logpdf(x, mean, cov))`` (jax.scipy.stats.multivariate_normal.pdf)."""
    return jnp.exp(logpdf(x, mean, cov))
