"""Core structural primitives and the internal helpers the AD transforms emit.

This module is the bottom layer of the non-elementwise primitives: it defines
the few user-facing primitives that every adjoint rule needs (``jnp.sum``,
``jnp.reshape``, ``jnp.moveaxis``, ``jnp.expand_dims``, ``jnp.broadcast_to``,
``jnp.triu``, ``jnp.tril``, ``jnp.getitem``), re-exported by
:mod:`~srcjax.primitives.reductions` and :mod:`~srcjax.primitives.structural`,
and the internal helpers with public names ``ad.<name>`` (not exported to
:mod:`srcjax.numpy`). Every differentiable helper carries its own vjp/jvp
rules, so generated gradient code can be differentiated again.

Conventions the transforms rely on:

- ``ad.unbroadcast(g, x)`` sums ``g`` down to ``np.shape(x)`` and returns ``g``
  itself (the same object) when the shapes already match; a Python scalar
  ``x`` gives a NumPy scalar.
- ``ad.zeros_like(x)`` and ``ad.add_any(a, b)`` work leafwise on pytrees
  (dict / list / tuple); ``add_any`` treats ``None`` as a symbolic zero.
- ``ad.index_adjoint(g, x, idx)`` is the adjoint of ``x[idx]`` (arrays: scatter
  with accumulation of duplicate indices; containers: same container, zeros
  elsewhere).
- ``ad.expand_reduced(g, x, axis, keepdims)`` broadcasts a reduction's
  cotangent back to ``np.shape(x)`` (a read-only broadcast view).
"""

from __future__ import annotations

import builtins

import numpy as np

from srcjax import dtypes as _dt
from srcjax._prng_key import PRNGKeyArray
from srcjax.errors import NonDifferentiableError
from srcjax.primitives.registry import Primitive, register

__all__: list = []  # nothing defined here is exported from this module directly

canonical_dtype = _dt.canonicalize_dtype
default_float = _dt.default_float
default_int = _dt.default_int


def int_accumulator(dtype):
    """Accumulation dtype of ``sum``/``prod``/``cumsum`` for bool/int inputs (JAX
    promotes to the default-width int / uint), ``None`` for other dtypes."""
    kind = np.dtype(dtype).kind
    if kind in "bi":
        return default_int()
    if kind == "u":
        return _dt.default_uint()
    return None


def accumulate(reduce, x, dtype=None, **kwargs):
    """``reduce(x, dtype=dtype, **kwargs)`` (a NumPy reduction or scan) with JAX's
    accumulation: a float16 result is accumulated in float32 and rounded back
    once at the end (``sum(ones(3000, float16))`` is 3000, not 2048; the
    variance of float16 data whose squares overflow float16 is finite)."""
    if (np.result_type(x) if dtype is None else np.dtype(dtype)) != np.float16:
        return reduce(x, dtype=dtype, **kwargs)
    r = reduce(x, dtype=np.float32, **kwargs)
    with np.errstate(over="ignore"):  # beyond float16's range: inf, as in JAX
        return r.astype(np.float16)


def operand_dtype(x, name: str):
    """``np.result_type(x)`` of a reduction's operand; for a Python list or tuple of
    arrays (which NumPy would read as a structured dtype spec) JAX's TypeError."""
    try:
        return np.result_type(x)
    except TypeError:
        raise TypeError(
            f"{name} requires ndarray or scalar arguments, got {type(x)} at position 0."
        ) from None


