"""Helpers shared by the reduction modules: registration of ``kind="reduction"``
primitives, the elementwise primitives their rules use, NumPy's warnings off.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from srcjax.primitives.ad import (
    sum,
)
from srcjax.primitives.registry import REGISTRY, Primitive, register

__all__ = ["sum"]

exp = REGISTRY["jnp.exp"]
conj = REGISTRY["jnp.conj"]
real = REGISTRY["jnp.real"]


def _reduction(public, impl, *aliases, differentiable=True):
    return register(
        Primitive(public, impl, kind="reduction", differentiable=differentiable), *aliases
    )


#: a fixed mask for the ``where=`` samples (each row keeps at least one element)
_MASK23 = np.array([[True, False, True], [False, True, True]])


@contextlib.contextmanager
def _quiet():
    """NumPy's warnings and floating-point errors off: a reduction over nothing
    (or with ``ddof >= n``) is NaN in JAX without a warning."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


where = REGISTRY["jnp.where"]
