"""NaN-ignoring reductions: ``nansum``, ``nanmean``, ``nanmax``, ``nanmin``,
``nanvar``, ``nanstd``; NaN entries get a zero gradient, as in JAX.
"""

from __future__ import annotations

import warnings

import numpy as np

from srcjax.dtypes import to_inexact_dtype
from srcjax.errors import NonDifferentiableError
from srcjax.primitives.ad import (
    accumulate,
    expand_reduced,
    int_accumulator,
    sum,
    with_initial,
)
from srcjax.primitives.registry import REGISTRY, Primitive, register

from ._common import _reduction, where
from .basic import mean, mean_scale

__all__ = ["nansum", "nanmean", "nanmax", "nanmin", "nanvar", "nanstd"]

# ---------------------------------------------------------------------------
# NaN-ignoring reductions: nansum, nanmean, nanmax, nanmin, nanvar, nanstd. Each
# is its reduction over the elements that are not NaN (a ``where=`` mask in the
# rules); NaN entries get a zero gradient, as in JAX.

isnan = REGISTRY["jnp.isnan"]
logical_not = REGISTRY["jnp.logical_not"]
maximum = REGISTRY["jnp.maximum"]


def _no_out(out, name):
    if out is not None:
        raise NotImplementedError(f"jnp.{name}: the out argument is not supported (JAX)")


def _nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None):
    """Sum over ``axis`` treating NaN as zero (jax.numpy.nansum).

    ``axis``: None (all), int or tuple. Shape: ``a``'s without the reduced axes
    (kept as 1 with ``keepdims``). Dtype: as :func:`sum` (bool/int accumulate in
    the default int). An all-NaN slice sums to 0. Gradient: that of ``sum`` on
    the non-NaN entries, zero on the NaN ones. ``initial``: added to each sum.
    ``out=`` raises ``NotImplementedError``."""
    _no_out(out, "nansum")
    if initial is not None:
        return with_initial(np.add, _nansum(a, axis, dtype, None, keepdims), initial)
    if dtype is None:
        dtype = int_accumulator(np.result_type(a))
    return np.asarray(accumulate(np.nansum, a, dtype, axis=axis, keepdims=keepdims))[()]


def _nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Mean over ``axis`` of the entries that are not NaN (jax.numpy.nanmean).

    Shape as :func:`nansum`; bool/int inputs give the default float (float32
    unless x64). An all-NaN slice gives NaN (no warning). Gradient: ``1/count``
    on the non-NaN entries, zero on the NaN ones. ``out=`` raises
    ``NotImplementedError``."""
    _no_out(out, "nanmean")
    if dtype is None and np.result_type(a).kind in "biu":
        dtype = to_inexact_dtype(np.result_type(a))
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(accumulate(np.nanmean, a, dtype, axis=axis, keepdims=keepdims))[()]


def _nan_extremum(fn, a, axis, keepdims):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(fn(a, axis=axis, keepdims=keepdims))[()]


def _nanmax(a, axis=None, out=None, keepdims=False):
    """Maximum over ``axis`` ignoring NaN (jax.numpy.nanmax); NaN for an all-NaN
    slice (no warning). Shape as :func:`nansum`, dtype that of ``a``. Gradient:
    split equally among tied maxima, zero on NaN entries. ``out=`` raises
    ``NotImplementedError``."""
    _no_out(out, "nanmax")
    return _nan_extremum(np.nanmax, a, axis, keepdims)


def _nanmin(a, axis=None, out=None, keepdims=False):
    """Minimum over ``axis`` ignoring NaN (jax.numpy.nanmin); otherwise as
    :func:`_nanmax` (the gradient split among tied minima)."""
    _no_out(out, "nanmin")
    return _nan_extremum(np.nanmin, a, axis, keepdims)


def _nan_moment(fn, a, axis, dtype, ddof, keepdims):
    if dtype is None and np.result_type(a).kind in "biu":
        dtype = to_inexact_dtype(np.result_type(a))
    with np.errstate(divide="ignore", invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(accumulate(fn, a, dtype, axis=axis, ddof=ddof, keepdims=keepdims))[()]


def _nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance over ``axis`` of the entries that are not NaN, with ``ddof``
    degrees of freedom removed from their count (jax.numpy.nanvar).

    Shape as :func:`nansum`; bool/int inputs give the default float. NaN where
    ``count - ddof <= 0``. Gradient: ``2 (a - nanmean) / (count - ddof)`` on the
    non-NaN entries, zero on the NaN ones. ``out=`` raises
    ``NotImplementedError``."""
    _no_out(out, "nanvar")
    return _nan_moment(np.nanvar, a, axis, dtype, ddof, keepdims)


