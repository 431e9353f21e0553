"""Expressions to ANF: an expression becomes an atom (a name or a constant),
its parts emitted first as statements; operators, comparisons and
short-circuit ``and``/``or``, subscripts, attributes and dunder calls.
"""

from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional

import gast

from ...errors import (
    UnsupportedSyntaxError,
)
from ...primitives import registry
from .. import nodes as N
from .anf import Op
from .common import (
    _BINOPS,
    _UNARY,
    _bind,
    _fold_constant,
    _function_value_error,
    _plain_method,
    _resolution_error,
    _tree_registry,
    syntax_refusal,
)
from .typetree import _constant_type

#: the methods a binary operator calls on a registered class instance (see
#: Normalizer.dunder_call): (left operand's, right operand's reflected one)
_DUNDERS = {
    gast.Add: ("__add__", "__radd__"),
    gast.Sub: ("__sub__", "__rsub__"),
    gast.Mult: ("__mul__", "__rmul__"),
    gast.Div: ("__truediv__", "__rtruediv__"),
    gast.MatMult: ("__matmul__", "__rmatmul__"),
    gast.Pow: ("__pow__", "__rpow__"),
}


def _attributes() -> Dict[str, Any]:
    try:
        from ...primitives.methods import ATTRIBUTES  # type: ignore
    except ImportError:  # pragma: no cover
        ATTRIBUTES = {}
    return ATTRIBUTES


def _base_name(op: Optional[Op], e: Any) -> str:
    if op is not None and op.kind == "prim":
        short = {
            "+": "add",
            "-": "sub",
            "*": "mul",
            "/": "div",
            "**": "pow",
            "@": "matmul",
            "unary -": "neg",
            "//": "floordiv",
            "%": "mod",
        }
        if op.prim.op in short:
            return short[op.prim.op]
        if op.prim.part in ("attr", "static_attr"):
            return op.bound["name"].value  # p.w -> w
        if op.prim.part == "item":
            v = op.bound.get("x")
            idx = op.bound.get("idx")
            if (
                isinstance(idx, gast.Constant)
                and isinstance(idx.value, str)
                and idx.value.isidentifier()
            ):
                return idx.value  # params["w"] -> w
            if isinstance(v, gast.Name):
                return v.id + "_i"
            return "item"
        return op.prim.name
    if isinstance(e, gast.Call):
        f = e.func
        if isinstance(f, gast.Attribute):
            return f.attr
        if isinstance(f, gast.Name):
            return f.id
    if op is not None and op.kind == "pack":
        return "packed"
    return "t"


_INT32 = range(-(2**31), 2**31)
_BIG_INT_OPS = {
    gast.Add: lambda a, b: a + b,
    gast.Sub: lambda a, b: a - b,
    gast.Mult: lambda a, b: a * b,
    gast.Pow: lambda a, b: a**b if 0 <= b <= 128 and abs(a) < 2**64 else None,
    gast.LShift: lambda a, b: a << b if 0 <= b <= 128 else None,
    gast.USub: lambda a: -a,
    gast.UAdd: lambda a: a,
}


def _big_int_arith(op: Any, *operands: Any) -> Any:
    """``2**31``, ``-2**31 - 1``: the Python int constant, where the operands are
    int constants and the operands or the result lie beyond int32 (a constant JAX
    refuses to meet an array while x64 is off; see ``check_weak_ints``); None
    otherwise (other constant arithmetic stays as it is)."""
    fn = _BIG_INT_OPS.get(type(op))
    if fn is None or not all(
        isinstance(a, gast.Constant) and type(a.value) is int for a in operands
    ):
        return None
    vals = [a.value for a in operands]
    v = fn(*vals)
    if v is None or all(x in _INT32 for x in vals + [v]):
        return None
    return N.const(v)


