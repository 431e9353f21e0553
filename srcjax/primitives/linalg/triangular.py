"""``solve_triangular`` (``jax.scipy.linalg.solve_triangular``;
:mod:`srcjax.scipy.linalg`) and the triangular helpers of its rules.
"""

from __future__ import annotations

import numpy as np

from srcjax import dtypes as _dt
from srcjax.primitives.ad import (
    unbroadcast,
)
from srcjax.primitives.structural import (
    matrix_transpose,
)

from ..ad.linear import def_linear, def_transpose_pair
from ..direct_forms import COPY, Literal
from ..direct_forms import flag as literal_value
from ._blas_threads import call_small
from ._common import _internal, _linalg, _rand
from .bilinear import cross
from .contraction import contract
from .einsum import einsum
from .products import dot, inner, kron, matmul, outer, tensordot, vdot
from .solve import _la, _wellcond, solve

# ---------------------------------------------------------------------------
# solve_triangular (jax.scipy.linalg.solve_triangular; srcjax.scipy.linalg)


def _is_transposed(trans):
    if trans in (0, "N"):
        return False
    if trans in (1, 2, "T", "C"):
        return True
    raise ValueError(f"Invalid 'trans' value {trans!r}: expected 0, 1, 2, 'N', 'T' or 'C'")


# The derivative rules also use an internal ``trans`` code 3: the solve with
# ``conj(a)`` (not transposed), the adjoint of the solve with ``a^H`` (2); the
# user-facing solve_triangular does not accept it.


def _tri_flag(trans):
    """Static: whether ``trans`` solves with the transposed matrix."""
    return False if trans == 3 else _is_transposed(trans)


def _tri_flip(trans):
    """Static: the ``trans`` of the adjoint solve: 0 <-> 1 (``a``, ``a.T``), 2 <->
    3 (``a^H``, ``conj(a)``)."""
    if trans in (2, "C"):
        return 3
    if trans == 3:
        return 2
    return 0 if _is_transposed(trans) else 1


def _tri_conj(trans):
    """Static: whether ``trans`` solves with a conjugated matrix (2, 'C' or 3)."""
    return trans in (2, "C", 3)


# static flags of static codes: jit evaluates them when it builds (pure, constant operands)
tri_flag = _internal("ad.tri_flag", _tri_flag).facts(pure=True)
tri_flip = _internal("ad.tri_flip", _tri_flip).facts(pure=True)
tri_conj = _internal("ad.tri_conj", _tri_conj).facts(pure=True)


def _flag_direct(name):
    """The direct rule of a helper that applies ``name`` when its static ``flag``
    is true: with the flag known, a copy of an array ``x`` or that call."""

    def direct(avals):
        x, f = avals.get("x"), literal_value(avals.get("flag"))
        if type(x).__name__ != "Aval" or type(f) is not bool:
            return None
        return (name, ("x",)) if f else (COPY, ("x",))

    return direct


def _maybe_conj(x, flag):
    """``conj(x)`` when ``flag`` else ``x`` (static flag)."""
    return np.conj(x) if flag else np.asarray(x)


maybe_conj = _internal("ad.maybe_conj", _maybe_conj, differentiable=True)


maybe_conj.facts(pure=True, direct=_flag_direct("jnp.conj"))
def_linear(maybe_conj)  # its own transpose, selected by a static flag
maybe_conj.samples = lambda rng: [((_rand(rng, 2, 3), True), {}), ((_rand(rng, 2, 3), False), {})]


def _tri_mask(x, lower, strict=False):
    """The lower (``lower``) or upper triangle of ``x`` over its last two axes,
    without the diagonal when ``strict``; zeros elsewhere."""
    if lower:
        return np.tril(x, -1 if strict else 0)
    return np.triu(x, 1 if strict else 0)


tri_mask = _internal("ad.tri_mask", _tri_mask, differentiable=True)


tri_mask.facts(pure=True)
def_linear(tri_mask)  # a mask: its own transpose
tri_mask.samples = lambda rng: [
    ((_rand(rng, 3, 3), True), {}),
    ((_rand(rng, 2, 3, 3), False, True), {}),
]


def _tri_is_vector(a, b):
    return np.ndim(a) == np.ndim(b) + 1


