"""The non-differentiable ``ad.more_*`` helpers of static values (shapes, dtypes,
axes) that the compositions of :mod:`srcjax.numpy._more` call, and the two
makers of such helpers (``_static``: unbatched under vmap; ``_checker``: reads
values, runs per example)."""

from __future__ import annotations

import operator as _operator
from typing import Callable

import numpy as _np

from ... import dtypes as _dt
from ...primitives.registry import Primitive, register


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
