"""Source-level optimization passes over the normalized IR (IR -> IR).

Each pass takes the normalized ``FunctionDef`` (see
:mod:`srcjax.frontend.normalize`), edits its body in place and returns it, so
each can be applied and tested alone:

- :func:`bind_static`: static arguments become constant assignments at the top.
- :func:`propagate`: copy and constant propagation (``y = x; z = y * 2`` reads
  ``x``), block-local with invalidation on reassignment and around loops.
- :func:`fold_constants`: Python operators on constants (``0.5 * 2.0``) are
  evaluated at transformation time, with Python's semantics (weak types kept).
- :func:`infer_avals`: abstract values (shape, dtype, weak type) of every
  assigned name, from the argument signature: an analysis, annotating each
  assignment with ``stmt.sj_aval`` and the operands' values with
  ``stmt.sj_avals_in``.
- :func:`simplify`: algebraic simplification (``x*1``, ``x+0``, ``x-0``,
  ``x**1``, ``x**2 -> x*x``, ``x**3 -> x*x*x``, ``x**4``, ``x**0.5 -> ad.pow_half`` (IEEE pow, not sqrt, at -0/-inf),
  ``x**-1 -> 1/x``), only where the dtype and shape are unchanged (needs avals).
- :func:`cse`: common-subexpression elimination of pure primitive calls.
- :func:`dce`: dead-code elimination of pure statements whose result is never read.

Inlining of user calls is done by the normalizer. Purity: primitives of kinds
elementwise, reduction, linalg, structural and creation, copies and container
displays are pure; everything else (``print``, list ``append``/``pop``, calls
without a rule, internal AD helpers) is kept as written.
"""

from __future__ import annotations

import functools
import math
import operator
import warnings
from typing import Any, Callable, Dict, List, Optional

import gast
import numpy as np

from .. import dtypes
from ..frontend import nodes as N
from ..frontend.normalize import Op
from ..primitives import registry
from ..primitives.branch_types import structure_mismatch, type_mismatch

__all__ = [
    "Aval",
    "bind_static",
    "propagate",
    "fold_constants",
    "infer_avals",
    "simplify",
    "cse",
    "dce",
    "inline_temporaries",
    "optimize",
    "promote",
    "PURE_KINDS",
    "check_branch_avals",
]

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
        return op.prim.kind in PURE_KINDS
    if op.kind == "inactive":
        return isinstance(s.value, (gast.Attribute, gast.Constant))
    return False


def _is_scalar_const(node: Any) -> bool:
    return (
        isinstance(node, gast.Constant)
        and isinstance(node.value, _SCALAR_TYPES)
        and not (isinstance(node.value, float) and not math.isfinite(node.value))
    )


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
def bind_static(fdef: Any, values: Dict[str, Any]) -> Any:
    """Prepend ``name = value`` for static arguments whose value is a literal
    (ints, floats, bools, strings, None and tuples of them)."""

    def literal(v):
        if v is None or isinstance(v, (bool, int, float, str)):
            return not (isinstance(v, float) and not math.isfinite(v))
        if isinstance(v, tuple):
            return all(literal(x) for x in v)
        return False

    pre = []
    for name, v in values.items():
        if literal(v):
            node = N.const(v)
            s = N.assign(name, node)
            s.sj_op = Op("copy", elts=[node])
            s.sj_note = "static argument"
            pre.append(s)
    fdef.body[:0] = pre
    return fdef


# ---------------------------------------------------------------------------- propagation
def propagate(fdef: Any) -> Any:
    """Copy and constant propagation (block-local, conservative around control flow)."""
    _propagate_block(fdef.body, {})
    return fdef


def _propagate_block(stmts: List[Any], table: Dict[str, Any]) -> None:
    for s in stmts:
        if isinstance(s, gast.If):
            if isinstance(s.test, gast.Name) and s.test.id in table:
                s.test = N.clone(table[s.test.id])
            _propagate_block(s.body, dict(table))
            _propagate_block(s.orelse, dict(table))
            _kill(table, _assigned(s))
        elif isinstance(s, gast.While):
            _kill(table, _assigned(s))
            inner = dict(table)
            s.test = _Subst(inner).visit(s.test) if inner else s.test
            _propagate_block(s.body, inner)
            _kill(table, _assigned(s))
        elif isinstance(s, gast.For):
            if table:
                s.iter = _Subst(table).visit(s.iter)
            _kill(table, _assigned(s))
            _propagate_block(s.body, dict(table))
            _kill(table, _assigned(s))
        elif isinstance(s, gast.Assign):
            _subst_stmt(s, table)
            _kill(table, _assigned(s))
            op = getattr(s, "sj_op", None)
            if (
                op is not None
                and op.kind == "copy"
                and _is_assign(s)
                and (
                    (isinstance(s.value, gast.Name) and s.value.id != s.targets[0].id)
                    or _is_scalar_const(s.value)
                    or (isinstance(s.value, gast.Constant) and s.value.value is None)
                )
            ):
                table[s.targets[0].id] = N.clone(s.value)
        else:
            _subst_stmt(s, table)
            _kill(table, _assigned(s))


# ---------------------------------------------------------------------------- folding
_PY_BINOPS = {
    gast.Add: operator.add,
    gast.Sub: operator.sub,
    gast.Mult: operator.mul,
    gast.Div: operator.truediv,
    gast.FloorDiv: operator.floordiv,
    gast.Mod: operator.mod,
    gast.Pow: operator.pow,
}
_PY_UNARY = {gast.USub: operator.neg, gast.UAdd: operator.pos}
_PY_CMP = {
    gast.Lt: operator.lt,
    gast.LtE: operator.le,
    gast.Gt: operator.gt,
    gast.GtE: operator.ge,
    gast.Eq: operator.eq,
    gast.NotEq: operator.ne,
}


def _py_eval(expr: Any) -> Any:
    """Value of a Python operator over scalar constants, or raise."""
    if isinstance(expr, gast.BinOp) and type(expr.op) in _PY_BINOPS:
        if _is_scalar_const(expr.left) and _is_scalar_const(expr.right):
            return _PY_BINOPS[type(expr.op)](expr.left.value, expr.right.value)
    if isinstance(expr, gast.UnaryOp) and type(expr.op) in _PY_UNARY:
        if _is_scalar_const(expr.operand):
            return _PY_UNARY[type(expr.op)](expr.operand.value)
    if (
        isinstance(expr, gast.Compare)
        and len(expr.ops) == 1
        and type(expr.ops[0]) in _PY_CMP
        and _is_scalar_const(expr.left)
        and _is_scalar_const(expr.comparators[0])
    ):
        return _PY_CMP[type(expr.ops[0])](expr.left.value, expr.comparators[0].value)
    if (
        isinstance(expr, gast.Compare)
        and len(expr.ops) == 1
        and isinstance(expr.ops[0], (gast.Is, gast.IsNot))
        and _is_none_or_scalar(expr.left)
        and _is_none_or_scalar(expr.comparators[0])
        and (expr.left.value is None or expr.comparators[0].value is None)
    ):
        same = expr.left.value is None and expr.comparators[0].value is None
        return same if isinstance(expr.ops[0], gast.Is) else not same
    raise ValueError("not foldable")


