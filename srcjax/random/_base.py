"""The argument checks of ``srcjax.random`` and the implementations of its key
functions (``PRNGKey``, ``key``, ``key_data``, ``wrap_key_data``, ``split``,
``fold_in``) and core samplers (``bits``, ``uniform``, ``normal``): NumPy code
over threefry2x32 (:mod:`._threefry`), bit for bit JAX's. Each ``_<name>``
takes one key; ``_<name>_b`` is vmap's version over a batch of keys."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .. import dtypes as _dt
from .._prng_key import _KNOWN, KeyDType, PRNGKeyArray, rewrap
from ..backends import numba_cpu
from ..config import config as _config
from . import _threefry as _tf

_U32 = np.dtype(np.uint32)
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


# =========================================================================== argument checks
def _partitionable() -> bool:
    return bool(_config.read("jax_threefry_partitionable"))


def _keys(key: Any, name: str) -> np.ndarray:
    """``key`` as a uint32 array of shape ``(..., 2)`` (a typed key array's
    data), or JAX's TypeError."""
    if isinstance(key, PRNGKeyArray):
        return key._base_array
    if not isinstance(key, (np.ndarray, np.generic)):
        raise TypeError(f"{name}: unexpected PRNG key type {type(key)}")
    key = np.asarray(key)
    if key.dtype != _U32:
        raise TypeError(
            f"{name}: invalid PRNG key data: expected key_data.dtype = uint32; "
            f"got dtype={key.dtype} (make keys with srcjax.random.PRNGKey)"
        )
    if key.shape[-1:] != (2,):
        raise TypeError(
            f"{name}: invalid PRNG key data: expected key_data.shape to end with (2,); "
            f"got shape={key.shape}"
        )
    return key


def _key(key: Any, name: str) -> np.ndarray:
    """A single key (raw data, shape ``(2,)``), or the errors JAX raises."""
    if isinstance(key, PRNGKeyArray):
        if key.shape != ():
            raise ValueError(
                f"{name} accepts a single key, but was given a key array of shape "
                f"{key.shape} != (). Use srcjax.vmap for batching."
            )
        return key._base_array
    key = _keys(key, name)
    if key.shape != (2,):
        raise ValueError(
            f"{name} accepts a single key, but was given a key array of shape "
            f"{key.shape} != (2,). Use srcjax.vmap for batching."
        )
    return key


def _shape(shape: Any, name: str) -> tuple:
    """A shape argument as a tuple of non-negative ints (an int ``n`` is ``(n,)``,
    as JAX accepts)."""
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        shape = (shape,)
    try:
        out = tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"{name}: shapes must be sequences of integers, got {shape!r}") from None
    if any(d < 0 for d in out):
        raise ValueError(f"{name}: negative dimension in shape {out}")
    return out


#: the samplers with float16 and bfloat16 paths (bit for bit)
_HALF_OK = ("uniform", "normal", "truncated_normal")


def _is_half(d: np.dtype) -> bool:
    """``d`` is float16 or ml_dtypes' bfloat16 (whose NumPy kind is ``"V"``).
    (``kind`` and ``itemsize`` first: ``dtype.name`` is a slow NumPy property,
    a third of a small ``random.normal`` inside jit.)"""
    if d.kind == "f":
        return d.itemsize == 2
    return d.kind == "V" and d.name == "bfloat16"


_F32_F64 = (np.dtype(np.float32), np.dtype(np.float64))


def _float_dtype(dtype: Any, name: str) -> np.dtype:
    d = _dt.canonicalize_dtype(dtype)
    if d.kind != "f" and d.name != "bfloat16":
        raise ValueError(f"dtype argument to `{name}` must be a float dtype, got {d}")
    if _is_half(d) and name in _HALF_OK:
        return d
    if d not in _F32_F64:
        raise NotImplementedError(
            f"srcjax.random.{name}: dtype {d} is not implemented (float32 and "
            "float64 are); JAX's rounding for it is not specified bit for bit"
        )
    return d


