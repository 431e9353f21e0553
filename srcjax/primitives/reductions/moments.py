"""``var`` and ``std`` (complex ``x``: ``var = mean |x - m|^2``)."""

from __future__ import annotations

import math

import numpy as np

from srcjax.dtypes import to_inexact_dtype
from srcjax.primitives.ad import (
    accumulate,
    expand_reduced,
    is_half_float,
    masked_reduction_samples,
    operand_dtype,
    sum,
)
from srcjax.primitives.registry import Primitive, register

from ._common import _quiet, _reduction, conj, real
from .basic import mean

__all__ = ["var", "std"]

# ---------------------------------------------------------------------------
# var / std


def _var(x, axis=None, dtype=None, ddof=0, keepdims=False, where=None):
    """Variance over ``axis`` with ``ddof`` degrees of freedom removed
    (jax.numpy.var). Integer inputs give the default float. ``where``: a mask
    broadcastable to ``x``; the variance of the selected elements (NaN where no
    more than ``ddof`` are, as JAX)."""
    if dtype is None and operand_dtype(x, "var").kind in "biu":
        dtype = to_inexact_dtype(operand_dtype(x, "var"))  # JAX: int32 -> float32 also with x64
    if where is not None:
        with _quiet():
            r = accumulate(np.var, x, dtype, axis=axis, ddof=ddof, keepdims=keepdims, where=where)
        return _nan_past_masked_dof(r, x, ddof, axis, keepdims, where)
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


def _selected_count(x, axis, keepdims, where, dtype):
    """The number of elements ``where`` selects into each output of a reduction."""
    m = np.broadcast_to(where, np.shape(x))
    return np.sum(m, axis=axis, keepdims=keepdims, dtype=dtype)


def _nan_past_masked_dof(r, x, ddof, axis, keepdims, where):
    """``r`` NaN where no more than ``ddof`` elements are selected (as JAX)."""
    d = _selected_count(x, axis, keepdims, where, np.int64) - ddof
    return np.where(d > 0, r, np.asarray(np.nan, np.result_type(r)))


def _std(x, axis=None, dtype=None, ddof=0, keepdims=False, where=None):
    """Standard deviation over ``axis`` (jax.numpy.std); ``where``: as ``var``'s.
    Gradient at a constant input is NaN, as in JAX."""
    if dtype is None and operand_dtype(x, "std").kind in "biu":
        dtype = to_inexact_dtype(operand_dtype(x, "std"))  # JAX: int32 -> float32 also with x64
    dt = operand_dtype(x, "std") if dtype is None else np.dtype(dtype)
    if is_half_float(dt):  # JAX: sqrt of the variance rounded to 16 bits
        return np.sqrt(_var(x, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where))
    if where is not None:
        with _quiet():
            r = accumulate(np.std, x, dtype, axis=axis, ddof=ddof, keepdims=keepdims, where=where)
        return _nan_past_masked_dof(r, x, ddof, axis, keepdims, where)
    if np.size(x) and not ddof:
        return accumulate(np.std, x, dtype, axis=axis, ddof=ddof, keepdims=keepdims)
    with _quiet():
        r = accumulate(np.std, x, dtype, axis=axis, ddof=ddof, keepdims=keepdims)
    return _nan_past_dof(r, x, ddof)


var = _reduction("jnp.var", _var, np.var)
std = _reduction("jnp.std", _std, np.std)


def _dof_scale(num, x, ans, ddof, axis=None, keepdims=False, where=None):
    """Static: ``num / (n - ddof)`` for ``n`` elements reduced into each output of
    ``var``/``std`` (``ans``): NaN when ``n == ddof`` (the variance is NaN
    there, and so is JAX's gradient), -0.0 when ``n < ddof`` (JAX's cotangent
    through its ``where``), 0 for an empty ``x`` (no cotangent). With a ``where``
    mask, ``n`` is each output's selected count: an array shaped like ``ans``."""
    if where is not None:
        d = _selected_count(x, axis, keepdims, where, np.result_type(ans)) - ddof
        with _quiet():
            q = num / np.where(d > 0, d, 1)
        return np.where(d > 0, q, np.where(d == 0, np.nan, -0.0)).astype(np.result_type(ans))
    if not np.size(x):
        return 0.0
    d = np.size(x) / np.size(ans) - ddof
    if d < 0:  # JAX: the cotangent of where(n - ddof > 0, ., nan), 0 / (n - ddof)
        return math.copysign(0.0, num / d)
    return num / d if d else math.nan


dof_scale = register(
    Primitive("ad.dof_scale", _dof_scale, kind="internal", differentiable=False)
).facts(pure=True, from_shapes=True, shape_only=("x", "ans"))  # (without `where`: a number)


# complex x: var = mean |x - m|^2, so d var = 2 re(conj(x - m) dx) / (n - ddof) and the
# adjoint (JAX's pairing re(g t)) is 2 g conj(x - m) / (n - ddof); conj and re are
# no-ops for real x; with where=, the mean and the counts are the selected elements'
# and the unselected elements get no cotangent (expand_reduced's mask)


def _var_vjp(g, ans, x, axis=None, ddof=0, keepdims=False, where=None):
    scale = dof_scale(2.0, x, ans, ddof, axis, keepdims, where)
    return expand_reduced(g * scale, x, axis, keepdims, where) * (
        conj(x - mean(x, axis=axis, keepdims=True, where=where))
    )


def _var_jvp(t, ans, x, axis=None, ddof=0, keepdims=False, where=None):
    dev = conj(x - mean(x, axis=axis, keepdims=True, where=where))
    scale = dof_scale(2.0, x, ans, ddof, axis, keepdims, where)
    return real(sum(t * dev, axis=axis, keepdims=keepdims, where=where)) * scale


def _std_vjp(g, ans, x, axis=None, ddof=0, keepdims=False, where=None):
    scale = dof_scale(1.0, x, ans, ddof, axis, keepdims, where)
    return expand_reduced(g / ans * scale, x, axis, keepdims, where) * conj(
        x - mean(x, axis=axis, keepdims=True, where=where)
    )


def _std_jvp(t, ans, x, axis=None, ddof=0, keepdims=False, where=None):
    dev = conj(x - mean(x, axis=axis, keepdims=True, where=where))
    scale = dof_scale(1.0, x, ans, ddof, axis, keepdims, where)
    return real(sum(t * dev, axis=axis, keepdims=keepdims, where=where)) * scale / ans


var.def_vjp(_var_vjp)
var.def_jvp(_var_jvp)
std.def_vjp(_std_vjp)
std.def_jvp(_std_jvp)


def _var_samples(rng):
    out = masked_reduction_samples(rng)
    out += [((rng.normal(size=(3, 4)),), {"axis": 1, "ddof": 1})]
    return out


var.samples = _var_samples
std.samples = _var_samples
