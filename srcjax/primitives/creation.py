"""Array-creation primitives: zeros, ones, full, arange, linspace, eye, array, ...

Dtypes follow JAX with ``jax_enable_x64`` off by default: float32 floats, int32
ints; ``array``/``asarray`` canonicalize 64-bit NumPy inputs to 32 bits.
``array``/``asarray`` are differentiable (identity on their float inputs,
including lists of arrays); ``full``/``full_like`` are differentiable in
``fill_value`` and ``linspace`` in ``start``/``stop``; the others are constants.
"""

from __future__ import annotations

import numpy as np

from srcjax._prng_key import PRNGKeyArray
from srcjax.dtypes import check_int32_range, result_type, to_inexact_dtype
from srcjax.primitives.ad import (
    _saturating_cast,
    canonical_dtype,
    default_float,
    default_int,
    keep_if_inexact,
    reshape,
    sum,
    unbroadcast,
)
from srcjax.primitives.registry import WEAK_SCALARS_AND_ARRAYS, Primitive, register
from srcjax.primitives.structural import fill_none

__all__ = [
    "zeros",
    "ones",
    "full",
    "empty",
    "arange",
    "linspace",
    "eye",
    "identity",
    "zeros_like",
    "ones_like",
    "full_like",
    "empty_like",
    "array",
    "asarray",
    "shape",
    "ndim",
    "size",
    "iscomplexobj",
    "isrealobj",
    "triu_indices",
    "tril_indices",
    "diag_indices",
    "meshgrid",
]


def _creation(public, impl, *aliases, differentiable=False):
    return register(
        Primitive(public, impl, kind="creation", differentiable=differentiable), *aliases
    )


def _dtype_or(dtype, default):
    return canonical_dtype(dtype) if dtype is not None else default


def _value_dtype(value):
    """JAX's dtype for a fill value: Python float -> default float, Python int ->
    default int, arrays canonicalized."""
    if isinstance(value, bool):
        return np.dtype(bool)
    if isinstance(value, int):
        return default_int()
    if isinstance(value, float):
        return default_float()
    if isinstance(value, complex):
        return canonical_dtype(np.complex128)
    return canonical_dtype(np.result_type(value))


def _zeros(shape, dtype=None):
    """Array of zeros (jax.numpy.zeros); float32 unless ``dtype`` / x64."""
    return np.zeros(shape, _dtype_or(dtype, default_float()))


def _ones(shape, dtype=None):
    """Array of ones (jax.numpy.ones); float32 unless ``dtype`` / x64."""
    return np.ones(shape, _dtype_or(dtype, default_float()))


def _empty(shape, dtype=None):
    """Like :func:`zeros` (jax.numpy.empty: XLA has no uninitialized memory)."""
    return np.zeros(shape, _dtype_or(dtype, default_float()))


zeros = _creation("jnp.zeros", _zeros, np.zeros)
ones = _creation("jnp.ones", _ones, np.ones)
empty = _creation("jnp.empty", _empty, np.empty)


def _full(shape, fill_value, dtype=None):
    """Array of ``shape`` filled with ``fill_value`` (jax.numpy.full); dtype from
    ``fill_value`` (Python float -> float32, int -> int32). Differentiable in
    ``fill_value``."""
    dt = _dtype_or(dtype, _value_dtype(fill_value))
    return np.full(shape, _fill(fill_value, dt), dtype=dt)


def _fill(v, dt):
    """A fill value as JAX converts it: a Python int wraps into an integer dtype
    (``full(3, 2**31)`` is ``-2**31``; NumPy's int64/uint64 first, so beyond 64
    bits an OverflowError), where NumPy would raise."""
    if type(v) is not int or dt.kind not in "iub":
        return v
    with np.errstate(over="ignore"):
        return np.asarray(v).astype(dt)


full = _creation("jnp.full", _full, np.full, differentiable=True)


def _full_vjp_fill_value(g, ans, fill_value):
    return unbroadcast(g, fill_value)


full.def_vjp(fill_value=_full_vjp_fill_value)


