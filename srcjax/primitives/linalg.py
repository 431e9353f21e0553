"""Linear-algebra primitives: dot, matmul (``@``), einsum, ..., and ``jnp.linalg.*``.

Products (``dot``, ``matmul``, ``inner``, ``tensordot``, ``einsum``, ``kron``)
differentiate through einsum: each is described by an einsum specification and
its adjoints are einsums of the transposed specification (``ad.einsum_vjp_spec``),
un-broadcast to the operand's shape (batch dimensions of ``matmul`` and ``...``
of ``einsum`` broadcast). ``jnp.linalg.*`` primitives (``inv``, ``solve``,
``det``, ``slogdet``, ``cholesky``, ``eigh``, ``eigvalsh``, ``norm``) follow
JAX's gradient conventions; ``norm`` at 0 has a NaN gradient, as in JAX.
"""

from __future__ import annotations

import builtins
import collections
import string

import numpy as np

from srcjax import dtypes as _dt
from srcjax.errors import NonDifferentiableError
from srcjax.primitives.ad import (
    expand_dims,
    expand_reduced,
    eye_mask,
    reshape,
    sum,
    unbroadcast,
    zeros_like,
)
from srcjax.primitives.elementwise import conj, where
from srcjax.primitives.makers import def_bilinear_cotangents
from srcjax.primitives.registry import Primitive, by_public, register
from srcjax.primitives.structural import (
    diagonal,
    diagonal_adjoint,
    matrix_transpose,
    ravel,
    tril,
)

__all__ = [
    "dot",
    "matmul",
    "vdot",
    "inner",
    "outer",
    "tensordot",
    "einsum",
    "trace",
    "kron",
    "cross",
]


def _linalg(public, impl, *aliases, differentiable=True):
    return register(Primitive(public, impl, kind="linalg", differentiable=differentiable), *aliases)


def _internal(public, impl, differentiable=False):
    return register(Primitive(public, impl, kind="internal", differentiable=differentiable))


def _pet(product, preferred_element_type, *operands):
    """``product(*operands)`` with JAX's ``preferred_element_type``: computed in
    that type when it is an integer one for integer operands or an at least as
    wide inexact one (int8 products do not wrap before the cast; f16 matmul
    accumulates in f32), else (float operands, an integer or narrower float
    type) computed in the operands' type and converted. TypeError, as JAX, for
    a type narrower than integer or complex operands' type."""
    if preferred_element_type is None:
        return product(*operands)
    want = _dt.canonicalize_dtype(preferred_element_type)
    rt = _dt.result_type(*operands)
    if rt.kind not in "f" and want.itemsize < rt.itemsize:
        raise TypeError(
            "`preferred_element_type` must not be narrower than the original type, got"
            f" preferred_element_type of {want} for result type of {rt}."
        )
    if (want.kind in "iu" and rt.kind in "biu") or (
        want.kind in "fc" and (rt.kind in "biu" or want.itemsize >= rt.itemsize)
    ):
        return product(*(np.asarray(o, dtype=want) for o in operands))
    return np.asarray(product(*operands)).astype(want)


def _rand(rng, *shape):
    return rng.normal(size=shape)


# ---------------------------------------------------------------------------
# einsum and its transposed specifications


def _split_spec(subscripts, nops):
    s = subscripts.replace(" ", "")
    if "->" in s:
        ins, out = s.split("->")
        terms = ins.split(",")
    else:
        terms = s.split(",")
        letters = [c for t in terms for c in t.replace("...", "")]
        single = sorted(c for c in set(letters) if letters.count(c) == 1)
        out = ("..." if any("..." in t for t in terms) else "") + "".join(single)
    if len(terms) != nops:
        raise ValueError(f"einsum: {len(terms)} subscripts for {nops} operands")
    return terms, out


def _label_sizes(term, shape):
    sizes = {}
    if "..." in term:
        head, tail = term.split("...")
        for c, n in zip(head, shape[: len(head)]):
            sizes[c] = n
        for c, n in zip(tail, shape[len(shape) - len(tail) :] if tail else ()):
            sizes[c] = n
    else:
        for c, n in zip(term, shape):
            sizes[c] = n
    return sizes


def _einsum_vjp_parts(subscripts, argnum, shapes, dtype):
    terms, out = _split_spec(subscripts, len(shapes))
    k_term = terms[argnum]
    others = terms[:argnum] + terms[argnum + 1 :]
    used = set(c for t in terms + [out] for c in t if c.isalpha())
    fresh = iter(c for c in string.ascii_letters if c not in used)
    avail = set(c for t in [out] + others for c in t)
    sizes = _label_sizes(k_term, shapes[argnum])
    extra_terms, consts, seen = [], [], set()
    k_out = ""
    i = 0
    while i < len(k_term):
        if k_term.startswith("...", i):
            k_out += "..."
            i += 3
            continue
        c = k_term[i]
        i += 1
        if c in seen:
            f = next(fresh)
            extra_terms.append(c + f)
            consts.append(np.eye(sizes[c], dtype=dtype))
            k_out += f
            continue
        seen.add(c)
        if c not in avail:
            extra_terms.append(c)
            consts.append(np.ones(sizes[c], dtype=dtype))
        k_out += c
    ins = [out] + others + extra_terms
    if "..." not in k_out and any("..." in t for t in ins):
        k_out = "..." + k_out
    return ",".join(ins) + "->" + k_out, tuple(consts)


def _einsum_vjp_spec(subscripts, argnum, *operands):
    """Static: the einsum spec giving the cotangent of operand ``argnum`` from
    ``(g, *other operands, *ad.einsum_vjp_consts(...))``."""
    shapes = [np.shape(o) for o in operands]
    return _einsum_vjp_parts(subscripts, argnum, shapes, np.float32)[0]


def _einsum_vjp_consts(subscripts, argnum, *operands):
    """Static: constant operands (identity matrices for repeated labels, ones for
    labels summed only in operand ``argnum``) of the cotangent einsum."""
    shapes = [np.shape(o) for o in operands]
    dtype = np.result_type(operands[argnum])
    return _einsum_vjp_parts(subscripts, argnum, shapes, dtype)[1]


einsum_vjp_spec = _internal("ad.einsum_vjp_spec", _einsum_vjp_spec)
einsum_vjp_consts = _internal("ad.einsum_vjp_consts", _einsum_vjp_consts)


def _einsum(subscripts, *operands, optimize="auto", precision=None, preferred_element_type=None):
    """Einstein summation (jax.numpy.einsum): string subscripts with optional
    ``->`` and ``...``; any number of operands."""

    def product(*ops):
        return np.einsum(subscripts, *ops, optimize=len(ops) > 2)

    return _pet(product, preferred_element_type, *operands)


einsum = _linalg("jnp.einsum", _einsum, np.einsum)


def _einsum_vjp(
    g,
    ans,
    subscripts,
    *operands,
    argnum,
    optimize="auto",
    precision=None,
    preferred_element_type=None,
):
    return unbroadcast(
        einsum_with_consts(
            einsum_vjp_spec(subscripts, argnum, *operands),
            einsum_vjp_consts(subscripts, argnum, *operands),
            g,
            *operands[:argnum],
            *operands[argnum + 1 :],
        ),
        operands[argnum],
    )


def _einsum_with_consts(subscripts, consts, *operands):
    """``einsum(subscripts, *operands, *consts)``: the cotangent einsum, with the
    constant operands (identities, ones) as one tuple, so that the generated code
    names every operand and can be transformed again."""
    return np.einsum(subscripts, *operands, *consts, optimize=len(operands) + len(consts) > 2)


einsum_with_consts = _linalg("ad.einsum_with_consts", _einsum_with_consts)


def _einsum_with_consts_jvp(t, ans, subscripts, consts, *operands, argnum):
    return einsum_with_consts(subscripts, consts, *operands[:argnum], t, *operands[argnum + 1 :])


def _einsum_with_consts_vjp(h, ans, subscripts, consts, *operands, argnum):
    # the constants are operands of the adjoint einsum too (reverse over reverse)
    return unbroadcast(
        einsum_with_consts(
            einsum_vjp_spec(subscripts, argnum, *operands, *consts),
            einsum_vjp_consts(subscripts, argnum, *operands, *consts),
            h,
            *operands[:argnum],
            *operands[argnum + 1 :],
            *consts,
        ),
        operands[argnum],
    )


einsum_with_consts.def_jvp(operands=_einsum_with_consts_jvp)
einsum_with_consts.def_vjp(operands=_einsum_with_consts_vjp)
einsum_with_consts.samples = lambda rng: [
    (("ij,jk,k->i", (np.ones(4),), _rand(rng, 2, 3), _rand(rng, 3, 4)), {}),
]


def _einsum_jvp(
    t,
    ans,
    subscripts,
    *operands,
    argnum,
    optimize="auto",
    precision=None,
    preferred_element_type=None,
):
    return einsum(
        subscripts,
        *operands[:argnum],
        t,
        *operands[argnum + 1 :],
        preferred_element_type=preferred_element_type,
    )


einsum.def_vjp(operands=_einsum_vjp)
einsum.def_jvp(operands=_einsum_jvp)
einsum.samples = lambda rng: [
    (("ij,jk->ik", _rand(rng, 2, 3), _rand(rng, 3, 4)), {}),
    (("bij,bjk->bik", _rand(rng, 2, 2, 3), _rand(rng, 2, 3, 4)), {}),
    (("ii->", _rand(rng, 3, 3)), {}),
    (("ii->i", _rand(rng, 3, 3)), {}),
    (("i,j->ij", _rand(rng, 3), _rand(rng, 2)), {}),
    (("ij->", _rand(rng, 2, 3)), {}),
    (("ij,j", _rand(rng, 2, 3), _rand(rng, 3)), {}),
    (("...ij,...jk->...ik", _rand(rng, 2, 2, 3), _rand(rng, 3, 4)), {}),
    (("ij,jk,kl->il", _rand(rng, 2, 3), _rand(rng, 3, 2), _rand(rng, 2, 2)), {}),
    (("iij,k->jk", _rand(rng, 2, 2, 3), _rand(rng, 2)), {}),
]


