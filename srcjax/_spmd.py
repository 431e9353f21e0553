"""SPMD runtime: ``pmap``'s devices as threads, and the collectives between them.

``pmap`` runs its per-device program once per device, each on its own worker
thread (NumPy releases the GIL inside its kernels, so the devices compute at
the same time). A thread knows its place through :func:`bound`: for each axis
name of the enclosing ``pmap`` calls, a :class:`Group` (the devices of that
axis) and this device's index in it. The collective primitives
(:mod:`srcjax.primitives.collectives`) call :meth:`Group.exchange`, an
all-to-all of Python objects through shared slots and a barrier, and combine
what they receive in device order, so every device computes the same result
and a psum over devices gives the numbers ``jnp.sum(..., axis=0)`` gives over
the stacked values (vmap's rewrite of the same collective).

A device whose program raises breaks the barrier, so the others stop with it
instead of waiting forever; ``run`` then raises the first device's error.

Semantics: https://docs.jax.dev/en/latest/_autosummary/jax.pmap.html
"""

from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

__all__ = ["Group", "bound", "run"]

#: ``tree_util.tree_map``, installed by :mod:`srcjax.tree_util` when it is imported
#: (the collectives combine pytrees; this module is below the pytree layer)
tree_map: Optional[Callable[..., Any]] = None

#: seconds a device waits at a collective for the others before the run fails
TIMEOUT_S = 600.0


class Group:
    """The devices of one mapped axis: ``size`` of them, exchanging values at
    collectives (all devices of the axis must call the same collectives in the
    same order, as in JAX)."""

    def __init__(self, size: int, remote: Any = None, local_size: Optional[int] = None) -> None:
        #: the devices of the axis over all processes
        self.size = size
        #: this process's devices: global indices offset .. offset + local_size - 1
        self.local_size = size if local_size is None else local_size
        self.offset = 0 if remote is None else remote.rank * self.local_size
        self._slots: List[Any] = [None] * self.local_size
        self._barrier = threading.Barrier(self.local_size, timeout=TIMEOUT_S)
        #: the cross-process part (:class:`srcjax.distributed._Remote`), or None
        self.remote = remote
        self._shared: Any = None

    def exchange(self, index: int, value: Any) -> List[Any]:
        """Every device's ``value``, in global device order (an all-gather of
        objects; locally nothing is copied: arrays are shared read-only; across
        processes, arrays by MPI ``Allgather``)."""
        if self.remote is None:
            self._slots[index] = value
            self._wait()
            out = list(self._slots)
            self._wait()  # (everyone has read before the slots are written again)
            return out
        return self._across(index, value, lambda vals: self.remote.exchange(vals))

    def reduce(self, index: int, value: Any, local: Callable, how: str) -> Any:
        """``local(values of this process's devices)`` combined over the
        processes by ``how`` ("sum", "max", "min"; MPI ``Allreduce``): the same
        result on every device. Only for groups with a ``remote``."""
        return self._across(index, value, lambda vals: self.remote.reduce(local(vals), how))

    def combine(self, index: int, value: Any, fn: Callable[[List[Any]], Any]) -> Any:
        """``fn(values of this process's devices)``, computed once (by its first
        device, which alone calls MPI) and returned to all of them."""
        return self._across(index, value, fn)

    def _across(self, index: int, value: Any, combine: Callable[[List[Any]], Any]) -> Any:
        """This process's values gathered, then ``combine``d once (by its first
        device, which alone talks to MPI) for all of its devices."""
        li = index - self.offset
        self._slots[li] = value
        self._wait()
        if li == 0:
            try:
                self._shared = combine(list(self._slots))
            except BaseException:
                self.abort()
                raise
        self._wait()
        out = self._shared
        self._wait()
        return out

    def _wait(self) -> None:
        try:
            self._barrier.wait()
        except threading.BrokenBarrierError:
            raise _Aborted() from None

    def abort(self) -> None:
        self._barrier.abort()


class _Aborted(Exception):
    """Another device of the group failed: this one stops too."""


_LOCAL = threading.local()


