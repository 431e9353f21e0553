"""``jnp`` functions written as compositions of registered primitives.

They are plain Python over primitives, so transformed code inlines them like a
user function: their derivatives and batching come from the primitives they
call (grad, jvp, vmap and jit need nothing more). Static shape bookkeeping is
done by the non-differentiable ``ad.*`` helpers registered below.
"""

from __future__ import annotations

import numpy as _np

from .. import dtypes as _dt
from ..primitives.ad import (
    broadcast_to,
    default_int,
    moveaxis,
    reshape,
    sum,
    zeros_like,
)
from ..primitives.creation import arange, asarray, linspace, ones_like, shape, size, zeros
from ..primitives.elementwise import abs as _abs
from ..primitives.elementwise import (
    arctan2,
    conj,
    equal,
    floor_divide,
    imag,
    isclose,
    isnan,
    power,
    real,
    remainder,
    signbit,
    where,
)
from ..primitives.linalg import cross as _cross3
from ..primitives.linalg import matmul
from ..primitives.reductions import all as _all
from ..primitives.reductions import any as _any
from ..primitives.reductions import argmax, argmin, cumprod, cumsum, mean
from ..primitives.reductions import max as _max
from ..primitives.reductions import min as _min
from ..primitives.reductions import prod as _prod
from ..primitives.registry import Primitive, register
from ..primitives.structural import (
    argsort,
    concatenate,
    diff,
    flip,
    ravel,
    searchsorted,
    split,
    squeeze,
    swapaxes,
    take,
    take_adjoint,
    take_along_axis,
    transpose,
)

__all__ = [
    "allclose",
    "angle",
    "append",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "average",
    "bincount",
    "column_stack",
    "convolve",
    "copysign",
    "cov",
    "cross",
    "cumulative_sum",
    "digitize",
    "divmod",
    "dstack",
    "ediff1d",
    "fliplr",
    "flipud",
    "float_power",
    "heaviside",
    "histogram",
    "histogram_bin_edges",
    "hsplit",
    "isin",
    "iscomplexobj",
    "isscalar",
    "ix_",
    "lexsort",
    "logspace",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanprod",
    "permute_dims",
    "polyval",
    "ptp",
    "rot90",
    "select",
    "trapezoid",
    "tri",
    "vecdot",
    "vsplit",
]


def _static(public, impl):
    return register(Primitive(public, impl, kind="internal", differentiable=False))


# ---------------------------------------------------------------------------
# static helpers (shapes and index tables; the same for every example of a vmap)


def _average_weight_shape(a_shape, w_shape, axis=None):
    """Static: the shape ``weights`` takes to broadcast against ``a`` in
    ``average`` (JAX's checks and messages)."""
    a_shape, w_shape = tuple(a_shape), tuple(w_shape)
    if a_shape == w_shape:
        return w_shape
    if axis is None:
        raise ValueError("Axis must be specified when shapes of a and weights differ.")
    if not isinstance(axis, int):
        raise TypeError("Single axis expected when shapes of a and weights differ.")
    if len(w_shape) != 1:
        raise TypeError("1D weights expected when shapes of a and weights differ.")
    ax = axis + len(a_shape) if axis < 0 else axis
    if not 0 <= ax < len(a_shape) or w_shape[0] != a_shape[ax]:
        raise ValueError("Length of weights not compatible with specified axis.")
    return tuple(-1 if i == ax else 1 for i in range(len(a_shape)))


def _convolve_table(n, m):
    """Static: ``(m, n + m - 1)`` indices into ``concatenate([long, 0])`` (length
    ``n + 1``) whose row ``j`` is the long operand shifted by ``j`` (``n`` = zero)."""
    idx = _np.arange(n + m - 1)[None, :] - _np.arange(m)[:, None]
    return _np.where((idx >= 0) & (idx < n), idx, n).astype(default_int())


def _inexact_dtype(*xs):
    """Static: JAX's inexact promotion of the operands' dtypes (integers and bools
    give the default float)."""
    return _dt.to_inexact_dtype(_dt.result_type(*xs))


