"""``lax.dynamic_slice`` and ``lax.dynamic_update_slice``."""

from __future__ import annotations

import numpy as np

from srcjax.primitives.ad import (
    zeros_like,
)

from ._common import _rand, _structural

# ---------------------------------------------------------------------------
# lax.dynamic_slice / lax.dynamic_update_slice


def _clamped_starts(shape, starts, sizes):
    """JAX's start indices: a negative one counts from the end (``-1`` is
    ``dim - 1``), then each is clamped to ``[0, dim - size]`` so the window fits."""
    starts = [int(s) for s in np.asarray(starts).reshape(-1)] if np.ndim(starts) else [int(starts)]
    if len(starts) != len(shape):
        raise TypeError(
            f"dynamic slice: {len(starts)} start indices for an operand of rank {len(shape)}"
        )
    return tuple(min(max(s + d if s < 0 else s, 0), d - n) for s, d, n in zip(starts, shape, sizes))


def _dynamic_slice(operand, start_indices, slice_sizes):
    """``operand[s0:s0+n0, s1:s1+n1, ...]`` (jax.lax.dynamic_slice): a copy of
    shape ``slice_sizes`` and ``operand``'s dtype. ``start_indices``: one int per
    axis (a sequence or 1-d int array); a negative one counts from the end, then
    each is clamped so the window lies inside. ``slice_sizes``: static ints.
    Raises TypeError when the sizes or the number of starts do not fit."""
    x = np.asarray(operand)
    sizes = tuple(int(n) for n in slice_sizes)
    if len(sizes) != x.ndim or any(n < 0 or n > d for n, d in zip(sizes, x.shape)):
        raise TypeError(f"dynamic_slice: slice sizes {sizes} do not fit operand shape {x.shape}")
    starts = _clamped_starts(x.shape, start_indices, sizes)
    return x[tuple(slice(s, s + n) for s, n in zip(starts, sizes))].copy()


def _dynamic_update_slice(operand, update, start_indices):
    """A copy of ``operand`` with ``update`` written at ``start_indices`` (clamped
    so it fits; jax.lax.dynamic_update_slice). ``update`` has the operand's rank
    and is cast to its dtype."""
    x = np.array(operand)
    u = np.asarray(update)
    if u.ndim != x.ndim or any(n > d for n, d in zip(u.shape, x.shape)):
        raise TypeError(f"dynamic_update_slice: update of shape {u.shape} for operand {x.shape}")
    starts = _clamped_starts(x.shape, start_indices, u.shape)
    x[tuple(slice(s, s + n) for s, n in zip(starts, u.shape))] = u
    return x


dynamic_slice = _structural("lax.dynamic_slice", _dynamic_slice)
dynamic_update_slice = _structural("lax.dynamic_update_slice", _dynamic_update_slice)


def _ds_vjp(g, ans, operand, start_indices, slice_sizes):
    return dynamic_update_slice(zeros_like(operand), g, start_indices)


def _ds_jvp(t, ans, operand, start_indices, slice_sizes):
    return dynamic_slice(t, start_indices, slice_sizes)


def _dus_vjp_operand(g, ans, operand, update, start_indices):
    return dynamic_update_slice(g, zeros_like(update), start_indices)


def _dus_vjp_update(g, ans, operand, update, start_indices):
    return dynamic_slice(g, start_indices, np.shape(update))


def _dus_jvp_operand(t, ans, operand, update, start_indices):
    return dynamic_update_slice(t, zeros_like(update), start_indices)


def _dus_jvp_update(t, ans, operand, update, start_indices):
    return dynamic_update_slice(zeros_like(operand), t, start_indices)


dynamic_slice.def_vjp(operand=_ds_vjp)
dynamic_slice.def_jvp(operand=_ds_jvp)
dynamic_update_slice.def_vjp(operand=_dus_vjp_operand, update=_dus_vjp_update)
dynamic_update_slice.def_jvp(operand=_dus_jvp_operand, update=_dus_jvp_update)
dynamic_slice.samples = lambda rng: [
    ((_rand(rng, 4, 5), (1, 2), (2, 3)), {}),
    ((_rand(rng, 4, 5), (3, -1), (2, 2)), {}),  # clamped
    ((_rand(rng, 6), np.array([4]), (3,)), {}),
]
dynamic_update_slice.samples = lambda rng: [
    ((_rand(rng, 4, 5), _rand(rng, 2, 3), (1, 2)), {}),
    ((_rand(rng, 4, 5), _rand(rng, 2, 2), (3, 9)), {}),  # clamped
]
