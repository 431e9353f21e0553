"""The abstract signature a jitted function is specialized on: each argument's
canonical value and cache key (shape, dtype, weak type, static value, typed
key), as ``jax.jit`` canonicalizes arguments (float64 -> float32 unless
x64), and the descriptions of arguments in messages."""

from __future__ import annotations

import collections
from typing import Any, Tuple

import numpy as np

from .. import dtypes, tree_util
from .._array import Array, _weak_buffer, _WeakArray
from .._dict_order import sorted_keys
from .._prng_key import PRNGKeyArray
from ..api import _kind
from ..backends import _devices
from ..errors import TransformValueError
from ..pytree import CLASS_KINDS
from ..transforms import optimize as opt

_WEAK = {
    float: ("weak", "float"),
    int: ("weak", "int"),
    bool: ("weak", "bool"),
    complex: ("weak", "complex"),
}
_F32 = np.float32
_F64 = np.float64
#: the dicts whose items in_jax_order orders further down (an OrderedDict's own
#: order stays; other dict subclasses are left as they are)
_ORDERED_DICTS = frozenset({dict, collections.defaultdict, collections.OrderedDict})


def _static_key(x: Any) -> tuple:
    try:
        hash(x)
    except TypeError as e:
        raise TransformValueError(
            "Non-hashable static arguments are not supported. An error occurred while "
            f"trying to hash an object of type {type(x)}, {x!r}. The error was:\n"
            f"TypeError: {e}",
            hint="pass a tuple instead of a list or array, or make the argument non-static",
        ) from None
    return ("static", type(x), x)


def _canon(x: Any, x64: bool, order: bool = False, roots: Any = None) -> Tuple[Any, Any]:
    """(canonical argument, its key): JAX's argument canonicalization (float64 ->
    float32 without x64; a Python float becomes a float32 scalar that remembers
    it was weakly typed). In the same walk, every ``srcjax.Array`` becomes its
    buffer (:func:`srcjax._array.unwrap_tree`) and, with ``order``, every dict
    reached through lists, tuples and dicts has its keys in JAX's order
    (:func:`srcjax._dict_order.in_jax_order`), so a call walks its arguments
    once. ``roots``: a list that gets the memory owner's id of every array leaf
    of the canonical argument, for the output boundary (``outputs._input_roots``
    without a second walk), or None where a leaf's owner is not read here."""
    t = type(x)
    if t is Array:
        x = x._buf
        t = type(x)
    elif t is _WeakArray:
        x = _weak_buffer(x)  # (a 0-d one: its Python number, weakly typed)
        t = type(x)
    if t is np.ndarray:
        dt = x.dtype
        if not x64 and dt.itemsize == 8 and dt.kind in "fiu":
            if dt.kind != "f":
                dtypes.check_int32_range(x)
            x = x.astype(np.float32 if dt.kind == "f" else np.int32)
            dt = x.dtype
        if roots is not None:
            b = x.base
            roots.append(id(x if b is None else b))
        return x, (x.shape, dt)
    if t is float:
        return (np.float64(x) if x64 else np.float32(x)), _WEAK[float]
    if t is complex:  # (held boxed too: a complex64 scalar that stays weak)
        return (np.complex128(x) if x64 else np.complex64(x)), _WEAK[complex]
    if t is int or t is bool:
        if t is int and not x64:
            dtypes.check_int32_range(x)
        return x, _WEAK[t]
    kind = CLASS_KINDS.get(t)
    if kind is not None:  # a registered class (a model): before the isinstance tests
        return _canon_class(x, kind, x64, roots)
    if t is list or t is tuple:  # (the same key as the general branch below)
        items = [_canon(v, x64, order, roots) for v in x]
        key = ("seq", t, tuple([v[1] for v in items]))
        if t is tuple and all(v[0] is c for v, c in zip(items, x)):
            return x, key  # nothing canonicalized: the tuple as it is (a list is copied)
        return t([v[0] for v in items]), key
    if isinstance(x, np.generic):
        dt = x.dtype
        if not x64 and dt.itemsize == 8 and dt.kind in "fiu":
            x = (np.float32 if dt.kind == "f" else np.int32)(x)
        return x, ((), x.dtype)
    if _devices.is_device_array(x):  # a GPU array: its device is part of the key
        dt = x.dtype
        if not x64 and dt.itemsize == 8 and dt.kind in "fiu":
            x = x.astype(np.float32 if dt.kind == "f" else np.int32)
        return x, ("gpu", int(x.device.id), tuple(x.shape), np.dtype(x.dtype))
    if isinstance(x, dict):
        names = list(x)
        if order and (t is dict or t is collections.defaultdict) and len(names) > 1:
            ordered = list(sorted_keys(x))
        else:
            ordered = names
        sub = order and t in _ORDERED_DICTS
        items = [(k, _canon(x[k], x64, sub, roots)) for k in ordered]
        keys = tuple((k, v[1]) for k, v in items)
        if isinstance(x, collections.defaultdict):  # (its factory comes first)
            kind = ("dict", type(x), x.default_factory)
        else:
            kind = ("dict", type(x))
        if ordered == names and all(v[0] is x[k] for k, v in items):
            return x, kind + (keys,)  # nothing canonicalized: the dict as it is
        pairs = ((k, v[0]) for k, v in items)
        if isinstance(x, collections.defaultdict):
            new = type(x)(x.default_factory, pairs)
        else:
            new = type(x)(pairs)
        return new, kind + (keys,)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        items = [_canon(v, x64, order, roots) for v in x]
        return type(x)(*[v[0] for v in items]), ("tuple", type(x), tuple(v[1] for v in items))
    if isinstance(x, (list, tuple)):
        items = [_canon(v, x64, False, roots) for v in x]  # (in_jax_order: a subclass as it is)
        return type(x)(v[0] for v in items), ("seq", type(x), tuple(v[1] for v in items))
    if x is None:
        return x, None
    if roots is not None and (isinstance(x, np.ndarray) or isinstance(x, PRNGKeyArray)):
        roots.append(None)  # (an array subclass, a key's data: the boundary walks)
    kind = tree_util._REGISTRY.get(type(x))
    if kind is not None:
        return _canon_class(x, kind, x64, roots)
    if isinstance(x, PRNGKeyArray):  # a typed key: its shape, as an array's
        return x, ("key", x.shape, x._impl)
    if isinstance(x, (str, bytes)):
        raise TypeError(
            f"jit: an argument of type {type(x).__name__} ({x!r:.40}) is not an array; "
            "mark it static (static_argnums / static_argnames), as in JAX"
        )
    return x, ("object", type(x))