# ---------------------------------------------------------------------------
# bilinear products described by a two-operand einsum spec


def _bilinear_spec(kind, a, b, axes=None):
    """Static: the einsum spec ``"A,B->O"`` equal to ``kind(a, b)`` (``dot``,
    ``matmul``, ``inner``, ``tensordot``)."""
    na, nb = np.ndim(a), np.ndim(b)
    letters = iter(string.ascii_lowercase)
    if kind == "matmul":
        ta = "...ij" if na >= 2 else "...j"
        tb = "...jk" if nb >= 2 else "...j"
        to = "..." + ("i" if na >= 2 else "") + ("k" if nb >= 2 else "")
        return f"{ta},{tb}->{to}"
    if na == 0 or nb == 0:
        ta = "".join(next(letters) for _ in range(na))
        tb = "".join(next(letters) for _ in range(nb))
        return f"{ta},{tb}->{ta}{tb}"
    if kind == "dot":
        fa = "".join(next(letters) for _ in range(na - 1))
        k = next(letters)
        if nb == 1:
            return f"{fa}{k},{k}->{fa}"
        fb = "".join(next(letters) for _ in range(nb - 2))
        m = next(letters)
        return f"{fa}{k},{fb}{k}{m}->{fa}{fb}{m}"
    if kind == "inner":
        fa = "".join(next(letters) for _ in range(na - 1))
        fb = "".join(next(letters) for _ in range(nb - 1))
        k = next(letters)
        return f"{fa}{k},{fb}{k}->{fa}{fb}"
    if kind == "tensordot":
        if isinstance(axes, (int, np.integer)):
            ax_a = list(range(na - int(axes), na))
            ax_b = list(range(int(axes)))
        else:
            ax_a, ax_b = axes
            ax_a = [ax_a] if isinstance(ax_a, (int, np.integer)) else list(ax_a)
            ax_b = [ax_b] if isinstance(ax_b, (int, np.integer)) else list(ax_b)
        ax_a = [x % na for x in ax_a]
        ax_b = [x % nb for x in ax_b]
        la = [next(letters) for _ in range(na)]
        lb = [None] * nb
        for i, j in zip(ax_a, ax_b):
            lb[j] = la[i]
        lb = [c if c is not None else next(letters) for c in lb]
        out = [c for i, c in enumerate(la) if i not in ax_a]
        out += [c for j, c in enumerate(lb) if j not in ax_b]
        return f"{''.join(la)},{''.join(lb)}->{''.join(out)}"
    raise ValueError(kind)


bilinear_spec = _internal("ad.bilinear_spec", _bilinear_spec)


def _transpose_spec(spec, argnum):
    """Static: ``"A,B->O"`` -> ``"O,B->A"`` (argnum 0) or ``"A,O->B"`` (argnum 1);
    adds a leading ``...`` to the result when the inputs carry one."""
    ins, out = spec.split("->")
    ta, tb = ins.split(",")
    if argnum == 0:
        res, new = ta, f"{out},{tb}"
    else:
        res, new = tb, f"{ta},{out}"
    if "..." in new and "..." not in res:
        res = "..." + res
    return f"{new}->{res}"


transpose_spec = _internal("ad.transpose_spec", _transpose_spec)


def _dot(a, b, precision=None, preferred_element_type=None):
    """Dot product with NumPy semantics (jax.numpy.dot): vector·vector, matrix·
    vector, matrix·matrix, and sum over the last axis of ``a`` and the second to
    last of ``b`` for N-d."""
    try:
        return _pet(np.dot, preferred_element_type, a, b)
    except ValueError:
        raise _contraction_error(a, b) from None


def _matmul(a, b, precision=None, preferred_element_type=None):
    """Matrix product, operator ``@`` (jax.numpy.matmul); leading dimensions are
    batch dimensions and broadcast."""
    try:
        return _pet(np.matmul, preferred_element_type, a, b)
    except ValueError:
        raise _contraction_error(a, b) from None


def _contraction_error(a, b):
    """JAX's TypeError for contracting dimensions that differ (a
    :class:`srcjax.errors.ShapeError`, also a ValueError as NumPy's)."""
    from ..errors import ShapeError

    sa, sb = np.shape(a), np.shape(b)
    ka = sa[-1:]
    kb = sb[-2:-1] if len(sb) >= 2 else sb[-1:]
    if ka != kb:
        return ShapeError(
            "dot_general requires contracting dimensions to have the same shape, "
            f"got {ka} and {kb}."
        )
    return ShapeError(f"incompatible shapes for a matrix product: {sa} and {sb}")


def _inner(a, b, precision=None, preferred_element_type=None):
    """Sum product over the last axes of ``a`` and ``b`` (jax.numpy.inner)."""
    return _pet(np.inner, preferred_element_type, a, b)


dot = _linalg("jnp.dot", _dot, np.dot)


def _dot_vjp_a(g, ans, a, b, precision=None, preferred_element_type=None):
    return dot_left(g, a, b)


def _dot_vjp_b(g, ans, a, b, precision=None, preferred_element_type=None):
    return dot_right(g, a, b)


def _dot_jvp_a(t, ans, a, b, precision=None, preferred_element_type=None):
    return dot(t, b, preferred_element_type=preferred_element_type)


def _dot_jvp_b(t, ans, a, b, precision=None, preferred_element_type=None):
    return dot(a, t, preferred_element_type=preferred_element_type)


dot.def_vjp(_dot_vjp_a, _dot_vjp_b)
dot.def_jvp(_dot_jvp_a, _dot_jvp_b)

matmul = register(Primitive("jnp.matmul", _matmul, op="@", kind="linalg"), np.matmul)


def _matmul_vjp_a(g, ans, a, b, precision=None, preferred_element_type=None):
    return matmul_left(g, a, b)


def _matmul_vjp_b(g, ans, a, b, precision=None, preferred_element_type=None):
    return matmul_right(g, a, b)


def _matmul_jvp_a(t, ans, a, b, precision=None, preferred_element_type=None):
    return matmul(t, b, preferred_element_type=preferred_element_type)


def _matmul_jvp_b(t, ans, a, b, precision=None, preferred_element_type=None):
    return matmul(a, t, preferred_element_type=preferred_element_type)


matmul.def_vjp(_matmul_vjp_a, _matmul_vjp_b)
matmul.def_jvp(_matmul_jvp_a, _matmul_jvp_b)

inner = _linalg("jnp.inner", _inner, np.inner)


def _inner_vjp_a(g, ans, a, b, precision=None, preferred_element_type=None):
    return einsum(transpose_spec(bilinear_spec("inner", a, b), 0), g, b)


def _inner_vjp_b(g, ans, a, b, precision=None, preferred_element_type=None):
    return einsum(transpose_spec(bilinear_spec("inner", a, b), 1), a, g)


def _inner_jvp_a(t, ans, a, b, precision=None, preferred_element_type=None):
    return inner(t, b, preferred_element_type=preferred_element_type)


def _inner_jvp_b(t, ans, a, b, precision=None, preferred_element_type=None):
    return inner(a, t, preferred_element_type=preferred_element_type)


inner.def_vjp(_inner_vjp_a, _inner_vjp_b)
inner.def_jvp(_inner_jvp_a, _inner_jvp_b)


def _tensordot(a, b, axes=2, precision=None, preferred_element_type=None):
    """Tensor contraction over ``axes`` (int: last ``axes`` of ``a`` with the
    first of ``b``; or a pair of axis sequences) (jax.numpy.tensordot)."""
    return _pet(lambda p, q: np.tensordot(p, q, axes), preferred_element_type, a, b)


tensordot = _linalg("jnp.tensordot", _tensordot, np.tensordot)


def _tensordot_vjp_a(g, ans, a, b, axes=2, precision=None, preferred_element_type=None):
    return einsum(transpose_spec(bilinear_spec("tensordot", a, b, axes), 0), g, b)


def _tensordot_vjp_b(g, ans, a, b, axes=2, precision=None, preferred_element_type=None):
    return einsum(transpose_spec(bilinear_spec("tensordot", a, b, axes), 1), a, g)


def _tensordot_jvp_a(t, ans, a, b, axes=2, precision=None, preferred_element_type=None):
    return tensordot(t, b, axes, preferred_element_type=preferred_element_type)


def _tensordot_jvp_b(t, ans, a, b, axes=2, precision=None, preferred_element_type=None):
    return tensordot(a, t, axes, preferred_element_type=preferred_element_type)


tensordot.def_vjp(_tensordot_vjp_a, _tensordot_vjp_b)
tensordot.def_jvp(_tensordot_jvp_a, _tensordot_jvp_b)


def _pair_samples(pairs):
    def samples(rng):
        return [((_rand(rng, *sa), _rand(rng, *sb)), {}) for sa, sb in pairs]

    return samples


dot.samples = _pair_samples(
    [
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((3,), (3, 4)),
        ((2, 3), (3, 4)),
        ((2, 2, 3), (4, 3, 2)),
        ((), (2, 3)),
        ((2, 3), ()),
    ]
)
matmul.samples = _pair_samples(
    [
        ((3,), (3,)),
        ((2, 3), (3,)),
        ((3,), (3, 4)),
        ((2, 3), (3, 4)),
        ((2, 2, 3), (3, 4)),
        ((2, 1, 2, 3), (4, 3, 2)),
        ((3,), (2, 3, 4)),
    ]
)
inner.samples = _pair_samples([((3,), (3,)), ((2, 3), (4, 3)), ((), (3,))])


