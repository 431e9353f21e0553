"""The arguments of a transformed call: their canonical form (JAX's dtypes,
writable copies, the pytree kinds ``_kind`` tells apart) and the checks
``grad`` applies to the arguments it differentiates (float or complex leaves,
``allow_int``)."""

from __future__ import annotations

import collections
import importlib
from typing import Any, Callable

import numpy as np

from .._array import Array as _Array
from .._array import wrap as _wrap
from .._array import wrap_tree as _wrap_tree
from .._array import wrap_weak as _wrap_weak
from .._dict_order import in_jax_order
from ..errors import NonDifferentiableError, TransformTypeError
from ..frontend.normalize import ClassKind, _static_callable, type_tree
from ..tree_util import _sorted_keys

_cfg = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)


def _x64() -> bool:
    return _cfg.x64_enabled


_TREE_TYPES = (dict, list, tuple)
_LEAF1 = ("leaf",)
_F32 = np.float32
_F64 = np.float64
_ONE32 = np.float32(1.0)
if (_ONE32 * 1.0).dtype == np.float32:  # NumPy >= 2 (NEP 50): a Python float is weak

    def _as_f32(x: float) -> np.float32:
        """``np.float32(x)`` in a quarter of the time (one scalar multiply)."""
        return _ONE32 * x

else:  # pragma: no cover - NumPy 1.x promotes float32 * float to float64
    _as_f32 = np.float32


def _writeable(x: Any) -> Any:
    """``x`` with read-only arrays (broadcast views), also in tuples, namedtuples,
    lists and dicts, replaced by copies; dicts (and defaultdicts) in sorted key
    order, as JAX's outputs (see tree_util._jax_dict_order); a Python number a
    weakly typed Array; every array an Array."""
    t = type(x)
    if t is _F32 or t is _F64:
        return _wrap(x)  # the common scalar case first (W3's per-call cost)
    if t is float:  # computed from weakly typed values only (a Python float's gradient)
        return _wrap_weak(_F64(x) if _x64() else _as_f32(x))
    if t is int or t is complex:
        from ..dtypes import dtype_of

        return _wrap_weak(dtype_of(x).type(x))
    if t is np.ndarray:
        return _wrap_tree(x if x.flags.writeable else x.copy())
    if isinstance(x, tuple):
        items = [_writeable(v) for v in x]
        if all(a is b for a, b in zip(items, x)):
            return x
        return t(*items) if hasattr(x, "_fields") else t(items)
    if t is list:
        return [_writeable(v) for v in x]
    if t is dict or t is collections.defaultdict:
        keys = _sorted_keys(x) if len(x) > 1 else tuple(x)
        items = {k: _writeable(x[k]) for k in keys}
        return items if t is dict else collections.defaultdict(x.default_factory, items)
    return _wrap_tree(x)


def _kind(x: Any, exact: bool = False) -> str:
    """``"leaf"`` or ``"tree"``; for a tree holding instances of registered pytree
    classes, a ``ClassKind`` (equal to ``"tree"``) that carries where they are,
    so generated code can inline their methods (``model(x)``). ``exact``: the type
    tree keeps every list's length (:func:`type_tree`; jit, whose key holds them)."""
    if isinstance(x, _TREE_TYPES) or x is None:
        if x is None or not x:
            return "tree"
        ty = type_tree(x, exact)
        return "tree" if ty is None else ClassKind(ty)
    from .. import tree_util

    if type(x) in tree_util._REGISTRY:
        return ClassKind(type_tree(x, exact))
    if callable(x) and not isinstance(x, np.ndarray) and _static_callable(x):
        # a function argument (mlp(ws, x, act=jnp.tanh)): calls of it resolve to it,
        # so it is part of the key (another function specializes again)
        return ClassKind(("fn", x))
    if _plain_object(x):
        # an instance of a user class that is no pytree (a bound method's self): a
        # value JAX cannot trace either, known while transforming as a closure is
        # for JAX, so `grad(self.energy)` and `self.k` resolve (user X)
        return ClassKind(("fn", x))
    return "leaf"


def _plain_object(x: Any) -> bool:
    """A user-class instance that is no pytree (normalize.plain_object) and can be
    part of a specialization key (hashable; an unhashable one stays a run-time
    value)."""
    from ..frontend.normalize import plain_object

    if not plain_object(x):
        return False
    try:
        hash(x)
    except TypeError:
        return False
    return True


