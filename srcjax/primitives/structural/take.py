"""Repetition and gathers: ``tile``, ``repeat``, ``take``, ``take_along_axis``
and their adjoints.
"""

from __future__ import annotations

import numpy as np

from srcjax.primitives.ad import (
    flat_positions,
)
from srcjax.primitives.ad.oob import default_fill

from ..ad.linear import def_adjoint_of, def_adjoint_pair, def_linear
from ._common import _internal, _rand, _structural

__all__ = ["tile", "repeat", "take", "take_along_axis"]

# ---------------------------------------------------------------------------
# tile / repeat / take / take_along_axis


def _tile(A, reps):
    """Repeat ``A`` ``reps`` times along each axis (jax.numpy.tile)."""
    return np.tile(A, reps)


tile = _structural("jnp.tile", _tile, np.tile)


def _tile_adjoint(g, A, reps):
    """Adjoint of ``tile(A, reps)``: sum the tiles of ``g`` back to ``A``'s shape."""
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    a_shape = np.shape(A)
    d = max(len(reps), len(a_shape))
    shp = (1,) * (d - len(a_shape)) + tuple(a_shape)
    rp = (1,) * (d - len(reps)) + reps
    inter = []
    for r, s in zip(rp, shp):
        inter += [r, s]
    out = np.reshape(g, inter).sum(axis=tuple(range(0, 2 * d, 2)))
    return out.reshape(a_shape)


tile_adjoint = _internal("ad.tile_adjoint", _tile_adjoint)


def_adjoint_pair(tile, tile_adjoint)


tile.samples = lambda rng: [
    ((_rand(rng, 2, 3), (2, 1)), {}),
    ((_rand(rng, 3), (2, 2)), {}),
    ((_rand(rng, 2, 3), 2), {}),
]
tile_adjoint.samples = lambda rng: [((_rand(rng, 4, 3), _rand(rng, 2, 3), (2, 1)), {})]


def _take_plan(a, indices, axis, mode):
    """(indices in range, mask of the valid ones or None) for ``take``'s ``mode``
    as JAX defines it: "clip" clamps to ``[0, n - 1]`` (negative indices too),
    "wrap" takes them modulo ``n``, "fill" (the default) keeps ``[-n, n)`` and
    marks the rest."""
    n = np.size(a) if axis is None else np.shape(a)[axis]
    idx = np.asarray(indices)
    if mode == "clip":
        return np.clip(idx, 0, max(n - 1, 0)), None
    if mode == "wrap":
        return np.mod(idx, n), None
    if mode not in (None, "fill", "promise_in_bounds"):
        raise ValueError(f"jnp.take: invalid mode {mode!r} (use 'fill', 'clip' or 'wrap')")
    valid = (idx >= -n) & (idx < n)
    if valid.all():
        return idx, None
    return np.where(valid, idx, 0), valid


def _take_valid_mask(valid, a, axis):
    """``valid`` (shaped like the indices) reshaped to broadcast against the result."""
    if axis is None:
        return valid
    ax = axis % np.ndim(a)
    return valid.reshape((1,) * ax + valid.shape + (1,) * (np.ndim(a) - ax - 1))


def _take(a, indices, axis=None, mode=None, fill_value=None):
    """Take elements of ``a`` at ``indices`` along ``axis`` (flattened when None)
    (jax.numpy.take). ``mode`` as JAX: "fill" (the default) returns
    ``fill_value`` (NaN for inexact dtypes, the minimum for signed integers, the
    maximum for unsigned, True for bool) at indices outside ``[-n, n)``; "clip"
    clamps to ``[0, n - 1]``; "wrap" wraps around."""
    idx, valid = _take_plan(a, indices, axis, mode)
    out = np.take(a, idx, axis=axis)
    if valid is None:
        return out
    if fill_value is None:
        fill_value = default_fill(out.dtype)
    mask = _take_valid_mask(valid, a, axis)
    return np.where(mask, out, np.asarray(fill_value, out.dtype))


take = _structural("jnp.take", _take, np.take)