def _tensordot_samples(rng):
    return [
        ((_rand(rng, 2, 3, 4), _rand(rng, 3, 4, 5)), {}),
        ((_rand(rng, 2, 3), _rand(rng, 3, 4)), {"axes": 1}),
        ((_rand(rng, 2, 3, 4), _rand(rng, 4, 2)), {"axes": ([0, 2], [1, 0])}),
        ((_rand(rng, 2), _rand(rng, 3)), {"axes": 0}),
    ]


tensordot.samples = _tensordot_samples


def _outer(a, b, out=None):
    """Outer product of the flattened ``a`` and ``b`` (jax.numpy.outer)."""
    return np.outer(a, b)


outer = _linalg("jnp.outer", _outer, np.outer)


def _outer_vjp_a(g, ans, a, b, out=None):
    return reshape(einsum("ij,j->i", g, ravel(b)), np.shape(a))


def _outer_vjp_b(g, ans, a, b, out=None):
    return reshape(einsum("ij,i->j", g, ravel(a)), np.shape(b))


outer.def_vjp(_outer_vjp_a, _outer_vjp_b)


def _outer_jvp_a(t, ans, a, b, out=None):
    return outer(t, b)


def _outer_jvp_b(t, ans, a, b, out=None):
    return outer(a, t)


outer.def_jvp(_outer_jvp_a, _outer_jvp_b)
outer.samples = _pair_samples([((3,), (2,)), ((2, 2), (3,))])


def _vdot(a, b, precision=None, preferred_element_type=None):
    """Dot product of the flattened arrays, conjugating ``a`` (jax.numpy.vdot)."""
    return _pet(np.vdot, preferred_element_type, a, b)


vdot = _linalg("jnp.vdot", _vdot, np.vdot)


# vdot(a, b) = dot(conj(a), b): the transpose in b multiplies by conj(a); in a it
# goes through conj's transpose, conj (real operands: both plain products)


def _vdot_vjp_a(g, ans, a, b, precision=None, preferred_element_type=None):
    return reshape(conj(g * ravel(b)), np.shape(a))


def _vdot_vjp_b(g, ans, a, b, precision=None, preferred_element_type=None):
    return reshape(g * conj(ravel(a)), np.shape(b))


vdot.def_vjp(_vdot_vjp_a, _vdot_vjp_b)


def _vdot_jvp_a(t, ans, a, b, precision=None, preferred_element_type=None):
    return vdot(t, b, preferred_element_type=preferred_element_type)


def _vdot_jvp_b(t, ans, a, b, precision=None, preferred_element_type=None):
    return vdot(a, t, preferred_element_type=preferred_element_type)


vdot.def_jvp(_vdot_jvp_a, _vdot_jvp_b)
vdot.samples = _pair_samples([((3,), (3,)), ((2, 3), (3, 2))])


# ---------------------------------------------------------------------------
# kron / trace


def _kron_layout(a, b):
    """Static: ``(spec, interleaved_shape, a_shape_padded, b_shape_padded)`` with
    ``kron(a, b) == reshape(einsum(spec, reshape(a, pa), reshape(b, pb)), out)``."""
    sa, sb = np.shape(a), np.shape(b)
    nd = max(len(sa), len(sb))
    pa = (1,) * (nd - len(sa)) + tuple(sa)
    pb = (1,) * (nd - len(sb)) + tuple(sb)
    la = string.ascii_lowercase[:nd]
    lb = string.ascii_lowercase[nd : 2 * nd]
    lo = "".join(x + y for x, y in zip(la, lb))
    inter = tuple(v for pair in zip(pa, pb) for v in pair)
    return f"{la},{lb}->{lo}", inter, pa, pb


kron_layout = _internal("ad.kron_layout", _kron_layout)


def _kron(a, b):
    """Kronecker product (jax.numpy.kron)."""
    return np.kron(a, b)


kron = _linalg("jnp.kron", _kron, np.kron)


def _kron_vjp_a(g, ans, a, b):
    lay = kron_layout(a, b)
    return reshape(
        einsum(transpose_spec(lay[0], 0), reshape(g, lay[1]), reshape(b, lay[3])), np.shape(a)
    )


def _kron_vjp_b(g, ans, a, b):
    lay = kron_layout(a, b)
    return reshape(
        einsum(transpose_spec(lay[0], 1), reshape(a, lay[2]), reshape(g, lay[1])), np.shape(b)
    )


kron.def_vjp(_kron_vjp_a, _kron_vjp_b)


def _kron_jvp_a(t, ans, a, b):
    return kron(t, b)


def _kron_jvp_b(t, ans, a, b):
    return kron(a, t)


kron.def_jvp(_kron_jvp_a, _kron_jvp_b)
kron.samples = _pair_samples([((2, 3), (2, 2)), ((3,), (2,)), ((2,), (2, 3))])


def _trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    """Sum along a diagonal (jax.numpy.trace)."""
    return np.trace(a, offset, axis1, axis2, dtype=dtype)


trace = _linalg("jnp.trace", _trace, np.trace)


def _trace_vjp_a(g, ans, a, offset=0, axis1=0, axis2=1, dtype=None):
    return diagonal_adjoint(expand_dims(g, -1), a, offset, axis1, axis2)


trace.def_vjp(_trace_vjp_a)


def _trace_jvp_a(t, ans, a, offset=0, axis1=0, axis2=1, dtype=None):
    return trace(t, offset, axis1, axis2)


trace.def_jvp(_trace_jvp_a)
trace.samples = lambda rng: [
    ((_rand(rng, 3, 3),), {}),
    ((_rand(rng, 3, 4), 1), {}),
    ((_rand(rng, 2, 3, 3),), {"axis1": -2, "axis2": -1}),
]


# ---------------------------------------------------------------------------
# jnp.linalg: inv / solve / det / slogdet


def _la(name, impl, *aliases, differentiable=True):
    return _linalg("jnp.linalg." + name, impl, *aliases, differentiable=differentiable)


def _spd(rng, n, batch=()):
    m = rng.normal(size=batch + (n, n))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def _wellcond(rng, n, batch=()):
    return rng.normal(size=batch + (n, n)) + 3 * np.eye(n)


def _inv(a):
    """Matrix inverse over the last two axes (jax.numpy.linalg.inv)."""
    return np.linalg.inv(a)


inv = _la("inv", _inv, np.linalg.inv)


def _inv_vjp_a(g, ans, a):
    return -(matrix_transpose(ans) @ g @ matrix_transpose(ans))


inv.def_vjp(_inv_vjp_a)


def _inv_jvp_a(t, ans, a):
    return -(ans @ t @ ans)


inv.def_jvp(_inv_jvp_a)
inv.samples = lambda rng: [((_wellcond(rng, 3),), {}), ((_wellcond(rng, 2, (2,)),), {})]


def _rhs_matrix(y, b):
    """``y[..., None]`` when ``b`` is a vector right-hand side, else ``y``."""
    return np.expand_dims(y, -1) if np.ndim(b) == 1 else np.asarray(y)


def _rhs_unmatrix(y, b):
    """Inverse of ``ad.rhs_matrix``."""
    return np.asarray(y)[..., 0] if np.ndim(b) == 1 else np.asarray(y)


rhs_matrix = _internal("ad.rhs_matrix", _rhs_matrix, differentiable=True)
rhs_unmatrix = _internal("ad.rhs_unmatrix", _rhs_unmatrix, differentiable=True)


def _rhs_matrix_vjp_y(h, ans, y, b):
    return rhs_unmatrix(h, b)


rhs_matrix.def_vjp(_rhs_matrix_vjp_y)


def _rhs_matrix_jvp_y(t, ans, y, b):
    return rhs_matrix(t, b)


rhs_matrix.def_jvp(_rhs_matrix_jvp_y)


def _rhs_unmatrix_vjp_y(h, ans, y, b):
    return rhs_matrix(h, b)


rhs_unmatrix.def_vjp(_rhs_unmatrix_vjp_y)


def _rhs_unmatrix_jvp_y(t, ans, y, b):
    return rhs_unmatrix(t, b)


rhs_unmatrix.def_jvp(_rhs_unmatrix_jvp_y)
rhs_matrix.samples = lambda rng: [((_rand(rng, 2, 3), _rand(rng, 3)), {})]
rhs_unmatrix.samples = lambda rng: [((_rand(rng, 2, 3, 1), _rand(rng, 3)), {})]


def _solve(a, b):
    """Solve ``a @ x = b`` (jax.numpy.linalg.solve); ``b`` is a vector when 1-D,
    else a (batch of) matrices; batch dimensions broadcast."""
    return np.linalg.solve(a, b)


solve = _la("solve", _solve, np.linalg.solve)


def _solve_vjp_a(g, ans, a, b):
    return unbroadcast(
        -(solve(matrix_transpose(a), rhs_matrix(g, b)) @ matrix_transpose(rhs_matrix(ans, b))), a
    )


def _solve_vjp_b(g, ans, a, b):
    return unbroadcast(rhs_unmatrix(solve(matrix_transpose(a), rhs_matrix(g, b)), b), b)


def _solve_jvp_a(t, ans, a, b):
    return rhs_unmatrix(-solve(a, t @ rhs_matrix(ans, b)), b)


def _solve_jvp_b(t, ans, a, b):
    return solve(a, t)


