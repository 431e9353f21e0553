"""Structural primitives: reshape, transpose, concatenate, indexing, ``.at[]``, sort, ...

Conventions the transforms must know:

- List parameters (``concatenate(arrays)``, ``stack(arrays)``, ``hstack(tup)``,
  ``vstack(tup)``): the vjp rule returns a Python list of cotangents, one per
  element; the jvp rule receives the full list of element tangents (zeros for
  inactive elements) as ``t``.
- List outputs (``split``, ``array_split``, ``unstack``): the cotangent ``g`` is a
  list with one entry per piece; ``None`` entries (pieces that were not used)
  are allowed and read as zeros.
- ``getitem(x, idx)`` is operator ``[]`` (public ``ad.getitem``); ``idx`` is never
  differentiated. ``at_set/at_add/at_multiply/at_min/at_max(x, idx, v)`` are the
  functional ``x.at[idx].<op>(v)``: they return a new array and are
  differentiable in ``x`` and ``v`` (``v`` may broadcast to ``x[idx]``; its
  rules un-broadcast themselves).
"""

from __future__ import annotations

import numpy as np

from srcjax.primitives.ad import (
    astype,
    broadcast_to,
    default_int,
    expand_dims,
    flat_positions,
    getitem,
    inverse_permutation,
    is_basic_index,
    moveaxis,
    reshape,
    tril,
    triu,
    unbroadcast,
    zeros_like,
)
from srcjax.primitives.registry import Primitive, register

__all__ = [
    "reshape",
    "ravel",
    "transpose",
    "matrix_transpose",
    "swapaxes",
    "moveaxis",
    "squeeze",
    "expand_dims",
    "broadcast_to",
    "concatenate",
    "stack",
    "unstack",
    "split",
    "array_split",
    "hstack",
    "vstack",
    "tile",
    "repeat",
    "flip",
    "roll",
    "pad",
    "take",
    "take_along_axis",
    "diag",
    "diagonal",
    "triu",
    "tril",
    "sort",
    "argsort",
    "astype",
    "copy",
]


def _structural(public, impl, *aliases, differentiable=True):
    return register(
        Primitive(public, impl, kind="structural", differentiable=differentiable), *aliases
    )


def _internal(public, impl, differentiable=True):
    return register(Primitive(public, impl, kind="internal", differentiable=differentiable))


def _rand(rng, *shape):
    return rng.normal(size=shape)


# ---------------------------------------------------------------------------
# ravel / transpose / swapaxes / squeeze / copy


def _ravel(a, order="C"):
    """``a`` flattened to 1-D (jax.numpy.ravel)."""
    return np.ravel(a, order=order)


ravel = _structural("jnp.ravel", _ravel, np.ravel)


def _ravel_vjp_a(g, ans, a, order="C"):
    return reshape(g, np.shape(a), order=order)


ravel.def_vjp(_ravel_vjp_a)


def _ravel_jvp_a(t, ans, a, order="C"):
    return ravel(t, order=order)


ravel.def_jvp(_ravel_jvp_a)


def _transpose(a, axes=None):
    """Permute the axes of ``a`` (jax.numpy.transpose); reverse them when
    ``axes`` is None."""
    return np.transpose(a, axes)


transpose = _structural("jnp.transpose", _transpose, np.transpose)


def _transpose_vjp(g, ans, a, axes=None):
    return transpose(g, inverse_permutation(axes, np.ndim(a)))


def _transpose_jvp(t, ans, a, axes=None):
    return transpose(t, axes)


transpose.def_vjp(_transpose_vjp)
transpose.def_jvp(_transpose_jvp)
transpose.samples = lambda rng: [
    ((_rand(rng, 2, 3),), {}),
    ((_rand(rng, 2, 3, 4), (1, 2, 0)), {}),
    ((_rand(rng, 2, 3, 4), (-1, 0, 1)), {}),
]


def _matrix_transpose(x):
    """Swap the last two axes (jax.numpy.matrix_transpose, ``x.mT``)."""
    return np.swapaxes(x, -1, -2)


matrix_transpose = _structural("jnp.matrix_transpose", _matrix_transpose)


def _matrix_transpose_vjp_x(g, ans, x):
    return matrix_transpose(g)


matrix_transpose.def_vjp(_matrix_transpose_vjp_x)


def _matrix_transpose_jvp_x(t, ans, x):
    return matrix_transpose(t)


matrix_transpose.def_jvp(_matrix_transpose_jvp_x)
matrix_transpose.samples = lambda rng: [((_rand(rng, 2, 3, 4),), {})]


def _swapaxes(a, axis1, axis2):
    """Interchange two axes (jax.numpy.swapaxes)."""
    return np.swapaxes(a, axis1, axis2)


swapaxes = _structural("jnp.swapaxes", _swapaxes, np.swapaxes)


