"""``jax.numpy``'s polynomial functions (``polyadd`` ... ``polyfit``, ``roots``)
as compositions of primitives."""

from __future__ import annotations

import operator as _operator

import numpy as _np

from ... import dtypes as _dt
from ...primitives.ad import broadcast_to, reshape, sum
from ...primitives.creation import asarray, ones, shape, zeros
from ...primitives.elementwise import sqrt
from ...primitives.registry import Primitive, register
from ...primitives.structural import concatenate, ravel, stack
from .._functions import convolve
from ..linalg import lstsq as _lstsq
from ._static import _static, inexact_of, result_dtype
from .arith import trim_zeros
from .indexing import vander

# ---------------------------------------------------------------------------
# polynomials


def polyadd(a1, a2):
    """The sum of two polynomials (coefficients highest degree first)
    (jax.numpy.polyadd): the shorter one is aligned to the end. Dtype: JAX's
    promotion. Differentiable."""
    a1 = asarray(a1)
    a2 = asarray(a2)
    dt = result_dtype(a1, a2)
    a1 = asarray(a1, dtype=dt)
    a2 = asarray(a2, dtype=dt)
    n1 = shape(a1)[0]
    n2 = shape(a2)[0]
    if n2 <= n1:
        return concatenate([a1[: n1 - n2], a1[n1 - n2 :] + a2])
    return concatenate([a2[: n2 - n1], a2[n2 - n1 :] + a1])


def polysub(a1, a2):
    """The difference of two polynomials (jax.numpy.polysub):
    ``polyadd(a1, -a2)``."""
    a1 = asarray(a1)
    a2 = asarray(a2)
    dt = result_dtype(a1, a2)
    return polyadd(asarray(a1, dtype=dt), -asarray(a2, dtype=dt))


def polymul(a1, a2, trim_leading_zeros=False):
    """The product of two polynomials (jax.numpy.polymul): their full
    convolution, in JAX's inexact promotion of both. ``trim_leading_zeros``
    strips leading zero coefficients first (value-dependent). Differentiable."""
    a1 = asarray(a1)
    a2 = asarray(a2)
    dt = inexact_of(a1, a2)
    a1 = asarray(a1, dtype=dt)
    a2 = asarray(a2, dtype=dt)
    if trim_leading_zeros and (shape(a1)[0] > 1 or shape(a2)[0] > 1):
        a1 = trim_zeros(a1, "f")
        a2 = trim_zeros(a2, "f")
    if shape(a1)[0] == 0:
        a1 = zeros((1,), dtype=dt)
    if shape(a2)[0] == 0:
        a2 = zeros((1,), dtype=dt)
    return convolve(a1, a2)


def polyder(p, m=1):
    """The ``m``-th derivative of a polynomial (jax.numpy.polyder), in ``p``'s
    inexact dtype. Differentiable. Raises ValueError for a negative ``m``."""
    m = _operator.index(m)
    p = asarray(p)
    p = asarray(p, dtype=inexact_of(p))
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = shape(p)[0]
    coeff = asarray(_polyder_coeff(n, m), dtype=p.dtype)
    return p[: n - m] * coeff


def _polyder_coeff_impl(n, m):
    """Static: the factors ``k (k-1) .. (k-m+1)`` for the powers ``k`` of
    polyder's surviving coefficients (highest first)."""
    k = _np.arange(m, n)[None, :] - _np.arange(m)[:, None]
    return _np.prod(k, axis=0)[::-1].astype(_np.float64)


_polyder_coeff = _static("ad.more_polyder_coeff", _polyder_coeff_impl)


def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative of a polynomial (jax.numpy.polyint), with
    integration constants ``k`` (scalar or ``m`` of them; 0 by default), in
    JAX's inexact promotion of ``p`` and ``k``. Differentiable. Raises
    ValueError for a negative ``m`` or ``k`` of the wrong length."""
    m = _operator.index(m)
    if k is None:
        k = 0
    p = asarray(p)
    k = asarray(k)
    dt = inexact_of(p, k)
    p = asarray(p, dtype=dt)
    k = ravel(asarray(k, dtype=dt))
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    if shape(k)[0] == 1:
        k = broadcast_to(k, (m,))
    if shape(k) != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p
    coeff = asarray(_polyint_coeff(shape(p)[0], m), dtype=dt)
    return concatenate([p, k]) / coeff


def _polyint_coeff_impl(n, m):
    """Static: polyint's divisors (products of ``max(1, power)``)."""
    grid = _np.arange(n + m)[None, :] - _np.arange(m)[:, None]
    return _np.prod(_np.maximum(1, grid), axis=0)[::-1].astype(_np.float64)


