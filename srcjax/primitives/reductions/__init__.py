"""Reduction primitives: sum, mean, prod, max, min, var, std, cumsum, ...

Every reduction takes ``axis`` (None, int, negative int or tuple) and
``keepdims`` like :mod:`jax.numpy`. Gradient conventions follow JAX:

- ``max``/``min`` split the cotangent equally among tied extrema;
- ``prod`` and ``cumprod`` gradients are exact with zeros in the input (no
  division by ``x``);
- ``std`` of a constant input has a NaN gradient (``sqrt`` at 0), ``var`` a zero
  one;
- ``argmax``/``argmin`` pick the first of tied extrema; they are not
  differentiable.

One module per job: :mod:`.basic` (mean, prod, max, min), :mod:`.moments`
(var, std), :mod:`.cumulative`, :mod:`.logsumexp`, :mod:`.logical`,
:mod:`.order` (median, quantile, top_k), :mod:`.nan`. Importing the package
registers them all, in this order.
"""

from __future__ import annotations

# ruff: noqa: I001
# (the imports register the primitives: their order is the registration order)

from ._common import *  # noqa: F403
from ._common import __all__ as _common_all
from .basic import *  # noqa: F403
from .basic import __all__ as _basic_all
from .moments import *  # noqa: F403
from .moments import __all__ as _moments_all
from .cumulative import *  # noqa: F403
from .cumulative import __all__ as _cumulative_all
from .logsumexp import logsumexp  # noqa: F401
from .logical import *  # noqa: F403
from .logical import __all__ as _logical_all
from .order import *  # noqa: F403
from .order import __all__ as _order_all
from .order import top_k, top_k_indices  # noqa: F401
from .nan import *  # noqa: F403
from .nan import __all__ as _nan_all

__all__ = [
    *_common_all,
    *_basic_all,
    *_moments_all,
    *_cumulative_all,
    *_logical_all,
    *_order_all,
    *_nan_all,
]
del _common_all, _basic_all, _moments_all, _cumulative_all, _logical_all, _order_all, _nan_all
