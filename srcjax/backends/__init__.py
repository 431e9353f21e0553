"""Backends: code generation and runtime for one kind of device each.

The protocol a backend implements is :class:`srcjax.backends.base.Backend`
(documented in :mod:`srcjax.backends.base`). Backends are found by name through
:func:`get`; each lives in its own module, imported the first time it is asked
for (so ``import srcjax`` never imports a GPU library):

- ``"cpu"``: :mod:`srcjax.backends.numpy_cpu`, chunked multi-threaded NumPy;
- ``"cuda"``: :mod:`srcjax.backends.cupy_cuda`, fused CuPy kernels (devices of
  platform ``"gpu"``).

A new backend adds its module to :data:`KNOWN` (the module defines ``BACKEND``,
an instance of its :class:`~srcjax.backends.base.Backend` subclass) or calls
:func:`register` with an instance.
"""

from __future__ import annotations

import importlib
from typing import Any, Dict

__all__ = ["get", "register", "for_device", "KNOWN", "DEFAULT"]

#: backend name -> module defining ``BACKEND`` (imported on first use)
KNOWN: Dict[str, str] = {
    "cpu": "srcjax.backends.numpy_cpu",
    "cuda": "srcjax.backends.cupy_cuda",
}

#: device platform -> the backend computing on it, where the names differ
PLATFORM_BACKENDS: Dict[str, str] = {"gpu": "cuda"}

#: the backend of ``jit`` without a ``device``
DEFAULT = "cpu"

_LOADED: Dict[str, Any] = {}


def register(backend: Any) -> Any:
    """Make ``backend`` (a :class:`~srcjax.backends.base.Backend`) the one
    :func:`get` returns for ``backend.name``; returns it."""
    _LOADED[backend.name] = backend
    return backend


def get(name: str = DEFAULT) -> Any:
    """The backend called ``name``. Raises ValueError naming the known backends
    when there is none by that name."""
    b = _LOADED.get(name)
    if b is None:
        module = KNOWN.get(name)
        if module is None:
            known = ", ".join(sorted(set(KNOWN) | set(_LOADED)))
            raise ValueError(f"unknown srcjax backend {name!r} (known: {known})")
        b = register(importlib.import_module(module).BACKEND)
    return b


def for_device(device: Any = None) -> Any:
    """The backend computing on ``device`` (a ``Device``, a platform name or
    ``None``: the default backend). A device whose platform has no backend of
    that name runs on the default backend, as every device did before there
    were several backends."""
    if device is None:
        return get(DEFAULT)
    platform = device if isinstance(device, str) else getattr(device, "platform", None)
    platform = PLATFORM_BACKENDS.get(platform, platform)
    if isinstance(platform, str) and (platform in KNOWN or platform in _LOADED):
        return get(platform)
    return get(DEFAULT)


def _load_scan_kernel() -> Any:
    """The compiled float32 scan of ``cumsum`` (Numba is available)."""
    from .numba_cpu import scans

    return scans.load()


def _install_scan_loader() -> None:
    from ..primitives.reductions import cumulative
    from .numba_cpu import when_available

    cumulative.SCAN_KERNEL.set_loader(when_available(_load_scan_kernel))


_install_scan_loader()
