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

import contextlib
import math
import operator
import warnings

import numpy as np

from srcjax.dtypes import canonicalize_dtype, result_type, to_inexact_dtype
from srcjax.errors import NonDifferentiableError
from srcjax.primitives import elementwise as _ew  # noqa: F401  (registers jnp.exp, ...)
from srcjax.primitives.ad import (
    _FAST_SUM,
    accumulate,
    axis_or_zero,
    cumprod_jvp,
    cumprod_vjp,
    default_float,
    default_int,
    expand_reduced,
    flatten_if_none,
    group_last,
    int_accumulator,
    masked_reduction_samples,
    norm_axes,
    operand_dtype,
    prod_others,
    reduction_samples,
    reshape,
    sum,
    unbroadcast,
    ungroup_last,
)
from srcjax.primitives.linalg import dense_tree, tensordot
from srcjax.primitives.nn import shifted_exp
from srcjax.primitives.registry import REGISTRY, Primitive, register
from srcjax.primitives.setops import first_of, with_first
from srcjax.primitives.structural import (
    argsort,
    expand_dims,
    flip,
    sort,
    take_along_axis,
    take_along_axis_adjoint,
)

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
    "quantile",
    "percentile",
]

exp = REGISTRY["jnp.exp"]
conj = REGISTRY["jnp.conj"]
real = REGISTRY["jnp.real"]


def _reduction(public, impl, *aliases, differentiable=True):
    return register(
        Primitive(public, impl, kind="reduction", differentiable=differentiable), *aliases
    )


#: a fixed mask for the ``where=`` samples (each row keeps at least one element)
_MASK23 = np.array([[True, False, True], [False, True, True]])