class ExpressionsMixin:
    """Expression converters of :class:`Normalizer`: an expression to an atom."""

    # -- expressions -----------------------------------------------------------
    def atom(self, e: Any, base: Optional[str] = None, force_name: bool = False) -> Any:
        """Normalize ``e`` and return a Name or Constant holding its value."""
        if isinstance(e, gast.Constant) and not force_name:
            return e
        if isinstance(e, gast.Name) and not force_name:
            if e.id in self.locals:
                return N.name(self.var(e.id))
            ref = self.global_ref(N.name(e.id))
            found = self.lookup_global(e.id) if isinstance(ref, gast.Name) else ("missing", None)
            ty = _constant_type(*found)
            if ty is not None:
                self.types[ref.id] = ty
            if type(found[1]) is int and found[1] not in _INT32:
                ref.big_int = found[1]  # (a module's N = 2**31: see check_weak_ints)
            return ref
        folded = _fold_constant(e)
        if folded is not None and not force_name:
            return folded
        node, op = self.simple(e, None)
        if isinstance(node, gast.Name) and not force_name:
            return node
        if isinstance(node, gast.Constant) and not force_name:
            return node
        t = self.temp(base or _base_name(op, e))
        stmt = self.emit(N.assign(t, node), op)
        if getattr(e, "lineno", None) == getattr(stmt, "lineno", None) and hasattr(e, "col_offset"):
            stmt.col_offset = e.col_offset  # errors point at the sub-expression
            stmt.end_col_offset = getattr(e, "end_col_offset", None)
        return N.name(t)

    def condition(self, e: Any, base: str = "cond", force_name: bool = True) -> Any:
        """Normalize the test of an ``if``, ``while`` or conditional expression and
        return the atom holding its value, evaluated as Python does: ``a and b``
        evaluates ``b`` only when ``a`` is true, ``a or b`` only when it is false
        (``l = a`` then ``if l: t = b else: t = l``), and a chained comparison
        ``a < b < c`` evaluates ``b`` once and ``b < c`` only when ``a < b``; so
        ``i < n and v[i] > 0`` never reads ``v[n]``. ``not`` of such a test
        negates its short-circuit value. Under vmap the ``if`` is the per-example
        one (the right operand runs on safe inputs for the examples that do not
        need it); grad's tape replays it like any ``if``."""
        if isinstance(e, gast.BoolOp) and len(e.values) > 1:
            left = self.condition(e.values[0], base)
            rest = (
                e.values[1]
                if len(e.values) == 2
                else N.copy_origin(gast.BoolOp(op=e.op, values=e.values[1:]), e)
            )
            return self._short_circuit(
                left, isinstance(e.op, gast.And), lambda: self.condition(rest, base), base
            )
        if isinstance(e, gast.Compare) and len(e.ops) > 1:
            return self._compare_chain(self.atom(e.left), e.ops, e.comparators, base)
        if (
            isinstance(e, gast.UnaryOp)
            and isinstance(e.op, gast.Not)
            and self._short_circuits(e.operand)
        ):
            inner = self.condition(e.operand, base)
            return self.atom(gast.UnaryOp(op=gast.Not(), operand=inner), base, force_name=True)
        return self.atom(e, base=base, force_name=force_name)

    @staticmethod
    def _short_circuits(e: Any) -> bool:
        while isinstance(e, gast.UnaryOp) and isinstance(e.op, gast.Not):
            e = e.operand
        return (isinstance(e, gast.BoolOp) and len(e.values) > 1) or (
            isinstance(e, gast.Compare) and len(e.ops) > 1
        )

    def _short_circuit(
        self,
        left: Any,
        is_and: bool,
        right: Callable[[], Any],
        base: str,
        what: Optional[str] = None,
    ) -> Any:
        """``t = right() if left else left`` (``and``) or ``t = left if left else
        right()`` (``or``), with ``right``'s statements only in its branch. With
        ``what``, the assignments of ``t`` are ``unknown`` operations (no
        derivative flows through them)."""

        def op(v: Any) -> Op:
            if what is None:
                return Op("copy", elts=[v])
            return Op("unknown", elts=[v] if isinstance(v, gast.Name) else [], what=what)

        t = self.temp(base)
        saved = self.out
        self.out = []
        value = right()
        self.emit(N.assign(t, value), op(value))
        evaluated, self.out = self.out, saved
        decided = [self.emit_detached(N.assign(t, N.clone(left)), op(left))]
        body, orelse = (evaluated, decided) if is_and else (decided, evaluated)
        self.emit(gast.If(test=N.clone(left), body=body, orelse=orelse))
        return N.name(t)

    def emit_detached(self, stmt: Any, op: Optional[Op]) -> Any:
        """``stmt`` annotated as :meth:`emit` does, without adding it to the output."""
        saved = self.out
        self.out = []
        try:
            self.emit(stmt, op)
        finally:
            self.out = saved
        return stmt

    def _compare_chain(self, left: Any, ops: List[Any], comps: List[Any], base: str) -> Any:
        """``left op0 c0 op1 c1 ...`` as Python evaluates it: each comparator once,
        and the comparisons after the first false one not at all."""
        right = self.atom(comps[0])
        first = self.atom(
            gast.Compare(left=left, ops=[ops[0]], comparators=[right]), base, force_name=True
        )
        if len(ops) == 1:
            return first
        return self._short_circuit(
            first, True, lambda: self._compare_chain(right, ops[1:], comps[1:], base), base
        )

    def index(self, sl: Any) -> Any:
        """Normalize an index expression: slices and tuples stay, parts become atoms."""
        if isinstance(sl, gast.Slice):
            return gast.Slice(
                lower=None if sl.lower is None else self.atom(sl.lower),
                upper=None if sl.upper is None else self.atom(sl.upper),
                step=None if sl.step is None else self.atom(sl.step),
            )
        if isinstance(sl, gast.Tuple):
            return gast.Tuple(elts=[self.index(e) for e in sl.elts], ctx=gast.Load())
        if isinstance(sl, gast.Constant):
            return sl
        folded = _fold_constant(sl)
        if folded is not None:
            return folded
        return self.atom(sl, base="idx")

    def _no_local_functions(self, atoms: List[Any], where: str, e: Any) -> None:
        """Refuse a display holding a local function (``return init, update``):
        made a value at run time, it would be a NameError or an opaque call. (A
        ``partial`` of a module function is also a value at run time: kept.)"""
        for a in atoms:
            fn = self.local_fns.get(a.id) if isinstance(a, gast.Name) else None
            if fn is not None and not getattr(fn, "srcjax_runtime_value", False):
                raise _function_value_error(self, fn, a.id, where, e)

    def simple(self, e: Any, target: Optional[str]) -> tuple:
        """Return (node, Op) where node is a one-op expression over atoms."""
        if isinstance(e, (gast.Name, gast.Constant)):
            a = self.atom(e)
            return a, Op("copy", elts=[a])
        folded = _fold_constant(e)
        if folded is not None:
            return folded, Op("copy", elts=[folded])
        if isinstance(e, gast.BinOp):
            names = _DUNDERS.get(type(e.op))
            if names is not None:
                done = self.dunder_call(names[0], e.left, [e.right], e) or self.dunder_call(
                    names[1], e.right, [e.left], e
                )
                if done is not None:
                    return done
            seq = self.sequence_binop(e)
            if seq is not None:
                return seq
            kinds = (self.seq_kind(e.left), self.seq_kind(e.right))
            if isinstance(e.op, gast.BitOr) and ("dict" in kinds or kinds == ("seq", "seq")):
                # d | e: a copy of d updated with e (differentiable in both values)
                t = self.dict_copy(e.left)
                self.update(t.id, e.right, {})
                return t, Op("copy", elts=[t])
            sym = _BINOPS[type(e.op)]
            left = self.atom(e.left)
            right = self.atom(e.right)
            if names is not None and (self.class_of(left) or self.class_of(right)):
                done = self.dunder_call(names[0], left, [right], e) or self.dunder_call(
                    names[1], right, [left], e
                )
                if done is not None:
                    return done
            big = _big_int_arith(e.op, left, right)
            if big is not None:
                return big, Op("copy", elts=[big])
            prim = self.ops[sym]
            if sym != "**":  # (JAX's x ** 2**40 is an integer power)
                self.check_weak_ints([left, right], False)
            names = list(prim.signature.parameters)
            node = gast.BinOp(left=left, op=e.op, right=right)
            return node, Op("prim", prim=prim, bound={names[0]: left, names[1]: right})
        if isinstance(e, gast.UnaryOp):
            sym = _UNARY[type(e.op)]
            operand = self.atom(e.operand)
            big = _big_int_arith(e.op, operand)
            if big is not None:
                return big, Op("copy", elts=[big])
            prim = self.ops.get(sym)
            node = gast.UnaryOp(op=e.op, operand=operand)
            if prim is None:
                return node, Op("inactive", what=sym)
            names = list(prim.signature.parameters)
            return node, Op("prim", prim=prim, bound={names[0]: operand})
        if isinstance(e, gast.Compare):
            if len(e.ops) == 1:
                left = self.atom(e.left)
                right = self.atom(e.comparators[0])
                if not isinstance(e.ops[0], (gast.Is, gast.IsNot, gast.In, gast.NotIn)):
                    self.check_weak_ints([left, right], False)
                node = gast.Compare(left=left, ops=e.ops, comparators=[right])
                return node, Op("inactive", what="comparison")
            parts = []
            prev = e.left
            for op, comp in zip(e.ops, e.comparators):
                parts.append(gast.Compare(left=prev, ops=[op], comparators=[comp]))
                prev = comp
            # `a < b < c` evaluates b once and `b < c` only when `a < b`
            t = self._compare_chain(self.atom(e.left), e.ops, e.comparators, "cond")
            return t, Op("copy", elts=[t])
        if isinstance(e, gast.BoolOp):
            # short-circuit as in Python (`ok = i < n and v[i] > 0` never reads
            # v[n]); the value of `x < 0 or 2 * x` is one of its operands: on a
            # differentiated path it is an error (JAX's too), never a silent zero
            # derivative, so its assignments are `unknown` operations
            left = self.atom(e.values[0], force_name=True)
            rest = (
                e.values[1]
                if len(e.values) == 2
                else N.copy_origin(gast.BoolOp(op=e.op, values=e.values[1:]), e)
            )
            t = self._short_circuit(
                left, isinstance(e.op, gast.And), lambda: self.atom(rest), "value", "and/or"
            )
            return t, Op("copy", elts=[t])
        if isinstance(e, gast.IfExp):
            t = target or self.temp("select")
            test = self.condition(e.test)
            body = self.block([N.copy_origin(N.assign(t, e.body), e)])
            orelse = self.block([N.copy_origin(N.assign(t, e.orelse), e)])
            self.emit(gast.If(test=test, body=body, orelse=orelse))
            return N.name(t), Op("copy", elts=[N.name(t)])
        if isinstance(e, (gast.List, gast.Tuple)):
            elts = [self.atom(x) for x in e.elts]
            cls = gast.List if isinstance(e, gast.List) else gast.Tuple
            self._no_local_functions(elts, f"stored in a {cls.__name__.lower()}", e)
            return cls(elts=elts, ctx=gast.Load()), Op("pack", elts=elts)
        if isinstance(e, gast.Dict):
            if any(k is None for k in e.keys):
                # {**d, "c": v}: an empty dict updated in order (differentiable)
                t = N.name(self.temp("merged"))
                self.emit(N.assign(t.id, gast.Dict(keys=[], values=[])), Op("pack", elts=[]))
                for k, v in zip(e.keys, e.values):
                    if k is None:
                        self.update(t.id, v, {})
                    else:
                        self._prim_into(t.id, "ad.setitem", t, self.atom(k), self.atom(v))
                return t, Op("copy", elts=[t])
            keys = [self.atom(k) for k in e.keys]
            vals = [self.atom(v) for v in e.values]
            self._no_local_functions(vals, "stored in a dict", e)
            return gast.Dict(keys=keys, values=vals), Op("pack", elts=vals)
        if isinstance(e, gast.Subscript):
            return self.subscript(e)
        if isinstance(e, gast.Attribute):
            return self.attribute(e)
        if isinstance(e, gast.Call):
            return self.call(e, target)
        if isinstance(e, (gast.ListComp, gast.GeneratorExp, gast.DictComp)):
            return self.comprehension(e)
        if isinstance(e, gast.JoinedStr):
            # each formatted value its own statement, so transforms see what it reads
            # (under vmap, f"{x.shape}" is one example's shape: user Y)
            e = N.clone(e)
            for part in e.values:
                if isinstance(part, gast.FormattedValue):
                    part.value = self.atom(part.value)
                    part.value.sj_resolved = True  # (a name of normalized code already)
            return self.rename_all(e), Op("inactive", what="f-string")
        if isinstance(e, gast.Lambda):
            raise UnsupportedSyntaxError(
                "a lambda used as a value here is not supported (a lambda can be called, "
                "assigned to a name, or passed to a srcjax transform or srcjax.lax)",
                self.loc(e),
                "define the function with `def` and call it",
            )
        raise syntax_refusal(e, "expressions", self.src)

    def check_weak_ints(self, operands: List[Any], always: bool) -> None:
        """Before an operator or elementwise ``jnp`` call on ``operands`` (atoms): for
        each Python int constant beyond int32 among them (or global name holding one
        when transformed, read at run time), ``ad.check_weak_int``,
        JAX's OverflowError at run time when it meets an array (``always``: a ``jnp``
        function's argument) while x64 is off (NumPy computes ``x + 2**31`` in
        float32). Nothing is emitted for other constants (the common case)."""
        for i, a in enumerate(operands):
            big = a.value if isinstance(a, gast.Constant) else getattr(a, "big_int", None)
            if type(big) is not int or big in _INT32:
                continue
            others = [o for j, o in enumerate(operands) if j != i]
            if always or not others:
                args = [N.clone(a)]
            elif isinstance(others[0], gast.Constant):
                continue  # (Python's arithmetic on two numbers)
            else:
                args = [N.clone(a), N.clone(others[0])]
            chk = registry.by_public("ad.check_weak_int")
            self.emit(
                N.expr_stmt(N.call(chk.public, args)), Op("prim", prim=chk, bound=_bind(chk, *args))
            )

    def dunder_call(self, method: str, receiver: Any, others: list, e: Any) -> Optional[tuple]:
        """``receiver.method(*others)`` inlined when ``receiver`` is a registered
        class instance known here whose class defines ``method`` in Python
        (``v[1]`` is ``V.__getitem__``, ``s * x`` ``S.__mul__``, ``s @ x``
        ``S.__matmul__``); None otherwise. Without it such an object reached
        array primitives (helper Q: grad hung in np.shape of an object with
        ``__len__`` and ``__getitem__``)."""
        if isinstance(receiver, gast.Call):  # (V(x, y) * 3.0)[1]: a construction
            st, cls = self.resolve(receiver.func)
            if st != "found" or not isinstance(cls, type) or cls not in _tree_registry():
                return None  # (a plain class's objects: per example under vmap)
            ty = ("class", cls, (), (), (), ())
        elif isinstance(receiver, (gast.Name, gast.Attribute, gast.Subscript)):
            ty = self.type_of(receiver) or self.expr_type(receiver)
        else:
            return None
        if ty is None or ty[0] != "class":
            return None
        fn = _plain_method(ty[1], method)
        if fn is None:
            return None
        call = N.copy_origin(gast.Call(func=e, args=list(others), keywords=[]), e)
        return self.inline_method(fn, [self.typed_atom(receiver, ty)], call)

    def subscript(self, e: Any) -> tuple:
        # x.at[i] only appears under .set/.add: handled in call()
        done = self.dunder_call("__getitem__", e.value, [e.slice], e)
        if done is not None:
            return done
        value = self.atom(e.value)
        if self.class_of(value) is not None:  # ((v * 3.0)[1]: a typed temporary)
            done = self.dunder_call("__getitem__", value, [e.slice], e)
            if done is not None:
                return done
        idx = self.index(e.slice)
        prim = registry.by_public("ad.getitem")
        if getattr(e, "sj_unpack", False):
            # `a, b = v`: v[0], v[1] index what unpacking reads, a subscript (not
            # clamped: a v too short is NumPy's error, never a repeated item)
            node = gast.Subscript(value=value, slice=idx, ctx=gast.Load())
        else:
            node = N.item(value, idx)  # (x[i] or ad.getitem(x, i): JAX's out of bounds)
        return node, Op("prim", prim=prim, bound=_bind(prim, value, idx))

    def attribute(self, e: Any) -> tuple:
        status, obj = self.resolve(e)
        if status == "local" or (status == "dynamic"):
            if e.attr in ("shape", "ndim", "dtype", "size"):
                base = self.atom(e.value)
                return N.attr(base, e.attr), Op("inactive", what="." + e.attr)
            if e.attr in ("T", "mT"):
                base = self.atom(e.value)
                attrs = _attributes()
                prim = attrs.get(e.attr) or registry.by_public("jnp.transpose")
                return N.call(prim.public, [base]), Op("prim", prim=prim, bound=_bind(prim, base))
            if e.attr in ("real", "imag"):
                # x.real / x.imag: jnp.real / jnp.imag, differentiable (helper S)
                base = self.atom(e.value)
                prim = registry.by_public(f"jnp.{e.attr}")
                return N.call(prim.public, [base]), Op("prim", prim=prim, bound=_bind(prim, base))
            # a field of a pytree node (namedtuple, registered class): differentiable,
            # unless the class is known and the attribute is static (aux data)
            base = self.atom(e.value)
            ty = self.type_of(base)
            if ty is not None and ty[0] == "class" and e.attr in ty[3]:
                prim = registry.by_public("ad.static_attr")
                return N.attr(base, e.attr), Op(
                    "prim", prim=prim, bound={"x": base, "name": N.const(e.attr)}
                )
            prim = registry.by_public("ad.getattr")
            return N.attr(base, e.attr), Op(
                "prim", prim=prim, bound={"x": base, "name": N.const(e.attr)}
            )
        if status == "found":
            # a module constant like jnp.pi or np.float32: keep as written
            node = self.rename_all(e)
            return node, Op("inactive", what="constant")
        raise _resolution_error(self, e)
