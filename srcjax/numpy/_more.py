"""More ``jax.numpy`` functions (JAX 0.10.2), mostly compositions of registered
primitives.

Like ``_functions.py``, these are plain Python over primitives: transformed code
inlines them like a user function, so grad, jvp, vmap and jit come from the
primitives they call. Static bookkeeping (shapes, dtypes, index tables, JAX's
argument checks) is done by non-differentiable ``ad.*`` helpers registered
below, which are the same for every example of a vmap. The few new primitives
(``nextafter``, ``bitwise_count``, ``i0``, ``frexp``'s parts) are in
``srcjax/primitives/more.py``.
"""

from __future__ import annotations

import builtins as _builtins
import collections as _collections
import operator as _operator
from typing import Callable

import numpy as _np

from .. import dtypes as _dt
from ..primitives.ad import (
    broadcast_to,
    default_int,
    expand_dims,
    group_last,
    moveaxis,
    reshape,
    sum,
    zeros_like,
)
from ..primitives.creation import (
    arange,
    asarray,
    diag_indices,
    full,
    ones,
    ones_like,
    shape,
    size,
    tril_indices,
    triu_indices,
    zeros,
)
from ..primitives.elementwise import abs as _abs
from ..primitives.elementwise import bitwise_and as _bitwise_and
from ..primitives.elementwise import (
    ceil,
    clip,
    conj,
    cos,
    equal,
    floor,
    floor_divide,
    imag,
    isinf,
    isnan,
    log10,
    logical_and,
    logical_not,
    logical_or,
    maximum,
    minimum,
    power,
    real,
    remainder,
    sign,
    sqrt,
    where,
)
from ..primitives.elementwise import left_shift as _left_shift
from ..primitives.linalg import matmul
from ..primitives.more import (
    bitwise_count,
    frexp_exponent,
    frexp_mantissa,
    i0,
    nextafter,
)
from ..primitives.reductions import all as _all
from ..primitives.reductions import any as _any
from ..primitives.reductions import cumprod as _cumprod
from ..primitives.reductions import cumsum
from ..primitives.reductions import top_k as _top_k
from ..primitives.registry import Primitive, register
from ..primitives.setops import flatnonzero as _flatnonzero
from ..primitives.setops import nonzero as _nonzero
from ..primitives.setops import unique as _unique
from ..primitives.structural import (
    argsort,
    concatenate,
    diag,
    diff,
    flip,
    ravel,
    sort,
    stack,
    take,
    take_along_axis,
)
from ..primitives.structural import at_add as _at_add
from ..primitives.structural import at_set as _at_set
from ..primitives.structural import searchsorted as _searchsorted
from ..primitives.structural import transpose as _transpose
from ._functions import bincount as _bincount
from ._functions import convolve, copysign, cov, iscomplexobj, logspace
from ._functions import histogram_bin_edges as _histogram_bin_edges
from ._functions import isin as _isin
from .linalg import lstsq as _lstsq

__all__ = [
    "UniqueAllResult",
    "UniqueCountsResult",
    "UniqueInverseResult",
    "apply_along_axis",
    "apply_over_axes",
    "block",
    "c_",
    "can_cast",
    "histogram2d",
    "histogramdd",
    "index_exp",
    "intersect1d",
    "isdtype",
    "mgrid",
    "ogrid",
    "piecewise",
    "poly",
    "polyadd",
    "polyder",
    "polydiv",
    "polyfit",
    "polyint",
    "polymul",
    "polysub",
    "r_",
    "s_",
    "setdiff1d",
    "setxor1d",
    "union1d",
    "unique_all",
    "unique_counts",
    "unique_inverse",
    "unique_values",
    "argpartition",
    "array_equal",
    "bartlett",
    "blackman",
    "choose",
    "compress",
    "cumulative_prod",
    "diag_indices_from",
    "extract",
    "hamming",
    "hanning",
    "kaiser",
    "mask_indices",
    "matvec",
    "packbits",
    "partition",
    "place",
    "put",
    "put_along_axis",
    "resize",
    "rollaxis",
    "roots",
    "tril_indices_from",
    "triu_indices_from",
    "trim_zeros",
    "unpackbits",
    "unwrap",
    "vecmat",
    "array_equiv",
    "bitwise_count",
    "broadcast_arrays",
    "broadcast_shapes",
    "corrcoef",
    "correlate",
    "delete",
    "diagflat",
    "frexp",
    "gcd",
    "geomspace",
    "gradient",
    "i0",
    "indices",
    "insert",
    "iscomplex",
    "isreal",
    "isrealobj",
    "lcm",
    "ldexp",
    "modf",
    "nanmedian",
    "nanpercentile",
    "nanquantile",
    "nextafter",
    "ravel_multi_index",
    "spacing",
    "unravel_index",
    "vander",
]


def _static(public: str, impl: Callable) -> Primitive:
    """A non-differentiable helper of static values (shapes, dtypes, options):
    unbatched under vmap."""
    p = register(Primitive(public, impl, kind="internal", differentiable=False))
    p.def_batch(lambda c: (c.rebuild(), False))
    return p


def _checker(public: str, impl: Callable) -> Primitive:
    """A non-differentiable helper that reads values (JAX checks them only
    outside jit): under vmap it runs per example."""
    return register(Primitive(public, impl, kind="internal", differentiable=False))


# ---------------------------------------------------------------------------
# static helpers


