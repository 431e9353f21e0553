"""What jit's specialization decides (:func:`fold_static`): values known from the
abstract values become constants, helpers that would return an operand
unchanged become copies of it, and items of tuple displays become the item.

Generated code of other transforms cannot know shapes: vmap aligns ranks with
``ad.expand_to_rank(x, jnp.ndim(y) - 1)``, moves axes with ``ad.batch_axis(None,
jnp.ndim(x))``, and reverse mode sums cotangents back with
``ad.unbroadcast(g, x)``. Under jit every one of these is decided by the
argument types; left in, each costs a Python call per step (R6, Newton-CG with
``jvp(grad(f))`` under ``vmap``: two in three operations of a step were such
calls)."""

from __future__ import annotations

from typing import Any, Dict, List

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op
from .avals import Aval
from .common import _assigned, _is_assign, _is_scalar_const, _Static


def _literal(v: Any) -> bool:
    """A value that a constant of generated code spells exactly (ints, bools,
    None, strings, tuples of them: shapes, ranks, axes, einsum specs)."""
    if v is None or type(v) in (bool, int, float, str):
        return True
    if type(v) is tuple:
        return all(_literal(x) for x in v)
    return False


def _is_literal_node(node: Any) -> bool:
    if isinstance(node, gast.Constant):
        return node.value is None or type(node.value) in (bool, int, str)
    if isinstance(node, gast.Tuple):
        return all(_is_literal_node(e) for e in node.elts)
    return False


def _literal_value(node: Any) -> Any:
    if isinstance(node, gast.Tuple):
        return tuple(_literal_value(e) for e in node.elts)
    return node.value


def _to_copy(s: Any, node: Any, note: str) -> None:
    s.value = node
    s.sj_op = Op("copy", elts=[node])
    s.sj_note = note


def fold_static(fdef: Any) -> bool:
    """One round over the body (run :func:`infer_avals` first); returns whether
    anything changed (then propagate constants and run it again):

    - an assignment whose abstract value is a static Python value (``n =
      jnp.ndim(x)``, ``t = x.shape``, ``k = n - 1``) becomes that constant;
    - a pure helper with constant operands whose value is such a constant
      (``ad.batch_axis(None, 2)``, ``ad.batch_broadcast(None, 16)``) is
      evaluated now;
    - a helper with an ``identity_operand`` whose result has that operand's
      abstract value (``ad.expand_to_rank(x, 1)`` of an ``x`` of rank 2) becomes a copy
      of the operand: the helper would return it as it is;
    - ``t[i]`` of a tuple display ``t = (a, b)`` becomes ``a`` or ``b``;
    - a helper of a list just bound to ``[]`` that gives ``[]`` becomes that display.

    Only assignments whose abstract values are sure (not inside a loop whose
    values did not converge) are changed.
    """
    changed = False
    for s in N.walk_stmts(fdef.body):
        if not _is_assign(s) or not getattr(s, "sj_sure", False):
            continue
        op = s.sj_op
        if op.kind not in ("prim", "inactive"):
            continue
        if op.kind == "prim" and op.prim.effectful:
            continue
        res = getattr(s, "sj_aval", None)
        if isinstance(res, _Static) and _literal(res.value):
            if not (_is_literal_node(s.value) and _literal_value(s.value) == res.value):
                _to_copy(s, N.const(res.value), "known from the argument types")
                changed = True
            continue
        if op.kind != "prim":
            continue
        prim = op.prim
        if prim.pure and type(res) is tuple and not res:
            # an empty tuple of arrays (ad.einsum_vjp_consts of a spec with no constants)
            _to_copy(s, N.const(()), "known from the argument types")
            changed = True
            continue
        if prim.pure and _constant_call(s):  # (ad.batch_broadcast(None, 16) is None)
            value = _evaluate(s)
            if value is not _FAILED and _literal(value):
                _to_copy(s, N.const(value), "known from the argument types")
                changed = True
                continue
        if prim.identity_operand is not None:
            node = op.bound.get(prim.identity_operand)
            ins = getattr(s, "sj_avals_in", None) or {}
            if (
                isinstance(node, gast.Name)
                and isinstance(res, Aval)
                and not res.weak
                and ins.get(node.id) == res
                and not _unknown_numbers(s)
            ):
                _to_copy(s, N.clone(node), f"{prim.public}: nothing to change")
                changed = True
    if _forward_items(fdef.body, {}):
        changed = True
    if _empty_list_helpers(fdef.body):
        changed = True
    return changed


