"""The derivative of a Gamma(a, 1) sample with respect to ``a`` by implicit
reparameterization (``jax.lax.random_gamma_grad``), and the partial
derivatives of that function (for second derivatives of a sample).

For ``x ~ Gamma(a, 1)`` with CDF ``P(a, x)`` (the regularized lower incomplete
gamma function), holding ``P(a, x)`` fixed gives

    dx/da = G(a, x) = -(dP/da) / (dP/dx),    dP/dx = x**(a-1) exp(-x) / Gamma(a).

JAX evaluates ``dP/da`` as Cephes' ``igamma`` does: for ``x <= 1`` or ``x <= a``
the series ``P = exp(L) S``, ``L = a log x - x - lgamma(a + 1)``, ``S = sum_n
c_n`` with ``c_0 = 1``, ``c_n = c_{n-1} x / (a + n)``, differentiated term by
term; otherwise the continued fraction of ``Q = 1 - P`` with its convergents
``p_k / q_k`` differentiated by their recurrences. Each element stops when the
change of its derivative drops below ``eps`` (the continued fraction after at
most 2000 steps). The same iterations run here in float64 (so the results are
at least as accurate as JAX's float32 ones, which they match to a few ulps),
rounded to the inputs' dtype. Special cases follow JAX: ``G = 0`` at ``x = 0``;
NaN for ``x < 0``, ``a <= 0`` or a NaN input; where ``exp(L)`` would underflow
the input dtype the iterations are skipped (their starting values are used).

The second derivatives extend the same iterations by one more order:
``dG/dx = digamma(a) - log(x) + G (1 - (a - 1) / x)`` in closed form, and
``dG/da`` (``x`` fixed) ``= -(d2P/da2) / (dP/dx) - G (log x - digamma(a))``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt

_CF_MAX = 2000


def _digamma(x):
    from scipy import special

    return special.digamma(x)


def _trigamma(x):
    from scipy import special

    return special.polygamma(1, x)


def _gammaln(x):
    from scipy import special

    return special.gammaln(x)


def _series(a: np.ndarray, x: np.ndarray, order: int, eps: float):
    """``(S, dS, d2S)``: the series and its derivatives in ``a`` (the last is
    zeros when ``order == 1``), each element iterated until ``|dc / dS| <=
    eps``, as JAX's ``_igamma_series``."""
    r = a.copy()
    c = np.ones_like(a)
    s = np.ones_like(a)
    dc = np.zeros_like(a)
    ds = np.zeros_like(a)
    d2c = np.zeros_like(a)
    d2s = np.zeros_like(a)
    idx = np.arange(a.size)
    while idx.size:
        xi, ri, ci, dci = x[idx], r[idx] + 1.0, c[idx], dc[idx]
        q = xi / ri
        dnew = dci * q - (ci * xi) / (ri * ri)
        if order == 2:
            # c_n = c_{n-1} x / r: d2c_n = d2c_{n-1} q - 2 dc_{n-1} x / r**2 + 2 c_{n-1} x / r**3
            d2c[idx] = d2c[idx] * q - 2.0 * dci * xi / (ri * ri) + 2.0 * ci * xi / (ri * ri * ri)
            d2s[idx] += d2c[idx]
        r[idx] = ri
        dc[idx] = dnew
        ds[idx] += dnew
        c[idx] = ci * q
        s[idx] += c[idx]
        keep = np.abs(dnew / ds[idx]) > eps
        idx = idx[keep]
    return s, ds, d2s


