"""``pmap`` over GPUs: each GPU is a device (:mod:`srcjax._spmd` runs one host
thread per device, as for the CPU devices).

- :func:`on_device` is the context each device's thread runs its per-device
  program in: ``cupy.cuda.Device(id)`` (kernels launch and arrays are made
  there) and a ``cupy.cuda.Stream(non_blocking=True)`` of its own, so the GPUs'
  work does not serialize on the legacy default stream; the stream is
  synchronized before every collective and when the program ends.
- The collectives (``psum``, ``pmean``, ``pmax``, ``pmin``, ``all_gather``,
  ``ppermute``, ``pshuffle``, ``psum_scatter``, ``all_to_all``) on GPU arrays
  go **through host memory** (first version): each device synchronizes its
  stream, copies its value to the host, the devices exchange and combine the
  host values exactly as the CPU devices do (so a GPU pmap gives the CPU
  pmap's numbers), and each device copies the result back to its GPU.
  Device-to-device copies (peer access / NCCL) are not used yet.
- :func:`stack` makes a pmap result: an Array whose ``addressable_shards`` are
  the devices' own buffers on their GPUs, and whose whole value (for indexing
  and ``np.asarray``) is gathered, through the host, on the first device.

Tested on the CuPy test double (:mod:`srcjax.testing.fake_cupy`) only, until a
run on real GPUs.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, Dict, Iterator, List, Optional

import numpy as np

#: the collectives given a GPU implementation (through host memory)
COLLECTIVES = (
    "lax.psum",
    "lax.pmean",
    "lax.pmax",
    "lax.pmin",
    "lax.all_gather",
    "lax.ppermute",
    "lax.pshuffle",
    "lax.psum_scatter",
    "lax.all_to_all",
)


def _map(x: Any, fn: Callable[[Any], Any]) -> Any:
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_map(v, fn) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_map(v, fn) for v in x)
    if isinstance(x, dict):
        return type(x)((k, _map(v, fn)) for k, v in x.items())
    return fn(x)


def _through_host(impl: Callable, cupy_module: Callable, is_dev: Callable) -> Callable:
    def call(*args: Any, **kwargs: Any) -> Any:
        cp = cupy_module()
        # (this device's queued work must be done before its values are read)
        cp.cuda.get_current_stream().synchronize()
        host = _map(args, lambda v: cp.asnumpy(v) if is_dev(v) else v)
        out = impl(*host, **kwargs)
        # (back on this thread's current device: the one its program runs on)
        return _map(out, lambda v: cp.asarray(v) if isinstance(v, (np.ndarray, np.generic)) else v)

    call.__name__ = getattr(impl, "__name__", "collective")
    return call


def cuda_impls(cupy_module: Callable, is_dev: Callable) -> Dict[str, Callable]:
    """``{public name: GPU implementation}`` of the collectives (see the module
    docstring), for ``Primitive.def_impl("cuda", ...)``."""
    from ...primitives import registry  # noqa: PLC0415

    return {
        name: _through_host(registry.REGISTRY[name].impl, cupy_module, is_dev)
        for name in COLLECTIVES
    }


@contextlib.contextmanager
def on_device(device_id: int) -> Iterator[Any]:
    """GPU ``device_id`` current, with a non-blocking stream of its own, for
    the duration; the stream is synchronized on the way out (also on error)."""
    from ._cupy import cupy_module  # noqa: PLC0415

    cp = cupy_module()
    with cp.cuda.Device(device_id):
        stream = cp.cuda.Stream(non_blocking=True)
        try:
            with stream:
                yield stream
        finally:
            stream.synchronize()


def stack(leaves: List[Any], axis: Optional[int], devices: List[Any]) -> Any:
    """The devices' values of one output leaf as a pmap result over ``devices``:
    stacked along ``axis`` (None: the same value on every device), each
    device's shard kept on its GPU (``addressable_shards``), the whole value on
    the first device (gathered through the host)."""
    from ..._array import Array, wrap_sharded  # noqa: PLC0415
    from ..._sharding import pmap_sharding  # noqa: PLC0415
    from ._cupy import is_device_array, to_device, to_host  # noqa: PLC0415

    bufs = []
    for leaf, d in zip(leaves, devices):
        b = leaf._buf if isinstance(leaf, Array) else leaf  # (a weak Array's too: its dtype)
        if not is_device_array(b) or int(b.device.id) != d.id:
            b = to_device(b if is_device_array(b) else np.asarray(b), device=d.id)
        bufs.append(b)
    if axis is None:
        return wrap_sharded(bufs[0], pmap_sharding(devices, None, bufs))
    ax = axis if axis >= 0 else axis + bufs[0].ndim + 1
    shards = [b.reshape(b.shape[:ax] + (1,) + b.shape[ax:]) for b in bufs]
    whole = to_device(np.concatenate([to_host(s) for s in shards], ax), device=devices[0].id)
    return wrap_sharded(whole, pmap_sharding(devices, ax, shards))
