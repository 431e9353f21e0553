"""``jnp.reshape``, ``moveaxis``, ``expand_dims``, ``triu`` and ``tril``, which
every adjoint rule may need.
"""

from __future__ import annotations

import numpy as np

from ._common import _structural
from .linear import def_linear

# ---------------------------------------------------------------------------
# reshape / moveaxis / expand_dims / triu / tril


def _reshape(a, shape, order="C"):
    """``a`` with a new ``shape`` (jax.numpy.reshape); ``-1`` infers one dimension.
    Raises :class:`srcjax.errors.ShapeError` (TypeError as JAX, and ValueError)
    when the sizes differ."""
    try:
        if type(a) is np.ndarray:
            return a.reshape(shape, order=order)  # (what np.reshape calls, ~0.7 us sooner)
        return np.reshape(a, shape, order=order)
    except ValueError:
        from ...errors import ShapeError

        sa = np.shape(a)
        err = ShapeError(
            f"cannot reshape array of shape {sa} (size {np.size(a)}) into shape {shape}"
        )
        err.sj_reshape = (sa, shape)  # (vmap's error: the shapes of one example)
        raise err from None


reshape = _structural("jnp.reshape", _reshape, np.reshape)
# (to the shape it has: the array itself, which jit's fold_static then reads, as
# reverse mode's reshape(g, shape(x)) of a cotangent already of x's shape: R1)
reshape.facts(identity_operand="a")


def _reshape_vjp(g, ans, a, shape, order="C"):
    return reshape(g, np.shape(a), order=order)


def _reshape_jvp(t, ans, a, shape, order="C"):
    return reshape(t, shape, order=order)


reshape.def_vjp(_reshape_vjp)
reshape.def_jvp(_reshape_jvp)


def def_reshaping(p):
    """Rules of ``p(x, *rest)``, which only reshapes ``x`` (``expand_dims``,
    ``squeeze``, ``ad.flatten_if_none``): the jvp is ``p(t, *rest)``, the vjp
    ``reshape(g, np.shape(x))`` (rules over the operands in order, as
    :mod:`.linear`'s)."""

    def vjp(g, ans, *operands):
        return reshape(g, np.shape(*operands[:1]))  # (x)

    def jvp(t, ans, *operands):
        return p(t, *operands[1:])

    p.def_vjp(vjp)
    p.def_jvp(jvp)


reshape.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), (3, 2)), {}),
    ((rng.normal(size=(2, 3, 4)), (-1, 4)), {}),
    ((rng.normal(size=(2, 3)), (6,)), {"order": "F"}),
]


def _moveaxis(a, source, destination):
    """Move axes ``source`` to ``destination`` (jax.numpy.moveaxis); ints or tuples."""
    return np.moveaxis(a, source, destination)


moveaxis = _structural("jnp.moveaxis", _moveaxis, np.moveaxis)


def _moveaxis_vjp(g, ans, a, source, destination):
    return moveaxis(g, destination, source)


def _moveaxis_jvp(t, ans, a, source, destination):
    return moveaxis(t, source, destination)


moveaxis.def_vjp(_moveaxis_vjp)
moveaxis.def_jvp(_moveaxis_jvp)
moveaxis.samples = lambda rng: [
    ((rng.normal(size=(2, 3, 4)), 0, -1), {}),
    ((rng.normal(size=(2, 3, 4)), (0, 1), (2, 0)), {}),
]


def _expand_dims(a, axis):
    """Insert length-1 axes at ``axis`` (int or tuple) (jax.numpy.expand_dims)."""
    if type(axis) is int and type(a) is np.ndarray and -a.ndim - 1 <= axis <= a.ndim:
        # one axis of an array: the reshape np.expand_dims makes, without its
        # axis normalization (~3 us; R7 calls it three times a step)
        i = axis % (a.ndim + 1)
        return a.reshape(a.shape[:i] + (1,) + a.shape[i:])
    return np.expand_dims(a, axis)


expand_dims = _structural("jnp.expand_dims", _expand_dims, np.expand_dims)


def_reshaping(expand_dims)
expand_dims.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), -2), {}),
    ((rng.normal(size=(2, 3)), (0, 3)), {}),
]


def _triu(m, k=0):
    """Upper triangle (on and above diagonal ``k``) of the last two axes (jax.numpy.triu)."""
    return np.triu(m, k)


def _tril(m, k=0):
    """Lower triangle (on and below diagonal ``k``) of the last two axes (jax.numpy.tril)."""
    return np.tril(m, k)


triu = _structural("jnp.triu", _triu, np.triu)
tril = _structural("jnp.tril", _tril, np.tril)


def_linear(triu)  # masks: their own transposes
def_linear(tril)
_tri_samples = lambda rng: [  # noqa: E731
    ((rng.normal(size=(3, 4)),), {}),
    ((rng.normal(size=(2, 3, 3)), 1), {}),
    ((rng.normal(size=(4, 3)), -1), {}),
]
triu.samples = _tri_samples
tril.samples = _tri_samples


# JAX keeps a weak array's type through functions that move or copy its elements
for _p in (reshape, expand_dims):
    _p.facts(keeps_weak=True)
