"""``pmap``: JAX's SPMD map, run on devices emulated on the host.

srcjax's CPU backend has one device, the host (``srcjax.devices()``). ``pmap``
keeps JAX's semantics, one program per position of the mapped axis, with the
collectives of :mod:`srcjax.lax` (``psum``, ``pmean``, ``all_gather``,
``ppermute`` ...) combining them, and runs all positions at once as one
batched program: ``pmap(f, axis_name="i")`` is ``jit(vmap(f, axis_name="i"))``.
So the mapped axis may be longer than the number of devices (JAX would refuse),
and results are plain arrays. The multi-process backend over MPI that DESIGN.md
describes is not built yet.

Semantics: https://docs.jax.dev/en/latest/_autosummary/jax.pmap.html
"""

from __future__ import annotations

import functools
from typing import Any, Callable, Dict, Optional, Sequence, Union

from .errors import TransformValueError
from .jit_api import jit
from .vmap_api import vmap

__all__ = ["pmap"]


def _as_tuple(x: Union[int, Sequence[int], None]) -> tuple:
    if x is None:
        return ()
    if isinstance(x, int):
        return (x,)
    return tuple(x)


def pmap(
    fun: Optional[Callable] = None,
    axis_name: Optional[Any] = None,
    *,
    in_axes: Any = 0,
    out_axes: Any = 0,
    static_broadcasted_argnums: Union[int, Sequence[int]] = (),
    devices: Optional[Sequence[Any]] = None,
    backend: Optional[str] = None,
    axis_size: Optional[int] = None,
    donate_argnums: Union[int, Sequence[int]] = (),
    global_arg_shapes: Any = None,
) -> Callable:
    """Parallel map over a leading axis (``jax.pmap``), emulated on the host.

    ``pmap(f)(xs)`` equals ``stack([f(x) for x in xs])`` where each call is one
    "device"; collectives named ``axis_name`` inside ``f`` combine the devices'
    values as in JAX. Usable as a decorator, with or without arguments.

    Args:
        fun: the per-device function (its source must be available).
        axis_name: the name collectives use for the mapped axis.
        in_axes, out_axes, axis_size: as :func:`srcjax.vmap` (an int, None or
            a pytree prefix per argument/output).
        static_broadcasted_argnums: positional arguments passed unmapped and
            static (hashable; a new value specializes again), as in JAX.
        devices, backend, global_arg_shapes: accepted for compatibility;
            everything runs on the host.
        donate_argnums: as :func:`srcjax.jit`.

    Returns:
        The mapped function: arrays with the mapped axis at ``out_axes``,
        dtypes as ``f`` gives them.

    Raises:
        ValueError: as :func:`srcjax.vmap` (inconsistent mapped sizes ...).
        NameError: a collective names an axis that no enclosing
            ``pmap``/``vmap`` maps.
    """
    if fun is None or not callable(fun):
        if fun is not None:  # pmap("i") is not JAX's form either
            raise TransformValueError("pmap expects a function as its first argument")
        return functools.partial(
            pmap,
            axis_name=axis_name,
            in_axes=in_axes,
            out_axes=out_axes,
            static_broadcasted_argnums=static_broadcasted_argnums,
            devices=devices,
            backend=backend,
            axis_size=axis_size,
            donate_argnums=donate_argnums,
            global_arg_shapes=global_arg_shapes,
        )
    del devices, backend, global_arg_shapes
    static = _as_tuple(static_broadcasted_argnums)
    donate = _as_tuple(donate_argnums)
    if not static:
        mapped = vmap(
            fun, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name, axis_size=axis_size
        )
        return jit(mapped, donate_argnums=donate)
    # static arguments are unmapped: in_axes gets None at their positions, which
    # needs the number of arguments, known at the call
    built: Dict[int, Callable] = {}

    @functools.wraps(fun)
    def call(*args: Any) -> Any:
        n = len(args)
        fn = built.get(n)
        if fn is None:
            pos = {i + n if i < 0 else i for i in static}
            if isinstance(in_axes, (list, tuple)):
                axes = list(in_axes)
                # JAX's in_axes lists the non-static arguments only when shorter
                if len(axes) == n - len(pos):
                    it = iter(axes)
                    axes = [None if i in pos else next(it) for i in range(n)]
            else:
                axes = [None if i in pos else in_axes for i in range(n)]
            axes = tuple(None if i in pos else a for i, a in enumerate(axes))
            mapped = vmap(
                fun, in_axes=axes, out_axes=out_axes, axis_name=axis_name, axis_size=axis_size
            )
            fn = built[n] = jit(mapped, static_argnums=tuple(sorted(pos)), donate_argnums=donate)
        return fn(*args)

    return call


pmap.__srcjax_factory__ = True  # pmap(f)(x) inside transformed code: inlined as vmap
