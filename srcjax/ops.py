"""``srcjax.ops`` (``jax.ops``): segment reductions.

``segment_sum`` is a composition of primitives, so transformed code inlines it
and its derivative comes from theirs.
"""

from __future__ import annotations

from .numpy._functions import bincount_length
from .primitives.ad import zeros_like
from .primitives.creation import shape, zeros
from .primitives.elementwise import logical_and, where
from .primitives.structural import reshape, take_adjoint

__all__ = ["segment_sum"]


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
    if mode is not None and mode != "drop" and str(mode) != "GatherScatterMode.FILL_OR_DROP":
        raise NotImplementedError(f"srcjax segment_sum: mode={mode!r} is not supported yet")
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
    rows = where(mask, data, zeros_like(data))
    out = zeros((num_segments,) + shape(data)[1:], dtype=rows.dtype)
    return take_adjoint(rows, out, ids, 0)
