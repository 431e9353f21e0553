"""Runtime helpers for batched products: per-example ``matmul`` / ``dot``
with flags saying which operand carries the batch axis (``ad.bmatmul``,
``ad.bdot``), their adjoints (``ad.bmatmul_left`` / ``_right``,
``ad.bdot_left`` / ``_right``), ``ad.bunbroadcast`` and solve's right-hand-side
helpers. Each carries its derivative rules and samples."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...errors import ShapeError
from ..ad import _unbroadcast as _ad_unbroadcast
from ..ad.linear import def_with_adjoint
from ..ad.sums import broadcast_to
from ..creation import ndim as ndim_
from ..creation import shape as shape_
from ..linalg import _matmul_left, _matmul_right
from ..linalg._common import extension_product, has_extension_float
from ..linalg.bilinear import _own_dtype
from ..linalg.contraction import contract
from ..linalg.products import bilinear_spec
from ._base import _def_rules, _reg
from .makers import def_flagged_bilinear, def_flagged_bilinear_cotangents
from .runtime_index import _batch_einsum_spec, _is_array_row, _is_object_batch, _stack_objects
from .runtime_select import _generated_caller
from .runtime_trees import _lift, lift


def _batch_einsum_spec_any(spec, flags):
    """:func:`_batch_einsum_spec` with ``flags`` any sequence of booleans."""
    return _batch_einsum_spec(spec, tuple(flags))


batch_einsum_spec = _reg("ad.batch_einsum_spec", _batch_einsum_spec_any, False).facts(
    pure=True, static_for_constants=True
)


def _bmatmul(a, b, ab, bb):
    """Per example ``a @ b``; ``ab`` / ``bb`` say which operand has a leading
    batch axis. A hole (``None``, a zero cotangent in second-order code) gives a
    scalar zero, which its consumer broadcasts (user J: grad of grad through vmap).
    Operands whose per-example shapes do not fit raise JAX's TypeError (a
    ``ShapeError``) naming those shapes and the user's line."""
    if (
        ab
        and bb
        and type(a) is np.ndarray
        and type(b) is np.ndarray
        and a.ndim == 3
        and b.ndim == 2
        and a.dtype.kind == b.dtype.kind == "f"
        and _MATVEC is not None
    ):
        try:  # (per example matrix @ vector, the commonest: R6's Newton-CG step)
            return _MATVEC(a, b)
        except ValueError:
            pass  # (the shapes do not fit: the general path's error)
    if type(a) is np.ndarray and type(b) is np.ndarray and a.dtype in _PLAIN and b.dtype in _PLAIN:
        try:  # (arrays of NumPy's own numbers: no user objects, no bfloat16)
            return _bmatmul_arrays(a, b, ab, bb)
        except ValueError:
            raise _example_contraction_error(a, b, ab, bb) from None
    if a is None or b is None:
        other = b if a is None else a
        return np.zeros((), _dt.to_inexact_dtype(np.result_type(other)))
    if _user_object(a) or _user_object(b):
        # a user's class with its own __matmul__/__rmatmul__: `@` per example
        n = len(a) if ab else len(b)
        rows = [(a[i] if ab else a) @ (b[i] if bb else b) for i in range(n)]
        return _stack_objects(rows)
    a = np.asarray(a)
    b = np.asarray(b)
    if has_extension_float((a, b)):  # (bfloat16: NumPy's matmul gives float32)
        return extension_product(lambda x, y: _bmatmul(x, y, ab, bb), None, (a, b))
    try:
        return _bmatmul_arrays(a, b, ab, bb)
    except ValueError:
        raise _example_contraction_error(a, b, ab, bb) from None


#: NumPy 2.2's matrix-vector gufuncs (None before): a stack of matrix-vector
#: products in one call, ~1 us less than matmul with a unit axis added and dropped
_MATVEC = getattr(np, "matvec", None)
_VECMAT = getattr(np, "vecmat", None)
#: dtypes of arrays that take the products' fast path (checked by ``in``: a dtype
#: set lookup, no attribute walk)
_PLAIN = frozenset(np.dtype(t) for t in "?bhilqBHILQefdgFDG")


def _user_object(x) -> bool:
    """An operand that is no array: an instance of a user's class (not a
    registered pytree), or a batch of them (:func:`_stack_objects`)."""
    if _is_object_batch(x):
        return True
    return not _is_array_row(x)


