"""Arithmetic operators: ``+ - * / // % **``, unary ``-`` and ``+`` (``add``,
``subtract``, ``multiply``, ``true_divide``, ``floor_divide``, ``remainder``,
``power``, ...).
"""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ... import dtypes as _dt
from ..ad.casts import project_real
from ..registry import Primitive, register
from ._base import (
    BINARY_INEXACT_SUSPECT,
    _binary_impl,
    _binop,
    _broadcast_error,
    _doc,
    _ew,
    _unop,
    defderiv,
    fix_binary_inexact,
    half_mixed,
    signed_zero,
)
from .exponentials import log
from .minmax import where
from .rounding import trunc

__all__ = [
    "add",
    "subtract",
    "multiply",
    "true_divide",
    "divide",
    "floor_divide",
    "mod",
    "remainder",
    "fmod",
    "power",
    "pow",
    "negative",
    "positive",
]

# =============================================================================
# Arithmetic operators
# =============================================================================
add = _binop(
    "jnp.add", np.add, "Elementwise ``x + y`` with broadcasting (JAX dtype promotion).",
    "+", {"fiubc": "({x} + {y})"}, operator.add,
)  # fmt: skip
subtract = _binop(
    "jnp.subtract", np.subtract, "Elementwise ``x - y`` with broadcasting.",
    "-", {"fiubc": "({x} - {y})"}, operator.sub,
)  # fmt: skip
multiply = _binop(
    "jnp.multiply", np.multiply, "Elementwise ``x * y`` with broadcasting.",
    "*", {"fiubc": "({x} * {y})"}, operator.mul,
)  # fmt: skip
_TRUE_DIVIDE_DOC = (
    "Elementwise ``x / y``; integer inputs give floats (``int32 / int32 -> float32``)."
    " A float16 quotient by a broadcast divisor (a Python scalar, a smaller array) is"
    " ``x * (1 / y)`` with the reciprocal rounded to float16, as XLA on CPU computes it."
)
_F16 = np.dtype(np.float16)


def _true_divide_impl(x, y):
    try:
        r = np.true_divide(x, y)
    except ValueError as e:
        raise _broadcast_error("true_divide", x, y, e) from None
    if r.dtype in BINARY_INEXACT_SUSPECT or half_mixed(r, x, y):
        r = fix_binary_inexact(np.true_divide, r, x, y)
        if r.dtype is _F16 and (type(y) in (float, int) or np.size(y) < np.size(r)):
            # XLA's algebraic simplifier: A / broadcast(B) -> A * broadcast(1 / B),
            # the reciprocal rounded to float16
            with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
                recip = np.float16(1) / np.asarray(y).astype(_F16)
                return np.multiply(np.asarray(x).astype(_F16), recip)
    return r


_true_divide_impl.__name__ = _true_divide_impl.__qualname__ = "true_divide"
true_divide = _ew(
    "jnp.true_divide", _doc(_true_divide_impl, _TRUE_DIVIDE_DOC), np.true_divide,
    operator.truediv, op="/", broadcasting=True, c_expr={"fiubc": "({x} / {y})"},
)  # fmt: skip
divide = true_divide
_FLOOR_DIVIDE_DOC = (
    "Elementwise ``x // y`` (rounds toward -inf). Integer division by zero gives"
    " JAX's (XLA's) values: -1 for a zero ``x``, -2 otherwise (signed), the"
    " type's maximum (unsigned). Not differentiable (zero derivative)."
)
_floor_divide_numpy = _binary_impl(np.floor_divide, "floor_divide", _FLOOR_DIVIDE_DOC)


_I8 = np.dtype(np.int8)


def _bools_as_ints(ufunc, r, x, y):
    """``r = ufunc(x, y)``, or, when both operands are bools (NumPy's int8
    result), ``ufunc`` of them as the default int: JAX's ``power`` and
    ``floor_divide`` promote bools to a number first (``bool ** bool`` is int32)."""
    if r.dtype is not _I8 or _dt.result_type(x, y) != np.bool_:
        return r
    d = _dt.default_int()
    with np.errstate(divide="ignore"):
        return ufunc(np.asarray(x, d), np.asarray(y, d))


