"""``srcjax.lax.linalg``: the decompositions of ``jax.lax.linalg`` (JAX 0.10.2),
with JAX's signatures and result conventions (``eigh`` returns ``(v, w)``,
``lu`` returns ``(lu, pivots, permutation)``, ``cholesky`` the lower factor).
``eig``'s left eigenvectors, ``hessenberg``, ``householder_product`` and
``tridiagonal`` are primitives registered here that call SciPy's LAPACK
(``geev``, ``gehrd``, ``orgqr``, ``sytrd``: the routines of JAX's CPU
kernels), with no derivative, as in JAX.

Each function is a composition of srcjax's linear-algebra primitives (those of
``srcjax.numpy.linalg`` and ``srcjax.scipy.linalg``), inlined into transformed
code like a user function, so derivatives and batching are those primitives'
(JAX's rules). Options JAX takes only for other platforms (``implementation``,
``algorithm``, ``use_magma``) are accepted and ignored.
https://docs.jax.dev/en/latest/jax.lax.html#linear-algebra-operators
"""

from __future__ import annotations

import enum
from typing import Any, Optional, Tuple

import numpy as np

from .. import dtypes as _dt
from .. import numpy as jnp
from ..numpy import linalg as _jla
from ..primitives.linalg import cholesky as _cholesky
from ..primitives.linalg import solve_triangular
from ..primitives.registry import Primitive, register
from ..scipy import linalg as _sla

__all__ = [
    "EigImplementation",
    "EighImplementation",
    "SvdAlgorithm",
    "cholesky",
    "cholesky_update",
    "eig",
    "eigh",
    "hessenberg",
    "householder_product",
    "lu",
    "lu_pivots_to_permutation",
    "ormqr",
    "qdwh",
    "qr",
    "schur",
    "svd",
    "symmetric_product",
    "triangular_solve",
    "tridiagonal",
    "tridiagonal_solve",
]


class SvdAlgorithm(enum.Enum):
    """``svd``'s ``algorithm=`` (jax.lax.linalg.SvdAlgorithm): accepted; srcjax
    computes every SVD with LAPACK's ``gesdd`` (NumPy's), whatever is asked."""

    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


class EigImplementation(enum.Enum):
    """``eig``'s ``implementation=`` (jax.lax.linalg.EigImplementation):
    accepted; srcjax uses LAPACK's ``geev`` (NumPy's) always."""

    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """``eigh``'s ``implementation=`` (jax.lax.linalg.EighImplementation):
    accepted; srcjax uses LAPACK's ``syevd``/``heevd`` (NumPy's) always."""

    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


def _refuse_impl(flag, what):
    """Static: ``NotImplementedError`` naming ``what`` when ``flag`` is set."""
    if flag:
        raise NotImplementedError(f"srcjax lax.linalg: {what} is not implemented")
    return 0


_refuse = register(
    Primitive("ad.lax_linalg_refuse", _refuse_impl, kind="internal", differentiable=False)
)
_refuse.def_batch(lambda c: (c.rebuild(), False))  # the same for every example
_refuse.samples = lambda rng: []


def cholesky(x: Any, *, symmetrize_input: bool = True) -> Any:
    """The lower Cholesky factor ``L`` (``x = L @ L^H``) of each matrix of ``x``
    ``(..., n, n)`` (jax.lax.linalg.cholesky). With ``symmetrize_input`` the
    factor is that of ``(x + x^H) / 2``; without, only the lower triangle is
    read. Shape and dtype: ``x``'s; NaNs where a matrix is not positive definite."""
    return _cholesky(x, symmetrize_input=symmetrize_input)


def cholesky_update(r_matrix: Any, w_vector: Any) -> Any:
    """The upper Cholesky factor of ``R^T R + w w^T`` given the upper factor
    ``r_matrix`` ``(n, n)`` of ``R^T R`` and ``w_vector`` ``(n,)``
    (jax.lax.linalg.cholesky_update): computed as the factor of the updated
    matrix (the same matrix as JAX's rotations give, up to rounding)."""
    a = jnp.matmul(jnp.swapaxes(r_matrix, -1, -2), r_matrix)
    a = a + jnp.expand_dims(w_vector, -1) * jnp.expand_dims(w_vector, -2)
    return jnp.swapaxes(_cholesky(a, symmetrize_input=False), -1, -2)