def _bincount_length(x, minlength):
    """Static: ``max(minlength, max(x) + 1)`` (0 for an empty ``x``)."""
    top = int(_np.max(x)) + 1 if _np.size(x) else 0
    return max(int(minlength), top)


def _sum_accumulator(x):
    """Static: the dtype ``sum`` accumulates ``x`` in (bool/int -> the default int,
    uint -> the default uint), None otherwise (the array-API cumulative_sum)."""
    from ..primitives.ad import int_accumulator

    return int_accumulator(_np.result_type(x))


def _lexsort_check(shapes):
    """Static: JAX's checks of lexsort's keys (their shapes); True for 0-d keys."""
    if len(shapes) == 0:
        raise TypeError("need sequence of keys with len > 0 in lexsort")
    if len({tuple(s) for s in shapes}) > 1:
        raise ValueError("all keys need to be the same shape")
    return len(shapes[0]) == 0


def _hist_bins(bins, rank):
    """Static: ``None`` for bin edges (``rank`` 1: ``bins``' per-example rank),
    else the number of bins (``operator.index``; JAX's NotImplementedError for
    a string)."""
    import operator

    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    if rank == 1:
        return None
    return operator.index(bins)


def _hist_check(a_shape, other_shape, what):
    """Static: histogram's shape checks (JAX's messages)."""
    if what == "weights" and tuple(a_shape) != tuple(other_shape):
        raise ValueError("weights should have the same shape as a.")
    if what == "range" and tuple(other_shape) != (2,):
        raise ValueError(f"`range` must be either None or a sequence of scalars, got {a_shape}")
    return True


def _ix_shape(a_shape, a_dtype, i, n):
    """Static: the shape ``ix_`` gives its ``i``-th of ``n`` arguments (JAX's
    errors for one that is not 1-D or is boolean)."""
    a_shape = tuple(a_shape)
    if len(a_shape) != 1:
        raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape {a_shape}")
    if _np.dtype(a_dtype) == _np.bool_:
        raise NotImplementedError("Boolean arguments to jax.numpy.ix_ are not implemented")
    return tuple(a_shape[0] if j == i else 1 for j in range(n))


inexact_dtype = _static("ad.inexact_dtype", _inexact_dtype)
lexsort_check = _static("ad.lexsort_check", _lexsort_check)
hist_bins = _static("ad.hist_bins", _hist_bins)
hist_check = _static("ad.hist_check", _hist_check)
ix_shape = _static("ad.ix_shape", _ix_shape)
for _p in (lexsort_check, hist_bins, hist_check, ix_shape):
    _p.def_batch(lambda c: (c.rebuild(), False))  # shapes and dtypes only: unbatched
sum_accumulator = _static("ad.sum_accumulator", _sum_accumulator)
bincount_length = _static("ad.bincount_length", _bincount_length)
average_weight_shape = _static("ad.average_weight_shape", _average_weight_shape)
convolve_table = _static("ad.convolve_table", _convolve_table)


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


# ---------------------------------------------------------------------------
# shape and layout


def _atleast(x, n):
    x = asarray(x)
    nd = len(shape(x))
    if nd >= n:
        return x
    if n == 1 or nd == 0:
        return reshape(x, (1,) * (n - nd) + shape(x))
    if n == 2 or nd == 2:  # (k,) -> (1, k) for 2-D; (a, b) -> (a, b, 1) for 3-D
        return reshape(x, (1,) + shape(x)) if n == 2 else reshape(x, shape(x) + (1,))
    return reshape(x, (1,) + shape(x) + (1,))  # (k,) -> (1, k, 1)


def atleast_1d(*arys):
    """Each argument as an array of at least one dimension (jax.numpy.atleast_1d):
    a 0-d value becomes shape ``(1,)``. One argument gives an array, several a
    list. Dtypes as ``asarray``; differentiable."""
    if len(arys) == 1:
        return _atleast(arys[0], 1)
    return [_atleast(a, 1) for a in arys]


def atleast_2d(*arys):
    """Each argument with at least two dimensions (jax.numpy.atleast_2d): ``()``
    becomes ``(1, 1)``, ``(k,)`` becomes ``(1, k)``. One argument gives an array,
    several a list; differentiable."""
    if len(arys) == 1:
        return _atleast(arys[0], 2)
    return [_atleast(a, 2) for a in arys]


