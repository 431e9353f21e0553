"""Which CuPy the CUDA backend uses, and what a GPU array is.

Kept apart from the backend (and free of srcjax imports) so that
:mod:`srcjax.devices` can list GPUs and move arrays without loading the code
generator. CuPy is imported on first use only.
"""

from __future__ import annotations

import contextlib
from typing import Any, Iterator, List, Optional

__all__ = ["cupy_module", "use_cupy", "on_types", "is_device_array", "to_device", "to_host"]

#: test doubles installed by use_cupy (the last one is in use)
_OVERRIDE: List[Any] = []
#: called with no arguments when a double is removed (the backend drops its kernels)
_ON_CHANGE: List[Any] = []
#: called with each GPU array type when it is first used (eager dispatch: the registry)
_ON_TYPES: List[Any] = []
_CUPY: List[Any] = []  # the imported cupy


def cupy_module(required: bool = True) -> Any:
    """The CuPy module in use: the test double installed by :func:`use_cupy`,
    else ``cupy``. Without CuPy: None, or ImportError naming the extra when
    ``required``."""
    if _OVERRIDE:
        return _OVERRIDE[-1]
    if _CUPY:
        return _CUPY[0]
    try:
        import cupy  # noqa: PLC0415
    except Exception as e:  # noqa: BLE001
        if required:
            raise ImportError(
                "the CUDA backend needs CuPy: pip install 'srcjax[cuda13]' (CUDA 13) or "
                f"'srcjax[cuda12]' ({type(e).__name__}: {e})"
            ) from None
        return None
    _CUPY.append(cupy)
    for cb in _ON_TYPES:
        cb(cupy.ndarray)
    return cupy


def on_types(cb: Any) -> None:
    """Call ``cb`` with each GPU array type: the types of the CuPy (or double)
    already in use now, and each one met later."""
    _ON_TYPES.append(cb)
    for m in _CUPY + _OVERRIDE:
        cb(m.ndarray)


@contextlib.contextmanager
def use_cupy(module: Any) -> Iterator[Any]:
    """Use ``module`` (the CuPy test double) as CuPy inside the ``with`` block."""
    _OVERRIDE.append(module)
    for cb in _ON_TYPES:
        cb(module.ndarray)
    try:
        yield module
    finally:
        _OVERRIDE.pop()
        for cb in _ON_CHANGE:
            cb()


def is_device_array(x: Any) -> bool:
    """Whether ``x`` is a GPU array (a CuPy array, or the test double's)."""
    t = type(x)
    return getattr(t, "__srcjax_device_array__", False) or (
        hasattr(t, "__cuda_array_interface__") and t.__module__.startswith("cupy")
    )


def to_device(x: Any, dtype: Any = None, device: Optional[int] = None) -> Any:
    """``x`` (host data or a GPU array) as a GPU array on GPU ``device``."""
    cp = cupy_module()
    if device is None:
        return cp.asarray(x, dtype=dtype)
    with cp.cuda.Device(device):
        return cp.asarray(x, dtype=dtype)


def to_host(x: Any) -> Any:
    """A GPU array as a NumPy array in host memory."""
    return cupy_module().asnumpy(x)