def _nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Standard deviation over ``axis`` of the entries that are not NaN
    (jax.numpy.nanstd): ``sqrt(nanvar)``. Same shapes, dtypes and errors as
    :func:`nanvar`; the gradient is NaN at a constant slice (as ``std``) and
    zero on NaN entries."""
    _no_out(out, "nanstd")
    return _nan_moment(np.nanstd, a, axis, dtype, ddof, keepdims)


nansum = _reduction("jnp.nansum", _nansum, np.nansum).facts(initial_op="add")
nanmean = _reduction("jnp.nanmean", _nanmean, np.nanmean)
nanmax = _reduction("jnp.nanmax", _nanmax, np.nanmax)
nanmin = _reduction("jnp.nanmin", _nanmin, np.nanmin)
nanvar = _reduction("jnp.nanvar", _nanvar, np.nanvar)
nanstd = _reduction("jnp.nanstd", _nanstd, np.nanstd)


def _nansum_vjp(g, ans, a, axis=None, keepdims=False):
    return expand_reduced(g, a, axis, keepdims, logical_not(isnan(a)))


def _nansum_jvp(t, ans, a, axis=None, dtype=None, keepdims=False):
    return sum(t, axis=axis, dtype=dtype, keepdims=keepdims, where=logical_not(isnan(a)))


def _nanmean_vjp(g, ans, a, axis=None, keepdims=False):
    ok = logical_not(isnan(a))
    return expand_reduced(g * mean_scale(ans, a, axis, keepdims, ok), a, axis, keepdims, ok)


def _nanmean_jvp(t, ans, a, axis=None, dtype=None, keepdims=False):
    return mean(t, axis=axis, dtype=dtype, keepdims=keepdims, where=logical_not(isnan(a)))


def _nan_extremum_vjp(g, ans, a, axis=None, keepdims=False):
    hit = a == expand_reduced(ans, a, axis, keepdims)
    count = maximum(sum(hit, axis=axis, dtype=ans.dtype, keepdims=keepdims), 1.0)
    return expand_reduced(g / count, a, axis, keepdims) * hit


def _nan_extremum_jvp(t, ans, a, axis=None, keepdims=False):
    hit = a == expand_reduced(ans, a, axis, keepdims)
    count = maximum(sum(hit, axis=axis, dtype=ans.dtype, keepdims=keepdims), 1.0)
    return sum(t, axis=axis, keepdims=keepdims, where=hit) / count


def _nan_deviation(a, axis, ddof):
    """``where(isnan(a), 0, a - nanmean(a)) / (count - ddof)`` along ``axis``
    (kept axes): the gradient of ``nanvar`` divided by 2."""
    if np.iscomplexobj(a):
        raise NonDifferentiableError(
            "srcjax: derivatives of jnp.nanvar / jnp.nanstd of complex values are not "
            "supported yet",
            hint="use jnp.var / jnp.std on the non-NaN entries",
        )
    # (the implementations: generated code calls this on buffers and expects
    # buffers back, not the Arrays the public functions return)
    ok = logical_not.impl(isnan.impl(a))
    dev = where.impl(ok, a - nanmean.impl(a, axis=axis, keepdims=True), 0.0)
    return dev / (sum.impl(ok, axis=axis, dtype=dev.dtype, keepdims=True) - ddof)


nan_deviation = register(
    Primitive("ad.nan_deviation", _nan_deviation, kind="internal", differentiable=True)
)


def _nan_deviation_vjp(h, ans, a, axis, ddof):
    # d dev_i / d a_j = ok_i (delta_ij - ok_j / count) / (count - ddof)
    ok = logical_not(isnan(a))
    hs = where(ok, h, 0.0)
    n = sum(ok, axis=axis, dtype=ans.dtype, keepdims=True)
    return where(ok, hs - sum(hs, axis=axis, keepdims=True) / maximum(n, 1.0), 0.0) / (n - ddof)


def _nan_deviation_jvp(t, ans, a, axis, ddof):
    return nan_deviation(where(isnan(a), a, t), axis, ddof)


nan_deviation.def_vjp(_nan_deviation_vjp)
nan_deviation.def_jvp(_nan_deviation_jvp)


def _nanvar_vjp(g, ans, a, axis=None, ddof=0, keepdims=False):
    return expand_reduced(g, a, axis, keepdims) * (2.0 * nan_deviation(a, axis, ddof))


def _nanvar_jvp(t, ans, a, axis=None, ddof=0, keepdims=False):
    return 2.0 * sum(
        t * nan_deviation(a, axis, ddof), axis=axis, keepdims=keepdims, where=logical_not(isnan(a))
    )


def _nanstd_vjp(g, ans, a, axis=None, ddof=0, keepdims=False):
    return expand_reduced(g / ans, a, axis, keepdims) * nan_deviation(a, axis, ddof)


def _nanstd_jvp(t, ans, a, axis=None, ddof=0, keepdims=False):
    dev = nan_deviation(a, axis, ddof)
    return sum(t * dev, axis=axis, keepdims=keepdims, where=logical_not(isnan(a))) / ans


nansum.def_vjp(_nansum_vjp)
nansum.def_jvp(_nansum_jvp)
nanmean.def_vjp(_nanmean_vjp)
nanmean.def_jvp(_nanmean_jvp)
nanmax.def_vjp(_nan_extremum_vjp)
nanmax.def_jvp(_nan_extremum_jvp)
nanmin.def_vjp(_nan_extremum_vjp)
nanmin.def_jvp(_nan_extremum_jvp)
nanvar.def_vjp(_nanvar_vjp)
nanvar.def_jvp(_nanvar_jvp)
nanstd.def_vjp(_nanstd_vjp)
nanstd.def_jvp(_nanstd_jvp)


def _with_nans(x, rng):
    """``x`` with about a quarter of its entries NaN (the first entry kept)."""
    x = np.array(x, dtype=float)
    flat = x.reshape(-1)
    flat[1:][rng.uniform(size=flat.size - 1) < 0.25] = np.nan
    return x


def _nan_samples(rng, ddof=False):
    out = []
    for axis, keepdims in [(None, False), (0, False), (-1, True), ((0, 2), False)]:
        x = rng.normal(size=(3, 3, 4))
        x[0, 1, 2] = x[1, 0, 3] = np.nan
        out.append(((x,), {"axis": axis, "keepdims": keepdims}))
    y = rng.normal(size=(3, 5))
    y[:, 1] = np.nan
    y[2, 3] = np.nan
    out.append(((y,), {"axis": 1}))
    out.append(((_with_nans(rng.normal(size=(6,)), rng),), {}))
    if ddof:
        out.append(((y,), {"axis": 1, "ddof": 1}))
    return out


nansum.samples = _nan_samples
nanmean.samples = _nan_samples
nanmax.samples = _nan_samples
nanmin.samples = _nan_samples
nanvar.samples = lambda rng: _nan_samples(rng, ddof=True)
nanstd.samples = lambda rng: _nan_samples(rng, ddof=True)
nan_deviation.samples = lambda rng: [
    ((_nan_samples(rng)[4][0][0], 1, 0), {}),
    ((_nan_samples(rng)[1][0][0], 0, 1), {}),
    ((rng.normal(size=(2, 3)), None, 0), {}),
]