def _tri_rhs(y, a, b):
    """``y[..., None]`` when ``b`` is a vector right-hand side of
    ``solve_triangular(a, b)`` (``ndim(a) == ndim(b) + 1``), else ``y``."""
    return np.expand_dims(y, -1) if _tri_is_vector(a, b) else np.asarray(y)


def _tri_unrhs(y, a, b):
    """Inverse of ``ad.tri_rhs``."""
    return np.asarray(y)[..., 0] if _tri_is_vector(a, b) else np.asarray(y)


def _rhs_direct(avals):
    """``ad.tri_rhs`` with ranks known: ``y[..., None]`` for a vector right-hand
    side, else a copy of ``y``."""
    y, a, b = avals.get("y"), avals.get("a"), avals.get("b")
    if not all(type(v).__name__ == "Aval" for v in (y, a, b)):
        return None
    if len(a.shape) == len(b.shape) + 1:
        return "jnp.expand_dims", ("y", Literal(-1))
    return COPY, ("y",)


tri_rhs = _internal("ad.tri_rhs", _tri_rhs, differentiable=True)
tri_unrhs = _internal("ad.tri_unrhs", _tri_unrhs, differentiable=True)


tri_rhs.facts(pure=True, direct=_rhs_direct)
tri_unrhs.facts(pure=True)
def_transpose_pair(tri_rhs, tri_unrhs)
tri_rhs.samples = lambda rng: [
    ((_rand(rng, 3), _rand(rng, 3, 3), _rand(rng, 3)), {}),
    ((_rand(rng, 3, 2), _rand(rng, 3, 3), _rand(rng, 3, 2)), {}),
]
tri_unrhs.samples = lambda rng: [
    ((_rand(rng, 3, 1), _rand(rng, 3, 3), _rand(rng, 3)), {}),
    ((_rand(rng, 3, 2), _rand(rng, 3, 3), _rand(rng, 3, 2)), {}),
]


def _solve_triangular(
    a,
    b,
    trans=0,
    lower=False,
    unit_diagonal=False,
    overwrite_b=False,
    debug=None,
    check_finite=True,
):
    """Solve ``op(a) @ x = b`` for a triangular ``a``
    (jax.scipy.linalg.solve_triangular).

    ``a``: ``(..., m, m)``; only its lower (``lower=True``) or upper triangle is
    read, and with ``unit_diagonal`` its diagonal is taken to be ones. ``b``:
    ``(..., m)`` (a vector per matrix, when ``b.ndim == a.ndim - 1``) or ``(..., m,
    n)``; batch dimensions broadcast. ``trans``: ``0``/``"N"`` solves with ``a``,
    ``1``/``"T"`` with ``a.T``, ``2``/``"C"`` with ``a.conj().T``. Shape: that of
    ``b`` (with broadcast batch dimensions); dtype: JAX's inexact promotion of
    ``a`` and ``b``. Differentiable in ``a`` (its triangle) and ``b``. A singular
    ``a`` gives inf/NaN, as in JAX. Raises ``ValueError`` for an invalid
    ``trans`` or mismatched shapes. The SciPy flags ``overwrite_b``, ``debug``
    and ``check_finite`` are accepted and ignored."""
    transposed = _is_transposed(trans)
    dt = _dt.to_inexact_dtype(_dt.result_type(a, b))
    a = np.asarray(a, dtype=dt)
    b = np.asarray(b, dtype=dt)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"solve_triangular: a must be (..., m, m), got shape {a.shape}")
    if a.ndim == 2:
        x = _tri_solve_2d(a, b, trans, lower, unit_diagonal)
        if x is not None:
            return x.astype(dt, copy=False)
    elif not any(a.strides[: a.ndim - 2]):
        # one matrix broadcast along the batch axes (vmap over right-hand sides
        # materializes the factor that way): one solve with the batch as columns
        x = _tri_solve_shared(a, b, trans, lower, unit_diagonal)
        if x is not None:
            return x.astype(dt, copy=False)
    t = _tri_mask(a, lower, unit_diagonal)
    if unit_diagonal:
        t = t + np.eye(a.shape[-1], dtype=dt)
    if transposed:
        t = np.swapaxes(t, -1, -2)
        if trans in (2, "C"):
            t = np.conj(t)
    bm = _tri_rhs(b, a, b)
    if bm.shape[-2] != a.shape[-1]:
        raise ValueError(f"solve_triangular: incompatible shapes a {a.shape} and b {b.shape}")
    try:
        x = np.linalg.solve(t, bm)
    except np.linalg.LinAlgError:  # a zero on the diagonal: substitution's inf/NaN
        x = _tri_substitute(t, bm, lower != transposed)
    return _tri_unrhs(x, a, b).astype(dt, copy=False)