def _is_none_or_scalar(node: Any) -> bool:
    return _is_scalar_const(node) or (isinstance(node, gast.Constant) and node.value is None)


def fold_constants(fdef: Any) -> Any:
    """Evaluate Python operators over constants (``2 * 0.5`` -> ``1.0``).

    Only operator expressions on Python scalars fold, with Python's own
    semantics, which is what the unoptimized code computes; calls such as
    ``jnp.sin(1.0)`` return strongly typed NumPy scalars and are left alone.
    """
    changed = True
    while changed:
        changed = False
        for s in N.walk_stmts(fdef.body):
            if not _is_assign(s):
                continue
            if s.sj_op.kind != "prim" and not (
                isinstance(s.value, gast.Compare)
                and isinstance(s.value.ops[0], (gast.Is, gast.IsNot))
            ):
                continue
            try:
                v = _py_eval(s.value)
            except (ValueError, ArithmeticError, TypeError):
                continue
            if not isinstance(v, _SCALAR_TYPES) or (isinstance(v, float) and not math.isfinite(v)):
                continue
            node = N.const(v)
            s.value = node
            s.sj_op = Op("copy", elts=[node])
            changed = True
        if changed:
            propagate(fdef)
    return fdef


# ---------------------------------------------------------------------------- abstract values
class Aval:
    """Abstract value of an array or scalar: shape, dtype, and weak type.

    ``ptype`` is the Python type (``float``, ``int``, ``bool``) of a weakly typed
    Python scalar, ``None`` for arrays and NumPy scalars.
    """

    __slots__ = ("shape", "dtype", "ptype")

    def __init__(self, shape: tuple, dtype: Any, ptype: Optional[type] = None) -> None:
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        self.ptype = ptype

    @property
    def weak(self) -> bool:
        return self.ptype is not None

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @staticmethod
    def of(x: Any) -> Optional["Aval"]:
        if isinstance(x, (np.ndarray, np.generic)):  # first: np.float64 is a float
            return Aval(np.shape(x), x.dtype)
        if isinstance(x, bool):
            return Aval((), np.bool_, bool)
        if isinstance(x, int):
            return Aval((), np.int64, int)
        if isinstance(x, float):
            return Aval((), np.float64, float)
        return None

    def proxy(self) -> Any:
        """A one-element stand-in with this value's dtype, rank and weak type."""
        if self.ptype is not None:
            return self.ptype(1)
        if not self.shape:
            return self.dtype.type(1)
        return np.ones((1,) * len(self.shape), self.dtype)

    def __eq__(self, other: Any) -> bool:
        return (
            isinstance(other, Aval)
            and self.shape == other.shape
            and self.dtype == other.dtype
            and self.ptype is other.ptype
        )

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype, self.ptype))

    def __repr__(self) -> str:
        if self.ptype is not None:
            return f"weak {self.ptype.__name__}"
        return f"{self.dtype.name}[{','.join(map(str, self.shape))}]"


def _merge(a: Any, b: Any) -> Any:
    if a is None or b is None:
        return None
    if isinstance(a, (Aval, _Static)) or isinstance(b, (Aval, _Static)):
        return a if a == b else None
    if type(a) is not type(b):
        return None
    if isinstance(a, dict):
        if a.keys() != b.keys():
            return None
        return {k: _merge(a[k], b[k]) for k in a}
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return None
        items = [_merge(x, y) for x, y in zip(a, b)]
        if hasattr(a, "_fields"):  # a named tuple takes its fields positionally
            return type(a)(*items)
        return type(a)(items)
    return None


def _merge_env(a: Dict[str, Any], b: Dict[str, Any]) -> Dict[str, Any]:
    out = {}
    for k in set(a) | set(b):
        out[k] = _merge(a.get(k), b.get(k)) if (k in a and k in b) else None
    return out


def check_branch_avals(what: str, names: tuple, a: Any, b: Any) -> None:
    """The static form of ``lax.cond``'s branch check for jit
    (:func:`srcjax.primitives.branch_types.check_branch_types`): ``a`` and ``b``
    are the abstract values inferred for the two branches' output (:class:`Aval`
    leaves in tuples/lists/dicts; ``None`` where unknown, never an error).

    Raises:
        TypeError: JAX's message, where both are known and differ.
    """
    if a is None or b is None:
        return
    if isinstance(a, Aval) and isinstance(b, Aval):

        def key(v: Aval) -> tuple:
            if v.weak:
                return v.shape, np.dtype(dtypes.dtype_of(v.ptype(0)))
            return v.shape, np.dtype(dtypes.canonicalize_dtype(v.dtype))

        type_mismatch(what, names, key(a), key(b))
        return
    containers = (dict, list, tuple)
    if not isinstance(a, containers) or not isinstance(b, containers):
        return  # a static value or one unknown side: nothing sure to compare
    if type(a) is not type(b):
        structure_mismatch(what, names, f"a {type(a)}", f"a {type(b)}")
    if isinstance(a, dict):
        if set(a) != set(b):
            structure_mismatch(
                what,
                names,
                f"a dict with keys {sorted(str(k) for k in a)}",
                f"a dict with keys {sorted(str(k) for k in b)}",
            )
        for k in a:
            check_branch_avals(what, names, a[k], b[k])
        return
    if len(a) != len(b):
        structure_mismatch(
            what,
            names,
            f"a {type(a).__name__} of {len(a)} items",
            f"a {type(b).__name__} of {len(b)} items",
        )
    for x, y in zip(a, b):
        check_branch_avals(what, names, x, y)


def _describe_aval(a: Any) -> str:
    return f"{np.dtype(a.dtype).name}[{','.join(map(str, a.shape))}]"


