"""The operators and methods of ``srcjax.Array`` (srcjax/_array.py), attached to
the class when this module is imported (``primitives/registry.py`` imports it,
before any Array exists).

- ``x <op> y`` is the ``jnp`` function of the operator on the buffers, with JAX's
  type promotion: a fast path runs the Python operator on the buffers and keeps
  its result when NumPy's dtype is JAX's (not in ``dtypes.BINARY_SUSPECT``);
- on a weakly typed Array (``_WeakArray``) each operator calls the ``jnp``
  function itself, whose eager call keeps the result weak when the other operand
  is weak too (``Primitive.weak_result``);
- the methods JAX's arrays have (``x.sum()``, ``x.astype(...)`` ...) are the
  ``jnp`` functions of the same name with the array first.
"""

from __future__ import annotations

import operator
import sys
from typing import Any

import numpy as np

from ._array import (
    _WRAP_TYPES,
    DEVICE_TYPES,
    Array,
    _device_prim,
    _numpy,
    _prim,
    _WeakArray,
    unwrap_tree,
    wrap,
    wrap_weak,
)

# -- operators --------------------------------------------------------------------------
_OPERAND_TYPES = frozenset({int, float, bool, complex, np.ndarray}) | _WRAP_TYPES
_PY_SCALARS = frozenset({int, float, complex})
_new = object.__new__


def _calibrate_elision() -> Any:
    """The reference counts (of the operand Array, of its buffer) that an
    operator method sees when its left operand is an unnamed temporary (``(x *
    y) + x``), or None where that cannot be told from a named value (an
    interpreter whose stack borrows references: Python 3.14's). NumPy elides
    such temporaries (computes in place in a result nobody else can see); the
    Array wrapper holds the buffer, so NumPy cannot, and :func:`_binary` does it
    itself."""
    if sys.version_info >= (3, 14) or not hasattr(sys, "getrefcount"):
        return None

    class _Probe:
        __slots__ = ("_buf",)

        def __add__(self, other: Any) -> tuple:
            a = self._buf
            return sys.getrefcount(self), sys.getrefcount(a)

    def probe() -> Any:
        p = _new(_Probe)
        p._buf = object()
        return p

    def named() -> tuple:
        p = probe()
        return p + p

    temp = probe() + 0
    return temp if temp[0] < named()[0] else None


_ELIDE = _calibrate_elision()
#: NumPy's threshold for eliding a temporary (NPY_MIN_ELIDE_BYTES): below it the
#: checks cost more than the allocation they save
_ELIDE_BYTES = 256 * 1024
_IN_PLACE = {"add": np.add, "sub": np.subtract, "mul": np.multiply}


def _binary(public: str, fast: Any = None, swap: bool = False, in_place: Any = None):
    """The method ``x <op> y`` (``swap``: the reflected ``y <op> x``): the ``jnp``
    function ``public`` on the buffers. ``fast`` is the Python operator, used
    when NumPy's result dtype is JAX's (the dtype check the ``jnp`` function
    makes first; see :mod:`srcjax.dtypes`): at once when the result has the
    operands' own dtype (no promotion happened). ``in_place`` (the ufunc of
    ``+``, ``-``, ``*``) computes into the buffer of an unnamed temporary
    operand of the result's dtype and shape, as NumPy's temporary elision does
    (``x * y + x`` allocates one array, not two)."""
    from . import dtypes

    suspect = dtypes.BINARY_SUSPECT  # updated in place when x64 changes
    impl = None
    elide = _ELIDE is not None and in_place is not None
    temp_rc, buf_rc = _ELIDE if elide else (0, 0)
    rc = sys.getrefcount
    int_power = public == "jnp.power"

    def method(self: Array, other: Any) -> Any:
        nonlocal impl
        t = type(other)
        if t is int and not -2147483648 <= other <= 2147483647 and not int_power:
            dtypes.check_int32_range(other)  # (JAX's OverflowError, x64 off)
        a = self._buf
        if t is Array:
            b = other._buf
            if (
                elide
                and type(a) is np.ndarray
                and a.nbytes >= _ELIDE_BYTES
                and type(b) is np.ndarray
                and a.dtype is b.dtype
                and a.shape == b.shape
                and a.dtype.kind in "fc"
            ):
                # (each count includes this frame's one local name of the buffer)
                if rc(self) == temp_rc:
                    del b
                    if rc(a) == buf_rc and a.base is None and a.flags.writeable:
                        b = other._buf
                        in_place(*((b, a) if swap else (a, b)), out=a)
                        return self  # (the temporary, its buffer computed in place)
                    b = other._buf
                elif rc(other) == temp_rc:
                    del a
                    if rc(b) == buf_rc and b.base is None and b.flags.writeable:
                        a = self._buf
                        in_place(*((b, a) if swap else (a, b)), out=b)
                        return other
                    a = self._buf
            other = b
        elif t not in _OPERAND_TYPES:
            if t is _WeakArray:
                if other._buf.ndim:  # (the primitive converts it to the promoted dtype)
                    return _weak_call(public, self, other, swap)
                other = other._buf.item()
                t = type(other)
            elif t is list or t is tuple:
                other = unwrap_tree(other)
            elif not isinstance(other, (np.ndarray, np.generic)):
                return NotImplemented
        if fast is not None:
            try:
                r = fast(other, a) if swap else fast(a, other)
            except (OverflowError, ValueError, TypeError):
                r = None
            d = getattr(r, "dtype", None)
            if d is not None:
                ad = a.dtype
                # no promotion happened (the operands' own dtype): NumPy's is JAX's
                if d is ad and (t in _PY_SCALARS or getattr(other, "dtype", None) is d):
                    w = _new(Array)
                    w._buf = r
                    return w
                if d not in suspect and not dtypes.half_mixed(r, a, other):
                    if ad in _WEAK_ABOVE and t in _PY_SCALARS:
                        return _weak_scalar(r, a, t)
                    return wrap(r)
        if DEVICE_TYPES and (type(a) in DEVICE_TYPES or type(other) in DEVICE_TYPES):
            # a GPU buffer: the primitive where it lives (JAX's promotion, host
            # operands committed to its device, two GPUs a ValueError)
            return _device_prim(public, other, a) if swap else _device_prim(public, a, other)
        if impl is None:
            impl = _prim(public)
        r = impl(other, a) if swap else impl(a, other)
        if t in _PY_SCALARS and getattr(a, "dtype", None) in _WEAK_ABOVE:
            return _weak_scalar(r, a, t)
        return wrap(r)

    method.__name__ = public
    return method


