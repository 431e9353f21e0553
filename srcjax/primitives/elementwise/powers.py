"""Powers and roots: ``sqrt``, ``cbrt``, ``square``, ``reciprocal``."""

from __future__ import annotations

import math

import numpy as np

from ...dtypes import (
    INEXACT_SUSPECT,
    fix_inexact,
)
from ._base import _ew, _unop, defderiv
from .arithmetic import pow_half

__all__ = ["sqrt", "cbrt", "square", "reciprocal"]

# =============================================================================
# Powers and roots
# =============================================================================
sqrt = _unop(
    "jnp.sqrt",
    np.sqrt,
    "Elementwise square root; ``sqrt'(0) = inf``.",
    {"fiubc": "sqrt({x})"},
    math.sqrt,
)
cbrt = _unop(
    "jnp.cbrt", np.cbrt, "Elementwise real cube root.", "cbrt({x})", getattr(math, "cbrt", None)
)
square = _unop(
    "jnp.square", np.square, "Elementwise ``x * x``.", {"fiubc": "({x} * {x})"}, inexact=False
)


def _reciprocal(x):
    """Elementwise ``1 / x``; integer inputs give floats (as JAX)."""
    r = np.reciprocal(x)
    d = r.dtype
    if d in INEXACT_SUSPECT or d.kind not in "fc":
        return fix_inexact(np.reciprocal, r, x)
    return r


reciprocal = _ew("jnp.reciprocal", _reciprocal, np.reciprocal, c_expr="(1 / {x})")


def _sqrt_x(g, ans):
    return g / (2 * ans)


def _cbrt_x(g, ans):
    return g / (3 * ans * ans)


def _square_x(g, ans, x):
    return g * 2 * x


def _reciprocal_x(g, ans):
    return -g * ans * ans


defderiv(sqrt, _sqrt_x)
defderiv(pow_half, _sqrt_x)  # (x ** 0.5)' = 0.5 / x ** 0.5
defderiv(cbrt, _cbrt_x)
defderiv(square, _square_x)
defderiv(reciprocal, _reciprocal_x)
sqrt.test_domain = (0.2, 3.0)
cbrt.test_domain = (0.2, 3.0)
reciprocal.test_domain = (0.3, 3.0)
