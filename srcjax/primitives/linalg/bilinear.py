"""The BLAS adjoints of ``matmul`` and ``dot`` (``ad.matmul_left/right``,
``ad.dot_left/right``, no einsum) and ``jnp.cross``.
"""

from __future__ import annotations

import numpy as np

from srcjax import dtypes as _dt
from srcjax.primitives.ad import (
    unbroadcast,
)
from srcjax.primitives.direct_forms import ranks, strong_arrays
from srcjax.primitives.makers import def_bilinear

from ._common import _internal, _linalg, _rand
from .einsum import einsum
from .products import bilinear_spec, dot, matmul, transpose_spec

__all__ = ["cross"]

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


def _own_dtype(r, own):
    """``r`` in ``own``'s dtype when that is an ml_dtypes float (bfloat16): NumPy's
    matmul gives float32 for them (accumulated in float32, rounded once here, as
    XLA's bfloat16 dot); else ``r`` as it is (one attribute test)."""
    d = getattr(own, "dtype", None)
    if d is not None and d.kind == "V" and np.result_type(r) != d:
        return np.asarray(r).astype(d)
    return r


def _matmul_left(g, a, b):
    """Cotangent of ``a`` in ``matmul(a, b)`` for output cotangent ``g``."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 == b.ndim:
        # (the common case: (m, n) @ (n, k) is a's shape). np.dot, not matmul, of
        # 2-D operands: the same BLAS product, but matmul is 1.1-3x slower on a
        # transposed view of a small matrix (3x for an outer product, k = 1)
        if type(g) is np.ndarray and g.ndim == 2 and g.dtype.char in "fd" and b.dtype.char in "fd":
            return _own_dtype(np.dot(g, b.T), a)
        return _own_dtype(np.matmul(g, b.T), a)
    if (
        type(b) is np.ndarray
        and type(g) is np.ndarray
        and b.ndim == 2
        and g.ndim == 1
        and np.ndim(a) == 1
        and g.dtype.char in "fd"
        and b.dtype.char in "fd"
    ):
        # a vector by a matrix: b @ g, one gemv (a quarter of the general path's
        # time at 2 x 16: user8 p06's RK4 gradient makes 160 a step)
        return np.dot(b, g)
    an, bn = np.ndim(a), np.ndim(b)
    if bn == 1:
        r = g * b if an == 1 else np.asarray(g)[..., None] * b
    elif an == 1:
        r = np.matmul(b, np.asarray(g)[..., None])[..., 0]
    else:
        r = np.matmul(g, np.swapaxes(b, -1, -2))
    return _own_dtype(_sum_to(r, np.shape(a)), a)


def _matmul_right(g, a, b):
    """Cotangent of ``b`` in ``matmul(a, b)`` for output cotangent ``g``."""
    if type(a) is np.ndarray and type(b) is np.ndarray and a.ndim == 2 == b.ndim:
        return _own_dtype(np.matmul(a.T, g), b)
    an, bn = np.ndim(a), np.ndim(b)
    if an == 1:
        r = g * a if bn == 1 else a[:, None] * np.asarray(g)[..., None, :]
    elif bn == 1:
        r = np.matmul(np.swapaxes(a, -1, -2), np.asarray(g)[..., None])[..., 0]
    else:
        r = np.matmul(np.swapaxes(a, -1, -2), g)
    return _own_dtype(_sum_to(r, np.shape(b)), b)


matmul_left = _internal("ad.matmul_left", _matmul_left, differentiable=True)
matmul_right = _internal("ad.matmul_right", _matmul_right, differentiable=True)

#: NumPy's matrix-vector gufuncs (NumPy >= 2.2), which ad.matvec/ad.vecmat call
_MATVEC, _VECMAT = getattr(np, "matvec", None), getattr(np, "vecmat", None)


def _matmul_left_direct(avals):
    """jit's one call for the cotangent of ``a`` where the operands' abstract
    values decide it: ``g * b`` of vectors (``g`` a scalar), ``b @ g`` for a
    vector by a matrix (np.matvec)."""
    g, a, b = avals.get("g"), avals.get("a"), avals.get("b")
    if not strong_arrays(g, a, b) or a.shape[-1:] != b.shape[:1]:
        return None
    if ranks(g, a, b) == (0, 1, 1):
        return "jnp.multiply", ("g", "b")
    if ranks(g, a, b) == (1, 1, 2) and g.shape == b.shape[1:] and _MATVEC is not None:
        return "ad.matvec", ("b", "g")
    return None


def _matmul_right_direct(avals):
    """The same for the cotangent of ``b``: ``g * a`` of vectors, ``g @ a`` for
    a matrix by a vector (np.vecmat)."""
    g, a, b = avals.get("g"), avals.get("a"), avals.get("b")
    if not strong_arrays(g, a, b) or a.shape[-1:] != b.shape[:1]:
        return None
    if ranks(g, a, b) == (0, 1, 1):
        return "jnp.multiply", ("g", "a")
    if ranks(g, a, b) == (1, 2, 1) and g.shape == a.shape[:1] and _VECMAT is not None:
        return "ad.vecmat", ("g", "a")
    return None


#: the most operand elements jit ran these adjoints on as stand-ins before they
#: had shape rules (optimize/stand_ins.py's budget of pure helpers): beyond it
#: their results stay unknown, as they were (the code for larger operands unchanged)
_RULED_ELEMENTS = 1 << 20


def _matrices(avals):
    """``(g, a, b)`` when all three are matrices of one float dtype (strong) within
    :data:`_RULED_ELEMENTS`, else None."""
    g, a, b = avals.get("g"), avals.get("a"), avals.get("b")
    if not strong_arrays(g, a, b) or ranks(g, a, b) != (2, 2, 2):
        return None
    return (g, a, b) if g.size + a.size + b.size <= _RULED_ELEMENTS else None


def _matmul_left_shape(avals):
    """jit's abstract value of ``matmul_left(g, a, b)`` of matrices: ``g @ b.T``'s
    shape and dtype, without running the product on stand-ins (a GEMM of the
    operands' full shapes there: 25 ms of W4's first jit call, in each of jit's
    abstract interpretations). Mismatched shapes: None (stand-ins, as before)."""
    m = _matrices(avals)
    if m is None or m[0].shape[1] != m[2].shape[1]:
        return None
    g, _, b = m
    return (g.shape[0], b.shape[0]), g.dtype


def _matmul_right_shape(avals):
    """The same for ``matmul_right(g, a, b)``: ``a.T @ g``."""
    m = _matrices(avals)
    if m is None or m[1].shape[0] != m[0].shape[0]:
        return None
    g, a, _ = m
    return (a.shape[1], g.shape[1]), g.dtype


matmul_left.facts(
    array_result=True,
    pure=True,
    stack_sum=(("g", "b"), "ad.bmatmul_left", (False, True)),
    direct=_matmul_left_direct,
    result_shape=_matmul_left_shape,
)
matmul_right.facts(
    array_result=True,
    pure=True,
    stack_sum=(("g", "a"), "ad.bmatmul_right", (True, False)),
    direct=_matmul_right_direct,
    result_shape=_matmul_right_shape,
)


def_bilinear(matmul, matmul_left, matmul_right)  # (the jvps, the vjps, their rules)


def _cotangent_samples(product, shapes):
    """Samples ``(g, a, b)`` of a product's cotangent helpers, one for each pair
    of operand shapes (``g`` the shape of ``product(a, b)``)."""

    def samples(rng):
        out = []
        for sa, sb in shapes:
            a, b = rng.normal(size=sa), rng.normal(size=sb)
            g = rng.normal(size=np.shape(product(a, b)))
            out.append(((g, a, b), {}))
        return out

    return samples


_VECTOR_AND_MATRIX_SHAPES = [((2, 3), (3, 4)), ((3,), (3, 4)), ((2, 3), (3,)), ((3,), (3,))]
matmul_left.samples = matmul_right.samples = _cotangent_samples(
    np.matmul, _VECTOR_AND_MATRIX_SHAPES + [((5, 2, 3), (3, 4)), ((2, 3), (5, 3, 4))]
)


# jit's form of ``matmul_left(g, a, b)`` inside a loop whose ``b`` is invariant
# (optimize/transposes.py): ``b``'s transpose is made contiguous once, before the
# loop, and each trip multiplies by it (a BLAS product by a transposed view of a
# small matrix is about 2x slower: R3's reverse scan, 32 x 64 by 64 x 64).


def _transposed(x):
    """``x.T`` of a matrix as a contiguous array (a copy)."""
    return np.ascontiguousarray(np.swapaxes(x, -1, -2))


def _matmul_left_t(g, a, bt):
    """``matmul_left(g, a, b)`` given ``bt``, ``b``'s :func:`_transposed`."""
    if (
        type(g) is np.ndarray
        and type(a) is np.ndarray
        and type(bt) is np.ndarray
        and g.ndim == 2 == a.ndim == bt.ndim
        and g.dtype.char in "fd"
        and bt.dtype.char in "fd"
    ):
        return np.dot(g, bt)
    return _matmul_left(g, a, np.swapaxes(bt, -1, -2))


