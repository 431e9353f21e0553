"""``jnp.linalg.eig`` / ``eigvals``: the general (non-symmetric) eigendecomposition."""

from __future__ import annotations

import collections

import numpy as np

from srcjax import dtypes as _dt
from srcjax.primitives.ad import (
    expand_dims,
    sum,
)
from srcjax.primitives.registry import by_public
from srcjax.primitives.structural import (
    matrix_transpose,
)

from ._common import _rand
from .solve import _la, _wellcond, solve
from .triangular import _scipy_linalg

# ---------------------------------------------------------------------------
# eig / eigvals: general (non-symmetric) eigendecomposition


EigResult = collections.namedtuple("EigResult", ["eigenvalues", "eigenvectors"])

_project_real = by_public("ad.project_real")  # (ad.py registers it; imported above)


def _eig_input(a):
    """``a`` as the array LAPACK's geev takes (JAX's checks and dtypes): at least
    2-D and square, promoted to its inexact type (integers and bools: the
    default float), canonicalized while x64 is off."""
    a = np.asarray(a)
    if a.ndim < 2:
        raise TypeError(f"Input 0 to eig must have rank at least 2, but got shape={a.shape}")
    if a.shape[-1] != a.shape[-2]:
        raise ValueError(f"The input to eig must be a square matrix. Got shape {a.shape}.")
    dt = _dt.to_inexact_dtype(_dt.canonicalize_dtype(a.dtype))
    if dt not in (np.float32, np.float64, np.complex64, np.complex128):
        raise NotImplementedError(
            f"jnp.linalg.eig: unsupported dtype {dt} (LAPACK's geev takes float32, "
            "float64, complex64 and complex128, as in JAX)"
        )
    return a.astype(dt, copy=False)


def _eig_one(m, compute_v):
    """geev on one finite matrix: SciPy's binding runs LAPACK in the matrix's own
    precision, as JAX's CPU kernel does (NumPy computes float32 in double);
    NumPy is the fallback without SciPy."""
    sl = _scipy_linalg()
    if sl is not None:
        if compute_v:
            return sl.eig(m, right=True, check_finite=False)
        return sl.eigvals(m, check_finite=False), None
    if compute_v:
        return np.linalg.eig(m)
    return np.linalg.eigvals(m), None


def _eig_impl(a, compute_v):
    a = _eig_input(a)
    cdt = np.result_type(a.dtype, np.complex64)
    n = a.shape[-1]
    batch = a.shape[:-2]
    nan = complex(np.nan, np.nan)
    w = np.full(batch + (n,), nan, dtype=cdt)
    v = np.full(a.shape, nan, dtype=cdt) if compute_v else None
    for idx in np.ndindex(*batch):
        m = a[idx]
        if not np.all(np.isfinite(m)):
            continue  # LAPACK would fail (JAX reports NaNs for such a matrix)
        try:
            wi, vi = _eig_one(m, compute_v)
        except (np.linalg.LinAlgError, ValueError):
            continue  # no convergence: NaNs, as JAX's info != 0
        w[idx] = wi
        if compute_v:
            v[idx] = vi
    return w, v


def _eig(a):
    """Eigenvalues and right eigenvectors of general square matrices
    (jax.numpy.linalg.eig).

    ``a``: ``(..., M, M)``, real or complex (integers promote to the default
    float). Returns ``EigResult(eigenvalues, eigenvectors)``: ``(..., M)`` and
    ``(..., M, M)`` (column ``v[..., :, i]`` belongs to ``w[..., i]``, unit
    2-norm with its largest component real, in LAPACK geev's order), always
    complex: complex64 for 32-bit input, complex128 for 64-bit input. A matrix
    with a NaN or infinite entry (or on which geev fails) gives NaNs, as in
    JAX. Raises ``TypeError`` below 2 dimensions, ``ValueError`` for a
    non-square matrix, ``NotImplementedError`` for float16/bfloat16. Not
    differentiable, as in JAX (derivatives of non-symmetric eigenvectors are
    refused): differentiate ``eigvals`` for the eigenvalues."""
    w, v = _eig_impl(a, True)
    return EigResult(w, v)


eig = _la("eig", _eig, np.linalg.eig)
eig.returns_tree = True
eig.missing_rule_hint = (
    "jnp.linalg.eig has no derivative, as in JAX: derivatives of the eigenvectors "
    "of a non-symmetric matrix are valid only under assumptions that cannot be "
    "checked, so JAX refuses them (also when only eig's eigenvalues are used). "
    "Use jnp.linalg.eigvals to differentiate eigenvalues, or jnp.linalg.eigh for "
    "symmetric/Hermitian matrices"
)


def _eigvals(a):
    """Eigenvalues of general square matrices (jax.numpy.linalg.eigvals).

    ``a``: ``(..., M, M)``, real or complex. Returns ``(..., M)``, complex64 for
    32-bit input and complex128 for 64-bit input, in the order of ``eig``;
    NaNs for a matrix with a non-finite entry. Raises as ``eig``.
    Differentiable (JAX's rule: ``dw = diag(V^-1 dA V)`` with ``V`` the right
    eigenvectors, invalid at repeated eigenvalues); a second derivative needs
    eig's eigenvector derivative and raises, as in JAX."""
    return _eig_impl(a, False)[0]


eigvals = _la("eigvals", _eigvals, np.linalg.eigvals)


def _eigvals_vjp(g, ans, a):
    # the transpose of the jvp below (no conjugation, JAX's convention for
    # complex linear maps): V^-T diag(g) V^T, real part for a real ``a``
    v = eig(a)[1]
    vt = matrix_transpose(v)
    return _project_real(solve(vt, expand_dims(g, -1) * vt), a)


def _eigvals_jvp(t, ans, a):
    v = eig(a)[1]
    return sum(solve(v, t) * matrix_transpose(v), axis=-1)


eigvals.def_vjp(_eigvals_vjp)
eigvals.def_jvp(_eigvals_jvp)


def _eig_samples(rng):
    return [
        ((_rand(rng, 3, 3),), {}),
        ((_rand(rng, 2, 4, 4) + 1j * _rand(rng, 2, 4, 4),), {}),
        ((_wellcond(rng, 2),), {}),
    ]


eig.samples = _eig_samples
eigvals.samples = _eig_samples


def _eig_batch(c):
    # geev acts on the last two axes: the batched call is the same call
    return c.rebuild()


eig.def_batch(_eig_batch)
eigvals.def_batch(_eig_batch)
