"""``srcjax.scipy.linalg``: the parts of ``jax.scipy.linalg`` srcjax provides.

``solve_triangular`` is a registered primitive (its generated-code name is
``jnp.linalg.solve_triangular``). The LU factorization is two primitives
registered here: ``ad.lu_decompose`` (LAPACK's ``getrf`` through SciPy: the
packed factors, pivots and permutation; not differentiable) and
``ad.lu_attach`` (the packed factors again, computed a second time, carrying JAX's derivative rules of
the factorization, written over primitives); ``ad.schur`` is SciPy's Schur
decomposition (no derivative, as JAX). Everything else (``cholesky``,
``cho_factor``, ``cho_solve``, ``solve``, ``inv``, ``det``, ``lu``,
``lu_factor``, ``lu_solve``, ``qr``, ``svd``, ``eigh``, ``expm``) is a composition of primitives, inlined into
transformed code like a user function, so differentiable and batchable through
them.
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import dtypes as _dt
from .. import numpy as jnp
from ..numpy import linalg as _jla
from ..numpy._functions import inexact_dtype
from ..primitives import ad as _ad
from ..primitives import structural as _st
from ..primitives.control import stop_gradient
from ..primitives.linalg import cholesky as _cholesky
from ..primitives.linalg import matrix_transpose, solve_triangular
from ..primitives.registry import Primitive, register

__all__ = [
    "block_diag",
    "cho_factor",
    "cho_solve",
    "cholesky",
    "det",
    "eigh",
    "expm",
    "inv",
    "lu",
    "lu_factor",
    "lu_solve",
    "qr",
    "schur",
    "solve",
    "solve_triangular",
    "svd",
]


def block_diag(*arrs):
    """The block-diagonal matrix of ``arrs`` (jax.scipy.linalg.block_diag).

    Args:
        arrs: arrays of at most 2 dimensions (0-d and 1-d ones are read as ``(1,
            1)`` and ``(1, n)`` matrices).

    Returns:
        A ``(sum of rows, sum of columns)`` array of the arrays' promoted dtype,
        each array on the diagonal, zeros elsewhere; ``zeros((1, 0))`` for no
        argument. Differentiable in every array (rows padded, then concatenated).

    Raises:
        ValueError for an array of more than 2 dimensions (as JAX).
    """
    if len(arrs) == 0:
        return jnp.zeros((1, 0))
    mats = [jnp.atleast_2d(a) for a in arrs]
    for m in mats:
        if jnp.ndim(m) > 2:
            raise ValueError(
                "Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions"
            )
    cols = sum(jnp.shape(m)[1] for m in mats)
    rows = []
    c = 0
    for m in mats:
        w = jnp.shape(m)[1]
        rows.append(jnp.pad(m, ((0, 0), (c, cols - c - w))))  # (concatenate promotes)
        c = c + w
    return jnp.concatenate(rows, axis=0)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """Cholesky factor of a symmetric (complex: Hermitian) positive-definite
    ``a`` (..., m, m) (jax.scipy.linalg.cholesky): upper ``U`` with ``a = U^H @
    U`` by default (SciPy's convention), lower ``L`` with ``a = L @ L^H`` when
    ``lower`` (``^H``: the conjugate transpose, ``.T`` for real ``a``). Same
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
    # a = L @ L^H (lower) or U^H @ U: the second solve is with the conjugate
    # transpose (trans=2; the plain transpose for real c)
    if lower:
        y = solve_triangular(c, b, 0, True)
        x = solve_triangular(c, y, 2, True)
    else:
        y = solve_triangular(c, b, 2, False)
        x = solve_triangular(c, y, 0, False)
    return x


# ---------------------------------------------------------------------------
# static helpers (the same for every example of a vmap)


def _unbatched_result(c):
    return c.rebuild(), False


def _static(public, impl):
    prim = register(Primitive(public, impl, kind="internal", differentiable=False))
    prim.def_batch(_unbatched_result)
    prim.samples = lambda rng: []
    return prim


def _solve_assume(assume_a):
    """Static: JAX's check of ``solve``'s ``assume_a``; whether it is ``"pos"``."""
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    return assume_a == "pos"


def _square_check(a_shape, what):
    """Static: ``ValueError`` unless the shape is ``(..., n, n)``; returns ``n``."""
    a_shape = tuple(a_shape)
    if len(a_shape) < 2 or a_shape[-1] != a_shape[-2]:
        raise ValueError(f"Expected {what} to be a (batched) square matrix, got shape {a_shape}.")
    return a_shape[-1]


def _expm_table(dtype):
    """Static: ``(maxnorm, thresholds, degrees)`` of the scaling-and-squaring
    Pade approximation for ``dtype`` (Higham 2005's constants, as JAX/SciPy):
    degree ``degrees[i]`` for a 1-norm below ``thresholds[i]``, the last one
    above; ``TypeError`` for a dtype that is not inexact."""
    dt = np.dtype(dtype)
    if dt in (np.float64, np.complex128):
        return (5.371920351148152, (0.01495585217958292, 0.253939833006323, 0.9504178996162932,
                                    2.097847961257068), (3, 5, 7, 9, 13))  # fmt: skip
    if dt in (np.float32, np.complex64):
        return (3.92572478313866, (0.4258730016922831, 1.880152677804762), (3, 5, 7))
    raise TypeError(f"A.dtype={dt} is not supported.")


def _qr_mode(mode, pivoting):
    """Static: the ``jnp.linalg.qr`` mode for SciPy's ``mode`` (JAX's errors)."""
    if pivoting:
        raise NotImplementedError("srcjax: jax.scipy.linalg.qr(pivoting=True) is not supported")
    if mode in ("full", "r"):
        return "complete"
    if mode == "economic":
        return "reduced"
    raise ValueError(f"Unsupported QR decomposition mode '{mode}'")


def _eigh_check(b, eigvals, type):
    """Static: JAX's ``NotImplementedError`` for the generalized problem."""
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    return True


def _trans_flag(trans):
    """Static: whether ``trans`` (0/'N', 1/'T', 2/'C') solves with the
    transpose; ``ValueError`` otherwise."""
    if trans in (0, "N"):
        return False
    if trans in (1, 2, "T", "C"):
        return True
    raise ValueError(f"Invalid 'trans' value {trans!r}")


solve_assume = _static("ad.scipy_solve_assume", _solve_assume)
square_check = _static("ad.scipy_square_check", _square_check)
expm_table = _static("ad.expm_table", _expm_table)
qr_mode = _static("ad.scipy_qr_mode", _qr_mode)
eigh_check = _static("ad.scipy_eigh_check", _eigh_check)
trans_flag = _static("ad.scipy_trans_flag", _trans_flag)


def _trans_conj(trans):
    """Static: whether ``trans`` (2/'C') solves with the conjugate transpose."""
    return trans in (2, "C")


trans_conj = _static("ad.scipy_trans_conj", _trans_conj)


# ---------------------------------------------------------------------------
# LU primitives


def _lu_decompose(a):
    """LU factorization with partial pivoting of ``a`` ``(..., m, n)`` (LAPACK
    ``getrf`` through SciPy, as JAX's CPU backend): ``(lu, pivots,
    permutation)``. ``lu`` ``(..., m, n)`` holds unit-lower ``L`` below the
    diagonal and ``U`` on and above it (dtype: ``a``'s, integers give the
    default float); ``pivots`` ``(..., min(m, n))`` int32, row ``i`` swapped
    with row ``pivots[i]``; ``permutation`` ``(..., m)`` int32 with
    ``a[permutation] = L @ U``. A singular matrix gives zeros on ``U``'s
    diagonal (no error)."""
    import scipy.linalg as sl

    a = np.asarray(a)
    dt = _dt.to_inexact_dtype(_dt.canonicalize_dtype(a.dtype))
    a = a.astype(dt, copy=False)
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    lu_out = np.empty(a.shape, dt)
    piv = np.empty(batch + (k,), np.int32)
    perm = np.empty(batch + (m,), np.int32)
    for idx in np.ndindex(*batch):
        if k == 0:
            lu_out[idx] = a[idx]
            piv[idx] = np.zeros(0, np.int32)
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                f, p = sl.lu_factor(a[idx], check_finite=False)
            lu_out[idx] = f
            piv[idx] = p
        order = np.arange(m, dtype=np.int32)
        for i in range(k):
            j = piv[idx][i]
            order[i], order[j] = order[j], order[i]
        perm[idx] = order
    return lu_out, piv, perm


lu_decompose = register(
    Primitive("ad.lu_decompose", _lu_decompose, kind="internal", differentiable=False)
)
lu_decompose.returns_tree = True


def _lu_decompose_batch(c):
    return c.rebuild()


lu_decompose.def_batch(_lu_decompose_batch)


def _lu_attach(a, perm):
    """The packed factors of ``a`` (as ``ad.lu_decompose``, computed again:
    ``perm`` is that call's permutation), carrying the derivative of the
    factorization with respect to ``a`` (JAX's rules; square matrices only)."""
    return _lu_decompose(a)[0]


lu_attach = register(Primitive("ad.lu_attach", _lu_attach, kind="internal"))


def _lu_attach_batch(c):
    return c.rebuild(
        a=c.materialize(c.arg("a")),
        perm=c.materialize(c.arg("perm")),
    )


lu_attach.def_batch(_lu_attach_batch)


def _lu_check(a):
    """Static: ``NotImplementedError`` for the derivative of the LU of a
    non-square matrix (JAX has it; srcjax only for square ones); else ``0``."""
    m, n = np.shape(a)[-2:]
    if m != n:
        raise NotImplementedError(
            f"srcjax: the derivative of the LU factorization of a {m}x{n} matrix is not "
            "implemented (only of square matrices)"
        )
    return 0


lu_check = _static("ad.lu_check", _lu_check)


def _lu_attach_jvp(t, ans, a, perm):
    low = lu_check(a) + _ad.tril(ans, -1) + _ad.eye_mask(np.shape(ans)[-1])
    up = _ad.triu(ans)
    x = _st.take_along_axis(t, _ad.expand_dims(perm, -1), -2)
    la = solve_triangular(low, x, 0, True, True)
    lau = matrix_transpose(solve_triangular(up, matrix_transpose(la), 1, False))
    return low @ _ad.tril(lau, -1) + _ad.triu(lau) @ up


def _lu_attach_vjp(g, ans, a, perm):
    low = lu_check(a) + _ad.tril(ans, -1) + _ad.eye_mask(np.shape(ans)[-1])
    up = _ad.triu(ans)
    mid = _ad.tril(matrix_transpose(low) @ g, -1) + _ad.triu(g @ matrix_transpose(up))
    w = matrix_transpose(solve_triangular(up, matrix_transpose(mid), 0, False))
    xbar = solve_triangular(low, w, 1, True, True)
    return _st.take_along_axis(xbar, _ad.expand_dims(_st.argsort(perm, -1), -1), -2)


lu_attach.def_jvp(_lu_attach_jvp)
lu_attach.def_vjp(_lu_attach_vjp)


def _lu_attach_samples(rng):
    out = []
    for shape in [(3, 3), (2, 4, 4)]:
        a = rng.normal(size=shape)
        f, _, p = _lu_decompose(a)
        out.append(((a, p), {}))
    return out


lu_attach.samples = _lu_attach_samples


def _schur(a, output="real"):
    """Schur decomposition ``a = Z @ T @ Z^H`` of ``a`` ``(..., n, n)`` (SciPy's
    LAPACK ``gees``, as JAX on CPU): ``(T, Z)``, ``T`` quasi-upper-triangular
    (``output="real"``) or upper-triangular complex (``"complex"``). Dtype:
    ``a``'s (integers give the default float; complex for ``"complex"``). Not
    differentiable (as JAX). Raises ``ValueError`` for another ``output``."""
    import scipy.linalg as sl

    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
    a = np.asarray(a)
    dt = _dt.to_inexact_dtype(_dt.canonicalize_dtype(a.dtype))
    if output == "complex":
        dt = np.result_type(dt, np.complex64)
    a = a.astype(dt, copy=False)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"schur: expected a (batched) square matrix, got shape {a.shape}")
    t = np.empty(a.shape, dt)
    z = np.empty(a.shape, dt)
    for idx in np.ndindex(*a.shape[:-2]):
        ti, zi = sl.schur(a[idx], output=output, check_finite=False)
        t[idx] = ti
        z[idx] = zi
    return t, z