solve.def_vjp(_solve_vjp_a, _solve_vjp_b)
solve.def_jvp(_solve_jvp_a, _solve_jvp_b)
solve.samples = lambda rng: [
    ((_wellcond(rng, 3), _rand(rng, 3)), {}),
    ((_wellcond(rng, 3), _rand(rng, 3, 2)), {}),
    ((_wellcond(rng, 3, (2,)), _rand(rng, 2, 3, 2)), {}),
    ((_wellcond(rng, 3), _rand(rng, 2, 3, 2)), {}),
]


def _det(a):
    """Determinant over the last two axes (jax.numpy.linalg.det)."""
    return np.linalg.det(a)


det = _la("det", _det, np.linalg.det)


def _svd_adj(a):
    """``(u, s, vh, left, right)``: ``a = u diag(s) vh`` and ``adj(a) = left @
    adj(diag(s) + e) @ right`` around it (``a + u e vh``), from ``adj(xy) =
    adj(y) adj(x)`` and ``adj(q) = det(q) q^H`` for a unitary ``q``."""
    u, s, vh = np.linalg.svd(np.asarray(a))
    scale = np.linalg.det(u) * np.linalg.det(vh)
    left = np.conj(np.swapaxes(vh, -1, -2)) * scale[..., None, None]
    return u, s, vh, left, np.conj(np.swapaxes(u, -1, -2))


def _products_without(s, k):
    """Products of ``s`` over its last axis leaving out ``k`` (1 or 2) distinct
    positions, by multiplication only (exact zeros stay exact): for ``k == 1``
    ``c[..., i]``, for ``k == 2`` ``p[..., i, j]`` (0 on the diagonal)."""
    n = np.shape(s)[-1]
    eye = np.eye(n, dtype=bool)
    if k == 1:
        return np.prod(np.where(eye, 1, s[..., None, :]), axis=-1)
    drop = eye[:, None, :] | eye[None, :, :]  # l == i or l == j
    p = np.prod(np.where(drop, 1, s[..., None, None, :]), axis=-1)
    return np.where(eye, 0, p)


def _adjugate(a):
    """The adjugate (transposed cofactor matrix) over the last two axes:
    ``det(a) inv(a)`` where ``a`` is invertible, and a polynomial, so continuous
    everywhere. From the SVD with the singular values' products leaving one
    out (no division): rank-deficient matrices get their exact cofactors too."""
    _, s, _, left, right = _svd_adj(a)
    return (left * _products_without(s, 1)[..., None, :]) @ right


def _adjugate_d(a, t):
    """The derivative of ``adjugate`` at ``a`` in direction ``t`` (linear in
    ``t``), valid at singular ``a``: with ``e = u^H t vh^H``, the adjugate of
    ``diag(s) + e`` changes by ``diag(p @ diag(e)) - p * e``, ``p[i, j]`` the
    product of ``s`` without ``s_i`` and ``s_j``."""
    u, s, vh, left, right = _svd_adj(a)
    e = right @ np.asarray(t) @ np.conj(np.swapaxes(vh, -1, -2))
    p = _products_without(s, 2)
    mid = -p * e
    i = np.arange(np.shape(s)[-1])
    mid[..., i, i] = np.einsum("...ij,...j->...i", p, np.diagonal(e, axis1=-2, axis2=-1))
    return left @ mid @ right


adjugate = _internal("ad.adjugate", _adjugate, differentiable=True)
adjugate_d = _internal("ad.adjugate_d", _adjugate_d, differentiable=True)


def _adjugate_jvp(t, ans, a):
    return adjugate_d(a, t)


def _adjugate_vjp(g, ans, a):
    # d adj(a)[t] is d^2 det(a)[t, .] in matrix form, symmetric in its two
    # directions: <g, d adj[t]> = <d adj[g^T]^T, t>
    return matrix_transpose(adjugate_d(a, matrix_transpose(g)))


def _adjugate_d_jvp_t(tt, ans, a, t):
    return adjugate_d(a, tt)


def _adjugate_d_vjp_t(g, ans, a, t):
    return matrix_transpose(adjugate_d(a, matrix_transpose(g)))


adjugate.def_jvp(_adjugate_jvp)
adjugate.def_vjp(_adjugate_vjp)
adjugate_d.def_jvp(t=_adjugate_d_jvp_t)
adjugate_d.def_vjp(t=_adjugate_d_vjp_t)
adjugate.samples = lambda rng: [((_rand(rng, 3, 3),), {}), ((_rand(rng, 2, 3, 3),), {})]
adjugate_d.samples = lambda rng: [((_rand(rng, 3, 3), _rand(rng, 3, 3)), {})]


def _det_vjp_a(g, ans, a):
    # the adjugate, not det(a) inv(a): finite (JAX's cofactors) at singular a
    return expand_dims(g, (-2, -1)) * matrix_transpose(adjugate(a))


det.def_vjp(_det_vjp_a)


def _det_jvp_a(t, ans, a):
    return sum(matrix_transpose(adjugate(a)) * t, axis=(-2, -1))


det.def_jvp(_det_jvp_a)
det.samples = lambda rng: [((_wellcond(rng, 3),), {}), ((_wellcond(rng, 2, (2,)),), {})]


SlogdetResult = collections.namedtuple("SlogdetResult", ["sign", "logabsdet"])
#: jax.numpy.linalg's result types (``svd(a).S``, ``eigh(a).eigenvalues``, ``qr(a).R``)
SVDResult = collections.namedtuple("SVDResult", ["U", "S", "Vh"])
EighResult = collections.namedtuple("EighResult", ["eigenvalues", "eigenvectors"])
QRResult = collections.namedtuple("QRResult", ["Q", "R"])


def _slogdet(a):
    """``(sign, log|det|)`` over the last two axes (jax.numpy.linalg.slogdet):
    a ``SlogdetResult`` named tuple (``.sign``, ``.logabsdet``), as in JAX."""
    sign, logdet = np.linalg.slogdet(a)
    return SlogdetResult(sign, logdet)


slogdet = _la("slogdet", _slogdet, np.linalg.slogdet)


def _inv_or_inf(a):
    """``inv(a)``, and for a singular ``a`` (an exact zero pivot: det 0) instead
    of raising ``adjugate(a) / 0``: infinities where a cofactor is nonzero, NaN
    where it is zero (JAX's LU solve gives inf/NaN there too). The gradient of
    slogdet, which is infinite at singular matrices."""
    try:
        return np.linalg.inv(a)
    except np.linalg.LinAlgError:
        pass
    a = np.asarray(a)
    d = np.linalg.det(a)[..., None, None]
    sing = d == 0
    eye = np.eye(np.shape(a)[-1], dtype=a.dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(sing, _adjugate(a) / d, np.linalg.inv(np.where(sing, eye, a)))


inv_or_inf = _internal("ad.inv_or_inf", _inv_or_inf, differentiable=True)
inv_or_inf.def_vjp(_inv_vjp_a)
inv_or_inf.def_jvp(_inv_jvp_a)
inv_or_inf.samples = inv.samples


def _slogdet_vjp_a(g, ans, a):
    return expand_dims(g[1], (-2, -1)) * matrix_transpose(inv_or_inf(a))


slogdet.def_vjp(_slogdet_vjp_a)


def _slogdet_jvp_a(t, ans, a):
    inv_t = matrix_transpose(inv_or_inf(a))  # trace(solve(a, t)), not raising at det 0
    return (zeros_like(ans[0]), sum(inv_t * t, axis=(-2, -1)))


slogdet.def_jvp(_slogdet_jvp_a)
slogdet.samples = det.samples


# ---------------------------------------------------------------------------
# cholesky / eigh


def _maybe_mT(x, flag):
    """``matrix_transpose(x)`` when ``flag`` else ``x`` (static flag)."""
    return np.swapaxes(x, -1, -2) if flag else np.asarray(x)


maybe_mT = _internal("ad.maybe_mT", _maybe_mT, differentiable=True)


def _maybe_mT_vjp_x(g, ans, x, flag):
    return maybe_mT(g, flag)


maybe_mT.def_vjp(_maybe_mT_vjp_x)


def _maybe_mT_jvp_x(t, ans, x, flag):
    return maybe_mT(t, flag)


maybe_mT.def_jvp(_maybe_mT_jvp_x)
maybe_mT.samples = lambda rng: [((_rand(rng, 2, 3), True), {}), ((_rand(rng, 2, 3), False), {})]


def _cholesky(a, *, upper=False, symmetrize_input=True):
    """Cholesky factor of a symmetric (complex: Hermitian) positive-definite
    matrix (jax.numpy.linalg.cholesky): lower ``L`` with ``a = L @ L^H``
    (``upper=True``: ``U = L^H``; ``^H`` the conjugate transpose, ``.T`` for
    real). The input is symmetrized, ``(a + a^H) / 2``, as JAX does
    (``symmetrize_input=False``: only the lower triangle is read, as in
    ``jax.lax.linalg.cholesky``; the derivative is still JAX's, which takes the
    perturbation of ``a`` as a whole matrix, not the finite difference of the
    lower triangle alone). A
    matrix that is not positive definite gives a factor of NaNs (JAX's result;
    NumPy raises), each matrix of a stack on its own."""
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
            out[i] = np.nan
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
    w, v = np.linalg.eigh(a, UPLO="L" if UPLO is None else UPLO)
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


# ---------------------------------------------------------------------------
# norm


def _norm_is_matrix(x, ord, axis):
    nd = np.ndim(x)
    if axis is None:
        return nd == 2 and ord is not None
    return isinstance(axis, (tuple, list)) and len(axis) == 2


def _norm(x, ord=None, axis=None, keepdims=False):
    """Vector or matrix norm (jax.numpy.linalg.norm). Vectors: ``ord`` None/2,
    1, inf, -inf, 0, any p; matrices (2-D, or a 2-tuple ``axis``): None/'fro',
    1, -1, inf, -inf, 2, -2, 'nuc'. ``axis=None`` with ``ord=None`` is the
    2-norm of the flattened array. The gradient at 0 is NaN, as in JAX."""
    x = np.asarray(x)
    if x.dtype.kind in "biu":
        x = x.astype(_dt.to_inexact_dtype(x.dtype))  # JAX: int32 -> float32 also with x64
    return np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)