def _matrix_dot(g, bt):
    """``g @ bt`` of two matrices of one float dtype (BLAS's one GEMM)."""
    return np.dot(g, bt)


def _matmul_left_t_direct(avals):
    """``ad.matrix_dot(g, bt)`` where ``g``, ``a`` and ``bt`` are matrices of one
    float dtype whose shapes fit: the path :func:`_matmul_left_t` takes, which
    reads ``a`` for nothing else (a reverse loop then restores no ``a``)."""
    g, a, bt = avals.get("g"), avals.get("a"), avals.get("bt")
    if not strong_arrays(g, a, bt) or ranks(g, a, bt) != (2, 2, 2):
        return None
    if g.shape[1] != bt.shape[0] or a.shape != (g.shape[0], bt.shape[1]):
        return None
    return "ad.matrix_dot", ("g", "bt")


def _matrix_dot_shape(avals):
    g, bt = avals.get("g"), avals.get("bt")
    if not strong_arrays(g, bt) or ranks(g, bt) != (2, 2) or g.shape[1] != bt.shape[0]:
        return None
    return (g.shape[0], bt.shape[1]), g.dtype


transposed = _internal("ad.transposed", _transposed).facts(array_result=True, pure=True)
matmul_left_t = _internal("ad.matmul_left_t", _matmul_left_t).facts(
    array_result=True, pure=True, direct=_matmul_left_t_direct
)
matrix_dot = _internal("ad.matrix_dot", _matrix_dot).facts(
    array_result=True, pure=True, result_shape=_matrix_dot_shape
)
matrix_dot.samples = lambda rng: [((rng.normal(size=(2, 4)), rng.normal(size=(4, 3))), {})]
transposed.samples = lambda rng: [((rng.normal(size=(3, 4)),), {})]
matmul_left_t.samples = lambda rng: [
    ((rng.normal(size=(2, 4)), rng.normal(size=(2, 3)), rng.normal(size=(4, 3))), {})
]


