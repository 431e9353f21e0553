"""JAX's basic ``lax`` operations (``jax.lax.add``, ``lax.rsqrt``, ``lax.pad`` ...).

An operation that is a ``jnp`` primitive (``lax.exp`` is ``jnp.exp``) is that
very :class:`~srcjax.primitives.registry.Primitive`, so transforms resolve it
by identity. The others are compositions of primitives (plain Python that
transformed code inlines like a user function, so their derivatives and
batching come from the primitives they call) or, where NumPy has no matching
operation (``div``'s truncating integer division, ``rem``, the shifts), new
primitives.

Dtype rules follow ``jax.lax`` (JAX 0.10.2): the binary operations do not
promote: their operands must have one dtype after canonicalization (a Python
``int`` is int32, a ``float`` float32, a float64 NumPy value float32 unless
x64), else JAX's TypeError; ``lax.add(x, 2)`` is fine for an int32 ``x`` and a
TypeError for a float32 one, as in JAX. The unary operations bound to ``jnp``
primitives promote integer inputs to float where JAX raises TypeError.
"""

from __future__ import annotations

import builtins as _builtins
import enum

import numpy as np

from .. import dtypes as _dt
from ..primitives.ad import astype as _astype
from ..primitives.ad import broadcast_to as _broadcast_to
from ..primitives.ad import expand_dims as _expand_dims
from ..primitives.ad import reshape as _reshape
from ..primitives.creation import arange as _arange
from ..primitives.creation import asarray as _asarray
from ..primitives.creation import full as _full
from ..primitives.creation import full_like
from ..primitives.creation import shape as _shape
from ..primitives.elementwise import (
    _add_x,
    _div_x,
    _div_y,
    _fmod_y,
    abs,  # noqa: A004
    bitwise_not,
    cbrt,
    ceil,
    cos,
    cosh,
    defderiv,
    exp,
    exp2,
    expm1,
    floor,
    log,
    log1p,
    new_elementwise,
    sign,
    sin,
    sinh,
    sqrt,
    square,
    tan,
    tanh,
)
from ..primitives.elementwise import add as _add
from ..primitives.elementwise import arccos as acos
from ..primitives.elementwise import arcsin as asin
from ..primitives.elementwise import arctan as atan
from ..primitives.elementwise import arctan2 as _arctan2
from ..primitives.elementwise import bitwise_and as _bitwise_and
from ..primitives.elementwise import bitwise_or as _bitwise_or
from ..primitives.elementwise import bitwise_xor as _bitwise_xor
from ..primitives.elementwise import equal as _equal
from ..primitives.elementwise import greater as _greater
from ..primitives.elementwise import greater_equal as _greater_equal
from ..primitives.elementwise import isfinite as is_finite
from ..primitives.elementwise import less as _less
from ..primitives.elementwise import less_equal as _less_equal
from ..primitives.elementwise import maximum as _maximum
from ..primitives.elementwise import minimum as _minimum
from ..primitives.elementwise import multiply as _multiply
from ..primitives.elementwise import negative as neg
from ..primitives.elementwise import not_equal as _not_equal
from ..primitives.elementwise import power as _power
from ..primitives.elementwise import reciprocal as _reciprocal
from ..primitives.elementwise import round as _round_even
from ..primitives.elementwise import subtract as _subtract
from ..primitives.elementwise import trunc as _trunc
from ..primitives.elementwise import where as _where
from ..primitives.linalg import dot as _dot
from ..primitives.linalg import einsum as _einsum
from ..primitives.nn import sigmoid as logistic
from ..primitives.reductions import argmax as _argmax
from ..primitives.reductions import argmin as _argmin
from ..primitives.reductions import cumprod as _cumprod
from ..primitives.reductions import cumsum as _cumsum
from ..primitives.registry import Primitive, register
from ..primitives.special import digamma, erf
from ..primitives.special import erfinv as erf_inv
from ..primitives.special import gammaln as lgamma
from ..primitives.structural import argsort as _argsort
from ..primitives.structural import at_set as _at_set
from ..primitives.structural import concatenate as _concatenate
from ..primitives.structural import flip as _flip
from ..primitives.structural import sort as _sort
from ..primitives.structural import squeeze as _squeeze
from ..primitives.structural import take_along_axis as _take_along_axis
from ..primitives.structural import transpose as _transpose

