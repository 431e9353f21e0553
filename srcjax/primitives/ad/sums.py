"""``jnp.sum`` (the reduction every adjoint needs) and ``ad.expand_reduced`` (a
reduction's cotangent broadcast back), ``ad.unbroadcast`` (sum a cotangent down
to an operand's shape; the same object when the shapes match),
``jnp.broadcast_to`` and ``ad.broadcast_copy`` (its contiguous copy); the sample
inputs of reductions.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from srcjax.errors import NonDifferentiableError
from srcjax.primitives.registry import Primitive, register

from ._common import (
    _internal,
    _structural,
    accumulate,
    broadcast_view,
    int_accumulator,
    norm_axes,
    operand_dtype,
    with_initial,
)
from .linear import def_linear_map

# ---------------------------------------------------------------------------
# jnp.sum (the reduction every adjoint needs)


#: dtypes whose sum needs no accumulator choice (float16 sums in float32, ints in
#: the default int): ndarray.sum as it is
_FAST_SUM = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))
_add_reduce = np.add.reduce


def _sum(x, axis=None, dtype=None, keepdims=False, where=None, promote_integers=True, initial=None):
    """Sum of ``x`` over ``axis`` (jax.numpy.sum).

    ``axis``: None (all), int (negative allowed) or tuple. Bool/int inputs
    accumulate in the default int (int32 unless x64), as in JAX; with
    ``promote_integers=False`` an integer input keeps its dtype (int8 wraps
    around), bool still sums in the default int. ``where``: an optional boolean
    mask broadcastable to ``x``; only the elements where it is true are summed
    (the others get a zero gradient). ``initial``: a scalar added to each sum
    (converted to its dtype; not differentiated).
    """
    if dtype is None and where is None and type(x) is np.ndarray and x.dtype in _FAST_SUM:
        if initial is None:
            # (the common case, without the checks; ndarray.sum's own wrapper skipped)
            return _add_reduce(x, axis, None, None, keepdims)
    if initial is not None:
        return with_initial(
            np.add, _sum(x, axis, dtype, keepdims, where, promote_integers), initial
        )
    if dtype is None:
        dtype = own_or_accumulator(operand_dtype(x, "sum"), promote_integers)
    if where is None:
        return accumulate(np.sum, x, dtype, axis=axis, keepdims=keepdims)
    return accumulate(np.sum, x, dtype, axis=axis, keepdims=keepdims, where=where)


sum = register(Primitive("jnp.sum", _sum, kind="reduction"), np.sum)  # noqa: A001
sum.facts(fused_reduction="sum")


def _sum_vjp(g, ans, x, axis=None, dtype=None, keepdims=False, where=None):
    return expand_reduced(g, x, axis, keepdims, where)


def _sum_jvp(t, ans, x, axis=None, dtype=None, keepdims=False, where=None):
    return sum(t, axis=axis, dtype=dtype, keepdims=keepdims, where=where)


sum.def_vjp(_sum_vjp)
sum.def_jvp(_sum_jvp)


def own_or_accumulator(dt, promote_integers=True):
    """The accumulation dtype of ``sum``/``prod`` for an operand of dtype ``dt``:
    :func:`int_accumulator`'s, or with ``promote_integers=False`` an integer's
    own dtype (JAX's option; bool is still counted in the default int)."""
    if not promote_integers and dt.kind in "iu":
        return dt
    return int_accumulator(dt)


def reduction_samples(rng, shape=(2, 3, 4)):
    """Standard (args, kwargs) samples for a reduction ``f(x, axis, keepdims)``."""
    out = []
    for axis, keepdims in [(None, False), (0, False), (-1, True), ((0, 2), False), (1, True)]:
        out.append(((rng.normal(size=shape),), {"axis": axis, "keepdims": keepdims}))
    out.append(((rng.normal(size=(5,)),), {}))
    return out


#: a fixed mask for the ``where=`` samples (each row keeps at least one element)
_MASK23 = np.array([[True, False, True], [False, True, True]])


def masked_reduction_samples(rng):
    """:func:`reduction_samples` plus ``where=`` masks (full and broadcasting)."""
    return reduction_samples(rng) + [
        ((rng.normal(size=(2, 3)),), {"axis": 1, "where": _MASK23}),
        ((rng.normal(size=(2, 3)),), {"where": _MASK23}),
        ((rng.normal(size=(4, 2, 3)),), {"axis": (0, 2), "keepdims": True, "where": _MASK23}),
        ((rng.normal(size=(2, 3)),), {"axis": 1, "where": np.array([True, False, True])}),
    ]


sum.samples = masked_reduction_samples


# ---------------------------------------------------------------------------
# unbroadcast / broadcast_to


def _unbroadcast(g, x):
    """Sum ``g`` down to the shape of ``x`` (the adjoint of broadcasting ``x``).

    Returns ``g`` unchanged (the same object) when the shapes and dtypes already
    match. When ``x`` is a Python scalar the result is a NumPy scalar (a Python
    float for a Python float ``x`` and a floating ``g``: weakly typed). A floating
    ``g`` is cast to ``x``'s floating dtype: the cotangent of a float16 operand
    promoted against float32 is float16, as in JAX (the transpose of the
    promotion's conversion).
    """
    try:
        gshape, shape = g.shape, x.shape
        if gshape == shape:  # the common case, kept cheap
            if g.dtype == x.dtype:
                return g
            return _to_float_dtype(g, x.dtype)
        lead = len(gshape) - len(shape)
        if shape and lead >= 0 and type(g) is np.ndarray:
            # the common broadcasts (a bias b of shape x[1:], a keepdims max/sum):
            # leading axes and x's unit axes summed away with ndarray.sum
            axes = tuple(range(lead)) + tuple(
                lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1
            )
            if axes:
                out = np.add.reduce(g, axis=axes)  # (ndarray.sum without its wrapper)
                if out.shape != shape:
                    out = out.reshape(shape)
                return out if out.dtype == x.dtype else _to_float_dtype(out, x.dtype)
    except AttributeError:
        if isinstance(g, (list, tuple)) and isinstance(x, (list, tuple)):
            # the cotangent of a sequence: this `+` joined lists/tuples
            raise NonDifferentiableError(
                "`+` joining lists or tuples is not differentiable in srcjax yet",
                hint="build the sequence in one display (`[a, b, c]`) or with .append",
            ) from None
    shape = np.shape(x)
    gshape = np.shape(g)
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1
    )
    out = np.sum(g, axis=axes) if axes else np.asarray(g)
    out = np.reshape(out, shape)
    if type(x) is float and out.dtype.kind == "f":
        # a weakly typed Python float's cotangent stays weak (see ad.project_real):
        # a Python float, so jit's promotion pass sees no dtype to match
        return float(out)
    if isinstance(x, (int, float, complex)):
        return out[()]
    dt = getattr(x, "dtype", None)
    return out if dt is None or out.dtype == dt else _to_float_dtype(out, dt)


