"""Reduction primitives: sum, mean, prod, max, min, var, std, cumsum, ...

Every reduction takes ``axis`` (None, int, negative int or tuple) and
``keepdims`` like :mod:`jax.numpy`. Gradient conventions follow JAX:

- ``max``/``min`` split the cotangent equally among tied extrema;
- ``prod`` and ``cumprod`` gradients are exact with zeros in the input (no
  division by ``x``);
- ``std`` of a constant input has a NaN gradient (``sqrt`` at 0), ``var`` a zero
  one;
- ``argmax``/``argmin`` pick the first of tied extrema; they are not
  differentiable.
"""

from __future__ import annotations

import numpy as np

from srcjax.primitives import elementwise as _ew  # noqa: F401  (registers jnp.exp, ...)
from srcjax.primitives.ad import (
    axis_or_zero,
    cumprod_jvp,
    cumprod_vjp,
    default_float,
    default_int,
    expand_reduced,
    flatten_if_none,
    group_last,
    int_accumulator,
    prod_others,
    reduction_samples,
    reshape,
    sum,
    ungroup_last,
)
from srcjax.primitives.registry import REGISTRY, Primitive, register
from srcjax.primitives.structural import argsort, expand_dims, flip, take_along_axis

__all__ = [
    "sum",
    "mean",
    "prod",
    "max",
    "min",
    "amax",
    "amin",
    "argmax",
    "argmin",
    "var",
    "std",
    "cumsum",
    "cumprod",
    "all",
    "any",
    "count_nonzero",
    "median",
]

exp = REGISTRY["jnp.exp"]


def _reduction(public, impl, *aliases, differentiable=True):
    return register(
        Primitive(public, impl, kind="reduction", differentiable=differentiable), *aliases
    )


# ---------------------------------------------------------------------------
# mean


def _mean(x, axis=None, dtype=None, keepdims=False):
    """Arithmetic mean over ``axis`` (jax.numpy.mean). Integer and bool inputs
    give the default float (float32 unless x64)."""
    if dtype is None and np.result_type(x).kind in "biu":
        dtype = default_float()
    return np.mean(x, axis=axis, dtype=dtype, keepdims=keepdims)


mean = _reduction("jnp.mean", _mean, np.mean)


def _mean_vjp(g, ans, x, axis=None, dtype=None, keepdims=False):
    return expand_reduced(g, x, axis, keepdims) * (np.size(ans) / np.size(x))


def _mean_jvp(t, ans, x, axis=None, dtype=None, keepdims=False):
    return mean(t, axis=axis, dtype=dtype, keepdims=keepdims)


mean.def_vjp(_mean_vjp)
mean.def_jvp(_mean_jvp)
mean.samples = reduction_samples


# ---------------------------------------------------------------------------
# prod


def _prod(x, axis=None, dtype=None, keepdims=False):
    """Product over ``axis`` (jax.numpy.prod). The gradient is exact when the
    input contains zeros (``d prod([4, 0]) = [0, 4]``)."""
    if dtype is None:
        dtype = int_accumulator(np.result_type(x))
    return np.prod(x, axis=axis, dtype=dtype, keepdims=keepdims)


prod = _reduction("jnp.prod", _prod, np.prod)


def _prod_vjp(g, ans, x, axis=None, dtype=None, keepdims=False):
    return expand_reduced(g, x, axis, keepdims) * prod_others(x, axis)


def _prod_jvp(t, ans, x, axis=None, dtype=None, keepdims=False):
    return sum(t * prod_others(x, axis), axis=axis, keepdims=keepdims)


prod.def_vjp(_prod_vjp)
prod.def_jvp(_prod_jvp)


def _prod_samples(rng):
    out = reduction_samples(rng)
    z = rng.normal(size=(3, 4))
    z[1, 2] = 0.0
    z[0, 0] = 0.0
    z[0, 3] = 0.0
    out += [((z,), {"axis": 1}), ((z,), {"axis": 0, "keepdims": True}), ((z,), {})]
    return out


