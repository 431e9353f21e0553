"""What a jitted call does around the generated function: outputs that are (views
of) non-donated inputs are copied (JAX's arrays are immutable, NumPy's are
not), Python scalar outputs become weakly typed Arrays of the default dtype; and the
small helpers of the specialization (static objects, names the generated code
reads, option tuples)."""

from __future__ import annotations

import collections
import importlib
import inspect
import types
from typing import Any, Optional

import numpy as np

from .. import dtypes, tree_util
from .._array import wrap as _wrap
from .._array import wrap_tree, wrap_weak
from ..pytree import CLASS_KINDS
from ..transforms import optimize as opt

_cfg = importlib.import_module("srcjax.config")  # the module (srcjax.config is the object)


_KEYWORD_KINDS = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)


#: NumPy scalar types (immutable, so a jitted function may return them as they are)
_NUMPY_SCALARS = frozenset(np.dtype(c).type for c in "?bhilqBHILQefdgFDG")
#: those narrowed to 32 bits on the way out unless x64 is on (see _unalias)
_WIDE_SCALARS = frozenset((np.float64, np.int64, np.uint64, np.complex128))
_WIDE = frozenset(np.dtype(t) for t in _WIDE_SCALARS)


def _root(x: np.ndarray) -> int:
    return id(x if x.base is None else x.base)


def _is_input(out: np.ndarray, args: tuple, kwargs: dict) -> bool:
    """Whether ``out`` may be one of the arguments: it is one, or an argument is
    a container (a leaf of it could be ``out``; :func:`_unalias` looks inside)."""
    for a in (*args, *kwargs.values()):
        if a is out:
            return True
        if type(a) is np.ndarray or type(a) in _SCALAR_ARGS or isinstance(a, np.generic):
            continue
        return True
    return False


_SCALAR_ARGS = frozenset({int, float, bool, complex, type(None), str})


def _input_roots(args: tuple, kwargs: dict, donate: frozenset) -> set:
    """The ids of the memory owners of every array in the non-donated arguments."""
    roots: set = set()
    stack = [a for i, a in enumerate(args) if i not in donate]
    stack.extend(kwargs.values())
    while stack:
        x = stack.pop()
        t = type(x)
        if t is np.ndarray:
            b = x.base
            roots.add(id(x if b is None else b))
        elif t is dict:
            stack.extend(x.values())
        elif t is list or t is tuple:
            stack.extend(x)
        elif t in CLASS_KINDS:  # a registered class (a model): its children
            stack.extend(CLASS_KINDS[t].flatten(x)[0])
        elif t in _SCALAR_ARGS or isinstance(x, np.generic):
            pass
        elif isinstance(x, np.ndarray):
            roots.add(_root(x))
        elif isinstance(x, dict):
            stack.extend(x.values())
        elif isinstance(x, (list, tuple)):
            stack.extend(x)
        else:
            kind = tree_util._REGISTRY.get(t)
            if kind is not None:  # a registered pytree class: its children
                stack.extend(kind.flatten(x)[0])
    return roots


def _unalias(
    out: Any, args: tuple, kwargs: dict, donate: frozenset, roots: Optional[set] = None
) -> Any:
    """A transform's output as it leaves generated code (the boundary of jit,
    vmap, the jvp family and vjp/linearize's primal): :func:`_unalias_buffers`,
    then every array leaf an ``srcjax.Array``, in the same walk (each registered
    class of the output flattened and rebuilt once). ``roots``: the arguments'
    :func:`_input_roots` when the caller has them (jit's key walk collects them)."""
    return _unalias_buffers(out, args, kwargs, donate, wrap=True, roots=roots)