def _swapaxes_vjp_a(g, ans, a, axis1, axis2):
    return swapaxes(g, axis1, axis2)


swapaxes.def_vjp(_swapaxes_vjp_a)


def _swapaxes_jvp_a(t, ans, a, axis1, axis2):
    return swapaxes(t, axis1, axis2)


swapaxes.def_jvp(_swapaxes_jvp_a)
swapaxes.samples = lambda rng: [((_rand(rng, 2, 3, 4), 0, -1), {})]


def _squeeze(a, axis=None):
    """Remove length-1 axes (all, or those in ``axis``) (jax.numpy.squeeze)."""
    return np.squeeze(a, axis=axis)


squeeze = _structural("jnp.squeeze", _squeeze, np.squeeze)


def _squeeze_vjp_a(g, ans, a, axis=None):
    return reshape(g, np.shape(a))


squeeze.def_vjp(_squeeze_vjp_a)


def _squeeze_jvp_a(t, ans, a, axis=None):
    return squeeze(t, axis)


squeeze.def_jvp(_squeeze_jvp_a)
squeeze.samples = lambda rng: [
    ((_rand(rng, 2, 1, 3, 1),), {}),
    ((_rand(rng, 2, 1, 3, 1), -1), {}),
]


def _copy(a, order="K"):
    """A copy of ``a`` (jax.numpy.copy)."""
    return np.array(a, copy=True, order=order)


copy = _structural("jnp.copy", _copy, np.copy)


def _copy_vjp_a(g, ans, a, order="K"):
    return g


copy.def_vjp(_copy_vjp_a)


def _copy_jvp_a(t, ans, a, order="K"):
    return t


copy.def_jvp(_copy_jvp_a)


# ---------------------------------------------------------------------------
# flip / roll


def _flip(m, axis=None):
    """Reverse the order of elements along ``axis`` (all axes when None)
    (jax.numpy.flip)."""
    return np.flip(m, axis)


flip = _structural("jnp.flip", _flip, np.flip)


def _flip_vjp_m(g, ans, m, axis=None):
    return flip(g, axis)


flip.def_vjp(_flip_vjp_m)


def _flip_jvp_m(t, ans, m, axis=None):
    return flip(t, axis)


flip.def_jvp(_flip_jvp_m)
flip.samples = lambda rng: [((_rand(rng, 2, 3),), {}), ((_rand(rng, 2, 3), 1), {})]


def _roll(a, shift, axis=None):
    """Roll elements along ``axis`` by ``shift`` (jax.numpy.roll); ``axis=None``
    rolls the flattened array."""
    return np.roll(a, shift, axis)


roll = _structural("jnp.roll", _roll, np.roll)


def _negate_static(shift):
    """``-shift`` for an int or a tuple of ints (a static parameter)."""
    if isinstance(shift, (tuple, list)):
        return tuple(-int(s) for s in shift)
    return -shift


negate_static = _internal("ad.negate_static", _negate_static, differentiable=False)


def _roll_vjp_a(g, ans, a, shift, axis=None):
    return roll(g, negate_static(shift), axis)


roll.def_vjp(_roll_vjp_a)


def _roll_jvp_a(t, ans, a, shift, axis=None):
    return roll(t, shift, axis)


roll.def_jvp(_roll_jvp_a)
roll.samples = lambda rng: [
    ((_rand(rng, 2, 3), 1), {}),
    ((_rand(rng, 2, 3), (1, -1), (0, 1)), {}),
    ((_rand(rng, 4, 3), -1, 0), {}),
]


# ---------------------------------------------------------------------------
# concatenate / hstack / vstack and their list adjoints


def _concatenate(arrays, axis=0, dtype=None):
    """Join a sequence of arrays along an existing axis (jax.numpy.concatenate);
    ``axis=None`` flattens them first."""
    return np.concatenate(arrays, axis=axis, dtype=dtype)


def _hstack(tup, dtype=None):
    """Stack arrays column-wise (jax.numpy.hstack): along axis 0 for 1-D inputs,
    else axis 1."""
    return np.hstack(tup, dtype=dtype)


def _vstack(tup, dtype=None):
    """Stack arrays row-wise (jax.numpy.vstack), 1-D inputs as rows."""
    return np.vstack(tup, dtype=dtype)


concatenate = _structural("jnp.concatenate", _concatenate, np.concatenate)
hstack = _structural("jnp.hstack", _hstack, np.hstack)
vstack = _structural("jnp.vstack", _vstack, np.vstack)


def _promoted(arrays, kind):
    if kind == "hstack":
        return [np.atleast_1d(np.asarray(a)) for a in arrays]
    if kind == "vstack":
        return [np.atleast_2d(np.asarray(a)) for a in arrays]
    return arrays


