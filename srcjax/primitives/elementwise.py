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
"""

from __future__ import annotations

import builtins
import math
import operator
from typing import Optional

import numpy as np

from .. import dtypes as _dt
from ..dtypes import (
    BINARY_INEXACT_SUSPECT,
    BINARY_SUSPECT,
    INEXACT_SUSPECT,
    UNARY_SUSPECT,
    fix_binary,
    fix_binary_inexact,
    fix_inexact,
    fix_unary,
    half_mixed,
)
from .registry import Primitive, register

__all__ = [
    # operators
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
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "equal",
    "not_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "bitwise_and",
    "bitwise_or",
    "bitwise_xor",
    "bitwise_not",
    "invert",
    "bitwise_invert",
    "left_shift",
    "right_shift",
    # exponentials and logarithms
    "exp",
    "exp2",
    "log",
    "log2",
    "log10",
    "log1p",
    "expm1",
    "logaddexp",
    "logaddexp2",
    # trigonometric and hyperbolic
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
    # powers and roots
    "sqrt",
    "cbrt",
    "square",
    "reciprocal",
    # sign, rounding, selection
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
    "clip",
    "maximum",
    "minimum",
    "fmax",
    "fmin",
    "where",
    "nan_to_num",
    # predicates
    "isnan",
    "isinf",
    "isfinite",
    "isposinf",
    "isneginf",
    "signbit",
    "isclose",
    # complex parts
    "real",
    "imag",
    "conj",
    "conjugate",
]

_ndarray = np.ndarray
_PI = math.pi


# -- rule maker ---------------------------------------------------------------
def defderiv(prim: Primitive, *rules, **named) -> Primitive:
    """Register elementwise derivative rules as both VJP and JVP rules.

    For an elementwise primitive the derivative with respect to each operand is
    multiplication by a partial derivative (or a select), which is its own
    transpose: ``rule(g, ans, *params)`` is the JVP contribution when ``g`` is
    that operand's tangent and the VJP contribution (before un-broadcasting)
    when ``g`` is the output cotangent. ``None`` skips a parameter.
    """
    prim.def_vjp(*rules, **named)
    prim.def_jvp(*rules, **named)
    return prim


def _doc(fn, doc: str):
    fn.__doc__ = doc
    return fn


# -- implementation makers (the hot path) -------------------------------------
def _binary_impl(ufunc, name: str, doc: str):
    """Arithmetic binary ufunc: JAX result dtype via ``result_type``."""

    def impl(x, y):
        try:
            r = ufunc(x, y)
        except OverflowError:  # a Python int beyond the other operand's integer type
            return _wrapped_weak_int(ufunc, x, y)
        except ValueError as e:
            raise _broadcast_error(name, x, y, e) from None
        if r.dtype in BINARY_SUSPECT or half_mixed(r, x, y):
            return fix_binary(ufunc, r, x, y)
        return r

    impl.__name__ = impl.__qualname__ = name
    return _doc(impl, doc)


def _broadcast_error(name: str, x, y, err: ValueError) -> Exception:
    """JAX's error for operands that do not broadcast (a TypeError there, NumPy's
    ValueError: :class:`srcjax.errors.ShapeError` is both); another ValueError
    ``err`` as it is."""
    from ..errors import ShapeError

    sx, sy = np.shape(x), np.shape(y)
    try:
        np.broadcast_shapes(sx, sy)
    except ValueError:
        return ShapeError(f"{name} got incompatible shapes for broadcasting: {sx}, {sy}.")
    return err


def _wrapped_weak_int(ufunc, x, y):
    """``ufunc(x, y)`` where one operand is a Python int out of the other's integer
    dtype's range: JAX converts the weakly typed int to that dtype (it wraps:
    ``int8_array * 300`` multiplies by 44); NumPy raises OverflowError."""
    from ..dtypes import cast

    arr = y if type(x) is int else x
    dt = np.asarray(arr).dtype
    if dt.kind not in "iu":
        raise OverflowError(f"Python integer out of bounds for {dt.name}")
    return ufunc(cast(x, dt), cast(y, dt))


def _binary_inexact_impl(ufunc, name: str, doc: str):
    """Float-valued binary ufunc (``/``, ``arctan2``): ints promote to float."""

    def impl(x, y):
        try:
            r = ufunc(x, y)
        except ValueError as e:
            raise _broadcast_error(name, x, y, e) from None
        if r.dtype in BINARY_INEXACT_SUSPECT or half_mixed(r, x, y):
            return fix_binary_inexact(ufunc, r, x, y)
        return r

    impl.__name__ = impl.__qualname__ = name
    return _doc(impl, doc)


def _predicate_impl(ufunc, name: str, doc: str, nargs: int = 2):
    """Boolean-valued ufunc: NumPy's result is already JAX's."""
    if nargs == 2:

        def impl(x, y):
            return ufunc(x, y)

    else:

        def impl(x):
            return ufunc(x)

    impl.__name__ = impl.__qualname__ = name
    return _doc(impl, doc)


def _unary_impl(ufunc, name: str, doc: str):
    """Dtype-preserving unary ufunc (``-x``, ``abs``, ``floor``)."""

    def impl(x):
        r = ufunc(x)
        if r.dtype in UNARY_SUSPECT:
            return fix_unary(ufunc, r, x)
        return r

    impl.__name__ = impl.__qualname__ = name
    return _doc(impl, doc)


def _inexact_impl(ufunc, name: str, doc: str):
    """Float-valued unary ufunc (``sin``, ``exp``): ints promote to float."""

    def impl(x):
        r = ufunc(x)
        if r.dtype in INEXACT_SUSPECT:
            return fix_inexact(ufunc, r, x)
        return r

    impl.__name__ = impl.__qualname__ = name
    return _doc(impl, doc)


def _as_inexact(x):
    """``x`` as an array of JAX's float dtype for it (no copy for float arrays)."""
    if type(x) is _ndarray and x.dtype.kind in "fc" and x.dtype not in INEXACT_SUSPECT:
        return x
    return np.asarray(x, dtype=_dt.to_inexact_dtype(_dt.dtype_of(x)))


