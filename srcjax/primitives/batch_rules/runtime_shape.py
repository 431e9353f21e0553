"""Runtime helpers for batched shape operations: ``ad.bbroadcast_like``,
``ad.bcotangent_like``, ``ad.bdiag``, ``ad.bjoin`` / ``ad.bsplit``,
``ad.list_depth`` and ``ad.barray_adjoint`` (``jnp.array``'s of lists),
``ad.bkron_shape``, and the folding of two batch axes into one
(``ad.fold_axes`` / ``ad.unfold_axes``, ``ad.axis_len``)."""

from __future__ import annotations

import numpy as np

from ..ad.linear import def_adjoint_pair
from ..ad.shapes import moveaxis
from ..ad.sums import unbroadcast
from ..control._trees import _class_kind
from ..control.cotangents import cotangent_like
from ..creation import array
from ..creation import shape as shape_
from ._base import _def_rules, _reg
from .runtime_products import bunbroadcast
from .runtime_trees import _lift


def _bbroadcast_like(x, like, xb, lb):
    """Batched ``broadcast_like``: per-example ranks aligned after the batch axis."""
    x = np.asarray(x)
    shape = tuple(np.shape(like))
    if not lb:
        shape = (x.shape[0],) + shape  # x is batched
    if xb:
        missing = (len(shape) - 1) - (x.ndim - 1)
        if missing > 0:
            x = x.reshape(x.shape[:1] + (1,) * missing + x.shape[1:])
    if x.shape == shape:
        return x
    return np.broadcast_to(x, shape)


bbroadcast_like = _reg("ad.bbroadcast_like", _bbroadcast_like).facts(
    array_result=True, pure=True, identity_operand="x"
)
bbroadcast_like.missing_rule_hint = (
    "differentiating vmap-ed forward-mode code (grad of vmap of jvp) is not supported yet"
)
bbroadcast_like.samples = lambda rng: []


def _bbroadcast_like_jvp(t, ans, like, xb, lb):
    return bbroadcast_like(t, like, xb, lb)


def _bbroadcast_like_vjp(h, ans, x, xb):
    return bunbroadcast(h, x, True, True) if xb else unbroadcast(h, x)


bbroadcast_like.def_jvp(x=_bbroadcast_like_jvp)
bbroadcast_like.def_vjp(x=_bbroadcast_like_vjp)


def _bcotangent_like(ct, x):
    """Batched ``ad.cotangent_like(ct, x)`` (both carry the batch axis): holes
    filled with zeros of ``x``'s leaves, ``x``'s container types kept, each leaf
    of ``ct`` given ``x``'s per-example rank (unit axes after the batch axis),
    broadcast and cast to ``x``'s floating dtype."""
    if isinstance(x, dict):
        return type(x)(
            (k, _bcotangent_like(ct.get(k) if isinstance(ct, dict) else None, v))
            for k, v in x.items()
        )
    if isinstance(x, (list, tuple)):
        parts = [None] * len(x) if ct is None else list(ct) + [None] * (len(x) - len(ct))
        vals = [_bcotangent_like(g, v) for g, v in zip(parts, x)]
        return type(x)(*vals) if hasattr(x, "_fields") else type(x)(vals)
    if ct is not None and x is not None and _class_kind(x) is None:
        ct = _lift(ct, np.ndim(x) - 1)
    return cotangent_like.impl(ct, x)


bcotangent_like = _reg("ad.bcotangent_like", _bcotangent_like)


def _bcotangent_like_vjp(g, ans):
    # as ad.cotangent_like's: the identity (the cotangent reaching a gradient's
    # final form has its primal's shape; filling holes is linear)
    return g


def _bcotangent_like_jvp(t, ans, x):
    return bcotangent_like(t, x)


_def_rules(bcotangent_like, "ct", _bcotangent_like_vjp, _bcotangent_like_jvp)
bcotangent_like.samples = lambda rng: [
    ((rng.normal(size=(3, 2)), rng.normal(size=(3, 2))), {}),
    (
        (
            [rng.normal(size=(3,)), rng.normal(size=(3, 2))],
            (rng.normal(size=(3,)), rng.normal(size=(3, 2))),
        ),
        {},
    ),
]


def _bdiag(v, k=0, nb=1):
    """Per example ``diag(v, k)`` for ``v`` with ``nb`` leading batch axes: a 1-D
    example becomes a matrix with it on diagonal ``k``, a 2-D example gives its
    diagonal ``k``."""
    v = np.asarray(v)
    k = int(k)
    if v.ndim - nb == 1:
        n = v.shape[-1]
        m = n + abs(k)
        out = np.zeros(v.shape[:-1] + (m, m), v.dtype)
        i = np.arange(n)
        rows, cols = (i, i + k) if k >= 0 else (i - k, i)
        out[..., rows, cols] = v
        return out
    if v.ndim - nb != 2:
        raise ValueError("diag: input must be 1-D or 2-D")
    return np.diagonal(v, k, nb, nb + 1).copy()


