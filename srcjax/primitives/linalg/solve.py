"""``jnp.linalg.inv``, ``solve``, ``det`` and ``slogdet`` with JAX's gradient
conventions (the adjugate for ``det`` of a singular matrix).
"""

from __future__ import annotations

import collections

import numpy as np

from srcjax.primitives.ad import (
    expand_dims,
    sum,
    unbroadcast,
    zeros_like,
)
from srcjax.primitives.structural import (
    matrix_transpose,
)

from ..ad.linear import def_transpose_pair
from ._common import _internal, _linalg, _rand
from .contraction import contract

# ---------------------------------------------------------------------------
# jnp.linalg: inv / solve / det / slogdet


def _la(name, impl, *aliases, differentiable=True):
    return _linalg("jnp.linalg." + name, impl, *aliases, differentiable=differentiable)


def _spd(rng, n, batch=()):
    m = rng.normal(size=batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def _wellcond(rng, n, batch=()):
    return rng.normal(size=batch + (n, n)) + 3 * np.eye(n)


def _inv(a):
    """Matrix inverse over the last two axes (jax.numpy.linalg.inv). A singular
    matrix gives JAX's infinities and NaNs (:func:`_lu_solve`), not an error."""
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        a = np.asarray(a)
        return _lu_solve(a, np.broadcast_to(np.eye(a.shape[-1], dtype=a.dtype), a.shape))


def _lu_solve(a, b):
    """``a^-1 @ b`` (``b``: ``(..., n, k)``) by LU with partial pivoting and
    plain substitution, going on past a zero pivot as JAX does (LAPACK's getrf,
    then triangular solves that divide by it): a singular ``a`` gives inf where
    a nonzero is divided by the zero pivot and NaN for 0/0 (fresh user 8,
    r_misc1.py: ``solve([[1, 2], [2, 4]], [1, 1])`` is ``[-inf, inf]`` in JAX
    0.10.2, NumPy raises LinAlgError). Only the singular case comes here."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    dt = np.result_type(a.dtype, b.dtype)
    lu = np.array(np.broadcast_to(a, batch + a.shape[-2:]), dtype=dt)
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]), dtype=dt)
    n = lu.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for idx in np.ndindex(*batch):
            m, y = lu[idx], x[idx]
            for j in range(n):
                p = j + int(np.argmax(np.abs(m[j:, j])))
                if p != j:
                    m[[j, p]] = m[[p, j]]
                    y[[j, p]] = y[[p, j]]
                if m[j, j] != 0:
                    m[j + 1 :, j] /= m[j, j]
                m[j + 1 :, j + 1 :] -= np.outer(m[j + 1 :, j], m[j, j + 1 :])
            for j in range(n):  # unit lower L
                y[j + 1 :] -= np.outer(m[j + 1 :, j], y[j])
            for j in range(n - 1, -1, -1):  # U, dividing by a zero pivot too
                y[j] = y[j] / m[j, j]
                y[:j] -= np.outer(m[:j, j], y[j])
    return x


inv = _la("inv", _inv, np.linalg.inv)


def _inv_vjp_a(g, ans, a):
    return -(matrix_transpose(ans) @ g @ matrix_transpose(ans))


inv.def_vjp(_inv_vjp_a)


def _inv_jvp_a(t, ans, a):
    return -(ans @ t @ ans)


inv.def_jvp(_inv_jvp_a)
inv.samples = lambda rng: [((_wellcond(rng, 3),), {}), ((_wellcond(rng, 2, (2,)),), {})]


def _rhs_matrix(y, b):
    """``y[..., None]`` when ``b`` is a vector right-hand side, else ``y``."""
    return np.expand_dims(y, -1) if np.ndim(b) == 1 else np.asarray(y)


def _rhs_unmatrix(y, b):
    """Inverse of ``ad.rhs_matrix``."""
    return np.asarray(y)[..., 0] if np.ndim(b) == 1 else np.asarray(y)


rhs_matrix = _internal("ad.rhs_matrix", _rhs_matrix, differentiable=True)
rhs_unmatrix = _internal("ad.rhs_unmatrix", _rhs_unmatrix, differentiable=True)


def_transpose_pair(rhs_matrix, rhs_unmatrix)


rhs_matrix.samples = lambda rng: [((_rand(rng, 2, 3), _rand(rng, 3)), {})]
rhs_unmatrix.samples = lambda rng: [((_rand(rng, 2, 3, 1), _rand(rng, 3)), {})]


def _solve(a, b):
    """Solve ``a @ x = b`` (jax.numpy.linalg.solve); ``b`` is a vector when 1-D,
    else a (batch of) matrices; batch dimensions broadcast. A singular ``a``
    gives JAX's infinities and NaNs (:func:`_lu_solve`), not an error."""
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        a, b = np.asarray(a), np.asarray(b)
        if b.ndim == 1:
            return _lu_solve(a, b[:, None])[..., 0]
        return _lu_solve(a, b)


solve = _la("solve", _solve, np.linalg.solve)


def _solve_shape(avals):
    """jit's abstract value of ``solve(a, b)`` for one square float matrix and a
    vector or matrix of its rows, of one dtype: ``b``'s (stand-ins of ones or
    zeros are singular, so running it cannot tell)."""
    a, b = avals.get("a"), avals.get("b")
    for v in (a, b):
        if not (hasattr(v, "shape") and hasattr(v, "dtype")) or getattr(v, "weak", True):
            return None
    if len(a.shape) != 2 or a.shape[0] != a.shape[1] or len(b.shape) not in (1, 2):
        return None
    if b.shape[0] != a.shape[0] or a.dtype != b.dtype or np.dtype(a.dtype).kind != "f":
        return None
    return tuple(b.shape), b.dtype


solve.facts(result_shape=_solve_shape)


def _solve_vjp_a(g, ans, a, b):
    return unbroadcast(
        -(solve(matrix_transpose(a), rhs_matrix(g, b)) @ matrix_transpose(rhs_matrix(ans, b))), a
    )


def _solve_vjp_b(g, ans, a, b):
    return unbroadcast(rhs_unmatrix(solve(matrix_transpose(a), rhs_matrix(g, b)), b), b)


def _solve_jvp_a(t, ans, a, b):
    return rhs_unmatrix(-solve(a, t @ rhs_matrix(ans, b)), b)


def _solve_jvp_b(t, ans, a, b):
    return solve(a, t)


solve.def_vjp(_solve_vjp_a, _solve_vjp_b)
solve.def_jvp(_solve_jvp_a, _solve_jvp_b)
solve.samples = lambda rng: [
    ((_wellcond(rng, 3), _rand(rng, 3)), {}),
    ((_wellcond(rng, 3), _rand(rng, 3, 2)), {}),
    ((_wellcond(rng, 3, (2,)), _rand(rng, 2, 3, 2)), {}),
    ((_wellcond(rng, 3), _rand(rng, 2, 3, 2)), {}),
]


def _det(a):
    """Determinant over the last two axes (jax.numpy.linalg.det)."""
    return np.linalg.det(a)


det = _la("det", _det, np.linalg.det)


def _svd_adj(a):
    """``(u, s, vh, left, right)``: ``a = u diag(s) vh`` and ``adj(a) = left @
    adj(diag(s) + e) @ right`` around it (``a + u e vh``), from ``adj(xy) =
    adj(y) adj(x)`` and ``adj(q) = det(q) q^H`` for a unitary ``q``."""
    u, s, vh = np.linalg.svd(np.asarray(a))
    scale = np.linalg.det(u) * np.linalg.det(vh)
    left = np.conj(np.swapaxes(vh, -1, -2)) * scale[..., None, None]
    return u, s, vh, left, np.conj(np.swapaxes(u, -1, -2))


def _products_without(s, k):
    """Products of ``s`` over its last axis leaving out ``k`` (1 or 2) distinct
    positions, by multiplication only (exact zeros stay exact): for ``k == 1``
    ``c[..., i]``, for ``k == 2`` ``p[..., i, j]`` (0 on the diagonal)."""
    n = np.shape(s)[-1]
    eye = np.eye(n, dtype=bool)
    if k == 1:
        return np.prod(np.where(eye, 1, s[..., None, :]), axis=-1)
    drop = eye[:, None, :] | eye[None, :, :]  # l == i or l == j
    p = np.prod(np.where(drop, 1, s[..., None, None, :]), axis=-1)
    return np.where(eye, 0, p)


def _adjugate(a):
    """The adjugate (transposed cofactor matrix) over the last two axes:
    ``det(a) inv(a)`` where ``a`` is invertible, and a polynomial, so continuous
    everywhere. From the SVD with the singular values' products leaving one
    out (no division): rank-deficient matrices get their exact cofactors too."""
    _, s, _, left, right = _svd_adj(a)
    return (left * _products_without(s, 1)[..., None, :]) @ right


def _adjugate_d(a, t):
    """The derivative of ``adjugate`` at ``a`` in direction ``t`` (linear in
    ``t``), valid at singular ``a``: with ``e = u^H t vh^H``, the adjugate of
    ``diag(s) + e`` changes by ``diag(p @ diag(e)) - p * e``, ``p[i, j]`` the
    product of ``s`` without ``s_i`` and ``s_j``."""
    u, s, vh, left, right = _svd_adj(a)
    e = right @ np.asarray(t) @ np.conj(np.swapaxes(vh, -1, -2))
    p = _products_without(s, 2)
    mid = -p * e
    i = np.arange(np.shape(s)[-1])
    mid[..., i, i] = contract("...ij,...j->...i", p, np.diagonal(e, axis1=-2, axis2=-1))
    return left @ mid @ right


adjugate = _internal("ad.adjugate", _adjugate, differentiable=True)
adjugate_d = _internal("ad.adjugate_d", _adjugate_d, differentiable=True)


def _adjugate_jvp(t, ans, a):
    return adjugate_d(a, t)


def _adjugate_vjp(g, ans, a):
    # d adj(a)[t] is d^2 det(a)[t, .] in matrix form, symmetric in its two
    # directions: <g, d adj[t]> = <d adj[g^T]^T, t>
    return matrix_transpose(adjugate_d(a, matrix_transpose(g)))


def _adjugate_d_jvp_t(tt, ans, a, t):
    return adjugate_d(a, tt)


def _adjugate_d_vjp_t(g, ans, a, t):
    return matrix_transpose(adjugate_d(a, matrix_transpose(g)))


adjugate.def_jvp(_adjugate_jvp)
adjugate.def_vjp(_adjugate_vjp)
adjugate_d.def_jvp(t=_adjugate_d_jvp_t)
adjugate_d.def_vjp(t=_adjugate_d_vjp_t)
adjugate.samples = lambda rng: [((_rand(rng, 3, 3),), {}), ((_rand(rng, 2, 3, 3),), {})]
adjugate_d.samples = lambda rng: [((_rand(rng, 3, 3), _rand(rng, 3, 3)), {})]


def _det_vjp_a(g, ans, a):
    # the adjugate, not det(a) inv(a): finite (JAX's cofactors) at singular a
    return expand_dims(g, (-2, -1)) * matrix_transpose(adjugate(a))


det.def_vjp(_det_vjp_a)


def _det_jvp_a(t, ans, a):
    return sum(matrix_transpose(adjugate(a)) * t, axis=(-2, -1))


det.def_jvp(_det_jvp_a)
det.samples = lambda rng: [((_wellcond(rng, 3),), {}), ((_wellcond(rng, 2, (2,)),), {})]


SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])
#: jax.numpy.linalg's result types (``svd(a).S``, ``eigh(a).eigenvalues``, ``qr(a).R``)
SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])
EighResult = collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = collections.namedtuple("QRResult", ["Q", "R"])