class _Interp:
    def __init__(self, resolve: Callable[[str], Any], locals_: set) -> None:
        self.resolve = resolve
        self.locals = locals_
        self.unsure = 0  # > 0 inside a loop whose abstract values did not converge
        self.trial = 0  # > 0 in a loop's passes before its abstract values settle

    def aval_of(self, node: Any, env: Dict[str, Any]) -> Any:
        if isinstance(node, gast.Name):
            if node.id in env:
                return env[node.id]
            if node.id in self.locals:
                return None
            try:
                v = self.resolve(node.id)
            except Exception:  # noqa: BLE001 - unknown global: no information
                return None
            if isinstance(v, (_SCALAR_TYPES, np.generic)):
                return Aval.of(v)
            return None
        if isinstance(node, gast.Constant):
            return Aval.of(node.value) if isinstance(node.value, _SCALAR_TYPES) else None
        return None

    def block(self, stmts: List[Any], env: Dict[str, Any]) -> Dict[str, Any]:
        for s in stmts:
            env = self.stmt(s, env)
        return env

    def stmt(self, s: Any, env: Dict[str, Any]) -> Dict[str, Any]:
        if isinstance(s, gast.If):
            a = self.block(s.body, dict(env))
            b = self.block(s.orelse, dict(env))
            lax_branches = getattr(s, "sj_lax_branches", None)
            if lax_branches is not None and not self.trial and not self.unsure:
                what, t, names = lax_branches
                try:
                    check_branch_avals(what, names, a.get(t), b.get(t))  # JAX's TypeError
                except TypeError as e:  # located at the user's lax.cond / switch (user Y)
                    from ..errors import Location, TransformTypeError

                    raise TransformTypeError(str(e), Location.of(s)) from None
            return _merge_env(a, b)
        if isinstance(s, (gast.While, gast.For)):
            names = _assigned(s)
            cur = dict(env)
            if isinstance(s, gast.For):
                for k in N.assigned_names([gast.Expr(value=s.target)]):
                    cur[k] = None
                item = self.loop_item(s, env)
                if item is not None:
                    cur[s.target.id] = item
            converged = False
            for _ in range(4):
                self.trial += 1
                try:
                    out = self.block(s.body, dict(cur))
                finally:
                    self.trial -= 1
                new = dict(cur)
                for k in names:
                    new[k] = _merge(cur[k], out.get(k)) if k in cur else None
                if isinstance(s, gast.For):
                    for k in N.assigned_names([gast.Expr(value=s.target)]):
                        new[k] = None
                    if item is not None:
                        new[s.target.id] = item
                if repr(sorted(new.items())) == repr(sorted(cur.items())):
                    converged = True
                    break
                cur = new
            self.unsure += not converged
            try:
                self.block(s.body, dict(cur))  # final pass: annotations under loop facts
            finally:
                self.unsure -= not converged
            return cur
        if _is_carry_check(s):
            # the carries it compares, for drop_carry_checks
            s.sj_avals_in = {n: self.aval_of(N.name(n), env) for n in N.names_in(s.value)}
            s.sj_avals_sure = not self.unsure
            return env
        if isinstance(s, gast.Assign):
            env = dict(env)
            val = None
            if _is_assign(s):
                s.sj_avals_in = {n: self.aval_of(N.name(n), env) for n in N.names_in(s.value)}
                try:
                    with warnings.catch_warnings(), np.errstate(all="ignore"):
                        warnings.simplefilter("ignore")
                        val = self.value(s, env)
                except Exception as e:  # noqa: BLE001 - no information
                    if getattr(e, "srcjax_user_error", False):
                        raise  # (the user's code is wrong for these arguments)
                    val = None
                s.sj_aval = val
            for k in _assigned(s):
                env[k] = None
            if _is_assign(s):
                env[s.targets[0].id] = val
            return env
        env = dict(env)
        for k in _assigned(s):
            env[k] = None
        return env

    def loop_item(self, s: Any, env: Dict[str, Any]) -> Any:
        """The abstract value of a ``for`` loop's target (a plain name): a weak
        int over ``range(...)``, a row of an array, or the merge of a list's
        items; None when unknown."""
        if not isinstance(s.target, gast.Name):
            return None
        it = s.iter
        if (
            isinstance(it, gast.Call)
            and isinstance(it.func, gast.Name)
            and it.func.id == "range"
            and it.func.id not in env
            and it.func.id not in self.locals
        ):
            return Aval((), np.int64, int)
        a = self.aval_of(it, env)
        if isinstance(a, Aval) and a.shape and not a.weak:
            return Aval(a.shape[1:], a.dtype)
        if isinstance(a, _Static) and isinstance(a.value, tuple):
            vals = {type(v) for v in a.value}
            return Aval((), np.int64, int) if vals == {int} else None
        if isinstance(a, (list, tuple)) and a:
            out = a[0]
            for x in a[1:]:
                out = _merge(out, x)
            return out
        return None

    # -- one assignment ------------------------------------------------------------
    def value(self, s: Any, env: Dict[str, Any]) -> Any:
        op = s.sj_op
        if op.kind == "copy":
            return self.aval_of(s.value, env) if N.is_atom(s.value) else None
        if op.kind == "pack":
            if isinstance(s.value, (gast.Tuple, gast.List)):
                items = [self.aval_of(e, env) for e in s.value.elts]
                return tuple(items) if isinstance(s.value, gast.Tuple) else list(items)
            if isinstance(s.value, gast.Dict) and all(
                isinstance(k, gast.Constant) for k in s.value.keys
            ):
                return {k.value: self.aval_of(v, env) for k, v in zip(s.value.keys, s.value.values)}
            return None
        if op.kind == "inactive" and isinstance(s.value, gast.Compare):
            return self.compare(s, env)
        if op.kind == "inactive" and isinstance(s.value, gast.Attribute):
            base = self.aval_of(s.value.value, env)
            if isinstance(base, Aval) and not base.weak and s.value.attr in _ARRAY_ATTRS:
                return _Static(_ARRAY_ATTRS[s.value.attr](base))  # t = x.shape
            v = self.static_value(s.value, env)  # t = np.int32
            return None if v is _UNKNOWN else _Static(v)
        if op.kind != "prim":
            return None
        prim = op.prim
        if prim.shape_query is not None:  # jnp.ndim(x): known with x's shape
            x = self.aval_of(op.bound.get("a", op.bound.get("x")), env)
            if isinstance(x, Aval) and not x.weak and set(op.bound) <= {"a", "x"}:
                return _Static(prim.shape_query(x))
        if prim.public == "ad.getitem":
            base = self.aval_of(op.bound.get("x"), env)
            idx = op.bound.get("idx")
            if (
                isinstance(base, Aval)
                and isinstance(idx, gast.Constant)
                and isinstance(idx.value, str)
            ):
                # params["w"] of an argument specialized as an array (srcjax show
                # --args 'f32[50]' for a dict parameter): NumPy's error at run time
                from ..errors import Location, TransformTypeError

                err = TransformTypeError(
                    f"indexing an array of type {_describe_aval(base)} with the key "
                    f"{idx.value!r}: this value was given as an array, but the code reads "
                    "it as a dict",
                    Location.of(s),
                    'pass a dict (srcjax show: --args \'{"w": f32[50], "b": f32[]}\')',
                )
                err.srcjax_user_error = True
                raise err
            if isinstance(base, _Static) and isinstance(base.value, tuple):
                try:  # t[0] of a shape
                    v = base.value[self._stand_in(idx, env, Aval.proxy)]
                except Exception:  # noqa: BLE001 - not a static index
                    v = None
                if type(v) in (int, tuple):
                    return _Static(v)
            if isinstance(base, (dict, list, tuple)) and isinstance(idx, gast.Constant):
                try:
                    return base[idx.value]
                except (KeyError, IndexError, TypeError):
                    return None
        if prim.public == "ad.getattr":  # a field of a named-tuple argument (state.t)
            base = self.aval_of(op.bound.get("x"), env)
            name = op.bound.get("name")
            if (
                isinstance(base, tuple)
                and hasattr(base, "_fields")
                and isinstance(name, gast.Constant)
                and name.value in base._fields
            ):
                return getattr(base, name.value)
        if prim.kind == "elementwise":
            r = self.elementwise(s, env)
            if r is not None or not any(
                isinstance(self.aval_of(x, env), _Static)
                for x in op.bound.values()
                if isinstance(x, gast.Name)
            ):
                return r
            return self.small(s, env)  # static operands: ndim - 1
        if prim.public == "ad.astype":
            x = self.aval_of(op.bound.get("x"), env)
            dt = self.static_value(op.bound.get("dtype"), env)
            if isinstance(x, Aval) and dt is not _UNKNOWN:
                return Aval(x.shape, dtypes.canonicalize_dtype(dt))
        if prim.kind == "reduction":
            r = self.reduction(s, env)
            if r is not None:
                return r
        if prim.kind == "creation" and prim.name.endswith("_like"):
            x = self.aval_of(op.bound.get("a", op.bound.get("x")), env)
            if isinstance(x, Aval) and set(op.bound) <= {"a", "x", "fill_value"}:
                fill = op.bound.get("fill_value")
                if fill is None or not x.weak:
                    return Aval(x.shape, x.dtype)
        if prim.public in ("jnp.matmul", "jnp.dot"):
            a = self.aval_of(op.bound.get("a", op.bound.get("x")), env)
            b = self.aval_of(op.bound.get("b", op.bound.get("y")), env)
            if (
                isinstance(a, Aval)
                and isinstance(b, Aval)
                and len(a.shape) == 2
                and len(b.shape) == 2
                and not a.weak
                and not b.weak
            ):
                # a call has JAX's result dtype, the operator ``@`` NumPy's
                rt = dtypes.result_type if isinstance(s.value, gast.Call) else np.result_type
                return Aval((a.shape[0], b.shape[1]), rt(a.dtype, b.dtype))
        if getattr(prim, "communicates", False):
            # a collective exchanges values with the other pmap devices: never run on
            # stand-ins while building (the others are not there)
            return None
        if prim.kind in PURE_KINDS or (
            prim.kind in _EVAL_KINDS and not prim.effectful  # (checks raise on stand-ins)
        ):
            # any other primitive: its implementation on stand-ins of the operands
            return self.small(s, env)
        return None

    def _operands(self, op: Op, env, make) -> tuple:
        """(args, kwargs) for calling the impl with stand-ins from ``make(aval)``."""
        sig = op.prim.signature
        args, kwargs = [], {}
        skipped = False
        for pname, p in sig.parameters.items():
            if pname not in op.bound:
                skipped = skipped or p.kind != p.VAR_POSITIONAL
                continue
            v = op.bound[pname]
            vals = [self._stand_in(x, env, make) for x in (v if isinstance(v, list) else [v])]
            if p.kind == p.VAR_POSITIONAL:
                args.extend(vals)
            elif p.kind == p.KEYWORD_ONLY:
                kwargs[pname] = vals[0]
            elif p.kind == p.VAR_KEYWORD:
                raise ValueError("**kwargs")
            elif kwargs or skipped:  # after a default: by keyword
                kwargs[pname] = vals[0]
            else:
                args.append(vals[0])
        return args, kwargs

    def _stand_in(self, node: Any, env, make) -> Any:
        if isinstance(node, gast.Name):
            a = self.aval_of(node, env)
            if not isinstance(a, Aval):
                v = self.static_value(node, env)
                if v is _UNKNOWN:
                    return _container_stand_in(a, make)
                return v
            return make(a)
        if isinstance(node, gast.Constant):
            return node.value
        if isinstance(node, gast.Attribute):
            v = self.static_value(node, env)
            if v is not _UNKNOWN:
                return v
        if isinstance(node, gast.Slice):  # an index: x[1:], x[::2]
            parts = (node.lower, node.upper, node.step)
            return slice(*[None if p is None else self._stand_in(p, env, make) for p in parts])
        if isinstance(node, gast.Tuple):  # x[:, None], x[i, 0]
            return tuple(self._stand_in(e, env, make) for e in node.elts)
        import ast

        return ast.literal_eval(N.to_source(node))

    def static_value(self, node: Any, env: Dict[str, Any]) -> Any:
        """The value of a dtype argument known at transformation time (a string
        constant, or a global or attribute naming a dtype or scalar type:
        ``np.int32``, ``float``, ``jnp.float16``), else ``_UNKNOWN``."""
        if isinstance(node, gast.Constant):
            return node.value if isinstance(node.value, str) else _UNKNOWN
        if isinstance(node, gast.Name) and isinstance(env.get(node.id), _Static):
            return env[node.id].value
        path = []
        while isinstance(node, gast.Attribute):
            path.append(node.attr)
            node = node.value
        if not isinstance(node, gast.Name) or node.id in env or node.id in self.locals:
            return _UNKNOWN
        try:
            v = self.resolve(node.id)
            for attr in reversed(path):
                v = getattr(v, attr)
        except Exception:  # noqa: BLE001 - unknown global
            return _UNKNOWN
        if isinstance(v, np.dtype) or (
            isinstance(v, type) and issubclass(v, (np.generic, *_SCALAR_TYPES, complex))
        ):
            return v
        return _UNKNOWN

    def compare(self, s: Any, env) -> Any:
        """A comparison ``a < b``: bool of the operands' broadcast shape."""
        e = s.value
        if len(e.ops) != 1 or type(e.ops[0]) not in _PY_CMP:
            return None
        operands = []
        for x in (e.left, e.comparators[0]):
            a = self.aval_of(x, env)
            if not isinstance(a, Aval):
                return None
            operands.append(a)
        r = self._eval_form(s, env)
        if isinstance(r, _SCALAR_TYPES):
            return Aval.of(r) if all(a.weak for a in operands) else None
        shape = np.broadcast_shapes(*[a.shape for a in operands])
        return Aval(shape, np.asarray(r).dtype)

    def elementwise(self, s: Any, env) -> Any:
        op = s.sj_op
        operands = []
        for v in op.bound.values():
            for x in v if isinstance(v, list) else [v]:
                if isinstance(x, gast.Name):
                    a = self.aval_of(x, env)
                    if not isinstance(a, Aval):
                        return None
                    operands.append(a)
        shape = np.broadcast_shapes(*[a.shape for a in operands]) if operands else ()
        r = self._eval_form(s, env)
        if isinstance(r, _SCALAR_TYPES):
            return Aval.of(r) if not shape else None
        dt = np.asarray(r).dtype
        return Aval(shape, dt)

    def _eval_form(self, s: Any, env, make: Callable = Aval.proxy) -> Any:
        """Evaluate the statement's expression on one-element stand-ins, in the
        form it is written (a Python operator runs NumPy's operator; a call runs
        the primitive's implementation), so dtypes are what the code computes."""
        e = s.value
        if isinstance(e, gast.BinOp) and type(e.op) in _PY_BINOPS_ALL:
            return _PY_BINOPS_ALL[type(e.op)](
                self._stand_in(e.left, env, make), self._stand_in(e.right, env, make)
            )
        if isinstance(e, gast.UnaryOp) and type(e.op) in _PY_UNARY_ALL:
            return _PY_UNARY_ALL[type(e.op)](self._stand_in(e.operand, env, make))
        if isinstance(e, gast.Compare) and len(e.ops) == 1 and type(e.ops[0]) in _PY_CMP:
            return _PY_CMP[type(e.ops[0])](
                self._stand_in(e.left, env, make), self._stand_in(e.comparators[0], env, make)
            )
        args, kwargs = self._operands(s.sj_op, env, make)
        return s.sj_op.prim.impl(*args, **kwargs)

    def reduction(self, s: Any, env) -> Any:
        op = s.sj_op
        x = self.aval_of(op.bound.get("x", op.bound.get("a")), env)
        if not isinstance(x, Aval) or set(op.bound) - {"x", "a", "axis", "keepdims"}:
            return None
        axis_node = op.bound.get("axis")
        keep_node = op.bound.get("keepdims")
        axis = None if axis_node is None else self._stand_in(axis_node, env, Aval.proxy)
        keep = False if keep_node is None else self._stand_in(keep_node, env, Aval.proxy)
        nd = len(x.shape)
        if axis is None:
            axes = tuple(range(nd))
        else:
            axes = tuple(a % nd for a in (axis if isinstance(axis, tuple) else (axis,)))
        shape = tuple(
            (1 if i in axes else d) for i, d in enumerate(x.shape) if keep or i not in axes
        )
        args, kwargs = self._operands(op, env, lambda a: np.ones((2,) * len(a.shape), a.dtype))
        r = op.prim.impl(*args, **kwargs)
        return Aval(shape, np.asarray(r).dtype)

    def small(self, s: Any, env) -> Any:
        """Any pure primitive on small operands: run it on zero-stride stand-ins
        (ones; zeros where ones fail, e.g. an index into an axis of length 1).
        A result that is a Python value (``ndim - 1``) is static when every
        operand is. Shapes that depend on values (boolean masks, ``nonzero``
        without ``size=``) are left unknown."""
        op = s.sj_op
        total = 0
        static = True
        for v in op.bound.values():
            for x in v if isinstance(v, list) else [v]:
                for a in _leaves(self.aval_of(x, env)) if isinstance(x, gast.Name) else ():
                    if isinstance(a, _Static):
                        if isinstance(a.value, tuple) and all(type(d) is int for d in a.value):
                            total += math.prod(a.value)  # a shape argument
                        continue
                    if not isinstance(a, Aval):
                        return None
                    static = False
                    if a.dtype == np.bool_ and op.prim.public == "ad.getitem":
                        return None  # x[mask]
                    total += a.size
        if total > (4096 if op.prim.kind == "linalg" else 1 << 16):
            return None
        if op.prim.public in _VALUE_SHAPED and "size" not in op.bound:
            return None

        def run(fill):
            def make(a: Aval):
                if a.weak:
                    return a.ptype(fill)
                return np.broadcast_to(np.full((), fill, a.dtype), a.shape)

            if not isinstance(s.value, gast.Call):
                return self._eval_form(s, env, make)
            args, kwargs = self._operands(op, env, make)
            return op.prim.impl(*args, **kwargs)

        try:
            r = run(1)
        except Exception:  # noqa: BLE001 - try zeros
            r = run(0)
        if isinstance(r, (np.ndarray, np.generic)):
            return Aval(np.shape(r), r.dtype)
        if static and type(r) in (int, bool, tuple) and isinstance(s.value, gast.BinOp):
            return _Static(r)  # shape arithmetic: ndim - 1
        return None