def _example_contraction_error(a, b, ab, bb):
    """The eager matmul's error for one example's operands, at the user's line."""
    import types

    from ...errors import format_location
    from ..linalg import _contraction_error

    ea = types.SimpleNamespace(shape=np.shape(a)[1:] if ab else np.shape(a))
    eb = types.SimpleNamespace(shape=np.shape(b)[1:] if bb else np.shape(b))
    err = _contraction_error(ea, eb)
    return ShapeError(
        format_location(f"{err} (under vmap: one example's operands)", _generated_caller())
    )


def _bmatmul_arrays(a, b, ab, bb):
    if not bb:
        if b.ndim <= 2:
            return np.matmul(a, b)
        ra = a.ndim - 1
        if ra == 1:
            return np.matmul(a[:, None, :], b[..., None, :, :])[..., 0, :]
        return np.matmul(_lift(a, b.ndim), b)
    if not ab:
        rb = b.ndim - 1
        if rb >= 2:
            return np.matmul(a, _lift(b, a.ndim)) if a.ndim > 2 else np.matmul(a, b)
        # per-example vector b
        if a.ndim == 1:
            return np.matmul(b, a)
        if a.ndim == 2:  # every example's b times one matrix: one GEMM, b @ a.T
            return np.matmul(b, a.T)
        return np.moveaxis(np.matmul(a, b.T), -1, 0)  # (one product, no loop)
    ra, rb = a.ndim - 1, b.ndim - 1
    if ra == 2 and rb == 1 and _MATVEC is not None and a.dtype.kind == b.dtype.kind == "f":
        return _MATVEC(a, b)  # per example matrix @ vector: one gufunc call
    a2 = a[:, None, :] if ra == 1 else a
    b2 = b[:, :, None] if rb == 1 else b
    n = max(a2.ndim, b2.ndim)
    a2 = _lift(a2, n - 1)
    b2 = _lift(b2, n - 1)
    r = np.matmul(a2, b2)
    if rb == 1:
        r = r[..., 0]
    if ra == 1:
        r = r[..., 0, :] if rb != 1 else r[..., 0]
    return r


bmatmul = _reg("ad.bmatmul", _bmatmul).facts(array_result=True, pure=True)


def _per_example(fn, args, flags, size):
    """Fallback: ``fn`` per example in a loop, stacked."""
    rows = []
    for i in range(size):
        rows.append(fn(*[a[i] if f else a for a, f in zip(args, flags)]))
    return np.stack(rows)


def _size_of(args, flags):
    for a, f in zip(args, flags):
        if f:
            return np.shape(a)[0]
    return 1


