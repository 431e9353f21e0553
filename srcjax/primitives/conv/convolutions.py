"""The public convolutions (``lax.conv_general_dilated``, ``conv``,
``conv_with_general_padding``, ``conv_transpose``, ``conv_dimension_numbers``):
compositions of the static helpers, transposes to and from the canonical
layout, and ``ad.conv``.
"""

from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from ..ad import astype as _astype
from ..creation import asarray as _asarray
from ..creation import shape as _shape
from ..structural import flip as _flip
from ..structural import swapaxes as _swapaxes
from ..structural import transpose as _transpose
from .canonical import _conv_dtype, _conv_plan, _conv_transpose_plan, _static, conv_p
from .plans import ArrayLike, DimensionNumbers, DTypeLike, Padding

__all__ = ["conv_general_dilated", "conv", "conv_with_general_padding", "conv_transpose"]

# ---------------------------------------------------------------------------
# public convolutions: compositions


def conv_general_dilated(
    lhs: ArrayLike,
    rhs: ArrayLike,
    window_strides: Sequence[int],
    padding: Padding,
    lhs_dilation: Optional[Sequence[int]] = None,
    rhs_dilation: Optional[Sequence[int]] = None,
    dimension_numbers: DimensionNumbers = None,
    feature_group_count: int = 1,
    batch_group_count: int = 1,
    precision: Any = None,
    preferred_element_type: Optional[DTypeLike] = None,
) -> np.ndarray:
    """General n-dimensional convolution with dilation and groups
    (jax.lax.conv_general_dilated,
    https://docs.jax.dev/en/latest/_autosummary/jax.lax.conv_general_dilated.html).

    Args:
        lhs: array of rank ``n + 2`` (batch, feature and ``n`` spatial axes, laid
            out as ``dimension_numbers`` says).
        rhs: kernel of rank ``n + 2`` (output feature, input feature, ``n``
            spatial axes), the same dtype as ``lhs``.
        window_strides: ``n`` positive ints.
        padding: ``"SAME"``, ``"SAME_LOWER"``, ``"VALID"``, or ``n`` ``(lo, hi)`` int
            pairs (negative values crop).
        lhs_dilation, rhs_dilation: None or ``n`` positive ints (lhs dilation is a
            transposed convolution; it needs explicit padding).
        dimension_numbers: None (``NC...``/``OI...``/``NC...``), three strings such
            as ``("NHWC", "HWIO", "NHWC")``, or a :class:`ConvDimensionNumbers`.
        feature_group_count, batch_group_count: positive ints, at most one of
            them above 1 (XLA's semantics).
        precision: accepted and ignored (NumPy computes at full precision).
        preferred_element_type: None, or a dtype at least as wide as the inputs'
            (e.g. int8 inputs with ``int32``): the operands are converted to it.

    Returns:
        An array laid out as ``out_spec``: batch ``N // batch_group_count``, feature
        ``O``, spatial sizes ``max(0, (dilated in + lo + hi - dilated window) //
        stride + 1)``; dtype: the inputs' (or ``preferred_element_type``). Float16
        is accumulated in float32, bool as OR of ANDs.

    Raises:
        TypeError for different operand dtypes, bad dimension numbers or a
        narrower ``preferred_element_type``; ValueError for sizes that do not
        match (features, groups), bad padding or string padding with
        ``lhs_dilation``; RuntimeError for an unknown padding name (all as JAX).

    Differentiable in both operands to any order (the adjoints are convolutions);
    batches under vmap without a loop.
    """
    cast = _conv_dtype(lhs, rhs, preferred_element_type)
    if cast is None:
        lhs = _asarray(lhs)
        rhs = _asarray(rhs)
    else:
        lhs = _astype(lhs, cast)
        rhs = _astype(rhs, cast)
    plan = _conv_plan(
        _shape(lhs),
        _shape(rhs),
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        dimension_numbers,
        feature_group_count,
        batch_group_count,
    )
    x = _transpose(lhs, plan[0])
    w = _transpose(rhs, plan[1])
    y = conv_p(x, w, plan[2], plan[3], plan[4], plan[5], plan[6], plan[7])
    return _transpose(y, plan[8])


