"""Devices (``jax.devices``): the host CPU and, when CuPy finds GPUs, one
:class:`CudaDevice` per GPU.

Which platforms are in use follows JAX: ``srcjax.config.update("jax_platforms",
"cpu")``, else ``SRCJAX_PLATFORMS``, else ``JAX_PLATFORMS`` (a comma-separated
list: ``"cpu"``, ``"cuda,cpu"``; ``"cuda"`` and ``"gpu"`` mean the same); unset,
every platform present. The default device is the first GPU when there is one,
else the CPU, as in JAX. CuPy is imported only when a function here needs to
know about GPUs (never by ``import srcjax``); without it, or without a GPU
driver, there are no GPUs.

An array on a GPU is an ``srcjax.Array`` holding a CuPy array (in tests, the
CuPy test double's: :mod:`srcjax.testing.fake_cupy`); its ``.device`` is the
:class:`CudaDevice`, ``np.asarray`` copies it to host memory. :func:`device_put`
moves pytrees to a device and :func:`device_get` brings them back as NumPy
arrays. ``srcjax.numpy`` functions, Array operators and jitted functions run
where their GPU arguments live and return Arrays there; host values next to
them (NumPy arrays, host Arrays, Python numbers) are committed to that GPU, as
JAX does with uncommitted arrays, and arrays on two different GPUs in one call
are a ValueError naming both devices.
"""

from __future__ import annotations

from typing import Any, Optional

from . import extras
from .backends import _devices as _d
from .backends._devices import (
    CPU,
    CpuDevice,
    CudaDevice,
    check_same_device,
    default_device,
    device_of,
    is_device_array,
)
from .backends.cupy_cuda import _cupy

__all__ = [
    "CPU",
    "CpuDevice",
    "CudaDevice",
    "devices",
    "local_devices",
    "device_count",
    "local_device_count",
    "default_backend",
    "default_device",
    "device_put",
    "device_get",
    "device_of",
    "is_device_array",
    "check_same_device",
]


def devices(backend: Optional[str] = None) -> list:
    """The devices of ``backend`` (``jax.devices``): ``None`` for the default
    backend's (the GPUs when there are any, else the CPU devices: ``[CpuDevice(id=0)]``
    unless more are configured, see ``backends._devices.cpu_device_count``), ``"cpu"``,
    ``"gpu"`` or ``"cuda"``. Raises RuntimeError, as JAX does, for a backend
    that is not present or not allowed by ``jax_platforms``."""
    allowed = _d.platforms()
    if backend is None:
        gpus = _d.gpus()
        if gpus:
            return gpus
        if allowed is not None and "cpu" not in allowed:
            raise RuntimeError(
                f"Unable to initialize backend {allowed[0]!r}: no such devices "
                f"(jax_platforms={','.join(allowed)})"
            )
        return _d.global_cpus()
    b = str(backend).lower()
    if b == "cpu":
        if allowed is not None and "cpu" not in allowed:
            raise RuntimeError(f"Unknown backend cpu (jax_platforms={','.join(allowed)})")
        return _d.global_cpus()
    if b in ("gpu", "cuda"):
        gpus = _d.gpus()
        if not gpus:
            why = (
                f"jax_platforms={','.join(allowed)}"
                if allowed is not None and "gpu" not in allowed
                else "CuPy finds no GPU (pip install 'srcjax[cuda13]' on a machine with one)"
            )
            raise RuntimeError(f"Unknown backend: 'gpu' requested, but no GPU is present: {why}")
        return gpus
    raise RuntimeError(f"Unknown backend {backend}: srcjax has the cpu and gpu backends")


def local_devices(process_index: Optional[int] = None, backend: Optional[str] = None) -> list:
    """The devices of ``backend`` this process owns (``jax.local_devices``;
    ``process_index`` another process's): ``devices(backend)`` in a single
    process; under MPI (:func:`srcjax.distributed.initialize`) the CPU devices
    with this ``process_index``."""
    from . import distributed

    p = distributed.process_index() if process_index is None else int(process_index)
    return [d for d in devices(backend) if d.process_index == p]


def device_count(backend: Optional[str] = None) -> int:
    """``len(devices(backend))`` (``jax.device_count``): over all processes."""
    return len(devices(backend))


def local_device_count(backend: Optional[str] = None) -> int:
    """``len(local_devices(backend=backend))`` (``jax.local_device_count``)."""
    return len(local_devices(backend=backend))


def default_backend() -> str:
    """``"gpu"`` when the default device is a GPU, else ``"cpu"`` (``jax.default_backend``)."""
    return default_device().platform


def device_put(x: Any, device: Any = None) -> Any:
    """``x`` (a pytree) with every array leaf on ``device`` (``jax.device_put``;
    default: :func:`default_device`). Host leaves are converted as
    ``jnp.asarray`` converts them first (JAX's canonical dtypes: float32/int32
    unless x64). Each leaf becomes an ``srcjax.Array`` on ``device``: on a GPU
    one holding a CuPy array on that GPU (``.device`` says which; an Array
    already there is returned as it is), on the CPU one holding a NumPy array
    (a GPU array copied to host memory)."""
    from .tree_util import tree_map

    if device is None:
        device = _d.default_device()
    if isinstance(device, str):
        device = devices(device)[0]
    if not isinstance(device, (_d.CpuDevice, _d.CudaDevice)):
        raise TypeError(f"device_put: {device!r} is not a device (srcjax.devices())")

    import numpy as np

    from ._array import Array, buffer, wrap

    def put(leaf: Any) -> Any:
        b = buffer(leaf) if isinstance(leaf, Array) else leaf
        if isinstance(device, _d.CpuDevice):
            if is_device_array(b):
                return wrap(_cupy.to_host(b))
            return extras.device_put(leaf)
        if is_device_array(b):
            if _d.device_of(b) == device:
                return leaf if isinstance(leaf, Array) else wrap(b)
            leaf = _cupy.to_host(b)
        host = np.asarray(extras.device_put(leaf))
        return wrap(_cupy.to_device(host, device=device.id))

    return tree_map(put, x, is_leaf=is_device_array)


def device_get(x: Any) -> Any:
    """``x`` (a pytree) with every GPU array as a NumPy array in host memory
    (``jax.device_get``); other leaves pass through unchanged."""
    import numpy as np

    from ._array import Array, buffer
    from .tree_util import tree_map

    def host(v: Any) -> Any:
        if isinstance(v, Array):  # a NumPy copy of its buffer, as JAX's
            v = buffer(v) if is_device_array(buffer(v)) else np.array(v)
        return _cupy.to_host(v) if is_device_array(v) else v

    return tree_map(host, x, is_leaf=lambda v: is_device_array(v) or isinstance(v, Array))