def _floor_divide_impl(x, y):
    with np.errstate(divide="ignore"):
        r = _bools_as_ints(np.floor_divide, _floor_divide_numpy(x, y), x, y)
    if r.dtype.kind == "f":
        # JAX rounds (x - rem(x, y)) / y: a zero quotient is +0 / y, with y's
        # sign (NumPy's has x / y's: -0.0 // -0.7 is +0.0 there, -0.0 in JAX)
        return signed_zero(r, y)
    if r.dtype.kind not in "iu":
        return r
    zero = np.asarray(y) == 0
    if not zero.any():
        return r
    # XLA: x / 0 is all ones (-1 signed, max unsigned); JAX's floor_divide then
    # subtracts 1 where sign(x) != sign(0) and rem(x, 0) = x != 0
    if r.dtype.kind == "u":
        fill = np.asarray(np.iinfo(r.dtype).max, r.dtype)
    else:
        fill = np.where(np.asarray(x) != 0, -2, -1).astype(r.dtype)
    return np.where(zero, fill, r)


_floor_divide_impl.__name__ = _floor_divide_impl.__qualname__ = "floor_divide"
floor_divide = _ew(
    "jnp.floor_divide", _doc(_floor_divide_impl, _FLOOR_DIVIDE_DOC), np.floor_divide,
    operator.floordiv, op="//", broadcasting=True, differentiable=False,
    c_expr={"iu": "sj_floor_divide({x}, {y})", "f": "sj_fdivmod_q({x}, {y})"},
)  # fmt: skip
_MOD_DOC = (
    "Elementwise ``x % y`` with the sign of ``y`` (Python / ``jnp.remainder`` semantics);"
    " a zero remainder keeps ``x``'s sign, as JAX's (``-1.4 % 0.7`` is ``-0.0``)."
)
_mod_numpy = _binary_impl(np.mod, "mod", _MOD_DOC)


def _mod_impl(x, y):
    r = _mod_numpy(x, y)
    # JAX's remainder is rem(x, y) (x's sign), plus y where the signs differ
    return signed_zero(r, x) if r.dtype.kind == "f" else r


_mod_impl.__name__ = _mod_impl.__qualname__ = "mod"
mod = _ew(
    "jnp.mod", _doc(_mod_impl, _MOD_DOC), np.mod, operator.mod, op="%", broadcasting=True,
    c_expr={"iu": "sj_remainder({x}, {y})", "f": "sj_fmod_py({x}, {y})"},
)  # fmt: skip
remainder = mod
fmod = _binop(
    "jnp.fmod", np.fmod, "Elementwise C ``fmod``: remainder with the sign of ``x``.",
    None, {"f": "fmod({x}, {y})", "iu": "({y} == 0 ? 0 : {x} % {y})"},
)  # fmt: skip
_power_fast = _binary_impl(np.power, "power", "")
_HALF_POWER_DTYPES = frozenset(np.dtype(t) for t in (np.float16, np.float32, np.float64))


def _int_power(x, y):
    """JAX's integer ``x ** y`` for an integer array exponent: binary
    exponentiation over the exponent's low 6 bits (wrapping products; a negative
    exponent is read as unsigned: ``2 ** -1 == 0``, ``(-1) ** -1 == -1``,
    ``3 ** -1 == 3 ** 63`` wrapped), ``0 ** y == 0`` for ``y != 0``."""
    x, y = np.broadcast_arrays(*(np.asarray(v, dtype=_dt.result_type(x, y)) for v in (x, y)))
    e = y.astype(np.uint64)  # two's complement: the low bits JAX shifts through
    acc = np.where((x == 0) & (y != 0), 0, 1).astype(x.dtype)
    with np.errstate(over="ignore"):
        for _ in range(6):
            acc = np.where(e & 1 == 1, acc * x, acc)
            x = x * x
            e = e >> np.uint64(1)
    return acc


def _sqrt_as_pow(x):
    """``x ** 0.5`` for a real floating ``x``: IEEE ``pow`` (JAX, C's ``pow``), not
    ``sqrt``: +0 at -0 and +inf at -inf, where NumPy's scalar-exponent fast path
    takes ``sqrt`` (-0 and NaN). ``sqrt`` plus two cheap fixes stays about 2x a
    ``sqrt``; a full ``pow`` is about 3x."""
    r = np.sqrt(x)
    if np.ndim(x) == 0:
        return r.dtype.type(np.inf) if x == -np.inf else r + r.dtype.type(0.0)  # -0 + 0 = +0
    r += r.dtype.type(0.0)  # (a fresh array: in place)
    if x.size and np.fmin.reduce(x, axis=None) == -np.inf:  # fmin: NaN does not hide -inf
        r[x == -np.inf] = np.inf
    return r