def eigh(
    x: Any,
    *,
    lower: bool = True,
    symmetrize_input: bool = True,
    sort_eigenvalues: bool = True,
    subset_by_index: Optional[Tuple[int, int]] = None,
    implementation: Any = None,
) -> Tuple[Any, Any]:
    """Eigendecomposition of Hermitian (real: symmetric) matrices ``x`` ``(...,
    n, n)`` (jax.lax.linalg.eigh): ``(v, w)``, eigenvectors ``v[..., :, i]``
    (``x``'s dtype) for the eigenvalues ``w[..., i]`` (real), ascending.
    ``symmetrize_input`` uses ``(x + x^H) / 2``, else the triangle ``lower``
    names. ``subset_by_index=(start, end)`` keeps eigenpairs ``start:end``.
    Derivatives: ``jnp.linalg.eigh``'s (JAX's)."""
    w, v = _jla.eigh(x, UPLO="L" if lower else "U", symmetrize_input=symmetrize_input)
    if subset_by_index is not None:
        start, end = subset_by_index
        w = w[..., start:end]
        v = v[..., :, start:end]
    return v, w


def _eig_left_impl(a):
    """The left eigenvectors ``vl`` ``(..., n, n)`` of general square matrices
    (``vl[..., :, i]^H a = w[..., i] vl[..., :, i]^H``; unit 2-norm, largest
    component real; LAPACK ``geev`` through SciPy, as JAX's CPU backend, so
    in the order of ``jnp.linalg.eig``'s eigenvalues). Complex64 for 32-bit
    input, complex128 for 64-bit; NaNs for a non-finite matrix."""
    import scipy.linalg as sl

    a = np.asarray(a)
    a = a.astype(_dt.to_inexact_dtype(_dt.canonicalize_dtype(a.dtype)), copy=False)
    out = np.full(a.shape, complex(np.nan, np.nan), np.result_type(a.dtype, np.complex64))
    for idx in np.ndindex(*a.shape[:-2]):
        if np.all(np.isfinite(a[idx])):
            out[idx] = sl.eig(a[idx], left=True, right=False, check_finite=False)[1]
    return out


_eig_left = register(Primitive("ad.lax_eig_left", _eig_left_impl, kind="internal"))
_eig_left.def_batch(lambda c: c.rebuild())  # (the impl loops over leading axes)
_eig_left.samples = lambda rng: []
_eig_left.missing_rule_hint = (
    "lax.linalg.eig's eigenvectors have no derivative, as in JAX without "
    "enable_eigvec_derivs (jnp.linalg.eigvals differentiates eigenvalues)"
)


def _lapack(name, *arrays):
    """SciPy's LAPACK routine ``name`` (``gehrd``, ``orgqr``/``ungqr``,
    ``sytrd``/``hetrd``) for the dtype of ``arrays`` (JAX's CPU kernels call
    the same routines)."""
    import scipy.linalg as sl

    (fn,) = sl.get_lapack_funcs((name,), arrays)
    return fn


def _inexact(a):
    a = np.asarray(a)
    return a.astype(_dt.to_inexact_dtype(_dt.canonicalize_dtype(a.dtype)), copy=False)


def _hessenberg_impl(a):
    """``(h, taus)``: LAPACK ``gehrd``'s packed Hessenberg form of square
    ``a`` ``(..., n, n)`` and its ``n - 1`` Householder scalars."""
    a = _inexact(a)
    n = a.shape[-1]
    h = np.empty_like(a)
    taus = np.empty(a.shape[:-2] + (max(n - 1, 0),), a.dtype)
    for idx in np.ndindex(*a.shape[:-2]):
        hi, ti, _ = _lapack("gehrd", a[idx])(a[idx])
        h[idx], taus[idx] = hi, ti[: max(n - 1, 0)]
    return h, taus


