"""Comparisons, logical and bitwise operators, and predicates (``isnan``,
``isfinite``, ``isclose``, ...): boolean or integer results, not differentiable.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from ._base import _binop, _doc, _ew, _predicate_impl, _unop

__all__ = [
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
    "isnan",
    "isinf",
    "isfinite",
    "isposinf",
    "isneginf",
    "signbit",
    "isclose",
]


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


def _inf_test(test, inf, public, doc, c_expr):
    """``np.isposinf`` / ``np.isneginf`` (Python functions: ``isinf``,
    ``signbit`` and ``logical_and``, ~2 us on 16 x 200) as one comparison for
    float arrays, ``x == inf`` (False at NaN too: the same mask); other operands
    (complex's TypeError, ints, bfloat16) take NumPy's function."""

    def impl(x):
        if type(x) is np.ndarray and x.dtype.kind == "f":
            return np.equal(x, inf)
        return test(x)

    impl.__name__ = impl.__qualname__ = public.rsplit(".", 1)[-1]
    return _ew(public, _doc(impl, doc), test, differentiable=False, c_expr=c_expr)


isposinf = _inf_test(
    np.isposinf, np.inf, "jnp.isposinf", "Elementwise test for +inf.", "(isinf({x}) && {x} > 0)"
)
isneginf = _inf_test(
    np.isneginf, -np.inf, "jnp.isneginf", "Elementwise test for -inf.", "(isinf({x}) && {x} < 0)"
)
signbit = _pred1("jnp.signbit", np.signbit, "Elementwise sign bit (True for -0.0).", "signbit({x})")


def _isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|a - b| <= atol + rtol * |b|`` (boolean; NumPy/JAX ``isclose``)."""
    return np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


isclose = _ew("jnp.isclose", _isclose, np.isclose, broadcasting=True, differentiable=False)


# JAX computes these with a strongly typed constant or conversion: strongly typed
# results whatever the operands' weak types (registry.Primitive.weak_result)
for _p in (
    logical_and,
    logical_or,
    logical_xor,
    logical_not,
    isinf,
    isposinf,
    isneginf,
    signbit,
    isclose,
):
    _p.facts(weak_result=False)
