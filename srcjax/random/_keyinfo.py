"""``jax.random.key_impl``, ``key_dtype`` and ``clone`` for srcjax's keys.

srcjax's keys are typed key arrays (dtype ``key<fry>``, from ``random.key``) or
raw uint32 arrays ``(..., 2)`` (``PRNGKey``) of the threefry2x32 PRNG, so every
valid key has the implementation ``"threefry2x32"``. :class:`KeyDType` is the
dtype of typed keys (equal to another one of the same implementation, printed
as JAX prints it; a sub-dtype of ``srcjax.dtypes.prng_key``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._prng_key import KeyDType, PRNGKeyArray
from ._base import _keys, _resolve
from ._register import _prim


def _key_impl(keys: Any) -> str:
    """The PRNG implementation of ``keys`` (``jax.random.key_impl``).

    Args:
        keys: a key or a batch of keys: uint32 of shape ``(..., 2)``.

    Returns:
        the string ``"threefry2x32"`` (srcjax's only implementation; JAX also
        returns this name for its default keys, raw or typed).

    Raises:
        TypeError: not a uint32 array whose last axis has length 2.
    """
    _keys(keys, "key_impl")
    return "threefry2x32"


def _key_dtype(impl_spec: Any = None) -> KeyDType:
    """The dtype of typed keys of a PRNG implementation (``jax.random.key_dtype``).

    Args:
        impl_spec: ``None`` (the default implementation), ``"threefry2x32"`` or a
            :class:`KeyDType`.

    Returns:
        a :class:`KeyDType` printed ``key<fry>`` (the dtype of ``random.key(0)``).

    Raises:
        ValueError: an unknown implementation name (JAX's message).
        TypeError: an ``impl_spec`` that is not a string or a key dtype.
        NotImplementedError: another of JAX's implementations (``"rbg"``,
            ``"philox4x32"`` ...).
    """
    return KeyDType(_resolve(impl_spec, "key_dtype"))


def _clone(key: Any) -> Any:
    """A copy of ``key`` for reuse (``jax.random.clone``).

    It tells srcjax's static key-reuse check that using ``key`` again is meant
    (a clone's consumption does not consume ``key``); the value is ``key``'s.

    Args:
        key: a key (typed, or raw uint32 ``(..., 2)``), or any array.

    Returns:
        ``key``'s value, same kind, shape and dtype (a new array for a NumPy array).
    """
    if isinstance(key, PRNGKeyArray):
        return key.copy()
    return np.array(key, copy=True) if isinstance(key, np.ndarray) else key


def _ks(rng):
    return np.array(rng.integers(0, 2**32, 2), np.uint32)


key_impl = _prim("random.key_impl", _key_impl, lambda rng: [((_ks(rng),), {})])
key_dtype = _prim("random.key_dtype", _key_dtype, lambda rng: [((), {})])
clone = _prim("random.clone", _clone, lambda rng: [((_ks(rng),), {})])
key_impl.def_batch(lambda c: (c.rebuild(), False))  # one implementation for every example
key_dtype.def_batch(lambda c: (c.rebuild(), False))
clone.def_batch(lambda c: c.rebuild())  # elementwise in the keys: the batch as it is


__all__ = ["KeyDType", "key_impl", "key_dtype", "clone"]
