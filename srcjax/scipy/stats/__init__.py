"""``srcjax.scipy.stats``: probability distributions, as ``jax.scipy.stats``.

Each distribution is a module of plain functions (``norm.logpdf(x, loc,
scale)``) written as compositions of ``srcjax.numpy``, ``srcjax.scipy.special``
and ``srcjax.scipy.linalg`` primitives, following JAX's definitions (its
out-of-support values, broadcasting and dtypes); transformed code inlines them,
so grad, jit and vmap come from the primitives.
"""

from . import (
    bernoulli,
    beta,
    cauchy,
    chi2,
    dirichlet,
    expon,
    gamma,
    laplace,
    logistic,
    multivariate_normal,
    norm,
    poisson,
    t,
    truncnorm,
    uniform,
)

__all__ = [
    "bernoulli",
    "beta",
    "cauchy",
    "chi2",
    "dirichlet",
    "expon",
    "gamma",
    "laplace",
    "logistic",
    "multivariate_normal",
    "norm",
    "poisson",
    "t",
    "truncnorm",
    "uniform",
]