schur = register(Primitive("ad.schur", _schur, kind="internal"))
schur.returns_tree = True
schur.missing_rule_hint = "jax.scipy.linalg.schur has no derivative (as in JAX)"
schur.def_batch(_lu_decompose_batch)
schur.samples = lambda rng: [((rng.normal(size=(3, 3)),), {}), ((rng.normal(size=(2, 3, 3)),), {})]
schur.__doc__ = _schur.__doc__


def _lu_pivots_to_permutation(pivots, m):
    """The row permutation ``(..., m)`` int32 that the LAPACK pivots ``(...,
    k)`` (row ``i`` swapped with row ``pivots[i]``, in order) make."""
    pivots = np.asarray(pivots)
    batch = pivots.shape[:-1]
    perm = np.empty(batch + (m,), np.int32)
    for idx in np.ndindex(*batch):
        order = np.arange(m, dtype=np.int32)
        for i, j in enumerate(pivots[idx]):
            order[i], order[j] = order[j], order[i]
        perm[idx] = order
    return perm


lu_pivots_to_permutation = register(
    Primitive(
        "ad.lu_pivots_to_permutation",
        _lu_pivots_to_permutation,
        kind="internal",
        differentiable=False,
    )
)
lu_pivots_to_permutation.def_batch(_lu_decompose_batch)
lu_pivots_to_permutation.samples = lambda rng: []
lu_decompose.samples = lambda rng: [
    ((rng.normal(size=(3, 3)),), {}),
    ((rng.normal(size=(2, 4, 3)),), {}),
]


