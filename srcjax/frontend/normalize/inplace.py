"""In-place NumPy operations in transformed code, refused where they would
write into a traced value.

JAX's arrays are immutable: inside ``jax.jit`` (and on a ``jax.Array``)
``np.add.at(x, i, 1)``, ``np.copyto(x, y)`` and ``np.sin(x, out=x)`` raise
``TypeError``, and ``x.fill(0)`` raises ``AttributeError`` (an Array has no
``fill``). srcjax runs NumPy on the buffers themselves, so the same calls
passed through as unknown calls wrote into the caller's array (a
``srcjax.Array``'s buffer or a NumPy argument) under jit, grad and vmap, and
the result was silently wrong (fresh-user bug, session 11). The call rule
``in_place`` (:data:`resolve.CALL_RULES`) refuses them with JAX's error type at
the user's call, and a hint naming the functional form. An in-place call on
host values only (``y = np.zeros(3); np.add.at(y, [0, 0], 1.0)``: NumPy arrays
JAX would not trace either) still runs in NumPy. (Read-only buffers would not be enough: NumPy 2.4's
``ufunc.at`` writes into a read-only array, and flagging every buffer costs
about 0.2 us per array at each boundary.)
"""

from __future__ import annotations

from typing import Any, Optional

import gast
import numpy as np

from ...errors import TransformAttributeError, TransformTypeError
from ...primitives import registry
from .common import _is_numpy_function

#: NumPy functions that write into their first argument -> the functional form
_WRITES_FIRST = {
    np.copyto: "`x = jnp.broadcast_to(y, x.shape).astype(x.dtype)` (or `jnp.where(mask, y, x)`)",
    np.put: "`x = x.at[jnp.unravel_index(idx, x.shape)].set(v)` (or `jnp.put(x, idx, v, inplace=False)`)",
    np.place: "`x = jnp.place(x, mask, v, inplace=False)`",
    np.putmask: "`x = jnp.where(mask, v, x)`",
    np.fill_diagonal: "`x = jnp.fill_diagonal(x, v, inplace=False)`",
    np.put_along_axis: "`x = jnp.put_along_axis(x, idx, v, axis, inplace=False)`",
}
_WRITES_FIRST_NAMES = frozenset(f.__name__ for f in _WRITES_FIRST) | {"shuffle"}

#: ndarray methods that write into the array -> the functional form
_METHODS = {
    "fill": "`x = jnp.full_like(x, v)`",
    "put": "`x = x.at[jnp.unravel_index(idx, x.shape)].set(v)`",
    "itemset": "`x = x.at[idx].set(v)`",
    "resize": "`x = jnp.resize(x, shape)`",
    "setfield": "`x.at[...]` updates",
    "setflags": "a new array instead of changing flags",
    "partition": "`x = jnp.partition(x, k)`",
    "byteswap": "`x = x.byteswap()` (a new array)",
}

_AT_HINT = "`x = x.at[idx].{mode}(v)` (JAX's functional update; repeated indices accumulate)"
_UFUNC_AT_MODE = {"add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide"}
_UFUNC_AT_MODE.update(true_divide="divide", minimum="min", maximum="max", power="power")


#: the in-place operator methods (``x.__iadd__(1)``: JAX's arrays have none)
_IN_PLACE_DUNDERS = frozenset(
    f"__i{op}__"
    for op in "add sub mul matmul truediv floordiv mod pow lshift rshift and or xor".split()
) | {"__setitem__", "__delitem__"}


def _name(func: Any) -> Optional[str]:
    if isinstance(func, gast.Name):
        return func.id
    if isinstance(func, gast.Attribute):
        return func.attr
    return None


def _has_out(e: Any) -> bool:
    return any(
        k.arg == "out" and not (isinstance(k.value, gast.Constant) and k.value.value is None)
        for k in e.keywords
    )


def _positional_out(e: Any) -> bool:
    """``np.add(x, 1, x)``: a ufunc (named by its NumPy name) given more
    positional operands than it takes inputs (the extra one is ``out``)."""
    # (np's own namespace, not getattr: np.__getattr__ warns for names such as
    # `str`, called in srcjax.ops.segment_sum: a FutureWarning under jit; fresh-user round 6)
    u = vars(np).get(_name(e.func) or "")
    return isinstance(u, np.ufunc) and len(e.args) > u.nin


def _byteswap_in_place(e: Any) -> bool:
    args = list(e.args) + [k.value for k in e.keywords if k.arg == "inplace"]
    return any(not (isinstance(a, gast.Constant) and not a.value) for a in args)