_polyint_coeff = _static("ad.more_polyint_coeff", _polyint_coeff_impl)


def polydiv(u, v, trim_leading_zeros=False):
    """Quotient and remainder of polynomial division (jax.numpy.polydiv), by
    JAX's long division (the remainder keeps ``u``'s length). Dtype: JAX's
    inexact promotion. Differentiable. ``trim_leading_zeros`` raises
    NotImplementedError in srcjax."""
    if trim_leading_zeros:
        raise NotImplementedError("srcjax jnp.polydiv: trim_leading_zeros is not supported")
    u = asarray(u)
    v = asarray(v)
    dt = inexact_of(u, v)
    u = asarray(u, dtype=dt)
    v = asarray(v, dtype=dt)
    m = shape(u)[0] - 1
    n = shape(v)[0] - 1
    scale = 1.0 / v[0]
    qs = []
    for k in range(0, m - n + 1):
        d = scale * u[k]
        qs.append(d)
        u = concatenate([u[:k], u[k : k + n + 1] - d * v, u[k + n + 1 :]])
    if len(qs) == 0:
        return zeros((1,), dtype=dt), u
    return stack(qs), u


def poly(seq_of_zeros):
    """The coefficients of the monic polynomial with the given roots
    (jax.numpy.poly), highest degree first, in their inexact dtype.
    Differentiable. A square matrix (its eigenvalues' polynomial) raises
    NotImplementedError in srcjax; other 2-D input raises ValueError."""
    z = asarray(seq_of_zeros)
    z = asarray(z, dtype=inexact_of(z))
    if len(shape(z)) == 0:
        z = reshape(z, (1,))
    s = shape(z)
    if len(s) == 2 and s[0] == s[1] and s[0] != 0:
        raise NotImplementedError("srcjax jnp.poly: matrix input (eigvals) is not supported")
    if len(s) != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if s[0] == 0:
        return ones((), dtype=z.dtype)
    a = ones((1,), dtype=z.dtype)
    for k in range(s[0]):
        a = convolve(a, stack([ones((), dtype=z.dtype), -z[k]]))
    return a