def _bdiag_adjoint(g, v, k=0, nb=1):
    """Adjoint of :func:`_bdiag` in ``v``: for 1-D examples the diagonal ``k`` of
    ``g``, for 2-D examples zeros like ``v`` with ``g`` on diagonal ``k``."""
    g = np.asarray(g)
    k = int(k)
    if np.ndim(v) - nb == 1:
        return np.diagonal(g, k, -2, -1).copy()
    out = np.zeros(np.shape(v), g.dtype)
    n = g.shape[-1]
    i = np.arange(n)
    rows, cols = (i, i + k) if k >= 0 else (i - k, i)
    out[..., rows, cols] = g
    return out


bdiag = _reg("ad.bdiag", _bdiag)
bdiag_adjoint = _reg("ad.bdiag_adjoint", _bdiag_adjoint)


def_adjoint_pair(bdiag, bdiag_adjoint)
bdiag.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), 1), {}),
    ((rng.normal(size=(2, 3, 4)), -1), {}),
]
bdiag_adjoint.samples = lambda rng: []


def _join_layout(arrays, kind, nb):
    """(per-item shapes after promotion, concatenation axis) of a batched
    ``hstack`` / ``vstack`` / ``concatenate(axis=None)`` (``kind="flat"``) of
    ``arrays`` (each with ``nb`` leading batch axes)."""
    if kind == "flat":
        return [
            tuple(np.shape(a))[:nb] + (int(np.prod(np.shape(a)[nb:], dtype=int)),) for a in arrays
        ], nb
    rank = 1 if kind == "hstack" else 2
    shapes = []
    for a in arrays:
        s = tuple(np.shape(a))
        extra = rank - (len(s) - nb)
        if extra > 0:
            s = s[:nb] + (1,) * extra + s[nb:]
        shapes.append(s)
    if kind == "hstack" and len(shapes[0]) - nb > 1:
        return shapes, nb + 1
    return shapes, nb


def _bjoin(arrays, kind="hstack", nb=1, like=None):
    """Per example ``hstack(arrays)`` / ``vstack(arrays)`` /
    ``concatenate(arrays, axis=None)`` (``kind``: ``"hstack"``, ``"vstack"``,
    ``"flat"``) for items with ``nb`` leading batch axes; ``None`` items (with
    ``like``) are zeros."""
    if like is not None:
        arrays = [
            np.zeros(np.shape(b), np.result_type(b)) if a is None else a
            for a, b in zip(arrays, like)
        ]
    shapes, axis = _join_layout(arrays, kind, nb)
    return np.concatenate([np.reshape(a, s) for a, s in zip(arrays, shapes)], axis=axis)


def _bsplit(g, arrays, kind="hstack", nb=1):
    """Adjoint of :func:`_bjoin`: ``g`` cut into pieces shaped like ``arrays``."""
    g = np.asarray(g)
    shapes, axis = _join_layout(arrays, kind, nb)
    cuts = np.cumsum([s[axis] for s in shapes])[:-1]
    pieces = np.split(g, cuts, axis=axis)
    return [np.reshape(p, np.shape(a)) for p, a in zip(pieces, arrays)]


bjoin = _reg("ad.bjoin", _bjoin)
bsplit = _reg("ad.bsplit", _bsplit)


def _bjoin_vjp(g, ans, arrays, kind="hstack", nb=1, like=None):
    return bsplit(g, arrays if like is None else like, kind, nb)


def _bjoin_jvp(t, ans, arrays, kind="hstack", nb=1, like=None):
    return bjoin(t, kind, nb, arrays if like is None else like)


def _bsplit_vjp(h, ans, kind="hstack", nb=1):
    return bjoin(h, kind, nb, ans)


def _bsplit_jvp(t, ans, arrays, kind="hstack", nb=1):
    return bsplit(t, arrays, kind, nb)


bjoin.def_vjp(_bjoin_vjp)
bjoin.def_jvp(_bjoin_jvp)
_def_rules(bsplit, "g", _bsplit_vjp, _bsplit_jvp)
bjoin.samples = lambda rng: [
    (([rng.normal(size=(2,)), rng.normal(size=(2, 3))], "hstack"), {}),
    (([rng.normal(size=(2, 3)), rng.normal(size=(2, 2, 3))], "vstack"), {}),
]
bsplit.samples = lambda rng: []


def _bkron_shape(a, b, ab, bb, which):
    """Static shapes of the batched ``kron(a, b)`` computed as
    ``reshape(reshape(a, A) * reshape(b, B), OUT)``: ``which`` 0 -> ``A``, 1 ->
    ``B``, 2 -> ``OUT`` (``ab`` / ``bb``: which operand has a leading batch axis)."""
    sa = tuple(np.shape(a))
    sb = tuple(np.shape(b))
    size = sa[0] if ab else sb[0]
    sa = sa[1:] if ab else sa
    sb = sb[1:] if bb else sb
    nd = max(len(sa), len(sb))
    pa = (1,) * (nd - len(sa)) + sa
    pb = (1,) * (nd - len(sb)) + sb
    if which == 0:
        return (size if ab else 1,) + tuple(v for x in pa for v in (x, 1))
    if which == 1:
        return (size if bb else 1,) + tuple(v for x in pb for v in (1, x))
    return (size,) + tuple(x * y for x, y in zip(pa, pb))


