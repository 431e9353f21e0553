"""``srcjax.scipy.signal``: the N-dimensional ``convolve`` and ``correlate`` and
the 2-D ``convolve2d``/``correlate2d`` of ``jax.scipy.signal`` (JAX 0.10.2), as
compositions of primitives (transformed code inlines them: grad, jit and vmap
come from ``lax.conv_general_dilated``, ``flip``, ``conj`` and ``lax.dynamic_slice``).

Each computes the full result (one ``conv_general_dilated`` of the first
operand with the second flipped, or conjugated for a correlation, padded by the
second's size less one on both sides) and slices the part ``mode`` asks for:
``"same"`` centered on the first operand as SciPy and JAX center it,
``"valid"`` where one operand covers the other in every dimension. Dtype: the
inexact promotion of both operands. ``method`` (``"auto"``, ``"direct"``,
``"fft"``) and ``precision`` are accepted; every method computes directly
(``"fft"`` agrees to rounding)."""

from __future__ import annotations

from typing import Any

from ..numpy._more._static import inexact_of
from ..primitives.conv import conv_general_dilated
from ..primitives.creation import asarray, shape
from ..primitives.elementwise import conj
from ..primitives.registry import Primitive, register
from ..primitives.structural import dynamic_slice, flip

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d"]

_MODES = ("full", "same", "valid")


def _plan_impl(s1, s2, mode, kind):
    """Static: ``(padding, strides, starts, sizes)`` of the full result and the
    slice ``mode`` keeps, for operands of shapes ``s1`` and ``s2``; JAX's
    ValueErrors for an unknown mode, ranks that differ (``kind``: the function,
    ``"...2d"`` ones take 2-D operands only), and ``"valid"`` operands neither of
    which covers the other."""
    if mode not in _MODES:
        raise ValueError(f"mode must be one of {list(_MODES)}")
    if kind.endswith("2d") and (len(s1) != 2 or len(s2) != 2):
        raise ValueError(f"{kind}() only supports 2-dimensional inputs.")
    if len(s1) != len(s2):
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if mode == "valid" and not (
        all(a >= b for a, b in zip(s1, s2)) or all(a <= b for a, b in zip(s1, s2))
    ):
        raise ValueError("One input must be smaller than the other in every dimension.")
    starts, sizes = [], []
    for a, b in zip(s1, s2):
        if mode == "full":
            start, size = 0, a + b - 1
        elif mode == "same":
            # (scipy.signal.correlate2d centers an even kernel one place later)
            start = (b - 1) // 2 if kind != "correlate2d" else b - 1 - (b - 1) // 2
            size = a
        else:
            start, size = min(a, b) - 1, abs(a - b) + 1
        starts.append(start)
        sizes.append(size)
    padding = tuple((b - 1, b - 1) for b in s2)
    return padding, (1,) * len(s1), tuple(starts), tuple(sizes)


_plan = register(Primitive("ad.signal_plan", _plan_impl, kind="internal", differentiable=False))
_plan.def_batch(lambda c: (c.rebuild(), False))  # (shapes only: the same for every example)
_plan.samples = lambda rng: [(((3, 4), (2, 2), "same", "convolve"), {})]


def _full_then_slice(in1, in2, mode, kind, convolution):
    dt = inexact_of(in1, in2)
    x = asarray(in1, dtype=dt)
    k = asarray(in2, dtype=dt)
    padding, strides, starts, sizes = _plan(shape(x), shape(k), mode, kind)
    if convolution:
        k = flip(k)
    else:
        k = conj(k)
    full = conv_general_dilated(x[None, None], k[None, None], strides, padding)
    return dynamic_slice(full[0, 0], starts, sizes)


def convolve(in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision=None):
    """N-dimensional convolution of ``in1`` and ``in2`` (jax.scipy.signal.convolve):
    ``"full"`` (shape ``s1 + s2 - 1``), ``"same"`` (``in1``'s shape, centered) or
    ``"valid"`` (``|s1 - s2| + 1``, either operand covering the other)."""
    return _full_then_slice(in1, in2, mode, "convolve", True)


def correlate(in1: Any, in2: Any, mode: str = "full", method: str = "auto", precision=None):
    """N-dimensional cross-correlation (jax.scipy.signal.correlate): ``in1``
    against the conjugate of ``in2``, shapes as :func:`convolve`."""
    return _full_then_slice(in1, in2, mode, "correlate", False)


def _fill_only(kind, boundary, fillvalue):
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError(f"{kind}() only supports boundary='fill', fillvalue=0")


def convolve2d(
    in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue=0, precision=None
):
    """2-D convolution (jax.scipy.signal.convolve2d): :func:`convolve` of 2-D
    operands; ``boundary="fill"`` with ``fillvalue=0`` only (NotImplementedError
    otherwise, as JAX)."""
    _fill_only("convolve2d", boundary, fillvalue)
    return _full_then_slice(in1, in2, mode, "convolve2d", True)


def correlate2d(
    in1: Any, in2: Any, mode: str = "full", boundary: str = "fill", fillvalue=0, precision=None
):
    """2-D cross-correlation (jax.scipy.signal.correlate2d); ``"same"`` centers an
    even-sized ``in2`` one place later than :func:`correlate` does, as SciPy."""
    _fill_only("correlate2d", boundary, fillvalue)
    return _full_then_slice(in1, in2, mode, "correlate2d", False)
