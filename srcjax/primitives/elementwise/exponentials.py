"""Exponentials and logarithms (``exp``, ``log``, ``log1p``, ``logaddexp``, ...)."""

from __future__ import annotations

import math

import numpy as np

from ._base import _binop, _unop, defderiv
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
log10 = _unop("jnp.log10", np.log10, "Elementwise base-10 logarithm.", "log10({x})", math.log10)
log1p = _unop(
    "jnp.log1p", np.log1p, "Elementwise ``log(1 + x)``, accurate near 0.", "log1p({x})", math.log1p
)
expm1 = _unop(
    "jnp.expm1", np.expm1, "Elementwise ``exp(x) - 1``, accurate near 0.", "expm1({x})", math.expm1
)
logaddexp = _binop(
    "jnp.logaddexp", np.logaddexp,
    "Elementwise ``log(exp(x) + exp(y))`` without overflow.",
    None, {"f": "sj_logaddexp({x}, {y})"}, inexact=True,
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
