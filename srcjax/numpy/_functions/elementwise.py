"""``jnp``'s elementwise compositions (``copysign``, ``heaviside``, ``divmod``,
``angle``, ``select``, ``cumulative_sum``, ``vecdot`` ...)."""

from __future__ import annotations

import numpy as _np

from ...primitives.ad import moveaxis, sum, zeros_like
from ...primitives.creation import asarray, iscomplexobj, ones_like, shape
from ...primitives.elementwise import abs as _abs
from ...primitives.elementwise import (
    arctan2,
    conj,
    floor_divide,
    imag,
    isnan,
    real,
    remainder,
    signbit,
    where,
)
from ...primitives.reductions import cumsum
from ...primitives.reductions import max as _max
from ...primitives.reductions import min as _min
from ...primitives.structural import concatenate, diff, ravel, take
from ._static import inexact_dtype, sum_accumulator

# ---------------------------------------------------------------------------
# elementwise compositions


def copysign(x1, x2):
    """The magnitude of ``x1`` with the sign bit of ``x2`` (jax.numpy.copysign);
    ``-0.0`` counts as negative. Shape: broadcast; dtype: JAX's inexact promotion.
    Derivative in ``x1``: ``sign(x1) * sign-bit sign of x2`` (0 at ``x1 = 0``, as
    ``abs``); none in ``x2``."""
    dt = inexact_dtype(x1, x2)
    m = _abs(asarray(x1, dtype=dt))
    return where(signbit(x2), -m, m)


def heaviside(x1, x2):
    """The Heaviside step (jax.numpy.heaviside): 0 where ``x1 < 0``, ``x2`` where
    ``x1 == 0``, 1 where ``x1 > 0`` (NaN where ``x1`` is NaN). Dtype: JAX's
    inexact promotion. Derivative 0 in ``x1``; ``x2``'s where ``x1 == 0``."""
    dt = inexact_dtype(x1, x2)
    x1 = asarray(x1, dtype=dt)
    x2 = asarray(x2, dtype=dt)
    step = where(x1 > 0, ones_like(x1), zeros_like(x1))
    return where(x1 == 0, x2, where(isnan(x1), x1, step))


def divmod(x1, x2):
    """``(floor_divide(x1, x2), remainder(x1, x2))`` (jax.numpy.divmod), Python's
    sign conventions (the remainder has the sign of ``x2``). Shapes: the
    broadcast of both; dtypes: JAX's promotion of ``x1`` and ``x2``. The quotient
    has no derivative; the remainder's is that of ``remainder``."""
    return floor_divide(x1, x2), remainder(x1, x2)


def angle(z, deg=False):
    """The argument of complex ``z`` in radians (degrees with ``deg``), in
    ``(-pi, pi]`` (jax.numpy.angle); real input gives 0 or pi. Dtype: the real
    float dtype of ``z`` (the default float for integers); differentiable."""
    z = asarray(z, dtype=inexact_dtype(z))
    a = arctan2(imag(z), real(z))
    if deg:
        return a * (180.0 / 3.141592653589793)
    return a


def isscalar(element):
    """Whether ``element`` is a scalar in JAX's sense (jax.numpy.isscalar): a
    Python or NumPy number, or a 0-d array. A Python bool, static."""
    if isinstance(element, (bool, int, float, complex, _np.generic)):
        return True
    return isinstance(element, _np.ndarray) and element.ndim == 0


def ptp(a, axis=None, keepdims=False):
    """Peak to peak, ``max - min`` over ``axis`` (jax.numpy.ptp). Shape and dtype
    as ``max``; differentiable (the subgradients of ``max`` and ``min``)."""
    return _max(a, axis=axis, keepdims=keepdims) - _min(a, axis=axis, keepdims=keepdims)


def select(condlist, choicelist, default=0):
    """The first choice whose condition holds, elementwise (jax.numpy.select):
    ``condlist`` and ``choicelist`` are equal-length sequences of arrays that
    broadcast together; ``default`` where no condition holds. Dtype: JAX's
    promotion of the choices and ``default``. Differentiable in the choices and
    ``default`` (each gets the cotangent where it was selected). Raises
    ValueError for sequences of different lengths or empty ones."""
    if len(condlist) != len(choicelist):
        raise ValueError("condlist must have length equal to choicelist")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    out = default
    for i in range(len(condlist) - 1, -1, -1):
        out = where(condlist[i], choicelist[i], out)
    return out


def cumulative_sum(x, axis=None, dtype=None, include_initial=False):
    """Cumulative sum along ``axis`` (jax.numpy.cumulative_sum, the array-API
    function): ``axis`` may be omitted only for 1-D input; with
    ``include_initial`` a leading zero is added (length ``n + 1``). Dtype: as
    ``sum`` (small ints accumulate in the default int, unlike ``cumsum``);
    differentiable. Raises ValueError without ``axis`` for N-D input."""
    if axis is None:
        if len(shape(x)) != 1:
            raise ValueError("axis must be specified for cumulative_sum of an N-D array")
        axis = 0
    if dtype is None:
        dtype = sum_accumulator(x)  # (int8 -> int32, as sum; cumsum keeps int8)
    c = cumsum(x, axis=axis, dtype=dtype)
    if include_initial:
        first = zeros_like(take(c, [0], axis=axis))
        c = concatenate([first, c], axis=axis)
    return c


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive elements of the flattened ``ary``
    (jax.numpy.ediff1d), with ``to_begin``/``to_end`` (flattened) prepended and
    appended. Differentiable in all three."""
    d = diff(ravel(ary))
    parts = [d]
    if to_begin is not None:
        parts = [ravel(asarray(to_begin))] + parts
    if to_end is not None:
        parts = parts + [ravel(asarray(to_end))]
    return concatenate(parts) if len(parts) > 1 else d


def vecdot(x1, x2, axis=-1, precision=None, preferred_element_type=None):
    """Vector dot product along ``axis``, conjugating ``x1`` (jax.numpy.vecdot):
    the other axes broadcast. Shape: the broadcast shape without ``axis``; dtype:
    JAX's promotion. Differentiable. Raises ValueError for unequal axis lengths."""
    if shape(x1)[axis] != shape(x2)[axis]:
        raise ValueError(
            f"x1 and x2 must have the same size along axis={axis}; got {shape(x1)} and {shape(x2)}"
        )
    if iscomplexobj(x1):
        x1 = conj(x1)
    return sum(moveaxis(x1, axis, -1) * moveaxis(x2, axis, -1), axis=-1)
