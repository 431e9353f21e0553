"""The key order of a dict pytree node: JAX's (sorted), in one place for the
pytree utilities and the gradients generated code builds."""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["sorted_keys"]


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
