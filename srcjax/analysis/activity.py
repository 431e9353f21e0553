"""Activity analysis: which names of a normalized function carry a derivative.

A name is *active* when some assignment can give it a nonzero derivative with
respect to the differentiated inputs ``wrt``: it is computed by a
differentiable primitive from an active operand, copied or packed from an
active name, popped from an active list, or appended to with an active value.
The analysis is flow-insensitive (a loop body or a branch counts wherever it
sits) and runs to a fixpoint, so a value that becomes active in a later loop
trip is found too. Forward mode (:mod:`srcjax.transforms.forward`) and reverse
mode (:mod:`srcjax.transforms.reverse`) both start from it.

It also finds, for reverse mode, the names that hold Python containers
(``containers``: tuples, lists, dicts; their cotangents are sparse) and those
that *may* (``maybe``: the result of an unknown call, a ``None`` placeholder,
a custom function's output), so that their cotangents are summed with
``ad.tree_add``.

Along the way it refuses ``obj.method(v)`` with an active ``v`` (see
:func:`object_method_error`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, Iterable, List, Optional, Set

import gast

from ..frontend import nodes as N

__all__ = [
    "Activity",
    "analyze_activity",
    "element_activity",
    "object_method_error",
    "single_packs",
]


@dataclass
class Activity:
    """The result of :func:`analyze_activity` (sets of variable names)."""

    #: names that may carry a nonzero derivative
    active: Set[str]
    #: names that surely hold a Python container
    containers: Set[str] = field(default_factory=set)
    #: names that may hold a container (or a ``None`` hole)
    maybe: Set[str] = field(default_factory=set)
    #: :func:`single_packs` of the body
    packs: Dict[str, List[Any]] = field(default_factory=dict)


def analyze_activity(
    stmts: List[Any],
    wrt: Iterable[str],
    *,
    src: Any = None,
    containers: Iterable[str] = (),
    maybe: Iterable[str] = (),
    loop_passes: int = 1,
) -> Activity:
    """Activity of the names of a normalized body ``stmts``.

    Args:
        stmts: the statements (normalized: each assignment carries ``sj_op``).
        wrt: the names differentiated with respect to (active from the start).
        src: the function's source (``frontend.source``), to locate errors.
        containers, maybe: names known to hold (to maybe hold) containers at
            the start (reverse mode's parameters of kind "tree" / "any").
        loop_passes: how often one sweep walks a loop body (reverse mode: 2).

    Returns:
        An :class:`Activity`; ``active`` holds ``wrt``.

    Raises:
        NoDerivativeRuleError: a method of an untransformed object is called
            with an active value (:func:`object_method_error`).
    """
    act = Activity(set(wrt), set(containers), set(maybe), single_packs(stmts))
    while True:
        before = (len(act.active), len(act.containers), len(act.maybe))
        _sweep(stmts, act, src, loop_passes)
        if before == (len(act.active), len(act.containers), len(act.maybe)):
            return act


def _any_in(names: Iterable[str], where: Set[str]) -> bool:
    return any(n in where for n in names)


def _sweep(stmts: List[Any], act: Activity, src: Any, loop_passes: int) -> None:
    active, containers, maybe = act.active, act.containers, act.maybe
    for s in stmts:
        op = getattr(s, "sj_op", None)
        if op is not None and op.kind == "unknown":
            loc = src.location(s) if src is not None and hasattr(s, "lineno") else None
            err = object_method_error(op, active, loc, s, "a differentiated value")
            if err is not None:
                raise err
        if isinstance(s, gast.Assign) and op is not None:
            t = s.targets[0].id
            operands = op.operand_names()
            if op.kind == "prim":
                _prim_assign(op, t, operands, act)
            elif op.kind == "copy":
                if any(isinstance(v, gast.Constant) and v.value is None for v in op.elts):
                    # `result = None` (vmap's placeholder for a value set in a
                    # loop): a hole whose cotangent may stay None
                    maybe.add(t)
                if _any_in(operands, active):
                    active.add(t)
                if _any_in(operands, containers):
                    containers.add(t)
                if _any_in(operands, maybe):
                    maybe.add(t)
            elif op.kind == "pack":
                containers.add(t)
                if _any_in(operands, active):
                    active.add(t)
            elif op.kind == "unknown" or op.keeps:
                maybe.add(t)
                if _any_in(operands, active):
                    active.add(t)
            elif op.kind == "pop":
                if op.target in active:
                    active.add(t)
            elif op.kind == "append":  # lst = ad.push(lst, v)
                containers.add(t)
                if _any_in(operands, active):
                    active.add(op.target)
                    active.add(t)
        elif isinstance(s, gast.Expr) and op is not None and op.kind == "append":
            if _any_in(op.operand_names(), active):
                active.add(op.target)
        elif isinstance(s, gast.If):
            _sweep(s.body, act, src, loop_passes)
            _sweep(s.orelse, act, src, loop_passes)
        elif isinstance(s, (gast.While, gast.For)):
            for _ in range(loop_passes):
                _sweep(s.body, act, src, loop_passes)


def _prim_assign(op: Any, t: str, operands: List[str], act: Activity) -> None:
    prim = op.prim
    elem = element_activity(op, act.packs, act.active)
    if elem is not None:
        if elem:
            act.active.add(t)
    elif prim.differentiable and _any_in(operands, act.active):
        act.active.add(t)
    if prim.returns_tree:
        act.containers.add(t)
    elif prim.kind == "custom":
        act.maybe.add(t)  # a custom_vjp/jvp function may return a tuple
    if prim.namespace == "ad" and not prim.array_result:
        # helpers of generated code pass containers through (ad.getitem of a
        # list of lists, ad.setitem of a dict, ad.tree_slice, ...)
        for v in op.bound.values():
            for it in v if isinstance(v, list) else [v]:
                if isinstance(it, gast.Name) and it.id in act.containers:
                    act.containers.add(t)
                if isinstance(it, gast.Name) and it.id in act.maybe:
                    act.maybe.add(t)  # (and holes: None stays None)


def single_packs(stmts: List[Any]) -> Dict[str, List[Any]]:
    """Names bound exactly once, by a tuple or list display, and never appended to:
    ``name -> its element nodes``. Activity analysis reads ``t = out[i]`` of such a
    name as element ``i``'s activity, not the whole display's: a composition
    returning ``(x_promoted, a_promoted)`` would otherwise make ``a`` active with
    ``x`` (its derivative computed for nothing, or a rule that raises run)."""
    stores: Dict[str, int] = {}
    packs: Dict[str, List[Any]] = {}
    appended: set = set()
    for node in N.walk(gast.Module(body=list(stmts), type_ignores=[])):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Store):
            stores[node.id] = stores.get(node.id, 0) + 1
        op = getattr(node, "sj_op", None)
        if op is None:
            continue
        if op.kind == "append" and op.target:
            appended.add(op.target)
        if (
            op.kind == "pack"
            and isinstance(node, gast.Assign)
            and isinstance(node.targets[0], gast.Name)
            and isinstance(node.value, (gast.Tuple, gast.List))
        ):
            packs[node.targets[0].id] = list(node.value.elts)
    return {n: e for n, e in packs.items() if stores.get(n) == 1 and n not in appended}


def element_activity(op: Any, packs: Dict[str, List[Any]], active: Any) -> Any:
    """For ``t = x[i]`` (``ad.getitem``) of a name in ``packs`` with a constant int
    ``i``: whether element ``i`` is active (True/False); None when not such a read."""
    if op.prim.part != "item":  # (x[i]: ad.getitem)
        return None
    x, idx = op.bound.get("x"), op.bound.get("idx")
    if not (isinstance(x, gast.Name) and x.id in packs):
        return None
    if not (isinstance(idx, gast.Constant) and type(idx.value) is int):
        return None
    elts = packs[x.id]
    if not -len(elts) <= idx.value < len(elts):
        return None
    e = elts[idx.value]
    return any(n in active for n in N.names_in(e))


def object_method_error(
    op: Any, names: Any, loc: Any, s: Any, what: str, error: Any = None
) -> Optional[Exception]:
    """The error for ``obj.method(v)`` (an ``unknown`` op with ``effect``) given a
    value in ``names`` (active, or batched) as an argument, else None. The method
    runs as it is, so the object may keep ``v`` (``self.total = self.total + v``)
    where no transform follows it: refused even where the call's result is not
    used (grad of an accumulator object gave 0.0, JAX 3.0; vmap mixed the
    examples). ``what``: "a differentiated value" or "a batched value"; ``loc``:
    the user's location; ``error``: the class (NoDerivativeRuleError)."""
    if op.kind != "unknown" or not op.effect:
        return None
    args = op.elts[1:] if op.effect == "method" else op.elts
    if not any(isinstance(e, gast.Name) and e.id in names for e in args):
        return None
    if error is None:
        from ..errors import NoDerivativeRuleError as error
    call = N.to_source(s.value.func).strip() + "(...)"
    if op.effect == "construct":
        return error(
            f"`{call}` builds an instance of a class that is no pytree from {what}: "
            "srcjax cannot follow the value into the instance",
            loc,
            op.hint,
        )
    return error(
        f"`{call}` calls a method of an object srcjax does not transform with {what} "
        "as an argument: the object may keep it, where srcjax cannot follow it",
        loc,
        "make the method a function that returns the new value (acc = add(acc, v)), or "
        "register the class as a pytree (srcjax.tree_util.register_pytree_node_class): "
        "then its methods are transformed with your code",
    )