def norm_axes(axis, ndim):
    """Normalize ``axis`` (None, int, tuple, negative) to a sorted tuple."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(int(a) % ndim if ndim else 0 for a in axis))
    return (int(axis) % ndim if ndim else 0,)


def _internal(public, impl, differentiable=True):
    return register(Primitive(public, impl, kind="internal", differentiable=differentiable))


def _structural(public, impl, *aliases):
    return register(Primitive(public, impl, kind="structural"), *aliases)


# ---------------------------------------------------------------------------
# jnp.sum (the reduction every adjoint needs)


#: dtypes whose sum needs no accumulator choice (float16 sums in float32, ints in
#: the default int): ndarray.sum as it is
_FAST_SUM = frozenset(np.dtype(t) for t in (np.float32, np.float64, np.complex64, np.complex128))


def _sum(x, axis=None, dtype=None, keepdims=False, where=None):
    """Sum of ``x`` over ``axis`` (jax.numpy.sum).

    ``axis``: None (all), int (negative allowed) or tuple. Bool/int inputs
    accumulate in the default int (int32 unless x64), as in JAX. ``where``: an
    optional boolean mask broadcastable to ``x``; only the elements where it is
    true are summed (the others get a zero gradient).
    """
    if dtype is None and where is None and type(x) is np.ndarray and x.dtype in _FAST_SUM:
        return x.sum(axis=axis, keepdims=keepdims)  # (the common case, without the checks)
    if dtype is None:
        dtype = int_accumulator(operand_dtype(x, "sum"))
    if where is None:
        return accumulate(np.sum, x, dtype, axis=axis, keepdims=keepdims)
    return accumulate(np.sum, x, dtype, axis=axis, keepdims=keepdims, where=where)


sum = register(Primitive("jnp.sum", _sum, kind="reduction"), np.sum)  # noqa: A001


def _sum_vjp(g, ans, x, axis=None, dtype=None, keepdims=False, where=None):
    return expand_reduced(g, x, axis, keepdims, where)


def _sum_jvp(t, ans, x, axis=None, dtype=None, keepdims=False, where=None):
    return sum(t, axis=axis, dtype=dtype, keepdims=keepdims, where=where)


sum.def_vjp(_sum_vjp)
sum.def_jvp(_sum_jvp)


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
    match. When ``x`` is a Python scalar the result is a NumPy scalar. A floating
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
                out = g.sum(axis=axes)
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
    if isinstance(x, (int, float, complex)):
        return out[()]
    dt = getattr(x, "dtype", None)
    return out if dt is None or out.dtype == dt else _to_float_dtype(out, dt)


def _to_float_dtype(g, dt):
    """``g`` in floating dtype ``dt`` when both are floating, else ``g``."""
    if dt.kind == "f" and g.dtype.kind == "f":
        return g.astype(dt)
    return g


unbroadcast = _internal("ad.unbroadcast", _unbroadcast).facts(array_result=True)


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


def _broadcast_to_vjp(g, ans, array, shape):
    return unbroadcast(g, array)


def _broadcast_to_jvp(t, ans, array, shape):
    return broadcast_to(t, shape)


broadcast_to.def_vjp(_broadcast_to_vjp)
broadcast_to.def_jvp(_broadcast_to_jvp)
broadcast_to.samples = lambda rng: [
    ((rng.normal(size=(3,)), (2, 3)), {}),
    ((rng.normal(size=(2, 1)), (4, 2, 3)), {}),
]


# ---------------------------------------------------------------------------
# reshape / moveaxis / expand_dims / triu / tril


def _reshape(a, shape, order="C"):
    """``a`` with a new ``shape`` (jax.numpy.reshape); ``-1`` infers one dimension.
    Raises :class:`srcjax.errors.ShapeError` (TypeError as JAX, and ValueError)
    when the sizes differ."""
    try:
        return np.reshape(a, shape, order=order)
    except ValueError:
        from ..errors import ShapeError

        sa = np.shape(a)
        raise ShapeError(
            f"cannot reshape array of shape {sa} (size {np.size(a)}) into shape {shape}"
        ) from None


reshape = _structural("jnp.reshape", _reshape, np.reshape)


def _reshape_vjp(g, ans, a, shape, order="C"):
    return reshape(g, np.shape(a), order=order)


def _reshape_jvp(t, ans, a, shape, order="C"):
    return reshape(t, shape, order=order)


reshape.def_vjp(_reshape_vjp)
reshape.def_jvp(_reshape_jvp)
reshape.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), (3, 2)), {}),
    ((rng.normal(size=(2, 3, 4)), (-1, 4)), {}),
    ((rng.normal(size=(2, 3)), (6,)), {"order": "F"}),
]


def _moveaxis(a, source, destination):
    """Move axes ``source`` to ``destination`` (jax.numpy.moveaxis); ints or tuples."""
    return np.moveaxis(a, source, destination)


moveaxis = _structural("jnp.moveaxis", _moveaxis, np.moveaxis)


def _moveaxis_vjp(g, ans, a, source, destination):
    return moveaxis(g, destination, source)


def _moveaxis_jvp(t, ans, a, source, destination):
    return moveaxis(t, source, destination)


moveaxis.def_vjp(_moveaxis_vjp)
moveaxis.def_jvp(_moveaxis_jvp)
moveaxis.samples = lambda rng: [
    ((rng.normal(size=(2, 3, 4)), 0, -1), {}),
    ((rng.normal(size=(2, 3, 4)), (0, 1), (2, 0)), {}),
]


def _expand_dims(a, axis):
    """Insert length-1 axes at ``axis`` (int or tuple) (jax.numpy.expand_dims)."""
    return np.expand_dims(a, axis)


expand_dims = _structural("jnp.expand_dims", _expand_dims, np.expand_dims)


def _expand_dims_vjp(g, ans, a, axis):
    return reshape(g, np.shape(a))


def _expand_dims_jvp(t, ans, a, axis):
    return expand_dims(t, axis)


expand_dims.def_vjp(_expand_dims_vjp)
expand_dims.def_jvp(_expand_dims_jvp)
expand_dims.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), -2), {}),
    ((rng.normal(size=(2, 3)), (0, 3)), {}),
]


def _triu(m, k=0):
    """Upper triangle (on and above diagonal ``k``) of the last two axes (jax.numpy.triu)."""
    return np.triu(m, k)


def _tril(m, k=0):
    """Lower triangle (on and below diagonal ``k``) of the last two axes (jax.numpy.tril)."""
    return np.tril(m, k)


triu = _structural("jnp.triu", _triu, np.triu)
tril = _structural("jnp.tril", _tril, np.tril)


def _triu_vjp(g, ans, m, k=0):
    return triu(g, k)


def _triu_jvp(t, ans, m, k=0):
    return triu(t, k)


def _tril_vjp(g, ans, m, k=0):
    return tril(g, k)


def _tril_jvp(t, ans, m, k=0):
    return tril(t, k)


triu.def_vjp(_triu_vjp)
triu.def_jvp(_triu_jvp)
tril.def_vjp(_tril_vjp)
tril.def_jvp(_tril_jvp)
_tri_samples = lambda rng: [  # noqa: E731
    ((rng.normal(size=(3, 4)),), {}),
    ((rng.normal(size=(2, 3, 3)), 1), {}),
    ((rng.normal(size=(4, 3)), -1), {}),
]
triu.samples = _tri_samples
tril.samples = _tri_samples


# ---------------------------------------------------------------------------
# pytree zeros / add


def _zeros_like(x):
    """Zeros with the structure, shape and dtype of ``x``.

    Works on pytrees: dicts, lists and tuples give the same container of zeros;
    Python floats give ``0.0``, NumPy scalars a zero of their dtype; ``None``
    stays ``None``.
    """
    if x is None:
        return None
    if isinstance(x, dict):
        return {k: _zeros_like(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_zeros_like(v) for v in x]
    if isinstance(x, tuple):
        vals = [_zeros_like(v) for v in x]
        return type(x)(*vals) if hasattr(x, "_fields") else tuple(vals)
    if isinstance(x, bool):
        return False
    if isinstance(x, float):
        return 0.0
    if isinstance(x, int):
        return 0
    if isinstance(x, complex):
        return 0j
    if isinstance(x, np.generic):
        return x.dtype.type(0)
    if not isinstance(x, np.ndarray):
        from .control._trees import _class_kind

        kind = _class_kind(x)
        if kind is not None:  # a registered pytree class: the same class of zeros
            children, aux = kind.flatten(x)
            return kind.unflatten(aux, tuple(_zeros_like(v) for v in children))
    return np.zeros_like(x)


zeros_like = _internal("ad.zeros_like", _zeros_like, differentiable=False)


def _add_any(a, b):
    """Add two cotangents leafwise (dict / list / tuple pytrees); ``None`` is zero."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict):
        return {k: _add_any(a.get(k), b.get(k)) for k in a}
    if isinstance(a, (list, tuple)):
        vals = [_add_any(u, v) for u, v in zip(a, b)]
        if isinstance(a, list):
            return vals
        return type(a)(*vals) if hasattr(a, "_fields") else tuple(vals)
    return a + b