def _full_jvp_fill_value(t, ans, shape):
    # (the tangent has the result's type, weak as it is: JAX converts both alike)
    return full_like(ans, t)


full.def_jvp(fill_value=_full_jvp_fill_value)
full.samples = lambda rng: [
    (((2, 3), rng.normal()), {"dtype": "float64"}),
    (((2, 3), rng.normal(size=(3,))), {"dtype": "float64"}),
]


def _like_dtype(a, dtype):
    if dtype is not None:
        return canonical_dtype(dtype)
    return _value_dtype(a) if isinstance(a, (bool, int, float, complex)) else np.result_type(a)


def _zeros_like(a, dtype=None, shape=None):
    """Zeros with the shape and dtype of ``a`` (jax.numpy.zeros_like)."""
    return np.zeros(np.shape(a) if shape is None else shape, _like_dtype(a, dtype))


def _ones_like(a, dtype=None, shape=None):
    """Ones with the shape and dtype of ``a`` (jax.numpy.ones_like)."""
    return np.ones(np.shape(a) if shape is None else shape, _like_dtype(a, dtype))


def _empty_like(a, dtype=None, shape=None):
    """Like :func:`zeros_like` (jax.numpy.empty_like)."""
    return np.zeros(np.shape(a) if shape is None else shape, _like_dtype(a, dtype))


zeros_like = _creation("jnp.zeros_like", _zeros_like, np.zeros_like)
ones_like = _creation("jnp.ones_like", _ones_like, np.ones_like)
empty_like = _creation("jnp.empty_like", _empty_like, np.empty_like)


def _full_like(a, fill_value, dtype=None, shape=None):
    """Array like ``a`` filled with ``fill_value`` (jax.numpy.full_like);
    differentiable in ``fill_value``."""
    dt = _like_dtype(a, dtype)
    return np.full(np.shape(a) if shape is None else shape, _fill(fill_value, dt), dt)


full_like = _creation("jnp.full_like", _full_like, np.full_like, differentiable=True)


def _full_like_vjp_fill_value(g, ans, fill_value):
    return unbroadcast(g, fill_value)


full_like.def_vjp(fill_value=_full_like_vjp_fill_value)


def _full_like_jvp_fill_value(t, ans, shape=None):
    return full_like(ans, t)


full_like.def_jvp(fill_value=_full_like_jvp_fill_value)
full_like.samples = lambda rng: [((rng.normal(size=(2, 3)), rng.normal()), {})]


