"""JAX's dtypes of primitive calls, for :mod:`.registry`.

- The weak type of an eager call (:func:`_weak_call`, JAX's rule
  :func:`srcjax.dtypes.weak_promotion`): which operands are weakly typed (a
  Python int/float/complex, a weak Array), what the implementation is given,
  and whether the result is weak (:func:`_weak` wraps it); ``Primitive.__call__``
  reads these.
- The result dtypes of the non-elementwise kinds (reductions, linear algebra,
  structural, creation, ``nn``): :func:`_jax_dtypes` wraps their
  implementations at ``register`` so a NumPy result of a 64-bit dtype NumPy
  chose where JAX would not is recomputed on the inputs JAX uses
  (:func:`_fix_dtypes`).
"""

from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from .. import _array
from .. import dtypes as _dt
from .._array import Array as _Array
from .._array import _WeakArray
from .._array import wrap_tree as _wrap_tree

#: Python numbers that are weakly typed (bool is not)
_WEAK_SCALARS = frozenset({int, float, complex})


def _options(prim: Any) -> tuple:
    """(positions, names, position of ``dtype``) of ``prim``'s parameters that
    hold options, not operands (its ``static_params``; with ``weak_from``, every
    parameter but that one), for :func:`_weak_call`; cached."""
    opts = prim._weak_options
    if opts is None:
        params = prim._param_names()
        names = prim.static_params
        if prim.weak_from is not None:
            names = frozenset(params) - {prim.weak_from}
        pos = frozenset(i for i, n in enumerate(params) if n in names)
        opts = prim._weak_options = (pos, names, params.index("dtype") if "dtype" in params else -1)
    return opts


#: strong dtypes above every weak type in the lattice: an operand of one of them
#: makes the result strong (jnp.clip(float32_x, 0, 1), jnp.multiply(x, 2.0);
#: Primitive.__call__ then looks for weak Arrays only)
_ABOVE_WEAK = frozenset(np.dtype(c) for c in "efdgFDG")


def _given(a: Any, dt: Any, every: bool) -> Any:
    """What the implementation gets for operand ``a`` of a weak call promoted to
    ``dt``: ``a`` itself unless a weak Array; else its buffer where ``every``
    operand is weak, its Python number where 0-d, its buffer in ``dt`` else."""
    if type(a) is not _WeakArray:
        return a
    b = a._buf
    if every:
        return b
    if b.ndim == 0:
        return b.item()
    return b if b.dtype == dt else b.astype(dt)


def _operands(values: Any, skip_none: bool) -> tuple:
    """``(operands, every)`` for :func:`srcjax.dtypes.weak_promotion`: each value
    as ``(dtype or Python type, weak)`` (a weak Array by its buffer's dtype, a
    Python number by its type, an Array by its buffer), None skipped where
    ``skip_none``; ``every``: whether all of them are weak."""
    out = []
    every = True
    for a in values:
        t = type(a)
        if t is _WeakArray:
            out.append((a._buf.dtype, True))
        elif t in _WEAK_SCALARS:
            out.append((t, True))
        elif a is not None or not skip_none:
            every = False
            out.append((a._buf if t is _Array else a, False))
    return out, every


def _weak_call(prim: Any, args: tuple, kwargs: dict) -> Any:
    """The weak type of an eager elementwise call (JAX's rule,
    :func:`srcjax.dtypes.weak_promotion`) and the operands the implementation
    gets: ``(weak, args, kwargs)``, or None when no operand counts (called when
    one of them is weakly typed: a Python int/float/complex, not bool, or a
    weak Array). When every operand is weak, weak Arrays
    are given as their buffers (computed in the weak dtype: float32, as JAX);
    else a 0-d one as its Python number and a larger one converted to the
    promoted dtype (``(2.5 * int32_array) * float16_array`` is float16)."""
    skip_pos, skip_names, dtype_pos = _options(prim)
    # (a dtype makes the result strong: jnp.asarray(1.0, dtype=float), jnp.bool_(1))
    strong = (
        kwargs.get("dtype") is not None
        or 0 <= dtype_pos < len(args)
        and (args[dtype_pos] is not None)
    )
    given = [a for i, a in enumerate(args) if i not in skip_pos]
    given += [v for k, v in kwargs.items() if k not in skip_names]
    operands, every = _operands(given, skip_none=True)
    if not operands:
        return None
    try:
        dt, weak = _dt.weak_promotion(operands)
    except (TypeError, ValueError, KeyError):
        return None  # (an operand that is no number: the implementation says what)
    weak = weak and not strong

    args = tuple(_given(a, dt, every) for a in args)
    kwargs = {k: _given(v, dt, every) for k, v in kwargs.items()}
    return weak, args, kwargs


def _weak_items_call(prim: Any, args: tuple, kwargs: dict) -> Any:
    """:func:`_weak_call` for a primitive whose operands are the items of its
    sequence parameter ``prim.weak_items`` (``jnp.stack([1.0, 2.0])`` is weak
    float32, ``jnp.stack([weak_x, float16_y])`` float16, a ``dtype`` strong):
    ``(weak, args, kwargs)`` with the items given as :func:`_weak_call` gives
    operands, or None (no sequence, or no weak item)."""
    params = prim._param_names()
    name = prim.weak_items
    i = params.index(name)
    in_args = i < len(args)
    seq = args[i] if in_args else kwargs.get(name)
    if type(seq) is not list and type(seq) is not tuple or not seq:
        return None
    items, every = _operands(seq, skip_none=False)
    if len(items) == sum(1 for _, w in items if not w):
        return None
    try:
        dt, weak = _dt.weak_promotion(items)
    except (TypeError, ValueError, KeyError):
        return None
    d = params.index("dtype") if "dtype" in params else -1
    if kwargs.get("dtype") is not None or 0 <= d < len(args) and args[d] is not None:
        weak = False

    seq = type(seq)(_given(a, dt, every) for a in seq)
    if in_args:
        args = args[:i] + (seq,) + args[i + 1 :]
    else:
        kwargs = {**kwargs, name: seq}
    return weak, args, kwargs


