"""``srcjax.numpy.linalg`` (``jnp.linalg``): linear algebra with JAX semantics.

Most functions are registered primitives with public name ``jnp.linalg.<name>``
(see :mod:`srcjax.primitives.linalg`), differentiable with JAX's conventions.
``multi_dot``, ``vector_norm``, ``matrix_norm``, ``cond``, ``lstsq``,
``matrix_rank`` and the array-API names (``svdvals``, ``diagonal``, ``trace``,
``outer``, ``cross``, ``vecdot``, ``tensordot``, ``tensorinv``,
``tensorsolve``) are
compositions of primitives written as JAX defines them (transformed code
inlines them like user functions, so their derivatives and batching come from
the primitives they call).
"""

from __future__ import annotations

import math
import operator

import numpy as _np

from ..primitives.ad import expand_dims, reshape, sum
from ..primitives.creation import asarray, shape
from ..primitives.elementwise import abs as _abs
from ..primitives.elementwise import conj, isnan, power, real, sqrt, where
from ..primitives.linalg import (
    cholesky,
    det,
    eig,
    eigh,
    eigvals,
    eigvalsh,
    inv,
    inv_or_inf,
    matmul,
    matrix_power,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
)
from ..primitives.linalg import outer as _outer
from ..primitives.linalg import tensordot as _tensordot
from ..primitives.linalg import trace as _trace
from ..primitives.reductions import any as _any
from ..primitives.reductions import max as _max
from ..primitives.reductions import min as _min
from ..primitives.registry import Primitive, register
from ..primitives.structural import diagonal as _diagonal
from ..primitives.structural import matrix_transpose, ravel
from ..primitives.structural import transpose as _transpose
from ._functions import cross as _cross
from ._functions import inexact_dtype
from ._functions import vecdot as _vecdot

__all__ = [
    "cholesky",
    "cond",
    "cross",
    "det",
    "diagonal",
    "eig",
    "eigh",
    "eigvals",
    "eigvalsh",
    "inv",
    "lstsq",
    "matrix_norm",
    "matrix_power",
    "matrix_rank",
    "multi_dot",
    "norm",
    "outer",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
    "svdvals",
    "tensordot",
    "tensorinv",
    "tensorsolve",
    "trace",
    "vecdot",
    "vector_norm",
]


def _static(public, impl):
    prim = register(Primitive(public, impl, kind="internal", differentiable=False))
    prim.def_batch(_unbatched_result)
    return prim


def _unbatched_result(c):
    """Batching rule of the static helpers below: their operands only stand for
    shapes and dtypes (per-example shapes under vmap), so the result is the same
    for every example."""
    return c.rebuild(), False


# ---------------------------------------------------------------------------
# static helpers (the same for every example of a vmap)


def _multi_dot_steps(shapes):
    """Static: the order of the products of multi_dot for operands of these
    shapes (after JAX's checks and messages)."""
    shapes = [tuple(s) for s in shapes]
    if len(shapes) < 2:
        raise ValueError(f"multi_dot requires at least two arrays; got len(arrays)={len(shapes)}")
    if not (
        len(shapes[0]) in (1, 2)
        and len(shapes[-1]) in (1, 2)
        and all(len(s) == 2 for s in shapes[1:-1])
    ):
        raise ValueError(
            "multi_dot: input arrays must all be two-dimensional, except for"
            " the first and last array which may be 1 or 2 dimensional."
            f" Got array shapes {shapes}"
        )
    if any(a[-1] != b[0] for a, b in zip(shapes[:-1], shapes[1:])):
        raise ValueError(
            "multi_dot: last dimension of each array must match first dimension"
            f" of following array. Got array shapes {shapes}"
        )
    # the cheapest parenthesization (dynamic programming over the chain, vector
    # ends as 1-row / 1-column matrices), as a list of steps: step k multiplies
    # items i and j of [arrays..., step results...]
    dims = [1 if len(shapes[0]) == 1 else shapes[0][0]] + [s[-1] for s in shapes[:-1]]
    dims.append(1 if len(shapes[-1]) == 1 else shapes[-1][-1])
    n = len(shapes)
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k
    steps = []

    def emit(i, j):
        if i == j:
            return i
        left = emit(i, split[i][j])
        right = emit(split[i][j] + 1, j)
        steps.append((left, right))
        return n + len(steps) - 1

    emit(0, n - 1)
    return steps