_SCIPY_LINALG = []


def _scipy_linalg():
    """``scipy.linalg`` when SciPy is installed (an optional dependency), else
    ``None``; imported on first use."""
    if not _SCIPY_LINALG:
        try:
            import scipy.linalg as sl
        except ImportError:  # pragma: no cover (SciPy is installed in CI)
            sl = None
        _SCIPY_LINALG.append(sl)
    return _SCIPY_LINALG[0]


#: right-hand-side size (rows * columns) below which OpenBLAS's ``trsm`` keeps the
#: solve on the calling thread itself (measured on SciPy 1.17's OpenBLAS 0.3.30:
#: 32x31 on one thread, 32x32 and 16x64 on the workers); from it on, :func:`call_small`
#: decides. The LAPACK driver ``trtrs`` has no such guard (a 12x12 system with 12
#: columns went to the workers), nor SciPy's ``solve_triangular`` around it.
TRSM_OWN_GUARD = 1024

_TRSM: dict = {}  # dtype -> SciPy's BLAS ?trsm for it


def _trsm(dtype):
    """SciPy's BLAS ``?trsm`` (``s``, ``d``, ``c`` or ``z``) for ``dtype``; ``None``
    without SciPy."""
    fn = _TRSM.get(dtype)
    if fn is None:
        sl = _scipy_linalg()
        if sl is None:
            return None
        from scipy.linalg import blas

        (fn,) = blas.get_blas_funcs(("trsm",), dtype=dtype)
        _TRSM[dtype] = fn
    return fn


def _tri_solve_2d(a, b, trans, lower, unit_diagonal):
    """A triangular solve for one matrix ``a`` ``(m, m)`` by BLAS ``trsm`` (SciPy's
    wrapper, without ``scipy.linalg.solve_triangular``'s argument checks, which
    cost five times the solve of a 12x12 system); ``b`` ``(m,)`` or ``(..., m,
    n)``, its batch axes folded into columns. An exact zero on the diagonal gives
    the substitution's inf/NaN, as XLA's solve (also ``trsm``) does. ``None`` when
    SciPy is missing, or for dtypes and shapes that do not fit (the caller's
    general path then runs)."""
    m = a.shape[-1]
    if b.ndim == 0 or m == 0:
        return None
    if a.dtype.char not in "fdFD":  # float16, bfloat16: solved in float32
        if a.dtype.kind not in "fV" or a.dtype.itemsize > 2:
            return None
        a, b = a.astype(np.float32), b.astype(np.float32)
    vector = b.ndim == 1
    if vector:
        bm = b[:, None]
    else:
        if b.shape[-2] != m:
            return None
        batch = b.shape[:-2]
        bm = np.moveaxis(b, -2, 0).reshape(m, -1) if batch else b
    if bm.shape[0] != m or bm.shape[1] == 0:
        return None
    trsm = _trsm(a.dtype)
    if trsm is None:
        return None
    code = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}[trans]
    if a.flags.c_contiguous and (code != 2 or a.dtype.kind == "f"):
        # BLAS reads column-major: a C-ordered a is the F-ordered a.T, whose other
        # triangle is a's (no copy); conj-transposing needs a's own layout
        a, lower, code = a.T, not lower, 1 - min(code, 1)
    args = (1.0, a, bm)
    kw = {"lower": int(lower), "trans_a": code, "diag": int(unit_diagonal)}
    with np.errstate(divide="ignore", invalid="ignore"):
        if m * bm.shape[1] < TRSM_OWN_GUARD:
            x = trsm(*args, **kw)
        else:  # (larger small systems on one BLAS thread: see _blas_threads)
            x = call_small("scipy", m * m * bm.shape[1], trsm, *args, **kw)
    if vector:
        return x[:, 0]
    if batch:
        x = np.moveaxis(x.reshape((m,) + batch + (b.shape[-1],)), 0, -2)
    return x


