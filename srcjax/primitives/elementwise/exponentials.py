"""Exponentials and logarithms (``exp``, ``log``, ``log1p``, ``logaddexp``, ...)."""

from __future__ import annotations

import math

import numpy as np

from ._base import _binary_inexact_impl, _binop, _doc, _ew, _inexact_impl, _unop, defderiv
from .minmax import replace_inf

__all__ = ["exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "logaddexp", "logaddexp2"]

# =============================================================================
# Exponentials and logarithms
# =============================================================================
exp = _unop("jnp.exp", np.exp, "Elementwise ``e ** x``.", {"fiubc": "exp({x})"}, math.exp)
exp2 = _unop(
    "jnp.exp2", np.exp2, "Elementwise ``2 ** x``.", "exp2({x})", getattr(math, "exp2", None)
)
log = _unop(
    "jnp.log", np.log, "Elementwise natural logarithm.", {"fiubc": "log({x})"}
)  # not math.log: 2 args
log2 = _unop("jnp.log2", np.log2, "Elementwise base-2 logarithm.", "log2({x})", math.log2)
_LOG10_DOC = (
    "Elementwise base-10 logarithm, as JAX computes it: ``log(x) * (1 / log(10))``"
    " (``log10(1000.0)`` is exactly 3 in float32; NumPy's float32 loop gives 3.0000002)."
)
_log = _inexact_impl(np.log, "log", "")


def _log10_impl(x):
    r = _log(x)
    with np.errstate(invalid="ignore"):
        return r * np.finfo(r.dtype).dtype.type(0.4342944819032518)


_log10_impl.__name__ = _log10_impl.__qualname__ = "log10"
log10 = _ew("jnp.log10", _doc(_log10_impl, _LOG10_DOC), np.log10, math.log10, c_expr="log10({x})")
log1p = _unop(
    "jnp.log1p", np.log1p, "Elementwise ``log(1 + x)``, accurate near 0.", "log1p({x})", math.log1p
)
expm1 = _unop(
    "jnp.expm1", np.expm1, "Elementwise ``exp(x) - 1``, accurate near 0.", "expm1({x})", math.expm1
)


# -- logaddexp of float32 arrays (issue 17): NumPy's float32 loop is scalar code
# and off by one ulp in ~4% of elements; these SIMD passes, float64 inside, are
# about 2x faster from ~64 elements and correctly rounded -------------------------
_ndarray = np.ndarray
_F32 = np.float32
_F64 = np.float64
_FAST_MIN_SIZE = 64  # below: the errstate and the 7 calls cost more than they save


def _f32_operand(v, other) -> bool:
    """``v`` a float32 array, ``other`` one too or a weak Python scalar that
    float32 holds (the result is then float32, as JAX's)."""
    if type(v) is not _ndarray or v.dtype.type is not _F32:
        return False
    t = type(other)
    if t is _ndarray:
        return other.dtype.type is _F32
    return (t is float or t is int) and -1e38 < other < 1e38


def _logaddexp_f32(x, y):
    """``max(x, y) + log1p(exp(-|x - y|))``: ``min(x, y) - max(x, y)`` (``-|x -
    y|``, one rounding in float64), exp, log1p and the sum in float64, rounded
    once to float32; ``out=`` buffers only. Equal infinities make that NaN:
    ``fmin`` makes it 0 (the result is then ``m``'s inf); a NaN operand stays NaN
    through ``m``. A finite scalar operand (``logaddexp(0.0, z)``: softplus, a
    logistic loss) meets no equal infinities: no ``fmin``, no errstate (R6:
    ~40% of the call; ``copysign(x - y, -1)`` before cost a pass more)."""
    finite = type(x) is not _ndarray or type(y) is not _ndarray  # (scalars: -1e38..1e38)
    x = x if type(x) is _ndarray else _F32(x)  # a weak scalar: float32 first, as JAX
    y = y if type(y) is _ndarray else _F32(y)
    m = np.maximum(x, y)
    if finite:
        d = np.subtract(np.minimum(x, y), m, dtype=_F64)
    else:
        with np.errstate(invalid="ignore"):  # inf - inf
            d = np.subtract(np.minimum(x, y), m, dtype=_F64)
        np.fmin(d, 0, out=d)
    np.exp(d, out=d)
    np.log1p(d, out=d)
    return np.add(m, d, out=m, casting="unsafe")


# ``np.logaddexp(x, y)`` (JAX's result dtypes), by the SIMD passes above for
# float32 arrays of _FAST_MIN_SIZE elements or more; also nn.softplus's and
# nn.log_sigmoid's
def logaddexp_values(x, y):
    """Elementwise ``log(exp(x) + exp(y))`` without overflow."""
    if (
        (type(x) is _ndarray and x.size >= _FAST_MIN_SIZE)
        or (type(y) is _ndarray and y.size >= _FAST_MIN_SIZE)
    ) and (_f32_operand(x, y) or _f32_operand(y, x)):
        try:
            return _logaddexp_f32(x, y)
        except ValueError:  # shapes that do not broadcast: the general path's error
            pass
    return _logaddexp_any(x, y)


_logaddexp_any = _binary_inexact_impl(np.logaddexp, "logaddexp", logaddexp_values.__doc__)
logaddexp_values.__name__ = logaddexp_values.__qualname__ = "logaddexp"
logaddexp = _ew(
    "jnp.logaddexp", logaddexp_values, np.logaddexp,
    broadcasting=True, c_expr={"f": "sj_logaddexp({x}, {y})"},
)  # fmt: skip
logaddexp2 = _binop(
    "jnp.logaddexp2", np.logaddexp2,
    "Elementwise ``log2(2 ** x + 2 ** y)`` without overflow.",
    None, {"f": "sj_logaddexp2({x}, {y})"}, inexact=True,
)  # fmt: skip


def _exp_x(g, ans):
    return g * ans


def _exp2_x(g, ans):
    return g * ans * 0.6931471805599453


def _log_x(g, ans, x):
    return g / x


def _log2_x(g, ans, x):
    return g / (x * 0.6931471805599453)


def _log10_x(g, ans, x):
    return g / (x * 2.302585092994046)


def _log1p_x(g, ans, x):
    return g / (1 + x)


def _expm1_x(g, ans):
    return g * (ans + 1)


def _logaddexp_x(g, ans, x):
    return g * exp(replace_inf(x) - replace_inf(ans))


def _logaddexp_y(g, ans, y):
    return g * exp(replace_inf(y) - replace_inf(ans))


def _logaddexp2_x(g, ans, x):
    return g * exp2(replace_inf(x) - replace_inf(ans))


def _logaddexp2_y(g, ans, y):
    return g * exp2(replace_inf(y) - replace_inf(ans))


defderiv(exp, _exp_x)
defderiv(exp2, _exp2_x)
defderiv(log, _log_x)
defderiv(log2, _log2_x)
defderiv(log10, _log10_x)
defderiv(log1p, _log1p_x)
defderiv(expm1, _expm1_x)
defderiv(logaddexp, _logaddexp_x, _logaddexp_y)
defderiv(logaddexp2, _logaddexp2_x, _logaddexp2_y)
log.test_domain = log2.test_domain = log10.test_domain = (0.2, 3.0)
log1p.test_domain = (-0.7, 2.0)


# JAX computes these with a strongly typed constant or conversion: strongly typed
# results whatever the operands' weak types (registry.Primitive.weak_result)
for _p in (log2, log10, logaddexp2):
    _p.facts(weak_result=False)