def _to_float_dtype(g, dt):
    """``g`` in floating dtype ``dt`` when both are floating, else ``g``."""
    if _floating(dt) and _floating(g.dtype):
        return g.astype(dt)
    return g


def _floating(dt):
    """A real floating dtype, ml_dtypes' bfloat16 (NumPy kind "V") included."""
    return dt.kind == "f" or dt.name == "bfloat16"


unbroadcast = _internal("ad.unbroadcast", _unbroadcast).facts(
    array_result=True,
    stack_sum=(("g",), "ad.unbroadcast", ()),
    pure=True,
    identity_operand="g",
)


def _unbroadcast_vjp(h, ans, g, x):
    return broadcast_to(h, np.shape(g))


def _unbroadcast_jvp(t, ans, g, x):
    return unbroadcast(t, x)


unbroadcast.def_vjp(_unbroadcast_vjp)
unbroadcast.def_jvp(_unbroadcast_jvp)
unbroadcast.samples = lambda rng: [
    ((rng.normal(size=(4, 3)), rng.normal(size=(3,))), {}),
    ((rng.normal(size=(4, 3)), rng.normal(size=(4, 1))), {}),
    ((rng.normal(size=(2, 3)), rng.normal(size=(2, 3))), {}),
]


def _broadcast_to(array, shape):
    """Broadcast ``array`` to ``shape`` (jax.numpy.broadcast_to); a read-only view."""
    return np.broadcast_to(array, shape)


broadcast_to = _structural("jnp.broadcast_to", _broadcast_to, np.broadcast_to)


def def_broadcasting(p):
    """Rules of ``p(x, *rest)``, ``x`` broadcast to the shape ``rest`` gives
    (``jnp.broadcast_to(array, shape)``, ``ad.broadcast_like(x, like)``): linear
    in ``x``, its transpose sums ``g`` back to ``x``'s shape, ``unbroadcast(g,
    x)``."""
    def_linear_map(p, unbroadcast, 0, 1)


