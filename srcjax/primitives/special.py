"""Special functions (``srcjax.scipy.special``).

``erf``, ``gammaln`` and the other transcendental ones are computed by SciPy,
imported on first use (SciPy is the optional ``srcjax[scipy]`` extra; importing
srcjax never needs it). ``logit``, ``xlogy`` and ``xlog1py`` are plain NumPy.
Results follow JAX's dtypes (``erf(int32) -> float32``); derivative rules are
shared between JVP and VJP as for every elementwise primitive.
"""

from __future__ import annotations

import math

import numpy as np

from .. import dtypes as _dt
from ..dtypes import INEXACT_SUSPECT, fix_inexact
from .elementwise import defderiv, exp, log, log1p
from .registry import Primitive, register

__all__ = [
    "erf",
    "erfc",
    "erfinv",
    "logit",
    "gammaln",
    "gamma",
    "digamma",
    "polygamma",
    "xlogx",
    "xlogy",
    "xlog1py",
    "ndtr",
    "ndtri",
    "log_ndtr",
]

_SC = []


def _scipy_special():
    """``scipy.special``, imported on first use."""
    if not _SC:
        try:
            import scipy.special as sc
        except ImportError as e:  # pragma: no cover (SciPy is installed in CI)
            raise ImportError(
                "this srcjax.scipy.special function needs SciPy: pip install 'srcjax[scipy]'"
            ) from e
        _SC.append(sc)
    return _SC[0]


def _scipy_unary(fname: str, doc: str):
    def impl(x):
        f = getattr(_scipy_special(), fname)
        r = f(x)
        if r.dtype in INEXACT_SUSPECT or r.dtype.kind not in "fc":
            return fix_inexact(f, r, x)
        return r

    impl.__name__ = impl.__qualname__ = fname
    impl.__doc__ = doc
    return impl


def _sp(public: str, impl, *aliases, **kw) -> Primitive:
    kw.setdefault("kind", "elementwise")
    return register(Primitive(public, impl, **kw), *aliases)


erf = _sp(
    "special.erf", _scipy_unary("erf", "Error function ``2/sqrt(pi) int_0^x exp(-t**2) dt``."),
    math.erf, c_expr="erf({x})",
)  # fmt: skip
erfc = _sp(
    "special.erfc", _scipy_unary("erfc", "Complementary error function ``1 - erf(x)``."),
    math.erfc, c_expr="erfc({x})",
)  # fmt: skip

_scipy_gammaln = _scipy_unary("gammaln", "")
_scipy_erfinv = _scipy_unary("erfinv", "")


def _gammaln(x):
    """``log(|gamma(x)|)``, elementwise; ``+inf`` at ``-inf`` (JAX's ``lax.lgamma`` and C's
    ``lgamma``; SciPy gives ``-inf`` there)."""
    r = _scipy_gammaln(x)
    if np.isneginf(r).any():
        r = np.where(np.isneginf(np.asarray(x)), np.asarray(np.inf, r.dtype), r)
    return r


def _erfinv(x):
    """Inverse error function on (-1, 1), elementwise; odd, so ``erfinv(-0.0)`` is ``-0.0``
    as in JAX (SciPy gives ``+0.0``)."""
    r = _scipy_erfinv(x)
    xa = np.asarray(x)
    if xa.dtype.kind == "f":
        r = np.copysign(r, xa.astype(r.dtype, copy=False))
    return r


gammaln = _sp("special.gammaln", _gammaln, math.lgamma, c_expr="lgamma({x})")
erfinv = _sp("special.erfinv", _erfinv, c_expr="erfinv({x})")
gamma = _sp(
    "special.gamma", _scipy_unary("gamma", "The gamma function, elementwise."),
    math.gamma, c_expr="tgamma({x})",
)  # fmt: skip
_scipy_digamma = _scipy_unary("digamma", "")


def _digamma(x):
    """``d/dx log(gamma(x))``, elementwise; NaN at the poles ``0, -1, -2, ...``
    (JAX; SciPy gives -inf at 0 and +inf at -0.0)."""
    r = _scipy_digamma(x)
    if np.isinf(r).any():
        r = np.where(np.asarray(x) == 0, np.asarray(np.nan, r.dtype), r)
    return r


digamma = _sp("special.digamma", _digamma)
ndtr = _sp(
    "special.ndtr", _scipy_unary("ndtr", "Standard normal CDF, elementwise."),
    c_expr="normcdf({x})",
)  # fmt: skip
ndtri = _sp(
    "special.ndtri", _scipy_unary("ndtri", "Inverse of the standard normal CDF on (0, 1)."),
    c_expr="normcdfinv({x})",
)  # fmt: skip
log_ndtr = _sp(
    "special.log_ndtr", _scipy_unary("log_ndtr", "``log(ndtr(x))``, accurate for very negative x."),
)  # fmt: skip


def _polygamma(n, x):
    """The ``n``-th derivative of ``digamma`` at ``x`` (``n`` a non-negative int)."""
    dt = _dt.to_inexact_dtype(_dt.result_type(x))
    r = np.asarray(_scipy_special().polygamma(n, x), dtype=dt)
    return r if r.ndim else r[()]