def _leaves(a: Any) -> list:
    """The abstract values in a (possibly container) abstract value."""
    if isinstance(a, (list, tuple)):
        return [x for e in a for x in _leaves(e)]
    if isinstance(a, dict):
        return [x for e in a.values() for x in _leaves(e)]
    return [a]


def _container_stand_in(a: Any, make) -> Any:
    """Stand-ins for a list, tuple, named tuple or dict of known values."""
    if isinstance(a, Aval):
        return make(a)
    if isinstance(a, _Static):
        return a.value
    if isinstance(a, list):
        return [_container_stand_in(e, make) for e in a]
    if isinstance(a, tuple):
        items = [_container_stand_in(e, make) for e in a]
        return type(a)(*items) if hasattr(a, "_fields") else tuple(items)
    if isinstance(a, dict):
        return {k: _container_stand_in(v, make) for k, v in a.items()}
    raise ValueError("unknown operand")


_VALUE_SHAPED = ("jnp.nonzero", "jnp.flatnonzero", "jnp.argwhere", "jnp.unique")


_PY_BINOPS_ALL = dict(_PY_BINOPS)
_PY_BINOPS_ALL.update(
    {
        gast.MatMult: operator.matmul,
        gast.BitAnd: operator.and_,
        gast.BitOr: operator.or_,
        gast.BitXor: operator.xor,
        gast.LShift: operator.lshift,
        gast.RShift: operator.rshift,
    }
)
_PY_UNARY_ALL = dict(_PY_UNARY)
_PY_UNARY_ALL.update({gast.Invert: operator.invert, gast.Not: operator.not_})


