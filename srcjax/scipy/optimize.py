"""``srcjax.scipy.optimize`` (``jax.scipy.optimize``): ``minimize`` with BFGS.

The solver is JAX's: BFGS after Nocedal & Wright's Algorithm 6.1 with the
strong-Wolfe line search of their Algorithms 3.5/3.6 (zoom by cubic, then
quadratic interpolation, then bisection), with JAX's constants, iteration
limits, counters and status codes, so that iterates, ``nit``, ``nfev`` and
``njev`` follow JAX's in the same precision. It is plain srcjax code: the
gradient is ``srcjax.value_and_grad(fun)``, the arithmetic NumPy in ``x0``'s
dtype (float32 unless x64), loops are Python loops.

Inside transformed code ``minimize`` is one primitive (``ad.minimize``) that
runs the solver when the generated code reaches it: ``jit`` calls it as it is
(never on stand-ins), ``vmap`` runs it once per example (the results equal
JAX's batched while loop, which freezes each example when it is done), and a
derivative through it raises ``NoDerivativeRuleError`` (JAX cannot
differentiate it either: reverse mode stops at its while loops).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, NamedTuple, Optional

import numpy as np

from .. import dtypes as _dt
from ..primitives.registry import Primitive, register

__all__ = ["OptimizeResults", "minimize"]


class OptimizeResults(NamedTuple):
    """What :func:`minimize` returns (jax.scipy.optimize.OptimizeResults).

    Fields: ``x`` the solution ``(n,)``; ``success`` (bool array): converged
    without a line-search failure; ``status`` (int array): 0 converged, 1
    ``maxiter`` reached, 2 + the line search's status when it failed (3: zoom
    failed, 5: its iteration limit), -1 otherwise; ``fun`` the value at ``x``;
    ``jac`` the gradient at ``x``; ``hess_inv`` the inverse Hessian estimate
    ``(n, n)``; ``nfev``/``njev`` (int arrays) the function/gradient
    evaluations; ``nit`` the BFGS iterations."""

    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


class _LineSearchResults(NamedTuple):
    failed: Any
    nit: int
    nfev: int
    ngev: int
    k: int
    a_k: Any
    f_k: Any
    g_k: Any
    status: int


class _ZoomResults(NamedTuple):
    failed: Any
    a_star: Any
    phi_star: Any
    g_star: Any
    nfev: int
    ngev: int


def _cubicmin(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through ``(a, fa)`` with slope ``fpa``,
    ``(b, fb)`` and ``(c, fc)`` (NaN or inf where there is none)."""
    dtype = np.result_type(a, fa, fpa, b, fb, c, fc)
    db = b - a
    dc = c - a
    denom = (db * dc) ** 2 * (db - dc)
    d1 = np.array([[dc**2, -(db**2)], [-(dc**3), db**3]], dtype=dtype)
    d2 = np.array([fb - fa - fpa * db, fc - fa - fpa * dc], dtype=dtype)
    coef = (d1 @ d2) / denom
    big_a, big_b = coef[0], coef[1]
    radical = big_b * big_b - 3.0 * big_a * fpa
    return a + (-big_b + np.sqrt(radical)) / (3.0 * big_a)


def _quadmin(a, fa, fpa, b, fb):
    """The minimizer of the parabola through ``(a, fa)`` with slope ``fpa`` and
    ``(b, fb)``."""
    db = b - a
    curv = (fb - fa - fpa * db) / (db**2)
    return a - fpa / (2.0 * curv)


def _zoom(restricted, wolfe_one, wolfe_two, a_lo, phi_lo, dphi_lo, a_hi, phi_hi, g_0):
    """Nocedal & Wright's Algorithm 3.6 as JAX runs it: at most 30 trials, a
    bracket narrower than 1e-5 (float32; 1e-10 in float64) is a failure."""
    done = False
    failed = False
    j = 0
    a_rec = (a_lo + a_hi) / 2.0
    phi_rec = (phi_lo + phi_hi) / 2.0
    a_star, phi_star, g_star = 1.0, phi_lo, g_0
    nfev = 0
    while not done and not failed:
        dalpha = a_hi - a_lo
        lo_end = np.minimum(a_hi, a_lo)
        hi_end = np.maximum(a_hi, a_lo)
        cchk = 0.2 * dalpha
        qchk = 0.1 * dalpha
        threshold = 1e-5 if np.finfo(np.result_type(dalpha)).bits < 64 else 1e-10
        # (a reversed bracket, dalpha < 0, fails after this trial, as in JAX)
        failed = bool(dalpha <= threshold)
        a_j_cubic = _cubicmin(a_lo, phi_lo, dphi_lo, a_hi, phi_hi, a_rec, phi_rec)
        use_cubic = j > 0 and lo_end + cchk < a_j_cubic < hi_end - cchk
        a_j_quad = _quadmin(a_lo, phi_lo, dphi_lo, a_hi, phi_hi)
        use_quad = not use_cubic and lo_end + qchk < a_j_quad < hi_end - qchk
        if use_cubic:
            a_j = a_j_cubic
        elif use_quad:
            a_j = a_j_quad
        else:
            a_j = (a_lo + a_hi) / 2.0
        phi_j, dphi_j, g_j = restricted(a_j)
        phi_j = np.asarray(phi_j).astype(np.result_type(phi_lo))
        dphi_j = np.asarray(dphi_j).astype(np.result_type(dphi_lo))
        nfev += 1
        hi_to_j = bool(wolfe_one(a_j, phi_j) or phi_j >= phi_lo)
        star_to_j = bool(wolfe_two(dphi_j)) and not hi_to_j
        hi_to_lo = bool(dphi_j * (a_hi - a_lo) >= 0.0) and not hi_to_j and not star_to_j
        lo_to_j = not hi_to_j and not star_to_j
        if hi_to_j:
            a_rec, phi_rec = a_hi, phi_hi
            a_hi, phi_hi = a_j, phi_j
        if star_to_j:
            done = True
            a_star, phi_star, g_star = a_j, phi_j, g_j
        if hi_to_lo:
            a_rec, phi_rec = a_hi, phi_hi
            a_hi, phi_hi = a_lo, phi_lo
        elif lo_to_j:
            a_rec, phi_rec = a_lo, phi_lo
        if lo_to_j:
            a_lo, phi_lo, dphi_lo = a_j, phi_j, dphi_j
        j += 1
        failed = failed or j >= 30
    return _ZoomResults(failed, a_star, phi_star, g_star, nfev, nfev)