@contextlib.contextmanager
def _quiet():
    """NumPy's warnings and floating-point errors off: a reduction over nothing
    (or with ``ddof >= n``) is NaN in JAX without a warning."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


# ---------------------------------------------------------------------------
# mean


def _mean(x, axis=None, dtype=None, keepdims=False, where=None):
    """Arithmetic mean over ``axis`` (jax.numpy.mean). Integer and bool inputs
    give the default float (float32 unless x64). ``where``: an optional boolean
    mask broadcastable to ``x``; the mean of the selected elements only (NaN
    where none is selected, as in JAX)."""
    if dtype is None and where is None and type(x) is np.ndarray and x.dtype in _FAST_SUM:
        # np.mean's own steps for a float array, without its checks: the sum
        # divided by the count
        if axis is None:
            n = x.size
        else:
            shape = x.shape
            n = math.prod(shape[a] for a in norm_axes(axis, len(shape)))
        if n:
            return x.sum(axis=axis, keepdims=keepdims) / n
    if dtype is None and operand_dtype(x, "mean").kind in "biu":
        dtype = to_inexact_dtype(operand_dtype(x, "mean"))  # JAX: int32 -> float32 also with x64
    if where is None and np.size(x):
        return accumulate(np.mean, x, dtype, axis=axis, keepdims=keepdims)
    with _quiet():  # NaN where nothing is averaged, without NumPy's warnings (as JAX)
        return accumulate(np.mean, x, dtype, axis=axis, keepdims=keepdims, where=where)


mean = _reduction("jnp.mean", _mean, np.mean)


def _mean_scale(ans, x, axis=None, keepdims=False, where=None):
    """Static: ``1 / count`` of the elements averaged into each output of
    ``mean(x, axis, keepdims=keepdims, where=where)``: a Python float without a
    mask, else an array broadcastable to ``x``."""
    if where is None:
        return np.size(ans) / np.size(x) if np.size(x) else 0.0  # empty x: no cotangent
    m = np.broadcast_to(where, np.shape(x))
    # a group with nothing selected gets 1 (its cotangent is masked to zero anyway):
    # JAX's select leaves a zero there, never 0 * inf (NaN even when the loss
    # does not read that group's mean)
    return 1.0 / np.maximum(np.sum(m, axis=axis, keepdims=True, dtype=np.result_type(ans)), 1)


mean_scale = register(
    Primitive("ad.mean_scale", _mean_scale, kind="internal", differentiable=False)
)


def _mean_vjp(g, ans, x, axis=None, dtype=None, keepdims=False, where=None):
    return expand_reduced(g, x, axis, keepdims, where) * mean_scale(ans, x, axis, keepdims, where)


def _mean_jvp(t, ans, x, axis=None, dtype=None, keepdims=False, where=None):
    return mean(t, axis=axis, dtype=dtype, keepdims=keepdims, where=where)


mean.def_vjp(_mean_vjp)
mean.def_jvp(_mean_jvp)
mean.samples = masked_reduction_samples


# ---------------------------------------------------------------------------
# prod


def _prod(x, axis=None, dtype=None, keepdims=False, where=None):
    """Product over ``axis`` (jax.numpy.prod); ``where``: an optional boolean mask
    broadcastable to ``x``, the product of the selected elements (1 where none
    is). The gradient is exact when the input contains zeros
    (``d prod([4, 0]) = [0, 4]``)."""
    if dtype is None:
        dtype = int_accumulator(operand_dtype(x, "prod"))
    if where is None:
        return accumulate(np.prod, x, dtype, axis=axis, keepdims=keepdims)
    return accumulate(np.prod, x, dtype, axis=axis, keepdims=keepdims, where=where)


prod = _reduction("jnp.prod", _prod, np.prod)


def _fill_unselected(x, where=None, fill=1.0):
    """``x`` where the mask ``where`` (broadcastable to ``x``) is true, ``fill``
    elsewhere (``x`` itself without a mask): the operand ``prod(x, where=)``
    multiplies."""
    if where is None:
        return x
    x = np.asarray(x)
    return np.where(np.broadcast_to(where, x.shape), x, np.asarray(fill, x.dtype))


fill_unselected = register(Primitive("ad.fill_unselected", _fill_unselected, kind="internal"))


def _fill_unselected_vjp(g, ans, x, where=None, fill=1.0):
    return fill_unselected(g, where, 0.0)


def _fill_unselected_jvp(t, ans, x, where=None, fill=1.0):
    return fill_unselected(t, where, 0.0)


fill_unselected.def_vjp(_fill_unselected_vjp)
fill_unselected.def_jvp(_fill_unselected_jvp)
fill_unselected.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), _MASK23), {}),
    ((rng.normal(size=(4, 2, 3)), _MASK23, 0.0), {}),
    ((rng.normal(size=(2, 3)), None), {}),
]


def _prod_vjp(g, ans, x, axis=None, dtype=None, keepdims=False, where=None):
    return expand_reduced(g, x, axis, keepdims, where) * prod_others(
        fill_unselected(x, where), axis
    )


def _prod_jvp(t, ans, x, axis=None, dtype=None, keepdims=False, where=None):
    return sum(
        t * prod_others(fill_unselected(x, where), axis), axis=axis, keepdims=keepdims, where=where
    )


prod.def_vjp(_prod_vjp)
prod.def_jvp(_prod_jvp)


def _prod_samples(rng):
    out = reduction_samples(rng)
    z = rng.normal(size=(3, 4))
    z[1, 2] = 0.0
    z[0, 0] = 0.0
    z[0, 3] = 0.0
    out += [((z,), {"axis": 1}), ((z,), {"axis": 0, "keepdims": True}), ((z,), {})]
    out += [((z,), {"axis": 1, "where": z[0] != 0.0}), ((z[:2, :3],), {"where": _MASK23})]
    return out


prod.samples = _prod_samples


# ---------------------------------------------------------------------------
# max / min (ties split the cotangent equally, as JAX does)


def _extremum(reduce, name, x, axis, keepdims, initial, where):
    if where is not None and initial is None:
        raise ValueError(
            f"reduction operation {name} does not have an identity, so to use a where "
            "mask one has to specify 'initial'"
        )
    kw = {}
    if initial is not None:
        kw["initial"] = initial
    if where is not None:
        kw["where"] = where
    return reduce(x, axis=axis, keepdims=keepdims, **kw)


def _max(x, axis=None, keepdims=False, initial=None, where=None):
    """Maximum over ``axis`` (jax.numpy.max / amax), at least ``initial`` when
    given; ``where``: a boolean mask broadcastable to ``x`` (needs ``initial``, as
    in JAX). Gradient: split equally among tied maxima, and half of it to
    ``initial`` when the maximum of ``x`` ties it (JAX's ``max(initial, max(x))``)."""
    if initial is None and where is None and type(x) is np.ndarray:
        return x.max(axis=axis, keepdims=keepdims)
    return _extremum(np.max, "max", x, axis, keepdims, initial, where)


def _min(x, axis=None, keepdims=False, initial=None, where=None):
    """Minimum over ``axis`` (jax.numpy.min / amin); ``initial``/``where`` and the
    gradient as :func:`_max`."""
    return _extremum(np.min, "min", x, axis, keepdims, initial, where)


amax = _reduction("jnp.max", _max, np.max, np.amax)
amin = _reduction("jnp.min", _min, np.min, np.amin)


def _extremum_weights(ans, x, axis=None, keepdims=False, initial=None, where=None):
    """Static: d ans / d x for ``ans = max(x, axis, keepdims, initial, where)`` (or
    min), shaped like ``x``: ``1 / count`` at the selected elements equal to
    ``ans``, halved where ``initial`` ties them; zero where ``initial`` alone
    wins or nothing is selected (JAX: the zero cotangent of a reduction the loss
    does not need stays zero), NaN where ``ans`` is NaN (as JAX's 0/0)."""
    x = np.asarray(x)
    shape = x.shape
    dt = ans.dtype if isinstance(ans, (np.ndarray, np.generic)) else np.result_type(ans)
    if dt.kind not in "fc":
        dt = np.dtype(default_float())
    full = np.asarray(ans)
    if not keepdims:
        axes = norm_axes(axis, len(shape))
        full = full.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))
    hit = x == full
    if where is None and initial is None:
        count = hit.sum(axis=axis, keepdims=True, dtype=dt)
        if count.all():  # the common case: no NaN, a nonempty reduction
            return np.divide(hit, count, dtype=dt)
    if where is not None:
        hit = hit & np.broadcast_to(where, shape)
    count = np.sum(hit, axis=axis, keepdims=True, dtype=dt)
    if initial is not None:
        count = count * (1 + (full == np.asarray(initial).astype(x.dtype)))
    with np.errstate(invalid="ignore"):
        w = np.where(count > 0, 1 / np.maximum(count, 1), np.where(np.isnan(full), np.nan, 0))
    return (hit * w).astype(dt, copy=False)


