"""``sort``, ``argsort`` and ``searchsorted`` (integer output)."""

from __future__ import annotations

import numpy as np

from srcjax.primitives.ad import (
    default_int,
    reshape,
)

from ._common import _rand, _structural
from .take import take_along_axis

__all__ = ["sort", "argsort", "searchsorted"]

# ---------------------------------------------------------------------------
# sort / argsort


def _argsort(a, axis=-1, kind=None, order=None, stable=True, descending=False):
    """Indices that sort ``a`` along ``axis`` (jax.numpy.argsort); stable; int32
    unless x64. ``axis=None`` sorts the flattened array. Not differentiable."""
    if not descending:
        idx = np.argsort(a, axis=axis, kind="stable")
    else:
        arr = np.ravel(a) if axis is None else np.asarray(a)
        ax = 0 if axis is None else axis
        n = arr.shape[ax]
        idx = n - 1 - np.flip(np.argsort(np.flip(arr, ax), axis=ax, kind="stable"), ax)
    return idx.astype(default_int(), copy=False)


argsort = _structural("jnp.argsort", _argsort, np.argsort, differentiable=False)


def _sort(a, axis=-1, kind=None, order=None, stable=True, descending=False):
    """``a`` sorted along ``axis`` (jax.numpy.sort); ``axis=None`` sorts the
    flattened array. Ties keep their order (stable), so the gradient of tied
    elements follows the permutation of :func:`argsort`."""
    if not descending:
        return np.sort(a, axis=axis, kind="stable")
    arr = np.ravel(a) if axis is None else np.asarray(a)
    ax = -1 if axis is None else axis
    return np.take_along_axis(arr, _argsort(arr, ax, descending=True), ax)


sort = _structural("jnp.sort", _sort, np.sort)


def _sort_vjp(g, ans, a, axis=-1, kind=None, order=None, stable=True, descending=False):
    return reshape(
        take_along_axis(g, argsort(argsort(a, axis, descending=descending), axis), axis),
        np.shape(a),
    )


def _sort_jvp(t, ans, a, axis=-1, kind=None, order=None, stable=True, descending=False):
    return take_along_axis(reshape(t, np.shape(a)), argsort(a, axis, descending=descending), axis)


sort.def_vjp(_sort_vjp)
sort.def_jvp(_sort_jvp)
sort.samples = lambda rng: [
    ((_rand(rng, 3, 4),), {}),
    ((_rand(rng, 3, 4),), {"axis": 0}),
    ((_rand(rng, 3, 4),), {"axis": None}),
    ((_rand(rng, 5),), {"descending": True}),
]


# ---------------------------------------------------------------------------
# searchsorted (integer output)


def _searchsorted(a, v, side="left", sorter=None, *, method="scan"):
    """Indices where the elements of ``v`` would be inserted into the sorted 1-D
    ``a`` to keep it sorted (jax.numpy.searchsorted): the first such index
    (``side="left"``) or the last (``side="right"``). ``sorter`` is an optional
    permutation sorting ``a``; ``method`` is accepted for JAX compatibility.

    Shape: ``v``'s. Dtype: int32 (with x64 too, as JAX, unless ``len(a)`` needs
    int64). Not differentiable. Raises
    ``ValueError`` for an ``a`` that is not 1-D or an unknown ``side``."""
    a = np.asarray(a)
    if a.ndim != 1:
        raise ValueError(f"jnp.searchsorted: a should be 1-dimensional, got shape {a.shape}")
    if side not in ("left", "right"):
        raise ValueError(f"jnp.searchsorted: side must be 'left' or 'right', got {side!r}")
    dt = np.int32 if a.shape[0] <= np.iinfo(np.int32).max else default_int()
    return np.asarray(np.searchsorted(a, v, side=side, sorter=sorter), dtype=dt)


searchsorted = _structural("jnp.searchsorted", _searchsorted, np.searchsorted, differentiable=False)
searchsorted.samples = lambda rng: [
    ((np.sort(_rand(rng, 6)), _rand(rng, 4)), {}),
    ((np.sort(_rand(rng, 5)), _rand(rng, 2, 3)), {"side": "right"}),
    ((np.array([0.0, 1.0, 1.0, 2.0]), np.array([1.0, 0.5, 3.0])), {"side": "left"}),
]


# JAX keeps a weak array's type through functions that move or copy its elements
for _p in (sort,):
    _p.facts(keeps_weak=True)
