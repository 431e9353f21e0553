"""``jnp.linalg.qr``, ``svd``, ``pinv`` and ``matrix_power``."""

from __future__ import annotations

import builtins

import numpy as np

from srcjax import dtypes as _dt
from srcjax.primitives.ad import (
    expand_dims,
    eye_mask,
    zeros_like,
)
from srcjax.primitives.elementwise import where
from srcjax.primitives.structural import (
    diagonal,
    matrix_transpose,
    tril,
)

from ..ad.linear import def_transpose_pair
from ._common import _internal, _rand
from .decompositions import _dense_tree, dense_tree, real_only
from .solve import QRResult, SVDResult, _la, _wellcond, solve

# ---------------------------------------------------------------------------
# qr / svd / pinv / matrix_power


def _qr(a, mode="reduced"):
    """QR decomposition over the last two axes (jax.numpy.linalg.qr): ``a = q @ r``
    with orthonormal columns in ``q`` and upper-triangular ``r``, as a tuple
    ``(q, r)``. ``mode="reduced"`` (default): ``q`` is ``(..., m, k)`` and ``r``
    ``(..., k, n)``, ``k = min(m, n)``; ``"complete"``: ``q`` is ``(..., m, m)``.
    Dtype: that of ``a`` (integers give the default float). Differentiable for
    ``m >= n`` (and ``"complete"`` only when square), as in JAX. ``mode="r"``
    (``r`` alone) is not supported: use ``qr(a)[1]`` (``NotImplementedError``);
    other modes raise ``ValueError``."""
    if mode == "r":
        raise NotImplementedError("srcjax jnp.linalg.qr: mode='r' is not supported; use qr(a)[1]")
    if mode not in ("reduced", "complete"):
        raise ValueError(f"jnp.linalg.qr: unsupported mode {mode!r}")
    a = np.asarray(a)
    if a.dtype.kind in "biu":
        a = a.astype(_dt.default_float())
    q, r = np.linalg.qr(a, mode=mode)
    return QRResult(q, r)


qr = _la("qr", _qr, np.linalg.qr)


def _qr_check(a, mode="reduced"):
    """Static: raise when the derivative of ``qr(a, mode)`` is not defined
    (``m < n``, or ``"complete"`` with ``m != n``); else ``0``."""
    m, n = np.shape(a)[-2:]
    if m < n or (mode == "complete" and m != n):
        raise NotImplementedError(
            f"srcjax: derivative of jnp.linalg.qr of a {m}x{n} matrix with mode={mode!r} "
            "is not implemented (JAX: the same); it needs m >= n"
        )
    return 0


qr_check = _internal("ad.qr_check", _qr_check)


def _qr_jvp(t, ans, a, mode="reduced"):
    q, r = real_only(ans[0], "jnp.linalg.qr"), ans[1]
    t_rinv = matrix_transpose(solve(matrix_transpose(r), matrix_transpose(t))) + qr_check(a, mode)
    c = matrix_transpose(q) @ t_rinv
    low = tril(c, -1)
    omega = low - matrix_transpose(low)
    return (t_rinv + q @ (omega - c), (c - omega) @ r)


def _qr_vjp(g, ans, a, mode="reduced"):
    q, r = real_only(ans[0], "jnp.linalg.qr"), ans[1]
    gd = dense_tree(g, ans)
    n = matrix_transpose(q) @ gd[0] - gd[1] @ matrix_transpose(r)
    k = tril(n - matrix_transpose(n), -1) - n
    return matrix_transpose(solve(r, matrix_transpose(gd[0] + q @ k))) + qr_check(a, mode)


qr.def_vjp(_qr_vjp)
qr.def_jvp(_qr_jvp)
qr.samples = lambda rng: [
    ((_rand(rng, 3, 3),), {}),
    ((_rand(rng, 4, 2),), {}),
    ((_rand(rng, 2, 5, 3),), {}),
    ((_rand(rng, 3, 3),), {"mode": "complete"}),
]