def _split_like(g, arrays, axis=0, kind="concatenate"):
    """Adjoint of ``concatenate``/``hstack``/``vstack`` (``kind``): ``g`` cut into
    pieces shaped like ``arrays``; returns a list."""
    g = np.asarray(g)
    prom = _promoted(arrays, kind)
    if kind == "hstack":
        axis = 0 if prom[0].ndim == 1 else 1
    elif kind == "vstack":
        axis = 0
    if axis is None:
        sizes = [int(np.size(a)) for a in prom]
        g = g.reshape(-1)
        ax = 0
    else:
        ax = axis
        sizes = [np.shape(a)[ax] for a in prom]
    cuts = np.cumsum(sizes)[:-1]
    pieces = np.split(g, cuts, axis=ax)
    return [np.reshape(p, np.shape(a)) for p, a in zip(pieces, arrays)]


def _join_like(pieces, like, axis=0, kind="concatenate"):
    """Inverse of :func:`_split_like`: join ``pieces`` (``None`` = zeros like the
    matching entry of ``like``) as ``concatenate``/``hstack``/``vstack`` would."""
    full = [
        np.zeros(np.shape(b), np.result_type(b)) if p is None else p for p, b in zip(pieces, like)
    ]
    if kind == "hstack":
        return np.hstack(full)
    if kind == "vstack":
        return np.vstack(full)
    return np.concatenate(full, axis=axis)


split_like = _internal("ad.split_like", _split_like)
join_like = _internal("ad.join_like", _join_like)


def _split_like_vjp_g(h, ans, g, arrays, axis=0, kind="concatenate"):
    return join_like(h, ans, axis, kind)


split_like.def_vjp(_split_like_vjp_g)


def _split_like_jvp_g(t, ans, g, arrays, axis=0, kind="concatenate"):
    return split_like(t, arrays, axis, kind)


split_like.def_jvp(_split_like_jvp_g)


def _join_like_vjp_pieces(h, ans, pieces, like, axis=0, kind="concatenate"):
    return split_like(h, like, axis, kind)


join_like.def_vjp(_join_like_vjp_pieces)


def _join_like_jvp_pieces(t, ans, pieces, like, axis=0, kind="concatenate"):
    return join_like(t, like, axis, kind)


join_like.def_jvp(_join_like_jvp_pieces)


def _concatenate_vjp(g, ans, arrays, axis=0, dtype=None):
    return split_like(g, arrays, axis, "concatenate")


def _concatenate_jvp(t, ans, arrays, axis=0, dtype=None):
    return concatenate(t, axis)


def _hstack_vjp(g, ans, tup, dtype=None):
    return split_like(g, tup, 0, "hstack")


def _hstack_jvp(t, ans, tup, dtype=None):
    return hstack(t)


def _vstack_vjp(g, ans, tup, dtype=None):
    return split_like(g, tup, 0, "vstack")


def _vstack_jvp(t, ans, tup, dtype=None):
    return vstack(t)


concatenate.def_vjp(_concatenate_vjp)
concatenate.def_jvp(_concatenate_jvp)
hstack.def_vjp(_hstack_vjp)
hstack.def_jvp(_hstack_jvp)
vstack.def_vjp(_vstack_vjp)
vstack.def_jvp(_vstack_jvp)
concatenate.samples = lambda rng: [
    (([_rand(rng, 2, 3), _rand(rng, 1, 3)],), {}),
    (([_rand(rng, 2, 3), _rand(rng, 2, 1), _rand(rng, 2, 2)],), {"axis": -1}),
    (([_rand(rng, 2, 3), _rand(rng, 4)],), {"axis": None}),
]
hstack.samples = lambda rng: [
    (([_rand(rng, 2), _rand(rng, 3)],), {}),
    (([_rand(rng, 2, 3), _rand(rng, 2, 1)],), {}),
]
vstack.samples = lambda rng: [
    (([_rand(rng, 3), _rand(rng, 2, 3)],), {}),
]
split_like.samples = lambda rng: [
    ((_rand(rng, 3, 3), [_rand(rng, 2, 3), _rand(rng, 1, 3)], 0), {}),
    ((_rand(rng, 5), [_rand(rng, 2), _rand(rng, 3)], 0, "hstack"), {}),
]
join_like.samples = lambda rng: [
    (([_rand(rng, 2, 3), _rand(rng, 1, 3)], [_rand(rng, 2, 3), _rand(rng, 1, 3)], 0), {}),
]


# ---------------------------------------------------------------------------
# stack / unstack


def _stack(arrays, axis=0, dtype=None):
    """Join same-shaped arrays along a new ``axis`` (jax.numpy.stack)."""
    return np.stack(arrays, axis=axis, dtype=dtype)