bkron_shape = _reg("ad.bkron_shape", _bkron_shape, differentiable=False)


# Folding two batch axes into one (the rules of nested.py): ad.bmatmul /
# bmatmul_left / bmatmul_right / bunbroadcast / bbroadcast_like act per
# example of one vmap (flags say which operands carry its leading axis). Batched
# again by an outer vmap (vmap(jacfwd(f)), vmap(jacrev(f)), vmap(vmap(grad(f)))),
# the outer axis and the inner one are folded into one leading axis of size
# outer * inner (operands carrying only one of them broadcast along the other),
# the helper runs once on the folded operands, and its result is unfolded: no
# per-example Python loop.
def _fold_axes(x, lead=0):
    """``x`` with axes ``lead`` and ``lead + 1`` merged into one (a reshape)."""
    x = np.asarray(x)
    s = x.shape
    return x.reshape(s[:lead] + (s[lead] * s[lead + 1],) + s[lead + 2 :])


def _unfold_axes(x, n, lead=0):
    """``x`` with axis ``lead`` split into ``(n, size // n)`` (a reshape)."""
    x = np.asarray(x)
    s = x.shape
    return x.reshape(s[:lead] + (int(n), s[lead] // int(n)) + s[lead + 1 :])


fold_axes = _reg("ad.fold_axes", _fold_axes).facts(pure=True)
unfold_axes = _reg("ad.unfold_axes", _unfold_axes).facts(pure=True)


def _fold_axes_vjp(g, ans, x, lead=0):
    return unfold_axes(g, shape_(x)[lead], lead)


def _unfold_axes_vjp(g, ans, lead=0):
    return fold_axes(g, lead)


def _fold_axes_jvp(t, ans, lead=0):
    return fold_axes(t, lead)


def _unfold_axes_jvp(t, ans, n, lead=0):
    return unfold_axes(t, n, lead)


_def_rules(fold_axes, "x", _fold_axes_vjp, _fold_axes_jvp)
_def_rules(unfold_axes, "x", _unfold_axes_vjp, _unfold_axes_jvp)
fold_axes.samples = lambda rng: [
    ((rng.normal(size=(2, 3, 4)),), {}),
    ((rng.normal(size=(2, 3, 4)), 1), {}),
]
unfold_axes.samples = lambda rng: [
    ((rng.normal(size=(6, 4)), 2), {}),
    ((rng.normal(size=(4, 6)), 3, 1), {}),
]


def _axis_len(x, axis):
    """``x.shape[axis]`` (a static int: the size of an inner vmap's axis)."""
    return int(np.shape(x)[axis])


axis_len = _reg("ad.axis_len", _axis_len, differentiable=False).facts(pure=True, from_shapes=True)


def _list_depth(x):
    """How many list/tuple levels wrap the arrays of ``x``."""
    d = 0
    while isinstance(x, (list, tuple)) and len(x):
        x = x[0]
        d += 1
    return d


# (the nesting of the operand's lists, never its values: jit decides it from a
# list display's abstract value, and the moveaxis after it is then known)
list_depth = _reg("ad.list_depth", _list_depth, differentiable=False).facts(
    pure=True, from_shapes=True
)
list_depth.samples = lambda rng: [(([[rng.normal(size=2)], [rng.normal(size=2)]],), {})]


def _barray_adjoint(g, like):
    """Batched ``ad.array_adjoint``: the cotangent ``g`` of ``jnp.array(like)``
    batched along axis 0, ``like`` the same for every example. Each leaf is the
    rows' adjoints stacked (``g[:, i]`` of the batch at once): what the
    per-example loop computed (jacfwd(jacrev(f)) of an ``f`` returning
    ``jnp.array([...])``, a Python loop of three calls per example before)."""
    if isinstance(like, (list, tuple)):
        g = np.asarray(g)
        out = [_barray_adjoint(g[:, i], v) for i, v in enumerate(like)]
        return out if isinstance(like, list) else tuple(out)
    g = np.asarray(g)
    return np.reshape(g, g.shape[:1] + np.shape(like))


barray_adjoint = _reg("ad.barray_adjoint", _barray_adjoint)
barray_adjoint.samples = lambda rng: [
    ((rng.normal(size=(4, 2, 3)), [rng.normal(size=3), rng.normal(size=3)]), {}),
    ((rng.normal(size=(4, 2)), (1.5, np.float32(2.0))), {}),
]


def _barray_adjoint_vjp_g(h, ans, g, like):
    # h: the cotangents of the items (holes filled), stacked behind the list
    # axes as jnp.array stacks them, the batch axis moved back to the front
    return moveaxis(array(cotangent_like(h, ans)), list_depth(like), 0)


def _barray_adjoint_jvp_g(t, ans, like):
    return barray_adjoint(t, like)


barray_adjoint.def_vjp(g=_barray_adjoint_vjp_g)
barray_adjoint.def_jvp(g=_barray_adjoint_jvp_g)
