"""``interp``: piecewise-linear interpolation, row by row (``ad.interp_rows`` is
what vmap emits).
"""

from __future__ import annotations

import builtins

import numpy as np

from srcjax import dtypes as _dt
from srcjax.primitives.ad import (
    unbroadcast,
)

from ..ad.linear import def_adjoint_pair
from ._common import _internal, _rand, _structural

__all__ = ["interp"]

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


def_adjoint_pair(interp_take, interp_put)
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
