"""A logsumexp and the softmax weights its derivative reads, computed once.

``grad`` of ``logits - logsumexp(logits, axis=1, keepdims=True)`` (a
cross-entropy) computes ``special.logsumexp(a, 1, None, True, False)`` forward
and ``ad.logsumexp_weights(a, 1, None, False)`` backward: each takes the max of
``a``, ``exp(a - max)`` and its sum (R5: 9 us each on a (64, 10) array). When
both read the same value of ``a`` with the same axis, no ``b`` and no sign, the
first becomes ``pair = ad.logsumexp_pair(a, axis, keepdims)`` and the two
results ``pair[0]`` and ``pair[1]``: the same values bit for bit (see
``primitives/reductions/logsumexp._logsumexp_pair``), one set of passes.
Top-level statements only.
"""

from __future__ import annotations

from typing import Any, Optional

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .common import _is_assign, _new_assign


def _const(node: Any, default: Any) -> Any:
    """The value of a constant operand (``default`` when absent); ``_NOT`` else."""
    if node is None:
        return default
    if isinstance(node, gast.Constant):
        return node.value
    return _NOT


_NOT = object()


def _operands(s: Any, prim: Any) -> Optional[tuple]:
    """``(a, axis, keepdims)`` of ``s`` when it calls ``prim`` on a name with a
    constant axis, no ``b`` and no sign; else None."""
    if not _is_assign(s):
        return None
    op = s.sj_op
    if op.kind != "prim" or op.prim is not prim:
        return None
    b = op.bound
    a = b.get("a")
    axis = _const(b.get("axis"), None)
    if not isinstance(a, gast.Name) or axis is _NOT or not (axis is None or type(axis) is int):
        return None
    if _const(b.get("b"), None) is not None or _const(b.get("return_sign"), False) is not False:
        return None
    keepdims = _const(b.get("keepdims"), False)
    if type(keepdims) is not bool:
        return None
    return a.id, axis, keepdims


def _stores(stmts: list, name: str) -> bool:
    for s in stmts:
        for n in N.walk(s):
            if isinstance(n, gast.Name) and n.id == name and not isinstance(n.ctx, gast.Load):
                return True
    return False


def _item(stmt: Any, pair: str, idx: int, getitem: Any) -> Any:
    """``stmt``'s target bound to ``pair[idx]`` (its abstract value kept)."""
    target = stmt.targets[0].id
    value = gast.Subscript(value=N.name(pair), slice=N.const(idx), ctx=gast.Load())
    op = Op("prim", prim=getitem, bound={"x": N.name(pair), "idx": N.const(idx)})
    new = _new_assign(target, value, op, stmt)
    for attr in ("sj_aval", "sj_sure"):
        if hasattr(stmt, attr):
            setattr(new, attr, getattr(stmt, attr))
    return new


def pair_logsumexps(fdef: Any) -> int:
    """Rewrite each pair (see the module); returns how many."""
    lse = registry.by_public("special.logsumexp")
    weights = registry.by_public("ad.logsumexp_weights")
    pair_p = registry.by_public("ad.logsumexp_pair")
    getitem = registry.by_public("ad.getitem")
    body = fdef.body
    taken = {n.id for n in N.walk(fdef) if isinstance(n, gast.Name)}
    done = 0
    i = 0
    while i < len(body):
        got = _operands(body[i], lse)
        if got is None:
            i += 1
            continue
        a, axis, keepdims = got
        j = next(
            (
                k
                for k in range(i + 1, len(body))
                if (w := _operands(body[k], weights)) is not None and w[:2] == (a, axis)
            ),
            None,
        )
        if j is None or _stores(body[i + 1 : j], a):
            i += 1
            continue
        first, second = body[i], body[j]
        k = 1
        while f"lse_pair{k}" in taken:
            k += 1
        name = f"lse_pair{k}"
        taken.add(name)
        args = [N.name(a), N.const(axis), N.const(keepdims)]
        call = _new_assign(
            name,
            N.call(pair_p.public, args),
            Op(
                "prim",
                prim=pair_p,
                bound={"a": N.name(a), "axis": N.const(axis), "keepdims": N.const(keepdims)},
            ),
            first,
        )

        body[j] = _item(second, name, 1, getitem)
        body[i : i + 1] = [call, _item(first, name, 0, getitem)]
        done += 1
        i += 2
    return done