add_any = _internal("ad.add_any", _add_any)


def _add_any_vjp(g, ans, a, b):
    return g


def _add_any_jvp(t, ans, a, b):
    return t


add_any.def_vjp(_add_any_vjp, _add_any_vjp)
add_any.def_jvp(_add_any_jvp, _add_any_jvp)
add_any.samples = lambda rng: [((rng.normal(size=(2, 3)), rng.normal(size=(2, 3))), {})]


# ---------------------------------------------------------------------------
# getitem (operator ``[]``) and its adjoint


def is_basic_index(idx):
    """True when ``x[idx]`` is NumPy basic indexing (no gather, no duplicates)."""
    items = idx if isinstance(idx, tuple) else (idx,)
    for it in items:
        if it is None or it is Ellipsis or isinstance(it, slice):
            continue
        if isinstance(it, (bool, np.bool_)):
            return False
        if isinstance(it, (int, np.integer)):
            continue
        if isinstance(it, np.ndarray) and it.ndim == 0 and it.dtype.kind in "iu":
            continue
        return False
    return True


def flat_positions(shape, idx):
    """Flat positions, in an array of ``shape``, selected by any index ``idx``."""
    size = 1
    for n in shape:
        size *= int(n)
    return np.arange(size).reshape(shape)[idx]


def _getitem(x, idx):
    """``x[idx]`` (operator ``[]``), with NumPy/JAX indexing semantics.

    Arrays: basic indexing, slices with steps, integer arrays (gather), boolean
    masks, tuples, ``None`` and ``Ellipsis``. Python lists, tuples and dicts are
    indexed as containers (pytree access).
    """
    if isinstance(x, (list, tuple, dict, PRNGKeyArray)):
        return x[idx]
    return np.asarray(x)[idx]


getitem = _structural("ad.getitem", _getitem).facts(part="item")
getitem.op = "[]"


def _index_adjoint(g, x, idx):
    """The adjoint of ``x[idx]``: zeros shaped like ``x`` with ``g`` scattered in.

    Duplicate integer indices accumulate (``np.add.at`` semantics). For dict /
    list / tuple ``x`` the result is the same container with ``zeros_like``
    everywhere except at ``idx``, which holds ``g``.

    ``g`` may be a hole (``None``: the element's cotangent is zero, e.g. an
    unused element of a loop's carry or per-step output); for an array ``x`` the
    result is then zeros (NumPy would store ``None`` as NaN).
    """
    if isinstance(x, dict):
        out = {k: _zeros_like(v) for k, v in x.items()}
        out[idx] = g
        return out
    if isinstance(x, (list, tuple)):
        out = [_zeros_like(v) for v in x]
        if isinstance(idx, slice):
            for i, gi in zip(range(len(x))[idx], g):
                out[i] = gi
        else:
            out[idx] = g
        if isinstance(x, tuple):
            return type(x)(*out) if hasattr(x, "_fields") else tuple(out)
        return out
    shape = np.shape(x)
    if g is None:
        xdt = np.result_type(x)
        return np.zeros(shape, dtype=xdt if xdt.kind in "fc" else np.float32)
    gdt = np.result_type(g)
    dtype = gdt if gdt.kind in "fc" else np.result_type(x)
    out = np.zeros(shape, dtype=dtype)
    if is_basic_index(idx):
        out[idx] = g
        return out
    pos = flat_positions(shape, idx)
    np.add.at(out.reshape(-1), pos.reshape(-1), np.broadcast_to(g, pos.shape).reshape(-1))
    return out


