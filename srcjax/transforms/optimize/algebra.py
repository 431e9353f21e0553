"""Algebraic simplification (:func:`simplify`): ``x*1``, ``x+0``, ``x-0``,
small integer powers as multiplications, ``x**0.5``, ``x**-1``, only where the
abstract value of the result is unchanged; ``a - c*b`` with a float scalar ``c``
as ``(-c)*b + a`` (the same values, one array temporary fewer); ``jnp.sum(x * y,
axis)`` of a product read only there as ``ad.sum_of_products(x, y, axis)`` (one
BLAS product where the shapes allow, the same values up to rounding)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import gast
import numpy as np

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
    _summed_products(fdef.body, read_counts(fdef.body))
    _outer_sums(fdef.body, read_counts(fdef.body), namer)
    return fdef


#: primitives whose result is zeros whatever their operands hold
_ZEROS = ("ad.zeros_like", "jnp.zeros_like", "jnp.zeros")


def unit_factors(fdef: Any) -> bool:
    """``x * one`` and ``one * x`` with ``one = ad.one(dtype)`` (the seed of a
    scalar loss once :func:`.direct.direct_calls` made it a constant, in every
    gradient evaluation of an HMC or Langevin loop) or its expansion by a sum's
    cotangent (ones) -> ``x``, where ``x`` has the product's abstract value
    (float, not weak: no promotion, no broadcast; ``x * 1`` is ``x`` in IEEE
    arithmetic, NaN and -0 included). Returns whether anything changed."""
    done: List[Any] = []
    fdef.body = _simplify_block(fdef.body, None, None, done)
    return bool(done)


def _simplify_block(
    stmts: List[Any], namer, known: Optional[Dict[str, Any]] = None, ones: Any = None
) -> List[Any]:
    """``known`` maps a name to what the block knows it holds: ``"zeros"`` (an
    array of zeros), ``"one"`` (``ad.one``'s scalar) or the node ``b`` of ``name
    = -b``; forgotten when the name, or ``b``, is assigned again (and around loops
    and branches). ``ones`` (a list): only the unit factors are removed
    (:func:`unit_factors`), each appended to it."""
    known = {} if known is None else known
    out: List[Any] = []
    for s in stmts:
        if isinstance(s, gast.If):
            s.body = _simplify_block(s.body, namer, dict(known), ones) or [gast.Pass()]
            s.orelse = _simplify_block(s.orelse, namer, dict(known), ones)
            _forget(known, _assigned(s))
        elif isinstance(s, (gast.While, gast.For)):
            _forget(known, _assigned(s))
            s.body = _simplify_block(s.body, namer, dict(known), ones) or [gast.Pass()]
            _forget(known, _assigned(s))
        elif _is_assign(s) and s.sj_op.kind == "prim" and ones is not None:
            new = _unit_factor(s, known)
            if new is not None:
                ones.append(s)
                out.extend(new)
                _forget(known, _assigned(s))
                continue
            _forget(known, _assigned(s))
            _note(s, known)
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
    elif not res.weak and res.dtype.kind == "f" and _all_ones(op, res, known):
        known[t] = "one"
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


def _all_ones(op: Any, res: Aval, known: Dict[str, Any]) -> bool:
    """``ad.one(dtype)``, or a sum's cotangent ``ad.expand_reduced(g, x, ...)``
    of such a ``g`` without a ``where`` mask: every element is 1."""
    if op.prim.public == "ad.one":
        return res.shape == ()
    if op.prim.public != "ad.expand_reduced":
        return False
    g, where = op.bound.get("g"), op.bound.get("where")
    return (
        isinstance(g, gast.Name)
        and known.get(g.id) == "one"
        and (where is None or (isinstance(where, gast.Constant) and where.value is None))
    )


def _unit_factor(s: Any, known: Dict[str, Any]) -> Optional[List[Any]]:
    """``t = x * one`` or ``t = one * x`` (:func:`unit_factors`) as ``t = x``."""
    res = getattr(s, "sj_aval", None)
    e = s.value
    if not (
        known
        and isinstance(res, Aval)
        and s.sj_op.prim.op == "*"
        and isinstance(e, gast.BinOp)
        and isinstance(e.op, gast.Mult)
    ):
        return None
    for x, one in ((e.left, e.right), (e.right, e.left)):
        if (
            isinstance(one, gast.Name)
            and known.get(one.id) == "one"
            and same_float(_float_aval(x, s), res)
        ):
            new = _annot(_copy(s.targets[0].id, x, s), res)
            new.sj_note = "x * ad.one -> x"
            return [new]
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


# ------------------------------------------------- sum(x * y) -> ad.sum_of_products
def _summed_products(stmts: List[Any], reads: dict) -> None:
    """``p = x * y; ...; t = jnp.sum(p, axis=A)`` (``p`` read only there, ``x``
    and ``y`` float32/float64 arrays of one dtype, not assigned in between) ->
    ``t = ad.sum_of_products(x, y, A)``, in every block; ``p``'s statement is
    left to dead-code elimination. Where the shapes allow it (see
    :func:`srcjax.primitives.ad.sums._sum_of_products`) the sum is one BLAS
    product instead of two passes over an array as large as ``x``: DP-SGD's
    per-example squared norms and its clipped gradients' sum over the batch
    (R2)."""
    prods: Dict[str, Any] = {}
    for i, s in enumerate(stmts):
        if isinstance(s, gast.If):
            _summed_products(s.body, reads)
            _summed_products(s.orelse, reads)
        elif isinstance(s, (gast.While, gast.For)):
            _summed_products(s.body, reads)
        if not _is_assign(s):
            prods.clear()
            continue
        new = _summed_product(s, prods, reads)
        if new is not None:
            stmts[i] = new
        t = s.targets[0].id
        for k in [k for k, p in prods.items() if k == t or t in N.names_in(p.value)]:
            del prods[k]  # (an operand, or the product, bound again)
        if _is_product(s):
            prods[t] = s


def _is_product(s: Any) -> bool:
    op = s.sj_op
    if op.kind != "prim" or op.prim.op != "*":
        return False
    x, y = op.bound.get("x"), op.bound.get("y")
    if not (isinstance(x, gast.Name) and isinstance(y, gast.Name)):
        return False
    ax, ay = _float_aval(x, s), _float_aval(y, s)
    return (
        ax is not None
        and ay is not None
        and ax.dtype == ay.dtype
        and ax.dtype in (np.dtype(np.float32), np.dtype(np.float64))
        and len(ax.shape) == len(ay.shape)
        and getattr(s, "sj_aval", None) is not None
    )


def _summed_product(s: Any, prods: Dict[str, Any], reads: dict) -> Optional[Any]:
    op = s.sj_op
    if op.kind != "prim" or op.prim.fused_reduction != "sum" or op.prim.public != "jnp.sum":
        return None
    x = op.bound.get("x")
    if not isinstance(x, gast.Name) or x.id not in prods or reads.get(x.id) != 1:
        return None
    if set(op.bound) - {"x", "axis"}:
        return None  # (dtype, keepdims, where: the plain sum only)
    axis = op.bound.get("axis", N.const(None))
    if not (isinstance(axis, gast.Constant) or isinstance(axis, gast.Tuple)):
        return None
    res = getattr(s, "sj_aval", None)
    prod = prods.pop(x.id)
    if not isinstance(res, Aval) or res.dtype != prod.sj_aval.dtype or not res.shape:
        return None  # (a full sum: fusion's, pairwise, more accurate than a BLAS dot)
    if not isinstance(prod.sj_aval, Aval) or prod.sj_aval.size > res.size * (1 << 16):
        return None  # (sums of more terms than a BLAS dot keeps as accurate)
    a, b = prod.sj_op.bound["x"], prod.sj_op.bound["y"]
    prim = _prim("ad.sum_of_products")
    call = N.call(prim.public, [N.clone(a), N.clone(b), N.clone(axis)])
    bound = {"x": call.args[0], "y": call.args[1], "axis": call.args[2]}
    new = _new_assign(s.targets[0].id, call, Op("prim", prim=prim, bound=bound), s)
    new.sj_aval = res
    new.sj_avals_in = dict(getattr(prod, "sj_avals_in", {}))
    new.sj_note = "sum(x * y) -> one product"
    return new


# ------------------------------------------ sums of per-example outer products
def _outer_sums(stmts: List[Any], reads: dict, namer: Any) -> None:
    """Sums of vmap's per-example outer products ``W = ad.bmatmul_right(g, a, B,
    True, True)`` (``W[i] = outer(a[i], g[i])``: the per-example cotangent of a
    weight ``B`` in ``a @ B``), in the top-level straight-line statements:

    - ``ad.sum_of_products(W, s, 0)`` with ``s`` of shape ``(n, 1, 1)`` (each
      example's outer product scaled, summed over the examples) ->
      ``ad.bmatmul_right(g * s[:, 0], a, B0, True, False)``, the one GEMM
      ``a.T @ (s * g)`` contracting the batch axis (``B0`` the unbatched weight
      ``B`` broadcasts): never the ``n`` outer products summed (issue 17);
    - ``ad.sum_of_products(W, W, (1, 2))`` (each example's squared norm) ->
      ``ad.sum_of_products(a, a, (1,)) * ad.sum_of_products(g, g, (1,))``, as
      ``sum_jk (a_j g_k)^2 = (sum_j a_j^2)(sum_k g_k^2)``.

    Both are the same values up to rounding. Once every read of ``W`` is
    rewritten, dead-code elimination drops the outer products (DP-SGD, R2)."""
    defs: Dict[str, Any] = {}
    order: Dict[str, int] = {}
    for i, s in enumerate(list(stmts)):
        if not _is_assign(s):
            continue
        new = _outer_sum(s, defs, order, i, stmts, namer)
        if new is not None:
            k = stmts.index(s)
            stmts[k : k + 1] = new
            s = new[-1]
        t = s.targets[0].id
        defs[t] = s
        order[t] = i


def _outer_of(w: Any, defs: Dict[str, Any]) -> Optional[tuple]:
    """``(g, a, B0, n)`` when name ``w`` is ``ad.bmatmul_right(g, a, B, True, True)``
    of per-example vectors ``a`` (n, k), ``g`` (n, m) and ``B =
    ad.batch_broadcast(B0, n)``, all float of one dtype; else None."""
    if not isinstance(w, gast.Name) or w.id not in defs:
        return None
    s = defs[w.id]
    op = s.sj_op
    if op.kind != "prim" or op.prim.public != "ad.bmatmul_right":
        return None
    b = op.bound
    flags = [b.get("ab"), b.get("bb")]
    if not all(isinstance(f, gast.Constant) and f.value is True for f in flags):
        return None
    g, a, big = b.get("g"), b.get("a"), b.get("b")
    if not all(isinstance(v, gast.Name) for v in (g, a, big)) or big.id not in defs:
        return None
    bc = defs[big.id].sj_op
    if bc.kind != "prim" or bc.prim.public != "ad.batch_broadcast" or "axis" in bc.bound:
        return None
    b0 = bc.bound.get("x")
    ins = getattr(s, "sj_avals_in", {})
    ag, aa = ins.get(g.id), ins.get(a.id)
    res = getattr(s, "sj_aval", None)
    if not all(isinstance(v, Aval) and not v.weak for v in (ag, aa, res)):
        return None
    if len(aa.shape) != 2 or len(ag.shape) != 2 or aa.shape[0] != ag.shape[0]:
        return None
    if not (aa.dtype == ag.dtype == res.dtype) or res.dtype.kind != "f":
        return None
    if res.shape != (aa.shape[0], aa.shape[1], ag.shape[1]) or not isinstance(b0, gast.Name):
        return None
    return g, a, b0, aa.shape[0]


def _outer_sum(s, defs, order, i, stmts, namer) -> Optional[List[Any]]:
    op = s.sj_op
    if op.kind != "prim" or op.prim.public != "ad.sum_of_products" or namer is None:
        return None
    x, y, axis = op.bound.get("x"), op.bound.get("y"), op.bound.get("axis")
    got = _outer_of(x, defs)
    if got is None:
        return None
    g, a, b0, n = got
    w_at = order[x.id]
    # (g, a and B0 still hold what the product read)
    for st in stmts[w_at + 1 : i]:
        if _assigned(st) & {g.id, a.id, b0.id}:
            return None
    res = getattr(s, "sj_aval", None)
    t = s.targets[0].id
    sop = _prim("ad.sum_of_products")
    if isinstance(y, gast.Name) and y.id == x.id and _const_of(axis) == (1, 2):
        norms = []
        for v in (a, g):
            name = namer.fresh(f"{v.id}_sq")
            call = N.call(sop.public, [N.name(v.id), N.name(v.id), N.const((1,))])
            bound = {"x": call.args[0], "y": call.args[1], "axis": call.args[2]}
            st = _new_assign(name, call, Op("prim", prim=sop, bound=bound), s)
            st.sj_aval = res
            norms.append(st)
        na, ng = (N.name(st.targets[0].id) for st in norms)
        prod = _binop(t, na, gast.Mult, ng, "jnp.multiply", s)
        prod.sj_note = "|outer(a, g)|^2 -> |a|^2 |g|^2"
        return norms + [_annot(prod, res)]
    ins = getattr(s, "sj_avals_in", {})
    sv = ins.get(y.id) if isinstance(y, gast.Name) else None
    if _const_of(axis) in (0, (0,)) and isinstance(sv, Aval) and sv.shape == (n, 1, 1):
        col = namer.fresh(f"{y.id}_col")
        reshape = _prim("jnp.reshape")
        call = N.call(reshape.public, [N.name(y.id), N.const((n, 1))])
        bound = {"a": call.args[0], "shape": call.args[1]}
        st1 = _new_assign(col, call, Op("prim", prim=reshape, bound=bound), s)
        st1.sj_aval = Aval((n, 1), sv.dtype)
        scaled = namer.fresh(f"{g.id}_scaled")
        st2 = _binop(scaled, N.name(g.id), gast.Mult, N.name(col), "jnp.multiply", s)
        brr = _prim("ad.bmatmul_right")
        call = N.call(
            brr.public, [N.name(scaled), N.name(a.id), N.name(b0.id), N.const(True), N.const(False)]
        )
        bound = dict(zip(("g", "a", "b", "ab", "bb"), call.args))
        st3 = _new_assign(t, call, Op("prim", prim=brr, bound=bound), s)
        st3.sj_aval = res
        st3.sj_note = "sum of scaled outer products -> one GEMM"
        return [st1, st2, st3]
    return None


def _const_of(node: Any) -> Any:
    """The value of a constant or a tuple of constants, else None."""
    if isinstance(node, gast.Constant):
        return node.value
    if isinstance(node, gast.Tuple) and all(isinstance(e, gast.Constant) for e in node.elts):
        return tuple(e.value for e in node.elts)
    return None