def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition over the last two axes
    (jax.numpy.linalg.svd): ``(u, s, vh)`` with ``a = u @ (s[..., None] * vh)``,
    ``s`` descending; ``s`` alone when ``compute_uv=False``. With
    ``full_matrices=True`` (the default, as in JAX) ``u`` is ``(..., m, m)`` and
    ``vh`` ``(..., n, n)``, else ``(..., m, k)`` and ``(..., k, n)``, ``k =
    min(m, n)``. Dtype: that of ``a`` (integers give the default float).

    Differentiable (JAX's rules: distinct singular values assumed; the terms of
    equal ones are dropped). With ``compute_uv=True`` and ``full_matrices=True``
    the derivative needs a square ``a`` (``NotImplementedError`` otherwise, as in
    JAX); ``s`` alone is differentiable for any shape."""
    a = np.asarray(a)
    if a.dtype.kind in "biu":
        a = a.astype(_dt.default_float())
    if not compute_uv:
        return np.linalg.svd(a, compute_uv=False, hermitian=hermitian)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices, hermitian=hermitian)
    return SVDResult(u, s, vh)


svd = _la("svd", _svd, np.linalg.svd)


def _svd_ad_full(a, full_matrices=True, compute_uv=True):
    """Static: the ``full_matrices`` flag to recompute the SVD with in the rules
    (``False``); raises when the derivative is not defined (full ``u``/``vh`` of a
    non-square matrix)."""
    m, n = np.shape(a)[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            f"srcjax: derivative of jnp.linalg.svd(full_matrices=True) of a {m}x{n} matrix "
            "is not implemented (JAX: the same); use full_matrices=False"
        )
    return False


def _svd_embed(g, usv, compute_uv=True):
    """The output cotangent (or tangent) ``g`` of ``svd`` as a triple ``(u, s,
    vh)`` of arrays shaped like ``usv``: ``g`` itself when ``compute_uv`` (symbolic
    zero entries made arrays), else ``(0, g, 0)``."""
    if compute_uv:
        return _dense_tree(g, usv)
    return (np.zeros_like(usv[0]), np.asarray(g), np.zeros_like(usv[2]))


def _svd_select(h, usv, compute_uv=True):
    """Transpose of ``ad.svd_embed``: the triple ``h`` itself, or its ``s`` part."""
    if compute_uv:
        return (h[0], h[1], h[2])
    return np.asarray(h[1])


svd_ad_full = _internal("ad.svd_ad_full", _svd_ad_full)
svd_embed = _internal("ad.svd_embed", _svd_embed, differentiable=True)
svd_select = _internal("ad.svd_select", _svd_select, differentiable=True)


def_transpose_pair(svd_embed, svd_select)


def _svd_helper_samples(rng):
    a = _rand(rng, 4, 3)
    usv = _svd(a, False)
    triple = (_rand(rng, 4, 3), _rand(rng, 3), _rand(rng, 3, 3))
    return [((triple, usv), {}), ((_rand(rng, 3), usv), {"compute_uv": False})]


def _svd_select_samples(rng):
    a = _rand(rng, 4, 3)
    usv = _svd(a, False)
    triple = (_rand(rng, 4, 3), _rand(rng, 3), _rand(rng, 3, 3))
    return [((triple, usv), {}), ((triple, usv), {"compute_uv": False})]


svd_embed.samples = _svd_helper_samples
svd_select.samples = _svd_select_samples


def _safe_inverse(s):
    """``1 / s`` with 0 where ``s`` is 0 (JAX's ``s_inv`` in its svd rule): a zero
    singular value's terms drop out instead of making 0 / 0 (round 7, item 10:
    the gradient of ``svd(A, compute_uv=False)`` at a rank-deficient ``A`` was
    all NaN; JAX: ``U @ V^T``)."""
    return where(s == 0.0, 0.0, 1.0 / where(s == 0.0, 1.0, s))


def _svd_jvp(t, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    usv = svd(a, svd_ad_full(a, full_matrices, compute_uv), True, hermitian)
    u, s, vh = real_only(usv[0], "jnp.linalg.svd"), usv[1], usv[2]
    v = matrix_transpose(vh)
    p = matrix_transpose(u) @ t @ v
    gap = expand_dims(s * s, -2) - expand_dims(s * s, -1)
    f = where(gap == 0.0, 0.0, 1.0 / where(gap == 0.0, 1.0, gap))
    s_row = expand_dims(s, -2)
    s_col = expand_dims(s, -1)
    inv_row = expand_dims(_safe_inverse(s), -2)
    du = u @ (f * (p * s_row + s_col * matrix_transpose(p)))
    du = du + (t @ v - u @ (matrix_transpose(u) @ t @ v)) * inv_row
    dv = v @ (f * (s_col * p + matrix_transpose(p) * s_row))
    dv = dv + (matrix_transpose(t) @ u - v @ (vh @ matrix_transpose(t) @ u)) * inv_row
    return svd_select((du, diagonal(p, 0, -2, -1), matrix_transpose(dv)), usv, compute_uv)


def _svd_vjp(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    usv = svd(a, svd_ad_full(a, full_matrices, compute_uv), True, hermitian)
    u, s, vh = real_only(usv[0], "jnp.linalg.svd"), usv[1], usv[2]
    v = matrix_transpose(vh)
    gt = svd_embed(g, usv, compute_uv)
    g_u, g_v = gt[0], matrix_transpose(gt[2])
    gap = expand_dims(s * s, -2) - expand_dims(s * s, -1)
    f = where(gap == 0.0, 0.0, 1.0 / where(gap == 0.0, 1.0, gap))
    s_row = expand_dims(s, -2)
    s_col = expand_dims(s, -1)
    ju = f * (matrix_transpose(u) @ g_u - matrix_transpose(g_u) @ u)
    jv = f * (vh @ g_v - matrix_transpose(g_v) @ v)
    core = ju * s_row + expand_dims(gt[1], -1) * eye_mask(np.shape(s)[-1]) + s_col * jv
    out = u @ core @ vh
    s_inv = _safe_inverse(s)
    out = out + ((g_u - u @ (matrix_transpose(u) @ g_u)) * expand_dims(s_inv, -2)) @ vh
    proj = matrix_transpose(g_v) - (matrix_transpose(g_v) @ v) @ vh
    return out + u @ (proj * expand_dims(s_inv, -1))


svd.def_vjp(_svd_vjp)
svd.def_jvp(_svd_jvp)
svd.samples = lambda rng: [
    ((_rand(rng, 3, 3),), {}),
    ((_rand(rng, 4, 3),), {"full_matrices": False}),
    ((_rand(rng, 3, 5),), {"full_matrices": False}),
    ((_rand(rng, 2, 4, 3),), {"compute_uv": False}),
    ((_rand(rng, 3, 4),), {"compute_uv": False, "full_matrices": False}),
]


def _pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """Moore-Penrose pseudo-inverse over the last two axes
    (jax.numpy.linalg.pinv), from the SVD: singular values at most ``rtol`` times
    the largest are treated as zero (default ``10 * max(m, n) * eps``, JAX's;
    ``rcond`` is the old name). Shape ``(..., n, m)`` for ``a`` of ``(..., m,
    n)``; dtype that of ``a`` (integers give the default float).
    Differentiable where the rank is locally constant (JAX's rule)."""
    a = np.asarray(a)
    if a.dtype.kind in "biu":
        a = a.astype(_dt.default_float())
    if rtol is None:
        rtol = rcond
    if rtol is None:
        rtol = 10 * builtins.max(a.shape[-2:]) * np.finfo(a.dtype).eps
    out = np.linalg.pinv(a, rcond=rtol, hermitian=hermitian)
    return out.astype(a.dtype, copy=False)


pinv = _la("pinv", _pinv, np.linalg.pinv)


def _pinv_jvp(t, ans, a, rtol=None, hermitian=False, *, rcond=None):
    # Golub & Pereyra: d(A+) = -A+ dA A+ + A+ A+^T dA^T (I - A A+) + (I - A+ A) dA^T A+^T A+
    p = ans
    pt = matrix_transpose(p)
    tt = matrix_transpose(t)
    out = -(p @ t @ p) + p @ (pt @ (tt - tt @ (a @ p)))
    return out + ((tt - p @ (a @ tt)) @ pt) @ p


def _pinv_vjp(g, ans, a, rtol=None, hermitian=False, *, rcond=None):
    p = ans
    pt = matrix_transpose(p)
    gt = matrix_transpose(g)
    out = -(pt @ g @ pt) + (gt - (a @ p) @ gt) @ (p @ pt)
    return out + (pt @ p) @ (gt - (gt @ p) @ a)


pinv.def_vjp(_pinv_vjp)
pinv.def_jvp(_pinv_jvp)
pinv.samples = lambda rng: [
    ((_rand(rng, 3, 3),), {}),
    ((_rand(rng, 4, 2),), {}),
    ((_rand(rng, 2, 3),), {}),
    ((_rand(rng, 2, 2, 3),), {}),
]


def _matrix_power(a, n):
    """``a`` raised to the integer power ``n`` over the last two axes
    (jax.numpy.linalg.matrix_power): repeated squaring; ``n = 0`` gives the
    identity, ``n < 0`` powers of the inverse. Shape and dtype those of ``a``.
    Differentiable in ``a``. Raises ``TypeError`` for a non-integer ``n`` and
    ``ValueError`` (NumPy's ``LinAlgError``) for a non-square ``a``."""
    if isinstance(n, bool) or int(n) != n:
        raise TypeError(f"jnp.linalg.matrix_power: exponent must be an integer, got {n!r}")
    a = np.asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"jnp.linalg.matrix_power: a must be a stack of square matrices, got {a.shape}"
        )
    return np.linalg.matrix_power(a, int(n))