# ---------------------------------------------------------------------------
# compositions


def solve(
    a,
    b,
    lower=False,
    overwrite_a=False,
    overwrite_b=False,
    debug=False,
    check_finite=True,
    assume_a="gen",
):
    """Solve ``a @ x = b`` (jax.scipy.linalg.solve).

    ``a``: ``(..., n, n)``; ``b``: ``(..., n)`` (a vector per matrix when
    ``b.ndim == a.ndim - 1``) or ``(..., n, k)``. Result: ``b``'s shape (batch
    dimensions broadcast), JAX's inexact promotion of the dtypes. A singular
    ``a`` gives inf/NaN. ``assume_a``: ``"gen"``, ``"sym"``, ``"her"`` (a
    general LU solve) or ``"pos"``: only the triangle ``lower`` selects is read
    (as a symmetric, complex: Hermitian, matrix; NaN if it is not positive
    definite), while the
    derivative in ``a`` is JAX's ``custom_linear_solve`` one, ``-solve(a,
    g) x^T`` over the whole of ``a``. Raises ``ValueError`` for another
    ``assume_a``. The flags ``overwrite_*``, ``debug``, ``check_finite`` are
    ignored."""
    pos = solve_assume(assume_a)
    if not pos:
        return _jla.solve(a, b)
    s = stop_gradient(a)
    chol = cholesky(s, lower=lower)
    # the Hermitian matrix that triangle stands for (the other triangle is the
    # conjugate transpose of its strict part; symmetric for real a)
    if lower:
        tri = _ad.tril(s)
        sym = tri + jnp.conj(matrix_transpose(_ad.tril(s, -1)))
    else:
        tri = _ad.triu(s)
        sym = tri + jnp.conj(matrix_transpose(_ad.triu(s, 1)))
    # the value reads one triangle; the derivative in a is that of a solve with a
    m = sym + (a - s)
    x = _jla.solve(m, b)
    # NaN where the triangle is not positive definite (its Cholesky factor is NaN)
    bad = jnp.sum(jnp.diagonal(chol, axis1=-2, axis2=-1), axis=-1) * 0
    if jnp.ndim(b) == jnp.ndim(a) - 1:
        return x + jnp.expand_dims(bad, -1)
    return x + jnp.expand_dims(jnp.expand_dims(bad, -1), -1)


