"""Helpers of the ``srcjax.scipy.stats`` compositions: JAX's
``promote_args_inexact`` for a fixed number of arguments (plain Python over
primitives, inlined into transformed code like the distributions)."""

from __future__ import annotations

from ...numpy import asarray
from ...numpy._functions import inexact_dtype


def promote2(a, b):
    """``(a, b)`` as arrays of their JAX inexact promotion (ints -> float)."""
    dt = inexact_dtype(a, b)
    return asarray(a, dtype=dt), asarray(b, dtype=dt)


def promote3(a, b, c):
    """``(a, b, c)`` as arrays of their JAX inexact promotion."""
    dt = inexact_dtype(a, b, c)
    return asarray(a, dtype=dt), asarray(b, dtype=dt), asarray(c, dtype=dt)


def promote4(a, b, c, d):
    """``(a, b, c, d)`` as arrays of their JAX inexact promotion."""
    dt = inexact_dtype(a, b, c, d)
    return asarray(a, dtype=dt), asarray(b, dtype=dt), asarray(c, dtype=dt), asarray(d, dtype=dt)


def promote5(a, b, c, d, e):
    """``(a, b, c, d, e)`` as arrays of their JAX inexact promotion."""
    dt = inexact_dtype(a, b, c, d, e)
    return (
        asarray(a, dtype=dt),
        asarray(b, dtype=dt),
        asarray(c, dtype=dt),
        asarray(d, dtype=dt),
        asarray(e, dtype=dt),
    )
