"""Helpers shared by the linear-algebra modules: registration of ``kind="linalg"``
primitives and internal helpers, ``preferred_element_type``, sample inputs.
"""

from __future__ import annotations

import numpy as np

from srcjax import dtypes as _dt
from srcjax.primitives.registry import Primitive, register


def _linalg(public, impl, *aliases, differentiable=True):
    return register(Primitive(public, impl, kind="linalg", differentiable=differentiable), *aliases)


def _internal(public, impl, differentiable=False):
    return register(Primitive(public, impl, kind="internal", differentiable=differentiable))


def _pet(product, preferred_element_type, *operands):
    """``product(*operands)`` with JAX's ``preferred_element_type``: computed in
    that type when it is an integer one for integer operands or an at least as
    wide inexact one (int8 products do not wrap before the cast; f16 matmul
    accumulates in f32), else (float operands, an integer or narrower float
    type) computed in the operands' type and converted. TypeError, as JAX, for
    a type narrower than integer or complex operands' type.

    Operands of an ml_dtypes float type (bfloat16) are multiplied in float32 and
    the result rounded once to JAX's result type, as XLA does: NumPy's matmul
    gives float32 for them and its einsum refuses them (bug 34)."""
    if has_extension_float(operands):
        return extension_product(product, preferred_element_type, operands)
    if preferred_element_type is None:
        return product(*operands)
    want = _dt.canonicalize_dtype(preferred_element_type)
    rt = _dt.result_type(*operands)
    if rt.kind not in "f" and want.itemsize < rt.itemsize:
        raise TypeError(
            "`preferred_element_type` must not be narrower than the original type, got"
            f" preferred_element_type of {want} for result type of {rt}."
        )
    if (want.kind in "iu" and rt.kind in "biu") or (
        want.kind in "fc" and (rt.kind in "biu" or want.itemsize >= rt.itemsize)
    ):
        return product(*(np.asarray(o, dtype=want) for o in operands))
    return np.asarray(product(*operands)).astype(want)


def has_extension_float(operands) -> bool:
    """Whether an operand is an array of an ml_dtypes float type (bfloat16 ...)."""
    return any(getattr(o, "dtype", None) is not None and o.dtype.kind == "V" for o in operands)


def extension_product(product, preferred_element_type, operands):
    """``product(*operands)`` computed with the ml_dtypes operands in float32,
    rounded once to JAX's result type (or ``preferred_element_type``)."""
    want = (
        _dt.result_type(*operands)
        if preferred_element_type is None
        else _dt.canonicalize_dtype(preferred_element_type)
    )
    wide = [np.asarray(o, np.float32) if np.asarray(o).dtype.kind == "V" else o for o in operands]
    return np.asarray(product(*wide)).astype(want)


def _rand(rng, *shape):
    return rng.normal(size=shape)
