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

import builtins

import numpy as np

from srcjax import dtypes as _dt
from srcjax.primitives.ad import (
    astype,
    broadcast_to,
    default_int,
    expand_dims,
    flat_positions,
    getitem,
    inverse_permutation,
    is_basic_index,
    keep_if_inexact,
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
    "diff",
    "searchsorted",
    "interp",
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
    ``axis=None`` flattens them first. Raises :class:`srcjax.errors.ShapeError`
    (TypeError as JAX, and ValueError) for arrays that do not fit. ``dtype``
    converts every array first as ``astype`` does (JAX: floats truncate into
    an integer dtype, no NumPy casting rule)."""
    arrays = _as_dtype(arrays, dtype)
    try:
        return np.concatenate(arrays, axis=axis)
    except ValueError as e:
        from ..errors import ShapeError

        shapes = ", ".join(str(np.shape(x)) for x in arrays)
        raise ShapeError(f"Cannot concatenate arrays of shapes {shapes}: {e}") from None


def _as_dtype(arrays, dtype):
    """``arrays`` converted to ``dtype`` by ``astype`` (unchanged for None)."""
    if dtype is None:
        return arrays
    return [astype.impl(a, dtype) for a in arrays]


def _hstack(tup, dtype=None):
    """Stack arrays column-wise (jax.numpy.hstack): along axis 0 for 1-D inputs,
    else axis 1."""
    return np.hstack(_as_dtype(tup, dtype))


def _vstack(tup, dtype=None):
    """Stack arrays row-wise (jax.numpy.vstack), 1-D inputs as rows."""
    return np.vstack(_as_dtype(tup, dtype))


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
    return split_like(keep_if_inexact(g, dtype), arrays, axis, "concatenate")


def _concatenate_jvp(t, ans, arrays, axis=0, dtype=None):
    return keep_if_inexact(concatenate(t, axis, dtype), dtype)


def _hstack_vjp(g, ans, tup, dtype=None):
    return split_like(keep_if_inexact(g, dtype), tup, 0, "hstack")


def _hstack_jvp(t, ans, tup, dtype=None):
    return keep_if_inexact(hstack(t, dtype), dtype)


def _vstack_vjp(g, ans, tup, dtype=None):
    return split_like(keep_if_inexact(g, dtype), tup, 0, "vstack")


def _vstack_jvp(t, ans, tup, dtype=None):
    return keep_if_inexact(vstack(t, dtype), dtype)


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
for _joined in (concatenate, hstack, vstack, stack):
    _joined.promote_operands = True  # JAX promotes the arrays to one dtype first


def _fill_none(pieces, like):
    """``pieces`` with every ``None`` replaced by zeros like the matching entry of
    ``like`` (list cotangents with unused entries); an array as it is."""
    if not isinstance(pieces, (list, tuple)):
        return pieces
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


def _unstack_like(g, axis, like):
    """The cotangent of ``stack``'s operand ``like`` from that of the result:
    the slices of ``g`` along ``axis`` as a list, or, when ``like`` is one array
    (``jnp.stack(list(a))`` with ``list(a)`` kept as ``a``), ``g`` with ``axis``
    moved to the front: an array like ``like``."""
    if isinstance(like, np.ndarray):
        return np.moveaxis(np.asarray(g), axis, 0)
    return _unstack(g, axis)


unstack_like = _internal("ad.unstack_like", _unstack_like)


def _unstack_like_vjp(h, ans, g, axis, like):
    # a hole in h (a constant of jnp.stack([x, 2.0])) is zeros
    return stack(fill_none(h, ans), axis)


def _unstack_like_jvp(t, ans, g, axis, like):
    return unstack_like(t, axis, like)


unstack_like.def_vjp(g=_unstack_like_vjp)
unstack_like.def_jvp(g=_unstack_like_jvp)
unstack_like.samples = lambda rng: [
    ((_rand(rng, 3, 4), 0, _rand(rng, 3, 4)), {}),
    ((_rand(rng, 3, 4), 1, _rand(rng, 4, 3)), {}),
]


def _stack_vjp_arrays(g, ans, arrays, axis=0, dtype=None):
    return unstack_like(g, axis, arrays)


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
        dt = out.dtype
        if dt.kind in "fc":
            fill_value = np.nan
        elif dt.kind == "i":
            fill_value = np.iinfo(dt).min
        elif dt.kind == "u":
            fill_value = np.iinfo(dt).max
        else:
            fill_value = True
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


def _take_mask_vjp(h, ans, g, a, indices, axis=None, mode=None):
    return take_mask(h, a, indices, axis, mode)


def _take_mask_jvp(t, ans, g, a, indices, axis=None, mode=None):
    return take_mask(t, a, indices, axis, mode)


take_mask.def_vjp(_take_mask_vjp)
take_mask.def_jvp(_take_mask_jvp)
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


def _take_adjoint_vjp_g(h, ans, g, a, indices, axis=None):
    return take(h, indices, axis)


take_adjoint.def_vjp(_take_adjoint_vjp_g)


def _take_adjoint_jvp_g(t, ans, g, a, indices, axis=None):
    return take_adjoint(t, a, indices, axis)


take_adjoint.def_jvp(_take_adjoint_jvp_g)
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
# diff (a linear map: its adjoint pads and differences in the other direction)


def _diff_parts(a, axis, prepend, append):
    """``(dtype, [prepend, a, append])``: the pieces ``diff`` concatenates along
    ``axis``, each in the result dtype (JAX's promotion, weak Python scalars),
    a scalar ``prepend`` / ``append`` broadcast to one slice of ``a``."""
    a = np.asarray(a)
    if a.ndim == 0:
        raise ValueError("jnp.diff requires input that is at least one dimensional")
    dt = _dt.result_type(*[v for v in (a, prepend, append) if v is not None])
    ax = axis % a.ndim
    one = a.shape[:ax] + (1,) + a.shape[ax + 1 :]
    parts = []
    for v in (prepend, a, append):
        if v is None:
            parts.append(None)
            continue
        v = np.asarray(v, dtype=dt)
        parts.append(np.broadcast_to(v, one) if v.ndim == 0 else v)
    return dt, parts


def _diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th discrete difference along ``axis`` (jax.numpy.diff):
    ``a[1:] - a[:-1]`` applied ``n`` times, after joining ``prepend`` and
    ``append`` (scalars, or arrays of ``a``'s rank) before and after ``a``.

    Shape: ``a``'s with ``axis`` shortened by ``n`` (lengthened by the joined
    slices). Dtype: JAX's promotion of the operands (bool differences are
    ``!=``). Differentiable in ``a``, ``prepend`` and ``append``. Raises
    ``ValueError`` for a 0-d ``a`` or a negative ``n``."""
    if int(n) != n or n < 0:
        raise ValueError(f"jnp.diff: order must be a non-negative integer, got {n!r}")
    _, parts = _diff_parts(a, axis, prepend, append)
    joined = np.concatenate([p for p in parts if p is not None], axis=axis)
    return np.diff(joined, n=int(n), axis=axis)


diff = _structural("jnp.diff", _diff, np.diff)


def _diff_adjoint(g, a, n=1, axis=-1, prepend=None, append=None, part="a"):
    """Cotangent of operand ``part`` (``"a"``, ``"prepend"`` or ``"append"``) of
    ``diff(a, n, axis, prepend, append)`` for the output cotangent ``g``."""
    dt, parts = _diff_parts(a, axis, prepend, append)
    g = np.asarray(g)
    dt = np.result_type(g.dtype, dt)
    for _ in range(int(n)):  # adjoint of x[1:] - x[:-1]: [0, g] - [g, 0]
        shape = list(g.shape)
        shape[axis] = 1
        z = np.zeros(shape, dtype=dt)
        g = np.concatenate([z, g], axis=axis) - np.concatenate([g, z], axis=axis)
    sizes = [0 if p is None else p.shape[axis] for p in parts]
    k = ("prepend", "a", "append").index(part)
    start = builtins.sum(sizes[:k])
    out = np.take(g, np.arange(start, start + sizes[k]), axis=axis)
    like = (prepend, a, append)[k]
    if np.ndim(like) == 0:
        return np.sum(out).astype(dt)
    return out.astype(dt, copy=False)


def _diff_embed(h, a, n=1, axis=-1, prepend=None, append=None, part="a"):
    """``diff`` of the joined operands with ``h`` in place of operand ``part`` and
    zeros for the others: the tangent of ``diff`` for a tangent ``h`` of ``part``
    (the transpose of :func:`_diff_adjoint`)."""
    ops = {"a": a, "prepend": prepend, "append": append}
    ops = {
        k: (None if v is None else np.zeros(np.shape(v), dtype=np.result_type(h)))
        for k, v in ops.items()
    }
    ops[part] = h
    return _diff(ops["a"], n, axis, ops["prepend"], ops["append"])


diff_adjoint = _internal("ad.diff_adjoint", _diff_adjoint)
diff_embed = _internal("ad.diff_embed", _diff_embed)


def _diff_vjp_a(g, ans, a, n=1, axis=-1, prepend=None, append=None):
    return diff_adjoint(g, a, n, axis, prepend, append, "a")


def _diff_vjp_prepend(g, ans, a, n=1, axis=-1, prepend=None, append=None):
    return diff_adjoint(g, a, n, axis, prepend, append, "prepend")


def _diff_vjp_append(g, ans, a, n=1, axis=-1, prepend=None, append=None):
    return diff_adjoint(g, a, n, axis, prepend, append, "append")


def _diff_jvp_a(t, ans, a, n=1, axis=-1, prepend=None, append=None):
    return diff_embed(t, a, n, axis, prepend, append, "a")


def _diff_jvp_prepend(t, ans, a, n=1, axis=-1, prepend=None, append=None):
    return diff_embed(t, a, n, axis, prepend, append, "prepend")


def _diff_jvp_append(t, ans, a, n=1, axis=-1, prepend=None, append=None):
    return diff_embed(t, a, n, axis, prepend, append, "append")


diff.def_vjp(a=_diff_vjp_a, prepend=_diff_vjp_prepend, append=_diff_vjp_append)
diff.def_jvp(a=_diff_jvp_a, prepend=_diff_jvp_prepend, append=_diff_jvp_append)


def _diff_adjoint_vjp_g(h, ans, g, a, n=1, axis=-1, prepend=None, append=None, part="a"):
    return diff_embed(h, a, n, axis, prepend, append, part)


def _diff_adjoint_jvp_g(t, ans, g, a, n=1, axis=-1, prepend=None, append=None, part="a"):
    return diff_adjoint(t, a, n, axis, prepend, append, part)


def _diff_embed_vjp_h(k, ans, h, a, n=1, axis=-1, prepend=None, append=None, part="a"):
    return diff_adjoint(k, a, n, axis, prepend, append, part)


def _diff_embed_jvp_h(t, ans, h, a, n=1, axis=-1, prepend=None, append=None, part="a"):
    return diff_embed(t, a, n, axis, prepend, append, part)


diff_adjoint.def_vjp(g=_diff_adjoint_vjp_g)
diff_adjoint.def_jvp(g=_diff_adjoint_jvp_g)
diff_embed.def_vjp(h=_diff_embed_vjp_h)
diff_embed.def_jvp(h=_diff_embed_jvp_h)


def _diff_samples(rng):
    return [
        ((_rand(rng, 5),), {}),
        ((_rand(rng, 3, 4),), {"axis": 0}),
        ((_rand(rng, 3, 5), 2), {}),
        ((_rand(rng, 2, 3, 4), 3, 1), {}),
        ((_rand(rng, 3, 4),), {"prepend": _rand(rng, 3, 2), "append": _rand(rng, 3, 1)}),
        ((_rand(rng, 4), 2), {"prepend": 0.5}),
    ]


diff.samples = _diff_samples


def _diff_helper_samples(rng):
    out = []
    for args, kw in _diff_samples(rng):
        full = dict(zip(("n", "axis"), args[1:]), **kw)
        ans = _diff(args[0], **full)
        for part in ("a", "prepend", "append"):
            if part == "a" or full.get(part) is not None:
                out.append(((_rand(rng, *ans.shape), args[0]), dict(full, part=part)))
    return out


def _diff_embed_samples(rng):
    out = []
    for (_g, a), kw in _diff_helper_samples(rng):
        like = a if kw["part"] == "a" else kw[kw["part"]]
        out.append(((_rand(rng, *np.shape(like)), a), kw))
    return out


diff_adjoint.samples = _diff_helper_samples
diff_embed.samples = _diff_embed_samples


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


# ---------------------------------------------------------------------------
# interp: piecewise-linear interpolation. The helpers below work row by row:
# ``xp`` and ``fp`` of shape ``(*batch, n)`` go with an ``x`` of shape
# ``(*batch, *rest)``; the public jnp.interp is the case ``batch == ()``, and
# ``ad.interp_rows`` (same signature, any batch) is what vmap emits.


def _rows(xp, x):
    """``(k, iterator over batch indices)`` for rows of ``xp`` against ``x``."""
    k = np.ndim(xp) - 1
    return k, np.ndindex(*np.shape(xp)[:k])


def _interp_index(x, xp):
    """``i`` with ``xp[i - 1] <= x < xp[i]`` per row, clipped to ``[1, n - 1]``
    (int array of ``x``'s shape); the segment JAX's interp uses."""
    x = np.asarray(x)
    xp = np.asarray(xp)
    n = xp.shape[-1]
    k, rows = _rows(xp, x)
    out = np.empty(x.shape, dtype=np.intp)
    for r in rows:
        out[r] = np.searchsorted(xp[r], x[r], side="right")
    return np.clip(out, 1, builtins.max(n - 1, 1))


def _interp_take(v, i):
    """``v[i]`` row by row: ``v`` of shape ``(*batch, n)``, ``i`` of ``(*batch, *rest)``."""
    v = np.asarray(v)
    i = np.asarray(i)
    k = v.ndim - 1
    if k == 0:
        return v[i]
    flat = i.reshape(i.shape[:k] + (-1,))
    return np.take_along_axis(v, flat, -1).reshape(i.shape)


def _interp_put(g, v, i):
    """Adjoint of ``ad.interp_take(v, i)``: ``g`` scatter-added into zeros like ``v``."""
    v = np.asarray(v)
    i = np.asarray(i)
    g = np.broadcast_to(g, i.shape)
    k = v.ndim - 1
    out = np.zeros(v.shape, dtype=np.result_type(g, v))
    for r in np.ndindex(*v.shape[:k]):
        np.add.at(out[r], i[r].reshape(-1), g[r].reshape(-1))
    return out


def _interp_region(x, xp, region):
    """Float mask of ``x`` below ``xp[..., 0]`` (``"below"``), above ``xp[..., -1]``
    (``"above"``) or between them (``"inside"``)."""
    x = np.asarray(x)
    xp = np.asarray(xp)
    k = xp.ndim - 1
    lo = xp[..., 0].reshape(xp.shape[:k] + (1,) * (x.ndim - k))
    hi = xp[..., -1].reshape(lo.shape)
    if region == "below":
        m = x < lo
    elif region == "above":
        m = x > hi
    else:
        m = (x >= lo) & (x <= hi)
    dt = np.result_type(x, xp)
    return m.astype(dt if dt.kind == "f" else _dt.default_float())


def _interp_unset(v):
    """Static: ``1.0`` when ``v`` is None (interp's ``left``/``right`` default to
    the end values of ``fp``), else ``0.0``."""
    return 1.0 if v is None else 0.0


interp_index = _internal("ad.interp_index", _interp_index, differentiable=False)
interp_take = _internal("ad.interp_take", _interp_take)
interp_put = _internal("ad.interp_put", _interp_put)
interp_region = _internal("ad.interp_region", _interp_region, differentiable=False)
interp_unset = _internal("ad.interp_unset", _interp_unset, differentiable=False)


def _interp_take_vjp_v(g, ans, v, i):
    return interp_put(g, v, i)


def _interp_take_jvp_v(t, ans, v, i):
    return interp_take(t, i)


def _interp_put_vjp_g(h, ans, g, v, i):
    return interp_take(h, i)


def _interp_put_jvp_g(t, ans, g, v, i):
    return interp_put(t, v, i)


interp_take.def_vjp(_interp_take_vjp_v)
interp_take.def_jvp(_interp_take_jvp_v)
interp_put.def_vjp(_interp_put_vjp_g)
interp_put.def_jvp(_interp_put_jvp_g)
interp_take.samples = lambda rng: [
    ((_rand(rng, 5), np.array([[1, 4], [0, 1]])), {}),
    ((_rand(rng, 2, 4), np.array([[3, 1, 1], [0, 2, 3]])), {}),
]
interp_put.samples = lambda rng: [
    ((_rand(rng, 2, 2), _rand(rng, 5), np.array([[1, 4], [0, 1]])), {}),
    ((_rand(rng, 2, 3), _rand(rng, 2, 4), np.array([[3, 1, 1], [0, 2, 3]])), {}),
]


def _interp_rows(x, xp, fp, left=None, right=None, period=None):
    """Row-wise :func:`_interp`: ``xp``, ``fp`` of shape ``(*batch, n)`` and ``x``
    of shape ``(*batch, *rest)`` (what vmap of jnp.interp calls)."""
    if period is not None:
        raise NotImplementedError("srcjax: jnp.interp(period=...) is not supported")
    dt = _dt.result_type_inexact(x, xp, fp)
    x = np.asarray(x, dtype=dt)
    xp = np.asarray(xp, dtype=dt)
    fp = np.asarray(fp, dtype=dt)
    if xp.shape != fp.shape:
        raise ValueError(
            f"jnp.interp: xp and fp must have the same shape, got {xp.shape}, {fp.shape}"
        )
    if xp.shape[-1] == 0:
        raise ValueError("jnp.interp: xp and fp must not be empty")
    i = _interp_index(x, xp)
    lo, hi = _interp_take(xp, i - 1), _interp_take(xp, i)
    f_lo, f_hi = _interp_take(fp, i - 1), _interp_take(fp, i)
    dx = hi - lo
    flat = np.abs(dx) <= np.spacing(np.finfo(dt).eps)
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(flat, f_lo, f_lo + (x - lo) / np.where(flat, 1, dx) * (f_hi - f_lo))
    k = xp.ndim - 1
    first = fp[..., 0].reshape(fp.shape[:k] + (1,) * (x.ndim - k))
    last = fp[..., -1].reshape(first.shape)
    below = _interp_region(x, xp, "below") > 0
    above = _interp_region(x, xp, "above") > 0
    f = np.where(below, first if left is None else np.asarray(left, dtype=dt), f)
    f = np.where(above, last if right is None else np.asarray(right, dtype=dt), f)
    return f.astype(dt, copy=False)


def _interp(x, xp, fp, left=None, right=None, period=None):
    """One-dimensional piecewise-linear interpolation (jax.numpy.interp): the
    values at ``x`` of the function through the points ``(xp, fp)``; ``xp``
    must be increasing. Outside ``[xp[0], xp[-1]]`` the result is ``left``
    (default ``fp[0]``) or ``right`` (default ``fp[-1]``).

    Shape: ``x``'s (broadcast with ``left``/``right``). Dtype: JAX's inexact
    promotion of ``x``, ``xp``, ``fp`` (float32 unless x64). Differentiable in
    ``x``, ``xp``, ``fp``, ``left`` and ``right``, as in JAX (at a knot, the
    segment to its right is used). ``period`` is not supported
    (``NotImplementedError``); ``xp``/``fp`` that are not 1-D or differ in
    length raise ``ValueError``."""
    if np.ndim(xp) != 1 or np.ndim(fp) != 1:
        raise ValueError("jnp.interp: xp and fp must be one-dimensional")
    return _interp_rows(x, xp, fp, left, right, period)


interp = _structural("jnp.interp", _interp, np.interp)
interp_rows = _internal("ad.interp_rows", _interp_rows)


def _interp_vjp_x(g, ans, x, xp, fp, left=None, right=None, period=None):
    i = interp_index(x, xp)
    slope = (interp_take(fp, i) - interp_take(fp, i - 1)) / (
        interp_take(xp, i) - interp_take(xp, i - 1)
    )
    return unbroadcast(g * interp_region(x, xp, "inside") * slope, x)


def _interp_jvp_x(t, ans, x, xp, fp, left=None, right=None, period=None):
    i = interp_index(x, xp)
    slope = (interp_take(fp, i) - interp_take(fp, i - 1)) / (
        interp_take(xp, i) - interp_take(xp, i - 1)
    )
    return t * interp_region(x, xp, "inside") * slope


def _interp_vjp_fp(g, ans, x, xp, fp, left=None, right=None, period=None):
    i = interp_index(x, xp)
    lo = interp_take(xp, i - 1)
    w = (x - lo) / (interp_take(xp, i) - lo)
    inside = interp_region(x, xp, "inside")
    w_lo = inside * (1.0 - w) + interp_region(x, xp, "below") * interp_unset(left)
    w_hi = inside * w + interp_region(x, xp, "above") * interp_unset(right)
    return interp_put(g * w_lo, fp, i - 1) + interp_put(g * w_hi, fp, i)


def _interp_jvp_fp(t, ans, x, xp, fp, left=None, right=None, period=None):
    i = interp_index(x, xp)
    lo = interp_take(xp, i - 1)
    w = (x - lo) / (interp_take(xp, i) - lo)
    inside = interp_region(x, xp, "inside")
    w_lo = inside * (1.0 - w) + interp_region(x, xp, "below") * interp_unset(left)
    w_hi = inside * w + interp_region(x, xp, "above") * interp_unset(right)
    return interp_take(t, i - 1) * w_lo + interp_take(t, i) * w_hi


def _interp_vjp_xp(g, ans, x, xp, fp, left=None, right=None, period=None):
    i = interp_index(x, xp)
    lo = interp_take(xp, i - 1)
    dx = interp_take(xp, i) - lo
    w = (x - lo) / dx
    c = g * interp_region(x, xp, "inside") * (interp_take(fp, i) - interp_take(fp, i - 1)) / dx
    return interp_put(c * (w - 1.0), xp, i - 1) - interp_put(c * w, xp, i)


def _interp_jvp_xp(t, ans, x, xp, fp, left=None, right=None, period=None):
    i = interp_index(x, xp)
    lo = interp_take(xp, i - 1)
    dx = interp_take(xp, i) - lo
    w = (x - lo) / dx
    c = interp_region(x, xp, "inside") * (interp_take(fp, i) - interp_take(fp, i - 1)) / dx
    return c * ((w - 1.0) * interp_take(t, i - 1) - w * interp_take(t, i))


def _interp_vjp_left(g, ans, x, xp, fp, left=None, right=None, period=None):
    return unbroadcast(g * interp_region(x, xp, "below"), left)


def _interp_jvp_left(t, ans, x, xp, fp, left=None, right=None, period=None):
    return t * interp_region(x, xp, "below")


def _interp_vjp_right(g, ans, x, xp, fp, left=None, right=None, period=None):
    return unbroadcast(g * interp_region(x, xp, "above"), right)


def _interp_jvp_right(t, ans, x, xp, fp, left=None, right=None, period=None):
    return t * interp_region(x, xp, "above")


for _p in (interp, interp_rows):
    _p.def_vjp(_interp_vjp_x, _interp_vjp_xp, _interp_vjp_fp, _interp_vjp_left, _interp_vjp_right)
    _p.def_jvp(_interp_jvp_x, _interp_jvp_xp, _interp_jvp_fp, _interp_jvp_left, _interp_jvp_right)


def _interp_samples(rng):
    xp = np.sort(rng.uniform(-2, 2, 6))
    return [
        ((rng.uniform(-2.5, 2.5, 7), xp, _rand(rng, 6)), {}),
        ((rng.uniform(-2.5, 2.5, (2, 3)), xp, _rand(rng, 6)), {"left": -3.0, "right": 4.0}),
        ((np.asarray(0.3), np.array([-1.0, 0.0, 1.0]), _rand(rng, 3)), {}),
        ((np.array([-3.0, 0.2, 3.0]), np.array([-1.0, 0.0, 1.0]), _rand(rng, 3)), {"left": 0.5}),
    ]


interp.samples = _interp_samples


def _interp_rows_samples(rng):
    xp = np.sort(rng.uniform(-2, 2, (2, 5)), axis=-1)
    return [
        ((rng.uniform(-2.5, 2.5, (2, 4)), xp, _rand(rng, 2, 5)), {}),
        ((rng.uniform(-2.5, 2.5, (2, 3)), xp, _rand(rng, 2, 5)), {"right": _rand(rng, 2, 1)}),
    ]


interp_rows.samples = _interp_rows_samples


# ---------------------------------------------------------------------------
# astype (jnp.astype / x.astype: the ad.astype primitive)

# ``astype`` is defined in ad.py (public ``ad.astype``) and re-exported here.


# ---------------------------------------------------------------------------
# getitem samples live in ad.py; .at[idx].<op>(v)


def _at_prepare(x, v):
    # C order: ``ufunc.at`` below writes through ``out.reshape(-1)``, which is a
    # view only of a C-contiguous array (``np.array(x, copy=True)`` keeps the
    # layout of ``x``: a broadcast base under vmap, a transposed one, would get
    # its updates written into a temporary copy and lost)
    out = np.array(x, copy=True, order="C")
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


def _at_slots(x, idx, v, *more):
    """Flat positions in ``x`` of the update elements of ``x.at[idx]`` (shape of
    ``x[idx]``) and ``v`` (and ``more``) broadcast to that shape."""
    pos = flat_positions(np.shape(x), idx)
    return pos, [np.broadcast_to(np.asarray(a), pos.shape) for a in (v, *more)]


def _at_set_winners(x, idx, v):
    """Static: 1 where an update element of ``x.at[idx].set(v)`` is the one that
    lands in ``ans`` (duplicate indices: one write wins, found by the same
    assignment ``at_set`` does), else 0; shape of ``x[idx]``."""
    pos, _ = _at_slots(x, idx, v)
    dtype = np.result_type(_dt.default_float(), np.asarray(v).dtype)
    if pos.size == np.unique(pos).size:
        return np.ones(pos.shape, dtype)
    ids = np.full(np.shape(x), -1, dtype=np.int64)
    ids[idx] = np.arange(pos.size).reshape(pos.shape)
    return (ids[idx] == np.arange(pos.size).reshape(pos.shape)).astype(dtype)


at_set_winners = _internal("ad.at_set_winners", _at_set_winners, differentiable=False)


def _at_set_vjp_x(g, ans, x, idx, v):
    return at_set(g, idx, 0.0)


def _at_set_vjp_v(g, ans, x, idx, v):
    return unbroadcast(getitem(g, idx) * at_set_winners(x, idx, v), v)


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


# ``x.at[idx].multiply(v)`` with duplicate indices multiplies every update of a
# slot in: ans[p] = x[p] * prod(v[k] for pos[k] == p). So d ans[p] / d v[k] is
# x[p] times the product of the OTHER updates of that slot (JAX: scatter_mul's
# derivative), computed here without dividing (zeros are fine) by a segmented
# scan, and differentiated again with the same scan over truncated
# multivariate dual numbers (one direction per derivative order).


def _jet_mul(a, b):
    """Product of two truncated multivariate dual numbers: lists indexed by the
    bit set of directions, ``(ab)[m] = sum over s within m of a[s] * b[m - s]``."""
    out = []
    for m in range(len(a)):
        acc = None
        s = m
        while True:
            term = a[s] * b[m ^ s]
            acc = term if acc is None else acc + term
            if s == 0:
                break
            s = (s - 1) & m
        out.append(acc)
    return out


def _jet_exclusive_scan(jet, seg):
    """Exclusive product of each element's predecessors in its segment (``seg``
    sorted, one id per element), by doubling: O(n log(longest segment))."""
    n = seg.size
    incl = [np.array(c) for c in jet]
    d = 1
    longest = np.max(np.unique(seg, return_counts=True)[1]) if n else 0
    while d < longest:
        same = np.zeros(n, bool)
        same[d:] = seg[d:] == seg[:-d]
        prev = [np.concatenate([np.zeros(d, c.dtype), c[:-d]]) for c in incl]
        prod = _jet_mul(incl, prev)
        incl = [np.where(same, pc, c) for pc, c in zip(prod, incl)]
        d *= 2
    first = np.ones(n, bool)
    first[1:] = seg[1:] != seg[:-1]
    out = []
    for m, c in enumerate(incl):
        shifted = np.concatenate([np.zeros(1, c.dtype), c[:-1]]) if n else c
        out.append(np.where(first, 1.0 if m == 0 else 0.0, shifted).astype(c.dtype))
    return out


def _at_multiply_others_jet(x, idx, v, dirs):
    """For each update element ``k`` of ``x.at[idx].multiply(v)`` (shape of
    ``x[idx]``): the product of the other updates into the same slot,
    differentiated once in each direction of ``dirs`` (multilinear in them)."""
    pos, arrs = _at_slots(x, idx, v, *dirs)
    dtype = np.result_type(*arrs)
    if dtype.kind not in "fc":
        dtype = np.result_type(dtype, _dt.default_float())
    flat = pos.reshape(-1)
    k = len(dirs)
    if flat.size == np.unique(flat).size:
        # every update has a slot of its own: the product of the others is 1
        return np.full(pos.shape, 1.0 if k == 0 else 0.0, dtype)
    order = np.argsort(flat, kind="stable")
    seg = flat[order]
    # element k of the jet: bit i set = differentiated in direction i
    jet = [np.zeros(flat.size, dtype) for _ in range(1 << k)]
    jet[0] = arrs[0].reshape(-1)[order].astype(dtype)
    for i, t in enumerate(arrs[1:]):
        jet[1 << i] = t.reshape(-1)[order].astype(dtype)
    before = _jet_exclusive_scan(jet, seg)
    rev = [c[::-1] for c in jet]
    after = [c[::-1] for c in _jet_exclusive_scan(rev, seg[::-1])]
    full = _jet_mul(before, after)[-1]
    out = np.empty(flat.size, dtype)
    out[order] = full
    return out.reshape(pos.shape)


def _at_multiply_others(x, idx, v):
    """Static in ``x`` (its shape only): for each update element of
    ``x.at[idx].multiply(v)``, the product of the other updates into its slot
    (1 where indices do not repeat); shape of ``x[idx]``."""
    return _at_multiply_others_jet(x, idx, v, ())


def _at_multiply_others_d1(x, idx, v, t):
    """Derivative of :func:`_at_multiply_others` in ``v`` along ``t``."""
    return _at_multiply_others_jet(x, idx, v, (t,))


def _at_multiply_others_d2(x, idx, v, t, s):
    """Second derivative of :func:`_at_multiply_others` in ``v`` along ``t``, ``s``."""
    return _at_multiply_others_jet(x, idx, v, (t, s))


def _at_multiply_others_d3_check(x, idx, v):
    """Zeros like ``x[idx]`` when no slot of ``x.at[idx]`` gets more than three
    updates (then the third derivative of the product of the others is zero);
    otherwise not implemented."""
    pos, _ = _at_slots(x, idx, v)
    flat = pos.reshape(-1)
    if flat.size and np.max(np.unique(flat, return_counts=True)[1]) > 3:
        raise NotImplementedError(
            "srcjax: fourth and higher derivatives of x.at[idx].multiply(v) with more "
            "than three updates into one position are not implemented"
        )
    return np.zeros(pos.shape, np.result_type(_dt.default_float(), np.asarray(v).dtype))


at_multiply_others = _internal("ad.at_multiply_others", _at_multiply_others)
at_multiply_others_d1 = _internal("ad.at_multiply_others_d1", _at_multiply_others_d1)
at_multiply_others_d2 = _internal("ad.at_multiply_others_d2", _at_multiply_others_d2)
at_multiply_others_d3_check = _internal(
    "ad.at_multiply_others_d3_check", _at_multiply_others_d3_check, differentiable=False
)


# the Jacobian of the product of the others (per slot, over update elements) is
# symmetric, as are its higher derivatives: a vjp is the jvp along the cotangent
def _amo_vjp_x(g, ans, x, idx, v):
    return zeros_like(x)


def _amo_jvp_x(t, ans, x, idx, v):
    return zeros_like(ans)


def _amo_vjp_v(g, ans, x, idx, v):
    return unbroadcast(at_multiply_others_d1(x, idx, v, g), v)


def _amo_jvp_v(t, ans, x, idx, v):
    return at_multiply_others_d1(x, idx, v, t)


at_multiply_others.def_vjp(x=_amo_vjp_x, v=_amo_vjp_v)
at_multiply_others.def_jvp(x=_amo_jvp_x, v=_amo_jvp_v)


def _amo1_vjp_x(g, ans, x, idx, v, t):
    return zeros_like(x)


def _amo1_jvp_x(t_, ans, x, idx, v, t):
    return zeros_like(ans)


def _amo1_vjp_v(g, ans, x, idx, v, t):
    return unbroadcast(at_multiply_others_d2(x, idx, v, t, g), v)


def _amo1_jvp_v(t_, ans, x, idx, v, t):
    return at_multiply_others_d2(x, idx, v, t, t_)


def _amo1_vjp_t(g, ans, x, idx, v, t):
    return unbroadcast(at_multiply_others_d1(x, idx, v, g), t)


def _amo1_jvp_t(t_, ans, x, idx, v, t):
    return at_multiply_others_d1(x, idx, v, t_)


at_multiply_others_d1.def_vjp(x=_amo1_vjp_x, v=_amo1_vjp_v, t=_amo1_vjp_t)
at_multiply_others_d1.def_jvp(x=_amo1_jvp_x, v=_amo1_jvp_v, t=_amo1_jvp_t)


def _amo2_vjp_x(g, ans, x, idx, v, t, s):
    return zeros_like(x)


def _amo2_jvp_x(t_, ans, x, idx, v, t, s):
    return zeros_like(ans)


def _amo2_vjp_v(g, ans, x, idx, v, t, s):
    return unbroadcast(at_multiply_others_d3_check(x, idx, v), v)


def _amo2_jvp_v(t_, ans, x, idx, v, t, s):
    return at_multiply_others_d3_check(x, idx, v)


def _amo2_vjp_t(g, ans, x, idx, v, t, s):
    return unbroadcast(at_multiply_others_d2(x, idx, v, g, s), t)


def _amo2_jvp_t(t_, ans, x, idx, v, t, s):
    return at_multiply_others_d2(x, idx, v, t_, s)


def _amo2_vjp_s(g, ans, x, idx, v, t, s):
    return unbroadcast(at_multiply_others_d2(x, idx, v, t, g), s)


def _amo2_jvp_s(t_, ans, x, idx, v, t, s):
    return at_multiply_others_d2(x, idx, v, t, t_)


at_multiply_others_d2.def_vjp(x=_amo2_vjp_x, v=_amo2_vjp_v, t=_amo2_vjp_t, s=_amo2_vjp_s)
at_multiply_others_d2.def_jvp(x=_amo2_jvp_x, v=_amo2_jvp_v, t=_amo2_jvp_t, s=_amo2_jvp_s)


def _at_multiply_vjp_x(g, ans, x, idx, v):
    return at_multiply(g, idx, v)


def _at_multiply_vjp_v(g, ans, x, idx, v):
    return unbroadcast(getitem(g, idx) * getitem(x, idx) * at_multiply_others(x, idx, v), v)


def _at_multiply_jvp_x(t, ans, x, idx, v):
    return at_multiply(t, idx, v)


def _at_multiply_jvp_v(t, ans, x, idx, v):
    return at_add(zeros_like(ans), idx, getitem(x, idx) * at_multiply_others(x, idx, v) * t)


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
    # the first: repeated indices (a slot updated three times, one twice), and
    # an unbatched base with batched updates in the vmap test
    return [
        ((_rand(rng, 5), np.array([0, 2, 2, -1, 2, 0]), _rand(rng, 6)), {}),
        ((_rand(rng, 4, 3), (slice(1, 3), 0), _rand(rng, 2)), {}),
        ((_rand(rng, 4, 3), 1, _rand(rng, 3)), {}),
        ((_rand(rng, 4, 3), (np.array([0, 3, 0]), np.array([1, 2, 1])), _rand(rng, 3)), {}),
        ((_rand(rng, 4, 3), np.array([True, False, True, False]), _rand(rng, 3)), {}),
        # a scalar update broadcast into a repeated slot
        ((_rand(rng, 4), np.array([1, 3, 1]), _rand(rng)), {}),
    ]


def _at_extremal_samples(rng):
    # two-way ties (base with an update, two updates): central differences see
    # the tie as the mean of both sides, JAX's rule splits the derivative evenly
    x = _rand(rng, 5)
    v = _rand(rng, 4)
    v[0] = x[1]
    v[2] = v[3] = builtins.max(abs(x[4]), abs(x[4] - 1)) * 3 + 1
    tie_max = ((x, np.array([1, 3, 4, 4]), v), {})
    w = v.copy()
    w[2] = w[3] = -w[2]
    tie_min = ((x, np.array([1, 3, 4, 4]), w), {})
    return _at_samples(rng) + [tie_max, tie_min]


def _at_others_samples(rng, extra=0):
    out = []
    for args, kw in _at_samples(rng):
        x, idx, v = args
        shape = np.shape(np.asarray(x)[idx])
        out.append(((x, idx, v) + tuple(_rand(rng, *shape) for _ in range(extra)), kw))
    # a zero update in a repeated slot (no division by the updates)
    v = _rand(rng, 6)
    v[1] = 0.0
    out.append(
        (
            (_rand(rng, 5), np.array([0, 2, 2, -1, 2, 0]), v)
            + tuple(_rand(rng, 6) for _ in range(extra)),
            {},
        )
    )
    return out


at_set.samples = _at_samples
at_add.samples = _at_samples
at_multiply.samples = _at_samples
at_min.samples = _at_extremal_samples
at_max.samples = _at_extremal_samples
at_set_winners.samples = _at_samples
at_multiply_others.samples = _at_others_samples
at_multiply_others_d1.samples = lambda rng: _at_others_samples(rng, 1)
at_multiply_others_d2.samples = lambda rng: _at_others_samples(rng, 2)
at_multiply_others_d3_check.samples = _at_samples

# re-exports defined in ad.py
_REEXPORTS = (reshape, moveaxis, expand_dims, broadcast_to, triu, tril, astype, getitem)


# ---------------------------------------------------------------------------
# lax.dynamic_slice / lax.dynamic_update_slice


def _clamped_starts(shape, starts, sizes):
    """JAX's start indices: a negative one counts from the end (``-1`` is
    ``dim - 1``), then each is clamped to ``[0, dim - size]`` so the window fits."""
    starts = [int(s) for s in np.asarray(starts).reshape(-1)] if np.ndim(starts) else [int(starts)]
    if len(starts) != len(shape):
        raise TypeError(
            f"dynamic slice: {len(starts)} start indices for an operand of rank {len(shape)}"
        )
    return tuple(min(max(s + d if s < 0 else s, 0), d - n) for s, d, n in zip(starts, shape, sizes))


def _dynamic_slice(operand, start_indices, slice_sizes):
    """``operand[s0:s0+n0, s1:s1+n1, ...]`` (jax.lax.dynamic_slice): a copy of
    shape ``slice_sizes`` and ``operand``'s dtype. ``start_indices``: one int per
    axis (a sequence or 1-d int array); a negative one counts from the end, then
    each is clamped so the window lies inside. ``slice_sizes``: static ints.
    Raises TypeError when the sizes or the number of starts do not fit."""
    x = np.asarray(operand)
    sizes = tuple(int(n) for n in slice_sizes)
    if len(sizes) != x.ndim or any(n < 0 or n > d for n, d in zip(sizes, x.shape)):
        raise TypeError(f"dynamic_slice: slice sizes {sizes} do not fit operand shape {x.shape}")
    starts = _clamped_starts(x.shape, start_indices, sizes)
    return x[tuple(slice(s, s + n) for s, n in zip(starts, sizes))].copy()


def _dynamic_update_slice(operand, update, start_indices):
    """A copy of ``operand`` with ``update`` written at ``start_indices`` (clamped
    so it fits; jax.lax.dynamic_update_slice). ``update`` has the operand's rank
    and is cast to its dtype."""
    x = np.array(operand)
    u = np.asarray(update)
    if u.ndim != x.ndim or any(n > d for n, d in zip(u.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice: update of shape {u.shape} for operand {x.shape}")
    starts = _clamped_starts(x.shape, start_indices, u.shape)
    x[tuple(slice(s, s + n) for s, n in zip(starts, u.shape))] = u
    return x


dynamic_slice = _structural("lax.dynamic_slice", _dynamic_slice)
dynamic_update_slice = _structural("lax.dynamic_update_slice", _dynamic_update_slice)


def _ds_vjp(g, ans, operand, start_indices, slice_sizes):
    return dynamic_update_slice(zeros_like(operand), g, start_indices)


def _ds_jvp(t, ans, operand, start_indices, slice_sizes):
    return dynamic_slice(t, start_indices, slice_sizes)


def _dus_vjp_operand(g, ans, operand, update, start_indices):
    return dynamic_update_slice(g, zeros_like(update), start_indices)


def _dus_vjp_update(g, ans, operand, update, start_indices):
    return dynamic_slice(g, start_indices, np.shape(update))


def _dus_jvp_operand(t, ans, operand, update, start_indices):
    return dynamic_update_slice(t, zeros_like(update), start_indices)


def _dus_jvp_update(t, ans, operand, update, start_indices):
    return dynamic_update_slice(zeros_like(operand), t, start_indices)


dynamic_slice.def_vjp(operand=_ds_vjp)
dynamic_slice.def_jvp(operand=_ds_jvp)
dynamic_update_slice.def_vjp(operand=_dus_vjp_operand, update=_dus_vjp_update)
dynamic_update_slice.def_jvp(operand=_dus_jvp_operand, update=_dus_jvp_update)
dynamic_slice.samples = lambda rng: [
    ((_rand(rng, 4, 5), (1, 2), (2, 3)), {}),
    ((_rand(rng, 4, 5), (3, -1), (2, 2)), {}),  # clamped
    ((_rand(rng, 6), np.array([4]), (3,)), {}),
]
dynamic_update_slice.samples = lambda rng: [
    ((_rand(rng, 4, 5), _rand(rng, 2, 3), (1, 2)), {}),
    ((_rand(rng, 4, 5), _rand(rng, 2, 2), (3, 9)), {}),  # clamped
]
