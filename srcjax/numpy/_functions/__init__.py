"""``jnp`` functions written as compositions of registered primitives.

They are plain Python over primitives, so transformed code inlines them like a
user function: their derivatives and batching come from the primitives they
call (grad, jvp, vmap and jit need nothing more). Static shape bookkeeping is
done by the non-differentiable ``ad.*`` helpers of :mod:`._static`.

This package re-exports its modules' functions: ``stats`` (creation helpers,
statistics, polynomials/convolution/integration), ``layout`` (shape and
layout), ``elementwise`` and ``counting`` (searching, set membership,
counting, histograms, NaN-aware cumulative functions).
"""

from __future__ import annotations

__all__ = [
    "allclose",
    "angle",
    "append",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
    "average",
    "bincount",
    "column_stack",
    "convolve",
    "copysign",
    "cov",
    "cross",
    "cumulative_sum",
    "digitize",
    "divmod",
    "dsplit",
    "dstack",
    "ediff1d",
    "fliplr",
    "flipud",
    "float_power",
    "heaviside",
    "histogram",
    "histogram_bin_edges",
    "hsplit",
    "isin",
    "iscomplexobj",
    "isscalar",
    "ix_",
    "lexsort",
    "logspace",
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanprod",
    "permute_dims",
    "polyval",
    "ptp",
    "rot90",
    "select",
    "trapezoid",
    "tri",
    "vecdot",
    "vsplit",
]


from ._static import (  # noqa: F401
    bincount_length,
    inexact_dtype,
)
from .counting import (  # noqa: F401
    bincount,
    digitize,
    float_power,
    histogram,
    histogram_bin_edges,
    isin,
    ix_,
    lexsort,
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanprod,
)
from .elementwise import (  # noqa: F401
    angle,
    copysign,
    cumulative_sum,
    divmod,
    ediff1d,
    heaviside,
    iscomplexobj,
    isscalar,
    ptp,
    select,
    vecdot,
)
from .layout import (  # noqa: F401
    atleast_1d,
    atleast_2d,
    atleast_3d,
    column_stack,
    dsplit,
    dstack,
    fliplr,
    flipud,
    hsplit,
    permute_dims,
    rot90,
    tri,
    vsplit,
)
from .stats import (  # noqa: F401
    allclose,
    append,
    average,
    convolve,
    cov,
    cross,
    logspace,
    polyval,
    trapezoid,
)
