"""``srcjax.image``: ``resize`` of ``jax.image`` (JAX 0.10.2) for the methods
``nearest``, ``linear`` (``bilinear``, ``trilinear``), ``cubic`` (``bicubic``,
``tricubic``; Keys' kernel, a = -0.5), ``lanczos3`` and ``lanczos5``.

Each axis whose size changes is resampled on its own: output sample ``j`` sits
at input coordinate ``(j + 0.5) / scale - 0.5`` (pixel centers;
``scale = out / in``). ``nearest`` takes input ``floor((j + 0.5) / scale)``; the
other methods weight every input ``i`` by ``kernel(|coordinate - i| / s)``, with
``s = max(1 / scale, 1)`` when ``antialias`` (the kernel widened to low-pass a
shrinking axis), else 1, the weights normalized to sum to one per output. The
weights depend on the sizes only (a static helper, ``ad.image_resize_plan``);
the resampling is a ``tensordot`` (``take`` for ``nearest``) of the image, so
grad, jit and vmap come from those primitives. Kernel methods give the inexact
dtype of the image (an int image: float32); ``nearest`` keeps its dtype."""

from __future__ import annotations

import enum
from typing import Any, Sequence

import numpy as np

from .numpy._more._static import inexact_of as _inexact
from .primitives.creation import asarray
from .primitives.creation import shape as _shape_of
from .primitives.linalg import tensordot
from .primitives.registry import Primitive, register
from .primitives.structural import moveaxis, take

__all__ = ["ResizeMethod", "resize"]


class ResizeMethod(enum.Enum):
    """The methods of :func:`resize` (``jax.image.ResizeMethod``)."""

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        """The method ``s`` names (JAX's spellings); ValueError for another."""
        names = {
            "nearest": ResizeMethod.NEAREST,
            "linear": ResizeMethod.LINEAR,
            "bilinear": ResizeMethod.LINEAR,
            "trilinear": ResizeMethod.LINEAR,
            "triangle": ResizeMethod.LINEAR,
            "lanczos3": ResizeMethod.LANCZOS3,
            "lanczos5": ResizeMethod.LANCZOS5,
            "cubic": ResizeMethod.CUBIC,
            "bicubic": ResizeMethod.CUBIC,
            "tricubic": ResizeMethod.CUBIC,
        }
        m = names.get(s)
        if m is None:
            raise ValueError(f'Unknown resize method "{s}"')
        return m


def _triangle(x):
    return np.maximum(0.0, 1.0 - x)


def _keys_cubic(x):
    # Keys (1981) with a = -0.5: exact on quadratics, C1 at the samples
    near = ((1.5 * x - 2.5) * x) * x + 1.0
    far = ((-0.5 * x + 2.5) * x - 4.0) * x + 2.0
    return np.where(x <= 1.0, near, np.where(x < 2.0, far, 0.0))


def _lanczos(n):
    def kernel(x):
        with np.errstate(invalid="ignore", divide="ignore"):
            px = np.pi * x
            w = n * np.sin(px) * np.sin(px / n) / (px * px)
        return np.where(x == 0.0, 1.0, np.where(x < n, w, 0.0))

    return kernel


_KERNELS = {
    ResizeMethod.LINEAR: _triangle,
    ResizeMethod.CUBIC: _keys_cubic,
    ResizeMethod.LANCZOS3: _lanczos(3),
    ResizeMethod.LANCZOS5: _lanczos(5),
}


def _plan_impl(x_shape, out_shape, method, antialias, dtype):
    """Static: per axis whose size changes, ``(axis, operand)``: the indices to
    take (``nearest``) or the ``(in, out)`` weight matrix of ``dtype``; JAX's
    ValueErrors for a shape of another rank or an unknown method."""
    if len(out_shape) != len(x_shape):
        raise ValueError(
            "shape must have length equal to the number of dimensions of x;  "
            f"{tuple(out_shape)} vs {tuple(x_shape)}"
        )
    if not isinstance(method, ResizeMethod):
        method = ResizeMethod.from_string(method)
    steps = []
    for axis, (n_in, n_out) in enumerate(zip(x_shape, out_shape)):
        if n_in == n_out:
            continue
        scale = n_out / n_in
        centers = (np.arange(n_out, dtype=np.float64) + 0.5) / scale
        if method is ResizeMethod.NEAREST:
            idx = np.minimum(np.floor(centers).astype(np.int32), n_in - 1)
            steps.append((axis, idx))
            continue
        widen = max(1.0 / scale, 1.0) if antialias else 1.0
        coords = centers - 0.5
        dist = np.abs(coords[None, :] - np.arange(n_in, dtype=np.float64)[:, None]) / widen
        w = _KERNELS[method](dist)
        total = w.sum(axis=0, keepdims=True)
        ok = np.abs(total) > 1000.0 * float(np.finfo(np.float32).eps)
        w = np.where(ok, w / np.where(total != 0.0, total, 1.0), 0.0)
        inside = (coords >= -0.5) & (coords <= n_in - 0.5)
        steps.append((axis, np.where(inside[None, :], w, 0.0).astype(dtype)))
    return tuple(steps)


_plan = register(
    Primitive("ad.image_resize_plan", _plan_impl, kind="internal", differentiable=False)
)
_plan.def_batch(lambda c: (c.rebuild(), False))  # (sizes only: the same for every example)
_plan.samples = lambda rng: [(((4, 5), (3, 7), "linear", True, np.float32), {})]


def _method_impl(method):
    """Static: whether ``method`` is ``nearest`` (ValueError for an unknown one)."""
    if not isinstance(method, ResizeMethod):
        method = ResizeMethod.from_string(method)
    return method is ResizeMethod.NEAREST


_is_nearest = register(
    Primitive("ad.image_is_nearest", _method_impl, kind="internal", differentiable=False)
)
_is_nearest.def_batch(lambda c: (c.rebuild(), False))
_is_nearest.samples = lambda rng: [(("linear",), {})]


def resize(
    image: Any,
    shape: Sequence[int],
    method: Any,
    antialias: bool = True,
    precision: Any = None,
) -> Any:
    """``image`` resampled to ``shape`` (jax.image.resize): one entry per axis of
    ``image`` (an axis of the same size is left as it is); ``method`` a
    :class:`ResizeMethod` or its name. ``precision`` is accepted (products are
    computed in the image's float dtype). Raises ValueError for a ``shape`` of
    another rank or an unknown method, NotImplementedError for JAX's ``area``
    and ``cubic_pytorch`` (not provided)."""
    if isinstance(method, str) and method in ("area", "cubic_pytorch"):
        raise NotImplementedError(f"srcjax.image.resize: method {method!r} is not provided")
    x = asarray(image)
    if not _is_nearest(method):
        x = asarray(x, dtype=_inexact(x))
    for axis, op in _plan(_shape_of(x), tuple(shape), method, antialias, x.dtype):
        if op.ndim == 1:
            x = take(x, op, axis=axis)
        else:
            x = moveaxis(tensordot(x, op, axes=([axis], [0])), -1, axis)
    return x
