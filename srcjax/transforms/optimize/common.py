"""What the optimizer's passes share: which statements are pure assignments,
the kinds of primitives they may move or drop, and substitution of names in
statements."""

from __future__ import annotations

import math
from typing import Any, Dict, List

import gast

from ...frontend import nodes as N
from ...frontend.normalize import Op

PURE_KINDS = ("elementwise", "reduction", "linalg", "structural", "creation")
# other kinds whose result dtype and shape jit infers by running the primitive on
# stand-ins (random: keys are values; internal: the transforms' helpers), except
# the helpers with an effect
_EVAL_KINDS = ("nn", "random", "internal")
# what an array's attributes and shape queries say, from its abstract value
_ARRAY_ATTRS = {
    "shape": lambda a: a.shape,
    "ndim": lambda a: len(a.shape),
    "size": lambda a: a.size,
    "dtype": lambda a: a.dtype,
}
_SCALAR_TYPES = (bool, int, float)
_UNKNOWN = object()  # a value not known at transformation time


class _Static:
    """A name's value known at transformation time (``t = np.int32``): the dtype
    or scalar type it holds, for the dtype arguments that read it."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __eq__(self, other: Any) -> bool:
        if not isinstance(other, _Static):
            return False
        a, b = self.value, other.value
        if type(a) is type(b) and type(a) in (tuple, int, bool):
            return a == b  # a shape or a count recomputed on each loop round
        return a is b

    def __hash__(self) -> int:
        v = self.value
        return hash((type(v), v)) if type(v) in (tuple, int, bool) else id(v)

    def __repr__(self) -> str:
        return f"static {self.value!r}"


# ---------------------------------------------------------------------------- helpers
def _is_assign(s: Any) -> bool:
    return (
        isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and getattr(s, "sj_op", None) is not None
    )


def _is_pure(s: Any) -> bool:
    op = s.sj_op
    if op.kind in ("copy", "pack"):
        return True
    if op.kind == "prim":
        return op.prim.kind in PURE_KINDS or op.prim.pure
    if op.kind == "inactive":
        return isinstance(s.value, (gast.Attribute, gast.Constant))
    return False


def _is_scalar_const(node: Any) -> bool:
    return (
        isinstance(node, gast.Constant)
        and isinstance(node.value, _SCALAR_TYPES)
        and not (isinstance(node.value, float) and not math.isfinite(node.value))
    )


def read_counts(body: List[Any]) -> Dict[str, int]:
    """How often each name is read in the statements ``body`` (nested ones too)."""
    reads: Dict[str, int] = {}
    for n in N.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            reads[n.id] = reads.get(n.id, 0) + 1
    return reads


def _assigned(stmt: Any) -> set:
    return set(N.assigned_names([stmt]))


def _new_assign(target: str, value: Any, op: Op, like: Any) -> Any:
    s = N.assign(target, value)
    N.copy_origin(s, like)
    if hasattr(like, "sj_file"):
        s.sj_file = like.sj_file
    s.sj_op = op
    return s


class _Subst(gast.NodeTransformer):
    """Replace Load names by atoms; constants only where a value is expected
    (never as the base of an attribute, call or subscript)."""

    def __init__(self, table: Dict[str, Any]) -> None:
        self.table = table

    def visit_Name(self, node):
        if isinstance(node.ctx, gast.Load) and node.id in self.table:
            return N.clone(self.table[node.id])
        return node

    def _names_only(self, node):
        if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load):
            new = self.table.get(node.id)
            if isinstance(new, gast.Name):
                return N.clone(new)
            return node
        return self.visit(node)

    def visit_Attribute(self, node):
        node.value = self._names_only(node.value)
        return node

    def visit_Subscript(self, node):
        node.value = self._names_only(node.value)
        node.slice = self.visit(node.slice)
        return node

    def visit_Call(self, node):
        node.func = self._names_only(node.func)
        node.args = [self.visit(a) for a in node.args]
        for k in node.keywords:
            k.value = self.visit(k.value)
        return node


def _subst_stmt(s: Any, table: Dict[str, Any]) -> None:
    """Substitute in a simple statement's value and its ``sj_op`` operands."""
    if not table:
        return
    used = set(N.names_in(s.value if hasattr(s, "value") and s.value is not None else s))
    if not used & set(table):
        return
    tr = _Subst(table)
    if isinstance(s, (gast.Assign, gast.Expr, gast.Return)):
        s.value = tr.visit(s.value)
    else:
        tr.visit(s)
    op = getattr(s, "sj_op", None)
    if op is not None:
        # keep the op's operand nodes in step with the expression
        for k, v in list(op.bound.items()):
            if isinstance(v, list):
                op.bound[k] = [_subst_node(x, table) for x in v]
            else:
                op.bound[k] = _subst_node(v, table)
        op.elts = [_subst_node(x, table) for x in op.elts]


def _subst_node(node: Any, table: Dict[str, Any]) -> Any:
    if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) and node.id in table:
        return N.clone(table[node.id])
    if isinstance(node, gast.AST):
        return _Subst(table).visit(N.clone(node))
    return node


def _kill(table: Dict[str, Any], names: set) -> None:
    for k in list(table):
        v = table[k]
        if k in names or (isinstance(v, gast.Name) and v.id in names):
            del table[k]


# ---------------------------------------------------------------------------- static args


def list_receivers(fdef: Any) -> set:
    """The names in ``fdef`` that some method is called on (``l.append``), and every
    name bound to the same object by plain ``a = b`` assignments, either way
    (``items.append(v); cur = items``: ``cur`` holds the appended list too, so its
    display's abstract value is not what it holds at run time)."""
    out = {
        n.func.value.id
        for n in gast.walk(fdef)
        if isinstance(n, gast.Call)
        and isinstance(n.func, gast.Attribute)
        and isinstance(n.func.value, gast.Name)
    }
    pairs = [
        (s.targets[0].id, s.value.id)
        for s in gast.walk(fdef)
        if isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Name)
    ]
    grew = True
    while grew:
        grew = False
        for a, b in pairs:
            if (a in out) != (b in out):
                out |= {a, b}
                grew = True
    return out


def each_for_loop(fdef: Any, namer: Any, in_loop: Any, when: Any = None) -> bool:
    """Run a loop pass's ``in_loop(loop, namer)`` on every ``for`` loop of ``fdef``
    (at any depth) that ``when(loop)`` accepts; whether any changed. Nothing
    without a namer (the pass makes names)."""
    if namer is None:
        return False
    changed = False
    for s in N.walk_stmts(fdef.body):
        if isinstance(s, gast.For) and (when is None or when(s)):
            changed |= in_loop(s, namer)
    return changed