__all__ = [
    "RoundingMethod",
    "abs",
    "acos",
    "add",
    "argmax",
    "argmin",
    "asin",
    "atan",
    "atan2",
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "broadcast",
    "broadcast_in_dim",
    "cbrt",
    "ceil",
    "clamp",
    "concatenate",
    "convert_element_type",
    "cos",
    "cosh",
    "cumprod",
    "cumsum",
    "digamma",
    "div",
    "dot",
    "dot_general",
    "eq",
    "erf",
    "erf_inv",
    "exp",
    "exp2",
    "expand_dims",
    "expm1",
    "floor",
    "full",
    "full_like",
    "ge",
    "gt",
    "index_in_dim",
    "integer_pow",
    "iota",
    "is_finite",
    "le",
    "lgamma",
    "log",
    "log1p",
    "logistic",
    "lt",
    "max",
    "min",
    "mul",
    "ne",
    "neg",
    "pad",
    "pow",
    "rem",
    "reshape",
    "rev",
    "round",
    "rsqrt",
    "shift_left",
    "shift_right_arithmetic",
    "shift_right_logical",
    "sign",
    "sin",
    "sinh",
    "slice",
    "slice_in_dim",
    "sort",
    "sqrt",
    "square",
    "squeeze",
    "sub",
    "tan",
    "tanh",
    "transpose",
]


class RoundingMethod(enum.IntEnum):
    """``lax.round``'s rounding of halves (jax.lax.RoundingMethod)."""

    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


# ---------------------------------------------------------------------------
# static helpers (dtypes and shapes only: the same for every example of a vmap)

#: accepted dtype kinds -> (NumPy kinds, JAX's words for them)
_KINDS = {
    "num": ("iufc", "integer, floating, complexfloating"),
    "any": ("biufc", "bool, number"),
    "int": ("biu", "integer, bool"),
    "float": ("f", "floating"),
    "inexact": ("fc", "floating, complexfloating"),
}

#: lax name -> the promoting jnp function JAX's error message suggests
_TIPS = {
    "add": "add",
    "sub": "subtract",
    "mul": "multiply",
    "div": "divide",
    "rem": "remainder",
    "max": "maximum",
    "min": "minimum",
    "eq": "equal",
    "ne": "not_equal",
    "atan2": "arctan2",
    "bitwise_and": "bitwise_and",
    "bitwise_or": "bitwise_or",
    "bitwise_xor": "bitwise_xor",
    "shift_left": "left_shift",
    "shift_right_arithmetic": "right_shift",
    "shift_right_logical": "right_shift",
    "concatenate": "concatenate",
}


def _same_dtypes_impl(name, kinds, x, y, z=None):
    """Static: JAX's TypeError unless the operands (``z`` None: two) have one
    canonical dtype of the accepted ``kinds``; returns that dtype."""
    xs = [x, y] if z is None else [x, y, z]
    dts = [_dt.dtype_of(v) for v in xs]
    ok, words = _KINDS[kinds]
    for i, d in enumerate(dts):
        if d.kind not in ok:
            raise TypeError(
                f"{name} does not accept dtype {d.name} at position {i}. Accepted dtypes"
                f" at position {i} are subtypes of {words}."
            )
    if len(set(dts)) > 1:
        tip = _TIPS.get(name)
        more = (
            f" (Tip: jnp.{tip} is a similar function that does automatic type promotion on inputs)."
            if tip
            else ""
        )
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got "
            + ", ".join(d.name for d in dts)
            + "."
            + more
        )
    return dts[0]


def _list_dtypes_impl(name, operands):
    """Static: ``_same_dtypes_impl`` for a list of operands (``concatenate``)."""
    dts = [_dt.dtype_of(v) for v in operands]
    if len(set(dts)) > 1:
        raise TypeError(
            f"lax.{name} requires arguments to have the same dtypes, got "
            + ", ".join(d.name for d in dts)
            + f". (Tip: jnp.{name} is a similar function that does automatic type"
            " promotion on inputs)."
        )
    return dts[0] if dts else None


def _pow_dtypes_impl(x, y):
    """Static: ``lax.pow``'s dtype check (``x`` inexact; ``y`` of ``x``'s dtype or
    an integer)."""
    dx, dy = _dt.dtype_of(x), _dt.dtype_of(y)
    if dx.kind not in "fc":
        raise TypeError(
            f"pow does not accept dtype {dx.name} at position 0. Accepted dtypes at"
            " position 0 are subtypes of floating, complexfloating."
        )
    if dy != dx and dy.kind not in "iu":
        raise TypeError(f"lax.pow requires arguments to have the same dtypes, got {dx}, {dy}.")
    return dx


