"""``logsumexp`` (``special.logsumexp``, also ``jax.nn.logsumexp``), with
``b=`` weights and ``return_sign``.
"""

from __future__ import annotations

import numpy as np

from srcjax.dtypes import result_type, to_inexact_dtype
from srcjax.primitives.ad import (
    accumulate,
    expand_reduced,
    reduction_samples,
    sum,
    unbroadcast,
)
from srcjax.primitives.nn import shifted_exp
from srcjax.primitives.registry import Primitive, register
from srcjax.primitives.setops import first_of, with_first

from ._common import _reduction

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
    fast = _finite_shift(a, axis, b, return_sign)
    if fast is not None:  # the common case, the same operations without the checks
        m = fast  # (ufunc.reduce: np.sum's reduction without its wrapper, ~1 us)
        out = np.log(np.add.reduce(np.exp(a - m), axis=axis, keepdims=True)) + m
        if not keepdims:
            out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
        return out
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


_F32 = np.dtype(np.float32)


def _finite_shift(a, axis, b, return_sign):
    """The max of ``a`` over ``axis`` (kept) when logsumexp's general path would
    compute just ``log(sum(exp(a - max))) + max``: no ``b``, no sign, a float32
    array (its result dtype whatever x64 says) with finite maxima (so the sum is at
    least 1: no log of 0, no NaN, nothing to check); else None."""
    if b is not None or return_sign or type(a) is not np.ndarray or a.dtype != _F32:
        return None
    if not a.size:
        return None
    m = np.maximum.reduce(a, axis=axis, keepdims=True)  # (np.max without its wrapper)
    return m if np.isfinite(m).all() else None


def _lse_operands(a, b):
    """``a`` and ``b`` (None or an array) as arrays of their JAX inexact result dtype."""
    a = np.asarray(a)
    dt = to_inexact_dtype(result_type(a) if b is None else result_type(a, b))
    return a.astype(dt, copy=False), None if b is None else np.asarray(b, dtype=dt)


logsumexp = _reduction("special.logsumexp", _logsumexp)


def _one_if_none(b):
    """``b``, or ``1.0`` when it is None (an optional scale factor in a rule)."""
    return 1.0 if b is None else b


one_if_none = register(Primitive("ad.one_if_none", _one_if_none, kind="internal")).facts(pure=True)


def _one_if_none_vjp(h, ans):
    return h


def _one_if_none_jvp(t, ans):
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
    m = _finite_shift(a, axis, b, return_sign)
    if m is not None:  # (softmax: the sum is at least 1)
        e = np.exp(a - m)
        return e / np.add.reduce(e, axis=axis, keepdims=True)
    a, b = _lse_operands(a, b)
    e, _ = shifted_exp(a, axis, b, finite_shift=True)
    s = accumulate(np.sum, e if b is None else b * e, axis=axis, keepdims=True)
    if not return_sign and a.dtype.kind == "f":
        s = np.where(s < 0, np.inf, s)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (e / s).astype(a.dtype, copy=False)


logsumexp_weights = register(Primitive("ad.logsumexp_weights", _logsumexp_weights, kind="internal"))
logsumexp_weights.facts(pure=True)


def _logsumexp_pair(a, axis=None, keepdims=False):
    """``(logsumexp(a, axis, keepdims=keepdims), logsumexp_weights(a, axis))``
    from one max, ``exp`` and sum when logsumexp's fast path applies (a float32
    array with finite maxima), else the two calls: the same values bit for bit.
    Internal: jit pairs a logsumexp with the weights its derivative reads
    (``transforms/optimize/lse_pairs.py``), as XLA computes them once."""
    m = _finite_shift(a, axis, None, False)
    if m is None:
        return _logsumexp(a, axis, None, keepdims), _logsumexp_weights(a, axis)
    e = np.exp(a - m)
    s = np.add.reduce(e, axis=axis, keepdims=True)
    out = np.log(s) + m
    if not keepdims:
        out = np.squeeze(out, axis=axis) if axis is not None else out.reshape(())
    return out, e / s


logsumexp_pair = register(
    Primitive("ad.logsumexp_pair", _logsumexp_pair, kind="internal", differentiable=False)
)
logsumexp_pair.facts(pure=True)
logsumexp_pair.samples = lambda rng: [
    ((rng.normal(size=(2, 3)).astype(np.float32), 1, True), {}),
    ((rng.normal(size=(4,)).astype(np.float32), None, False), {}),
    ((np.array([[0.0, -np.inf], [1.0, 2.0]], np.float32), -1, False), {}),
]


# d w / d a = diag(w) - w (b w)^T and d w / d b = -w w^T along the axis, for w the
# weights (b = 1 without b: softmax's rule)
def _lse_weights_vjp(h, ans, axis=None, b=None):
    return ans * (h - one_if_none(b) * sum(h * ans, axis=axis, keepdims=True))


def _lse_weights_jvp(t, ans, axis=None, b=None):
    return ans * (t - sum(one_if_none(b) * ans * t, axis=axis, keepdims=True))


def _lse_weights_vjp_b(h, ans, axis=None, b=None):
    return unbroadcast(-ans * sum(h * ans, axis=axis, keepdims=True), b)


def _lse_weights_jvp_b(t, ans, axis=None):
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