#: the dtypes of a strong array a Python scalar can promote above, to a weak
#: result (``2.5 * int32_array``, ``bool_array + 1``): bool and the integers; a
#: strong float or complex operand makes every result strong (JAX's lattice)
_WEAK_ABOVE = frozenset(np.dtype(c) for c in "?bhilqBHILQ")


def _weak_scalar(r: Any, a: Any, t: type) -> Array:
    """The result ``r`` of a strong buffer ``a`` and a Python scalar of type
    ``t``: weakly typed where JAX's rule says so (:func:`dtypes.weak_promotion`;
    for a comparison, when the operands promote to a weak type)."""
    from . import dtypes

    if dtypes.weak_promotion(((a.dtype, False), (t, True)))[1]:
        return wrap_weak(r)
    return wrap(r)


def _weak_call(public: str, x: Array, w: Array, swap: bool) -> Any:
    """``x <op> w`` (``w <op> x`` with ``swap``) for a strong Array ``x`` and a
    weakly typed one ``w`` of any shape: the eager primitive (JAX's promotion and
    weak type, srcjax/primitives/registry.py)."""
    from . import _array

    prim = _array.HOOKS["primitive"](public)
    return prim(w, x) if swap else prim(x, w)


def _unary(public: str):
    impl = None

    def method(self: Array) -> Any:
        nonlocal impl
        if DEVICE_TYPES and type(self._buf) in DEVICE_TYPES:
            return _device_prim(public, self._buf)
        if impl is None:
            impl = _prim(public)
        return wrap(impl(self._buf))

    return method


_BINARY = {
    "add": ("jnp.add", operator.add),
    "sub": ("jnp.subtract", operator.sub),
    "mul": ("jnp.multiply", operator.mul),
    "truediv": ("jnp.true_divide", None),
    "floordiv": ("jnp.floor_divide", None),
    "mod": ("jnp.mod", None),
    "pow": ("jnp.power", None),
    "matmul": ("jnp.matmul", None),
    "and": ("jnp.bitwise_and", None),
    "or": ("jnp.bitwise_or", None),
    "xor": ("jnp.bitwise_xor", None),
    "lshift": ("jnp.left_shift", None),
    "rshift": ("jnp.right_shift", None),
}
for _name, (_public, _fast) in _BINARY.items():
    _ufunc = _IN_PLACE.get(_name)
    setattr(Array, f"__{_name}__", _binary(_public, _fast, in_place=_ufunc))
    setattr(Array, f"__r{_name}__", _binary(_public, _fast, swap=True, in_place=_ufunc))
_COMPARE = {
    "eq": ("jnp.equal", operator.eq),
    "ne": ("jnp.not_equal", operator.ne),
    "lt": ("jnp.less", operator.lt),
    "le": ("jnp.less_equal", operator.le),
    "gt": ("jnp.greater", operator.gt),
    "ge": ("jnp.greater_equal", operator.ge),
}
for _name, (_public, _fast) in _COMPARE.items():
    setattr(Array, f"__{_name}__", _binary(_public, _fast))
_UNARY = {
    "neg": "jnp.negative",
    "pos": "jnp.positive",
    "abs": "jnp.abs",
    "invert": "jnp.bitwise_not",
}
for _name, _public in _UNARY.items():
    setattr(Array, f"__{_name}__", _unary(_public))