def _fraction(a: np.ndarray, x: np.ndarray, order: int, eps: float):
    """``(F, dF, d2F)``: Cephes' continued fraction of ``Q(a, x) / exp(a log x -
    x - lgamma(a))`` and its derivatives in ``a``, as JAX's
    ``_igammac_continued_fraction`` (rescaling by ``eps`` when ``|p_k|`` grows
    past ``1/eps``; an element stops when its derivative changes by ``<= eps``)."""
    y = 1.0 - a
    z = x + y + 1.0
    pkm2 = np.ones_like(x)
    qkm2 = x.copy()
    pkm1 = x + 1.0
    qkm1 = z * x
    ans = pkm1 / qkm1
    zeros = np.zeros_like(x)
    dpkm2, dqkm2, dpkm1, dqkm1 = zeros.copy(), zeros.copy(), zeros.copy(), -x
    dans = (dpkm1 - ans * dqkm1) / qkm1
    # second derivatives (y, z and y*c are linear in a: their second derivatives vanish)
    e2 = [zeros.copy() for _ in range(4)]  # d2p_{k-2}, d2q_{k-2}, d2p_{k-1}, d2q_{k-1}
    d2ans = (-2.0 * dans * dqkm1) / qkm1 if order == 2 else zeros.copy()
    state = [y, z, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, ans, dans, d2ans] + e2
    idx = np.arange(x.size)
    c = 0.0
    while idx.size and c < _CF_MAX:
        c += 1.0
        (y, z, pkm1, qkm1, pkm2, qkm2, dpkm2, dqkm2, dpkm1, dqkm1, ans, dans, d2ans) = (
            v[idx] for v in state[:13]
        )
        d2pkm2, d2qkm2, d2pkm1, d2qkm1 = (v[idx] for v in state[13:])
        y = y + 1.0
        z = z + 2.0
        yc = y * c
        pk = pkm1 * z - pkm2 * yc
        qk = qkm1 * z - qkm2 * yc
        nz = qk != 0
        with np.errstate(divide="ignore", invalid="ignore"):
            ans_n = np.where(nz, pk / qk, ans)
            dpk = dpkm1 * z - pkm1 - dpkm2 * yc + pkm2 * c
            dqk = dqkm1 * z - qkm1 - dqkm2 * yc + qkm2 * c
            dans_n = np.where(nz, (dpk - ans_n * dqk) / qk, dans)
            if order == 2:
                d2pk = d2pkm1 * z - 2.0 * dpkm1 - d2pkm2 * yc + 2.0 * dpkm2 * c
                d2qk = d2qkm1 * z - 2.0 * dqkm1 - d2qkm2 * yc + 2.0 * dqkm2 * c
                d2ans = np.where(nz, (d2pk - 2.0 * dans_n * dqk - ans_n * d2qk) / qk, d2ans)
            else:
                d2pk = d2qk = d2pkm1
        change = np.where(nz, np.abs(dans_n - dans), 1.0)
        f = np.where(np.abs(pk) > 1.0 / eps, eps, 1.0)
        new = [
            y, z, pk * f, qk * f, pkm1 * f, qkm1 * f, dpkm1 * f, dqkm1 * f, dpk * f, dqk * f,
            ans_n, dans_n, d2ans, d2pkm1 * f, d2qkm1 * f, d2pk * f, d2qk * f,
        ]  # fmt: skip
        for v, n in zip(state, new):
            v[idx] = n
        idx = idx[change > eps]
    return state[10], state[11], state[12]


def _prepare(a: Any, x: Any):
    dt = _dt.result_type_inexact(a, x)
    if dt.kind != "f":
        raise TypeError(f"random_gamma_grad: a and x must be real, got {dt}")
    a64, x64 = np.broadcast_arrays(np.asarray(a, np.float64), np.asarray(x, np.float64))
    return dt, a64.shape, a64.ravel(), x64.ravel()


