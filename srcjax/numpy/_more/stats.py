"""``jax.numpy`` comparisons (``array_equal``, ``isreal``), broadcasting helpers,
NaN-aware quantiles and statistics/signal functions (``corrcoef``, ``correlate``,
``gradient``) as compositions of primitives."""

from __future__ import annotations

import builtins as _builtins

import numpy as _np

from ...primitives.ad import (
    broadcast_to,
    default_int,
    expand_dims,
    group_last,
    moveaxis,
    reshape,
    sum,
)
from ...primitives.creation import (
    asarray,
    isrealobj,  # noqa: F401  (jnp.isrealobj)
    shape,
    size,
    zeros,
)
from ...primitives.elementwise import (
    ceil,
    clip,
    conj,
    equal,
    floor,
    imag,
    isnan,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    real,
    sqrt,
    where,
)
from ...primitives.reductions import all as _all
from ...primitives.structural import concatenate, diag, flip, sort, take_along_axis
from .._functions import convolve, cov, iscomplexobj
from ._static import (
    broadcast_shapes_of,
    dtype_kind,
    inexact_of,
    inexact_seq,
    norm_axes,
    result_dtype,
    shapes_broadcast,
)

# ---------------------------------------------------------------------------
# comparisons and dtype predicates


def array_equal(a1, a2, equal_nan=False):
    """Whether ``a1`` and ``a2`` have the same shape and elements
    (jax.numpy.array_equal): a 0-d bool array, False for different shapes; with
    ``equal_nan``, NaNs in the same places count as equal. Not
    differentiable."""
    a1 = asarray(a1)
    a2 = asarray(a2)
    if shape(a1) != shape(a2):
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return _all(eq)


def array_equiv(a1, a2):
    """Whether ``a1`` and ``a2`` are equal after broadcasting
    (jax.numpy.array_equiv): a 0-d bool array, False when the shapes do not
    broadcast. Not differentiable."""
    a1 = asarray(a1)
    a2 = asarray(a2)
    if not shapes_broadcast(shape(a1), shape(a2)):
        return asarray(False)
    return _all(equal(a1, a2))


def isreal(x):
    """Elementwise ``imag(x) == 0`` (jax.numpy.isreal): a bool array of ``x``'s
    shape (all True for real dtypes)."""
    return imag(x) == 0


def iscomplex(x):
    """Elementwise ``imag(x) != 0`` (jax.numpy.iscomplex): a bool array of
    ``x``'s shape (all False for real dtypes)."""
    return imag(x) != 0


# ---------------------------------------------------------------------------
# broadcasting


def broadcast_shapes(*shapes):
    """The shape that arrays of ``shapes`` broadcast to
    (jax.numpy.broadcast_shapes); ints count as 1-D shapes. Returns a tuple of
    ints (``()`` for no shapes). Raises ValueError when they do not broadcast."""
    if len(shapes) == 0:
        return ()
    return broadcast_shapes_of(shapes)


def broadcast_arrays(*args):
    """The arguments broadcast to their common shape (jax.numpy.broadcast_arrays):
    a list of arrays, dtypes unchanged. Differentiable (each adjoint summed back
    to its argument's shape). Raises ValueError when the shapes do not
    broadcast."""
    arrs = [asarray(a) for a in args]
    s = broadcast_shapes_of([shape(a) for a in arrs])
    return [broadcast_to(a, s) for a in arrs]


# ---------------------------------------------------------------------------
# NaN-aware quantiles


