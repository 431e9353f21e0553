"""What a batching rule sees (:class:`BatchCall`: the call's operands, which are
batched, helpers to emit statements) and :func:`build_call`, which writes a
primitive call back as source (an operator where the primitive has one)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

import gast

from ...errors import Location, TransformValueError
from ...frontend import nodes as N


class BatchCall:
    """What a batching rule sees: one primitive call with some batched operands.

    A rule is ``rule(c: BatchCall)`` returning the expression of the batched
    result (batched along axis 0), or ``(expression, False)`` when the result
    is the same for every example, or ``None`` to fall back to a loop over the
    examples. Rules may emit statements first with :meth:`let`.
    """

    def __init__(self, bp: Any, prim, bound: Dict[str, Any], out: List[Any], origin):
        # (bp: the Batcher running the rule)
        self.bp = bp
        self.prim = prim
        self.bound = bound
        self.out = out
        self.origin = origin

    # -- inspection ------------------------------------------------------------
    def batched(self, pname: str) -> bool:
        v = self.bound.get(pname)
        if v is None:
            return False
        items = v if isinstance(v, list) else [v]
        return any(self.bp.is_batched(it) for it in items)

    def arg(self, pname: str) -> Any:
        v = self.bound.get(pname)
        if v is None:
            return None
        if isinstance(v, list):
            return [N.clone(x) for x in v]
        return N.clone(v)

    def default(self, pname: str) -> Any:
        p = self.prim.signature.parameters[pname]
        return p.default

    def static(self, pname: str) -> Tuple[bool, Any]:
        """(True, value) when the argument is a compile-time constant (or absent:
        the parameter's default)."""
        v = self.bound.get(pname)
        if v is None:
            d = self.default(pname)
            return True, None if d is self.prim.signature.parameters[pname].empty else d
        if isinstance(v, gast.Name) and v.id in self.bp.constant_values:
            # a helper's parameter bound to a constant (psum(x, name), name = "i")
            return True, self.bp.constant_values[v.id]
        return _const_value(v)

    def is_container(self, node: Any) -> bool:
        return isinstance(node, gast.Name) and node.id in self.bp.containers

    @property
    def size(self) -> Any:
        return N.name(self.bp.size_name)

    def error(self, message: str, hint: Optional[str] = None) -> TransformValueError:
        """An error about this call, located at its line (the user's, or the line
        of the generated file it comes from, which names the user's)."""
        return TransformValueError(message, Location.of(self.origin), hint)

    # -- building --------------------------------------------------------------
    def let(self, base: str, expr: Any) -> Any:
        name = self.bp.namer.fresh(base)
        self.out.append(self.bp.at(N.assign(name, expr), self.origin))
        return N.name(name)

    def materialize(self, node: Any) -> Any:
        """``node`` made batched (broadcast along a new leading axis) if it is not."""
        if node is None or self.bp.is_batched(node):
            return node
        if isinstance(node, gast.Constant) and node.value is None:
            return node
        return N.call("ad.batch_broadcast", [N.clone(node), self.size])

    def lift(self, x: Any, other: Any) -> Any:
        """Batched ``x`` with unit axes inserted after the batch axis so that its
        per-example rank is at least that of ``other``."""
        if isinstance(other, gast.Constant):
            return x
        if isinstance(other, gast.Name) and other.id in self.bp.scalars:
            return x  # (a per-example rank of at least 0: nothing to insert)
        rank = N.call("jnp.ndim", [N.clone(other)])
        if self.bp.is_batched(other):
            rank = gast.BinOp(left=rank, op=gast.Sub(), right=N.const(1))
        base = x.id + "_al" if isinstance(x, gast.Name) else "lifted"
        return self.let(base, N.call("ad.expand_to_rank", [N.clone(x), rank]))

    def ndim(self, x: Any) -> Any:
        return N.call("jnp.ndim", [N.clone(x)])

    def call(self, public: str, args=(), kws: Optional[dict] = None) -> Any:
        return N.call(public, list(args), kws)

    def rebuild(self, **changes: Any) -> Any:
        """The primitive's call with some arguments replaced (``None`` removes),
        written as the original statement writes it (operator or function call:
        ``jnp.divide`` follows JAX's promotion, ``/`` NumPy's)."""
        bound = dict(self.bound)
        for k, v in changes.items():
            if v is None:
                bound.pop(k, None)
            else:
                bound[k] = v
        value = getattr(self.origin, "value", None)
        as_call = (
            isinstance(value, gast.Call) and N.to_source(value.func).strip() == self.prim.public
        )
        return build_call(self.prim, bound, as_call)

    def shift_axis(self, pname: str, x: Any, none: str = "all") -> Any:
        """The argument ``pname`` (an axis, tuple of axes or None) for the batched
        operand ``x``: non-negative axes move up by one; ``None`` becomes every
        per-example axis (``none="all"``)."""
        ok, val = self.static(pname)
        if ok:
            if val is None:
                if none == "all":
                    return N.call("ad.batch_axis", [N.const(None), self.ndim(x)])
                return N.const(None)
            if isinstance(val, (tuple, list)):
                return N.const(tuple(int(a) + 1 if a >= 0 else int(a) for a in val))
            if isinstance(val, int):
                return N.const(val + 1 if val >= 0 else val)
        return N.call("ad.batch_axis", [self.arg(pname), self.ndim(x)])


def _const_value(node: Any) -> Tuple[bool, Any]:
    if isinstance(node, gast.Constant):
        return True, node.value
    if isinstance(node, gast.Tuple):
        vals = []
        for e in node.elts:
            ok, v = _const_value(e)
            if not ok:
                return False, None
            vals.append(v)
        return True, tuple(vals)
    if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
        ok, v = _const_value(node.operand)
        if ok and isinstance(v, (int, float)):
            return True, -v
    return False, None


_BINOPS = frozenset({"+", "-", "*", "/", "//", "%", "**", "@", "&", "|", "^", "<<", ">>"})
_CMP_CLS = {
    "<": gast.Lt,
    "<=": gast.LtE,
    ">": gast.Gt,
    ">=": gast.GtE,
    "==": gast.Eq,
    "!=": gast.NotEq,
}
_UNARY_CLS = {"unary -": gast.USub, "unary +": gast.UAdd, "unary ~": gast.Invert}


def build_call(prim, bound: Dict[str, Any], as_call: bool = False) -> Any:
    """Expression calling ``prim`` with ``bound`` (comparisons and unary operators
    stay operators unless ``as_call``; binary operators are always calls)."""
    # Binary operators become calls of their primitive, which apply JAX's rules
    # where NumPy's operators differ: promotion (float16 * int32 is float16 in
    # JAX, float64 in NumPy; fresh-user F4-06), ``//`` of integers by zero (NumPy
    # 0, JAX -1/-2), ``**`` of integers to negative powers (NumPy refuses) and of
    # bools (NumPy int8, JAX int32). Comparisons and unary operators stay
    # operators (their dtypes agree).
    op = None if as_call or prim.op in _BINOPS else prim.op
    if op in _CMP_CLS and len(bound) == 2:
        names = list(prim.signature.parameters)[:2]
        if all(n in bound for n in names):
            return gast.Compare(
                left=N.clone(bound[names[0]]),
                ops=[_CMP_CLS[op]()],
                comparators=[N.clone(bound[names[1]])],
            )
    if op in _UNARY_CLS and len(bound) == 1:
        (v,) = bound.values()
        return gast.UnaryOp(op=_UNARY_CLS[op](), operand=N.clone(v))
    if prim.part == "item" and set(bound) == {"x", "idx"}:  # x[idx]
        return N.item(N.clone(bound["x"]), _as_index(bound["idx"]))
    args: List[Any] = []
    kws: Dict[str, Any] = {}
    positional = True
    for pname, p in prim.signature.parameters.items():
        if pname not in bound:
            if p.kind in (p.POSITIONAL_OR_KEYWORD, p.POSITIONAL_ONLY):
                positional = False
            continue
        v = bound[pname]
        if p.kind == p.VAR_POSITIONAL:
            args.extend(N.clone(x) for x in v)
        elif (
            positional
            and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            and (p.default is p.empty)
        ):
            args.append(N.index_value(v))
        else:
            positional = positional and p.default is p.empty
            kws[pname] = N.index_value(v)
    return N.call(prim.public, args, kws)


def _as_index(node: Any) -> Any:
    return N.clone(node)