def _operands(g, a, b, ab, bb):
    """``g``, ``a``, ``b`` as arrays and the per-example ranks of ``a`` and ``b``."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        a, b = np.asarray(a), np.asarray(b)
    if type(g) is not np.ndarray:
        g = np.asarray(g)
    return g, a, b, a.ndim - (1 if ab else 0), b.ndim - (1 if bb else 0)


def _bmatmul_left_any(g, a, b, ab, bb):
    """Per example the cotangent of ``a`` in ``a @ b`` (summed over the examples
    when ``a`` is not batched); ``g`` is batched. Zeros like ``a`` when ``g`` or
    ``b`` is a hole (``None``). The sum over examples is contracted inside the
    product (one GEMM over the batch axis, as JAX's dot_general batching emits),
    never a per-example stack that is summed after."""
    if g is None or b is None:
        return np.zeros(np.shape(a), _dt.to_inexact_dtype(np.result_type(a)))
    g, a, b, ra, rb = _operands(g, a, b, ab, bb)
    if not ab:
        r = _summed_left(g, b, ra, rb, bb)
        if r is not None:
            return r
    if ra in (1, 2) and rb == 2 and not bb:
        r = np.matmul(g, b.T)
    elif ra == 1 and rb == 1:
        r = g[:, None] * (b if bb else b[None, :])
    elif ra == 2 and rb == 1:  # per example outer(g, b)
        r = g[:, :, None] * (b[:, None, :] if bb else b[None, None, :])
    elif ra == 1 and rb == 2 and bb:  # per example b @ g
        r = np.matmul(b, g[..., None])[..., 0]
    elif ra == 2 and rb == 2 and bb:
        r = np.matmul(g, np.swapaxes(b, -1, -2))
    else:
        size = g.shape[0]
        r = _per_example(_matmul_left, (g, a, b), (True, ab, bb), size)
    if not ab:
        r = r.sum(axis=0)
    return r


def _summed_left(g, b, ra, rb, bb):
    """``sum_i g_i @ b_i.T`` (the cotangent of an unbatched ``a``) as one product
    contracting the batch axis, or None where no such form is written here."""
    if not bb:
        if rb == 2 and ra in (1, 2):  # g: (B, [n,] k), b: (m, k)
            return np.matmul(g.sum(axis=0), b.T)
        if rb == 1 and ra == 2:  # outer(sum_i g_i, b)
            return np.multiply.outer(g.sum(axis=0), b)
        if rb == 1 and ra == 1:
            return g.sum(axis=0) * b
        return None
    if ra == 2 and rb == 1:  # sum_i outer(g_i, b_i): g.T @ b, one GEMM
        return np.matmul(g.T, b)
    if ra == 1 and rb == 1:  # sum_i g_i b_i
        return np.matmul(g, b)
    if ra == 1 and rb == 2:  # sum_i b_i @ g_i
        return np.tensordot(b, g, axes=([0, 2], [0, 1]))
    if ra == 2 and rb == 2:  # sum_i g_i @ b_i.T
        return np.tensordot(g, b, axes=([0, 2], [0, 2]))
    return None


def _bmatmul_right_any(g, a, b, ab, bb):
    """Per example the cotangent of ``b`` in ``a @ b`` (summed over the examples
    when ``b`` is not batched); ``g`` is batched. Zeros like ``b`` when ``g`` or
    ``a`` is a hole (``None``). As in :func:`_bmatmul_left_any`, a sum over examples
    is contracted inside the product."""
    if g is None or a is None:
        return np.zeros(np.shape(b), _dt.to_inexact_dtype(np.result_type(b)))
    g, a, b, ra, rb = _operands(g, a, b, ab, bb)
    if not bb:
        r = _summed_right(g, a, ra, rb, ab)
        if r is not None:
            return r
    if bb and ab and ra == 1 and rb == 2:
        return a[:, :, None] * g[:, None, :]
    if bb and ab and ra == 2 and rb == 2:
        return np.matmul(np.swapaxes(a, -1, -2), g)
    if bb and not ab and ra == 2 and rb == 2:
        return np.matmul(a.T, g)
    if ra == 2 and rb == 1:  # per example a^T @ g
        if ab and _VECMAT is not None and a.dtype.kind == g.dtype.kind == "f":
            r = _VECMAT(g, a)  # (real operands: vecmat's conjugation does nothing)
        elif ab:
            r = np.matmul(np.swapaxes(a, -1, -2), g[..., None])[..., 0]
        else:
            r = np.matmul(g, a)
        return r if bb else r.sum(axis=0)
    if ra == 1 and rb == 1:  # per example g * a
        r = g[:, None] * (a if ab else a[None, :])
        return r if bb else r.sum(axis=0)
    if ra == 1 and rb == 2:  # per example outer(a, g)
        r = (a[:, :, None] if ab else a[None, :, None]) * g[:, None, :]
        return r if bb else r.sum(axis=0)
    size = g.shape[0]
    r = _per_example(_matmul_right, (g, a, b), (True, ab, bb), size)
    if not bb:
        r = r.sum(axis=0)
    return r


def _summed_right(g, a, ra, rb, ab):
    """``sum_i a_i.T @ g_i`` (the cotangent of an unbatched ``b``) as one product
    contracting the batch axis, or None where no such form is written here."""
    if ab:
        if rb == 2 and ra == 1:  # sum_i outer(a_i, g_i): a.T @ g
            return np.matmul(a.T, g)
        if rb == 2 and ra == 2:  # the examples' rows stacked: one GEMM
            return np.matmul(a.reshape(-1, a.shape[-1]).T, g.reshape(-1, g.shape[-1]))
        if rb == 1 and ra == 2:  # sum_i a_i.T @ g_i
            return np.tensordot(a, g, axes=([0, 1], [0, 1]))
        if rb == 1 and ra == 1:  # sum_i g_i a_i
            return np.matmul(g, a)
        return None
    if rb == 2 and ra == 2:
        return np.matmul(a.T, g.sum(axis=0))
    if rb == 2 and ra == 1:  # outer(a, sum_i g_i)
        return np.multiply.outer(a, g.sum(axis=0))
    if rb == 1 and ra == 2:
        return np.matmul(g.sum(axis=0), a)
    if rb == 1 and ra == 1:
        return g.sum(axis=0) * a
    return None


def _bmatmul_left(g, a, b, ab, bb):
    """:func:`_bmatmul_left_any` in ``a``'s dtype (bfloat16 operands)."""
    return _own_dtype(_bmatmul_left_any(g, a, b, ab, bb), a)


def _bmatmul_right(g, a, b, ab, bb):
    """:func:`_bmatmul_right_any` in ``b``'s dtype (bfloat16 operands)."""
    if (
        ab
        and bb
        and type(g) is np.ndarray
        and type(a) is np.ndarray
        and type(b) is np.ndarray
        and a.ndim == 3
        and g.ndim == 2
        and b.ndim == 2
        and a.dtype.kind == g.dtype.kind == b.dtype.kind == "f"
        and _VECMAT is not None
    ):
        # per example a^T @ g (the cotangent of a batched vector b): what the
        # general path computes, without its dispatch
        try:
            return _VECMAT(g, a)
        except ValueError:
            pass
    return _own_dtype(_bmatmul_right_any(g, a, b, ab, bb), b)


bmatmul_left = _reg("ad.bmatmul_left", _bmatmul_left).facts(array_result=True, pure=True)
bmatmul_right = _reg("ad.bmatmul_right", _bmatmul_right).facts(
    array_result=True,
    pure=True,
    # (the cotangent of an unbatched b, summed over the examples: the trips'
    # rows of g and a joined are more examples of the same call)
    stack_sum=(("g", "a"), "ad.bmatmul_right", (), (("ab", True), ("bb", False)), "concatenate"),
)
bmatmul_left.samples = lambda rng: []
bmatmul_right.samples = lambda rng: []


# jit's forms of ``ad.bmatmul(a, v, True, True)`` and ``ad.bmatmul_right(g, a, v,
# True, True)`` for float32/float64 operands of one dtype whose shapes fit (per
# example matrix @ vector and its cotangent, R6's hvp inside the CG loop): the
# one gufunc call each makes for them, without the dispatch (optimize/direct.py)


def _matvec(a, v):
    """Per example ``a_i @ v_i`` (``a``: a stack of matrices, ``v``: of vectors)."""
    return _MATVEC(a, v)


def _vecmat(g, a):
    """Per example ``g_i @ a_i`` (real operands: vecmat's conjugation does nothing)."""
    return _VECMAT(g, a)


matvec = _reg("ad.matvec", _matvec, differentiable=False).facts(array_result=True, pure=True)
vecmat = _reg("ad.vecmat", _vecmat, differentiable=False).facts(array_result=True, pure=True)
matvec.samples = lambda rng: [((rng.normal(size=(4, 3, 2)), rng.normal(size=(4, 2))), {})]
vecmat.samples = lambda rng: [((rng.normal(size=(4, 3)), rng.normal(size=(4, 3, 2))), {})]


bmatmul.samples = lambda rng: [
    ((rng.normal(size=(4, 3)), rng.normal(size=(3, 2)), True, False), {}),
    ((rng.normal(size=(4, 3)), rng.normal(size=(4, 3, 2)), True, True), {}),
    ((rng.normal(size=(2, 3)), rng.normal(size=(4, 3, 2)), False, True), {}),
    ((rng.normal(size=(4, 2, 3)), rng.normal(size=(3, 2)), True, False), {}),
]


def _bunbroadcast(g, x, gb, xb):
    """Per example ``unbroadcast(g, x)``: ``g`` summed down to the per-example
    shape of ``x`` (the result is batched when ``g`` is)."""
    g = np.asarray(g)
    xs = np.shape(x)[1:] if xb else np.shape(x)
    if not gb:  # (x's dtype, not float64: unbroadcast casts to the operand's dtype)
        return _ad_unbroadcast(g, np.zeros(xs, getattr(x, "dtype", g.dtype)))
    gs = g.shape[1:]
    if gs == xs:
        return g
    lead = len(gs) - len(xs)
    axes = tuple(range(1, lead + 1)) + tuple(
        1 + lead + i for i, n in enumerate(xs) if n == 1 and gs[lead + i] != 1
    )
    out = g.sum(axis=axes) if axes else g
    return out.reshape((g.shape[0],) + tuple(xs))


bunbroadcast = _reg("ad.bunbroadcast", _bunbroadcast).facts(
    array_result=True, pure=True, identity_operand="g"
)
bunbroadcast.samples = lambda rng: []


def _bunbroadcast_vjp(h, ans, g):
    return broadcast_to(lift(h, ndim_(g) - 1), shape_(g))


def_flagged_bilinear(bmatmul, bmatmul_left, bmatmul_right)
bunbroadcast.def_vjp(g=_bunbroadcast_vjp)


def _adjoint_samples(rng):
    """(g, a, b, ab, bb) with g shaped like a @ b: every batching of bmatmul."""
    out = []
    for (a, b, ab, bb), _ in bmatmul.samples(rng) + [
        ((rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), True, True), {}),
        ((rng.normal(size=(3,)), rng.normal(size=(4, 3, 2)), False, True), {}),
    ]:
        g = rng.normal(size=np.shape(_bmatmul(a, b, ab, bb)))
        out.append(((g, a, b, ab, bb), {}))
    return out