matrix_power = _la("matrix_power", _matrix_power, np.linalg.matrix_power)


def _block_upper(a, t):
    """The block matrix ``[[a, t], [0, a]]`` over the last two axes: its powers
    carry the derivative of ``a ** n`` in the direction ``t`` in their upper-right
    block."""
    a, t = np.broadcast_arrays(np.asarray(a), np.asarray(t))
    z = np.zeros_like(a)
    top = np.concatenate([a, t], axis=-1)
    bottom = np.concatenate([z, a], axis=-1)
    return np.concatenate([top, bottom], axis=-2)


def _upper_right(x):
    """The upper-right quarter of ``x`` (``(..., 2m, 2m)`` -> ``(..., m, m)``)."""
    m = np.shape(x)[-1] // 2
    return np.asarray(x)[..., :m, m:]


def _diag_blocks_sum(x):
    """The sum of the two diagonal quarters of ``x`` (the adjoint of the ``a``
    operand of ``ad.block_upper``)."""
    m = np.shape(x)[-1] // 2
    x = np.asarray(x)
    return x[..., :m, :m] + x[..., m:, m:]


block_upper = _internal("ad.block_upper", _block_upper, differentiable=True)
upper_right = _internal("ad.upper_right", _upper_right, differentiable=True)
diag_blocks_sum = _internal("ad.diag_blocks_sum", _diag_blocks_sum, differentiable=True)


