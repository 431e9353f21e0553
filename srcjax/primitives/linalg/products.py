"""Bilinear products described by a two-operand einsum specification: ``dot``,
``matmul`` (``@``), ``inner``, ``tensordot``, ``outer``, ``vdot``; and ``kron``, ``trace``.
"""

from __future__ import annotations

import string

import numpy as np

from srcjax.primitives.ad import (
    expand_dims,
    reshape,
)
from srcjax.primitives.elementwise import conj
from srcjax.primitives.makers import def_bilinear
from srcjax.primitives.registry import Primitive, register
from srcjax.primitives.structural import (
    diagonal_adjoint,
    ravel,
)

from ._common import _internal, _linalg, _pet, _rand
from .einsum import einsum

__all__ = ["dot", "matmul", "vdot", "inner", "outer", "tensordot", "trace", "kron"]

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
    if (
        type(a) is np.ndarray
        and type(b) is np.ndarray
        and preferred_element_type is None
        and b.ndim == 2
        and a.ndim >= 2
        and a.shape[-1] == 1 == b.shape[0]
        and a.dtype == b.dtype
        and a.dtype.char in "fd"
    ):
        # an outer product (one contracted term): NumPy's matmul does not call
        # BLAS for it (1600 x 1 by 1 x 64: 270 us, np.dot 10 us); each element is
        # one rounded product either way, so the bits are the same
        return np.dot(a.reshape(-1, 1), b).reshape(a.shape[:-1] + b.shape[1:])
    try:
        return _pet(np.matmul, preferred_element_type, a, b)
    except ValueError:
        raise _contraction_error(a, b) from None


def _contraction_error(a, b):
    """JAX's TypeError for contracting dimensions that differ (a
    :class:`srcjax.errors.ShapeError`, also a ValueError as NumPy's)."""
    from ...errors import ShapeError

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


dot = _linalg("jnp.dot", _dot, np.dot).facts(matrix_product=True)
matmul = register(Primitive("jnp.matmul", _matmul, op="@", kind="linalg"), np.matmul)
matmul.facts(matrix_product=True)
# (their rules: def_bilinear in .bilinear, with the BLAS adjoints ad.dot_left/right and
# ad.matmul_left/right)


inner = _linalg("jnp.inner", _inner, np.inner)


def _inner_vjp_a(g, ans, a, b, precision=None, preferred_element_type=None):
    return einsum(transpose_spec(bilinear_spec("inner", a, b), 0), g, b)


def _inner_vjp_b(g, ans, a, b, precision=None, preferred_element_type=None):
    return einsum(transpose_spec(bilinear_spec("inner", a, b), 1), a, g)


inner.def_vjp(_inner_vjp_a, _inner_vjp_b)
def_bilinear(inner)


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


def_bilinear(vdot)
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