bmatmul_left.samples = bmatmul_right.samples = _adjoint_samples
def_flagged_bilinear_cotangents(bmatmul, bmatmul_left, bmatmul_right)


def _bunbroadcast_jvp(t, ans, x, gb, xb):
    return bunbroadcast(t, x, gb, xb)


bunbroadcast.def_jvp(g=_bunbroadcast_jvp)


def _bdot(a, b, ab, bb):
    """Per example ``dot(a, b)``."""
    ra = np.ndim(a) - (1 if ab else 0)
    rb = np.ndim(b) - (1 if bb else 0)
    if ra >= 1 and rb >= 1 and ra <= 2 and rb <= 2:
        return _bmatmul(a, b, ab, bb)
    spec = _batch_einsum_spec(
        _bilinear_impl("dot", np.zeros((1,) * ra), np.zeros((1,) * rb)), (ab, bb)
    )
    return contract(spec, a, b)


def _bilinear_impl(kind, a, b):
    return bilinear_spec.impl(kind, a, b)


bdot = _reg("ad.bdot", _bdot)


# its adjoints are bmatmul's, exact for operands of rank 1 and 2 (where dot
# is matmul): the samples stay there
bdot.samples = lambda rng: (
    bmatmul.samples(rng)
    + [
        ((rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), True, True), {}),
        ((rng.normal(size=(3,)), rng.normal(size=(4, 3, 2)), False, True), {}),
    ]
)
def_flagged_bilinear(bdot, bmatmul_left, bmatmul_right)