extremum_weights = register(
    Primitive("ad.extremum_weights", _extremum_weights, kind="internal", differentiable=False)
)


def _extremum_vjp(g, ans, x, axis=None, keepdims=False, initial=None, where=None):
    return expand_reduced(g, x, axis, keepdims) * extremum_weights(
        ans, x, axis, keepdims, initial, where
    )


def _extremum_jvp(t, ans, x, axis=None, keepdims=False, initial=None, where=None):
    return sum(
        t * extremum_weights(ans, x, axis, keepdims, initial, where), axis=axis, keepdims=keepdims
    )


amax.def_vjp(_extremum_vjp)
amax.def_jvp(_extremum_jvp)
amin.def_vjp(_extremum_vjp)
amin.def_jvp(_extremum_jvp)


def masked_extremum_samples(rng):
    """:func:`reduction_samples` plus ``initial=`` (winning in some groups) and
    ``where=`` masks."""
    x = rng.normal(size=(2, 3))
    return reduction_samples(rng) + [
        ((x,), {"axis": 1, "initial": 0.0}),
        ((rng.normal(size=(5,)),), {"initial": -0.5}),
        ((x,), {"axis": 1, "where": _MASK23, "initial": 0.0}),
        ((rng.normal(size=(4, 2, 3)),), {"axis": (0, 2), "where": _MASK23, "initial": -9.0}),
        ((x,), {"axis": 0, "where": np.array([True, False, True]), "initial": 0.0}),
    ]


amax.samples = masked_extremum_samples
amin.samples = masked_extremum_samples
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
    if dtype is None and operand_dtype(x, "var").kind in "biu":
        dtype = to_inexact_dtype(operand_dtype(x, "var"))  # JAX: int32 -> float32 also with x64
    if np.size(x) and not ddof:
        return accumulate(np.var, x, dtype, axis=axis, ddof=ddof, keepdims=keepdims)
    with _quiet():  # NaN for n <= ddof, without NumPy's warnings (as JAX)
        r = accumulate(np.var, x, dtype, axis=axis, ddof=ddof, keepdims=keepdims)
    return _nan_past_dof(r, x, ddof)


def _nan_past_dof(r, x, ddof):
    """``r`` (a ``var``/``std`` of ``x``) NaN where ``n - ddof <= 0``, as JAX
    (NumPy divides by ``max(n - ddof, 0)``: infinite)."""
    if ddof and np.size(r) and np.size(x) / np.size(r) - ddof <= 0:
        return np.full_like(r, np.nan)
    return r


