"""One jitted loop translated into the source of a Numba kernel (scalarized).

Every value the loop reads or writes has an abstract value from jit's inference:
a scalar, a small array of fixed shape (at most :data:`MAX_ELEMENTS` elements),
or a tuple of those. The kernel works on scalars only: an array ``x`` of shape
``(2, 3)`` is the six scalars ``x__0_0 ... x__1_2`` and a tuple ``c`` is its
items ``c__t0, c__t1, ...``, so an elementwise operation is one scalar statement
per element (broadcasting with scalars and size-1 dimensions by NumPy's rules),
a constant index picks elements, and ``sum``/``max``/``min``/``prod`` over all
elements is a chain in C order. No array is allocated inside the loop.

JAX's dtype semantics are kept exactly: every operand is converted to the dtype
of its statement's result as jit inferred it (a weak Python scalar is the
default float or int dtype), and every result is converted to its own dtype, so
float32 stays float32 and int32 wraps as in XLA. Anything else raises
:class:`Refuse` with the reason, and the loop keeps NumPy.

:func:`plan` returns the kernel's source (``kernel``, compiled with Numba, and
``box``, plain Python that gives strong scalar results their NumPy dtype), its
inputs with their types, and its outputs.
"""

from __future__ import annotations

import itertools
from typing import Any, Dict, List, Set, Tuple

import gast
import numpy as np

from ...frontend.normalize.common import _BINOPS as _PY_OPS

__all__ = ["Refuse", "plan", "MAX_ELEMENTS"]

#: the largest array a kernel scalarizes (elements); a larger one keeps NumPy
MAX_ELEMENTS = 64
#: the most kernel lines one loop may become
MAX_LINES = 6000

#: primitives (as generated code names them) -> the NumPy function Numba compiles
_CALLS = {
    f"jnp.{n}": f"np.{n}"
    for n in (
        "sin cos tan arcsin arccos arctan sinh cosh tanh exp expm1 log log1p sqrt"
        " abs floor ceil maximum minimum arctan2 hypot"
    ).split()
}
_CALLS["jnp.absolute"] = "np.abs"
_CALLS["jnp.square"] = "np.square"
_CALLS["jnp.negative"] = "np.negative"
#: calls that are also defined on integers
_INT_CALLS = {"jnp.abs", "jnp.absolute", "jnp.maximum", "jnp.minimum", "jnp.square", "jnp.negative"}
#: reductions over all elements: the operator that chains two elements
_REDUCE = {
    "jnp.sum": "{} + {}",
    "jnp.prod": "{} * {}",
    "jnp.max": "np.maximum({}, {})",
    "jnp.min": "np.minimum({}, {})",
}
#: operators on numbers, on booleans (Python's spelling, from the normalizer's table)
_BINOPS = {op: _PY_OPS[op] for op in (gast.Add, gast.Sub, gast.Mult, gast.Div, gast.Pow)}
_BOOLOPS = {op: _PY_OPS[op] for op in (gast.BitAnd, gast.BitOr, gast.BitXor)}
_CMPOPS = {
    gast.Lt: "<",
    gast.LtE: "<=",
    gast.Gt: ">",
    gast.GtE: ">=",
    gast.Eq: "==",
    gast.NotEq: "!=",
}
_DTYPES = {"float32", "float64", "int32", "int64", "bool"}


class Refuse(Exception):
    """This loop is no region (the reason, for the comment in generated code)."""


def _conv(dt: str) -> str:
    return "np.bool_" if dt == "bool" else f"np.{dt}"


# ---------------------------------------------------------------------------- typing
def tree(aval: Any, x64: bool) -> Any:
    """``aval`` as a type tree: ``("t", [children])`` for a tuple, ``("a", dtype,
    shape, weak)`` for a scalar or array (a weak Python scalar: the default
    float/int dtype, as in JAX)."""
    if isinstance(aval, (tuple, list)):
        return ("t", tuple(tree(a, x64) for a in aval))
    shape = getattr(aval, "shape", None)
    if shape is None or not hasattr(aval, "ptype"):
        raise Refuse("a value that is no array, scalar or tuple")
    shape = tuple(shape)
    size = int(np.prod(shape)) if shape else 1
    if size > MAX_ELEMENTS or 0 in shape:
        raise Refuse(f"an array of {size} elements")
    dt = np.dtype(aval.dtype)
    if aval.ptype is not None:
        if aval.ptype is bool:
            dt = np.dtype(bool)
        elif aval.ptype is int:
            dt = np.dtype(np.int64 if x64 else np.int32)
        else:
            dt = np.dtype(np.float64 if x64 else np.float32)
    if dt.name not in _DTYPES:
        raise Refuse(f"dtype {dt.name}")
    return ("a", dt.name, shape, aval.ptype is not None)


