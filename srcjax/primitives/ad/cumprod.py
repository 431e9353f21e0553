"""Division-free adjoints of ``cumprod`` (correct with zeros in the input):
``ad.cumprod_vjp`` and ``ad.cumprod_jvp``.
"""

from __future__ import annotations

import builtins

import numpy as np

from ._common import _internal
from .linear import def_transpose_pair
from .shapes import expand_dims, moveaxis, triu
from .static import (
    _group_last,
    _last_onehot,
    _ungroup_last,
    eye_mask,
    group_last,
    ungroup_last,
)
from .sums import sum

# ---------------------------------------------------------------------------
# cumprod adjoints, division-free (correct with zeros in the input)
#
# For y = cumprod(x) along an int axis, let M[i, k] = prod_{j <= k, j != i} x_j
# for k >= i (else 0). Then
#   ad.cumprod_vjp(g, x, axis)_i = sum_k M[i, k] g_k          (J^T g)
#   ad.cumprod_jvp(t, x, axis)_k = sum_i M[i, k] t_i          (J t)
# The impls are O(n): a division formula when x has no zeros, else a linear
# recurrence. The rules w.r.t. x use the O(n^2) matrix form (M is the upper
# triangle of cumprods of "x with x_i replaced by 1"), so every order of
# derivative stays exact.


#: a float scan along an axis of at most this length runs as one ufunc call per
#: position (:func:`_scan`) when the other axes hold at least
#: ``_SHORT_REST`` elements per position
_SHORT_AXIS = 64
_SHORT_REST = 32


def _scan(op, a, axis):
    """``op.accumulate(a, axis)`` (``np.multiply`` / ``np.add``), the same
    sequential results bit for bit. NumPy's accumulate walks a short axis
    innermost, one tiny inner loop per row: a (64, 6, 6, 6) float32 cumprod
    along its last 6 took ~130 us, the 5 vectorized products below ~20 us
    (R7's second derivatives of ``prod``)."""
    n = a.shape[axis]
    if a.dtype.kind not in "fc" or n > _SHORT_AXIS or a.size < _SHORT_REST * n:
        return op.accumulate(a, axis=axis)
    out = np.array(a)  # (a fresh C-ordered copy; broadcast views materialized)
    index = [slice(None)] * a.ndim
    prev = None
    for j in range(n):
        index[axis] = j
        cur = out[tuple(index)]
        if prev is not None:
            op(prev, cur, out=cur)
        prev = cur
    return out


def _excl_cumprod(xm):
    """Exclusive cumprod along axis 0: P_0 = 1, P_i = prod_{j<i} x_j."""
    p = np.empty_like(xm)
    p[0] = 1
    if xm.shape[0] > 1:
        np.cumprod(xm[:-1], axis=0, out=p[1:])
    return p


def _cumprod_vjp(g, x, axis):
    """``J^T g`` for ``J`` the Jacobian of ``cumprod(x, axis)`` (``axis`` an int)."""
    x = np.asarray(x)
    g = np.asarray(g)
    dtype = np.result_type(g, x)
    if x.size == 0:
        return np.zeros(x.shape, dtype)
    if np.all(x != 0):
        y = _scan(np.multiply, x, axis)
        r = np.flip(_scan(np.add, np.flip(g * y, axis), axis), axis)
        return (r / x).astype(dtype, copy=False)
    xm = np.moveaxis(x, axis, 0).astype(dtype)
    gm = np.moveaxis(np.broadcast_to(g, x.shape), axis, 0).astype(dtype)
    n = xm.shape[0]
    acc = np.empty_like(gm)
    acc[n - 1] = gm[n - 1]
    for i in range(n - 2, -1, -1):
        acc[i] = gm[i] + xm[i + 1] * acc[i + 1]
    return np.moveaxis(_excl_cumprod(xm) * acc, 0, axis)


def _cumprod_jvp(t, x, axis):
    """``J t`` for ``J`` the Jacobian of ``cumprod(x, axis)`` (``axis`` an int)."""
    x = np.asarray(x)
    t = np.asarray(t)
    dtype = np.result_type(t, x)
    if x.size == 0:
        return np.zeros(x.shape, dtype)
    if np.all(x != 0):
        y = _scan(np.multiply, x, axis)
        return (y * _scan(np.add, t / x, axis)).astype(dtype, copy=False)
    xm = np.moveaxis(x, axis, 0).astype(dtype)
    tm = np.moveaxis(np.broadcast_to(t, x.shape), axis, 0).astype(dtype)
    p = _excl_cumprod(xm)
    s = np.empty_like(tm)
    s[0] = tm[0]
    for k in range(1, xm.shape[0]):
        s[k] = s[k - 1] * xm[k] + p[k] * tm[k]
    return np.moveaxis(s, 0, axis)


cumprod_vjp = _internal("ad.cumprod_vjp", _cumprod_vjp).facts(pure=True)
cumprod_jvp = _internal("ad.cumprod_jvp", _cumprod_jvp).facts(pure=True)


def _cumprod_vjp_vjp_x(h, ans, g, x, axis):
    xm = moveaxis(x, axis, -1)
    off = 1.0 - eye_mask(np.shape(xm)[-1])
    big_x = expand_dims(xm, -2) * off + (1.0 - off)
    c_bar = triu(expand_dims(moveaxis(h, axis, -1), -1) * expand_dims(moveaxis(g, axis, -1), -2))
    x_bar = cumprod_vjp(c_bar, big_x, -1) * off
    return moveaxis(sum(x_bar, axis=-2), -1, axis)


