"""``srcjax.scipy.stats.dirichlet``: the Dirichlet distribution
(jax.scipy.stats.dirichlet). A composition of primitives (differentiable in
``x`` and ``alpha``, jit and vmap)."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from ...primitives.registry import Primitive, register
from .. import special
from ._util import promote2

__all__ = ["logpdf", "pdf"]


def _check_shapes(x_shape, alpha_shape):
    """Static: JAX's checks of dirichlet's shapes (``ValueError``); returns
    whether ``x`` holds one entry fewer than ``alpha`` (the last is implied)."""
    x_shape, alpha_shape = tuple(x_shape), tuple(alpha_shape)
    if len(alpha_shape) != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha_shape}")
    if len(x_shape) == 0 or x_shape[0] not in (alpha_shape[0], alpha_shape[0] - 1):
        raise ValueError(
            "`x` must have either the same number of entries as `alpha` or one entry "
            f"fewer; got x.shape={x_shape}, alpha.shape={alpha_shape}"
        )
    return x_shape[0] != alpha_shape[0]


def _unbatched(c):
    return c.rebuild(), False


check_shapes = register(
    Primitive("ad.dirichlet_check", _check_shapes, kind="internal", differentiable=False)
)
check_shapes.def_batch(_unbatched)
check_shapes.samples = lambda rng: [(((3, 2), (3,)), {})]


def logpdf(x, alpha):
    """Log density of the Dirichlet distribution with concentrations ``alpha``
    ``(K,)`` at ``x`` (jax.scipy.stats.dirichlet.logpdf).

    ``x``: ``(K, ...)`` or ``(K - 1, ...)`` (then the last coordinate is ``1 -
    sum(x, 0)``); the points are along axis 0. Result: ``x.shape[1:]``, dtype
    JAX's inexact promotion of ``x`` and ``alpha``; -inf where ``x`` is off the
    simplex (an entry ``<= 0`` or a sum off 1 by ``1e-6`` or more). Raises
    ``ValueError`` for an ``alpha`` that is not 1-D or a mismatched ``x``."""
    x, alpha = promote2(x, alpha)
    short = check_shapes(jnp.shape(x), jnp.shape(alpha))
    if short:
        x = jnp.concatenate([x, 1 - jnp.sum(x, axis=0, keepdims=True)], axis=0)
    normalize_term = jnp.sum(special.gammaln(alpha)) - special.gammaln(jnp.sum(alpha))
    alpha = jnp.reshape(alpha, (-1,) + (1,) * (jnp.ndim(x) - 1))
    log_probs = jnp.sum(special.xlogy(alpha - 1, x), axis=0) - normalize_term
    simplex = jnp.all(x > 0, axis=0) & (jnp.abs(jnp.sum(x, axis=0) - 1) < 1e-6)
    return jnp.where(simplex, log_probs, -np.inf)


def pdf(x, alpha):
    """``exp(logpdf(x, alpha))`` (jax.scipy.stats.dirichlet.pdf)."""
    return jnp.exp(logpdf(x, alpha))