# =========================================================================== PRNGKey
def _seed_words(seed: Any, name: str) -> np.ndarray:
    """SPEC.md §3: the key words of an integer seed (scalar or array; the
    array form serves vmap). Returns ``seed.shape + (2,)`` uint32."""
    x64 = _dt.x64_enabled()
    if isinstance(seed, (bool, np.bool_)) or (
        isinstance(seed, np.ndarray) and seed.dtype == np.bool_
    ):
        seed = np.asarray(seed, np.int32)
    if isinstance(seed, int):
        if not _INT64_MIN <= seed <= _INT64_MAX:
            raise OverflowError("Python int too large to convert to C long")
        s = seed % 2**64
        hi = (s >> 32) if x64 else 0
        return np.array([hi, s & 0xFFFFFFFF], np.uint32)
    if not isinstance(seed, (np.ndarray, np.generic)) or seed.dtype.kind not in "iu":
        got = getattr(seed, "dtype", type(seed).__name__)
        raise TypeError(f"PRNG key seed must be an integer; got {got}")
    seed = np.asarray(seed)
    if x64 and seed.dtype.itemsize == 8:
        s = seed.astype(np.uint64)  # two's complement
        hi = (s >> np.uint64(32)).astype(np.uint32)
    else:
        s = seed.astype(np.int64) if seed.dtype.kind == "i" else seed.astype(np.uint64)
        hi = np.zeros(seed.shape, np.uint32)
    lo = (s & 0xFFFFFFFF).astype(np.uint32)
    return np.stack([hi, lo], axis=-1)


def _prng_key(seed):
    """A PRNG key from an integer seed (``jax.random.PRNGKey``; SPEC.md §3).

    Args:
        seed: a Python int in the int64 range, or an integer NumPy scalar / 0-d
            array.

    Returns:
        uint32 array of shape ``(2,)``: ``(0, seed mod 2**32)``; with
        ``jax_enable_x64`` a 64-bit seed gives ``(seed >> 32, seed & 0xFFFFFFFF)``
        (two's complement).

    Raises:
        OverflowError: a Python int outside the int64 range.
        TypeError: a non-integer seed, or an array seed of shape other than ``()``
            (use ``srcjax.vmap`` for batches of seeds).
    """
    if np.ndim(seed) != 0:
        raise TypeError(
            f"PRNGKey accepts a scalar seed, but was given an array of shape "
            f"{np.shape(seed)} != (). Use srcjax.vmap for batching"
        )
    return _seed_words(seed, "PRNGKey")


def _resolve(impl_spec: Any, name: str) -> str:
    """The PRNG implementation named by ``impl_spec`` (``None``, a name, a
    :class:`KeyDType`): TypeError/ValueError as JAX's for bad ones,
    NotImplementedError for JAX's other implementations."""
    if impl_spec is None:
        return "threefry2x32"
    if isinstance(impl_spec, KeyDType):
        return impl_spec.impl
    if not isinstance(impl_spec, str):
        raise TypeError(f"unrecognized type {type(impl_spec)} for specifying PRNG implementation.")
    if impl_spec not in _KNOWN:
        names = ", ".join(f'"{s}"' for s in _KNOWN)
        raise ValueError(
            f'unrecognized PRNG implementation "{impl_spec}". Did you mean one of: {names}?'
        )
    if impl_spec != "threefry2x32":
        raise NotImplementedError(
            f"srcjax.random.{name}: the PRNG implementation {impl_spec!r} is not "
            "implemented (srcjax has threefry2x32 only)"
        )
    return impl_spec


def _impl_name(impl: Any, name: str) -> str:
    return _resolve(None if impl == "threefry" else impl, name)


def _key_fn(seed, impl=None):
    """A typed PRNG key from an integer seed (``jax.random.key``; SPEC.md §3).

    Args:
        seed: as :func:`PRNGKey`.
        impl: ``None`` or ``"threefry2x32"`` (srcjax's only implementation).

    Returns:
        a :class:`PRNGKeyArray` of shape ``()`` and dtype ``key<fry>`` whose data
        (:func:`key_data`) is ``PRNGKey(seed)``.

    Raises:
        OverflowError, TypeError: as :func:`PRNGKey`.
        ValueError: an unknown ``impl``; NotImplementedError: another of JAX's.
    """
    impl = _impl_name(impl, "key")
    if np.ndim(seed) != 0:
        raise TypeError(
            f"key accepts a scalar seed, but was given an array of shape "
            f"{np.shape(seed)} != (). Use srcjax.vmap for batching"
        )
    return PRNGKeyArray(_seed_words(seed, "key"), impl)