def _weak(r: Any) -> Any:
    """The weakly typed Array of a result of the default dtype of its kind (JAX's
    weak types are int32/float32/complex64, 64-bit with x64) or bool; any other
    result as :func:`wrap_tree` makes it."""
    if isinstance(r, (np.ndarray, np.generic)) and _dt.can_be_weak(r.dtype):
        return _array.wrap_weak(r)
    return _wrap_tree(r)


#: kinds whose implementations get JAX's result dtypes from :func:`_jax_dtypes`
#: (elementwise primitives check their ufunc results themselves, the same way)
_DTYPE_CHECKED_KINDS = frozenset({"reduction", "linalg", "structural", "creation", "nn"})
_SEQ = (list, tuple)


def _jax_dtypes(prim: Any, impl: Callable[..., Any]) -> Callable[..., Any]:
    """``impl`` with JAX's result dtypes, by the elementwise primitives' method
    (:mod:`srcjax.dtypes`): the NumPy result's dtype is tested against
    ``BINARY_SUSPECT`` (the 64-bit dtypes while ``jax_enable_x64`` is off, where
    NumPy may disagree with JAX); only a suspect result takes the slow path
    :func:`_fix_dtypes`, which recomputes with the inputs JAX would use."""
    suspect = _dt.BINARY_SUSPECT  # updated in place when x64 changes

    def checked(*args: Any, **kwargs: Any) -> Any:
        r = impl(*args, **kwargs)
        d = getattr(r, "dtype", None)
        if d is not None:
            if d not in suspect:
                return r
        elif not isinstance(r, _SEQ) or not any(getattr(v, "dtype", None) in suspect for v in r):
            return r
        return _fix_dtypes(prim, impl, r, args, kwargs)

    checked.__name__ = impl.__name__
    checked.__qualname__ = getattr(impl, "__qualname__", impl.__name__)
    checked.__module__ = impl.__module__
    checked.__doc__ = impl.__doc__
    checked.__wrapped__ = impl
    return checked


def _leaves(v: Any) -> tuple:
    return tuple(v) if isinstance(v, _SEQ) else (v,)


def _is_number(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic, int, float, complex))


def _fix_dtypes(prim: Any, impl: Callable[..., Any], r: Any, args: tuple, kw: dict) -> Any:
    """Slow path of :func:`_jax_dtypes`: ``impl`` run on the inputs JAX uses.

    64-bit arrays become 32-bit ones while x64 is off (JAX canonicalizes its
    inputs: ``jnp.sum(float64_array)`` is float32); for a primitive with
    ``promote_operands`` the operands are first converted to their JAX result
    type (``jnp.dot(int32, float32)`` is float32, NumPy says float64). A result
    still 64-bit while x64 is off is converted last (``inv`` of int32)."""
    x64 = _dt.x64_enabled()
    outs = _leaves(r)
    if x64:
        # as fix_binary: a 64-bit result is right when an input has that dtype
        wide = {getattr(o, "dtype", None) for o in outs}
        for v in args + tuple(kw.values()):
            if any(getattr(x, "dtype", None) in wide for x in _leaves(v)):
                return r
    try:
        bound = prim.signature.bind(*args, **kw)
    except TypeError:
        return r
    want = None
    if prim.promote_operands:
        ops = [x for n in prim.vjps if n in bound.arguments for x in _leaves(bound.arguments[n])]
        ops = [x for x in ops if _is_number(x)]
        want = _dt.result_type(*ops) if ops else None
    changed = False
    for name, value in bound.arguments.items():
        to = want if name in prim.vjps else None
        new = [_input_as(x, to, x64) for x in _leaves(value)]
        if any(a is not b for a, b in zip(new, _leaves(value))):
            changed = True
            if not isinstance(value, _SEQ):
                new = new[0]
            elif hasattr(value, "_fields"):
                new = type(value)(*new)
            else:
                new = type(value)(new)
            bound.arguments[name] = new
    if changed:
        r = impl(*bound.args, **bound.kwargs)
    if x64:
        return r
    if isinstance(r, _SEQ):
        outs = [_dt.canonicalize_value(o) for o in r]
        return type(r)(*outs) if hasattr(r, "_fields") else type(r)(outs)
    return _dt.canonicalize_value(r)


def _input_as(x: Any, to: Optional[np.dtype], x64: bool) -> Any:
    """An input as JAX holds it: converted to ``to`` (a promoted operand), else a
    64-bit array or NumPy scalar in its 32-bit type while x64 is off."""
    if to is not None and _is_number(x):
        if getattr(x, "dtype", None) != to:
            return _dt.cast(x, to)
        return x
    if not x64 and isinstance(x, (np.ndarray, np.generic)):
        return _dt.canonicalize_value(x)
    return x