def _empty_list_helpers(stmts: List[Any]) -> bool:
    """``L = ad.batch_broadcast(L, 4)`` where ``L = []`` is the binding before it in
    the same block and nothing mentions ``L`` in between (vmap's broadcast of a
    scan's ``ys = []`` before the loop appends to it) becomes ``L = []`` when the
    helper gives an empty list for an empty list and its constant operands: a
    list bound to a call's result may be reached another way, and jit then knew
    no list's length (the vmapped scan's loops stayed untyped). Returns whether
    anything changed."""
    changed = False
    empty: Dict[str, bool] = {}  # names bound to `[]` and not mentioned since
    for s in stmts:
        for block in _blocks(s):
            changed |= _empty_list_helpers(block)
        if _is_assign(s) and isinstance(s.value, gast.List) and not s.value.elts:
            empty[s.targets[0].id] = True
            continue
        if _is_assign(s) and empty.get(s.targets[0].id) and _empty_result(s):
            s.value = gast.List(elts=[], ctx=gast.Load())
            s.sj_op = Op("pack", elts=[])
            s.sj_note = "an empty list"
            changed = True
            continue
        for n in N.names_in(s):
            empty.pop(n, None)
    return changed


def _blocks(s: Any) -> List[List[Any]]:
    if isinstance(s, gast.If):
        return [s.body, s.orelse]
    if isinstance(s, (gast.For, gast.While)):
        return [s.body]
    return []


def _empty_result(s: Any) -> bool:
    """Whether ``L = P(L, constants...)`` (a primitive without effects) gives an
    empty list for an empty ``L``."""
    op = s.sj_op
    if op.kind != "prim" or op.prim.effectful or not isinstance(s.value, gast.Call):
        return False
    t = s.targets[0].id
    args: Dict[str, Any] = {}
    for k, v in op.bound.items():
        if isinstance(v, gast.Name) and v.id == t:
            args[k] = []
        elif isinstance(v, gast.Constant):
            args[k] = v.value
        else:
            return False
    if not any(type(v) is list for v in args.values()):
        return False
    try:
        r = op.prim.impl(**args)
    except Exception:  # noqa: BLE001 - not decided now
        return False
    return type(r) is list and not r


_FAILED = object()


def _unknown_numbers(s: Any) -> bool:
    """Whether an operand is a Python number whose value is not known now (its
    stand-in, 1, may have given another shape: ``ad.expand_to_rank(x, rank)``)."""
    ins = getattr(s, "sj_avals_in", None) or {}
    for v in s.sj_op.bound.values():
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, gast.Name):
                a = ins.get(x.id)
                if isinstance(a, Aval) and a.weak:
                    return True
    return False


def _constant_call(s: Any) -> bool:
    for v in s.sj_op.bound.values():
        for x in v if isinstance(v, list) else [v]:
            if not (_is_literal_node(x) or _is_scalar_const(x)):
                return False
    return True


def _evaluate(s: Any) -> Any:
    """The helper's value on its constant operands, or ``_FAILED``."""
    op = s.sj_op
    args: List[Any] = []
    kwargs: Dict[str, Any] = {}
    try:
        for pname, p in op.prim.signature.parameters.items():
            if pname not in op.bound:
                continue
            v = op.bound[pname]
            vals = [_literal_value(x) for x in (v if isinstance(v, list) else [v])]
            if p.kind == p.VAR_POSITIONAL:
                args.extend(vals)
            else:
                kwargs[pname] = vals[0]
        return op.prim.impl(*args, **kwargs)
    except Exception:  # noqa: BLE001 - left to run time
        return _FAILED


