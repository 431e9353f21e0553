"""``jnp``'s shape and layout functions (``atleast_*d``, ``column_stack``,
``hsplit``, ``rot90``, ``tri`` ...), as compositions of primitives."""

from __future__ import annotations

from ...primitives.ad import reshape
from ...primitives.creation import arange, asarray, shape
from ...primitives.structural import concatenate, flip, split, swapaxes, transpose
from ._static import inexact_dtype

# ---------------------------------------------------------------------------
# shape and layout


def _atleast(x, n):
    x = asarray(x)
    nd = len(shape(x))
    if nd >= n:
        return x
    if n == 1 or nd == 0:
        return reshape(x, (1,) * (n - nd) + shape(x))
    if n == 2 or nd == 2:  # (k,) -> (1, k) for 2-D; (a, b) -> (a, b, 1) for 3-D
        return reshape(x, (1,) + shape(x)) if n == 2 else reshape(x, shape(x) + (1,))
    return reshape(x, (1,) + shape(x) + (1,))  # (k,) -> (1, k, 1)


def atleast_1d(*arys):
    """Each argument as an array of at least one dimension (jax.numpy.atleast_1d):
    a 0-d value becomes shape ``(1,)``. One argument gives an array, several a
    list. Dtypes as ``asarray``; differentiable."""
    if len(arys) == 1:
        return _atleast(arys[0], 1)
    return [_atleast(a, 1) for a in arys]


def atleast_2d(*arys):
    """Each argument with at least two dimensions (jax.numpy.atleast_2d): ``()``
    becomes ``(1, 1)``, ``(k,)`` becomes ``(1, k)``. One argument gives an array,
    several a list; differentiable."""
    if len(arys) == 1:
        return _atleast(arys[0], 2)
    return [_atleast(a, 2) for a in arys]


def atleast_3d(*arys):
    """Each argument with at least three dimensions (jax.numpy.atleast_3d): ``()``
    becomes ``(1, 1, 1)``, ``(k,)`` becomes ``(1, k, 1)``, ``(a, b)`` becomes
    ``(a, b, 1)``. One argument gives an array, several a list; differentiable."""
    if len(arys) == 1:
        return _atleast(arys[0], 3)
    return [_atleast(a, 3) for a in arys]


def column_stack(tup):
    """1-D arrays as columns, 2-D arrays as they are, stacked side by side
    (jax.numpy.column_stack): ``k`` arrays of length ``n`` give ``(n, k)``.
    Dtype: JAX's promotion; differentiable. Raises like ``concatenate``."""
    cols = []
    for a in tup:
        a = asarray(a)
        if len(shape(a)) < 2:
            a = reshape(a, (-1, 1))
        cols.append(a)
    return concatenate(cols, axis=1)


def dstack(tup, dtype=None):
    """Arrays stacked along a third axis (jax.numpy.dstack), after
    :func:`atleast_3d`: ``k`` arrays of shape ``(m, n)`` give ``(m, n, k)``.
    Dtype: JAX's promotion, or ``dtype``; differentiable."""
    return concatenate([_atleast(a, 3) for a in tup], axis=2, dtype=dtype)


def hsplit(ary, indices_or_sections):
    """``split`` along axis 1, or axis 0 for a 1-D array (jax.numpy.hsplit)."""
    return split(ary, indices_or_sections, axis=1 if len(shape(ary)) > 1 else 0)


def vsplit(ary, indices_or_sections):
    """``split`` along axis 0 of an array of at least 2 dimensions
    (jax.numpy.vsplit). Raises ValueError for fewer dimensions (as JAX)."""
    if len(shape(ary)) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return split(ary, indices_or_sections, axis=0)


def dsplit(ary, indices_or_sections):
    """``split`` along axis 2 of an array of at least 3 dimensions
    (jax.numpy.dsplit). Raises ValueError for fewer dimensions (as JAX)."""
    if len(shape(ary)) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, axis=2)


def fliplr(m):
    """``m`` reversed along axis 1 (jax.numpy.fliplr); at least 2-D, differentiable.
    Raises ValueError for fewer dimensions."""
    if len(shape(m)) < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


def flipud(m):
    """``m`` reversed along axis 0 (jax.numpy.flipud); at least 1-D, differentiable.
    Raises ValueError for a 0-d input."""
    if len(shape(m)) < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


def rot90(m, k=1, axes=(0, 1)):
    """``m`` rotated by ``k`` quarter turns in the plane of ``axes``, from the
    first towards the second (jax.numpy.rot90). Shape: ``m``'s with the two axes
    swapped for odd ``k``; differentiable. Raises ValueError for equal axes or
    fewer than 2 dimensions."""
    nd = len(shape(m))
    if nd < 2:
        raise ValueError("rot90 requires its argument to have ndim at least two")
    a0 = axes[0] % nd
    a1 = axes[1] % nd
    if a0 == a1:
        raise ValueError("Axes must be different.")
    k = k % 4
    if k == 0:
        return asarray(m)  # (canonical, as the other cases: int64 -> int32 without x64)
    if k == 2:
        return flip(flip(m, a0), a1)
    if k == 1:
        return swapaxes(flip(m, a1), a0, a1)
    return flip(swapaxes(m, a0, a1), a1)


def permute_dims(a, axes):
    """``transpose(a, axes)`` (jax.numpy.permute_dims, the array-API name)."""
    return transpose(a, axes)


def tri(N, M=None, k=0, dtype=None):
    """An ``(N, M)`` array with ones at and below diagonal ``k``, zeros above
    (jax.numpy.tri). ``M`` defaults to ``N``; dtype to the default float."""
    if M is None:
        M = N
    rows = reshape(arange(N), (N, 1))
    cols = reshape(arange(M), (1, M))
    return asarray(cols <= rows + k, dtype=inexact_dtype(1.0) if dtype is None else dtype)