def _take_adjoint(g, a, indices, axis=None):
    """Adjoint of ``take(a, indices, axis)``: scatter-add ``g`` into zeros like ``a``."""
    shape = np.shape(a)
    if axis is None:
        pos = np.arange(int(np.prod(shape))).reshape(-1)[indices]
    else:
        ax = axis % len(shape)
        pos = flat_positions(shape, (slice(None),) * ax + (indices,))
    out = np.zeros(shape, dtype=np.result_type(g))
    np.add.at(out.reshape(-1), np.reshape(pos, -1), np.broadcast_to(g, np.shape(pos)).reshape(-1))
    return out


take_adjoint = _internal("ad.take_adjoint", _take_adjoint)


def _take_index(a, indices, axis=None, mode=None):
    """The in-range indices ``take`` reads for ``mode`` (see :func:`_take`)."""
    return _take_plan(a, indices, axis, mode)[0]


def _take_mask(g, a, indices, axis=None, mode=None):
    """``g`` (shaped like ``take``'s result) with zeros where ``mode`` "fill" put
    the fill value: those positions depend on no element of ``a``."""
    valid = _take_plan(a, indices, axis, mode)[1]
    if valid is None:
        return g
    return np.where(_take_valid_mask(valid, a, axis), g, np.zeros((), np.result_type(g)))


take_index = _internal("ad.take_index", _take_index, differentiable=False)
take_mask = _internal("ad.take_mask", _take_mask)


def_linear(take_mask)
take_mask.samples = lambda rng: [
    ((_rand(rng, 4), _rand(rng, 3), np.array([0, 5, -1, -4])), {}),
    ((_rand(rng, 3, 2), _rand(rng, 3, 4), np.array([1, 7])), {"axis": 1}),
]


def _take_vjp_a(g, ans, a, indices, axis=None, mode=None, fill_value=None):
    return take_adjoint(
        take_mask(g, a, indices, axis, mode), a, take_index(a, indices, axis, mode), axis
    )


take.def_vjp(_take_vjp_a)


def _take_jvp_a(t, ans, a, indices, axis=None, mode=None, fill_value=None):
    return take(t, indices, axis, mode, 0.0)


take.def_jvp(_take_jvp_a)


def_adjoint_of(take_adjoint, take)


take.samples = lambda rng: [
    ((_rand(rng, 3, 4), np.array([0, 2, 2, -1])), {}),
    ((_rand(rng, 4), np.array([-6, -1, 0, 3, 5, 9])), {"mode": "clip"}),
    ((_rand(rng, 4), np.array([-6, -1, 0, 3, 5, 9])), {"mode": "wrap"}),
    ((_rand(rng, 3, 4), np.array([1, 7, -2])), {"axis": 1, "mode": "fill", "fill_value": -1.0}),
    ((_rand(rng, 3, 4), np.array([[0, 1], [1, 1]])), {"axis": 1}),
    ((_rand(rng, 3, 4), np.array([2, 0, 2])), {"axis": 0}),
]
take_adjoint.samples = lambda rng: [
    ((_rand(rng, 3, 2, 2), _rand(rng, 3, 4), np.array([[0, 1], [1, 1]]), 1), {}),
    ((_rand(rng, 4), _rand(rng, 3, 4), np.array([0, 2, 2, -1])), {}),
]


def _repeat(a, repeats, axis=None, total_repeat_length=None):
    """Repeat each element ``repeats`` times along ``axis`` (flattened when None)
    (jax.numpy.repeat). With ``total_repeat_length`` the result has that length
    along ``axis``: cut short when ``sum(repeats)`` is larger, filled with the
    last element when it is smaller (as JAX); an empty axis is returned as is."""
    if total_repeat_length is None:
        return np.repeat(a, repeats, axis=axis)
    arr = np.ravel(a) if axis is None else np.asarray(a)
    ax = 0 if axis is None else axis
    if arr.shape[ax] == 0:
        return arr
    return np.take(arr, _repeat_indices(a, repeats, axis, total_repeat_length), axis=ax)


repeat = _structural("jnp.repeat", _repeat, np.repeat)