def _weak_binary(public: str, swap: bool = False, mirror: Any = None):
    """``x <op> y`` for a weakly typed ``x``: the ``jnp`` function, whose eager
    call keeps the result weak when ``y`` is weak too (a Python number, a weak
    Array) and strong otherwise (``Primitive.weak_result``). With a strong Array
    ``y``, ``mirror`` (``y``'s method of the mirrored operator, which reads ``x``
    as its Python number) computes it."""
    name = public.split(".", 1)[1]

    def method(self: Array, other: Any) -> Any:
        if type(other) is Array and mirror is not None:
            return mirror(other, self)  # (weak op strong: strong, as the operator on y)
        if not isinstance(other, (Array, np.ndarray, np.generic, int, float, complex, list, tuple)):
            return NotImplemented
        f = getattr(_numpy(), name)
        return f(other, self) if swap else f(self, other)

    method.__name__ = public
    return method


def _weak_unary(public: str):
    name = public.split(".", 1)[1]

    def method(self: Array) -> Any:
        return getattr(_numpy(), name)(self)

    method.__name__ = public
    return method


for _name, (_public, _fast) in _BINARY.items():
    _f, _r = getattr(Array, f"__{_name}__"), getattr(Array, f"__r{_name}__")
    setattr(_WeakArray, f"__{_name}__", _weak_binary(_public, mirror=_r))
    setattr(_WeakArray, f"__r{_name}__", _weak_binary(_public, swap=True, mirror=_f))
_MIRROR = {"eq": "eq", "ne": "ne", "lt": "gt", "le": "ge", "gt": "lt", "ge": "le"}
for _name, (_public, _fast) in _COMPARE.items():
    _m = getattr(Array, f"__{_MIRROR[_name]}__")
    setattr(_WeakArray, f"__{_name}__", _weak_binary(_public, mirror=_m))
for _name, _public in _UNARY.items():
    setattr(_WeakArray, f"__{_name}__", _weak_unary(_public))


def _weak_getitem(self: Array, idx: Any) -> Array:
    """``w[idx]`` of a weak Array: weak, as JAX's (indexing moves elements)."""
    r = Array.__getitem__(self, idx)
    return wrap_weak(r._buf) if type(r) is Array else r


def _weak_copy(self: Array) -> Array:
    return wrap_weak(self._buf.copy())


_WeakArray.__getitem__ = _weak_getitem  # type: ignore[method-assign]
_WeakArray.copy = _weak_copy  # type: ignore[method-assign]


def _divmod(self: Array, other: Any) -> tuple:
    return (self // other, self % other)


def _rdivmod(self: Array, other: Any) -> tuple:
    return (other // self, other % self)


Array.__divmod__ = _divmod  # type: ignore[attr-defined]
Array.__rdivmod__ = _rdivmod  # type: ignore[attr-defined]


def _method(name: str):
    def method(self: Array, *args: Any, out: Any = None, **kwargs: Any) -> Any:
        # (``out=None`` is what NumPy's functions pass: ``np.sum(x)`` calls ``x.sum``)
        if out is not None:
            raise TypeError(f"Array.{name}: the 'out' argument is not supported (JAX's)")
        return getattr(_numpy(), name)(self, *args, **kwargs)

    method.__name__ = name
    method.__doc__ = f"``srcjax.numpy.{name}(self, ...)``, as ``jax.Array.{name}``."
    # the function the method forwards to: transforms of a bound method (jit(x.sum))
    # transform it with the array bound (frontend/source.py unwrap_callable)
    method.__srcjax_method_of__ = lambda: getattr(_numpy(), name)
    return method


#: methods that are the jnp function of the same name with the array first
_METHODS = (
    "all any argmax argmin argpartition argsort choose clip conj "
    "conjugate cumprod cumsum diagonal dot max mean min nonzero prod ptp ravel repeat "
    "round searchsorted squeeze std sum swapaxes take trace var"
).split()
for _name in _METHODS:
    setattr(Array, _name, _method(_name))


def _compress(self, condition, axis=None, *, size=None, fill_value=0, out=None):
    """``srcjax.numpy.compress(condition, self, ...)``, as ``jax.Array.compress``
    (the array is the second argument of the function)."""
    return _numpy().compress(condition, self, axis, size=size, fill_value=fill_value, out=out)


def _round(self, ndigits=None):
    """Python's ``round(x)``, as ``jax.Array.__round__``: rounded half to even, an
    integer array without ``ndigits``, else ``srcjax.numpy.round(x, ndigits)``."""
    jnp = _numpy()
    if ndigits is None:
        return jnp.round(self).astype(int)
    return jnp.round(self, ndigits)


def _astype(self, dtype, copy=False, device=None):
    """``srcjax.numpy.astype(self, dtype)``, as ``jax.Array.astype`` (``copy``:
    the result is a new array either way; one device here)."""
    return _numpy().astype(self, dtype)


_astype.__srcjax_method_of__ = lambda: _numpy().astype  # (jit(x.astype): see _method)
Array.compress = _compress
Array.astype = _astype
Array.__round__ = _round
