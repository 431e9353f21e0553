"""Operand tests for the ``direct`` rules of primitives (registry: a helper
whose operands' abstract values decide its path names the one primitive jit
calls instead; optimize/direct.py applies them). An abstract value here is
jit's ``Aval`` (shape, dtype, weak type), read by attribute: this layer does
not import the optimizer's."""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

#: the dtypes whose products the direct forms hand to BLAS or a ufunc as they are
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def strong_arrays(*avals: Any) -> bool:
    """Whether every one is a known array value (or NumPy scalar) that is not a
    Python scalar nor weakly typed (JAX's weak type: the direct form would
    lose it), of float32 or float64, all of one dtype."""
    dts = set()
    for a in avals:
        if type(a).__name__ != "Aval" or a.weak_type or a.dtype not in _FLOATS:
            return False
        dts.add(a.dtype)
    return len(dts) == 1


def ranks(*avals: Any) -> tuple:
    """The ranks of known array values (call :func:`strong_arrays` first)."""
    return tuple(len(a.shape) for a in avals)


class Literal(NamedTuple):
    """An operand of a direct form that is a constant (``ad.one("float32")``),
    not one of the call's own operands (named by their parameters)."""

    value: Any


#: a direct form's name that makes the call a copy of its one named operand (a
#: helper with nothing to do for these operands: ad.maybe_mT(x, False))
COPY = "copy"


def flag(a: Any) -> Any:
    """The value of a constant operand (a :class:`Literal` that jit passes for
    one), else None."""
    return a.value if isinstance(a, Literal) else None