def _key_data(keys):
    """The raw key data of ``keys`` (``jax.random.key_data``).

    Args:
        keys: a typed key array (shape ``S``), or raw keys (uint32 ``S + (2,)``,
            returned as they are).

    Returns:
        uint32 array of shape ``S + (2,)``.

    Raises:
        TypeError: neither a key array nor uint32 data whose last axis is 2.
    """
    return _keys(keys, "key_data")


def _wrap_key_data(key_data, impl=None):
    """A typed key array from raw key data (``jax.random.wrap_key_data``).

    Args:
        key_data: uint32 of shape ``S + (2,)``.
        impl: ``None`` or ``"threefry2x32"``.

    Returns:
        a :class:`PRNGKeyArray` of shape ``S``, dtype ``key<fry>``.

    Raises:
        TypeError: data that is not uint32 with a last axis of 2 (or already a key
            array, as JAX).
        ValueError: an unknown ``impl``; NotImplementedError: another of JAX's.
    """
    impl = _impl_name(impl, "wrap_key_data")
    if isinstance(key_data, PRNGKeyArray):
        raise TypeError("wrap_key_data: the data is already a key array (dtype key<fry>)")
    if isinstance(key_data, (int, float, list, tuple)):
        key_data = np.asarray(key_data)
    return PRNGKeyArray(_keys(key_data, "wrap_key_data").copy(), impl)


# =========================================================================== split / fold_in
def _split_num(num: Any) -> tuple:
    if isinstance(num, (int, np.integer)) and not isinstance(num, bool):
        return _shape((num,), "split")
    if isinstance(num, (tuple, list)):
        return _shape(num, "split")
    raise TypeError(f"split: num must be an int or a tuple of ints, got {num!r}")


def _split_b(key, num=2):
    """vmap's ``split``: keys ``(..., 2)`` -> ``(...,) + num + (2,)`` (internal)."""
    return rewrap(key, _tf.split(_keys(key, "split"), _split_num(num), _partitionable()))


def _split(key, num=2):
    """New keys derived from ``key`` (``jax.random.split``; SPEC.md §5).

    Args:
        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).
        num: the number of keys (an int), or their shape (a tuple of ints).

    Returns:
        keys of the kind given: typed keys of shape ``(num,)`` (``num`` for a
        shape), or raw uint32 of shape ``(num, 2)`` (``num + (2,)``). With the
        default partitionable scheme key ``i`` is ``fold_in(key, i)``; the legacy
        scheme (``jax_threefry_partitionable=False``) gives other keys that
        depend on ``num``.

    Raises:
        TypeError, ValueError: an invalid key (wrong dtype or shape, or a batch
            of keys: use ``srcjax.vmap``); a ``num`` that is not an int or a tuple
            of non-negative ints.
    """
    return rewrap(key, _tf.split(_key(key, "split"), _split_num(num), _partitionable()))


def _fold_data(data: Any) -> np.ndarray:
    if isinstance(data, bool):
        data = int(data)
    if isinstance(data, int):
        if not 0 <= data < 2**32:
            raise OverflowError(f"Python integer {data} out of bounds for uint32")
        return np.asarray(data, np.uint32)
    arr = np.asarray(data)
    if arr.dtype.kind not in "iub":
        raise TypeError(
            f"fold_in: data must be an integer (srcjax does not convert {arr.dtype} data), "
            f"got {data!r}"
        )
    return arr.astype(np.uint32)  # modulo 2**32, as JAX converts integer arrays


def _fold_in_b(key, data):
    """vmap's ``fold_in``: keys ``(..., 2)`` and integer ``data`` of shape ``...``
    -> keys ``(..., 2)`` (internal)."""
    return rewrap(key, _tf.fold_in(_keys(key, "fold_in"), _fold_data(data)))