def atleast_3d(*arys):
    """Each argument with at least three dimensions (jax.numpy.atleast_3d): ``()``
    becomes ``(1, 1, 1)``, ``(k,)`` becomes ``(1, k, 1)``, ``(a, b)`` becomes
    ``(a, b, 1)``. One argument gives an array, several a list; differentiable."""
    if len(arys) == 1:
        return _atleast(arys[0], 3)
    return [_atleast(a, 3) for a in arys]


def column_stack(tup):
    """1-D arrays as columns, 2-D arrays as they are, stacked side by side
    (jax.numpy.column_stack): ``k`` arrays of length ``n`` give ``(n, k)``.
    Dtype: JAX's promotion; differentiable. Raises like ``concatenate``."""
    cols = []
    for a in tup:
        a = asarray(a)
        if len(shape(a)) < 2:
            a = reshape(a, (-1, 1))
        cols.append(a)
    return concatenate(cols, axis=1)


def dstack(tup, dtype=None):
    """Arrays stacked along a third axis (jax.numpy.dstack), after
    :func:`atleast_3d`: ``k`` arrays of shape ``(m, n)`` give ``(m, n, k)``.
    Dtype: JAX's promotion, or ``dtype``; differentiable."""
    return concatenate([_atleast(a, 3) for a in tup], axis=2, dtype=dtype)


def hsplit(ary, indices_or_sections):
    """``split`` along axis 1, or axis 0 for a 1-D array (jax.numpy.hsplit)."""
    return split(ary, indices_or_sections, axis=1 if len(shape(ary)) > 1 else 0)


def vsplit(ary, indices_or_sections):
    """``split`` along axis 0 of an array of at least 2 dimensions
    (jax.numpy.vsplit). Raises ValueError for fewer dimensions (as JAX)."""
    if len(shape(ary)) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, axis=0)


def fliplr(m):
    """``m`` reversed along axis 1 (jax.numpy.fliplr); at least 2-D, differentiable.
    Raises ValueError for fewer dimensions."""
    if len(shape(m)) < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


def flipud(m):
    """``m`` reversed along axis 0 (jax.numpy.flipud); at least 1-D, differentiable.
    Raises ValueError for a 0-d input."""
    if len(shape(m)) < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by ``k`` quarter turns in the plane of ``axes``, from the
    first towards the second (jax.numpy.rot90). Shape: ``m``'s with the two axes
    swapped for odd ``k``; differentiable. Raises ValueError for equal axes or
    fewer than 2 dimensions."""
    nd = len(shape(m))
    if nd < 2:
        raise ValueError("rot90 requires its argument to have ndim at least two")
    a0 = axes[0] % nd
    a1 = axes[1] % nd
    if a0 == a1:
        raise ValueError("Axes must be different.")
    k = k % 4
    if k == 0:
        return asarray(m)  # (canonical, as the other cases: int64 -> int32 without x64)
    if k == 2:
        return flip(flip(m, a0), a1)
    if k == 1:
        return swapaxes(flip(m, a1), a0, a1)
    return flip(swapaxes(m, a0, a1), a1)


def permute_dims(a, axes):
    """``transpose(a, axes)`` (jax.numpy.permute_dims, the array-API name)."""
    return transpose(a, axes)


def tri(N, M=None, k=0, dtype=None):
    """An ``(N, M)`` array with ones at and below diagonal ``k``, zeros above
    (jax.numpy.tri). ``M`` defaults to ``N``; dtype to the default float."""
    if M is None:
        M = N
    rows = reshape(arange(N), (N, 1))
    cols = reshape(arange(M), (1, M))
    return asarray(cols <= rows + k, dtype=inexact_dtype(1.0) if dtype is None else dtype)


# ---------------------------------------------------------------------------
# elementwise compositions


def copysign(x1, x2):
    """The magnitude of ``x1`` with the sign bit of ``x2`` (jax.numpy.copysign);
    ``-0.0`` counts as negative. Shape: broadcast; dtype: JAX's inexact promotion.
    Derivative in ``x1``: ``sign(x1) * sign-bit sign of x2`` (0 at ``x1 = 0``, as
    ``abs``); none in ``x2``."""
    dt = inexact_dtype(x1, x2)
    m = _abs(asarray(x1, dtype=dt))
    return where(signbit(x2), -m, m)


def heaviside(x1, x2):
    """The Heaviside step (jax.numpy.heaviside): 0 where ``x1 < 0``, ``x2`` where
    ``x1 == 0``, 1 where ``x1 > 0`` (NaN where ``x1`` is NaN). Dtype: JAX's
    inexact promotion. Derivative 0 in ``x1``; ``x2``'s where ``x1 == 0``."""
    dt = inexact_dtype(x1, x2)
    x1 = asarray(x1, dtype=dt)
    x2 = asarray(x2, dtype=dt)
    step = where(x1 > 0, ones_like(x1), zeros_like(x1))
    return where(x1 == 0, x2, where(isnan(x1), x1, step))