prod.samples = _prod_samples


# ---------------------------------------------------------------------------
# max / min (ties split the cotangent equally, as JAX does)


def _max(x, axis=None, keepdims=False, initial=None):
    """Maximum over ``axis`` (jax.numpy.max / amax). Gradient: split equally
    among tied maxima."""
    if initial is None:
        return np.max(x, axis=axis, keepdims=keepdims)
    return np.max(x, axis=axis, keepdims=keepdims, initial=initial)


def _min(x, axis=None, keepdims=False, initial=None):
    """Minimum over ``axis`` (jax.numpy.min / amin). Gradient: split equally
    among tied minima."""
    if initial is None:
        return np.min(x, axis=axis, keepdims=keepdims)
    return np.min(x, axis=axis, keepdims=keepdims, initial=initial)


amax = _reduction("jnp.max", _max, np.max, np.amax)
amin = _reduction("jnp.min", _min, np.min, np.amin)


def _extremum_vjp(g, ans, x, axis=None, keepdims=False, initial=None):
    hit = x == expand_reduced(ans, x, axis, keepdims)
    return (
        expand_reduced(g / sum(hit, axis=axis, dtype=x.dtype, keepdims=keepdims), x, axis, keepdims)
        * hit
    )


def _extremum_jvp(t, ans, x, axis=None, keepdims=False, initial=None):
    hit = x == expand_reduced(ans, x, axis, keepdims)
    return sum(t * hit, axis=axis, keepdims=keepdims) / sum(
        hit, axis=axis, dtype=x.dtype, keepdims=keepdims
    )


amax.def_vjp(_extremum_vjp)
amax.def_jvp(_extremum_jvp)
amin.def_vjp(_extremum_vjp)
amin.def_jvp(_extremum_jvp)
amax.samples = reduction_samples
amin.samples = reduction_samples
max = amax  # noqa: A001
min = amin  # noqa: A001


def _argmax(x, axis=None, keepdims=False):
    """Index of the first maximum (jax.numpy.argmax); int32 unless x64.
    ``axis=None`` indexes the flattened array. Not differentiable."""
    return np.argmax(x, axis=axis, keepdims=keepdims).astype(default_int())


def _argmin(x, axis=None, keepdims=False):
    """Index of the first minimum (jax.numpy.argmin); int32 unless x64.
    ``axis=None`` indexes the flattened array. Not differentiable."""
    return np.argmin(x, axis=axis, keepdims=keepdims).astype(default_int())


argmax = _reduction("jnp.argmax", _argmax, np.argmax, differentiable=False)
argmin = _reduction("jnp.argmin", _argmin, np.argmin, differentiable=False)


# ---------------------------------------------------------------------------
# var / std


def _var(x, axis=None, dtype=None, ddof=0, keepdims=False):
    """Variance over ``axis`` with ``ddof`` degrees of freedom removed
    (jax.numpy.var). Integer inputs give the default float."""
    if dtype is None and np.result_type(x).kind in "biu":
        dtype = default_float()
    return np.var(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)


def _std(x, axis=None, dtype=None, ddof=0, keepdims=False):
    """Standard deviation over ``axis`` (jax.numpy.std). Gradient at a constant
    input is NaN, as in JAX."""
    if dtype is None and np.result_type(x).kind in "biu":
        dtype = default_float()
    return np.std(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)


var = _reduction("jnp.var", _var, np.var)
std = _reduction("jnp.std", _std, np.std)


def _var_vjp(g, ans, x, axis=None, dtype=None, ddof=0, keepdims=False):
    return (expand_reduced(g, x, axis, keepdims) * (2.0 / ((np.size(x) / np.size(ans)) - ddof))) * (
        x - mean(x, axis=axis, keepdims=True)
    )