def _vector_ord(ord):
    """Static: JAX's error for a string ``ord`` of vector_norm, else ``ord``
    (None -> 2)."""
    if isinstance(ord, str):
        msg = f"Invalid order '{ord}' for vector norm."
        if ord == "inf":
            msg += "Use 'jax.numpy.inf' instead."
        if ord == "-inf":
            msg += "Use '-jax.numpy.inf' instead."
        raise ValueError(msg)
    return 2 if ord is None else ord


def _finfo_dtype(x):
    """Static: ``finfo(x.dtype).dtype`` (the real float of an inexact ``x``;
    NumPy's ValueError for integers, as JAX)."""
    return _np.finfo(_np.result_type(x)).dtype


def _cond_check(x_shape, p):
    """Static: JAX's checks of cond's input shape."""
    x_shape = tuple(x_shape)
    if len(x_shape) < 2:
        raise ValueError(
            f"jnp.linalg.cond: input array must be at least 2D; got arr.shape={x_shape}"
        )
    if x_shape[-1] == 0 or x_shape[-2] == 0:
        raise ValueError(f"jnp.linalg.cond: input array must not be empty; got arr.shape={x_shape}")
    if not (p is None or p == 2 or p == -2) and x_shape[-2] != x_shape[-1]:
        raise ValueError(
            f"jnp.linalg.cond: for p={p!r}, array must be square; got arr.shape={x_shape}"
        )
    return True


def _lstsq_rcond(a_shape, b_shape, dt, rcond):
    """Static: lstsq's ``rcond`` for ``a`` of dtype ``dt`` after JAX's checks of
    the shapes (the default is ``eps * max(m, n)``, a negative one means
    ``eps``)."""
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    if a_shape[:1] != b_shape[:1]:
        raise ValueError("Leading dimensions of input arrays must match")
    if len(a_shape) != 2:
        raise TypeError(f"{len(a_shape)}-dimensional array given. Array must be two-dimensional")
    if len(b_shape) not in (1, 2):
        raise TypeError(
            f"{len(b_shape)}-dimensional array given. Array must be one or two-dimensional"
        )
    eps = float(_np.finfo(dt).eps)
    if rcond is None:
        rcond = eps * max(a_shape)
    elif float(rcond) < 0:
        rcond = eps
    return rcond


multi_dot_steps = _static("ad.multi_dot_steps", _multi_dot_steps)
vector_ord = _static("ad.vector_ord", _vector_ord)
finfo_dtype = _static("ad.finfo_dtype", _finfo_dtype)
cond_check = _static("ad.cond_check", _cond_check)
lstsq_rcond = _static("ad.lstsq_rcond", _lstsq_rcond)


def _matrix_rank_check(no_rtol, no_tol):
    """Static: JAX's error when both ``rtol`` and its alias ``tol`` are given."""
    if not (no_rtol or no_tol):
        raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
    return True


def _matrix_rank_scale(m_shape, s):
    """Static: ``(max(M, N), eps)`` of matrix_rank's default tolerance
    ``max(s) * max(M, N) * eps`` (as Python numbers; eps of ``s``'s dtype)."""
    return max(tuple(m_shape)[-2:]), float(_np.finfo(_np.result_type(s)).eps)


def _linalg_outer_check(a_shape, b_shape):
    """Static: JAX's error unless both operands of linalg.outer are 1-D."""
    if len(tuple(a_shape)) != 1 or len(tuple(b_shape)) != 1:
        raise ValueError(
            "Input arrays must be one-dimensional, but they are "
            f"x1.ndim={len(tuple(a_shape))} x2.ndim={len(tuple(b_shape))}"
        )
    return True