def _power(x, y):
    """Elementwise ``x ** y`` (jax.numpy.power), JAX's dtypes. Integers to an
    integer *array* of exponents follow JAX (negative exponents give 0 except for
    bases 1 and -1, exponents of 64 and more wrap: :func:`_int_power`); a
    negative Python int exponent of an integer base is JAX's TypeError.
    ``x ** 0.5`` is IEEE ``pow`` at -0 and -inf (:func:`_sqrt_as_pow`).
    Derivative in ``y`` is ``log(x) * x ** y`` with ``log(0)`` read as 0 (JAX)."""
    if getattr(x, "dtype", None) in _HALF_POWER_DTYPES:
        if type(y) is float:
            if y == 0.5:
                return _sqrt_as_pow(x)
        elif isinstance(y, (np.ndarray, np.generic)) and y.ndim == 0 and y == 0.5:
            d = _dt.result_type(x, y)
            if d in _HALF_POWER_DTYPES:
                return _sqrt_as_pow(np.asarray(x, d))
    try:
        return _bools_as_ints(np.power, _power_fast(x, y), x, y)
    except ValueError:
        if isinstance(y, (int, np.integer)) and not isinstance(y, bool):
            raise TypeError(
                f"Integers cannot be raised to negative powers, got integer_pow({y})"
            ) from None
        return _int_power(x, y)


power = _ew(
    "jnp.power", _power, np.power, operator.pow, builtins.pow, math.pow,
    op="**", broadcasting=True, c_expr={"fc": "pow({x}, {y})"},
)  # fmt: skip
pow = power  # noqa: A001 (array-API name)


def _pow_half(x):
    """``x ** 0.5`` as generated code spells the user's operator
    (``driver.finish``, jit's optimizer): Python numbers as Python computes
    them (a Python float stays weakly typed), arrays and NumPy scalars as
    ``jnp.power(x, 0.5)``: IEEE ``pow`` (+0 at -0, +inf at -inf, as JAX), where
    NumPy's ``**`` takes ``sqrt``."""
    if isinstance(x, (np.ndarray, np.generic)):
        return _power(x, 0.5)
    return x**0.5


pow_half = _ew(
    "ad.pow_half", _pow_half, broadcasting=True, c_expr={"fc": "pow({x}, 0.5)"},
    test_domain=(0.2, 3.0),
)  # fmt: skip


def _pow_op(x, y):
    """``x ** y`` as grad/jvp/vjp/linearize code spells the user's operator with
    an exponent that is not a constant (``driver.finish``): NumPy's operator,
    and where NumPy refuses integers to negative integer powers (an integer
    array exponent: ``2 ** jnp.array([-1, 2])``), ``jnp.power``'s JAX result
    (0, as docs/sharp_bits.md; jit's promote calls ``jnp.power`` already).
    Python numbers as Python computes them. No cost but the call where NumPy
    succeeds (the check runs on its error only)."""
    try:
        return x**y
    except ValueError:
        if isinstance(x, (np.ndarray, np.generic)) or isinstance(y, (np.ndarray, np.generic)):
            return _power(x, y)
        raise


pow_op = _ew("ad.pow", _pow_op, broadcasting=True, test_domain=(0.5, 2.0))

negative = _unop(
    "jnp.negative", np.negative, "Elementwise ``-x``.", {"fiubc": "(-{x})"}, operator.neg,
    inexact=False, op="unary -",
)  # fmt: skip
positive = _unop(
    "jnp.positive", np.positive, "Elementwise ``+x`` (a copy with the same dtype).", "(+{x})",
    operator.pos, inexact=False, op="unary +",
)  # fmt: skip


def _add_x(g, ans):
    return g


def _sub_y(g, ans):
    return -g


def _mul_x(g, ans, y):
    return g * y


def _mul_y(g, ans, x):
    return x * g


def _div_x(g, ans, y):
    return g / y


def _div_y(g, ans, x, y):
    return -g * x / (y * y)  # as JAX: g * -x * y**-2