def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit of degree ``deg`` (jax.numpy.polyfit):
    coefficients highest degree first, shape ``(deg + 1,)`` (``(deg + 1, k)``
    for 2-D ``y``). ``w`` weights the points; ``full`` also returns
    ``(residuals, rank, singular_values, rcond)``. Computed as JAX does
    (scaled Vandermonde matrix, ``lstsq``). Differentiable in ``x``/``y``.
    ``cov=True`` raises NotImplementedError in srcjax; JAX's TypeError/
    ValueError for bad shapes or ``deg``."""
    deg = _operator.index(deg)
    x = asarray(x)
    y = asarray(y)
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if len(shape(x)) != 1:
        raise TypeError("expected 1D vector for x")
    if shape(x)[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if len(shape(y)) < 1 or len(shape(y)) > 2:
        raise TypeError("expected 1D or 2D array for y")
    if shape(x)[0] != shape(y)[0]:
        raise TypeError("expected x and y to have same length")
    if cov:
        raise NotImplementedError("srcjax jnp.polyfit: cov=True is not supported")
    if rcond is None:
        rcond = shape(x)[0] * _dt.finfo(inexact_of(x)).eps
    lhs = vander(x, order)
    rhs = y
    if w is not None:
        w = asarray(w)
        w = asarray(w, dtype=inexact_of(w))
        if len(shape(w)) != 1:
            raise TypeError("expected a 1-d array for weights")
        if shape(w)[0] != shape(y)[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * reshape(w, (-1, 1))
        if len(shape(rhs)) == 2:
            rhs = rhs * reshape(w, (-1, 1))
        else:
            rhs = rhs * w
    scale = sqrt(sum(lhs * lhs, axis=0))
    lhs = lhs / reshape(scale, (1, -1))
    c, resids, rank, sv = _lstsq(lhs, rhs, rcond)
    if len(shape(c)) > 1:
        c = c / reshape(scale, (-1, 1))
    else:
        c = c / scale
    if full:
        return c, resids, rank, sv, asarray(rcond)
    return c


def roots(p, strip_zeros=True):
    """The roots of the polynomial with coefficients ``p`` (highest degree
    first) (jax.numpy.roots,
    https://docs.jax.dev/en/latest/_autosummary/jax.numpy.roots.html): the
    eigenvalues of its companion matrix, computed as JAX does (LAPACK ``geev`` in
    ``p``'s precision, so the values and their order are JAX's).

    Args:
        p: a scalar or rank-1 array of coefficients (integers and bools are
            promoted to the default float).
        strip_zeros: drop leading zero coefficients first (as ``numpy.roots``),
            so the result has ``len(p) - 1 - leading_zeros`` roots. With
            ``False`` the result always has ``len(p) - 1`` entries: one NaN
            (``nan+nanj``) per leading zero, at the end; zero roots come just
            before them. Unlike ``numpy.roots``, trailing zero coefficients are
            not stripped (they give zero roots).

    Returns:
        complex64 array (complex128 for float64/complex128 ``p``) of the roots.
        Empty for fewer than two coefficients. NaNs where the companion matrix
        is not finite (NaN/inf coefficients, overflow), as JAX's ``eig``.
        float16 ``p`` is computed in float32 (JAX raises NotImplementedError).

    Raises:
        ValueError: ``p`` of rank 2 or more.

    Not differentiable in srcjax (JAX differentiates through ``eig``): asking
    for a derivative raises a 'no derivative rule' error. JAX refuses
    ``strip_zeros=True`` under ``jit``/``vmap`` (the result's length depends on
    the values); srcjax computes it under ``jit`` and, per example, under
    ``vmap`` (where examples with different numbers of leading zeros cannot be
    stacked).
    """
    p = asarray(p)
    p = asarray(p, dtype=inexact_of(p))
    return _poly_roots(p, strip_zeros)


def _companion_roots(p):
    """The eigenvalues of the companion matrix of ``p`` (1-D, ``p[0] != 0``)."""
    from scipy import linalg as _sl

    single = p.dtype in (_np.dtype(_np.float32), _np.dtype(_np.complex64))
    cdt = _np.dtype(_np.complex64 if single else _np.complex128)
    if p.size < 2:
        return _np.zeros((0,), cdt)
    n = p.size - 1
    a = _np.diag(_np.ones(n - 1, p.dtype), -1)
    with _np.errstate(all="ignore"):
        a[0, :] = -p[1:] / p[0]
    if not _np.all(_np.isfinite(a)):  # LAPACK would fail: JAX's eig gives NaNs
        return _np.full((n,), complex(_np.nan, _np.nan), cdt)
    return _np.asarray(_sl.eigvals(a, check_finite=False), cdt)


def _poly_roots_impl(p, strip_zeros=True):
    """Per example: JAX's ``roots`` on an inexact ``p`` (see :func:`roots`)."""
    p = _np.asarray(p)
    if p.dtype == _np.float16:
        p = p.astype(_np.float32)
    if p.ndim == 0:
        p = p.reshape(1)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    zero = p == 0
    lead = p.size if zero.all() else int(_np.argmin(zero))
    if strip_zeros or p.size < 2:
        return _companion_roots(p[lead:] if p.size >= 2 else p)
    q = _np.roll(p if lead < p.size else _np.ones_like(p), -lead)
    r = _companion_roots(q)
    r = r[_np.argsort(r == 0, kind="stable")]
    if lead:
        r[max(r.size - lead, 0) :] = complex(_np.nan, _np.nan)
    return r


_poly_roots = register(Primitive("ad.more_roots", _poly_roots_impl, kind="internal"))
_poly_roots.missing_rule_hint = (
    "srcjax jnp.roots has no derivative (JAX differentiates through eig, which "
    "srcjax does not have)"
)
