"""``jnp.linalg.norm`` (vector and matrix norms); at 0 its gradient is NaN, as in JAX."""

from __future__ import annotations

import numpy as np

from srcjax import dtypes as _dt
from srcjax.errors import NonDifferentiableError
from srcjax.primitives.ad import (
    expand_reduced,
    sum,
)

from ._common import _internal, _rand
from .solve import _la

# ---------------------------------------------------------------------------
# norm


def _norm_is_matrix(x, ord, axis):
    nd = np.ndim(x)
    if axis is None:
        return nd == 2 and ord is not None
    return isinstance(axis, (tuple, list)) and len(axis) == 2


def _norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm (jax.numpy.linalg.norm). Vectors: ``ord`` None/2,
    1, inf, -inf, 0, any p; matrices (2-D, or a 2-tuple ``axis``): None/'fro',
    1, -1, inf, -inf, 2, -2, 'nuc'. ``axis=None`` with ``ord=None`` is the
    2-norm of the flattened array. The gradient at 0 is NaN, as in JAX."""
    x = np.asarray(x)
    if x.dtype.kind in "biu":
        x = x.astype(_dt.to_inexact_dtype(x.dtype))  # JAX: int32 -> float32 also with x64
    return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


norm = _la("norm", _norm, np.linalg.norm)


def _vector_p(ord):
    if ord is None or ord == 2 or ord == "fro":
        return 2.0
    if ord in (np.inf, -np.inf, "inf", "-inf"):
        return np.inf
    return float(ord)


def _no_complex_norm_derivative(x):
    if x.dtype.kind == "c":
        raise NonDifferentiableError(
            "srcjax: derivatives of jnp.linalg.norm of complex values are not supported yet",
            hint="write the norm out: jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x))))",
        )


def _norm_grad(x, nrm, ord=None, axis=None, keepdims=False):
    """``d norm(x) / d x`` given ``nrm = norm(x, ord, axis, keepdims)``.

    Vector norms: ``sign(x) |x|**(p-1) / nrm**(p-1)`` (2-norm: ``x / nrm``, NaN at
    0 as in JAX; abs'(0) = 1 in the 1/inf norms); inf / -inf: split equally among
    tied extreme entries (a zero vector's inf-norm halves that); matrix
    norms 1 / inf: that of the selected column / row; 2 / -2 / 'nuc': from the
    SVD."""
    x = np.asarray(x)
    _no_complex_norm_derivative(x)
    dt = np.result_type(x, nrm)
    n_e = _expand_reduced(nrm, x, axis, keepdims)
    if _norm_is_matrix(x, ord, axis) and ord not in (None, "fro"):
        ax = (0, 1) if axis is None else tuple(a % x.ndim for a in axis)
        xm = np.moveaxis(x, ax, (-2, -1))
        if ord in (1, -1, np.inf, -np.inf):
            red = -2 if ord in (1, -1) else -1
            sums = np.sum(np.abs(xm), axis=red, keepdims=True)
            target = np.max(sums, axis=-1 if red == -2 else -2, keepdims=True)
            if ord in (-1, -np.inf):
                target = np.min(sums, axis=-1 if red == -2 else -2, keepdims=True)
            hit = (sums == target).astype(dt)
            hit = hit / np.sum(hit, axis=-1 if red == -2 else -2, keepdims=True)
            w = _abs_sign(xm, dt) * hit
        else:
            u, s, vt = np.linalg.svd(xm, full_matrices=False)
            if ord == "nuc":
                w = u @ vt
            else:
                k = 0 if ord == 2 else -1
                w = u[..., :, k : k + 1 if k else 1] @ vt[..., k : k + 1 if k else 1, :]
                if k == -1:
                    w = u[..., :, -1:] @ vt[..., -1:, :]
        return np.moveaxis(w, (-2, -1), ax).astype(dt, copy=False)
    p = _vector_p(ord)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 2.0:
            return (x / n_e).astype(dt, copy=False)
        if np.isinf(p):
            hit = (np.abs(x) == n_e).astype(dt)
            cnt = _expand_reduced(np.sum(hit, axis=axis, keepdims=keepdims), x, axis, keepdims)
            if ord in (np.inf, "inf"):  # JAX's max of |x| ties 0 at a zero vector: half
                cnt = cnt * np.where(n_e == 0, 2, 1)
            return (_abs_sign(x, dt) * hit / cnt).astype(dt, copy=False)
        if p == 0:
            return np.zeros_like(x, dtype=dt)
        if p == 1:
            return _abs_sign(x, dt)
        return (np.sign(x) * np.abs(x) ** (p - 1) / n_e ** (p - 1)).astype(dt, copy=False)


def _abs_sign(x, dt):
    """``d|x| / dx`` with JAX's convention: 1 at zero (and -0.0), -1 at NaN."""
    return np.where(x >= 0, 1, -1).astype(dt)


def _expand_reduced(g, x, axis, keepdims):
    from srcjax.primitives.ad import _expand_reduced as er

    return er(g, x, axis, keepdims)


norm_grad = _internal("ad.norm_grad", _norm_grad, differentiable=True)


def _norm_coef(x, nrm, ord=None, axis=None, keepdims=False):
    """Static-shape helper: ``(p - 1) |x|**(p-2) / nrm**(p-1)`` (elementwise
    second-derivative coefficient of a vector p-norm; 0 for p in {0, 1, inf})."""
    if _norm_is_matrix(x, ord, axis) and ord not in (None, "fro"):
        raise NotImplementedError(f"srcjax: no second derivative of matrix norm ord={ord!r}")
    p = _vector_p(ord)
    x = np.asarray(x)
    _no_complex_norm_derivative(x)
    if np.isinf(p) or p in (0.0, 1.0):
        return np.zeros_like(x)
    n_e = _expand_reduced(nrm, x, axis, keepdims)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 2.0:
            return np.broadcast_to(1.0 / n_e, x.shape)
        return (p - 1) * np.abs(x) ** (p - 2) / n_e ** (p - 1)


def _norm_pm1(ord, x, axis):
    """Static: ``p - 1`` for a vector p-norm (0 for p in {0, 1, inf})."""
    p = _vector_p(ord)
    return 0.0 if (np.isinf(p) or p in (0.0, 1.0)) else p - 1.0


norm_coef = _internal("ad.norm_coef", _norm_coef, differentiable=True)
norm_pm1 = _internal("ad.norm_pm1", _norm_pm1)


def _norm_coef3(x, nrm, ord=None, axis=None, keepdims=False):
    """Static: ``(p-1)(p-2) sign(x) |x|**(p-3) / nrm**(p-1)``, the partial derivative
    of ``ad.norm_coef`` in ``x`` (0 for p in {0, 1, 2, inf})."""
    p = _vector_p(ord)
    x = np.asarray(x)
    if np.isinf(p) or p in (0.0, 1.0, 2.0):
        return np.zeros_like(x)
    n_e = _expand_reduced(nrm, x, axis, keepdims)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (p - 1) * (p - 2) * np.sign(x) * np.abs(x) ** (p - 3) / n_e ** (p - 1)


norm_coef3 = _internal("ad.norm_coef3", _norm_coef3)


def _def_coefficient_rules(coef, d_coef):
    """Rules of ``coef(x, nrm, ord, axis, keepdims)``, ``f(x) / nrm ** (p - 1)``
    for a vector p-norm ``nrm`` of ``x`` (``ad.norm_grad``, the gradient, and
    ``ad.norm_coef``, the coefficient of its derivative): elementwise in ``x``
    with the partial derivative ``d_coef`` (``ad.norm_coef``, ``ad.norm_coef3``),
    and ``-(p - 1) * coef / nrm`` in ``nrm``."""

    def vjp_x(h, ans, x, nrm, ord=None, axis=None, keepdims=False):
        return h * d_coef(x, nrm, ord, axis, keepdims)

    def vjp_nrm(h, ans, x, nrm, ord=None, axis=None, keepdims=False):
        return -(sum(h * ans, axis=axis, keepdims=keepdims) * norm_pm1(ord, x, axis)) / nrm

    def jvp_x(t, ans, x, nrm, ord=None, axis=None, keepdims=False):
        return t * d_coef(x, nrm, ord, axis, keepdims)

    def jvp_nrm(t, ans, x, nrm, ord=None, axis=None, keepdims=False):
        return -ans * expand_reduced(t * norm_pm1(ord, x, axis) / nrm, x, axis, keepdims)

    coef.def_vjp(vjp_x, vjp_nrm)
    coef.def_jvp(jvp_x, jvp_nrm)


_def_coefficient_rules(norm_coef, norm_coef3)
_def_coefficient_rules(norm_grad, norm_coef)


def _norm_vjp(g, ans, x, ord=None, axis=None, keepdims=False):
    return expand_reduced(g, x, axis, keepdims) * norm_grad(x, ans, ord, axis, keepdims)


def _norm_jvp(t, ans, x, ord=None, axis=None, keepdims=False):
    return sum(t * norm_grad(x, ans, ord, axis, keepdims), axis=axis, keepdims=keepdims)


norm.def_vjp(_norm_vjp)
norm.def_jvp(_norm_jvp)


def _norm_samples(rng):
    return [
        ((_rand(rng, 4),), {}),
        ((_rand(rng, 3, 4),), {}),
        ((_rand(rng, 3, 4),), {"axis": -1}),
        ((_rand(rng, 3, 4),), {"axis": 0, "keepdims": True}),
        ((_rand(rng, 4),), {"ord": 1}),
        ((_rand(rng, 4),), {"ord": np.inf}),
        ((_rand(rng, 4),), {"ord": 3}),
        ((_rand(rng, 3, 4),), {"ord": "fro"}),
        ((_rand(rng, 3, 4),), {"ord": 1}),
        ((_rand(rng, 3, 4),), {"ord": np.inf}),
        ((_rand(rng, 3, 4),), {"ord": 2}),
        ((_rand(rng, 3, 4),), {"ord": "nuc"}),
        ((_rand(rng, 2, 3, 4),), {"ord": 2, "axis": (1, 2)}),
    ]


norm.samples = _norm_samples


def _norm_grad_samples(rng):
    out = []
    for (x,), kw in _norm_samples(rng):
        if _norm_is_matrix(x, kw.get("ord"), kw.get("axis")) and kw.get("ord") not in (None, "fro"):
            continue
        if kw.get("ord") in (1, np.inf):
            continue
        nrm = _norm(x, **kw)
        out.append(((x, nrm), kw))
    return out


norm_grad.samples = _norm_grad_samples
norm_coef.samples = _norm_grad_samples