def _arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values in ``[start, stop)`` (jax.numpy.arange); int32 for int
    arguments, float32 for float ones (unless ``dtype`` / x64).

    Computed as JAX does: ``ceil((stop - start) / step)`` values
    ``start + step * i`` with ``start`` and ``step`` first converted to the
    result dtype (float32 for float16), so an integer ``dtype`` truncates them:
    ``arange(0, 5, 1.5, dtype=int32)`` is ``[0 1 2 3]``."""
    if dtype is None:  # NumPy's weak Python scalars, as JAX's (int8 stays int8)
        dt = canonical_dtype(np.result_type(*(v for v in (start, stop, step) if v is not None)))
    else:
        dt = canonical_dtype(dtype)
    if stop is None:
        start, stop = 0, start
    if step is None:
        size = max(0, int(np.ceil(stop - start)))
        return np.asarray(start).astype(dt) + np.arange(size, dtype=dt)
    wd = np.dtype(np.float32) if dt.kind == "f" and dt.itemsize < 4 else dt
    size = max(0, int(np.ceil((stop - start) / step)))
    vals = np.asarray(start).astype(wd) + np.asarray(step).astype(wd) * np.arange(size, dtype=wd)
    return vals.astype(dt, copy=False)


arange = _creation("jnp.arange", _arange, np.arange)


def _jax_steps(num, endpoint, cdt):
    """JAX's fractions of the way from start to stop, ``iota(div) / div`` as XLA
    computes it, ``iota * (1 / div)``, in the real dtype of ``cdt`` (``div = num
    - 1`` with ``endpoint``, else ``num``); ``(iota, 1 / div, fractions)``, the
    last cast to ``cdt``."""
    div = num - 1 if endpoint else num
    real = np.finfo(cdt).dtype
    iota = np.arange(div, dtype=real)
    if real.name == "bfloat16":  # XLA: the bfloat16 iota times 1 / div in float32
        r = np.float32(1) / np.float32(div)
        return iota, r, (iota.astype(np.float32) * r).astype(cdt)
    r = real.type(1) / real.type(div)
    return iota, r, (iota * r).astype(cdt)


def _jax_ramp(start, stop, iota, r, steps):
    """``start * (1 - s) + stop * s`` as XLA's CPU code computes it (measured on
    JAX 0.10.2's compiled code; bit for bit on 10,000 random entries but 3 of
    2,000 with scalar float32 bounds and array bounds along an axis > 0). Scalar bounds: ``stop *
    s`` reassociated to ``iota * (stop * (1 / div))``; array bounds: as written.
    In float32 one product is fused into the add (an FMA: one rounding; float64
    holds the exact product and sum; LLVM folds ``1 * x`` first, so the entry
    where ``iota`` is 1 fuses the other product); bfloat16 rounds every step."""
    scalar = start.size == 1 and stop.size == 1
    if steps.dtype.name == "bfloat16":
        return start * (1 - steps) + stop * steps
    if steps.dtype != np.float32:
        return start * (1 - steps) + (
            iota.astype(steps.dtype) * (stop * r) if scalar else stop * steps
        )
    f64 = np.float64
    if scalar:  # fma(iota, stop * r, start * (1 - s)); where iota is 1, fma(start, 1 - s, stop * r)
        head, tail = start * (1 - steps), iota.astype(f64) * (stop * r).astype(f64)
        exact = np.where(
            iota == 1, start.astype(f64) * (1 - steps).astype(f64) + tail, head.astype(f64) + tail
        )
    else:  # fma(start, 1 - s, stop * s)
        exact = start.astype(f64) * (1 - steps).astype(f64) + (stop * steps).astype(f64)
    return exact.astype(np.float32)


def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """``num`` evenly spaced values from ``start`` to ``stop`` (jax.numpy.linspace):
    dtype ``dtype``, else the inexact dtype of ``start`` and ``stop`` (float32
    unless x64). Computed as JAX does, to the bit: in the inexact dtype,
    ``start * (1 - s) + stop * s`` with ``s = iota(div) / div``, then ``stop``
    itself (with ``endpoint``); floored for an integer ``dtype``.
    Differentiable in ``start`` and ``stop``."""
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    dt = _dtype_or(dtype, to_inexact_dtype(result_type(start, stop)))
    cdt = to_inexact_dtype(dt)
    start = np.asarray(start).astype(cdt)
    stop = np.asarray(stop).astype(cdt)
    shape = list(np.broadcast_shapes(start.shape, stop.shape))
    b_start = np.broadcast_to(start, shape)
    b_stop = np.broadcast_to(stop, shape)
    ax = len(shape) + axis + 1 if axis < 0 else axis
    shape.insert(ax, 1)
    with np.errstate(all="ignore"):
        if num > 1:
            iota, r, steps = _jax_steps(num, endpoint, cdt)
            div = len(iota)
            delta = (stop - start).astype(cdt) * cdt.type(r)
            at = [div if i == ax else 1 for i in range(len(shape))]
            iota, steps = iota.reshape(at), steps.reshape(at)
            vals = _jax_ramp(
                b_start.reshape(shape), b_stop.reshape(shape), iota, cdt.type(r), steps
            )
            if endpoint:
                vals = np.concatenate([vals, np.expand_dims(b_stop, ax)], axis=ax)
        elif num == 1:
            delta = np.asarray(np.nan if endpoint else stop - start, cdt)
            vals = b_start.reshape(shape)
        else:
            delta = np.asarray(np.nan, cdt)
            vals = np.empty(shape[:ax] + [0] + shape[ax + 1 :], cdt)
        if dt.kind in "iu":
            vals = np.floor(vals)  # JAX floors before the cast: [-5, -2, 1, 5]
        out = vals.astype(dt)
    return (out, cdt.type(delta)) if retstep else out


linspace = _creation("jnp.linspace", _linspace, np.linspace, differentiable=True)


def _lin_frac(num, endpoint, dtype):
    """Static: JAX's fractions from start to stop (:func:`_jax_steps`, then 1 with
    ``endpoint``) in ``dtype``'s inexact dtype (JAX computes in one)."""
    cdt = to_inexact_dtype(np.dtype(dtype))
    if num <= 1:
        return np.zeros(num, cdt)
    steps = _jax_steps(num, endpoint, cdt)[2]
    return np.concatenate([steps, np.ones(1, cdt)]) if endpoint else steps


