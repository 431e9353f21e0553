"""``jax.random.key_impl``, ``key_dtype`` and ``clone`` for srcjax's keys.

srcjax's keys are raw uint32 arrays ``(..., 2)`` of the threefry2x32 PRNG
(``PRNGKey``, ``key``, ``split`` ... all return them), so every valid key has
the implementation ``"threefry2x32"``, and no array has the key dtype
``key<fry>``: :func:`key_dtype` returns a descriptor of it (equal to another
one of the same implementation, printed as JAX prints it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _keys, _prim

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

    srcjax has no typed key arrays (its keys are raw uint32), so this is a
    descriptor only: ``name`` (``"key<fry>"``), ``impl`` (``"threefry2x32"``),
    equality and hashing by implementation, ``str``/``repr`` as JAX's."""

    __slots__ = ("impl",)

    def __init__(self, impl: str) -> None:
        self.impl = impl

    @property
    def name(self) -> str:
        return f"key<{_KNOWN[self.impl]}>"

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyDType) and other.impl == self.impl

    def __hash__(self) -> int:
        return hash(("srcjax.KeyDType", self.impl))


def _resolve(impl_spec: Any, name: str) -> str:
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
        a :class:`KeyDType` printed ``key<fry>``. srcjax's keys are raw uint32
        arrays, so no srcjax array has this dtype.

    Raises:
        ValueError: an unknown implementation name (JAX's message).
        TypeError: an ``impl_spec`` that is not a string or a key dtype.
        NotImplementedError: another of JAX's implementations (``"rbg"``,
            ``"philox4x32"`` ...).
    """
    return KeyDType(_resolve(impl_spec, "key_dtype"))


def _clone(key: Any) -> Any:
    """A copy of ``key`` for reuse (``jax.random.clone``).

    JAX's clone only matters to its key-reuse checker, which srcjax does not
    have: as in JAX, the value is returned unchanged (any array; no check).

    Args:
        key: a key (uint32, shape ``(..., 2)``), or any array.

    Returns:
        ``key``'s value, same shape and dtype (a new array for a NumPy array).
    """
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