def _integer_pow_check_impl(x, y):
    """Static: ``integer_pow``'s checks (``y`` a Python int; no negative power of
    an integer; no bool)."""
    d = _dt.dtype_of(x)
    if d.kind == "b":
        raise TypeError(
            "integer_pow does not accept dtype bool. Accepted dtypes are subtypes of"
            " integer, floating, complexfloating."
        )
    if d.kind in "iu" and y < 0:
        raise TypeError(
            f"Integers cannot be raised to negative powers, got integer_pow({d.name}, {y})"
        )
    return int(y)


def _canonical_dtype_impl(dtype):
    """Static: ``dtype`` as JAX holds it (``int`` -> int32 unless x64, ``float``
    -> float32 ...)."""
    if dtype is int:
        return _dt.default_int()
    if dtype is float:
        return _dt.default_float()
    if dtype is complex:
        return _dt.default_complex()
    if dtype is bool:
        return np.dtype(np.bool_)
    return _dt.canonicalize_dtype(dtype)


def _value_dtype_impl(x):
    """Static: ``x``'s canonical dtype."""
    return _dt.dtype_of(x)


def _bid_shape_impl(operand_shape, shape, broadcast_dimensions):
    """Static: the shape ``broadcast_in_dim`` reshapes ``operand`` to (rank
    ``len(shape)``, its axes at ``broadcast_dimensions``, 1 elsewhere), with
    JAX's checks."""
    operand_shape, shape = tuple(operand_shape), tuple(shape)
    dims = tuple(broadcast_dimensions)
    if len(dims) != len(operand_shape):
        raise TypeError(
            "broadcast_in_dim broadcast_dimensions must have length equal to operand"
            f" ndim; got broadcast_dimensions {dims} for operand ndim {len(operand_shape)}."
        )
    out = [1] * len(shape)
    for d, n in zip(dims, operand_shape):
        if not 0 <= d < len(shape) or n not in (1, shape[d]):
            raise TypeError(
                "broadcast_in_dim operand dimension sizes must either be 1, or be equal"
                " to their corresponding dimensions in the target broadcast shape; got"
                f" operand of shape {operand_shape}, target broadcast shape {shape},"
                f" broadcast_dimensions {dims} "
            )
        out[d] = n
    if list(dims) != sorted(set(dims)):
        raise TypeError(
            f"broadcast_in_dim broadcast_dimensions must be strictly increasing; got {dims}"
        )
    return tuple(out)