def divmod(x1, x2):
    """``(floor_divide(x1, x2), remainder(x1, x2))`` (jax.numpy.divmod), Python's
    sign conventions (the remainder has the sign of ``x2``). Shapes: the
    broadcast of both; dtypes: JAX's promotion of ``x1`` and ``x2``. The quotient
    has no derivative; the remainder's is that of ``remainder``."""
    return floor_divide(x1, x2), remainder(x1, x2)


def angle(z, deg=False):
    """The argument of complex ``z`` in radians (degrees with ``deg``), in
    ``(-pi, pi]`` (jax.numpy.angle); real input gives 0 or pi. Dtype: the real
    float dtype of ``z`` (the default float for integers); differentiable."""
    z = asarray(z, dtype=inexact_dtype(z))
    a = arctan2(imag(z), real(z))
    if deg:
        return a * (180.0 / 3.141592653589793)
    return a


def iscomplexobj(x):
    """Whether ``x`` has a complex dtype (jax.numpy.iscomplexobj); a Python
    bool, static under every transform."""
    return _np.iscomplexobj(x)


def isscalar(element):
    """Whether ``element`` is a scalar in JAX's sense (jax.numpy.isscalar): a
    Python or NumPy number, or a 0-d array. A Python bool, static."""
    if isinstance(element, (bool, int, float, complex, _np.generic)):
        return True
    return isinstance(element, _np.ndarray) and element.ndim == 0


def ptp(a, axis=None, keepdims=False):
    """Peak to peak, ``max - min`` over ``axis`` (jax.numpy.ptp). Shape and dtype
    as ``max``; differentiable (the subgradients of ``max`` and ``min``)."""
    return _max(a, axis=axis, keepdims=keepdims) - _min(a, axis=axis, keepdims=keepdims)


def select(condlist, choicelist, default=0):
    """The first choice whose condition holds, elementwise (jax.numpy.select):
    ``condlist`` and ``choicelist`` are equal-length sequences of arrays that
    broadcast together; ``default`` where no condition holds. Dtype: JAX's
    promotion of the choices and ``default``. Differentiable in the choices and
    ``default`` (each gets the cotangent where it was selected). Raises
    ValueError for sequences of different lengths or empty ones."""
    if len(condlist) != len(choicelist):
        raise ValueError("condlist must have length equal to choicelist")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    out = default
    for i in range(len(condlist) - 1, -1, -1):
        out = where(condlist[i], choicelist[i], out)
    return out


