"""Typed PRNG key arrays: what ``jax.random.key`` returns.

A typed key array holds keys as elements: ``random.key(0)`` has shape ``()``
and dtype ``key<fry>``, ``random.split(random.key(0), 3)`` shape ``(3,)``. Its
data are the raw keys, uint32 of shape ``shape + (2,)`` (``random.key_data``);
every operation on it works on the key axes and carries the trailing ``(2,)``
along. Arithmetic and conversion to a NumPy array are refused, as in JAX.

Semantics: https://docs.jax.dev/en/latest/jep/9263-typed-keys.html
"""

from __future__ import annotations

import operator
from typing import Any, Callable, Dict

import numpy as np

_U32 = np.dtype(np.uint32)


class extended(np.generic):
    """Scalar class of JAX's extended dtypes (``jax.dtypes.extended``): the
    abstract parent of typed-key dtypes in ``issubdtype``. (Defined here, below
    :mod:`srcjax.dtypes`, which re-exports it, so that :class:`KeyDType` names its
    scalar type without importing upward.)"""


class prng_key(extended):
    """Scalar class of typed PRNG keys (``jax.dtypes.prng_key``):
    ``issubdtype(random.key(0).dtype, prng_key)`` is true."""


#: JAX 0.10.2's PRNG implementations (name -> dtype tag); only threefry2x32 exists here
_KNOWN = {
    "threefry2x32": "fry",
    "rbg": "rbg",
    "unsafe_rbg": "unsafe_rbg",
    "philox2x32": "philox2x32",
    "philox4x32": "philox4x32",
    "threefry4x32": "threefry4x32",
}


class KeyDType:
    """The dtype of typed PRNG keys of one implementation (``jax.random.key_dtype``).

    ``name`` (``"key<fry>"``), ``impl`` (``"threefry2x32"``), ``itemsize`` (8),
    ``type`` (:class:`srcjax.dtypes.prng_key`), equality and hashing by
    implementation, ``str``/``repr`` as JAX's."""

    __slots__ = ("impl",)

    def __init__(self, impl: str) -> None:
        self.impl = impl

    @property
    def name(self) -> str:
        return f"key<{_KNOWN[self.impl]}>"

    @property
    def itemsize(self) -> int:
        return 8

    @property
    def kind(self) -> str:
        return "V"

    @property
    def type(self) -> type:
        return prng_key

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyDType) and other.impl == self.impl

    def __hash__(self) -> int:
        return hash(("srcjax.KeyDType", self.impl))


