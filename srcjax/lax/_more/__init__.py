"""More of ``jax.lax`` (JAX 0.10.2): precision enums, reductions, elementwise
special functions, structural helpers, ``reduce_precision``, ``custom_root``
and ``custom_linear_solve``.

Most functions here are compositions of registered primitives (plain Python
that transformed code inlines like a user function, so grad/jit/vmap come from
the primitives they call). New primitives are added only where NumPy/SciPy
compute something no existing primitive does (``nextafter``, ``clz``,
``population_count``, ``zeta``, the exponentially scaled Bessel functions,
``betainc``, ``complex``, ``reduce_precision``).

``precision=`` arguments (``Precision.HIGHEST``, ``'highest'``, a pair, a
:class:`DotAlgorithmPreset`) are accepted everywhere JAX accepts them and have
no effect: srcjax computes float32 products with NumPy/BLAS in float32 at
full float32 precision, which is what ``HIGHEST`` asks for on accelerators.

This package re-exports its modules' functions: ``precision``, ``reductions``,
``elementwise`` (with ``reduce_precision``), ``structural`` and ``implicit``
(``custom_root``, ``custom_linear_solve``); ``_static`` holds the static
helpers they share.
"""

from __future__ import annotations

from ...primitives.elementwise import arccosh as acosh
from ...primitives.elementwise import arcsinh as asinh
from ...primitives.elementwise import arctanh as atanh
from ...primitives.special import erfc, polygamma
from ...scipy.special import gammainc as igamma
from ...scipy.special import gammaincc as igammac

__all__ = [
    "DotAlgorithmPreset",
    "approx_max_k",
    "approx_min_k",
    "Precision",
    "PrecisionLike",
    "acosh",
    "asinh",
    "atanh",
    "axis_size",
    "batch_matmul",
    "bessel_i0e",
    "bessel_i1e",
    "betainc",
    "bitcast_convert_type",
    "broadcasted_iota",
    "clz",
    "collapse",
    "conj",
    "custom_linear_solve",
    "custom_root",
    "dynamic_index_in_dim",
    "dynamic_update_index_in_dim",
    "erfc",
    "igamma",
    "igammac",
    "imag",
    "nextafter",
    "optimization_barrier",
    "polygamma",
    "population_count",
    "real",
    "reciprocal",
    "reduce",
    "reduce_and",
    "reduce_max",
    "reduce_min",
    "reduce_or",
    "reduce_precision",
    "reduce_prod",
    "reduce_sum",
    "reduce_xor",
    "select_n",
    "sort_key_val",
    "split",
    "stack",
    "tile",
    "unstack",
    "with_sharding_constraint",
    "zeta",
]


from .elementwise import (  # noqa: F401
    bessel_i0e,
    bessel_i1e,
    betainc,
    bitcast_convert_type,
    clz,
    complex,
    conj,
    imag,
    nextafter,
    population_count,
    real,
    reciprocal,
    reduce_precision,
    select_n,
    zeta,
)
from .implicit import (  # noqa: F401
    custom_linear_solve,
    custom_root,
)
from .precision import (  # noqa: F401
    DotAlgorithmPreset,
    Precision,
    PrecisionLike,
    canonicalize_precision,
)
from .reductions import (  # noqa: F401
    approx_max_k,
    approx_min_k,
    reduce,
    reduce_and,
    reduce_max,
    reduce_min,
    reduce_or,
    reduce_prod,
    reduce_sum,
    reduce_xor,
)
from .structural import (  # noqa: F401
    axis_size,
    batch_matmul,
    broadcasted_iota,
    collapse,
    dynamic_index_in_dim,
    dynamic_update_index_in_dim,
    optimization_barrier,
    sort_key_val,
    split,
    stack,
    tile,
    unstack,
    with_sharding_constraint,
)
