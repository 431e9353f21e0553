"""Out-of-bounds indices on the GPU as JAX has them (``prim.impls["cuda"]`` of
the indexing primitives).

The NumPy implementations (:mod:`srcjax.primitives.ad.oob`) index with NumPy
first and apply JAX's rule only when NumPy raises ``IndexError``. CuPy does not
raise for an integer *array* out of bounds: its fancy indexing, ``take``,
``take_along_axis`` and scatters wrap such an index around (``i mod n``), so the
NumPy implementations would silently give CuPy's numbers on device arrays. The
CUDA implementations here decide without relying on an exception:

- ``x[idx]`` (``ad.getitem``, JAX's gather: clamp): every integer index array
  of ``idx`` is clamped on the device (``i + n`` where negative, then clipped
  to ``[0, n - 1]``: two elementwise kernels, no synchronization); a Python
  integer out of range is clamped on the host;
- every other indexing primitive (``.at[idx].get/set/add/multiply/min/max``
  and their derivative helpers, ``ad.index_adjoint``/``index_take``,
  ``jnp.take``, ``jnp.take_along_axis`` and their adjoints) first checks its
  integer indices against ``[-n, n)`` (one reduction and one synchronization
  per device index array); in bounds CuPy's indexing is NumPy's and the call
  runs on the device as any other, out of bounds it runs the NumPy
  implementation, which has JAX's rule (drop for updates, fill for
  ``take``/``take_along_axis``/``mode="fill"``, clamp for ``mode="clip"``), on
  host copies (counted in ``cupy_cuda.HOST_CALLS``);
- ``ad.index_adjoint`` (the gradient of ``x[idx]``) in bounds with a basic
  index (integers, slices: no duplicates) stores ``g`` into device zeros; with
  an index array it still runs on host copies (a scatter-add that accumulates
  duplicates: ``cupyx.scatter_add``, to be checked on a GPU).
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, Optional, Tuple

import numpy as np

from ...primitives.ad import oob
from ...primitives.ad.indexing import is_basic_index

__all__ = ["cuda_impls", "out_of_bounds"]

#: primitive -> (array parameter, index parameter, axis parameter or None): with
#: no axis parameter the index is a full index (``x[idx]``), else one integer
#: array along ``axis`` (None: the flattened array)
CHECKED: Dict[str, Tuple[str, str, Optional[str]]] = {
    **{
        f"ad.at_{op}": ("x", "idx", None)
        for op in (
            "get set add multiply min max set_winners tie_count multiply_others "
            "multiply_others_d1 multiply_others_d2 multiply_others_d3_check"
        ).split()
    },
    "ad.index_adjoint": ("x", "idx", None),
    "ad.index_take": ("g", "idx", None),
    "jnp.take": ("a", "indices", "axis"),
    "jnp.take_along_axis": ("arr", "indices", "axis"),
    "ad.take_adjoint": ("a", "indices", "axis"),
    "ad.take_along_axis_adjoint": ("arr", "indices", "axis"),
    "ad.take_index": ("a", "indices", "axis"),
    "ad.take_mask": ("a", "indices", "axis"),
}


def _proxy(it: Any, is_dev: Callable[[Any], bool]) -> Any:
    """A host stand-in of index part ``it`` with its shape and dtype (no copy:
    a broadcast zero), for :func:`oob.index_axes`."""
    if is_dev(it):
        return np.broadcast_to(np.zeros((), it.dtype), it.shape)
    return it


def _parts(shape: tuple, idx: Any, is_dev: Callable[[Any], bool]) -> list:
    """``[(part, axis or None)]`` of ``idx`` (device parts included) as
    :func:`oob.index_axes` finds the axis each integer part indexes."""
    items = list(idx) if isinstance(idx, tuple) else [idx]
    proxied = tuple(_proxy(it, is_dev) for it in items)
    axes = oob.index_axes(shape, proxied if isinstance(idx, tuple) else proxied[0])
    return [(it, axis) for it, (_, axis) in zip(items, axes)]


def _int_dev(it: Any, is_dev: Callable[[Any], bool]) -> bool:
    return is_dev(it) and np.dtype(it.dtype).kind in "iu"


def _bad(it: Any, n: int, is_dev: Callable[[Any], bool]) -> bool:
    """Whether integer index part ``it`` has an entry outside ``[-n, n)``."""
    if is_dev(it):
        if np.dtype(it.dtype).kind not in "iu" or it.size == 0:
            return False
        return bool(((it < -n) | (it >= n)).any())  # (one synchronization)
    a = np.asarray(it)
    if a.dtype.kind not in "iu" or a.size == 0:
        return False
    return bool(((a < -n) | (a >= n)).any())


def out_of_bounds(
    shape: tuple, idx: Any, axis: Any, along: bool, is_dev: Callable[[Any], bool]
) -> bool:
    """Whether an integer index of ``idx`` into an array of ``shape`` is outside
    ``[-n, n)`` of its axis: a full index (``along`` False), or one index array
    along ``axis`` (None: the flattened array)."""
    if along:
        n = int(np.prod(shape)) if axis is None else shape[int(axis) % max(len(shape), 1)]
        return _bad(idx, n, is_dev)
    if isinstance(idx, list):
        idx = np.asarray(idx)
    for it, ax in _parts(shape, idx, is_dev):
        if ax is not None and (is_dev(it) or not isinstance(it, (bool, np.bool_))):
            if _bad(it, shape[ax], is_dev):
                return True
    return False


def _getitem(cupy_module: Callable[[], Any], is_dev: Callable[[Any], bool]) -> Any:
    def getitem(x: Any, idx: Any) -> Any:
        """``x[idx]`` on the device with JAX's clamping of out-of-bounds integer
        indices (see the module docstring)."""
        if not is_dev(x):
            return NotImplemented  # (a container or a host value: as on the host)
        if isinstance(idx, list):
            return NotImplemented
        cp = cupy_module()
        shape = x.shape
        changed = False
        new = []
        for it, ax in _parts(shape, idx, is_dev):
            if ax is not None:
                n = shape[ax]
                if _int_dev(it, is_dev) and it.ndim > 0:
                    it = cp.clip(cp.where(it < 0, it + n, it), 0, max(n - 1, 0))
                    changed = True
                elif not is_dev(it) and _bad(it, n, is_dev):
                    it = oob.clamp_index((n,), it)
                    changed = True
            new.append(it)
        if not changed:
            return NotImplemented  # (in bounds: CuPy's indexing is NumPy's)
        return x[tuple(new) if isinstance(idx, tuple) else new[0]]

    return getitem


def _checked(
    public: str,
    impl: Any,
    on_host: Callable[..., Any],
    is_dev: Callable[[Any], bool],
    in_bounds: Optional[Callable[[Dict[str, Any]], Any]] = None,
) -> Any:
    xname, iname, axname = CHECKED[public]
    sig = inspect.signature(impl)

    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError:
            return NotImplemented  # (the NumPy implementation reports it)
        bound.apply_defaults()
        b = bound.arguments
        x, idx = b[xname], b[iname]
        if not hasattr(x, "shape"):
            return NotImplemented
        axis = b.get(axname) if axname is not None else None
        if not out_of_bounds(tuple(x.shape), idx, axis, axname is not None, is_dev):
            if in_bounds is not None:
                return in_bounds(b)
            return NotImplemented  # in bounds: the device path
        return on_host(public, impl, args, kwargs)

    call.__name__ = f"{public}_cuda"
    return call


def _basic_adjoint(cupy_module: Callable[[], Any], is_dev: Callable[[Any], bool]) -> Any:
    def adjoint(b: Dict[str, Any]) -> Any:
        """``ad.index_adjoint`` in bounds for a basic index (integers and
        slices: no duplicates, so a plain store): zeros on the device with ``g``
        written at ``idx`` (the NumPy implementation scatters into host zeros)."""
        g, x, idx = b["g"], b["x"], b["idx"]
        if g is None or not is_dev(x) or not is_basic_index(idx):
            return NotImplemented
        gdt = np.dtype(g.dtype) if hasattr(g, "dtype") else np.result_type(g)
        dtype = gdt if gdt.kind in "fc" else np.dtype(x.dtype)
        out = cupy_module().zeros(x.shape, dtype)
        out[idx] = g
        return out

    return adjoint


def cuda_impls(
    cupy_module: Callable[[], Any], is_dev: Callable[[Any], bool], on_host: Callable[..., Any]
) -> Dict[str, Any]:
    """``{public name: CUDA implementation}`` of the indexing primitives (the
    registry's NumPy implementations are read when the backend registers them)."""
    from ...primitives import registry  # noqa: PLC0415

    out: Dict[str, Any] = {"ad.getitem": _getitem(cupy_module, is_dev)}
    special = {"ad.index_adjoint": _basic_adjoint(cupy_module, is_dev)}
    for public in CHECKED:
        impl = registry.REGISTRY[public].impl
        out[public] = _checked(public, impl, on_host, is_dev, special.get(public))
    return out