def _slogdet(a):
    """``(sign, log|det|)`` over the last two axes (jax.numpy.linalg.slogdet):
    a ``SlogdetResult`` named tuple (``.sign``, ``.logabsdet``), as in JAX."""
    sign, logdet = np.linalg.slogdet(a)
    return SlogdetResult(sign, logdet)


slogdet = _la("slogdet", _slogdet, np.linalg.slogdet)


def _inv_or_inf(a):
    """``inv(a)``, and for a singular ``a`` (an exact zero pivot: det 0) instead
    of raising ``adjugate(a) / 0``: infinities where a cofactor is nonzero, NaN
    where it is zero (JAX's LU solve gives inf/NaN there too). The gradient of
    slogdet, which is infinite at singular matrices."""
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        pass
    a = np.asarray(a)
    d = np.linalg.det(a)[..., None, None]
    sing = d == 0
    eye = np.eye(np.shape(a)[-1], dtype=a.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sing, _adjugate(a) / d, np.linalg.inv(np.where(sing, eye, a)))


inv_or_inf = _internal("ad.inv_or_inf", _inv_or_inf, differentiable=True)
inv_or_inf.def_vjp(_inv_vjp_a)
inv_or_inf.def_jvp(_inv_jvp_a)
inv_or_inf.samples = inv.samples


def _slogdet_vjp_a(g, ans, a):
    return expand_dims(g[1], (-2, -1)) * matrix_transpose(inv_or_inf(a))


slogdet.def_vjp(_slogdet_vjp_a)


def _slogdet_jvp_a(t, ans, a):
    inv_t = matrix_transpose(inv_or_inf(a))  # trace(solve(a, t)), not raising at det 0
    return (zeros_like(ans[0]), sum(inv_t * t, axis=(-2, -1)))


slogdet.def_jvp(_slogdet_jvp_a)
slogdet.samples = det.samples