def _rhs_column(b, a):
    """``b`` as a column when it is a vector per example of the batched
    matrices ``a`` (``b.ndim == a.ndim - 1``), else ``b``."""
    b = np.asarray(b)
    return b[..., None] if b.ndim == np.ndim(a) - 1 else b


def _rhs_uncolumn(x, b, a):
    """The inverse of :func:`_rhs_column` for a solution ``x``."""
    x = np.asarray(x)
    return x[..., 0] if np.ndim(b) == np.ndim(a) - 1 else x


rhs_column = _reg("ad.rhs_column", _rhs_column)
rhs_uncolumn = _reg("ad.rhs_uncolumn", _rhs_uncolumn)


def _rhs_uncolumn_vjp(g, ans, b, a):
    return rhs_column(g, a) if np.ndim(b) == np.ndim(a) - 1 else g


def _rhs_uncolumn_jvp(t, ans, b, a):
    return rhs_uncolumn(t, b, a)


def_with_adjoint(rhs_column, rhs_uncolumn)
_def_rules(rhs_uncolumn, "x", _rhs_uncolumn_vjp, _rhs_uncolumn_jvp)
rhs_column.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), rng.normal(size=(2, 3, 3))), {}),
    ((rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 3, 3))), {}),
]
rhs_uncolumn.samples = lambda rng: [
    ((rng.normal(size=(2, 3, 1)), rng.normal(size=(2, 3)), rng.normal(size=(2, 3, 3))), {}),
    ((rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 3, 3))), {}),
]


def _bdot_left(g, a, b, ab, bb):
    """Per example the cotangent of ``a`` in ``dot(a, b)`` (summed over the
    examples when ``a`` is not batched); ``g`` is batched. Ranks 1 and 2 are
    matmul's (vectorized); others (scalars, higher ranks) run per example."""
    from ..linalg import _dot_left

    ra = np.ndim(a) - (1 if ab else 0)
    rb = np.ndim(b) - (1 if bb else 0)
    if 1 <= ra <= 2 and 1 <= rb <= 2:
        return _bmatmul_left(g, a, b, ab, bb)
    r = _per_example(_dot_left, (g, a, b), (True, ab, bb), np.shape(g)[0])
    return r if ab else r.sum(axis=0)


