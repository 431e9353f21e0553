"""The cotangent of a real input (``ad.project_real``), ``ad.require_constant``,
and ``ad.astype`` with the casts of its tangents and cotangents.
"""

from __future__ import annotations

import numpy as np

from srcjax import dtypes as _dt
from srcjax._array import _WeakArray
from srcjax._array import wrap_weak as _wrap_weak
from srcjax.primitives.registry import Primitive, register

from ._common import _internal
from .linear import def_adjoint_pair, def_linear, def_with_adjoint

# ---------------------------------------------------------------------------
# the cotangent of a real input


_REAL_SCALARS = frozenset({np.float32, np.float64, np.float16, float})


def _project_real(g, x):
    """The gradient of input ``x`` from its accumulated cotangent ``g``: the real
    part when ``x`` is real and ``g`` complex (a complex intermediate on the path:
    JAX's convention, where converting a real value to complex transposes to
    taking the real part), else ``g`` itself; a floating ``g`` takes the floating
    dtype of ``x`` (JAX: a gradient has its primal's dtype, even when float64 data
    or a ``dtype=float16`` reduction widened or narrowed the cotangent on the way).
    Containers leaf by leaf."""
    t = type(g)
    if t is type(x) and t in _REAL_SCALARS:
        return g  # the common case, first (it ends every gradient: W3 per-call cost)
    if type(x) is float:
        return _weak_cotangent(g)
    d = getattr(g, "dtype", None)
    if d is not None:
        if d.kind != "c":
            dx = getattr(x, "dtype", None)
            if dx is not None and dx != d and dx.kind == "f" and d.kind == "f":
                return np.asarray(g).astype(dx)[()] if t is not np.ndarray else g.astype(dx)
            return g
        dx = getattr(x, "dtype", None)
        if dx.kind == "c" if dx is not None else isinstance(x, complex):
            # a complex gradient has its primal's dtype (grad(real(z ** z)) was
            # complex128 for a complex64 z: user X)
            return g.astype(dx) if dx is not None and dx != d else g
        return np.real(g).copy()[()]
    if isinstance(g, complex):
        return g if isinstance(x, complex) or getattr(x, "dtype", _F).kind == "c" else g.real
    if g is None or isinstance(g, (float, int)):
        return g
    if _all_real(g):
        return g  # the common case: nothing complex, the container itself
    from srcjax import tree_util

    # None holes (zero cotangents) stay None
    return tree_util.tree_map(_project_real, g, x, is_leaf=lambda v: v is None)


def _weak_cotangent(g):
    """The cotangent of a weakly typed Python float: a Python float holding the
    value in the default float dtype (float32 unless x64), as JAX's gradient of a
    weak input is weak float32 (``grad(lambda x: x * y)(1.0)`` with a float16
    ``y`` is float32, weak). Transform boundaries make it a weak Array."""
    t = type(g)
    if t is float or g is None:
        return g
    if t is int or t is bool:
        return float(g)
    if t is complex:
        return g.real
    d = getattr(g, "dtype", None)
    if d is None:
        return g
    if np.shape(g) != ():
        # a batch of them (vmap(grad(f), in_axes=(None, 0))(2.0, float16_y)):
        # the default float dtype too (weak at jit's and vmap's boundaries)
        if d.kind not in "fc" and not _dt._is_bfloat16(d):
            return g
        want = _dt.default_float()
        g = np.real(g) if d.kind == "c" else g
        return g if g.dtype == want else g.astype(want)
    if d.kind == "c":
        g = np.real(g)
    if d.itemsize > 4 and not _dt.x64_enabled():
        return float(np.float32(g))
    return float(g)


def _require_constant(x, pname, message):
    """Raise ``NoDerivativeRuleError(message)`` when ``x`` (or a leaf of it) is
    floating or complex: it reached a parameter ``pname`` of a primitive that has
    no derivative rule for it on a differentiated path (see
    ``transforms.rules.no_rule_checks``). Integer and boolean values pass: they
    carry no derivative (JAX's float0)."""
    from srcjax import tree_util

    for v in tree_util.tree_leaves(x):
        if isinstance(v, (float, complex)) or getattr(v, "dtype", _BOOL).kind in "fc":
            from ...errors import NoDerivativeRuleError

            err = NoDerivativeRuleError(message)
            err.parameter = pname
            raise err


_BOOL = np.dtype(bool)
require_constant = _internal("ad.require_constant", _require_constant, differentiable=False)

_F = np.dtype(np.float32)


