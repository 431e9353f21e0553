"""``srcjax.random``: JAX's default PRNG (threefry2x32), bit for bit.

Semantics and signatures follow ``jax.random`` (JAX 0.10,
https://docs.jax.dev/en/latest/jax.random.html); the algorithms follow
``shared/prng/SPEC.md`` (section numbers in the docstrings refer to it). Values
equal those of jax/jaxlib 0.10.2 on CPU bit for bit, for float32 and for the
integer functions; float64 is supported where JAX's algorithm is known exactly
(``bits``, ``uniform``, and on XLA:CPU's float64 ``log``/``log1p`` ``exponential``,
``gumbel``, ``laplace``, ``logistic``, ``categorical``, ``choice``; ``normal``
within an ulp) and raises ``NotImplementedError`` elsewhere.

Keys are typed or raw, as in JAX: ``key(seed)`` returns a typed key array
(:class:`PRNGKeyArray`, dtype ``key<fry>``, shape ``()``), ``PRNGKey(seed)`` a
raw key (uint32 of shape ``(2,)``); ``key_data``/``wrap_key_data`` convert.
Every function takes either kind; ``split``/``fold_in`` return the kind given.

Both counter schemes are supported: the *partitionable* one (JAX's default
since 0.5) and the *legacy* one, selected with
``srcjax.config.update("jax_threefry_partitionable", False)``; the flag is read
when a function runs.

Every function is a registered primitive (``random.<name>`` in generated code),
not differentiable in the key, so they work inside ``grad``, ``jit`` and
``vmap``; under ``vmap`` a batch of keys is handled in one vectorised call.
As in JAX, the public functions take a *single* key: pass a batch of keys
through ``srcjax.vmap``.

Modules: :mod:`._base` (argument checks, keys, ``split``/``fold_in``,
``bits``/``uniform``/``normal``), :mod:`._samplers` (the samplers built on
them), :mod:`._register` (all of these as primitives, with their batching
rule), then the distributions :mod:`._dists`, :mod:`._compose`,
:mod:`._discrete` and the key queries :mod:`._keyinfo`; this package
re-exports their public names.
"""

from __future__ import annotations

import sys as _sys

from .._prng_key import PRNGKeyArray
from ..codegen.emit import register_namespace as _register_namespace
from ._compose import (
    ball,
    beta,
    chisquare,
    dirichlet,
    f,
    generalized_normal,
    multivariate_normal,
    orthogonal,
    t,
)
from ._discrete import binomial, multinomial
from ._dists import (
    cauchy,
    double_sided_maxwell,
    gamma,
    geometric,
    loggamma,
    lognormal,
    maxwell,
    pareto,
    poisson,
    rayleigh,
    triangular,
    truncated_normal,
    wald,
    weibull_min,
)
from ._keyinfo import KeyDType, clone, key_dtype, key_impl
from ._register import (
    PRNGKey,
    bernoulli,
    bits,
    categorical,
    choice,
    exponential,
    fold_in,
    gumbel,
    key,
    key_data,
    laplace,
    logistic,
    normal,
    permutation,
    rademacher,
    randint,
    split,
    uniform,
    wrap_key_data,
)

__all__ = [
    "PRNGKey",
    "key",
    "key_data",
    "wrap_key_data",
    "PRNGKeyArray",
    "split",
    "fold_in",
    "bits",
    "uniform",
    "normal",
    "bernoulli",
    "exponential",
    "gumbel",
    "randint",
    "permutation",
    "choice",
    "categorical",
    "rademacher",
    "laplace",
    "logistic",
]

__all__ += [
    "truncated_normal",
    "cauchy",
    "lognormal",
    "pareto",
    "rayleigh",
    "maxwell",
    "double_sided_maxwell",
    "weibull_min",
    "triangular",
    "wald",
    "geometric",
    "gamma",
    "loggamma",
    "beta",
    "dirichlet",
    "chisquare",
    "t",
    "f",
    "key_impl",
    "key_dtype",
    "clone",
    "KeyDType",
    "generalized_normal",
    "ball",
    "multivariate_normal",
    "orthogonal",
    "poisson",
    "binomial",
    "multinomial",
]

_register_namespace("random", _sys.modules[__name__])  # generated code's `random`