#: static attribute values a registered class's key holds as they are (the type
#: tree's ``consts``: ``typetree._static_constant``), without building its type tree
_CONST_TYPES = (str, int, bool)


def _canon_class(x: Any, kind: Any, x64: bool, roots: Any = None) -> Tuple[Any, Any]:
    """(canonical instance, key) of an instance of a registered pytree class, as
    ``jax.jit`` keys it: its class, aux data (compared with ``==``, so it must be
    hashable, as in JAX), and its children's keys (their structure and abstract
    values), so a different treedef or leaf shape specializes again. The key
    also holds which attribute is which child (the generated code reads
    ``model.layers`` and inlines methods); a class with attributes that are no
    child adds their values where all are str/int/bool/None (a layer's name:
    what its type tree would hold, without building it every call), else its
    type tree (:func:`srcjax.api._kind`: functions, other objects), whose
    static values the generated code depends on. Leaves canonicalized (a
    float64 array made float32) give an instance rebuilt by ``tree_unflatten``,
    as the function traced by JAX sees one."""
    children, aux = kind.flatten(x)
    children = tuple(children)
    keys = []
    new = None
    for j, c in enumerate(children):
        if type(c) is np.ndarray and (x64 or c.dtype.itemsize != 8):
            keys.append((c.shape, c.dtype))  # (the common leaf, as _Jit._key's fast path)
            if roots is not None:
                b = c.base
                roots.append(id(c if b is None else b))
            continue
        v, k = _canon(c, x64, False, roots)
        keys.append(k)
        if v is not c:
            new = list(children) if new is None else new
            new[j] = v
    try:
        hash(aux)
    except TypeError:  # unhashable aux data: keyed by the type tree, as before
        if new is not None:
            x = kind.unflatten(aux, tuple(new))
        return x, ("class", _kind(x, exact=True))
    layout = []
    consts = []  # (name, type, value) of the static str/int/bool/None attributes
    static = False  # another attribute that is no child: keyed by the type tree
    for name, value in (getattr(x, "__dict__", None) or {}).items():
        for j, c in enumerate(children):
            if c is value:
                layout.append((name, j))
                break
        else:
            if value is None or type(value) in _CONST_TYPES:
                # (what the type tree keys of it; its type too: 1 is not True)
                consts.append((name, type(value), value))
                continue
            static = True
            break
    key = ("class", type(x), aux, tuple(layout), tuple(keys))
    if new is not None:  # (leaves canonicalized, or Arrays made buffers)
        x = kind.unflatten(aux, tuple(new))
    if static:
        key += (_kind(x, exact=True),)
    elif consts:
        key += (tuple(consts),)
    return x, key


