"""``srcjax.scipy.linalg``: the parts of ``jax.scipy.linalg`` srcjax provides.

``solve_triangular`` is a registered primitive (its generated-code name is
``jnp.linalg.solve_triangular``); ``cholesky``, ``cho_factor`` and ``cho_solve``
are compositions of primitives (inlined into transformed code like user
functions), so they are differentiable and batchable through them.
"""

from __future__ import annotations

from ..primitives.linalg import cholesky as _cholesky
from ..primitives.linalg import matrix_transpose, solve_triangular

__all__ = ["cho_factor", "cho_solve", "cholesky", "solve_triangular"]


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """Cholesky factor of a symmetric positive-definite ``a`` (..., m, m)
    (jax.scipy.linalg.cholesky): upper ``U`` with ``a = U.T @ U`` by default
    (SciPy's convention), lower ``L`` with ``a = L @ L.T`` when ``lower``. Same
    dtype as ``a`` (integers give the default float); a matrix that is not
    positive definite gives NaNs, as in JAX. ``overwrite_a`` and
    ``check_finite`` are ignored. Only one triangle of ``a`` is read, the lower
    one when ``lower`` else the upper one, as SciPy and JAX do (unlike
    ``jnp.linalg.cholesky``, which symmetrizes); derivatives are JAX's."""
    if lower:
        return _cholesky(a, symmetrize_input=False)
    return matrix_transpose(_cholesky(matrix_transpose(a), symmetrize_input=False))


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)`` for :func:`cho_solve` (jax.scipy.linalg.cho_factor): ``c``
    is the Cholesky factor of ``a`` (lower when ``lower``, else upper), with
    zeros in the other triangle. Shapes, dtypes and errors as :func:`cholesky`
    (which reads only that triangle of ``a``)."""
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solve ``a @ x = b`` given ``(c, lower) = cho_factor(a)``
    (jax.scipy.linalg.cho_solve): two triangular solves with ``c``.

    ``b``: ``(..., m)`` (a vector per matrix) or ``(..., m, n)``. Shape: that of
    ``b``; dtype: JAX's inexact promotion of ``c`` and ``b``. Differentiable in
    ``c`` (its triangle) and ``b``. ``overwrite_b`` and ``check_finite`` are
    ignored."""
    c, lower = c_and_lower
    if lower:
        y = solve_triangular(c, b, 0, True)
        x = solve_triangular(c, y, 1, True)
    else:
        y = solve_triangular(c, b, 1, False)
        x = solve_triangular(c, y, 0, False)
    return x