def _bdot_right(g, a, b, ab, bb):
    """Per example the cotangent of ``b`` in ``dot(a, b)`` (summed over the
    examples when ``b`` is not batched); ``g`` is batched."""
    from ..linalg import _dot_right

    ra = np.ndim(a) - (1 if ab else 0)
    rb = np.ndim(b) - (1 if bb else 0)
    if 1 <= ra <= 2 and 1 <= rb <= 2:
        return _bmatmul_right(g, a, b, ab, bb)
    r = _per_example(_dot_right, (g, a, b), (True, ab, bb), np.shape(g)[0])
    return r if bb else r.sum(axis=0)


bdot_left = _reg("ad.bdot_left", _bdot_left).facts(array_result=True)
bdot_right = _reg("ad.bdot_right", _bdot_right).facts(array_result=True)


# (their rules: bilinear in (g, b) / (g, a); transposes through dot itself, bdot,
# every rank)
def _bdot_adjoint_samples(rng):
    """(g, a, b, ab, bb) with g shaped like dot(a, b) per example, every rank."""
    out = list(_adjoint_samples(rng))
    for a, b, ab, bb in (
        (rng.normal(size=(4,)), rng.normal(size=(4, 2, 3, 2)), True, True),  # scalar a
        (rng.normal(size=(4, 2, 2, 3)), rng.normal(size=(3, 2)), True, False),  # rank 3
        (rng.normal(size=(2, 3)), rng.normal(size=(4, 2, 3, 2)), False, True),  # rank 3 b
    ):
        g = rng.normal(size=np.shape(_bdot(a, b, ab, bb)))
        out.append(((g, a, b, ab, bb), {}))
    return out


bdot_left.samples = bdot_right.samples = _bdot_adjoint_samples
def_flagged_bilinear_cotangents(bdot, bdot_left, bdot_right)


# -- abstract values for jit: a product's shape from its operands' (running one
# on stand-ins costs the product's flops, so jit's budget left them unknown
# above 4096 elements: R1's every layer after its first GEMM)
def _float_operands(avals, names):
    """The abstract values of operands ``names``: arrays of one float dtype, not
    weakly typed; else None."""
    out = [avals.get(n) for n in names]
    for v in out:
        if not (hasattr(v, "shape") and hasattr(v, "dtype")) or getattr(v, "weak_type", True):
            return None
    if len({np.dtype(v.dtype) for v in out}) != 1 or np.dtype(out[0].dtype).kind != "f":
        return None
    return out


def _product_shape(a, b, ab, bb):
    """The shape of per example ``a @ b`` (``ab``/``bb``: which has a leading
    batch axis) for per-example operands of rank 1 or 2 whose contracted axes
    agree; else None."""
    if type(ab) is not bool or type(bb) is not bool:
        return None
    pa = tuple(a.shape[1:] if ab else a.shape)
    pb = tuple(b.shape[1:] if bb else b.shape)
    if not (1 <= len(pa) <= 2 and 1 <= len(pb) <= 2) or pa[-1] != pb[0]:
        return None
    if ab and bb and a.shape[0] != b.shape[0]:
        return None
    batch = tuple(a.shape[:1]) if ab else tuple(b.shape[:1]) if bb else ()
    return batch + pa[:-1] + pb[1:]


def _bmatmul_shape(avals):
    """jit's abstract value of ``ad.bmatmul``/``ad.bdot(a, b, ab, bb)``."""
    ops = _float_operands(avals, ("a", "b"))
    if ops is None:
        return None
    shape = _product_shape(*ops, avals.get("ab"), avals.get("bb"))
    return None if shape is None else (shape, ops[0].dtype)


def _cotangent_shape(of):
    """jit's abstract value of the cotangent of operand ``of`` (``ad.bmatmul_left``:
    ``a``, ``ad.bmatmul_right``: ``b``) of a product whose batched cotangent ``g``
    has the product's shape: that operand's (summed over the examples where it
    has no batch axis)."""

    def rule(avals):
        ops = _float_operands(avals, ("g", "a", "b"))
        if ops is None:
            return None
        g, a, b = ops
        ab, bb = avals.get("ab"), avals.get("bb")
        shape = _product_shape(a, b, ab, bb)
        if shape is None or not (ab or bb) or tuple(g.shape) != shape:
            return None
        x = a if of == "a" else b
        return tuple(x.shape), x.dtype

    return rule


for _p in (bmatmul, bdot):
    _p.facts(result_shape=_bmatmul_shape)
bmatmul_left.facts(result_shape=_cotangent_shape("a"))
bmatmul_right.facts(result_shape=_cotangent_shape("b"))