def _linalg_cross_check(a_shape, b_shape, axis):
    """Static: JAX's error unless both operands of linalg.cross have length 3
    along ``axis``."""
    n1, n2 = tuple(a_shape)[axis], tuple(b_shape)[axis]
    if n1 != 3 or n2 != 3:
        raise ValueError(
            "Both input arrays must be (arrays of) 3-dimensional vectors, "
            f"but they have x1.shape[axis]={n1} and x2.shape[axis]={n2}"
        )
    return True


def _tensorinv_plan(a_shape, ind):
    """Static: ``(flat, out)`` shapes of tensorinv: ``a`` seen as the matrix
    ``flat`` (the first ``ind`` axes against the rest), its inverse reshaped to
    ``out`` (the rest, then the first ``ind``); JAX's errors."""
    a_shape = tuple(a_shape)
    ind = operator.index(ind)
    if ind <= 0:
        raise ValueError(f"ind must be a positive integer; got ind={ind}")
    first, rest = a_shape[:ind], a_shape[ind:]
    flat = (math.prod(first), math.prod(rest))
    if flat[0] != flat[1]:
        raise ValueError(
            "tensorinv is only possible when the product of the first `ind` dimensions "
            "equals that of the remaining dimensions. "
            f"got arr.shape={a_shape} with ind={ind}."
        )
    return flat, rest + first


def _tensorsolve_plan(a_shape, b_shape, axes):
    """Static: ``(perm, flat, out)`` of tensorsolve: ``a`` transposed by
    ``perm`` (the ``axes`` moved to the end in ascending order, as JAX's
    moveaxis does), seen as the matrix ``flat``, the solution reshaped to
    ``out``; JAX's errors."""
    a_shape, b_shape = tuple(a_shape), tuple(b_shape)
    nd = len(a_shape)
    perm = tuple(range(nd))
    if axes is not None:
        moved = sorted(operator.index(k) % nd for k in axes)
        perm = tuple(i for i in range(nd) if i not in moved) + tuple(moved)
    a_shape = tuple(a_shape[i] for i in perm)
    out = a_shape[len(b_shape) :]
    if a_shape[: len(b_shape)] != b_shape:
        raise ValueError(
            "After moving axes to end, leading shape of a must match shape of b. "
            f"got a.shape={a_shape}, b.shape={b_shape}"
        )
    size = math.prod(b_shape)
    if size != math.prod(out):
        raise ValueError(
            "Input arrays must have prod(a.shape[:b.ndim]) == prod(a.shape[b.ndim:]); "
            f"got a.shape={a_shape}, b.ndim={len(b_shape)}."
        )
    return perm, (size, math.prod(out)), out


matrix_rank_check = _static("ad.matrix_rank_check", _matrix_rank_check)
linalg_outer_check = _static("ad.linalg_outer_check", _linalg_outer_check)
linalg_cross_check = _static("ad.linalg_cross_check", _linalg_cross_check)
tensorinv_plan = _static("ad.tensorinv_plan", _tensorinv_plan)
tensorsolve_plan = _static("ad.tensorsolve_plan", _tensorsolve_plan)
matrix_rank_scale = _static("ad.matrix_rank_scale", _matrix_rank_scale)


# ---------------------------------------------------------------------------
# compositions


def multi_dot(arrays, *, precision=None):
    """The matrix product of a sequence of arrays, in the cheapest order
    (jax.numpy.linalg.multi_dot; JAX contracts with one optimized ``einsum``,
    srcjax multiplies pairwise in the order of least flops).

    ``arrays``: at least two arrays, all 2-D except that the first may be 1-D
    (a row vector) and the last 1-D (a column vector); each last dimension must
    equal the next array's first. Shape: ``(n, k)`` with the vector ends
    dropped (0-d for two vector ends). Dtype: JAX's promotion of all operands.
    Differentiable in every operand. Raises ``ValueError`` (JAX's messages) for
    fewer than two arrays, wrong ranks or mismatched dimensions. ``precision``
    is ignored."""
    steps = multi_dot_steps([shape(a) for a in arrays])
    items = list(arrays)
    for step in steps:
        items.append(matmul(items[step[0]], items[step[1]]))
    return items[-1]