norm = _la("norm", _norm, np.linalg.norm)


def _vector_p(ord):
    if ord is None or ord == 2 or ord == "fro":
        return 2.0
    if ord in (np.inf, -np.inf, "inf", "-inf"):
        return np.inf
    return float(ord)


def _no_complex_norm_derivative(x):
    if x.dtype.kind == "c":
        raise NonDifferentiableError(
            "srcjax: derivatives of jnp.linalg.norm of complex values are not supported yet",
            hint="write the norm out: jnp.sqrt(jnp.sum(jnp.real(x * jnp.conj(x))))",
        )


def _norm_grad(x, nrm, ord=None, axis=None, keepdims=False):
    """``d norm(x) / d x`` given ``nrm = norm(x, ord, axis, keepdims)``.

    Vector norms: ``sign(x) |x|**(p-1) / nrm**(p-1)`` (2-norm: ``x / nrm``, NaN at
    0 as in JAX; abs'(0) = 1 in the 1/inf norms); inf / -inf: split equally among
    tied extreme entries (a zero vector's inf-norm halves that); matrix
    norms 1 / inf: that of the selected column / row; 2 / -2 / 'nuc': from the
    SVD."""
    x = np.asarray(x)
    _no_complex_norm_derivative(x)
    dt = np.result_type(x, nrm)
    n_e = _expand_reduced(nrm, x, axis, keepdims)
    if _norm_is_matrix(x, ord, axis) and ord not in (None, "fro"):
        ax = (0, 1) if axis is None else tuple(a % x.ndim for a in axis)
        xm = np.moveaxis(x, ax, (-2, -1))
        if ord in (1, -1, np.inf, -np.inf):
            red = -2 if ord in (1, -1) else -1
            sums = np.sum(np.abs(xm), axis=red, keepdims=True)
            target = np.max(sums, axis=-1 if red == -2 else -2, keepdims=True)
            if ord in (-1, -np.inf):
                target = np.min(sums, axis=-1 if red == -2 else -2, keepdims=True)
            hit = (sums == target).astype(dt)
            hit = hit / np.sum(hit, axis=-1 if red == -2 else -2, keepdims=True)
            w = _abs_sign(xm, dt) * hit
        else:
            u, s, vt = np.linalg.svd(xm, full_matrices=False)
            if ord == "nuc":
                w = u @ vt
            else:
                k = 0 if ord == 2 else -1
                w = u[..., :, k : k + 1 if k else 1] @ vt[..., k : k + 1 if k else 1, :]
                if k == -1:
                    w = u[..., :, -1:] @ vt[..., -1:, :]
        return np.moveaxis(w, (-2, -1), ax).astype(dt, copy=False)
    p = _vector_p(ord)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 2.0:
            return (x / n_e).astype(dt, copy=False)
        if np.isinf(p):
            hit = (np.abs(x) == n_e).astype(dt)
            cnt = _expand_reduced(np.sum(hit, axis=axis, keepdims=keepdims), x, axis, keepdims)
            if ord in (np.inf, "inf"):  # JAX's max of |x| ties 0 at a zero vector: half
                cnt = cnt * np.where(n_e == 0, 2, 1)
            return (_abs_sign(x, dt) * hit / cnt).astype(dt, copy=False)
        if p == 0:
            return np.zeros_like(x, dtype=dt)
        if p == 1:
            return _abs_sign(x, dt)
        return (np.sign(x) * np.abs(x) ** (p - 1) / n_e ** (p - 1)).astype(dt, copy=False)


def _abs_sign(x, dt):
    """``d|x| / dx`` with JAX's convention: 1 at zero (and -0.0), -1 at NaN."""
    return np.where(x >= 0, 1, -1).astype(dt)


def _expand_reduced(g, x, axis, keepdims):
    from srcjax.primitives.ad import _expand_reduced as er

    return er(g, x, axis, keepdims)


norm_grad = _internal("ad.norm_grad", _norm_grad, differentiable=True)


def _norm_coef(x, nrm, ord=None, axis=None, keepdims=False):
    """Static-shape helper: ``(p - 1) |x|**(p-2) / nrm**(p-1)`` (elementwise
    second-derivative coefficient of a vector p-norm; 0 for p in {0, 1, inf})."""
    if _norm_is_matrix(x, ord, axis) and ord not in (None, "fro"):
        raise NotImplementedError(f"srcjax: no second derivative of matrix norm ord={ord!r}")
    p = _vector_p(ord)
    x = np.asarray(x)
    _no_complex_norm_derivative(x)
    if np.isinf(p) or p in (0.0, 1.0):
        return np.zeros_like(x)
    n_e = _expand_reduced(nrm, x, axis, keepdims)
    with np.errstate(divide="ignore", invalid="ignore"):
        if p == 2.0:
            return np.broadcast_to(1.0 / n_e, x.shape)
        return (p - 1) * np.abs(x) ** (p - 2) / n_e ** (p - 1)


def _norm_pm1(ord, x, axis):
    """Static: ``p - 1`` for a vector p-norm (0 for p in {0, 1, inf})."""
    p = _vector_p(ord)
    return 0.0 if (np.isinf(p) or p in (0.0, 1.0)) else p - 1.0


norm_coef = _internal("ad.norm_coef", _norm_coef, differentiable=True)
norm_pm1 = _internal("ad.norm_pm1", _norm_pm1)


def _norm_coef3(x, nrm, ord=None, axis=None, keepdims=False):
    """Static: ``(p-1)(p-2) sign(x) |x|**(p-3) / nrm**(p-1)``, the partial derivative
    of ``ad.norm_coef`` in ``x`` (0 for p in {0, 1, 2, inf})."""
    p = _vector_p(ord)
    x = np.asarray(x)
    if np.isinf(p) or p in (0.0, 1.0, 2.0):
        return np.zeros_like(x)
    n_e = _expand_reduced(nrm, x, axis, keepdims)
    with np.errstate(divide="ignore", invalid="ignore"):
        return (p - 1) * (p - 2) * np.sign(x) * np.abs(x) ** (p - 3) / n_e ** (p - 1)


norm_coef3 = _internal("ad.norm_coef3", _norm_coef3)


def _norm_coef_vjp_x(h, ans, x, nrm, ord=None, axis=None, keepdims=False):
    return h * norm_coef3(x, nrm, ord, axis, keepdims)


def _norm_coef_vjp_nrm(h, ans, x, nrm, ord=None, axis=None, keepdims=False):
    return -(sum(h * ans, axis=axis, keepdims=keepdims) * norm_pm1(ord, x, axis)) / nrm


def _norm_coef_jvp_x(t, ans, x, nrm, ord=None, axis=None, keepdims=False):
    return t * norm_coef3(x, nrm, ord, axis, keepdims)


def _norm_coef_jvp_nrm(t, ans, x, nrm, ord=None, axis=None, keepdims=False):
    return -ans * expand_reduced(t * norm_pm1(ord, x, axis) / nrm, x, axis, keepdims)


norm_coef.def_vjp(_norm_coef_vjp_x, _norm_coef_vjp_nrm)
norm_coef.def_jvp(_norm_coef_jvp_x, _norm_coef_jvp_nrm)


def _norm_vjp(g, ans, x, ord=None, axis=None, keepdims=False):
    return expand_reduced(g, x, axis, keepdims) * norm_grad(x, ans, ord, axis, keepdims)


def _norm_jvp(t, ans, x, ord=None, axis=None, keepdims=False):
    return sum(t * norm_grad(x, ans, ord, axis, keepdims), axis=axis, keepdims=keepdims)


norm.def_vjp(_norm_vjp)
norm.def_jvp(_norm_jvp)


def _norm_grad_vjp_x(h, ans, x, nrm, ord=None, axis=None, keepdims=False):
    return h * norm_coef(x, nrm, ord, axis, keepdims)


def _norm_grad_vjp_nrm(h, ans, x, nrm, ord=None, axis=None, keepdims=False):
    return -(sum(h * ans, axis=axis, keepdims=keepdims) * norm_pm1(ord, x, axis)) / nrm


def _norm_grad_jvp_x(t, ans, x, nrm, ord=None, axis=None, keepdims=False):
    return t * norm_coef(x, nrm, ord, axis, keepdims)


def _norm_grad_jvp_nrm(t, ans, x, nrm, ord=None, axis=None, keepdims=False):
    return -ans * expand_reduced(t * norm_pm1(ord, x, axis) / nrm, x, axis, keepdims)


norm_grad.def_vjp(_norm_grad_vjp_x, _norm_grad_vjp_nrm)
norm_grad.def_jvp(_norm_grad_jvp_x, _norm_grad_jvp_nrm)


def _norm_samples(rng):
    return [
        ((_rand(rng, 4),), {}),
        ((_rand(rng, 3, 4),), {}),
        ((_rand(rng, 3, 4),), {"axis": -1}),
        ((_rand(rng, 3, 4),), {"axis": 0, "keepdims": True}),
        ((_rand(rng, 4),), {"ord": 1}),
        ((_rand(rng, 4),), {"ord": np.inf}),
        ((_rand(rng, 4),), {"ord": 3}),
        ((_rand(rng, 3, 4),), {"ord": "fro"}),
        ((_rand(rng, 3, 4),), {"ord": 1}),
        ((_rand(rng, 3, 4),), {"ord": np.inf}),
        ((_rand(rng, 3, 4),), {"ord": 2}),
        ((_rand(rng, 3, 4),), {"ord": "nuc"}),
        ((_rand(rng, 2, 3, 4),), {"ord": 2, "axis": (1, 2)}),
    ]


