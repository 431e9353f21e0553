"""The non-differentiable ``ad.*`` helpers of static values (shapes, index
tables, dtypes) that the compositions of :mod:`srcjax.numpy._functions` call:
the same for every example of a vmap."""

from __future__ import annotations

import numpy as _np

from ... import dtypes as _dt
from ...primitives.ad import default_int
from ...primitives.registry import Primitive, register


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
    from ...primitives.ad import int_accumulator

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
sum_accumulator = _static("ad.sum_accumulator", _sum_accumulator)
bincount_length = _static("ad.bincount_length", _bincount_length)
average_weight_shape = _static("ad.average_weight_shape", _average_weight_shape)
convolve_table = _static("ad.convolve_table", _convolve_table)
for _p in (
    inexact_dtype,
    lexsort_check,
    hist_bins,
    hist_check,
    ix_shape,
    average_weight_shape,
    convolve_table,
):
    _p.def_batch(lambda c: (c.rebuild(), False))  # shapes and dtypes only: unbatched
