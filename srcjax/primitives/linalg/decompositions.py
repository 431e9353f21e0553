"""``jnp.linalg.cholesky``, ``eigh`` and ``eigvalsh``, and the dense cotangents of
tuple outputs (an unused entry's cotangent may be a symbolic zero).
"""

from __future__ import annotations

import numpy as np

from srcjax.errors import NonDifferentiableError
from srcjax.primitives.ad import (
    expand_dims,
    eye_mask,
)
from srcjax.primitives.structural import (
    diagonal,
    matrix_transpose,
    tril,
)

from ._blas_threads import call_small
from ._common import _internal, _rand
from .solve import EighResult, _la, _spd
from .triangular import maybe_mT, solve_triangular

# ---------------------------------------------------------------------------
# cholesky / eigh


def _cholesky(a, *, upper=False, symmetrize_input=True):
    """Cholesky factor of a symmetric (complex: Hermitian) positive-definite
    matrix (jax.numpy.linalg.cholesky): lower ``L`` with ``a = L @ L^H``
    (``upper=True``: ``U = L^H``; ``^H`` the conjugate transpose, ``.T`` for
    real). The input is symmetrized, ``(a + a^H) / 2``, as JAX does
    (``symmetrize_input=False``: only the lower triangle is read, as in
    ``jax.lax.linalg.cholesky``; the derivative is still JAX's, which takes the
    perturbation of ``a`` as a whole matrix, not the finite difference of the
    lower triangle alone). A
    matrix that is not positive definite gives a factor of NaNs in its lower
    triangle and zeros above (JAX's result; NumPy raises), each matrix of a
    stack on its own."""
    a = np.asarray(a)
    if symmetrize_input:  # Hermitian part: (a + a^H) / 2 (a^H = a.T for real a)
        a = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    try:
        low = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        low = _cholesky_or_nan(a)
    return np.conj(np.swapaxes(low, -1, -2)) if upper else low


def _cholesky_or_nan(a):
    flat = a.reshape((-1,) + a.shape[-2:])
    out = np.empty(flat.shape, np.result_type(flat.dtype, np.float32))
    for i, m in enumerate(flat):
        try:
            out[i] = np.linalg.cholesky(m)
        except np.linalg.LinAlgError:
            # JAX's: NaN on and below the diagonal, the upper triangle zeros
            # (fresh user 8: [[nan, 0], [nan, nan]]; srcjax gave all NaN)
            out[i] = np.tril(np.full(m.shape, np.nan))
    return out.reshape(a.shape)


cholesky = _la("cholesky", _cholesky, np.linalg.cholesky)


def _cholesky_phi(x):
    """Lower triangle of the last two axes with the diagonal halved."""
    return np.tril(x) - 0.5 * x * np.eye(np.shape(x)[-1], dtype=np.result_type(x))


phi = _internal("ad.cholesky_phi", _cholesky_phi, differentiable=True)


def _phi_vjp_x(g, ans, x):
    return tril(g) - 0.5 * (g * eye_mask(np.shape(x)[-1]))


phi.def_vjp(_phi_vjp_x)


def _phi_jvp_x(t, ans, x):
    return tril(t) - 0.5 * (t * eye_mask(np.shape(x)[-1]))


phi.def_jvp(_phi_jvp_x)
phi.samples = lambda rng: [((_rand(rng, 3, 3),), {})]


def _cholesky_vjp(g, ans, a, *, upper=False, symmetrize_input=True):
    low = maybe_mT(real_only(ans, "jnp.linalg.cholesky"), upper)
    low_t = matrix_transpose(low)
    p = phi(low_t @ maybe_mT(g, upper))
    # s = L^-T p L^-1 by two triangular solves with L^T (trans=1, lower)
    s = solve_triangular(
        low, matrix_transpose(solve_triangular(low, matrix_transpose(p), 1, True)), 1, True
    )
    if symmetrize_input:  # the transpose of (a + a.T) / 2
        s = 0.5 * (s + matrix_transpose(s))
    return s


