"""Searching and set primitives whose result size depends on the values:
``nonzero``, ``flatnonzero``, ``argwhere`` and ``unique`` (jax.numpy).

JAX needs ``size=`` to use them under ``jit``; srcjax does not trace, so they
also work without it (the result is as long as the data says). With ``size``
the result is cut or padded to that length with ``fill_value``, exactly as in
JAX, which is what ``vmap`` needs to stack per-example results. Integer results
have the default int dtype (int32, int64 with x64). ``unique``'s values are
differentiable as in JAX (with ``size``: each is its first occurrence; without
``size`` JAX's gradient is zero); the others are integer results.
"""

from __future__ import annotations

import numpy as np

from ..dtypes import default_int
from .ad.linear import def_transpose_pair
from .registry import Primitive, register

__all__ = ["nonzero", "flatnonzero", "argwhere", "unique"]


def _setop(public, impl, *aliases):
    return register(Primitive(public, impl, kind="structural", differentiable=False), *aliases)


def _fit(idx, size, fill):
    """``idx`` (1-D int) cut or padded to ``size`` with ``fill``."""
    out = np.full(size, fill, dtype=default_int())
    n = min(size, idx.shape[0])
    out[:n] = idx[:n]
    return out


def _nonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero (true) elements of ``a``, one int array per axis
    (jax.numpy.nonzero), in row-major order. With ``size``: each cut or padded
    to ``size`` with ``fill_value`` (0 by default; a tuple gives one per axis).
    Dtype: the default int. Raises ValueError for a 0-d ``a`` (as JAX)."""
    a = np.asarray(a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(a).")
    idx = np.nonzero(a)
    if size is None:
        return tuple(i.astype(default_int()) for i in idx)
    fills = fill_value if isinstance(fill_value, (tuple, list)) else (fill_value,) * a.ndim
    if len(fills) != a.ndim:
        raise ValueError(
            f"fill_value must be a scalar or a tuple of length {a.ndim}; got {fill_value}"
        )
    return tuple(_fit(i, int(size), 0 if f is None else f) for i, f in zip(idx, fills))


def _flatnonzero(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements of the flattened ``a``
    (jax.numpy.flatnonzero); ``size``/``fill_value`` as :func:`_nonzero`. Shape:
    ``(count,)`` or ``(size,)``; dtype: the default int."""
    return _nonzero(np.ravel(a), size=size, fill_value=fill_value)[0]


def _argwhere(a, *, size=None, fill_value=None):
    """Indices of the non-zero elements of ``a`` as rows (jax.numpy.argwhere):
    shape ``(count, a.ndim)`` (``(size, a.ndim)`` with ``size``, padded rows
    hold ``fill_value``, 0 by default). Dtype: the default int."""
    a = np.asarray(a)
    if a.ndim == 0:
        rows = np.argwhere(a).astype(default_int())
        if size is None:
            return rows
        return np.zeros((int(size), 0), default_int())
    cols = _nonzero(a, size=size, fill_value=fill_value)
    return np.stack(cols, axis=-1).astype(default_int(), copy=False)


def _unique(
    ar,
    return_index=False,
    return_inverse=False,
    return_counts=False,
    axis=None,
    *,
    equal_nan=True,
    size=None,
    fill_value=None,
    sorted=True,  # noqa: A002 (JAX's parameter name)
):
    """The sorted unique elements of ``ar`` (jax.numpy.unique), flattened unless
    ``axis`` is given (then unique slices along it). NaNs count as one value
    unless ``equal_nan=False``.

    Optional extra results, in this order: ``return_index`` (the first index of
    each unique value in the flattened ``ar``), ``return_inverse`` (for every
    element, the index of its unique value; shaped like ``ar`` when ``axis`` is
    None), ``return_counts``. Integer results have the default int dtype. With
    ``size`` (``axis=None`` only): the values are cut or padded to ``size`` with
    ``fill_value`` (default: the smallest unique value), the indices padded with
    the first index of the smallest value, the counts with 0, as JAX does.

    Returns one array, or a tuple when any ``return_*`` is set. Raises
    NotImplementedError for ``size`` with an ``axis``."""
    ar = np.asarray(ar)
    res = np.unique(
        ar,
        return_index=True,
        return_inverse=True,
        return_counts=True,
        axis=axis,
        equal_nan=equal_nan,
    )
    values, index, inverse, counts = res
    it = default_int()
    index, counts = index.astype(it), counts.astype(it)
    inverse = inverse.astype(it)
    if axis is None:
        inverse = inverse.reshape(ar.shape)
    else:
        inverse = inverse.reshape(-1)
    if size is not None:
        if axis is not None:
            raise NotImplementedError("srcjax jnp.unique: size= with axis= is not supported yet")
        size = int(size)
        if fill_value is None:
            fill = values[0] if values.shape[0] else np.zeros((), values.dtype)
        else:
            fill = fill_value
        v = np.full(size, fill, dtype=values.dtype)
        n = min(size, values.shape[0])
        v[:n] = values[:n]
        values = v
        index = _fit(index, size, index[0] if index.shape[0] else 0)
        counts = _fit(counts, size, 0)
    out = [values]
    if return_index:
        out.append(index)
    if return_inverse:
        out.append(inverse)
    if return_counts:
        out.append(counts)
    return out[0] if len(out) == 1 else tuple(out)


