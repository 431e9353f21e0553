"""``jax.lax``'s elementwise operations: the new primitives (``div``'s truncating
division, ``rem``, the shifts) and the compositions that check JAX's dtype
rule and call the ``jnp`` primitive (``add`` ... ``round``,
``convert_element_type``)."""

from __future__ import annotations

import enum

import numpy as np

from ...primitives.ad import astype as _astype
from ...primitives.ad import is_half_float as _is_half_float
from ...primitives.conv import def_window_computation as _def_window_computation
from ...primitives.elementwise import (
    _add_x,
    _div_x,
    _div_y,
    _fmod_y,
    abs,
    defderiv,
    new_elementwise,
    sign,
    sqrt,
)
from ...primitives.elementwise import add as _add
from ...primitives.elementwise import arctan2 as _arctan2
from ...primitives.elementwise import bitwise_and as _bitwise_and
from ...primitives.elementwise import bitwise_or as _bitwise_or
from ...primitives.elementwise import bitwise_xor as _bitwise_xor
from ...primitives.elementwise import equal as _equal
from ...primitives.elementwise import greater as _greater
from ...primitives.elementwise import greater_equal as _greater_equal
from ...primitives.elementwise import less as _less
from ...primitives.elementwise import less_equal as _less_equal
from ...primitives.elementwise import maximum as _maximum
from ...primitives.elementwise import minimum as _minimum
from ...primitives.elementwise import multiply as _multiply
from ...primitives.elementwise import not_equal as _not_equal
from ...primitives.elementwise import power as _power
from ...primitives.elementwise import reciprocal as _reciprocal
from ...primitives.elementwise import round as _round_even
from ...primitives.elementwise import subtract as _subtract
from ...primitives.elementwise import trunc as _trunc
from ...primitives.elementwise import where as _where
from ._static import (
    _canonical_dtype,
    _integer_pow_check,
    _pow_dtypes,
    _same_dtypes,
    _same_dtypes_impl,
)

# ---------------------------------------------------------------------------
# new primitives: C division and remainder, shifts


def _as_common(name, kinds, x, y):
    dt = _same_dtypes_impl(name, kinds, x, y)
    return np.asarray(x, dt), np.asarray(y, dt), dt