def _cholesky_jvp(t, ans, a, *, upper=False, symmetrize_input=True):
    low = maybe_mT(real_only(ans, "jnp.linalg.cholesky"), upper)
    if symmetrize_input:
        t = 0.5 * (t + matrix_transpose(t))
    z = solve_triangular(low, t, 0, True)  # L^-1 t, then L^-1 (L^-1 t)^T
    return maybe_mT(
        low @ phi(matrix_transpose(solve_triangular(low, matrix_transpose(z), 0, True))), upper
    )


cholesky.def_vjp(_cholesky_vjp)
cholesky.def_jvp(_cholesky_jvp)
cholesky.samples = lambda rng: [
    ((_spd(rng, 3),), {}),
    ((_spd(rng, 2, (2,)),), {}),
    ((_spd(rng, 3),), {"upper": True}),
    # (symmetrize_input=False is not sampled: its derivative is JAX's convention,
    # a symmetric perturbation, not the finite difference of the lower triangle;
    # tests/test_linalg.py checks it against JAX's values)
]


# ---------------------------------------------------------------------------
# tuple outputs (eigh, qr, svd): the cotangent of an unused entry may arrive as a
# symbolic zero (None, or a scalar 0); the rules want arrays


def _dense_tree(g, like):
    """``g``, the cotangent (or tangent) of a tuple output ``like``, with every
    symbolic zero entry (``None``, or a scalar standing for an array) replaced by
    zeros shaped like the matching entry of ``like``."""
    return tuple(
        np.zeros(np.shape(b), np.result_type(b))
        if p is None or (np.ndim(p) == 0 and np.ndim(b) > 0)
        else p
        for p, b in zip(g, like)
    )


dense_tree = _internal("ad.dense_tree", _dense_tree, differentiable=True)


def _dense_tree_vjp_g(h, ans, g, like):
    return h


def _dense_tree_jvp_g(t, ans, g, like):
    return dense_tree(t, like)


dense_tree.def_vjp(_dense_tree_vjp_g)
dense_tree.def_jvp(_dense_tree_jvp_g)
dense_tree.samples = lambda rng: [
    (((_rand(rng, 2), _rand(rng, 2, 3)), (_rand(rng, 2), _rand(rng, 2, 3))), {})
]


def _eigh(a, UPLO=None, symmetrize_input=True):
    """Eigen-decomposition of a symmetric (complex: Hermitian) matrix
    (jax.numpy.linalg.eigh): ascending real eigenvalues ``w`` and orthonormal
    eigenvectors ``v`` (columns), as a tuple ``(w, v)``. The input is
    symmetrized first, ``(a + a^H) / 2``, as JAX does (derivatives: real input
    only; complex input raises NonDifferentiableError)."""
    a = np.asarray(a)
    if symmetrize_input:  # Hermitian part: (a + a^H) / 2 (a^H = a.T for real a)
        a = (a + np.conj(np.swapaxes(a, -1, -2))) / 2
    n = a.shape[-1] if a.ndim else 0
    w, v = call_small("numpy", n**3, np.linalg.eigh, a, UPLO="L" if UPLO is None else UPLO)
    return EighResult(w, v)


eigh = _la("eigh", _eigh, np.linalg.eigh)


def _entry_present(g, i):
    """1.0 if entry ``i`` of the tuple cotangent ``g`` is a real array, 0.0 if it
    is a symbolic zero (a hole, ``None``, or a scalar 0 standing for an array):
    JAX drops the terms of a symbolic zero cotangent, so a rule can scale such a
    term's possibly infinite coefficients by it. Not differentiable (a constant)."""
    p = None if g is None else g[i]
    if p is None or (np.ndim(p) == 0 and not np.any(p)):
        return 0.0
    return 1.0


entry_present = _internal("ad.entry_present", _entry_present)


def _entry_present_batch(c):
    # the same for every example (a hole stays a hole under vmap): unbatched
    return c.rebuild(), False