def _mod_y(g, ans, x, y):
    return -g * (x // y)


def _fmod_y(g, ans, x, y):
    return -g * trunc(x / y)


def _int_exponent(y):
    """Static: 1 when the exponent ``y`` has an integer (or bool) dtype, else 0."""
    return 1 if _dt.dtype_of(y).kind in "biu" else 0


int_exponent = register(
    Primitive("ad.int_exponent", _int_exponent, kind="internal", differentiable=False)
)
int_exponent.def_batch(lambda c: (c.rebuild(), False))  # a dtype only: unbatched
int_exponent.samples = lambda rng: [((np.ones(2),), {}), ((2,), {})]


def _int_exponent_aval(avals):
    """The abstract value of ``int_exponent(y)``: a value known now when ``y``'s
    dtype is (so the rule's branch is known: a float exponent's strong pow_base)."""
    y = avals.get("y")
    if type(y) in (bool, int, float, complex):
        return {"static": _int_exponent(y)}
    dt = getattr(y, "ptype", None) or getattr(y, "dtype", None)
    if dt is None:
        return None
    return {"static": 1 if _dt.dtype_of(dt).kind in "biu" else 0}


int_exponent.facts(result_shape=_int_exponent_aval)


def _pow_base(x, y):
    """``x ** y`` as pow's derivative computes it for an exponent that is not an
    integer (see :func:`_pow_x`): the values of ``x ** y`` in generated code."""
    return _pow_op(x, y)


def _pow_base_aval(avals):
    """JAX's abstract value of ``_pow_base``: lax.pow's JVP converts ``x`` to the
    promoted dtype, strongly typed, before ``x ** (y - 1)``, so the derivative of a
    weak ``x ** 2.0`` is strong (``grad(lambda x: x ** 2.0)(3.0)`` is float32);
    None (the elementwise rule) for an integer exponent or an unknown operand."""
    from ... import dtypes

    ops = []
    for name in ("x", "y"):
        a = avals.get(name)
        if type(a) in (int, float, complex):
            ops.append(((type(a), True), ()))
        elif hasattr(a, "weak_type") and hasattr(a, "shape"):
            ops.append(((a.ptype or a.dtype, a.weak_type), a.shape))
        else:
            return None
    if _dt.dtype_of(ops[1][0][0]).kind in "biu":
        return None
    try:
        dt, _ = dtypes.weak_promotion([o for o, _ in ops])
        shape = np.broadcast_shapes(*(s for _, s in ops))
    except (TypeError, ValueError, KeyError):
        return None
    return (tuple(shape), np.dtype(dt))


pow_base = _ew(
    "ad.pow_base", _pow_base, broadcasting=True, c_expr={"fc": "pow({x}, {y})"},
    test_domain=(0.5, 2.0),
)  # fmt: skip
pow_base.facts(result_shape=_pow_base_aval, strong_cast=True)


def _pow_x(g, ans, x, y):
    # JAX: an integer exponent 0 has derivative 0 (the exponent moved to 1 there);
    # a floating one is y * x**(y - 1), NaN at x == 0 (0 * inf), with x converted
    # to a strong dtype first (lax.pow's JVP: pow_base), an integer one keeps
    # x's weak type (jnp.power of a Python int is integer_pow)
    return g * y * (x ** (y - 1 + (y == 0)) if int_exponent(y) else pow_base(x, y - 1))


def _pow_base_x(g, ans, x, y):
    # pow_base's own adjoint (a gradient of a gradient): through JAX's conversion of
    # x, whose transpose converts the cotangent back to x's type (project_real
    # stands for it: fact strong_reset), so grad(grad(lambda x: x ** 2.0))(3.0) is weak
    return project_real(g * y * pow_base(x, y - 1), x)


def _pow_y(g, ans, x):
    return g * ans * log(where(x == 0, 1, x))


def _neg_x(g, ans):
    return -g


def _pos_x(g, ans):
    return g


defderiv(add, _add_x, _add_x)
defderiv(subtract, _add_x, _sub_y)
defderiv(multiply, _mul_x, _mul_y)
defderiv(true_divide, _div_x, _div_y)
defderiv(mod, _add_x, _mod_y)
defderiv(fmod, _add_x, _fmod_y)
defderiv(power, _pow_x, _pow_y)
defderiv(pow_op, _pow_x, _pow_y)
pow_base.def_jvp(_pow_x, _pow_y)  # (JAX: the conversion's tangent is strong)
pow_base.def_vjp(_pow_base_x, _pow_y)
defderiv(negative, _neg_x)
defderiv(positive, _pos_x)
power.test_domain = (0.5, 2.0)
mod.test_domain = (0.3, 2.0)
fmod.test_domain = (0.3, 2.0)