def _dot_is_matmul(a, b):
    return 1 <= np.ndim(a) <= 2 and 1 <= np.ndim(b) <= 2


def _dot_cotangent(g, a, b, side):
    """Cotangent of operand ``side`` (0: ``a``, 1: ``b``) of ``dot(a, b)`` for the
    output cotangent ``g``."""
    if _dot_is_matmul(a, b):
        return (_matmul_left, _matmul_right)[side](g, a, b)
    own, other = (a, b) if side == 0 else (b, a)
    if np.ndim(a) == 0 or np.ndim(b) == 0:
        return _sum_to(np.multiply(g, other), np.shape(own))
    operands = (g, b) if side == 0 else (a, g)
    spec = transpose_spec(bilinear_spec("dot", a, b), side)
    return einsum.impl(spec, *operands)  # (the buffers generated code expects, no Array)


def _dot_left(g, a, b):
    """Cotangent of ``a`` in ``dot(a, b)``."""
    return _dot_cotangent(g, a, b, 0)


def _dot_right(g, a, b):
    """Cotangent of ``b`` in ``dot(a, b)``."""
    return _dot_cotangent(g, a, b, 1)


dot_left = _internal("ad.dot_left", _dot_left, differentiable=True)
dot_right = _internal("ad.dot_right", _dot_right, differentiable=True)
dot_left.facts(array_result=True, stack_sum=(("g", "b"), "ad.bdot_left", (False, True)))
dot_right.facts(array_result=True, stack_sum=(("g", "a"), "ad.bdot_right", (True, False)))


def_bilinear(dot, dot_left, dot_right)


dot_left.samples = dot_right.samples = _cotangent_samples(
    np.dot, _VECTOR_AND_MATRIX_SHAPES + [((), (3,)), ((2, 3, 4), (4, 2))]
)


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
