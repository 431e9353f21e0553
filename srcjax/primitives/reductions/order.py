"""Order statistics: ``median``, ``quantile`` / ``percentile`` (weighted sums of
the sorted values; ``q`` is differentiable, as in JAX), ``lax.top_k``.
"""

from __future__ import annotations

import operator

import numpy as np

from srcjax.dtypes import result_type, to_inexact_dtype
from srcjax.primitives.ad import (
    group_last,
    norm_axes,
    reshape,
    sum,
    ungroup_last,
)
from srcjax.primitives.linalg import dense_tree, tensordot
from srcjax.primitives.registry import REGISTRY, Primitive, register
from srcjax.primitives.setops import with_first
from srcjax.primitives.structural import (
    argsort,
    expand_dims,
    sort,
    take_along_axis,
    take_along_axis_adjoint,
)

from ._common import _reduction, where
from .logical import any as _any

__all__ = ["median", "quantile", "percentile"]

_isnan = REGISTRY["jnp.isnan"]


def _nan_slices(ar):
    """True (shape ``ar.shape[:-1] + (1,)``) where a slice along the last axis
    of ``ar`` holds a NaN: JAX's median/quantile of such a slice is the constant
    NaN, so its derivative is zero there."""
    return _any(_isnan(ar), axis=-1, keepdims=True)


# ---------------------------------------------------------------------------
# median


def _median(a, axis=None, keepdims=False):
    """Median over ``axis`` (jax.numpy.median). Gradient: to the middle element,
    or split 0.5 / 0.5 between the two middle elements for even counts."""
    a = np.asarray(a)
    if a.dtype.kind in "biu":
        a = a.astype(to_inexact_dtype(a.dtype))
    return np.median(a, axis=axis, keepdims=keepdims)  # NaN for a slice holding one, as JAX


median = _reduction("jnp.median", _median, np.median)