def infer_avals(
    fdef: Any, params: Dict[str, Any], resolve: Optional[Callable[[str], Any]] = None
) -> Dict[str, Any]:
    """Annotate assignments with abstract values, given the parameters' ``Aval``
    (or pytrees of them, or ``None`` for unknown). ``resolve(name)`` reads a
    global or closure value (scalars there are taken as weak constants).
    Returns the environment at the end of the body."""
    locals_ = set(params) | set(N.assigned_names(fdef.body))

    def no_globals(name):
        raise KeyError(name)

    interp = _Interp(resolve or no_globals, locals_)
    return interp.block(fdef.body, dict(params))


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
    return fdef


def _simplify_block(stmts: List[Any], namer) -> List[Any]:
    out: List[Any] = []
    for s in stmts:
        if isinstance(s, gast.If):
            s.body = _simplify_block(s.body, namer) or [gast.Pass()]
            s.orelse = _simplify_block(s.orelse, namer)
        elif isinstance(s, (gast.While, gast.For)):
            s.body = _simplify_block(s.body, namer) or [gast.Pass()]
        elif _is_assign(s) and s.sj_op.kind == "prim":
            new = _simplify_one(s, namer)
            if new is not None:
                out.extend(new)
                continue
        out.append(s)
    return out


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
    if not isinstance(res, Aval) or op.prim.public not in (
        "jnp.multiply",
        "jnp.add",
        "jnp.subtract",
        "jnp.power",
    ):
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

    name = op.prim.public
    if name == "jnp.multiply":
        if is_const(y, 1, 1.0) and same(_float_aval(x, s)):
            return [_annot(_copy(t, x, s), res)]
        if is_const(x, 1, 1.0) and same(_float_aval(y, s)):
            return [_annot(_copy(t, y, s), res)]
    elif name in ("jnp.add", "jnp.subtract"):
        if is_const(y, 0, 0.0) and same(_float_aval(x, s)):
            return [_annot(_copy(t, x, s), res)]
        if name == "jnp.add" and is_const(x, 0, 0.0) and same(_float_aval(y, s)):
            return [_annot(_copy(t, y, s), res)]
    elif name == "jnp.power":
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