def cumulative_sum(x, axis=None, dtype=None, include_initial=False):
    """Cumulative sum along ``axis`` (jax.numpy.cumulative_sum, the array-API
    function): ``axis`` may be omitted only for 1-D input; with
    ``include_initial`` a leading zero is added (length ``n + 1``). Dtype: as
    ``sum`` (small ints accumulate in the default int, unlike ``cumsum``);
    differentiable. Raises ValueError without ``axis`` for N-D input."""
    if axis is None:
        if len(shape(x)) != 1:
            raise ValueError("axis must be specified for cumulative_sum of an N-D array")
        axis = 0
    if dtype is None:
        dtype = sum_accumulator(x)  # (int8 -> int32, as sum; cumsum keeps int8)
    c = cumsum(x, axis=axis, dtype=dtype)
    if include_initial:
        first = zeros_like(take(c, [0], axis=axis))
        c = concatenate([first, c], axis=axis)
    return c


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened ``ary``
    (jax.numpy.ediff1d), with ``to_begin``/``to_end`` (flattened) prepended and
    appended. Differentiable in all three."""
    d = diff(ravel(ary))
    parts = [d]
    if to_begin is not None:
        parts = [ravel(asarray(to_begin))] + parts
    if to_end is not None:
        parts = parts + [ravel(asarray(to_end))]
    return concatenate(parts) if len(parts) > 1 else d


def vecdot(x1, x2, axis=-1, precision=None, preferred_element_type=None):
    """Vector dot product along ``axis``, conjugating ``x1`` (jax.numpy.vecdot):
    the other axes broadcast. Shape: the broadcast shape without ``axis``; dtype:
    JAX's promotion. Differentiable. Raises ValueError for unequal axis lengths."""
    if shape(x1)[axis] != shape(x2)[axis]:
        raise ValueError(
            f"x1 and x2 must have the same size along axis={axis}; got {shape(x1)} and {shape(x2)}"
        )
    if iscomplexobj(x1):
        x1 = conj(x1)
    return sum(moveaxis(x1, axis, -1) * moveaxis(x2, axis, -1), axis=-1)


# ---------------------------------------------------------------------------
# searching and set membership (integer or bool results; not differentiable)


def isin(element, test_elements, assume_unique=False, invert=False):
    """Whether each element of ``element`` occurs in ``test_elements``
    (jax.numpy.isin), as a bool array of ``element``'s shape; ``invert`` negates.
    Compares every pair (memory ``element.size * test_elements.size``)."""
    t = ravel(asarray(test_elements))
    e = asarray(element)
    hit = _any(equal(reshape(e, shape(e) + (1,)), t), axis=-1)
    if invert:
        return ~hit
    return hit


def digitize(x, bins, right=False):
    """The index of the bin each ``x`` falls in (jax.numpy.digitize): for
    increasing ``bins``, ``i`` with ``bins[i-1] <= x < bins[i]`` (``<`` and ``<=``
    swap with ``right``); decreasing bins count from the other end. Shape:
    ``x``'s; dtype: :func:`searchsorted`'s (int32, also with x64, as JAX).
    Raises ValueError for ``bins`` not 1-D."""
    if len(shape(bins)) != 1:
        raise ValueError(f"digitize: bins must be a 1-dimensional array; got bins={bins}")
    if shape(bins)[0] == 0:
        return zeros(shape(x), dtype="int32")
    side = "left" if right else "right"
    increasing = bins[-1] >= bins[0]
    if increasing:
        return searchsorted(bins, x, side=side)
    n = shape(bins)[0]
    return n - searchsorted(flip(bins, 0), x, side=side)


def nanargmax(a, axis=None, keepdims=False):
    """``argmax`` ignoring NaNs (jax.numpy.nanargmax): -1 where every value along
    ``axis`` is NaN (JAX's convention). Dtype: the default int."""
    nan_mask = isnan(a)
    i = argmax(where(nan_mask, -_np.inf, a), axis=axis, keepdims=keepdims)
    all_nan = _all_nan(nan_mask, axis, keepdims)
    return where(all_nan, -1, i)


def nanargmin(a, axis=None, keepdims=False):
    """``argmin`` ignoring NaNs (jax.numpy.nanargmin): -1 where every value along
    ``axis`` is NaN (JAX's convention). Dtype: the default int."""
    nan_mask = isnan(a)
    i = argmin(where(nan_mask, _np.inf, a), axis=axis, keepdims=keepdims)
    all_nan = _all_nan(nan_mask, axis, keepdims)
    return where(all_nan, -1, i)


def _all_nan(nan_mask, axis, keepdims):
    return _all(nan_mask, axis=axis, keepdims=keepdims)


# ---------------------------------------------------------------------------
# counting and scatter-add


