"""Batching rules of reverse mode's container helpers (``ad.tree_add``,
``ad.getattr``, ``ad.setitem``, ``ad.pop``, seeds, ...)."""

from __future__ import annotations

import gast
import numpy as np

from ...frontend import nodes as N
from ..ad.zeros import add_any
from ..control.attributes import attr_adjoint, attr_part, getattr_, static_attr
from ..control.cotangents import (
    part,
    pop,
    pop_like,
    push,
    seed,
    seed_holomorphic,
    setitem,
    tree_add,
)
from ..structural.joining import fill_none
from ._base import _def, _materialized
from .runtime_trees import row_stand_in, tree_axis_size


def _shift_tree_axes(axes):
    """``axes`` (a vmap in_axes pytree prefix) for the same value with one more
    leading batch axis: non-negative ints move up by one; negative ints (counted
    from the end) and ``None`` stay."""
    if isinstance(axes, dict):
        return {k: _shift_tree_axes(v) for k, v in axes.items()}
    if isinstance(axes, (list, tuple)):
        vals = [_shift_tree_axes(v) for v in axes]
        return type(axes)(*vals) if hasattr(axes, "_fields") else type(axes)(vals)
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool) and axes >= 0:
        return int(axes) + 1
    return axes


def _tree_axis_size_rule(c):
    # the size of an inner vmap's axis is the same for every example of an outer
    # vmap (a static Python int, as range() and the batched code need): read past
    # the outer batch axis
    ok, axes = c.static("axes")
    if not ok:
        return None
    return N.call(
        "ad.tree_axis_size", [c.arg("x"), N.parse_expr(repr(_shift_tree_axes(axes)))]
    ), False


def _tree_same(c):
    """Container helpers of reverse mode: every container operand made batched."""
    names = [n for n in c.bound if n not in ("idx", "name")]
    return _materialized(c, *names)


_def([tree_add, part, push, fill_none, add_any], _tree_same)


def _getattr_rule(c):
    """``x.name`` of a batched object: batched, except a static attribute (one
    that is no child of the registered class: aux data), the same for all."""
    x, name = c.bound.get("x"), c.bound.get("name")
    if isinstance(x, gast.Name) and x.id in getattr(c.bp, "object_batches", ()):
        # a batch of a user's class instances (ad.stack_objects): per object
        return N.call("ad.object_attr", [N.clone(x), N.clone(name)])
    if isinstance(x, gast.Name) and isinstance(name, gast.Constant):
        skel = c.bp.skel.get(x.id)
        if isinstance(skel, tuple) and skel[0] == "class" and name.value in skel[2]:
            return c.rebuild(), False
    return c.rebuild()


_def([getattr_], _getattr_rule)
_def([static_attr], lambda c: (c.rebuild(), False))


def _attr_rule(c):
    """``ad.attr_adjoint(ct, x, name)`` / ``ad.attr_part(ct, x, name)``: a batched
    object is one whose leaves carry the batch axis, so the same call places (or
    takes) the batched part; ``ct`` is made batched when only ``x`` is."""
    return _materialized(c, "ct")


_def([attr_adjoint, attr_part], _attr_rule)


def _setitem(c):
    if c.batched("idx"):
        return None
    x = c.arg("x")
    if c.is_container(x):
        return _materialized(c, "x", "v")
    return None


_def([setitem], _setitem)


def _pop(c):
    return c.rebuild()


_def([pop, pop_like], _pop)


def _row_stand_in_rule(c):
    return N.call("ad.row_stand_in", [N.call("ad.row_stand_in", [c.arg("x")])]), False


def _seed(c):
    # one seed for every example, from a stand-in of one example's output (not
    # out[0]: the batch may be empty)
    x = c.arg("out")
    return N.call(c.prim.public, [N.call("ad.row_stand_in", [x])]), False


_def([seed, seed_holomorphic], _seed)
_def([row_stand_in], _row_stand_in_rule)
_def([tree_axis_size], _tree_axis_size_rule)
