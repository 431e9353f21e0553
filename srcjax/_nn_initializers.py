"""``srcjax.nn.initializers``: parameter initializers, as ``jax.nn.initializers``
(https://docs.jax.dev/en/latest/jax.nn.initializers.html, JAX 0.10.2).

An initializer is a function ``init(key, shape, dtype=float32) -> array``; the
factories (``normal(stddev)``, ``glorot_uniform()`` ...) return one. They draw
with :mod:`srcjax.random`, which is bit for bit JAX's threefry on CPU for
``uniform``, ``normal`` and ``truncated_normal``, and then scale in the
requested dtype as JAX does, so the same key gives the same numbers as JAX for
float32 (``orthogonal`` goes through a QR decomposition: equal to JAX's within
rounding, not bitwise). ``out_sharding`` is accepted for signature
compatibility; anything but ``None`` raises NotImplementedError (srcjax has one
host device).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from . import dtypes as _dt

__all__ = [
    "Initializer",
    "constant",
    "delta_orthogonal",
    "glorot_normal",
    "glorot_uniform",
    "he_normal",
    "he_uniform",
    "kaiming_normal",
    "kaiming_uniform",
    "lecun_normal",
    "lecun_uniform",
    "normal",
    "ones",
    "orthogonal",
    "truncated_normal",
    "uniform",
    "variance_scaling",
    "xavier_normal",
    "xavier_uniform",
    "zeros",
]

#: ``init(key, shape, dtype=None, out_sharding=None) -> array``
Initializer = Callable[..., Any]


def _random() -> Any:
    """:mod:`srcjax.random` (imported on first use: it imports srcjax.nn, which
    imports this module)."""
    from . import random

    return random


def _dtype(dtype: Any) -> np.dtype:
    """The canonical dtype an initializer produces (default: float32)."""
    return _dt.default_float() if dtype is None else _dt.canonicalize_dtype(dtype)


def _shape(shape: Any) -> tuple:
    try:
        return tuple(int(d) for d in shape)
    except TypeError:
        raise TypeError(
            f"initializer shape must be a sequence of integers, got {shape!r}"
        ) from None


def _no_sharding(out_sharding: Any) -> None:
    if out_sharding is not None:
        raise NotImplementedError("out_sharding is not supported by srcjax (one host device)")


def _scalar(value: Any, dtype: np.dtype) -> np.ndarray:
    """``jnp.array(value, dtype)``: ``value`` rounded to ``dtype``."""
    return np.asarray(value).astype(dtype)


def zeros(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None):
    """An array of zeros of ``shape`` and ``dtype`` (default float32); ``key``
    is unused (jax.nn.initializers.zeros)."""
    _no_sharding(out_sharding)
    return np.zeros(_shape(shape), _dtype(dtype))


def ones(key: Any, shape: Sequence[int], dtype: Any = None, out_sharding: Any = None):
    """An array of ones of ``shape`` and ``dtype`` (default float32); ``key``
    is unused (jax.nn.initializers.ones)."""
    _no_sharding(out_sharding)
    return np.ones(_shape(shape), _dtype(dtype))


def constant(value: Any, dtype: Any = None) -> Initializer:
    """An initializer filling ``shape`` with ``value`` (broadcast) in ``dtype``
    (default float32) (jax.nn.initializers.constant)."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None):
        _no_sharding(out_sharding)
        d = _dtype(dtype)
        return np.array(np.broadcast_to(np.asarray(value).astype(d), _shape(shape)))

    return init


