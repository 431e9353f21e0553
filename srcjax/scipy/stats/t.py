"""``srcjax.scipy.stats.t``: Student's t distribution (jax.scipy.stats.t).
Arguments broadcast; results have their broadcast shape and JAX's inexact
promotion of their dtypes. Compositions of primitives (differentiable in every
argument, jit and vmap)."""

from __future__ import annotations

import numpy as np

from ... import numpy as jnp
from .. import special
from ._util import promote4

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    """``-(gammaln(df/2) + log(pi df scale**2)/2 - gammaln((df + 1)/2)) -
    (df + 1)/2 log1p(z**2/df)`` with ``z = (x - loc)/scale``
    (jax.scipy.stats.t.logpdf)."""
    x, df, loc, scale = promote4(x, df, loc, scale)
    scaled_x = (x - loc) / scale
    df_over_two = df / 2
    df_plus_one_over_two = df_over_two + 0.5
    normalize_term_tmp = jnp.log(scale * scale * np.pi * df) / 2
    normalize_term = (
        special.gammaln(df_over_two) + normalize_term_tmp - special.gammaln(df_plus_one_over_two)
    )
    quadratic = scaled_x * scaled_x / df
    return -(normalize_term + df_plus_one_over_two * jnp.log1p(quadratic))


def pdf(x, df, loc=0, scale=1):
    """``exp(logpdf(x, df, loc, scale))`` (jax.scipy.stats.t.pdf)."""
    return jnp.exp(logpdf(x, df, loc, scale))
