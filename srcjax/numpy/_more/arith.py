"""``jax.numpy`` integer and float arithmetic (``gcd``, ``frexp``, ``spacing``),
selections (``partition``), shape manipulation (``resize``, ``trim_zeros``,
``unwrap``) and the ``*_indices_from`` helpers, as compositions of primitives."""

from __future__ import annotations

import operator as _operator

import numpy as _np

from ...primitives.ad import broadcast_to, expand_dims, moveaxis, reshape, zeros_like
from ...primitives.creation import (
    arange,
    asarray,
    diag_indices,
    ones,
    ones_like,
    shape,
    size,
    tril_indices,
    triu_indices,
    zeros,
)
from ...primitives.elementwise import abs as _abs
from ...primitives.elementwise import (
    ceil,
    floor,
    floor_divide,
    isinf,
    logical_and,
    logical_or,
    power,
    remainder,
    where,
)
from ...primitives.more import frexp_exponent, frexp_mantissa, nextafter
from ...primitives.reductions import any as _any
from ...primitives.reductions import cumsum
from ...primitives.reductions import top_k as _top_k
from ...primitives.setops import nonzero as _nonzero
from ...primitives.structural import concatenate, diff, ravel
from .._functions import copysign
from ._static import (
    _checker,
    _norm_axes_impl,
    broadcast_shapes_of,
    dtype_kind,
    inexact_of,
    norm_axis,
    result_dtype,
    smallest_subnormal,
)

# ---------------------------------------------------------------------------
# integer and float arithmetic


def gcd(x1, x2):
    """Greatest common divisor of ``|x1|`` and ``|x2|``, elementwise
    (jax.numpy.gcd; ``gcd(0, 0) = 0``). Broadcasts; dtype: JAX's promotion of
    both. Raises ValueError for non-integer input."""
    dt = result_dtype(x1, x2)
    if dtype_kind(zeros((), dtype=dt)) not in "iu":
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")
    s = broadcast_shapes_of([shape(x1), shape(x2)])
    a = broadcast_to(_abs(asarray(x1, dtype=dt)), s)
    b = broadcast_to(_abs(asarray(x2, dtype=dt)), s)
    while _any(b != 0):
        nz = b != 0
        safe = where(nz, b, ones_like(b))
        r = where(nz, remainder(a, safe), zeros_like(b))
        a = where(nz, b, a)
        b = r
    return a


def lcm(x1, x2):
    """Least common multiple of ``|x1|`` and ``|x2|``, elementwise
    (jax.numpy.lcm; 0 if either is 0). Broadcasts; dtype: JAX's promotion.
    Raises ValueError for non-integer input."""
    dt = result_dtype(x1, x2)
    if dtype_kind(zeros((), dtype=dt)) not in "iu":
        raise ValueError("Arguments to jax.numpy.lcm must be integers.")
    a = _abs(asarray(x1, dtype=dt))
    b = _abs(asarray(x2, dtype=dt))
    d = gcd(a, b)
    safe = where(d == 0, ones_like(d), d)
    return where(d == 0, zeros_like(d), a * floor_divide(b, safe))


def frexp(x):
    """Mantissa and exponent of ``x`` (jax.numpy.frexp): ``x = m * 2**e`` with
    ``0.5 <= |m| < 1`` (``m = x``, ``e = 0`` for 0, inf and NaN). Returns ``(m,
    e)``: ``m`` in ``x``'s inexact dtype, ``e`` int32, both of ``x``'s shape.
    ``m`` is differentiable (``2**-e``, JAX's rule). TypeError for complex
    input. Subnormal inputs get their exact decomposition (NumPy's); JAX on
    CPU gives other values there."""
    x = asarray(x)
    # (asarray: the ad.* helpers give buffers eagerly; Arrays, as JAX's)
    return asarray(frexp_mantissa(x)), asarray(frexp_exponent(x))


def ldexp(x1, x2):
    """``x1 * 2**x2`` elementwise (jax.numpy.ldexp), computed as JAX does
    (through ``frexp`` so that a small ``x1`` with a large ``x2`` does not
    overflow early). ``x2`` must be an integer array. Dtype: ``x1``'s inexact
    dtype. Differentiable in ``x1``. Raises ValueError for complex ``x1`` or
    inexact ``x2``."""
    x1 = asarray(x1)
    x2 = asarray(x2)
    if dtype_kind(x1) == "c" or dtype_kind(x2) in "fc":
        raise ValueError(f"ldexp not supported for input types {(x1.dtype, x2.dtype)}")
    dt = inexact_of(x1)
    x1 = asarray(x1, dtype=dt)
    x2 = asarray(x2, dtype=dt)
    m = frexp_mantissa(x1)
    e = asarray(frexp_exponent(x1), dtype=dt) + x2
    m = where(e > 0, m * 2, m)
    e = where(e > 0, e - 1, e)
    x = m * power(asarray(2, dtype=dt), e)
    return where(logical_or(isinf(x1), x1 == 0), x1, x)


