"""Absolute value, sign and rounding (``abs``, ``sign``, ``floor``, ``ceil``,
``round``, ``trunc``, ...).
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ... import dtypes as _dt
from ...dtypes import (
    INEXACT_SUSPECT,
    UNARY_SUSPECT,
)
from ._base import _doc, _ew, _unary_impl, _unop, defderiv, signed_zero
from .complex_parts import conj, real
from .minmax import where

__all__ = [
    "abs",
    "absolute",
    "fabs",
    "sign",
    "floor",
    "ceil",
    "round",
    "around",
    "trunc",
    "fix",
    "rint",
]

# =============================================================================
# Absolute value, sign and rounding
# =============================================================================
abs = _unop(  # noqa: A001
    "jnp.abs", np.absolute,
    "Elementwise absolute value (real magnitude for complex input). "
    "Derivative ``select(x >= 0, g, -g)``: 1 at 0, as JAX; for complex input "
    "``g conj(x) / |x|`` (0 at 0).",
    {"f": "fabs({x})", "i": "({x} < 0 ? -{x} : {x})", "ub": "{x}", "c": "abs({x})"},
    builtins.abs, operator.abs, inexact=False,
)  # fmt: skip
absolute = abs
fabs = _unop(
    "jnp.fabs", np.fabs, "Elementwise absolute value of real input, as a float array.",
    "fabs({x})", math.fabs,
)  # fmt: skip
_SIGN_DOC = (
    "Elementwise sign (-1, 0 or 1; a float zero keeps its sign, as JAX's:"
    " ``sign(-0.0)`` is ``-0.0``). Not differentiable (zero derivative)."
)
_sign_numpy = _unary_impl(np.sign, "sign", _SIGN_DOC)


def _sign_impl(x):
    r = _sign_numpy(x)
    return signed_zero(r, x) if r.dtype.kind == "f" else r


_sign_impl.__name__ = _sign_impl.__qualname__ = "sign"
sign = _ew(
    "jnp.sign", _doc(_sign_impl, _SIGN_DOC), np.sign, c_expr={"fiu": "sj_sign({x})"},
    differentiable=False,
)  # fmt: skip
floor = _unop(
    "jnp.floor", np.floor, "Elementwise floor; integers pass through. Zero derivative.",
    "floor({x})", inexact=False, differentiable=False,
)  # fmt: skip
ceil = _unop(
    "jnp.ceil", np.ceil, "Elementwise ceiling; integers pass through. Zero derivative.",
    "ceil({x})", inexact=False, differentiable=False,
)  # fmt: skip
trunc = _unop(
    "jnp.trunc", np.trunc, "Elementwise rounding toward zero. Zero derivative.",
    "trunc({x})", inexact=False, differentiable=False,
)  # fmt: skip
fix = trunc


def _rint(x):
    """Elementwise round to nearest integer (ties to even), as floats. Zero derivative."""
    r = np.rint(x)
    if r.dtype in INEXACT_SUSPECT:
        d = _dt.dtype_of(x)
        dt = _dt.default_float() if d.kind in "biu" else d
        return np.rint(x, dtype=dt) if dt.kind in "fc" else r.astype(dt)
    return r


rint = _ew("jnp.rint", _rint, np.rint, c_expr="rint({x})", differentiable=False)


def _round(x, decimals=0):
    """Round to ``decimals`` decimal places, ties to even (NumPy/JAX ``round``).
    Integer inputs stay integers. Zero derivative."""
    r = np.round(x, decimals)
    d = getattr(r, "dtype", None)
    if d is None:  # np.round of a Python int with decimals >= 0 gives an int
        return np.asarray(r, dtype=_dt.dtype_of(x))[()]
    if d in UNARY_SUSPECT:
        return r.astype(_dt.canonicalize_dtype(d))
    return r


round = _ew(  # noqa: A001
    "jnp.round", _round, np.round, np.around, differentiable=False,
    c_expr="rint({x})",
)  # fmt: skip
around = round


def _round_builtin(x, ndigits=None):
    """Python's ``round(x[, ndigits])`` in transformed code, where arrays are
    NumPy's (which has no ``__round__``): for an array or NumPy scalar,
    ``jax.Array.__round__`` (half to even; the default integer dtype without
    ``ndigits``, ``jnp.round(x, ndigits)`` with it); Python's ``round`` for
    anything else (a static count, ``round(n * 0.5)``). Eager calls reach
    ``Array.__round__`` itself."""
    if isinstance(x, (np.ndarray, np.generic)):
        if ndigits is None:
            return _round(x).astype(_dt.default_int())
        return _round(x, ndigits)
    return builtins.round(x) if ndigits is None else builtins.round(x, ndigits)


round_builtin = _ew("ad.round", _round_builtin, builtins.round, differentiable=False)
# (Python numbers known now: a count, ``range(round(n * 0.5))``, that jit folds)
round_builtin.facts(static_for_constants=True)


def _abs_x(g, ans, x):
    return where(x >= 0, g, -g)


def _abs_direction(x):
    """``d|x| / dx`` as JAX's rules use it: ``conj(x) / |x|`` for complex ``x`` (0
    at 0), ``select(x >= 0, 1, -1)`` for real ``x`` (1 at 0), in ``x``'s dtype."""
    if type(x) in (float, int, bool):
        return 1.0 if x >= 0 else -1.0
    x = np.asarray(x)
    if x.dtype.kind != "c":
        one = x.dtype.type(1) if x.dtype.kind == "f" else _dt.default_float().type(1)
        return np.where(x >= 0, one, -one)[()]
    r = np.abs(x)
    nz = r != 0
    return np.where(nz, np.conj(x) / np.where(nz, r, 1), 0).astype(x.dtype)[()]


abs_direction = _ew("ad.abs_direction", _abs_direction, test_domain=(0.3, 2.0))


def _abs_direction_jvp(t, ans, x):
    # ans = conj(x)/|x|: its derivative (conj(t) - ans re(ans t)) / |x|, 0 for real x
    return (conj(t) - ans * real(ans * t)) / where(x == 0, 1, abs(x)) * (x != 0)


def _abs_direction_vjp(g, ans, x):
    # the transpose of the jvp for JAX's pairing re(g t)
    return (conj(g) - real(g * ans) * ans) / where(x == 0, 1, abs(x)) * (x != 0)


def _abs_vjp(g, ans, x):
    return real(g) * abs_direction(x)


def _abs_jvp(t, ans, x):
    return real(t * abs_direction(x))


defderiv(fabs, _abs_x)


abs.def_jvp(_abs_jvp)
abs.def_vjp(_abs_vjp)
abs_direction.def_jvp(_abs_direction_jvp)
abs_direction.def_vjp(_abs_direction_vjp)