def _householder_product_impl(a, taus):
    """LAPACK ``orgqr``/``ungqr``: the ``(..., m, n)`` product of the reflectors
    stored below the diagonal of ``a`` with scalars ``taus`` ``(..., k)``."""
    a, taus = _inexact(a), np.asarray(taus, _inexact(a).dtype)
    out = np.empty_like(a)
    name = "ungqr" if np.iscomplexobj(a) else "orgqr"
    for idx in np.ndindex(*a.shape[:-2]):
        out[idx] = _lapack(name, a[idx])(a[idx], taus[idx])[0]
    return out


def _tridiagonal_impl(a, lower=True):
    """``(packed, d, e, taus)``: LAPACK ``sytrd``/``hetrd`` of the triangle
    ``lower`` names of ``a`` ``(..., n, n)``."""
    a = _inexact(a)
    n = a.shape[-1]
    real = np.finfo(a.dtype).dtype
    packed = np.empty_like(a)
    d = np.empty(a.shape[:-1], real)
    e = np.empty(a.shape[:-2] + (max(n - 1, 0),), real)
    taus = np.empty(a.shape[:-2] + (max(n - 1, 0),), a.dtype)
    name = "hetrd" if np.iscomplexobj(a) else "sytrd"
    for idx in np.ndindex(*a.shape[:-2]):
        packed[idx], d[idx], e[idx], taus[idx], _ = _lapack(name, a[idx])(
            a[idx], lower=int(bool(lower))
        )
    return packed, d, e, taus


def _no_derivative(public, impl, what, tree):
    prim = register(Primitive(public, impl, kind="internal"))
    prim.def_batch(lambda c: c.rebuild())  # (the impl loops over leading axes)
    prim.returns_tree = tree
    prim.samples = lambda rng: []
    prim.missing_rule_hint = f"lax.linalg.{what} has no derivative, as in JAX"
    return prim


_hessenberg = _no_derivative("ad.lax_hessenberg", _hessenberg_impl, "hessenberg", True)
_householder_product = _no_derivative(
    "ad.lax_householder_product", _householder_product_impl, "householder_product", False
)
_tridiagonal = _no_derivative("ad.lax_tridiagonal", _tridiagonal_impl, "tridiagonal", True)


def hessenberg(a: Any) -> Tuple[Any, Any]:
    """Reduce square matrices ``a`` ``(..., n, n)`` to upper Hessenberg form
    (jax.lax.linalg.hessenberg, LAPACK ``gehrd``): ``(a, taus)``, the
    Hessenberg matrix on and above the first subdiagonal of ``a`` and the
    Householder reflectors below it, with their scalars ``taus`` ``(..., n -
    1)``. Dtype: ``a``'s. Not differentiable, as in JAX."""
    h, taus = _hessenberg(a)
    return h, taus


def householder_product(a: Any, taus: Any) -> Any:
    """The product of the elementary Householder reflectors stored below the
    diagonal of ``a`` ``(..., m, n)`` with scalars ``taus`` ``(..., k)``
    (jax.lax.linalg.householder_product, LAPACK ``orgqr``/``ungqr``): an
    ``(..., m, n)`` matrix with orthonormal columns, ``a``'s dtype. Not
    differentiable, as in JAX."""
    return _householder_product(a, taus)


def tridiagonal(a: Any, *, lower: bool = True) -> Tuple[Any, Any, Any, Any]:
    """Reduce symmetric (Hermitian) matrices ``a`` ``(..., n, n)`` to
    tridiagonal form (jax.lax.linalg.tridiagonal, LAPACK ``sytrd``/``hetrd``,
    reading the triangle ``lower`` names): ``(a, d, e, taus)``, the packed
    result, the diagonal ``d`` ``(..., n)`` and off-diagonal ``e`` ``(..., n -
    1)`` (real), and the reflectors' scalars ``taus`` ``(..., n - 1)``. Not
    differentiable, as in JAX."""
    packed, d, e, taus = _tridiagonal(a, lower)
    return packed, d, e, taus


