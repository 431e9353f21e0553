"""``srcjax.numpy``: the NumPy API with JAX semantics (``import srcjax.numpy as jnp``).

Every function here is a registered primitive (see
:mod:`srcjax.primitives.registry`), re-exported under its ``jnp`` name, so
user code ported from JAX only changes its imports; some (``average``,
``cov``, ``polyval``, ``convolve``, ``rot90``, ``select``, ``bincount`` ... the
functions of ``_functions.py``) are compositions of primitives that transformed
code inlines like user functions. ``nonzero``, ``argwhere`` and ``unique``
(``setops.py``) have value-dependent result sizes: ``size=`` is optional
outside vmap, as srcjax does not trace. Results are
:class:`srcjax.Array` objects (immutable, see :mod:`srcjax._array`) with JAX's dtypes: float32 and
int32 by default, float64/int64 with ``jax_enable_x64``, and weakly typed
Python scalars (``float32_array * 2.0`` stays float32). See
:mod:`srcjax.dtypes`.
"""

# ruff: noqa: F401 (this module re-exports)
from __future__ import annotations

import sys as _sys

import numpy as _np

from .. import _array
from ..codegen.emit import register_namespace as _register_namespace
from ..dtypes import ML_DTYPES as _ML_DTYPES
from ..dtypes import (
    bool_,
    complex64,
    complex128,
    dtype,
    finfo,
    float16,
    float32,
    float64,
    iinfo,
    int8,
    int16,
    int32,
    int64,
    issubdtype,
    promote_types,
    result_type,
    uint8,
    uint16,
    uint32,
    uint64,
)
from ..dtypes import ml_dtype as _ml_dtype
from ..primitives.creation import *  # noqa: F403
from ..primitives.elementwise import *  # noqa: F403
from ..primitives.linalg import *  # noqa: F403
from ..primitives.methods import register_function_methods as _register_function_methods
from ..primitives.reductions import *  # noqa: F403
from ..primitives.setops import *  # noqa: F403
from ..primitives.structural import *  # noqa: F403
from . import fft, linalg
from ._functions import *  # noqa: F403  (compositions; jnp.cross adds 2-vectors)
from ._more import *  # noqa: F403  (more compositions: nanquantile, insert, partition ...)
from ._vectorize import vectorize  # jnp.vectorize: generated functions over srcjax.vmap

_array.HOOKS["numpy"] = _sys.modules[__name__]  # (Array's methods are these functions)

# JAX's scalar types: stand for NumPy's as dtypes; called, a strong 0-d Array
# (jnp.int32(7) is Array(7, dtype=int32)); srcjax.dtypes keeps NumPy's own types
from ._scalar_types import scalar_type as _scalar_type  # noqa: E402

bool_ = _scalar_type(bool_)
float16, float32, float64 = map(_scalar_type, (float16, float32, float64))
complex64, complex128 = _scalar_type(complex64), _scalar_type(complex128)
int8, int16, int32, int64 = map(_scalar_type, (int8, int16, int32, int64))
uint8, uint16, uint32, uint64 = map(_scalar_type, (uint8, uint16, uint32, uint64))
bool = bool_  # noqa: A001 (jnp.bool, the array-API name)
ndarray = _array.Array  # jnp.ndarray is jax.Array in JAX
generic = _np.generic
number = _np.number
inexact = _np.inexact
floating = _np.floating
integer = _np.integer
signedinteger = _np.signedinteger
unsignedinteger = _np.unsignedinteger
complexfloating = _np.complexfloating

pi = _np.pi
e = _np.e
euler_gamma = _np.euler_gamma
inf = _np.inf
nan = _np.nan
newaxis = None

# jnp.save / load / savez / savez_compressed: NumPy's .npy/.npz format (arrays are
# NumPy arrays here, so NumPy's functions are JAX's)
save = _np.save
load = _np.load
savez = _np.savez
savez_compressed = _np.savez_compressed

__all__ = [n for n in dir() if not n.startswith("_") and n not in ("annotations",)]


def __getattr__(name: str):
    """``jnp.bfloat16``, ``jnp.float8_e4m3fn`` ...: the scalar types of
    ``ml_dtypes`` (as in JAX), imported on first use; an AttributeError naming
    the extra ``srcjax[ml-dtypes]`` when it is missing."""
    if name in _ML_DTYPES:
        return _ml_dtype(name, "srcjax.numpy")
    raise AttributeError(f"module 'srcjax.numpy' has no attribute {name!r}")


_register_namespace("jnp", _sys.modules[__name__])  # generated code's `jnp`
_register_function_methods(_sys.modules[__name__])  # x.ptp() under transforms