def _nanquantile(a, q, axis, method, keepdims, name):
    if method not in ("linear", "lower", "higher", "midpoint", "nearest"):
        raise ValueError(
            "method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest'"
            f" (inverted_cdf is not supported by srcjax); got {method!r}"
        )
    a = asarray(a)
    q = asarray(q)
    if dtype_kind(a) == "c":
        raise ValueError(
            "quantile does not support complex input, as the operation is poorly defined."
        )
    if len(shape(q)) > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {shape(q)}")
    a = asarray(a, dtype=inexact_of(a))
    nd = len(shape(a))
    axes = norm_axes(axis, nd)
    # NaNs sort last; their cotangent is dropped (JAX's where)
    g = group_last(a, axes)
    s = sort(where(isnan(g), _np.nan, g), axis=-1)
    qdt = inexact_of(q)
    counts = sum(logical_not(isnan(s)), axis=-1, dtype=qdt)
    kept = shape(counts)
    qb = reshape(q, shape(q) + (1,) * len(kept))
    pos = qb * (counts - 1)
    low = floor(pos)
    high = ceil(pos)
    hw = pos - low
    lw = 1 - hw
    low = asarray(maximum(0, minimum(low, counts - 1)), dtype=default_int())
    high = asarray(maximum(0, minimum(high, counts - 1)), dtype=default_int())
    sb = broadcast_to(s, shape(q) + shape(s))
    low_v = take_along_axis(sb, expand_dims(low, -1), -1)[..., 0]
    high_v = take_along_axis(sb, expand_dims(high, -1), -1)[..., 0]
    if method == "linear":
        out = asarray(low_v, dtype=qdt) * lw + asarray(high_v, dtype=qdt) * hw
    elif method == "lower":
        out = low_v
    elif method == "higher":
        out = high_v
    elif method == "nearest":
        out = where(hw <= 0.5, low_v, high_v)
    else:
        out = (low_v + high_v) * 0.5
    if keepdims:
        ks = tuple(1 if i in axes else shape(a)[i] for i in range(nd))
        out = reshape(out, shape(q) + ks)
    return asarray(out, dtype=a.dtype)


def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False):
    """The ``q``-th quantile of ``a`` over ``axis`` ignoring NaNs
    (jax.numpy.nanquantile): per slice, the non-NaN values sorted and
    interpolated at ``q * (count - 1)``; NaN where a slice is all NaN.

    ``q``: scalar or 1-D; ``axis``: None, int or tuple; ``method``:
    ``"linear"``, ``"lower"``, ``"higher"``, ``"midpoint"`` or ``"nearest"``.
    Shape: ``q.shape`` followed by ``a``'s without the reduced axes (1 with
    ``keepdims``). Dtype: ``a``'s inexact dtype (``linear`` interpolates in
    ``q``'s inexact dtype first, as JAX). Differentiable in ``a`` (through the sorted values)
    and, for ``linear``, in ``q``. Raises ValueError for ``out``/
    ``overwrite_input`` (as JAX), complex ``a``, ``q`` of rank > 1 or an unknown
    method (``inverted_cdf``/``weights`` are not supported)."""
    if overwrite_input or out is not None:
        raise ValueError(
            "jax.numpy.nanquantile does not support overwrite_input=True or out != None"
        )
    return _nanquantile(a, q, axis, method, keepdims, "nanquantile")


def nanpercentile(
    a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False
):
    """The ``q``-th percentile of ``a`` ignoring NaNs (jax.numpy.nanpercentile):
    :func:`nanquantile` of ``q / 100`` (``q`` promoted to its inexact dtype).
    Same shapes, dtypes, derivatives and errors."""
    q = asarray(q)
    q = asarray(q, dtype=inexact_of(q)) / 100
    return nanquantile(a, q, axis, out, overwrite_input, method, keepdims)


def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median of ``a`` over ``axis`` ignoring NaNs (jax.numpy.nanmedian):
    :func:`nanquantile` at 0.5 with ``method="midpoint"`` (the mean of the two
    middle values). Shape: ``a``'s without the reduced axes; dtype: ``a``'s
    inexact dtype; NaN for an all-NaN slice. Differentiable in ``a``."""
    return nanquantile(a, 0.5, axis, out, overwrite_input, "midpoint", keepdims)


# ---------------------------------------------------------------------------
# statistics and signal


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients (jax.numpy.corrcoef): ``cov(x, y,
    rowvar)`` normalized by the outer product of its standard deviations, real
    parts clipped to ``[-1, 1]``. Shape: ``(k, k)`` for ``k`` variables (0-d for
    one: ``c / c``, 1 or NaN). Dtype: the inexact dtype of the inputs, or
    ``dtype``. Differentiable in ``x`` and ``y``. Raises ValueError for a
    non-inexact ``dtype`` and the errors of ``cov``."""
    if dtype is not None and dtype_kind(zeros((), dtype=dtype)) not in "fc":
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got {dtype=}")
    c = cov(x, y, rowvar)
    if dtype is not None:
        c = asarray(c, dtype=dtype)
    if len(shape(c)) == 0:
        return c / c
    d = diag(c)
    sd = asarray(sqrt(real(d)), dtype=c.dtype)
    c = c / reshape(sd, (-1, 1)) / reshape(sd, (1, -1))
    re = clip(real(c), -1, 1)
    if iscomplexobj(c):
        return re + 1j * clip(imag(c), -1, 1)
    return re