def may_write(e: Any) -> bool:
    """A cheap syntactic test: whether call ``e`` may be an in-place NumPy
    operation (:func:`refusal` decides)."""
    name = _name(e.func)
    if name in _METHODS or name in _WRITES_FIRST_NAMES or name in _IN_PLACE_DUNDERS:
        return True
    if name == "at":
        return True
    return _has_out(e) or _positional_out(e)


def refusal(norm: Any, c: Any) -> Optional[Exception]:
    """The located error for the call of callee ``c`` (a ``resolve.Callee``)
    when it is an in-place NumPy operation that writes into (or with) a traced
    value, else None. ``norm`` is the :class:`Normalizer` (its ``_is_host`` and
    ``loc``)."""
    e = c.e
    func = e.func
    operands = list(e.args) + [k.value for k in e.keywords]
    writes_receiver = isinstance(func, gast.Attribute) and (
        func.attr in _METHODS or func.attr in _IN_PLACE_DUNDERS
    )
    if all(norm._is_host(a) for a in operands) and not (
        writes_receiver and not norm._is_host(func.value)
    ):
        return None  # NumPy on host values writes into a host array, as in JAX
    loc = norm.loc(e)
    status, obj = c.resolved(norm)
    if (
        isinstance(func, gast.Attribute)
        and func.attr in _METHODS
        and status in ("local", "dynamic")
    ):
        if func.attr == "byteswap" and not _byteswap_in_place(e):
            return None
        return TransformAttributeError(
            f"`.{func.attr}(...)` writes into an array in place; srcjax's arrays are "
            f"immutable as JAX's are (a jax.Array has no attribute '{func.attr}')",
            loc,
            "use the functional form: " + _METHODS[func.attr],
        )
    if (
        isinstance(func, gast.Attribute)
        and func.attr in _IN_PLACE_DUNDERS
        and status in ("local", "dynamic")
    ):
        return TransformAttributeError(
            f"`.{func.attr}(...)` writes into an array in place; srcjax's arrays are "
            f"immutable as JAX's are (a jax.Array has no attribute '{func.attr}')",
            loc,
            "use the operator, which binds a new array (`x += y`), or `x.at[idx].set(v)`",
        )
    if (
        isinstance(func, gast.Attribute)
        and func.attr == "shuffle"
        and status in ("local", "dynamic")
    ):
        return TransformTypeError(  # rng.shuffle(x), rng a local np.random.Generator
            "`.shuffle(x)` writes into the array `x` in place; srcjax's arrays are "
            "immutable as JAX's are, and inside a transform this would change the "
            "caller's array",
            loc,
            "use the functional form: `x = srcjax.random.permutation(key, x)`",
        )
    if isinstance(func, gast.Attribute) and status in ("local", "dynamic") and _has_out(e):
        return TransformTypeError(
            f"`.{func.attr}(..., out=...)` writes into an array in place; srcjax's arrays "
            "are immutable as JAX's are",
            loc,
            "drop `out=` and bind the result: `y = x.f(...)`",
        )
    if status != "found":
        return None
    what = None
    if getattr(obj, "__name__", None) == "at" and isinstance(
        getattr(obj, "__self__", None), np.ufunc
    ):
        uname = obj.__self__.__name__
        what = f"`np.{uname}.at`"
        hint = _AT_HINT.format(mode=_UFUNC_AT_MODE.get(uname, "apply"))
    elif getattr(obj, "__objclass__", None) is np.ndarray and obj.__name__ in _METHODS:
        what, hint = f"`np.ndarray.{obj.__name__}`", _METHODS[obj.__name__]  # (unbound)
    elif obj in _WRITES_FIRST:
        what, hint = f"`np.{obj.__name__}`", _WRITES_FIRST[obj]
    elif getattr(obj, "__name__", None) == "shuffle" and "numpy" in str(
        getattr(type(getattr(obj, "__self__", None)), "__module__", "")
    ):
        what, hint = "`shuffle`", "`x = srcjax.random.permutation(key, x)`"
    elif (_has_out(e) or _positional_out(e)) and (
        _is_numpy_function(obj) or registry.lookup_callable(obj) is not None
    ):
        what = f"`{getattr(obj, '__name__', 'this function')}(..., out=...)`"
        hint = "drop `out=` and bind the result: `y = jnp.f(x)`"
    if what is None:
        return None
    return TransformTypeError(
        f"{what} writes into an array in place; srcjax's arrays are immutable as "
        "JAX's are, and inside a transform this would change the caller's array",
        loc,
        "use the functional form: " + hint,
    )