norm.samples = _norm_samples


def _norm_grad_samples(rng):
    out = []
    for (x,), kw in _norm_samples(rng):
        if _norm_is_matrix(x, kw.get("ord"), kw.get("axis")) and kw.get("ord") not in (None, "fro"):
            continue
        if kw.get("ord") in (1, np.inf):
            continue
        nrm = _norm(x, **kw)
        out.append(((x, nrm), kw))
    return out


norm_grad.samples = _norm_grad_samples
norm_coef.samples = _norm_grad_samples


# ---------------------------------------------------------------------------
# Adjoints of matmul: BLAS products, no einsum. ``matmul_left(g, a, b)`` is the
# cotangent of ``a`` in ``a @ b`` (``g @ b^T`` summed to ``a``'s shape) and
# ``matmul_right(g, a, b)`` that of ``b`` (``a^T @ g``). Each is the exact
# adjoint of ``matmul`` in one argument, so their own rules are matmuls again:
# <h, matmul_left(g, a, b)> = <g, h @ b> and <k, matmul_right(g, a, b)> = <g, a @ k>.


def _sum_to(r, shape):
    if np.shape(r) == shape:
        return r
    return unbroadcast(r, np.zeros(shape, dtype=np.result_type(r)))


def _matmul_left(g, a, b):
    """Cotangent of ``a`` in ``matmul(a, b)`` for output cotangent ``g``."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 == b.ndim:
        return np.matmul(g, b.T)  # (the common case: (m, n) @ (n, k) is a's shape)
    an, bn = np.ndim(a), np.ndim(b)
    if bn == 1:
        r = g * b if an == 1 else np.asarray(g)[..., None] * b
    elif an == 1:
        r = np.matmul(b, np.asarray(g)[..., None])[..., 0]
    else:
        r = np.matmul(g, np.swapaxes(b, -1, -2))
    return _sum_to(r, np.shape(a))


def _matmul_right(g, a, b):
    """Cotangent of ``b`` in ``matmul(a, b)`` for output cotangent ``g``."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 == b.ndim:
        return np.matmul(a.T, g)
    an, bn = np.ndim(a), np.ndim(b)
    if an == 1:
        r = g * a if bn == 1 else a[:, None] * np.asarray(g)[..., None, :]
    elif bn == 1:
        r = np.matmul(np.swapaxes(a, -1, -2), np.asarray(g)[..., None])[..., 0]
    else:
        r = np.matmul(np.swapaxes(a, -1, -2), g)
    return _sum_to(r, np.shape(b))


matmul_left = _internal("ad.matmul_left", _matmul_left, differentiable=True)
matmul_right = _internal("ad.matmul_right", _matmul_right, differentiable=True)
matmul_left.facts(array_result=True)
matmul_right.facts(array_result=True)


def_bilinear_cotangents(matmul, matmul_left, matmul_right)


def _mm_samples(rng):
    shapes = [
        ((2, 3), (3, 4)),
        ((3,), (3, 4)),
        ((2, 3), (3,)),
        ((3,), (3,)),
        ((5, 2, 3), (3, 4)),
        ((2, 3), (5, 3, 4)),
    ]
    out = []
    for sa, sb in shapes:
        a, b = rng.normal(size=sa), rng.normal(size=sb)
        g = rng.normal(size=np.shape(np.matmul(a, b)))
        out.append(((g, a, b), {}))
    return out


matmul_left.samples = _mm_samples
matmul_right.samples = _mm_samples


def _dot_is_matmul(a, b):
    return 1 <= np.ndim(a) <= 2 and 1 <= np.ndim(b) <= 2


