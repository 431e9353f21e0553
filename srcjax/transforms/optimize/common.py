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


#: methods that change the length of the list they are called on
_LENGTH_MUTATORS = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "popitem", "update", "setdefault"}
)
#: builtins that read a list without keeping it (a count)
_KEEPS_NOTHING = frozenset({"len"})


def list_receivers(fdef: Any, walked: Any = None) -> set:
    """The names in ``fdef`` that some method is called on (``l.append``), and every
    name bound to the same object by plain ``a = b`` assignments, either way
    (``items.append(v); cur = items``: ``cur`` holds the appended list too, so its
    display's abstract value is not what it holds at run time).

    Every name of the function where a list whose length changes may be reached
    by another way (:func:`_reached_otherwise`: ``h = p[0]; h.append(x)``, then
    ``p[0]`` read; a list stored in a display, passed to a call, a parameter
    stored elsewhere): no list display's length is then sure.

    One walk of ``fdef`` gathers what the parts read (jit's abstract
    interpretation calls this once per inference: a walk per part was a tenth
    of W4's first ``jit(value_and_grad)``; ``walked``: that walk, made already)."""
    nodes, parents = walked if walked is not None else N.walk_with_parents(fdef)
    out = {
        n.func.value.id
        for n in nodes
        if isinstance(n, gast.Call)
        and isinstance(n.func, gast.Attribute)
        and isinstance(n.func.value, gast.Name)
    }
    changed = _length_changes(nodes)
    out |= changed
    pairs = copy_pairs(nodes)
    out = close_over_copies(out, pairs)
    changed = close_over_copies(changed, pairs)
    if _reached_otherwise(nodes, parents, changed):
        out |= {n.id for n in nodes if isinstance(n, gast.Name)}
    return out


def copy_pairs(nodes: Any) -> List[tuple]:
    """``(a, b)`` for each plain copy ``a = b`` among ``nodes``."""
    return [
        (s.targets[0].id, s.value.id)
        for s in nodes
        if isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Name)
    ]


def close_over_copies(names: set, pairs: List[tuple]) -> set:
    """``names`` and every name a chain of the copies ``pairs`` (either way)
    links to one of them: the names that may hold the same object."""
    grew = True
    while grew:
        grew = False
        for a, b in pairs:
            if (a in names) != (b in names):
                names |= {a, b}
                grew = True
    return names


def _length_changes(nodes: List[Any]) -> set:
    """The names whose list the code of ``nodes`` (every node of a function) may
    change the length of: the receivers of ``append``, ``pop``, ..., ``l += ...``,
    ``del l[i]`` and ``l[a:b] = ...``."""
    out = set()
    for n in nodes:
        if (
            isinstance(n, gast.Call)
            and isinstance(n.func, gast.Attribute)
            and isinstance(n.func.value, gast.Name)
            and n.func.attr in _LENGTH_MUTATORS
        ):
            out.add(n.func.value.id)
        elif isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            out.add(n.target.id)
        elif isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name):
            if isinstance(n.ctx, gast.Del) or (
                isinstance(n.ctx, gast.Store) and isinstance(n.slice, gast.Slice)
            ):
                out.add(n.value.id)
    return out


def _reached_otherwise(nodes: List[Any], parents: Dict[int, Any], changed: set) -> bool:
    """Whether a list held by a name in ``changed`` (closed under copies) may be
    held by something else too: a name in it bound to anything but a new list
    (or ``None``, a number, another such name), or read other than as a method's
    receiver, a copy's value, an item read, an operand of ``len`` or of a
    primitive (not a value a stack helper keeps), or a returned value. ``nodes``
    and ``parents``: a function's nodes and their parents (:func:`N.walk_with_parents`)."""
    if not changed:
        return False
    for node in nodes:
        if not (isinstance(node, gast.Name) and node.id in changed):
            continue
        parent = parents.get(id(node))
        if isinstance(node.ctx, gast.Param):
            return True  # (the caller's list: other arguments may hold it too)
        if isinstance(node.ctx, gast.Load):
            if not _keeps_nothing(node, parent, parents):
                return True
        elif isinstance(node.ctx, gast.Store) and not isinstance(parent, gast.AugAssign):
            if not (isinstance(parent, gast.Assign) and _new_value(parent.value)):
                return True  # (a loop target, an item read, a call's result)
    return False


def _keeps_nothing(node: Any, parent: Any, parents: Dict[int, Any]) -> bool:
    if isinstance(parent, gast.Attribute):
        return parent.value is node  # (a method's receiver)
    if isinstance(parent, (gast.Assign, gast.AugAssign, gast.Return)):
        return parent.value is node  # (a copy, the list grown, the result)
    if isinstance(parent, gast.Subscript):
        return parent.value is node  # (an item read, stored or deleted)
    if isinstance(parent, gast.Call) and node in parent.args:
        f = parent.func
        if isinstance(f, gast.Name):
            return f.id in _KEEPS_NOTHING
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
            from ...primitives.registry import REGISTRY

            # a primitive's operand (``ad.jac_columns(cols, ...)``): its result's
            # abstract value is never computed from a changed list (_appended_operand);
            # a stack helper's pushed value would be kept on its tape
            prim = REGISTRY.get(f"{f.value.id}.{f.attr}")
            return prim is not None and not (prim.stack and parent.args[0] is not node)
    return False


def _new_value(value: Any) -> bool:
    """A new list, ``None``, a constant, or a name (a copy: in the class too)."""
    return isinstance(value, (gast.List, gast.ListComp, gast.Constant, gast.Name))


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
