"""Core structural primitives and the internal helpers the AD transforms emit.

This package is the bottom layer of the non-elementwise primitives: it defines
the few user-facing primitives that every adjoint rule needs (``jnp.sum``,
``jnp.reshape``, ``jnp.moveaxis``, ``jnp.expand_dims``, ``jnp.broadcast_to``,
``jnp.triu``, ``jnp.tril``, ``jnp.getitem``), re-exported by
:mod:`~srcjax.primitives.reductions` and :mod:`~srcjax.primitives.structural`,
and the internal helpers with public names ``ad.<name>`` (not exported to
:mod:`srcjax.numpy`). Every differentiable helper carries its own vjp/jvp
rules, so generated gradient code can be differentiated again.

Conventions the transforms rely on:

- ``ad.unbroadcast(g, x)`` sums ``g`` down to ``np.shape(x)`` and returns ``g``
  itself (the same object) when the shapes already match; a Python scalar
  ``x`` gives a NumPy scalar.
- ``ad.zeros_like(x)`` and ``ad.add_any(a, b)`` work leafwise on pytrees
  (dict / list / tuple); ``add_any`` treats ``None`` as a symbolic zero.
- ``ad.index_adjoint(g, x, idx)`` is the adjoint of ``x[idx]`` (arrays: scatter
  with accumulation of duplicate indices; containers: same container, zeros
  elsewhere).
- ``ad.expand_reduced(g, x, axis, keepdims)`` broadcasts a reduction's
  cotangent back to ``np.shape(x)`` (a read-only broadcast view).

One module per job: :mod:`.sums` (sum, unbroadcast, broadcast_to),
:mod:`.shapes`, :mod:`.zeros`, :mod:`.indexing` (with :mod:`.oob`: JAX out of bounds), :mod:`.casts`,
:mod:`.static`, :mod:`.cumprod`. Importing the package registers them all.
"""

from __future__ import annotations

# ruff: noqa: F401, I001
# (the imports register the primitives: their order is the registration order)

from ._common import (
    accumulate,
    is_half_float,
    canonical_dtype,
    default_float,
    default_int,
    int_accumulator,
    norm_axes,
    operand_dtype,
    with_initial,
)  # noqa: F401
from .sums import (
    _FAST_SUM,
    _expand_reduced,
    _unbroadcast,
    broadcast_to,
    def_broadcasting,
    expand_reduced,
    masked_reduction_samples,
    own_or_accumulator,
    reduction_samples,
    sum,
    unbroadcast,
)  # noqa: F401
from .shapes import def_reshaping, expand_dims, moveaxis, reshape, tril, triu  # noqa: F401
from .zeros import _zeros_like, add_any, zeros_like  # noqa: F401
from .indexing import (
    _getitem,
    _index_adjoint,
    flat_positions,
    getitem,
    index_adjoint,
    index_take,
    is_basic_index,
)  # noqa: F401
from .casts import _saturating_cast, astype, keep_if_inexact, project_real  # noqa: F401
from .static import (
    axis_or_zero,
    eye_mask,
    flatten_if_none,
    group_last,
    inverse_permutation,
    ungroup_last,
)  # noqa: F401
from .cumprod import cumprod_jvp, cumprod_vjp, prod_others  # noqa: F401

__all__: list = []  # nothing is exported from this package directly (see the docstring)