lin_frac = register(Primitive("ad.linspace_frac", _lin_frac, kind="internal", differentiable=False))


def _lin_is_int(dtype):
    """Static: whether linspace's result dtype is an integer (JAX floors then)."""
    return np.dtype(dtype).kind in "iu"


lin_is_int = register(
    Primitive("ad.linspace_is_int", _lin_is_int, kind="internal", differentiable=False)
)


def _linspace_vjp_start(g, ans, num=50, endpoint=True):
    return sum(g * (1.0 - lin_frac(num, endpoint, np.result_type(ans))))


def _linspace_vjp_stop(g, ans, num=50, endpoint=True):
    return sum(g * lin_frac(num, endpoint, np.result_type(ans)))


def _linspace_jvp_start(t, ans, num=50, endpoint=True):
    return t * (1.0 - lin_frac(num, endpoint, np.result_type(ans)))


def _linspace_jvp_stop(t, ans, num=50, endpoint=True):
    return t * lin_frac(num, endpoint, np.result_type(ans))


linspace.def_vjp(_linspace_vjp_start, _linspace_vjp_stop)
linspace.def_jvp(_linspace_jvp_start, _linspace_jvp_stop)
linspace.samples = lambda rng: [
    ((rng.normal(), rng.normal(), 5), {"dtype": "float64"}),
    ((rng.normal(), rng.normal(), 4), {"endpoint": False, "dtype": "float64"}),
]


def _eye(N, M=None, k=0, dtype=None):
    """2-D array with ones on diagonal ``k`` (jax.numpy.eye); float32 default."""
    return np.eye(N, M, k, dtype=_dtype_or(dtype, default_float()))


def _identity(n, dtype=None):
    """Square identity matrix (jax.numpy.identity); float32 default."""
    return np.identity(n, dtype=_dtype_or(dtype, default_float()))


eye = _creation("jnp.eye", _eye, np.eye)
identity = _creation("jnp.identity", _identity, np.identity)


# ---------------------------------------------------------------------------
# array / asarray


def _canon_array(out, dtype):
    if dtype is not None:
        return out
    cd = canonical_dtype(out.dtype)
    if cd == out.dtype:
        return out
    check_int32_range(out)
    return out.astype(cd)


def _list_dtype(object):
    """JAX's dtype of a (nested) list or tuple holding at least one typed element
    (a NumPy scalar or array, an unwrapped Array): the result type of the
    elements, Python numbers weak (``[uint8(1), 2]`` is uint8, ``[float16(1),
    2.5]`` float16, as jax.numpy.array; fresh-user F4-03). ``None`` for a list
    of Python numbers only (NumPy's dtype, canonicalized, is JAX's there) or of
    anything else."""
    if not isinstance(object, (list, tuple)):
        return None
    weak_views = bool(_broadcasts())  # (any batch broadcasts alive: vmap's code)
    if object and not weak_views:
        # (generated code's common list: NumPy arrays or float32 scalars of one
        # dtype, jnp.array([x0 * x1, sin(x1)]): their result type is that one's)
        t = type(object[0])
        if t is np.ndarray or t is np.float32:
            d = object[0].dtype
            for v in object:
                if type(v) is not t or v.dtype != d:
                    break
            else:
                return result_type(object[0])
    leaves = []
    stack = [object]
    while stack:
        v = stack.pop()
        if isinstance(v, (list, tuple)):
            stack.extend(v)
        elif isinstance(v, (bool, int, float, complex)) or isinstance(
            getattr(v, "dtype", None), np.dtype
        ):
            leaves.append(_weak_source(v) if weak_views else v)
        else:
            return None
    if not any(isinstance(getattr(v, "dtype", None), np.dtype) for v in leaves):
        return None
    return result_type(*leaves)