def _std(x, axis=None, dtype=None, ddof=0, keepdims=False):
    """Standard deviation over ``axis`` (jax.numpy.std). Gradient at a constant
    input is NaN, as in JAX."""
    if dtype is None and operand_dtype(x, "std").kind in "biu":
        dtype = to_inexact_dtype(operand_dtype(x, "std"))  # JAX: int32 -> float32 also with x64
    if np.size(x) and not ddof:
        return accumulate(np.std, x, dtype, axis=axis, ddof=ddof, keepdims=keepdims)
    with _quiet():
        r = accumulate(np.std, x, dtype, axis=axis, ddof=ddof, keepdims=keepdims)
    return _nan_past_dof(r, x, ddof)


var = _reduction("jnp.var", _var, np.var)
std = _reduction("jnp.std", _std, np.std)


def _dof_scale(num, x, ans, ddof):
    """Static: ``num / (n - ddof)`` for ``n`` elements reduced into each output of
    ``var``/``std`` (``ans``): NaN when ``n == ddof`` (the variance is NaN
    there, and so is JAX's gradient), -0.0 when ``n < ddof`` (JAX's cotangent
    through its ``where``), 0 for an empty ``x`` (no cotangent)."""
    if not np.size(x):
        return 0.0
    d = np.size(x) / np.size(ans) - ddof
    if d < 0:  # JAX: the cotangent of where(n - ddof > 0, ., nan), 0 / (n - ddof)
        return math.copysign(0.0, num / d)
    return num / d if d else math.nan


dof_scale = register(Primitive("ad.dof_scale", _dof_scale, kind="internal", differentiable=False))


# complex x: var = mean |x - m|^2, so d var = 2 re(conj(x - m) dx) / (n - ddof) and the
# adjoint (JAX's pairing re(g t)) is 2 g conj(x - m) / (n - ddof); conj and re are
# no-ops for real x


def _var_vjp(g, ans, x, axis=None, dtype=None, ddof=0, keepdims=False):
    return (expand_reduced(g, x, axis, keepdims) * dof_scale(2.0, x, ans, ddof)) * (
        conj(x - mean(x, axis=axis, keepdims=True))
    )


def _var_jvp(t, ans, x, axis=None, dtype=None, ddof=0, keepdims=False):
    dev = conj(x - mean(x, axis=axis, keepdims=True))
    return real(sum(t * dev, axis=axis, keepdims=keepdims)) * (dof_scale(2.0, x, ans, ddof))


def _std_vjp(g, ans, x, axis=None, dtype=None, ddof=0, keepdims=False):
    return (expand_reduced(g / ans, x, axis, keepdims) * dof_scale(1.0, x, ans, ddof)) * conj(
        x - mean(x, axis=axis, keepdims=True)
    )


def _std_jvp(t, ans, x, axis=None, dtype=None, ddof=0, keepdims=False):
    dev = conj(x - mean(x, axis=axis, keepdims=True))
    return real(sum(t * dev, axis=axis, keepdims=keepdims)) * dof_scale(1.0, x, ans, ddof) / ans


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


def _cumulative_dtype(a):
    """JAX's result dtype of cumsum/cumprod without ``dtype``: integers keep
    their own (canonical) dtype (int8 stays int8, unlike ``sum``), bool
    accumulates in the default int."""
    dt = np.result_type(a)
    if dt.kind in "iu":
        return canonicalize_dtype(dt)
    return int_accumulator(dt)


def _cumsum(a, axis=None, dtype=None):
    """Cumulative sum along ``axis`` (jax.numpy.cumsum); ``axis=None`` works on
    the flattened array. Shape: ``a``'s (flattened with ``axis=None``). Dtype:
    ``dtype``, else integer inputs keep their dtype and bool accumulates in the
    default int (JAX). float16/float32 (complex64) sums accumulate in float64
    (complex128) and are rounded once: a sequential float32 scan drifts
    (``cumsum(full(10**6, 0.1, float32))[-1]`` was 100958.34; JAX's tree-shaped
    scan gives 100000.016, the truth is 100000.0015). A running sum that
    overflows the result dtype stays infinite from there on, as in a float32
    scan. Raises ``numpy.exceptions.AxisError`` for an axis out of range."""
    if dtype is None:
        dtype = _cumulative_dtype(a)
    dt = np.result_type(a) if dtype is None else np.dtype(dtype)
    if dt.kind not in "fc" or dt.itemsize >= (16 if dt.kind == "c" else 8):
        return accumulate(np.cumsum, a, dtype, axis=axis)
    wide = np.cumsum(a, axis=axis, dtype=np.complex128 if dt.kind == "c" else np.float64)
    with np.errstate(over="ignore"):
        r = wide.astype(dt)
    if dt.kind == "f":
        over = np.isinf(r) & np.isfinite(wide)
        if over.any():
            r = _sticky_overflow(r, wide, over, 0 if axis is None else axis)
    return r


