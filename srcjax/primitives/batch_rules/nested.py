"""Batching rules of the batching helpers themselves (nested vmap:
``vmap(vmap(f))``, ``vmap(jacfwd(f))``): ``ad.select``, ``ad.expand_to_rank``,
``ad.batch_broadcast``, and the per-example helpers (``ad.bmatmul``, ...)
run once on the outer and inner batch axes folded into one."""

from __future__ import annotations

import gast
import numpy as np

from ...frontend import nodes as N
from ..ad.casts import require_constant
from ..control.custom_checks import check_star_len, check_switch_index, check_weak_int
from ._base import _def, _helper_materialized, _shifted_static_rule
from .runtime_index import batched_pred
from .runtime_products import bmatmul, bmatmul_left, bmatmul_right, bunbroadcast
from .runtime_select import branch_input, check_branch_values, check_cond_types, select
from .runtime_shape import axis_len, bbroadcast_like, fold_axes, unfold_axes
from .runtime_trees import batch_broadcast, batch_unbroadcast, lift

_def([select], _helper_materialized("take", "a", "b"))
# (nested vmap: the inner vmap's check ran on the values it could see; not repeated)
_def([check_branch_values], lambda c: (N.const(None), False))
_def([check_cond_types], lambda c: (N.const(None), False))
# the dtype check reads the whole batch at once
_def(
    [require_constant, check_switch_index, check_weak_int],
    lambda c: (c.rebuild(), False),
)


def _star_len_rule(c):
    # f(*xs) of a batched array xs: its items follow the batch axis
    ok, lead = c.static("lead")
    if not ok or not c.batched("xs"):
        return c.rebuild(), False
    return c.rebuild(lead=N.const(int(lead or 0) + 1)), False


_def([check_star_len], _star_len_rule)
_def([branch_input], _helper_materialized("take", "x"))


_def([batch_broadcast, batch_unbroadcast], _shifted_static_rule("axis", 0, ("size",)))


_def([lift], _shifted_static_rule("nb", 1, ("rank",)))


# one more leading (batch) axis before the folded ones
_def([fold_axes, unfold_axes], _shifted_static_rule("lead", 0, ("n", "lead")))


def _axis_len_rule(c):
    ok, axis = c.static("axis")
    if not ok or c.batched("axis"):
        return None
    return c.rebuild(axis=N.const(int(axis) + 1)), False  # the same for every example


_def([axis_len], _axis_len_rule)


def _folded_operand(c, pname, inner, force, inner_size):
    """Operand ``pname`` over the folded (outer * inner) axis: ``(node, flag)``.
    ``inner``: whether it carries the inner axis (its flag); ``force``: fold it
    even when it carries neither axis (a shape reference whose cotangent must
    stay per example)."""
    x = c.arg(pname)
    outer = c.batched(pname)
    if outer and inner:
        return N.call("ad.fold_axes", [x]), True
    if outer:
        return N.call(
            "ad.fold_axes", [N.call("ad.batch_broadcast", [x, inner_size, N.const(1)])]
        ), True
    if inner:
        return N.call("ad.fold_axes", [N.call("ad.batch_broadcast", [x, c.size, N.const(0)])]), True
    if force:
        both = N.call("ad.batch_broadcast", [N.call("ad.batch_broadcast", [x, inner_size]), c.size])
        return N.call("ad.fold_axes", [both]), True
    return x, False


def _folded_rule(arrays, flags, result_inner, per_example=None, shape_only=()):
    """A batching rule for a per-example helper ``prim(*arrays, *flags)``:
    ``arrays`` its array parameters, ``flags`` the matching inner-batch flag
    parameters (``None``: always batched), ``result_inner(flag values)`` whether
    the result carries the inner axis; ``per_example`` names an array whose
    result is summed over the inner axis when its flag is False (a matmul
    adjoint of an operand shared by the inner examples): folded anyway, and the
    sum taken after unfolding. ``shape_only``: arrays read for their shape
    only (the result is the same for every outer example when only they carry
    the outer axis and no inner axis is involved)."""

    def rule(c):
        vals = {}
        for f in flags:
            if f is None:
                continue
            ok, v = c.static(f)
            if not ok or not isinstance(v, (bool, np.bool_)):
                return None
            vals[f] = bool(v)
        for p in arrays:
            node = c.bound.get(p)
            if node is None or (isinstance(node, gast.Constant) and node.value is None):
                return None  # a hole: the helper's own zeros (rare: the loop)
        inner = {p: (True if f is None else vals[f]) for p, f in zip(arrays, flags)}
        if not result_inner(vals):
            # the result carries no inner axis: the outer axis is the only batch
            # axis (a shape reference carrying the inner one gives its first row)
            changes = {}
            for p, f in zip(arrays, flags):
                if inner[p]:
                    if p not in shape_only:
                        return None
                    ax = N.const(1 if c.batched(p) else 0)
                    changes[p] = N.call("jnp.take", [c.arg(p), N.const(0)], {"axis": ax})
                if f is not None:
                    changes[f] = N.const(c.batched(p))
            data = [p for p in arrays if p not in shape_only]
            return c.rebuild(**changes), any(c.batched(p) for p in data)
        ref = next(p for p in arrays if inner[p])
        ref_axis = 1 if c.batched(ref) else 0
        size_i = c.let("inner_size", N.call("ad.axis_len", [c.arg(ref), N.const(ref_axis)]))
        changes = {}
        summed = per_example is not None and not inner[per_example]
        for p, f in zip(arrays, flags):
            node, flag = _folded_operand(c, p, inner[p], p == per_example, size_i)
            changes[p] = node
            if f is not None:
                changes[f] = N.const(flag)
        out = N.call("ad.unfold_axes", [c.rebuild(**changes), c.size])
        if summed:
            out = N.call("jnp.sum", [out], {"axis": N.const(1)})
        return out

    return rule


_def([bmatmul], _folded_rule(("a", "b"), ("ab", "bb"), lambda v: v["ab"] or v["bb"]))
_def(
    [bmatmul_left],
    _folded_rule(("g", "a", "b"), (None, "ab", "bb"), lambda v: True, per_example="a"),
)
_def(
    [bmatmul_right],
    _folded_rule(("g", "a", "b"), (None, "ab", "bb"), lambda v: True, per_example="b"),
)
_def(
    [bunbroadcast],
    _folded_rule(("g", "x"), ("gb", "xb"), lambda v: v["gb"], shape_only=("x",)),
)
_def([bbroadcast_like], _folded_rule(("x", "like"), ("xb", "lb"), lambda v: True))


def _batched_pred_rule(c):
    """Batched again by an outer vmap: one more leading axis."""
    _, lead = c.static("lead")  # (a constant: written by batching._pred_check)
    return c.rebuild(lead=N.const((1 if lead is None else lead) + 1))


_def([batched_pred], _batched_pred_rule)