entry_present.def_batch(_entry_present_batch)
entry_present.samples = lambda rng: []


def _real_only(x, what):
    """``x`` itself; NonDifferentiableError when it is complex: the derivative rules
    of ``what`` (eigh, eigvalsh, svd) are written for real matrices (complex
    Hermitian/complex inputs gave wrong gradients, silently)."""
    if np.result_type(x).kind == "c":
        raise NonDifferentiableError(
            f"srcjax: derivatives of {what} of complex matrices are not supported yet"
        )
    return x


real_only = _internal("ad.real_only", _real_only, differentiable=True)


def _real_only_vjp(g, ans, x, what):
    return g


def _real_only_jvp(t, ans, x, what):
    return t


real_only.def_vjp(x=_real_only_vjp)
real_only.def_jvp(x=_real_only_jvp)
real_only.samples = lambda rng: [((rng.normal(size=(2, 2)), "eigh"), {})]


def _eigh_vjp(g, ans, a, UPLO=None, symmetrize_input=True):
    w, v = ans[0], real_only(ans[1], "jnp.linalg.eigh")
    gd = dense_tree(g, ans)
    off = 1.0 - eye_mask(np.shape(w)[-1])
    # 1/(w_j - w_i) off the diagonal, infinite at repeated eigenvalues: only where
    # the eigenvectors' cotangent is no symbolic zero (``used``: JAX's eigenvalue-
    # only gradient is finite there, its full one inf/NaN)
    used = entry_present(g, 1)
    gap_inv = (off * used) / (used * (expand_dims(w, -2) - expand_dims(w, -1)) + (1.0 - off * used))
    inner_ = expand_dims(gd[0], -1) * (1.0 - off) + gap_inv * (matrix_transpose(v) @ gd[1])
    full = v @ inner_ @ matrix_transpose(v)
    return 0.5 * (full + matrix_transpose(full))


def _eigh_jvp(t, ans, a, UPLO=None, symmetrize_input=True):
    w, v = ans[0], real_only(ans[1], "jnp.linalg.eigh")
    off = 1.0 - eye_mask(np.shape(w)[-1])
    gap_inv = off / (expand_dims(w, -2) - expand_dims(w, -1) + (1.0 - off))
    vtv = matrix_transpose(v) @ (0.5 * (t + matrix_transpose(t))) @ v
    return (diagonal(vtv, 0, -2, -1), v @ (gap_inv * vtv))


eigh.def_vjp(_eigh_vjp)
eigh.def_jvp(_eigh_jvp)


def _eigh_samples(rng):
    m = rng.normal(size=(3, 3))
    return [((m + m.T,), {}), ((_spd(rng, 2, (2,)),), {})]


eigh.samples = _eigh_samples


def _eigvalsh(a, UPLO=None, symmetrize_input=True):
    """Ascending eigenvalues of a symmetric matrix (jax.numpy.linalg.eigvalsh)."""
    return _eigh(a, UPLO, symmetrize_input)[0]


eigvalsh = _la("eigvalsh", _eigvalsh, np.linalg.eigvalsh)


def _eigvalsh_vjp(g, ans, a, UPLO=None, symmetrize_input=True):
    v = real_only(eigh(a, UPLO, symmetrize_input)[1], "jnp.linalg.eigvalsh")
    return v @ (expand_dims(g, -1) * matrix_transpose(v))


def _eigvalsh_jvp(t, ans, a, UPLO=None, symmetrize_input=True):
    v = real_only(eigh(a, UPLO, symmetrize_input)[1], "jnp.linalg.eigvalsh")
    return diagonal(matrix_transpose(v) @ (0.5 * (t + matrix_transpose(t))) @ v, 0, -2, -1)


eigvalsh.def_vjp(_eigvalsh_vjp)
eigvalsh.def_jvp(_eigvalsh_jvp)
eigvalsh.samples = _eigh_samples