def _sticky_overflow(r, wide, over, axis):
    """``r`` (the rounded running sums ``wide``) where a narrow scan's running sum
    would have become ``±inf`` at the first overflow along ``axis`` and stayed
    there: ``inf`` of the overflow's sign plus the later exact sums (NaN once
    an opposite infinity is added, as in the narrow scan)."""
    idx = np.arange(r.shape[axis]).reshape((-1,) + (1,) * (r.ndim - 1 - axis % r.ndim))
    first = np.maximum.accumulate(np.where(over, idx, -1), axis=axis)
    signed = np.take_along_axis(np.sign(wide), np.maximum(first, 0), axis=axis) * np.inf
    with np.errstate(invalid="ignore"):
        return np.where(first >= 0, (signed + wide).astype(r.dtype), r)


def _cumprod(a, axis=None, dtype=None):
    """Cumulative product along ``axis`` (jax.numpy.cumprod); ``axis=None`` works
    on the flattened array. Dtypes as :func:`_cumsum`. Gradient exact with zeros
    in the input."""
    if dtype is None:
        dtype = _cumulative_dtype(a)
    return accumulate(np.cumprod, a, dtype, axis=axis)


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
    """``log(sum(b * exp(a)))`` over ``axis``, stable for large inputs
    (jax.scipy.special.logsumexp, also jax.nn.logsumexp).

    ``b``: optional scale factors broadcastable to ``a`` (zeros drop their
    terms; negative ones are allowed). ``return_sign``: return ``(log|s|,
    sign(s))`` of ``s = sum(b * exp(a))``; without it a negative ``s`` gives NaN
    (as in JAX). Shape: ``a``'s without the reduced axes (kept as 1 with
    ``keepdims``). Dtype: JAX's inexact promotion of ``a`` and ``b`` (integers give
    the default float). Differentiable in ``a`` and ``b`` (with ``return_sign``,
    the log; the sign has no derivative). Derivatives are computed like a
    softmax (see :func:`_logsumexp_weights`), as accurate as JAX's for large
    float32 inputs."""
    a, b = _lse_operands(a, b)
    e, m = shifted_exp(a, axis, b, finite_shift=True)
    if b is not None:
        e = b * e
    s = accumulate(np.sum, e, axis=axis, keepdims=True)
    sign = np.sign(s).astype(a.dtype, copy=False)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = (np.log(np.abs(s) if return_sign else s) + m).astype(a.dtype, copy=False)
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
        sign = np.squeeze(sign, axis=axis) if axis is not None else sign.reshape(())
    return (out, sign) if return_sign else out


def _lse_operands(a, b):
    """``a`` and ``b`` (None or an array) as arrays of their JAX inexact result dtype."""
    a = np.asarray(a)
    dt = to_inexact_dtype(result_type(a) if b is None else result_type(a, b))
    return a.astype(dt, copy=False), None if b is None else np.asarray(b, dtype=dt)


logsumexp = _reduction("special.logsumexp", _logsumexp)


def _one_if_none(b):
    """``b``, or ``1.0`` when it is None (an optional scale factor in a rule)."""
    return 1.0 if b is None else b


one_if_none = register(Primitive("ad.one_if_none", _one_if_none, kind="internal"))


def _one_if_none_vjp(h, ans, b):
    return h


def _one_if_none_jvp(t, ans, b):
    return t


one_if_none.def_vjp(_one_if_none_vjp)
one_if_none.def_jvp(_one_if_none_jvp)
one_if_none.samples = lambda rng: [((rng.normal(size=(2, 3)),), {})]