def uniform(scale: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing ``U[0, scale)`` in ``dtype``
    (jax.nn.initializers.uniform): ``random.uniform(key, shape, dtype) *
    scale``."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None):
        _no_sharding(out_sharding)
        d = _dtype(dtype)
        return _random().uniform(key, _shape(shape), d) * _scalar(scale, d)

    return init


def normal(stddev: Any = 1e-2, dtype: Any = None) -> Initializer:
    """An initializer drawing ``N(0, stddev**2)`` in ``dtype``
    (jax.nn.initializers.normal)."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None):
        _no_sharding(out_sharding)
        d = _dtype(dtype)
        return _random().normal(key, _shape(shape), d) * _scalar(stddev, d)

    return init


def truncated_normal(
    stddev: Any = 1e-2, dtype: Any = None, lower: Any = -2.0, upper: Any = 2.0
) -> Initializer:
    """An initializer drawing a standard normal truncated to ``[lower, upper]``
    times ``stddev`` (jax.nn.initializers.truncated_normal; ``stddev`` is the
    scale before truncation)."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None):
        _no_sharding(out_sharding)
        d = _dtype(dtype)
        draw = _random().truncated_normal(key, lower, upper, _shape(shape), d)
        return draw * _scalar(stddev, d)

    return init


def _compute_fans(
    shape: tuple,
    in_axis: int | Sequence[int] = -2,
    out_axis: int | Sequence[int] = -1,
    batch_axis: int | Sequence[int] = (),
) -> tuple[float, float]:
    """``(fan_in, fan_out)`` of a weight of ``shape``: the sizes of the in/out
    axes times the receptive field (the other non-batch axes), as JAX's."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise ValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights "
            "tensor with default in_axis. Must be at least 2D or specify in_axis explicitly."
        )

    def size(axes: int | Sequence[int]) -> int:
        if isinstance(axes, int):
            return shape[axes]
        return math.prod([shape[i] for i in axes])

    in_size, out_size, batch_size = size(in_axis), size(out_axis), size(batch_axis)
    receptive = math.prod(shape) / in_size / out_size / batch_size
    return in_size * receptive, out_size * receptive


def _real_dtype(dtype: np.dtype) -> np.dtype:
    return np.zeros((), dtype).real.dtype


def _complex_uniform(key: Any, shape: tuple, dtype: np.dtype) -> np.ndarray:
    """JAX's complex uniform draw: modulus ``sqrt(2u)``, uniform phase."""
    key_r, key_theta = _random().split(key)
    real = _real_dtype(dtype)
    r = np.sqrt(2 * _random().uniform(key_r, shape, real)).astype(dtype)
    theta = (2 * np.pi * _random().uniform(key_theta, shape, real)).astype(dtype)
    return (r * np.exp(1j * theta)).astype(dtype)


def _complex_truncated_normal(key: Any, upper: float, shape: tuple, dtype: np.dtype):
    """JAX's complex truncated normal: modulus from the truncated Rayleigh
    inverse CDF, uniform phase."""
    key_r, key_theta = _random().split(key)
    real = _real_dtype(dtype)
    t = (1 - np.exp(np.asarray(-(upper**2), dtype))) * _random().uniform(key_r, shape, real).astype(
        dtype
    )
    r = np.sqrt(-np.log(1 - t))
    theta = (2 * np.pi * _random().uniform(key_theta, shape, real)).astype(dtype)
    return (r * np.exp(1j * theta)).astype(dtype)


def variance_scaling(
    scale: Any,
    mode: str,
    distribution: str,
    in_axis: int | Sequence[int] = -2,
    out_axis: int | Sequence[int] = -1,
    batch_axis: int | Sequence[int] = (),
    dtype: Any = None,
) -> Initializer:
    """An initializer whose variance is ``scale / n`` (jax.nn.initializers.
    variance_scaling), ``n`` by ``mode``: ``"fan_in"``, ``"fan_out"``,
    ``"fan_avg"`` (mean of the two) or ``"fan_geo_avg"`` (geometric mean),
    the fans computed from the weight's ``shape`` and the axis arguments.
    ``distribution``: ``"truncated_normal"`` (truncated at two standard
    deviations, rescaled to the variance), ``"normal"`` or ``"uniform"``
    (``[-sqrt(3 var), sqrt(3 var))``). Complex dtypes use JAX's complex draws.

    The returned ``init`` raises ValueError for an unknown ``mode`` or
    ``distribution`` and for a weight of fewer than 2 dimensions with the
    default ``in_axis``."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None):
        _no_sharding(out_sharding)
        shape = _shape(shape)
        d = _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        if mode == "fan_in":
            denominator = fan_in
        elif mode == "fan_out":
            denominator = fan_out
        elif mode == "fan_avg":
            denominator = (fan_in + fan_out) / 2
        elif mode == "fan_geo_avg":
            denominator = (fan_in * fan_out) ** 0.5
        else:
            raise ValueError(f"invalid mode for variance scaling initializer: {mode}")
        variance = _scalar(scale / denominator, d)
        floating = d.kind == "f"
        if distribution == "truncated_normal":
            if floating:
                stddev = np.sqrt(variance) / _scalar(0.87962566103423978, d)
                return _random().truncated_normal(key, -2, 2, shape, d) * stddev
            stddev = np.sqrt(variance) / _scalar(0.95311164380491208, d)
            return _complex_truncated_normal(key, 2, shape, d) * stddev
        if distribution == "normal":
            return _random().normal(key, shape, d) * np.sqrt(variance)
        if distribution == "uniform":
            if floating:
                return _random().uniform(key, shape, d, -1) * np.sqrt(3 * variance)
            return _complex_uniform(key, shape, d) * np.sqrt(variance)
        raise ValueError(f"invalid distribution for variance scaling initializer: {distribution}")

    return init


def _preset(name: str, scale: float, mode: str, distribution: str, doc: str):
    """The initializer factory ``name(in_axis=-2, out_axis=-1, batch_axis=(),
    dtype=None)``: :func:`variance_scaling` with ``scale``, ``mode`` and
    ``distribution`` fixed (jax.nn.initializers' presets)."""

    def preset(
        in_axis: int | Sequence[int] = -2,
        out_axis: int | Sequence[int] = -1,
        batch_axis: int | Sequence[int] = (),
        dtype: Any = None,
    ) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis, out_axis, batch_axis, dtype)

    preset.__name__ = preset.__qualname__ = name
    preset.__doc__ = doc
    return preset


glorot_uniform = _preset(
    "glorot_uniform",
    1.0,
    "fan_avg",
    "uniform",
    """Glorot/Xavier uniform: ``variance_scaling(1.0, "fan_avg", "uniform")``.""",
)
glorot_normal = _preset(
    "glorot_normal",
    1.0,
    "fan_avg",
    "truncated_normal",
    """Glorot/Xavier normal: ``variance_scaling(1.0, "fan_avg", "truncated_normal")``.""",
)
lecun_uniform = _preset(
    "lecun_uniform",
    1.0,
    "fan_in",
    "uniform",
    """LeCun uniform: ``variance_scaling(1.0, "fan_in", "uniform")``.""",
)
lecun_normal = _preset(
    "lecun_normal",
    1.0,
    "fan_in",
    "truncated_normal",
    """LeCun normal: ``variance_scaling(1.0, "fan_in", "truncated_normal")``.""",
)
he_uniform = _preset(
    "he_uniform",
    2.0,
    "fan_in",
    "uniform",
    """He/Kaiming uniform: ``variance_scaling(2.0, "fan_in", "uniform")``.""",
)
he_normal = _preset(
    "he_normal",
    2.0,
    "fan_in",
    "truncated_normal",
    """He/Kaiming normal: ``variance_scaling(2.0, "fan_in", "truncated_normal")``.""",
)

xavier_uniform = glorot_uniform
xavier_normal = glorot_normal
kaiming_uniform = he_uniform
kaiming_normal = he_normal


def orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """An initializer giving a uniformly random orthogonal matrix (orthonormal
    rows or columns, whichever are fewer) reshaped to ``shape``, times
    ``scale`` (jax.nn.initializers.orthogonal): the matrix has
    ``shape[column_axis]`` columns and the product of the other dimensions as
    rows. Raises ValueError for a shape of fewer than 2 dimensions."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None):
        _no_sharding(out_sharding)
        shape = _shape(shape)
        d = _dtype(dtype)
        if len(shape) < 2:
            raise ValueError("orthogonal initializer requires at least a 2D shape")
        if any(dim == 0 for dim in shape):
            return np.zeros(shape, d)
        n_cols = shape[column_axis]
        n_rows = math.prod(shape) // n_cols
        q = np.asarray(_random().orthogonal(key, n_rows, (), d, n_cols))
        q = q.reshape(tuple(np.delete(shape, column_axis)) + (n_cols,))
        q = np.moveaxis(q, -1, column_axis)
        return _scalar(scale, d) * q

    return init


def delta_orthogonal(scale: Any = 1.0, column_axis: int = -1, dtype: Any = None) -> Initializer:
    """The delta-orthogonal initializer for 3-, 4- and 5-D convolution kernels
    (jax.nn.initializers.delta_orthogonal): zeros except the spatial center,
    which holds an ``orthogonal(scale, column_axis)`` matrix of shape
    ``shape[-2:]``. Raises ValueError for another rank or when ``shape[-1] <
    shape[-2]``."""

    def init(key: Any, shape: Sequence[int], dtype: Any = dtype, out_sharding: Any = None):
        _no_sharding(out_sharding)
        shape = _shape(shape)
        d = _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
        if shape[-1] < shape[-2]:
            raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
        matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=d)(key, shape[-2:])
        w = np.zeros(shape, d)
        center = tuple((k - 1) // 2 for k in shape[:-2])
        w[center] = matrix
        return w

    return init