def _median_weights(ar):
    """Constant weights, in sorted order along the last axis of ``ar``, whose
    weighted sum is the median."""
    n = np.shape(ar)[-1]
    w = np.zeros(n, dtype=np.result_type(ar))
    if n % 2:
        w[n // 2] = 1
    else:
        w[n // 2 - 1] = 0.5
        w[n // 2] = 0.5
    return w


median_weights = register(
    Primitive("ad.median_weights", _median_weights, kind="internal", differentiable=False)
)


def _median_vjp(g, ans, a, axis=None):
    ar = group_last(a, axis)
    g_sorted = expand_dims(reshape(g, np.shape(ar)[:-1]), -1) * median_weights(ar)
    g_sorted = where(_nan_slices(ar), 0, g_sorted)
    return ungroup_last(take_along_axis(g_sorted, argsort(argsort(ar, -1), -1), -1), a, axis)


def _median_jvp(t, ans, a, axis=None):
    ar = group_last(a, axis)
    t_sorted = where(_nan_slices(ar), 0, take_along_axis(group_last(t, axis), argsort(ar, -1), -1))
    return reshape(sum(t_sorted * median_weights(ar), axis=-1), np.shape(ans))


median.def_vjp(_median_vjp)
median.def_jvp(_median_jvp)
median.samples = lambda rng: [
    ((rng.normal(size=(3, 5)),), {"axis": 1}),
    ((rng.normal(size=(3, 4)),), {"axis": 0, "keepdims": True}),
    ((rng.normal(size=(2, 3, 4)),), {"axis": (0, 2)}),
    ((rng.normal(size=(2, 3)),), {}),
]


# ---------------------------------------------------------------------------
# quantile / percentile: weighted sums of the sorted values along the grouped
# reduced axes (``ad.group_last``). The weights depend on ``q`` (piecewise
# linearly for method="linear"), so ``q`` is differentiable too, as in JAX.

_QUANTILE_METHODS = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile_positions(q, n, method):
    """``(low, high, high_weight)`` arrays of ``q``'s shape (JAX's quantile):
    ``low = floor(q (n - 1))``, ``high = ceil(q (n - 1))``, clipped to
    ``[0, n - 1]``; ``high_weight`` is the weight of ``high`` for ``method``."""
    if method not in _QUANTILE_METHODS:
        raise ValueError(f"method can only be one of {list(_QUANTILE_METHODS)}, got {method!r}")
    pos = np.asarray(q, dtype=np.result_type(q, np.float32)) * (n - 1)
    low = np.clip(np.floor(pos), 0, n - 1)
    high = np.clip(np.ceil(pos), 0, n - 1)
    hw = pos - np.floor(pos)
    if method == "lower":
        hw = np.zeros_like(hw)
    elif method == "higher":
        hw = np.ones_like(hw)
    elif method == "midpoint":
        hw = np.full_like(hw, 0.5)
    elif method == "nearest":
        hw = (hw > 0.5).astype(hw.dtype)
    return low.astype(np.intp), high.astype(np.intp), hw


def _quantile_weights(q, ar, method="linear", scale=1.0):
    """Constant weights of shape ``q.shape + (n,)`` (``n`` the last axis of
    ``ar``) whose sum against the values sorted along that axis is the quantile
    ``q / scale``."""
    n = np.shape(ar)[-1]
    low, high, hw = _quantile_positions(np.asarray(q) / scale, n, method)
    w = np.zeros(np.shape(low) + (n,), dtype=to_inexact_dtype(result_type(ar, q)))
    idx = np.indices(np.shape(low))
    np.add.at(w, (*idx, low), 1 - hw)
    np.add.at(w, (*idx, high), hw)
    return w


def _quantile_dweights(q, ar, method="linear", scale=1.0):
    """``d _quantile_weights / d q`` (piecewise constant; zero unless linear)."""
    n = np.shape(ar)[-1]
    low, high, _ = _quantile_positions(np.asarray(q) / scale, n, method)
    w = np.zeros(np.shape(low) + (n,), dtype=to_inexact_dtype(result_type(ar, q)))
    if method == "linear":
        idx = np.indices(np.shape(low))
        np.add.at(w, (*idx, low), -(n - 1) / scale)
        np.add.at(w, (*idx, high), (n - 1) / scale)
    return w


quantile_weights = register(
    Primitive("ad.quantile_weights", _quantile_weights, kind="internal", differentiable=False)
)
quantile_dweights = register(
    Primitive("ad.quantile_dweights", _quantile_dweights, kind="internal", differentiable=False)
)


def _quantile_impl(a, q, axis, method, keepdims, scale, name):
    a = np.asarray(a)
    dt = to_inexact_dtype(result_type(a, q))
    qa = np.asarray(q, dtype=dt) / scale
    if qa.ndim > 1:
        raise ValueError(f"jnp.{name}: q must be zero- or one-dimensional, got shape {qa.shape}")
    if np.any((qa < 0) | (qa > 1)):
        raise ValueError(f"jnp.{name}: q must be in the range [0, {int(scale)}]")
    if a.size == 0:
        raise ValueError(f"jnp.{name}: cannot take the {name} of an empty array")
    ar = np.sort(group_last(a.astype(dt, copy=False), axis), axis=-1)
    # a slice holding a NaN has the quantile NaN for every q and method (JAX);
    # NumPy's sort puts NaNs last, where low/high would skip them
    ar = np.where(np.isnan(ar).any(axis=-1, keepdims=True), np.asarray(np.nan, dt), ar)
    low, high, hw = _quantile_positions(qa, ar.shape[-1], method)
    lo_v = np.moveaxis(ar[..., low], -1, 0) if qa.ndim else ar[..., low]
    hi_v = np.moveaxis(ar[..., high], -1, 0) if qa.ndim else ar[..., high]
    hw = hw.reshape(hw.shape + (1,) * (ar.ndim - 1)).astype(dt)
    out = np.where(hw == 0, lo_v, np.where(hw == 1, hi_v, (1 - hw) * lo_v + hw * hi_v))
    if keepdims:
        axes = norm_axes(axis, a.ndim)
        out = out.reshape(qa.shape + tuple(1 if i in axes else n for i, n in enumerate(a.shape)))
    return np.asarray(out, dtype=dt)


def _quantile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    interpolation=None,
):
    """The ``q``-th quantile of ``a`` over ``axis`` (jax.numpy.quantile).

    ``q``: a scalar or 1-D array in ``[0, 1]``; ``axis``: None (all), int or
    tuple; ``method``: ``"linear"`` (default), ``"lower"``, ``"higher"``,
    ``"midpoint"`` or ``"nearest"`` (``interpolation`` is its old name).
    Shape: ``q.shape`` followed by ``a``'s shape without the reduced axes (kept
    as 1 with ``keepdims``). Dtype: JAX's inexact promotion of ``a`` and ``q``
    (integer input gives float32 unless x64). Differentiable in ``a`` through the
    sorted values (ties follow the stable sort) and, for ``"linear"``, in ``q``.
    Raises ``ValueError`` for ``q`` outside ``[0, 1]`` or of rank > 1, an empty
    ``a`` or an unknown method; ``out=`` raises ``NotImplementedError``."""
    if out is not None:
        raise NotImplementedError("jnp.quantile: the out argument is not supported (JAX)")
    method = interpolation if interpolation is not None else method
    return _quantile_impl(a, q, axis, method, keepdims, 1.0, "quantile")


def _percentile(
    a,
    q,
    axis=None,
    out=None,
    overwrite_input=False,
    method="linear",
    keepdims=False,
    *,
    interpolation=None,
):
    """The ``q``-th percentile of ``a`` over ``axis`` (jax.numpy.percentile):
    :func:`quantile` of ``q / 100``, ``q`` in ``[0, 100]``. Same shapes, dtypes,
    methods, derivatives and errors as ``jnp.quantile``."""
    if out is not None:
        raise NotImplementedError("jnp.percentile: the out argument is not supported (JAX)")
    method = interpolation if interpolation is not None else method
    return _quantile_impl(a, q, axis, method, keepdims, 100.0, "percentile")


quantile = _reduction("jnp.quantile", _quantile, np.quantile)
percentile = _reduction("jnp.percentile", _percentile, np.percentile)


def _sorted_for_q(ar, method):
    """The values sorted along the last axis for the ``q`` derivative: a slice
    holding a NaN is all NaN for ``"linear"`` (JAX: NaN) and all 0 for the other
    methods, whose weights do not depend on ``q`` (JAX: 0)."""
    return where(_nan_slices(ar), np.nan if method == "linear" else 0, sort(ar, axis=-1))


def _def_quantile_rules(prim, scale):
    """The rules of ``quantile`` (``scale`` 1.0) and ``percentile`` (100.0, ``q``
    in percent): weighted sums of the sorted values, with weights (and their
    derivatives in ``q``) from ``ad.quantile_weights`` / ``ad.quantile_dweights``."""

    def vjp_a(g, ans, a, q, axis=None, method="linear", *, interpolation=None):  # fmt: skip
        ar = group_last(a, axis)
        w = quantile_weights(q, ar, interpolation or method, scale)
        g_flat = reshape(g, (-1,) + np.shape(ar)[:-1])
        g_sorted = tensordot(g_flat, reshape(w, (-1, np.shape(ar)[-1])), ((0,), (0,)))
        g_sorted = where(_nan_slices(ar), 0, g_sorted)
        return ungroup_last(take_along_axis(g_sorted, argsort(argsort(ar, -1), -1), -1), a, axis)

    def jvp_a(t, ans, a, q, axis=None, method="linear", *, interpolation=None):  # fmt: skip
        ar = group_last(a, axis)
        t_sorted = take_along_axis(group_last(t, axis), argsort(ar, -1), -1)
        t_sorted = where(_nan_slices(ar), 0, t_sorted)
        w = quantile_weights(q, ar, interpolation or method, scale)
        return reshape(tensordot(w, t_sorted, ((-1,), (-1,))), np.shape(ans))

    def vjp_q(g, ans, a, q, axis=None, method="linear", *, interpolation=None):  # fmt: skip
        ar = group_last(a, axis)
        dw = quantile_dweights(q, ar, interpolation or method, scale)
        d = tensordot(dw, _sorted_for_q(ar, interpolation or method), ((-1,), (-1,)))
        return reshape(
            sum(reshape(g * reshape(d, np.shape(g)), np.shape(q) + (-1,)), axis=-1), np.shape(q)
        )

    def jvp_q(t, ans, a, q, axis=None, method="linear", *, interpolation=None):  # fmt: skip
        ar = group_last(a, axis)
        dw = quantile_dweights(q, ar, interpolation or method, scale)
        d = tensordot(dw, _sorted_for_q(ar, interpolation or method), ((-1,), (-1,)))
        return reshape(reshape(t, np.shape(q) + (1,) * (np.ndim(ar) - 1)) * d, np.shape(ans))

    prim.def_vjp(vjp_a, vjp_q)
    prim.def_jvp(jvp_a, jvp_q)


_def_quantile_rules(quantile, 1.0)
_def_quantile_rules(percentile, 100.0)


def _quantile_samples(scale):
    def samples(rng):
        return [
            ((rng.normal(size=(3, 5)), 0.3 * scale), {"axis": 1}),
            (
                (rng.normal(size=(3, 4)), np.array([0.1, 0.45, 0.85]) * scale),
                {"axis": 0, "keepdims": True},
            ),
            ((rng.normal(size=(2, 3, 4)), 0.6 * scale), {"axis": (0, 2)}),
            ((rng.normal(size=(2, 3)), np.array([0.25, 0.7]) * scale), {}),
            ((rng.normal(size=(6,)), 0.55 * scale), {"method": "nearest"}),
            ((rng.normal(size=(2, 5)), 0.4 * scale), {"axis": -1, "method": "midpoint"}),
            (
                (rng.normal(size=(2, 5)), 0.4 * scale),
                {"axis": -1, "method": "lower", "keepdims": True},
            ),
            ((rng.normal(size=(2, 5)), 0.4 * scale), {"axis": 0, "method": "higher"}),
        ]

    return samples


quantile.samples = _quantile_samples(1.0)
percentile.samples = _quantile_samples(100.0)


# ---------------------------------------------------------------------------
# lax.top_k (a partial sort: here with the other sorting reductions)


def _top_k_order(x):
    """Integer keys of ``x`` (last axis) whose ascending order is ``lax.top_k``'s
    descending order of ``x``: IEEE total order for floats (NaN first, +0 before
    -0), the values themselves for integers and bools."""
    if x.dtype.kind == "f":
        bits = x.view(np.dtype(f"i{x.dtype.itemsize}")).astype(np.int64)
        magnitude = np.int64(np.iinfo(np.dtype(f"i{x.dtype.itemsize}")).max)
        return ~(bits ^ ((bits >> np.int64(8 * x.dtype.itemsize - 1)) & magnitude))
    return ~(x.astype(np.int8) if x.dtype == np.bool_ else x)


def top_k_indices(x, k):
    """Int32 indices of ``lax.top_k(x, k)`` along the last axis of the array
    ``x`` (ties to the lower index). NumPy helper, shared with ``srcjax.random``."""
    return np.argsort(_top_k_order(x), axis=-1, kind="stable")[..., :k].astype(np.int32)


def _top_k(operand, k, *, axis=-1):
    """The ``k`` largest entries along ``axis`` (the last by default) and their
    indices (jax.lax.top_k): ``[values, indices]`` (a list, as JAX), both of ``operand``'s shape
    with ``axis`` of size ``k``; values keep the dtype, indices are int32.
    Sorted descending (floats in IEEE total order: NaN first, ``+0`` before
    ``-0``); equal values in the order of their indices. Raises ValueError for a
    0-d operand, a negative ``k`` or one larger than the axis, TypeError for a
    non-integer ``k``. Differentiable in ``operand``: the values' cotangent goes
    to the selected entries (indices have no derivative)."""
    x = np.asarray(operand)
    k = operator.index(k)
    if x.ndim == 0:
        raise ValueError("top_k: the operand must have at least one dimension")
    ax = int(axis) % x.ndim if -x.ndim <= int(axis) < x.ndim else None
    if ax is None:
        raise ValueError(f"top_k: axis {axis} is out of bounds for {x.ndim} dimensions")
    if x.dtype.kind == "c":
        raise TypeError("top_k: complex operands have no order")
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    if k > x.shape[ax]:
        raise ValueError(
            f"k argument to top_k must be no larger than size along axis; got k={k} with "
            f"shape={list(x.shape)} and axis={ax}"
        )
    xs = np.moveaxis(x, ax, -1)
    idx = top_k_indices(xs, k)
    # a list, as JAX 0.10.2's lax.top_k returns
    return [np.moveaxis(np.take_along_axis(xs, idx, -1), -1, ax), np.moveaxis(idx, -1, ax)]


top_k = register(Primitive("lax.top_k", _top_k, kind="structural"))


def _top_k_vjp(g, ans, operand, *, axis=-1):
    return take_along_axis_adjoint(dense_tree(g, ans)[0], operand, ans[1], axis)


def _top_k_jvp(t, ans, *, axis=-1):
    return with_first(take_along_axis(t, ans[1], axis), ans)


top_k.def_vjp(operand=_top_k_vjp)
top_k.def_jvp(operand=_top_k_jvp)
top_k.samples = lambda rng: [
    ((rng.normal(size=(6,)), 3), {}),
    ((rng.normal(size=(2, 5)), 2), {}),
    ((rng.normal(size=(4, 3)), 2), {"axis": 0}),
]
