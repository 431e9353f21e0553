"""Compiled kernels (Numba) that a module below the backends layer uses when they
exist: :class:`LazyKernel`, loaded at the first use.

Numba access is owned by :mod:`srcjax.backends.numba_cpu` (a higher layer than
the primitives, and below the public modules): a module that may use compiled
kernels holds a :class:`LazyKernel`, and the layer that can import Numba sets
its loader (``numba_cpu.when_available(load)``) when it is imported. The users:
float32 ``cumsum`` (``primitives/reductions/cumulative.py``, loader set by
:mod:`srcjax.backends`) and the threefry kernels (``random/_threefry.py``,
loader set by ``random/_base.py``)."""

from __future__ import annotations

from typing import Any, Callable, Optional

__all__ = ["LazyKernel"]


class LazyKernel:
    """A compiled kernel (or a module of kernels) loaded at its first
    :meth:`get`, once: the loader returns it, or None (no Numba); a loader that
    raises (a Numba that cannot type or compile it) is taken as None. Either
    way the answer is kept: the NumPy path from then on, without a message."""

    def __init__(self, what: str) -> None:
        self.what = what  # (for reading: what the kernel computes)
        self._load: Optional[Callable[[], Any]] = None
        self._loaded: list = []  # [the loader's result] once it ran
        self._on = True

    def set_loader(self, load: Callable[[], Any]) -> None:
        """``load()`` returns the kernel or None; called at the first :meth:`get`."""
        self._load = load
        self._loaded.clear()

    def get(self) -> Any:
        """The kernel, or None (no loader, no Numba, a failure, or turned off)."""
        if not self._on:
            return None
        if not self._loaded:
            k = None
            if self._load is not None:
                try:
                    k = self._load()
                except Exception:  # noqa: BLE001 - a Numba that cannot type or compile it
                    k = None
            self._loaded.append(k)
        return self._loaded[0]

    def use(self, flag: bool) -> None:
        """Turn the kernel off (``False``: :meth:`get` is None; tests compare both
        paths) or back on (the kernel already loaded is reused, no second load)."""
        self._on = bool(flag)
