"""``lax.reduce_window``: ``add`` is a convolution with a kernel of ones, ``max``
and ``min`` go to the chooser; the table of accepted computations
(:func:`def_window_computation`).
"""

from __future__ import annotations

import operator

import numpy as np

from ... import dtypes as _dt
from ..elementwise import add as _add_p
from ..elementwise import maximum as _maximum
from ..elementwise import minimum as _minimum
from .canonical import _static
from .plans import _dilate_dim, padtype_to_pads

# ---------------------------------------------------------------------------
# reduce_window: add (a convolution with ones), max and min (a chooser primitive)


def _window_plan_impl(
    operand_shape, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    """Static: ``reduce_window``'s options checked (JAX's errors) and made explicit:
    ``(window, strides, padding pairs, base dilation, window dilation)``."""
    shape = tuple(operand_shape)
    nd = len(shape)

    def ints(name, v, default_none):
        if v is None:
            return (1,) * len(window) if default_none else None
        try:
            return tuple(operator.index(a) for a in v)
        except TypeError:
            raise TypeError(f"reduce_window {name} must be a sequence of ints, got {v!r}") from None

    try:
        window = tuple(operator.index(a) for a in window_dimensions)
    except TypeError:
        raise TypeError(
            f"reduce_window window_dimensions must be a sequence of ints, got {window_dimensions!r}"
        ) from None
    strides = ints("window_strides", window_strides, True)
    bd = ints("base_dilation", base_dilation, True)
    wd = ints("window_dilation", window_dilation, True)
    if nd != len(window):
        raise TypeError(
            "reduce_window got the wrong number of window_dimensions for operand: got"
            f" operand shape {shape} with window_dimensions {window}."
        )
    for name, v in (("window_strides", strides), ("base_dilation", bd), ("window_dilation", wd)):
        if len(v) != len(window):
            raise TypeError(
                f"reduce_window got inconsistent {name} and window_dimensions: got"
                f" {name} {v} and window_dimensions {window}."
            )
    for name, v in (
        ("window_dimensions", window),
        ("window_strides", strides),
        ("base_dilation", bd),
        ("window_dilation", wd),
    ):
        if any(a <= 0 for a in v):
            raise TypeError(f"reduce_window {name} must have every entry positive, got {v}.")
    if isinstance(padding, str):
        eff = [_dilate_dim(k, r) for k, r in zip(window, wd)]
        pads = tuple(tuple(p) for p in padtype_to_pads(shape, eff, strides, padding))
    else:
        try:
            pads = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
        except (TypeError, ValueError):
            raise ValueError(
                f"reduce_window padding must be a string or (low, high) pairs, got {padding}"
            ) from None
        if len(pads) != nd:
            raise TypeError(
                f"reduce_window got {len(pads)} padding pairs for an operand of rank {nd}"
            )
    for n, b, (lo, hi) in zip(shape, bd, pads):
        if _dilate_dim(n, b) + lo + hi < 0:
            raise ValueError(
                f"reduce_window padding {pads} is larger than the operand shape {shape}"
            )
    return window, strides, pads, bd, wd


#: more callables ``reduce_window`` accepts as its computation: id -> ``"add"``,
#: ``"max"`` or ``"min"``. :mod:`srcjax.lax` adds ``lax.add``, ``lax.max`` and
#: ``lax.min`` when it is imported (:func:`def_window_computation`).
_WINDOW_COMPUTATIONS: dict = {}
_WINDOW_KEEP: list = []  # (keeps the callables alive, so their ids stay theirs)


def def_window_computation(fn, kind: str) -> None:
    """Let ``reduce_window`` accept ``fn`` as the computation ``kind`` (``"add"``,
    ``"max"`` or ``"min"``). Raises ValueError for another kind."""
    if kind not in ("add", "max", "min"):
        raise ValueError(f"reduce_window computations are add, max or min, not {kind!r}")
    _WINDOW_KEEP.append(fn)
    _WINDOW_COMPUTATIONS[id(fn)] = kind


def _window_kind_impl(computation):
    """Static: ``"add"``, ``"max"`` or ``"min"`` for the supported computations;
    NotImplementedError for the others."""
    kinds = {
        id(_add_p): "add",
        id(_add_p.impl): "add",
        id(operator.add): "add",
        id(_maximum): "max",
        id(_maximum.impl): "max",
        id(_minimum): "min",
        id(_minimum.impl): "min",
        **_WINDOW_COMPUTATIONS,
    }
    kind = kinds.get(id(computation))
    if kind is None:
        raise NotImplementedError(
            "srcjax lax.reduce_window supports computation=lax.add, lax.max or lax.min"
            f" (or jnp.add / jnp.maximum / jnp.minimum), not {computation!r}"
        )
    return kind


def _identity(kind: str, dt: np.dtype):
    if kind == "add":
        return dt.type(0)
    if dt.kind == "b":
        return dt.type(kind == "min")
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return dt.type(info.min if kind == "max" else info.max)
    return dt.type(-np.inf if kind == "max" else np.inf)


def _window_init_impl(kind, operand, init_value):
    """Static: whether ``init_value`` is the identity of ``kind`` for
    ``operand``'s dtype (then it changes nothing). TypeError for a non-scalar
    init value or an operand that is a container (JAX's pytrees of operands need a
    variadic computation, which srcjax does not support)."""
    if isinstance(operand, (tuple, list, dict)):
        raise TypeError(
            "srcjax lax.reduce_window takes one array operand (with lax.add, lax.max or"
            f" lax.min), got a {type(operand).__name__}"
        )
    if np.ndim(init_value) != 0:
        raise TypeError(
            f"reduce_window init_value must be a scalar, got shape {np.shape(init_value)}"
        )
    dt = _dt.dtype_of(operand)
    v = np.asarray(init_value)
    return bool(v == _identity(kind, dt))


def _window_sum_parts_impl(shape, operand, plan):
    """Static: ``(shape as (1, 1, *shape), the kernel of ones (1, 1, *window) in
    operand's dtype)`` for the window sum as a convolution (``operand`` gives
    only its dtype: under vmap it carries the batch axis, ``shape`` does not)."""
    dt = _dt.dtype_of(operand)
    return (1, 1) + tuple(shape), np.ones((1, 1) + tuple(plan[0]), dt)


def _window_out_shape_impl(y_shape):
    """Static: a window sum's result shape (the canonical conv's without its two
    leading unit axes)."""
    return tuple(y_shape[2:])


_window_plan = _static("ad.window_plan", _window_plan_impl)
_window_kind = _static("ad.window_kind", _window_kind_impl)
_window_init = _static("ad.window_init_is_identity", _window_init_impl)
_window_sum_parts = _static("ad.window_sum_parts", _window_sum_parts_impl)
_window_out_shape = _static("ad.window_out_shape", _window_out_shape_impl)
_window_plan.samples = lambda rng: [(((4, 5), (2, 2), (1, 2), "SAME", None, None), {})]
_window_kind.samples = lambda rng: [((operator.add,), {})]
_window_init.samples = lambda rng: [(("max", np.ones(3), -np.inf), {})]
_window_sum_parts.samples = lambda rng: [
    (((3, 4), np.ones((3, 4)), ((2, 2), (1, 1), ((0, 0), (0, 0)), (1, 1), (1, 1))), {})
]
_window_out_shape.samples = lambda rng: [(((1, 1, 3, 4),), {})]
