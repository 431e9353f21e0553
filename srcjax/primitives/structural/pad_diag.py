"""``pad`` and ``diag``/``diagonal`` with their adjoints."""

from __future__ import annotations

import numpy as np

from srcjax.primitives.ad import (
    unbroadcast,
)

from ..ad.linear import def_adjoint_of, def_adjoint_pair, def_with_adjoint
from ._common import _internal, _rand, _structural

__all__ = ["pad", "diag", "diagonal"]

# ---------------------------------------------------------------------------
# pad


def _pad(array, pad_width, mode="constant", constant_values=0):
    """Pad ``array`` (jax.numpy.pad). Differentiable in ``array`` for the modes
    constant, edge, reflect, symmetric and wrap."""
    if mode == "constant":
        return np.pad(array, pad_width, mode="constant", constant_values=constant_values)
    return np.pad(array, pad_width, mode=mode)


pad = _structural("jnp.pad", _pad, np.pad)


def _pad_adjoint(g, array, pad_width, mode="constant"):
    """Adjoint of ``pad`` w.r.t. ``array``: each output element's cotangent goes
    back to the input element it was copied from."""
    shape = np.shape(array)
    if mode not in ("constant", "edge", "reflect", "symmetric", "wrap"):
        raise NotImplementedError(f"srcjax: no gradient for jnp.pad(mode={mode!r})")
    src = np.arange(int(np.prod(shape))).reshape(shape)
    if mode == "constant":
        pos = np.pad(src, pad_width, mode="constant", constant_values=-1)
    else:
        pos = np.pad(src, pad_width, mode=mode)
    keep = pos >= 0
    out = np.zeros(shape, dtype=np.result_type(g))
    np.add.at(out.reshape(-1), pos[keep], np.asarray(g)[keep])
    return out


pad_adjoint = _internal("ad.pad_adjoint", _pad_adjoint)


def _pad_vjp_array(g, ans, array, pad_width, mode="constant", constant_values=0):
    return pad_adjoint(g, array, pad_width, mode)


pad.def_vjp(_pad_vjp_array)


def _pad_jvp_array(t, ans, array, pad_width, mode="constant", constant_values=0):
    return pad(t, pad_width, mode)


pad.def_jvp(_pad_jvp_array)


def_adjoint_of(pad_adjoint, pad)


pad.samples = lambda rng: [
    ((_rand(rng, 2, 3), 1), {}),
    ((_rand(rng, 2, 3), ((1, 0), (0, 2))), {"constant_values": 2.0}),
    ((_rand(rng, 4, 3), ((1, 2), (2, 1))), {"mode": "reflect"}),
    (
        (
            _rand(
                rng,
                3,
            ),
            2,
        ),
        {"mode": "edge"},
    ),
    (
        (
            _rand(
                rng,
                3,
            ),
            (1, 4),
        ),
        {"mode": "wrap"},
    ),
]
pad_adjoint.samples = lambda rng: [((_rand(rng, 5, 4), _rand(rng, 3, 3), ((1, 1), (0, 1))), {})]


# ---------------------------------------------------------------------------
# diag / diagonal


def _diagonal(a, offset=0, axis1=0, axis2=1):
    """The diagonal ``offset`` of the 2-D sub-arrays on ``axis1``/``axis2``, as
    the last axis of the result (jax.numpy.diagonal)."""
    return np.diagonal(a, offset, axis1, axis2)


diagonal = _structural("jnp.diagonal", _diagonal, np.diagonal)


def _diagonal_adjoint(g, a, offset=0, axis1=0, axis2=1):
    """Adjoint of ``diagonal``: zeros like ``a`` with ``g`` (broadcast to the
    diagonal's shape) written on that diagonal."""
    shape = np.shape(a)
    pos = np.diagonal(np.arange(int(np.prod(shape))).reshape(shape), offset, axis1, axis2)
    out = np.zeros(shape, dtype=np.result_type(g))
    out.reshape(-1)[pos.reshape(-1)] = np.broadcast_to(g, pos.shape).reshape(-1)
    return out


diagonal_adjoint = _internal("ad.diagonal_adjoint", _diagonal_adjoint)


def_with_adjoint(diagonal, diagonal_adjoint)


def _diagonal_adjoint_vjp_g(h, ans, g, a, offset=0, axis1=0, axis2=1):
    return unbroadcast(diagonal(h, offset, axis1, axis2), g)


diagonal_adjoint.def_vjp(_diagonal_adjoint_vjp_g)


def _diagonal_adjoint_jvp_g(t, ans, g, a, offset=0, axis1=0, axis2=1):
    return diagonal_adjoint(t, a, offset, axis1, axis2)


diagonal_adjoint.def_jvp(_diagonal_adjoint_jvp_g)
diagonal.samples = lambda rng: [
    ((_rand(rng, 3, 4),), {}),
    ((_rand(rng, 3, 4), 1), {}),
    ((_rand(rng, 2, 3, 3), -1, 1, 2), {}),
]
diagonal_adjoint.samples = lambda rng: [
    ((_rand(rng, 3), _rand(rng, 3, 4)), {}),
    ((_rand(rng, 2, 1), _rand(rng, 2, 3, 3), 1, 1, 2), {}),
]


def _diag(v, k=0):
    """For 1-D ``v``, a 2-D array with ``v`` on diagonal ``k``; for 2-D ``v``, its
    diagonal ``k`` (jax.numpy.diag)."""
    return np.diag(v, k)


diag = _structural("jnp.diag", _diag, np.diag)


def _diag_adjoint(g, v, k=0):
    """Adjoint of ``diag(v, k)`` (both the 1-D and the 2-D case)."""
    if np.ndim(v) == 1:
        return np.diagonal(g, k).copy()
    return _diagonal_adjoint(g, v, k, 0, 1)


diag_adjoint = _internal("ad.diag_adjoint", _diag_adjoint)


def_adjoint_pair(diag, diag_adjoint)


diag.samples = lambda rng: [
    ((_rand(rng, 3),), {}),
    ((_rand(rng, 3), -1), {}),
    ((_rand(rng, 3, 4),), {}),
    ((_rand(rng, 3, 4), 2), {}),
]
diag_adjoint.samples = lambda rng: [
    ((_rand(rng, 4, 4), _rand(rng, 3), 1), {}),
    ((_rand(rng, 2), _rand(rng, 3, 4), 2), {}),
]