def _canon_leaf(x: Any, wrt: bool) -> Any:
    """JAX's argument canonicalization: Python floats become float32 (float64 with
    x64), float64/int64 arrays are narrowed when x64 is off; an Array is its
    buffer (generated code computes on buffers)."""
    if type(x) is _Array:
        x = x._buf
    if isinstance(x, np.ndarray):
        k = x.dtype.kind
        if not _x64() and x.dtype.itemsize == 8 and k in "fiu":
            return x.astype(np.float32 if k == "f" else np.int32)
        return x
    if isinstance(x, float):
        return np.float64(x) if _x64() else np.float32(x)
    if isinstance(x, complex):  # complex64 unless x64, as JAX
        return np.complex128(x) if _x64() else np.complex64(x)
    if isinstance(x, np.floating) and not _x64() and x.dtype == np.float64:
        return np.float32(x)
    if wrt and isinstance(x, (bool, int, np.integer, np.bool_)):
        if isinstance(x, int) and not isinstance(x, bool):  # a Python int is int32 in JAX
            return np.asarray(x, np.int64 if _x64() else np.int32)
        return np.asarray(x)
    return x


def _check_float(x: Any, argnum: int, what: str = "grad", allow_int: bool = False) -> None:
    dt = getattr(x, "dtype", None)
    if dt is None:
        if isinstance(x, (bool, int)):
            if allow_int:
                return
            dt = np.dtype(np.int32) if not isinstance(x, bool) else np.dtype(bool)
        elif isinstance(x, (float, complex)):
            return
        else:
            raise TransformTypeError(
                f"Argument {argnum} of type {type(x)} is not a valid JAX type: "
                "a differentiated argument must be an array, a Python number or a pytree of them",
                hint="pass a float array, e.g. jnp.asarray(x, jnp.float32)",
            )
    if dt.kind in "fc":
        return  # (the common case first: dtype.name is a slow property)
    if dt.name == "bfloat16":  # (ml_dtypes' bfloat16, NumPy kind "V": a float here)
        return
    if dt.kind == "V" and dt.name.startswith(("float8", "float6", "float4")):
        raise TransformTypeError(
            f"srcjax does not support the {dt.name} dtype yet (argument {argnum}): it is an "
            "ml_dtypes extension type that srcjax's dtype rules do not know, so results "
            "would not have JAX's dtypes",
            hint=f"convert it first, e.g. x.astype(np.float32), and back to {dt.name} "
            "after the transformed call if needed",
        )
    if allow_int and dt.kind in "biu":
        return
    if dt.kind not in "fc":
        raise NonDifferentiableError(
            f"{what} requires real- or complex-valued inputs (input dtype that is a sub-dtype "
            f"of np.inexact), but got {dt.name}. (argument {argnum})",
            hint="pass a float array, e.g. jnp.asarray(x, jnp.float32), or keep the integer "
            "values out of the differentiated argument (a closure or another argnum), "
            "or pass allow_int=True to grad (their gradient is then float0 zeros)",
        )


def _map_leaves(fn: Callable, x: Any) -> Any:
    if isinstance(x, dict):
        items = ((k, _map_leaves(fn, v)) for k, v in x.items())
        if isinstance(x, collections.defaultdict):  # keeps its factory, as JAX
            return type(x)(x.default_factory, items)
        return type(x)(items)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_map_leaves(fn, v) for v in x])
    if isinstance(x, (list, tuple)):
        return type(x)(_map_leaves(fn, v) for v in x)
    if x is None:
        return None
    from .. import tree_util

    reg = getattr(tree_util, "_REGISTRY", {})
    if type(x) in reg:
        return tree_util.tree_map(fn, x)
    return fn(x)


def _canon_args(args: Any) -> tuple:
    """JAX's argument canonicalization of a call's positional arguments, as grad
    does it: Python floats become float32 arrays (float64 with x64), 64-bit arrays
    narrow when x64 is off; dicts in JAX's key order (``_dict_order.in_jax_order``)."""
    return tuple(_map_leaves(lambda v: _canon_leaf(v, False), in_jax_order(a)) for a in args)


def _check_leaves(x: Any, argnum: int, what: str = "grad", allow_int: bool = False) -> None:
    """``_check_float`` on every leaf of ``x`` (without rebuilding ``x``: a
    registered class need not accept non-array children)."""
    from .. import tree_util

    for v in tree_util.tree_leaves(x):
        _check_float(v, argnum, what, allow_int)


#: python function -> {transform key: generated function}; shared by every
#: transform object, so ``srcjax.grad(f)(x)`` in a loop transforms ``f`` once.


def positional_names(fun: Callable) -> list:
    """The names of ``fun``'s positional parameters (``inspect.signature``'s
    TypeError/ValueError for a callable without one)."""
    import inspect

    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return [p.name for p in inspect.signature(fun).parameters.values() if p.kind in kinds]
