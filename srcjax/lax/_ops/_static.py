"""The non-differentiable ``ad.lax_*`` helpers of static values that
``srcjax.lax._ops`` calls: JAX's dtype checks of the binary operations (with
its TypeError texts), shape plans of ``broadcast_in_dim``, ``dot_general``,
``slice``, ``pad`` and ``sort``: the same for every example of a vmap."""

from __future__ import annotations

import builtins as _builtins

import numpy as np

from ... import dtypes as _dt
from ...primitives.registry import Primitive, register

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


def _dot_general_spec_impl(lhs_shape, rhs_shape, dimension_numbers):
    """Static: the ``einsum`` subscripts of ``dot_general`` (output: batch axes,
    then ``lhs``'s free axes, then ``rhs``'s, as JAX orders them); JAX's
    TypeError where the batch or contracting sizes differ."""
    (lc, rc), (lb, rb) = dimension_numbers
    lc, rc, lb, rb = (tuple(int(a) for a in v) for v in (lc, rc, lb, rb))
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise TypeError(
            "dot_general requires equal numbers of lhs and rhs contracting and batch"
            f" dimensions, got {dimension_numbers}"
        )
    lhs_ndim, rhs_ndim = len(lhs_shape), len(rhs_shape)
    for what, la, ra in (("lhs batch dimensions and rhs batch", lb, rb), ("contracting", lc, rc)):
        ls = tuple(int(lhs_shape[a]) for a in la)
        rs = tuple(int(rhs_shape[a]) for a in ra)
        if ls != rs:
            raise TypeError(
                f"dot_general requires {what} dimensions to have the same shape, got {ls} and {rs}."
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
_dot_general_spec.samples = lambda rng: [(((2, 3, 4), (2, 4, 5), (((2,), (1,)), ((0,), (0,)))), {})]
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
