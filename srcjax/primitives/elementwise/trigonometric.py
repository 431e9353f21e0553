"""Trigonometric and hyperbolic functions, ``hypot``, ``deg2rad``/``rad2deg``,
``sinc``.
"""

from __future__ import annotations

import math

import numpy as np

from ._base import _PI, _as_inexact, _binop, _ew, _unop, defderiv
from .minmax import where
from .powers import sqrt

__all__ = [
    "sin",
    "cos",
    "tan",
    "arcsin",
    "arccos",
    "arctan",
    "arctan2",
    "asin",
    "acos",
    "atan",
    "atan2",
    "sinh",
    "cosh",
    "tanh",
    "arcsinh",
    "arccosh",
    "arctanh",
    "asinh",
    "acosh",
    "atanh",
    "hypot",
    "sinc",
    "deg2rad",
    "rad2deg",
    "degrees",
    "radians",
]

# =============================================================================
# Trigonometric and hyperbolic functions
# =============================================================================
sin = _unop("jnp.sin", np.sin, "Elementwise sine (radians).", {"fiubc": "sin({x})"}, math.sin)
cos = _unop("jnp.cos", np.cos, "Elementwise cosine (radians).", {"fiubc": "cos({x})"}, math.cos)
tan = _unop("jnp.tan", np.tan, "Elementwise tangent (radians).", "tan({x})", math.tan)
arcsin = _unop("jnp.arcsin", np.arcsin, "Elementwise inverse sine.", "asin({x})", math.asin)
arccos = _unop("jnp.arccos", np.arccos, "Elementwise inverse cosine.", "acos({x})", math.acos)
arctan = _unop("jnp.arctan", np.arctan, "Elementwise inverse tangent.", "atan({x})", math.atan)
arctan2 = _binop(
    "jnp.arctan2", np.arctan2,
    "Elementwise angle of the point ``(y=x, x=y)``: ``arctan(x / y)`` in the right quadrant.",
    None, "atan2({x}, {y})", math.atan2, inexact=True,
)  # fmt: skip
sinh = _unop("jnp.sinh", np.sinh, "Elementwise hyperbolic sine.", "sinh({x})", math.sinh)
cosh = _unop("jnp.cosh", np.cosh, "Elementwise hyperbolic cosine.", "cosh({x})", math.cosh)
tanh = _unop(
    "jnp.tanh", np.tanh, "Elementwise hyperbolic tangent.", {"fiubc": "tanh({x})"}, math.tanh
)
arcsinh = _unop(
    "jnp.arcsinh", np.arcsinh, "Elementwise inverse hyperbolic sine.", "asinh({x})", math.asinh
)
arccosh = _unop(
    "jnp.arccosh", np.arccosh, "Elementwise inverse hyperbolic cosine.", "acosh({x})", math.acosh
)
arctanh = _unop(
    "jnp.arctanh", np.arctanh, "Elementwise inverse hyperbolic tangent.", "atanh({x})", math.atanh
)
hypot = _binop(
    "jnp.hypot", np.hypot, "Elementwise ``sqrt(x**2 + y**2)`` without overflow.",
    None, "hypot({x}, {y})", inexact=True,
)  # fmt: skip
deg2rad = _unop(
    "jnp.deg2rad", np.deg2rad, "Degrees to radians, elementwise.", "({x} * 0.017453292519943295)",
    np.radians, math.radians,
)  # fmt: skip
rad2deg = _unop(
    "jnp.rad2deg", np.rad2deg, "Radians to degrees, elementwise.", "({x} * 57.29577951308232)",
    np.degrees, math.degrees,
)  # fmt: skip
asin, acos, atan, atan2 = arcsin, arccos, arctan, arctan2
asinh, acosh, atanh = arcsinh, arccosh, arctanh
radians, degrees = deg2rad, rad2deg


def _sin_x(g, ans, x):
    return g * cos(x)


def _cos_x(g, ans, x):
    return -g * sin(x)


def _tan_x(g, ans):
    return g * (1 + ans * ans)


def _arcsin_x(g, ans, x):
    return g / sqrt(1 - x * x)


def _arccos_x(g, ans, x):
    return -g / sqrt(1 - x * x)


def _arctan_x(g, ans, x):
    return g / (1 + x * x)


def _arctan2_x(g, ans, x, y):
    return g * y / (x * x + y * y)


def _arctan2_y(g, ans, x, y):
    return -g * x / (x * x + y * y)


def _sinh_x(g, ans, x):
    return g * cosh(x)


def _cosh_x(g, ans, x):
    return g * sinh(x)


def _tanh_x(g, ans):
    return g * (1 - ans * ans)


def _arcsinh_x(g, ans, x):
    return g / sqrt(x * x + 1)