def _child_keys(key: Any, tag: str, n: int) -> tuple:
    """The keys :func:`_canon` gave the ``n`` children of a container argument
    (its key ``key``, of kind ``tag``), or ``None`` each where it has none: a
    Python float inside a dict is weak as one passed alone (user 06:
    ``jit(grad(f))({"a": jnp.array(0.0)})``)."""
    sub = None
    if isinstance(key, tuple) and key and key[0] == tag:
        if tag == "dict":
            sub = tuple(v for _, v in key[-1])
        elif tag in ("seq", "tuple") and len(key) == 3:
            sub = key[2]
        elif tag == "class" and len(key) >= 5:
            sub = key[4]
    if sub is None or len(sub) != n:
        return (None,) * n
    return tuple(sub)


def _aval_tree(x: Any, weak_key: Any = None) -> Any:
    """Abstract value (or pytree of them) of a canonical argument; ``weak_key``:
    its key from :func:`_canon`, which says which leaves are weakly typed."""
    if weak_key is not None and weak_key[0] == "weak":
        if weak_key[1] == "float":  # a Python float, now a float32 scalar: weak
            return opt.Aval.of(1.0)  # (held boxed: see optimize.promote)
        if weak_key[1] == "complex":  # a Python complex, now a complex64 scalar
            return opt.Aval.of(1j)
        return opt.Aval.of(x)
    if weak_key is not None and len(weak_key) == 3 and weak_key[2] == "weak":  # a weak array
        return opt.Aval(np.shape(x), x.dtype, wt=True)
    if isinstance(x, (np.ndarray, np.generic)):
        return opt.Aval(np.shape(x), x.dtype)
    if isinstance(x, (bool, int, float)):
        return opt.Aval.of(x)
    if _devices.is_device_array(x):
        return opt.Aval(tuple(x.shape), x.dtype)
    if type(x) is dict:  # (a defaultdict or OrderedDict is no plain dict: passes that
        # rebuild a tree from its avals would build a dict; its structure stays unknown)
        subs = _child_keys(weak_key, "dict", len(x))
        return {k: _aval_tree(v, sk) for (k, v), sk in zip(x.items(), subs)}
    if isinstance(x, tuple) and not hasattr(x, "_fields"):
        subs = _child_keys(weak_key, "seq", len(x))
        return tuple(_aval_tree(v, sk) for v, sk in zip(x, subs))
    if isinstance(x, tuple):  # a named tuple (optimizer state): its fields by name too
        subs = _child_keys(weak_key, "tuple", len(x))
        try:
            return type(x)(*[_aval_tree(v, sk) for v, sk in zip(x, subs)])
        except TypeError:
            return None
    if isinstance(x, list):
        subs = _child_keys(weak_key, "seq", len(x))
        return [_aval_tree(v, sk) for v, sk in zip(x, subs)]
    kind = tree_util._REGISTRY.get(type(x))
    if kind is not None and x is not None:  # a registered class (see _canon_class)
        children, aux = kind.flatten(x)
        children = tuple(children)
        layout = {}
        for name, value in (getattr(x, "__dict__", None) or {}).items():
            for j, c in enumerate(children):
                if c is value:
                    layout[name] = j
                    break
        subs = _child_keys(weak_key, "class", len(children))
        return opt.ClassAval(
            type(x), aux, layout, tuple(_aval_tree(c, sk) for c, sk in zip(children, subs))
        )
    return None


def _describe(x: Any) -> str:
    if _devices.is_device_array(x):
        return f"{np.dtype(x.dtype).name}[{','.join(map(str, x.shape))}] on gpu:{x.device.id}"
    if isinstance(x, PRNGKeyArray):
        return f"{x.dtype}[{','.join(map(str, x.shape))}]"
    if isinstance(x, (np.ndarray, np.generic)):
        return f"{np.dtype(x.dtype).name}[{','.join(map(str, np.shape(x)))}]"
    if isinstance(x, dict) and type(x) is dict and len(x) <= 8:
        # a parameter dict: its structure, as srcjax show --args describes it
        return (
            "{" + ", ".join(f"{k!r}: {_describe(v)}" for k, v in sorted(x.items(), key=str)) + "}"
        )
    if type(x) in (list, tuple) and len(x) <= 8:
        inner = ", ".join(_describe(v) for v in x)
        return f"[{inner}]" if type(x) is list else f"({inner}{',' if len(x) == 1 else ''})"
    return type(x).__name__
