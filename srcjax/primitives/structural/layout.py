"""Layout changes: ``ravel``, ``transpose``, ``swapaxes``, ``squeeze``, ``copy``,
``flip``, ``roll``; and the re-exports of the structural primitives defined in
:mod:`srcjax.primitives.ad` (``reshape``, ``moveaxis``, ``astype``, ``getitem``, ...).
"""

from __future__ import annotations

import numpy as np

from srcjax.primitives.ad import (
    astype,
    broadcast_to,
    def_reshaping,
    expand_dims,
    getitem,
    inverse_permutation,
    moveaxis,
    reshape,
    tril,
    triu,
)

from ..ad.linear import def_identity, def_linear
from ._common import _internal, _rand, _structural

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
    "flip",
    "roll",
    "triu",
    "tril",
    "astype",
    "copy",
]

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


def_linear(matrix_transpose)


matrix_transpose.samples = lambda rng: [((_rand(rng, 2, 3, 4),), {})]


def _swapaxes(a, axis1, axis2):
    """Interchange two axes (jax.numpy.swapaxes)."""
    return np.swapaxes(a, axis1, axis2)


swapaxes = _structural("jnp.swapaxes", _swapaxes, np.swapaxes)


def_linear(swapaxes)


swapaxes.samples = lambda rng: [((_rand(rng, 2, 3, 4), 0, -1), {})]


def _squeeze(a, axis=None):
    """Remove length-1 axes (all, or those in ``axis``) (jax.numpy.squeeze)."""
    return np.squeeze(a, axis=axis)


squeeze = _structural("jnp.squeeze", _squeeze, np.squeeze)


def_reshaping(squeeze)


squeeze.samples = lambda rng: [
    ((_rand(rng, 2, 1, 3, 1),), {}),
    ((_rand(rng, 2, 1, 3, 1), -1), {}),
]


def _copy(a, order="K"):
    """A copy of ``a`` (jax.numpy.copy)."""
    return np.array(a, copy=True, order=order)


copy = _structural("jnp.copy", _copy, np.copy)


def_identity(copy)


# ---------------------------------------------------------------------------
# flip / roll


def _flip(m, axis=None):
    """Reverse the order of elements along ``axis`` (all axes when None)
    (jax.numpy.flip)."""
    return np.flip(m, axis)


flip = _structural("jnp.flip", _flip, np.flip)


def_linear(flip)


flip.samples = lambda rng: [((_rand(rng, 2, 3),), {}), ((_rand(rng, 2, 3), 1), {})]


def _roll(a, shift, axis=None):
    """Roll elements along ``axis`` by ``shift`` (jax.numpy.roll); ``axis=None``
    rolls the flattened array. One int shift along one int axis of an array is
    two slice copies into a new array: np.roll's general path (index tuples,
    normalization, a copy per shift) costs 2-4x that on a stencil's small grid
    (userprogs6 repro_10: four rolls of 64 x 64 per step)."""
    if type(shift) is int and type(axis) is int and type(a) is np.ndarray:
        nd = a.ndim
        if -nd <= axis < nd:
            ax = axis % nd
            n = a.shape[ax]
            s = shift % n if n else 0
            out = np.empty_like(a)
            lead = (slice(None),) * ax
            out[lead + (slice(s, None),)] = a[lead + (slice(None, n - s),)]
            out[lead + (slice(None, s),)] = a[lead + (slice(n - s, None),)]
            return out
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


# re-exports defined in ad.py
_REEXPORTS = (reshape, moveaxis, expand_dims, broadcast_to, triu, tril, astype, getitem)


# JAX keeps a weak array's type through functions that move or copy its elements
for _p in (ravel, transpose, squeeze, copy, flip, roll):
    _p.facts(keeps_weak=True)
