"""``srcjax.Array``: the immutable array every srcjax function returns (``jax.Array``).

An Array is a small wrapper holding one buffer: a ``numpy.ndarray`` or a NumPy
scalar on the host backend (a CuPy array on a CUDA backend). Generated code and
the primitives' implementations compute on plain buffers; Arrays exist only at
the boundaries, where :func:`wrap` makes them (results of ``srcjax.numpy``,
``lax``, ``nn``, ``random``, ``scipy`` functions and of every transform) and
:func:`buffer` / :func:`unwrap_tree` take them apart (arguments). These three
functions are the only places that touch ``Array._buf``: a backend that keeps
its buffers elsewhere supplies them here (``docs/ARCHITECTURE.md``, "Arrays").

Semantics follow ``jax.Array`` (https://docs.jax.dev/en/latest/jax.numpy.html):

- immutable: ``x[i] = v`` raises JAX's ``TypeError``; ``x += y`` binds ``x`` to
  a new array (an array a caller passed in is never changed); ``x.at[idx]``
  offers the functional updates;
- operators follow JAX's type promotion (they are the ``jnp`` functions:
  ``int32 + float16`` is float16, ``int32 / int32`` float32);
- ``repr`` is JAX's (``Array([1., 2.], dtype=float32)``), ``str`` the values;
- NumPy interop: ``np.asarray(x)`` is a read-only view of the buffer (no copy),
  NumPy/SciPy/matplotlib accept Arrays through ``__array__``, pickling
  round-trips, ``ndarray op Array`` is an Array (``__array_priority__``).
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from . import _sharding

__all__ = ["Array", "wrap", "buffer", "unwrap_tree", "wrap_tree"]

_IMPLS: dict = {}
#: filled by the layers above, which import this module (it imports none of them):
#: ``impl`` (public name -> the registry's implementation, from primitives.registry),
#: ``numpy`` (the srcjax.numpy module), ``device_of`` (buffer -> device, from
#: backends._devices: the CPU for NumPy buffers, a CudaDevice for CuPy ones),
#: ``pytree`` (srcjax.tree_util, for registered pytree classes), ``primitive``
#: (public name -> the registry's Primitive, whose call runs device buffers where
#: they live), ``to_host`` (a GPU buffer -> a NumPy array, from backends._devices)
HOOKS: dict = {}
#: GPU buffer types (CuPy's ndarray, the test double's), added by the CUDA
#: backend's CuPy switch when it first meets them: an Array holding one is on a
#: GPU; empty on a host-only run, so the host paths pay one set test at most
DEVICE_TYPES: set = set()


def _host(b: Any) -> Any:
    """The buffer ``b`` in host memory: itself, or a NumPy copy of a GPU buffer."""
    return HOOKS["to_host"](b) if type(b) in DEVICE_TYPES else b


def _device_prim(public: str, *args: Any, **kwargs: Any) -> Any:
    """The registry's primitive ``public`` called on GPU buffers (on the
    device, with JAX's semantics: the CUDA backend's eager path); an Array."""
    return wrap_tree(HOOKS["primitive"](public)(*args, **kwargs))


def _prim(public: str) -> Any:
    """The implementation of the registry's primitive ``public`` (on buffers)."""
    impl = _IMPLS.get(public)
    if impl is None:
        impl = _IMPLS[public] = HOOKS["impl"](public)
    return impl


def _numpy() -> Any:
    return HOOKS["numpy"]


_IMMUTABLE = (
    "JAX arrays are immutable and do not support in-place item assignment. Instead of "
    "x[idx] = y, use x = x.at[idx].set(y) or another .at[] method: "
    "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"
)