index_adjoint = _internal("ad.index_adjoint", _index_adjoint)


def _getitem_vjp(g, ans, x, idx):
    return index_adjoint(g, x, idx)


def _getitem_jvp(t, ans, x, idx):
    return getitem(t, idx)


getitem.def_vjp(_getitem_vjp)
getitem.def_jvp(_getitem_jvp)


def _index_adjoint_vjp(h, ans, g, x, idx):
    return getitem(h, idx)


def _index_adjoint_jvp(t, ans, g, x, idx):
    return index_adjoint(t, x, idx)


index_adjoint.def_vjp(_index_adjoint_vjp)
index_adjoint.def_jvp(_index_adjoint_jvp)

INDEX_SAMPLES = [
    ((4, 5), (1, slice(None))),
    ((4, 5), (slice(None, None, -2), slice(1, 4))),
    ((4, 5), (np.array([0, 2, 2, -1]),)),
    ((4, 5), (np.array([0, 2, 2]), np.array([1, 3, 3]))),
    ((4, 5), (Ellipsis, None, 2)),
    ((6,), np.array([True, False, True, True, False, False])),
    ((3, 4), np.array([[1, 1], [0, 2]])),
    ((3, 4), (slice(None), np.array([3, 0, 3]))),
]


def _getitem_samples(rng):
    return [((rng.normal(size=s), idx), {}) for s, idx in INDEX_SAMPLES]


def _index_adjoint_samples(rng):
    out = []
    for s, idx in INDEX_SAMPLES:
        x = rng.normal(size=s)
        out.append(((rng.normal(size=np.shape(x[idx])), x, idx), {}))
    return out


getitem.samples = _getitem_samples
index_adjoint.samples = _index_adjoint_samples


# ---------------------------------------------------------------------------
# expand_reduced


def _expand_reduced(g, x, axis=None, keepdims=False, where=None):
    """Broadcast a reduction's cotangent ``g`` back to ``np.shape(x)``.

    ``axis``/``keepdims`` are those of the reduction (``axis`` may be None, an
    int, a negative int or a tuple). Returns a read-only broadcast view; with a
    ``where`` mask (that of ``sum(..., where=)``), zeros where it is false.
    """
    shape = x.shape if type(x) is np.ndarray else np.shape(x)
    g = np.asarray(g)
    if not keepdims:
        axes = norm_axes(axis, len(shape))
        g = g.reshape(tuple(1 if i in axes else n for i, n in enumerate(shape)))
    if where is not None:
        return np.where(np.broadcast_to(where, shape), g, np.zeros((), g.dtype))
    return np.broadcast_to(g, shape)


expand_reduced = _internal("ad.expand_reduced", _expand_reduced).facts(array_result=True)


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


# ---------------------------------------------------------------------------
# the cotangent of a real input


_REAL_SCALARS = frozenset({np.float32, np.float64, np.float16, float})


def _project_real(g, x):
    """The gradient of input ``x`` from its accumulated cotangent ``g``: the real
    part when ``x`` is real and ``g`` complex (a complex intermediate on the path:
    JAX's convention, where converting a real value to complex transposes to
    taking the real part), else ``g`` itself; a floating ``g`` takes the floating
    dtype of ``x`` (JAX: a gradient has its primal's dtype, even when float64 data
    or a ``dtype=float16`` reduction widened or narrowed the cotangent on the way).
    Containers leaf by leaf."""
    t = type(g)
    if t is type(x) and t in _REAL_SCALARS:
        return g  # the common case, first (it ends every gradient: W3 per-call cost)
    d = getattr(g, "dtype", None)
    if d is not None:
        if d.kind != "c":
            dx = getattr(x, "dtype", None)
            if dx is not None and dx != d and dx.kind == "f" and d.kind == "f":
                return np.asarray(g).astype(dx)[()] if t is not np.ndarray else g.astype(dx)
            return g
        dx = getattr(x, "dtype", None)
        if dx.kind == "c" if dx is not None else isinstance(x, complex):
            # a complex gradient has its primal's dtype (grad(real(z ** z)) was
            # complex128 for a complex64 z: user X)
            return g.astype(dx) if dx is not None and dx != d else g
        return np.real(g).copy()[()]
    if isinstance(g, complex):
        return g if isinstance(x, complex) or getattr(x, "dtype", _F).kind == "c" else g.real
    if g is None or isinstance(g, (float, int)):
        return g
    if _all_real(g):
        return g  # the common case: nothing complex, the container itself
    from srcjax import tree_util

    # None holes (zero cotangents) stay None
    return tree_util.tree_map(_project_real, g, x, is_leaf=lambda v: v is None)