def _arccosh_x(g, ans, x):
    return g / sqrt((x - 1) * (x + 1))


def _arctanh_x(g, ans, x):
    return g / (1 - x * x)


# at (0, 0) JAX's hypot (max(|x|, |y|) * sqrt(1 + (min / max)**2)) splits the tie
# of max between the operands with abs'(0) = 1: (0.5, 0.5), not 0/0


def _hypot_x(g, ans, x):
    return g * where(ans == 0, 0.5, x / where(ans == 0, 1.0, ans))


def _hypot_y(g, ans, y):
    return g * where(ans == 0, 0.5, y / where(ans == 0, 1.0, ans))


def _deg2rad_x(g, ans):
    return g * 0.017453292519943295


def _rad2deg_x(g, ans):
    return g * 57.29577951308232


defderiv(sin, _sin_x)
defderiv(cos, _cos_x)
defderiv(tan, _tan_x)
defderiv(arcsin, _arcsin_x)
defderiv(arccos, _arccos_x)
defderiv(arctan, _arctan_x)
defderiv(arctan2, _arctan2_x, _arctan2_y)
defderiv(sinh, _sinh_x)
defderiv(cosh, _cosh_x)
defderiv(tanh, _tanh_x)
defderiv(arcsinh, _arcsinh_x)
defderiv(arccosh, _arccosh_x)
defderiv(arctanh, _arctanh_x)
defderiv(hypot, _hypot_x, _hypot_y)
defderiv(deg2rad, _deg2rad_x)
defderiv(rad2deg, _rad2deg_x)
tan.test_domain = (-1.2, 1.2)
arcsin.test_domain = arccos.test_domain = arctanh.test_domain = (-0.9, 0.9)
arccosh.test_domain = (1.2, 3.0)
hypot.test_domain = (0.2, 2.0)


def _sinc(x):
    """Normalized sinc, ``sin(pi x) / (pi x)`` with ``sinc(0) = 1``, elementwise.

    Its derivatives of every order are finite at 0 (``sinc'(0) = 0``,
    ``sinc''(0) = -pi**2 / 3``), as in JAX."""
    x = _as_inexact(x)
    y = _PI * np.where(x == 0, 1.0e-20, x)
    return np.sin(y) / y


sinc = _ew(
    "jnp.sinc", _sinc, np.sinc, c_expr="(({x}) == 0 ? 1 : sinpi({x}) / (3.141592653589793 * ({x})))"
)


def _sinc_maclaurin(x, k):
    """The ``k``-th derivative of ``sinc`` at ``x``, summed from its Maclaurin
    series: exact at 0 (``0`` for odd ``k``, ``(-1)**(k/2) pi**k / (k + 1)`` for
    even ``k``) and accurate for ``|x| <~ 3``. The derivative rules of
    ``jnp.sinc`` select it only where ``x == 0``; its own derivative in ``x`` is
    ``sinc_maclaurin(x, k + 1)``, so derivatives of every order are finite there."""
    x = _as_inexact(x)
    xd = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(xd)
    # sinc(x) = sum_n (-1)^n (pi x)^(2n) / (2n+1)!  ->  differentiate k times
    for n in range((k + 1) // 2, (k + 1) // 2 + 40):
        c = (-1.0) ** n * _PI ** (2 * n) / math.factorial(2 * n + 1)
        c *= math.factorial(2 * n) / math.factorial(2 * n - k)
        out += c * xd ** (2 * n - k)
    r = out.astype(x.dtype, copy=False)
    return r if r.ndim else r[()]


sinc_maclaurin = _ew("ad.sinc_maclaurin", _sinc_maclaurin)


def _sinc_x(g, ans, x):
    safe = where(x == 0, 1, x)
    slope = (cos(3.141592653589793 * safe) - ans) / safe
    return g * where(x == 0, sinc_maclaurin(x, 1), slope)


def _sinc_maclaurin_x(g, ans, x, k):
    return g * sinc_maclaurin(x, k + 1)


defderiv(sinc, _sinc_x)
defderiv(sinc_maclaurin, _sinc_maclaurin_x)
sinc.samples = lambda rng: [
    ((np.array([0.0, 0.3, -1.7, 2.5]),), {}),
    ((np.array(0.0),), {}),
    ((rng.uniform(-2, 2, (2, 3)),), {}),
]
sinc_maclaurin.samples = lambda rng: [
    ((rng.uniform(-1, 1, (3,)), k), {}) for k in range(4)
]  # fmt: skip


# JAX computes these with a strongly typed constant or conversion: strongly typed
# results whatever the operands' weak types (registry.Primitive.weak_result)
for _p in (hypot, deg2rad, rad2deg, sinc):
    _p.facts(weak_result=False)