def _weak_value(x):
    """``x`` as a weakly typed ``srcjax.Array`` of the default dtype of its kind
    when it is a number or an array of numbers or bools (a NumPy scalar or
    array, a Python int/float/complex), else ``x``. jit returns a value it knows to be weakly typed (computed from Python
    scalar arguments only, held as NumPy scalars at run time) through this, as
    JAX does (``jit(lambda x: x * 2.0)(1.0)`` is weak float32); it is the last
    call of the generated function, so no generated code sees the Array."""
    t = type(x)
    if t is _F32T or t is _I32T:
        a = _new(_WeakArray)  # (wrap_weak inlined: every weak jit result, W3's grad)
        a._buf = x
        return a
    if t is float or t is int or t is complex:
        return _wrap_weak(_dt.dtype_of(x).type(x))
    d = getattr(x, "dtype", None)
    if d is not None and d.kind in "iufc" and np.shape(x) == ():
        return _wrap_weak(_dt.dtype_of(x.item()).type(x.item()))
    if d is not None and d.kind in "biufc":
        # a weak array (2.5 * int32_array) or bool (x > 0.5), narrowed to 32 bits
        # unless x64 (as every jit output)
        want = _dt.canonicalize_dtype(d)
        return _wrap_weak(np.asarray(x, want) if d != want else x)
    return x


_F32T, _I32T = np.float32, np.int32
_new = object.__new__


weak_value = _internal("ad.weak_value", _weak_value, differentiable=False)
weak_value.samples = lambda rng: [((np.float32(1.5),), {}), ((np.int32(3),), {})]


def _weak_leaves(tree, mask):
    """``tree`` (a dict, list or tuple jit returns) with the leaves that ``mask``
    marks ``True`` through :func:`_weak_value`: ``mask`` has ``tree``'s
    structure (dicts by key, lists and tuples as tuples; ``False`` for a strong
    leaf or subtree). jit's last call, as ``ad.weak_value`` (user 06:
    ``jit(grad(f))({"a": jnp.array(0.0)})["a"]`` is weak in JAX)."""
    if mask is True:
        return _weak_value(tree)
    if isinstance(mask, dict) and isinstance(tree, dict):
        out = tree.copy()
        for k, m in mask.items():
            if m is not False and k in out:
                out[k] = _weak_leaves(out[k], m)
        return out
    if isinstance(mask, tuple) and isinstance(tree, (list, tuple)) and len(mask) == len(tree):
        items = [v if m is False else _weak_leaves(v, m) for v, m in zip(tree, mask)]
        if isinstance(tree, list):
            return items
        return type(tree)(*items) if hasattr(tree, "_fields") else type(tree)(items)
    return tree


weak_leaves = _internal("ad.weak_leaves", _weak_leaves, differentiable=False)
weak_leaves.samples = lambda rng: [
    (({"a": np.float32(1.5), "b": np.ones(2, np.float32)}, {"a": True, "b": False}), {}),
    (((np.float32(1.5), [np.int32(2)]), (False, (True,))), {}),
]


def _all_real(g) -> bool:
    """Whether no leaf of the cotangent container ``g`` is complex (a plain walk of
    dicts, lists and tuples: this runs at the end of every gradient of a pytree)."""
    t = type(g)
    if t is np.ndarray:
        return g.dtype.kind != "c"  # (the common leaf and containers first)
    if t is list or t is tuple:
        for v in g:
            if not _all_real(v):
                return False
        return True
    if isinstance(g, dict):
        return all(map(_all_real, g.values()))
    if isinstance(g, (list, tuple)):
        return all(map(_all_real, g))
    if type(g) is np.ndarray or g is None:
        return g is None or g.dtype.kind != "c"
    d = getattr(g, "dtype", None)
    if d is not None:
        return d.kind != "c"
    if isinstance(g, complex):
        return False
    from ..control._trees import _class_kind

    if _class_kind(g) is not None:
        from srcjax import tree_util

        return all(map(_all_real, tree_util.tree_leaves(g)))
    return True


project_real = _internal("ad.project_real", _project_real).facts(
    pure=True, identity_operand="g", strong_reset=True
)
project_real.facts(same_structure=("g", "x"))


def _project_real_vjp(h, ans, g, x):
    return h  # the transpose of taking the real part: complex(h, 0)


def _project_real_jvp(t, ans, g, x):
    return project_real(t, x)


project_real.def_vjp(g=_project_real_vjp)
project_real.def_jvp(g=_project_real_jvp)
project_real.samples = lambda rng: [((rng.normal(size=(2, 3)), rng.normal(size=(2, 3))), {})]


