"""Helpers over pytrees shared by the modules of :mod:`srcjax.primitives.control`:
the node kind of a registered class, dicts like a dict, zero-filling a sparse
cotangent (``_fill``), unflattening with ``None`` children, static attributes,
the values that scalar batch broadcasts were made from.
"""

from __future__ import annotations

import collections
import weakref

import numpy as np

from ..._dict_order import sorted_keys


def dict_like(x, pairs):
    """A dict of ``x``'s type holding ``pairs``: a ``defaultdict`` keeps its
    ``default_factory`` (JAX's pytree node keeps it as aux data), an
    ``OrderedDict`` stays one."""
    if type(x) is dict:
        return dict(pairs)
    if isinstance(x, collections.defaultdict):
        return type(x)(x.default_factory, pairs)
    return type(x)(pairs)


def dict_without(d, key):
    """A plain dict copy of ``d`` without ``key`` (a missing key is no error): a
    dict with an entry deleted (``ad.delitem``), or a dict cotangent with a hole
    there (``ad.forget``)."""
    out = dict(d)
    out.pop(key, None)
    return out


def leaves_alike(a, b, mismatch):
    """The leaves of pytrees ``a`` and ``b`` when their structures agree, else
    the exception ``mismatch(treedef_a, treedef_b)`` (the caller's) raised."""
    from ...tree_util import tree_flatten

    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    if ta != tb:
        raise mismatch(ta, tb)
    return la, lb


def _jax_keys(x: dict):
    """``x``'s keys in the order JAX's pytrees give them: sorted for a dict or a
    defaultdict (``_dict_order``), as they are for an OrderedDict. A gradient's
    dicts come out in that order (``vjp``'s function gave the user's order)."""
    if type(x) is dict or type(x) is collections.defaultdict:
        return sorted_keys(x)
    return tuple(x)


_PLAIN_SEQ = (list, tuple)


def _fill(g, x):
    tx = type(x)
    if type(g) is np.ndarray and tx is np.ndarray:
        # the common leaf first: an array cotangent of an array of its shape and dtype
        if g.shape == x.shape and g.dtype == x.dtype and g.flags.writeable:
            return g
    elif (tx is list or tx is tuple) and type(g) in _PLAIN_SEQ and len(g) == len(x):
        # the common container next: a plain list/tuple (of parameters) with every
        # slot (a tuple's cotangent may be a list: tree_add builds lists)
        return tx([_fill(gi, v) for gi, v in zip(g, x)])
    if g is None:
        if isinstance(x, dict):
            return dict_like(x, ((k, _fill(None, x[k])) for k in _jax_keys(x)))
        if isinstance(x, tuple) and hasattr(x, "_fields"):
            return type(x)(*[_fill(None, v) for v in x])
        if isinstance(x, (list, tuple)):
            return type(x)(_fill(None, v) for v in x)
        if x is None:
            return None
        kind = _class_kind(x)
        if kind is not None:
            xc, aux = kind.flatten(x)
            return kind.unflatten(aux, tuple(_fill(None, v) for v in xc))
        dt = getattr(x, "dtype", None)
        if dt is None:
            return np.zeros((), np.float32 if isinstance(x, float) else np.float64)
        return np.zeros(np.shape(x), dt if dt.kind in "fc" else np.float32)
    if isinstance(x, dict):
        gd = g if isinstance(g, dict) else {}
        return dict_like(x, ((k, _fill(gd.get(k), x[k])) for k in _jax_keys(x)))
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        return type(x)(*[_fill(gi, v) for gi, v in zip(_seq(g, len(x)), x)])
    if isinstance(x, (list, tuple)):
        return type(x)(_fill(gi, v) for gi, v in zip(_seq(g, len(x)), x))
    kind = _class_kind(x)
    if kind is not None:
        xc, aux = kind.flatten(x)
        gc = list(kind.flatten(g)[0]) if type(g) is type(x) else [None] * len(xc)
        return kind.unflatten(aux, tuple(_fill(gi, v) for gi, v in zip(gc, xc)))
    shape = np.shape(x)
    if np.shape(g) != shape:
        g = np.broadcast_to(g, shape).copy()
    dt = getattr(x, "dtype", None)
    if dt is not None and dt.kind == "f" and getattr(g, "dtype", dt) != dt:
        g = np.asarray(g, dtype=dt)
    if isinstance(g, np.ndarray) and not g.flags.writeable:
        g = g.copy()  # a broadcast view: gradients are ordinary arrays
    return g


def _seq(g, n):
    if g is None:
        return [None] * n
    g = list(g)
    return g + [None] * (n - len(g))


