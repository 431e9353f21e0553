"""Linear-algebra primitives: dot, matmul (``@``), einsum, ..., and ``jnp.linalg.*``.

Products (``dot``, ``matmul``, ``inner``, ``tensordot``, ``einsum``, ``kron``)
differentiate through einsum: each is described by an einsum specification and
its adjoints are einsums of the transposed specification (``ad.einsum_vjp_spec``),
un-broadcast to the operand's shape (batch dimensions of ``matmul`` and ``...``
of ``einsum`` broadcast). ``jnp.linalg.*`` primitives (``inv``, ``solve``,
``det``, ``slogdet``, ``cholesky``, ``eigh``, ``eigvalsh``, ``norm``) follow
JAX's gradient conventions; ``norm`` at 0 has a NaN gradient, as in JAX.

One module per job: :mod:`.einsum`, :mod:`.products` (the bilinear products),
:mod:`.bilinear` (their BLAS adjoints, ``cross``), :mod:`.solve` (inv, solve,
det, slogdet), :mod:`.decompositions` (cholesky, eigh), :mod:`.norm`,
:mod:`.svd` (qr, svd, pinv, matrix_power), :mod:`.triangular`
(solve_triangular), :mod:`.eig`. Importing the package registers them all, in
this order.
"""

from __future__ import annotations

# ruff: noqa: I001
# (the imports register the primitives: their order is the registration order)

from .einsum import *  # noqa: F403
from .einsum import __all__ as _einsum_all
from .products import *  # noqa: F403
from .products import __all__ as _products_all
from .products import _contraction_error  # noqa: F401
from .solve import det, inv, inv_or_inf, slogdet, solve  # noqa: F401
from .bilinear import *  # noqa: F403
from .bilinear import __all__ as _bilinear_all
from .bilinear import _dot_left, _dot_right, _matmul_left, _matmul_right  # noqa: F401
from .triangular import solve_triangular  # noqa: F401
from .decompositions import cholesky, dense_tree, eigh, eigvalsh  # noqa: F401
from .norm import norm  # noqa: F401
from .svd import matrix_power, pinv, qr, svd  # noqa: F401
from .eig import eig, eigvals  # noqa: F401
from ..structural import matrix_transpose  # noqa: F401  (jnp.linalg.matrix_transpose)

__all__ = [*_einsum_all, *_products_all, *_bilinear_all]
del _einsum_all, _products_all, _bilinear_all