class Array:
    """An immutable n-dimensional array (``jax.Array``); see the module docstring.

    Not constructed directly (``srcjax.numpy.asarray`` / ``array`` make them);
    ``isinstance(x, srcjax.Array)`` is true for the results of every srcjax
    function and false for NumPy arrays and Python numbers, as in JAX."""

    #: ``_sharding``: set on pmap's results only (a NamedSharding over their devices)
    __slots__ = ("_buf", "_sharding")
    __array_priority__ = 100  # ndarray + Array -> Array.__radd__, as for jax.Array
    #: JAX's weak type (https://docs.jax.dev/en/latest/type_promotion.html#weak-types):
    #: True for the arrays made from a Python scalar (:class:`_WeakArray`)
    weak_type = False

    def __new__(cls, *args: Any, **kwargs: Any) -> "Array":
        raise TypeError("srcjax.Array cannot be instantiated; use srcjax.numpy.asarray")

    # -- metadata: the buffer's -----------------------------------------------------
    dtype = property(operator.attrgetter("_buf.dtype"), doc="The dtype (a NumPy dtype).")
    shape = property(operator.attrgetter("_buf.shape"), doc="The shape (a tuple of ints).")
    ndim = property(operator.attrgetter("_buf.ndim"), doc="The number of axes.")
    size = property(operator.attrgetter("_buf.size"), doc="The number of elements.")
    itemsize = property(operator.attrgetter("_buf.dtype.itemsize"), doc="Bytes per element.")
    nbytes = property(operator.attrgetter("_buf.nbytes"), doc="Bytes of all elements.")

    @property
    def device(self) -> Any:
        """The device holding the array; for a pmap result (on several devices)
        its sharding, as JAX answers."""
        sh = getattr(self, "_sharding", None)
        if sh is not None and sh.num_devices > 1:
            return sh
        return _device_of(self._buf)

    def devices(self) -> set:
        """The set of devices holding parts of the array."""
        return self.sharding.device_set

    @property
    def sharding(self) -> Any:
        """How the array lies on devices (``jax.Array.sharding``): a
        ``NamedSharding`` over the devices for ``pmap``'s results, else a
        ``SingleDeviceSharding`` (srcjax/_sharding.py)."""
        sh = getattr(self, "_sharding", None)
        return sh if sh is not None else _sharding.SingleDeviceSharding(_device_of(self._buf))

    @property
    def addressable_shards(self) -> list:
        """Each device's part (``jax.Shard``: ``device``, ``index``, ``data``), in
        device order; the data are views of this array's buffer (CPU devices)
        or each GPU's own buffer (a pmap over GPUs)."""
        sh = self.sharding
        b = self._buf
        own = getattr(sh, "shard_buffers", None)  # (on GPUs: each device's own buffer)
        return [
            _sharding.Shard(d, idx, 0, wrap(b[idx] if own is None else own[k]))
            for k, (d, idx) in enumerate(sh.devices_indices_map(b.shape).items())
        ]

    global_shards = addressable_shards

    def addressable_data(self, index: int) -> "Array":
        """The data of the ``index``-th addressable shard."""
        return self.addressable_shards[index].data

    is_fully_addressable = property(lambda self: True)

    is_fully_replicated = property(lambda self: self.sharding.is_fully_replicated)

    def block_until_ready(self) -> "Array":
        """``self``: srcjax computes synchronously, so the value is ready."""
        return self

    def copy_to_host_async(self) -> None:
        return None

    # -- conversion -----------------------------------------------------------------
    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        b = self._buf
        if type(b) in DEVICE_TYPES:  # a GPU buffer: a host copy (read-only as a view is)
            v = np.asarray(HOOKS["to_host"](b), dtype=dtype)
            v.flags.writeable = bool(copy)
            return v
        if copy:
            return np.array(b, dtype=dtype, copy=True)
        v = np.asarray(b, dtype=dtype)
        if v is b:
            v = b.view()
        v.flags.writeable = False  # a view of an immutable array
        return v

    def __bool__(self) -> bool:
        return bool(self._buf)

    def __int__(self) -> int:
        return int(self._buf)

    def __float__(self) -> float:
        return float(self._buf)

    def __complex__(self) -> complex:
        return complex(self._buf)

    def __index__(self) -> int:
        try:
            return operator.index(self._buf)
        except TypeError:  # (JAX's message: "a" * x asks x for an index)
            raise TypeError(
                "Only integer scalar arrays can be converted to a scalar index."
            ) from None

    def __len__(self) -> int:
        if self._buf.ndim == 0:
            raise TypeError("len() of unsized object")
        return len(self._buf)

    def __iter__(self):
        b = self._buf
        if b.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for row in b:
            yield wrap(row)

    def __reversed__(self):
        return iter(self[::-1])

    def __contains__(self, v: Any) -> bool:
        return bool((self == v).any())

    __hash__ = None  # unhashable, as jax.Array

    def item(self, *args: Any) -> Any:
        return self._buf.item(*args)

    def tolist(self) -> Any:
        return self._buf.tolist()

    def tobytes(self, order: str = "C") -> bytes:
        return np.asarray(_host(self._buf)).tobytes(order)

    def copy(self) -> "Array":
        return wrap(self._buf.copy())

    def __copy__(self) -> "Array":
        return self.copy()

    def __deepcopy__(self, memo: Any) -> "Array":
        return self.copy()

    def __reduce__(self) -> tuple:
        return (_rebuild, (np.asarray(_host(self._buf)),))

    def __repr__(self) -> str:
        b = np.asarray(_host(self._buf))
        body = np.array2string(b, separator=", ", prefix="Array(")
        weak = ", weak_type=True" if self.weak_type else ""
        return f"Array({body}, dtype={b.dtype.name}{weak})"

    def __str__(self) -> str:
        return str(np.asarray(_host(self._buf)))

    def __format__(self, spec: str) -> str:
        if self._buf.ndim == 0:
            return format(self._buf.item() if spec else _host(self._buf), spec)
        return format(str(self), spec)

    # -- indexing ---------------------------------------------------------------------
    def __getitem__(self, idx: Any) -> "Array":
        return _gather(self._buf, unwrap_tree(idx))

    def __setitem__(self, idx: Any, v: Any) -> None:
        raise TypeError(_IMMUTABLE)

    @property
    def at(self) -> "_IndexUpdateHelper":
        return _IndexUpdateHelper(self)

    # -- views as JAX spells them -------------------------------------------------------
    @property
    def T(self) -> "Array":
        return _numpy().transpose(self)

    @property
    def mT(self) -> "Array":
        return _numpy().swapaxes(self, -1, -2)

    @property
    def real(self) -> "Array":
        return _numpy().real(self)

    @property
    def imag(self) -> "Array":
        return _numpy().imag(self)

    @property
    def flat(self):
        return iter(self.ravel())

    def reshape(self, *shape: Any, order: str = "C") -> "Array":
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _numpy().reshape(self, shape, order=order)

    def transpose(self, *axes: Any) -> "Array":
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)) or axes == (None,):
            axes = axes[0]
        return _numpy().transpose(self, axes or None)

    def flatten(self, order: str = "C") -> "Array":
        return _numpy().ravel(self, order=order)

    def sort(self, axis: Any = -1, *, stable: bool = True, descending: bool = False, **kw: Any):
        """The sorted array (JAX's; NumPy's ``ndarray.sort`` sorts in place)."""
        return _numpy().sort(self, axis=axis, stable=stable, descending=descending, **kw)

    def view(self, dtype: Any = None) -> "Array":
        return wrap(self._buf.view() if dtype is None else self._buf.view(dtype))

    def __array_namespace__(self, api_version: Any = None) -> Any:
        return _numpy()


