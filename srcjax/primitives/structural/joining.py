"""Joining and splitting: ``concatenate``/``hstack``/``vstack`` and their list
adjoints, ``stack``/``unstack``, ``split``/``array_split`` (list outputs).
"""

from __future__ import annotations

import numpy as np

from srcjax.primitives.ad import (
    astype,
    keep_if_inexact,
)

from ..ad.linear import def_linear
from ._common import _internal, _rand, _structural

__all__ = ["concatenate", "stack", "unstack", "split", "array_split", "hstack", "vstack"]

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
        from ...errors import ShapeError

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


def_linear(join_like, split_like)


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
for _joined, _seq in ((concatenate, "arrays"), (hstack, "tup"), (vstack, "tup"), (stack, "arrays")):
    _joined.facts(weak_items=_seq)  # (the weak rule over the items: stack([1.0, 2.0]))


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
    if type(ary) is np.ndarray and type(indices_or_sections) is int and type(axis) is int:
        # equal sections of an array: the views np.split returns, by basic
        # slicing (np.split's Python path costs 16-20 us for 4 sections of a
        # 16 x 128 array, the slices under 1 us: an LSTM's gates every trip)
        nd, n = ary.ndim, indices_or_sections
        ax = axis + nd if axis < 0 else axis
        if 0 <= ax < nd and n > 0 and ary.shape[ax] % n == 0:
            step = ary.shape[ax] // n
            lead = (slice(None),) * ax
            return [ary[lead + (slice(i * step, (i + 1) * step),)] for i in range(n)]
    return np.split(ary, indices_or_sections, axis=axis)


def _array_split(ary, indices_or_sections, axis=0):
    """Like :func:`split` but allows unequal sections (jax.numpy.array_split)."""
    return np.array_split(ary, indices_or_sections, axis=axis)


split = _structural("jnp.split", _split, np.split)
array_split = _structural("jnp.array_split", _array_split, np.array_split)


def _def_split_rules(p):
    """Rules of ``p(ary, indices_or_sections, axis)`` (``split``,
    ``array_split``): linear in ``ary``; the vjp joins the pieces' cotangents
    again (holes filled with zeros), the jvp splits the tangent."""

    def vjp(g, ans, ary, indices_or_sections, axis=0):
        return concatenate(fill_none(g, ans), axis)

    def jvp(t, ans, ary, indices_or_sections, axis=0):
        return p(t, indices_or_sections, axis)

    p.def_vjp(vjp)
    p.def_jvp(jvp)


_def_split_rules(split)
_def_split_rules(array_split)
split.samples = lambda rng: [
    ((_rand(rng, 4, 2), 2), {}),
    ((_rand(rng, 2, 5), [1, 3]), {"axis": 1}),
]
array_split.samples = lambda rng: [((_rand(rng, 8), 3), {}), ((_rand(rng, 2, 5), 2), {"axis": -1})]
