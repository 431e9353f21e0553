"""Batching rules of elementwise primitives (:func:`elementwise_rule`, used by
the pass for every ``kind == "elementwise"`` primitive) and of the primitives
that apply unchanged to batched operands (the same-call family)."""

from __future__ import annotations

import gast

from ...frontend import nodes as N
from ._base import _def, _is_name, _same


def elementwise_rule(c):
    """Elementwise primitives: align the per-example ranks of the batched operands
    with the other array operands, then call the primitive unchanged."""
    if c.prim.public == "jnp.where" and c.bound.get("x") is None:
        return None  # one-argument where (nonzero): shapes differ per example
    names = []
    for pname, v in c.bound.items():
        items = v if isinstance(v, list) else [v]
        for it in items:
            if _is_name(it):
                names.append((pname, it))
    changes = {}
    if len(names) > 1:
        for pname, node in names:
            if not c.batched(pname) or isinstance(c.bound[pname], list):
                continue
            cur = node
            for qname, other in names:
                if qname == pname or (_is_name(other) and other.id == node.id):
                    continue
                cur = c.lift(cur, other)
            changes[pname] = cur
    if c.prim.op == "unary not":
        # `not x` per example; written as a comparison so that it stays an array
        # operation when this code is normalized again
        return gast.Compare(
            left=changes.get("x", c.arg("x")), ops=[gast.Eq()], comparators=[N.const(False)]
        )
    return c.rebuild(**changes)


_def(
    [
        "jnp.zeros_like",
        "jnp.ones_like",
        "jnp.empty_like",
        "jnp.copy",
        "jnp.asarray",
        "jnp.array",
        "ad.zeros_like",
        "ad.astype",
        "jnp.matrix_transpose",
        "jnp.tril",
        "jnp.triu",
        "jnp.linalg.inv",
        "jnp.linalg.det",
        "jnp.linalg.slogdet",
        "jnp.linalg.cholesky",
        "jnp.linalg.eigh",
        "jnp.linalg.eigvalsh",
        "ad.replace_inf",
        "ad.cholesky_phi",
    ],
    _same,
)


def _full_like(c):
    if c.batched("fill_value") and not c.batched("a"):
        return c.rebuild(
            a=c.materialize(c.arg("a")), fill_value=c.lift(c.arg("fill_value"), c.arg("a"))
        )
    if c.batched("fill_value"):
        return c.rebuild(fill_value=c.lift(c.arg("fill_value"), c.arg("a")))
    return c.rebuild()


_def(["jnp.full_like"], _full_like)
_def(["ad.one_if_none", "ad.tri_mask", "ad.real_only"], _same)