nonzero = _setop("jnp.nonzero", _nonzero, np.nonzero)
flatnonzero = _setop("jnp.flatnonzero", _flatnonzero, np.flatnonzero)
argwhere = _setop("jnp.argwhere", _argwhere, np.argwhere)
unique = register(Primitive("jnp.unique", _unique, kind="structural"), np.unique)


# -- unique's derivative: JAX's. With size= (and no axis), each unique value is
# its first occurrence in ar (padding with the default fill value repeats the
# smallest one's); without size, or with an axis, JAX's gradient is zero.
def _unique_sources(ar, size, fill_value, equal_nan):
    """(flat index of each output value's source element, mask of outputs that
    have one) for unique(ar, size=size) with axis=None."""
    _, index = np.unique(np.ravel(ar), return_index=True, equal_nan=equal_nan)
    n = index.shape[0]
    idx = _fit(index, size, index[0] if n else 0)
    has = np.arange(size) < n
    if fill_value is None and n:
        has = np.ones(size, bool)  # padding repeats the smallest value itself
    return idx, has


def _unique_ct(g, ar, size=None, fill_value=None, equal_nan=True, axis=None):
    """The cotangent of ``ar`` from that of unique's values ``g`` (JAX's rule)."""
    ar = np.asarray(ar)
    dt = np.result_type(ar) if np.result_type(ar).kind in "fc" else np.float32
    out = np.zeros(ar.size, dt)
    if g is None or size is None or axis is not None:
        return out.reshape(ar.shape)
    idx, has = _unique_sources(ar, int(size), fill_value, equal_nan)
    np.add.at(out, idx[has], np.asarray(g)[has])
    return out.reshape(ar.shape)


def _unique_gather(t, ar, size=None, fill_value=None, equal_nan=True, axis=None):
    """The tangent of unique's values from the tangent ``t`` of ``ar``."""
    ar = np.asarray(ar)
    if size is None or axis is not None:
        return np.zeros(np.shape(_unique(ar, axis=axis, equal_nan=equal_nan)), np.result_type(t))
    idx, has = _unique_sources(ar, int(size), fill_value, equal_nan)
    flat = np.ravel(t)
    return np.where(has, flat[idx], np.zeros((), flat.dtype))


unique_ct = register(Primitive("ad.unique_ct", _unique_ct, kind="internal"))
unique_gather = register(Primitive("ad.unique_gather", _unique_gather, kind="internal"))


def _unique_vjp_ar(g, ans, ar, axis, *, equal_nan, size, fill_value):
    return unique_ct(first_of(g, ans), ar, size, fill_value, equal_nan, axis)


def _unique_jvp_ar(t, ans, ar, axis, *, equal_nan, size, fill_value):
    return with_first(unique_gather(t, ar, size, fill_value, equal_nan, axis), ans)


def _first_of(g, ans):
    """The values' cotangent when unique returned a tuple (values, index, ...)."""
    if isinstance(ans, (tuple, list)):
        return None if g is None else g[0]
    return g


def _with_first(t, ans):
    """The tangent of unique's result: ``t`` for the values, zeros (integer
    results have none) elsewhere."""
    if isinstance(ans, (tuple, list)):  # (lax.top_k's result is a list)
        return type(ans)([t] + [None for _ in ans[1:]])
    return t


first_of = register(Primitive("ad.unique_first_of", _first_of, kind="internal"))
with_first = register(Primitive("ad.unique_with_first", _with_first, kind="internal"))
with_first.returns_tree = True
unique.def_vjp(_unique_vjp_ar)
unique.def_jvp(_unique_jvp_ar)


def_transpose_pair(unique_ct, unique_gather)
# tuples of arrays (of different dtypes for unique): vmap's per-example loop
# stacks them position by position
nonzero.returns_tree = True
unique.returns_tree = True
for _p in (nonzero, flatnonzero, argwhere, unique):
    _p.facts(value_shaped=True)  # (the output shape depends on the values)


def _mask(rng, *shape):
    return rng.normal(size=shape) > 0.2


nonzero.samples = lambda rng: [
    ((_mask(rng, 3, 4),), {}),
    ((_mask(rng, 5),), {"size": 7, "fill_value": -1}),
]
flatnonzero.samples = lambda rng: [((_mask(rng, 3, 4),), {"size": 3})]
argwhere.samples = lambda rng: [((_mask(rng, 2, 3),), {}), ((_mask(rng, 4),), {"size": 6})]
unique.samples = lambda rng: [  # (with size: vmap needs equal lengths per example;
    # distinct values: a finite difference cannot step through a tie)
    ((rng.normal(size=(3, 4)),), {"size": 12}),
    ((rng.normal(size=7),), {"return_counts": True, "size": 9}),
]

unique_ct.samples = lambda rng: [
    ((rng.normal(size=5), rng.normal(size=(2, 3))), {"size": 5}),
    ((rng.normal(size=4), np.array([3.0, 1.0, 3.0, 2.0])), {"size": 4}),
]
unique_gather.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), rng.normal(size=(2, 3))), {"size": 5}),
    ((rng.normal(size=4), np.array([3.0, 1.0, 3.0, 2.0])), {"size": 5, "fill_value": 0.0}),
]
first_of.samples = lambda rng: []  # (structure only: covered through unique's rules)
with_first.samples = lambda rng: []


def_transpose_pair(first_of, with_first)