def modf(x, out=None):
    """Fractional and integral parts of ``x`` (jax.numpy.modf), both with the
    sign of ``x``: ``(x - trunc(x), trunc(x))`` in ``x``'s inexact dtype.
    Differentiable (the integral part has derivative 0). ``out`` raises
    NotImplementedError."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.modf is not supported.")
    x = asarray(x)
    x = asarray(x, dtype=inexact_of(x))
    whole = where(x >= 0, floor(x), ceil(x))
    return x - whole, whole


def spacing(x):
    """The distance from ``x`` to the adjacent float away from zero, elementwise
    (jax.numpy.spacing; negative for negative ``x``; float16 steps toward
    +inf as JAX). Dtype: ``x``'s inexact dtype. Not differentiable (as JAX).
    ValueError for complex input."""
    x = asarray(x)
    dt = inexact_of(x)
    if dtype_kind(zeros((), dtype=dt)) == "c":
        raise ValueError("jnp.spacing is not defined for complex inputs.")
    x = asarray(x, dtype=dt)
    if dt == _np.float16:
        return nextafter(x, _np.inf) - x
    r = nextafter(x, copysign(_np.inf, x)) - x
    return where(r == 0, copysign(asarray(smallest_subnormal(dt), dtype=dt), x), r)


# ---------------------------------------------------------------------------
# sorting-like selections


def partition(a, kth, axis=-1):
    """``a`` partially sorted along ``axis`` (jax.numpy.partition): the ``kth + 1``
    smallest values first in ascending order (so position ``kth`` holds the
    value a full sort puts there), then the rest in descending order (JAX's
    layout, built from two ``lax.top_k``). Shape and dtype ``a``'s.
    Differentiable. Raises NotImplementedError for complex ``a`` and
    ValueError for ``kth`` or ``axis`` out of range."""
    arr = asarray(a)
    if dtype_kind(arr) == "c":
        raise NotImplementedError("jnp.partition for complex dtype is not implemented.")
    ax = norm_axis(axis, len(shape(arr)))
    n = shape(arr)[ax]
    k = norm_axis(kth, n, "kth")
    arr = moveaxis(arr, ax, -1)
    if dtype_kind(arr) == "u":
        bottom = -_top_k(-(arr + 1), k + 1)[0] - 1
    else:
        bottom = -_top_k(-arr, k + 1)[0]
    top = _top_k(arr, n - k - 1)[0]
    return moveaxis(concatenate([bottom, top], axis=-1), -1, ax)


def argpartition(a, kth, axis=-1):
    """Indices that partition ``a`` along ``axis`` (jax.numpy.argpartition):
    the indices of the ``kth + 1`` smallest values first, ordered by value
    (ties by index), then the remaining indices in increasing index order
    (JAX's layout). Shape ``a``'s; dtype int32. Raises NotImplementedError for
    complex ``a`` and ValueError for ``kth`` or ``axis`` out of range."""
    arr = asarray(a)
    if dtype_kind(arr) == "c":
        raise NotImplementedError("jnp.argpartition for complex dtype is not implemented.")
    ax = norm_axis(axis, len(shape(arr)))
    n = shape(arr)[ax]
    k = norm_axis(kth, n, "kth")
    arr = moveaxis(arr, ax, -1)
    if dtype_kind(arr) == "u":
        bottom = _top_k(-(arr + 1), k + 1)[1]
    else:
        bottom = _top_k(-arr, k + 1)[1]
    hit = _any(expand_dims(bottom, -1) == arange(n, dtype=bottom.dtype), axis=-2)
    proxy = where(hit, 0.0, 1.0)
    top = _top_k(proxy, n - k - 1)[1]
    return moveaxis(concatenate([bottom, top], axis=-1), -1, ax)


# ---------------------------------------------------------------------------
# shape manipulation


def resize(a, new_shape):
    """``a`` flattened, repeated as often as needed and cut to ``new_shape``
    (jax.numpy.resize; zeros when ``a`` or the new shape is empty). Dtype
    ``a``'s; differentiable. Raises ValueError for a negative dimension."""
    if isinstance(new_shape, int):
        new_shape = (new_shape,)
    new_shape = tuple(_operator.index(d) for d in new_shape)
    if any(d < 0 for d in new_shape):
        raise ValueError("all elements of `new_shape` must be non-negative")
    arr = ravel(asarray(a))
    new_size = 1
    for d in new_shape:
        new_size = new_size * d
    n = size(arr)
    if n == 0 or new_size == 0:
        return zeros(new_shape, dtype=arr.dtype)
    reps = -(-new_size // n)
    return reshape(concatenate([arr] * reps)[:new_size], new_shape)


def rollaxis(a, axis, start=0):
    """``a`` with ``axis`` moved to before position ``start``
    (jax.numpy.rollaxis, NumPy's convention). Differentiable. Raises
    ValueError for ``start`` outside ``[-ndim, ndim]``."""
    a = asarray(a)
    nd = len(shape(a))
    start = _operator.index(start)
    ax = norm_axis(axis, nd)
    if not -nd <= start <= nd:
        raise ValueError(f"start={start} must satisfy {-nd}<=start<={nd}")
    if start < 0:
        start = start + nd
    if start > ax:
        start = start - 1
    return moveaxis(a, ax, start)


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without its leading (``'f'`` in ``trim``) and trailing (``'b'``)
    all-zero slices along ``axis`` (None: every axis) (jax.numpy.trim_zeros).
    The result's shape depends on the values (JAX needs them concrete; srcjax
    reads them at run time, so it is not for vmap over ``filt``).
    Differentiable in ``filt``."""
    f = asarray(filt)
    return f[_trim_slices(f, trim, axis)]


def _trim_slices_impl(f, trim, axis):
    """The slices trim_zeros keeps (read from the values of ``f``)."""
    f = _np.asarray(f)
    axes = set(_norm_axes_impl(axis, f.ndim))
    t = trim.lower()
    out = []
    for ax in range(f.ndim):
        if ax not in axes or ("f" not in t and "b" not in t):
            out.append(slice(None))
            continue
        mask = _np.any(f != 0, axis=tuple(i for i in range(f.ndim) if i != ax))
        if not mask.any():
            out.append(slice(0, 0))
            continue
        start = int(mask.argmax()) if "f" in t else None
        stop = f.shape[ax] - int(mask[::-1].argmax()) if "b" in t else None
        out.append(slice(start, stop))
    return tuple(out)


_trim_slices = _checker("ad.more_trim_slices", _trim_slices_impl)


def unwrap(p, discont=None, axis=-1, period=2 * _np.pi):
    """``p`` with jumps larger than ``discont`` (default ``period / 2``) along
    ``axis`` replaced by their ``period`` complement (jax.numpy.unwrap). Shape
    ``p``'s; dtype JAX's promotion of ``p`` and ``period``. Differentiable in
    ``p``. Raises ValueError for complex input."""
    p = asarray(p)
    dt = result_dtype(p, period)
    if dtype_kind(zeros((), dtype=dt)) == "c":
        raise ValueError("jnp.unwrap does not support complex inputs.")
    p = asarray(p, dtype=dt)
    period = asarray(period, dtype=dt)
    ax = norm_axis(axis, len(shape(p)))
    if shape(p)[ax] == 0:
        return p
    if discont is None:
        discont = period / 2
    if dtype_kind(p) in "iu":
        interval = period // 2
    else:
        interval = period / 2
    pm = moveaxis(p, ax, 0)
    dd = diff(pm, axis=0)
    ddmod = remainder(dd + interval, period) - interval
    ddmod = where(logical_and(ddmod == -interval, dd > 0), interval, ddmod)
    correct = where(_abs(dd) < discont, zeros_like(ddmod), ddmod - dd)
    up = concatenate([pm[:1], pm[1:] + cumsum(correct, axis=0)], axis=0)
    return moveaxis(up, 0, ax)


# ---------------------------------------------------------------------------
# index helpers


def tril_indices_from(arr, k=0):
    """``tril_indices`` for a 2-D ``arr``'s shape (jax.numpy.tril_indices_from):
    the row and column indices of the lower triangle (diagonal ``k`` and
    below). Raises ValueError unless ``arr`` is 2-D."""
    s = shape(arr)
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return tril_indices(s[0], k=k, m=s[1])


def triu_indices_from(arr, k=0):
    """``triu_indices`` for a 2-D ``arr``'s shape (jax.numpy.triu_indices_from):
    the indices of the upper triangle (diagonal ``k`` and above). Raises
    ValueError unless ``arr`` is 2-D."""
    s = shape(arr)
    if len(s) != 2:
        raise ValueError("Only 2-D inputs are accepted")
    return triu_indices(s[0], k=k, m=s[1])


def diag_indices_from(arr):
    """``diag_indices(n, arr.ndim)`` for an array with all dimensions equal to
    ``n`` (jax.numpy.diag_indices_from). Raises ValueError for fewer than 2
    dimensions or unequal ones."""
    s = shape(arr)
    if len(s) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(s)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(s[0], ndim=len(s))


def mask_indices(n, mask_func, k=0, size=None):
    """The indices where ``mask_func(ones((n, n)), k)`` is non-zero
    (jax.numpy.mask_indices; e.g. ``mask_func=jnp.triu``): ``(rows, cols)``,
    default-int arrays; ``size`` pads or cuts them (with 0) as ``nonzero``."""
    return _nonzero(mask_func(ones((n, n)), k), size=size)
