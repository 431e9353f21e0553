"""``jax.random`` samplers built on other samplers: ``beta``, ``dirichlet``,
``chisquare``, ``t``, ``f``, ``generalized_normal`` and ``ball`` (on
``gamma``/``loggamma``), ``multivariate_normal`` and ``orthogonal`` (on
``normal`` and ``jnp.linalg``).

Each is a composition (plain Python over srcjax primitives, inlined by the
transforms like a user function), following JAX 0.10.2's definition step for
step with the same key splits. So ``vmap`` over keys runs the vectorised
samplers, and derivatives in the shape parameters follow from ``gamma``'s and
``loggamma``'s implicit reparameterization, as in JAX. Static argument checks
run in non-differentiable ``ad.random_*`` helpers.

Not bit-exact with JAX: the gamma draws differ from JAX's by a few ulps (see
``srcjax.random.gamma``), ``exp``/``pow`` are NumPy's, not XLA's float32
kernels (an ulp or so apart), and the factorizations are NumPy's LAPACK, not
XLA's, with NumPy's summation order in the products.
"""

from __future__ import annotations

import operator
from typing import Any, Optional, Sequence

import numpy as np

from .. import dtypes as _dt
from .. import numpy as jnp
from ..primitives.nn import softmax
from ..primitives.registry import Primitive, register
from ._base import _float_dtype, _shape
from ._dists import gamma, loggamma
from ._register import exponential, normal, rademacher, split
from ._samplers import _check_shape, _float32_only


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
    ``jax_enable_x64`` is off); float64 and complex raise NotImplementedError,
    another dtype ValueError (internal)."""
    if dtype is not None and np.dtype(dtype).kind == "c":
        raise NotImplementedError(
            f"srcjax.random.{name}: complex dtypes are not implemented (srcjax's normal "
            "sampler has no complex draws)"
        )
    return _float32_only(
        float if dtype is None else dtype, name, "the gamma sampler is float32 only"
    )


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
        key: a key, typed (shape ``()``) or raw (uint32 ``(2,)``); use ``srcjax.vmap`` for a batch.
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
        key: a key, typed (shape ``()``) or raw (uint32 ``(2,)``); use ``srcjax.vmap`` for a batch.
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
        key: a key, typed (shape ``()``) or raw (uint32 ``(2,)``); use ``srcjax.vmap`` for a batch.
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

    Arguments (``key``, ``df`` > 0, ``shape``, ``dtype``), result (float32 of
    ``shape``), errors and derivatives (in ``df``; not bit-exact with JAX, a few
    ulps) as :func:`chisquare`.
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
        key: a key, typed (shape ``()``) or raw (uint32 ``(2,)``); use ``srcjax.vmap`` for a batch.
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


# =========================================================================== more static helpers
def _shape_plus_impl(name, shape, d):
    """``shape + (d,)`` for ``ball``: ``d`` a non-negative int (internal)."""
    try:
        d = operator.index(d)
    except TypeError:
        raise TypeError(f"{name}: d must be an int, got {d!r}") from None
    if d < 0:
        raise ValueError(f"{name}: d must be non-negative, got {d}")
    return _shape(shape, name) + (d,)


def _orthogonal_shape_impl(shape, n, m):
    """``(shape + (max(n, m), min(n, m)), n < m)`` for ``orthogonal``: the
    normal draws' shape and whether the result is their Q transposed (internal)."""
    try:
        n = operator.index(n)
        m = n if m is None else operator.index(m)
    except TypeError:
        raise TypeError(f"orthogonal: n and m must be ints, got {n!r}, {m!r}") from None
    if n < 0 or m < 0:
        raise ValueError(f"orthogonal: negative matrix size ({n}, {m})")
    return _shape(shape, "orthogonal") + (max(n, m), min(n, m)), n < m