def _tri_solve_shared(a, b, trans, lower, unit_diagonal):
    """:func:`_tri_solve_2d` for ``a`` ``(..., m, m)`` whose batch axes all have
    stride 0 (one matrix): ``b`` broadcast to the batch shape, its batch folded into
    columns. ``None`` where the general path must run."""
    m = a.shape[-1]
    vector = b.ndim == a.ndim - 1
    core = b.shape[-1:] if vector else b.shape[-2:]
    if core[0] != m or len(core) > b.ndim:
        return None
    try:
        batch = np.broadcast_shapes(a.shape[:-2], b.shape[: b.ndim - len(core)])
    except ValueError:
        return None  # the general path raises its error
    bb = np.broadcast_to(b, batch + core)
    a2 = a[(0,) * (a.ndim - 2)]
    if vector:  # (..., m): the examples are the columns of one (m, k) right-hand side
        x = _tri_solve_2d(a2, bb.reshape(-1, m).T, trans, lower, unit_diagonal)
        return None if x is None else x.T.reshape(bb.shape)
    return _tri_solve_2d(a2, bb, trans, lower, unit_diagonal)


def _tri_substitute(t, bm, lower):
    """Forward (``lower``) or back substitution, row by row, for triangular ``t``
    ``(..., m, m)`` and ``bm`` ``(..., m, n)`` (the singular case, where it gives
    inf/NaN like XLA's triangular solve)."""
    m = t.shape[-1]
    shape = np.broadcast_shapes(t.shape[:-2], bm.shape[:-2]) + bm.shape[-2:]
    x = np.zeros(shape, dtype=np.result_type(t, bm))
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in range(m) if lower else range(m - 1, -1, -1):
            r = bm[..., i, :] - contract("...j,...jk->...k", t[..., i, :], x)
            x[..., i, :] = r / t[..., i, i][..., None]
    return x


solve_triangular = _la("solve_triangular", _solve_triangular)

# products and solves promote their operands to one dtype first, as JAX does
# (jnp.dot(int32, float32) is float32: see primitives/call_dtypes._fix_dtypes)
for _p in (dot, matmul, inner, tensordot, outer, vdot, kron, einsum, cross, solve):
    _p.promote_operands = True
solve_triangular.promote_operands = True


def _solve_triangular_vjp_a(
    g, ans, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
    check_finite=True,
):  # fmt: skip
    u = solve_triangular_adjoint(a, g, trans, lower, unit_diagonal)
    outer_ = -(tri_rhs(u, a, b) @ matrix_transpose(tri_rhs(ans, a, b)))
    # trans=2 solves with conj(a).T: the cotangent of conj(a), conjugated
    outer_ = maybe_conj(maybe_mT(outer_, tri_flag(trans)), tri_conj(trans))
    return unbroadcast(tri_mask(outer_, lower, unit_diagonal), a)


def _solve_triangular_vjp_b(
    g, ans, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
    check_finite=True,
):  # fmt: skip
    return unbroadcast(solve_triangular_adjoint(a, g, trans, lower, unit_diagonal), b)


def _solve_triangular_jvp_a(
    t, ans, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
    check_finite=True,
):  # fmt: skip
    dop = maybe_mT(tri_mask(t, lower, unit_diagonal), tri_flag(trans))
    dop = maybe_conj(dop, tri_conj(trans))
    dx = solve_triangular(a, dop @ tri_rhs(ans, a, b), trans, lower, unit_diagonal)
    return -tri_unrhs(dx, a, b)


def _solve_triangular_jvp_b(
    t, ans, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
    check_finite=True,
):  # fmt: skip
    return solve_triangular(a, t, trans, lower, unit_diagonal)


def _solve_triangular_adjoint(a, g, trans=0, lower=False, unit_diagonal=False):
    """``solve_triangular(a, g, tri_flip(trans), lower, unit_diagonal)``: the solve
    with the transposed triangle that both adjoints of ``solve_triangular`` (in ``a``
    and in ``b``) need, written as one pure call with the same arguments in both, so
    jit's common-subexpression pass computes it once (``cho_solve``'s gradient).
    ``trans`` 3 (internal) is the adjoint of 2: ``a^H``'s adjoint solve is with
    ``conj(a)``, and ``tri_flip(3) = 2``."""
    flip = _tri_flip(trans)
    if flip == 3:  # conj(a)^-1 g = conj(a^-1 conj(g))
        return np.conj(_solve_triangular(a, np.conj(g), 0, lower, unit_diagonal))
    return _solve_triangular(a, g, flip, lower, unit_diagonal)