def eig(
    x: Any,
    *,
    compute_left_eigenvectors: bool = True,
    compute_right_eigenvectors: bool = True,
    enable_eigvec_derivs: bool = False,
    implementation: Any = None,
    use_magma: Any = None,
) -> list:
    """Eigenvalues ``w`` ``(..., n)`` and left and right eigenvectors ``vl``,
    ``vr`` ``(..., n, n)`` of general square matrices (jax.lax.linalg.eig,
    LAPACK's ``geev`` as JAX's CPU backend): ``[w, vl, vr]``, leaving out
    those not asked for (``vr[..., :, i]`` and ``vl[..., :, i]`` belong to
    ``w[..., i]``: ``a vr = w vr``, ``vl^H a = w vl^H``; unit 2-norm, largest
    component real). All complex (complex64 for float32). Not differentiable,
    as ``jnp.linalg.eig`` (JAX refuses eigenvector derivatives unless
    ``enable_eigvec_derivs``; srcjax has none)."""
    w, vr = _jla.eig(x)
    out = [w]
    if compute_left_eigenvectors:
        out.append(_eig_left(x))
    if compute_right_eigenvectors:
        out.append(vr)
    return out


def lu(x: Any) -> Tuple[Any, Any, Any]:
    """LU decomposition with partial pivoting, ``P x = L U``, of ``x`` ``(...,
    m, n)`` (jax.lax.linalg.lu): ``(lu, pivots, permutation)``. ``lu`` has
    ``x``'s shape and dtype with unit-lower ``L`` below the diagonal and ``U``
    on and above it; ``pivots`` ``(..., min(m, n))`` int32 are the row swaps;
    ``permutation`` ``(..., m)`` int32 with ``x[permutation] = L @ U``.
    Differentiable in ``x`` for square matrices (JAX's rule)."""
    _, pivots, perm = _sla.lu_decompose(x)
    return _sla.lu_attach(x, perm), pivots, perm


def lu_pivots_to_permutation(pivots: Any, permutation_size: int) -> Any:
    """The permutation ``(..., permutation_size)`` int32 that the row swaps
    ``pivots`` ``(..., k)`` (row ``i`` with row ``pivots[i]``, in order) make
    (jax.lax.linalg.lu_pivots_to_permutation)."""
    return _sla.lu_pivots_to_permutation(pivots, permutation_size)


def qr(
    x: Any, *, pivoting: bool = False, full_matrices: bool = True, use_magma: Any = None
) -> Tuple[Any, Any]:
    """QR decomposition of ``x`` ``(..., m, n)`` (jax.lax.linalg.qr): ``(q, r)``
    with ``q`` ``(..., m, m)`` and ``r`` ``(..., m, n)`` (``full_matrices``),
    else ``q`` ``(..., m, k)``, ``r`` ``(..., k, n)``, ``k = min(m, n)``. Signs
    as LAPACK's (and JAX's on CPU). ``pivoting=True`` raises
    ``NotImplementedError``. Derivatives: ``jnp.linalg.qr``'s."""
    _refuse(pivoting, "qr with pivoting=True")
    return _jla.qr(x, mode="complete" if full_matrices else "reduced")


def schur(
    x: Any,
    *,
    compute_schur_vectors: bool = True,
    sort_eig_vals: bool = False,
    select_callable: Any = None,
) -> Any:
    """Schur decomposition ``x = Q U Q^H`` of square matrices ``x`` ``(..., m,
    m)`` (jax.lax.linalg.schur, LAPACK's ``gees``): ``(U, Q)``, ``U``
    quasi-upper-triangular (real input), or ``U`` alone without
    ``compute_schur_vectors``. Not differentiable, as in JAX."""
    t, z = _sla.schur(x)
    if compute_schur_vectors:
        return t, z
    return t


