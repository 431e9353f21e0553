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

:class:`_Kernel` translates the loop's statements; :func:`.planner.plan` types
the loop's names, picks the kernel's inputs and outputs and assembles its source
around them.
"""

from __future__ import annotations

import itertools
from typing import Any, Dict, List, Set, Tuple

import gast
import numpy as np

from ...frontend.normalize.common import _BINOPS as _PY_OPS
from .tapes import is_pop, is_push
from .ufuncs import LOOPED

__all__ = ["Refuse", "MAX_ELEMENTS"]

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
def tree(aval: Any, x64: bool, rows: bool = False) -> Any:
    """``aval`` as a type tree: ``("t", [children])`` for a tuple, ``("a", dtype,
    shape, weak)`` for a scalar or array (a weak Python scalar: the default
    float/int dtype, as in JAX). ``rows``: an array the loop reads only by row
    (``xs[k]``, passed whole and indexed in the kernel): its row's size counts."""
    if isinstance(aval, (tuple, list)):
        if rows:
            raise Refuse("rows of a tuple")
        return ("t", tuple(tree(a, x64) for a in aval))
    shape = getattr(aval, "shape", None)
    if shape is None or not hasattr(aval, "ptype"):
        raise Refuse("a value that is no array, scalar or tuple")
    shape = tuple(shape)
    if rows and not shape:
        raise Refuse("rows of a scalar")
    counted = shape[1:] if rows else shape
    size = int(np.prod(counted)) if counted else 1
    if size > MAX_ELEMENTS or 0 in shape:
        raise Refuse(f"an array of {size} elements")
    dt = np.dtype(aval.dtype)
    if aval.ptype is not None:
        if aval.ptype is bool:
            dt = np.dtype(bool)
        elif aval.ptype is int:
            dt = np.dtype(np.int64 if x64 else np.int32)
        elif aval.ptype is complex:
            dt = np.dtype(np.complex128 if x64 else np.complex64)
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
        and not node.keywords
        and isinstance(node.func, gast.Attribute)
        and isinstance(node.func.value, gast.Name)
        and node.func.value.id == "ad"
        and (
            (node.func.attr == "getitem" and len(node.args) == 2)
            # a container cotangent's item (``like`` fills a hole: a kernel has none)
            or (node.func.attr == "part" and len(node.args) in (2, 3))
        )
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

    def __init__(self, x64: bool, tape: Any = None, role: str = "") -> None:
        self.x64 = x64
        self.trees: Dict[str, Any] = {}
        self.counters: Set[str] = set()
        self.lines: List[str] = []
        #: grad's tape as stacks (:mod:`.tapes`): the pair's tape, "push" or "pop"
        self.tape = tape
        self.role = role
        self.loop: Any = None
        self.popped = 0
        self.avals: Dict[str, Any] = {}
        self.dead_lists: Set[str] = set()
        #: lists built one row a trip (:func:`.planner._row_lists`): their items' trees
        self.row_lists: Dict[str, Any] = {}
        #: type trees of names at the loop's start (their last top-level binding before it)
        self.seeds: Dict[str, Any] = {}
        #: range bounds of unknown abstract value (int64 arguments)
        self.bounds: Set[str] = set()
        #: NumPy loops the kernel calls (name, dtype): their addresses are arguments
        self.ufuncs: Set[Tuple[str, str]] = set()
        #: arrays read only by row (``xs[k]``, :func:`.planner._row_reads`): passed
        #: whole and indexed in the kernel; their counters (in bounds, proven there)
        self.rowed: Set[str] = set()
        self.row_counters: Set[str] = set()

    def note(self, name: str, aval: Any) -> None:
        t = tree(aval, self.x64, name in self.rowed)
        old = self.trees.setdefault(name, t)
        if name in self.counters and t[0] == "a" and t[1].startswith("int") and t[2] == ():
            return  # a range counter: int64 in the kernel, converted where it is used
        if not _same(old, t):
            raise Refuse(f"{name} is {old[1]} and {t[1]}")
        for leaf, lt, _ in _leaves(name, t, name):
            self.trees.setdefault(leaf, lt)

    def note_tree(self, name: str, t: Any) -> None:
        old = self.trees.setdefault(name, t)
        if not _same(old, t):
            raise Refuse(f"{name} is {old[1]} and {t[1]}")
        for leaf, lt, _ in _leaves(name, t, name):
            self.trees.setdefault(leaf, lt)

    def local_tree(self, node: Any) -> Any:
        """The type tree of an operation from its operands' (None: unknown)."""
        node = _as_subscript(node)
        if isinstance(node, gast.Name):
            t = self.trees.get(node.id)
            if t is None and node.id in self.seeds:
                t = self.seeds[node.id]
                self.note_tree(node.id, t)  # (every binding before the loop is checked)
            return t
        if isinstance(node, gast.Constant):
            return None
        if isinstance(node, gast.Subscript):
            base = self.local_tree(node.value)
            idx = node.slice
            if base is None or not (isinstance(idx, gast.Constant) and type(idx.value) is int):
                return None
            if base[0] == "t":
                return base[1][idx.value] if -len(base[1]) <= idx.value < len(base[1]) else None
            if base[2] and -base[2][0] <= idx.value < base[2][0]:
                return ("a", base[1], base[2][1:], base[3])
            return None
        if isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.USub):
            return self.local_tree(node.operand)
        if isinstance(node, gast.Call) and not node.keywords and len(node.args) == 3:
            fname = gast.unparse(node.func).strip()
            g, like = (
                self.local_tree(node.args[0]),
                self.local_tree(
                    node.args[{"ad.unstack_like": 2, "ad.index_adjoint": 1}.get(fname, 0)]
                ),
            )
            if (
                g is None
                or like is None
                or g[0] != "a"
                or g[3]
                or g[1] not in ("float32", "float64")
            ):
                return None
            if fname == "ad.index_adjoint":
                # zeros like x (in the cotangent's dtype) with the cotangent at a constant index
                return ("a", g[1], like[2], False) if like[0] == "a" and like[1] == g[1] else None
            if fname == "ad.unstack_like" and like[0] == "t":
                ax = node.args[1]
                if not (isinstance(ax, gast.Constant) and ax.value == 0) or not g[2]:
                    return None
                item = ("a", g[1], g[2][1:], False)
                if len(like[1]) != g[2][0] or not all(_same(c, item) for c in like[1]):
                    return None
                return ("t", tuple(item for _ in like[1]))
            return None
        if isinstance(node, gast.BinOp) and type(node.op) in _BINOPS:
            ops = [node.left, node.right]
        elif isinstance(node, gast.Call) and not node.keywords:
            fname = gast.unparse(node.func).strip()
            if fname == "ad.unbroadcast" and len(node.args) == 2:
                g, x = (self.local_tree(a) for a in node.args)
                ok = g is not None and x is not None and g[0] == x[0] == "a"
                return g if ok and g[1:3] == x[1:3] and not g[3] else None
            if fname not in _CALLS:
                return None
            ops = list(node.args)
        else:
            return None
        strong = []
        for o in ops:
            if isinstance(o, gast.Constant) and type(o.value) in (int, float):
                continue
            t = self.local_tree(o)
            if t is None or t[0] != "a":
                return None
            if not t[3]:
                strong.append(t)
        if (
            not strong
            or len({t[1] for t in strong}) != 1
            or strong[0][1] not in ("float32", "float64")
        ):
            return None
        try:
            shape = np.broadcast_shapes(*[t[2] for t in strong])
        except ValueError:
            return None
        return ("a", strong[0][1], tuple(shape), False)

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
            ints: List[Any] = []
            if (
                base[0] == "arr"
                and base[1] in self.rowed
                and not base[2]
                and isinstance(items[0], gast.Name)
                and items[0].id in self.row_counters
            ):
                # a row ``xs[k]`` (``k`` a counter in bounds: the planner proved it)
                ints.append(items[0].id)
                items = items[1:]
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
                    if isinstance(k, str):
                        fixed.append(k)
                        continue
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

    def element(self, leaf: str, idx: Tuple[Any, ...]) -> str:
        """Element ``idx`` of ``leaf``: its scalar, or an item of an array read by row."""
        if leaf in self.rowed:
            if not idx or not isinstance(idx[0], str) or len(idx) != len(self.trees[leaf][2]):
                raise Refuse(f"{leaf} used other than by row")
            return f"{leaf}[{', '.join(map(str, idx))}]"
        return _el(leaf, idx)

    def dtype_of(self, r: Tuple[Any, ...]) -> str:
        return self.trees[r[1]][1]

    def atom(self, node: Any, dt: str, idx: Tuple[int, ...]) -> str:
        """Element ``idx`` (of the statement's result shape; broadcast) of an
        operand, converted to ``dt``."""
        if isinstance(_as_subscript(node), (gast.BinOp, gast.UnaryOp, gast.Call)):
            return self.subexpr(node, dt, idx)
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
        name = self.element(r[1], full)
        return name if self.dtype_of(r) == dt else f"{_conv(dt)}({name})"

    def subexpr(self, node: Any, dt: str, idx: Tuple[int, ...]) -> str:
        """A nested operation (``a + dt * b``: generated adjoint code is not all
        ANF), computed and rounded in ``dt``: only where that is the dtype NumPy
        computes it in (float operands of ``dt`` or weak ones, float constants)."""
        if dt not in ("float32", "float64"):
            raise Refuse("a nested operation on integers")
        for n in gast.walk(node):
            if isinstance(n, gast.BinOp) and not (self.strong(n.left) or self.strong(n.right)):
                # (Python computes weak-with-weak in float64; NumPy rounds afterwards)
                raise Refuse("a nested operation on weak values")
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and n.id in self.trees:
                t = self.trees[n.id]
                if t[0] != "a" or not (t[1] == dt or t[3]):
                    raise Refuse(f"a nested operation on {n.id}")
            elif isinstance(n, gast.Compare):
                raise Refuse("a nested comparison")
        return f"{_conv(dt)}({self.expr(node, dt, idx)})"

    def strong(self, node: Any) -> bool:
        """Whether ``node``'s value is an array or NumPy scalar (not a weakly
        typed Python number), as far as the names it reads say."""
        node = _as_subscript(node)
        if isinstance(node, gast.Name):
            t = self.trees.get(node.id)
            return t is not None and t[0] == "a" and not t[3]
        if isinstance(node, gast.Subscript):
            return self.strong(node.value)
        if isinstance(node, gast.BinOp):
            return self.strong(node.left) or self.strong(node.right)
        if isinstance(node, gast.UnaryOp):
            return self.strong(node.operand)
        if isinstance(node, gast.Call):
            return any(self.strong(a) for a in node.args)
        return False

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
            if fname == "ad.unbroadcast" and len(value.args) == 2:
                g, x = (self.ref(a) for a in value.args)
                if g[0] != "arr" or x[0] != "arr" or self.shape(g) != self.shape(x):
                    raise Refuse("ad.unbroadcast that sums")
                return self.atom(value.args[0], dt, idx)
            if fname == "ad.index_adjoint" and len(value.args) == 3:
                return self.index_adjoint(value.args, dt, idx)
            if fname == "ad.unstack_like" and len(value.args) == 3:
                # ``like`` one array: ``g`` with ``axis`` in front (axis 0: ``g``)
                if not (isinstance(value.args[1], gast.Constant) and value.args[1].value == 0):
                    raise Refuse("ad.unstack_like along another axis")
                return self.atom(value.args[0], dt, idx)
            if fname in _REDUCE and len(value.args) == 1 and idx == ():
                return self.reduce(fname, value.args[0], dt)
            target = _CALLS.get(fname)
            if target is None:
                raise Refuse(f"call of {fname}")
            if dt not in ("float32", "float64") and fname not in _INT_CALLS:
                raise Refuse(f"{fname} of {dt}")
            operands = ", ".join(self.atom(a, dt, idx) for a in value.args)
            if target[3:] in LOOPED and dt in ("float32", "float64"):
                # NumPy's own loop (the NumPy path's numbers, to the bit: ufuncs.py)
                self.ufuncs.add((target[3:], dt))
                return f"ufcall{len(value.args)}(uf__{target[3:]}__{dt}, {operands})"
            return f"{target}({operands})"
        raise Refuse(f"expression {gast.unparse(value).strip()[:40]}")

    def index_adjoint(self, args: List[Any], dt: str, idx: Tuple[int, ...]) -> str:
        """Element ``idx`` of ``ad.index_adjoint(ct, x, i)``: zeros like ``x``
        with ``ct`` at the constant index ``i`` (a zero is added as NumPy adds it)."""
        ct, x, ix = args
        r = self.ref(x)
        if r[0] != "arr":
            raise Refuse("ad.index_adjoint of no array")
        shape = self.shape(r)
        items = ix.elts if isinstance(ix, gast.Tuple) else [ix]
        pos = []
        for it in items:
            v = it.value if isinstance(it, gast.Constant) else None
            if isinstance(it, gast.UnaryOp) and isinstance(it.op, gast.USub):
                v = -it.operand.value if isinstance(it.operand, gast.Constant) else None
            if type(v) is not int or len(pos) >= len(shape):
                raise Refuse("ad.index_adjoint of no constant index")
            d = shape[len(pos)]
            v = v + d if v < 0 else v
            if not 0 <= v < d:
                raise Refuse("ad.index_adjoint out of bounds")
            pos.append(v)
        if len(idx) != len(shape):
            raise Refuse("ad.index_adjoint's shape")
        if tuple(idx[: len(pos)]) != tuple(pos):
            return f"{_conv(dt)}(0)"
        return self.atom(ct, dt, idx[len(pos) :])

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
            e = self.element(r[1], r[2] + i)
            e = e if src == dt else f"{_conv(dt)}({e})"
            acc = e if not acc else f"{_conv(dt)}({_REDUCE[fname].format(acc, e)})"
        return acc

    def test(self, node: Any) -> str:
        if isinstance(node, gast.Name):
            t = self.trees.get(node.id)
            if t is None or t[0] != "a" or t[1:3] != ("bool", ()):
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
            if (
                isinstance(value, gast.Call)
                and gast.unparse(value.func).strip() == "ad.unstack_like"
                and len(value.args) == 3
                and not value.keywords
            ):
                self.unstack(pad, target, value.args[0], value.args[1])
                return
            r = self.ref(value)
            if r[0] != "tup" or self.trees[r[1]] != t:
                raise Refuse("a tuple of another type")
            for (leaf, lt, _), (src, _, _) in zip(_leaves(target, t, ""), _leaves(r[1], t, "")):
                for i in itertools.product(*map(range, lt[2])):
                    self.emit(f"{pad}{_el(leaf, i)} = {_el(src, i)}")
            return
        _, dt, shape, _ = t
        if shape and self.mapped(pad, target, value, dt, shape):
            return
        for i in itertools.product(*map(range, shape)):
            self.emit(f"{pad}{_el(target, i)} = {_conv(dt)}({self.expr(value, dt, i)})")

    def mapped(self, pad: str, target: str, value: Any, dt: str, shape: Tuple[int, ...]) -> bool:
        """``target = jnp.sin(x)`` (a function of :data:`LOOPED`) of an array: one
        call of NumPy's loop over all its elements, as NumPy's own call."""
        if not (isinstance(value, gast.Call) and not value.keywords and 1 <= len(value.args) <= 2):
            return False
        name = _CALLS.get(gast.unparse(value.func).strip(), "np.")[3:]
        if name not in LOOPED or dt not in ("float32", "float64"):
            return False
        idxs = list(itertools.product(*map(range, shape)))
        ops = [f"({', '.join(self.atom(a, dt, i) for i in idxs)},)" for a in value.args]
        self.ufuncs.add((name, dt))
        outs = ", ".join(_el(target, i) for i in idxs)
        self.emit(f"{pad}{outs}, = ufmap{len(ops)}(uf__{name}__{dt}, {', '.join(ops)})")
        return True

    def unstack(self, pad: str, target: str, g: Any, axis: Any) -> None:
        """``target = ad.unstack_like(g, axis, like)`` of a tuple ``like``: the
        slices of ``g`` along ``axis``."""
        kids = self.trees[target][1]
        if not (isinstance(axis, gast.Constant) and type(axis.value) is int):
            raise Refuse("ad.unstack_like along no constant axis")
        for k, kid in enumerate(kids):
            if kid[0] != "a":
                raise Refuse("ad.unstack_like into containers")
            ax = axis.value + len(kid[2]) + 1 if axis.value < 0 else axis.value
            if not 0 <= ax <= len(kid[2]):
                raise Refuse("ad.unstack_like's axis")
            leaf = f"{target}__t{k}"
            for i in itertools.product(*map(range, kid[2])):
                at = i[:ax] + (k,) + i[ax:]
                self.emit(f"{pad}{_el(leaf, i)} = {_conv(kid[1])}({self.atom(g, kid[1], at)})")

    def tape_row(self, pad: str) -> None:
        """A trip's row on the tape's stacks: reserved (push; grown when full)
        or found (pop; refused when the stacks are empty, as list.pop)."""
        widths = self.tape.widths
        if self.role == "push":
            for dt in self.tape.dtypes():
                w = widths[dt]
                self.emit(f"{pad}b_{dt} = n__trips * {w}")
                self.emit(f"{pad}if b_{dt} + {w} > s_{dt}.shape[0]:")
                self.emit(f"{pad}    g_{dt} = np.empty(2 * s_{dt}.shape[0] + {w}, {_conv(dt)})")
                self.emit(f"{pad}    g_{dt}[:b_{dt}] = s_{dt}[:b_{dt}]")
                self.emit(f"{pad}    s_{dt} = g_{dt}")
            self.emit(f"{pad}n__trips += 1")
        else:
            self.emit(f"{pad}n__trips -= 1")
            self.emit(f"{pad}if n__trips < 0:")
            self.emit(f"{pad}    raise IndexError('pop from empty list')")
            for dt in self.tape.dtypes():
                self.emit(f"{pad}b_{dt} = n__trips * {widths[dt]}")

    def row(self, pad: str, lst: str, value: Any) -> None:
        """``lst.append(value)``: the trip's row of ``lst``'s array."""
        t = self.row_lists[lst]
        for i in itertools.product(*map(range, t[2])):
            at = ", ".join(map(str, (f"{lst}__n",) + i))
            self.emit(f"{pad}{lst}__o[{at}] = {self.atom(value, t[1], i)}")
        self.emit(f"{pad}{lst}__n += 1")

    def push(self, pad: str, name: str) -> None:
        site = self.tape.sites[self.popped]
        self.popped += 1
        if site.name != name:
            raise Refuse("the tape's pushes changed")
        if site.kind != "store":
            return
        slots = iter(site.slots)
        for leaf, lt, _ in _leaves(name, self.trees[name], name):
            for i in itertools.product(*map(range, lt[2])):
                dt, off = next(slots)
                self.emit(f"{pad}s_{dt}[b_{dt} + {off}] = {_el(leaf, i)}")

    def pop(self, pad: str, name: str) -> None:
        sites = self.tape.sites
        site = sites[len(sites) - 1 - self.popped]
        self.popped += 1
        if site.target != name:
            raise Refuse("the tape's pops changed")
        if not _same(site.tree, self.trees[name]):
            raise Refuse(f"{name} is popped as another type")
        if site.kind == "const":
            self.assign(pad, name, gast.Constant(value=site.value, kind=None))
        elif site.kind == "store":
            slots = iter(site.slots)
            for leaf, lt, _ in _leaves(name, self.trees[name], name):
                for i in itertools.product(*map(range, lt[2])):
                    dt, off = next(slots)
                    self.emit(f"{pad}{_el(leaf, i)} = s_{dt}[b_{dt} + {off}]")

    def block(self, stmts: List[Any], indent: int) -> None:
        pad = "    " * indent
        if not stmts:
            self.emit(pad + "pass")
        if self.tape is not None and stmts is getattr(self.loop, "body", None):
            self.tape_row(pad)
        for s in stmts:
            if self.tape is not None and self.role == "push" and is_push(s, self.tape.name):
                self.push(pad, is_push(s, self.tape.name))
            elif self.tape is not None and self.role == "pop" and is_pop(s, self.tape.name):
                self.pop(pad, is_pop(s, self.tape.name))
            elif isinstance(s, gast.Assign):
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
            elif _append_to(s) in self.row_lists:
                self.row(pad, _append_to(s), s.value.args[0])
            elif _append_to(s) in self.dead_lists:
                pass  # (a list nothing reads: scan's per-step outputs of None)
            elif isinstance(s, gast.Pass):
                self.emit(pad + "pass")
            else:
                raise Refuse(f"statement {type(s).__name__}")

    def for_head(self, s: Any) -> str:
        it = s.iter
        if (
            isinstance(it, gast.Call)
            and gast.unparse(it.func).strip() == "reversed"
            and len(it.args) == 1
            and not it.keywords
            and isinstance(it.args[0], gast.Call)
            and gast.unparse(it.args[0].func).strip() == "range"
            and 1 <= len(it.args[0].args) <= 2
            and not it.args[0].keywords
            and isinstance(s.target, gast.Name)
        ):
            a = [self.range_arg(x) for x in it.args[0].args]
            lo, hi = ("0", a[0]) if len(a) == 1 else (a[0], a[1])
            return f"{s.target.id} in range({hi} - 1, {lo} - 1, -1)"
        if not (
            isinstance(s.target, gast.Name)
            and isinstance(it, gast.Call)
            and gast.unparse(it.func).strip() == "range"
            and not it.keywords
            and 1 <= len(it.args) <= 3
        ):
            raise Refuse("a for loop over something else than range")
        return f"{s.target.id} in range({', '.join(self.range_arg(a) for a in it.args)})"


def _append_to(s: Any) -> Any:
    """``lst`` of the statement ``lst.append(v)``, else None."""
    if (
        isinstance(s, gast.Expr)
        and isinstance(s.value, gast.Call)
        and isinstance(s.value.func, gast.Attribute)
        and s.value.func.attr == "append"
        and isinstance(s.value.func.value, gast.Name)
        and len(s.value.args) == 1
    ):
        return s.value.func.value.id
    return None


def _same(a: Any, b: Any) -> bool:
    """The same type tree (weakness aside: a weak and a strong int32 are both int32)."""
    if a[0] != b[0]:
        return False
    if a[0] == "t":
        return len(a[1]) == len(b[1]) and all(map(_same, a[1], b[1]))
    return a[1:3] == b[1:3]