solve_triangular_adjoint = _linalg("ad.solve_triangular_adjoint", _solve_triangular_adjoint)
solve_triangular_adjoint.promote_operands = True


def _sta_vjp_a(h, ans, a, g, trans=0, lower=False, unit_diagonal=False):
    # the solve with tri_flip(trans): its own adjoint solve has trans tri_flip(tri_flip(trans))
    u = solve_triangular_adjoint(a, h, tri_flip(trans), lower, unit_diagonal)
    outer_ = -(tri_rhs(u, a, g) @ matrix_transpose(tri_rhs(ans, a, g)))
    flip = tri_flip(trans)
    outer_ = maybe_conj(maybe_mT(outer_, tri_flag(flip)), tri_conj(flip))
    return unbroadcast(tri_mask(outer_, lower, unit_diagonal), a)


def _sta_vjp_g(h, ans, a, g, trans=0, lower=False, unit_diagonal=False):
    return unbroadcast(solve_triangular_adjoint(a, h, tri_flip(trans), lower, unit_diagonal), g)


def _sta_jvp_a(t, ans, a, g, trans=0, lower=False, unit_diagonal=False):
    flip = tri_flip(trans)
    dop = maybe_conj(maybe_mT(tri_mask(t, lower, unit_diagonal), tri_flag(flip)), tri_conj(flip))
    dx = solve_triangular_adjoint(a, dop @ tri_rhs(ans, a, g), trans, lower, unit_diagonal)
    return -tri_unrhs(dx, a, g)


def _sta_jvp_g(t, ans, a, g, trans=0, lower=False, unit_diagonal=False):
    return solve_triangular_adjoint(a, t, trans, lower, unit_diagonal)


def _sta_batch(c):
    # as solve_triangular's rule: a vector right-hand side is told apart by
    # ndim(a) == ndim(g) + 1, so both operands are batched
    return c.rebuild(a=c.materialize(c.arg("a")), g=c.materialize(c.arg("g")))


solve_triangular_adjoint.def_vjp(_sta_vjp_a, _sta_vjp_g)
solve_triangular_adjoint.def_jvp(_sta_jvp_a, _sta_jvp_g)
solve_triangular_adjoint.def_batch(_sta_batch)
solve_triangular_adjoint.samples = lambda rng: [
    ((_wellcond(rng, 3), _rand(rng, 3)), {}),
    ((_wellcond(rng, 3), _rand(rng, 3, 2)), {"lower": True}),
    ((_wellcond(rng, 3), _rand(rng, 3)), {"trans": 1, "lower": True}),
    ((_wellcond(rng, 3, (2,)), _rand(rng, 2, 3, 2)), {"trans": "T", "unit_diagonal": True}),
]

solve_triangular.def_vjp(_solve_triangular_vjp_a, _solve_triangular_vjp_b)
solve_triangular.def_jvp(_solve_triangular_jvp_a, _solve_triangular_jvp_b)
solve_triangular.samples = lambda rng: [
    ((_wellcond(rng, 3), _rand(rng, 3)), {}),
    ((_wellcond(rng, 3), _rand(rng, 3, 2)), {"lower": True}),
    ((_wellcond(rng, 3), _rand(rng, 3)), {"trans": 1, "lower": True}),
    ((_wellcond(rng, 3, (2,)), _rand(rng, 2, 3, 2)), {"trans": "T", "unit_diagonal": True}),
    ((_wellcond(rng, 3), _rand(rng, 2, 3, 2)), {"lower": True, "unit_diagonal": True}),
    ((_wellcond(rng, 3, (2,)), _rand(rng, 2, 3)), {"trans": 2}),
]


def _maybe_mT(x, flag):
    """``matrix_transpose(x)`` when ``flag`` else ``x`` (static flag)."""
    return np.swapaxes(x, -1, -2) if flag else np.asarray(x)


maybe_mT = _internal("ad.maybe_mT", _maybe_mT, differentiable=True)


maybe_mT.facts(pure=True, direct=_flag_direct("jnp.matrix_transpose"))
def_linear(maybe_mT)  # its own transpose, selected by a static flag


maybe_mT.samples = lambda rng: [((_rand(rng, 2, 3), True), {}), ((_rand(rng, 2, 3), False), {})]
