"""Type annotations for srcjax code (``jax.typing``).

``ArrayLike`` is what srcjax functions accept as an array argument (arrays,
NumPy scalars, Python numbers, nested sequences of them); ``DTypeLike`` what
they accept as a dtype. Both are for annotations only, as in JAX
(https://docs.jax.dev/en/latest/jax.typing.html).
"""

from __future__ import annotations

from typing import Any, Union

import numpy as np

from ._array import Array

__all__ = ["Array", "ArrayLike", "DTypeLike"]

ArrayLike = Union[Array, np.ndarray, np.generic, bool, int, float, complex]
DTypeLike = Union[str, type, np.dtype, Any]