def wrap_sharded(b: Any, sharding: Any) -> Array:
    """An Array holding ``b`` laid out over devices as ``sharding`` says (pmap's
    results; :mod:`srcjax._sharding`)."""
    a = wrap(b)
    a._sharding = sharding
    return a


def _rebuild(b: np.ndarray) -> Array:
    return wrap(b)


_new = object.__new__


def wrap(b: Any) -> Array:
    """An Array holding the buffer ``b`` (an ``ndarray`` or a NumPy scalar),
    without copying it: the caller gives ``b`` up (nothing may write it later)."""
    a = _new(Array)
    a._buf = b
    return a


class _WeakArray(Array):
    """A weakly typed Array (``weak_type=True``), of any shape, of the default
    dtype of its kind (int32, float32, complex64; 64-bit with x64) or bool:
    ``jnp.asarray(1.0)``, and the result of an elementwise function whose
    operands join to a weak type in JAX's lattice (``2.5 * int32_array``,
    ``w + 1.0``, ``jnp.sin(w)``; :func:`srcjax.dtypes.weak_promotion`), the
    gradient with respect to a Python float. In promotion it acts as a Python
    scalar of its kind (``jnp.asarray(1.0) + float16_array`` and ``(2.5 *
    int32_array) * float16_array`` are float16, as in JAX): computations
    receive a 0-d one as that Python number (:func:`unwrap_tree`); eager
    elementwise calls convert a larger one to the promoted dtype first
    (``Primitive.__call__``). A weak bool (a comparison of weak values)
    promotes as a bool."""

    __slots__ = ()
    weak_type = True


