"""Algebraic simplification (:func:`simplify`): ``x*1``, ``x+0``, ``x-0``,
small integer powers as multiplications, ``x**0.5``, ``x**-1``, only where the
abstract value of the result is unchanged; ``a - c*b`` with a float scalar ``c``
as ``(-c)*b + a`` (the same values, one array temporary fewer)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op
from ...primitives import registry
from .avals import Aval
from .common import _assigned, _is_assign, _is_scalar_const, _new_assign, read_counts


# ---------------------------------------------------------------------------- simplify
def _prim(public: str):
    return registry.by_public(public)


def _binop(target: str, a: Any, opcls: Any, b: Any, public: str, like: Any) -> Any:
    e = gast.BinOp(left=a, op=opcls(), right=b)
    return _new_assign(target, e, Op("prim", prim=_prim(public), bound={"x": a, "y": b}), like)


def _copy(target: str, src: Any, like: Any) -> Any:
    node = N.clone(src)
    return _new_assign(target, node, Op("copy", elts=[node]), like)


def simplify(fdef: Any, namer: Any = None) -> Any:
    """Algebraic simplification where dtype and shape provably do not change
    (run :func:`infer_avals` first; unknown values are left alone)."""
    fdef.body = _simplify_block(fdef.body, namer)
    if namer is not None:
        _scaled_updates(fdef.body, read_counts(fdef.body), namer)
    return fdef


#: primitives whose result is zeros whatever their operands hold
_ZEROS = ("ad.zeros_like", "jnp.zeros_like", "jnp.zeros")


def _simplify_block(stmts: List[Any], namer, known: Optional[Dict[str, Any]] = None) -> List[Any]:
    """``known`` maps a name to what the block knows it holds: ``"zeros"`` (an
    array of zeros) or the node ``b`` of ``name = -b``; forgotten when the name,
    or ``b``, is assigned again (and around loops and branches)."""
    known = {} if known is None else known
    out: List[Any] = []
    for s in stmts:
        if isinstance(s, gast.If):
            s.body = _simplify_block(s.body, namer, dict(known)) or [gast.Pass()]
            s.orelse = _simplify_block(s.orelse, namer, dict(known))
            _forget(known, _assigned(s))
        elif isinstance(s, (gast.While, gast.For)):
            _forget(known, _assigned(s))
            s.body = _simplify_block(s.body, namer, dict(known)) or [gast.Pass()]
            _forget(known, _assigned(s))
        elif _is_assign(s) and s.sj_op.kind == "prim":
            new = _simplify_one(s, namer) or _simplify_known(s, known)
            if new is not None:
                out.extend(new)
                for n in new:
                    _forget(known, _assigned(n))
                continue
            _forget(known, _assigned(s))
            _note(s, known)
        else:
            _forget(known, _assigned(s))
        out.append(s)
    return out


def _forget(known: Dict[str, Any], names: set) -> None:
    for k in list(known):
        v = known[k]
        if k in names or (isinstance(v, gast.Name) and v.id in names):
            del known[k]


def _note(s: Any, known: Dict[str, Any]) -> None:
    t = s.targets[0].id
    res = getattr(s, "sj_aval", None)
    if not isinstance(res, Aval):
        return
    op = s.sj_op
    if op.prim.public in _ZEROS:
        known[t] = "zeros"
    elif (
        op.prim.public == "jnp.negative"
        and isinstance(s.value, gast.UnaryOp)
        and isinstance(s.value.op, gast.USub)
        and isinstance(s.value.operand, gast.Name)
        and s.value.operand.id != t
        and same_float(_float_aval(s.value.operand, s), res)
    ):
        known[t] = s.value.operand


def same_float(a: Optional[Aval], b: Optional[Aval]) -> bool:
    return a is not None and a == b and not a.weak and a.dtype.kind == "f"


def _simplify_known(s: Any, known: Dict[str, Any]) -> Optional[List[Any]]:
    """What the block knows about an operand of ``+``/``-`` (float arrays only,
    the result's abstract value unchanged):

    - ``a + z``, ``z + a``, ``a - z`` with ``z`` zeros (a zero tangent or
      cotangent that reverse mode seeded and forward mode added to: JAX's
      symbolic zero is never added) -> ``a``;
    - ``a + n`` and ``n + a`` with ``n = -b`` -> ``a - b`` (IEEE defines
      ``a - b`` as ``a + (-b)``: bit for bit the same); ``n`` itself is left to
      dead-code elimination.
    """
    op = s.sj_op
    res = getattr(s, "sj_aval", None)
    if not known or not isinstance(res, Aval) or op.prim.op not in ("+", "-"):
        return None
    if not isinstance(s.value, gast.BinOp):
        return None
    x, y = s.value.left, s.value.right
    if not (isinstance(x, gast.Name) and isinstance(y, gast.Name)):
        return None
    t = s.targets[0].id
    add = isinstance(s.value.op, gast.Add)
    if known.get(y.id) == "zeros" and same_float(_float_aval(x, s), res):
        return [_annot(_copy(t, x, s), res)]
    if add and known.get(x.id) == "zeros" and same_float(_float_aval(y, s), res):
        return [_annot(_copy(t, y, s), res)]
    if not add:
        return None
    for a, n in ((x, y), (y, x)):
        b = known.get(n.id)
        if isinstance(b, gast.Name) and same_float(_float_aval(a, s), res):
            new = _binop(t, N.clone(a), gast.Sub, N.clone(b), "jnp.subtract", s)
            new.sj_note = "a + (-b) -> a - b"
            return [_annot(new, res)]
    return None


def _float_aval(node: Any, s: Any) -> Optional[Aval]:
    if not isinstance(node, gast.Name):
        return None
    a = getattr(s, "sj_avals_in", {}).get(node.id)
    if isinstance(a, Aval) and not a.weak and a.dtype.kind == "f":
        return a
    return None


def _simplify_one(s: Any, namer) -> Optional[List[Any]]:
    op = s.sj_op
    res = getattr(s, "sj_aval", None)
    # the primitives of Python's * + - ** (jnp.multiply, add, subtract, power),
    # by their operator spelling (Primitive.op), in call or operator form
    if not isinstance(res, Aval) or op.prim.op not in ("*", "+", "-", "**"):
        return None
    x, y = op.bound.get("x"), op.bound.get("y")
    t = s.targets[0].id

    def same(a: Optional[Aval]) -> bool:
        return a is not None and a == res

    def is_const(node, *values) -> bool:
        return (
            _is_scalar_const(node)
            and not isinstance(node.value, bool)
            and any(node.value == v and type(node.value) is type(v) for v in values)
        )

    name = op.prim.op
    if name == "*":
        if is_const(y, 1, 1.0) and same(_float_aval(x, s)):
            return [_annot(_copy(t, x, s), res)]
        if is_const(x, 1, 1.0) and same(_float_aval(y, s)):
            return [_annot(_copy(t, y, s), res)]
    elif name in ("+", "-"):
        if is_const(y, 0, 0.0) and same(_float_aval(x, s)):
            return [_annot(_copy(t, x, s), res)]
        if name == "+" and is_const(x, 0, 0.0) and same(_float_aval(y, s)):
            return [_annot(_copy(t, y, s), res)]
    elif name == "**":
        base = _float_aval(x, s)
        if not same(base) or not _is_scalar_const(y) or isinstance(y.value, bool):
            return None
        e = y.value
        mul = gast.Mult
        if e == 1:
            return [_annot(_copy(t, x, s), res)]
        if e == 2:
            return [_annot(_binop(t, N.clone(x), mul, N.clone(x), "jnp.multiply", s), res)]
        if e in (3, 4) and namer is not None:
            sq = namer.fresh(f"{x.id}_sq")
            first = _annot(_binop(sq, N.clone(x), mul, N.clone(x), "jnp.multiply", s), res)
            other = N.name(sq) if e == 4 else N.clone(x)
            second = _annot(_binop(t, N.name(sq), mul, other, "jnp.multiply", s), res)
            first.sj_note = f"x ** {e} -> multiplications"
            return [first, second]
        if e == 0.5:  # not sqrt: pow gives +0 at -0 and +inf at -inf (JAX)
            node = N.call("ad.pow_half", [N.clone(x)])
            new = _new_assign(
                t, node, Op("prim", prim=_prim("ad.pow_half"), bound={"x": node.args[0]}), s
            )
            return [_annot(new, res)]
        if e == -1:
            return [
                _annot(_binop(t, N.const(1.0), gast.Div, N.clone(x), "jnp.true_divide", s), res)
            ]
    return None


def _annot(s: Any, res: Aval) -> Any:
    s.sj_aval = res
    s.sj_avals_in = {n: res for n in N.names_in(s.value)}
    return s


# ------------------------------------------------------------- a - c*b -> (-c)*b + a
def _scaled_updates(stmts: List[Any], reads: dict, namer: Any) -> None:
    """``p = c * b; t = a - p`` (``p`` read only there, ``c`` a float scalar) ->
    ``neg = -c; p = neg * b; t = p + a``, in every block.

    The values are the same bit for bit (``a - p`` is IEEE ``a + (-p)``, and
    ``-(c*b) == (-c)*b`` exactly), but once the temporaries are nested again
    (:func:`inline_temporaries`) the product is the *left* operand of ``+``, a
    temporary NumPy adds ``a`` into in place (its temporary elision, arrays of
    256 KiB and more) instead of allocating the result beside it: an SGD update
    ``w - lr * g`` of a 784 x 256 layer held 2 x 0.8 MB at once (R1's peak)."""
    defs: dict = {}
    i = 0
    while i < len(stmts):
        s = stmts[i]
        if isinstance(s, gast.If):
            _scaled_updates(s.body, reads, namer)
            _scaled_updates(s.orelse, reads, namer)
        elif isinstance(s, (gast.While, gast.For)):
            _scaled_updates(s.body, reads, namer)
        if not _is_assign(s):
            defs.clear()  # (only a product computed in this straight run of statements)
            i += 1
            continue
        new = _scaled_update(s, defs, reads, namer)
        if new is not None:
            neg, prod, upd = new
            j = stmts.index(defs.pop(s.sj_op.bound["y"].id))
            stmts[j : j + 1] = [neg, prod] if neg is not None else [prod]
            i = stmts.index(s)
            stmts[i] = upd
        defs[s.targets[0].id] = stmts[i]
        i += 1


def _scalar_float(node: Any, s: Any) -> Optional[Aval]:
    """The aval of ``node`` when it is a float scalar (a Python float, a float
    0-d value): a constant, or a name whose abstract value at ``s`` says so. Not
    an int: ``-1 * uint8_array`` is NumPy's OverflowError."""
    if _is_scalar_const(node) and isinstance(node.value, float):
        return Aval.of(node.value)
    if isinstance(node, gast.Name):
        a = getattr(s, "sj_avals_in", {}).get(node.id)
        if isinstance(a, Aval) and a.shape == () and a.dtype.kind == "f":
            return a
    return None


def _scaled_update(s: Any, defs: dict, reads: dict, namer: Any):
    op = s.sj_op
    res = getattr(s, "sj_aval", None)
    if op.kind != "prim" or op.prim.op != "-":
        return None
    a, p = op.bound.get("x"), op.bound.get("y")
    if not isinstance(p, gast.Name) or p.id not in defs or reads.get(p.id) != 1:
        return None
    prod = defs[p.id]
    if prod.sj_op.kind != "prim" or prod.sj_op.prim.op != "*" or a is None:
        return None
    if isinstance(res, Aval) and (res.dtype.kind != "f" or getattr(prod, "sj_aval", None) != res):
        return None  # (known: a float product as large as the result, a temporary to reuse)
    x, y = prod.sj_op.bound.get("x"), prod.sj_op.bound.get("y")
    c, b = (x, y) if _scalar_float(x, prod) is not None else (y, x)
    if _scalar_float(c, prod) is None or b is None:
        return None
    neg = None
    if isinstance(c, gast.Constant):
        negc = N.const(-c.value)
    else:
        name = namer.fresh(f"neg_{c.id}")
        unary = gast.UnaryOp(op=gast.USub(), operand=N.clone(c))
        op_neg = Op("prim", prim=_prim("jnp.negative"), bound={"x": unary.operand})
        neg = _new_assign(name, unary, op_neg, prod)
        negc = N.name(name)
    new_prod = _binop(p.id, negc, gast.Mult, N.clone(b), "jnp.multiply", prod)
    upd = _binop(s.targets[0].id, N.name(p.id), gast.Add, N.clone(a), "jnp.add", s)
    upd.sj_note = "a - c*b -> (-c)*b + a"
    return neg, new_prod, upd
