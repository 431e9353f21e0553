"""``jnp.int32``, ``jnp.float32`` ...: JAX's scalar types
(https://docs.jax.dev/en/latest/_autosummary/jax.numpy.int32.html).

Each is a class (of metaclass :class:`_ScalarMeta`) that stands for its NumPy
scalar type wherever a dtype is expected (``x.astype(jnp.int32)``,
``jnp.zeros(3, jnp.float16)``, ``np.dtype(jnp.int32)``, ``t == np.int32``,
``isinstance(np.int32(1), jnp.int32)``), and that, called, returns a strongly
typed 0-d ``srcjax.Array`` of its dtype, as JAX's: ``jnp.int32(7)`` is
``Array(7, dtype=int32)`` (NumPy's ``np.int32(7)`` would be a NumPy scalar).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._array import HOOKS  # (HOOKS["numpy"] is srcjax.numpy, set when it is imported)


class _ScalarMeta(type):
    """The metaclass of ``jnp.int32`` and its kind: equal (and hashing equal) to
    the NumPy scalar type it stands for; ``dtype`` is its ``np.dtype``."""

    dtype: np.dtype

    def __hash__(cls) -> int:
        return hash(cls.dtype.type)

    def __eq__(cls, other: Any) -> bool:
        return cls is other or cls.dtype.type == other

    def __ne__(cls, other: Any) -> bool:
        return not _ScalarMeta.__eq__(cls, other)

    def __call__(cls, x: Any = 0) -> Any:
        """``jnp.asarray(x, dtype)``: a strongly typed Array (of ``x``'s shape)."""
        return HOOKS["numpy"].asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance: Any) -> bool:
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls) -> str:
        return f"<class 'srcjax.numpy.{cls.__name__}'>"


def scalar_type(np_type: Any) -> _ScalarMeta:
    """The ``jnp`` scalar type standing for NumPy's ``np_type``."""
    name = np.dtype(np_type).name
    return _ScalarMeta(name, (object,), {"dtype": np.dtype(np_type), "__module__": "srcjax.numpy"})