def wrap_weak(b: Any) -> Array:
    """A weakly typed Array holding the buffer ``b`` (see :class:`_WeakArray`)."""
    a = _new(_WeakArray)
    a._buf = b
    return a


def _weak_buffer(x: Array) -> Any:
    """What computations receive for the weak Array ``x``: a 0-d one as its
    Python number (weakly typed there too), a larger one as its buffer."""
    b = x._buf
    return b.item() if b.ndim == 0 else b


def buffer(x: Any) -> Any:
    """The buffer of an Array (a weakly typed 0-d one: its Python number),
    anything else as it is."""
    t = type(x)
    if t is Array:
        return x._buf
    return _weak_buffer(x) if t is _WeakArray else x


def _device_of(b: Any) -> Any:
    return HOOKS["device_of"](b)


_LEAF_TYPES = frozenset({int, float, bool, complex, str, type(None), np.ndarray})


def _dict_like(x: dict, items: dict) -> dict:
    """``items`` rebuilt as ``x``'s dict type (``defaultdict`` with its factory,
    ``OrderedDict`` ...); a plain dict when that type cannot be built so."""
    t = type(x)
    if t is dict:
        return items
    try:
        if hasattr(x, "default_factory"):
            return t(x.default_factory, items)
        return t(items)
    except TypeError:
        return items


def unwrap_tree(x: Any) -> Any:
    """``x`` with every Array (also inside lists, tuples, namedtuples, dicts and
    registered pytree classes) replaced by its buffer; ``x`` itself when it holds
    none (the common case costs a walk, no copies)."""
    t = type(x)
    if t is Array:
        return x._buf
    if t in _LEAF_TYPES:
        return x
    if t is _WeakArray:
        return _weak_buffer(x)
    if t is list or t is tuple:
        items = [unwrap_tree(v) for v in x]
        if all(a is b for a, b in zip(items, x)):
            return x
        return t(items)
    kind = HOOKS["class_kinds"].get(t)
    if kind is not None:  # a registered class (a model), before the isinstance tests
        return _unwrap_node(x, kind)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        items = [unwrap_tree(v) for v in x]
        if all(a is b for a, b in zip(items, x)):
            return x
        return t(*items)
    if isinstance(x, dict):
        items = {k: unwrap_tree(v) for k, v in x.items()}
        if all(items[k] is v for k, v in x.items()):
            return x
        return _dict_like(x, items)
    if isinstance(x, (list, tuple)):
        items = [unwrap_tree(v) for v in x]
        if all(a is b for a, b in zip(items, x)):
            return x
        try:
            return t(items)
        except TypeError:
            return x
    kind = HOOKS["pytree"]._REGISTRY.get(t)
    if kind is not None and x is not None:  # a registered class: node by node
        return _unwrap_node(x, kind)
    return x


def _unwrap_node(x: Any, kind: Any) -> Any:
    """:func:`unwrap_tree` of an instance of a registered class: node by node."""
    children, aux = kind.flatten(x)
    new = [unwrap_tree(v) for v in children]
    if all(a is b for a, b in zip(new, children)):
        return x
    return kind.unflatten(aux, tuple(new))


def unwrap_args(args: tuple) -> tuple:
    """:func:`unwrap_tree` of each of ``args`` (a call's positional arguments)."""
    for a in args:
        if type(a) not in _LEAF_TYPES:
            break
    else:
        return args
    return tuple(unwrap_tree(a) for a in args)


def unwrap_args_weak(args: tuple) -> tuple:
    """:func:`unwrap_args`, and the positions of the weakly typed Arrays of one
    or more axes among ``args`` (a tuple; ``()`` in the common call): jit keys
    those as weak (a 0-d one is its Python number already)."""
    for a in args:
        if type(a) not in _LEAF_TYPES:
            break
    else:
        return args, ()
    weak: tuple = ()
    out = []
    for i, a in enumerate(args):
        t = type(a)
        if t is Array:
            out.append(a._buf)
        elif t is _WeakArray and a._buf.ndim:
            weak += (i,)
            out.append(a._buf)
        else:
            out.append(unwrap_tree(a))
    return tuple(out), weak