def _mvn_setup_impl(shape, mean, cov, method, dtype):
    """JAX's checks of ``multivariate_normal``'s arguments (internal): returns
    ``(dtype, normal draws' shape)``; raises ValueError/NotImplementedError."""
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    dt = _dt.result_type_inexact(mean, cov)
    if dtype is not None:
        dt = _float_dtype(dtype, "multivariate_normal")
    if dt.kind != "f":
        raise ValueError(f"dtype argument to `multivariate_normal` must be a float dtype, got {dt}")
    ms, cs = np.shape(mean), np.shape(cov)
    if len(ms) < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {len(ms)}")
    if len(cs) < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {len(cs)}")
    n = ms[-1]
    if cs[-2:] != (n, n):
        raise ValueError(
            f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, "
            f"but got cov.shape == {cs}."
        )
    if shape is None:
        try:
            shape = tuple(np.broadcast_shapes(ms[:-1], cs[:-2]))
        except ValueError:
            raise ValueError(
                f"multivariate_normal: incompatible batch shapes {ms[:-1]} and {cs[:-2]}"
            ) from None
    else:
        shape = _shape(shape, "multivariate_normal")
        _check_shape("normal", shape, ms[:-1], cs[:-2])
    return dt, shape + (n,)


shape_plus = _static(
    "ad.random_shape_plus", _shape_plus_impl, lambda rng: [(("ball", (2,), 3), {})]
)
orthogonal_shape = _static(
    "ad.random_orthogonal_shape", _orthogonal_shape_impl, lambda rng: [(((2,), 3, None), {})]
)
mvn_setup = _static(
    "ad.random_mvn_setup",
    _mvn_setup_impl,
    lambda rng: [((None, np.zeros(2, np.float32), np.eye(2, dtype=np.float32), "svd", None), {})],
)


# =========================================================================== samplers on normal / gamma
def generalized_normal(key: Any, p: Any, shape: Sequence[int] = (), dtype: Any = None):
    """Generalized normal random values, density ``~ exp(-|x|**p)``
    (``jax.random.generalized_normal``).

    As JAX: with the key split in two, ``rademacher(k1) * gamma(k0, 1/p) ** (1/p)``.

    Args:
        key: a key, typed (shape ``()``) or raw (uint32 ``(2,)``); use ``srcjax.vmap`` for a batch.
        p: the shape parameter (> 0), a real scalar (or an array broadcasting to
            ``shape``).
        shape: the result's shape (default ``()``).
        dtype: float32 (the default float dtype unless ``jax_enable_x64``).

    Returns:
        float32 array of ``shape``.

    Raises:
        TypeError: an invalid key or shape.
        ValueError: a non-float dtype; a batch of keys.
        NotImplementedError: float64.

    Differentiable in ``p`` (through gamma's implicit reparameterization, as
    JAX). Not bit-exact with JAX (a few ulps).
    """
    shape = param_shape("generalized_normal", shape, ())
    dt = sampler_dtype("generalized_normal", dtype)
    keys = split(key)
    inv_p = 1 / jnp.asarray(p, dt)
    g = gamma(keys[0], inv_p, shape, dt)
    r = rademacher(keys[1], shape, dt)
    return r * g**inv_p


def ball(key: Any, d: int, p: Any = 2, shape: Sequence[int] = (), dtype: Any = None):
    """Uniform random points in the unit ``L_p`` ball of dimension ``d``
    (``jax.random.ball``).

    As JAX: with the key split in two, ``g = generalized_normal(k0, p, shape +
    (d,))``, ``e = exponential(k1, shape)`` and ``g / (sum(|g|**p, -1) + e) **
    (1/p)``.

    Args:
        key: a key, typed (shape ``()``) or raw (uint32 ``(2,)``); use ``srcjax.vmap`` for a batch.
        d: the dimension (a non-negative int).
        p: the norm's exponent (> 0; default 2).
        shape: the batch shape (default ``()``).
        dtype: float32 (the default float dtype unless ``jax_enable_x64``).

    Returns:
        float32 array of ``shape + (d,)``.

    Raises:
        TypeError: an invalid key or shape; a non-integer ``d``.
        ValueError: a negative ``d``; a non-float dtype; a batch of keys.
        NotImplementedError: float64.

    Differentiable in ``p`` (as JAX). Not bit-exact with JAX (a few ulps).
    """
    full = shape_plus("ball", shape, d)
    dt = sampler_dtype("ball", dtype)
    keys = split(key)
    g = generalized_normal(keys[0], p, full, dt)
    e = exponential(keys[1], full[:-1], dt)
    inv_p = 1 / jnp.asarray(p, dt)
    norm = (jnp.sum(jnp.abs(g) ** p, axis=-1) + e) ** inv_p
    return g / jnp.expand_dims(norm, -1)


