"""``all``, ``any`` and ``count_nonzero`` (not differentiable)."""

from __future__ import annotations

import numpy as np

from srcjax.primitives.ad import (
    default_int,
)

from ._common import _reduction

__all__ = ["all", "any", "count_nonzero"]

# ---------------------------------------------------------------------------
# all / any / count_nonzero (not differentiable)


def _all(a, axis=None, keepdims=False, where=None):
    """True where all elements along ``axis`` are nonzero (jax.numpy.all);
    ``where``: a mask broadcastable to ``a``, only its true elements count."""
    if where is None:
        return np.all(a, axis=axis, keepdims=keepdims)
    return np.all(a, axis=axis, keepdims=keepdims, where=where)


def _any(a, axis=None, keepdims=False, where=None):
    """True where any element along ``axis`` is nonzero (jax.numpy.any);
    ``where``: a mask broadcastable to ``a``, only its true elements count."""
    if where is None:
        return np.any(a, axis=axis, keepdims=keepdims)
    return np.any(a, axis=axis, keepdims=keepdims, where=where)


def _count_nonzero(a, axis=None, keepdims=False):
    """Number of nonzero elements along ``axis`` (jax.numpy.count_nonzero); int32
    unless x64."""
    return np.asarray(np.count_nonzero(a, axis=axis, keepdims=keepdims), dtype=default_int())


all = _reduction("jnp.all", _all, np.all, differentiable=False)  # noqa: A001
any = _reduction("jnp.any", _any, np.any, differentiable=False)  # noqa: A001
count_nonzero = _reduction(
    "jnp.count_nonzero", _count_nonzero, np.count_nonzero, differentiable=False
)