def _require_constant(x, pname, message):
    """Raise ``NoDerivativeRuleError(message)`` when ``x`` (or a leaf of it) is
    floating or complex: it reached a parameter ``pname`` of a primitive that has
    no derivative rule for it on a differentiated path (see
    ``transforms.rules.no_rule_checks``). Integer and boolean values pass: they
    carry no derivative (JAX's float0)."""
    from srcjax import tree_util

    for v in tree_util.tree_leaves(x):
        if isinstance(v, (float, complex)) or getattr(v, "dtype", _BOOL).kind in "fc":
            from ..errors import NoDerivativeRuleError

            err = NoDerivativeRuleError(message)
            err.parameter = pname
            raise err


_BOOL = np.dtype(bool)
require_constant = _internal("ad.require_constant", _require_constant, differentiable=False)

_F = np.dtype(np.float32)


def _all_real(g) -> bool:
    """Whether no leaf of the cotangent container ``g`` is complex (a plain walk of
    dicts, lists and tuples: this runs at the end of every gradient of a pytree)."""
    if isinstance(g, dict):
        return all(map(_all_real, g.values()))
    if isinstance(g, (list, tuple)):
        return all(map(_all_real, g))
    if type(g) is np.ndarray or g is None:
        return g is None or g.dtype.kind != "c"
    d = getattr(g, "dtype", None)
    if d is not None:
        return d.kind != "c"
    if isinstance(g, complex):
        return False
    from .control._trees import _class_kind

    if _class_kind(g) is not None:
        from srcjax import tree_util

        return all(map(_all_real, tree_util.tree_leaves(g)))
    return True


project_real = _internal("ad.project_real", _project_real)
project_real.facts(same_structure=("g", "x"))


def _project_real_vjp(h, ans, g, x):
    return h  # the transpose of taking the real part: complex(h, 0)


def _project_real_jvp(t, ans, g, x):
    return project_real(t, x)


project_real.def_vjp(g=_project_real_vjp)
project_real.def_jvp(g=_project_real_jvp)
project_real.samples = lambda rng: [((rng.normal(size=(2, 3)), rng.normal(size=(2, 3))), {})]


# ---------------------------------------------------------------------------
# astype


def _astype(x, dtype):
    """``x`` converted to ``dtype`` (jax.numpy.astype); always a new array. The
    dtype is canonicalized as in JAX: ``astype(x, float)`` is float32 and
    ``astype(x, int)`` int32 unless x64. Floating to integer conversion
    saturates as XLA's does (NaN -> 0, out-of-range values -> the type's
    minimum/maximum, truncating toward zero); NumPy's cast is undefined there
    (``astype(uint8)`` of ``[-1, 300]`` is ``[0, 255]`` in JAX, ``[255, 44]`` in
    NumPy)."""
    x = np.asarray(x)
    to = _dt.canonicalize_dtype(dtype)
    if x.dtype.kind == "f" and to.kind in "iu":
        return _saturating_cast(x, to)
    return x.astype(to)


def _saturating_cast(x, to):
    info = np.iinfo(to)
    xf = np.asarray(x, np.float64)
    hi = float(info.max)
    if hi > info.max:  # 2**63 - 1 is not a float64: the largest one below it
        hi = float(np.nextafter(hi, 0.0))
    out = np.asarray(np.clip(np.nan_to_num(xf, nan=0.0), float(info.min), hi)).astype(to)
    return np.where(xf >= info.max, np.asarray(info.max, to), out)


astype = _internal("ad.astype", _astype)


def _is_inexact(dtype) -> bool:
    return np.dtype(dtype).kind in "fc"


def _cast_cotangent(g, x, dtype):
    """The cotangent of ``x`` through ``astype(x, dtype)``: ``g`` in ``x``'s dtype,
    or zeros when ``dtype`` is an integer or bool (the cast has no derivative:
    JAX's float0 tangent)."""
    to = np.result_type(x)
    shape = np.shape(g)
    if shape != np.shape(x):  # under vmap one of them may carry the batch axis
        shape = np.broadcast_shapes(shape, np.shape(x))
    if _is_inexact(dtype):
        return np.broadcast_to(np.asarray(g).astype(to, copy=False), shape)
    return np.zeros(shape, to if to.kind in "fc" else np.float32)


def _cast_tangent(t, dtype):
    """The tangent of ``astype(x, dtype)``: ``t`` cast, or zeros (of ``t``'s
    dtype) when ``dtype`` is an integer or bool."""
    if _is_inexact(dtype):
        return np.asarray(t).astype(_dt.canonicalize_dtype(dtype))
    return np.zeros_like(t)


def _keep_if_inexact(v, dtype):
    """``v`` where a conversion to ``dtype`` keeps derivatives (``dtype`` None or
    floating), zeros of ``v``'s shape and dtype where it is an integer or bool."""
    if dtype is None or _is_inexact(dtype):
        return v
    return np.zeros_like(v)