def _ew(public: str, impl, *aliases, **kw) -> Primitive:
    kw.setdefault("kind", "elementwise")
    return register(Primitive(public, impl, **kw), *[a for a in aliases if a is not None])


def new_elementwise(
    public: str,
    impl,
    differentiable: bool = True,
    domain: tuple = (-2.0, 2.0),
    hint: Optional[str] = None,
) -> Primitive:
    """Register a broadcasting elementwise primitive ``public`` (rules added by the
    caller), tested by the registry on ``domain``; ``hint``: what to say when a
    derivative is asked of it and it has none. Shared by the modules that add
    elementwise functions outside this one (lax/_ops.py, lax/_more.py,
    primitives/more.py)."""
    p = _ew(public, impl, broadcasting=True, differentiable=differentiable, test_domain=domain)
    if hint is not None:
        p.missing_rule_hint = hint
    return p


def _binop(public, ufunc, doc, op=None, c_expr=None, *aliases, inexact=False, **kw):
    name = public.rsplit(".", 1)[-1]
    maker = _binary_inexact_impl if inexact else _binary_impl
    return _ew(
        public, maker(ufunc, name, doc), ufunc, *aliases, op=op, broadcasting=True,
        c_expr=c_expr, **kw,
    )  # fmt: skip


def _unop(public, ufunc, doc, c_expr=None, *aliases, inexact=True, **kw):
    name = public.rsplit(".", 1)[-1]
    maker = _inexact_impl if inexact else _unary_impl
    return _ew(public, maker(ufunc, name, doc), ufunc, *aliases, c_expr=c_expr, **kw)


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
true_divide = _binop(
    "jnp.true_divide", np.true_divide,
    "Elementwise ``x / y``; integer inputs give floats (``int32 / int32 -> float32``).",
    "/", {"fiubc": "({x} / {y})"}, operator.truediv, inexact=True,
)  # fmt: skip
divide = true_divide
_FLOOR_DIVIDE_DOC = (
    "Elementwise ``x // y`` (rounds toward -inf). Integer division by zero gives"
    " JAX's (XLA's) values: -1 for a zero ``x``, -2 otherwise (signed), the"
    " type's maximum (unsigned). Not differentiable (zero derivative)."
)
_floor_divide_numpy = _binary_impl(np.floor_divide, "floor_divide", _FLOOR_DIVIDE_DOC)