def_broadcasting(broadcast_to)
broadcast_to.samples = lambda rng: [
    ((rng.normal(size=(3,)), (2, 3)), {}),
    ((rng.normal(size=(2, 1)), (4, 2, 3)), {}),
]


def _broadcast_copy(x, shape):
    """``x`` broadcast to ``shape`` as a new contiguous array: jit's form of a
    loop-invariant operand that an elementwise operation in the loop broadcasts
    (optimize/broadcasts.py); NumPy's ufuncs are up to 3x slower on a broadcast
    operand of a small array than on one of the full shape."""
    out = np.empty(shape, dtype=np.result_type(x))
    out[...] = x
    return out


broadcast_copy = _internal("ad.broadcast_copy", _broadcast_copy, differentiable=False)
broadcast_copy.facts(array_result=True, pure=True)
broadcast_copy.samples = lambda rng: [
    ((rng.normal(size=(3,)).astype(np.float32), (2, 3)), {}),
    ((rng.normal(size=(2, 1)), (4, 2, 3)), {}),
]


#: (type, value, dtype) -> the read-only 0-d array :func:`_const_array` gives
_CONSTS: dict = {}


def _const_array(value, dtype):
    """A number written in the code as a 0-d array of ``dtype``: jit's form of
    a constant operand of a float array's arithmetic (optimize/const_operands.py).
    NumPy's operators convert a Python number operand to the array's dtype on
    every call (~1 us more than a 0-d array operand of a (128,) array); the
    conversion is the same, so the results are bit for bit the same. Made once
    per number and dtype (read-only: only ever an operand), not at every call."""
    if not value or value != value:  # (0.0 == -0.0 and NaN != NaN as keys: made each call)
        return np.array(value, dtype)
    key = (type(value), value, dtype)
    c = _CONSTS.get(key)
    if c is None:
        c = np.array(value, dtype)
        c.flags.writeable = False
        _CONSTS[key] = c
    return c


const_array = _internal("ad.const_array", _const_array, differentiable=False)
const_array.facts(pure=True)
const_array.samples = lambda rng: [((0.9, "float32"), {}), ((1, "float64"), {})]


# ---------------------------------------------------------------------------
# expand_reduced


def _expand_reduced(g, x, axis=None, keepdims=False, where=None):
    """Broadcast a reduction's cotangent ``g`` back to ``np.shape(x)``.

    ``axis``/``keepdims`` are those of the reduction (``axis`` may be None, an
    int, a negative int or a tuple). Returns a read-only broadcast view; with a
    ``where`` mask (that of ``sum(..., where=)``), zeros where it is false.
    """
    shape = x.shape if type(x) is np.ndarray else np.shape(x)
    if type(g) is not np.ndarray and not hasattr(g, "__array_function__"):
        g = np.asarray(g)  # (a device array stays one: np.broadcast_to dispatches)
    if not keepdims:
        if type(axis) is tuple and len(axis) == 1 and type(axis[0]) is int:
            k = axis[0] % len(shape)  # (the common axis=(k,): no sorting)
            g = g.reshape(shape[:k] + (1,) + shape[k + 1 :])
        else:
            axes = norm_axes(axis, len(shape))
            g = g.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))
    if where is not None:
        return np.where(np.broadcast_to(where, shape), g, np.zeros((), g.dtype))
    return broadcast_view(g, shape)


expand_reduced = _internal("ad.expand_reduced", _expand_reduced).facts(
    array_result=True, pure=True, shape_only=("x",)
)


#: (shape, dtype name) -> its stand-in, made once (read-only: safe to share)
_STAND_INS = {}


def _shape_stand_in(shape, dtype):
    """A read-only zero-stride array of ``shape`` and ``dtype`` (a name) whose
    values are never read: jit's operand of a primitive that reads only its
    shape and dtype (``Primitive.shape_only``, optimize/shape_only.py)."""
    key = (tuple(shape), dtype)
    got = _STAND_INS.get(key)
    if got is None:
        got = _STAND_INS[key] = np.broadcast_to(np.zeros((), np.dtype(dtype)), key[0])
    return got


shape_stand_in = _internal("ad.shape_stand_in", _shape_stand_in, differentiable=False)
shape_stand_in.facts(array_result=True, pure=True)
shape_stand_in.samples = lambda rng: [(((2, 3), "float32"), {}), (((), "float64"), {})]


