"""JAX's top-level helpers that have nothing to transform on a NumPy backend.

- :func:`block_until_ready`: srcjax computes eagerly, so results are ready.
- :func:`device_put`: arrays live in host memory; this canonicalizes them.
- :func:`checkpoint` (``remat``): rematerialization only trades memory for
  compute in JAX's reverse mode; srcjax's reverse mode already records only what
  the adjoint reads, so the function is returned as it is.

Semantics follow the JAX API reference (https://docs.jax.dev/en/latest/jax.html).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

__all__ = ["block_until_ready", "device_put", "checkpoint", "remat"]


def block_until_ready(x: Any) -> Any:
    """``x`` itself (``jax.block_until_ready``): a pytree of arrays, any shapes and
    dtypes. srcjax runs synchronously, so there is nothing to wait for."""
    return x


def device_put(x: Any, device: Any = None) -> Any:
    """``x`` with every leaf converted as ``jnp.asarray`` converts it
    (``jax.device_put``): Python and NumPy numbers and arrays of any shape become
    arrays of JAX's canonical dtypes (float32/int32 unless x64). ``device`` is
    accepted for compatibility; everything lives in host memory.

    Raises OverflowError for integers that do not fit int32 while x64 is off."""
    from . import numpy as jnp
    from .tree_util import tree_map

    return tree_map(jnp.asarray, x)


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
