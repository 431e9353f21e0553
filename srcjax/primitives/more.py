"""Elementwise primitives behind ``srcjax/numpy/_more.py`` (jax.numpy breadth):
``nextafter``, ``bitwise_count``, ``i0`` (with ``ad.i1`` for its derivative,
also jax.scipy.special.i1), ``i0e``/``i1e`` (jax.scipy.special's) and the two
halves of ``frexp``.

They compute what no existing ``jnp`` primitive does (the ``lax`` versions of
``nextafter`` and ``population_count`` live in ``srcjax/lax/_more.py``, which
``srcjax.numpy`` cannot import without a cycle). Dtypes follow JAX 0.10.2.
"""

from __future__ import annotations

import numpy as np

from .. import dtypes as _dt
from .elementwise import defderiv, new_elementwise, sign, where

__all__ = ["nextafter", "bitwise_count", "i0"]


def _out(r):
    return r if np.ndim(r) else r[()]


def _inexact(name, *xs):
    """The operands in JAX's inexact promotion of their dtypes (ValueError for
    complex ones, as JAX)."""
    dt = _dt.to_inexact_dtype(_dt.result_type(*xs))
    if dt.kind == "c":
        raise ValueError(f"jnp.{name} is not defined for complex inputs.")
    return [np.asarray(x, dt) for x in xs], dt


def _nextafter(x1, x2):
    """The next representable float after ``x1`` toward ``x2``, elementwise
    (jax.numpy.nextafter): both promoted to their common inexact dtype
    (integers give the default float), broadcast. ``x1`` where ``x1 == x2``, NaN
    if either is NaN. Not differentiable (as JAX). ValueError for complex
    input."""
    (a, b), _ = _inexact("nextafter", x1, x2)
    return _out(np.asarray(np.nextafter(a, b)))


def _bitwise_count(x):
    """Number of set bits of ``|x|``, elementwise (jax.numpy.bitwise_count):
    integer or bool ``x``; result uint8 of ``x``'s shape. TypeError for float
    or complex input (as JAX)."""
    d = _dt.dtype_of(x)
    if d.kind not in "biu":
        raise TypeError(f"bitwise_count requires integer or boolean input, got {d.name}")
    a = np.asarray(x, d)
    if d.kind == "i":
        a = (
            np.abs(a).view(np.dtype(f"u{d.itemsize}"))
            if a.ndim
            else np.abs(a).astype(f"u{d.itemsize}")
        )
    return _out(np.asarray(np.bitwise_count(a), np.uint8))


def _scipy(fname, x):
    from .special import _scipy_special

    (a,), dt = _inexact(fname, x)
    wide = a.astype(np.float64) if a.dtype.itemsize < 8 else a
    with np.errstate(all="ignore"):
        return _out(np.asarray(getattr(_scipy_special(), fname)(wide)).astype(dt))


def _i0(x):
    """The modified Bessel function of the first kind, order 0, elementwise
    (jax.numpy.i0): ``x`` promoted to its inexact dtype (integers give the
    default float); computed in float64 and rounded. Derivative ``i1(x)``.
    ValueError for complex input."""
    return _scipy("i0", x)


def _i1(x):
    """The modified Bessel function of the first kind, order 1, elementwise
    (the derivative of ``i0``)."""
    return _scipy("i1", x)


def _i0e(x):
    """``exp(-|x|) i0(x)``, elementwise (jax.scipy.special.i0e): SciPy's in
    float64, rounded to ``x``'s inexact dtype. Derivative ``i1e(x) - sign(x)
    i0e(x)``."""
    return _scipy("i0e", x)


def _i1e(x):
    """``exp(-|x|) i1(x)``, elementwise (jax.scipy.special.i1e). Derivative
    ``i0e(x) - i1e(x) (sign(x) + 1 / x)``, 1/2 at 0."""
    return _scipy("i1e", x)


def _frexp_mantissa(x):
    """The mantissa ``m`` of ``x = m * 2**e``, ``0.5 <= |m| < 1`` (``x`` itself for
    0, inf and NaN): jax.numpy.frexp's first result, in ``x``'s inexact dtype.
    Derivative ``2**-e``. TypeError for complex input (as JAX)."""
    dt = _dt.to_inexact_dtype(_dt.result_type(x))
    if dt.kind == "c":
        raise TypeError("frexp does not support complex-valued inputs")
    return _out(np.asarray(np.frexp(np.asarray(x, dt))[0]))


def _frexp_exponent(x):
    """The exponent ``e`` of ``x = m * 2**e`` (0 for 0, inf and NaN), int32:
    jax.numpy.frexp's second result."""
    dt = _dt.to_inexact_dtype(_dt.result_type(x))
    if dt.kind == "c":
        raise TypeError("frexp does not support complex-valued inputs")
    return _out(np.asarray(np.frexp(np.asarray(x, dt))[1], np.int32))


def _frexp_scale(x):
    """``2**-e`` for frexp's exponent ``e`` of ``x``, in ``x``'s inexact dtype
    (inf where that overflows, as JAX's ``exp2(-e)``): the derivative of the
    mantissa. Piecewise constant."""
    dt = _dt.to_inexact_dtype(_dt.result_type(x))
    e = np.frexp(np.asarray(x, dt))[1]
    with np.errstate(over="ignore"):
        return _out(np.asarray(np.ldexp(np.ones((), dt), -e), dt))


_elementwise = new_elementwise  # (one helper for every module that adds elementwise primitives)


nextafter = _elementwise(
    "jnp.nextafter", _nextafter, hint="jnp.nextafter has no derivative (as in JAX)"
)
bitwise_count = _elementwise("jnp.bitwise_count", _bitwise_count, differentiable=False)
bitwise_count.samples = lambda rng: [((np.array([0, 1, -1, 7, -(2**20), 255], np.int32),), {})]
i0 = _elementwise("jnp.i0", _i0)
i1 = _elementwise("ad.i1", _i1)
i0e = _elementwise("special.i0e", _i0e)
i1e = _elementwise("special.i1e", _i1e)
frexp_mantissa = _elementwise("ad.frexp_mantissa", _frexp_mantissa, domain=(0.3, 3.0))
frexp_exponent = _elementwise("ad.frexp_exponent", _frexp_exponent, differentiable=False)
frexp_scale = _elementwise("ad.frexp_scale", _frexp_scale, differentiable=False)
frexp_mantissa.samples = lambda rng: [
    ((np.array([0.3, 0.7, 1.3, 2.2, -3.1, 5.5, -0.6]),), {}),
]


def _i0_x(g, ans, x):
    return g * i1(x)


def _i1_x(g, ans, x):
    # i1'(x) = i0(x) - i1(x) / x, which is 1/2 at 0
    nz = x != 0
    safe = where(nz, x, 1.0)
    return g * where(nz, i0(x) - ans / safe, 0.5)


def _frexp_mantissa_x(g, ans, x):
    return g * frexp_scale(x)


def _i0e_x(g, ans, x):
    return g * (i1e(x) - sign(x) * ans)


def _i1e_x(g, ans, x):
    nz = x != 0
    safe = where(nz, x, 1.0)
    return g * where(nz, i0e(x) - ans * (sign(x) + 1 / safe), 0.5)


defderiv(i0, _i0_x)
defderiv(i1, _i1_x)
defderiv(i0e, _i0e_x)
defderiv(i1e, _i1e_x)
defderiv(frexp_mantissa, _frexp_mantissa_x)
