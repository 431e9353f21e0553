"""``grad(..., allow_int=True)``: the gradient of an integer or boolean input is
zeros of dtype ``float0`` (``jax.dtypes.float0``), computed by two primitives
spliced into the generated gradient (``_float0_for_ints``)."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from .. import dtypes
from ..frontend import nodes as N
from ..primitives.ad.linear import def_adjoint_pair

# --------------------------------------------------------------------------- allow_int
#: JAX's dtype of the gradient of an integer or boolean input (``jax.dtypes.float0``)
FLOAT0 = dtypes.float0


def _is_int_leaf(x: Any) -> bool:
    if isinstance(x, (bool, int, np.bool_, np.integer)):
        return True
    dt = getattr(x, "dtype", None)
    return dt is not None and dt.kind in "biu"


def _int_float0(g: Any, x: Any) -> Any:
    """The gradient ``g`` of input ``x`` with every integer or boolean leaf of
    ``x`` given JAX's ``float0`` gradient: ``np.zeros(shape(leaf), float0)``
    (what ``jax.grad(..., allow_int=True)`` returns for them); floating leaves
    keep their gradient from ``g`` (a pytree of ``x``'s structure, or a leaf)."""
    from .. import tree_util

    leaves, td = tree_util.tree_flatten(x)
    if not any(_is_int_leaf(v) for v in leaves):
        return g
    if tree_util.treedef_is_leaf(td):
        return np.zeros(np.shape(x), FLOAT0)
    gs = [None] * len(leaves) if g is None else td.flatten_up_to(g)
    out = [np.zeros(np.shape(v), FLOAT0) if _is_int_leaf(v) else gv for v, gv in zip(leaves, gs)]
    return tree_util.tree_unflatten(td, out)


def _float0_drop(h: Any, g: Any, x: Any) -> Any:
    """The adjoint of :func:`_int_float0` in ``g``: the cotangent ``h`` with the
    leaves at ``x``'s integer positions (``float0``) replaced by zeros of
    ``g``'s leaves there."""
    from .. import tree_util

    leaves, td = tree_util.tree_flatten(x)
    if not any(_is_int_leaf(v) for v in leaves):
        return h
    if tree_util.treedef_is_leaf(td):
        return None if g is None else np.zeros_like(g)
    hs = [None] * len(leaves) if h is None else td.flatten_up_to(h)
    gs = [None] * len(leaves) if g is None else td.flatten_up_to(g)
    out = [
        (None if gv is None else np.zeros_like(gv)) if _is_int_leaf(v) else hv
        for v, hv, gv in zip(leaves, hs, gs)
    ]
    return tree_util.tree_unflatten(td, out)


def _register_float0():
    from ..primitives.registry import Primitive, register

    f0 = register(Primitive("ad.int_float0", _int_float0, kind="internal"))
    drop = register(Primitive("ad.float0_drop", _float0_drop, kind="internal"))

    def rule(c):
        # the same call on operands all batched (the float0 leaves then carry the
        # batch axis, as JAX's do under vmap)
        if not any(c.batched(p) for p in c.bound):
            return c.rebuild(), False
        return c.rebuild(**{p: c.materialize(c.arg(p)) for p in c.bound})

    for p in (f0, drop):
        p.def_batch(rule)
    return f0, drop


int_float0, float0_drop = _register_float0()


def_adjoint_pair(int_float0, float0_drop)  # int_float0(g, x) and its transpose float0_drop(h, g, x)
int_float0.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), rng.normal(size=(2, 3))), {}),
    (((rng.normal(size=3), rng.normal(size=2)), (rng.normal(size=3), np.arange(2))), {}),
]
float0_drop.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), rng.normal(size=(2, 3)), rng.normal(size=(2, 3))), {}),
]


def _float0_for_ints(fdef: Any, wrt: Sequence[str], with_value: bool, has_aux: bool) -> None:
    """``allow_int=True``: each gradient in the generated function's final
    ``return`` becomes ``ad.int_float0(gradient, param)``, so integer and
    boolean leaves of the differentiated inputs get ``float0`` zeros at run time
    (the generated code is specialized on pytree structure, not dtypes)."""
    import gast

    ret = fdef.body[-1]
    assert isinstance(ret, gast.Return)
    holder, field = ret, "value"
    if with_value:
        holder, field = ret.value.elts, 1
    elif has_aux:
        holder, field = ret.value.elts, 0
    grads = holder[field] if isinstance(holder, list) else getattr(holder, field)
    if len(wrt) == 1 and not isinstance(grads, gast.Tuple):
        new = N.call("ad.int_float0", [grads, N.name(wrt[0])])
        if isinstance(holder, list):
            holder[field] = new
        else:
            setattr(holder, field, new)
        return
    grads.elts = [N.call("ad.int_float0", [e, N.name(p)]) for e, p in zip(grads.elts, wrt)]