def _fold_in(key, data):
    """A new key from ``key`` and an integer ``data`` (``jax.random.fold_in``;
    SPEC.md §4): ``threefry2x32(key, (0, data))``, the same in both schemes.

    Args:
        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).
        data: an integer scalar: a Python int in ``[0, 2**32)``, or an integer
            NumPy scalar / 0-d array (converted to uint32 modulo ``2**32``).

    Returns:
        a key of the kind given (typed, or raw uint32 of shape ``(2,)``).

    Raises:
        OverflowError: a Python int outside ``[0, 2**32)``.
        TypeError: an invalid key; array ``data`` of shape other than ``()``
            (use ``srcjax.vmap``); floating-point ``data`` (JAX truncates it;
            srcjax refuses).
        ValueError: a batch of keys (use ``srcjax.vmap``).
    """
    raw = _key(key, "fold_in")
    if np.ndim(data) != 0:
        raise TypeError(
            f"fold_in accepts a scalar, but was given an array of shape {np.shape(data)} "
            "!= (). Use srcjax.vmap for batching."
        )
    return rewrap(key, _tf.fold_in(raw, _fold_data(data)))


# =========================================================================== bits / uniform / normal
def _bits_dtype(dtype: Any) -> np.dtype:
    d = _dt.default_uint() if dtype is None else _dt.canonicalize_dtype(dtype)
    if d.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {d}")
    return d


def _bits_b(key, shape=(), dtype=None):
    """vmap's ``bits``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."""
    d = _bits_dtype(dtype)
    return _tf.bits(_keys(key, "bits"), _shape(shape, "bits"), 8 * d.itemsize, _partitionable())


def _bits(key, shape=(), dtype=None):
    """Uniformly distributed random bits (``jax.random.bits``; SPEC.md §6).

    Args:
        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).
        shape: the result's shape (a tuple of ints; an int ``n`` means ``(n,)``).
        dtype: an unsigned integer dtype; default uint32 (uint64 with
            ``jax_enable_x64``).

    Returns:
        array of ``shape`` and ``dtype``.

    Raises:
        ValueError: a dtype that is not an unsigned integer; a batch of keys.
        TypeError: an invalid key or shape.
    """
    key = _key(key, "bits")
    d = _bits_dtype(dtype)
    return _tf.bits(key, _shape(shape, "bits"), 8 * d.itemsize, _partitionable())


def _broadcast_param(v: Any, shape: tuple, dtype: np.dtype, name: str) -> np.ndarray:
    if type(v) is float:  # (a Python float: a scalar, rounded to dtype once, as astype)
        return np.asarray(v, dtype)
    a = np.asarray(v)
    if a.dtype.kind == "c":
        raise TypeError(f"{name}: minval/maxval must be real, got {a.dtype}")
    a = _dt.canonicalize_value(a) if isinstance(v, (np.ndarray, np.generic)) else a
    a = a.astype(dtype)
    try:
        out = np.broadcast_shapes(shape, a.shape)
    except ValueError:
        out = None
    if out != shape or a.ndim > len(shape):
        raise ValueError(
            f"{name}: minval/maxval shapes must broadcast to the shape argument "
            f"{shape}, got {a.shape}"
        )
    return a


def _uniform_from(keys, shape, dtype, minval, maxval, name="uniform"):
    d = _float_dtype(dtype, name)
    shape = _shape(shape, name)
    lo = _broadcast_param(minval, shape, d, name)
    hi = _broadcast_param(maxval, shape, d, name)
    if d == np.float32:
        w = _tf.bits(keys, shape, 32, _partitionable())
        return _tf.uniform32(w, lo, hi)
    if _is_half(d):
        return _tf.uniform_half(_half_words(keys, shape, d), lo, hi)
    w = _tf.bits(keys, shape, 64, _partitionable())
    return _tf.uniform64(w, lo, hi)


def _half_words(keys, shape, d):
    """The random words of a float16 (16-bit) or bfloat16 uniform: JAX draws 8
    bits when the mantissa has fewer than 8 bits (bfloat16's 7), widened to uint16."""
    if d == np.float16:
        return _tf.bits(keys, shape, 16, _partitionable())
    return _tf.bits(keys, shape, 8, _partitionable()).astype(np.uint16)


def _uniform_b(key, shape=(), dtype=float, minval=0.0, maxval=1.0):
    """vmap's ``uniform``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."""
    return _uniform_from(_keys(key, "uniform"), shape, dtype, minval, maxval)