def _var_jvp(t, ans, x, axis=None, dtype=None, ddof=0, keepdims=False):
    return sum(t * (x - mean(x, axis=axis, keepdims=True)), axis=axis, keepdims=keepdims) * (
        2.0 / ((np.size(x) / np.size(ans)) - ddof)
    )


def _std_vjp(g, ans, x, axis=None, dtype=None, ddof=0, keepdims=False):
    return (
        expand_reduced(g / ans, x, axis, keepdims) * (1.0 / ((np.size(x) / np.size(ans)) - ddof))
    ) * (x - mean(x, axis=axis, keepdims=True))


def _std_jvp(t, ans, x, axis=None, dtype=None, ddof=0, keepdims=False):
    return (
        sum(t * (x - mean(x, axis=axis, keepdims=True)), axis=axis, keepdims=keepdims)
        * (1.0 / ((np.size(x) / np.size(ans)) - ddof))
        / ans
    )


var.def_vjp(_var_vjp)
var.def_jvp(_var_jvp)
std.def_vjp(_std_vjp)
std.def_jvp(_std_jvp)


def _var_samples(rng):
    out = reduction_samples(rng)
    out += [((rng.normal(size=(3, 4)),), {"axis": 1, "ddof": 1})]
    return out


var.samples = _var_samples
std.samples = _var_samples


# ---------------------------------------------------------------------------
# cumsum / cumprod


def _cumsum(a, axis=None, dtype=None):
    """Cumulative sum along ``axis`` (jax.numpy.cumsum); ``axis=None`` works on
    the flattened array. Bool/int inputs accumulate in the default int."""
    if dtype is None:
        dtype = int_accumulator(np.result_type(a))
    return np.cumsum(a, axis=axis, dtype=dtype)


def _cumprod(a, axis=None, dtype=None):
    """Cumulative product along ``axis`` (jax.numpy.cumprod); ``axis=None`` works
    on the flattened array. Gradient exact with zeros in the input."""
    if dtype is None:
        dtype = int_accumulator(np.result_type(a))
    return np.cumprod(a, axis=axis, dtype=dtype)


cumsum = _reduction("jnp.cumsum", _cumsum, np.cumsum)
cumprod = _reduction("jnp.cumprod", _cumprod, np.cumprod)


def _cumsum_vjp(g, ans, a, axis=None, dtype=None):
    return reshape(
        flip(cumsum(flip(g, axis_or_zero(axis)), axis_or_zero(axis)), axis_or_zero(axis)),
        np.shape(a),
    )


def _cumsum_jvp(t, ans, a, axis=None, dtype=None):
    return cumsum(t, axis, dtype)


def _cumprod_vjp(g, ans, a, axis=None, dtype=None):
    return reshape(cumprod_vjp(g, flatten_if_none(a, axis), axis_or_zero(axis)), np.shape(a))


def _cumprod_jvp(t, ans, a, axis=None, dtype=None):
    return cumprod_jvp(flatten_if_none(t, axis), flatten_if_none(a, axis), axis_or_zero(axis))


cumsum.def_vjp(_cumsum_vjp)
cumsum.def_jvp(_cumsum_jvp)
cumprod.def_vjp(_cumprod_vjp)
cumprod.def_jvp(_cumprod_jvp)


def _cum_samples(rng):
    z = rng.normal(size=(3, 4))
    z[1, 1] = 0.0
    z[2, 0] = 0.0
    z[2, 2] = 0.0
    return [
        ((rng.normal(size=(3, 4)),), {}),
        ((rng.normal(size=(3, 4)),), {"axis": 1}),
        ((rng.normal(size=(2, 3, 4)),), {"axis": -2}),
        ((z,), {"axis": 1}),
        ((z,), {"axis": 0}),
        ((z,), {}),
    ]


cumsum.samples = _cum_samples
cumprod.samples = _cum_samples


# ---------------------------------------------------------------------------
# logsumexp (special.logsumexp; also jax.nn.logsumexp)