# ---------------------------------------------------------------------------- carry checks
def _is_carry_check(s: Any) -> bool:
    op = getattr(s, "sj_op", None)
    return (
        isinstance(s, gast.Expr)
        and op is not None
        and op.kind == "prim"
        and op.prim.public == "ad.check_carry"
    )


def drop_carry_checks(fdef: Any) -> Any:
    """Remove the ``ad.check_carry`` calls (a lax loop body must keep its
    carry's structure, shapes and dtypes: JAX's TypeError) that cannot fail:
    where the abstract values of the initial carry and of the body's carry
    (run :func:`infer_avals` first; inside loops they hold for every pass)
    pass the check itself. A body that does change its carry, or one whose
    carry is not known, keeps the check, which then runs on every pass."""
    fdef.body = _filter(fdef.body, lambda s: not _carry_check_passes(s))
    return fdef


def _exact_stand_in(a: Aval) -> Any:
    """A zero-stride stand-in with ``a``'s shape, dtype and weak type."""
    if a.weak:
        return a.ptype(1)
    return np.broadcast_to(np.zeros((), a.dtype), a.shape)


def _carry_check_passes(s: Any) -> bool:
    if not _is_carry_check(s) or not getattr(s, "sj_avals_sure", False):
        return False
    bound = s.sj_op.bound
    avals = getattr(s, "sj_avals_in", None) or {}

    def value(node: Any) -> Any:
        if isinstance(node, gast.Constant) and isinstance(node.value, _SCALAR_TYPES + (str,)):
            return node.value
        if isinstance(node, gast.Name) and avals.get(node.id) is not None:
            return _container_stand_in(avals[node.id], _exact_stand_in)
        raise ValueError("not known")

    from ..primitives.control import _check_carry

    try:
        args = [value(bound[k]) for k in ("what", "before", "after")]
        batch = [value(bound[k]) if k in bound else 0 for k in ("before_batch", "after_batch")]
        _check_carry(*args, *batch)
    except Exception:  # noqa: BLE001 - unknown, or a carry that does change
        return False
    return True


# ---------------------------------------------------------------------------- CSE
def _cse_key(s: Any) -> Optional[tuple]:
    op = s.sj_op
    if op.kind != "prim" or op.prim.kind not in (
        "elementwise",
        "reduction",
        "linalg",
        "structural",
    ):
        return None
    return (op.prim.public, gast.dump(s.value))


def cse(fdef: Any) -> Any:
    """Replace a repeated pure primitive call by a copy of the first result."""
    _cse_block(fdef.body, {})
    return fdef


def _cse_block(stmts: List[Any], table: Dict[tuple, tuple]) -> None:
    def kill(names: set) -> None:
        for k in list(table):
            tname, used = table[k]
            if tname in names or used & names:
                del table[k]

    for s in stmts:
        if isinstance(s, gast.If):
            _cse_block(s.body, dict(table))
            _cse_block(s.orelse, dict(table))
            kill(_assigned(s))
        elif isinstance(s, (gast.While, gast.For)):
            kill(_assigned(s))
            _cse_block(s.body, dict(table))
            kill(_assigned(s))
        elif _is_assign(s):
            key = _cse_key(s)
            t = s.targets[0].id
            if key is not None and key in table:
                src = table[key][0]
                node = N.name(src)
                s.value = node
                s.sj_op = Op("copy", elts=[node])
                s.sj_note = "common subexpression"
                kill({t})
                continue
            kill({t})
            if key is None and s.sj_op.kind not in ("prim", "copy", "pack"):
                # `v = l.pop()`, a call that may change its arguments in place
                kill(set(N.names_in(s.value)))
            if key is not None:
                used = set(N.names_in(s.value))
                if t not in used:
                    table[key] = (t, used)
        else:
            # `l.append(v)` and other statements may change the lists and dicts
            # they name: `l[-1]` read before is not `l[-1]` after
            kill(_assigned(s) | set(N.names_in(s)))


# ---------------------------------------------------------------------------- DCE
def dce(fdef: Any) -> Any:
    """Remove pure assignments whose target is never read anywhere."""
    while True:
        reads: Dict[str, int] = {}
        for n in gast.walk(gast.Module(body=fdef.body, type_ignores=[])):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                reads[n.id] = reads.get(n.id, 0) + 1
        removed = [0]
        fdef.body = _filter(fdef.body, functools.partial(_live, reads=reads, removed=removed))
        if not removed[0]:
            return fdef


def _live(s: Any, reads: Dict[str, int], removed: list) -> bool:
    if _is_assign(s) and _is_pure(s) and reads.get(s.targets[0].id, 0) == 0:
        removed[0] += 1
        return False
    return True


def _filter(stmts: List[Any], keep) -> List[Any]:
    out = []
    for s in stmts:
        if isinstance(s, gast.If):
            s.body = _filter(s.body, keep) or [gast.Pass()]
            s.orelse = _filter(s.orelse, keep)
        elif isinstance(s, (gast.While, gast.For)):
            s.body = _filter(s.body, keep) or [gast.Pass()]
        elif not keep(s):
            continue
        out.append(s)
    return out


# ---------------------------------------------------------------------------- re-nesting
def inline_temporaries(fdef: Any, keep: set) -> Any:
    """Fold single-use temporaries back into the expression that reads them
    (``t = a * b; y = t + c`` -> ``y = a * b + c``), within one block.

    The last pass before rendering plain (unfused) code: the result is no longer
    ANF. It matters for speed as well as for reading: in ANF every temporary
    stays alive until the function returns, so each call maps fresh memory for
    all of them (page faults: 17x slower than the nested expression for a GELU
    on 2^18 float32), while a nested expression frees each temporary at once,
    as NumPy code written by hand does. Names in ``keep`` (the user's own
    variables) are never folded away.
    """
    reads = _read_counts(fdef.body)
    stores: Dict[str, int] = {}
    for n in gast.walk(gast.Module(body=fdef.body, type_ignores=[])):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
    params = {a.id for a in fdef.args.args}
    _inline_block(fdef.body, reads, stores, keep | params)
    return fdef


def _read_counts(body: List[Any]) -> Dict[str, int]:
    reads: Dict[str, int] = {}
    for n in gast.walk(gast.Module(body=body, type_ignores=[])):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
            reads[n.id] = reads.get(n.id, 0) + 1
    return reads