def bound(axis_name: Any) -> Optional[Tuple[Group, int]]:
    """``(group, index)`` of this thread for the pmap axis ``axis_name``, or None
    outside a pmap of that name."""
    env: Dict[Any, Tuple[Group, int]] = getattr(_LOCAL, "axes", None) or {}
    return env.get(axis_name)


def threads(default: int) -> int:
    """Worker threads this thread's fused regions may use: a pmap device's
    share of the cores, ``default`` (the whole pool) elsewhere."""
    n = getattr(_LOCAL, "threads", None)
    return default if n is None else n


def take_place(shape: tuple, dtype: Any) -> Any:
    """A buffer of ``shape`` and ``dtype`` set aside for this device's output
    (its row of pmap's stacked output), handed out once, or None. The
    runtime's ``empty`` asks first, so an output usually lands in place; pmap
    checks where each output is and copies the others (a place handed to an
    intermediate costs nothing but that copy)."""
    places = getattr(_LOCAL, "places", None)
    if places:
        for j, (shp, dt, view) in enumerate(places):
            if shp == shape and dt == dtype:
                del places[j]
                return view
    return None


def inside() -> bool:
    """Whether this thread is a pmap device."""
    return bool(getattr(_LOCAL, "axes", None))


def run(
    program: Callable[..., Any],
    per_device_args: Sequence[tuple],
    axis_name: Any,
    remote: Any = None,
    cores: Optional[int] = None,
    collect: Optional[Callable[[List[Any]], Optional[Callable[[int, Any], None]]]] = None,
    places: Optional[Sequence[Optional[list]]] = None,
    enter: Optional[Callable[[int], Any]] = None,
) -> List[Any]:
    """Run ``program(*per_device_args[i])`` for every device ``i`` at once, one
    thread each (device 0 on the calling thread), with ``axis_name`` bound to
    the group of all of them -- with ``remote`` (an MPI communicator wrapper,
    :mod:`srcjax.distributed`), of all of them in every process, this
    process's devices numbered from ``rank * len(per_device_args)``. Returns
    the results in device order; raises the error of the first device that
    failed. ``cores``: worker threads each device's fused regions may use
    (:func:`threads`; None: the whole pool). ``collect``: called once (by
    device 0) with every device's result when all are done; when it returns a
    function ``put(i, result)``, every device calls it on its own thread (pmap
    copies the results into the stacked output so, side by side). ``places[i]``:
    device ``i``'s output places (:func:`take_place`), or None. ``enter(i)``:
    a context manager device ``i``'s thread runs its program and ``collect``
    inside (a GPU made current with a stream of its own), or None."""
    n = len(per_device_args)
    group = Group(n) if remote is None else Group(n * remote.size, remote, local_size=n)
    outer = dict(getattr(_LOCAL, "axes", None) or {})
    results: List[Any] = [None] * n
    errors: List[Optional[BaseException]] = [None] * n
    put: List[Any] = [None]

    def device(i: int) -> None:
        env = dict(outer)
        if axis_name is not None:
            env[axis_name] = (group, group.offset + i)
        saved = getattr(_LOCAL, "axes", None), getattr(_LOCAL, "threads", None)
        _LOCAL.axes = env
        _LOCAL.threads = cores if cores is not None else saved[1]
        _LOCAL.places = None if places is None else places[i]
        try:
            with contextlib.nullcontext() if enter is None else enter(i):
                results[i] = program(*per_device_args[i])
                if collect is not None:
                    group._wait()
                    if i == 0:
                        put[0] = collect(results)
                    group._wait()
                    if put[0] is not None:
                        put[0](i, results[i])
        except BaseException as e:  # noqa: BLE001 - handed to the caller below
            errors[i] = e
            group.abort()
        finally:
            _LOCAL.axes, _LOCAL.threads = saved
            _LOCAL.places = None

    threads = [threading.Thread(target=device, args=(i,), daemon=True) for i in range(1, n)]
    for t in threads:
        t.start()
    device(0)
    for t in threads:
        t.join()
    first = next((e for e in errors if e is not None and not isinstance(e, _Aborted)), None)
    if first is None:
        first = next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    return results
