"""Loop-carry checks (``ad.check_carry``) that jit can decide from abstract
values: dropped where they surely pass (:func:`drop_carry_checks`)."""

from __future__ import annotations

from typing import Any

import gast
import numpy as np

from ...frontend import nodes as N
from ...frontend.normalize import Op
from .avals import Aval, _container_stand_in
from .common import _SCALAR_TYPES
from .dce import _filter


# ---------------------------------------------------------------------------- carry checks
def _is_carry_check(s: Any) -> bool:
    """``ad.check_carry(...)`` as a statement (vmap's batched loop assigns its
    result: ``unused = ad.check_carry(...)``)."""
    op = getattr(s, "sj_op", None)
    if op is None or op.kind != "prim" or not op.prim.carry_check:
        return False
    return isinstance(s, gast.Expr) or (
        isinstance(s, gast.Assign)
        and isinstance(s.value, gast.Call)
        and isinstance(s.targets[0], gast.Name)
    )


def is_lax_loop(s: Any) -> bool:
    """Whether loop ``s`` is a lax loop (its body checks its carry, or did before
    :func:`drop_carry_checks`), whose carries have JAX's types (lax_carries.py)."""
    return getattr(s, "sj_lax_loop", False) or any(_is_carry_check(t) for t in s.body)


def drop_carry_checks(fdef: Any) -> Any:
    """Remove the ``ad.check_carry`` calls (a lax loop body must keep its
    carry's structure, shapes and dtypes: JAX's TypeError) that cannot fail:
    where the abstract values of the initial carry and of the body's carry
    (run :func:`infer_avals` first; inside loops they hold for every pass)
    pass the check itself. A body that does change its carry, or one whose
    carry is not known, keeps the check, which then runs on every pass."""
    for s in N.walk_stmts(fdef.body):
        if isinstance(s, (gast.For, gast.While)) and is_lax_loop(s):
            s.sj_lax_loop = True  # (what a later inference still needs to know)
    for s in N.walk_stmts(fdef.body):
        if isinstance(s, gast.Assign) and _carry_check_passes(s):
            # `unused = ad.check_carry(...)` (vmap's): the check returns None
            s.value = N.const(None)
            s.sj_op = Op("copy", elts=[N.const(None)])
    fdef.body = _filter(fdef.body, lambda s: not _carry_check_passes(s))
    return fdef


def _exact_stand_in(a: Aval) -> Any:
    """A zero-stride stand-in with ``a``'s shape, dtype and weak type."""
    if a.weak:
        return a.ptype(1)
    return np.broadcast_to(np.zeros((), a.dtype), a.shape)


def _carry_check_passes(s: Any) -> bool:
    if not _is_carry_check(s) or not getattr(s, "sj_avals_sure", False):
        return False
    bound = s.sj_op.bound
    avals = getattr(s, "sj_avals_in", None) or {}

    def value(node: Any) -> Any:
        if isinstance(node, gast.Constant) and isinstance(node.value, _SCALAR_TYPES + (str,)):
            return node.value
        if isinstance(node, gast.Name) and avals.get(node.id) is not None:
            return _container_stand_in(avals[node.id], _exact_stand_in)
        raise ValueError("not known")

    from ...primitives.control import _check_carry

    try:
        args = [value(bound[k]) for k in ("what", "before", "after")]
        batch = [value(bound[k]) if k in bound else 0 for k in ("before_batch", "after_batch")]
        _check_carry(*args, *batch)
    except Exception:  # noqa: BLE001 - unknown, or a carry that does change
        return False
    return True
