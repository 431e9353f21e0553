"""Pytree zeros and sums: ``ad.zeros_like(x)`` and ``ad.add_any(a, b)`` work
leafwise on dict / list / tuple; ``add_any`` treats ``None`` as a symbolic zero.
"""

from __future__ import annotations

import numpy as np

from ._common import _internal
from .linear import def_identity

# ---------------------------------------------------------------------------
# pytree zeros / add


def _zeros_like(x):
    """Zeros with the structure, shape and dtype of ``x``.

    Works on pytrees: dicts, lists and tuples give the same container of zeros;
    Python floats give ``0.0``, NumPy scalars a zero of their dtype; ``None``
    stays ``None``.
    """
    if x is None:
        return None
    if isinstance(x, dict):
        return {k: _zeros_like(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_zeros_like(v) for v in x]
    if isinstance(x, tuple):
        vals = [_zeros_like(v) for v in x]
        return type(x)(*vals) if hasattr(x, "_fields") else tuple(vals)
    if isinstance(x, bool):
        return False
    if isinstance(x, float):
        return 0.0
    if isinstance(x, int):
        return 0
    if isinstance(x, complex):
        return 0j
    if isinstance(x, np.generic):
        return x.dtype.type(0)
    if not isinstance(x, np.ndarray):
        from ..control._trees import _class_kind

        kind = _class_kind(x)
        if kind is not None:  # a registered pytree class: the same class of zeros
            children, aux = kind.flatten(x)
            return kind.unflatten(aux, tuple(_zeros_like(v) for v in children))
    return np.zeros_like(x)


zeros_like = _internal("ad.zeros_like", _zeros_like, differentiable=False).facts(pure=True)
# weak as its operand (JAX: the gradient of a function that ignores a weak point is
# a weak zero; jit's abstract values read it)
zeros_like.facts(keeps_weak=True)


def _add_any(a, b):
    """Add two cotangents leafwise (dict / list / tuple pytrees); ``None`` is zero."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, dict):
        return {k: _add_any(a.get(k), b.get(k)) for k in a}
    if isinstance(a, (list, tuple)):
        vals = [_add_any(u, v) for u, v in zip(a, b)]
        if isinstance(a, list):
            return vals
        return type(a)(*vals) if hasattr(a, "_fields") else tuple(vals)
    return a + b


add_any = _internal("ad.add_any", _add_any)


def_identity(add_any, 2)  # a sum
add_any.samples = lambda rng: [((rng.normal(size=(2, 3)), rng.normal(size=(2, 3))), {})]