def _dot_left(g, a, b):
    """Cotangent of ``a`` in ``dot(a, b)``."""
    if _dot_is_matmul(a, b):
        return _matmul_left(g, a, b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _sum_to(np.multiply(g, b), np.shape(a))
    return einsum(transpose_spec(bilinear_spec("dot", a, b), 0), g, b)


def _dot_right(g, a, b):
    """Cotangent of ``b`` in ``dot(a, b)``."""
    if _dot_is_matmul(a, b):
        return _matmul_right(g, a, b)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _sum_to(np.multiply(g, a), np.shape(b))
    return einsum(transpose_spec(bilinear_spec("dot", a, b), 1), a, g)


dot_left = _internal("ad.dot_left", _dot_left, differentiable=True)
dot_right = _internal("ad.dot_right", _dot_right, differentiable=True)
dot_left.facts(array_result=True)
dot_right.facts(array_result=True)


def_bilinear_cotangents(dot, dot_left, dot_right)


def _dot_samples(rng):
    shapes = [
        ((2, 3), (3, 4)),
        ((3,), (3, 4)),
        ((2, 3), (3,)),
        ((3,), (3,)),
        ((), (3,)),
        ((2, 3, 4), (4, 2)),
    ]
    out = []
    for sa, sb in shapes:
        a, b = rng.normal(size=sa), rng.normal(size=sb)
        g = rng.normal(size=np.shape(np.dot(a, b)))
        out.append(((g, a, b), {}))
    return out


dot_left.samples = _dot_samples
dot_right.samples = _dot_samples


# ---------------------------------------------------------------------------
# cross


def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 3-vectors (jax.numpy.cross) along ``axisa`` of ``a`` and
    ``axisb`` of ``b`` (``axis`` sets all three), the result's vector axis at
    ``axisc``; the other axes broadcast.

    Shape: the broadcast of the non-vector axes, with a length-3 axis at
    ``axisc``. Dtype: JAX's promotion of ``a`` and ``b``. Differentiable in both.
    Raises ``ValueError`` when a vector axis does not have length 3 (the public
    ``jnp.cross``, a composition in :mod:`srcjax.numpy`, handles 2-vectors)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    if np.shape(a)[axisa] != 3 or np.shape(b)[axisb] != 3:
        raise ValueError(
            "srcjax jnp.cross: vectors must have length 3 along the vector axes, got "
            f"{np.shape(a)[axisa]} and {np.shape(b)[axisb]}"
        )
    dt = _dt.result_type(a, b)
    return np.cross(a, b, axisa=axisa, axisb=axisb, axisc=axisc).astype(dt, copy=False)


cross = _linalg("jnp.cross", _cross, np.cross)


def _cross_vjp_a(g, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    # <g, a x b> = <a, b x g> (an explicit axis stands for all three)
    return unbroadcast(cross(b, g, axisb, axisc, axisa, axis), a)


def _cross_vjp_b(g, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    # <g, a x b> = <b, g x a>
    return unbroadcast(cross(g, a, axisc, axisa, axisb, axis), b)


def _cross_jvp_a(t, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return cross(t, b, axisa, axisb, axisc, axis)


def _cross_jvp_b(t, ans, a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    return cross(a, t, axisa, axisb, axisc, axis)


cross.def_vjp(_cross_vjp_a, _cross_vjp_b)
cross.def_jvp(_cross_jvp_a, _cross_jvp_b)
cross.samples = lambda rng: [
    ((_rand(rng, 3), _rand(rng, 3)), {}),
    ((_rand(rng, 2, 3), _rand(rng, 3)), {}),
    ((_rand(rng, 4, 1, 3), _rand(rng, 2, 3)), {}),
    ((_rand(rng, 3, 2), _rand(rng, 2, 3)), {"axisa": 0, "axisc": 0}),
    ((_rand(rng, 3, 2), _rand(rng, 3, 2)), {"axis": 0}),
]


# ---------------------------------------------------------------------------
# qr / svd / pinv / matrix_power


def _qr(a, mode="reduced"):
    """QR decomposition over the last two axes (jax.numpy.linalg.qr): ``a = q @ r``
    with orthonormal columns in ``q`` and upper-triangular ``r``, as a tuple
    ``(q, r)``. ``mode="reduced"`` (default): ``q`` is ``(..., m, k)`` and ``r``
    ``(..., k, n)``, ``k = min(m, n)``; ``"complete"``: ``q`` is ``(..., m, m)``.
    Dtype: that of ``a`` (integers give the default float). Differentiable for
    ``m >= n`` (and ``"complete"`` only when square), as in JAX. ``mode="r"``
    (``r`` alone) is not supported: use ``qr(a)[1]`` (``NotImplementedError``);
    other modes raise ``ValueError``."""
    if mode == "r":
        raise NotImplementedError("srcjax jnp.linalg.qr: mode='r' is not supported; use qr(a)[1]")
    if mode not in ("reduced", "complete"):
        raise ValueError(f"jnp.linalg.qr: unsupported mode {mode!r}")
    a = np.asarray(a)
    if a.dtype.kind in "biu":
        a = a.astype(_dt.default_float())
    q, r = np.linalg.qr(a, mode=mode)
    return QRResult(q, r)


qr = _la("qr", _qr, np.linalg.qr)


def _qr_check(a, mode="reduced"):
    """Static: raise when the derivative of ``qr(a, mode)`` is not defined
    (``m < n``, or ``"complete"`` with ``m != n``); else ``0``."""
    m, n = np.shape(a)[-2:]
    if m < n or (mode == "complete" and m != n):
        raise NotImplementedError(
            f"srcjax: derivative of jnp.linalg.qr of a {m}x{n} matrix with mode={mode!r} "
            "is not implemented (JAX: the same); it needs m >= n"
        )
    return 0


qr_check = _internal("ad.qr_check", _qr_check)


def _qr_jvp(t, ans, a, mode="reduced"):
    q, r = real_only(ans[0], "jnp.linalg.qr"), ans[1]
    t_rinv = matrix_transpose(solve(matrix_transpose(r), matrix_transpose(t))) + qr_check(a, mode)
    c = matrix_transpose(q) @ t_rinv
    low = tril(c, -1)
    omega = low - matrix_transpose(low)
    return (t_rinv + q @ (omega - c), (c - omega) @ r)


def _qr_vjp(g, ans, a, mode="reduced"):
    q, r = real_only(ans[0], "jnp.linalg.qr"), ans[1]
    gd = dense_tree(g, ans)
    n = matrix_transpose(q) @ gd[0] - gd[1] @ matrix_transpose(r)
    k = tril(n - matrix_transpose(n), -1) - n
    return matrix_transpose(solve(r, matrix_transpose(gd[0] + q @ k))) + qr_check(a, mode)


qr.def_vjp(_qr_vjp)
qr.def_jvp(_qr_jvp)
qr.samples = lambda rng: [
    ((_rand(rng, 3, 3),), {}),
    ((_rand(rng, 4, 2),), {}),
    ((_rand(rng, 2, 5, 3),), {}),
    ((_rand(rng, 3, 3),), {"mode": "complete"}),
]


def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """Singular value decomposition over the last two axes
    (jax.numpy.linalg.svd): ``(u, s, vh)`` with ``a = u @ (s[..., None] * vh)``,
    ``s`` descending; ``s`` alone when ``compute_uv=False``. With
    ``full_matrices=True`` (the default, as in JAX) ``u`` is ``(..., m, m)`` and
    ``vh`` ``(..., n, n)``, else ``(..., m, k)`` and ``(..., k, n)``, ``k =
    min(m, n)``. Dtype: that of ``a`` (integers give the default float).

    Differentiable (JAX's rules: distinct singular values assumed; the terms of
    equal ones are dropped). With ``compute_uv=True`` and ``full_matrices=True``
    the derivative needs a square ``a`` (``NotImplementedError`` otherwise, as in
    JAX); ``s`` alone is differentiable for any shape."""
    a = np.asarray(a)
    if a.dtype.kind in "biu":
        a = a.astype(_dt.default_float())
    if not compute_uv:
        return np.linalg.svd(a, compute_uv=False, hermitian=hermitian)
    u, s, vh = np.linalg.svd(a, full_matrices=full_matrices, hermitian=hermitian)
    return SVDResult(u, s, vh)


svd = _la("svd", _svd, np.linalg.svd)


def _svd_ad_full(a, full_matrices=True, compute_uv=True):
    """Static: the ``full_matrices`` flag to recompute the SVD with in the rules
    (``False``); raises when the derivative is not defined (full ``u``/``vh`` of a
    non-square matrix)."""
    m, n = np.shape(a)[-2:]
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError(
            f"srcjax: derivative of jnp.linalg.svd(full_matrices=True) of a {m}x{n} matrix "
            "is not implemented (JAX: the same); use full_matrices=False"
        )
    return False


def _svd_embed(g, usv, compute_uv=True):
    """The output cotangent (or tangent) ``g`` of ``svd`` as a triple ``(u, s,
    vh)`` of arrays shaped like ``usv``: ``g`` itself when ``compute_uv`` (symbolic
    zero entries made arrays), else ``(0, g, 0)``."""
    if compute_uv:
        return _dense_tree(g, usv)
    return (np.zeros_like(usv[0]), np.asarray(g), np.zeros_like(usv[2]))


def _svd_select(h, usv, compute_uv=True):
    """Transpose of ``ad.svd_embed``: the triple ``h`` itself, or its ``s`` part."""
    if compute_uv:
        return (h[0], h[1], h[2])
    return np.asarray(h[1])


svd_ad_full = _internal("ad.svd_ad_full", _svd_ad_full)
svd_embed = _internal("ad.svd_embed", _svd_embed, differentiable=True)
svd_select = _internal("ad.svd_select", _svd_select, differentiable=True)


def _svd_embed_vjp_g(h, ans, g, usv, compute_uv=True):
    return svd_select(h, usv, compute_uv)


def _svd_embed_jvp_g(t, ans, g, usv, compute_uv=True):
    return svd_embed(t, usv, compute_uv)


def _svd_select_vjp_h(k, ans, h, usv, compute_uv=True):
    return svd_embed(k, usv, compute_uv)


def _svd_select_jvp_h(t, ans, h, usv, compute_uv=True):
    return svd_select(t, usv, compute_uv)


svd_embed.def_vjp(_svd_embed_vjp_g)
svd_embed.def_jvp(_svd_embed_jvp_g)
svd_select.def_vjp(_svd_select_vjp_h)
svd_select.def_jvp(_svd_select_jvp_h)


def _svd_helper_samples(rng):
    a = _rand(rng, 4, 3)
    usv = _svd(a, False)
    triple = (_rand(rng, 4, 3), _rand(rng, 3), _rand(rng, 3, 3))
    return [((triple, usv), {}), ((_rand(rng, 3), usv), {"compute_uv": False})]


def _svd_select_samples(rng):
    a = _rand(rng, 4, 3)
    usv = _svd(a, False)
    triple = (_rand(rng, 4, 3), _rand(rng, 3), _rand(rng, 3, 3))
    return [((triple, usv), {}), ((triple, usv), {"compute_uv": False})]


svd_embed.samples = _svd_helper_samples
svd_select.samples = _svd_select_samples


def _svd_jvp(t, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    usv = svd(a, svd_ad_full(a, full_matrices, compute_uv), True, hermitian)
    u, s, vh = real_only(usv[0], "jnp.linalg.svd"), usv[1], usv[2]
    v = matrix_transpose(vh)
    p = matrix_transpose(u) @ t @ v
    gap = expand_dims(s * s, -2) - expand_dims(s * s, -1)
    f = where(gap == 0.0, 0.0, 1.0 / where(gap == 0.0, 1.0, gap))
    s_row = expand_dims(s, -2)
    s_col = expand_dims(s, -1)
    du = u @ (f * (p * s_row + s_col * matrix_transpose(p)))
    du = du + (t @ v - u @ (matrix_transpose(u) @ t @ v)) / s_row
    dv = v @ (f * (s_col * p + matrix_transpose(p) * s_row))
    dv = dv + (matrix_transpose(t) @ u - v @ (vh @ matrix_transpose(t) @ u)) / s_row
    return svd_select((du, diagonal(p, 0, -2, -1), matrix_transpose(dv)), usv, compute_uv)


def _svd_vjp(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    usv = svd(a, svd_ad_full(a, full_matrices, compute_uv), True, hermitian)
    u, s, vh = real_only(usv[0], "jnp.linalg.svd"), usv[1], usv[2]
    v = matrix_transpose(vh)
    gt = svd_embed(g, usv, compute_uv)
    g_u, g_v = gt[0], matrix_transpose(gt[2])
    gap = expand_dims(s * s, -2) - expand_dims(s * s, -1)
    f = where(gap == 0.0, 0.0, 1.0 / where(gap == 0.0, 1.0, gap))
    s_row = expand_dims(s, -2)
    s_col = expand_dims(s, -1)
    ju = f * (matrix_transpose(u) @ g_u - matrix_transpose(g_u) @ u)
    jv = f * (vh @ g_v - matrix_transpose(g_v) @ v)
    core = ju * s_row + expand_dims(gt[1], -1) * eye_mask(np.shape(s)[-1]) + s_col * jv
    out = u @ core @ vh
    out = out + ((g_u - u @ (matrix_transpose(u) @ g_u)) / s_row) @ vh
    return out + u @ ((matrix_transpose(g_v) - (matrix_transpose(g_v) @ v) @ vh) / s_col)


svd.def_vjp(_svd_vjp)
svd.def_jvp(_svd_jvp)
svd.samples = lambda rng: [
    ((_rand(rng, 3, 3),), {}),
    ((_rand(rng, 4, 3),), {"full_matrices": False}),
    ((_rand(rng, 3, 5),), {"full_matrices": False}),
    ((_rand(rng, 2, 4, 3),), {"compute_uv": False}),
    ((_rand(rng, 3, 4),), {"compute_uv": False, "full_matrices": False}),
]


def _pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """Moore-Penrose pseudo-inverse over the last two axes
    (jax.numpy.linalg.pinv), from the SVD: singular values at most ``rtol`` times
    the largest are treated as zero (default ``10 * max(m, n) * eps``, JAX's;
    ``rcond`` is the old name). Shape ``(..., n, m)`` for ``a`` of ``(..., m,
    n)``; dtype that of ``a`` (integers give the default float).
    Differentiable where the rank is locally constant (JAX's rule)."""
    a = np.asarray(a)
    if a.dtype.kind in "biu":
        a = a.astype(_dt.default_float())
    if rtol is None:
        rtol = rcond
    if rtol is None:
        rtol = 10 * builtins.max(a.shape[-2:]) * np.finfo(a.dtype).eps
    out = np.linalg.pinv(a, rcond=rtol, hermitian=hermitian)
    return out.astype(a.dtype, copy=False)


pinv = _la("pinv", _pinv, np.linalg.pinv)


def _pinv_jvp(t, ans, a, rtol=None, hermitian=False, *, rcond=None):
    # Golub & Pereyra: d(A+) = -A+ dA A+ + A+ A+^T dA^T (I - A A+) + (I - A+ A) dA^T A+^T A+
    p = ans
    pt = matrix_transpose(p)
    tt = matrix_transpose(t)
    out = -(p @ t @ p) + p @ (pt @ (tt - tt @ (a @ p)))
    return out + ((tt - p @ (a @ tt)) @ pt) @ p


def _pinv_vjp(g, ans, a, rtol=None, hermitian=False, *, rcond=None):
    p = ans
    pt = matrix_transpose(p)
    gt = matrix_transpose(g)
    out = -(pt @ g @ pt) + (gt - (a @ p) @ gt) @ (p @ pt)
    return out + (pt @ p) @ (gt - (gt @ p) @ a)


pinv.def_vjp(_pinv_vjp)
pinv.def_jvp(_pinv_jvp)
pinv.samples = lambda rng: [
    ((_rand(rng, 3, 3),), {}),
    ((_rand(rng, 4, 2),), {}),
    ((_rand(rng, 2, 3),), {}),
    ((_rand(rng, 2, 2, 3),), {}),
]


def _matrix_power(a, n):
    """``a`` raised to the integer power ``n`` over the last two axes
    (jax.numpy.linalg.matrix_power): repeated squaring; ``n = 0`` gives the
    identity, ``n < 0`` powers of the inverse. Shape and dtype those of ``a``.
    Differentiable in ``a``. Raises ``TypeError`` for a non-integer ``n`` and
    ``ValueError`` (NumPy's ``LinAlgError``) for a non-square ``a``."""
    if isinstance(n, bool) or int(n) != n:
        raise TypeError(f"jnp.linalg.matrix_power: exponent must be an integer, got {n!r}")
    a = np.asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(
            f"jnp.linalg.matrix_power: a must be a stack of square matrices, got {a.shape}"
        )
    return np.linalg.matrix_power(a, int(n))


matrix_power = _la("matrix_power", _matrix_power, np.linalg.matrix_power)


def _block_upper(a, t):
    """The block matrix ``[[a, t], [0, a]]`` over the last two axes: its powers
    carry the derivative of ``a ** n`` in the direction ``t`` in their upper-right
    block."""
    a, t = np.broadcast_arrays(np.asarray(a), np.asarray(t))
    z = np.zeros_like(a)
    top = np.concatenate([a, t], axis=-1)
    bottom = np.concatenate([z, a], axis=-1)
    return np.concatenate([top, bottom], axis=-2)


def _upper_right(x):
    """The upper-right quarter of ``x`` (``(..., 2m, 2m)`` -> ``(..., m, m)``)."""
    m = np.shape(x)[-1] // 2
    return np.asarray(x)[..., :m, m:]


def _diag_blocks_sum(x):
    """The sum of the two diagonal quarters of ``x`` (the adjoint of the ``a``
    operand of ``ad.block_upper``)."""
    m = np.shape(x)[-1] // 2
    x = np.asarray(x)
    return x[..., :m, :m] + x[..., m:, m:]


block_upper = _internal("ad.block_upper", _block_upper, differentiable=True)
upper_right = _internal("ad.upper_right", _upper_right, differentiable=True)
diag_blocks_sum = _internal("ad.diag_blocks_sum", _diag_blocks_sum, differentiable=True)


def _block_upper_vjp_a(g, ans, a, t):
    return diag_blocks_sum(g)


def _block_upper_vjp_t(g, ans, a, t):
    return upper_right(g)


def _block_upper_jvp_a(da, ans, a, t):
    return block_upper(da, zeros_like(da))


def _block_upper_jvp_t(dt, ans, a, t):
    return block_upper(zeros_like(dt), dt)


def _upper_right_vjp_x(g, ans, x):
    return block_upper(zeros_like(g), g)


def _upper_right_jvp_x(t, ans, x):
    return upper_right(t)


def _diag_blocks_sum_vjp_x(g, ans, x):
    return block_upper(g, zeros_like(g))


def _diag_blocks_sum_jvp_x(t, ans, x):
    return diag_blocks_sum(t)


block_upper.def_vjp(_block_upper_vjp_a, _block_upper_vjp_t)
block_upper.def_jvp(_block_upper_jvp_a, _block_upper_jvp_t)
upper_right.def_vjp(_upper_right_vjp_x)
upper_right.def_jvp(_upper_right_jvp_x)
diag_blocks_sum.def_vjp(_diag_blocks_sum_vjp_x)
diag_blocks_sum.def_jvp(_diag_blocks_sum_jvp_x)
block_upper.samples = lambda rng: [((_rand(rng, 2, 2), _rand(rng, 2, 2)), {})]
upper_right.samples = lambda rng: [((_rand(rng, 4, 4),), {}), ((_rand(rng, 2, 2, 2),), {})]
diag_blocks_sum.samples = upper_right.samples


def _matrix_power_jvp(t, ans, a, n):
    # d(a ** n)[t] is the upper-right block of [[a, t], [0, a]] ** n (any integer n)
    return upper_right(matrix_power(block_upper(a, t), n))


def _matrix_power_vjp(g, ans, a, n):
    # the adjoint of t -> d(a ** n)[t] is g -> d(a.T ** n)[g]
    return upper_right(matrix_power(block_upper(matrix_transpose(a), g), n))


matrix_power.def_vjp(_matrix_power_vjp)
matrix_power.def_jvp(_matrix_power_jvp)
matrix_power.samples = lambda rng: [
    ((_rand(rng, 3, 3), 3), {}),
    ((_rand(rng, 2, 2, 2), 2), {}),
    ((_rand(rng, 3, 3), 1), {}),
    ((_rand(rng, 3, 3), 0), {}),
    ((_wellcond(rng, 3), -2), {}),
]


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


tri_flag = _internal("ad.tri_flag", _tri_flag)
tri_flip = _internal("ad.tri_flip", _tri_flip)
tri_conj = _internal("ad.tri_conj", _tri_conj)


def _maybe_conj(x, flag):
    """``conj(x)`` when ``flag`` else ``x`` (static flag)."""
    return np.conj(x) if flag else np.asarray(x)


maybe_conj = _internal("ad.maybe_conj", _maybe_conj, differentiable=True)


def _maybe_conj_vjp_x(g, ans, x, flag):
    return maybe_conj(g, flag)


def _maybe_conj_jvp_x(t, ans, x, flag):
    return maybe_conj(t, flag)


maybe_conj.def_vjp(_maybe_conj_vjp_x)
maybe_conj.def_jvp(_maybe_conj_jvp_x)
maybe_conj.samples = lambda rng: [((_rand(rng, 2, 3), True), {}), ((_rand(rng, 2, 3), False), {})]


def _tri_mask(x, lower, strict=False):
    """The lower (``lower``) or upper triangle of ``x`` over its last two axes,
    without the diagonal when ``strict``; zeros elsewhere."""
    if lower:
        return np.tril(x, -1 if strict else 0)
    return np.triu(x, 1 if strict else 0)


tri_mask = _internal("ad.tri_mask", _tri_mask, differentiable=True)


def _tri_mask_vjp_x(h, ans, x, lower, strict=False):
    return tri_mask(h, lower, strict)


def _tri_mask_jvp_x(t, ans, x, lower, strict=False):
    return tri_mask(t, lower, strict)


tri_mask.def_vjp(_tri_mask_vjp_x)
tri_mask.def_jvp(_tri_mask_jvp_x)
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


tri_rhs = _internal("ad.tri_rhs", _tri_rhs, differentiable=True)
tri_unrhs = _internal("ad.tri_unrhs", _tri_unrhs, differentiable=True)


def _tri_rhs_vjp_y(h, ans, y, a, b):
    return tri_unrhs(h, a, b)


def _tri_rhs_jvp_y(t, ans, y, a, b):
    return tri_rhs(t, a, b)


def _tri_unrhs_vjp_y(h, ans, y, a, b):
    return tri_rhs(h, a, b)


def _tri_unrhs_jvp_y(t, ans, y, a, b):
    return tri_unrhs(t, a, b)


tri_rhs.def_vjp(_tri_rhs_vjp_y)
tri_rhs.def_jvp(_tri_rhs_jvp_y)
tri_unrhs.def_vjp(_tri_unrhs_vjp_y)
tri_unrhs.def_jvp(_tri_unrhs_jvp_y)
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


def _tri_solve_2d(a, b, trans, lower, unit_diagonal):
    """A triangular solve (LAPACK ``trtrs`` through SciPy, O(m^2) per column) for
    one matrix ``a`` ``(m, m)``; ``b`` ``(m,)`` or ``(..., m, n)``, its batch axes
    folded into columns. ``None`` when SciPy is missing or ``a`` is singular (the
    caller's general path then gives JAX's inf/NaN), or for shapes that do not fit."""
    sl = _scipy_linalg()
    if sl is None or b.ndim == 0:
        return None
    m = a.shape[-1]
    vector = b.ndim == 1
    if vector:
        bm = b
    else:
        if b.shape[-2] != m:
            return None
        batch = b.shape[:-2]
        bm = np.moveaxis(b, -2, 0).reshape(m, -1) if batch else b
    if b.shape[-1 if vector else -2] != m:
        return None
    code = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}[trans]
    try:
        x = sl.solve_triangular(
            a, bm, trans=code, lower=lower, unit_diagonal=unit_diagonal, check_finite=False
        )
    except np.linalg.LinAlgError:  # an exact zero on the diagonal
        return None
    if not vector and batch:
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
            r = bm[..., i, :] - np.einsum("...j,...jk->...k", t[..., i, :], x)
            x[..., i, :] = r / t[..., i, i][..., None]
    return x


solve_triangular = _la("solve_triangular", _solve_triangular)

# products and solves promote their operands to one dtype first, as JAX does
# (jnp.dot(int32, float32) is float32: see registry._fix_dtypes)
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