def inv(a, overwrite_a=False, check_finite=True):
    """The inverse of each matrix of ``a`` ``(..., n, n)``
    (jax.scipy.linalg.inv = jnp.linalg.inv: shapes, dtypes, derivatives)."""
    return _jla.inv(a)


def det(a, overwrite_a=False, check_finite=True):
    """The determinant of each matrix of ``a`` ``(..., n, n)``, shape
    ``a.shape[:-2]`` (jax.scipy.linalg.det = jnp.linalg.det)."""
    return _jla.det(a)


def lu_factor(a, overwrite_a=False, check_finite=True):
    """``(lu, piv)`` for :func:`lu_solve` (jax.scipy.linalg.lu_factor): ``lu``
    ``(..., m, n)`` packs unit-lower ``L`` (below the diagonal) and ``U``; ``piv``
    ``(..., min(m, n))`` int32 holds LAPACK's row swaps. Dtype of ``lu``:
    ``a``'s (integers give the default float). ``lu`` is differentiable in ``a``
    for square matrices (JAX's rule; non-square raises ``NotImplementedError``)."""
    f, piv, perm = lu_decompose(a)
    return lu_attach(a, perm), piv


def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """LU decomposition ``a = P @ L @ U`` (jax.scipy.linalg.lu): ``(P, L, U)``,
    or ``(P @ L, U)`` with ``permute_l``. ``a``: ``(..., m, n)``; ``P`` ``(...,
    m, m)`` a permutation matrix, ``L`` ``(..., m, k)`` unit lower triangular,
    ``U`` ``(..., k, n)`` upper triangular, ``k = min(m, n)``; all in ``a``'s
    inexact dtype. Differentiable in ``a`` for square matrices (JAX's rule;
    non-square raises ``NotImplementedError``)."""
    f, piv, perm = lu_decompose(a)
    f = lu_attach(a, perm)
    m = jnp.shape(f)[-2]
    n = jnp.shape(f)[-1]
    k = m if m < n else n
    p = jnp.asarray(jnp.expand_dims(perm, -2) == jnp.expand_dims(jnp.arange(m), -1), dtype=f.dtype)
    low = _ad.tril(f[..., :, :k], -1) + jnp.eye(m, k, dtype=f.dtype)
    up = _ad.triu(f[..., :k, :])
    if permute_l:
        return jnp.matmul(p, low), up
    return p, low, up


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solve ``a @ x = b`` (``trans=0``), ``a.T @ x = b`` (1) or ``a.conj().T @ x
    = b`` (2) given
    ``lu_factor(a)`` (jax.scipy.linalg.lu_solve). ``b``: ``(n,)`` or ``(..., n,
    k)`` (also ``(..., n)`` when ``lu`` is ``(..., n, n)``, JAX's deprecated
    batched vector case). Result: ``b``'s shape with broadcast batch dimensions;
    dtype JAX's inexact promotion of ``lu`` and ``b``. Differentiable in ``lu``
    and ``b``. Raises ``ValueError`` for an invalid ``trans``."""
    f, piv = lu_and_piv
    transposed = trans_flag(trans)
    dt = inexact_dtype(f, b)
    f = jnp.asarray(f, dtype=dt)
    b = jnp.asarray(b, dtype=dt)
    m = jnp.shape(f)[-2]
    perm = lu_pivots_to_permutation(piv, m)
    nb = jnp.ndim(b)
    vector = nb == 1 or (jnp.ndim(f) == nb + 1 and jnp.shape(f)[-1] == jnp.shape(b)[-1])
    if vector:
        b = jnp.expand_dims(b, -1)
    # b broadcast against lu's batch (adding zeros), the permutation against b's
    b = b + jnp.zeros_like(f[..., :1])
    idx_shape = jnp.shape(b)[:-1] + (1,)
    if transposed:
        # a^T = U^T L^T P^T; a^H x = b is conj(a^T conj(x)) = b
        conj = trans_conj(trans)
        if conj:
            b = jnp.conj(b)
        y = solve_triangular(f, b, 1, False)
        z = solve_triangular(f, y, 1, True, True)
        back = jnp.broadcast_to(jnp.expand_dims(jnp.argsort(perm, axis=-1), -1), idx_shape)
        x = jnp.take_along_axis(z, back, -2)
        if conj:
            x = jnp.conj(x)
    else:
        rows = jnp.broadcast_to(jnp.expand_dims(perm, -1), idx_shape)
        y = solve_triangular(f, jnp.take_along_axis(b, rows, -2), 0, True, True)
        x = solve_triangular(f, y, 0, False)
    if vector:
        return x[..., 0]
    return x


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """QR decomposition (jax.scipy.linalg.qr) of ``a`` ``(..., m, n)``:
    ``mode="full"`` gives ``(q, r)`` with ``q`` ``(..., m, m)``, ``r`` ``(..., m,
    n)``; ``"economic"`` ``q`` ``(..., m, k)``, ``r`` ``(..., k, n)``; ``"r"``
    the 1-tuple ``(r,)`` of the full ``r``. Dtype ``a``'s inexact one.
    Derivatives as ``jnp.linalg.qr`` (``m >= n``). Raises ``ValueError`` for
    another mode and ``NotImplementedError`` for ``pivoting=True``."""
    jmode = qr_mode(mode, pivoting)
    q, r = _jla.qr(a, mode=jmode)
    if mode == "r":
        return (r,)
    return q, r


def svd(
    a,
    full_matrices=True,
    compute_uv=True,
    overwrite_a=False,
    check_finite=True,
    lapack_driver="gesdd",
):
    """Singular value decomposition (jax.scipy.linalg.svd =
    ``jnp.linalg.svd(a, full_matrices, compute_uv)``: shapes, dtypes and
    derivatives). ``lapack_driver`` and the SciPy flags are ignored."""
    return _jla.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def eigh(
    a,
    b=None,
    lower=True,
    eigvals_only=False,
    overwrite_a=False,
    overwrite_b=False,
    turbo=True,
    eigvals=None,
    type=1,
    check_finite=True,
):
    """Eigenvalues ``w`` ``(..., n)`` (ascending) and eigenvectors ``v`` ``(...,
    n, n)`` of a symmetric ``a`` (jax.scipy.linalg.eigh): ``(w, v)``, or ``w``
    with ``eigvals_only``. ``a`` is symmetrized first, as JAX. Derivatives as
    ``jnp.linalg.eigh``. The generalized problem (``b``, ``eigvals``, ``type !=
    1``) raises ``NotImplementedError``, as JAX."""
    eigh_check(b, eigvals, type)
    uplo = "L" if lower else "U"
    if eigvals_only:
        return _jla.eigvalsh(a, UPLO=uplo)
    w, v = _jla.eigh(a, UPLO=uplo)
    return w, v


def _pade(a, ident, a2, a4, a6, a8, degree):
    """``(U, V)`` of the degree-``degree`` Pade approximant of ``exp(a)`` from
    the powers of ``a`` (``a8`` only for degree 9), in JAX's order of terms."""
    if degree == 3:
        u = a @ (1.0 * a2 + 60.0 * ident)
        v = 12.0 * a2 + 120.0 * ident
    elif degree == 5:
        u = a @ (1.0 * a4 + 420.0 * a2 + 15120.0 * ident)
        v = 30.0 * a4 + 3360.0 * a2 + 30240.0 * ident
    elif degree == 7:
        u = a @ (1.0 * a6 + 1512.0 * a4 + 277200.0 * a2 + 8648640.0 * ident)
        v = 56.0 * a6 + 25200.0 * a4 + 1995840.0 * a2 + 17297280.0 * ident
    elif degree == 9:
        u = a @ (1.0 * a8 + 3960.0 * a6 + 2162160.0 * a4 + 302702400.0 * a2 + 8821612800.0 * ident)
        v = 90.0 * a8 + 110880.0 * a6 + 30270240.0 * a4 + 2075673600.0 * a2 + 17643225600.0 * ident
    else:
        u = a @ (
            a6 @ (1.0 * a6 + 16380.0 * a4 + 40840800.0 * a2)
            + 33522128640.0 * a6
            + 10559470521600.0 * a4
            + 1187353796428800.0 * a2
            + 32382376266240000.0 * ident
        )
        v = (
            a6 @ (182.0 * a6 + 960960.0 * a4 + 1323241920.0 * a2)
            + 670442572800.0 * a6
            + 129060195264000.0 * a4
            + 7771770303897600.0 * a2
            + 64764752532480000.0 * ident
        )
    return u, v