def _unstack(x, axis=0):
    """The slices of ``x`` along ``axis``, as a list (jax.numpy.unstack; JAX returns
    a tuple)."""
    x = np.asarray(x)
    return [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


stack = _structural("jnp.stack", _stack, np.stack)
unstack = _structural("jnp.unstack", _unstack)


def _fill_none(pieces, like):
    """``pieces`` with every ``None`` replaced by zeros like the matching entry of
    ``like`` (list cotangents with unused entries)."""
    return [
        np.zeros(np.shape(b), np.result_type(b)) if p is None else p for p, b in zip(pieces, like)
    ]


fill_none = _internal("ad.fill_none", _fill_none)


def _fill_none_vjp_pieces(g, ans, pieces, like):
    return g


fill_none.def_vjp(_fill_none_vjp_pieces)


def _fill_none_jvp_pieces(t, ans, pieces, like):
    return fill_none(t, like)


fill_none.def_jvp(_fill_none_jvp_pieces)
fill_none.samples = lambda rng: [
    (([_rand(rng, 2), _rand(rng, 3)], [_rand(rng, 2), _rand(rng, 3)]), {})
]


def _stack_vjp_arrays(g, ans, arrays, axis=0, dtype=None):
    return unstack(g, axis)


stack.def_vjp(_stack_vjp_arrays)


def _stack_jvp_arrays(t, ans, arrays, axis=0, dtype=None):
    return stack(t, axis)


stack.def_jvp(_stack_jvp_arrays)


def _unstack_vjp_x(g, ans, x, axis=0):
    return stack(fill_none(g, ans), axis)


unstack.def_vjp(_unstack_vjp_x)


def _unstack_jvp_x(t, ans, x, axis=0):
    return unstack(t, axis)


unstack.def_jvp(_unstack_jvp_x)
stack.samples = lambda rng: [
    (([_rand(rng, 2, 3), _rand(rng, 2, 3)],), {"axis": 1}),
    (([_rand(rng, 3), _rand(rng, 3), _rand(rng, 3)],), {"axis": -1}),
]
unstack.samples = lambda rng: [((_rand(rng, 3, 2),), {}), ((_rand(rng, 3, 2),), {"axis": 1})]


# ---------------------------------------------------------------------------
# split / array_split (list outputs)


def _split(ary, indices_or_sections, axis=0):
    """Split into equal sections or at indices along ``axis`` (jax.numpy.split);
    returns a list."""
    return np.split(ary, indices_or_sections, axis=axis)


def _array_split(ary, indices_or_sections, axis=0):
    """Like :func:`split` but allows unequal sections (jax.numpy.array_split)."""
    return np.array_split(ary, indices_or_sections, axis=axis)


split = _structural("jnp.split", _split, np.split)
array_split = _structural("jnp.array_split", _array_split, np.array_split)


def _split_vjp_ary(g, ans, ary, indices_or_sections, axis=0):
    return concatenate(fill_none(g, ans), axis)


split.def_vjp(_split_vjp_ary)


def _split_jvp_ary(t, ans, ary, indices_or_sections, axis=0):
    return split(t, indices_or_sections, axis)


split.def_jvp(_split_jvp_ary)


def _array_split_vjp_ary(g, ans, ary, indices_or_sections, axis=0):
    return concatenate(fill_none(g, ans), axis)


array_split.def_vjp(_array_split_vjp_ary)


def _array_split_jvp_ary(t, ans, ary, indices_or_sections, axis=0):
    return array_split(t, indices_or_sections, axis)


array_split.def_jvp(_array_split_jvp_ary)
split.samples = lambda rng: [
    ((_rand(rng, 4, 2), 2), {}),
    ((_rand(rng, 2, 5), [1, 3]), {"axis": 1}),
]
array_split.samples = lambda rng: [((_rand(rng, 8), 3), {}), ((_rand(rng, 2, 5), 2), {"axis": -1})]


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


def _tile_vjp_A(g, ans, A, reps):
    return tile_adjoint(g, A, reps)


tile.def_vjp(_tile_vjp_A)


def _tile_jvp_A(t, ans, A, reps):
    return tile(t, reps)


tile.def_jvp(_tile_jvp_A)


def _tile_adjoint_vjp_g(h, ans, g, A, reps):
    return tile(h, reps)


tile_adjoint.def_vjp(_tile_adjoint_vjp_g)


def _tile_adjoint_jvp_g(t, ans, g, A, reps):
    return tile_adjoint(t, A, reps)


tile_adjoint.def_jvp(_tile_adjoint_jvp_g)
tile.samples = lambda rng: [
    ((_rand(rng, 2, 3), (2, 1)), {}),
    ((_rand(rng, 3), (2, 2)), {}),
    ((_rand(rng, 2, 3), 2), {}),
]
tile_adjoint.samples = lambda rng: [((_rand(rng, 4, 3), _rand(rng, 2, 3), (2, 1)), {})]


def _take(a, indices, axis=None, mode=None, fill_value=None):
    """Take elements of ``a`` at ``indices`` along ``axis`` (flattened when None)
    (jax.numpy.take). Out-of-range indices raise (NumPy behaviour)."""
    return np.take(a, indices, axis=axis)


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


def _take_vjp_a(g, ans, a, indices, axis=None, mode=None, fill_value=None):
    return take_adjoint(g, a, indices, axis)


take.def_vjp(_take_vjp_a)


def _take_jvp_a(t, ans, a, indices, axis=None, mode=None, fill_value=None):
    return take(t, indices, axis)


take.def_jvp(_take_jvp_a)


def _take_adjoint_vjp_g(h, ans, g, a, indices, axis=None):
    return take(h, indices, axis)


take_adjoint.def_vjp(_take_adjoint_vjp_g)


def _take_adjoint_jvp_g(t, ans, g, a, indices, axis=None):
    return take_adjoint(t, a, indices, axis)


take_adjoint.def_jvp(_take_adjoint_jvp_g)
take.samples = lambda rng: [
    ((_rand(rng, 3, 4), np.array([0, 2, 2, -1])), {}),
    ((_rand(rng, 3, 4), np.array([[0, 1], [1, 1]])), {"axis": 1}),
    ((_rand(rng, 3, 4), np.array([2, 0, 2])), {"axis": 0}),
]
take_adjoint.samples = lambda rng: [
    ((_rand(rng, 3, 2, 2), _rand(rng, 3, 4), np.array([[0, 1], [1, 1]]), 1), {}),
    ((_rand(rng, 4), _rand(rng, 3, 4), np.array([0, 2, 2, -1])), {}),
]


def _repeat(a, repeats, axis=None, total_repeat_length=None):
    """Repeat each element ``repeats`` times along ``axis`` (flattened when None)
    (jax.numpy.repeat)."""
    return np.repeat(a, repeats, axis=axis)


repeat = _structural("jnp.repeat", _repeat, np.repeat)


def _repeat_indices(a, repeats, axis=None):
    """Static: the source index of every output element of ``repeat`` along ``axis``."""
    n = np.size(a) if axis is None else np.shape(a)[axis]
    return np.repeat(np.arange(n), repeats)


repeat_indices = _internal("ad.repeat_indices", _repeat_indices, differentiable=False)


def _repeat_vjp_a(g, ans, a, repeats, axis=None, total_repeat_length=None):
    return take_adjoint(g, a, repeat_indices(a, repeats, axis), axis)


repeat.def_vjp(_repeat_vjp_a)


def _repeat_jvp_a(t, ans, a, repeats, axis=None, total_repeat_length=None):
    return repeat(t, repeats, axis)


repeat.def_jvp(_repeat_jvp_a)
repeat.samples = lambda rng: [
    ((_rand(rng, 2, 3), 2), {}),
    ((_rand(rng, 2, 3), [1, 0, 3]), {"axis": 1}),
    ((_rand(rng, 2, 3), 3), {"axis": 0}),
]


def _take_along_axis(arr, indices, axis):
    """Gather ``arr`` at ``indices`` along ``axis`` (jax.numpy.take_along_axis);
    ``axis=None`` works on the flattened array."""
    return np.take_along_axis(arr, indices, axis)


take_along_axis = _structural("jnp.take_along_axis", _take_along_axis, np.take_along_axis)


def _take_along_axis_adjoint(g, arr, indices, axis):
    """Adjoint of ``take_along_axis``: scatter-add ``g`` into zeros like ``arr``."""
    shape = np.shape(arr)
    pos = np.take_along_axis(np.arange(int(np.prod(shape))).reshape(shape), indices, axis)
    out = np.zeros(shape, dtype=np.result_type(g))
    np.add.at(out.reshape(-1), pos.reshape(-1), np.broadcast_to(g, pos.shape).reshape(-1))
    return out


take_along_axis_adjoint = _internal("ad.take_along_axis_adjoint", _take_along_axis_adjoint)


def _take_along_axis_vjp_arr(g, ans, arr, indices, axis):
    return take_along_axis_adjoint(g, arr, indices, axis)


take_along_axis.def_vjp(_take_along_axis_vjp_arr)


def _take_along_axis_jvp_arr(t, ans, arr, indices, axis):
    return take_along_axis(t, indices, axis)


take_along_axis.def_jvp(_take_along_axis_jvp_arr)


def _take_along_axis_adjoint_vjp_g(h, ans, g, arr, indices, axis):
    return take_along_axis(h, indices, axis)


take_along_axis_adjoint.def_vjp(_take_along_axis_adjoint_vjp_g)


def _take_along_axis_adjoint_jvp_g(t, ans, g, arr, indices, axis):
    return take_along_axis_adjoint(t, arr, indices, axis)


take_along_axis_adjoint.def_jvp(_take_along_axis_adjoint_jvp_g)
take_along_axis.samples = lambda rng: [
    ((_rand(rng, 3, 4), np.array([[0, 3, 3], [1, 1, 0], [2, 0, 0]]), 1), {}),
    ((_rand(rng, 3, 4), np.array([[2, 0, 0, 1]]), 0), {}),
    ((_rand(rng, 2, 3), np.array([5, 0, 0]), None), {}),
]
take_along_axis_adjoint.samples = lambda rng: [
    ((_rand(rng, 3, 3), _rand(rng, 3, 4), np.array([[0, 3, 3], [1, 1, 0], [2, 0, 0]]), 1), {}),
]


# ---------------------------------------------------------------------------
# pad


def _pad(array, pad_width, mode="constant", constant_values=0):
    """Pad ``array`` (jax.numpy.pad). Differentiable in ``array`` for the modes
    constant, edge, reflect, symmetric and wrap."""
    if mode == "constant":
        return np.pad(array, pad_width, mode="constant", constant_values=constant_values)
    return np.pad(array, pad_width, mode=mode)


pad = _structural("jnp.pad", _pad, np.pad)


def _pad_adjoint(g, array, pad_width, mode="constant"):
    """Adjoint of ``pad`` w.r.t. ``array``: each output element's cotangent goes
    back to the input element it was copied from."""
    shape = np.shape(array)
    if mode not in ("constant", "edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"srcjax: no gradient for jnp.pad(mode={mode!r})")
    src = np.arange(int(np.prod(shape))).reshape(shape)
    if mode == "constant":
        pos = np.pad(src, pad_width, mode="constant", constant_values=-1)
    else:
        pos = np.pad(src, pad_width, mode=mode)
    keep = pos >= 0
    out = np.zeros(shape, dtype=np.result_type(g))
    np.add.at(out.reshape(-1), pos[keep], np.asarray(g)[keep])
    return out


pad_adjoint = _internal("ad.pad_adjoint", _pad_adjoint)


def _pad_vjp_array(g, ans, array, pad_width, mode="constant", constant_values=0):
    return pad_adjoint(g, array, pad_width, mode)


pad.def_vjp(_pad_vjp_array)


def _pad_jvp_array(t, ans, array, pad_width, mode="constant", constant_values=0):
    return pad(t, pad_width, mode)


pad.def_jvp(_pad_jvp_array)


def _pad_adjoint_vjp_g(h, ans, g, array, pad_width, mode="constant"):
    return pad(h, pad_width, mode)


pad_adjoint.def_vjp(_pad_adjoint_vjp_g)


def _pad_adjoint_jvp_g(t, ans, g, array, pad_width, mode="constant"):
    return pad_adjoint(t, array, pad_width, mode)


pad_adjoint.def_jvp(_pad_adjoint_jvp_g)
pad.samples = lambda rng: [
    ((_rand(rng, 2, 3), 1), {}),
    ((_rand(rng, 2, 3), ((1, 0), (0, 2))), {"constant_values": 2.0}),
    ((_rand(rng, 4, 3), ((1, 2), (2, 1))), {"mode": "reflect"}),
    (
        (
            _rand(
                rng,
                3,
            ),
            2,
        ),
        {"mode": "edge"},
    ),
    (
        (
            _rand(
                rng,
                3,
            ),
            (1, 4),
        ),
        {"mode": "wrap"},
    ),
]
pad_adjoint.samples = lambda rng: [((_rand(rng, 5, 4), _rand(rng, 3, 3), ((1, 1), (0, 1))), {})]


# ---------------------------------------------------------------------------
# diag / diagonal


def _diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal ``offset`` of the 2-D sub-arrays on ``axis1``/``axis2``, as
    the last axis of the result (jax.numpy.diagonal)."""
    return np.diagonal(a, offset, axis1, axis2)


diagonal = _structural("jnp.diagonal", _diagonal, np.diagonal)


def _diagonal_adjoint(g, a, offset=0, axis1=0, axis2=1):
    """Adjoint of ``diagonal``: zeros like ``a`` with ``g`` (broadcast to the
    diagonal's shape) written on that diagonal."""
    shape = np.shape(a)
    pos = np.diagonal(np.arange(int(np.prod(shape))).reshape(shape), offset, axis1, axis2)
    out = np.zeros(shape, dtype=np.result_type(g))
    out.reshape(-1)[pos.reshape(-1)] = np.broadcast_to(g, pos.shape).reshape(-1)
    return out


diagonal_adjoint = _internal("ad.diagonal_adjoint", _diagonal_adjoint)


def _diagonal_vjp_a(g, ans, a, offset=0, axis1=0, axis2=1):
    return diagonal_adjoint(g, a, offset, axis1, axis2)


diagonal.def_vjp(_diagonal_vjp_a)


def _diagonal_jvp_a(t, ans, a, offset=0, axis1=0, axis2=1):
    return diagonal(t, offset, axis1, axis2)


diagonal.def_jvp(_diagonal_jvp_a)


def _diagonal_adjoint_vjp_g(h, ans, g, a, offset=0, axis1=0, axis2=1):
    return unbroadcast(diagonal(h, offset, axis1, axis2), g)


diagonal_adjoint.def_vjp(_diagonal_adjoint_vjp_g)


def _diagonal_adjoint_jvp_g(t, ans, g, a, offset=0, axis1=0, axis2=1):
    return diagonal_adjoint(t, a, offset, axis1, axis2)


diagonal_adjoint.def_jvp(_diagonal_adjoint_jvp_g)
diagonal.samples = lambda rng: [
    ((_rand(rng, 3, 4),), {}),
    ((_rand(rng, 3, 4), 1), {}),
    ((_rand(rng, 2, 3, 3), -1, 1, 2), {}),
]
diagonal_adjoint.samples = lambda rng: [
    ((_rand(rng, 3), _rand(rng, 3, 4)), {}),
    ((_rand(rng, 2, 1), _rand(rng, 2, 3, 3), 1, 1, 2), {}),
]


def _diag(v, k=0):
    """For 1-D ``v``, a 2-D array with ``v`` on diagonal ``k``; for 2-D ``v``, its
    diagonal ``k`` (jax.numpy.diag)."""
    return np.diag(v, k)


diag = _structural("jnp.diag", _diag, np.diag)


def _diag_adjoint(g, v, k=0):
    """Adjoint of ``diag(v, k)`` (both the 1-D and the 2-D case)."""
    if np.ndim(v) == 1:
        return np.diagonal(g, k).copy()
    return _diagonal_adjoint(g, v, k, 0, 1)


diag_adjoint = _internal("ad.diag_adjoint", _diag_adjoint)


def _diag_vjp_v(g, ans, v, k=0):
    return diag_adjoint(g, v, k)


diag.def_vjp(_diag_vjp_v)


def _diag_jvp_v(t, ans, v, k=0):
    return diag(t, k)


diag.def_jvp(_diag_jvp_v)


def _diag_adjoint_vjp_g(h, ans, g, v, k=0):
    return diag(h, k)


diag_adjoint.def_vjp(_diag_adjoint_vjp_g)


def _diag_adjoint_jvp_g(t, ans, g, v, k=0):
    return diag_adjoint(t, v, k)


diag_adjoint.def_jvp(_diag_adjoint_jvp_g)
diag.samples = lambda rng: [
    ((_rand(rng, 3),), {}),
    ((_rand(rng, 3), -1), {}),
    ((_rand(rng, 3, 4),), {}),
    ((_rand(rng, 3, 4), 2), {}),
]
diag_adjoint.samples = lambda rng: [
    ((_rand(rng, 4, 4), _rand(rng, 3), 1), {}),
    ((_rand(rng, 2), _rand(rng, 3, 4), 2), {}),
]


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
# astype (jnp.astype / x.astype: the ad.astype primitive)

# ``astype`` is defined in ad.py (public ``ad.astype``) and re-exported here.


# ---------------------------------------------------------------------------
# getitem samples live in ad.py; .at[idx].<op>(v)


def _at_prepare(x, v):
    out = np.array(x, copy=True)
    return out, np.asarray(v)


def _at_set(x, idx, v):
    """``x.at[idx].set(v)``: a copy of ``x`` with ``x[idx]`` replaced by ``v``
    (duplicate indices: the last write wins)."""
    out, v = _at_prepare(x, v)
    out[idx] = v
    return out


def _at_ufunc(ufunc, x, idx, v):
    out, v = _at_prepare(x, v)
    if is_basic_index(idx):
        sub = out[idx]
        if np.ndim(sub) == 0:
            out[idx] = ufunc(sub, v)
        else:
            ufunc(sub, v, out=sub, casting="unsafe")
        return out
    pos = flat_positions(out.shape, idx)
    ufunc.at(out.reshape(-1), pos.reshape(-1), np.broadcast_to(v, pos.shape).reshape(-1))
    return out


def _at_add(x, idx, v):
    """``x.at[idx].add(v)``: a copy of ``x`` with ``v`` added at ``idx``; duplicate
    indices accumulate (``np.add.at``)."""
    return _at_ufunc(np.add, x, idx, v)


def _at_multiply(x, idx, v):
    """``x.at[idx].multiply(v)``; duplicate indices multiply repeatedly."""
    return _at_ufunc(np.multiply, x, idx, v)


def _at_min(x, idx, v):
    """``x.at[idx].min(v)``: elementwise minimum of ``x[idx]`` and ``v``."""
    return _at_ufunc(np.minimum, x, idx, v)


def _at_max(x, idx, v):
    """``x.at[idx].max(v)``: elementwise maximum of ``x[idx]`` and ``v``."""
    return _at_ufunc(np.maximum, x, idx, v)


at_set = _internal("ad.at_set", _at_set)
at_add = _internal("ad.at_add", _at_add)
at_multiply = _internal("ad.at_multiply", _at_multiply)
at_min = _internal("ad.at_min", _at_min)
at_max = _internal("ad.at_max", _at_max)
for _p in (at_set, at_add, at_multiply, at_min, at_max):
    _p.kind = "structural"


def _at_set_vjp_x(g, ans, x, idx, v):
    return at_set(g, idx, 0.0)


def _at_set_vjp_v(g, ans, x, idx, v):
    return unbroadcast(getitem(g, idx), v)


def _at_set_jvp_x(t, ans, x, idx, v):
    return at_set(t, idx, 0.0)


def _at_set_jvp_v(t, ans, x, idx, v):
    return at_set(zeros_like(ans), idx, t)


at_set.def_vjp(x=_at_set_vjp_x, v=_at_set_vjp_v)
at_set.def_jvp(x=_at_set_jvp_x, v=_at_set_jvp_v)


def _at_add_vjp_x(g, ans, x, idx, v):
    return g


def _at_add_vjp_v(g, ans, x, idx, v):
    return unbroadcast(getitem(g, idx), v)


def _at_add_jvp_x(t, ans, x, idx, v):
    return t


def _at_add_jvp_v(t, ans, x, idx, v):
    return at_add(zeros_like(ans), idx, t)


at_add.def_vjp(x=_at_add_vjp_x, v=_at_add_vjp_v)
at_add.def_jvp(x=_at_add_jvp_x, v=_at_add_jvp_v)


def _at_multiply_vjp_x(g, ans, x, idx, v):
    return at_multiply(g, idx, v)


def _at_multiply_vjp_v(g, ans, x, idx, v):
    return unbroadcast(getitem(g, idx) * getitem(x, idx), v)


def _at_multiply_jvp_x(t, ans, x, idx, v):
    return at_multiply(t, idx, v)


def _at_multiply_jvp_v(t, ans, x, idx, v):
    return at_add(zeros_like(ans), idx, getitem(x, idx) * t)


at_multiply.def_vjp(x=_at_multiply_vjp_x, v=_at_multiply_vjp_v)
at_multiply.def_jvp(x=_at_multiply_jvp_x, v=_at_multiply_jvp_v)


def _at_tie_count(x, idx, v, ans):
    """Static: at each position of ``ans``, how many of ``x`` and the scattered
    ``v`` values equal it (ties of ``.at[].min/max`` share the gradient)."""
    cnt = (np.asarray(x) == ans).astype(np.result_type(ans))
    hits = (np.asarray(v) == np.asarray(ans)[idx]).astype(cnt.dtype)
    return _at_ufunc(np.add, cnt, idx, hits)


at_tie_count = _internal("ad.at_tie_count", _at_tie_count, differentiable=False)


def _at_extremal_vjp_x(g, ans, x, idx, v):
    return g * (x == ans) / at_tie_count(x, idx, v, ans)


def _at_extremal_vjp_v(g, ans, x, idx, v):
    return unbroadcast(getitem(g / at_tie_count(x, idx, v, ans), idx) * (v == getitem(ans, idx)), v)


def _at_extremal_jvp_x(t, ans, x, idx, v):
    return t * (x == ans) / at_tie_count(x, idx, v, ans)


def _at_extremal_jvp_v(t, ans, x, idx, v):
    return at_add(zeros_like(ans), idx, t * (v == getitem(ans, idx))) / at_tie_count(x, idx, v, ans)


for _p in (at_min, at_max):
    _p.def_vjp(x=_at_extremal_vjp_x, v=_at_extremal_vjp_v)
    _p.def_jvp(x=_at_extremal_jvp_x, v=_at_extremal_jvp_v)


def _at_samples(rng):
    return [
        ((_rand(rng, 5), np.array([0, 2, 2, -1]), _rand(rng, 4)), {}),
        ((_rand(rng, 4, 3), (slice(1, 3), 0), _rand(rng, 2)), {}),
        ((_rand(rng, 4, 3), 1, _rand(rng, 3)), {}),
        ((_rand(rng, 4, 3), (np.array([0, 3]), np.array([1, 2])), _rand(rng)), {}),
        ((_rand(rng, 4, 3), np.array([True, False, True, False]), _rand(rng, 3)), {}),
    ]


def _at_samples_nodup(rng):
    return [s for i, s in enumerate(_at_samples(rng)) if i != 0] + [
        ((_rand(rng, 5), np.array([0, 2, -1]), _rand(rng, 3)), {})
    ]


at_set.samples = _at_samples_nodup
at_add.samples = _at_samples
at_multiply.samples = _at_samples_nodup
at_min.samples = _at_samples
at_max.samples = _at_samples

# re-exports defined in ad.py
_REEXPORTS = (reshape, moveaxis, expand_dims, broadcast_to, triu, tril, astype, getitem)
