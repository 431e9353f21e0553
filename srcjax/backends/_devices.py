"""Device objects and which GPUs are present (for :mod:`srcjax.devices` and jit).

Low in the layers (it imports only the configuration and the CUDA backend's CuPy
switch), so that jit can pick a device without importing the public device API.
See :mod:`srcjax.devices` for the rules.
"""

from __future__ import annotations

import os
import sys
from typing import Any, List, Optional

import numpy as np

from .. import _array
from ..config import config
from .cupy_cuda import _cupy
from .cupy_cuda._cupy import is_device_array

__all__ = [
    "CpuDevice",
    "CudaDevice",
    "CPU",
    "cpu_device_count",
    "cpus",
    "platforms",
    "gpus",
    "default_device",
    "device_of",
    "check_same_device",
    "is_device_array",
]


class CpuDevice:
    """One of the host's CPU devices (``jax.Device``-like: ``platform``,
    ``device_kind``, ``id``, ``process_index``). There is one, ``CPU``, unless
    more are configured (:func:`cpu_device_count`); ``pmap`` runs each on its own
    thread."""

    platform = "cpu"
    device_kind = "cpu"
    process_index = 0

    def __init__(self, id: int = 0, process_index: int = 0) -> None:  # noqa: A002 (JAX's name)
        self.id = id
        self.process_index = process_index

    def __repr__(self) -> str:
        if self.process_index:
            return f"CpuDevice(id={self.id}, process_index={self.process_index})"
        return f"CpuDevice(id={self.id})"

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, CpuDevice)
            and other.id == self.id
            and other.process_index == self.process_index
        )

    def __hash__(self) -> int:
        return hash(("cpu", self.id, self.process_index))


CPU = CpuDevice(0)
_CPUS: List[CpuDevice] = [CPU]


def cpu_device_count() -> int:
    """The number of CPU devices (JAX's default is 1): the option
    ``jax_num_cpu_devices`` when set (``srcjax.config.update("jax_num_cpu_devices",
    4)``), else the environment variable ``SRCJAX_CPU_DEVICES``, else
    ``--xla_force_host_platform_device_count=N`` in ``XLA_FLAGS`` (as JAX users
    set it), else 1. Read when devices are listed, so a change takes effect at
    the next ``pmap`` call.

    Raises ValueError for a count below 1 or not an integer."""
    import re

    n: Any = config.read("jax_num_cpu_devices")
    where = "jax_num_cpu_devices"
    if n is None or n == -1:
        n, where = os.environ.get("SRCJAX_CPU_DEVICES"), "SRCJAX_CPU_DEVICES"
    if n in (None, ""):
        flags = os.environ.get("XLA_FLAGS", "")
        m = re.search(r"--xla_force_host_platform_device_count=(\S+)", flags)
        n, where = (m.group(1), "XLA_FLAGS") if m else (1, "")
    try:
        count = int(n)
    except (TypeError, ValueError):
        raise ValueError(
            f"{where}: the number of CPU devices must be an integer, got {n!r}"
        ) from None
    if count < 1:
        raise ValueError(f"{where}: the number of CPU devices must be at least 1, got {count}")
    return count


def cpus() -> List[CpuDevice]:
    """This process's CPU devices, ``CPU`` first. Ids are global, as JAX's: in
    process ``p`` of a multi-process job (:mod:`srcjax.distributed`) with ``n``
    devices per process they are ``p * n`` .. ``p * n + n - 1`` (one process:
    ``CpuDevice(id=0)`` ...), and ``process_index`` is ``p``."""
    n = cpu_device_count()
    while len(_CPUS) < n:
        _CPUS.append(CpuDevice(len(_CPUS)))
    offset = _PROCESSES[0] * n
    for i, d in enumerate(_CPUS):
        d.process_index = _PROCESSES[0]
        d.id = offset + i
    return _CPUS[:n]


#: (this process's index, the process count), set by srcjax.distributed.initialize
_PROCESSES = [0, 1]


def set_processes(index: int, count: int) -> None:
    """Record this process's place in a multi-process job (:mod:`srcjax.distributed`)."""
    _PROCESSES[:] = [int(index), int(count)]


