"""Public transformations: thin wrappers that build, cache and call generated code.

Modules: :mod:`.gradient` (``grad``, ``value_and_grad``), :mod:`.printing`
(``source``), :mod:`.transformed` (the :class:`Transformed` base class and the
fixed-arity wrappers every transform uses), :mod:`.args` (canonical arguments
and grad's checks of them), :mod:`.float0` (``allow_int``'s float0 gradients).
The other public transforms live beside this package (``api_fwd``,
``jit_api``, ``vmap_api``, ``pmap_api``, ``custom``); they import the shared
pieces from here.
"""

from __future__ import annotations

from .args import _as_f32, _canon_args, _canon_leaf, _check_leaves, _kind, _map_leaves  # noqa: F401
from .float0 import FLOAT0  # noqa: F401
from .gradient import _unsupported_options, grad, value_and_grad  # noqa: F401
from .printing import source
from .transformed import (  # noqa: F401
    _TRANSFORM_CACHE,
    TRANSFORMED,
    Transformed,
    _missing_defaults,
    fixed_arity,
    keywords_bound,
)

__all__ = ["grad", "value_and_grad", "source", "Transformed"]