def expm(A, upper_triangular=False, max_squarings=16):
    """The matrix exponential of each matrix of ``A`` ``(..., n, n)``
    (jax.scipy.linalg.expm): JAX's scaling and squaring with a Pade
    approximant (degrees 3/5/7 in float32, up to 13 in float64, chosen by the
    1-norm with Higham's thresholds), then ``max(0, floor(log2(|A|_1 /
    maxnorm)))`` squarings; NaN where more than ``max_squarings`` would be
    needed. ``upper_triangular`` solves the Pade system by back substitution.
    Shape: ``A``'s; dtype: ``A``'s inexact one (integers give the default
    float). Differentiable (through the approximation, as JAX), jit and vmap.
    Raises ``ValueError`` for a non-square ``A`` and ``TypeError`` for an
    unsupported dtype."""
    dt = inexact_dtype(A)
    A = jnp.asarray(A, dtype=dt)
    n = square_check(jnp.shape(A), "A")
    maxnorm, conds, degrees = expm_table(dt)
    a_l1 = jnp.max(jnp.sum(jnp.abs(A), axis=-2), axis=-1)
    s = jnp.maximum(0, jnp.floor(jnp.log2(a_l1 / maxnorm)))
    a = A / jnp.expand_dims(jnp.expand_dims(jnp.exp2(s), -1), -1)
    ident = jnp.eye(n, dtype=dt)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    a8 = a6 @ a2 if len(degrees) > 3 else a6
    u, v = _pade(a, ident, a2, a4, a6, a8, degrees[-1])
    for i in range(len(conds) - 1, -1, -1):
        ui, vi = _pade(a, ident, a2, a4, a6, a8, degrees[i])
        take = jnp.expand_dims(jnp.expand_dims(a_l1 < conds[i], -1), -1)
        u = jnp.where(take, ui, u)
        v = jnp.where(take, vi, v)
    p = u + v
    q = -u + v
    if upper_triangular:
        r = solve_triangular(q, p, 0, False)
    else:
        r = _jla.solve(q, p)
    # (no squaring where more than max_squarings are needed: NaN there)
    s_run = jnp.where(s > max_squarings, 0, s)
    s_max = jnp.max(s_run)
    for i in range(max_squarings):
        if i < s_max:
            r = jnp.where(jnp.expand_dims(jnp.expand_dims(i < s_run, -1), -1), r @ r, r)
    too_many = jnp.expand_dims(jnp.expand_dims(s > max_squarings, -1), -1)
    return jnp.where(too_many, np.nan, r)