#: control._trees' table of batch broadcasts (view id -> (weak ref, value)),
#: bound on first use (that module imports this one)
_SOURCES: list = []


def _broadcasts() -> dict:
    if not _SOURCES:
        from srcjax.primitives.control._trees import _BROADCAST_SOURCES

        _SOURCES.append(_BROADCAST_SOURCES)
    return _SOURCES[0]


def _weak_source(v):
    """The Python number ``v`` is vmap's batch broadcast of (``ad.batch_broadcast
    (2.5, n)`` packing ``[x, 2.5]`` for one example each), which is weakly
    typed as the number was; else ``v``."""
    if type(v) is np.ndarray:
        entry = _broadcasts().get(id(v))
        if entry is not None and entry[0]() is v and type(entry[1]) in (int, float, complex):
            return entry[1]
    return v


def _weak_views_filled(object, dt):
    """``object`` with each batch broadcast of a Python number (see
    :func:`_weak_source`) made anew from the number in ``dt`` (one rounding,
    as JAX converts the number; not the float32 copy's second), or ``object``
    itself when it holds none."""
    if isinstance(object, (list, tuple)):
        items = [_weak_views_filled(v, dt) for v in object]
        if all(a is b for a, b in zip(items, object)):
            return object
        return type(object)(items) if type(object) in (list, tuple) else list(items)
    src = _weak_source(object)
    if src is not object:
        return np.full(object.shape, src, dt)
    return object


def _array(object, dtype=None, copy=True, order="K", ndmin=0):
    """A new array from ``object`` (jax.numpy.array): scalars, nested lists of
    numbers or arrays (stacked), arrays. 64-bit NumPy dtypes become 32-bit
    unless x64; Python floats give float32, ints int32. Differentiable: the
    cotangent of a list input is a list of cotangents."""
    if isinstance(object, PRNGKeyArray) and dtype is None and not ndmin:
        return object.copy()  # (a key array stays one, as in JAX)
    dt = _list_dtype(object) if dtype is None else canonical_dtype(dtype)
    if dt is not None and dtype is None and _broadcasts():
        object = _weak_views_filled(object, dt)
    if _saturates(object, dt):
        return np.array(_saturating_cast(object, dt), order=order, ndmin=ndmin)
    try:
        out = np.array(object, dtype=dt, copy=True, order=order, ndmin=ndmin)
    except ValueError as e:
        raise _ragged(object, e) from None
    return _canon_array(out, dtype)


def _ragged(items, err):
    """JAX's kind of error for a list whose items have different shapes (NumPy's
    ValueError says "inhomogeneous shape"); other errors as they are."""
    if "inhomogeneous" not in str(err) or not isinstance(items, (list, tuple)):
        return err
    shapes = []
    for v in items:
        try:
            shapes.append(np.shape(v))
        except ValueError:
            shapes.append("a ragged list")
    listed = ", ".join(str(sh) for sh in shapes)
    return TypeError(
        "jnp.array: cannot stack items of different shapes into one array: got " + listed
    )


def _saturates(a, dt):
    """Whether converting ``a`` to ``dt`` is a float -> integer conversion of an
    array, which JAX does as XLA does (saturating, NaN -> 0: ``astype``'s rule);
    lists and scalars go through NumPy as in JAX."""
    return dt is not None and dt.kind in "iu" and type(a) is np.ndarray and a.dtype.kind == "f"


def _asarray(a, dtype=None, order=None, copy=None):
    """``a`` as an array (jax.numpy.asarray), without a copy when it already has
    the canonical dtype. Same dtype rules as :func:`array`."""
    if isinstance(a, PRNGKeyArray) and dtype is None:
        return a.copy() if copy else a
    dt = _list_dtype(a) if dtype is None else canonical_dtype(dtype)
    if dt is not None and dtype is None and _broadcasts():
        a = _weak_views_filled(a, dt)
    if _saturates(a, dt):
        return np.asarray(_saturating_cast(a, dt), order=order)
    try:
        out = np.asarray(a, dtype=dt, order=order)
    except ValueError as e:
        raise _ragged(a, e) from None
    if copy:
        out = out.copy()
    return _canon_array(out, dtype)