keep_if_inexact = register(Primitive("ad.keep_if_inexact", _keep_if_inexact))


def _keep_if_inexact_lin(h, ans, v, dtype):
    return keep_if_inexact(h, dtype)


keep_if_inexact.def_vjp(v=_keep_if_inexact_lin)
keep_if_inexact.def_jvp(v=_keep_if_inexact_lin)
keep_if_inexact.samples = lambda rng: [((rng.normal(size=(2, 3)), "float32"), {})]

cast_cotangent = register(Primitive("ad.cast_cotangent", _cast_cotangent))
cast_tangent = register(Primitive("ad.cast_tangent", _cast_tangent))


def _cast_cotangent_vjp(h, ans, g, x, dtype):
    return cast_tangent(h, dtype)


def _cast_cotangent_jvp(t, ans, g, x, dtype):
    return cast_cotangent(t, x, dtype)


def _cast_tangent_vjp(h, ans, t, dtype):
    return cast_cotangent(h, t, dtype)


def _cast_tangent_jvp(s, ans, t, dtype):
    return cast_tangent(s, dtype)


cast_cotangent.def_vjp(g=_cast_cotangent_vjp)
cast_cotangent.def_jvp(g=_cast_cotangent_jvp)
cast_cotangent.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), "float64"), {})
]
cast_tangent.def_vjp(t=_cast_tangent_vjp)
cast_tangent.def_jvp(t=_cast_tangent_jvp)
cast_tangent.samples = lambda rng: [((rng.normal(size=(2, 3)), "float64"), {})]


def _astype_vjp(g, ans, x, dtype):
    return cast_cotangent(g, x, dtype)


def _astype_jvp(t, ans, x, dtype):
    return cast_tangent(t, dtype)


astype.def_vjp(_astype_vjp)
astype.def_jvp(_astype_jvp)
astype.samples = lambda rng: [((rng.normal(size=(2, 3)), "float64"), {})]


# ---------------------------------------------------------------------------
# static helpers (non-differentiable: their results are shapes / specs / constants)


def _axis_or_zero(axis):
    """``0`` when ``axis`` is None (the axis of a flattened array), else ``axis``."""
    return 0 if axis is None else axis


axis_or_zero = _internal("ad.axis_or_zero", _axis_or_zero, differentiable=False)
axis_or_zero.facts(static_for_constants=True)


def _inverse_permutation(axes, ndim):
    """The permutation undoing ``transpose(x, axes)``; None when ``axes`` is None."""
    if axes is None:
        return None
    return tuple(int(i) for i in np.argsort([int(a) % ndim for a in axes]))


inverse_permutation = _internal(
    "ad.inverse_permutation", _inverse_permutation, differentiable=False
)


def _eye_mask(n, dtype=np.float32):
    """Constant ``n x n`` identity (rules use it as a 0/1 mask)."""
    return np.eye(n, dtype=dtype)


eye_mask = _internal("ad.eye_mask", _eye_mask, differentiable=False)


def _last_onehot(y):
    """Constant: zeros like ``y`` with ones at the last position of the last axis."""
    out = np.zeros(np.shape(y), dtype=np.result_type(y))
    out[..., -1] = 1
    return out


last_onehot = _internal("ad.last_onehot", _last_onehot, differentiable=False)


def _flatten_if_none(x, axis):
    """``ravel(x)`` when ``axis`` is None, else ``x`` (rules of axis=None ops)."""
    return np.ravel(x) if axis is None else np.asarray(x)


flatten_if_none = _internal("ad.flatten_if_none", _flatten_if_none)


def _flatten_if_none_vjp(g, ans, x, axis):
    return reshape(g, np.shape(x))


def _flatten_if_none_jvp(t, ans, x, axis):
    return flatten_if_none(t, axis)


flatten_if_none.def_vjp(_flatten_if_none_vjp)
flatten_if_none.def_jvp(_flatten_if_none_jvp)
flatten_if_none.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), None), {}),
    ((rng.normal(size=(2, 3)), 1), {}),
]


# ---------------------------------------------------------------------------
# grouping reduced axes last (used by the prod / median rules)


def _group_last(x, axis):
    """``x`` with the reduced ``axis`` (None / int / tuple) moved last and
    flattened into one axis: shape ``(kept..., n)``."""
    x = np.asarray(x)
    axes = norm_axes(axis, x.ndim)
    k = len(axes)
    moved = np.moveaxis(x, axes, tuple(range(x.ndim - k, x.ndim)))
    return moved.reshape(moved.shape[: x.ndim - k] + (-1,))


def _ungroup_last(y, x, axis):
    """Inverse of ``ad.group_last(x, axis)`` for an array ``y`` of the grouped shape."""
    x_shape = np.shape(x)
    ndim = len(x_shape)
    axes = norm_axes(axis, ndim)
    k = len(axes)
    kept = tuple(n for i, n in enumerate(x_shape) if i not in axes)
    red = tuple(x_shape[i] for i in axes)
    y = np.reshape(y, kept + red)
    return np.moveaxis(y, tuple(range(ndim - k, ndim)), axes)


group_last = _internal("ad.group_last", _group_last)
ungroup_last = _internal("ad.ungroup_last", _ungroup_last)


