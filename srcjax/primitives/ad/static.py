"""Static helpers (non-differentiable: shapes, specs, constants) and the grouping
of reduced axes last (``ad.group_last``, used by the prod and median rules).
"""

from __future__ import annotations

import numpy as np

from ._common import _internal, norm_axes
from .linear import def_adjoint_pair
from .shapes import def_reshaping

# ---------------------------------------------------------------------------
# static helpers (non-differentiable: their results are shapes / specs / constants)


def _axis_or_zero(axis):
    """``0`` when ``axis`` is None (the axis of a flattened array), else ``axis``."""
    return 0 if axis is None else axis


axis_or_zero = _internal("ad.axis_or_zero", _axis_or_zero, differentiable=False)
axis_or_zero.facts(static_for_constants=True)


def _inverse_permutation(axes, ndim):
    """The permutation undoing ``transpose(x, axes)``; None when ``axes`` is None."""
    if axes is None:
        return None
    return tuple(int(i) for i in np.argsort([int(a) % ndim for a in axes]))


inverse_permutation = _internal(
    "ad.inverse_permutation", _inverse_permutation, differentiable=False
).facts(pure=True, static_for_constants=True)


def _eye_mask(n, dtype=np.float32):
    """Constant ``n x n`` identity (rules use it as a 0/1 mask)."""
    return np.eye(n, dtype=dtype)


eye_mask = _internal("ad.eye_mask", _eye_mask, differentiable=False).facts(pure=True)


def _last_onehot(y):
    """Constant: zeros like ``y`` with ones at the last position of the last axis."""
    out = np.zeros(np.shape(y), dtype=np.result_type(y))
    out[..., -1] = 1
    return out


last_onehot = _internal("ad.last_onehot", _last_onehot, differentiable=False).facts(pure=True)


def _flatten_if_none(x, axis):
    """``ravel(x)`` when ``axis`` is None, else ``x`` (rules of axis=None ops)."""
    return np.ravel(x) if axis is None else np.asarray(x)


flatten_if_none = _internal("ad.flatten_if_none", _flatten_if_none)


def_reshaping(flatten_if_none)
flatten_if_none.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), None), {}),
    ((rng.normal(size=(2, 3)), 1), {}),
]


# ---------------------------------------------------------------------------
# grouping reduced axes last (used by the prod / median rules)


def _group_last(x, axis):
    """``x`` with the reduced ``axis`` (None / int / tuple) moved last and
    flattened into one axis: shape ``(kept..., n)``."""
    x = np.asarray(x)
    axes = norm_axes(axis, x.ndim)
    k = len(axes)
    last = tuple(range(x.ndim - k, x.ndim))
    moved = x if axes == last else np.moveaxis(x, axes, last)  # (moveaxis: ~4 us)
    return moved.reshape(moved.shape[: x.ndim - k] + (-1,))


def _ungroup_last(y, x, axis):
    """Inverse of ``ad.group_last(x, axis)`` for an array ``y`` of the grouped shape."""
    x_shape = np.shape(x)
    ndim = len(x_shape)
    axes = norm_axes(axis, ndim)
    k = len(axes)
    kept = tuple(n for i, n in enumerate(x_shape) if i not in axes)
    red = tuple(x_shape[i] for i in axes)
    y = np.reshape(y, kept + red)
    last = tuple(range(ndim - k, ndim))
    return y if axes == last else np.moveaxis(y, last, axes)


group_last = _internal("ad.group_last", _group_last).facts(pure=True)
ungroup_last = _internal("ad.ungroup_last", _ungroup_last).facts(pure=True)


def_adjoint_pair(group_last, ungroup_last)
group_last.samples = lambda rng: [
    ((rng.normal(size=(2, 3, 4)), (0, 2)), {}),
    ((rng.normal(size=(2, 3, 4)), None), {}),
    ((rng.normal(size=(2, 3, 4)), -2), {}),
]
ungroup_last.samples = lambda rng: [
    ((rng.normal(size=(3, 8)), rng.normal(size=(2, 3, 4)), (0, 2)), {}),
    ((rng.normal(size=(24,)), rng.normal(size=(2, 3, 4)), None), {}),
]