def vector_norm(x, *, axis=None, keepdims=False, ord=2):
    """The vector norm of ``x`` over ``axis`` (jax.numpy.linalg.vector_norm):
    every axis when None (the flattened array), an int, or a tuple of axes (a
    vector norm over all of them, unlike ``norm``).

    ``ord``: 2/None (``sqrt(sum(|x|^2))``), 1, ``inf`` (``max |x|``, 0 for an
    empty axis), ``-inf``, 0 (the count of nonzeros, in ``x``'s float dtype) or
    any other number p (``sum(|x|^p) ** (1/p)``). Shape: ``x``'s without
    ``axis`` (kept as 1 with ``keepdims``). Dtype: the real float of ``x``
    (integers give the default float), except ``ord=1``, which keeps an integer
    dtype, as in JAX. Differentiable (NaN gradient of the 2-norm at 0, as JAX).
    Raises ``ValueError`` for a string ``ord``."""
    ord = vector_ord(ord)
    if ord == 2:
        return sqrt(sum(real(x * conj(x)), axis=axis, keepdims=keepdims))
    if ord == _np.inf:
        return _max(_abs(x), axis=axis, keepdims=keepdims, initial=0)
    if ord == -_np.inf:
        return _min(_abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:
        return sum(x != 0, dtype=finfo_dtype(x), axis=axis, keepdims=keepdims)
    if ord == 1:
        return sum(_abs(x), axis=axis, keepdims=keepdims)
    abs_x = _abs(x)
    p = asarray(ord, dtype=abs_x.dtype)
    out = sum(power(abs_x, p), axis=axis, keepdims=keepdims)
    return power(out, asarray(1.0 / p, dtype=abs_x.dtype))


def matrix_norm(x, *, keepdims=False, ord="fro"):
    """The matrix norm of each matrix of ``x`` ``(..., m, n)``
    (jax.numpy.linalg.matrix_norm): ``norm(x, ord, axis=(-2, -1), keepdims)``.
    ``ord``: 'fro' (default), 'nuc', 1, -1, 2, -2, inf, -inf. Shape ``x.shape[:-2]``
    (``(..., 1, 1)`` with ``keepdims``); dtype the real float of ``x``.
    Differentiable as ``norm``. Raises ``ValueError`` for an invalid ``ord``."""
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def cond(x, p=None):
    """The condition number of each matrix of ``x`` ``(..., m, n)``
    (jax.numpy.linalg.cond): ``norm(x, p) * norm(inv(x), p)``; for ``p`` None or
    2 the ratio of the largest to the smallest singular value, for -2 its
    inverse. Other ``p`` (1, -1, inf, -inf, 'fro', 'nuc') need square matrices.
    A NaN ratio of a NaN-free matrix (singular) is ``inf``, as in JAX. Shape
    ``x.shape[:-2]``; dtype the real float of ``x`` (integers give the default
    float). Differentiable where the matrix is regular. Raises ``ValueError``
    for fewer than 2 dimensions, an empty matrix, or a non-square ``x`` with
    ``p`` not in (None, 2, -2)."""
    cond_check(shape(x), p)
    if p is None or p == 2:
        s = svd(x, compute_uv=False)
        return s[..., 0] / s[..., -1]
    if p == -2:
        s = svd(x, compute_uv=False)
        r = s[..., -1] / s[..., 0]
    else:
        r = norm(x, ord=p, axis=(-2, -1)) * norm(inv_or_inf(x), ord=p, axis=(-2, -1))
    return where(isnan(r) & ~_any(isnan(x), axis=(-2, -1)), _np.inf, r)


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """The least-squares solution of ``a @ x = b`` (jax.numpy.linalg.lstsq), from
    the SVD of ``a`` as JAX computes it.

    ``a``: ``(m, n)``; ``b``: ``(m,)`` or ``(m, k)``. Singular values below
    ``rcond`` times the largest (and zeros) are dropped; ``rcond`` defaults to
    ``eps * max(m, n)``, and a negative one means ``eps``. Returns ``(x,
    residuals, rank, s)``: ``x`` ``(n,)``/``(n, k)``; the residuals
    ``|b - a x|^2`` per column, ``(1,)`` for a vector ``b`` and ``(k,)`` else
    (always computed, as JAX; with ``numpy_resid=True`` empty where NumPy gives
    none: rank ``< n`` or ``m <= n``); ``rank`` a 0-d default int; ``s`` the
    singular values ``(min(m, n),)``. Dtypes: JAX's inexact promotion of ``a``
    and ``b``. Differentiable in ``a`` and ``b`` where the rank is locally
    constant (through the SVD, as JAX). Raises ``ValueError`` for different
    leading dimensions and ``TypeError`` for an ``a`` that is not 2-D or a ``b``
    of more than 2 dimensions."""
    dt = inexact_dtype(a, b)
    rc = lstsq_rcond(shape(a), shape(b), dt, rcond)
    a = asarray(a, dtype=dt)
    b = asarray(b, dtype=dt)
    vector_b = len(shape(b)) == 1
    if vector_b:
        b = reshape(b, (-1, 1))
    u, s, vt = svd(a, full_matrices=False)
    mask = (s > 0) & (s >= asarray(rc, dtype=s.dtype) * s[0])
    rank = sum(mask)
    safe_s = where(mask, s, 1)
    s_inv = reshape(where(mask, 1 / safe_s, 0), (-1, 1))
    uTb = matmul(matrix_transpose(conj(u)), b)
    x = matmul(matrix_transpose(conj(vt)), s_inv * uTb)
    if numpy_resid and (int(rank) < shape(a)[1] or shape(a)[0] <= shape(a)[1]):
        resid = asarray([], dtype=dt)
    else:
        # |r|^2 as a sum of squares (JAX: norm(r) ** 2, the same value): its
        # derivative 2 r is finite at a zero residual, where norm's is NaN; the
        # residual's cotangent is zeros, not dropped, when only x is used
        r = b - matmul(a, x)
        resid = sum(real(r * conj(r)), axis=0)
    if vector_b:
        x = ravel(x)
    return x, resid, rank, s


def matrix_rank(M, rtol=None, hermitian=False, tol=None):
    """The rank of each matrix of ``M`` ``(..., N, K)``
    (jax.numpy.linalg.matrix_rank): the count of its singular values above a
    tolerance.

    ``rtol`` (or its alias ``tol``; not both): the tolerance, a scalar or an
    array broadcasting against ``M.shape[:-2]``. As JAX computes it, a given
    value is compared with the singular values as it is (an absolute
    threshold); the default is ``max(s) * max(N, K) * eps`` (relative).
    ``hermitian``: ``M`` is taken as Hermitian (eigenvalues instead of an SVD).
    Returns the default int (int32 unless x64) of shape ``M.shape[:-2]`` (with
    ``rtol``'s shape broadcast in); for ``M`` of fewer than 2 dimensions,
    int32 ``any(M != 0)``. Integer ``M`` is promoted to the default float. Not
    differentiable (an integer). Raises ``ValueError`` when both ``rtol`` and
    ``tol`` are given. (``hermitian`` and ``tol`` are keyword-only in JAX; here
    they may be positional too, so that ``vmap(jnp.linalg.matrix_rank)``
    transforms it directly.)"""
    matrix_rank_check(rtol is None, tol is None)
    if tol is not None:
        rtol = tol
    M = asarray(M, dtype=inexact_dtype(M))
    if len(shape(M)) < 2:
        return asarray(_any(M != 0), dtype=_np.int32)
    s = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        # Python numbers (weak): two products rounded in s's dtype, as JAX
        scale = matrix_rank_scale(shape(M), s)
        rtol = _max(s, axis=-1) * scale[0] * scale[1]
    dt = inexact_dtype(s, rtol)
    rtol = asarray(rtol, dtype=dt)
    rtol = expand_dims(rtol, len(shape(rtol)))
    return sum(asarray(s, dtype=dt) > rtol, axis=-1)


# ---------------------------------------------------------------------------
# the array API's linalg names (JAX defines them through jnp functions)


def svdvals(x):
    """The singular values of each matrix of ``x`` ``(..., M, N)``, descending
    (jax.numpy.linalg.svdvals): ``svd(x, compute_uv=False)``, shape
    ``(..., min(M, N))``, the real float of ``x``. Differentiable as ``svd``."""
    return svd(x, compute_uv=False, hermitian=False)


def diagonal(x, offset=0):
    """The diagonal ``offset`` of each matrix of ``x`` ``(..., M, N)``
    (jax.numpy.linalg.diagonal): ``jnp.diagonal(x, offset, -2, -1)``, shape
    ``(..., k)``, ``x``'s dtype. Differentiable. (``offset`` is keyword-only in
    JAX.)"""
    return _diagonal(x, offset, -2, -1)


def trace(x, offset=0, dtype=None):
    """The trace (diagonal ``offset``) of each matrix of ``x`` ``(..., M, N)``
    (jax.numpy.linalg.trace): ``jnp.trace(x, offset, -2, -1, dtype)``, shape
    ``x.shape[:-2]``. Differentiable. (``offset`` and ``dtype`` are
    keyword-only in JAX.)"""
    return _trace(x, offset, -2, -1, dtype)


def outer(x1, x2):
    """The outer product ``x1[:, None] * x2[None, :]`` of two 1-D arrays
    (jax.numpy.linalg.outer), shape ``(m, n)``, JAX's promoted dtype.
    Differentiable. Raises ``ValueError`` (JAX's message) unless both are
    1-D."""
    linalg_outer_check(shape(x1), shape(x2))
    return _outer(x1, x2)


def cross(x1, x2, axis=-1):
    """The cross product of 3-vectors along ``axis`` (jax.numpy.linalg.cross),
    operands broadcast against each other; JAX's promoted dtype.
    Differentiable. Raises ``ValueError`` (JAX's message) unless both have
    length 3 along ``axis``. (``axis`` is keyword-only in JAX.)"""
    linalg_cross_check(shape(x1), shape(x2), axis)
    return _cross(x1, x2, axis=axis)


def vecdot(x1, x2, axis=-1, precision=None, preferred_element_type=None):
    """``sum(conj(x1) * x2, axis)`` (jax.numpy.linalg.vecdot, the same as
    ``jnp.vecdot``): operands broadcast, shape without ``axis``.
    Differentiable."""
    return _vecdot(
        x1, x2, axis=axis, precision=precision, preferred_element_type=preferred_element_type
    )


def tensordot(x1, x2, axes=2, precision=None, preferred_element_type=None):
    """``jnp.tensordot(x1, x2, axes)`` (jax.numpy.linalg.tensordot; ``axes``
    keyword-only in JAX). Differentiable."""
    return _tensordot(
        x1, x2, axes=axes, precision=precision, preferred_element_type=preferred_element_type
    )


def tensorinv(a, ind=2):
    """The inverse of ``a`` for ``tensordot(., ., ind)``
    (jax.numpy.linalg.tensorinv): ``a`` of shape ``first + rest`` (``first``
    its ``ind`` leading axes, ``prod(first) == prod(rest)``) as a square
    matrix, inverted, shaped ``rest + first``; ``inv``'s dtype. Differentiable.
    Raises ``ValueError`` (JAX's messages) for ``ind <= 0`` or unequal
    products."""
    plan = tensorinv_plan(shape(a), ind)
    return reshape(inv(reshape(a, plan[0])), plan[1])


def tensorsolve(a, b, axes=None):
    """``x`` with ``tensordot(a', x, x.ndim) == b`` (jax.numpy.linalg.tensorsolve),
    ``a'`` being ``a`` with ``axes`` (if given) moved to the end in ascending
    order, as JAX does; ``a'`` must have shape ``b.shape + x.shape`` with equal
    products. Shape ``a'.shape[b.ndim:]``, ``solve``'s dtype. Differentiable.
    Raises ``ValueError`` (JAX's messages) for mismatched shapes."""
    plan = tensorsolve_plan(shape(a), shape(b), axes)
    if axes is not None:
        a = _transpose(a, plan[0])
    x = solve(reshape(a, plan[1]), ravel(b))
    return reshape(x, plan[2])