def _terms(a: np.ndarray, x: np.ndarray, dt: np.dtype, order: int):
    """``(G, dG/da)`` in float64 (the second is ``None`` for ``order == 1``)."""
    eps = float(np.finfo(np.float64).eps)
    with np.errstate(all="ignore"):
        nan = np.isnan(a) | np.isnan(x)
        zero = x == 0
        domain = (x < 0) | (a <= 0)
        use_cf = (x > 1) & (x > a)
        logx = np.log(x)
        underflow = a * logx - x - _gammaln(a) < -np.log(float(np.finfo(dt).max))
        run = ~(zero | domain | underflow | nan)
        g = np.zeros_like(a)
        ga = np.zeros_like(a) if order == 2 else None
        for cf in (False, True):
            sel = use_cf if cf else ~use_cf
            if not sel.any():
                continue
            ai, xi, lx = a[sel], x[sel], logx[sel]
            it = run[sel]
            if cf:
                f, df, d2f = _init_fraction(ai, xi, order)
                if it.any():
                    r = _fraction(ai[it], xi[it], order, eps)
                    for v, rv in zip((f, df, d2f), r):
                        v[it] = rv
                # Q = exp(M) F, M = a log x - x - lgamma(a); G = (dF + F M') x
                m1 = lx - _digamma(ai)
                gi = (df + f * m1) * xi
                if order == 2:
                    # -d2P/da2 / (dP/dx) = (d2F + 2 dF M' + F (M'^2 + M'')) x
                    p2 = (d2f + 2.0 * df * m1 + f * (m1 * m1 - _trigamma(ai))) * xi
            else:
                s, ds, d2s = np.ones_like(ai), np.zeros_like(ai), np.zeros_like(ai)
                if it.any():
                    r = _series(ai[it], xi[it], order, eps)
                    for v, rv in zip((s, ds, d2s), r):
                        v[it] = rv
                # P = exp(L) S, L = a log x - x - lgamma(a + 1); dP/dx = exp(L) a / x
                l1 = lx - _digamma(ai + 1.0)
                gi = -(ds + s * l1) * xi / ai
                if order == 2:
                    p2 = (d2s + 2.0 * ds * l1 + s * (l1 * l1 - _trigamma(ai + 1.0))) * xi / ai
                    p2 = -p2
            g[sel] = gi
            if order == 2:
                ga[sel] = p2 - gi * (lx - _digamma(ai))
        g = np.where(zero, 0.0, g)
        g = np.where(domain | nan, np.nan, g)
        if order == 2:
            ga = np.where(zero, 0.0, ga)
            ga = np.where(domain | nan, np.nan, ga)
    return g, ga


def _init_fraction(a: np.ndarray, x: np.ndarray, order: int):
    """The continued fraction's starting values (used where it does not run)."""
    with np.errstate(all="ignore"):
        qkm1 = (x + 2.0 - a) * x
        ans = (x + 1.0) / qkm1
        dans = ans * x / qkm1
        d2ans = 2.0 * dans * x / qkm1 if order == 2 else np.zeros_like(x)
    return ans, dans, d2ans


def _out(v: np.ndarray, shape: tuple, dt: np.dtype) -> Any:
    r = v.reshape(shape).astype(dt)
    return r if r.ndim else r[()]


def gamma_grad(a: Any, x: Any) -> Any:
    """``dx/da`` of a Gamma(a, 1) sample ``x`` (``jax.lax.random_gamma_grad``).

    Args:
        a: shape parameters (> 0), float array or scalar.
        x: samples (>= 0), broadcastable with ``a``.

    Returns:
        the broadcast shape of ``a`` and ``x``; dtype JAX's inexact promotion of
        theirs (float32 for Python floats). NaN where ``a <= 0``, ``x < 0`` or an
        input is NaN; 0 at ``x = 0``.
    """
    dt, shape, a64, x64 = _prepare(a, x)
    return _out(_terms(a64, x64, dt, 1)[0], shape, dt)


def gamma_grad_da(a: Any, x: Any) -> Any:
    """``dG/da`` at fixed ``x`` for ``G = gamma_grad(a, x)`` (shapes, dtypes and
    special values as :func:`gamma_grad`)."""
    dt, shape, a64, x64 = _prepare(a, x)
    return _out(_terms(a64, x64, dt, 2)[1], shape, dt)