def _block_upper_vjp_a(g, ans, a, t):
    return diag_blocks_sum(g)


def _block_upper_vjp_t(g, ans, a, t):
    return upper_right(g)


def _block_upper_jvp_a(da, ans, a, t):
    return block_upper(da, zeros_like(da))


def _block_upper_jvp_t(dt, ans, a, t):
    return block_upper(zeros_like(dt), dt)


def _upper_right_vjp_x(g, ans, x):
    return block_upper(zeros_like(g), g)


def _upper_right_jvp_x(t, ans, x):
    return upper_right(t)


def _diag_blocks_sum_vjp_x(g, ans, x):
    return block_upper(g, zeros_like(g))


def _diag_blocks_sum_jvp_x(t, ans, x):
    return diag_blocks_sum(t)


block_upper.def_vjp(_block_upper_vjp_a, _block_upper_vjp_t)
block_upper.def_jvp(_block_upper_jvp_a, _block_upper_jvp_t)
upper_right.def_vjp(_upper_right_vjp_x)
upper_right.def_jvp(_upper_right_jvp_x)
diag_blocks_sum.def_vjp(_diag_blocks_sum_vjp_x)
diag_blocks_sum.def_jvp(_diag_blocks_sum_jvp_x)
block_upper.samples = lambda rng: [((_rand(rng, 2, 2), _rand(rng, 2, 2)), {})]
upper_right.samples = lambda rng: [((_rand(rng, 4, 4),), {}), ((_rand(rng, 2, 2, 2),), {})]
diag_blocks_sum.samples = upper_right.samples


def _matrix_power_jvp(t, ans, a, n):
    # d(a ** n)[t] is the upper-right block of [[a, t], [0, a]] ** n (any integer n)
    return upper_right(matrix_power(block_upper(a, t), n))


def _matrix_power_vjp(g, ans, a, n):
    # the adjoint of t -> d(a ** n)[t] is g -> d(a.T ** n)[g]
    return upper_right(matrix_power(block_upper(matrix_transpose(a), g), n))


matrix_power.def_vjp(_matrix_power_vjp)
matrix_power.def_jvp(_matrix_power_jvp)
matrix_power.samples = lambda rng: [
    ((_rand(rng, 3, 3), 3), {}),
    ((_rand(rng, 2, 2, 2), 2), {}),
    ((_rand(rng, 3, 3), 1), {}),
    ((_rand(rng, 3, 3), 0), {}),
    ((_wellcond(rng, 3), -2), {}),
]