def _class_kind(x):
    """The pytree node kind of an instance of a registered class (not a builtin
    container, namedtuple or None), else ``None``."""
    t = type(x)
    if t is np.ndarray or x is None or isinstance(x, (tuple, list, dict)):
        return None  # (arrays first: vmap's per-example loops ask for every row)
    if not _TREE_REGISTRY:
        from ...tree_util import _REGISTRY

        _TREE_REGISTRY.append(_REGISTRY)
    return _TREE_REGISTRY[0].get(t)


_TREE_REGISTRY: list = []  # tree_util's class registry (imported on first use)


class _Probe:
    """A stand-in child: ``tree_unflatten`` with probes tells which child an
    attribute reads (``m.w`` is child 0 when ``unflatten(aux, probes).w`` is probe 0)."""

    __slots__ = ()


def _in_aux(value, aux) -> bool:
    if value is aux:
        return True
    items = aux.values() if isinstance(aux, dict) else aux
    if isinstance(items, (tuple, list)) or isinstance(aux, dict):
        return any(v is value for v in items)
    return False


def class_map(fn, x, *others):
    """``fn(child, *other_children)`` over the children of ``x``, an instance of a
    registered pytree class, rebuilt as one (``None`` children allowed); ``others``
    are instances of the same class or ``None`` (all children ``None``)."""
    kind = _class_kind(x)
    children, aux = kind.flatten(x)
    children = list(children)
    rest = [
        list(kind.flatten(o)[0]) if type(o) is type(x) else [None] * len(children) for o in others
    ]
    out = [fn(c, *[r[i] for r in rest]) for i, c in enumerate(children)]
    return _unflatten_sparse(kind, aux, out, children)


def _is_static(value, aux) -> bool:
    """An attribute value that is no child is static when it is aux data or holds
    no floating leaf (an int, a string, a function); a floating value computed from
    the children (w stored transposed) is not: its derivative would be lost."""
    if _in_aux(value, aux):
        return True
    from ...tree_util import tree_leaves

    try:
        return not any(_is_inexact(v) for v in tree_leaves(value))
    except Exception:  # noqa: BLE001
        return not _is_inexact(value)


def static_attrs(x) -> tuple:
    """The names of the instance attributes of ``x`` (a registered pytree class
    instance) that are static: constants for every transform (see ``_is_static``)."""
    kind = _class_kind(x)
    children, aux = kind.flatten(x)
    children = list(children)
    attrs = getattr(x, "__dict__", None) or {}
    return tuple(
        a
        for a in sorted(attrs)
        if not any(attrs[a] is c for c in children) and _is_static(attrs[a], aux)
    )


def _is_inexact(v) -> bool:
    if isinstance(v, (float, complex)):
        return True
    dt = getattr(v, "dtype", None)
    return dt is not None and getattr(dt, "kind", "") in "fc"


def _unflatten_sparse(kind, aux, children, like):
    """``kind.unflatten`` with ``None`` (zero) children; where the class cannot
    take ``None`` (its ``__init__`` computes on children), zeros like ``like``."""
    if all(c is not None for c in children):
        return kind.unflatten(aux, tuple(children))
    try:
        out = kind.unflatten(aux, tuple(children))
        back = list(kind.flatten(out)[0])
        if len(back) == len(children) and all(b is c for b, c in zip(back, children)):
            return out
    except Exception:  # noqa: BLE001 - checked below with zeros
        pass
    # __init__ converts or checks its children (np.asarray(None) is not None)
    full = [_fill(None, lk) if c is None else c for c, lk in zip(children, like)]
    return kind.unflatten(aux, tuple(full))


#: id(view) -> (a weak reference to ``view``, the value it broadcasts): the batch
#: broadcasts of values without memory of their own (Python and NumPy scalars,
#: an Array holding one), each of which makes new memory. A construction's
#: derivative finds an argument among the instance's fields by identity
#: (``pytrees._same_value``); this says two such broadcasts are of one value.
#: An entry goes when its view dies (the weak reference's callback), so an id is
#: never read for another object.
_BROADCAST_SOURCES: dict = {}


def note_broadcast_source(view: np.ndarray, x) -> np.ndarray:
    """Record that ``view`` (new memory) broadcasts the scalar value ``x``; returns
    ``view``."""
    key = id(view)

    def forget(ref):
        if _BROADCAST_SOURCES.get(key, (None,))[0] is ref:
            del _BROADCAST_SOURCES[key]

    _BROADCAST_SOURCES[key] = (weakref.ref(view, forget), x)
    return view


def broadcast_source(a):
    """The value ``a`` is a batch broadcast of (``note_broadcast_source``), or None."""
    entry = _BROADCAST_SOURCES.get(id(a))
    if entry is None or entry[0]() is not a:
        return None
    return entry[1]
