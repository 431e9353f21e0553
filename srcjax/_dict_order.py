"""The key order of a dict pytree node: JAX's (sorted), in one place for the
pytree utilities and the gradients generated code builds."""

from __future__ import annotations

import collections
from typing import Any, Mapping

import numpy as np

__all__ = ["sorted_keys", "in_jax_order", "args_in_jax_order"]


def sorted_keys(d: Mapping[Any, Any]) -> tuple:
    """``d``'s keys sorted, as JAX orders a dict's children; keys of mixed types
    (``1`` and ``"a"``) by type name, then value. Raises TypeError when even that
    does not define an order."""
    try:
        return tuple(sorted(d))
    except TypeError:
        try:
            return tuple(sorted(d, key=lambda k: (type(k).__qualname__, k)))
        except TypeError:
            raise TypeError(
                f"pytree dict keys must be sortable to define a deterministic order; "
                f"got keys {list(d)!r}"
            ) from None


_CONTAINERS = (list, tuple, dict, collections.defaultdict, collections.OrderedDict)


def in_jax_order(x: Any) -> Any:
    """``x`` as a JAX transform hands it to the function: every ``dict`` (and
    ``defaultdict``) in it, also nested in lists, tuples, namedtuples and other
    dicts, rebuilt with its keys sorted (:func:`sorted_keys`), as unflattening its
    pytree does; an ``OrderedDict`` keeps its order, as in JAX. ``x`` itself when
    nothing changes (the caller's dict is never reordered in place)."""
    t = type(x)
    if t is dict or t is collections.defaultdict:
        keys = sorted_keys(x)
        items = [(k, in_jax_order(x[k])) for k in keys]
        if all(a == b for a, b in zip(x, keys)) and all(v is x[k] for k, v in items):
            return x
        return dict(items) if t is dict else t(x.default_factory, items)
    if t is collections.OrderedDict:
        items = [(k, in_jax_order(v)) for k, v in x.items()]
        return x if all(v is x[k] for k, v in items) else t(items)
    if t is list or t is tuple:
        items = [in_jax_order(v) for v in x]
        return x if all(a is b for a, b in zip(items, x)) else t(items)
    if isinstance(x, tuple) and hasattr(x, "_fields"):
        items = [in_jax_order(v) for v in x]
        return x if all(a is b for a, b in zip(items, x)) else t(*items)
    return x


#: argument types that hold no dict (a set lookup, cheaper than isinstance)
_PLAIN = frozenset(
    {type(None), bool, int, float, complex, str}
    | {np.ndarray}
    | {np.dtype(c).type for c in "?bhilqBHILQefdFD"}
)


def args_in_jax_order(args: tuple) -> tuple:
    """:func:`in_jax_order` of a call's positional arguments; ``args`` itself,
    after one type check each, when none is a container (the common call)."""
    for a in args:
        if type(a) in _PLAIN:
            continue
        if isinstance(a, _CONTAINERS):
            return tuple(in_jax_order(a) for a in args)
    return args
