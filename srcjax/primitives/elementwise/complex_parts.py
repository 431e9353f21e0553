"""Complex parts: ``real``, ``imag``, ``conj``/``conjugate``, ``angle``."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ._base import _ew, _ndarray, _unop, defderiv

__all__ = ["real", "imag", "conj", "conjugate"]


# =============================================================================
# Complex parts
# =============================================================================
def _real(x):
    """Real part (``x`` itself for real input)."""
    return np.real(x) if type(x) is _ndarray else _dt.canonicalize_value(np.real(np.asarray(x))[()])


def _imag(x):
    """Imaginary part (zeros for real input). Its adjoint is ``complex(0, -g)``
    (JAX's convention: cotangents pair with tangents by ``re(g t)``)."""
    return np.imag(x) if type(x) is _ndarray else _dt.canonicalize_value(np.imag(np.asarray(x))[()])


real = _ew("jnp.real", _real, np.real, c_expr={"fiub": "{x}", "c": "{x}.real()"})
imag = _ew("jnp.imag", _imag, np.imag, c_expr={"fiub": "0", "c": "{x}.imag()"})
conj = _unop(
    "jnp.conj", np.conjugate, "Complex conjugate (``x`` itself for real input).",
    {"fiub": "{x}", "c": "conj({x})"},
    inexact=False,
)  # fmt: skip
conjugate = conj


def _real_x(g, ans):
    return real(g)


def _conj_x(g, ans):
    return conj(g)


def _imag_jvp(t, ans):
    return imag(t)


# imag/abs map complex to real: their output's cotangent is real in JAX. Here a
# real value used with complex operands later (``a + 1j``) may carry a complex
# cotangent (no conversion op to transpose), so these rules take its real part
# before multiplying by a complex factor (grad of |imag(x (1+2j)) + 1j| was half)


def _imag_vjp(g, ans):
    return real(g) * -1j


defderiv(real, _real_x)
defderiv(conj, _conj_x)
imag.def_jvp(_imag_jvp)
imag.def_vjp(_imag_vjp)