def _as_subscript(node: Any) -> Any:
    """``ad.getitem(x, i)`` (an item whose index jit could not prove in bounds)
    as the subscript ``x[i]``: the kernel takes constant in-bounds indices only
    and refuses the rest, so the NumPy loop keeps JAX's clamping for them."""
    if (
        isinstance(node, gast.Call)
        and len(node.args) == 2
        and not node.keywords
        and isinstance(node.func, gast.Attribute)
        and node.func.attr == "getitem"
        and isinstance(node.func.value, gast.Name)
        and node.func.value.id == "ad"
    ):
        return gast.Subscript(value=node.args[0], slice=node.args[1], ctx=gast.Load())
    return node


def _el(leaf: str, idx: Tuple[int, ...]) -> str:
    return leaf if not idx else f"{leaf}__{'_'.join(map(str, idx))}"


def _leaves(prefix: str, t: Any, access: str) -> List[Tuple[str, Any, str]]:
    """``(leaf name, leaf tree, Python access expression)`` under ``prefix``."""
    if t[0] == "t":
        out = []
        for k, c in enumerate(t[1]):
            out.extend(_leaves(f"{prefix}__t{k}", c, f"{access}[{k}]"))
        return out
    return [(prefix, t, access)]


class _Kernel:
    """Translates one loop into kernel source."""

    def __init__(self, x64: bool) -> None:
        self.x64 = x64
        self.trees: Dict[str, Any] = {}
        self.counters: Set[str] = set()
        self.lines: List[str] = []

    def note(self, name: str, aval: Any) -> None:
        t = tree(aval, self.x64)
        old = self.trees.setdefault(name, t)
        if name in self.counters and t[0] == "a" and t[1].startswith("int") and t[2] == ():
            return  # a range counter: int64 in the kernel, converted where it is used
        if not _same(old, t):
            raise Refuse(f"{name} is {old[1]} and {t[1]}")
        for leaf, lt, _ in _leaves(name, t, name):
            self.trees.setdefault(leaf, lt)

    def emit(self, line: str) -> None:
        self.lines.append(line)
        if len(self.lines) > MAX_LINES:
            raise Refuse("too many elements for one kernel")

    # ------------------------------------------------------------ references
    def ref(self, node: Any) -> Tuple[Any, ...]:
        """``("const", v)``, ``("arr", leaf, fixed index)`` or ``("tup", prefix)``."""
        node = _as_subscript(node)
        if isinstance(node, gast.Constant):
            v = node.value
            if not isinstance(v, (bool, int, float)):
                raise Refuse(f"constant {v!r}")
            return ("const", v)
        if isinstance(node, gast.Name):
            t = self.trees.get(node.id)
            if t is None:
                raise Refuse(f"{node.id} has no known dtype")
            return ("tup", node.id) if t[0] == "t" else ("arr", node.id, ())
        if isinstance(node, gast.Subscript):
            base = self.ref(node.value)
            idx = node.slice
            items = idx.elts if isinstance(idx, gast.Tuple) else [idx]
            ints = []
            for it in items:
                if isinstance(it, gast.UnaryOp) and isinstance(it.op, gast.USub):
                    if isinstance(it.operand, gast.Constant) and type(it.operand.value) is int:
                        ints.append(-it.operand.value)
                        continue
                if not (isinstance(it, gast.Constant) and type(it.value) is int):
                    raise Refuse("an index that is no constant integer")
                ints.append(it.value)
            if base[0] == "tup":
                if len(ints) != 1:
                    raise Refuse("a tuple index")
                kids = self.trees[base[1]][1]
                k = ints[0] + len(kids) if ints[0] < 0 else ints[0]
                if not 0 <= k < len(kids):
                    raise Refuse("a tuple index out of range")
                p = f"{base[1]}__t{k}"
                return ("tup", p) if kids[k][0] == "t" else ("arr", p, ())
            if base[0] == "arr":
                shape = self.shape(base)
                if len(ints) > len(shape):
                    raise Refuse("too many indices")
                fixed = list(base[2])
                for k, d in zip(ints, shape):
                    k = k + d if k < 0 else k
                    if not 0 <= k < d:
                        raise Refuse("an index out of bounds")
                    fixed.append(k)
                return ("arr", base[1], tuple(fixed))
        raise Refuse(f"operand {gast.unparse(node).strip()[:40]}")

    def shape(self, r: Tuple[Any, ...]) -> Tuple[int, ...]:
        if r[0] == "const":
            return ()
        if r[0] == "tup":
            raise Refuse("a tuple as an operand")
        return self.trees[r[1]][2][len(r[2]) :]

    def dtype_of(self, r: Tuple[Any, ...]) -> str:
        return self.trees[r[1]][1]

    def atom(self, node: Any, dt: str, idx: Tuple[int, ...]) -> str:
        """Element ``idx`` (of the statement's result shape; broadcast) of an
        operand, converted to ``dt``."""
        r = self.ref(node)
        if r[0] == "const":
            v = r[1]
            if isinstance(v, bool):
                return f"np.bool_({v})" if dt == "bool" else f"np.{dt}({int(v)})"
            return f"np.{dt}({v!r})"
        shape = self.shape(r)
        if len(shape) > len(idx):
            raise Refuse("an operand larger than its result")
        tail = idx[len(idx) - len(shape) :]
        full = r[2] + tuple(0 if d == 1 else i for i, d in zip(tail, shape))
        name = _el(r[1], full)
        return name if self.dtype_of(r) == dt else f"{_conv(dt)}({name})"

    def operand_dtype(self, nodes: List[Any]) -> str:
        """JAX's promoted dtype of comparison operands (constants are weak)."""
        strong = [self.dtype_of(r) for r in map(self.ref, nodes) if r[0] == "arr"]
        if not strong:
            raise Refuse("a comparison of constants")
        return np.result_type(*[np.dtype(d) for d in strong]).name

    # ------------------------------------------------------------ expressions
    def expr(self, value: Any, dt: str, idx: Tuple[int, ...]) -> str:
        """Element ``idx`` of ``value`` (an ANF right-hand side) computed in ``dt``."""
        if isinstance(_as_subscript(value), (gast.Name, gast.Constant, gast.Subscript)):
            return self.atom(value, dt, idx)
        if isinstance(value, gast.BinOp) and type(value.op) in _BINOPS:
            if dt == "bool":
                raise Refuse("boolean arithmetic")
            if dt.startswith("int") and isinstance(value.op, (gast.Div, gast.Pow)):
                raise Refuse("integer / or **")
            op = _BINOPS[type(value.op)]
            return f"{self.atom(value.left, dt, idx)} {op} {self.atom(value.right, dt, idx)}"
        if isinstance(value, gast.BinOp) and type(value.op) in _BOOLOPS:
            if dt != "bool":
                raise Refuse("bitwise operators on integers")
            op = _BOOLOPS[type(value.op)]
            return f"{self.atom(value.left, dt, idx)} {op} {self.atom(value.right, dt, idx)}"
        if isinstance(value, gast.UnaryOp):
            if isinstance(value.op, gast.USub) and dt != "bool":
                return f"-{self.atom(value.operand, dt, idx)}"
            if isinstance(value.op, gast.Not):
                return f"not {self.atom(value.operand, 'bool', idx)}"
            raise Refuse("unary operator")
        if isinstance(value, gast.Compare) and len(value.ops) == 1:
            if type(value.ops[0]) not in _CMPOPS:
                raise Refuse("comparison")
            a, b = value.left, value.comparators[0]
            pd = self.operand_dtype([a, b])
            op = _CMPOPS[type(value.ops[0])]
            return f"{self.atom(a, pd, idx)} {op} {self.atom(b, pd, idx)}"
        if isinstance(value, gast.Call):
            fname = gast.unparse(value.func).strip()
            if fname == "jnp.stack":
                return self.stack(value, dt, idx)
        if isinstance(value, gast.Call) and not value.keywords:
            fname = gast.unparse(value.func).strip()
            if fname == "jnp.where" and len(value.args) == 3:
                c, a, b = value.args
                return (
                    f"({self.atom(a, dt, idx)} if {self.atom(c, 'bool', idx)}"
                    f" else {self.atom(b, dt, idx)})"
                )
            if fname in _REDUCE and len(value.args) == 1 and idx == ():
                return self.reduce(fname, value.args[0], dt)
            target = _CALLS.get(fname)
            if target is None:
                raise Refuse(f"call of {fname}")
            if dt not in ("float32", "float64") and fname not in _INT_CALLS:
                raise Refuse(f"{fname} of {dt}")
            return f"{target}({', '.join(self.atom(a, dt, idx) for a in value.args)})"
        raise Refuse(f"expression {gast.unparse(value).strip()[:40]}")

    def stack(self, call: Any, dt: str, idx: Tuple[int, ...]) -> str:
        """Element ``idx`` of ``jnp.stack(t, axis=k)`` of a tuple or list ``t``
        of equally shaped values: element ``idx`` without ``idx[k]`` of item
        ``idx[k]``."""
        axis = 0
        for kw in call.keywords:
            v = kw.value
            if isinstance(v, gast.UnaryOp) and isinstance(v.op, gast.USub):
                v = gast.Constant(value=-getattr(v.operand, "value", None), kind=None)
            if kw.arg != "axis" or not (isinstance(v, gast.Constant) and type(v.value) is int):
                raise Refuse("jnp.stack with options")
            axis = v.value
        if len(call.args) != 1:
            raise Refuse("jnp.stack of several operands")
        r = self.ref(call.args[0])
        if r[0] != "tup":
            raise Refuse("jnp.stack of no tuple")
        kids = self.trees[r[1]][1]
        ax = axis + len(idx) if axis < 0 else axis
        if not 0 <= ax < len(idx) or idx[ax] >= len(kids):
            raise Refuse("jnp.stack's shape")
        k = idx[ax]
        rest = idx[:ax] + idx[ax + 1 :]
        kid = kids[k]
        if kid[0] != "a" or len(kid[2]) != len(rest):
            raise Refuse("jnp.stack of items of other shapes")
        name = _el(f"{r[1]}__t{k}", rest)
        return name if kid[1] == dt else f"{_conv(dt)}({name})"

    def reduce(self, fname: str, arg: Any, dt: str) -> str:
        """A reduction over all elements, in C order, each step rounded to ``dt``."""
        if dt not in ("float32", "float64") and fname in ("jnp.sum", "jnp.prod"):
            raise Refuse(f"{fname} of {dt}")  # (JAX's integer sums: another dtype rule)
        r = self.ref(arg)
        if r[0] != "arr":
            raise Refuse(f"{fname} of a constant")
        shape = self.shape(r)
        src = self.dtype_of(r)
        acc = ""
        for i in itertools.product(*map(range, shape)):
            e = _el(r[1], r[2] + i)
            e = e if src == dt else f"{_conv(dt)}({e})"
            acc = e if not acc else f"{_conv(dt)}({_REDUCE[fname].format(acc, e)})"
        return acc

    def test(self, node: Any) -> str:
        if isinstance(node, gast.Name):
            if self.trees.get(node.id) != ("a", "bool", (), False) and self.trees.get(node.id) != (
                "a",
                "bool",
                (),
                True,
            ):
                raise Refuse("a test that is no bool scalar")
            return node.id
        if isinstance(node, gast.Compare):
            return self.expr(node, "bool", ())
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
            return f"not ({self.test(node.operand)})"
        if isinstance(node, gast.BoolOp):
            op = " and " if isinstance(node.op, gast.And) else " or "
            return op.join(f"({self.test(v)})" for v in node.values)
        raise Refuse(f"test {gast.unparse(node).strip()[:40]}")

    def range_arg(self, node: Any) -> str:
        if isinstance(node, gast.Constant) and type(node.value) is int:
            return repr(node.value)
        t = self.trees.get(getattr(node, "id", None))
        if t is not None and t[0] == "a" and t[1].startswith("int") and t[2] == ():
            return node.id
        raise Refuse("range bounds")

    # ------------------------------------------------------------ statements
    def assign(self, pad: str, target: str, value: Any) -> None:
        """``target = value``: one scalar statement per element."""
        t = self.trees[target]
        if t[0] == "t":
            kids = t[1]
            if isinstance(value, (gast.Tuple, gast.List)):
                if len(value.elts) != len(kids):
                    raise Refuse("a tuple of another length")
                for k, e in enumerate(value.elts):
                    self.assign(pad, f"{target}__t{k}", e)
                return
            r = self.ref(value)
            if r[0] != "tup" or self.trees[r[1]] != t:
                raise Refuse("a tuple of another type")
            for (leaf, lt, _), (src, _, _) in zip(_leaves(target, t, ""), _leaves(r[1], t, "")):
                for i in itertools.product(*map(range, lt[2])):
                    self.emit(f"{pad}{_el(leaf, i)} = {_el(src, i)}")
            return
        _, dt, shape, _ = t
        for i in itertools.product(*map(range, shape)):
            self.emit(f"{pad}{_el(target, i)} = {_conv(dt)}({self.expr(value, dt, i)})")

    def block(self, stmts: List[Any], indent: int) -> None:
        pad = "    " * indent
        if not stmts:
            self.emit(pad + "pass")
        for s in stmts:
            if isinstance(s, gast.Assign):
                if len(s.targets) != 1 or not isinstance(s.targets[0], gast.Name):
                    raise Refuse("assignment target")
                self.assign(pad, s.targets[0].id, s.value)
            elif isinstance(s, gast.If):
                self.emit(f"{pad}if {self.test(s.test)}:")
                self.block(s.body, indent + 1)
                if s.orelse:
                    self.emit(f"{pad}else:")
                    self.block(s.orelse, indent + 1)
            elif isinstance(s, gast.While) and not s.orelse:
                self.emit(f"{pad}while {self.test(s.test)}:")
                self.block(s.body, indent + 1)
            elif isinstance(s, gast.For) and not s.orelse:
                self.emit(f"{pad}for {self.for_head(s)}:")
                self.block(s.body, indent + 1)
            elif isinstance(s, gast.Pass):
                self.emit(pad + "pass")
            else:
                raise Refuse(f"statement {type(s).__name__}")

    def for_head(self, s: Any) -> str:
        it = s.iter
        if not (
            isinstance(s.target, gast.Name)
            and isinstance(it, gast.Call)
            and gast.unparse(it.func).strip() == "range"
            and not it.keywords
            and 1 <= len(it.args) <= 3
        ):
            raise Refuse("a for loop over something else than range")
        return f"{s.target.id} in range({', '.join(self.range_arg(a) for a in it.args)})"