def unwrap_args_seen(args: tuple, trigger: frozenset) -> tuple:
    """(:func:`unwrap_args` of ``args``, what was seen): 2 when a weak Array is
    among ``args``, 1 when another value of a type in ``trigger`` is (a Python
    number), else 0. One pass, for ``Primitive.__call__``'s weak rule."""
    seen = 0
    items = []
    for a in args:
        t = type(a)
        if t is Array:
            items.append(a._buf)
        elif t in _LEAF_TYPES:
            if t in trigger and not seen:
                seen = 1
            items.append(a)
        else:
            if t is _WeakArray:
                seen = 2
            elif t in trigger and not seen:
                seen = 1
            items.append(unwrap_tree(a))
    return tuple(items), seen


def unwrap_kwargs(kwargs: dict) -> dict:
    for v in kwargs.values():
        if type(v) not in _LEAF_TYPES:
            return {k: unwrap_tree(v) for k, v in kwargs.items()}
    return kwargs


_WRAP_TYPES = frozenset(np.dtype(c).type for c in "?bhilqBHILQefdgFDG")


def wrap_tree(x: Any) -> Any:
    """``x`` with every NumPy array and scalar (also inside lists, tuples,
    namedtuples, dicts and registered pytree classes) made an Array; Python
    numbers and other objects stay as they are."""
    t = type(x)
    if t is np.ndarray:
        # (a float0 array, the gradient of an integer input, stays NumPy's, as JAX's;
        # bfloat16 and the other ml_dtypes types, also of kind "V", have no fields)
        return x if x.dtype.fields is not None else wrap(x)
    if t in _WRAP_TYPES or t in DEVICE_TYPES:
        return wrap(x)
    if t is Array or t in _LEAF_TYPES or t is _WeakArray:
        return x
    if t is list:
        return [wrap_tree(v) for v in x]
    if t is tuple:
        return tuple([wrap_tree(v) for v in x])
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return t(*[wrap_tree(v) for v in x])
    if isinstance(x, dict):
        items = {k: wrap_tree(v) for k, v in x.items()}
        return _dict_like(x, items)
    if isinstance(x, np.ndarray):  # a subclass (np.matrix, masked): as NumPy's array
        return wrap(np.asarray(x))
    if isinstance(x, np.generic):
        return wrap(x)
    tree_util = HOOKS["pytree"]
    if t in tree_util._REGISTRY:
        leaves, treedef = tree_util.tree_flatten(x)
        return tree_util.tree_unflatten(treedef, [wrap_tree(v) for v in leaves])
    return x


def _host_arrays(given: Any, out: list, depth: int = 0) -> list:
    """The NumPy arrays (not Arrays) among ``given``: arguments, lists, tuples
    and dict values of them."""
    t = type(given)
    if t is np.ndarray:
        out.append(given)
    elif depth < 8 and (t is tuple or t is list):
        for v in given:
            _host_arrays(v, out, depth + 1)
    elif depth < 8 and t is dict:
        for v in given.values():
            _host_arrays(v, out, depth + 1)
    elif isinstance(given, np.ndarray):  # a subclass: np.memmap, a file's buffer
        out.append(given)
    return out


def _unshared(x: Any, hosts: list) -> Any:
    """``x`` with every NumPy array leaf that may share memory with one of
    ``hosts`` copied."""
    t = type(x)
    if t is np.ndarray or isinstance(x, np.ndarray):
        for h in hosts:
            if np.may_share_memory(x, h):
                return np.array(x)  # (a copy; of a subclass, a plain ndarray)
        return x
    if t is list:
        return [_unshared(v, hosts) for v in x]
    if t is tuple:
        return tuple([_unshared(v, hosts) for v in x])
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return t(*[_unshared(v, hosts) for v in x])
    if isinstance(x, dict):
        return _dict_like(x, {k: _unshared(v, hosts) for k, v in x.items()})
    return x