def _line_search(value_and_grad, xk, pk, old_fval, old_old_fval, gfk, c1=1e-4, c2=0.9, maxiter=20):
    """A step along ``pk`` meeting the strong Wolfe conditions (Nocedal &
    Wright's Algorithm 3.5, JAX's ``line_search`` with its value and gradient
    at ``xk`` given): the first trial step extrapolates the last decrease
    (capped at 1), later ones double."""
    dt = pk.dtype

    def restricted(t):
        t = np.asarray(t, dtype=dt)
        phi, g = value_and_grad(xk + t * pk)
        return phi, np.real(np.dot(g, pk)), g

    phi_0 = old_fval
    dphi_0 = np.real(np.dot(gfk, pk))
    candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
    start_value = np.where(candidate > 1, np.asarray(1.0, candidate.dtype), candidate)

    def wolfe_one(a_i, phi_i):  # (the negation of the sufficient decrease)
        return phi_i > phi_0 + c1 * a_i * dphi_0

    def wolfe_two(dphi_i):
        return np.abs(dphi_i) <= -c2 * dphi_0

    done = failed = False
    i = 1
    a_i1, phi_i1, dphi_i1 = 0.0, phi_0, dphi_0
    a_star, phi_star, g_star = 0.0, phi_0, gfk
    nfev = 0
    while not done and i <= maxiter and not failed:
        a_i = start_value if i == 1 else a_i1 * 2.0
        phi_i, dphi_i, g_i = restricted(a_i)
        nfev += 1
        to_zoom1 = bool(wolfe_one(a_i, phi_i) or (phi_i >= phi_i1 and i > 1))
        to_i = bool(wolfe_two(dphi_i)) and not to_zoom1
        to_zoom2 = bool(dphi_i >= 0.0) and not to_zoom1 and not to_i
        if to_zoom1:
            z = _zoom(restricted, wolfe_one, wolfe_two, a_i1, phi_i1, dphi_i1, a_i, phi_i, gfk)
        elif to_zoom2:
            z = _zoom(restricted, wolfe_one, wolfe_two, a_i, phi_i, dphi_i, a_i1, phi_i1, gfk)
        if to_zoom1 or to_zoom2:
            nfev += z.nfev
            done = True
            failed = failed or z.failed
            a_star, phi_star, g_star = z.a_star, z.phi_star, z.g_star
        elif to_i:
            done = True
            a_star, phi_star, g_star = a_i, phi_i, g_i
        i += 1
        a_i1, phi_i1, dphi_i1 = a_i, phi_i, dphi_i
    status = 1 if failed else (3 if i > maxiter else 0)
    alpha_k = np.asarray(a_star, dtype=dt)
    if np.finfo(dt).bits != 64 and abs(alpha_k) < 1e-8:
        # JAX's floor on the step size below 64 bits (a zero step stays zero)
        alpha_k = np.sign(alpha_k) * np.asarray(1e-8, dt)
    return _LineSearchResults(
        failed or not done, i - 1, nfev, nfev, i, alpha_k, phi_star, g_star, status
    )


