"""``srcjax.numpy.linalg`` (``jnp.linalg``): linear algebra with JAX semantics.

Every function is a registered primitive with public name ``jnp.linalg.<name>``
(see :mod:`srcjax.primitives.linalg`), differentiable with JAX's conventions.
"""

from __future__ import annotations

from ..primitives.linalg import (
    cholesky,
    det,
    eigh,
    eigvalsh,
    inv,
    matrix_power,
    norm,
    pinv,
    qr,
    slogdet,
    solve,
    svd,
)

__all__ = [
    "cholesky",
    "det",
    "eigh",
    "eigvalsh",
    "inv",
    "matrix_power",
    "norm",
    "pinv",
    "qr",
    "slogdet",
    "solve",
    "svd",
]