def _group_last_vjp(g, ans, x, axis):
    return ungroup_last(g, x, axis)


def _group_last_jvp(t, ans, x, axis):
    return group_last(t, axis)


def _ungroup_last_vjp(h, ans, y, x, axis):
    return group_last(h, axis)


def _ungroup_last_jvp(t, ans, y, x, axis):
    return ungroup_last(t, x, axis)


group_last.def_vjp(_group_last_vjp)
group_last.def_jvp(_group_last_jvp)
ungroup_last.def_vjp(_ungroup_last_vjp)
ungroup_last.def_jvp(_ungroup_last_jvp)
group_last.samples = lambda rng: [
    ((rng.normal(size=(2, 3, 4)), (0, 2)), {}),
    ((rng.normal(size=(2, 3, 4)), None), {}),
    ((rng.normal(size=(2, 3, 4)), -2), {}),
]
ungroup_last.samples = lambda rng: [
    ((rng.normal(size=(3, 8)), rng.normal(size=(2, 3, 4)), (0, 2)), {}),
    ((rng.normal(size=(24,)), rng.normal(size=(2, 3, 4)), None), {}),
]


# ---------------------------------------------------------------------------
# cumprod adjoints, division-free (correct with zeros in the input)
#
# For y = cumprod(x) along an int axis, let M[i, k] = prod_{j <= k, j != i} x_j
# for k >= i (else 0). Then
#   ad.cumprod_vjp(g, x, axis)_i = sum_k M[i, k] g_k          (J^T g)
#   ad.cumprod_jvp(t, x, axis)_k = sum_i M[i, k] t_i          (J t)
# The impls are O(n): a division formula when x has no zeros, else a linear
# recurrence. The rules w.r.t. x use the O(n^2) matrix form (M is the upper
# triangle of cumprods of "x with x_i replaced by 1"), so every order of
# derivative stays exact.


def _excl_cumprod(xm):
    """Exclusive cumprod along axis 0: P_0 = 1, P_i = prod_{j<i} x_j."""
    p = np.empty_like(xm)
    p[0] = 1
    if xm.shape[0] > 1:
        np.cumprod(xm[:-1], axis=0, out=p[1:])
    return p


def _cumprod_vjp(g, x, axis):
    """``J^T g`` for ``J`` the Jacobian of ``cumprod(x, axis)`` (``axis`` an int)."""
    x = np.asarray(x)
    g = np.asarray(g)
    dtype = np.result_type(g, x)
    if x.size == 0:
        return np.zeros(x.shape, dtype)
    if np.all(x != 0):
        y = np.cumprod(x, axis=axis)
        r = np.flip(np.cumsum(np.flip(g * y, axis), axis=axis), axis)
        return (r / x).astype(dtype, copy=False)
    xm = np.moveaxis(x, axis, 0).astype(dtype)
    gm = np.moveaxis(np.broadcast_to(g, x.shape), axis, 0).astype(dtype)
    n = xm.shape[0]
    acc = np.empty_like(gm)
    acc[n - 1] = gm[n - 1]
    for i in range(n - 2, -1, -1):
        acc[i] = gm[i] + xm[i + 1] * acc[i + 1]
    return np.moveaxis(_excl_cumprod(xm) * acc, 0, axis)


def _cumprod_jvp(t, x, axis):
    """``J t`` for ``J`` the Jacobian of ``cumprod(x, axis)`` (``axis`` an int)."""
    x = np.asarray(x)
    t = np.asarray(t)
    dtype = np.result_type(t, x)
    if x.size == 0:
        return np.zeros(x.shape, dtype)
    if np.all(x != 0):
        y = np.cumprod(x, axis=axis)
        return (y * np.cumsum(t / x, axis=axis)).astype(dtype, copy=False)
    xm = np.moveaxis(x, axis, 0).astype(dtype)
    tm = np.moveaxis(np.broadcast_to(t, x.shape), axis, 0).astype(dtype)
    p = _excl_cumprod(xm)
    s = np.empty_like(tm)
    s[0] = tm[0]
    for k in range(1, xm.shape[0]):
        s[k] = s[k - 1] * xm[k] + p[k] * tm[k]
    return np.moveaxis(s, 0, axis)


cumprod_vjp = _internal("ad.cumprod_vjp", _cumprod_vjp)
cumprod_jvp = _internal("ad.cumprod_jvp", _cumprod_jvp)


def _cumprod_vjp_vjp_g(h, ans, g, x, axis):
    return cumprod_jvp(h, x, axis)


def _cumprod_vjp_jvp_g(t, ans, g, x, axis):
    return cumprod_vjp(t, x, axis)


def _cumprod_vjp_vjp_x(h, ans, g, x, axis):
    xm = moveaxis(x, axis, -1)
    off = 1.0 - eye_mask(np.shape(xm)[-1])
    big_x = expand_dims(xm, -2) * off + (1.0 - off)
    c_bar = triu(expand_dims(moveaxis(h, axis, -1), -1) * expand_dims(moveaxis(g, axis, -1), -2))
    x_bar = cumprod_vjp(c_bar, big_x, -1) * off
    return moveaxis(sum(x_bar, axis=-2), -1, axis)


