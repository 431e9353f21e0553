"""Out-of-bounds integer indices as JAX treats them (``jax.numpy.ndarray.at``,
"out-of-bounds indexing" in JAX's sharp bits), shared by every primitive that
indexes: ``x[idx]`` and its adjoint, the ``.at[idx]`` updates and their helpers.

NumPy raises ``IndexError`` out of bounds; JAX never does. The primitives index
with NumPy first (in bounds: NumPy's own speed, nothing added) and call these
helpers only when NumPy raised:

- a gather clamps (:func:`clamp_index`): a negative index is wrapped once
  (``i + n``), then the index is clipped to ``[0, n - 1]``;
- a gather in mode ``"fill"`` gives ``fill_value`` at an index outside ``[-n, n)``
  (:func:`gather_filled`; NaN for inexact dtypes, the minimum of a signed
  integer dtype, the maximum of an unsigned one, True for bool);
- a scatter drops the updates at an index outside ``[-n, n)``
  (:func:`scatter_dropped`: the array is padded by one slot on each axis that
  needs it, those indices sent there, the padding cut off), or in mode
  ``"clip"`` clamps their indices as a gather does.

Only integer parts (Python ints, integer NumPy scalars and arrays) are touched;
slices, ``None``, ``...`` and boolean masks are NumPy's (a mask of the wrong
shape still raises, as in JAX).
"""

from __future__ import annotations

import numpy as np

#: the modes of JAX's ``GatherScatterMode`` (None: the operation's default)
MODES = (None, "promise_in_bounds", "clip", "fill", "drop")


def check_mode(mode, what: str):
    """``mode`` lower-cased (a ``GatherScatterMode``-like enum by its name), or
    JAX's ValueError for one it does not know."""
    mode = getattr(mode, "name", mode)
    if isinstance(mode, str):
        mode = mode.lower()
    if mode not in MODES:
        raise ValueError(f"Invalid mode {mode!r} for {what}: one of {MODES[1:]}")
    return mode


def _is_int_part(it) -> bool:
    if isinstance(it, (bool, np.bool_)):
        return False
    if isinstance(it, (int, np.integer)):
        return True
    return isinstance(it, np.ndarray) and it.dtype.kind in "iu"


def index_axes(shape, idx) -> list:
    """``[(part, axis or None)]`` for index ``idx`` into an array of ``shape``:
    the axis each integer part indexes (None for the other parts)."""
    items = list(idx) if isinstance(idx, tuple) else [idx]
    items = [np.asarray(it) if isinstance(it, list) else it for it in items]
    used = 0
    for it in items:
        if it is None or it is Ellipsis:
            continue
        used += it.ndim if isinstance(it, np.ndarray) and it.dtype == bool else 1
    out, axis = [], 0
    for it in items:
        if it is None:
            out.append((it, None))
        elif it is Ellipsis:
            out.append((it, None))
            axis += len(shape) - used
        elif isinstance(it, np.ndarray) and it.dtype == bool:
            out.append((it, None))
            axis += it.ndim
        else:
            out.append((it, axis if _is_int_part(it) and axis < len(shape) else None))
            axis += 1
    return out


def _rebuilt(idx, parts):
    return tuple(parts) if isinstance(idx, tuple) else parts[0]


def _has_int_part(shape, idx) -> bool:
    return any(axis is not None for _, axis in index_axes(shape, idx))


def scalar_only(shape, idx) -> bool:
    """Whether every integer part of ``idx`` is a scalar (JAX reads ``x[i, j]``
    with a ``dynamic_slice``, whose transpose writes at the clamped index; an
    integer array part makes it a gather, whose transpose drops an update out of
    bounds)."""
    return all(np.ndim(it) == 0 for it, axis in index_axes(shape, idx) if axis is not None)


def adjoint_clamps(shape, idx, mode) -> bool:
    """Whether the cotangent of a gather ``x[idx]`` in ``mode`` (and its
    transpose) clamps out-of-bounds indices (else drops them), as JAX's:
    ``"clip"`` clamps; ``"fill"``/``"drop"`` drop; ``None`` and
    ``"promise_in_bounds"`` (``x[idx]``, ``x.at[idx].get()``) clamp when every
    integer part is a scalar (:func:`scalar_only`), drop otherwise. The updates
    ``x.at[idx].set(...)`` pass ``"drop"`` or ``"clip"``."""
    if mode == "clip":
        return True
    if mode in (None, "promise_in_bounds"):
        return scalar_only(shape, idx)
    return False