def _unalias_buffers(
    out: Any,
    args: tuple,
    kwargs: dict,
    donate: frozenset,
    wrap: bool = False,
    roots: Optional[set] = None,
) -> Any:
    """``out`` as jax.jit returns it: every array that is (a view of) a
    non-donated argument copied, as JAX arrays are immutable, so a jitted
    function's outputs never share memory with its inputs (``y = jit(lambda a:
    a)(x); y += 1`` leaves ``x`` alone; views of other arrays and fresh arrays
    are returned as they are); Python scalars (weakly typed values) as weakly
    typed Arrays of the default dtype (``jit(lambda n: n * 2)(3)`` is a weak
    ``int32``; a Python bool a strong ``bool``);
    64-bit arrays and scalars narrowed to 32 bits unless x64 is on, as JAX never
    returns them then (NumPy's operators promote ``int32 * float32`` to float64:
    vmap and jvp returned such values as float64, JAX float32). ``wrap``: every
    leaf also made an Array as :func:`srcjax._array.wrap_tree` does."""
    narrow = not _cfg.x64_enabled

    def fix(x: Any) -> Any:
        nonlocal roots
        t = type(x)
        if t is np.ndarray:  # the common case first
            if narrow and x.dtype in _WIDE:
                x = dtypes.canonicalize_value(x)  # a new array: it shares nothing
            else:
                if roots is None:
                    roots = _input_roots(args, kwargs, donate)
                b = x.base
                if id(x if b is None else b) in roots:
                    x = x.copy()
            # (a float0 array, the gradient of an integer input, stays NumPy's)
            return _wrap(x) if wrap and x.dtype.fields is None else x
        if t in _NUMPY_SCALARS:
            if narrow and x.dtype in _WIDE:
                x = dtypes.canonicalize_value(x)
            return _wrap(x) if wrap else x
        if t is int or t is float or t is complex:
            # a value computed from weakly typed inputs only: weakly typed, as JAX's
            # (jit(lambda x: x * 2.0)(1.0) is Array(2., dtype=float32, weak_type=True))
            s = _as_array_scalar(x)
            return s if s is x else wrap_weak(s)
        if t is bool:
            return _wrap(np.bool_(x)) if wrap else np.bool_(x)
        kind = CLASS_KINDS.get(t)
        if kind is None:
            if t is tuple:
                items = [fix(v) for v in x]
                if wrap or not all(a is b for a, b in zip(items, x)):
                    return tuple(items)  # (wrapped leaves: new items, no identity test)
                return x
            kind = tree_util._REGISTRY.get(t)  # (a namedtuple or dict subclass: below)
        else:  # a registered class (a model): its children fixed
            children, aux = kind.flatten(x)
            fixed = [fix(v) for v in children]
            if wrap or not all(a is b for a, b in zip(fixed, children)):
                return kind.unflatten(aux, tuple(fixed))
            return x
        if narrow and isinstance(x, (np.ndarray, np.generic)) and x.dtype in _WIDE:
            x = dtypes.canonicalize_value(x)
            return wrap_tree(x) if wrap else x
        if isinstance(x, np.ndarray):
            if roots is None:
                roots = _input_roots(args, kwargs, donate)
            if _root(x) in roots:
                x = x.copy()
            return wrap_tree(x) if wrap else x
        if isinstance(x, tuple):
            items = [fix(v) for v in x]
            if all(a is b for a, b in zip(items, x)):
                return x
            return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)
        if isinstance(x, list):
            return [fix(v) for v in x]
        if isinstance(x, dict):
            # dicts (and defaultdicts) in sorted key order, as JAX's outputs
            # (see tree_util._jax_dict_order); OrderedDicts keep theirs
            keys = list(x)
            sort = t is dict or t is collections.defaultdict
            order = list(tree_util._sorted_keys(x)) if sort and len(keys) > 1 else keys
            items = {k: fix(x[k]) for k in order}
            if order == keys and all(items[k] is x[k] for k in keys):
                return x
            if t is dict:
                return items
            if t is collections.defaultdict:
                return collections.defaultdict(x.default_factory, items)
            try:
                return t(items)
            except TypeError:
                return items
        if kind is not None and x is not None:  # a registered class: its children fixed
            children, aux = kind.flatten(x)
            fixed = [fix(v) for v in children]
            if all(a is b for a, b in zip(fixed, children)):
                return x
            return kind.unflatten(aux, tuple(fixed))
        return wrap_tree(x) if wrap else x  # (another leaf: a device array, np.generic)

    return fix(out)


def _plan_flat(fn: Any, args: tuple) -> None:
    """For a specialization returning trees as their leaves (its template
    ``__srcjax_flat_result__``, see :mod:`srcjax.transforms.optimize.flat_results`):
    the treedefs of the call that specialized it (the key fixes the structure and
    the aux data, compared with ``==``), as jax.jit keeps its trace's output tree."""
    flat = getattr(fn, "__srcjax_flat_result__", None)
    if flat is not None:
        defs = {i: tree_util.tree_structure(args[i]) for i in opt.flat_parameters(flat)}
        fn.__srcjax_flat_plan__ = (flat, defs)


def _built(plan: tuple, values: tuple) -> Any:
    """The result of a specialization planned by :func:`_plan_flat`, from what it
    returned (``values``: the leaf lists and other items)."""
    return opt.build_flat(plan[0], values, plan[1])


def _static_object(v: Any) -> bool:
    """An object passed as a static argument whose attributes the normalizer may
    read (not a literal, an array, a container or a class)."""
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes, tuple, list, dict)):
        return False
    if isinstance(v, (np.ndarray, np.generic, type, types.ModuleType)):
        return False
    return hasattr(v, "__dict__")


def _as_array_scalar(x: Any) -> Any:
    """A Python scalar output as the NumPy scalar of its default dtype."""
    if type(x) is bool:
        return np.bool_(x)
    try:
        return dtypes.dtype_of(x).type(x)
    except OverflowError:
        return x


def _as_tuple(x: Any) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (int, str)):
        return (x,)
    return tuple(x)