def bincount(x, weights=None, minlength=0, *, length=None):
    """Occurrences of each value in the non-negative int array ``x``, summing
    ``weights`` if given (jax.numpy.bincount). Shape: ``(length,)``, where
    ``length`` defaults to ``max(minlength, max(x) + 1)`` (JAX requires it under
    jit; srcjax computes it from the values). As in JAX, negative values count
    in bin 0 and values ``>= length`` are dropped. Dtype: the default int, or
    that of ``weights``. Differentiable in ``weights``. Raises ValueError for an
    ``x`` that is not 1-D."""
    if len(shape(x)) != 1:
        raise ValueError("bincount only supports 1-dimensional input")
    if length is None:
        length = bincount_length(x, minlength)
    idx = where(x < 0, 0, x)
    valid = idx < length
    idx = where(valid, idx, 0)
    if weights is None:
        w = asarray(valid, dtype=default_int())
    else:
        w = where(valid, weights, zeros_like(weights))
    return take_adjoint(w, zeros((length,), dtype=w.dtype), idx, 0)


# ---------------------------------------------------------------------------
# float_power, ix_, lexsort, histogram


def float_power(x1, x2):
    """``x1 ** x2`` elementwise after JAX's inexact promotion
    (jax.numpy.float_power: ``lax.pow`` of the operands promoted to a common
    inexact dtype; unlike NumPy not widened to float64, so float32 and weakly
    typed Python scalars stay float32, integers give the default float). Shape:
    the broadcast of both. A negative base with a non-integer exponent gives
    NaN. Differentiable in both, with ``power``'s rules (the derivative in
    ``x2`` is 0 where ``x1 == 0``, as JAX's)."""
    dt = inexact_dtype(x1, x2)
    return power(asarray(x1, dtype=dt), asarray(x2, dtype=dt))


def ix_(*args):
    """An open mesh from 1-D sequences (jax.numpy.ix_): the ``i``-th of ``n``
    arguments reshaped to ``(1, ..., len, ..., 1)`` (its length at axis ``i``),
    so that ``x[ix_(rows, cols)]`` picks the cross product. Returns a tuple;
    dtypes those of the arguments (an empty one gives the default int, as JAX).
    Differentiable (a reshape). Raises ``ValueError`` for an argument that is
    not 1-D and ``NotImplementedError`` for a boolean one, as JAX."""
    n = len(args)
    out = []
    for i in range(n):
        a = asarray(args[i])
        s = ix_shape(shape(a), a.dtype, i, n)
        if size(a) == 0:
            out.append(zeros(s, dtype=default_int()))
        else:
            out.append(reshape(a, s))
    return tuple(out)


