"""``jax.random`` samplers built on ``gamma``/``loggamma``: ``beta``,
``dirichlet``, ``chisquare``, ``t`` and ``f``.

Each is a composition (plain Python over srcjax primitives, inlined by the
transforms like a user function), following JAX 0.10.2's definition step for
step with the same key splits. So ``vmap`` over keys runs the vectorised
samplers, and derivatives in the shape parameters follow from ``gamma``'s and
``loggamma``'s implicit reparameterization, as in JAX. Static argument checks
run in non-differentiable ``ad.random_*`` helpers.

Not bit-exact with JAX: the gamma draws differ from JAX's by a few ulps (see
``srcjax.random.gamma``), and ``exp`` is NumPy's, not XLA's float32
polynomial (at most an ulp apart).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from .. import numpy as jnp
from ..nn import softmax
from ..primitives.registry import Primitive, register
from . import _check_shape, _float_dtype, _shape, normal, split
from ._dists import gamma, loggamma


# =========================================================================== static helpers
def _param_shape_impl(name, shape, s1, s2=()):
    """JAX's ``_check_broadcast_shapes``: ``shape`` checked against the
    parameters' shapes ``s1``, ``s2``, or their broadcast shape when ``shape`` is
    None (internal; raises ValueError/TypeError)."""
    if shape is None:
        try:
            return tuple(np.broadcast_shapes(tuple(s1), tuple(s2)))
        except ValueError:
            raise ValueError(
                f"{name}: incompatible parameter shapes {tuple(s1)} and {tuple(s2)}"
            ) from None
    shape = _shape(shape, name)
    _check_shape(name, shape, tuple(s1), tuple(s2))
    return shape


def _dirichlet_shape_impl(shape, alpha_shape):
    """The shape of ``dirichlet``'s log-gamma draws: ``shape + alpha.shape[-1:]``
    (``shape`` defaults to ``alpha.shape[:-1]``) (internal; raises ValueError)."""
    alpha_shape = tuple(alpha_shape)
    if len(alpha_shape) < 1:
        raise ValueError(
            f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {len(alpha_shape)}"
        )
    if shape is None:
        return alpha_shape
    shape = _shape(shape, "dirichlet")
    _check_shape("dirichlet", shape, alpha_shape[:-1])
    return shape + alpha_shape[-1:]


def _sampler_dtype_impl(name, dtype):
    """The float dtype a sampler computes in: float32 (the default while
    ``jax_enable_x64`` is off); float64 raises NotImplementedError, a non-float
    dtype ValueError (internal)."""
    d = _float_dtype(float if dtype is None else dtype, name)
    if d != np.float32:
        raise NotImplementedError(
            f"srcjax.random.{name}: float64 is not implemented (the gamma sampler is "
            "float32 only); pass dtype=jnp.float32"
        )
    return d


def _static(public, impl, samples):
    p = register(Primitive(public, impl, kind="internal", differentiable=False))
    p.def_batch(lambda c: (c.rebuild(), False))  # static values: the same for every example
    p.samples = samples
    return p


param_shape = _static(
    "ad.random_param_shape",
    _param_shape_impl,
    lambda rng: [(("beta", None, (3,), (2, 1)), {}), (("t", (2, 3), (3,)), {})],
)
dirichlet_shape = _static(
    "ad.random_dirichlet_shape",
    _dirichlet_shape_impl,
    lambda rng: [((None, (2, 3)), {}), (((4, 2), (2, 3)), {})],
)
sampler_dtype = _static(
    "ad.random_sampler_dtype", _sampler_dtype_impl, lambda rng: [(("beta", None), {})]
)


# =========================================================================== samplers
def beta(key: Any, a: Any, b: Any, shape: Optional[Sequence[int]] = None, dtype: Any = None):
    """Beta(a, b) random values (``jax.random.beta``).

    As JAX: the key is split in two, ``log_a = loggamma(k_a, a)`` and ``log_b =
    loggamma(k_b, b)``, and the result is ``exp(log_a - m) / (exp(log_a - m) +
    exp(log_b - m))`` with ``m = max(log_a, log_b)``.

    Args:
        key: a key, uint32 of shape ``(2,)`` (use ``srcjax.vmap`` for a batch).
        a, b: the shape parameters (> 0), real scalars or arrays.
        shape: the result's shape (default: ``a`` and ``b`` broadcast); they must
            broadcast to it.
        dtype: float32 (the default float dtype unless ``jax_enable_x64``).

    Returns:
        float32 array of ``shape``, values in ``[0, 1]``.

    Raises:
        TypeError: an invalid key or shape; a list or complex parameter.
        ValueError: parameters that do not broadcast to ``shape``; a non-float
            dtype; a batch of keys.
        NotImplementedError: float64.

    Differentiable in ``a`` and ``b`` (through ``loggamma``'s implicit
    reparameterization, as JAX). Not bit-exact with JAX (a few ulps: see
    ``srcjax.random.gamma``).
    """
    shape = param_shape("beta", shape, jnp.shape(a), jnp.shape(b))
    dt = sampler_dtype("beta", dtype)
    keys = split(key)
    log_a = loggamma(keys[0], a, shape, dt)
    log_b = loggamma(keys[1], b, shape, dt)
    log_max = jnp.maximum(log_a, log_b)
    ea = jnp.exp(log_a - log_max)
    eb = jnp.exp(log_b - log_max)
    return ea / (ea + eb)


def dirichlet(key: Any, alpha: Any, shape: Optional[Sequence[int]] = None, dtype: Any = None):
    """Dirichlet random values (``jax.random.dirichlet``): ``softmax(loggamma(key,
    alpha, shape + alpha.shape[-1:]), -1)``, as JAX.

    Args:
        key: a key, uint32 of shape ``(2,)`` (use ``srcjax.vmap`` for a batch).
        alpha: concentrations (> 0), a real array of shape ``(..., n)``.
        shape: the batch shape (default ``alpha.shape[:-1]``); ``alpha.shape[:-1]``
            must broadcast to it.
        dtype: float32 (the default float dtype unless ``jax_enable_x64``).

    Returns:
        float32 array of ``shape + (n,)``; each row sums to 1.

    Raises:
        ValueError: a 0-d ``alpha``; ``alpha.shape[:-1]`` not broadcasting to
            ``shape``; a non-float dtype; a batch of keys.
        TypeError: an invalid key or shape; a list or complex ``alpha``.
        NotImplementedError: float64.

    Differentiable in ``alpha`` (as JAX). Not bit-exact with JAX (a few ulps).
    """
    full = dirichlet_shape(shape, jnp.shape(alpha))
    dt = sampler_dtype("dirichlet", dtype)
    log_g = loggamma(key, alpha, full, dt)
    return softmax(log_g, axis=-1)


def chisquare(key: Any, df: Any, shape: Optional[Sequence[int]] = None, dtype: Any = None):
    """Chi-square random values (``jax.random.chisquare``): ``2 * exp(loggamma(key,
    df / 2))``, as JAX.

    Args:
        key: a key, uint32 of shape ``(2,)`` (use ``srcjax.vmap`` for a batch).
        df: degrees of freedom (> 0), a real scalar or array.
        shape: the result's shape (default ``df``'s shape).
        dtype: float32 (the default float dtype unless ``jax_enable_x64``).

    Returns:
        float32 array of ``shape``.

    Raises:
        ValueError: ``df`` not broadcasting to ``shape``; a non-float dtype; a
            batch of keys.
        TypeError: an invalid key or shape; a list or complex ``df``.
        NotImplementedError: float64.

    Differentiable in ``df`` (as JAX). Not bit-exact with JAX (a few ulps).
    """
    shape = param_shape("chisquare", shape, jnp.shape(df))
    dt = sampler_dtype("chisquare", dtype)
    half_df = jnp.asarray(df, dt) / 2
    log_g = loggamma(key, half_df, shape, dt)
    return jnp.exp(log_g) * 2


def t(key: Any, df: Any, shape: Optional[Sequence[int]] = None, dtype: Any = None):
    """Student's t random values (``jax.random.t``): with the key split in two,
    ``normal(k_n) * sqrt((df / 2) / gamma(k_g, df / 2))``, as JAX.

    Args:
        key: a key, uint32 of shape ``(2,)`` (use ``srcjax.vmap`` for a batch).
        df: degrees of freedom (> 0), a real scalar or array.
        shape: the result's shape (default ``df``'s shape).
        dtype: float32 (the default float dtype unless ``jax_enable_x64``).

    Returns:
        float32 array of ``shape``.

    Raises:
        ValueError: ``df`` not broadcasting to ``shape``; a non-float dtype; a
            batch of keys.
        TypeError: an invalid key or shape; a list or complex ``df``.
        NotImplementedError: float64.

    Differentiable in ``df`` (as JAX). Not bit-exact with JAX (a few ulps).
    """
    shape = param_shape("t", shape, jnp.shape(df))
    dt = sampler_dtype("t", dtype)
    keys = split(key)
    n = normal(keys[0], shape, dt)
    half_df = jnp.asarray(df, dt) / 2
    g = gamma(keys[1], half_df, shape, dt)
    return n * jnp.sqrt(half_df / g)


def f(key: Any, dfnum: Any, dfden: Any, shape: Optional[Sequence[int]] = None, dtype: Any = None):
    """F-distribution random values (``jax.random.f``): with the key split in two
    ``(k_den, k_num)``, ``(chisquare(k_num, dfnum) / dfnum) / (chisquare(k_den,
    dfden) / dfden)``, as JAX.

    Args:
        key: a key, uint32 of shape ``(2,)`` (use ``srcjax.vmap`` for a batch).
        dfnum, dfden: degrees of freedom of the numerator and denominator (> 0).
        shape: the result's shape (default: the two broadcast).
        dtype: float32 (the default float dtype unless ``jax_enable_x64``).

    Returns:
        float32 array of ``shape``.

    Raises:
        ValueError: parameters not broadcasting to ``shape``; a non-float dtype;
            a batch of keys.
        TypeError: an invalid key or shape; a list or complex parameter.
        NotImplementedError: float64.

    Differentiable in ``dfnum`` and ``dfden`` (as JAX). Not bit-exact with JAX.
    """
    shape = param_shape("f", shape, jnp.shape(dfnum), jnp.shape(dfden))
    dt = sampler_dtype("f", dtype)
    keys = split(key)
    dfnum = jnp.asarray(dfnum, dt)
    dfden = jnp.asarray(dfden, dt)
    chi2_num = chisquare(keys[1], dfnum, shape, dt)
    chi2_den = chisquare(keys[0], dfden, shape, dt)
    return (chi2_num / dfnum) / (chi2_den / dfden)