def _inline_block(stmts: List[Any], reads, stores, keep) -> None:
    for s in stmts:
        if isinstance(s, gast.If):
            _inline_block(s.body, reads, stores, keep)
            _inline_block(s.orelse, reads, stores, keep)
        elif isinstance(s, (gast.While, gast.For)):
            _inline_block(s.body, reads, stores, keep)
    i = 0
    while i < len(stmts):
        s = stmts[i]
        t = s.targets[0].id if _is_assign(s) else None
        if (
            t is None
            or t in keep
            or reads.get(t) != 1
            or stores.get(t) != 1
            or not _is_pure(s)
            or isinstance(s.value, gast.Constant)
        ):
            i += 1
            continue
        deps = set(N.names_in(s.value))
        j = i + 1
        target = None
        while j < len(stmts):
            u = stmts[j]
            if not isinstance(u, (gast.Assign, gast.Expr, gast.Return)):
                if t in N.names_in(u):
                    break  # read inside a nested block: leave it
                if _assigned(u) & deps:
                    break
                j += 1
                continue
            if t in N.names_in(u.value):
                target = u
                break
            if _assigned(u) & (deps | {t}):
                break
            j += 1
        if target is None:
            i += 1
            continue
        new_value = _Subst({t: s.value}).visit(N.clone(target.value))
        if t in N.names_in(new_value):  # only where an expression may stand
            i += 1
            continue
        target.value = new_value
        if getattr(s, "sj_note", None) and not getattr(target, "sj_note", None):
            target.sj_note = s.sj_note
        del stmts[i]
        # the statement that read it may itself be foldable now: stay at i - 1
        i = max(0, i - 1)


# ---------------------------------------------------------------------------- promotion
def promote(fdef: Any, namer: Any, boxed: Optional[Dict[str, Any]] = None) -> bool:
    """JAX's dtype promotion where the generated NumPy code would differ.

    Primitives written as Python operators (``x / 2``, ``a + b``: that is how
    both ``jnp.divide(x, 2)`` and ``x / 2`` are emitted) run NumPy's operator,
    whose promotion is NumPy's: ``int32 / 2``, ``int32 + float32``,
    ``int32 * 1.5`` and ``bool * 2.0`` are float64 there, float32 in JAX (and in
    the eager primitives). For each such statement whose operands' abstract
    values are known (run :func:`infer_avals` first), the result dtype of the
    primitive's own implementation (JAX's rule: the eager result) is compared
    with what the statement computes as written; only where they differ are
    operands converted first (``x_f32 = ad.astype(x, 'float32')``), as JAX
    converts them, so matching code (all-float32 chains) is left as plain
    operators and ufuncs. Operands of unknown abstract value are left alone.

    ``boxed`` maps parameter names that are weakly typed (a Python float
    argument) but held as a NumPy scalar at run time to that dtype: NumPy
    treats those as strongly typed (``float16_array * np.float32(s)`` is
    float32; JAX says float16), so they are converted too where it matters.

    Returns whether anything changed (then re-run :func:`infer_avals` and this
    pass: a converted statement changes the abstract values that follow it; a
    round only decides statements whose inputs it has not changed).
    """
    boxed = dict(boxed or {})
    _boxed_closure(fdef.body, boxed)
    state = {"dirty": set(), "changed": False}
    fdef.body = _promote_block(fdef.body, namer, boxed, state)
    return state["changed"]


def _boxed_closure(body: List[Any], boxed: Dict[str, Any]) -> None:
    """Names that may hold a boxed weak scalar: assigned (copied, or computed by
    an elementwise primitive into a weak value) from a boxed one."""
    changed = True
    while changed:
        changed = False
        for s in N.walk_stmts(body):
            if not _is_assign(s) or s.targets[0].id in boxed:
                continue
            if s.sj_op.kind not in ("copy", "prim"):
                continue
            if s.sj_op.kind == "prim" and s.sj_op.prim.kind != "elementwise":
                continue
            src = [n for n in N.names_in(s.value) if n in boxed]
            if not src:
                continue
            res = getattr(s, "sj_aval", None)
            if s.sj_op.kind == "copy" or (isinstance(res, Aval) and res.weak):
                boxed[s.targets[0].id] = boxed[src[0]]
                changed = True


def _promote_block(stmts: List[Any], namer, boxed, state) -> List[Any]:
    out: List[Any] = []
    for s in stmts:
        if isinstance(s, gast.If):
            s.body = _promote_block(s.body, namer, boxed, state) or [gast.Pass()]
            s.orelse = _promote_block(s.orelse, namer, boxed, state)
            out.append(s)
            continue
        if isinstance(s, (gast.While, gast.For)):
            before = state["changed"]
            state["changed"] = False
            s.body = _promote_block(s.body, namer, boxed, state) or [gast.Pass()]
            if state["changed"]:
                # a loop-carried value may have changed: everything assigned in
                # the loop waits for the next round
                state["dirty"] |= _assigned(s)
            state["changed"] = state["changed"] or before
            out.append(s)
            continue
        if not _is_assign(s):
            state["dirty"] |= _assigned(s)
            out.append(s)
            continue
        used = set(N.names_in(s.value))
        target = s.targets[0].id
        if used & state["dirty"]:
            state["dirty"].add(target)
            out.append(s)
            continue
        new = _promote_one(s, namer, boxed)
        if new is None:
            out.append(s)
            continue
        out.extend(new)
        state["dirty"].add(target)
        state["changed"] = True
    return out


def _no_global(name: str) -> Any:
    raise KeyError(name)  # the operands' avals are all in the environment


def _computed_dtypes(s: Any, avals: Dict[str, Any], boxed: Dict[str, Any]) -> Optional[tuple]:
    """(JAX's result dtype, the set of dtypes the statement computes as written)
    on one-element stand-ins, or None when unknown or not an array result."""
    op = s.sj_op
    interp = _Interp(_no_global, set())
    env = dict(avals)
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            args, kwargs = interp._operands(op, env, Aval.proxy)
            ref = op.prim.impl(*args, **kwargs)
            if not isinstance(ref, (np.ndarray, np.generic)):
                return None  # weak (Python scalar) result: nothing to match
            written = {np.asarray(interp._eval_form(s, env)).dtype}
            written |= _pow_fast_paths(s, interp, env)
            names = [n for n in avals if n in boxed and isinstance(avals[n], Aval)]
            if names:  # as held at run time: NumPy scalars
                env_rt = dict(env)
                for n in names:
                    a = avals[n]
                    env_rt[n] = Aval((), boxed[n]) if a.weak else a
                written.add(np.asarray(interp._eval_form(s, env_rt)).dtype)
    except Exception:  # noqa: BLE001 - unknown: leave the statement alone
        return None
    return np.asarray(ref).dtype, written


def _pow_fast_paths(s: Any, interp: "_Interp", env: Dict[str, Any]) -> set:
    """``x ** p`` on an array takes value-dependent shortcuts in NumPy (``p``
    of 2 runs ``square``, 0.5 ``sqrt`` ...), with their own result dtypes: the
    dtypes for the exponents that trigger one, when ``p`` is a scalar known
    only by its type."""
    e = s.value
    if not (isinstance(e, gast.BinOp) and isinstance(e.op, gast.Pow)):
        return set()
    p = env.get(e.right.id) if isinstance(e.right, gast.Name) else None
    if not isinstance(p, Aval) or not p.weak:
        return set()
    x = interp._stand_in(e.left, env, Aval.proxy)
    out = set()
    for v in (2, 0.5, -1, 1, 0):
        try:
            out.add(np.asarray(x ** p.ptype(v)).dtype)
        except (TypeError, ValueError, ArithmeticError):
            pass
    return out