def correlate(a, v, mode="valid", precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-D arrays (jax.numpy.correlate):
    ``c[k] = sum_n a[n + k] * conj(v[n])`` over the overlap, ``mode``
    ``"valid"`` (length ``max(n, m) - min(n, m) + 1``), ``"same"``
    (``max(n, m)``) or ``"full"`` (``n + m - 1``), aligned as JAX's
    (``v`` longer than ``a`` gives the result reversed, as NumPy). Dtype: JAX's
    inexact promotion of both (or ``preferred_element_type``). Differentiable
    in both. Raises ValueError for inputs that are not 1-D, empty inputs or
    an unknown ``mode``; ``precision`` is accepted and ignored."""
    if len(shape(a)) != 1 or len(shape(v)) != 1:
        raise ValueError("correlate() only support 1-dimensional inputs.")
    if preferred_element_type is None:
        dt = inexact_of(a, v)
    else:
        dt = result_dtype(a, v)
    x = asarray(a, dtype=dt)
    y = conj(asarray(v, dtype=dt))
    if size(x) == 0 or size(y) == 0:
        raise ValueError(
            f"correlate: inputs cannot be empty, got shapes {shape(x)} and {shape(y)}."
        )
    if mode != "full" and mode != "same" and mode != "valid":
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    swapped = size(x) < size(y)
    if swapped:
        x, y = y, x
    n = size(x)
    m = size(y)
    full_c = convolve(x, flip(y, 0))
    if mode == "same":
        start = m - 1 - m // 2
        out = full_c[start : start + n]
    elif mode == "valid":
        out = full_c[m - 1 : n]
    else:
        out = full_c
    if preferred_element_type is not None:
        out = asarray(out, dtype=preferred_element_type)
    if swapped:
        return flip(out, 0)
    return out


def gradient(f, *varargs, axis=None, edge_order=None):
    """The gradient of sampled ``f`` by central differences in the interior and
    one-sided first differences at the edges (jax.numpy.gradient).

    ``varargs``: none (unit spacing), one spacing for every axis, or one per
    axis; each a scalar or a 1-D array of coordinates of that axis' length.
    ``axis``: None (all), int or sequence. Returns one array of ``f``'s shape
    (one axis) or a list of them; dtype: JAX's inexact promotion of ``f`` and
    the spacings. Differentiable in ``f`` and the spacings. Raises
    NotImplementedError for ``edge_order`` (as JAX), ValueError for an axis
    shorter than 2 or coordinates of the wrong length/rank, TypeError for the
    wrong number of spacings."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    dt = inexact_seq([f] + list(varargs))
    a = asarray(f, dtype=dt)
    nd = len(shape(a))
    axes = norm_axes(axis, nd)
    if len(axes) == 0:
        return []
    if _builtins.min([shape(a)[i] for i in axes]) < 2:
        raise ValueError(
            "Shape of array too small to calculate a numerical gradient, "
            "at least 2 elements are required."
        )
    nv = len(varargs)
    if nv == 0:
        hs = [1.0] * len(axes)
    elif nv == 1:
        hs = [varargs[0]] * len(axes)
    elif nv == len(axes):
        hs = list(varargs)
    else:
        raise TypeError(f"Invalid number of spacing arguments {nv} for axis={axis}")
    out = [_gradient_axis(a, asarray(h, dtype=dt), ax) for ax, h in zip(axes, hs)]
    if len(axes) == 1:
        return out[0]
    return out


def _gradient_axis(a, h, ax):
    b = moveaxis(a, ax, 0)
    first = b[1:2] - b[0:1]
    last = b[-1:] - b[-2:-1]
    if len(shape(h)) == 0:
        inner = (b[2:] - b[:-2]) * 0.5 / h
        first = first / h
        last = last / h
    elif len(shape(h)) == 1:
        if shape(h)[0] != shape(b)[0]:
            raise ValueError(
                "Spacing arrays must have the same length as the "
                "dimension along which the gradient is calculated."
            )
        hb = reshape(h, shape(h) + (1,) * (len(shape(b)) - 1))
        first = first / (hb[1:2] - hb[0:1])
        last = last / (hb[-1:] - hb[-2:-1])
        dx1 = hb[1:-1] - hb[:-2]
        dx2 = hb[2:] - hb[1:-1]
        ca = -dx2 / (dx1 * (dx1 + dx2))
        cb = (dx2 - dx1) / (dx1 * dx2)
        cc = dx1 / (dx2 * (dx1 + dx2))
        inner = ca * b[:-2] + cb * b[1:-1] + cc * b[2:]
    else:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    return moveaxis(concatenate([first, inner, last], axis=0), 0, ax)
