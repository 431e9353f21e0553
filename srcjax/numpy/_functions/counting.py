"""``jnp``'s searching and set membership (``isin``, ``digitize``,
``nanargmax``), counting (``bincount``, ``histogram``, ``lexsort``, ``ix_``)
and NaN-aware cumulative functions (``nancumsum``, ``nanprod``): integer or
bool results are not differentiable."""

from __future__ import annotations

import numpy as _np

from ...primitives.ad import default_int, reshape, sum, zeros_like
from ...primitives.creation import asarray, linspace, ones_like, shape, size, zeros
from ...primitives.elementwise import equal, isnan, power, where
from ...primitives.reductions import all as _all
from ...primitives.reductions import any as _any
from ...primitives.reductions import argmax, argmin, cumprod, cumsum
from ...primitives.reductions import max as _max
from ...primitives.reductions import min as _min
from ...primitives.reductions import prod as _prod
from ...primitives.structural import (
    argsort,
    diff,
    flip,
    ravel,
    searchsorted,
    take_adjoint,
    take_along_axis,
)
from ._static import bincount_length, hist_bins, hist_check, inexact_dtype, ix_shape, lexsort_check

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
    total = asarray(total)  # (an ad.* helper returns its buffer eagerly: an Array, as JAX's)
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
