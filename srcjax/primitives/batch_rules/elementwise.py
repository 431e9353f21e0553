"""Batching rules of elementwise primitives (:func:`elementwise_rule`, used by
the pass for every ``kind == "elementwise"`` primitive) and of the primitives
that apply unchanged to batched operands (the same-call family)."""

from __future__ import annotations

import gast

from ...frontend import nodes as N
from ..ad.casts import astype
from ..ad.shapes import tril, triu
from ..ad.zeros import zeros_like as ad_zeros_like
from ..creation import array, asarray, empty_like, full_like, ones_like, zeros_like
from ..elementwise.minmax import replace_inf
from ..linalg.decompositions import cholesky, eigh, eigvalsh, phi, real_only
from ..linalg.solve import det, inv, slogdet
from ..linalg.triangular import tri_mask
from ..reductions.logsumexp import one_if_none
from ..structural.layout import copy, matrix_transpose
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
        zeros_like,
        ones_like,
        empty_like,
        copy,
        asarray,
        array,
        ad_zeros_like,
        astype,
        matrix_transpose,
        tril,
        triu,
        inv,
        det,
        slogdet,
        cholesky,
        eigh,
        eigvalsh,
        replace_inf,
        phi,
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


_def([full_like], _full_like)
_def([one_if_none, tri_mask, real_only], _same)