def _broadcast_shapes_impl(shapes):
    """Static: the broadcast of ``shapes`` (each a tuple or an int), JAX's
    ValueError when they do not broadcast."""
    shapes = [(int(s),) if _np.ndim(s) == 0 else tuple(int(d) for d in s) for s in shapes]
    try:
        return tuple(_np.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={shapes}") from None


def _shapes_broadcast_impl(a, b):
    """Static: whether shapes ``a`` and ``b`` broadcast together."""
    try:
        _np.broadcast_shapes(tuple(a), tuple(b))
    except ValueError:
        return False
    return True


def _inexact_impl(*xs):
    """Static: JAX's inexact promotion of the operands' dtypes."""
    return _dt.to_inexact_dtype(_dt.result_type(*xs))


def _result_dtype_impl(*xs):
    """Static: JAX's promotion of the operands' dtypes."""
    return _dt.result_type(*xs)


def _dtype_kind_impl(x):
    """Static: the NumPy kind letter of ``x``'s JAX dtype (``'f'``, ``'i'`` ...)."""
    return _dt.dtype_of(x).kind


def _canon_dtype_impl(dtype):
    """Static: ``dtype`` canonicalized (64-bit types narrowed without x64)."""
    return _dt.canonicalize_dtype(dtype)


def _smallest_subnormal_impl(dt):
    """Static: the smallest positive subnormal of float dtype ``dt``."""
    return _np.finfo(dt).smallest_subnormal.item()


def _norm_axis_impl(axis, ndim, what="axis"):
    """Static: ``axis`` in ``[0, ndim)`` (JAX's error for out of bounds)."""
    a = _operator.index(axis)
    if not -ndim <= a < ndim:
        raise ValueError(f"{what} {a} is out of bounds for array of dimension {ndim}")
    return a % ndim if ndim else 0


def _norm_axes_impl(axis, ndim):
    """Static: ``axis`` (None, int or sequence) as a tuple of axes in
    ``[0, ndim)``."""
    if axis is None:
        return tuple(range(ndim))
    if _np.ndim(axis) == 0:
        axis = (axis,)
    return tuple(_norm_axis_impl(a, ndim) for a in axis)


broadcast_shapes_of = _static("ad.more_broadcast_shapes", _broadcast_shapes_impl)
shapes_broadcast = _static("ad.more_shapes_broadcast", _shapes_broadcast_impl)
inexact_of = _static("ad.more_inexact_dtype", _inexact_impl)


def _inexact_seq_impl(xs):
    """Static: JAX's inexact promotion of the dtypes of the sequence ``xs``."""
    return _inexact_impl(*xs)


inexact_seq = _static("ad.more_inexact_dtype_seq", _inexact_seq_impl)
result_dtype = _static("ad.more_result_dtype", _result_dtype_impl)
dtype_kind = _static("ad.more_dtype_kind", _dtype_kind_impl)
canon_dtype = _static("ad.more_canonical_dtype", _canon_dtype_impl)
smallest_subnormal = _static("ad.more_smallest_subnormal", _smallest_subnormal_impl)
norm_axis = _static("ad.more_norm_axis", _norm_axis_impl)
norm_axes = _static("ad.more_norm_axes", _norm_axes_impl)


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


def isrealobj(x):
    """Whether ``x`` does not have a complex dtype (jax.numpy.isrealobj); a
    Python bool, static under every transform."""
    return not iscomplexobj(x)


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


# ---------------------------------------------------------------------------
# creation


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """``num`` numbers spaced evenly on a log scale from ``start`` to ``stop``
    (jax.numpy.geomspace): ``sign(start) * logspace(log10(start/sign),
    log10(stop/sign))``. Shape ``(num,)`` (array endpoints add their broadcast
    shape, samples at ``axis``). Dtype: ``dtype``, else JAX's inexact promotion
    of ``start``/``stop``. Differentiable in ``start`` and ``stop``. ``num`` and
    ``axis`` must be ints (TypeError otherwise)."""
    num = _operator.index(num)
    axis = _operator.index(axis)
    if dtype is None:
        dtype = inexact_of(start, stop)
    else:
        dtype = canon_dtype(dtype)
    cdt = inexact_of(zeros((), dtype=dtype))
    start = asarray(start, dtype=cdt)
    stop = asarray(stop, dtype=cdt)
    sg = sign(start)
    res = sg * logspace(log10(start / sg), log10(stop / sg), num, endpoint, 10.0, cdt, 0)
    if axis != 0:
        res = moveaxis(res, 0, axis)
    return asarray(res, dtype=dtype)


def indices(dimensions, dtype=None, sparse=False):
    """A grid of indices (jax.numpy.indices): for ``dimensions = (d0, ..., dk)``
    an int array of shape ``(k+1, d0, ..., dk)`` whose ``i``-th slice varies
    along axis ``i``; with ``sparse``, a tuple of arrays of shape ``(1, .., di,
    .., 1)``. Dtype: ``dtype``, else the default int. Raises TypeError for
    non-integer dimensions."""
    dtype = default_int() if dtype is None else canon_dtype(dtype)
    dims = tuple(_operator.index(d) for d in dimensions)
    n = len(dims)
    out = []
    for i in range(n):
        s = (1,) * i + (dims[i],) + (1,) * (n - i - 1)
        idx = reshape(arange(dims[i], dtype=dtype), s)
        if sparse:
            out.append(idx)
        else:
            out.append(broadcast_to(idx, dims))
    if sparse:
        return tuple(out)
    if n == 0:
        return zeros((0,), dtype=dtype)
    return stack(out, 0)


def diagflat(v, k=0):
    """A 2-D array with the flattened ``v`` on diagonal ``k`` (jax.numpy.diagflat):
    shape ``(n + |k|, n + |k|)`` for ``n = v.size``; dtype ``v``'s.
    Differentiable."""
    return diag(ravel(asarray(v)), k)


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of 1-D ``x`` (jax.numpy.vander): column ``j`` is
    ``x ** (N - 1 - j)`` (``x ** j`` with ``increasing``). Shape ``(len(x),
    N)``, ``N`` defaulting to ``len(x)``; dtype ``x``'s. Differentiable. Raises
    ValueError for ``x`` that is not 1-D or a negative ``N``."""
    x = asarray(x)
    if len(shape(x)) != 1:
        raise ValueError("x must be a one-dimensional array")
    if N is None:
        N = shape(x)[0]
    N = _operator.index(N)
    if N < 0:
        raise ValueError("N must be nonnegative")
    p = arange(N, dtype=x.dtype)
    if not increasing:
        p = (N - 1) - p
    return power(reshape(x, (-1, 1)), reshape(p, (1, -1)))


# ---------------------------------------------------------------------------
# index arithmetic


def unravel_index(indices, shape):  # noqa: F811 (JAX's parameter name)
    """Flat indices into an array of shape ``shape`` as a tuple of coordinate
    arrays (jax.numpy.unravel_index), row-major. Out-of-range indices are
    clipped (JAX's semantics: too large gives the last coordinate in every
    axis, below ``-1`` the first). Shapes: ``indices``'s; dtypes: ``indices``'s
    int dtype. Raises ValueError for a ``shape`` that is not a scalar or
    1-D sequence."""
    idx = asarray(indices)
    dims = _unravel_dims(shape)
    n = len(dims)
    out = [0] * n
    for i in range(n - 1, -1, -1):
        out[i] = remainder(idx, dims[i])
        idx = floor_divide(idx, dims[i])
    oob_pos = idx > 0
    oob_neg = idx < -1
    if dtype_kind(idx) == "u":
        oob_neg = zeros_like(oob_pos)
    return tuple(where(oob_pos, dims[i] - 1, where(oob_neg, 0, out[i])) for i in range(n))


def _unravel_dims_impl(shape_):
    """Static: unravel_index's shape as a tuple of ints (JAX's ValueError)."""
    try:
        dims = list(shape_)
    except TypeError:
        dims = [shape_]
    if any(_np.ndim(s) != 0 for s in dims):
        raise ValueError("unravel_index: shape should be a scalar or 1D sequence.")
    return tuple(int(d) for d in dims)


_unravel_dims = _static("ad.more_unravel_dims", _unravel_dims_impl)


def ravel_multi_index(multi_index, dims, mode="raise", order="C", dtype=None):
    """Flat indices from a tuple of coordinate arrays into an array of shape
    ``dims`` (jax.numpy.ravel_multi_index). ``mode``: ``"raise"`` (ValueError
    for an out-of-range coordinate), ``"wrap"``, ``"clip"`` or ``"ignore"``;
    ``order``: ``"C"`` or ``"F"``. Shape: the coordinates' broadcast shape;
    dtype: ``dtype``, else JAX's promotion of the default int and the
    coordinates. Raises TypeError for non-integer coordinates, ValueError for
    an unknown mode/order or a dtype too small for ``prod(dims)``."""
    if len(multi_index) != len(dims):
        raise ValueError(f"len(multi_index)={len(multi_index)} != len(dims)={len(dims)}")
    dims = tuple(_operator.index(d) for d in dims)
    idx = [asarray(i) for i in multi_index]
    dt = _ravel_dtype(idx, dtype, dims)
    for i in idx:
        if dtype_kind(i) not in "iu":
            raise TypeError("only int indices permitted")
    if mode == "raise":
        _ravel_check(idx, dims)
    elif mode == "clip":
        idx = [clip(idx[k], 0, dims[k] - 1) for k in range(len(dims))]
    elif mode == "wrap":
        idx = [remainder(idx[k], dims[k]) for k in range(len(dims))]
    elif mode != "ignore":
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', 'clip', or 'ignore'.")
    strides = _ravel_strides(dims, order)
    out = asarray(0, dtype=dt)
    for k in range(len(dims)):
        out = out + asarray(idx[k], dtype=dt) * strides[k]
    return out


def _ravel_dtype_impl(idx, dtype, dims):
    """Static: ravel_multi_index's result dtype (JAX's checks)."""
    dt = _dt.result_type(int, *idx) if dtype is None else _dt.canonicalize_dtype(dtype)
    if dt.kind not in "iu":
        raise ValueError(f"dtype={dt} is not an integer type.")
    if int(_np.prod(dims, dtype=object)) - 1 > _np.iinfo(dt).max:
        raise ValueError(
            f"jnp.ravel_multi_index: dtype={dt} not large enough to hold flattened"
            f" index for dims={dims}. Use the dtype argument to pass a suitable dtype."
        )
    return dt


def _ravel_strides_impl(dims, order):
    """Static: the flat strides of ``dims`` in ``order`` ("C" or "F")."""
    if order == "F":
        return tuple(int(s) for s in _np.cumprod((1,) + tuple(dims[:-1])))
    if order == "C":
        return tuple(int(s) for s in _np.cumprod((1,) + tuple(dims[1:])[::-1])[::-1])
    raise ValueError(f"invalid order={order!r}. Expected 'C' or 'F'")


def _ravel_check_impl(idx, dims):
    """ravel_multi_index(mode="raise")'s check of the coordinates' values."""
    for i, d in zip(idx, dims):
        if _np.any((_np.asarray(i) < 0) | (_np.asarray(i) >= d)):
            raise ValueError("invalid entry in coordinates array")
    return True


_ravel_dtype = _static("ad.more_ravel_dtype", _ravel_dtype_impl)
_ravel_strides = _static("ad.more_ravel_strides", _ravel_strides_impl)
_ravel_check = _checker("ad.more_ravel_check", _ravel_check_impl)


def insert(arr, obj, values, axis=None):
    """``values`` inserted into ``arr`` before the indices ``obj`` along ``axis``
    (jax.numpy.insert; ``axis=None`` flattens ``arr`` first). ``obj``: an int, a
    slice or a 1-D int array (indices of the input; negative ones count from
    the end, then clipped to ``[0, n]``); ``values`` broadcast to the inserted
    slots, cast to ``arr``'s dtype. Shape: ``arr``'s with ``axis`` longer by the
    number inserted. Differentiable in ``arr`` and ``values``. Raises ValueError
    for ``obj`` of rank > 1 or not integer."""
    a = asarray(arr)
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = norm_axis(axis, len(shape(a)))
    n_in = shape(a)[ax]
    if isinstance(obj, slice):
        ind = _slice_indices(obj, n_in)
    else:
        ind = asarray(obj)
    if len(shape(ind)) > 1:
        raise ValueError(
            f"jnp.insert(): obj must be a slice, a one-dimensional array, or a scalar; got {obj}"
        )
    if dtype_kind(ind) not in "iu":
        if size(ind) == 0 and not isinstance(obj, _np.ndarray):
            ind = asarray(ind, dtype=default_int())
        else:
            raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj}")
    v = asarray(values, dtype=a.dtype)
    nd = len(shape(a))
    if len(shape(v)) < nd:
        v = reshape(v, (1,) * (nd - len(shape(v))) + shape(v))
    if size(ind) == 1:
        index = ravel(ind)[0]
        if len(shape(ind)) == 0:
            v = moveaxis(v, 0, ax)
        ind = full((shape(v)[ax],), index)
    n_ins = broadcast_shapes_of([shape(ind), (shape(v)[ax],)])[0]
    ind = where(ind < 0, ind + n_in, ind)
    ind = clip(ind, 0, n_in)
    order = argsort(ind, stable=True)
    values_ind = _at_add(ind, order, arange(n_ins, dtype=ind.dtype))
    keep = ones((n_in + n_ins,), dtype=bool)
    keep = _at_set(keep, values_ind, False)
    arr_ind = _flatnonzero(keep, size=n_in)
    moved = moveaxis(a, ax, 0)
    vm = moveaxis(v, ax, 0)
    out = zeros((n_in + n_ins,) + shape(moved)[1:], dtype=a.dtype)
    slot = (n_ins,) + shape(moved)[1:]
    out = _at_set(out, values_ind, broadcast_to(vm, slot))
    out = _at_set(out, arr_ind, moved)
    return moveaxis(out, 0, ax)


def _slice_indices_impl(obj, n):
    """Static: the indices a slice ``obj`` selects from ``range(n)``."""
    return _np.arange(*obj.indices(n)).astype(_dt.default_int())


_slice_indices = _static("ad.more_slice_indices", _slice_indices_impl)


def delete(arr, obj, axis=None, assume_unique_indices=False):
    """``arr`` without the entries ``obj`` along ``axis`` (jax.numpy.delete;
    ``axis=None`` flattens first). ``obj``: an int, a slice, an int array
    (duplicates allowed; its values must be known, as JAX needs them static)
    or a bool mask of the axis' length. With ``assume_unique_indices`` an int
    array is used in JAX's jit-compatible way (out-of-range indices clipped).
    Differentiable in ``arr``. Raises ValueError/IndexError for a bad mask or
    out-of-range index, and for float ``obj``."""
    a = asarray(arr)
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = norm_axis(axis, len(shape(a)))
    n = shape(a)[ax]
    if isinstance(obj, (int, _np.integer)) and not isinstance(obj, bool):
        k = norm_axis(obj, n, "index")
        moved = moveaxis(a, ax, 0)
        return moveaxis(concatenate([moved[:k], moved[k + 1 :]], axis=0), 0, ax)
    if isinstance(obj, slice):
        o = _slice_indices(obj, n)
        assume_unique_indices = True
    else:
        o = asarray(obj)
    if assume_unique_indices and dtype_kind(o) in "iu":
        o = ravel(o)
        o = clip(where(o < 0, o + n, o), 0, n)
        o = sort(o)
        o = o - arange(size(o), dtype=o.dtype)
        i = arange(n - size(o), dtype=o.dtype)
        i = i + sum(reshape(i, (1, -1)) >= reshape(o, (-1, 1)), axis=0, dtype=i.dtype)
        return take(a, i, axis=ax)
    return take(a, _delete_keep(o, n), axis=ax)


def _delete_keep_impl(o, n):
    """The indices ``delete`` keeps for an int or bool ``obj`` (read from its
    values, as JAX needs them static; JAX's errors)."""
    o = _np.asarray(o)
    if o.dtype.kind in "iu":
        mask = _np.ones(n, dtype=bool)
        mask[o] = False
    elif o.dtype == bool:
        if o.shape != (n,):
            raise ValueError(
                "np.delete(arr, obj): for boolean indices, obj must be one-dimensional "
                "with length matching specified axis."
            )
        mask = ~o
    else:
        raise ValueError(f"np.delete(arr, obj): got obj.dtype={o.dtype}; must be integer or bool.")
    return _np.nonzero(mask)[0].astype(_dt.default_int())


_delete_keep = _checker("ad.more_delete_keep", _delete_keep_impl)


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
    return frexp_mantissa(x), frexp_exponent(x)


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


# ---------------------------------------------------------------------------
# choose / compress / extract / place / put / put_along_axis


def choose(a, choices, out=None, mode="raise"):
    """``choices[a[i]][i]`` elementwise (jax.numpy.choose): ``a`` an int array
    and ``choices`` a sequence of arrays, all broadcast together. ``mode``:
    ``"raise"`` (ValueError for an index outside ``[0, len(choices))``),
    ``"wrap"`` or ``"clip"``. Dtype: the choices' promotion. Differentiable in
    the choices. Raises ValueError for a non-integer ``a`` or an unknown mode;
    ``out`` raises NotImplementedError."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a = asarray(a)
    if dtype_kind(a) not in "iu":
        raise ValueError("`a` array must be integer typed")
    n = len(choices)
    if mode == "raise":
        _choose_check(a, n)
    elif mode == "wrap":
        a = remainder(a, n)
    elif mode == "clip":
        a = clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    cs = [asarray(c) for c in choices]
    s = broadcast_shapes_of([shape(a)] + [shape(c) for c in cs])
    stacked = stack([broadcast_to(c, s) for c in cs], 0)
    idx = expand_dims(broadcast_to(a, s), 0)
    return take_along_axis(stacked, idx, 0)[0]


def _choose_check_impl(a, n):
    """choose(mode="raise")'s check of the index values."""
    a = _np.asarray(a)
    if _np.any((a < 0) | (a >= n)):
        raise ValueError("invalid entry in choice array")
    return True


_choose_check = _checker("ad.more_choose_check", _choose_check_impl)


def compress(condition, a, axis=None, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` (flattened for None) where the 1-D
    ``condition`` is true (jax.numpy.compress). Without ``size`` the length
    is the number of true entries (read at run time); with ``size`` the
    selected slices come first and the rest is ``fill_value`` (JAX's rule;
    needed under vmap). Dtype ``a``'s; differentiable in ``a``. Raises
    ValueError for a condition that is not 1-D, true entries beyond ``a``'s
    length (without ``size``) or a ``size`` out of range; ``out`` raises
    NotImplementedError."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    c = asarray(asarray(condition), dtype=bool)
    if len(shape(c)) != 1:
        raise ValueError("condition must be a 1D array")
    arr = asarray(a)
    if axis is None:
        axis = 0
        arr = ravel(arr)
    else:
        arr = moveaxis(arr, axis, 0)
    m = _builtins.min(shape(c)[0], shape(arr)[0])
    extra = c[m:]
    c = c[:m]
    arr = arr[:m]
    if size is not None and not 0 <= size <= shape(arr)[0]:
        raise ValueError(
            "size must be positive and not greater than the size of the array axis;"
            f" got size={size} for a.shape[axis]={shape(arr)[0]}"
        )
    # one call for both cases (vmap sees the branch not taken too)
    idx = _flatnonzero(c, size=size, fill_value=0)
    if size is None:
        _compress_check(extra)
        result = take(arr, idx, axis=0)
    else:
        rows = take(arr, idx, axis=0)
        count = sum(c, dtype=default_int())
        keep = reshape(arange(size) < count, (size,) + (1,) * (len(shape(arr)) - 1))
        result = where(keep, rows, asarray(fill_value, dtype=arr.dtype))
    return moveaxis(result, 0, axis)


def _compress_check_impl(extra):
    """compress's check that no true condition entry is beyond the array."""
    if _np.any(extra):
        raise ValueError("condition contains entries that are out of bounds")
    return True


_compress_check = _checker("ad.more_compress_check", _compress_check_impl)


def extract(condition, arr, size=None, fill_value=0):
    """The elements of ``arr`` where ``condition`` is true, flattened
    (jax.numpy.extract): ``compress(ravel(condition), ravel(arr), size=size,
    fill_value=fill_value)``."""
    return compress(ravel(asarray(condition)), ravel(asarray(arr)), None, size, fill_value)


def place(arr, mask, vals, inplace=True):
    """A copy of ``arr`` whose elements where ``mask`` is true are replaced by
    ``vals`` in order, repeated as needed (jax.numpy.place with
    ``inplace=False``). Shape and dtype ``arr``'s; differentiable in ``arr``
    and ``vals``. Raises ValueError with ``inplace=True`` (JAX arrays are
    immutable), for ``mask`` of another size or empty ``vals``."""
    data = asarray(arr)
    m = asarray(mask)
    v = ravel(asarray(vals))
    if inplace:
        raise ValueError(
            "jax.numpy.place cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array."
        )
    if size(data) != size(m):
        raise ValueError("place: arr and mask must be the same size")
    if size(v) == 0:
        raise ValueError("Cannot place values from an empty array")
    n = size(data)
    if n == 0:
        return data
    idx = _flatnonzero(ravel(m), size=n, fill_value=n)
    vt = take(asarray(v, dtype=data.dtype), remainder(arange(n), size(v)))
    ext = concatenate([ravel(data), zeros((1,), dtype=data.dtype)])
    return reshape(_at_set(ext, idx, vt)[:n], shape(data))


def put(a, ind, v, mode=None, inplace=True):
    """A copy of ``a`` with the flat positions ``ind`` set to ``v`` (repeated as
    needed) (jax.numpy.put with ``inplace=False``). ``mode``: None (indices
    mapped through ``unravel_index``, so out-of-range ones are clipped per
    axis, as JAX), ``"clip"`` or ``"wrap"``. Shape and dtype ``a``'s;
    differentiable in ``a`` and ``v``. Raises ValueError with ``inplace=True``
    or an unknown mode, NotImplementedError for ``mode="raise"``."""
    if inplace:
        raise ValueError(
            "jax.numpy.put cannot modify arrays in-place, because JAX arrays are immutable. "
            "Pass inplace=False to instead return an updated array."
        )
    arr = asarray(a)
    i = ravel(asarray(ind))
    vv = ravel(asarray(v))
    if size(arr) == 0 or size(i) == 0 or size(vv) == 0:
        return arr
    vv = take(asarray(vv, dtype=arr.dtype), remainder(arange(size(i)), size(vv)))
    if mode is None:
        pass
    elif mode == "clip":
        i = clip(i, 0, size(arr) - 1)
    elif mode == "wrap":
        i = remainder(i, size(arr))
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    coords = unravel_index(i, shape(arr))
    flat = zeros_like(i)
    for k in range(len(coords)):
        flat = flat * shape(arr)[k] + coords[k]
    return reshape(_at_set(ravel(arr), flat, vv), shape(arr))


def put_along_axis(arr, indices, values, axis, inplace=True, mode=None):
    """A copy of ``arr`` with ``values`` written at ``indices`` along ``axis``
    (jax.numpy.put_along_axis with ``inplace=False``; the inverse of
    ``take_along_axis``; ``axis=None`` works on the flattened array).
    ``indices`` has ``arr``'s rank (other axes broadcast); ``values`` broadcast
    to ``indices``. Shape and dtype ``arr``'s; differentiable in ``arr`` and
    ``values``. Raises ValueError with ``inplace=True``, for ``indices`` of
    another rank or ``values`` that do not broadcast. ``mode`` is ignored
    (indices must be in range; negative ones count from the end)."""
    if inplace:
        raise ValueError(
            "jax.numpy.put_along_axis cannot modify arrays in-place, because JAX arrays"
            "are immutable. Pass inplace=False to instead return an updated array."
        )
    a = asarray(arr)
    idx = asarray(indices)
    orig = shape(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    nd = len(shape(a))
    if nd != len(shape(idx)):
        raise ValueError(
            "put_along_axis arguments 'arr' and 'indices' must have same ndim. Got "
            f"arr.ndim={nd} and indices.ndim={len(shape(idx))}."
        )
    ax = norm_axis(axis, nd)
    if not shapes_broadcast(shape(values), shape(idx)):
        raise ValueError(
            "put_along_axis argument 'values' must be broadcastable to 'indices'. Got "
            f"values.shape={shape(values)} and indices.shape={shape(idx)}."
        )
    vals = broadcast_to(asarray(values, dtype=a.dtype), shape(idx))
    full_idx = _along_axis_index(shape(a), shape(idx), ax)
    pos = where(idx < 0, idx + shape(a)[ax], idx)
    flat = zeros(shape(idx), dtype=default_int())
    for k in range(nd):
        if k == ax:
            flat = flat * shape(a)[k] + pos
        else:
            flat = flat * shape(a)[k] + full_idx[k]
    out = _at_set(ravel(a), ravel(flat), ravel(vals))
    return reshape(out, orig)


def _along_axis_index_impl(a_shape, i_shape, ax):
    """Static: for each axis but ``ax``, the index along it broadcast to
    ``i_shape`` (``arange`` where ``i_shape`` has the length, else 0)."""
    out = []
    for k, n in enumerate(a_shape):
        if k == ax:
            out.append(None)
            continue
        m = i_shape[k]
        if m != n and m != 1:
            raise ValueError(f"indices shape {i_shape} does not broadcast against {a_shape}")
        r = _np.arange(m).reshape((1,) * k + (m,) + (1,) * (len(a_shape) - k - 1))
        out.append(_np.broadcast_to(r, i_shape).astype(_dt.default_int()))
    return tuple(out)


_along_axis_index = _static("ad.more_along_axis_index", _along_axis_index_impl)


# ---------------------------------------------------------------------------
# cumulative / products / bits


def cumulative_prod(x, axis=None, dtype=None, include_initial=False):
    """Cumulative product along ``axis`` (jax.numpy.cumulative_prod, the
    array-API function): ``axis`` may be omitted only for 1-D input; with
    ``include_initial`` a leading one is added. Dtype: ``x``'s (``dtype`` if
    given). Differentiable. Raises ValueError for a
    0-d input or a missing ``axis`` with N-D input."""
    x = asarray(x)
    if len(shape(x)) == 0:
        raise ValueError(
            "The input must be non-scalar to take a cumulative product, however a "
            "scalar value or scalar array was given."
        )
    if axis is None:
        if len(shape(x)) > 1:
            raise ValueError(
                f"The input array has rank {len(shape(x))}, however axis was not set to an "
                "explicit value. The axis argument is only optional for one-dimensional "
                "arrays."
            )
        axis = 0
    ax = norm_axis(axis, len(shape(x)))
    c = _cumprod(x, axis=ax, dtype=dtype)
    if include_initial:
        first = ones_like(take(c, [0], axis=ax))
        c = concatenate([first, c], axis=ax)
    return c


def matvec(x1, x2):
    """Batched matrix-vector product (jax.numpy.matvec): ``x1`` ``(..., n, m)``,
    ``x2`` ``(..., m)``, leading axes broadcast; result ``(..., n)``. Dtype:
    JAX's promotion. Differentiable."""
    return matmul(x1, expand_dims(x2, -1))[..., 0]


def vecmat(x1, x2):
    """Batched vector-matrix product, conjugating the vector
    (jax.numpy.vecmat): ``x1`` ``(..., n)``, ``x2`` ``(..., n, m)``; result
    ``(..., m)``. Dtype: JAX's promotion. Differentiable."""
    x1 = asarray(x1)
    if iscomplexobj(x1):
        x1 = conj(x1)
    return matmul(expand_dims(x1, -2), x2)[..., 0, :]


def packbits(a, axis=None, bitorder="big"):
    """Elements of an int/bool array as bits (non-zero = 1) packed into uint8
    along ``axis`` (flattened for None), zero-padded to a multiple of 8
    (jax.numpy.packbits). ``bitorder``: ``"big"`` or ``"little"``. Raises
    TypeError for float input, ValueError for another bitorder."""
    arr = asarray(a)
    if dtype_kind(arr) not in "biu":
        raise TypeError("Expected an input array of integer or boolean data type")
    if bitorder != "little" and bitorder != "big":
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = asarray(arr != 0, dtype=_np.uint8)
    shifts = arange(8, dtype=_np.uint8)
    if bitorder == "big":
        shifts = flip(shifts, 0)
    if axis is None:
        bits = ravel(bits)
        axis = 0
    bits = moveaxis(bits, axis, -1)
    n = shape(bits)[-1]
    rem = n % 8
    if rem:
        pad = zeros(shape(bits)[:-1] + (8 - rem,), dtype=_np.uint8)
        bits = concatenate([bits, pad], axis=-1)
    bits = reshape(bits, shape(bits)[:-1] + (shape(bits)[-1] // 8, 8))
    packed = asarray(sum(_left_shift(bits, shifts), axis=-1), dtype=_np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of a uint8 array as uint8 zeros and ones along ``axis``
    (flattened for None) (jax.numpy.unpackbits); ``count`` keeps that many
    (padding with zeros if larger). Raises TypeError for another dtype,
    ValueError for an unknown bitorder."""
    arr = asarray(a)
    if arr.dtype != _np.uint8:
        raise TypeError("Expected an input array of unsigned byte data type")
    if bitorder != "little" and bitorder != "big":
        raise ValueError("'order' must be either 'little' or 'big'")
    bits = _left_shift(asarray(1, dtype=_np.uint8), arange(8, dtype=_np.uint8))
    if bitorder == "big":
        bits = flip(bits, 0)
    if axis is None:
        arr = ravel(arr)
        axis = 0
    arr = moveaxis(arr, axis, -1)
    un = asarray(_bitwise_and(expand_dims(arr, -1), bits) > 0, dtype=_np.uint8)
    un = reshape(un, shape(un)[:-2] + (-1,))
    if count is not None:
        if count > shape(un)[-1]:
            pad = zeros(shape(un)[:-1] + (count - shape(un)[-1],), dtype=_np.uint8)
            un = concatenate([un, pad], axis=-1)
        else:
            un = un[..., :count]
    return moveaxis(un, -1, axis)


# ---------------------------------------------------------------------------
# window functions (the default float dtype)


def _window_n(M):
    return arange(M, dtype=_dt.default_float())


def bartlett(M):
    """The Bartlett (triangular) window of ``M`` points (jax.numpy.bartlett);
    ones for ``M <= 1``. Dtype: the default float."""
    M = _operator.index(M)
    if M <= 1:
        return ones((M,), dtype=_dt.default_float())
    n = _window_n(M)
    return 1 - _abs(2 * n + 1 - M) / (M - 1)


def blackman(M):
    """The Blackman window of ``M`` points (jax.numpy.blackman); ones for
    ``M <= 1``. Dtype: the default float."""
    M = _operator.index(M)
    if M <= 1:
        return ones((M,), dtype=_dt.default_float())
    n = _window_n(M)
    return 0.42 - 0.5 * cos(2 * _np.pi * n / (M - 1)) + 0.08 * cos(4 * _np.pi * n / (M - 1))


def hamming(M):
    """The Hamming window of ``M`` points (jax.numpy.hamming); ones for
    ``M <= 1``. Dtype: the default float."""
    M = _operator.index(M)
    if M <= 1:
        return ones((M,), dtype=_dt.default_float())
    n = _window_n(M)
    return 0.54 - 0.46 * cos(2 * _np.pi * n / (M - 1))


def hanning(M):
    """The Hann window of ``M`` points (jax.numpy.hanning); ones for
    ``M <= 1``. Dtype: the default float."""
    M = _operator.index(M)
    if M <= 1:
        return ones((M,), dtype=_dt.default_float())
    n = _window_n(M)
    return 0.5 * (1 - cos(2 * _np.pi * n / (M - 1)))


def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape ``beta`` (jax.numpy.kaiser):
    ``i0(beta sqrt(1 - ((n - a)/a)**2)) / i0(beta)``, ``a = (M - 1)/2``; ones
    for ``M <= 1``. Dtype: the default float. Differentiable in ``beta``."""
    M = _operator.index(M)
    if M <= 1:
        return ones((M,), dtype=_dt.default_float())
    n = _window_n(M)
    alpha = 0.5 * (M - 1)
    return i0(beta * sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)


# ---------------------------------------------------------------------------
# set operations and the array-API unique_* functions

UniqueAllResult = _collections.namedtuple(
    "UniqueAllResult", ["values", "indices", "inverse_indices", "counts"]
)
UniqueCountsResult = _collections.namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = _collections.namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_values(x, size=None, fill_value=None):
    """The sorted unique values of ``x``, flattened (jax.numpy.unique_values;
    NaNs are not merged). ``size``/``fill_value`` as ``jnp.unique``."""
    return _unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x, size=None, fill_value=None):
    """``(values, counts)`` of the unique values of ``x``
    (jax.numpy.unique_counts), a namedtuple; ``size``/``fill_value`` as
    ``jnp.unique``."""
    v, c = _unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueCountsResult(v, c)


def unique_inverse(x, size=None, fill_value=None):
    """``(values, inverse_indices)`` of ``x`` (jax.numpy.unique_inverse), a
    namedtuple; ``inverse_indices`` has ``x``'s shape."""
    v, inv = _unique(x, return_inverse=True, equal_nan=False, size=size, fill_value=fill_value)
    return UniqueInverseResult(v, reshape(inv, shape(x)))


def unique_all(x, size=None, fill_value=None):
    """``(values, indices, inverse_indices, counts)`` of ``x``
    (jax.numpy.unique_all), a namedtuple; ``inverse_indices`` has ``x``'s
    shape."""
    v, i, inv, c = _unique(
        x,
        return_index=True,
        return_inverse=True,
        return_counts=True,
        equal_nan=False,
        size=size,
        fill_value=fill_value,
    )
    return UniqueAllResult(v, i, reshape(inv, shape(x)), c)


def union1d(ar1, ar2, size=None, fill_value=None):
    """The sorted unique values found in either array (jax.numpy.union1d,
    flattened); ``size``/``fill_value`` pad or cut as ``jnp.unique``."""
    return _unique(
        concatenate([ravel(asarray(ar1)), ravel(asarray(ar2))]), size=size, fill_value=fill_value
    )


def setdiff1d(ar1, ar2, assume_unique=False, size=None, fill_value=None):
    """The sorted unique values of ``ar1`` not in ``ar2`` (jax.numpy.setdiff1d,
    flattened). With ``size`` the result is padded with ``fill_value`` (0 by
    default) or cut, as JAX."""
    a1 = ravel(asarray(ar1))
    a2 = ravel(asarray(ar2))
    if fill_value is None:
        fill_value = 0
    n1 = shape(a1)[0]
    if n1 == 0:
        return full((0 if size is None else size,), fill_value, dtype=a1.dtype)
    if not assume_unique:
        a1 = _unique(a1, size=None if size is None else n1)
    mask = logical_not(_isin(a1, a2))
    if size is None:
        return take(a1, _flatnonzero(mask))
    if not assume_unique:
        n_unique = n1 + 1 - sum(a1 == a1[0], dtype=default_int())
        mask = logical_and(mask, arange(n1) < n_unique)
    picked = take(a1, _flatnonzero(mask, size=size, fill_value=0))
    return where(
        arange(size) < sum(mask, dtype=default_int()), picked, asarray(fill_value, dtype=a1.dtype)
    )


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, size=None, fill_value=None):
    """The sorted unique values found in both arrays (jax.numpy.intersect1d,
    flattened). ``return_indices`` and ``size`` raise NotImplementedError in
    srcjax."""
    if return_indices or size is not None:
        raise NotImplementedError(
            "srcjax jnp.intersect1d: return_indices= and size= are not supported"
        )
    a1 = ravel(asarray(ar1))
    a2 = ravel(asarray(ar2))
    dt = result_dtype(a1, a2)
    a1 = asarray(a1, dtype=dt)
    a2 = asarray(a2, dtype=dt)
    if not assume_unique:
        a1 = _unique(a1)
        a2 = _unique(a2)
    aux = sort(concatenate([a1, a2]))
    if shape(aux)[0] == 0:
        return aux
    return take(aux[:-1], _flatnonzero(aux[1:] == aux[:-1]))


def setxor1d(ar1, ar2, assume_unique=False, size=None, fill_value=None):
    """The sorted values found in exactly one of the arrays
    (jax.numpy.setxor1d, flattened). ``size`` raises NotImplementedError in
    srcjax."""
    if size is not None:
        raise NotImplementedError("srcjax jnp.setxor1d: size= is not supported")
    a1 = ravel(asarray(ar1))
    a2 = ravel(asarray(ar2))
    dt = result_dtype(a1, a2)
    a1 = asarray(a1, dtype=dt)
    a2 = asarray(a2, dtype=dt)
    if not assume_unique:
        a1 = _unique(a1)
        a2 = _unique(a2)
    aux = concatenate([a1, a2])
    if shape(aux)[0] == 0:
        return aux
    aux = sort(aux)
    t = ones((1,), dtype=bool)
    flag = concatenate([t, aux[1:] != aux[:-1], t])
    return take(aux, _flatnonzero(logical_and(flag[1:], flag[:-1])))


# ---------------------------------------------------------------------------
# dtype predicates (static)

_ISDTYPE_KINDS = {
    "bool": "b",
    "signed integer": "i",
    "unsigned integer": "u",
    "integral": "iu",
    "real floating": "f",
    "complex floating": "c",
    "numeric": "iufc",
}


def isdtype(dtype, kind):
    """Whether ``dtype`` is of ``kind`` (jax.numpy.isdtype, the array API):
    ``kind`` a dtype (equality), one of ``'bool'``, ``'signed integer'``,
    ``'unsigned integer'``, ``'integral'``, ``'real floating'``, ``'complex
    floating'``, ``'numeric'``, or a tuple of those. A Python bool. Raises
    ValueError for an unknown kind name, TypeError for another kind type."""
    d = _np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _ISDTYPE_KINDS:
                raise ValueError(f"Unrecognized data type kind: {k!r}.")
            if d.kind in _ISDTYPE_KINDS[k]:
                return True
        else:
            try:
                if d == _np.dtype(k):
                    return True
            except TypeError:
                raise TypeError(
                    f"Expected kind to be a dtype, string, or tuple; got {k!r}"
                ) from None
    return False


def can_cast(from_, to, casting="safe"):
    """Whether a cast from ``from_`` (a dtype or an array's dtype) to ``to``
    is allowed under ``casting`` (jax.numpy.can_cast: NumPy's rule on the
    dtypes as given). A Python bool."""
    if isinstance(from_, (_np.ndarray, _np.generic)):
        src = from_.dtype
    else:
        src = _np.dtype(from_)
    return bool(_np.can_cast(src, _np.dtype(to), casting=casting))


# ---------------------------------------------------------------------------
# index tricks (host-side objects, as NumPy's)

s_ = _np.s_
index_exp = _np.index_exp


def _grid_dtype(a):
    a = _np.asarray(a)
    if a.dtype.kind == "f":
        return a.astype(_dt.default_float())
    if a.dtype.kind in "iu":
        return a.astype(_dt.default_int())
    return a


class _MGrid:
    """``jnp.mgrid``: a dense mesh grid from slices (``mgrid[0:3, 0:2]`` has
    shape ``(2, 3, 2)``; a complex step ``5j`` means 5 points, endpoint
    included), default int or float dtype (jax.numpy.mgrid). Host values:
    constants inside transformed code."""

    def __getitem__(self, key):
        return _grid_dtype(_np.mgrid[key])


class _OGrid:
    """``jnp.ogrid``: an open mesh grid from slices, a list of arrays of shape
    ``(1, .., n, .., 1)`` (one array for one slice) (jax.numpy.ogrid)."""

    def __getitem__(self, key):
        out = _np.ogrid[key]
        if isinstance(out, (list, tuple)):
            return [_grid_dtype(o) for o in out]
        return _grid_dtype(out)


class _Concat:
    """``jnp.r_`` / ``jnp.c_``: NumPy's concatenation tricks (slices become
    ``arange``/``linspace``, string directives), with JAX's canonical dtypes.
    Host values: not differentiable inside transformed code (use
    ``jnp.concatenate`` there)."""

    def __init__(self, np_obj):
        self._obj = np_obj

    def __getitem__(self, key):
        items = key if isinstance(key, tuple) else (key,)
        items = tuple(_np.asarray(k) if isinstance(k, _np.ndarray) else k for k in items)
        out = self._obj[items if isinstance(key, tuple) else items[0]]
        return _np.asarray(out, _dt.canonicalize_dtype(_np.asarray(out).dtype))


mgrid = _MGrid()
ogrid = _OGrid()
r_ = _Concat(_np.r_)
c_ = _Concat(_np.c_)


# ---------------------------------------------------------------------------
# functional helpers


def _no_extra_args(args, name):
    """JAX's extra positional arguments for the mapped function (unsupported)."""
    if len(args) > 0:
        raise NotImplementedError(
            f"srcjax jnp.{name}: extra positional arguments for the function are not"
            " supported; bind them with a lambda or functools.partial"
        )
    return True


def apply_along_axis(func1d, axis, arr, *args):
    """``func1d`` applied to every 1-D slice of ``arr`` along ``axis``
    (jax.numpy.apply_along_axis): ``func1d(slice, *args)`` must return arrays
    of one shape ``r``; the result has ``arr``'s shape with ``axis`` replaced
    by ``r``. Computed as a loop over the slices (unrolled in transformed
    code); differentiable through ``func1d``. Extra arguments for ``func1d``
    raise NotImplementedError (bind them with a lambda or functools.partial)."""
    _no_extra_args(args, "apply_along_axis")
    a = asarray(arr)
    nd = len(shape(a))
    ax = norm_axis(axis, nd)
    before = shape(a)[:ax]
    after = shape(a)[ax + 1 :]
    rows = reshape(moveaxis(a, ax, -1), (-1, shape(a)[ax]))
    outs = []
    for i in range(shape(rows)[0]):
        outs.append(asarray(func1d(rows[i])))
    res = stack(outs, 0)
    r = shape(res)[1:]
    res = reshape(res, before + after + r)
    nb = len(before)
    na = len(after)
    return _transpose(res, _along_perm(nb, na, len(r)))


def _along_perm_impl(nb, na, nr):
    """Static: the axes order that puts apply_along_axis's result axes (last,
    ``nr`` of them) after the ``nb`` leading ones."""
    return tuple(range(nb)) + tuple(range(nb + na, nb + na + nr)) + tuple(range(nb, nb + na))


_along_perm = _static("ad.more_along_perm", _along_perm_impl)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in turn, keeping the rank
    (jax.numpy.apply_over_axes): a result with one axis fewer gets it back
    as length 1. Raises ValueError when ``func`` returns another rank."""
    a = asarray(a)
    for axis in axes:
        b = func(a, axis)
        if len(shape(b)) == len(shape(a)):
            a = b
        elif len(shape(b)) == len(shape(a)) - 1:
            a = expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


def piecewise(x, condlist, funclist, *args):
    """A piecewise-defined function of ``x`` (jax.numpy.piecewise): where
    ``condlist[i]`` holds (the last true condition wins), ``funclist[i](x)``
    or the constant ``funclist[i]``; elsewhere the extra last entry of
    ``funclist`` (0 if there is none). Result in ``x``'s dtype. Works eagerly
    and under jit/vmap; under grad the functions of the list are run-time
    values srcjax cannot see into, so differentiating through a callable
    piece raises NoDerivativeRuleError (constant pieces are fine). Raises ValueError when ``funclist`` has neither ``len(condlist)`` nor one
    more entries; extra arguments for the functions raise NotImplementedError
    (bind them with a lambda)."""
    _no_extra_args(args, "piecewise")
    x = asarray(x)
    nc = len(condlist)
    nf = len(funclist)
    if nf == nc + 1:
        default = funclist[nc]
    elif nf == nc:
        default = 0
    else:
        raise ValueError(
            f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}"
        )
    out = _piece(default, x)
    for c, f in zip(condlist, funclist):
        out = where(asarray(c, dtype=bool), _piece(f, x), out)
    return out


def _piece(f, x):
    if callable(f):
        return asarray(f(x), dtype=x.dtype)
    return broadcast_to(asarray(f, dtype=x.dtype), shape(x))


def block(arrays):
    """An array assembled from nested lists of blocks (jax.numpy.block): the
    innermost lists are concatenated along the last axis, the next along the
    second to last, and so on (blocks padded to a common rank with leading
    ones). Up to three levels of nesting. Differentiable. Raises ValueError
    for tuples, empty lists or mismatched depths."""
    if isinstance(arrays, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {arrays}")
    if not isinstance(arrays, list):
        return asarray(arrays)
    depth = _block_depth(arrays)
    if depth == 1:
        return _block_level(arrays, 1, 1)
    if depth == 2:
        return _block_level([_block_level(r, 1, 2) for r in arrays], 2, 2)
    if depth == 3:
        return _block_level(
            [_block_level([_block_level(r, 1, 3) for r in p], 2, 3) for p in arrays], 3, 3
        )
    raise NotImplementedError("srcjax jnp.block: at most three levels of nesting")


def _block_level(xs, level, depth):
    xs = [asarray(x) for x in xs]
    rank = depth
    for x in xs:
        rank = _builtins.max(rank, len(shape(x)))
    xs = [reshape(x, (1,) * (rank - len(shape(x))) + shape(x)) for x in xs]
    return concatenate(xs, axis=-level)


def _block_depth_impl(arrays):
    """Static: the nesting depth of block's lists (JAX's errors)."""

    def walk(xs):
        if isinstance(xs, tuple):
            raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
        if not isinstance(xs, list):
            return 0
        if len(xs) == 0:
            raise ValueError("jax.numpy.block does not allow empty list arguments")
        ds = [walk(x) for x in xs]
        if any(d != ds[0] for d in ds[1:]):
            raise ValueError("Mismatched list depths in jax.numpy.block")
        return ds[0] + 1

    return walk(arrays)


_block_depth = _static("ad.more_block_depth", _block_depth_impl)


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


# ---------------------------------------------------------------------------
# multidimensional histograms


def histogramdd(sample, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """A D-dimensional histogram of ``sample`` (``(N, D)``)
    (jax.numpy.histogramdd). ``bins``: an int (for every dimension) or one
    int/edge array per dimension; ``range``: None or one ``(lo, hi)``/None
    per dimension; ``weights``: ``(N,)``. Returns ``(hist, [edges...])``:
    ``hist`` of shape ``(nbins_0, ..., nbins_D-1)``, the default int counts
    (JAX's bincount) or the weights' dtype; with ``density``, normalized by
    the total and the bin volumes. Differentiable in ``weights``. Raises
    ValueError for mismatched bins/range/weights."""
    sample = asarray(sample)
    if weights is None:
        sample = asarray(sample, dtype=inexact_of(sample))
    else:
        weights = asarray(weights)
        if shape(weights) != shape(sample)[:1]:
            raise ValueError("should have one weight for each sample.")
        dt = inexact_of(sample, weights)
        sample = asarray(sample, dtype=dt)
        weights = asarray(weights, dtype=dt)
    N = shape(sample)[0]
    D = shape(sample)[1]
    if range is not None and (
        len(range) != D or any(r is not None and _np.shape(r)[0] != 2 for r in range)
    ):
        raise ValueError(
            f"For sample.shape={(N, D)}, range must be a sequence of {D} pairs or Nones;"
            f" got range={range}"
        )
    if isinstance(bins, (list, tuple)):
        if len(bins) != D:
            raise ValueError("should be a bin for each dimension.")
        per_dim = list(bins)
    else:
        per_dim = [bins] * D
    idx = []
    edges = []
    for i in _builtins.range(D):
        r_i = None if range is None else range[i]
        e = _histogram_bin_edges(sample[:, i], per_dim[i], r_i, weights)
        b = _searchsorted(e, sample[:, i], side="right")
        b = where(sample[:, i] == e[-1], b - 1, b)
        idx.append(b)
        edges.append(e)
    nbins = tuple(shape(e)[0] + 1 for e in edges)
    flat = ravel_multi_index(tuple(idx), nbins, mode="clip")
    total = 1
    for nb in nbins:
        total = total * nb
    hist = reshape(_bincount(flat, weights, 0, length=total), nbins)
    for d in _builtins.range(D):
        hist = moveaxis(moveaxis(hist, d, 0)[1:-1], 0, d)
    if density:
        hist = asarray(hist, dtype=sample.dtype)
        hist = hist / sum(hist)
        for d in _builtins.range(D):
            de = diff(edges[d])
            hist = hist / reshape(de, (1,) * d + (-1,) + (1,) * (D - d - 1))
    return hist, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):  # noqa: A002
    """A 2-D histogram of the points ``(x[i], y[i])`` (jax.numpy.histogram2d):
    ``histogramdd`` of ``stack([x, y], -1)``; ``bins`` an int, a pair, or one
    edge array for both. Returns ``(hist, x_edges, y_edges)``."""
    if isinstance(bins, (list, tuple)):
        nb = len(bins)
    elif _np.ndim(bins) == 0:
        nb = 1
    else:
        nb = shape(bins)[0]
    if nb != 1 and nb != 2:
        e = asarray(bins)
        bins = [e, e]
    sample = stack([asarray(x), asarray(y)], axis=-1)
    hist, edges = histogramdd(sample, bins, range, weights, density)
    return hist, edges[0], edges[1]