# ---------------------------------------------------------------------------
# astype


def _astype(x, dtype):
    """``x`` converted to ``dtype`` (jax.numpy.astype); always a new array. The
    dtype is canonicalized as in JAX: ``astype(x, float)`` is float32 and
    ``astype(x, int)`` int32 unless x64. Floating to integer conversion
    saturates as XLA's does (NaN -> 0, out-of-range values -> the type's
    minimum/maximum, truncating toward zero); NumPy's cast is undefined there
    (``astype(uint8)`` of ``[-1, 300]`` is ``[0, 255]`` in JAX, ``[255, 44]`` in
    NumPy)."""
    x = np.asarray(x)
    to = _dt.canonicalize_dtype(dtype)
    if x.dtype.kind == "f" and to.kind in "iu":
        return _saturating_cast(x, to)
    return x.astype(to)


def _saturating_cast(x, to):
    info = np.iinfo(to)
    xf = np.asarray(x, np.float64)
    hi = float(info.max)
    if hi > info.max:  # 2**63 - 1 is not a float64: the largest one below it
        hi = float(np.nextafter(hi, 0.0))
    out = np.asarray(np.clip(np.nan_to_num(xf, nan=0.0), float(info.min), hi)).astype(to)
    return np.where(xf >= info.max, np.asarray(info.max, to), out)


astype = _internal("ad.astype", _astype).facts(cast_dtype_param="dtype")
# it is also the public jnp.astype (and Array.astype): eager calls return Arrays
astype.returns_arrays = True


def _astype_weak(x, dtype):
    """``x`` converted to ``dtype``, whose result jit knows to be weakly typed:
    jit's conversion of an operand to a promoted type that is weak (``2.5 *
    int32_array`` converts the array to float32, weakly typed, as JAX's
    promotion does; srcjax/transforms/optimize/promote.py)."""
    return _astype(x, dtype)


astype_weak = _internal("ad.astype_weak", _astype_weak, differentiable=False).facts(
    cast_dtype_param="dtype", cast_weak=True, pure=True
)
astype_weak.samples = lambda rng: [((rng.integers(-3, 3, size=(2, 3)), "float32"), {})]


def _is_inexact(dtype) -> bool:
    d = np.dtype(dtype)
    return d.kind in "fc" or d.name == "bfloat16"  # (ml_dtypes' bfloat16: kind "V")


def _cast_cotangent(g, x, dtype):
    """The cotangent of ``x`` through ``astype(x, dtype)``: ``g`` in ``x``'s dtype,
    or zeros when ``dtype`` is an integer or bool (the cast has no derivative:
    JAX's float0 tangent)."""
    to = np.result_type(x)
    shape = np.shape(g)
    if shape != np.shape(x):  # under vmap one of them may carry the batch axis
        shape = np.broadcast_shapes(shape, np.shape(x))
    if _is_inexact(dtype):
        return np.broadcast_to(np.asarray(g).astype(to, copy=False), shape)
    return np.zeros(shape, to if _is_inexact(to) else np.float32)


def _cast_tangent(t, dtype):
    """The tangent of ``astype(x, dtype)``: ``t`` cast, or zeros (of ``t``'s
    dtype) when ``dtype`` is an integer or bool."""
    if _is_inexact(dtype):
        return np.asarray(t).astype(_dt.canonicalize_dtype(dtype))
    return np.zeros_like(t)


def _keep_if_inexact(v, dtype):
    """``v`` where a conversion to ``dtype`` keeps derivatives (``dtype`` None or
    floating), zeros of ``v``'s shape and dtype where it is an integer or bool."""
    if dtype is None or _is_inexact(dtype):
        return v
    return np.zeros_like(v)


keep_if_inexact = register(Primitive("ad.keep_if_inexact", _keep_if_inexact))


def_linear(keep_if_inexact)
keep_if_inexact.samples = lambda rng: [((rng.normal(size=(2, 3)), "float32"), {})]

cast_cotangent = register(Primitive("ad.cast_cotangent", _cast_cotangent))
cast_tangent = register(Primitive("ad.cast_tangent", _cast_tangent))


def_adjoint_pair(cast_tangent, cast_cotangent)
cast_cotangent.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), "float64"), {})
]
cast_tangent.samples = lambda rng: [((rng.normal(size=(2, 3)), "float64"), {})]


def_with_adjoint(astype, cast_cotangent, tangent=cast_tangent)
astype.samples = lambda rng: [((rng.normal(size=(2, 3)), "float64"), {})]