def _int_power_stmt(s: Any, avals: Dict[str, Any]) -> bool:
    """Whether ``x ** y`` computes integers with an exponent that is an array
    (not a constant, so possibly negative)."""
    res = getattr(s, "sj_aval", None)
    y = s.sj_op.bound.get("y")
    return (
        isinstance(res, Aval)
        and res.dtype.kind in "iu"
        and isinstance(y, gast.Name)
        and isinstance(avals.get(y.id), Aval)
        and avals[y.id].dtype.kind in "iub"
    )


def _int_result(s: Any) -> bool:
    """Whether the statement's result is known to be an integer array."""
    res = getattr(s, "sj_aval", None)
    return isinstance(res, Aval) and res.dtype.kind in "iu"


def _promote_one(s: Any, namer, boxed: Dict[str, Any]) -> Optional[List[Any]]:
    op = s.sj_op
    if op.kind != "prim":
        return None
    operator_form = isinstance(s.value, (gast.BinOp, gast.UnaryOp))
    avals = dict(getattr(s, "sj_avals_in", None) or {})
    for n, a in avals.items():  # a static count (x.shape[0]) is a weak scalar
        if isinstance(a, _Static) and type(a.value) in _SCALAR_TYPES:
            avals[n] = Aval.of(a.value)
    operands = []
    for v in op.bound.values():
        for x in v if isinstance(v, list) else [v]:
            if isinstance(x, gast.Name) and x.id not in operands:
                operands.append(x.id)
    if not operands:
        return None
    if isinstance(s.value, gast.BinOp) and op.prim.kind == "elementwise":
        for v in (s.value.left, s.value.right):
            if not (isinstance(v, gast.Constant) and type(v.value) is int):
                continue
            for n in operands:
                a = avals.get(n)
                if isinstance(a, Aval) and not a.weak and a.dtype.kind in "iu":
                    info = np.iinfo(a.dtype)
                    if not info.min <= v.value <= info.max:
                        # a weak int beyond the array's integer type: NumPy's
                        # operator raises, the primitive converts it as JAX does
                        s.value = N.call(
                            op.prim.public, [N.clone(s.value.left), N.clone(s.value.right)]
                        )
                        return [s]
    if not all(isinstance(avals.get(n), Aval) for n in operands):
        if (
            isinstance(s.value, gast.BinOp)
            and op.prim.kind == "elementwise"
            and all(isinstance(avals.get(n), Aval) or avals.get(n) is None for n in operands)
            and any(isinstance(avals.get(n), Aval) and not avals[n].weak for n in operands)
        ):
            # an array operator with an operand of unknown dtype (the result of
            # a call jit cannot see into): call the primitive, whose
            # implementation applies JAX's promotion at run time
            s.value = N.call(op.prim.public, [N.clone(s.value.left), N.clone(s.value.right)])
            return [s]
        return None
    if all(avals[n].weak and avals[n].ptype is not bool for n in operands):
        return None  # weakly typed in, weakly typed out: nothing to match yet
    if operator_form and op.prim.public == "jnp.power" and _int_power_stmt(s, avals):
        # NumPy's ``**`` refuses integers to negative integer powers; JAX's
        # power gives 0 (1 and -1 for bases 1 and -1): call the primitive
        s.value = N.call("jnp.power", [N.clone(op.bound["x"]), N.clone(op.bound["y"])])
        return [s]
    if operator_form and op.prim.public == "jnp.floor_divide" and _int_result(s):
        # NumPy's integer ``//`` by zero gives 0; JAX's floor_divide -1/-2 (or
        # the unsigned maximum): call the primitive
        s.value = N.call("jnp.floor_divide", [N.clone(op.bound["x"]), N.clone(op.bound["y"])])
        return [s]
    if not operator_form and not any(n in boxed and avals[n].weak for n in operands):
        return None  # a call to the primitive itself: JAX's promotion already
    dts = _computed_dtypes(s, avals, boxed)
    if dts is None:
        return None
    want, written = dts
    if written == {want}:
        return None
    # convert the operands (strongly typed ones of another dtype, and boxed
    # weak scalars) to the result dtype first, as JAX does
    casts: List[Any] = []
    table: Dict[str, Any] = {}
    new_avals = dict(avals)
    for n in operands:
        a = avals[n]
        is_boxed = n in boxed and a.weak
        strong = not a.weak or a.ptype is bool  # JAX: a Python bool is a bool
        if not is_boxed and (not strong or (not a.weak and a.dtype == want)):
            continue
        c = namer.fresh(f"{n}_{want.name}")
        value = N.call("ad.astype", [N.name(n), N.const(want.name)])
        cast = _new_assign(
            c,
            value,
            Op(
                "prim", prim=_prim("ad.astype"), bound={"x": N.name(n), "dtype": N.const(want.name)}
            ),
            s,
        )
        cast.sj_aval = Aval(a.shape, want)
        cast.sj_avals_in = {n: a}
        casts.append(cast)
        table[n] = N.name(c)
        new_avals.pop(n, None)
        new_avals[c] = cast.sj_aval
    if casts:
        _subst_stmt(s, table)
        s.sj_avals_in = {k: new_avals.get(k) for k in N.names_in(s.value)}
        check = _computed_dtypes(s, s.sj_avals_in, {})
        if check is not None and check[1] == {want}:
            return casts + [s]
    # otherwise convert the result
    t = s.targets[0].id
    raw = namer.fresh(f"{t}_raw")
    s.targets[0] = N.name(raw, store=True)
    value = N.call("ad.astype", [N.name(raw), N.const(want.name)])
    fix = _new_assign(
        t,
        value,
        Op("prim", prim=_prim("ad.astype"), bound={"x": N.name(raw), "dtype": N.const(want.name)}),
        s,
    )
    return casts + [s, fix]


# ---------------------------------------------------------------------------- driver
def optimize(
    fdef: Any,
    params: Dict[str, Any],
    resolve: Optional[Callable[[str], Any]] = None,
    namer: Any = None,
    boxed: Dict[str, Any] = None,
) -> Any:
    """The jit pipeline's passes, in order; avals are left annotated for fusion.
    ``boxed`` names the parameters that are weakly typed in JAX's sense but held
    as NumPy scalars at run time (Python float arguments, see :func:`promote`)."""
    propagate(fdef)
    fold_constants(fdef)
    infer_avals(fdef, params, resolve)
    simplify(fdef, namer)
    cse(fdef)
    propagate(fdef)
    dce(fdef)
    infer_avals(fdef, params, resolve)
    if namer is not None:
        for _ in range(64):
            if not promote(fdef, namer, boxed):
                break
            infer_avals(fdef, params, resolve)
    drop_carry_checks(fdef)
    return fdef
