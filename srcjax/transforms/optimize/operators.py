"""Calls of operator primitives as the operators (:func:`as_operators`), so
jit's algebraic passes see one form.

vmap writes a batched ``a * b`` as ``jnp.multiply(a, b)`` (the primitive applies
JAX's promotion, which NumPy's operator does not: float16 * int32 is float16 in
JAX, float64 in NumPy), and a user may write either form. jit's passes
(:mod:`.algebra`, :mod:`.cse`, fusion) read operators. Under jit the operands'
abstract values are known, and :mod:`.promote` casts the operands of an operator
wherever NumPy's result dtype would differ from JAX's, so the operator form
computes what the call computes.
"""

from __future__ import annotations

from typing import Any

import gast

from ...frontend import nodes as N
from .avals import Aval
from .common import _SCALAR_TYPES, _is_assign, _Static

#: the operator primitives rewritten: elementwise ones whose call and operator
#: differ only in promotion (``//`` and ``**`` of integers and ``@`` have JAX
#: paths of their own, so their calls stay calls)
_AS_OPERATOR = {
    "+": gast.Add,
    "-": gast.Sub,
    "*": gast.Mult,
    "/": gast.Div,
    "%": gast.Mod,
    "&": gast.BitAnd,
    "|": gast.BitOr,
    "^": gast.BitXor,
    "<<": gast.LShift,
    ">>": gast.RShift,
}


def as_operators(fdef: Any) -> bool:
    """Rewrite ``t = jnp.add(a, b)`` as ``t = a + b`` where both operands are
    known (run :func:`.infer_avals` first; the rewrite keeps every statement's
    abstract values) and one of them is a typed array, so that :func:`.promote`
    decides its dtype. Returns whether anything changed. Run only where
    :func:`.promote` runs after it."""
    changed = False
    for s in N.walk_stmts(fdef.body):
        if not _is_assign(s) or s.sj_op.kind != "prim":
            continue
        prim = s.sj_op.prim
        e = s.value
        opcls = _AS_OPERATOR.get(prim.op)
        if (
            opcls is None
            or prim.kind != "elementwise"
            or not isinstance(e, gast.Call)
            or e.keywords
            or len(e.args) != 2
            or N.to_source(e.func) != prim.public
            or not all(_known(a, s) for a in e.args)
            or not any(_typed_array(a, s) for a in e.args)
        ):
            continue
        s.value = N.copy_origin(gast.BinOp(left=e.args[0], op=opcls(), right=e.args[1]), e)
        changed = True
    return changed


def _aval(a: Any, s: Any) -> Any:
    if not isinstance(a, gast.Name):
        return None
    return (getattr(s, "sj_avals_in", None) or {}).get(a.id)


def _known(a: Any, s: Any) -> bool:
    if isinstance(a, gast.Constant):
        return type(a.value) in _SCALAR_TYPES
    v = _aval(a, s)
    return isinstance(v, Aval) or (isinstance(v, _Static) and type(v.value) in _SCALAR_TYPES)


def _typed_array(a: Any, s: Any) -> bool:
    v = _aval(a, s)
    return isinstance(v, Aval) and not v.weak