def _map_int_parts(shape, idx, fn):
    """``idx`` with each integer part ``i`` (of an axis of size ``n``) replaced by
    ``fn(i wrapped once if negative, n, axis)``; the same structure as ``idx``."""
    parts = []
    for it, axis in index_axes(shape, idx):
        if axis is None:
            parts.append(it)
            continue
        n = shape[axis]
        i = np.asarray(it)
        i = fn(np.where(i < 0, i + n, i), n, axis)
        parts.append(int(i) if i.ndim == 0 and not isinstance(it, np.ndarray) else i)
    return _rebuilt(idx, parts)


def clamp_index(shape, idx):
    """``idx`` with each integer part wrapped once if negative, then clipped to
    its axis (JAX's gather and ``mode="clip"``); the same structure as ``idx``."""
    return _map_int_parts(shape, idx, lambda i, n, axis: np.clip(i, 0, max(n - 1, 0)))


def pad_index(shape, idx) -> tuple:
    """(index, padded axes): each integer index outside ``[-n, n)`` sent to a
    padding slot at position ``n`` of its axis (the caller pads those axes by
    one), negative ones in range wrapped."""
    padded = set()

    def send(i, n, axis):
        bad = (i < 0) | (i >= n)
        if bad.any():
            padded.add(axis)
            return np.where(bad, n, i)
        return i

    return _map_int_parts(shape, idx, send), sorted(padded)


def pad(b, axes, value=0):
    """``b`` with one slot of ``value`` appended on each of ``axes``."""
    b = np.asarray(b)
    if not axes:
        return b
    width = [(0, 1 if k in axes else 0) for k in range(b.ndim)]
    return np.pad(b, width, constant_values=value)


def default_fill(dtype):
    """JAX's fill value of a gather in mode "fill" for ``dtype``."""
    dt = np.dtype(dtype)
    if dt.kind in "fc":
        return np.nan
    if dt.kind == "b":
        return True
    info = np.iinfo(dt)
    return info.min if dt.kind == "i" else info.max


def _float_indexer(idx) -> None:
    """JAX's TypeError for a float (or complex) index (NumPy: an IndexError,
    'only integers, slices ... are valid indices'), naming its dtype as given."""
    for i in idx if isinstance(idx, tuple) else (idx,):
        if isinstance(i, (float, complex)):
            dt = np.dtype(type(i)).name
        else:
            dt = getattr(i, "dtype", None)
            dt = dt.name if dt is not None and np.dtype(dt).kind in "fc" else None
        if dt is not None:
            raise TypeError(
                f"Indexer must have integer or boolean type, got indexer with type {dt}"
            )


def gather_clamped(x, idx):
    """``x[idx]`` with out-of-bounds integer indices clamped (after NumPy's
    IndexError; re-raised when ``idx`` has no integer part to blame; a float
    index is JAX's TypeError)."""
    _float_indexer(idx)
    x = np.asarray(x)
    if not _has_int_part(x.shape, idx):
        return x[idx]  # (NumPy's own error)
    return x[clamp_index(x.shape, idx)]


def gather_filled(x, idx, fill_value=None):
    """``x[idx]`` with ``fill_value`` (default :func:`default_fill`) where an
    integer index is outside ``[-n, n)``."""
    x = np.asarray(x)
    if not _has_int_part(x.shape, idx):
        return x[idx]
    new, axes = pad_index(x.shape, idx)
    if fill_value is None:
        fill_value = default_fill(x.dtype)
    return pad(x, axes, fill_value)[new]


def scatter_dropped(fn, x, idx, *rest, cut=True, mode=None):
    """``fn(x, idx, *rest)`` (an update or a per-update helper of ``x.at[idx]``)
    with out-of-bounds updates dropped: ``x`` padded where needed, those indices
    sent to the padding, the result cut back to ``x``'s shape (``cut``; helpers
    whose result is shaped like the updates are not cut). ``mode="clip"``
    clamps the indices instead."""
    shape = np.shape(x)
    if not _has_int_part(shape, idx):
        return fn(x, idx, *rest)  # (NumPy's own error)
    if mode == "clip":
        return fn(x, clamp_index(shape, idx), *rest)
    new, axes = pad_index(shape, idx)
    out = fn(pad(x, axes, 0), new, *rest)
    if cut and axes:
        return out[tuple(slice(0, n) for n in shape)]
    return out


def _register_hook() -> None:
    from srcjax import _array

    _array.HOOKS["check_mode"] = check_mode  # (eager x.at[...] checks modes as here)


_register_hook()