array = _creation("jnp.array", _array, np.array, differentiable=True)
asarray = _creation("jnp.asarray", _asarray, np.asarray, differentiable=True)
# jnp.asarray(1.0) / jnp.array(2) are weakly typed, as in JAX (a dtype makes them strong)
array.weak_result = asarray.weak_result = True
array.weak_operands = asarray.weak_operands = WEAK_SCALARS_AND_ARRAYS


def _array_adjoint(g, like):
    """Cotangent of ``like`` given the cotangent ``g`` of ``array(like)``: the same
    nesting of lists/tuples as ``like``; leaves keep the shape of ``like``'s leaves."""
    if isinstance(like, (list, tuple)):
        out = [_array_adjoint(g[i], v) for i, v in enumerate(like)]
        return out if isinstance(like, list) else tuple(out)
    if isinstance(like, (int, float, complex)) and not isinstance(like, bool):
        return np.asarray(g)[()]
    return np.reshape(g, np.shape(like))


array_adjoint = register(
    Primitive("ad.array_adjoint", _array_adjoint, kind="internal", differentiable=True)
)


# (its vjp rule is in control.py: it fills the holes of a list cotangent)


def _array_adjoint_jvp_g(t, ans, like):
    return array_adjoint(t, like)


array_adjoint.def_jvp(_array_adjoint_jvp_g)
array_adjoint.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), [rng.normal(size=3), rng.normal(size=3)]), {}),
    ((rng.normal(size=(3,)), rng.normal(size=3)), {}),
]


def _array_vjp_object(g, ans, object, dtype=None):
    return array_adjoint(keep_if_inexact(g, dtype), object)


array.def_vjp(_array_vjp_object)


def _array_jvp_object(t, ans, dtype=None, order="K", ndmin=0):
    return keep_if_inexact(array(t, dtype, True, order, ndmin), dtype)


array.def_jvp(_array_jvp_object)


def _asarray_vjp_a(g, ans, a, dtype=None):
    return array_adjoint(keep_if_inexact(g, dtype), a)


asarray.def_vjp(_asarray_vjp_a)


def _asarray_jvp_a(t, ans, dtype=None, order=None):
    return keep_if_inexact(asarray(t, dtype, order), dtype)


asarray.def_jvp(_asarray_jvp_a)
array.samples = lambda rng: [
    ((rng.normal(size=(2, 3)),), {"dtype": "float64"}),
    (([rng.normal(size=2), rng.normal(size=2)],), {"dtype": "float64"}),
]
asarray.samples = lambda rng: [((rng.normal(size=(2, 3)),), {"dtype": "float64"})]


# ---------------------------------------------------------------------------
# shape queries (not differentiable)


def _shape(a):
    """``a``'s shape as a tuple (jax.numpy.shape)."""
    return a.shape if type(a) is np.ndarray else np.shape(a)  # (np.shape: ~0.5 us more)


def _ndim(a):
    """Number of dimensions (jax.numpy.ndim)."""
    return a.ndim if type(a) is np.ndarray else np.ndim(a)


def _size(a, axis=None):
    """Number of elements, or the length of ``axis`` (jax.numpy.size)."""
    return np.size(a) if axis is None else np.shape(a)[axis]


# shape queries: known from the operand's abstract value, static under vmap
shape = _creation("jnp.shape", _shape, np.shape).facts(shape_query=lambda a: a.shape)
ndim = _creation("jnp.ndim", _ndim, np.ndim).facts(shape_query=lambda a: len(a.shape))
size = _creation("jnp.size", _size, np.size).facts(shape_query=lambda a: a.size)


def _iscomplexobj(x):
    """Whether ``x`` has a complex dtype (jax.numpy.iscomplexobj): a Python bool."""
    return bool(np.iscomplexobj(x))