def _expand_reduced_vjp(h, ans, g, x, axis=None, keepdims=False, where=None):
    return sum(h, axis=axis, keepdims=keepdims, where=where)


def _expand_reduced_jvp(t, ans, g, x, axis=None, keepdims=False, where=None):
    return expand_reduced(t, x, axis, keepdims, where)


expand_reduced.def_vjp(_expand_reduced_vjp)
expand_reduced.def_jvp(_expand_reduced_jvp)
expand_reduced.samples = lambda rng: [
    ((rng.normal(size=(3,)), rng.normal(size=(2, 3)), 0, False), {}),
    ((rng.normal(size=(2, 1)), rng.normal(size=(2, 3)), -1, True), {}),
    ((rng.normal(size=()), rng.normal(size=(2, 3)), None, False), {}),
    ((rng.normal(size=(4,)), rng.normal(size=(2, 4, 3)), (0, 2), False), {}),
    ((rng.normal(size=(2,)), rng.normal(size=(2, 3)), 1, False, _MASK23), {}),
]


# JAX keeps a weak array's type through functions that move or copy its elements
for _p in (broadcast_to,):
    _p.facts(keeps_weak=True)


# ---------------------------------------------------------------------------
# sum_of_products: jnp.sum(x * y, axis) in one pass (jit's optimizer writes it)

#: dtypes whose products BLAS sums (real floats: np.vecdot conjugates complex x)
_DOT_DTYPES = frozenset(np.dtype(t) for t in (np.float32, np.float64))
_VECDOT = getattr(np, "vecdot", None)


def _sum_of_products(x, y, axis=None):
    """``jnp.sum(x * y, axis=axis)`` without the product as an array: jit's
    optimizer writes it for a product read only by that sum (issue 17: the
    squared norm of each example's gradient, a sum over each example of a
    per-example scale times its gradient). For float32/float64 arrays of one
    dtype the sum is one BLAS product: ``axis`` the trailing axes of operands of
    one shape -> a dot per leading index (``np.vecdot``); ``axis`` 0 with one
    operand ``(n, 1, ..., 1)`` -> a matrix-vector product over the rows. The
    sums are BLAS's, in another order than NumPy's pairwise ``sum``: the same
    values up to float rounding (at most ``_DOT_TERMS`` terms each; a longer or
    a full sum stays NumPy's). Anything else: the product, then its sum."""
    if (
        type(x) is np.ndarray
        and type(y) is np.ndarray
        and x.dtype in _DOT_DTYPES
        and y.dtype == x.dtype
    ):
        shape = x.shape
        if (
            shape == y.shape
            and len(shape) >= 2
            and axis == (len(shape) - 1,)
            and 0 < shape[-1] <= _DOT_TERMS
            and _VECDOT is not None
        ):
            return _VECDOT(x, y)  # (the common case: the last axis, no reshape)
        r = _dot_form(x, y, axis)
        if r is not None:
            return r
    return sum.impl(np.multiply(x, y), axis=axis)  # (a buffer, as generated code expects)


#: the most terms one BLAS dot of :func:`_dot_form` sums: its accumulators are
#: sequential (a few SIMD lanes), NumPy's ``sum`` pairwise, so a long sum (a
#: full reduction of a large array) stays NumPy's
_DOT_TERMS = 1 << 16


def _dot_form(x, y, axis):
    """:func:`_sum_of_products` as one BLAS product, or None."""
    nd = max(x.ndim, y.ndim)
    axes = norm_axes(axis, nd)
    if x.shape == y.shape and 0 < len(axes) < nd and axes == tuple(range(nd - len(axes), nd)):
        lead = x.shape[: nd - len(axes)]
        if 0 in x.shape or x.size // math.prod(lead) > _DOT_TERMS:
            return None
        a = x.reshape(lead + (-1,))
        b = y.reshape(lead + (-1,))
        if _VECDOT is not None:
            return _VECDOT(a, b)
        from ..linalg.contraction import contract  # (NumPy < 2)

        return contract("...k,...k->...", a, b)
    if axes == (0,) and x.ndim == y.ndim and nd >= 2:
        for s, a in ((x, y), (y, x)):
            n = a.shape[0]
            if s.shape == (n,) + (1,) * (nd - 1) and 0 < n <= _DOT_TERMS and a.size:
                return np.matmul(s.reshape(n), a.reshape(n, -1)).reshape(a.shape[1:])
    if axes == (nd - 1,) and x.ndim == y.ndim and nd >= 2:
        return _outer_form(x, y)
    return None