def _logsumexp_weights(a, axis=None, b=None, return_sign=False):
    """``w = exp(a) / sum(b * exp(a))`` over ``axis`` (kept): the derivative of
    ``logsumexp(a, axis, b)`` in ``b`` (in ``a`` it is ``b * w``), computed like
    a softmax, ``exp(a - max) / sum(b * exp(a - max))``; ``exp(a - logsumexp)``
    carried the rounding error of a float32 logsumexp of large inputs (user A
    bug 4). Shape and dtype: ``a``'s (promoted with ``b``, inexact). Zero where ``b == 0`` and, without
    ``return_sign``, in slices whose sum is negative (logsumexp is NaN there;
    JAX's derivative is 0). Internal: the derivative rules of
    ``special.logsumexp``; with ``b=None`` it is ``nn.softmax(a, axis)``."""
    a, b = _lse_operands(a, b)
    e, _ = shifted_exp(a, axis, b, finite_shift=True)
    s = accumulate(np.sum, e if b is None else b * e, axis=axis, keepdims=True)
    if not return_sign and a.dtype.kind == "f":
        s = np.where(s < 0, np.inf, s)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (e / s).astype(a.dtype, copy=False)


logsumexp_weights = register(Primitive("ad.logsumexp_weights", _logsumexp_weights, kind="internal"))


# d w / d a = diag(w) - w (b w)^T and d w / d b = -w w^T along the axis, for w the
# weights (b = 1 without b: softmax's rule)
def _lse_weights_vjp(h, ans, a, axis=None, b=None, return_sign=False):
    return ans * (h - one_if_none(b) * sum(h * ans, axis=axis, keepdims=True))


def _lse_weights_jvp(t, ans, a, axis=None, b=None, return_sign=False):
    return ans * (t - sum(one_if_none(b) * ans * t, axis=axis, keepdims=True))


def _lse_weights_vjp_b(h, ans, a, axis=None, b=None, return_sign=False):
    return unbroadcast(-ans * sum(h * ans, axis=axis, keepdims=True), b)


def _lse_weights_jvp_b(t, ans, a, axis=None, b=None, return_sign=False):
    return -ans * sum(t * ans, axis=axis, keepdims=True)


logsumexp_weights.def_vjp(_lse_weights_vjp, b=_lse_weights_vjp_b)
logsumexp_weights.def_jvp(_lse_weights_jvp, b=_lse_weights_jvp_b)