polygamma = _sp("special.polygamma", _polygamma, broadcasting=True)


def _erf_x(g, ans, x):
    return g * 1.1283791670955126 * exp(-x * x)


def _erfc_x(g, ans, x):
    return -g * 1.1283791670955126 * exp(-x * x)


def _erfinv_x(g, ans):
    return g * 0.886226925452758 * exp(ans * ans)


def _gammaln_x(g, ans, x):
    return g * digamma(x)


def _gamma_x(g, ans, x):
    return g * ans * digamma(x)


def _digamma_x(g, ans, x):
    return g * polygamma(1, x)


def _polygamma_x(g, ans, n, x):
    return g * polygamma(n + 1, x)


def _ndtr_x(g, ans, x):
    return g * 0.3989422804014327 * exp(-0.5 * x * x)


def _ndtri_x(g, ans):
    return g * 2.5066282746310002 * exp(0.5 * ans * ans)


def _log_ndtr_x(g, ans, x):
    return g * 0.3989422804014327 * exp(-0.5 * x * x - ans)


defderiv(erf, _erf_x)
defderiv(erfc, _erfc_x)
defderiv(erfinv, _erfinv_x)
defderiv(gammaln, _gammaln_x)
defderiv(gamma, _gamma_x)
defderiv(digamma, _digamma_x)
defderiv(polygamma, None, _polygamma_x)
defderiv(ndtr, _ndtr_x)
defderiv(ndtri, _ndtri_x)
defderiv(log_ndtr, _log_ndtr_x)
erfinv.test_domain = ndtri.test_domain = (0.1, 0.9)
gammaln.test_domain = gamma.test_domain = digamma.test_domain = (0.5, 3.0)
log_ndtr.test_domain = (-4.0, 2.0)
polygamma.samples = lambda rng: [
    ((n, rng.uniform(0.5, 3.0, s)), {}) for n in (0, 1, 2) for s in [(), (3,)]
]  # fmt: skip


# -- NumPy-only functions -----------------------------------------------------------
def _logit(x):
    """``log(x / (1 - x))``, the inverse of the sigmoid, elementwise."""
    dt = _dt.to_inexact_dtype(_dt.dtype_of(x))
    x = np.asarray(x, dtype=dt)
    return _out(np.log(x / (1 - x)))


def _out(r):
    return r if r.ndim else r[()]


logit = _sp("special.logit", _logit, c_expr="log(({x}) / (1 - ({x})))")


def _logit_x(g, ans, x):
    return g / (x * (1 - x))


defderiv(logit, _logit_x)
logit.test_domain = (0.05, 0.95)


def _xlogy(x, y):
    """``x * log(y)``, with 0 where ``x == 0`` (even where ``y == 0``). Broadcasts."""
    dt = _dt.result_type_inexact(x, y)
    x = np.asarray(x, dtype=dt)
    y = np.asarray(y, dtype=dt)
    return _out(x * np.log(np.where(x == 0, 1, y)))


def _xlog1py(x, y):
    """``x * log1p(y)``, with 0 where ``x == 0`` (even where ``y == -1``). Broadcasts."""
    dt = _dt.result_type_inexact(x, y)
    x = np.asarray(x, dtype=dt)
    y = np.asarray(y, dtype=dt)
    return _out(x * np.log1p(np.where(x == 0, 0, y)))


xlogy = _sp(
    "special.xlogy", _xlogy, broadcasting=True, c_expr="(({x}) == 0 ? 0 : ({x}) * log({y}))"
)
xlog1py = _sp(
    "special.xlog1py", _xlog1py, broadcasting=True,
    c_expr="(({x}) == 0 ? 0 : ({x}) * log1p({y}))",
)  # fmt: skip


def _xlogy_x(g, ans, y):
    return g * log(y)


def _xlogy_y(g, ans, x, y):
    return g * x / y


def _xlog1py_x(g, ans, y):
    return g * log1p(y)


def _xlog1py_y(g, ans, x, y):
    return g * x / (1 + y)


defderiv(xlogy, _xlogy_x, _xlogy_y)
defderiv(xlog1py, _xlog1py_x, _xlog1py_y)
xlogy.test_domain = xlog1py.test_domain = (0.2, 2.0)


def _xlogx(x):
    """``x * log(x)`` with 0 at ``x == 0`` (NaN below 0), elementwise, in ``x``'s
    inexact dtype: JAX's private ``_xlogx`` behind ``entr`` and ``rel_entr``."""
    with np.errstate(invalid="ignore"):  # entr(-1) takes the other branch
        return _xlogy(x, x)


xlogx = _sp("special.xlogx", _xlogx, c_expr="(({x}) == 0 ? 0 : ({x}) * log({x}))")


def _xlogx_x(g, ans, x):
    return g * (log(x) + 1)  # JAX's custom rule: -inf at 0


defderiv(xlogx, _xlogx_x)
xlogx.test_domain = (0.2, 2.0)


# JAX computes these with a strongly typed constant or conversion: strongly typed
# results whatever the operands' weak types (registry.Primitive.weak_result)
for _p in (gamma, ndtr, ndtri, log_ndtr, logit):
    _p.facts(weak_result=False)