def _repeat_indices(a, repeats, axis=None, total_repeat_length=None):
    """Static: the source index of every output element of ``repeat`` along ``axis``
    (``total_repeat_length`` of them when given, JAX's truncation and padding)."""
    n = np.size(a) if axis is None else np.shape(a)[axis]
    if total_repeat_length is None:
        return np.repeat(np.arange(n), repeats)
    if n == 0:  # repeat returns the empty array itself
        return np.zeros(0, dtype=np.int64)
    r = np.broadcast_to(np.ravel(repeats), (n,)).astype(np.int64)
    starts = np.concatenate([[0], np.cumsum(r)[:-1]])
    # output position p copies the last element whose block starts at or before p
    return np.searchsorted(starts, np.arange(int(total_repeat_length)), side="right") - 1


repeat_indices = _internal("ad.repeat_indices", _repeat_indices, differentiable=False)


def _repeat_vjp_a(g, ans, a, repeats, axis=None, total_repeat_length=None):
    return take_adjoint(g, a, repeat_indices(a, repeats, axis, total_repeat_length), axis)


repeat.def_vjp(_repeat_vjp_a)


def _repeat_jvp_a(t, ans, a, repeats, axis=None, total_repeat_length=None):
    return repeat(t, repeats, axis, total_repeat_length)


repeat.def_jvp(_repeat_jvp_a)
repeat.samples = lambda rng: [
    ((_rand(rng, 2, 3), 2), {}),
    ((_rand(rng, 2, 3), [1, 0, 3]), {"axis": 1}),
    ((_rand(rng, 2, 3), 3), {"axis": 0}),
    ((_rand(rng, 2, 3), np.array([1, 0, 2])), {"axis": 1, "total_repeat_length": 5}),
    ((_rand(rng, 2, 3), 2), {"total_repeat_length": 4}),
]


def _tal_plan(arr, indices, axis, mode):
    """(indices in range, mask of the valid ones or None) of ``take_along_axis``
    in ``mode`` as JAX computes it: negative indices wrapped once, then clamped
    (``"clip"``) or marked when outside ``[0, n)`` (``"fill"``, the default, and
    ``"drop"``); ``"promise_in_bounds"`` clamps without wrapping (XLA's gather)."""
    n = np.size(arr) if axis is None else np.shape(arr)[axis]
    idx = np.asarray(indices)
    top = max(n - 1, 0)
    if mode == "promise_in_bounds":
        return np.clip(idx, 0, top), None
    wrapped = np.where(idx < 0, idx + n, idx)
    if mode == "clip":
        return np.clip(wrapped, 0, top), None
    if mode not in (None, "fill", "drop"):
        raise ValueError(f"take_along_axis: invalid mode {mode!r}")
    valid = (wrapped >= 0) & (wrapped < n)
    if valid.all():
        return wrapped, None
    return np.where(valid, wrapped, 0), valid


def _take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None):
    """Gather ``arr`` at ``indices`` along ``axis`` (jax.numpy.take_along_axis);
    ``axis=None`` works on the flattened array. Out of bounds as JAX: ``mode``
    "fill" (the default; "drop" the same) gives ``fill_value`` (NaN for inexact
    dtypes, the minimum of a signed integer dtype, the maximum of an unsigned
    one, True for bool) at an index outside ``[-n, n)``; "clip" clamps;
    "promise_in_bounds" leaves it to XLA (clamps, negative indices to 0)."""
    if mode != "promise_in_bounds":
        try:
            return np.take_along_axis(arr, indices, axis)  # (in bounds: NumPy's)
        except IndexError:
            pass
    idx, valid = _tal_plan(arr, indices, axis, mode)
    out = np.take_along_axis(arr, idx, axis)
    if valid is None:
        return out
    if fill_value is None:
        fill_value = default_fill(out.dtype)
    return np.where(valid, out, np.asarray(fill_value, out.dtype))


take_along_axis = _structural("jnp.take_along_axis", _take_along_axis, np.take_along_axis)


