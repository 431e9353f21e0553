"""Structural primitives: reshape, transpose, concatenate, indexing, ``.at[]``, sort, ...

Conventions the transforms must know:

- List parameters (``concatenate(arrays)``, ``stack(arrays)``, ``hstack(tup)``,
  ``vstack(tup)``): the vjp rule returns a Python list of cotangents, one per
  element; the jvp rule receives the full list of element tangents (zeros for
  inactive elements) as ``t``.
- List outputs (``split``, ``array_split``, ``unstack``): the cotangent ``g`` is a
  list with one entry per piece; ``None`` entries (pieces that were not used)
  are allowed and read as zeros.
- ``getitem(x, idx)`` is operator ``[]`` (public ``ad.getitem``); ``idx`` is never
  differentiated. ``at_set/at_add/at_multiply/at_min/at_max(x, idx, v)`` are the
  functional ``x.at[idx].<op>(v)``: they return a new array and are
  differentiable in ``x`` and ``v`` (``v`` may broadcast to ``x[idx]``; its
  rules un-broadcast themselves).

One module per job: :mod:`.layout`, :mod:`.joining`, :mod:`.take`,
:mod:`.pad_diag`, :mod:`.sorting`, :mod:`.diff`, :mod:`.interp`, :mod:`.at`,
:mod:`.dynamic`. Importing the package registers them all, in this order.
"""

from __future__ import annotations

# ruff: noqa: I001
# (the imports register the primitives: their order is the registration order)

from .layout import *  # noqa: F403
from .layout import __all__ as _layout_all
from .joining import *  # noqa: F403
from .joining import __all__ as _joining_all
from .joining import fill_none  # noqa: F401
from .take import *  # noqa: F403
from .take import __all__ as _take_all
from .take import take_adjoint, take_along_axis_adjoint  # noqa: F401
from .pad_diag import *  # noqa: F403
from .pad_diag import __all__ as _pad_diag_all
from .pad_diag import diagonal_adjoint  # noqa: F401
from .sorting import *  # noqa: F403
from .sorting import __all__ as _sorting_all
from .diff import *  # noqa: F403
from .diff import __all__ as _diff_all
from .interp import *  # noqa: F403
from .interp import __all__ as _interp_all
from .at import at_add, at_max, at_min, at_multiply, at_set  # noqa: F401
from .dynamic import dynamic_slice, dynamic_update_slice  # noqa: F401
from ..ad import getitem  # noqa: F401  (operator [], defined in ad)

__all__ = [
    *_layout_all,
    *_joining_all,
    *_take_all,
    *_pad_diag_all,
    *_sorting_all,
    *_diff_all,
    *_interp_all,
]
del _layout_all, _joining_all, _take_all, _pad_diag_all, _sorting_all, _diff_all, _interp_all