def owned(x: Any, given: Any) -> Any:
    """``x`` (a result, a pytree of NumPy buffers) with every buffer that may
    share memory with a NumPy array the caller passed in ``given`` copied: an
    Array must not change when the caller later writes into its array, as JAX
    copies host arrays to its device (fresh-user round 6: ``jnp.split(a, 2)``,
    ``lax.cond(True, f, g, a)`` viewed ``a``). Buffers of Arrays are never
    written, so views of them are kept. Every eager boundary that wraps
    results calls it (``Primitive.__call__``, eager ``lax``, :func:`wrap_owned`)."""
    hosts = None
    for a in given:  # (the arguments: one level inline, containers below)
        t = type(a)
        if t is np.ndarray:
            hosts = [a] if hosts is None else hosts + [a]
        elif t is tuple or t is list:
            for v in a:
                if type(v) is not int:  # (a shape or axes holds no array)
                    hosts = _host_arrays(a, hosts or [], 1)
                    break
        elif t is dict or isinstance(a, np.ndarray):  # (np.memmap)
            hosts = _host_arrays(a, hosts or [], 1)
    if not hosts:
        return x
    if type(x) is np.ndarray:
        for h in hosts:
            if np.may_share_memory(x, h):
                return x.copy()
        return x
    return _unshared(x, hosts)


def wrap_owned(x: Any, given: Any) -> Any:
    """:func:`wrap_tree` of :func:`owned`: the eager result of a function the
    caller gave ``given``, as Arrays of its own memory."""
    return wrap_tree(owned(x, given))


def on_buffers(fn: Any) -> Any:
    """``fn`` as generated code calls a user's function (a custom_jvp/custom_vjp
    function's primal, a bwd rule run as it is): its result's Arrays as buffers.
    Keeps ``fn``'s signature (``__wrapped__``)."""
    import functools

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        return unwrap_tree(fn(*args, **kwargs))

    call.__srcjax_buffers_of__ = fn  # (what it does to its arguments: fn's)
    return call


# -- x.at[idx] ---------------------------------------------------------------------------
class _IndexUpdateHelper:
    """``x.at``: ``x.at[idx]`` is an :class:`_IndexUpdateRef`."""

    __slots__ = ("array",)

    def __init__(self, array: Array) -> None:
        self.array = array

    def __getitem__(self, idx: Any) -> "_IndexUpdateRef":
        return _IndexUpdateRef(self.array, idx)

    def __repr__(self) -> str:
        return f"_IndexUpdateHelper({self.array!r})"


def _at_method(op: str, doc: str):
    """The ``x.at[idx].<op>(values, **kw)`` method of :class:`_IndexUpdateRef`."""

    def method(self, values: Any, **kw: Any) -> Array:
        return _at_update(op, self.array, self.index, values, **kw)

    method.__name__ = op
    method.__qualname__ = f"_IndexUpdateRef.{op}"
    method.__doc__ = doc
    return method


class _IndexUpdateRef:
    """``x.at[idx]``: JAX's functional updates (``jax.numpy.ndarray.at``). Each
    returns a new array; ``x`` is unchanged. Keywords as JAX's: ``mode``
    (``"promise_in_bounds"``, ``"clip"``, ``"drop"``, ``"fill"``; updates default to
    dropping out-of-bounds entries, ``get`` to clamping), ``fill_value`` (``get``
    with ``mode="fill"``), ``indices_are_sorted`` and ``unique_indices`` (hints,
    accepted and not needed)."""

    __slots__ = ("array", "index")

    def __init__(self, array: Array, index: Any) -> None:
        self.array = array
        self.index = index

    def get(self, **kw: Any) -> Array:
        """``x[idx]`` (out-of-bounds indices per ``mode``; ``fill_value``)."""
        return _at_get(self.array, self.index, **kw)

    set = _at_method("set", "``x`` with ``x[idx] = values`` (duplicate indices: one of them wins).")
    add = _at_method("add", "``x`` with ``x[idx] += values`` (duplicate indices accumulate).")
    subtract = _at_method("subtract", "``x`` with ``x[idx] -= values``.")
    multiply = mul = _at_method("multiply", "``x`` with ``x[idx] *= values``.")
    divide = _at_method("divide", "``x`` with ``x[idx] /= values``.")
    power = _at_method("power", "``x`` with ``x[idx] **= values``.")
    min = _at_method("min", "``x`` with ``x[idx] = minimum(x[idx], values)``.")
    max = _at_method("max", "``x`` with ``x[idx] = maximum(x[idx], values)``.")

    def apply(self, func: Any, **kw: Any) -> Array:
        """``x`` with ``x[idx] = func(x[idx])`` (``func`` elementwise)."""
        return _at_apply(self.array, self.index, func, **kw)

    def __repr__(self) -> str:
        return f"_IndexUpdateRef({self.array!r}, {self.index!r})"


