"""``mean``, ``prod`` and ``max`` / ``min`` (ties split the cotangent equally, as
JAX does); ``sum`` is :mod:`srcjax.primitives.ad`'s.
"""

from __future__ import annotations

import math

import numpy as np

from srcjax.dtypes import to_inexact_dtype
from srcjax.primitives.ad import (
    _FAST_SUM,
    accumulate,
    default_float,
    default_int,
    expand_reduced,
    masked_reduction_samples,
    norm_axes,
    operand_dtype,
    own_or_accumulator,
    prod_others,
    reduction_samples,
    sum,
    with_initial,
)
from srcjax.primitives.registry import Primitive, register

from ._common import _MASK23, _quiet, _reduction

__all__ = ["mean", "prod", "max", "min", "amax", "amin", "argmax", "argmin"]

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


mean = _reduction("jnp.mean", _mean, np.mean).facts(fused_reduction="mean")


def _mean_scale(ans, x, axis=None, keepdims=False, where=None):
    """Static: ``1 / count`` of the elements averaged into each output of
    ``mean(x, axis, keepdims=keepdims, where=where)``: a Python float without a
    mask, else an array shaped like the mean ``ans`` (the cotangent is scaled
    before it is broadcast back to ``x``: one multiplication per output, not per
    input element, and the broadcast stays a view)."""
    if where is None:
        return np.size(ans) / np.size(x) if np.size(x) else 0.0  # empty x: no cotangent
    m = np.broadcast_to(where, np.shape(x))
    # a group with nothing selected gets 1 (its cotangent is masked to zero anyway):
    # JAX's select leaves a zero there, never 0 * inf (NaN even when the loss
    # does not read that group's mean)
    count = np.sum(m, axis=axis, keepdims=keepdims, dtype=np.result_type(ans))
    return 1.0 / np.maximum(count, 1)


mean_scale = register(
    Primitive("ad.mean_scale", _mean_scale, kind="internal", differentiable=False)
).facts(pure=True, from_shapes=True, shape_only=("ans", "x"))  # (without `where`: a count)


def _mean_vjp(g, ans, x, axis=None, keepdims=False, where=None):
    return expand_reduced(g * mean_scale(ans, x, axis, keepdims, where), x, axis, keepdims, where)


def _mean_jvp(t, ans, axis=None, dtype=None, keepdims=False, where=None):
    return mean(t, axis=axis, dtype=dtype, keepdims=keepdims, where=where)


mean.def_vjp(_mean_vjp)
mean.def_jvp(_mean_jvp)
mean.samples = masked_reduction_samples


# ---------------------------------------------------------------------------
# prod


def _prod(
    x, axis=None, dtype=None, keepdims=False, where=None, promote_integers=True, initial=None
):
    """Product over ``axis`` (jax.numpy.prod); ``where``: an optional boolean mask
    broadcastable to ``x``, the product of the selected elements (1 where none
    is); ``promote_integers``: as ``sum``'s; ``initial``: a scalar each product is
    multiplied by (transformed code: :data:`times_initial` after the product).
    The gradient is exact when the input contains zeros (``d prod([4, 0]) = [0, 4]``)."""
    if initial is not None:
        return with_initial(
            np.multiply, _prod(x, axis, dtype, keepdims, where, promote_integers), initial
        )
    if dtype is None:
        dtype = own_or_accumulator(operand_dtype(x, "prod"), promote_integers)
    if where is None:
        return accumulate(np.prod, x, dtype, axis=axis, keepdims=keepdims)
    return accumulate(np.prod, x, dtype, axis=axis, keepdims=keepdims, where=where)


prod = _reduction("jnp.prod", _prod, np.prod).facts(initial_op="multiply")
sum.facts(initial_op="add")


def _plus_initial(r, initial):
    """A reduction's result plus its ``initial`` (``jnp.sum(x, initial=c)`` in
    transformed code: ``ad.plus_initial(jnp.sum(x), c)``), ``initial`` converted
    to the result's dtype as JAX does."""
    return with_initial(np.add, r, initial)


def _times_initial(r, initial):
    """A product times its ``initial`` (``jnp.prod(x, initial=c)``), as above."""
    return with_initial(np.multiply, r, initial)


plus_initial = register(Primitive("ad.plus_initial", _plus_initial, kind="internal"))
times_initial = register(Primitive("ad.times_initial", _times_initial, kind="internal"))
for _p in (plus_initial, times_initial):
    _p.facts(pure=True, static_params=frozenset({"initial"}))
    _p.samples = lambda rng: [((rng.normal(size=(2, 3)), 1.5), {}), ((rng.normal(), -2.0), {})]


def _plus_initial_vjp(g, ans, r):
    return g


def _plus_initial_jvp(t, ans, r):
    return t


def _times_initial_vjp(g, ans, r, initial):
    return times_initial(g, initial)


def _times_initial_jvp(t, ans, r, initial):
    return times_initial(t, initial)


plus_initial.def_vjp(_plus_initial_vjp)
plus_initial.def_jvp(_plus_initial_jvp)
times_initial.def_vjp(_times_initial_vjp)
times_initial.def_jvp(_times_initial_jvp)


def _fill_unselected(x, where=None, fill=1.0):
    """``x`` where the mask ``where`` (broadcastable to ``x``) is true, ``fill``
    elsewhere (``x`` itself without a mask): the operand ``prod(x, where=)``
    multiplies."""
    if where is None:
        return x
    x = np.asarray(x)
    return np.where(np.broadcast_to(where, x.shape), x, np.asarray(fill, x.dtype))


fill_unselected = register(
    Primitive("ad.fill_unselected", _fill_unselected, kind="internal")
).facts(pure=True)


def _fill_unselected_vjp(g, ans, where=None):
    return fill_unselected(g, where, 0.0)


def _fill_unselected_jvp(t, ans, where=None):
    return fill_unselected(t, where, 0.0)


fill_unselected.def_vjp(_fill_unselected_vjp)
fill_unselected.def_jvp(_fill_unselected_jvp)
fill_unselected.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), _MASK23), {}),
    ((rng.normal(size=(4, 2, 3)), _MASK23, 0.0), {}),
    ((rng.normal(size=(2, 3)), None), {}),
]


def _prod_vjp(g, ans, x, axis=None, keepdims=False, where=None):
    return expand_reduced(g, x, axis, keepdims, where) * prod_others(
        fill_unselected(x, where), axis
    )


def _prod_jvp(t, ans, x, axis=None, keepdims=False, where=None):
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


amax = _reduction("jnp.max", _max, np.max, np.amax).facts(fused_reduction="max")
amin = _reduction("jnp.min", _min, np.min, np.amin).facts(fused_reduction="min")


def _extremum_weights(ans, x, axis=None, keepdims=False, initial=None, where=None):
    """Static: d ans / d x for ``ans = max(x, axis, keepdims, initial, where)`` (or
    min), shaped like ``x``: ``1 / count`` at the selected elements equal to
    ``ans``, halved where ``initial`` ties them; zero where ``initial`` alone
    wins or nothing is selected (JAX: the zero cotangent of a reduction the loss
    does not need stays zero), NaN where ``ans`` is NaN (as JAX's 0/0)."""
    x = np.asarray(x)
    shape = x.shape
    dt = ans.dtype if isinstance(ans, (np.ndarray, np.generic)) else np.result_type(ans)
    if dt.kind not in "fc" and dt.name != "bfloat16":  # (ml_dtypes' bfloat16: kind "V")
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