def _take_along_axis_adjoint(g, arr, indices, axis, mode=None):
    """Adjoint of ``take_along_axis``: scatter-add ``g`` into zeros like ``arr``
    (at the clamped indices; the filled entries dropped)."""
    shape = np.shape(arr)
    idx, valid = _tal_plan(arr, indices, axis, mode)
    if valid is not None:
        g = np.where(valid, g, np.zeros((), np.result_type(g)))
    dt = np.result_type(g)
    if axis is not None and idx.ndim == len(shape) and idx.shape[axis] == 1 and dt.kind in "fc":
        # one index per row along ``axis`` (a cross-entropy's y[:, None]): no two
        # cotangents meet, so a write is the sum (0 + g: -0.0 becomes 0.0 as in
        # the sum); np.add.at's unbuffered loop cost ~6 us more (R8)
        out = np.zeros(shape, dt)
        np.put_along_axis(out, idx, np.add(g, dt.type(0)), axis)
        return out
    pos = np.take_along_axis(np.arange(int(np.prod(shape))).reshape(shape), idx, axis)
    out = np.zeros(shape, dtype=np.result_type(g))
    np.add.at(out.reshape(-1), pos.reshape(-1), np.broadcast_to(g, pos.shape).reshape(-1))
    return out


take_along_axis_adjoint = _internal("ad.take_along_axis_adjoint", _take_along_axis_adjoint)


# (not the linear-map makers: a tangent or second-order cotangent of a filled
# entry is 0, not fill_value)
def _take_along_axis_vjp_arr(g, ans, arr, indices, axis=-1, mode=None, fill_value=None):
    return take_along_axis_adjoint(g, arr, indices, axis, mode)


take_along_axis.def_vjp(_take_along_axis_vjp_arr)


def _take_along_axis_jvp_arr(t, ans, arr, indices, axis=-1, mode=None, fill_value=None):
    return take_along_axis(t, indices, axis, mode, 0.0)


take_along_axis.def_jvp(_take_along_axis_jvp_arr)


def _take_along_axis_adjoint_vjp_g(h, ans, g, arr, indices, axis, mode=None):
    return take_along_axis(h, indices, axis, mode, 0.0)


take_along_axis_adjoint.def_vjp(_take_along_axis_adjoint_vjp_g)


def _take_along_axis_adjoint_jvp_g(t, ans, g, arr, indices, axis, mode=None):
    return take_along_axis_adjoint(t, arr, indices, axis, mode)


take_along_axis_adjoint.def_jvp(_take_along_axis_adjoint_jvp_g)
take_along_axis.samples = lambda rng: [
    ((_rand(rng, 3, 4), np.array([[0, 3, 3], [1, 1, 0], [2, 0, 0]]), 1), {}),
    ((_rand(rng, 3, 4), np.array([[2, 0, 0, 1]]), 0), {}),
    ((_rand(rng, 2, 3), np.array([5, 0, 0]), None), {}),
    # out of bounds (JAX's modes; a fill value, not NaN: finite differences check them)
    ((_rand(rng, 3, 4), np.array([[0, 7, -1], [-9, 1, 4], [2, 0, 3]]), 1), {"fill_value": 0.5}),
    ((_rand(rng, 3, 4), np.array([[0, 7, -1], [-9, 1, 4], [2, 0, 3]]), 1), {"mode": "clip"}),
    ((_rand(rng, 3, 4), np.array([[5, -1, 2, 0]]), 0), {"mode": "fill", "fill_value": -2.0}),
    ((_rand(rng, 2, 3), np.array([6, -1, 0]), None), {"mode": "promise_in_bounds"}),
]
take_along_axis_adjoint.samples = lambda rng: [
    ((_rand(rng, 3, 3), _rand(rng, 3, 4), np.array([[0, 3, 3], [1, 1, 0], [2, 0, 0]]), 1), {}),
    ((_rand(rng, 3, 3), _rand(rng, 3, 4), np.array([[0, 7, -1], [-9, 1, 4], [2, 0, 3]]), 1), {}),
    (
        (_rand(rng, 3, 3), _rand(rng, 3, 4), np.array([[0, 7, -1], [-9, 1, 4], [2, 0, 3]]), 1),
        {"mode": "clip"},
    ),
]


# JAX keeps a weak array's type through functions that move or copy its elements
for _p in (tile, repeat):
    _p.facts(keeps_weak=True)