def _dot_general_spec_impl(lhs_ndim, rhs_ndim, dimension_numbers):
    """Static: the ``einsum`` subscripts of ``dot_general`` (output: batch axes,
    then ``lhs``'s free axes, then ``rhs``'s, as JAX orders them)."""
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(a) for a in v) for v in (lc, rc, lb, rb))
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(
            "dot_general requires equal numbers of lhs and rhs contracting and batch"
            f" dimensions, got {dimension_numbers}"
        )
    letters = iter("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
    ls = [None] * lhs_ndim
    rs = [None] * rhs_ndim
    batch = []
    for a, b in zip(lb, rb):
        c = next(letters)
        ls[a] = rs[b] = c
        batch.append(c)
    for a, b in zip(lc, rc):
        ls[a] = rs[b] = next(letters)
    lfree = []
    for i in range(lhs_ndim):
        if ls[i] is None:
            ls[i] = next(letters)
            lfree.append(ls[i])
    rfree = []
    for i in range(rhs_ndim):
        if rs[i] is None:
            rs[i] = next(letters)
            rfree.append(rs[i])
    return "".join(ls) + "," + "".join(rs) + "->" + "".join(batch + lfree + rfree)


def _dot_check_impl(x_shape, y_shape):
    """Static: ``lax.dot``'s shapes (vectors and matrices only, as JAX)."""
    if len(x_shape) not in (1, 2) or len(y_shape) not in (1, 2):
        raise ValueError(
            "jax.lax.dot: dimension_numbers must be specified when not performing simple"
            " un-batched matrix-matrix, matrix-vector, or vector-vector products; got"
            f" lhs_shape={tuple(x_shape)} rhs_shape={tuple(y_shape)}"
        )
    return True


def _sort_arity_impl(operand, num_keys):
    """Static: ``-1`` for one array (``num_keys`` must be 1), else the number of
    operands of a sequence (``1 <= num_keys <= len``); JAX's errors."""
    if isinstance(operand, (tuple, list)):
        if len(operand) == 0:
            raise TypeError("Sort requires at least one operand")
        if not (1 <= num_keys <= len(operand)):
            raise ValueError(
                f"num_keys={num_keys} must be between 1 and len(operand)={len(operand)}"
            )
        return len(operand)
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    return -1


def _sort_shapes_impl(shapes, dimension):
    """Static: JAX's TypeError unless the operands of a multi-operand sort have
    one shape; returns ``dimension`` made non-negative (IndexError out of range)."""
    shapes = [tuple(s) for s in shapes]
    if any(s != shapes[0] for s in shapes[1:]):
        raise TypeError(
            "Arguments to sort must have equal shapes, got: " + " ".join(str(s) for s in shapes)
        )
    nd = len(shapes[0])
    if not -nd <= dimension < nd:
        raise IndexError(f"axis {dimension} is out of bounds for array of dimension {nd}")
    return dimension % nd


def _slice_index_impl(ndim, start_indices, limit_indices, strides=None, axis=None):
    """Static: the index tuple of ``lax.slice`` (``axis`` None: one start, limit and
    stride per axis) or of ``slice_in_dim`` (the three are ints for ``axis``)."""
    if axis is not None:
        ax = axis % ndim
        return tuple(
            _builtins.slice(start_indices, limit_indices, strides)
            if k == ax
            else _builtins.slice(None)
            for k in range(ndim)
        )
    if len(start_indices) != ndim or len(limit_indices) != ndim:
        raise TypeError(
            "slice start_indices and limit_indices must have length equal to the"
            f" number of dimensions of the operand, got {start_indices}, {limit_indices}"
            f" for an operand of rank {ndim}."
        )
    st = (1,) * ndim if strides is None else tuple(strides)
    return tuple(_builtins.slice(a, b, c) for a, b, c in zip(start_indices, limit_indices, st))


def _pad_plan_impl(shape, padding_config):
    """Static: ``pad``'s steps: the interior-padded shape and where ``operand``
    goes in it, the crop of negative ``lo``/``hi``, the result shape and where the
    cropped block goes in it."""
    shape = tuple(shape)
    config = [tuple(int(v) for v in c) for c in padding_config]
    if len(config) != len(shape):
        raise ValueError(
            f"length of padding_config must equal the number of axes of operand, got"
            f" padding_config {padding_config} for operand shape {shape}"
        )
    mid, spread, crop, final, place = [], [], [], [], []
    for n, (lo, hi, interior) in zip(shape, config):
        if interior < 0:
            raise ValueError(
                f"interior padding in padding_config must be nonnegative, got {padding_config}"
            )
        m = n + _builtins.max(n - 1, 0) * interior
        mid.append(m)
        spread.append(_builtins.slice(0, None, interior + 1))
        a, b = _builtins.max(-lo, 0), m - _builtins.max(-hi, 0)
        if b < a:
            raise ValueError(
                f"Dimension size after padding is not at least 0, got {padding_config}"
            )
        crop.append(_builtins.slice(a, b))
        size = b - a + _builtins.max(lo, 0) + _builtins.max(hi, 0)
        final.append(size)
        place.append(_builtins.slice(_builtins.max(lo, 0), _builtins.max(lo, 0) + b - a))
    return tuple(mid), tuple(spread), tuple(crop), tuple(final), tuple(place)


def _static(public, impl):
    p = register(Primitive(public, impl, kind="internal", differentiable=False))
    p.def_batch(lambda c: (c.rebuild(), False))  # dtypes and shapes only: unbatched
    return p


_same_dtypes = _static("ad.lax_same_dtypes", _same_dtypes_impl)
_same_dtypes.samples = lambda rng: [(("add", "num", np.ones(2), np.ones(2)), {})]
_list_dtypes = _static("ad.lax_list_dtypes", _list_dtypes_impl)
_list_dtypes.samples = lambda rng: [(("concatenate", [np.ones(2), np.ones(3)]), {})]
_pow_dtypes = _static("ad.lax_pow_dtypes", _pow_dtypes_impl)
_pow_dtypes.samples = lambda rng: [((np.ones(2), np.ones(2)), {})]
_integer_pow_check = _static("ad.lax_integer_pow_check", _integer_pow_check_impl)
_integer_pow_check.samples = lambda rng: [((np.ones(2), 2), {})]
_canonical_dtype = _static("ad.lax_canonical_dtype", _canonical_dtype_impl)
_canonical_dtype.samples = lambda rng: [((np.float32,), {})]
_value_dtype = _static("ad.lax_value_dtype", _value_dtype_impl)
_value_dtype.samples = lambda rng: [((np.ones(2),), {})]
_bid_shape = _static("ad.lax_bid_shape", _bid_shape_impl)
_bid_shape.samples = lambda rng: [(((3,), (2, 3), (1,)), {})]
_dot_general_spec = _static("ad.lax_dot_general_spec", _dot_general_spec_impl)
_dot_general_spec.samples = lambda rng: [((3, 3, (((2,), (1,)), ((0,), (0,)))), {})]
_slice_index = _static("ad.lax_slice_index", _slice_index_impl)
_slice_index.samples = lambda rng: [((2, (0, 1), (2, 3)), {})]
_pad_plan = _static("ad.lax_pad_plan", _pad_plan_impl)
_pad_plan.samples = lambda rng: [(((3, 2), ((1, -1, 1), (0, 0, 0))), {})]
_dot_check = _static("ad.lax_dot_check", _dot_check_impl)
_dot_check.samples = lambda rng: [(((2, 3), (3,)), {})]
_sort_arity = _static("ad.lax_sort_arity", _sort_arity_impl)
_sort_arity.samples = lambda rng: [(((np.ones(2), np.ones(2)), 1), {})]
_sort_shapes = _static("ad.lax_sort_shapes", _sort_shapes_impl)
_sort_shapes.samples = lambda rng: [((((2, 3), (2, 3)), -1), {})]


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


_new_elementwise = new_elementwise  # (the shared helper, primitives/elementwise.py)


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


def add(x, y):
    """Elementwise ``x + y`` (jax.lax.add). ``x`` and ``y`` must have one dtype
    (numbers; Python scalars count as int32/float32), else TypeError; shapes
    equal or one 0-d. Result: that dtype."""
    _same_dtypes("add", "num", x, y)
    return _add(x, y)


def sub(x, y):
    """Elementwise ``x - y`` (jax.lax.sub); dtypes as :func:`add`."""
    _same_dtypes("sub", "num", x, y)
    return _subtract(x, y)


def mul(x, y):
    """Elementwise ``x * y`` (jax.lax.mul); dtypes as :func:`add`."""
    _same_dtypes("mul", "num", x, y)
    return _multiply(x, y)


def max(x, y):  # noqa: A001
    """Elementwise maximum (jax.lax.max), NaN propagating; any one dtype."""
    _same_dtypes("max", "any", x, y)
    return _maximum(x, y)


def min(x, y):  # noqa: A001
    """Elementwise minimum (jax.lax.min), NaN propagating; any one dtype."""
    _same_dtypes("min", "any", x, y)
    return _minimum(x, y)


def eq(x, y):
    """Elementwise ``x == y`` (jax.lax.eq): bool; operands of one dtype."""
    _same_dtypes("eq", "any", x, y)
    return _equal(x, y)


def ne(x, y):
    """Elementwise ``x != y`` (jax.lax.ne): bool; operands of one dtype."""
    _same_dtypes("ne", "any", x, y)
    return _not_equal(x, y)


def lt(x, y):
    """Elementwise ``x < y`` (jax.lax.lt): bool; operands of one dtype."""
    _same_dtypes("lt", "any", x, y)
    return _less(x, y)


def le(x, y):
    """Elementwise ``x <= y`` (jax.lax.le): bool; operands of one dtype."""
    _same_dtypes("le", "any", x, y)
    return _less_equal(x, y)


def gt(x, y):
    """Elementwise ``x > y`` (jax.lax.gt): bool; operands of one dtype."""
    _same_dtypes("gt", "any", x, y)
    return _greater(x, y)


def ge(x, y):
    """Elementwise ``x >= y`` (jax.lax.ge): bool; operands of one dtype."""
    _same_dtypes("ge", "any", x, y)
    return _greater_equal(x, y)


def atan2(x, y):
    """Elementwise ``arctan(x / y)`` in the right quadrant (jax.lax.atan2);
    floating operands of one dtype."""
    _same_dtypes("atan2", "inexact", x, y)
    return _arctan2(x, y)


def bitwise_and(x, y):
    """Elementwise AND (jax.lax.bitwise_and): integers or bools of one dtype."""
    _same_dtypes("bitwise_and", "int", x, y)
    return _bitwise_and(x, y)


def bitwise_or(x, y):
    """Elementwise OR (jax.lax.bitwise_or): integers or bools of one dtype."""
    _same_dtypes("bitwise_or", "int", x, y)
    return _bitwise_or(x, y)


def bitwise_xor(x, y):
    """Elementwise XOR (jax.lax.bitwise_xor): integers or bools of one dtype."""
    _same_dtypes("bitwise_xor", "int", x, y)
    return _bitwise_xor(x, y)


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


def rsqrt(x):
    """Elementwise ``1 / sqrt(x)`` (jax.lax.rsqrt); ``x``'s float dtype."""
    return _reciprocal(sqrt(x))


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


# ---------------------------------------------------------------------------
# shapes


def reshape(operand, new_sizes, dimensions=None):
    """``operand`` (transposed by ``dimensions`` first, when given) in the shape
    ``new_sizes`` (jax.lax.reshape): same size and dtype."""
    if dimensions is not None:
        operand = _transpose(operand, tuple(dimensions))
    return _reshape(operand, tuple(new_sizes))


def transpose(operand, permutation):
    """Axes of ``operand`` permuted (jax.lax.transpose): result axis ``i`` is
    ``operand``'s axis ``permutation[i]``."""
    return _transpose(operand, tuple(permutation))


def concatenate(operands, dimension):
    """Concatenation along ``dimension`` (jax.lax.concatenate): operands of one
    dtype (else TypeError) and equal shapes elsewhere."""
    _list_dtypes("concatenate", operands)
    return _concatenate(operands, dimension)


def squeeze(array, dimensions):
    """``array`` without the size-1 axes ``dimensions`` (jax.lax.squeeze; negative
    axes count from the end). ValueError for an axis of another size."""
    return _squeeze(array, tuple(dimensions))


def expand_dims(array, dimensions):
    """``array`` with size-1 axes inserted at ``dimensions`` (jax.lax.expand_dims),
    positions in the result (negative count from its end)."""
    return _expand_dims(array, tuple(dimensions))


def rev(operand, dimensions):
    """``operand`` reversed along ``dimensions`` (jax.lax.rev)."""
    return _flip(operand, tuple(dimensions))


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001
    """``operand[start:limit:stride, ...]`` per axis (jax.lax.slice): one start and
    one limit (and stride, default 1) per axis of ``operand``."""
    return operand[_slice_index(len(_shape(operand)), start_indices, limit_indices, strides)]


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    """``operand[start_index:limit_index:stride]`` along ``axis``
    (jax.lax.slice_in_dim; None and negative indices as in Python)."""
    nd = len(_shape(operand))
    return operand[_slice_index(nd, start_index, limit_index, stride, axis)]


def index_in_dim(operand, index, axis=0, keepdims=True):
    """Item ``index`` of ``operand`` along ``axis`` (jax.lax.index_in_dim; negative
    counts from the end); the axis is kept with size 1 unless ``keepdims`` is False."""
    nd = len(_shape(operand))
    i = index % _shape(operand)[axis]
    out = operand[_slice_index(nd, i, i + 1, 1, axis)]
    if not keepdims:
        out = _squeeze(out, axis)
    return out


def broadcast(operand, sizes):
    """``operand`` broadcast to ``tuple(sizes) + operand.shape`` (jax.lax.broadcast)."""
    return _broadcast_to(operand, tuple(sizes) + tuple(_shape(operand)))


def broadcast_in_dim(operand, shape, broadcast_dimensions):
    """``operand`` broadcast to ``shape``, its axis ``i`` becoming axis
    ``broadcast_dimensions[i]`` (jax.lax.broadcast_in_dim; sizes 1 or equal)."""
    mid = _bid_shape(_shape(operand), shape, broadcast_dimensions)
    return _broadcast_to(_reshape(operand, mid), tuple(shape))


def pad(operand, padding_value, padding_config):
    """``operand`` padded with the 0-d ``padding_value`` (jax.lax.pad): per axis a
    triple ``(lo, hi, interior)``: ``interior`` values between neighbours, then
    ``lo``/``hi`` before/after (negative: that many removed). ``padding_value``
    must have ``operand``'s dtype (TypeError, as JAX). Differentiable in both."""
    _same_dtypes("pad", "any", operand, padding_value)
    pv = _asarray(padding_value, dtype=_value_dtype(operand))
    plan = _pad_plan(_shape(operand), padding_config)
    mid = _at_set(_broadcast_to(pv, plan[0]), plan[1], operand)
    return _at_set(_broadcast_to(pv, plan[3]), plan[4], mid[plan[2]])


# ---------------------------------------------------------------------------
# products, creation, reductions, sort


def dot(x, y, precision=None, preferred_element_type=None):
    """Vector/matrix product (jax.lax.dot): ``x`` and ``y`` 1-D or 2-D; the dtype
    JAX promotes them to, or ``preferred_element_type``."""
    _dot_check(_shape(x), _shape(y))
    if preferred_element_type is None:
        return _dot(x, y)
    return _dot(x, y, preferred_element_type=_canonical_dtype(preferred_element_type))


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None):
    """General contraction (jax.lax.dot_general): ``dimension_numbers`` is
    ``((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))``; result axes:
    batch, then ``lhs``'s free axes, then ``rhs``'s (an ``einsum``)."""
    spec = _dot_general_spec(len(_shape(lhs)), len(_shape(rhs)), dimension_numbers)
    if preferred_element_type is None:
        return _einsum(spec, lhs, rhs)
    return _einsum(spec, lhs, rhs, preferred_element_type=_canonical_dtype(preferred_element_type))


