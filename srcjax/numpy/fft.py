"""``srcjax.numpy.fft`` (``jnp.fft``): discrete Fourier transforms with JAX
semantics (https://jax.readthedocs.io/en/latest/jax.numpy.html#module-jax.numpy.fft).

``fftn``, ``ifftn``, ``rfftn``, ``irfftn``, ``fftshift`` and ``ifftshift`` are
registered primitives (see :mod:`srcjax.primitives.fft`: their derivative and
batching rules, and the dtype rules); the 1-D and 2-D transforms, ``hfft``,
``ihfft``, ``fftfreq`` and ``rfftfreq`` are compositions of primitives that
transformed code inlines like user functions.

``norm`` is one of None/"backward" (forward transforms unscaled, inverse ones
scaled by ``1/n``), "ortho" (both by ``1/sqrt(n)``) or "forward" (the reverse
of "backward"); anything else raises ``ValueError``. Real input to the complex
transforms becomes complex64 (complex128 only for 64-bit input with
``jax_enable_x64``); ``irfft`` gives float32. Every transform is
differentiable (JAX's convention for complex cotangents: ``re(g * t)``).
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as _np

from .. import dtypes as _dt
from ..primitives.ad import astype
from ..primitives.creation import arange, asarray
from ..primitives.elementwise import conj, true_divide
from ..primitives.fft import (
    fft_axes2,
    fft_axis,
    fft_n,
    fft_swap_norm,
    fftn,
    fftshift,
    ifftn,
    ifftshift,
    irfftn,
    rfftn,
)
from ..primitives.registry import Primitive, register

__all__ = [
    "fft",
    "ifft",
    "rfft",
    "irfft",
    "hfft",
    "ihfft",
    "fft2",
    "ifft2",
    "rfft2",
    "irfft2",
    "fftn",
    "ifftn",
    "rfftn",
    "irfftn",
    "fftfreq",
    "rfftfreq",
    "fftshift",
    "ifftshift",
]


# ---------------------------------------------------------------------------
# 1-D transforms


def fft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Any:
    """1-D discrete Fourier transform along ``axis`` (jax.numpy.fft.fft).

    ``a``: an array; ``n``: the transform length (``a`` cropped or zero-padded
    along ``axis``), default ``a.shape[axis]``. Result: ``a``'s shape with
    ``n`` along ``axis``, complex64 (complex128 for 64-bit input with
    ``jax_enable_x64``). Raises ``ValueError`` for a sequence ``axis``, an axis
    out of range, ``n <= 0`` or a bad ``norm``; ``TypeError`` for a list ``a``
    or a non-integer ``n``."""
    return fftn(a, fft_n(n), fft_axis(axis, "fft"), norm)


def ifft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Any:
    """1-D inverse discrete Fourier transform along ``axis``
    (jax.numpy.fft.ifft). Arguments, shapes, dtypes and errors as :func:`fft`."""
    return ifftn(a, fft_n(n), fft_axis(axis, "ifft"), norm)


def rfft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Any:
    """1-D DFT of real input along ``axis`` (jax.numpy.fft.rfft): the ``n // 2 +
    1`` non-negative frequency bins. ``a`` real (bool/int become float32);
    complex or float16 input raises ``ValueError`` as in JAX. Result complex64
    (complex128 for float64 with ``jax_enable_x64``). Other errors as
    :func:`fft`."""
    return rfftn(a, fft_n(n), fft_axis(axis, "rfft"), norm)


def irfft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Any:
    """Inverse of :func:`rfft` along ``axis`` (jax.numpy.fft.irfft).

    ``a``: the half spectrum (``n // 2 + 1`` bins used, cropped or zero-padded);
    ``n``: the output length, default ``2 * (a.shape[axis] - 1)``. The imaginary
    parts of the DC (and, for even ``n``, Nyquist) bins are ignored. Result
    float32 (float64 for complex128 input with ``jax_enable_x64``). Errors as
    :func:`fft`."""
    return irfftn(a, fft_n(n), fft_axis(axis, "irfft"), norm)


def hfft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Any:
    """The FFT of a signal with Hermitian symmetry given by its half spectrum
    ``a`` (jax.numpy.fft.hfft): ``irfft(conj(a), n)`` scaled as a forward
    transform (unscaled for "backward"). ``n``: the output length, default
    ``2 * (a.shape[axis] - 1)``. Result float32 (float64 for 64-bit input with
    ``jax_enable_x64``). Errors as :func:`fft`."""
    return irfftn(conj(a), fft_n(n), fft_axis(axis, "hfft"), fft_swap_norm(norm))


def ihfft(a: Any, n: Optional[int] = None, axis: int = -1, norm: Optional[str] = None) -> Any:
    """The inverse of :func:`hfft` (jax.numpy.fft.ihfft): ``conj(rfft(a, n))``
    scaled as an inverse transform (by ``1/n`` for "backward"). ``a`` real;
    result complex64 with ``n // 2 + 1`` bins along ``axis``. Errors as
    :func:`rfft`."""
    return conj(rfftn(a, fft_n(n), fft_axis(axis, "ihfft"), fft_swap_norm(norm)))


# ---------------------------------------------------------------------------
# 2-D transforms


def _two_axes(name: str, nd, doc: str):
    """``jnp.fft.<name>(a, s=None, axes=(-2, -1), norm=None)``: ``nd`` (``fftn``,
    ``ifftn`` ...) over the two ``axes`` (a ValueError unless there are two)."""

    def transform(
        a: Any,
        s: Optional[Sequence[int]] = None,
        axes: Sequence[int] = (-2, -1),
        norm: Optional[str] = None,
    ) -> Any:
        return nd(a, s, fft_axes2(axes, name), norm)

    transform.__name__ = transform.__qualname__ = name
    transform.__doc__ = doc
    return transform


fft2 = _two_axes(
    "fft2",
    fftn,
    """2-D discrete Fourier transform over ``axes`` (jax.numpy.fft.fft2): ``fftn``
    over two axes. ``s``: the two transform lengths. Raises ``ValueError``
    unless ``axes`` has two entries, and as :func:`fftn`.""",
)
ifft2 = _two_axes(
    "ifft2",
    ifftn,
    """2-D inverse discrete Fourier transform (jax.numpy.fft.ifft2); as
    :func:`fft2`.""",
)
rfft2 = _two_axes(
    "rfft2",
    rfftn,
    """2-D DFT of real input (jax.numpy.fft.rfft2): ``rfftn`` over two axes (the
    last one halved). Errors as :func:`fft2` and :func:`rfft`.""",
)
irfft2 = _two_axes(
    "irfft2",
    irfftn,
    """Inverse of :func:`rfft2` (jax.numpy.fft.irfft2): ``irfftn`` over two axes;
    ``s`` gives the output lengths. Result float32. Errors as :func:`fft2`.""",
)


# ---------------------------------------------------------------------------
# sample frequencies


def _freq_dtypes(n, d, dtype, name):
    """Static: ``(computing dtype, result dtype)`` of fftfreq / rfftfreq after
    JAX's checks (``n`` an int, ``d`` one value)."""
    if isinstance(n, (list, tuple)):
        raise ValueError(
            f"The n argument of jax.numpy.fft.{name} only takes an int. Got n = {list(n)}."
        )
    if isinstance(d, (list, tuple)):
        raise ValueError(
            f"The d argument of jax.numpy.fft.{name} only takes a single value. Got d = {list(d)}."
        )
    out = _dt.default_float() if dtype is None else _dt.canonicalize_dtype(dtype)
    work = _np.finfo(_dt.to_inexact_dtype(out)).dtype
    return work, out


def _unbatched_result(c):
    return c.rebuild(), False


freq_dtypes = register(
    Primitive("ad.fft_freq_dtypes", _freq_dtypes, kind="internal", differentiable=False)
)
freq_dtypes.def_batch(_unbatched_result)
freq_dtypes.samples = lambda rng: [((5, 1.0, None, "fftfreq"), {})]


def fftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of an ``n``-point DFT with sample spacing ``d``
    (jax.numpy.fft.fftfreq): ``[0, 1, ..., (n-1)//2, -(n//2), ..., -1] / (d n)``.

    Shape ``(n,)``; dtype ``dtype`` (default float32, float64 with
    ``jax_enable_x64``), computed in its real floating type and converted, as
    JAX. Differentiable in ``d``. Raises ``ValueError`` for a list ``n`` or
    ``d``. ``device`` is ignored."""
    dts = freq_dtypes(n, d, dtype, "fftfreq")
    i = arange(n, dtype=dts[0])
    k = (i + n // 2) % n - n // 2
    return astype(true_divide(k, asarray(d * n, dtype=dts[0])), dts[1])


def rfftfreq(n: int, d: Any = 1.0, *, dtype: Any = None, device: Any = None) -> Any:
    """The sample frequencies of :func:`rfft`'s bins (jax.numpy.fft.rfftfreq):
    ``[0, 1, ..., n//2] / (d n)``, shape ``(n // 2 + 1,)``.

    Computed as JAX does: ``arange(n // 2 + 1, dtype=dtype) / (d n)``, so the
    default is float32 (float64 with ``jax_enable_x64``) and an integer
    ``dtype`` gives the default float. Differentiable in ``d``. Raises
    ``ValueError`` for a list ``n`` or ``d``. ``device`` is ignored."""
    dts = freq_dtypes(n, d, dtype, "rfftfreq")
    k = arange(0, n // 2 + 1, dtype=dts[1])
    return true_divide(k, asarray(d * n, dtype=dts[1]))