class PRNGKeyArray:
    """An array of typed PRNG keys (dtype ``key<fry>``; ``jax.random.key``).

    Attributes:
        shape, ndim, size: of the keys (the raw data has one more axis, of 2).
        dtype: a :class:`KeyDType` (``key<fry>``);
            ``jnp.issubdtype(k.dtype, srcjax.dtypes.prng_key)`` is true.

    Indexing, ``reshape``, ``T``, ``len``, iteration, ``==``/``!=`` and NumPy's
    structural functions (``stack``, ``concatenate``, ``where``, ``moveaxis``,
    ``broadcast_to`` ...) act on the keys. ``np.asarray(k)`` and arithmetic raise
    ``TypeError`` (use :func:`srcjax.random.key_data`).
    """

    __slots__ = ("_base_array", "_impl")
    __array_priority__ = 1000
    __hash__ = None  # type: ignore[assignment]  # (mutable data; as JAX's arrays)

    def __init__(self, data: Any, impl: str = "threefry2x32") -> None:
        data = np.asarray(data)
        if data.dtype != _U32 or data.shape[-1:] != (2,):
            raise TypeError(
                "invalid PRNG key data: expected uint32 of shape (..., 2); got "
                f"{data.dtype}{list(data.shape)}"
            )
        self._base_array = data
        self._impl = impl

    # ------------------------------------------------------------------ attributes
    @property
    def shape(self) -> tuple:
        return self._base_array.shape[:-1]

    @property
    def ndim(self) -> int:
        return self._base_array.ndim - 1

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def dtype(self) -> KeyDType:
        return KeyDType(self._impl)

    @property
    def itemsize(self) -> int:
        return 8

    @property
    def nbytes(self) -> int:
        return 8 * self.size

    @property
    def weak_type(self) -> bool:
        return False

    def _wrap(self, data: np.ndarray) -> "PRNGKeyArray":
        return PRNGKeyArray(data, self._impl)

    # ------------------------------------------------------------------ structure
    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        for i in range(self.shape[0]):
            yield self._wrap(self._base_array[i])

    def __getitem__(self, idx: Any) -> "PRNGKeyArray":
        return self._wrap(self._base_array[_data_index(idx)])

    def reshape(self, *shape: Any, order: str = "C") -> "PRNGKeyArray":
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        return self._wrap(self._base_array.reshape(tuple(shape) + (2,), order=order))

    def ravel(self) -> "PRNGKeyArray":
        return self.reshape(-1)

    flatten = ravel

    def transpose(self, *axes: Any) -> "PRNGKeyArray":
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = tuple(axes[0])
        if not axes:
            axes = tuple(reversed(range(self.ndim)))
        axes = tuple(operator.index(a) % max(self.ndim, 1) for a in axes)
        return self._wrap(self._base_array.transpose(axes + (self.ndim,)))

    @property
    def T(self) -> "PRNGKeyArray":
        return self.transpose()

    def squeeze(self, axis: Any = None) -> "PRNGKeyArray":
        return _squeeze(self, axis)

    def copy(self) -> "PRNGKeyArray":
        return self._wrap(self._base_array.copy())

    def __copy__(self) -> "PRNGKeyArray":
        return self.copy()

    def __deepcopy__(self, memo: Any) -> "PRNGKeyArray":
        return self.copy()

    def __reduce__(self):
        return (PRNGKeyArray, (self._base_array, self._impl))

    def block_until_ready(self) -> "PRNGKeyArray":
        return self

    # ------------------------------------------------------------------ comparisons
    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return np.all(self._base_array == other._base_array, axis=-1)

    def __ne__(self, other: Any) -> Any:  # type: ignore[override]
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        return np.any(self._base_array != other._base_array, axis=-1)

    # ------------------------------------------------------------------ refusals
    def __array__(self, dtype: Any = None, copy: Any = None):
        raise TypeError(
            "srcjax array with PRNGKey dtype cannot be converted to a NumPy array. Use "
            "srcjax.random.key_data(arr) if you wish to extract the underlying integer array."
        )

    def astype(self, dtype: Any, *args: Any, **kwargs: Any):
        raise TypeError(
            f"cannot convert a key array (dtype {self.dtype}) to {np.dtype(dtype)}; use "
            "srcjax.random.key_data"
        )

    def __bool__(self) -> bool:
        raise TypeError(f"The truth value of a key array (dtype {self.dtype}) is ambiguous")

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any):
        if ufunc in (np.equal, np.not_equal) and method == "__call__" and len(inputs) == 2:
            a, b = inputs
            if isinstance(a, PRNGKeyArray) and isinstance(b, PRNGKeyArray):
                return a == b if ufunc is np.equal else a != b
        raise TypeError(f"{ufunc.__name__} does not accept dtype {self.dtype}")

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any):
        impl = _FUNCTIONS.get(func)
        if impl is None:
            raise TypeError(f"{func.__name__} does not accept dtype {self.dtype}")
        return impl(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{self._base_array}"

    __str__ = __repr__


def _refuse(name: str) -> Callable:
    def op(self: PRNGKeyArray, *other: Any) -> Any:
        kinds = ", ".join(
            [str(self.dtype)] + [str(getattr(o, "dtype", type(o).__name__)) for o in other]
        )
        raise TypeError(f"{name} does not accept dtypes {kinds}.")

    return op


for _op, _name in (
    ("add", "add"),
    ("sub", "sub"),
    ("mul", "mul"),
    ("truediv", "div"),
    ("floordiv", "floor_divide"),
    ("mod", "rem"),
    ("pow", "pow"),
    ("matmul", "dot_general"),
    ("and", "and"),
    ("or", "or"),
    ("xor", "xor"),
    ("lt", "lt"),
    ("le", "le"),
    ("gt", "gt"),
    ("ge", "ge"),
    ("lshift", "shift_left"),
    ("rshift", "shift_right"),
):
    setattr(PRNGKeyArray, f"__{_op}__", _refuse(_name))
    if _op not in ("lt", "le", "gt", "ge"):
        setattr(PRNGKeyArray, f"__r{_op}__", _refuse(_name))
for _op, _name in (("neg", "neg"), ("pos", "pos"), ("abs", "abs"), ("invert", "not")):
    setattr(PRNGKeyArray, f"__{_op}__", _refuse(_name))


def is_key_array(x: Any) -> bool:
    """Whether ``x`` is a typed key array."""
    return isinstance(x, PRNGKeyArray)


def key_base(x: Any) -> Any:
    """The raw data of a typed key array (uint32 ``shape + (2,)``); anything else
    as it is."""
    return x._base_array if isinstance(x, PRNGKeyArray) else x


def rewrap(like: Any, data: Any) -> Any:
    """``data`` (raw keys) as the kind of key ``like`` is: typed if ``like`` is."""
    if isinstance(like, PRNGKeyArray):
        return PRNGKeyArray(data, like._impl)
    return data


# ---------------------------------------------------------------------- NumPy functions
def _data_index(idx: Any) -> Any:
    """An index of the keys as an index of the data (the trailing axis kept)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    idx = tuple(key_base(i) for i in idx)
    if any(i is Ellipsis for i in idx):
        return idx + (slice(None),)
    return idx + (Ellipsis, slice(None))


def _axis(axis: Any, ndim: int) -> int:
    a = operator.index(axis)
    if not -ndim <= a < ndim:
        raise np.exceptions.AxisError(a, ndim)
    return a % ndim


def _impl_of(xs: Any) -> str:
    impls = {x._impl for x in xs if isinstance(x, PRNGKeyArray)}
    if len(impls) > 1:
        raise TypeError(f"key arrays of different implementations: {sorted(impls)}")
    return impls.pop()


def _all_keys(xs: Any, name: str) -> list:
    xs = list(xs)
    for x in xs:
        if not isinstance(x, PRNGKeyArray):
            raise TypeError(
                f"{name}: cannot combine a key array with a non-key value of type "
                f"{type(x).__name__}"
            )
    return xs


def _stack(arrays: Any, axis: int = 0, out: Any = None, **kw: Any) -> PRNGKeyArray:
    xs = _all_keys(arrays, "stack")
    nd = xs[0].ndim + 1
    ax = _axis(axis, nd)
    return PRNGKeyArray(np.stack([x._base_array for x in xs], axis=ax), _impl_of(xs))


def _concatenate(arrays: Any, axis: int = 0, out: Any = None, **kw: Any) -> PRNGKeyArray:
    xs = _all_keys(arrays, "concatenate")
    if axis is None:
        xs = [x.ravel() for x in xs]
        axis = 0
    ax = _axis(axis, xs[0].ndim)
    return PRNGKeyArray(np.concatenate([x._base_array for x in xs], axis=ax), _impl_of(xs))


def _broadcast_to(x: PRNGKeyArray, shape: Any, subok: bool = False) -> PRNGKeyArray:
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    return x._wrap(np.broadcast_to(x._base_array, shape + (2,)))


def _moveaxis(x: PRNGKeyArray, source: Any, destination: Any) -> PRNGKeyArray:
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    src = [_axis(a, x.ndim) for a in src]
    dst = [_axis(a, x.ndim) for a in dst]
    return x._wrap(np.moveaxis(x._base_array, src, dst))


def _swapaxes(x: PRNGKeyArray, a: int, b: int) -> PRNGKeyArray:
    return x._wrap(np.swapaxes(x._base_array, _axis(a, x.ndim), _axis(b, x.ndim)))


def _expand_dims(x: PRNGKeyArray, axis: Any) -> PRNGKeyArray:
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    nd = x.ndim + len(axes)
    data = np.expand_dims(x._base_array, [_axis(a, nd) for a in axes])
    return x._wrap(data)


def _squeeze(x: PRNGKeyArray, axis: Any = None) -> PRNGKeyArray:
    if axis is None:
        axes = tuple(i for i, d in enumerate(x.shape) if d == 1)
    else:
        axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
        axes = tuple(_axis(a, x.ndim) for a in axes)
    return x._wrap(np.squeeze(x._base_array, axes))


def _reshape(x: PRNGKeyArray, *args: Any, **kw: Any) -> PRNGKeyArray:
    shape = kw.pop("shape", kw.pop("newshape", None))
    if shape is None:
        shape = args[0]
    return x.reshape(shape, order=kw.get("order", "C"))


def _transpose(x: PRNGKeyArray, axes: Any = None) -> PRNGKeyArray:
    return x.transpose() if axes is None else x.transpose(axes)


def _take(x: PRNGKeyArray, indices: Any, axis: Any = None, **kw: Any) -> PRNGKeyArray:
    if axis is None:
        return x._wrap(np.take(x._base_array.reshape(-1, 2), indices, axis=0))
    return x._wrap(np.take(x._base_array, indices, axis=_axis(axis, x.ndim)))


def _where(cond: Any, a: Any, b: Any) -> PRNGKeyArray:
    xs = _all_keys((a, b), "where")
    c = np.asarray(cond)
    return PRNGKeyArray(np.where(c[..., None], xs[0]._base_array, xs[1]._base_array), _impl_of(xs))


def _array_equal(a: Any, b: Any, equal_nan: bool = False) -> bool:
    if not (isinstance(a, PRNGKeyArray) and isinstance(b, PRNGKeyArray)):
        return False
    return bool(np.array_equal(a._base_array, b._base_array))


def _flip(x: PRNGKeyArray, axis: Any = None) -> PRNGKeyArray:
    if axis is None:
        axis = tuple(range(x.ndim))
    axes = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    return x._wrap(np.flip(x._base_array, tuple(_axis(a, x.ndim) for a in axes)))


def _repeat(x: PRNGKeyArray, repeats: Any, axis: Any = None) -> PRNGKeyArray:
    if axis is None:
        return x._wrap(np.repeat(x._base_array.reshape(-1, 2), repeats, axis=0))
    return x._wrap(np.repeat(x._base_array, repeats, axis=_axis(axis, x.ndim)))


def _tile(x: PRNGKeyArray, reps: Any) -> PRNGKeyArray:
    reps = (reps,) if isinstance(reps, (int, np.integer)) else tuple(reps)
    nd = max(x.ndim, len(reps))
    data = x._base_array.reshape((1,) * (nd - x.ndim) + x._base_array.shape)
    return x._wrap(np.tile(data, (1,) * (nd - len(reps)) + reps + (1,)))


def _broadcast_arrays(*xs: Any, **kw: Any) -> list:
    shape = np.broadcast_shapes(*(np.shape(x) for x in xs))
    out = []
    for x in xs:
        if isinstance(x, PRNGKeyArray):
            out.append(_broadcast_to(x, shape))
        else:
            out.append(np.broadcast_to(x, shape))
    return out


def _atleast_1d(*xs: Any) -> Any:
    out = [x if x.ndim >= 1 else x.reshape(1) for x in _all_keys(xs, "atleast_1d")]
    return out[0] if len(out) == 1 else out


_FUNCTIONS: Dict[Any, Callable] = {
    np.shape: lambda x: x.shape,
    np.ndim: lambda x: x.ndim,
    np.size: lambda x, axis=None: x.size if axis is None else x.shape[axis],
    np.stack: _stack,
    np.concatenate: _concatenate,
    np.broadcast_to: _broadcast_to,
    np.broadcast_arrays: _broadcast_arrays,
    np.moveaxis: _moveaxis,
    np.swapaxes: _swapaxes,
    np.expand_dims: _expand_dims,
    np.squeeze: _squeeze,
    np.reshape: _reshape,
    np.ravel: lambda x, order="C": x.ravel(),
    np.transpose: _transpose,
    np.take: _take,
    np.where: _where,
    np.copy: lambda x, *a, **k: x.copy(),
    np.array_equal: _array_equal,
    np.flip: _flip,
    np.repeat: _repeat,
    np.tile: _tile,
    np.atleast_1d: _atleast_1d,
}