# with return_sign, logsumexp returns (log|s|, sign): the sign has no derivative
def _logsumexp_vjp(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    return (
        expand_reduced(first_of(g, ans), a, axis, keepdims)
        * one_if_none(b)
        * logsumexp_weights(a, axis, b, return_sign)
    )


def _logsumexp_jvp(t, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    return with_first(
        sum(
            t * one_if_none(b) * logsumexp_weights(a, axis, b, return_sign),
            axis=axis,
            keepdims=keepdims,
        ),
        ans,
    )


def _logsumexp_vjp_b(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    return unbroadcast(
        expand_reduced(first_of(g, ans), a, axis, keepdims)
        * logsumexp_weights(a, axis, b, return_sign),
        b,
    )


def _logsumexp_jvp_b(t, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    return with_first(
        sum(t * logsumexp_weights(a, axis, b, return_sign), axis=axis, keepdims=keepdims), ans
    )


logsumexp.def_vjp(_logsumexp_vjp, b=_logsumexp_vjp_b)
logsumexp.def_jvp(_logsumexp_jvp, b=_logsumexp_jvp_b)
logsumexp.samples = lambda rng: (
    reduction_samples(rng)
    + [
        ((rng.normal(size=(2, 3)),), {"axis": 1, "b": rng.uniform(0.5, 2.0, size=(2, 3))}),
        ((rng.normal(size=(2, 3)),), {"b": rng.uniform(0.5, 2.0, size=(3,))}),
        (
            (rng.normal(size=(3, 4)),),
            {"axis": 0, "keepdims": True, "b": np.array([[1.0], [0.5], [2.0]])},
        ),
    ]
)
logsumexp_weights.samples = lambda rng: [
    ((rng.normal(size=(2, 3)),), {}),
    ((rng.normal(size=(2, 3)),), {"axis": 1, "b": rng.uniform(0.5, 2.0, size=(2, 3))}),
    ((rng.normal(size=(2, 3)),), {"axis": -1, "b": rng.uniform(0.5, 2.0, size=(3,))}),
    ((rng.normal(size=(3, 4)),), {"axis": 0, "b": np.array([[1.0], [-0.5], [2.0]])}),
    ((rng.normal(size=(2, 3, 2)),), {"axis": (0, 2), "return_sign": True}),
]


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
        a = a.astype(to_inexact_dtype(a.dtype))
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


def _quantile_vjp_a(
    g, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, interpolation=None,
):  # fmt: skip
    ar = group_last(a, axis)
    w = quantile_weights(q, ar, interpolation or method, 1.0)
    g_flat = reshape(g, (-1,) + np.shape(ar)[:-1])
    g_sorted = tensordot(g_flat, reshape(w, (-1, np.shape(ar)[-1])), ((0,), (0,)))
    return ungroup_last(take_along_axis(g_sorted, argsort(argsort(ar, -1), -1), -1), a, axis)


def _quantile_jvp_a(
    t, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, interpolation=None,
):  # fmt: skip
    ar = group_last(a, axis)
    t_sorted = take_along_axis(group_last(t, axis), argsort(ar, -1), -1)
    w = quantile_weights(q, ar, interpolation or method, 1.0)
    return reshape(tensordot(w, t_sorted, ((-1,), (-1,))), np.shape(ans))


def _quantile_vjp_q(
    g, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, interpolation=None,
):  # fmt: skip
    ar = group_last(a, axis)
    dw = quantile_dweights(q, ar, interpolation or method, 1.0)
    d = tensordot(dw, sort(ar, axis=-1), ((-1,), (-1,)))
    return reshape(
        sum(reshape(g * reshape(d, np.shape(g)), np.shape(q) + (-1,)), axis=-1), np.shape(q)
    )


def _quantile_jvp_q(
    t, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, interpolation=None,
):  # fmt: skip
    ar = group_last(a, axis)
    dw = quantile_dweights(q, ar, interpolation or method, 1.0)
    d = tensordot(dw, sort(ar, axis=-1), ((-1,), (-1,)))
    return reshape(reshape(t, np.shape(q) + (1,) * (np.ndim(ar) - 1)) * d, np.shape(ans))


def _percentile_vjp_a(
    g, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, interpolation=None,
):  # fmt: skip
    ar = group_last(a, axis)
    w = quantile_weights(q, ar, interpolation or method, 100.0)
    g_flat = reshape(g, (-1,) + np.shape(ar)[:-1])
    g_sorted = tensordot(g_flat, reshape(w, (-1, np.shape(ar)[-1])), ((0,), (0,)))
    return ungroup_last(take_along_axis(g_sorted, argsort(argsort(ar, -1), -1), -1), a, axis)


def _percentile_jvp_a(
    t, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, interpolation=None,
):  # fmt: skip
    ar = group_last(a, axis)
    t_sorted = take_along_axis(group_last(t, axis), argsort(ar, -1), -1)
    w = quantile_weights(q, ar, interpolation or method, 100.0)
    return reshape(tensordot(w, t_sorted, ((-1,), (-1,))), np.shape(ans))


def _percentile_vjp_q(
    g, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, interpolation=None,
):  # fmt: skip
    ar = group_last(a, axis)
    dw = quantile_dweights(q, ar, interpolation or method, 100.0)
    d = tensordot(dw, sort(ar, axis=-1), ((-1,), (-1,)))
    return reshape(
        sum(reshape(g * reshape(d, np.shape(g)), np.shape(q) + (-1,)), axis=-1), np.shape(q)
    )


def _percentile_jvp_q(
    t, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
    *, interpolation=None,
):  # fmt: skip
    ar = group_last(a, axis)
    dw = quantile_dweights(q, ar, interpolation or method, 100.0)
    d = tensordot(dw, sort(ar, axis=-1), ((-1,), (-1,)))
    return reshape(reshape(t, np.shape(q) + (1,) * (np.ndim(ar) - 1)) * d, np.shape(ans))


quantile.def_vjp(_quantile_vjp_a, _quantile_vjp_q)
quantile.def_jvp(_quantile_jvp_a, _quantile_jvp_q)
percentile.def_vjp(_percentile_vjp_a, _percentile_vjp_q)
percentile.def_jvp(_percentile_jvp_a, _percentile_jvp_q)


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
# NaN-ignoring reductions: nansum, nanmean, nanmax, nanmin, nanvar, nanstd. Each
# is its reduction over the elements that are not NaN (a ``where=`` mask in the
# rules); NaN entries get a zero gradient, as in JAX.

isnan = REGISTRY["jnp.isnan"]
logical_not = REGISTRY["jnp.logical_not"]
maximum = REGISTRY["jnp.maximum"]
where = REGISTRY["jnp.where"]


def _no_out(out, name):
    if out is not None:
        raise NotImplementedError(f"jnp.{name}: the out argument is not supported (JAX)")


def _nansum(a, axis=None, dtype=None, out=None, keepdims=False):
    """Sum over ``axis`` treating NaN as zero (jax.numpy.nansum).

    ``axis``: None (all), int or tuple. Shape: ``a``'s without the reduced axes
    (kept as 1 with ``keepdims``). Dtype: as :func:`sum` (bool/int accumulate in
    the default int). An all-NaN slice sums to 0. Gradient: that of ``sum`` on
    the non-NaN entries, zero on the NaN ones. ``out=`` raises
    ``NotImplementedError``."""
    _no_out(out, "nansum")
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
    """Minimum over ``axis`` ignoring NaN (jax.numpy.nanmin); NaN for an all-NaN
    slice (no warning). Shape as :func:`nansum`, dtype that of ``a``. Gradient:
    split equally among tied minima, zero on NaN entries. ``out=`` raises
    ``NotImplementedError``."""
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


nansum = _reduction("jnp.nansum", _nansum, np.nansum)
nanmean = _reduction("jnp.nanmean", _nanmean, np.nanmean)
nanmax = _reduction("jnp.nanmax", _nanmax, np.nanmax)
nanmin = _reduction("jnp.nanmin", _nanmin, np.nanmin)
nanvar = _reduction("jnp.nanvar", _nanvar, np.nanvar)
nanstd = _reduction("jnp.nanstd", _nanstd, np.nanstd)
__all__ += ["nansum", "nanmean", "nanmax", "nanmin", "nanvar", "nanstd"]


def _nansum_vjp(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return expand_reduced(g, a, axis, keepdims, logical_not(isnan(a)))


def _nansum_jvp(t, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return sum(t, axis=axis, dtype=dtype, keepdims=keepdims, where=logical_not(isnan(a)))


def _nanmean_vjp(g, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    ok = logical_not(isnan(a))
    return expand_reduced(g, a, axis, keepdims, ok) * mean_scale(ans, a, axis, keepdims, ok)


def _nanmean_jvp(t, ans, a, axis=None, dtype=None, out=None, keepdims=False):
    return mean(t, axis=axis, dtype=dtype, keepdims=keepdims, where=logical_not(isnan(a)))


def _nan_extremum_vjp(g, ans, a, axis=None, out=None, keepdims=False):
    hit = a == expand_reduced(ans, a, axis, keepdims)
    count = maximum(sum(hit, axis=axis, dtype=ans.dtype, keepdims=keepdims), 1.0)
    return expand_reduced(g / count, a, axis, keepdims) * hit


def _nan_extremum_jvp(t, ans, a, axis=None, out=None, keepdims=False):
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
    ok = logical_not(isnan(a))
    dev = where(ok, a - nanmean(a, axis=axis, keepdims=True), 0.0)
    return dev / (sum(ok, axis=axis, dtype=dev.dtype, keepdims=True) - ddof)


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


def _nanvar_vjp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return expand_reduced(g, a, axis, keepdims) * (2.0 * nan_deviation(a, axis, ddof))


def _nanvar_jvp(t, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return 2.0 * sum(
        t * nan_deviation(a, axis, ddof), axis=axis, keepdims=keepdims, where=logical_not(isnan(a))
    )


def _nanstd_vjp(g, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    return expand_reduced(g / ans, a, axis, keepdims) * nan_deviation(a, axis, ddof)


def _nanstd_jvp(t, ans, a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
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


def _top_k_vjp(g, ans, operand, k, *, axis=-1):
    return take_along_axis_adjoint(dense_tree(g, ans)[0], operand, ans[1], axis)


def _top_k_jvp(t, ans, operand, k, *, axis=-1):
    return with_first(take_along_axis(t, ans[1], axis), ans)


top_k.def_vjp(operand=_top_k_vjp)
top_k.def_jvp(operand=_top_k_jvp)
top_k.samples = lambda rng: [
    ((rng.normal(size=(6,)), 3), {}),
    ((rng.normal(size=(2, 5)), 2), {}),
    ((rng.normal(size=(4, 3)), 2), {"axis": 0}),
]