def _uniform(key, shape=(), dtype=float, minval=0.0, maxval=1.0):
    """Uniform random values in ``[minval, maxval)`` (``jax.random.uniform``;
    SPEC.md §7, §8).

    ``f = (bits >> 9) * 2**-23`` and ``max(minval, fma(f, maxval - minval,
    minval))`` with one float32 rounding each, as XLA:CPU computes it (the fused
    multiply-add is emulated exactly). float64 uses 52 mantissa bits of 64-bit
    random words and a float64 fused multiply-add.

    Args:
        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).
        shape: the result's shape (a tuple of ints; an int ``n`` means ``(n,)``).
        dtype: float32, float64, float16 or bfloat16; default the default float
            dtype (float32, or float64 with ``jax_enable_x64``).
        minval, maxval: scalars or arrays broadcasting to ``shape``.

    Returns:
        array of ``shape`` and ``dtype``.

    Raises:
        ValueError: a non-float dtype; ``minval``/``maxval`` that do not broadcast
            to ``shape``; a batch of keys (use ``srcjax.vmap``).
        TypeError: an invalid key or shape.

    float16 draws 16-bit words (``f`` from their top 10 bits), bfloat16 8-bit
    words (``f`` from their top 7 bits); each operation is rounded in the
    dtype, as XLA:CPU without native float16 arithmetic (bit for bit with JAX
    for bfloat16; see :func:`._threefry.uniform_half` for float16).

    Not differentiable in ``minval``/``maxval`` in srcjax (JAX is): asking for
    that derivative raises an error.
    """
    return _uniform_from(_key(key, "uniform"), shape, dtype, minval, maxval)


def _load_kernels():
    """The compiled kernels (srcjax.random._numba; Numba is available)."""
    from . import _numba

    return _numba.load()


_tf.KERNELS.set_loader(numba_cpu.when_available(_load_kernels))


def _normal_from(keys, shape, dtype):
    d = _float_dtype(dtype, "normal")
    if _is_half(d):
        return _tf.normal_half(_half_words(keys, _shape(shape, "normal"), d), d)
    if d == np.float64:
        # JAX's recipe on its (bit-exact) float64 uniform in (-1, 1); SciPy's erfinv
        # stands in for XLA's float64 erf_inv, so values agree to about 1 ulp, not bit
        # for bit (float32 and float16 draws are bit for bit)
        from ..primitives.special import erfinv

        lo = np.nextafter(np.float64(-1.0), np.float64(0.0))
        u = _uniform_from(keys, shape, np.float64, lo, 1.0, "normal")
        return np.float64(np.sqrt(2.0)) * erfinv.impl(u)
    shape = _shape(shape, "normal")
    part = _partitionable()
    k = _tf.kernels() if part else None
    if k is not None and _tf._size(shape) < 2**32:
        return k.normal_keys(keys, shape)  # bits and transform in one compiled pass
    return _tf.normal32(_tf.bits(keys, shape, 32, part))


def _normal_b(key, shape=(), dtype=float):
    """vmap's ``normal``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."""
    return _normal_from(_keys(key, "normal"), shape, dtype)


def _normal(key, shape=(), dtype=float):
    """Standard normal random values (``jax.random.normal``; SPEC.md §9).

    ``sqrt(2) * erfinv(u)`` for ``u`` uniform in ``(-1, 1)``, with XLA:CPU's
    float32 ``erf_inv``/``log1p``/``log`` reproduced bit for bit (their fused
    multiply-adds are emulated exactly in float64).

    Args:
        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).
        shape: the result's shape (a tuple of ints; an int ``n`` means ``(n,)``).
        dtype: float32 (the default float dtype unless ``jax_enable_x64``),
            float16 or bfloat16 (a uniform in that dtype, float32 ``erf_inv``
            rounded to it, a product in it),
            or float64 (JAX's float64 uniform bit for bit; SciPy's ``erfinv``
            for XLA's, so within about 1 ulp of JAX's values).

    Returns:
        array of ``shape`` and ``dtype``.

    Raises:
        ValueError: a non-float dtype; a batch of keys (use ``srcjax.vmap``).
        TypeError: an invalid key or shape.
    """
    return _normal_from(_key(key, "normal"), shape, dtype)
