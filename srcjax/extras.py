"""JAX's top-level helpers that have nothing to transform on a NumPy backend.

- :func:`block_until_ready`: srcjax computes eagerly, so results are ready.
- :func:`device_put`: arrays live in host memory; this canonicalizes them.
- :func:`checkpoint` (``remat``): rematerialization only trades memory for
  compute in JAX's reverse mode; srcjax's reverse mode already records only what
  the adjoint reads, so the function is returned as it is.
- :class:`Array`, :class:`ShapeDtypeStruct`, :func:`eval_shape`, :func:`devices`
  and friends: the names JAX code uses in annotations and setup code.

Semantics follow the JAX API reference (https://docs.jax.dev/en/latest/jax.html).
"""

from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from ._array import Array
from .backends._devices import CpuDevice as Device  # (the host CPU; GPUs: srcjax.devices)

__all__ = [
    "block_until_ready",
    "device_put",
    "checkpoint",
    "remat",
    "Array",
    "ShapeDtypeStruct",
    "eval_shape",
    "Device",
]


class ShapeDtypeStruct:
    """A shape and a dtype without data (``jax.ShapeDtypeStruct``): what
    :func:`eval_shape` returns, and what it accepts in place of an array.

    ``shape`` is a tuple of ints, ``dtype`` anything ``numpy.dtype`` accepts;
    ``ndim`` and ``size`` follow. Two are equal when shape and dtype are."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: Sequence[int], dtype: Any) -> None:
        self.shape = tuple(int(d) for d in shape)
        self.dtype = np.dtype(dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, ShapeDtypeStruct)
            and self.shape == other.shape
            and self.dtype == other.dtype
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype))

    def __repr__(self) -> str:
        return f"ShapeDtypeStruct(shape={self.shape}, dtype={self.dtype.name})"


def eval_shape(fun: Callable, *args: Any, **kwargs: Any) -> Any:
    """The shapes and dtypes of ``fun(*args, **kwargs)`` as a pytree of
    :class:`ShapeDtypeStruct` (``jax.eval_shape``).

    Arguments are pytrees whose leaves are arrays, NumPy or Python scalars or
    :class:`ShapeDtypeStruct`; they are canonicalized as ``jnp.asarray`` does
    (float32/int32 without x64). Difference from JAX: srcjax does not trace, so
    ``fun`` runs once on stand-in values of the given shapes (side effects such as
    ``print`` happen; a loop whose trip count depends on the values runs as it
    would on those values: seeded normal floats, zero integers). Output leaves
    that are not arrays (Python numbers) are described by their canonical
    dtype, as JAX does.

    Raises whatever ``fun`` raises on those inputs."""
    from .primitives.creation import asarray, zeros  # (jnp.asarray, jnp.zeros)
    from .tree_util import tree_map

    rng = np.random.default_rng(0)

    def filled(shape, dtype):
        # seeded normal values, not zeros: inv/solve of a zero matrix would raise
        dt = np.dtype(dtype)
        if dt.kind in "fc":
            return asarray(rng.standard_normal(shape).astype(dt))
        return zeros(shape, dt)

    def concrete(x: Any) -> Any:
        if isinstance(x, ShapeDtypeStruct):
            return filled(x.shape, x.dtype)
        if hasattr(x, "shape") and hasattr(x, "dtype") and not isinstance(x, np.ndarray):
            return filled(tuple(x.shape), x.dtype)  # another library's abstract value
        a = asarray(x)
        return filled(a.shape, a.dtype)

    with np.errstate(all="ignore"):
        out = fun(*tree_map(concrete, args), **tree_map(concrete, kwargs))

    def describe(y: Any) -> ShapeDtypeStruct:
        a = asarray(y)
        return ShapeDtypeStruct(a.shape, a.dtype)

    return tree_map(describe, out)


# devices, local_devices, device_count, default_backend, device_get: srcjax/devices.py


def block_until_ready(x: Any) -> Any:
    """``x`` itself (``jax.block_until_ready``): a pytree of arrays, any shapes and
    dtypes. srcjax runs synchronously, so there is nothing to wait for."""
    return x


def device_put(x: Any, device: Any = None) -> Any:
    """``x`` with every leaf converted as ``jnp.asarray`` converts it
    (``jax.device_put``): Python and NumPy numbers and arrays of any shape become
    arrays of JAX's canonical dtypes (float32/int32 unless x64), in host memory
    (``device`` is ignored: :func:`srcjax.devices.device_put`, the public one,
    calls this for host leaves and moves them to a GPU itself).

    Raises OverflowError for integers that do not fit int32 while x64 is off."""
    from .primitives.creation import asarray
    from .tree_util import tree_map

    return tree_map(asarray, x)


def checkpoint(
    fun: Optional[Callable] = None,
    *,
    prevent_cse: bool = True,
    policy: Any = None,
    static_argnums: Any = (),
) -> Any:
    """``fun`` unchanged (``jax.checkpoint`` / ``jax.remat``), usable as
    ``@checkpoint`` or ``@checkpoint(policy=...)``. Values and derivatives are the
    same as without it; JAX uses it to save memory in reverse mode, which srcjax's
    reverse mode does by recording only what the adjoint sweep reads."""
    if fun is None:
        return lambda f: f
    return fun


# inside transformed code, checkpoint(f)(x) is f(x), as jit(f)(x) is (the flag the
# normalizer reads for both)
checkpoint.__srcjax_jit__ = True  # type: ignore[attr-defined]
remat = checkpoint
