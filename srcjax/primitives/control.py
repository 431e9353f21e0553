"""Primitives the transforms themselves emit: seeding, zero handling, container
updates and ``stop_gradient``.

Public names live in the ``ad`` namespace of generated code (``ad.seed``),
except ``lax.stop_gradient`` (also ``srcjax.stop_gradient``).
"""

from __future__ import annotations

import numpy as np

from ..errors import NonDifferentiableError
from .registry import Primitive, register

__all__ = ["stop_gradient"]


def _seed(out):
    """Cotangent seed for ``grad``: 1 of ``out``'s dtype.

    Raises TypeError as JAX does when ``out`` is not a real floating scalar
    (``grad`` requires real scalar outputs; see ``jax.grad``).
    """
    dt = getattr(out, "dtype", None)
    shape = np.shape(out)
    if shape != ():
        raise NonDifferentiableError(
            f"Gradient only defined for scalar-output functions. Output had shape: {shape}.",
            hint="reduce the output (e.g. jnp.sum) or use srcjax.vjp / srcjax.jacrev",
        )
    if dt is None:
        if isinstance(out, float):
            return 1.0
        if isinstance(out, (bool, int, np.integer, np.bool_)):
            dt = np.asarray(out).dtype
        else:
            raise NonDifferentiableError(
                f"grad requires real-valued outputs; got a value of type {type(out).__name__}"
            )
    if dt.kind != "f":
        raise NonDifferentiableError(
            f"grad requires real-valued outputs (output dtype that is a sub-dtype of "
            f"np.floating), but got {dt.name}.",
            hint="for holomorphic functions use a real loss; for integers, cast to float",
        )
    return dt.type(1.0)


seed = register(Primitive("ad.seed", _seed, kind="internal", differentiable=False))


def _cotangent_like(g, x):
    """``g`` as a cotangent for ``x``: a materialized scalar zero becomes zeros of
    ``x``'s shape and dtype; arrays are cast to ``x``'s floating dtype."""
    xs = np.shape(x)
    if isinstance(x, (dict, list, tuple)):
        return g
    if np.shape(g) != xs:
        g = np.broadcast_to(g, xs).copy()
    dt = getattr(x, "dtype", None)
    if dt is not None and getattr(g, "dtype", dt) != dt and dt.kind == "f":
        g = np.asarray(g, dtype=dt)
    return g


cotangent_like = register(Primitive("ad.cotangent_like", _cotangent_like, kind="internal"))
cotangent_like.def_vjp(lambda g, ans, g_in, x: g)
cotangent_like.def_jvp(lambda t, ans, g_in, x: t)


def _setitem(x, idx, v):
    """Functional ``x[idx] = v`` for Python containers (returns a new container).

    Arrays are immutable as in JAX: raises TypeError pointing to ``x.at[idx].set(v)``.
    """
    if isinstance(x, dict):
        out = dict(x)
        out[idx] = v
        return out
    if isinstance(x, list):
        out = list(x)
        out[idx] = v
        return out
    raise TypeError(
        f"'{type(x).__name__}' object does not support item assignment. JAX arrays are "
        "immutable. Instead of ``x[idx] = y``, use ``x = x.at[idx].set(y)`` or another "
        ".at[] method: https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html"
    )


setitem = register(Primitive("ad.setitem", _setitem, kind="structural"))


def _setitem_vjp_x(g, ans, x, idx, v):
    return setitem(g, idx, 0.0)


def _setitem_vjp_v(g, ans, x, idx, v):
    return g[idx]


def _setitem_jvp_x(t, ans, x, idx, v):
    return setitem(t, idx, 0.0)


def _setitem_jvp_v(t, ans, x, idx, v):
    return t


setitem.def_vjp(_setitem_vjp_x, None, _setitem_vjp_v)
setitem.def_jvp(_setitem_jvp_x, None, _setitem_jvp_v)


def _stop_gradient(x):
    """Identity whose derivative is zero (``jax.lax.stop_gradient``). Pytrees pass
    through unchanged."""
    return x


stop_gradient = register(
    Primitive("lax.stop_gradient", _stop_gradient, kind="elementwise", differentiable=False)
)
