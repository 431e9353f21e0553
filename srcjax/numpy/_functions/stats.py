"""``jnp`` creation helpers (``logspace``, ``append``), statistics
(``allclose``, ``average``, ``cov``) and polynomials, convolution and
integration (``polyval``, ``convolve``, ``trapezoid``, ``cross``), as
compositions of primitives."""

from __future__ import annotations

from ...primitives.ad import broadcast_to, moveaxis, reshape, sum, zeros_like
from ...primitives.creation import asarray, linspace, ones_like, shape, size
from ...primitives.elementwise import isclose, power
from ...primitives.linalg import cross as _cross3
from ...primitives.linalg import matmul
from ...primitives.reductions import all as _all
from ...primitives.reductions import mean
from ...primitives.structural import concatenate, diff, ravel, squeeze, take
from ._static import average_weight_shape, convolve_table, inexact_dtype

# ---------------------------------------------------------------------------
# creation


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``num`` numbers spaced evenly on a log scale, ``base ** linspace(start,
    stop, num, endpoint)`` (jax.numpy.logspace). Shape: ``(num,)`` (array
    ``start``/``stop`` add their broadcast shape, with the samples at ``axis``).
    Dtype: ``dtype``, else the default float (float32 unless x64).
    Differentiable in ``start``, ``stop`` and ``base``."""
    lin = linspace(start, stop, num, endpoint=endpoint, axis=axis)
    return asarray(power(base, lin), dtype=dtype)


def append(arr, values, axis=None):
    """``values`` appended to ``arr`` (jax.numpy.append): both flattened when
    ``axis`` is None, else concatenated along ``axis`` (same rank, other axes
    equal). Dtype: JAX's promotion of both. Differentiable in both; raises like
    ``concatenate`` for mismatched shapes."""
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([arr, values], axis=axis)


# ---------------------------------------------------------------------------
# statistics


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``a`` is close to the one of ``b`` it broadcasts
    with: ``all(isclose(a, b, rtol, atol, equal_nan))`` (jax.numpy.allclose; see
    ``jnp.isclose`` for the test and its dtype rules). Returns a 0-d bool array
    (per example under vmap). Raises ValueError when the shapes do not
    broadcast. Not differentiable."""
    return _all(isclose(a, b, rtol, atol, equal_nan))


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted average over ``axis`` (jax.numpy.average).

    ``weights``: None (the plain mean), an array of ``a``'s shape, or a 1-D array
    of length ``a.shape[axis]`` for an int ``axis``. Shape: ``a``'s without the
    reduced axes (kept as 1 with ``keepdims``). Dtype: JAX's inexact promotion of
    ``a`` and ``weights``. With ``returned=True``: ``(average, sum_of_weights)``,
    the weight sum broadcast to the average's shape. Differentiable in ``a`` and
    ``weights``. Raises ``ValueError``/``TypeError`` for weights that do not fit
    ``a`` (as JAX). A zero weight sum gives inf/NaN (JAX does not check)."""
    if weights is None:
        avg = mean(a, axis=axis, keepdims=keepdims)
        wsum = ones_like(avg) * (size(a) // size(avg))
    else:
        dt = inexact_dtype(a, weights)
        a = asarray(a, dtype=dt)
        w = reshape(
            asarray(weights, dtype=dt), average_weight_shape(shape(a), shape(weights), axis)
        )
        wsum = sum(broadcast_to(w, shape(a)), axis=axis, keepdims=keepdims)
        avg = sum(a * w, axis=axis, keepdims=keepdims) / wsum
    if returned:
        return avg, broadcast_to(wsum, shape(avg))
    return avg


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None):
    """Covariance matrix of the variables in ``m`` (jax.numpy.cov).

    ``m``: 1-D (one variable) or 2-D, a variable per row (``rowvar=True``) or per
    column; ``y``: more variables in the same layout. Normalized by ``N - ddof``
    (``ddof`` defaults to 1, or 0 with ``bias=True``). Shape: ``(k, k)`` for ``k``
    variables, 0-d for one. Dtype: the default float for integer input, else
    that of ``m``/``y``. Differentiable in ``m`` and ``y``. Raises ``ValueError``
    for more than 2 dimensions; ``fweights``/``aweights`` raise
    ``NotImplementedError``."""
    if fweights is not None or aweights is not None:
        raise NotImplementedError("srcjax jnp.cov: fweights and aweights are not supported")
    x = _cov_rows(m, rowvar)
    if y is not None:
        x = concatenate([x, _cov_rows(y, rowvar)], axis=0)
    if ddof is None:
        ddof = 0 if bias else 1
    xc = x - mean(x, axis=1, keepdims=True)
    c = matmul(xc, xc.T) / (shape(x)[1] - ddof)
    return squeeze(c)


def _cov_rows(m, rowvar):
    """``m`` as a 2-D array with one variable per row."""
    if len(shape(m)) > 2:
        raise ValueError("m has more than 2 dimensions")
    x = asarray(m, dtype=inexact_dtype(m))
    if len(shape(m)) < 2:
        x = reshape(x, (1, -1))
    if not rowvar and shape(x)[0] != 1:
        x = x.T
    return x


# ---------------------------------------------------------------------------
# polynomials, convolution, integration


def polyval(p, x, unroll=16):
    """The polynomial with coefficients ``p`` (highest degree first) at ``x``
    (jax.numpy.polyval), by Horner's rule. ``p``: ``(n,)`` (or ``(n, ...)``,
    broadcasting its trailing axes against ``x``). Shape: the broadcast of
    ``p.shape[1:]`` and ``x.shape``; dtype: JAX's promotion of ``p`` and ``x``.
    Differentiable in both (exact at ``x = 0``); ``unroll`` is ignored."""
    p = asarray(p)  # (p[i] of a NumPy p is NumPy's: an Array, as JAX's)
    y = zeros_like(x)
    for i in range(shape(p)[0]):
        y = y * x + p[i]
    return y


def convolve(a, v, mode="full", precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-D arrays (jax.numpy.convolve).

    ``mode``: ``"full"`` (length ``n + m - 1``), ``"same"`` (``max(n, m)``,
    centered) or ``"valid"`` (``max(n, m) - min(n, m) + 1``). Dtype: JAX's
    inexact promotion of ``a`` and ``v`` (integers give the default float), or
    ``preferred_element_type`` (the product computed in it). Differentiable
    in both. Computed as a product
    of the shorter operand with a ``(min(n, m), n + m - 1)`` table of shifted
    copies of the longer one. Raises ``ValueError`` for inputs that are not
    1-D, empty inputs or an unknown ``mode``."""
    if len(shape(a)) != 1 or len(shape(v)) != 1:
        raise ValueError("convolve() only support 1-dimensional inputs.")
    if size(a) == 0 or size(v) == 0:
        raise ValueError("convolve: inputs cannot be empty")
    if mode != "full" and mode != "same" and mode != "valid":
        raise ValueError(f"mode must be one of ['full', 'same', 'valid'], got {mode!r}")
    if preferred_element_type is None:
        dt = inexact_dtype(a, v)
        a = asarray(a, dtype=dt)
        v = asarray(v, dtype=dt)
    long, short = (a, v) if size(a) >= size(v) else (v, a)
    n = size(long)
    m = size(short)
    padded = concatenate([long, zeros_like(long[:1])])
    table = take(padded, convolve_table(n, m))
    if preferred_element_type is None:
        full = matmul(short, table)
    else:
        full = matmul(short, table, preferred_element_type=preferred_element_type)
    if mode == "same":
        start = (m - 1) // 2
        return full[start : start + n]
    if mode == "valid":
        return full[m - 1 : n]
    return full


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of ``y`` along ``axis`` by the trapezoidal rule
    (jax.numpy.trapezoid): sample points ``x`` (1-D of length ``y.shape[axis]``,
    or ``y``'s shape), else spacing ``dx``. Shape: ``y``'s without ``axis``;
    dtype: JAX's inexact promotion of ``y`` and ``x``/``dx``. Differentiable in
    ``y``, ``x`` and ``dx``."""
    y = moveaxis(asarray(y, dtype=inexact_dtype(y)), axis, -1)
    if x is None and len(shape(dx)) == 0:
        # constant spacing: dx (sum(y) - (y_first + y_last) / 2), as JAX computes it
        # (no doubled sum that could overflow float16)
        return dx * (sum(y, axis=-1) - 0.5 * (y[..., 0] + y[..., -1]))
    if x is None:
        d = dx
    elif len(shape(x)) == 1:
        d = diff(x)
    else:
        d = moveaxis(diff(x, axis=axis), axis, -1)
    return 0.5 * sum(d * (y[..., 1:] + y[..., :-1]), axis=-1)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 2- or 3-vectors (jax.numpy.cross) along ``axisa`` of
    ``a`` and ``axisb`` of ``b`` (``axis`` sets all three); the other axes
    broadcast.

    Two 3-vectors (or a 2-vector, padded with a zero z, and a 3-vector) give a
    3-vector at ``axisc``; two 2-vectors give the scalar z-component ``a0 b1 -
    a1 b0`` (no vector axis), as in JAX. Dtype: JAX's promotion of ``a`` and
    ``b``. Differentiable in both. Raises ``ValueError`` when a vector axis has
    a length other than 2 or 3."""
    if axis is not None:
        axisa = axis
        axisb = axis
        axisc = axis
    na = shape(a)[axisa]
    nb = shape(b)[axisb]
    if (na != 2 and na != 3) or (nb != 2 and nb != 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    if na == 2 and nb == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    if na == 2:
        a = concatenate([a, zeros_like(a[..., :1])], axis=-1)
    if nb == 2:
        b = concatenate([b, zeros_like(b[..., :1])], axis=-1)
    return _cross3(a, b, -1, -1, axisc)