def _collect(loop: Any, kernel: _Kernel) -> None:
    """The types of every name the loop reads or writes, from jit's avals."""
    for n in gast.walk(loop):
        if isinstance(n, gast.For):
            if isinstance(n.target, gast.Name):
                kernel.trees[n.target.id] = ("a", "int64", (), False)
                kernel.counters.add(n.target.id)
        avals_in = getattr(n, "sj_avals_in", None)
        if avals_in:
            for name, av in avals_in.items():
                if name in ("jnp", "ad"):  # namespaces of the calls the kernel knows
                    continue
                if av is None:
                    raise Refuse(f"{name} has no abstract value")
                kernel.note(name, av)
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
            av = getattr(n, "sj_aval", None)
            if av is None:
                raise Refuse(f"{n.targets[0].id} has no abstract value")
            kernel.note(n.targets[0].id, av)


def _names(stmts: List[Any], ctx: type) -> Set[str]:
    out = set()
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, ctx):
                out.add(n.id)
    return out


def _same(a: Any, b: Any) -> bool:
    """The same type tree (weakness aside: a weak and a strong int32 are both int32)."""
    if a[0] != b[0]:
        return False
    if a[0] == "t":
        return len(a[1]) == len(b[1]) and all(map(_same, a[1], b[1]))
    return a[1:3] == b[1:3]