def minimize_bfgs(value_and_grad, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10):
    """JAX's ``minimize_bfgs`` (its options are these keyword arguments)."""
    if maxiter is None:
        maxiter = np.size(x0) * 200
    d = x0.shape[0]
    eye = np.eye(d, dtype=x0.dtype)
    f_k, g_k = value_and_grad(x0)
    g_k = np.asarray(g_k)
    x_k = x0
    h_k = eye
    converged = bool(np.linalg.norm(g_k, ord=norm) < gtol)
    failed = False
    k, nfev, ngev, ls_status = 0, 1, 1, 0
    old_old_fval = f_k + np.linalg.norm(g_k) / 2
    while not converged and not failed and k < maxiter:
        p_k = -(h_k @ g_k)
        ls = _line_search(
            value_and_grad, x_k, p_k, f_k, old_old_fval, g_k, maxiter=line_search_maxiter
        )
        nfev += ls.nfev
        ngev += ls.ngev
        failed = bool(ls.failed)
        ls_status = ls.status
        s_k = ls.a_k * p_k
        x_kp1 = x_k + s_k
        g_kp1 = np.asarray(ls.g_k)
        y_k = g_kp1 - g_k
        rho_k = np.reciprocal(np.dot(y_k, s_k))
        w = eye - rho_k * (s_k[:, None] * y_k[None, :])
        h_kp1 = (w @ h_k) @ w.T + rho_k * (s_k[:, None] * s_k[None, :])
        if np.isfinite(rho_k):
            h_k = h_kp1
        converged = bool(np.linalg.norm(g_kp1, ord=norm) < gtol)
        k += 1
        old_old_fval = f_k
        x_k, f_k, g_k = x_kp1, ls.f_k, g_kp1
    if converged:
        status = 0
    elif k == maxiter:
        status = 1
    elif failed:
        status = 2 + ls_status
    else:
        status = -1
    return x_k, converged, failed, status, f_k, g_k, h_k, nfev, ngev, k


def _minimize(
    fun: Callable[..., Any],
    x0: Any,
    args: tuple = (),
    *,
    method: str,
    tol: Optional[float] = None,
    options: Optional[Mapping[str, Any]] = None,
) -> OptimizeResults:
    """Minimize a scalar function of one vector (jax.scipy.optimize.minimize).

    Args:
        fun: ``fun(x, *args)`` -> a real scalar, differentiable by srcjax
            (``x``: ``(n,)``). Inside transformed code: a function defined with
            ``def`` (a lambda made there is an UnsupportedSyntaxError; pass data
            through ``args``).
        x0: the start, shape ``(n,)``, real (float32 unless x64; float64
            arrays are canonicalized as JAX does).
        args: a tuple of extra arguments of ``fun``.
        method: ``"BFGS"`` (any case); required, as in JAX.
        tol: accepted and ignored, as JAX's minimize ignores it (use
            ``options={"gtol": ...}``).
        options: ``maxiter`` (default ``200 * n``), ``norm`` (of the gradient
            in the convergence test, default ``inf``), ``gtol`` (default
            1e-5), ``line_search_maxiter`` (default 10).

    Returns:
        :class:`OptimizeResults` in ``x0``'s dtype, counters as default ints.

    Raises:
        TypeError: ``args`` not a tuple (JAX's message); an unknown option.
        ValueError: ``x0`` not 1-D; a method JAX does not know (JAX's
            ``Method ... not recognized``).
        NotImplementedError: JAX's experimental
            ``'l-bfgs-experimental-do-not-rely-on-this'`` (not provided).
    """
    from ..api import value_and_grad

    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")
    name = method.lower()
    if name == "l-bfgs-experimental-do-not-rely-on-this":
        raise NotImplementedError(
            "srcjax.scipy.optimize.minimize: JAX's experimental L-BFGS method is not "
            "provided; use method='BFGS'"
        )
    if name != "bfgs":
        raise ValueError(f"Method {method} not recognized")
    x0 = _dt.canonicalize_value(np.asarray(x0))
    if x0.ndim != 1:
        raise ValueError(
            f"srcjax.scipy.optimize.minimize: x0 must be 1-D (shape (n,)), got shape {x0.shape}"
        )
    vg = value_and_grad(fun)

    def fun_vg(x):
        return vg(x, *args)

    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        x, converged, failed, status, f, g, h, nfev, ngev, k = minimize_bfgs(fun_vg, x0, **options)
    ints = _dt.default_int()
    return OptimizeResults(
        x=np.asarray(x),
        success=np.asarray(converged and not failed),
        status=np.asarray(status, dtype=ints),
        fun=np.asarray(f),
        jac=np.asarray(g),
        hess_inv=np.asarray(h),
        nfev=np.asarray(nfev, dtype=ints),
        njev=np.asarray(ngev, dtype=ints),
        nit=np.asarray(k, dtype=ints),
    )


minimize = register(Primitive("ad.minimize", _minimize, kind="control"))
minimize.returns_tree = True
minimize.missing_rule_hint = (
    "srcjax.scipy.optimize.minimize has no derivative (neither has JAX's: its while "
    "loops cannot be reversed); differentiate the objective at the result instead, or "
    "stop the gradient with srcjax.lax.stop_gradient"
)


def _minimize_batch(c):
    return None  # one solve per example (JAX's batched while loop gives the same)


minimize.def_batch(_minimize_batch)


def _quadratic(x, a):
    return 0.5 * x @ (a @ x) - x.sum()


def _samples(rng):
    m = rng.normal(size=(3, 3))
    return [((_quadratic, rng.normal(size=3), (m @ m.T + 3 * np.eye(3),)), {"method": "BFGS"})]


minimize.samples = _samples