def _cumprod_vjp_jvp_x(t, ans, g, x, axis):
    xm = moveaxis(x, axis, -1)
    off = 1.0 - eye_mask(np.shape(xm)[-1])
    big_x = expand_dims(xm, -2) * off + (1.0 - off)
    d_c = triu(cumprod_jvp(expand_dims(moveaxis(t, axis, -1), -2) * off, big_x, -1))
    return moveaxis(sum(d_c * expand_dims(moveaxis(g, axis, -1), -2), axis=-1), -1, axis)


def _cumprod_jvp_vjp_t(h, ans, t, x, axis):
    return cumprod_vjp(h, x, axis)


def _cumprod_jvp_jvp_t(dt, ans, t, x, axis):
    return cumprod_jvp(dt, x, axis)


def _cumprod_jvp_vjp_x(h, ans, t, x, axis):
    xm = moveaxis(x, axis, -1)
    off = 1.0 - eye_mask(np.shape(xm)[-1])
    big_x = expand_dims(xm, -2) * off + (1.0 - off)
    c_bar = triu(expand_dims(moveaxis(t, axis, -1), -1) * expand_dims(moveaxis(h, axis, -1), -2))
    x_bar = cumprod_vjp(c_bar, big_x, -1) * off
    return moveaxis(sum(x_bar, axis=-2), -1, axis)


def _cumprod_jvp_jvp_x(dx, ans, t, x, axis):
    xm = moveaxis(x, axis, -1)
    off = 1.0 - eye_mask(np.shape(xm)[-1])
    big_x = expand_dims(xm, -2) * off + (1.0 - off)
    d_c = triu(cumprod_jvp(expand_dims(moveaxis(dx, axis, -1), -2) * off, big_x, -1))
    return moveaxis(sum(d_c * expand_dims(moveaxis(t, axis, -1), -1), axis=-2), -1, axis)


cumprod_vjp.def_vjp(_cumprod_vjp_vjp_g, _cumprod_vjp_vjp_x)
cumprod_vjp.def_jvp(_cumprod_vjp_jvp_g, _cumprod_vjp_jvp_x)
cumprod_jvp.def_vjp(_cumprod_jvp_vjp_t, _cumprod_jvp_vjp_x)
cumprod_jvp.def_jvp(_cumprod_jvp_jvp_t, _cumprod_jvp_jvp_x)


def cumprod_helper_samples(rng):
    """Samples ``(g, x, axis)`` with zeros in ``x`` (one and two zeros)."""
    x0 = rng.normal(size=(3, 4))
    x0[1, 1] = 0.0
    x1 = rng.normal(size=(4,))
    x1[0] = 0.0
    x1[2] = 0.0
    return [
        ((rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), 1), {}),
        ((rng.normal(size=(3, 4)), x0, -1), {}),
        ((rng.normal(size=(3, 4)), x0, 0), {}),
        ((rng.normal(size=(4,)), x1, 0), {}),
    ]


cumprod_vjp.samples = cumprod_helper_samples
cumprod_jvp.samples = cumprod_helper_samples


def _prod_others(x, axis):
    """For each element of ``x``, the product of the *other* elements of its
    reduction group over ``axis`` (= d prod(x, axis) / dx), without division."""
    if not np.size(x):  # an empty x has an empty derivative (no groups to scan)
        return np.zeros(np.shape(x), np.result_type(x, np.float32))
    xr = _group_last(x, axis)
    return _ungroup_last(_cumprod_vjp(_last_onehot(xr), xr, -1), x, axis)


prod_others = _internal("ad.prod_others", _prod_others)


def _prod_others_vjp(h, ans, x, axis):
    xr = group_last(x, axis)
    off = 1.0 - eye_mask(np.shape(xr)[-1])
    big_x = expand_dims(xr, -2) * off + (1.0 - off)
    c_bar = triu(expand_dims(group_last(h, axis), -1) * expand_dims(last_onehot(xr), -2))
    return ungroup_last(sum(cumprod_vjp(c_bar, big_x, -1) * off, axis=-2), x, axis)


def _prod_others_jvp(t, ans, x, axis):
    xr = group_last(x, axis)
    off = 1.0 - eye_mask(np.shape(xr)[-1])
    big_x = expand_dims(xr, -2) * off + (1.0 - off)
    d_c = triu(cumprod_jvp(expand_dims(group_last(t, axis), -2) * off, big_x, -1))
    return ungroup_last(sum(d_c * expand_dims(last_onehot(xr), -2), axis=-1), x, axis)


prod_others.def_vjp(_prod_others_vjp)
prod_others.def_jvp(_prod_others_jvp)


def _prod_others_samples(rng):
    x = rng.normal(size=(3, 4))
    x[0, 1] = 0.0
    y = rng.normal(size=(2, 3, 2))
    y[1, 1, 1] = 0.0
    y[1, 2, 1] = 0.0
    return [((x, 1), {}), ((x, None), {}), ((y, (0, 2)), {}), ((rng.normal(size=(4,)), 0), {})]


prod_others.samples = _prod_others_samples

_builtin_sum = builtins.sum