def _isrealobj(x):
    """Whether ``x`` does not have a complex dtype (jax.numpy.isrealobj): a Python bool."""
    return not np.iscomplexobj(x)


# dtype queries: static information (no derivative, known from the abstract
# value, the same for every example), as the shape queries; NumPy's own calls
# (np.iscomplexobj(x) in user or library code) resolve to them
iscomplexobj = _creation("jnp.iscomplexobj", _iscomplexobj, np.iscomplexobj).facts(
    shape_query=lambda a: a.dtype.kind == "c"
)
isrealobj = _creation("jnp.isrealobj", _isrealobj, np.isrealobj).facts(
    shape_query=lambda a: a.dtype.kind != "c"
)


# ---------------------------------------------------------------------------
# index creation (not differentiable): tuples of default-int index arrays


def _index_tuple(arrays):
    return tuple(np.asarray(i, dtype=default_int()) for i in arrays)


def _triu_indices(n, k=0, m=None):
    """Row and column indices of the upper triangle of an ``(n, m)`` array, from
    diagonal ``k`` up (jax.numpy.triu_indices); ``m`` defaults to ``n``.

    Returns a tuple of two 1-D arrays of the default int (int32 unless x64), in
    row-major order. ``n``, ``k`` and ``m`` must be static Python ints (under vmap
    they are the same for every example). Not differentiable."""
    return _index_tuple(np.triu_indices(n, k, m))


def _tril_indices(n, k=0, m=None):
    """Row and column indices of the lower triangle of an ``(n, m)`` array, up to
    diagonal ``k`` (jax.numpy.tril_indices); ``m`` defaults to ``n``. Same
    shapes, dtypes and restrictions as :func:`triu_indices`."""
    return _index_tuple(np.tril_indices(n, k, m))


def _diag_indices(n, ndim=2):
    """Indices of the main diagonal of an ``(n,) * ndim`` array
    (jax.numpy.diag_indices): a tuple of ``ndim`` copies of ``arange(n)`` in the
    default int. Raises ``ValueError`` for negative ``n`` or ``ndim``. Not
    differentiable."""
    if n < 0 or ndim < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    return _index_tuple(np.diag_indices(n, ndim))


triu_indices = _creation("jnp.triu_indices", _triu_indices, np.triu_indices)
tril_indices = _creation("jnp.tril_indices", _tril_indices, np.tril_indices)
diag_indices = _creation("jnp.diag_indices", _diag_indices, np.diag_indices)
triu_indices.samples = lambda rng: [((3,), {}), ((3, 1, 4), {}), ((4,), {"k": -1})]
tril_indices.samples = lambda rng: [((3,), {}), ((3, -1, 4), {}), ((4,), {"k": 1})]
diag_indices.samples = lambda rng: [((3,), {}), ((2, 3), {})]


# ---------------------------------------------------------------------------
# meshgrid (a list of outputs; differentiable in every input)


def _mesh_axis(n, i, indexing):
    """The output axis that input ``i`` of ``n`` varies along."""
    if indexing == "xy" and n >= 2 and i < 2:
        return 1 - i
    return i


def _mesh_axis_shape(x, n, i, indexing="xy"):
    """Static: the shape input ``x`` (number ``i`` of ``n``) is reshaped to before
    broadcasting: ``-1`` on its output axis, 1 on the others."""
    ax = _mesh_axis(n, i, indexing)
    return tuple(-1 if k == ax else 1 for k in range(n))


mesh_axis_shape = register(
    Primitive("ad.mesh_axis_shape", _mesh_axis_shape, kind="internal", differentiable=False)
)