def global_cpus() -> List[CpuDevice]:
    """The CPU devices of every process of a multi-process job
    (:mod:`srcjax.distributed`), process by process: process ``p``'s device
    ``i`` is ``CpuDevice(id=p * n + i, process_index=p)`` with ``n`` devices per
    process (ids are global, as JAX's), this process's own the objects of
    :func:`cpus`."""
    local = cpus()
    n = len(local)
    return [
        local[i] if p == _PROCESSES[0] else CpuDevice(p * n + i, process_index=p)
        for p in range(_PROCESSES[1])
        for i in range(n)
    ]


class CudaDevice:
    """One GPU as CuPy numbers it (``jax.Device``-like: ``platform`` is
    ``"gpu"``, ``device_kind`` the GPU's name, ``id``, ``process_index``)."""

    platform = "gpu"
    process_index = 0

    def __init__(self, id: int, device_kind: str = "gpu") -> None:  # noqa: A002 (JAX's name)
        self.id = id
        self.device_kind = device_kind

    def __repr__(self) -> str:
        return f"CudaDevice(id={self.id})"

    def __eq__(self, other: Any) -> bool:
        return isinstance(other, CudaDevice) and other.id == self.id

    def __hash__(self) -> int:
        return hash(("gpu", self.id))


def platforms() -> Optional[List[str]]:
    """The platforms allowed (None: all), from config, SRCJAX_PLATFORMS, JAX_PLATFORMS."""
    text = config.read("jax_platforms")
    if not text:
        text = os.environ.get("SRCJAX_PLATFORMS") or os.environ.get("JAX_PLATFORMS")
    if not text:
        return None
    names = []
    for p in str(text).split(","):
        p = p.strip().lower()
        if p:
            names.append("gpu" if p in ("cuda", "gpu") else p)
    return names


def gpus() -> List[CudaDevice]:
    allowed = platforms()
    if allowed is not None and "gpu" not in allowed:
        return []
    if not _cupy._OVERRIDE and sys.platform.startswith("linux"):
        if not os.path.exists("/dev/nvidiactl"):
            return []  # no NVIDIA driver: no GPU (and no need to import CuPy)
    cp = _cupy.cupy_module(required=False)
    if cp is None:
        return []
    try:
        if not cp.cuda.is_available():
            return []
        n = int(cp.cuda.runtime.getDeviceCount())
    except Exception:  # noqa: BLE001 (CuPy without a driver raises CUDARuntimeError)
        return []
    return [CudaDevice(i) for i in range(n)]


def default_device() -> Any:
    """``devices()[0]``: the first GPU when there is one, else the CPU."""
    g = gpus()
    return g[0] if g else CPU


def device_of(x: Any) -> Any:
    """The device an array lives on: a :class:`CudaDevice` for GPU arrays, the
    CPU for NumPy arrays and Python numbers, None for anything else."""
    if is_device_array(x):
        return CudaDevice(int(x.device.id))
    if isinstance(x, (np.ndarray, np.generic, int, float, complex, bool)):
        return CPU
    dev = getattr(x, "device", None)  # a srcjax.Array
    return dev if isinstance(dev, (CpuDevice, CudaDevice)) else None


_array.HOOKS["device_of"] = device_of  # (Array.device: one place for every backend)
_array.HOOKS["to_host"] = _cupy.to_host  # (np.asarray of an Array on a GPU)
_cupy.on_types(_array.DEVICE_TYPES.add)  # (an Array holding a GPU buffer is on the GPU)


def check_same_device(named: List[tuple], what: str) -> Any:
    """The one GPU the GPU arrays among ``named`` (``[(name, value), ...]``)
    live on, or None when none does. Raises ValueError naming both arguments
    and devices when two live on different GPUs (JAX's incompatible devices)."""
    first = None
    for name, x in named:
        if is_device_array(x):
            d = device_of(x)
            if first is None:
                first = (name, d)
            elif d != first[1]:
                raise ValueError(
                    f"{what}: incompatible devices: argument {first[0]} is on {first[1]!r} "
                    f"and argument {name} on {d!r}; move them to one device first "
                    "(srcjax.device_put(x, device))"
                )
    return None if first is None else first[1]


_array.HOOKS["check_same_device"] = check_same_device  # (the CUDA backend's eager calls)
