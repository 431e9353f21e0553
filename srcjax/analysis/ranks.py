"""Per-example scalars: the names of a normalized function every binding of
which is a 0-d value per example (a full reduction such as ``jnp.sum(x)``, a
Python number, or an elementwise primitive of such names and numbers), found
to a fixed point over the whole function (:func:`scalar_names`).

vmap reads it to emit no rank alignment where none is needed: aligning an
operand's per-example rank with that of a per-example scalar inserts no axes
(:meth:`srcjax.transforms.batching.calls.BatchCall.lift`)."""

from __future__ import annotations

from typing import Any, Dict, List, Set

import gast

__all__ = ["scalar_names"]


def _is_number(node: Any) -> bool:
    return (
        isinstance(node, gast.Constant)
        and isinstance(node.value, (int, float, complex))
        and not isinstance(node.value, bool)
    )


def _is_none(node: Any) -> bool:
    return node is None or (isinstance(node, gast.Constant) and node.value is None)


def _binding_reads(assign: Any) -> Any:
    """For ``t = <value>``: ``[]`` (a 0-d value whatever the names hold), a list
    of names (0-d when they all are), or None (not known to be 0-d)."""
    value = assign.value
    if _is_number(value):
        return []
    op = getattr(assign, "sj_op", None)
    if op is None:
        return None
    if op.kind == "copy":
        elts = op.elts
        if len(elts) == 1 and isinstance(elts[0], gast.Name):
            return [elts[0].id]
        return [] if len(elts) == 1 and _is_number(elts[0]) else None
    if op.kind != "prim":
        return None
    prim, bound = op.prim, op.bound
    if prim.fused_reduction is not None:
        # jnp.sum/mean/max/min over every axis, without keepdims: 0-d
        if _is_none(bound.get("axis")) and not _truthy(bound.get("keepdims")):
            return []
        return None
    if prim.kind == "elementwise" and prim.batch is None:
        names = []
        for v in bound.values():
            for it in v if isinstance(v, list) else [v]:
                if isinstance(it, gast.Name):
                    names.append(it.id)
                elif not (_is_number(it) or _is_none(it)):
                    return None
        return names
    return None


def _truthy(node: Any) -> bool:
    if _is_none(node):
        return False
    return not (isinstance(node, gast.Constant) and node.value is False)


def scalar_names(fdef: Any) -> Set[str]:
    """The names of ``fdef`` (a normalized function) that hold a 0-d value per
    example wherever they are bound: every store of the name is ``t = <value>``
    of a form :func:`_binding_reads` knows, and the names those read are such
    names too (the greatest fixed point: ``s = s * 0.5`` in a loop keeps a 0-d
    ``s``). Parameters, loop targets and unpacked tuples are never in it."""
    params = {a.id for a in fdef.args.args if isinstance(a, gast.Name)}
    for a in (fdef.args.vararg, fdef.args.kwarg, *fdef.args.kwonlyargs, *fdef.args.posonlyargs):
        if isinstance(a, gast.Name):
            params.add(a.id)
    stores: Dict[str, int] = {}
    reads: Dict[str, List[Any]] = {}
    for node in gast.walk(fdef):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        elif isinstance(node, (gast.FunctionDef, gast.Lambda)) and node is not fdef:
            return set()  # (a nested function: its names are not this analysis')
    for node in gast.walk(fdef):
        if (
            isinstance(node, gast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], gast.Name)
        ):
            reads.setdefault(node.targets[0].id, []).append(_binding_reads(node))
    scalars = {
        n
        for n, rs in reads.items()
        if n not in params and len(rs) == stores.get(n, 0) and all(r is not None for r in rs)
    }
    changed = True
    while changed:
        changed = False
        for n in list(scalars):
            if any(m not in scalars for r in reads[n] for m in r):
                scalars.discard(n)
                changed = True
    return scalars