def _numba_type(t: Any) -> Any:
    """The argument type Numba sees for a value of type tree ``t`` (a weak
    Python scalar arrives as a Python int/float/bool)."""
    if t[0] == "t":
        return ("tuple", [_numba_type(c) for c in t[1]])
    _, dt, shape, weak = t
    if shape:
        return ("array", dt, len(shape))
    if weak:
        return {"bool": "bool", "int32": "int64", "int64": "int64"}.get(dt, "float64")
    return dt


def _box(outputs: List[str], trees: Dict[str, Any]) -> List[str]:
    """``box(r)``: the kernel's results with strong scalars as NumPy scalars of
    their dtype (Numba returns Python floats/ints); [] when nothing needs it."""
    exprs, need = [], False
    for k, o in enumerate(outputs):

        def walk(t: Any, acc: str) -> str:
            nonlocal need
            if t[0] == "t":
                items = [walk(c, f"{acc}[{j}]") for j, c in enumerate(t[1])]
                return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
            if not t[2] and not t[3]:
                need = True
                return f"{_conv(t[1])}({acc})"
            return acc

        exprs.append(walk(trees[o], f"r[{k}]"))
    if not need:
        return []
    return ["", "", "def box(r):", f"    return ({', '.join(exprs)},)"]


def plan(fdef: Any, loop: Any, outside: List[Any], x64: bool) -> Tuple[str, list, list]:
    """``(kernel source, [(input, numba type spec)], outputs)`` of ``loop``;
    raises :class:`Refuse`."""
    k = _Kernel(x64)
    _collect(loop, k)
    loaded = _names([loop], gast.Load)
    stored = _names([loop], gast.Store)
    defined = {a.id for a in fdef.args.args} | _names(outside, gast.Store)
    inputs = sorted(n for n in loaded | stored if n in defined)
    read_outside = _names(outside, gast.Load)
    outputs = sorted(n for n in stored if n in read_outside)
    if any(o not in inputs for o in outputs):
        raise Refuse("a value first set inside the loop is read after it")
    for n in inputs + outputs:
        if n not in k.trees:
            raise Refuse(f"{n} has no known dtype")
    # every binding of an input outside the loop must have its type
    # (a forward declaration `x = None` of generated code does not)
    for st in outside:
        for a in gast.walk(st):
            if (
                isinstance(a, gast.Assign)
                and len(a.targets) == 1
                and isinstance(a.targets[0], gast.Name)
                and a.targets[0].id in k.trees
            ):
                name = a.targets[0].id
                if isinstance(a.value, gast.Constant) and a.value.value is None:
                    raise Refuse(f"{name} may be None")
                if not _same(tree(getattr(a, "sj_aval", None), x64), k.trees[name]):
                    raise Refuse(f"{name} changes type")
            elif isinstance(a, (gast.For, gast.AugAssign)) or (
                isinstance(a, gast.Assign) and not all(isinstance(t, gast.Name) for t in a.targets)
            ):
                bound = _names([a], gast.Store) if not isinstance(a, gast.For) else set()
                if bound & set(inputs):
                    raise Refuse("an input bound by unpacking")
    k.block([loop], 1)
    head = []
    for n in inputs:
        for leaf, (_, dt, shape, _), acc in _leaves(n, k.trees[n], n):
            for i in itertools.product(*map(range, shape)):
                at = f"{acc}[{', '.join(map(str, i))}]" if i else acc
                head.append(f"    {_el(leaf, i)} = {_conv(dt)}({at})")
    tail, rets = [], []
    for n in outputs:

        def build(prefix: str, t: Any) -> str:
            if t[0] == "t":
                items = [build(f"{prefix}__t{j}", c) for j, c in enumerate(t[1])]
                return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
            _, dt, shape, _ = t
            if not shape:
                return prefix
            tail.append(f"    {prefix}__o = np.empty({shape!r}, {_conv(dt)})")
            for i in itertools.product(*map(range, shape)):
                tail.append(f"    {prefix}__o[{', '.join(map(str, i))}] = {_el(prefix, i)}")
            return f"{prefix}__o"

        rets.append(build(n, k.trees[n]))
    ret = ", ".join(rets) + ("," if len(rets) == 1 else "")
    src = "\n".join(
        ["import numpy as np", "", "", f"def kernel({', '.join(inputs)}):"]
        + head
        + k.lines
        + tail
        + [f"    return ({ret})"]
        + _box(outputs, k.trees)
        + [""]
    )
    return src, [(n, _numba_type(k.trees[n])) for n in inputs], outputs
