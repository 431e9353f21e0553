"""Convolutions and windowed reductions (``jax.lax.conv_general_dilated``,
``lax.conv``, ``lax.conv_with_general_padding``, ``lax.conv_transpose``,
``lax.conv_dimension_numbers``, ``lax.reduce_window``), JAX 0.10.2 semantics.

One primitive computes every convolution: ``ad.conv`` in the canonical layout
(``lhs`` ``(N, C, *spatial)``, ``rhs`` ``(O, I, *window)``, result ``(N //
batch_group_count, O, *out_spatial)``) with explicit ``(lo, hi)`` padding (either
may be negative: a crop). Its implementation zero-stuffs ``lhs`` for
``lhs_dilation``, pads, takes strided windows with
``numpy.lib.stride_tricks.sliding_window_view`` (``rhs_dilation`` and the strides
are steps of that view) and does one batched ``matmul`` over the feature (or
batch) groups. Its adjoints are convolutions again (the ``lhs`` one with the
flipped kernel, strides as ``lhs_dilation``; the ``rhs`` one with the batch and
feature dimensions swapped), written with ``ad.conv`` itself, so derivatives of
any order work; its tangents are ``ad.conv`` with the tangent in place of one
operand. Its batching rule folds the vmapped axis into the batch dimension, the
output features, or (both operands batched) the feature or batch groups.

The public functions are compositions (plain Python that transformed code
inlines): static bookkeeping (dimension numbers, string padding, dtype checks)
in non-differentiable ``ad.conv_*`` helpers, transposes to and from the
canonical layout, and ``ad.conv``.

``reduce_window`` supports the monoids JAX has dedicated primitives for:
``lax.add`` (a convolution with a kernel of ones, so its derivatives are
convolutions), ``lax.max`` and ``lax.min`` (``ad.reduce_window_chooser``, whose
derivatives route the tangent/cotangent through the element each window
selected, the first in window order among ties, as XLA's select-and-scatter).

One module per job: :mod:`.plans` (static bookkeeping), :mod:`.canonical`
(``ad.conv``), :mod:`.convolutions` (the public functions), :mod:`.windows`
(``reduce_window``), :mod:`.chooser`. Importing the package registers them all,
in this order.
"""

from __future__ import annotations

# ruff: noqa: I001
# (the imports register the primitives: their order is the registration order)

from .plans import *  # noqa: F403
from .plans import __all__ as _plans_all
from .convolutions import *  # noqa: F403
from .convolutions import __all__ as _convolutions_all
from .windows import def_window_computation  # noqa: F401
from .chooser import *  # noqa: F403
from .chooser import __all__ as _chooser_all
from .chooser import _window_arg_extreme, _window_extreme  # noqa: F401

__all__ = [*_plans_all, *_convolutions_all, *_chooser_all]
del _plans_all, _convolutions_all, _chooser_all
