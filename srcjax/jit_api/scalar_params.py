"""A Python int or bool argument of a jitted function stays a Python scalar in
the generated code (cheap to pass, and ``range(n)`` keeps working), but JAX
traces it as a weakly typed 0-d int32 (int64 with x64) or bool array, so
``x.size``, ``x.shape``, ``x.ndim`` and ``x.dtype`` are defined (userprogs7
item 7: ``jit(lambda x: x.sum() / x.size)(3)``). Those attributes are known
while transforming: :func:`fold_attributes` writes them in as constants where
the parameter is never rebound. Methods (``x.sum()``) are mapped to jnp
functions by the frontend already and take Python scalars."""

from __future__ import annotations

from typing import Any, Dict

import gast

from ..frontend import nodes as N

#: attribute -> its value for a 0-d array of item size ``size`` (``None``: the dtype)
_FACTS = {
    "shape": lambda size: (),
    "ndim": lambda size: 0,
    "size": lambda size: 1,
    "itemsize": lambda size: size,
    "nbytes": lambda size: size,
    "dtype": None,
}


def fold_attributes(fdef: Any, dtypes: Dict[str, str]) -> None:
    """Replace ``p.shape``/``.ndim``/``.size``/``.itemsize``/``.nbytes``/``.dtype``
    of each parameter ``p`` in ``dtypes`` (its JAX dtype name: ``"int32"``,
    ``"int64"`` or ``"bool"``) by its value, unless ``p`` is assigned anywhere
    in ``fdef`` (then it may hold an array by the time it is read)."""
    if not dtypes:
        return
    stored = N.rebound_names(fdef)
    names = {p: dt for p, dt in dtypes.items() if p not in stored}
    if names:
        _Fold(names).visit(fdef)


class _Fold(gast.NodeTransformer):
    def __init__(self, names: Dict[str, str]):
        self.names = names

    def visit_Attribute(self, node: Any) -> Any:
        self.generic_visit(node)
        v = node.value
        if (
            isinstance(v, gast.Name)
            and v.id in self.names
            and node.attr in _FACTS
            and isinstance(node.ctx, gast.Load)
        ):
            dt = self.names[v.id]
            fact = _FACTS[node.attr]
            if fact is None:
                new = N.call("jnp.dtype", [N.const(dt)])
            else:
                new = N.const(fact({"int32": 4, "int64": 8, "bool": 1}[dt]))
            return gast.copy_location(new, node)
        return node