def svd(
    x: Any,
    *,
    full_matrices: bool = True,
    compute_uv: bool = True,
    subset_by_index: Optional[Tuple[int, int]] = None,
    algorithm: Any = None,
) -> Any:
    """Singular value decomposition of ``x`` ``(..., m, n)``
    (jax.lax.linalg.svd): ``(u, s, vh)`` with ``x = u @ diag(s) @ vh`` (``s``
    descending, real), or ``s`` alone without ``compute_uv``. ``u`` ``(..., m,
    m)`` and ``vh`` ``(..., n, n)`` with ``full_matrices``, else ``k =
    min(m, n)`` columns/rows. ``subset_by_index=(start, end)`` keeps singular
    triplets ``start:end``. Derivatives: ``jnp.linalg.svd``'s."""
    if not compute_uv:
        s = _jla.svd(x, full_matrices=False, compute_uv=False)
        if subset_by_index is not None:
            s = s[..., subset_by_index[0] : subset_by_index[1]]
        return s
    u, s, vh = _jla.svd(x, full_matrices=full_matrices, compute_uv=True)
    if subset_by_index is not None:
        start, end = subset_by_index
        u = u[..., :, start:end]
        s = s[..., start:end]
        vh = vh[..., start:end, :]
    return u, s, vh


def symmetric_product(
    a_matrix: Any,
    c_matrix: Any,
    *,
    alpha: float = 1.0,
    beta: float = 0.0,
    symmetrize_output: bool = False,
) -> Any:
    """``alpha * a @ a^T + beta * c`` for ``a`` ``(..., m, n)`` and symmetric
    ``c`` ``(..., m, m)`` (jax.lax.linalg.symmetric_product). The whole matrix
    is computed (JAX guarantees only the lower triangle unless
    ``symmetrize_output``, which then mirrors the lower triangle)."""
    out = alpha * jnp.matmul(a_matrix, jnp.swapaxes(a_matrix, -1, -2)) + beta * c_matrix
    if symmetrize_output:
        low = jnp.tril(out)
        out = low + jnp.swapaxes(jnp.tril(out, -1), -1, -2)
    return out


def triangular_solve(
    a: Any,
    b: Any,
    *,
    left_side: bool = False,
    lower: bool = False,
    transpose_a: bool = False,
    conjugate_a: bool = False,
    unit_diagonal: bool = False,
) -> Any:
    """Solve ``op(a) @ x = b`` (``left_side``) or ``x @ op(a) = b`` for
    triangular ``a`` ``(..., m, m)`` (jax.lax.linalg.triangular_solve), where
    ``op(a)`` is ``a`` transposed if ``transpose_a`` and conjugated if
    ``conjugate_a``. Only the triangle ``lower`` names is read (and not the
    diagonal with ``unit_diagonal``). ``b``: ``(..., m, n)`` (left side) or
    ``(..., n, m)``. Result: ``b``'s shape and dtype. Differentiable in ``a``
    and ``b``."""
    if left_side:
        return _left_solve(a, b, lower, transpose_a, conjugate_a, unit_diagonal)
    # x op(a) = b  <=>  op(a)^T x^T = b^T, and op(a)^T flips transpose_a
    bt = jnp.swapaxes(b, -1, -2)
    xt = _left_solve(a, bt, lower, not transpose_a, conjugate_a, unit_diagonal)
    return jnp.swapaxes(xt, -1, -2)


def _left_solve(a, b, lower, transpose_a, conjugate_a, unit_diagonal):
    """``op(a) x = b`` with solve_triangular's ``trans`` (0: a, 1: a^T, 2: a^H)."""
    if transpose_a:
        return solve_triangular(a, b, 2 if conjugate_a else 1, lower, unit_diagonal)
    if conjugate_a:
        return solve_triangular(jnp.conj(a), b, 0, lower, unit_diagonal)
    return solve_triangular(a, b, 0, lower, unit_diagonal)