def iota(dtype, size):
    """``[0, 1, ..., size - 1]`` of ``dtype`` (jax.lax.iota)."""
    return _arange(size, dtype=_canonical_dtype(dtype))


def full(shape, fill_value, dtype=None):
    """An array of ``shape`` filled with ``fill_value`` (jax.lax.full); dtype:
    ``dtype``, else ``fill_value``'s (a Python float is float32)."""
    return _full(shape, fill_value, dtype)


def argmax(operand, axis, index_dtype):
    """Index of the maximum along ``axis`` (jax.lax.argmax; first of ties, NaN
    counts as the maximum), as ``index_dtype``."""
    return _astype(_argmax(operand, axis), _canonical_dtype(index_dtype))


def argmin(operand, axis, index_dtype):
    """Index of the minimum along ``axis`` (jax.lax.argmin), as ``index_dtype``."""
    return _astype(_argmin(operand, axis), _canonical_dtype(index_dtype))


def cumsum(operand, axis=0, reverse=False):
    """Running sum along ``axis`` (jax.lax.cumsum; from the end with ``reverse``).
    Shape and dtype: ``operand``'s (no promotion of small integers)."""
    dt = _value_dtype(operand)
    if reverse:
        return _flip(_cumsum(_flip(operand, axis), axis, dt), axis)
    return _cumsum(operand, axis, dt)