def _forward_items(stmts: List[Any], table: Dict[str, tuple]) -> bool:
    """``u = t[i]`` after ``t = (a, b)`` (names or constants) in the same block,
    neither reassigned in between, becomes ``u = a``; and ``u = ad.unfold_axes(t,
    n, lead)`` after ``t = ad.fold_axes(x, lead)`` becomes ``u = x`` when ``u``
    has ``x``'s abstract value (the round trip of a folded helper that jit
    decided was an identity: ``ad.bbroadcast_like`` of same-shaped operands under
    vmap(hessian(f)), two reshapes per tangent)."""
    changed = False

    def kill(names: set) -> None:
        for k in list(table):
            if k in names or any(isinstance(e, gast.Name) and e.id in names for e in table[k][0]):
                del table[k]

    for s in stmts:
        if isinstance(s, gast.If):
            changed |= _forward_items(s.body, dict(table))
            changed |= _forward_items(s.orelse, dict(table))
            kill(_assigned(s))
            continue
        if isinstance(s, (gast.For, gast.While)):
            kill(_assigned(s))
            changed |= _forward_items(s.body, dict(table))
            kill(_assigned(s))
            continue
        if _is_assign(s):
            op = s.sj_op
            if op.kind == "prim" and op.prim.part == "item":
                base, idx = op.bound.get("x"), op.bound.get("idx")
                elts = table.get(getattr(base, "id", None), (None, None))[0]
                if (
                    isinstance(base, gast.Name)
                    and base.id in table
                    and table[base.id][1] is None
                    and isinstance(idx, gast.Constant)
                    and type(idx.value) is int
                    and -len(elts) <= idx.value < len(elts)
                ):
                    _to_copy(s, N.clone(elts[idx.value]), "an item of a tuple display")
                    changed = True
            elif op.kind == "prim" and op.prim.public == "ad.unfold_axes":
                changed |= _unfolded_fold(s, table)
            kill(_assigned(s))
            t = s.targets[0].id
            if (
                op.kind == "pack"
                and isinstance(s.value, gast.Tuple)
                and all(N.is_atom(e) for e in s.value.elts)
                and t not in N.names_in(s.value)
            ):
                table[t] = (list(s.value.elts), None)
            elif (
                op.kind == "prim" and op.prim.public == "ad.fold_axes" and getattr(s, "sj_sure", 0)
            ):
                x, lead = op.bound.get("x"), op.bound.get("lead", N.const(0))
                a = (getattr(s, "sj_avals_in", None) or {}).get(getattr(x, "id", None))
                if isinstance(x, gast.Name) and x.id != t and isinstance(lead, gast.Constant):
                    table[t] = ([x], (lead.value, a))
            continue
        kill(_assigned(s))
    return changed


def _unfolded_fold(s: Any, table: Dict[str, tuple]) -> bool:
    """``u = ad.unfold_axes(t, n, lead)`` of ``t = ad.fold_axes(x, lead)`` (in
    ``table``) whose result has ``x``'s abstract value: ``u = x``."""
    op = s.sj_op
    t, lead = op.bound.get("x"), op.bound.get("lead", N.const(0))
    entry = table.get(getattr(t, "id", None))
    if entry is None or entry[1] is None or not getattr(s, "sj_sure", False):
        return False
    (x,), (fold_lead, a) = entry
    res = getattr(s, "sj_aval", None)
    if not (isinstance(lead, gast.Constant) and lead.value == fold_lead):
        return False
    if not isinstance(res, Aval) or res.weak or a != res or _unknown_numbers(s):
        return False
    _to_copy(s, N.clone(x), "ad.unfold_axes of ad.fold_axes: nothing to change")
    return True


def lifts_as_subscripts(fdef: Any) -> int:
    """``t = ad.expand_to_rank(x, rank, nb)`` of an array whose shape jit knows, and which
    needs unit axes, becomes ``t = x[:, None]`` (``nb`` full slices, then one
    ``None`` per missing axis): the view ``ad.expand_to_rank`` returns, without its call
    (~0.5 us; R6's conjugate-gradient step lifted two scalars per example each
    iteration). Run last: the statement keeps its ``ad.expand_to_rank`` operation for the
    passes after jit's optimizer (fusion sees an opaque step, as before).
    Returns how many were rewritten."""
    done = 0
    for s in N.walk_stmts(fdef.body):
        if not _is_assign(s) or not getattr(s, "sj_sure", False):
            continue
        op = s.sj_op
        if (
            op.kind != "prim"
            or op.prim.public != "ad.expand_to_rank"
            or not isinstance(s.value, gast.Call)
        ):
            continue
        x, rank, nb = op.bound.get("x"), op.bound.get("rank"), op.bound.get("nb", N.const(1))
        if not (
            isinstance(x, gast.Name)
            and isinstance(rank, gast.Constant)
            and type(rank.value) is int
            and isinstance(nb, gast.Constant)
            and type(nb.value) is int
        ):
            continue
        a = (getattr(s, "sj_avals_in", None) or {}).get(x.id)
        res = getattr(s, "sj_aval", None)
        if not isinstance(a, Aval) or a.weak or not isinstance(res, Aval):
            continue
        extra = rank.value - (len(a.shape) - nb.value)
        if nb.value > len(a.shape) or extra <= 0 or len(res.shape) != len(a.shape) + extra:
            continue
        parts = [gast.Slice(lower=None, upper=None, step=None)] * nb.value
        parts += [N.const(None)] * extra
        sub = gast.Subscript(
            value=N.clone(x), slice=gast.Tuple(elts=parts, ctx=gast.Load()), ctx=gast.Load()
        )
        N.copy_origin(sub, s.value)
        s.value = sub
        s.sj_note = "ad.expand_to_rank: known shapes"
        done += 1
    return done
