"""Batching rules of the adjoint helpers of reverse and forward mode
(``ad.cotangent_like``, ``ad.broadcast_like``, ``ad.unbroadcast``,
``ad.pysum``, cotangent and tangent checks and casts, ``ad.construct``)."""

from __future__ import annotations

import gast

from ...frontend import nodes as N
from ..ad.casts import cast_cotangent, cast_tangent, keep_if_inexact, project_real
from ..ad.sums import unbroadcast
from ..control.attributes import pysum
from ..control.cotangents import check_cotangent, cotangent_like
from ..control.custom_checks import check_bwd
from ..control.pytrees import construct, construct_ct, construct_tangent
from ..control.scan import broadcast_like
from ..creation import array_adjoint
from ._base import _def, _materialized, _same


def _cotangent_like(c):
    x = c.arg("x")
    if c.is_container(x):
        return _materialized(c, "ct", "x")
    # x may still be a container at run time (a parameter of an inlined grad whose
    # kind was not known: a closed-over list of (W, b) under vmap): decided there
    return N.call("ad.bcotangent_like", [c.materialize(c.arg("ct")), c.materialize(x)])


def _broadcast_like_rule(c):
    """``ad.broadcast_like(x, like)``: per-example ranks aligned, then broadcast."""
    return N.call(
        "ad.bbroadcast_like",
        [c.arg("x"), c.arg("like"), N.const(c.batched("x")), N.const(c.batched("like"))],
    )


_def([broadcast_like], _broadcast_like_rule)


_def([cotangent_like], _cotangent_like)


def _unbroadcast(c):
    return N.call(
        "ad.bunbroadcast",
        [c.arg("g"), c.arg("x"), N.const(c.batched("g")), N.const(c.batched("x"))],
    ), c.batched("g")


_def([unbroadcast], _unbroadcast)


def _pysum(c):
    x = c.arg("x")
    if c.is_container(x):
        return _materialized(c, "x") if not c.batched("start") else None
    if c.batched("start"):
        return None
    total = N.call("jnp.sum", [x], {"axis": N.const(1)})
    ok, start = c.static("start")
    if ok and start == 0:
        return total
    return gast.BinOp(left=total, op=gast.Add(), right=c.arg("start"))


_def([pysum], _pysum)
_def([cast_cotangent, cast_tangent, keep_if_inexact], _same)


def _check_bwd(c):
    # per-example shapes compared on the whole batch: both sides batched
    prims = c.arg("primals")
    if isinstance(prims, gast.Tuple):
        prims = gast.Tuple(elts=[c.materialize(e) for e in prims.elts], ctx=gast.Load())
    elif prims is not None:
        prims = c.materialize(prims)
    return c.rebuild(out=c.materialize(c.arg("out")), primals=prims)


_def([check_bwd], _check_bwd)


def _check_cotangent(c):
    """Per-example check: the mapped axes of the cotangent and of the output are
    skipped (counted, so nested vmaps skip one more each)."""
    _, cb = c.static("ct_batch")
    _, ob = c.static("out_batch")
    expr = c.rebuild(
        ct_batch=N.const((cb or 0) + int(c.batched("ct"))),
        out_batch=N.const((ob or 0) + int(c.batched("out"))),
    )
    return expr if c.batched("ct") else (expr, False)


_def([check_cotangent], _check_cotangent)


def _construct_rule(c):
    """``ad.construct(cls, *args)`` (and its derivative helpers) under vmap: the
    arguments made batched, the same call (the instance's fields are batched);
    the helpers find the fields by identity of memory, which broadcasting keeps."""
    changes = {}
    for pname, v in c.bound.items():
        if pname == "cls":
            continue
        if isinstance(v, list):
            changes[pname] = [a if isinstance(a, gast.Constant) else c.materialize(a) for a in v]
        elif pname in ("g", "t", "ans"):
            changes[pname] = c.materialize(v)
    return c.rebuild(**changes)


_def([construct, construct_ct, construct_tangent], _construct_rule)


def _project_real_rule(c):
    """``ad.project_real(g, x)`` looks at dtypes only: the same call on batched
    operands (it ran as a per-example loop, 15x slower on W5)."""
    expr = c.rebuild()
    return expr if c.batched("g") else (expr, False)


_def([project_real], _project_real_rule)


def _array_adjoint_rule(c):
    """``ad.array_adjoint(g, like)`` of a batched cotangent and a ``like`` the
    same for every example (the primal list of ``jnp.array([...])`` under
    jacfwd(jacrev(f))): every leaf's rows at once (``ad.barray_adjoint``); a
    batched ``like`` falls back to the per-example loop."""
    if c.batched("like") or not c.batched("g"):
        return None
    return N.call("ad.barray_adjoint", [c.arg("g"), c.arg("like")])


_def([array_adjoint], _array_adjoint_rule)