def _cumprod_vjp_jvp_x(t, ans, g, x, axis):
    xm = moveaxis(x, axis, -1)
    off = 1.0 - eye_mask(np.shape(xm)[-1])
    big_x = expand_dims(xm, -2) * off + (1.0 - off)
    d_c = triu(cumprod_jvp(expand_dims(moveaxis(t, axis, -1), -2) * off, big_x, -1))
    return moveaxis(sum(d_c * expand_dims(moveaxis(g, axis, -1), -2), axis=-1), -1, axis)


def _cumprod_jvp_vjp_x(h, ans, t, x, axis):
    xm = moveaxis(x, axis, -1)
    off = 1.0 - eye_mask(np.shape(xm)[-1])
    big_x = expand_dims(xm, -2) * off + (1.0 - off)
    c_bar = triu(expand_dims(moveaxis(t, axis, -1), -1) * expand_dims(moveaxis(h, axis, -1), -2))
    x_bar = cumprod_vjp(c_bar, big_x, -1) * off
    return moveaxis(sum(x_bar, axis=-2), -1, axis)


def _cumprod_jvp_jvp_x(dx, ans, t, x, axis):
    xm = moveaxis(x, axis, -1)
    off = 1.0 - eye_mask(np.shape(xm)[-1])
    big_x = expand_dims(xm, -2) * off + (1.0 - off)
    d_c = triu(cumprod_jvp(expand_dims(moveaxis(dx, axis, -1), -2) * off, big_x, -1))
    return moveaxis(sum(d_c * expand_dims(moveaxis(t, axis, -1), -1), axis=-2), -1, axis)


def_transpose_pair(cumprod_vjp, cumprod_jvp)  # in g and t (linear); in x:
cumprod_vjp.def_vjp(x=_cumprod_vjp_vjp_x)
cumprod_vjp.def_jvp(x=_cumprod_vjp_jvp_x)
cumprod_jvp.def_vjp(x=_cumprod_jvp_vjp_x)
cumprod_jvp.def_jvp(x=_cumprod_jvp_jvp_x)


def cumprod_helper_samples(rng):
    """Samples ``(g, x, axis)`` with zeros in ``x`` (one and two zeros)."""
    x0 = rng.normal(size=(3, 4))
    x0[1, 1] = 0.0
    x1 = rng.normal(size=(4,))
    x1[0] = 0.0
    x1[2] = 0.0
    return [
        ((rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), 1), {}),
        ((rng.normal(size=(3, 4)), x0, -1), {}),
        ((rng.normal(size=(3, 4)), x0, 0), {}),
        ((rng.normal(size=(4,)), x1, 0), {}),
    ]


cumprod_vjp.samples = cumprod_helper_samples
cumprod_jvp.samples = cumprod_helper_samples


def _prod_others(x, axis):
    """For each element of ``x``, the product of the *other* elements of its
    reduction group over ``axis`` (= d prod(x, axis) / dx), without division."""
    if not np.size(x):  # an empty x has an empty derivative (no groups to scan)
        return np.zeros(np.shape(x), np.result_type(x, np.float32))
    xr = _group_last(x, axis)
    n = xr.shape[-1]
    if xr.dtype.kind in "fc" and n <= _SHORT_AXIS and np.all(xr != 0):
        # no zeros: the group's product over each element, the value of
        # _cumprod_vjp's division formula without its scans and flips (R7's
        # prod_others of the (64, 6, 6) masked stack: ~32 us -> ~10 us)
        total = xr[..., 0]
        for j in range(1, n):
            total = total * xr[..., j]
        return _ungroup_last(total[..., None] / xr, x, axis)
    return _ungroup_last(_cumprod_vjp(_last_onehot(xr), xr, -1), x, axis)


prod_others = _internal("ad.prod_others", _prod_others).facts(pure=True)


def _others_of_others(x, axis):
    """For the rules of ``prod_others``, with ``xr = group_last(x, axis)`` of
    shape ``(..., n)``: ``po[..., i, k] = prod_{j != i, k} xr_j`` for ``k != i``
    and 0 on the diagonal (``prod_others`` of row ``i`` of ``xr`` with ``xr_i``
    set to 1, masked). Division free; built from ``x`` alone, so a batch of
    tangents or cotangents (jacfwd, hessian) shares it: the rules were
    ``cumprod_jvp``/``cumprod_vjp`` of the tangent times that masked stack,
    computed once per basis column (R7, 1.6x its step)."""
    xr = group_last(x, axis)
    off = 1.0 - eye_mask(np.shape(xr)[-1])
    big_x = expand_dims(xr, -2) * off + (1.0 - off)
    return prod_others(big_x, -1) * off


def _prod_others_vjp(h, ans, x, axis):
    # x_bar_k = sum_{i != k} h_i prod_{j != i, k} x_j
    po = _others_of_others(x, axis)
    return ungroup_last(sum(expand_dims(group_last(h, axis), -1) * po, axis=-2), x, axis)


def _prod_others_jvp(t, ans, x, axis):
    # dot_i = sum_{k != i} t_k prod_{j != i, k} x_j
    po = _others_of_others(x, axis)
    return ungroup_last(sum(po * expand_dims(group_last(t, axis), -2), axis=-1), x, axis)


prod_others.def_vjp(_prod_others_vjp)
prod_others.def_jvp(_prod_others_jvp)


def _prod_others_samples(rng):
    x = rng.normal(size=(3, 4))
    x[0, 1] = 0.0
    y = rng.normal(size=(2, 3, 2))
    y[1, 1, 1] = 0.0
    y[1, 2, 1] = 0.0
    return [((x, 1), {}), ((x, None), {}), ((y, (0, 2)), {}), ((rng.normal(size=(4,)), 0), {})]


prod_others.samples = _prod_others_samples

_builtin_sum = builtins.sum