def _floor_divide_impl(x, y):
    with np.errstate(divide="ignore"):
        r = _floor_divide_numpy(x, y)
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
mod = _binop(
    "jnp.mod", np.mod,
    "Elementwise ``x % y`` with the sign of ``y`` (Python / ``jnp.remainder`` semantics).",
    "%", {"iu": "sj_remainder({x}, {y})", "f": "sj_fmod_py({x}, {y})"}, operator.mod,
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


def _half_power(x):
    """``x ** 0.5`` for a real floating ``x``: IEEE ``pow`` (JAX, C's ``pow``), not
    ``sqrt``: +0 at -0 and +inf at -inf, where NumPy's scalar-exponent fast path
    takes ``sqrt`` (-0 and NaN). ``sqrt`` plus two cheap fixes stays about 2x a
    ``sqrt``; a full ``pow`` is about 3x."""
    r = np.sqrt(x)
    r = r + r.dtype.type(0.0)  # -0 + 0 is +0
    if np.ndim(x) == 0:
        return r.dtype.type(np.inf) if x == -np.inf else r
    if x.size and np.fmin.reduce(x, axis=None) == -np.inf:  # fmin: NaN does not hide -inf
        r[x == -np.inf] = np.inf
    return r


def _power(x, y):
    """Elementwise ``x ** y`` (jax.numpy.power), JAX's dtypes. Integers to an
    integer *array* of exponents follow JAX (negative exponents give 0 except for
    bases 1 and -1, exponents of 64 and more wrap: :func:`_int_power`); a
    negative Python int exponent of an integer base is JAX's TypeError.
    ``x ** 0.5`` is IEEE ``pow`` at -0 and -inf (:func:`_half_power`).
    Derivative in ``y`` is ``log(x) * x ** y`` with ``log(0)`` read as 0 (JAX)."""
    if getattr(x, "dtype", None) in _HALF_POWER_DTYPES:
        if type(y) is float:
            if y == 0.5:
                return _half_power(x)
        elif isinstance(y, (np.ndarray, np.generic)) and y.ndim == 0 and y == 0.5:
            d = _dt.result_type(x, y)
            if d in _HALF_POWER_DTYPES:
                return _half_power(np.asarray(x, d))
    try:
        return _power_fast(x, y)
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

negative = _unop(
    "jnp.negative", np.negative, "Elementwise ``-x``.", {"fiubc": "(-{x})"}, operator.neg,
    inexact=False, op="unary -",
)  # fmt: skip
positive = _unop(
    "jnp.positive", np.positive, "Elementwise ``+x`` (a copy with the same dtype).", "(+{x})",
    operator.pos, inexact=False, op="unary +",
)  # fmt: skip


def _add_x(g, ans, x, y):
    return g


def _sub_y(g, ans, x, y):
    return -g


def _mul_x(g, ans, x, y):
    return g * y


def _mul_y(g, ans, x, y):
    return x * g


def _div_x(g, ans, x, y):
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


def _pow_x(g, ans, x, y):
    # JAX: an integer exponent 0 has derivative 0 (the exponent moved to 1 there);
    # a floating one is y * x**(y - 1), NaN at x == 0 (0 * inf)
    return g * y * x ** (y - 1 + (y == 0) * int_exponent(y))


def _pow_y(g, ans, x, y):
    return g * ans * log(where(x == 0, 1, x))


def _neg_x(g, ans, x):
    return -g


def _pos_x(g, ans, x):
    return g


defderiv(add, _add_x, _add_x)
defderiv(subtract, _add_x, _sub_y)
defderiv(multiply, _mul_x, _mul_y)
defderiv(true_divide, _div_x, _div_y)
defderiv(mod, _add_x, _mod_y)
defderiv(fmod, _add_x, _fmod_y)
defderiv(power, _pow_x, _pow_y)
defderiv(negative, _neg_x)
defderiv(positive, _pos_x)
power.test_domain = (0.5, 2.0)
mod.test_domain = (0.3, 2.0)
fmod.test_domain = (0.3, 2.0)


# =============================================================================
# Comparisons, logical and bitwise operators (not differentiable)
# =============================================================================
def _cmp(public, ufunc, op, c_op, alias, what):
    name = public.rsplit(".", 1)[-1]
    doc = f"Elementwise ``x {what} y`` with broadcasting; a boolean array. Not differentiable."
    return _ew(
        public, _predicate_impl(ufunc, name, doc), ufunc, alias, op=op, broadcasting=True,
        differentiable=False,
        c_expr={("fiubc" if c_op in ("==", "!=") else "fiub"): f"({{x}} {c_op} {{y}})"},
    )  # fmt: skip


less = _cmp("jnp.less", np.less, "<", "<", operator.lt, "<")
less_equal = _cmp("jnp.less_equal", np.less_equal, "<=", "<=", operator.le, "<=")
greater = _cmp("jnp.greater", np.greater, ">", ">", operator.gt, ">")
greater_equal = _cmp("jnp.greater_equal", np.greater_equal, ">=", ">=", operator.ge, ">=")
equal = _cmp("jnp.equal", np.equal, "==", "==", operator.eq, "==")
not_equal = _cmp("jnp.not_equal", np.not_equal, "!=", "!=", operator.ne, "!=")

logical_and = _ew(
    "jnp.logical_and",
    _predicate_impl(np.logical_and, "logical_and", "Elementwise logical AND (boolean result)."),
    np.logical_and, broadcasting=True, differentiable=False, c_expr="({x} && {y})",
)  # fmt: skip
logical_or = _ew(
    "jnp.logical_or",
    _predicate_impl(np.logical_or, "logical_or", "Elementwise logical OR (boolean result)."),
    np.logical_or, broadcasting=True, differentiable=False, c_expr="({x} || {y})",
)  # fmt: skip
logical_xor = _ew(
    "jnp.logical_xor",
    _predicate_impl(np.logical_xor, "logical_xor", "Elementwise logical XOR (boolean result)."),
    np.logical_xor, broadcasting=True, differentiable=False, c_expr="(!{x} != !{y})",
)  # fmt: skip
logical_not = _ew(
    "jnp.logical_not",
    _predicate_impl(
        np.logical_not, "logical_not",
        "Elementwise logical NOT (boolean result); also the primitive of ``not x``.", nargs=1,
    ),
    np.logical_not, op="unary not", differentiable=False, c_expr="(!{x})",
)  # fmt: skip

bitwise_and = _binop(
    "jnp.bitwise_and", np.bitwise_and,
    "Elementwise ``x & y`` for integer and boolean arrays.",
    "&", {"iub": "({x} & {y})"}, operator.and_, differentiable=False,
)  # fmt: skip
bitwise_or = _binop(
    "jnp.bitwise_or", np.bitwise_or, "Elementwise ``x | y`` for integer and boolean arrays.",
    "|", {"iub": "({x} | {y})"}, operator.or_, differentiable=False,
)  # fmt: skip
bitwise_xor = _binop(
    "jnp.bitwise_xor", np.bitwise_xor, "Elementwise ``x ^ y`` for integer and boolean arrays.",
    "^", {"iub": "({x} ^ {y})"}, operator.xor, differentiable=False,
)  # fmt: skip
left_shift = _binop(
    "jnp.left_shift", np.left_shift, "Elementwise ``x << y`` for integer arrays.",
    "<<", {"iu": "sj_shl({x}, {y})"}, operator.lshift, differentiable=False,
)  # fmt: skip
right_shift = _binop(
    "jnp.right_shift", np.right_shift, "Elementwise ``x >> y`` for integer arrays.",
    ">>", {"iu": "sj_shr({x}, {y})"}, operator.rshift, differentiable=False,
)  # fmt: skip
bitwise_not = _unop(
    "jnp.bitwise_not", np.invert,
    "Elementwise ``~x``: bitwise NOT of integers, logical NOT of booleans.",
    {"iu": "(~{x})", "b": "(!{x})"}, operator.invert, inexact=False, op="unary ~",
    differentiable=False,
)  # fmt: skip
invert = bitwise_invert = bitwise_not


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


def _exp_x(g, ans, x):
    return g * ans


def _exp2_x(g, ans, x):
    return g * ans * 0.6931471805599453


def _log_x(g, ans, x):
    return g / x


def _log2_x(g, ans, x):
    return g / (x * 0.6931471805599453)


def _log10_x(g, ans, x):
    return g / (x * 2.302585092994046)


def _log1p_x(g, ans, x):
    return g / (1 + x)


def _expm1_x(g, ans, x):
    return g * (ans + 1)


def _logaddexp_x(g, ans, x, y):
    return g * exp(replace_inf(x) - replace_inf(ans))


def _logaddexp_y(g, ans, x, y):
    return g * exp(replace_inf(y) - replace_inf(ans))


def _logaddexp2_x(g, ans, x, y):
    return g * exp2(replace_inf(x) - replace_inf(ans))


def _logaddexp2_y(g, ans, x, y):
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


def _tan_x(g, ans, x):
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


def _tanh_x(g, ans, x):
    return g * (1 - ans * ans)


def _arcsinh_x(g, ans, x):
    return g / sqrt(x * x + 1)


def _arccosh_x(g, ans, x):
    return g / sqrt((x - 1) * (x + 1))


def _arctanh_x(g, ans, x):
    return g / (1 - x * x)


# at (0, 0) JAX's hypot (max(|x|, |y|) * sqrt(1 + (min / max)**2)) splits the tie
# of max between the operands with abs'(0) = 1: (0.5, 0.5), not 0/0


def _hypot_x(g, ans, x, y):
    return g * where(ans == 0, 0.5, x / where(ans == 0, 1.0, ans))


def _hypot_y(g, ans, x, y):
    return g * where(ans == 0, 0.5, y / where(ans == 0, 1.0, ans))


def _deg2rad_x(g, ans, x):
    return g * 0.017453292519943295


def _rad2deg_x(g, ans, x):
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


def _sqrt_x(g, ans, x):
    return g / (2 * ans)


def _cbrt_x(g, ans, x):
    return g / (3 * ans * ans)


def _square_x(g, ans, x):
    return g * 2 * x


def _reciprocal_x(g, ans, x):
    return -g * ans * ans


defderiv(sqrt, _sqrt_x)
defderiv(pow_half, _sqrt_x)  # (x ** 0.5)' = 0.5 / x ** 0.5
defderiv(cbrt, _cbrt_x)
defderiv(square, _square_x)
defderiv(reciprocal, _reciprocal_x)
sqrt.test_domain = (0.2, 3.0)
cbrt.test_domain = (0.2, 3.0)
reciprocal.test_domain = (0.3, 3.0)


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
sign = _unop(
    "jnp.sign", np.sign, "Elementwise sign (-1, 0 or 1). Not differentiable (zero derivative).",
    {"fiu": "sj_sign({x})"}, inexact=False, differentiable=False,
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


# =============================================================================
# Maximum, minimum, clip and where
# =============================================================================
maximum = _binop(
    "jnp.maximum", np.maximum,
    "Elementwise maximum, propagating NaN. At ties the derivative splits 0.5/0.5 (JAX).",
    None, {"fiub": "sj_max({x}, {y})"},
)  # fmt: skip
minimum = _binop(
    "jnp.minimum", np.minimum,
    "Elementwise minimum, propagating NaN. At ties the derivative splits 0.5/0.5 (JAX).",
    None, {"fiub": "sj_min({x}, {y})"},
)  # fmt: skip
fmax = _binop(
    "jnp.fmax", np.fmax, "Elementwise maximum ignoring NaN. At a tie the derivative goes to y (JAX).",
    None, "fmax({x}, {y})",
)  # fmt: skip
fmin = _binop(
    "jnp.fmin", np.fmin, "Elementwise minimum ignoring NaN. At a tie the derivative goes to y (JAX).",
    None, "fmin({x}, {y})",
)  # fmt: skip


def _balanced_eq(x, z, y):
    """``1`` where ``x == z != y``, ``0.5`` where ``x == z == y``, else ``0``, in
    ``z``'s float dtype: the partial of ``z = max(x, y)`` (or ``min``) in ``x``,
    splitting ties evenly as JAX. Piecewise constant (zero derivative)."""
    eqx = np.equal(x, z)
    r = np.where(eqx, np.where(np.equal(y, z), 0.5, 1.0), 0.0)
    dt = _dt.to_inexact_dtype(_dt.dtype_of(z))
    return r.astype(dt, copy=False) if r.dtype != dt else r


balanced_eq = _ew(
    "ad.balanced_eq", _balanced_eq, differentiable=False,
    c_expr="(({x}) == ({z}) ? (({y}) == ({z}) ? 0.5 : 1.0) : 0.0)",
)  # fmt: skip


def _max_x(g, ans, x, y):
    return g * balanced_eq(x, ans, y)


def _max_y(g, ans, x, y):
    return g * balanced_eq(y, ans, x)


defderiv(maximum, _max_x, _max_y)
defderiv(minimum, _max_x, _max_y)


def _fmax_x(g, ans, x, y):
    # JAX: fmax(x, y) = where((x > y) | isnan(y), x, y): a tie goes to y
    return g * ((x > y) | isnan(y))


def _fmax_y(g, ans, x, y):
    return g * ~((x > y) | isnan(y))


def _fmin_x(g, ans, x, y):
    return g * ((x < y) | isnan(y))


def _fmin_y(g, ans, x, y):
    return g * ~((x < y) | isnan(y))


defderiv(fmax, _fmax_x, _fmax_y)
defderiv(fmin, _fmin_x, _fmin_y)


def _clip(x, min=None, max=None):  # noqa: A002 (JAX's parameter names)
    """Clip ``x`` to ``[min, max]`` (either bound may be ``None``), as JAX:
    ``minimum(maximum(x, min), max)``, so at ``x == min`` or ``x == max`` the
    derivative is 0.5 (ties split)."""
    r = x
    if min is not None:
        r = np.maximum(r, min)
    if max is not None:
        r = np.minimum(r, max)
    if r is x:
        return np.asarray(x, dtype=_dt.dtype_of(x))[()] if type(x) is not _ndarray else x
    if r.dtype in BINARY_SUSPECT:
        return r.astype(_dt.result_type(x, *[b for b in (min, max) if b is not None]))
    return r


clip = _ew(
    "jnp.clip", _clip, np.clip, broadcasting=True,
    c_expr={"fiu": "sj_min(sj_max({x}, {min}), {max})"},
).facts(shape_changing=True)  # fmt: skip


def _clip_partial(x, min, max, wrt):  # noqa: A002
    """Partial derivative of ``clip(x, min, max)`` in the operand named ``wrt``
    (``"x"``, ``"min"`` or ``"max"``), as for ``minimum(maximum(x, min), max)``
    with ties split 0.5/0.5. Piecewise constant (zero derivative)."""
    m = x if min is None else np.maximum(x, min)
    out = m if max is None else np.minimum(m, max)
    if wrt == "max":
        return _balanced_eq(max, out, m)
    d_out = 1.0 if max is None else _balanced_eq(m, out, max)
    if wrt == "x":
        d_m = 1.0 if min is None else _balanced_eq(x, m, min)
    else:
        d_m = _balanced_eq(min, m, x)
    r = np.asarray(d_m * d_out, dtype=_dt.to_inexact_dtype(_dt.dtype_of(out)))
    return r if r.ndim else r[()]


clip_partial = _ew("ad.clip_partial", _clip_partial, differentiable=False)


def _clip_x(g, ans, x, min=None, max=None):  # noqa: A002
    return g * clip_partial(x, min, max, "x")


def _clip_min(g, ans, x, min=None, max=None):  # noqa: A002
    return g * clip_partial(x, min, max, "min")


def _clip_max(g, ans, x, min=None, max=None):  # noqa: A002
    return g * clip_partial(x, min, max, "max")


defderiv(clip, _clip_x, _clip_min, _clip_max)
clip.samples = lambda rng: [
    ((rng.uniform(-2, 2, s), -0.5, 0.7), {}) for s in [(), (3,), (2, 3)]
] + [
    ((rng.uniform(-2, 2, (2, 3)), rng.uniform(-1.5, -0.2, (3,)), rng.uniform(0.2, 1.5, (2, 1))), {}),
    ((rng.uniform(-2, 2, (4,)),), {"min": rng.uniform(-1, 0, (4,))}),
    ((rng.uniform(-2, 2, (4,)),), {"max": rng.uniform(0, 1, (4,))}),
]  # fmt: skip


def _where(condition, x=None, y=None, *, size=None, fill_value=None):
    """``x`` where ``condition`` is true, else ``y`` (broadcasting; JAX dtype
    promotion of ``x`` and ``y``). With only ``condition``, the indices of its
    nonzero elements (``jnp.nonzero``), padded or cut to ``size`` if given.

    Derivatives follow JAX: ``where(condition, g, 0)`` to ``x`` and
    ``where(condition, 0, g)`` to ``y``, so a NaN or infinite partial in the
    branch not taken still reaches the gradient through its own rule."""
    if x is None and y is None:
        return _nonzero(condition, size, fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided")
    r = np.where(condition, x, y)
    if r.dtype in BINARY_SUSPECT:
        dt = _dt.result_type(x, y)
        if dt != r.dtype:
            return r.astype(dt)
    return r


def _nonzero(condition, size, fill_value):
    idx = np.nonzero(condition)
    dt = _dt.default_int()
    if size is not None:
        fill = 0 if fill_value is None else fill_value
        fills = fill if isinstance(fill, (tuple, list)) else (fill,) * len(idx)
        out = []
        for i, f in zip(idx, fills):
            i = i[:size]
            if len(i) < size:
                i = np.concatenate([i, np.full(size - len(i), f, dtype=i.dtype)])
            out.append(i)
        idx = tuple(out)
    return tuple(i.astype(dt, copy=False) for i in idx)


where = _ew(
    "jnp.where", _where, np.where, broadcasting=True,
    c_expr={"fiubc": "({condition} ? {x} : {y})"},
).facts(shape_changing=True)  # fmt: skip


def _where_x(g, ans, condition, x=None, y=None, *, size=None, fill_value=None):
    return where(condition, g, 0)


def _where_y(g, ans, condition, x=None, y=None, *, size=None, fill_value=None):
    return where(condition, 0, g)


defderiv(where, None, _where_x, _where_y)
where.samples = lambda rng: [
    ((rng.uniform(-1, 1, s) > 0, rng.uniform(-2, 2, s), rng.uniform(-2, 2, s)), {})
    for s in [(), (3,), (2, 3)]
] + [
    ((rng.uniform(-1, 1, (2, 3)) > 0, rng.uniform(-2, 2, (3,)), rng.uniform(-2, 2, (2, 1))), {}),
    ((rng.uniform(-1, 1, (3,)) > 0, rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, ())), {}),
]  # fmt: skip


def _replace_inf(x):
    """``x`` with ``+inf`` replaced by 0 (keeps ``logaddexp``'s derivative finite
    at infinite inputs, as JAX)."""
    return np.where(np.isposinf(x), 0, x)


replace_inf = _ew("ad.replace_inf", _replace_inf, c_expr="(isinf({x}) && {x} > 0 ? 0 : {x})")


def _replace_inf_x(g, ans, x):
    return where(isposinf(x), 0, g)


defderiv(replace_inf, _replace_inf_x)


def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``x`` with NaN replaced by ``nan`` and infinities by ``posinf`` /
    ``neginf`` (default: the largest finite values of the dtype). The
    derivative is ``g`` at finite entries and 0 elsewhere."""
    x = np.asarray(x) if type(x) is not _ndarray else x
    return _dt.canonicalize_value(
        np.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)
    )


nan_to_num = _ew("jnp.nan_to_num", _nan_to_num, np.nan_to_num)


def _nan_to_num_x(g, ans, x, copy=True, nan=0.0, posinf=None, neginf=None):
    return where(isfinite(x), g, 0)


defderiv(nan_to_num, _nan_to_num_x)


# =============================================================================
# Predicates (boolean results, not differentiable)
# =============================================================================
def _pred1(public, ufunc, doc, c_expr, *aliases):
    name = public.rsplit(".", 1)[-1]
    return _ew(
        public, _predicate_impl(ufunc, name, doc, nargs=1), ufunc, *aliases,
        differentiable=False, c_expr=c_expr,
    )  # fmt: skip


isnan = _pred1("jnp.isnan", np.isnan, "Elementwise test for NaN.", "isnan({x})", math.isnan)
isinf = _pred1("jnp.isinf", np.isinf, "Elementwise test for +-inf.", "isinf({x})", math.isinf)
isfinite = _pred1(
    "jnp.isfinite", np.isfinite, "Elementwise test for finite values.", "isfinite({x})",
    math.isfinite,
)  # fmt: skip
isposinf = _pred1(
    "jnp.isposinf", np.isposinf, "Elementwise test for +inf.", "(isinf({x}) && {x} > 0)"
)
isneginf = _pred1(
    "jnp.isneginf", np.isneginf, "Elementwise test for -inf.", "(isinf({x}) && {x} < 0)"
)
signbit = _pred1("jnp.signbit", np.signbit, "Elementwise sign bit (True for -0.0).", "signbit({x})")


def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (boolean; NumPy/JAX ``isclose``)."""
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


isclose = _ew("jnp.isclose", _isclose, np.isclose, broadcasting=True, differentiable=False)


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


def _real_x(g, ans, x):
    return real(g)


def _conj_x(g, ans, x):
    return conj(g)


def _imag_jvp(t, ans, x):
    return imag(t)


# imag/abs map complex to real: their output's cotangent is real in JAX. Here a
# real value used with complex operands later (``a + 1j``) may carry a complex
# cotangent (no conversion op to transpose), so these rules take its real part
# before multiplying by a complex factor (grad of |imag(x (1+2j)) + 1j| was half)


def _imag_vjp(g, ans, x):
    return real(g) * -1j


defderiv(real, _real_x)
defderiv(conj, _conj_x)
imag.def_jvp(_imag_jvp)
imag.def_vjp(_imag_vjp)
abs.def_jvp(_abs_jvp)
abs.def_vjp(_abs_vjp)
abs_direction.def_jvp(_abs_direction_jvp)
abs_direction.def_vjp(_abs_direction_vjp)