def conv(
    lhs: ArrayLike,
    rhs: ArrayLike,
    window_strides: Sequence[int],
    padding: Padding,
    precision: Any = None,
    preferred_element_type: Optional[DTypeLike] = None,
) -> np.ndarray:
    """Convolution in the ``NC...``/``OI...`` layout without dilation or groups
    (jax.lax.conv): ``conv_general_dilated(lhs, rhs, window_strides, padding)``.

    Args:
        lhs: ``(N, C, *spatial)``; rhs: ``(O, C, *window)``, the same dtype.
        window_strides: one positive int per spatial axis.
        padding: ``"SAME"``, ``"SAME_LOWER"``, ``"VALID"`` or ``(lo, hi)`` pairs.
        precision: ignored; preferred_element_type: as
            :func:`conv_general_dilated`.

    Returns:
        ``(N, O, *out_spatial)``, the inputs' dtype. Errors as
        :func:`conv_general_dilated`.
    """
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        None,
        None,
        None,
        1,
        1,
        precision,
        preferred_element_type,
    )


def conv_with_general_padding(
    lhs: ArrayLike,
    rhs: ArrayLike,
    window_strides: Sequence[int],
    padding: Padding,
    lhs_dilation: Optional[Sequence[int]],
    rhs_dilation: Optional[Sequence[int]],
    precision: Any = None,
    preferred_element_type: Optional[DTypeLike] = None,
) -> np.ndarray:
    """Convolution in the ``NC...``/``OI...`` layout with dilations
    (jax.lax.conv_with_general_padding): ``conv_general_dilated`` with
    ``lhs_dilation`` and ``rhs_dilation`` (None or one positive int per spatial
    axis). Shapes, dtypes and errors as :func:`conv_general_dilated`."""
    return conv_general_dilated(
        lhs,
        rhs,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        None,
        1,
        1,
        precision,
        preferred_element_type,
    )


def conv_transpose(
    lhs: ArrayLike,
    rhs: ArrayLike,
    strides: Sequence[int],
    padding: Padding,
    rhs_dilation: Optional[Sequence[int]] = None,
    dimension_numbers: DimensionNumbers = None,
    transpose_kernel: bool = False,
    precision: Any = None,
    preferred_element_type: Optional[DTypeLike] = None,
    use_consistent_padding: bool = False,
) -> np.ndarray:
    """Transposed ("fractionally strided") convolution (jax.lax.conv_transpose):
    ``conv_general_dilated`` with unit strides and ``lhs_dilation=strides``.

    Args:
        lhs: array of rank ``n + 2``; rhs: kernel of rank ``n + 2``, same dtype.
        strides: ``n`` positive ints (the dilation of ``lhs``).
        padding: ``"SAME"`` or ``"VALID"`` (the padding of the forward conv this
            transposes, JAX's rule), or ``(lo, hi)`` pairs used as they are (as
            the forward conv's padding with ``use_consistent_padding=True``).
        rhs_dilation: None or ``n`` positive ints.
        dimension_numbers: None gives TensorFlow's layout (``NHWC``/``HWIO``/
            ``NHWC`` for 2-D; ``NC``/``IO``, ``NHC``/``HIO``, ``NHWDC``/``HWDIO``
            for 0, 1 and 3 spatial axes), else as :func:`conv_general_dilated`.
        transpose_kernel: flip the kernel's spatial axes and swap its input and
            output feature axes (the gradient of a forward conv, Keras's
            Conv2DTranspose).
        precision: ignored; preferred_element_type: as
            :func:`conv_general_dilated`.

    Returns:
        The transposed convolution, laid out as the output spec; spatial size
        ``(in - 1) * stride + dilated window - lo' - hi'`` for its padding.

    Raises:
        ValueError for an unknown padding or rank above 5 without
        ``dimension_numbers``; otherwise as :func:`conv_general_dilated`.
    """
    plan = _conv_transpose_plan(
        _shape(lhs),
        _shape(rhs),
        strides,
        padding,
        rhs_dilation,
        dimension_numbers,
        use_consistent_padding,
    )
    if transpose_kernel:
        rhs = _swapaxes(_flip(rhs, plan[2]), plan[3], plan[4])
    ones = _transpose_ones(plan[5])
    return conv_general_dilated(
        lhs,
        rhs,
        ones,
        plan[1],
        plan[5],
        plan[6],
        plan[0],
        1,
        1,
        precision,
        preferred_element_type,
    )


def _transpose_ones_impl(strides):
    """Static: unit strides, one per spatial axis."""
    return (1,) * len(strides)


_transpose_ones = _static("ad.conv_unit_strides", _transpose_ones_impl)
_transpose_ones.samples = lambda rng: [(((2, 2),), {})]