def _outer_form(x, y):
    """The sums over the last axis of ``x * y`` as one batched matmul, or None:
    each other axis is a batch axis (one size in both), ``x``'s alone (``y``
    has 1 there) or ``y``'s alone, the result's axes reading the batch axes,
    then one operand's, then the other's. jit(vmap(hessian)) of ``prod`` (R7):
    a (64, 1, 6, 6) by (64, 6, 1, 6) sum of products was a (64, 6, 6, 6) product
    summed along its 6 (~45 us); one (64, 6, 6) x (64, 6, 6) matmul (~10 us)."""
    plan = _outer_plan(x.shape, y.shape)
    if plan is None:
        return None
    swap, lshape, rshape, out_shape = plan
    left, right = (y, x) if swap else (x, y)
    out = np.matmul(left.reshape(lshape), np.swapaxes(right.reshape(rshape), -1, -2))
    return out.reshape(out_shape)


@functools.lru_cache(maxsize=256)
def _outer_plan(xs, ys):
    """:func:`_outer_form`'s shapes for operand shapes ``xs``, ``ys``, kept:
    ``(swap, left shape, right shape, result shape)`` or None."""
    k = xs[-1]
    if ys[-1] != k or not 0 < k <= _DOT_TERMS:
        return None
    kinds = []
    for a, b in zip(xs[:-1], ys[:-1]):
        if a == b:
            kinds.append("b" if a != 1 else "")
        elif b == 1:
            kinds.append("x")
        elif a == 1:
            kinds.append("y")
        else:
            return None
    own = "".join(kinds).lstrip("b")
    first = own[:1]
    if "b" in own or own.lstrip(first).strip("xy".replace(first, "") if first else "") != "":
        return None
    swap = first == "y"
    (ls, lk), (rs, rk) = ((ys, "y"), (xs, "x")) if swap else ((xs, "x"), (ys, "y"))
    batch = tuple(n for n, c in zip(xs, kinds) if c == "b")
    lm = math.prod(n for n, c in zip(ls, kinds) if c == lk)
    rm = math.prod(n for n, c in zip(rs, kinds) if c == rk)
    if 0 in batch or 0 in (lm, rm):
        return None
    out_shape = tuple(max(a, b) for a, b in zip(xs[:-1], ys[:-1]))
    return swap, batch + (lm, k), batch + (rm, k), out_shape


sum_of_products = register(Primitive("ad.sum_of_products", _sum_of_products, kind="reduction"))


def _vecdot(x, y):
    """jit's form of ``ad.sum_of_products(x, y, (x.ndim - 1,))`` for float32 or
    float64 arrays of one shape and dtype, at most ``_DOT_TERMS`` terms per sum
    (optimize/direct.py): the one gufunc call the general helper makes for them,
    without its dispatch (~0.5 us a call; R6's two dots per CG trip)."""
    return _VECDOT(x, y)


vecdot = register(Primitive("ad.vecdot", _vecdot, kind="internal", differentiable=False))
vecdot.facts(array_result=True, pure=True)
vecdot.samples = lambda rng: [((rng.normal(size=(4, 3)), rng.normal(size=(4, 3))), {})]


def _sum_of_products_vjp_x(g, ans, x, y, axis=None):
    shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    return _unbroadcast(np.multiply(_expand_reduced(g, np.broadcast_to(x, shape), axis), y), x)


def _sum_of_products_vjp_y(g, ans, x, y, axis=None):
    shape = np.broadcast_shapes(np.shape(x), np.shape(y))
    return _unbroadcast(np.multiply(_expand_reduced(g, np.broadcast_to(y, shape), axis), x), y)


sum_of_products.def_vjp(x=_sum_of_products_vjp_x, y=_sum_of_products_vjp_y)
sum_of_products.def_jvp(
    x=lambda t, ans, x, y, axis=None: sum_of_products(t, y, axis),
    y=lambda t, ans, x, y, axis=None: sum_of_products(x, t, axis),
)
sum_of_products.samples = lambda rng: [
    ((rng.normal(size=(4, 3, 2)), rng.normal(size=(4, 3, 2)), (1, 2)), {}),
    ((rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), None), {}),
    ((rng.normal(size=(4, 3, 2)), rng.normal(size=(4, 1, 1)), 0), {}),
    ((rng.normal(size=(4, 1)), rng.normal(size=(4, 3)), 0), {}),
    ((rng.normal(size=(4, 3)), rng.normal(size=(3,)), 1), {}),
]