def lexsort(keys, axis=-1):
    """Indices that sort by several keys (jax.numpy.lexsort): the last key is the
    primary one, ties broken by the one before, and so on; equal rows keep
    their order (stable). ``keys``: a sequence of arrays of one shape, or an
    array whose rows are the keys. Sorted along ``axis``; NaNs last. Shape: the
    keys' (0-d keys give ``0``); dtype: the default int. Computed as stable
    argsorts from the least significant key up. Not differentiable. Raises
    ``TypeError`` for no keys and ``ValueError`` for keys of different
    shapes."""
    n = len(keys)
    scalar = lexsort_check([shape(keys[i]) for i in range(n)])
    if scalar:
        return zeros((), dtype=default_int())
    idx = argsort(keys[0], axis=axis, stable=True)
    for i in range(1, n):
        k = take_along_axis(keys[i], idx, axis)
        idx = take_along_axis(idx, argsort(k, axis=axis, stable=True), axis)
    return asarray(idx, dtype=default_int())


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The bin edges :func:`histogram` uses (jax.numpy.histogram_bin_edges).

    ``bins``: an int (that many equal bins from ``range``, default ``(a.min(),
    a.max())``, widened by 0.5 on both sides when it is empty) or a 1-D array
    of edges (returned as they are). Shape ``(bins + 1,)``; dtype the inexact
    dtype of ``a`` (integers give the default float). Differentiable in ``a``
    through ``a.min()``/``a.max()``. ``weights`` is unused. Raises
    ``NotImplementedError`` for a string ``bins``, ``TypeError`` for a
    non-integer count and ``ValueError`` for a ``range`` that is not two
    scalars."""
    nbins = hist_bins(bins, 0 if isinstance(bins, str) else len(shape(bins)))
    a = asarray(a)
    dt = inexact_dtype(a)
    if nbins is None:
        return asarray(bins, dtype=dt)
    if range is None:
        lo = asarray(_min(a), dtype=dt)
        hi = asarray(_max(a), dtype=dt)
    else:
        r = asarray(range, dtype=dt)
        hist_check(range, shape(r), "range")
        lo = r[0]
        hi = r[1]
    empty = hi - lo == 0
    lo2 = where(empty, lo - 0.5, lo)
    hi2 = where(empty, hi + 0.5, hi)
    return linspace(lo2, hi2, nbins + 1, dtype=dt)


def histogram(a, bins=10, range=None, weights=None, density=None):
    """A 1-D histogram of the values of ``a`` (jax.numpy.histogram), over all
    of its elements.

    ``bins`` and ``range`` as :func:`histogram_bin_edges`; bins are half-open
    ``[e_i, e_{i+1})`` except the last, which includes its right edge; values
    outside the edges (and NaNs) are not counted. ``weights``: an array of
    ``a``'s shape summed per bin instead of counts. ``density``: counts divided
    by the bin widths and by their total. Returns ``(counts, edges)``: shapes
    ``(nbins,)`` and ``(nbins + 1,)``; dtypes JAX's inexact promotion of ``a``
    and ``weights`` (float32 counts for integer data). Differentiable in
    ``weights``, and in ``a`` through the edges (``range=None``) and density's
    widths. Raises ``ValueError`` when ``weights`` has another shape, and the
    errors of :func:`histogram_bin_edges`."""
    if weights is None:
        a = asarray(a, dtype=inexact_dtype(a))
        weights = ones_like(a)
    else:
        hist_check(shape(a), shape(weights), "weights")
        dt = inexact_dtype(a, weights)
        a = asarray(a, dtype=dt)
        weights = asarray(weights, dtype=dt)
    edges = histogram_bin_edges(a, bins, range)
    nb = shape(edges)[0]
    flat = ravel(a)
    idx = searchsorted(edges, flat, side="right")
    idx = where(flat == edges[-1], nb - 1, idx)
    # bin 0 (below the first edge) and nb (above the last) are dropped, as JAX's
    # scatter drops them
    total = take_adjoint(ravel(weights), zeros((nb + 1,), dtype=weights.dtype), idx, 0)
    counts = total[1:nb]
    if density:
        counts = counts / diff(edges) / sum(counts)
    return counts, edges


def nancumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum treating NaN as 0 (jax.numpy.nancumsum): ``cumsum(where(
    isnan(a), 0, a), axis, dtype)``. Shape: ``a``'s (flattened for ``axis``
    None); dtype as ``cumsum``. Differentiable in ``a`` (zero at the NaNs).
    ``out`` must be None (JAX's NotImplementedError otherwise)."""
    _no_out(out, "nancumsum")
    return cumsum(where(isnan(a), 0, a), axis, dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product treating NaN as 1 (jax.numpy.nancumprod); as
    :func:`nancumsum`."""
    _no_out(out, "nancumprod")
    return cumprod(where(isnan(a), 1, a), axis, dtype)


def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """Product over ``axis`` treating NaN as 1 (jax.numpy.nanprod): shape as
    ``prod`` (``keepdims``), dtype as ``prod`` (``dtype``). ``where`` selects
    the elements multiplied; ``initial`` is not supported (NotImplementedError),
    nor ``out``."""
    _no_out(out, "nanprod")
    _no_initial(initial)
    return _prod(_where(isnan(a), 1, a), axis, dtype, keepdims, where)


def _no_out(out, name):
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    return True


def _no_initial(initial):
    if initial is not None:
        raise NotImplementedError("jnp.nanprod: initial= is not supported by srcjax")
    return True


_no_out.__srcjax_inactive__ = True
_no_initial.__srcjax_inactive__ = True
_where = where
