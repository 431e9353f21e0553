"""Elementwise primitives: Python operators, ufuncs and ``jnp.where``.

Every primitive here maps each element (or each broadcast tuple of elements)
independently, so its derivative is a diagonal linear map: multiplying the
incoming tangent *or* cotangent by the elementwise partial derivative. One rule
function therefore serves as both the JVP rule (``g`` is a tangent) and the VJP
rule (``g`` is a cotangent); :func:`defderiv` registers it as both. Rules are
single expressions over other primitives and operators, so the transforms
inline them as readable code (``x_bar = y_bar * jnp.cos(x)``) and can
differentiate them again.

Implementations call one NumPy ufunc and check the result dtype against a small
set (see :mod:`srcjax.dtypes`); only where NumPy's promotion may differ from
JAX's (64-bit results while ``jax_enable_x64`` is off, ``int32 / int32``,
``sin(int8)``, ``int32 + float16`` ...) do they take a slower path.

Conventions (JAX's, checked by tests): ``abs'(0) = 1`` (JAX's ``select(x >= 0,
g, -g)``); ``maximum``/``minimum`` split ties 0.5/0.5; ``clip`` is
``minimum(maximum(x, min), max)`` and splits ties the same way; ``sqrt'(0) =
inf``; ``where`` sends ``where(c, g, 0)`` to ``x`` and ``where(c, 0, g)`` to
``y``; ``sinc`` has finite derivatives of every order at 0; rounding functions,
``sign`` and ``//`` are not differentiable (``differentiable=False``: their
outputs carry no derivative, i.e. the derivative is zero).

One module per family: :mod:`._base` (the makers), :mod:`.logic`,
:mod:`.minmax`, :mod:`.exponentials`, :mod:`.complex_parts`, :mod:`.rounding`,
:mod:`.arithmetic`, :mod:`.powers`, :mod:`.trigonometric`. Importing the
package registers them all, in this order (each family after those its rules
use).
"""

from __future__ import annotations

# ruff: noqa: I001
# (the imports register the primitives: their order is the registration order)

from ._base import _as_inexact, defderiv, new_elementwise  # noqa: F401
from .logic import *  # noqa: F403
from .logic import __all__ as _logic_all
from .minmax import *  # noqa: F403
from .minmax import __all__ as _minmax_all
from .exponentials import *  # noqa: F403
from .exponentials import __all__ as _exponentials_all
from .complex_parts import *  # noqa: F403
from .complex_parts import __all__ as _complex_parts_all
from .rounding import *  # noqa: F403
from .rounding import __all__ as _rounding_all
from .arithmetic import *  # noqa: F403
from .arithmetic import __all__ as _arithmetic_all
from .arithmetic import _add_x, _div_x, _div_y, _fmod_y  # noqa: F401
from .powers import *  # noqa: F403
from .powers import __all__ as _powers_all
from .trigonometric import *  # noqa: F403
from .trigonometric import __all__ as _trigonometric_all
from .trigonometric import _sinc_x, sinc_maclaurin  # noqa: F401

__all__ = [
    *_logic_all,
    *_minmax_all,
    *_exponentials_all,
    *_complex_parts_all,
    *_rounding_all,
    *_arithmetic_all,
    *_powers_all,
    *_trigonometric_all,
]
del (
    _logic_all,
    _minmax_all,
    _exponentials_all,
    _complex_parts_all,
    _rounding_all,
    _arithmetic_all,
    _powers_all,
    _trigonometric_all,
)