def _div_impl(x, y):
    """Elementwise ``x / y`` (jax.lax.div): integers divide truncating toward zero
    (as C; ``x / 0`` is -1), floats divide exactly. Operands of one dtype."""
    x, y, dt = _as_common("div", "num", x, y)
    if dt.kind in "fc":
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.true_divide(x, y)
    with np.errstate(all="ignore"):
        zero = y == 0
        ys = np.where(zero, np.ones((), dt), y)
        r = np.fmod(x, ys)
        q = ((x - r) // ys).astype(dt)
    return np.where(zero, np.asarray(-1).astype(dt), q)  # all ones: the max if unsigned


def _rem_impl(x, y):
    """Elementwise C remainder (jax.lax.rem): ``x - div(x, y) * y``, the sign of
    ``x`` (integer ``x % 0`` is ``x``). Operands of one dtype."""
    x, y, dt = _as_common("rem", "num", x, y)
    with np.errstate(all="ignore"):
        if dt.kind in "fc":
            return np.fmod(x, y)
        zero = y == 0
        r = np.fmod(x, np.where(zero, np.ones((), dt), y)).astype(dt)
    return np.where(zero, x, r)


def _shift_impl(kind, x, y):
    name = {"l": "shift_left", "a": "shift_right_arithmetic", "r": "shift_right_logical"}[kind]
    x, y, dt = _as_common(name, "int", x, y)
    if dt.kind == "b":
        raise TypeError(
            f"{name} does not accept dtype bool at position 0. Accepted dtypes at"
            " position 0 are subtypes of integer."
        )
    bits = dt.itemsize * 8
    big = (y < 0) | (y >= bits)
    ys = np.where(big, np.zeros((), dt), y)
    if kind == "l":
        return np.where(big, np.zeros((), dt), np.left_shift(x, ys))
    if kind == "a":
        fill = np.where(x < 0, np.asarray(-1, dt), np.zeros((), dt))
        return np.where(big, fill, np.right_shift(x, ys))
    u = np.dtype(f"u{dt.itemsize}")
    out = np.right_shift(x.view(u) if x.ndim else x.astype(u), ys.astype(u)).astype(dt)
    return np.where(big, np.zeros((), dt), out)


def _shift_left_impl(x, y):
    """Elementwise ``x << y`` (jax.lax.shift_left): integers of one dtype; a shift
    by a negative amount or by the bit width or more gives 0."""
    return _shift_impl("l", x, y)


def _shift_right_arithmetic_impl(x, y):
    """Elementwise arithmetic ``x >> y`` (jax.lax.shift_right_arithmetic): the sign
    bit fills; out-of-range shifts give 0 or -1."""
    return _shift_impl("a", x, y)


def _shift_right_logical_impl(x, y):
    """Elementwise logical ``x >> y`` (jax.lax.shift_right_logical): zeros fill (a
    signed ``x`` is shifted as its unsigned bit pattern); out-of-range shifts give 0."""
    return _shift_impl("r", x, y)


_new_elementwise = new_elementwise  # (the shared helper, primitives/elementwise/_base.py)


div = defderiv(_new_elementwise("lax.div", _div_impl, domain=(0.3, 2.0)), _div_x, _div_y)
rem = defderiv(_new_elementwise("lax.rem", _rem_impl, domain=(0.3, 2.0)), _add_x, _fmod_y)
shift_left = _new_elementwise("lax.shift_left", _shift_left_impl, differentiable=False)
shift_right_arithmetic = _new_elementwise(
    "lax.shift_right_arithmetic", _shift_right_arithmetic_impl, differentiable=False
)
shift_right_logical = _new_elementwise(
    "lax.shift_right_logical", _shift_right_logical_impl, differentiable=False
)
for _p in (shift_left, shift_right_arithmetic, shift_right_logical):
    _p.samples = lambda rng: [
        ((np.array([1, -8, 5], np.int32), np.array([1, 2, 40], np.int32)), {})
    ]


# ---------------------------------------------------------------------------
# elementwise compositions: JAX's dtype check, then the jnp primitive


def _binary(name, kinds, prim, doc):
    """The operation ``lax.<name>``: JAX's check that ``x`` and ``y`` have one
    canonical dtype of the accepted ``kinds`` (``_static._KINDS``; TypeError in
    JAX's words otherwise), then the ``jnp`` primitive ``prim``. Transformed code
    inlines it as it does a user's function."""

    def op(x, y):
        _same_dtypes(op_name, op_kinds, x, y)
        return prim(x, y)

    op_name, op_kinds = name, kinds
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


_ONE = "operands of one dtype"
_CMP = "bool; " + _ONE
_BITS = "integers or bools of one dtype"

# (name, accepted dtype kinds, the jnp primitive, docstring)
add = _binary(
    "add",
    "num",
    _add,
    """Elementwise ``x + y`` (jax.lax.add). ``x`` and ``y`` must have one dtype
    (numbers; Python scalars count as int32/float32), else TypeError; shapes
    equal or one 0-d. Result: that dtype.""",
)
sub = _binary(
    "sub", "num", _subtract, "Elementwise ``x - y`` (jax.lax.sub); dtypes as :func:`add`."
)
mul = _binary(
    "mul", "num", _multiply, "Elementwise ``x * y`` (jax.lax.mul); dtypes as :func:`add`."
)
max = _binary(  # noqa: A001
    "max", "any", _maximum, "Elementwise maximum (jax.lax.max), NaN propagating; any one dtype."
)
min = _binary(  # noqa: A001
    "min", "any", _minimum, "Elementwise minimum (jax.lax.min), NaN propagating; any one dtype."
)

for _fn, _kind in ((add, "add"), (max, "max"), (min, "min")):
    _def_window_computation(_fn, _kind)  # lax.reduce_window(x, 0., lax.add, ...)
del _fn, _kind

eq = _binary("eq", "any", _equal, f"Elementwise ``x == y`` (jax.lax.eq): {_CMP}.")
ne = _binary("ne", "any", _not_equal, f"Elementwise ``x != y`` (jax.lax.ne): {_CMP}.")
lt = _binary("lt", "any", _less, f"Elementwise ``x < y`` (jax.lax.lt): {_CMP}.")
le = _binary("le", "any", _less_equal, f"Elementwise ``x <= y`` (jax.lax.le): {_CMP}.")
gt = _binary("gt", "any", _greater, f"Elementwise ``x > y`` (jax.lax.gt): {_CMP}.")
ge = _binary("ge", "any", _greater_equal, f"Elementwise ``x >= y`` (jax.lax.ge): {_CMP}.")
atan2 = _binary(
    "atan2",
    "inexact",
    _arctan2,
    """Elementwise ``arctan(x / y)`` in the right quadrant (jax.lax.atan2);
    floating operands of one dtype.""",
)
bitwise_and = _binary(
    "bitwise_and", "int", _bitwise_and, f"Elementwise AND (jax.lax.bitwise_and): {_BITS}."
)
bitwise_or = _binary(
    "bitwise_or", "int", _bitwise_or, f"Elementwise OR (jax.lax.bitwise_or): {_BITS}."
)
bitwise_xor = _binary(
    "bitwise_xor", "int", _bitwise_xor, f"Elementwise XOR (jax.lax.bitwise_xor): {_BITS}."
)


def pow(x, y):  # noqa: A001
    """Elementwise ``x ** y`` (jax.lax.pow): ``x`` floating or complex, ``y`` of
    ``x``'s dtype or an integer. Result: ``x``'s dtype."""
    _pow_dtypes(x, y)
    return _power(x, y)


def integer_pow(x, y):
    """Elementwise ``x ** y`` for a static Python int ``y`` (jax.lax.integer_pow):
    ``x``'s dtype; integers to a negative power are a TypeError."""
    n = _integer_pow_check(x, y)
    return _power(x, n)


def clamp(min, x, max):  # noqa: A002
    """Elementwise ``minimum(maximum(x, min), max)`` (jax.lax.clamp): ``min`` and
    ``max`` 0-d or of ``x``'s shape, all three of one dtype."""
    _same_dtypes("clamp", "any", min, x, max)
    return _minimum(_maximum(x, min), max)


def _rsqrt_impl(x):
    """Elementwise ``1 / sqrt(x)`` (jax.lax.rsqrt); ``x``'s float dtype. A float16
    or bfloat16 ``x`` is computed in float32 and rounded once (correctly rounded,
    as XLA's), not rounded after the square root and again after ``1 /``."""
    d = getattr(x, "dtype", None)
    if d is not None and d.itemsize == 2 and _is_half_float(d):
        return np.reciprocal(np.sqrt(x.astype(np.float32))).astype(d)
    # (the implementations, not the public functions: those return Arrays, and
    # generated code calls this on its plain buffers; user 08: under vmap an Array
    # result sent ``rsqrt(x) @ w`` down the per-example path for user objects)
    return _reciprocal.impl(sqrt.impl(x))


def _rsqrt_x(g, ans, x):
    return g * (-0.5 * ans / x)


rsqrt = defderiv(_new_elementwise("lax.rsqrt", _rsqrt_impl, domain=(0.3, 2.0)), _rsqrt_x)


class RoundingMethod(enum.IntEnum):
    """``lax.round``'s rounding of halves (jax.lax.RoundingMethod)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=0):  # noqa: A001
    """Elementwise rounding to an integral value (jax.lax.round): halves away from
    zero (``rounding_method=0``, the default: ``2.5 -> 3``, ``-0.5 -> -1``) or to
    the nearest even (``1`` / ``RoundingMethod.TO_NEAREST_EVEN``). ``x``'s float
    dtype; derivative 0."""
    t = _trunc(x)
    away = _where(abs(x - t) >= 0.5, t + sign(x), t)
    return _where(rounding_method == 1, _round_even(x), away)


def convert_element_type(operand, new_dtype):
    """``operand`` as ``new_dtype`` (jax.lax.convert_element_type; canonicalized:
    float64 is float32 unless x64). Float to int truncates toward zero and
    saturates (NaN -> 0); complex to real takes the real part. Differentiable
    to float dtypes (zero derivative to int/bool)."""
    return _astype(operand, _canonical_dtype(new_dtype))
