"""Helpers shared by the modules of :mod:`srcjax.primitives.ad`: canonical dtypes,
accumulator dtypes of reductions, axis normalization, registration.
"""

from __future__ import annotations

import numpy as np

from srcjax import dtypes as _dt
from srcjax.primitives.registry import Primitive, register

canonical_dtype = _dt.canonicalize_dtype
default_float = _dt.default_float
default_int = _dt.default_int


def int_accumulator(dtype):
    """Accumulation dtype of ``sum``/``prod``/``cumsum`` for bool/int inputs (JAX
    promotes to the default-width int / uint), ``None`` for other dtypes."""
    kind = np.dtype(dtype).kind
    if kind in "bi":
        return default_int()
    if kind == "u":
        return _dt.default_uint()
    return None


def accumulate(reduce, x, dtype=None, **kwargs):
    """``reduce(x, dtype=dtype, **kwargs)`` (a NumPy reduction or scan) with JAX's
    accumulation: a float16 result is accumulated in float32 and rounded back
    once at the end (``sum(ones(3000, float16))`` is 3000, not 2048; the
    variance of float16 data whose squares overflow float16 is finite); so is
    a bfloat16 one (JAX's ``_upcast_f16_for_computation``)."""
    dt = np.result_type(x) if dtype is None else np.dtype(dtype)
    if dt.itemsize != 2 or not is_half_float(dt):
        return reduce(x, dtype=dtype, **kwargs)
    r = reduce(x, dtype=np.float32, **kwargs)
    with np.errstate(over="ignore"):  # beyond float16's range: inf, as in JAX
        return r.astype(dt)


def with_initial(op, r, initial):
    """A reduction's result ``r`` combined with its ``initial`` value (``sum``'s
    ``initial + sum``, ``prod``'s ``initial * prod``), ``initial`` first
    converted to ``r``'s dtype, as JAX's reductions do."""
    r = np.asarray(r)
    with np.errstate(over="ignore"):
        return op(r, np.asarray(initial).astype(r.dtype))


def is_half_float(dt) -> bool:
    """Whether dtype ``dt`` is float16 or ml_dtypes' bfloat16: the 16-bit floats
    JAX computes in float32 and rounds once."""
    return dt == np.float16 or (dt.kind == "V" and dt.name == "bfloat16")


def operand_dtype(x, name: str):
    """``np.result_type(x)`` of a reduction's operand; for a Python list or tuple of
    arrays (which NumPy would read as a structured dtype spec) JAX's TypeError."""
    try:
        return np.result_type(x)
    except TypeError:
        raise TypeError(
            f"{name} requires ndarray or scalar arguments, got {type(x)} at position 0."
        ) from None


def norm_axes(axis, ndim):
    """Normalize ``axis`` (None, int, tuple, negative) to a sorted tuple."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(int(a) % ndim if ndim else 0 for a in axis))
    return (int(axis) % ndim if ndim else 0,)


def _internal(public, impl, differentiable=True):
    return register(Primitive(public, impl, kind="internal", differentiable=differentiable))


def _structural(public, impl, *aliases):
    return register(Primitive(public, impl, kind="structural"), *aliases)


#: dtypes :func:`broadcast_view` builds views of itself (NumPy's own numbers;
#: extension dtypes such as bfloat16 go through np.broadcast_to)
_VIEW_DTYPES = frozenset(np.dtype(t) for t in "?bhilqBHILQefdgFDG")


def broadcast_view(a, shape):
    """``np.broadcast_to(a, shape)``: the same read-only view (zero strides on the
    broadcast axes, ``a`` its base), built directly for a C-contiguous ndarray
    (~1.5 us; np.broadcast_to builds an nditer, ~3-5 us, which the reverse
    mode of a small batched loop pays on every cotangent it broadcasts)."""
    if type(a) is np.ndarray and a.dtype in _VIEW_DTYPES and a.size and a.flags.c_contiguous:
        lead = len(shape) - a.ndim
        if lead >= 0:
            strides = [0] * lead
            ok = True
            for n, m, st in zip(a.shape, shape[lead:], a.strides):
                if n == m:
                    strides.append(st)
                elif n == 1:
                    strides.append(0)
                else:
                    ok = False
                    break
            if ok:
                r = np.ndarray(shape, a.dtype, a, 0, strides)
                r.setflags(write=False)  # (~0.4 us less than flags.writeable = False)
                return r
    return np.broadcast_to(a, shape)