def tridiagonal_solve(dl: Any, d: Any, du: Any, b: Any, *, perturb_singular: bool = False) -> Any:
    """Solve the tridiagonal system ``A x = b`` (jax.lax.linalg.tridiagonal_solve):
    ``A[i, i-1] = dl[i]``, ``A[i, i] = d[i]``, ``A[i, i+1] = du[i]`` (``dl[0]``
    and ``du[m-1]`` are not read); ``dl``, ``d``, ``du`` ``(..., m)``, ``b``
    ``(..., m, n)``. Result: ``b``'s shape and dtype. Solved as the dense
    system by LU with partial pivoting (as LAPACK's ``gtsv``), so
    differentiable in all four operands. ``perturb_singular=True`` raises
    ``NotImplementedError``."""
    _refuse(perturb_singular, "tridiagonal_solve with perturb_singular=True")
    m = jnp.shape(d)[-1]
    a = (
        jnp.expand_dims(dl, -1) * jnp.eye(m, k=-1, dtype=d.dtype)
        + jnp.expand_dims(d, -1) * jnp.eye(m, dtype=d.dtype)
        + jnp.expand_dims(du, -1) * jnp.eye(m, k=1, dtype=d.dtype)
    )
    return _jla.solve(a, b)


def ormqr(a: Any, taus: Any, c: Any, *, left: bool = True, transpose: bool = False) -> Any:
    """``Q c`` (``left``) or ``c Q`` with ``Q`` the product of the Householder
    reflectors stored below the diagonal of ``a`` ``(..., m, k)`` with scalars
    ``taus`` ``(..., k)`` (jax.lax.linalg.ormqr, LAPACK ``ormqr``/``unmqr``), as
    ``qr``'s ``geqrf`` leaves them; ``transpose`` applies ``Q^T`` (``Q^H`` for
    complex). ``m`` is ``c.shape[-2]`` (left) or ``c.shape[-1]``. Result: ``c``'s
    shape, the common dtype. ``Q`` is formed by ``householder_product`` (square,
    the missing reflectors the identity), so not differentiable, as that."""
    m, k = jnp.shape(a)[-2], jnp.shape(a)[-1]
    if k < m:  # reflectors with tau = 0 are the identity: Q square (m, m)
        a = jnp.concatenate([a, jnp.zeros(jnp.shape(a)[:-1] + (m - k,), a.dtype)], axis=-1)
    kt = jnp.shape(taus)[-1]
    if kt < m:
        taus = jnp.concatenate([taus, jnp.zeros(jnp.shape(taus)[:-1] + (m - kt,), taus.dtype)], -1)
    q = householder_product(a[..., :m, :m], taus[..., :m])
    if transpose:
        q = jnp.conj(jnp.swapaxes(q, -1, -2))
    return jnp.matmul(q, c) if left else jnp.matmul(c, q)


def qdwh(
    x: Any,
    *,
    is_hermitian: bool = False,
    max_iterations: Optional[int] = None,
    eps: Optional[float] = None,
    dynamic_shape: Optional[Tuple[int, int]] = None,
) -> Tuple[Any, Any, Any, Any]:
    """The polar decomposition ``x = u h`` of ``x`` ``(m, n)``, ``m >= n``
    (jax.lax.linalg.qdwh): ``(u, h, num_iters, is_converged)``, ``u`` ``(m, n)``
    with orthonormal columns, ``h`` ``(n, n)`` Hermitian positive semidefinite.
    JAX iterates QDWH (dynamically weighted Halley); srcjax computes the same
    factors from the SVD ``x = W S V^H`` (``u = W V^H``, ``h = V S V^H``), so
    ``num_iters`` is 0 and ``is_converged`` True; ``is_hermitian``,
    ``max_iterations`` and ``eps`` are accepted and not needed. Derivatives:
    ``jnp.linalg.svd``'s. ``dynamic_shape`` raises NotImplementedError."""
    _refuse(dynamic_shape is not None, "qdwh with dynamic_shape")
    if jnp.ndim(x) != 2 or jnp.shape(x)[0] < jnp.shape(x)[1]:
        raise ValueError(
            f"qdwh needs a matrix with at least as many rows as columns, got {jnp.shape(x)}"
        )
    w, s, vh = _jla.svd(x, full_matrices=False, compute_uv=True)
    v = jnp.conj(jnp.swapaxes(vh, -1, -2))
    u = jnp.matmul(w, vh)
    h = jnp.matmul(v * s.astype(v.dtype), vh)
    h = 0.5 * (h + jnp.conj(jnp.swapaxes(h, -1, -2)))
    return u, h, jnp.asarray(0, jnp.int32), jnp.asarray(True)
