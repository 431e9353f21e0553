"""Batching rules of control flow's helpers: lax.scan's pytree slicing and
stacking, scan lengths, dict keys and sequence lengths."""

from __future__ import annotations

from ...frontend import nodes as N
from ..control.pytrees import tree_leaves_p, tree_unflatten_like
from ..control.scan import (
    keys,
    scan_length,
    seq_len,
    tree_slice,
    tree_slice_adjoint,
    tree_stack,
    tree_unstack,
)
from ._base import _def


def _tree_slice_rule(c):
    if not c.batched("xs"):
        return c.rebuild(), False
    if c.batched("i"):
        return None
    return N.call("ad.btree_slice", [c.arg("xs"), c.arg("i")])


def _tree_slice_adjoint_rule(c):
    if c.batched("i"):
        return None
    ct = c.materialize(c.arg("ct"))
    xs = c.materialize(c.arg("xs"))
    return N.call("ad.btree_slice_adjoint", [ct, xs, c.arg("i")])


def _tree_stack_rule(c):
    items = c.arg("items")
    if not c.batched("items"):
        return c.rebuild(), False
    return N.call("ad.btree_stack", [c.materialize(items)])


def _tree_unstack_rule(c):
    if not c.batched("ct"):
        return c.rebuild(), False
    return N.call("ad.btree_unstack", [c.arg("ct"), c.arg("items")])


def _tree_leaves_rule(c):
    # a batched container's leaves all carry the batch axis: its leaves are the
    # examples' leaves stacked (no loop over the examples)
    ok, is_leaf = c.static("is_leaf")
    if not ok or is_leaf is not None:
        return None  # (a predicate sees one example's subtrees: per example)
    return c.rebuild(), True


def _tree_unflatten_like_rule(c):
    # only the structure of `tree` is read: the same in every example
    if not c.batched("leaves"):
        return None
    return c.rebuild(), True


_def([tree_leaves_p], _tree_leaves_rule)
_def([tree_unflatten_like], _tree_unflatten_like_rule)
_def([tree_slice], _tree_slice_rule)
_def([tree_slice_adjoint], _tree_slice_adjoint_rule)
_def([tree_stack], _tree_stack_rule)
_def([tree_unstack], _tree_unstack_rule)


def _scan_length_rule(c):
    if not c.batched("xs"):
        return c.rebuild(), False
    return N.call("ad.bscan_length", [c.arg("xs"), c.arg("length")]), False


_def([scan_length], _scan_length_rule)


def _keys_rule(c):
    """``ad.keys(d)``: a batched dict has the keys of one example."""
    return N.call("ad.keys", [c.arg("d")]), False


_def([keys], _keys_rule)


def _seq_len_rule(c):
    xs = c.arg("xs")
    if c.batched("xs") and not c.is_container(xs):
        return N.call("ad.example_len", [xs]), False  # per example: the second axis
    return N.call("ad.seq_len", [xs]), False


_def([seq_len], _seq_len_rule)