def _meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """Coordinate grids from 1-D coordinate vectors (jax.numpy.meshgrid).

    ``indexing="xy"`` (default, Cartesian): for inputs of lengths ``(n0, n1,
    ...)`` each output has shape ``(n1, n0, n2, ...)``; ``"ij"`` (matrix):
    ``(n0, n1, n2, ...)``. With ``sparse=True`` each output keeps length 1 on the
    other axes. Returns a list of arrays, each with its input's dtype (Python
    scalars are not accepted). Differentiable in every input: the cotangent of
    input ``i`` sums output ``i`` over the other axes. ``copy`` is ignored.
    Raises ``ValueError`` for inputs that are not 1-D or an unknown
    ``indexing``."""
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing!r}")
    arrays = [np.asarray(x) for x in xi]
    for a in arrays:
        if a.ndim != 1:
            raise ValueError(f"Arrays passed to meshgrid must be 1D, got shape {a.shape}")
    n = len(arrays)
    full = [0] * n
    for i, a in enumerate(arrays):
        full[_mesh_axis(n, i, indexing)] = a.shape[0]
    out = [np.reshape(a, _mesh_axis_shape(a, n, i, indexing)) for i, a in enumerate(arrays)]
    if sparse:
        return out
    return [np.array(np.broadcast_to(o, tuple(full))) for o in out]


meshgrid = _creation("jnp.meshgrid", _meshgrid, np.meshgrid, differentiable=True)


def _mesh_tangent(x, like, index, indexing="xy"):
    """The tangent of ``meshgrid``'s outputs ``like`` from the tangent ``x`` of
    input ``index``: zeros, except output ``index``, which is ``x`` broadcast
    along the other axes (a list)."""
    shape_ = _mesh_axis_shape(x, len(like), index, indexing)
    return [
        np.broadcast_to(np.reshape(x, shape_), np.shape(o)).astype(np.result_type(o))
        if j == index
        else np.zeros(np.shape(o), np.result_type(o))
        for j, o in enumerate(like)
    ]


mesh_tangent = register(Primitive("ad.mesh_tangent", _mesh_tangent, kind="internal"))


def _mesh_tangent_vjp_x(g, ans, x, like, index, indexing="xy"):
    return reshape(
        unbroadcast(
            fill_none(g, ans)[index], reshape(x, mesh_axis_shape(x, len(like), index, indexing))
        ),
        np.shape(x),
    )


def _mesh_tangent_jvp_x(t, ans, like, index, indexing="xy"):
    return mesh_tangent(t, like, index, indexing)


mesh_tangent.def_vjp(_mesh_tangent_vjp_x)
mesh_tangent.def_jvp(_mesh_tangent_jvp_x)
mesh_tangent.samples = lambda rng: [
    ((rng.normal(size=3), _meshgrid(rng.normal(size=3), rng.normal(size=2)), 0), {}),
    (
        (rng.normal(size=2), _meshgrid(rng.normal(size=3), rng.normal(size=2), indexing="ij"), 1),
        {"indexing": "ij"},
    ),
]


def _meshgrid_vjp(g, ans, *xi, indexing="xy", argnum):
    return reshape(
        unbroadcast(
            fill_none(g, ans)[argnum],
            reshape(xi[argnum], mesh_axis_shape(xi[argnum], len(ans), argnum, indexing)),
        ),
        np.shape(xi[argnum]),
    )


def _meshgrid_jvp(t, ans, *xi, indexing="xy", argnum):
    return mesh_tangent(t, ans, argnum, indexing)


meshgrid.def_vjp(_meshgrid_vjp)
meshgrid.def_jvp(_meshgrid_jvp)
meshgrid.samples = lambda rng: [
    ((rng.normal(size=3), rng.normal(size=2)), {}),
    ((rng.normal(size=3), rng.normal(size=2), rng.normal(size=4)), {"indexing": "ij"}),
    ((rng.normal(size=3), rng.normal(size=2)), {"sparse": True}),
    ((rng.normal(size=4),), {}),
]


# JAX keeps a weak array's type through functions that move or copy its elements;
# a filled array is weak as its fill value, a ``_like`` one as its model (lax.full,
# lax.full_like: ``jnp.full(3, 2.0)`` and ``jnp.zeros_like(3.0)`` are weak float32)
for _p, _name in ((zeros_like, "a"), (ones_like, "a"), (empty_like, "a"), (full_like, "a")):
    _p.facts(keeps_weak=True, weak_from=_name)
full.facts(keeps_weak=True, weak_from="fill_value")