def cumprod(operand, axis=0, reverse=False):
    """Running product along ``axis`` (jax.lax.cumprod); as :func:`cumsum`."""
    dt = _value_dtype(operand)
    if reverse:
        return _flip(_cumprod(_flip(operand, axis), axis, dt), axis)
    return _cumprod(operand, axis, dt)


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """``operand`` sorted along ``dimension`` (jax.lax.sort).

    ``operand``: one array (sorted; the result has its shape and dtype) or a
    tuple/list of arrays of one shape, returned as a tuple of those arrays all
    permuted the same way: the order is lexicographic over the first
    ``num_keys`` operands (the first primary). -0.0 equals 0.0, NaN sorts last,
    complex numbers compare by real then imaginary part; ties keep their order
    (the sort is always stable, also for ``is_stable=False``). Differentiable in
    every inexact operand (the permutation is constant), under jit and vmap.
    Raises TypeError for no operands or operands of different shapes and
    ValueError for ``num_keys`` outside ``1..len(operand)`` (or not 1 for one
    array), as JAX."""
    n = _sort_arity(operand, num_keys)
    if n < 0:
        return _sort(operand, dimension)
    ax = _sort_shapes([_shape(operand[i]) for i in range(n)], dimension)
    # stable argsorts from the least significant key up (as jnp.lexsort)
    idx = _argsort(operand[num_keys - 1], axis=ax, stable=True)
    for i in range(num_keys - 2, -1, -1):
        k = _take_along_axis(operand[i], idx, ax)
        idx = _take_along_axis(idx, _argsort(k, axis=ax, stable=True), ax)
    out = []
    for i in range(n):
        out.append(_take_along_axis(operand[i], idx, ax))
    return tuple(out)