def multivariate_normal(
    key: Any,
    mean: Any,
    cov: Any,
    shape: Optional[Sequence[int]] = None,
    dtype: Any = None,
    method: str = "cholesky",
):
    """Multivariate normal random values (``jax.random.multivariate_normal``).

    As JAX: ``mean + factor @ z`` for ``z = normal(key, shape + (n,))`` and the
    factor ``cholesky(cov)`` (``method="cholesky"``), ``v * sqrt(w)`` of
    ``eigh(cov)`` (``"eigh"``) or ``u * sqrt(s)`` of ``svd(cov)`` (``"svd"``).

    Args:
        key: a key, typed (shape ``()``) or raw (uint32 ``(2,)``); use ``srcjax.vmap`` for a batch.
        mean: the means, ``(..., n)``.
        cov: covariance matrices (positive definite; semi-definite for
            ``"eigh"``/``"svd"``), ``(..., n, n)``; the batch shapes of ``mean``
            and ``cov`` broadcast.
        shape: the batch shape of the result (default: the two batch shapes
            broadcast); they must broadcast to it.
        dtype: the result's float dtype (default: ``mean``'s and ``cov``'s
            inexact promotion, float32).
        method: ``"cholesky"`` (default), ``"eigh"`` or ``"svd"``.

    Returns:
        array of ``shape + (n,)``, float32.

    Raises:
        ValueError: an unknown ``method``; ``mean.ndim < 1``; ``cov.ndim < 2``;
            ``cov`` not ``(..., n, n)``; batch shapes that do not broadcast to
            ``shape``; a non-float dtype; a batch of keys.
        TypeError: an invalid key or shape.
        NotImplementedError: float64.

    Differentiable in ``mean`` and ``cov`` (through the factorization, as JAX).
    Not bit-exact with JAX: the normal draws are, but the factorization and the
    product are NumPy's (differences of order ``1e-7`` relative).
    """
    dt, full = mvn_setup(shape, mean, cov, method, dtype)
    mean = jnp.asarray(mean, dt)
    cov = jnp.asarray(cov, dt)
    if method == "svd":
        u, s, _ = jnp.linalg.svd(cov)
        factor = u * jnp.sqrt(s[..., None, :])
    elif method == "eigh":
        w, v = jnp.linalg.eigh(cov)
        factor = v * jnp.sqrt(w[..., None, :])
    else:
        factor = jnp.linalg.cholesky(cov)
    z = normal(key, full, dt)
    return mean + jnp.einsum("...ij,...j->...i", factor, z)


def orthogonal(key: Any, n: int, shape: Sequence[int] = (), dtype: Any = None, m: Any = None):
    """Uniformly distributed (semi-)orthogonal matrices (``jax.random.orthogonal``).

    As JAX (Mezzadri's method): ``q, r = qr(normal(key, shape + (max(n, m),
    min(n, m))))`` and ``q * sign(diag(r))`` (transposed when ``n < m``).

    Args:
        key: a key, typed (shape ``()``) or raw (uint32 ``(2,)``); use ``srcjax.vmap`` for a batch.
        n: the number of rows.
        shape: the batch shape (default ``()``).
        dtype: float32 (the default float dtype unless ``jax_enable_x64``);
            complex dtypes (JAX: the unitary group) are not implemented.
        m: the number of columns (default ``n``).

    Returns:
        float32 array of ``shape + (n, m)``: orthonormal rows (``n <= m``) or
        columns (``m <= n``).

    Raises:
        TypeError: an invalid key or shape; non-integer ``n``/``m``.
        ValueError: negative sizes; a non-float dtype; a batch of keys.
        NotImplementedError: float64; complex dtypes (srcjax's ``normal`` has
            no complex draws).

    Not bit-exact with JAX: the normal draws are, the QR factorization is
    NumPy's (differences of order ``1e-7``).
    """
    zshape, transpose = orthogonal_shape(shape, n, m)
    dt = sampler_dtype("orthogonal", dtype)
    z = normal(key, zshape, dt)
    q, r = jnp.linalg.qr(z)
    d = jnp.diagonal(r, axis1=-2, axis2=-1)
    x = q * jnp.expand_dims(jnp.sign(d), -2)
    if transpose:
        return jnp.swapaxes(x, -1, -2)
    return x
