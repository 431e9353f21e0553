"""``has_aux``: the ``(value, aux)`` pair a differentiated function returns,
split into two normalized statements (shared by reverse and forward mode)."""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

import gast

from ..frontend import nodes as N
from ..frontend.normalize import Op
from ..primitives import registry

__all__ = ["split_aux"]


def split_aux(
    body: List[Any], rv: Any, namer: Any, origin: Optional[Any] = None
) -> Tuple[str, str]:
    """Append to ``body`` the check that the returned ``rv`` is a pair
    (``ad.check_aux``, JAX's error otherwise) and ``value = rv[0]``,
    ``aux = rv[1]`` (as ``ad.getitem`` ops); returns the two fresh names.
    ``origin``: the return statement whose location the two reads get (or None)."""
    value_name = namer.fresh("value")
    aux = namer.fresh("aux")
    getitem = registry.by_public("ad.getitem")
    check = N.expr_stmt(N.call("ad.check_aux", [N.clone(rv)]))
    check.sj_op = Op("inactive", what="has_aux check")
    body.append(check)
    for nm, i in ((value_name, 0), (aux, 1)):
        st = N.assign(nm, gast.Subscript(value=N.clone(rv), slice=N.const(i), ctx=gast.Load()))
        st.sj_op = Op("prim", prim=getitem, bound={"x": N.clone(rv), "idx": N.const(i)})
        if origin is not None:
            N.copy_origin(st, origin)
            st.sj_origin = getattr(origin, "lineno", None)
        body.append(st)
    return value_name, aux
