"""Primitives the transforms themselves emit: seeding, zero handling, container
updates and ``stop_gradient``.

Public names live in the ``ad`` namespace of generated code (``ad.seed``),
except ``lax.stop_gradient`` (also ``srcjax.stop_gradient``).

One module per job: :mod:`.cotangents` (seeds, checks, sparse cotangents of containers,
``stop_gradient``), :mod:`.attributes`,
:mod:`.custom_checks`, :mod:`.scan`, :mod:`.jacobians`, :mod:`.pytrees`,
:mod:`.printing` (under vmap), :mod:`.carries` (lax loop carries),
:mod:`.derivative_code`. Importing the package registers them all, in this
order.
"""

from __future__ import annotations

# ruff: noqa: I001
# (the imports register the primitives: their order is the registration order)

from ._trees import _class_kind, _fill, class_map, dict_like, static_attrs  # noqa: F401
from .cotangents import *  # noqa: F403
from .cotangents import __all__ as _cotangents_all
from .cotangents import _tree_index_adjoint, fill_holes, mark_tree_outputs, part  # noqa: F401
from .cotangents import pop, pop_like, push  # noqa: F401  (the tape of the reverse sweep)
from .scan import _rows_adjoint, _rows_of, _scan_length, leading_length, tree_slice_adjoint  # noqa: F401
from . import attributes  # noqa: F401  (registers its primitives)
from .custom_checks import _check_aux  # noqa: F401
from . import jacobians  # noqa: F401  (registers its primitives)
from .pytrees import tree_leaves_dense  # noqa: F401
from . import printing  # noqa: F401  (registers its primitives)
from .carries import _carry_same, _check_carry, _check_carry_full, _leaf_dtype  # noqa: F401
from . import derivative_code  # noqa: F401  (registers its primitives)

__all__ = [*_cotangents_all]
del _cotangents_all