# -- eager indexing and .at[...]: the primitives, which follow JAX out of bounds -------
# (the same implementations transformed code runs: srcjax/primitives/ad/oob.py)
_HINTS = ("indices_are_sorted", "unique_indices", "wrap_negative_indices", "out_sharding")


def _at_args(kw: dict, what: str) -> Any:
    for h in _HINTS:
        kw.pop(h, None)
    mode = kw.pop("mode", None)
    if kw:
        raise TypeError(f".at[...].{what}() got unexpected keyword arguments {sorted(kw)}")
    return HOOKS["check_mode"](mode, f".at[...].{what}()")


def _gather(b: Any, idx: Any, mode: Any = None, fill_value: Any = None) -> Array:
    """``b[idx]`` as JAX computes it (``ad.getitem``, ``ad.at_get``): out-of-bounds
    integer indices clamp (``mode=None``, ``"clip"``, ``"promise_in_bounds"``) or
    give ``fill_value`` (``"fill"``/``"drop"``: NaN, the integer minimum (maximum
    unsigned), True)."""
    if type(b) in DEVICE_TYPES:
        if mode is None and fill_value is None:
            return _device_prim("ad.getitem", b, idx)
        return _device_prim("ad.at_get", b, idx, mode, fill_value)
    if mode is None and fill_value is None:
        return wrap(_prim("ad.getitem")(b, idx))
    return wrap(_prim("ad.at_get")(b, idx, mode, fill_value))


def _at_update(op: str, x: Array, idx: Any, values: Any, **kw: Any) -> Array:
    """``x.at[idx].<op>(values)``: out-of-bounds entries dropped (JAX's default,
    ``"drop"``/``"fill"``/``"promise_in_bounds"``) or their indices clamped
    (``"clip"``)."""
    mode = _at_args(kw, op)
    b, idx, v = x._buf, unwrap_tree(idx), unwrap_tree(values)
    if type(b) in DEVICE_TYPES:  # on the GPU: the primitives there (jnp's functions)
        if op in ("divide", "power"):
            ones = _device_prim("ad.at_multiply", _numpy().ones_like(x)._buf, idx, v, mode=mode)
            return _device_prim("jnp.true_divide" if op == "divide" else "jnp.power", b, ones._buf)
        if op == "subtract":
            op, v = "add", _device_prim("jnp.negative", v)._buf
        return _device_prim(f"ad.at_{op}", b, idx, v, mode=mode)
    b = np.asarray(b)
    if op in ("divide", "power"):
        # x op (ones with values multiplied in at idx): JAX's definition
        ones = _prim("ad.at_multiply")(np.ones_like(b), idx, v, mode=mode)
        return wrap(_prim("jnp.true_divide" if op == "divide" else "jnp.power")(b, ones))
    if op == "subtract":
        op, v = "add", _prim("jnp.negative")(np.asarray(v))
    return wrap(_prim(f"ad.at_{op}")(b, idx, v, mode=mode))


def _at_get(x: Array, idx: Any, **kw: Any) -> Array:
    fill_value = kw.pop("fill_value", None)
    mode = _at_args(kw, "get")
    return _gather(x._buf, unwrap_tree(idx), mode, unwrap_tree(fill_value))


def _at_apply(x: Array, idx: Any, func: Any, **kw: Any) -> Array:
    mode = _at_args(kw, "apply")
    b, i = x._buf, unwrap_tree(idx)
    if type(b) not in DEVICE_TYPES:
        b = np.asarray(b)
    got = _gather(b, i, "clip")._buf
    return _at_update("set", x, idx, unwrap_tree(func(wrap(got))), mode=mode)
