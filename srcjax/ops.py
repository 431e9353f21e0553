"""``srcjax.ops`` (``jax.ops``): segment reductions.

``segment_sum``, ``segment_prod``, ``segment_max`` and ``segment_min`` are
compositions of primitives (scatters: ``ad.take_adjoint``, ``ad.at_multiply``,
``ad.at_max``, ``ad.at_min``), so transformed code inlines them and their
derivatives and batching come from those primitives.
"""

from __future__ import annotations

import numpy as np

from .numpy._functions import bincount_length
from .primitives.ad import zeros_like
from .primitives.creation import full, shape, zeros
from .primitives.elementwise import logical_and, where
from .primitives.registry import Primitive, register
from .primitives.structural import at_max, at_min, at_multiply, reshape, take_adjoint

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def segment_sum(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    """Sum of the rows of ``data`` in each segment (jax.ops.segment_sum):
    ``out[s] = sum of data[i] over i with segment_ids[i] == s``.

    ``data``: shape ``(n, ...)``; ``segment_ids``: int array of shape ``(n,)``.
    Shape: ``(num_segments,) + data.shape[1:]``; ``num_segments`` defaults to
    ``max(segment_ids) + 1`` (JAX requires it under jit; srcjax computes it from
    the values). Ids outside ``[0, num_segments)`` are dropped (JAX's default
    mode). Dtype: ``data``'s. Differentiable in ``data``. ``indices_are_sorted``,
    ``unique_indices``, ``bucket_size`` and ``mode`` are accepted for
    compatibility (only the default dropping mode is implemented: another mode
    raises NotImplementedError). Raises ValueError when ``segment_ids`` is not
    1-D or its length differs from ``data.shape[0]``."""
    ids, mask, num_segments = _segments(data, segment_ids, num_segments, mode, "segment_sum")
    rows = where(mask, data, zeros_like(data))
    out = zeros((num_segments,) + shape(data)[1:], dtype=rows.dtype)
    return take_adjoint(rows, out, ids, 0)


def _segments(data, segment_ids, num_segments, mode, name):
    """``(ids, mask, num_segments)``: the segment of each row of ``data`` (0 for
    a row whose id is out of range), a mask of the rows kept (shaped to
    broadcast against ``data``) and the number of segments."""
    if mode is not None and mode != "drop" and str(mode) != "GatherScatterMode.FILL_OR_DROP":
        raise NotImplementedError(f"srcjax {name}: mode={mode!r} is not supported yet")
    if len(shape(segment_ids)) != 1 or shape(segment_ids)[0] != shape(data)[0]:
        raise ValueError(
            f"segment_ids must be 1-D with data.shape[0] = {shape(data)[0]} entries; "
            f"got shape {shape(segment_ids)}"
        )
    if num_segments is None:
        num_segments = bincount_length(segment_ids, 0)
    valid = logical_and(segment_ids >= 0, segment_ids < num_segments)
    ids = where(valid, segment_ids, 0)
    mask = reshape(valid, shape(valid) + (1,) * (len(shape(data)) - 1))
    return ids, mask, num_segments


def _identity(data, name):
    """The identity of the segment reduction ``name`` in ``data``'s dtype: what an
    empty segment holds (JAX: -inf, or the type's minimum, for max; +inf or the
    maximum for min; 1 for prod). A 0-d array."""
    dt = np.result_type(data)
    if name == "segment_prod":
        return np.ones((), dt)
    if dt.kind == "b":
        return np.array(name == "segment_min")
    if dt.kind in "fc":
        return np.array(np.inf if name == "segment_min" else -np.inf, dt)
    info = np.iinfo(dt)
    return np.array(info.max if name == "segment_min" else info.min, dt)


# static (it reads only the dtype): no derivative, the same value for every example
segment_identity = register(
    Primitive("ad.segment_identity", _identity, kind="internal", differentiable=False)
)
segment_identity.def_batch(lambda c: (c.rebuild(), False))


def _segment_reduce(scatter, name, data, segment_ids, num_segments, mode):
    ids, mask, num_segments = _segments(data, segment_ids, num_segments, mode, name)
    fill = segment_identity(data, name)
    rows = where(mask, data, fill)
    out = full((num_segments,) + shape(data)[1:], fill, dtype=rows.dtype)
    return scatter(out, ids, rows)


def segment_prod(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    """Product of the rows of ``data`` in each segment (jax.ops.segment_prod); 1
    for an empty segment. Shapes, ``num_segments``, dropped out-of-range ids and
    the compatibility arguments as :func:`segment_sum`. Dtype: ``data``'s.
    Differentiable in ``data`` (exact with zeros, as ``x.at[i].multiply``)."""
    return _segment_reduce(at_multiply, "segment_prod", data, segment_ids, num_segments, mode)


def segment_max(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    """Maximum of the rows of ``data`` in each segment (jax.ops.segment_max): ``-inf``
    for an empty segment (the dtype's minimum for integers). Shapes,
    ``num_segments``, dropped out-of-range ids and the compatibility arguments as
    :func:`segment_sum`. Dtype: ``data``'s. Differentiable in ``data`` (the
    cotangent goes to the rows equal to their segment's maximum, as JAX's
    ``x.at[i].max``)."""
    return _segment_reduce(at_max, "segment_max", data, segment_ids, num_segments, mode)


def segment_min(
    data,
    segment_ids,
    num_segments=None,
    indices_are_sorted=False,
    unique_indices=False,
    bucket_size=None,
    mode=None,
):
    """Minimum of the rows of ``data`` in each segment (jax.ops.segment_min): ``+inf``
    for an empty segment (the dtype's maximum for integers); otherwise as
    :func:`segment_max`."""
    return _segment_reduce(at_min, "segment_min", data, segment_ids, num_segments, mode)
