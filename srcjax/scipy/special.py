"""``srcjax.scipy.special``: special functions, as ``jax.scipy.special``.

The transcendental functions are computed by SciPy (an optional extra,
imported on first use). ``expit`` is the ``nn.sigmoid`` primitive and
``logsumexp`` the reduction primitive shared with ``srcjax.nn``.
"""

from __future__ import annotations

from ..primitives.nn import log_softmax, softmax
from ..primitives.nn import sigmoid as expit
from ..primitives.reductions import logsumexp
from ..primitives.special import (
    digamma,
    erf,
    erfc,
    erfinv,
    gamma,
    gammaln,
    log_ndtr,
    logit,
    ndtr,
    ndtri,
    polygamma,
    xlog1py,
    xlogy,
)

__all__ = [
    "digamma",
    "erf",
    "erfc",
    "erfinv",
    "expit",
    "gamma",
    "gammaln",
    "log_ndtr",
    "log_softmax",
    "logit",
    "logsumexp",
    "ndtr",
    "ndtri",
    "polygamma",
    "softmax",
    "xlog1py",
    "xlogy",
]