def _logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """``log(sum(exp(a)))`` over ``axis``, stable for large inputs
    (jax.scipy.special.logsumexp). ``b`` and ``return_sign`` are not supported."""
    if b is not None or return_sign:
        raise NotImplementedError("srcjax logsumexp: b= and return_sign= are not supported")
    a = np.asarray(a)
    if a.dtype.kind in "biu":
        a = a.astype(default_float())
    m = np.max(a, axis=axis, keepdims=True)
    m = np.where(np.isfinite(m), m, 0).astype(a.dtype, copy=False)
    with np.errstate(divide="ignore"):
        s = np.log(np.sum(np.exp(a - m), axis=axis, keepdims=True)) + m
    if not keepdims:
        s = np.squeeze(s, axis=axis) if axis is not None else s.reshape(())
    return s


logsumexp = _reduction("special.logsumexp", _logsumexp)


def _logsumexp_vjp(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    return expand_reduced(g, a, axis, keepdims) * exp(a - expand_reduced(ans, a, axis, keepdims))


def _logsumexp_jvp(t, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    return sum(t * exp(a - expand_reduced(ans, a, axis, keepdims)), axis=axis, keepdims=keepdims)


logsumexp.def_vjp(_logsumexp_vjp)
logsumexp.def_jvp(_logsumexp_jvp)
logsumexp.samples = reduction_samples


# ---------------------------------------------------------------------------
# all / any / count_nonzero (not differentiable)


def _all(a, axis=None, keepdims=False):
    """True where all elements along ``axis`` are nonzero (jax.numpy.all)."""
    return np.all(a, axis=axis, keepdims=keepdims)


def _any(a, axis=None, keepdims=False):
    """True where any element along ``axis`` is nonzero (jax.numpy.any)."""
    return np.any(a, axis=axis, keepdims=keepdims)


def _count_nonzero(a, axis=None, keepdims=False):
    """Number of nonzero elements along ``axis`` (jax.numpy.count_nonzero); int32
    unless x64."""
    return np.asarray(np.count_nonzero(a, axis=axis, keepdims=keepdims), dtype=default_int())


all = _reduction("jnp.all", _all, np.all, differentiable=False)  # noqa: A001
any = _reduction("jnp.any", _any, np.any, differentiable=False)  # noqa: A001
count_nonzero = _reduction(
    "jnp.count_nonzero", _count_nonzero, np.count_nonzero, differentiable=False
)


# ---------------------------------------------------------------------------
# median


def _median(a, axis=None, keepdims=False):
    """Median over ``axis`` (jax.numpy.median). Gradient: to the middle element,
    or split 0.5 / 0.5 between the two middle elements for even counts."""
    a = np.asarray(a)
    if a.dtype.kind in "biu":
        a = a.astype(default_float())
    return np.median(a, axis=axis, keepdims=keepdims)


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


def _median_vjp(g, ans, a, axis=None, keepdims=False):
    ar = group_last(a, axis)
    g_sorted = expand_dims(reshape(g, np.shape(ar)[:-1]), -1) * median_weights(ar)
    return ungroup_last(take_along_axis(g_sorted, argsort(argsort(ar, -1), -1), -1), a, axis)


def _median_jvp(t, ans, a, axis=None, keepdims=False):
    ar = group_last(a, axis)
    t_sorted = take_along_axis(group_last(t, axis), argsort(ar, -1), -1)
    return reshape(sum(t_sorted * median_weights(ar), axis=-1), np.shape(ans))


median.def_vjp(_median_vjp)
median.def_jvp(_median_jvp)
median.samples = lambda rng: [
    ((rng.normal(size=(3, 5)),), {"axis": 1}),
    ((rng.normal(size=(3, 4)),), {"axis": 0, "keepdims": True}),
    ((rng.normal(size=(2, 3, 4)),), {"axis": (0, 2)}),
    ((rng.normal(size=(2, 3)),), {}),
]
