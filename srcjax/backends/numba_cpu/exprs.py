"""The expressions of a Numba loop kernel, element by element (scalarized).

:class:`_Exprs` holds the type trees of a loop's names (:mod:`.trees`) and
translates an ANF right-hand side into the scalar expression of one element of
its result: broadcasting with scalars and size-1 dimensions by NumPy's rules, a
constant index picks elements, and ``sum``/``max``/``min``/``prod`` over all
elements is a chain in C order. Every operand is converted to the dtype of its
statement's result as jit inferred it (a weak Python scalar is the default
float or int dtype), so float32 stays float32 and int32 wraps as in XLA;
NumPy's own float loops are called for ``sin``/``exp``... (:mod:`.ufuncs`).
Anything else raises :class:`.trees.Refuse`. :class:`.kernel._Kernel` adds the
statements.
"""

from __future__ import annotations

import itertools
from typing import Any, Dict, List, Set, Tuple

import gast
import numpy as np

from ...frontend.normalize.common import _BINOPS as _PY_OPS
from .trees import Refuse, _conv, _el, _leaves, _same, tree
from .ufuncs import LOOPED

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


#: ``ad.at_<name>`` updates: the element's new value from the old and the update's
_AT = {
    "set": "{1}",
    "add": "{0} + {1}",
    "multiply": "{0} * {1}",
    "min": "np.minimum({0}, {1})",
    "max": "np.maximum({0}, {1})",
}


def _int_keywords(call: Any, defaults: Dict[str, int]) -> Dict[str, int]:
    """A call's constant integer keywords (only those of ``defaults``)."""
    out = dict(defaults)
    for kw in call.keywords:
        v, sign = kw.value, 1
        if isinstance(v, gast.UnaryOp) and isinstance(v.op, gast.USub):
            v, sign = v.operand, -1
        if kw.arg not in defaults or not (isinstance(v, gast.Constant) and type(v.value) is int):
            raise Refuse(f"keyword {kw.arg}")
        out[kw.arg] = sign * v.value
    return out


def _as_slices(node: Any) -> Any:
    """An ``.at`` update's index as a subscript writes it: ``slice(1, None,
    None)`` calls as ``1:`` (in a tuple too)."""
    if isinstance(node, gast.Tuple):
        return gast.Tuple(elts=[_as_slices(e) for e in node.elts], ctx=gast.Load())
    if (
        isinstance(node, gast.Call)
        and isinstance(node.func, gast.Name)
        and node.func.id == "slice"
        and len(node.args) == 3
        and not node.keywords
    ):
        return gast.Slice(*node.args)
    return node


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


class _Exprs:
    """The type trees of one loop's names and the translation of its expressions."""

    #: the most elements an array value may have (0: :data:`.trees.MAX_ELEMENTS`)
    limit = 0
    #: constant slices ``x[1:]`` read as views (element by element)
    slices = True

    def __init__(self, x64: bool) -> None:
        self.x64 = x64
        self.trees: Dict[str, Any] = {}
        self.counters: Set[str] = set()
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
        t = tree(aval, self.x64, name in self.rowed, self.limit)
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
            if len(base) == 4:
                raise Refuse("an index of a slice")
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
            view: List[Any] = []
            for it in items:
                if isinstance(it, gast.Slice) and base[0] == "arr" and len(base) == 3:
                    view.append(it)
                    continue
                if view:
                    raise Refuse("an index after a slice")
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
                if view:
                    return ("arr", base[1], tuple(fixed), self.view(view, shape[len(ints) :]))
                return ("arr", base[1], tuple(fixed))
        raise Refuse(f"operand {gast.unparse(node).strip()[:40]}")

    def view(self, items: List[Any], shape: Tuple[int, ...]) -> Tuple[Any, ...]:
        """Constant slices ``x[1:]``, ``x[:-1, ::2]`` as ``(start, step, length)``
        per sliced axis (Python's own slice rules on the fixed shape)."""
        if not self.slices or len(items) > len(shape):
            raise Refuse("an index that is no constant integer")
        out = []
        for it, d in zip(items, shape):
            parts = []
            for b in (it.lower, it.upper, it.step):
                sign = 1
                if isinstance(b, gast.UnaryOp) and isinstance(b.op, gast.USub):
                    b, sign = b.operand, -1
                v = b.value if isinstance(b, gast.Constant) else None if b is None else "?"
                if not (v is None or type(v) is int):
                    raise Refuse("a slice of no constant bounds")
                parts.append(None if v is None else sign * v)
            if parts[2] == 0:
                raise Refuse("a slice step of zero")
            start, stop, step = slice(*parts).indices(d)
            n = len(range(start, stop, step))
            if n == 0:
                raise Refuse("an empty slice")
            out.append((start, step, n))
        return tuple(out)

    def shape(self, r: Tuple[Any, ...]) -> Tuple[int, ...]:
        if r[0] == "const":
            return ()
        if r[0] == "tup":
            raise Refuse("a tuple as an operand")
        rest = self.trees[r[1]][2][len(r[2]) :]
        if len(r) == 4:
            return tuple(v[2] for v in r[3]) + rest[len(r[3]) :]
        return rest

    def position(self, r: Tuple[Any, ...], i: Tuple[Any, ...]) -> Tuple[Any, ...]:
        """The leaf's index of element ``i`` of reference ``r`` (a view's steps)."""
        if len(r) == 4:
            if any(not isinstance(k, int) for k in i):
                raise Refuse("a slice indexed at run time")
            i = tuple(a + s * k for (a, s, _), k in zip(r[3], i)) + tuple(i[len(r[3]) :])
        return tuple(r[2]) + tuple(i)

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
        full = self.position(r, tuple(0 if d == 1 else i for i, d in zip(tail, shape)))
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
            if fname == "jnp.concatenate":
                return self.concatenate(value, dt, idx)
            if fname.startswith("ad.at_") and fname[6:] in _AT:
                return self.at_update(value, _AT[fname[6:]], dt, idx)
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
            if fname in ("jnp.zeros_like", "jnp.ones_like") and len(value.args) == 1:
                self.ref(value.args[0])  # (a value the kernel holds: its shape is the result's)
                return f"{_conv(dt)}({int(fname == 'jnp.ones_like')})"
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

    def concatenate(self, call: Any, dt: str, idx: Tuple[Any, ...]) -> str:
        """Element ``idx`` of ``jnp.concatenate([a, b, ...], axis=k)``: the
        element of the item whose stretch along ``k`` holds ``idx[k]``."""
        axis = _int_keywords(call, {"axis": 0})["axis"]
        if len(call.args) != 1:
            raise Refuse("jnp.concatenate of several operands")
        items = call.args[0]
        if isinstance(items, gast.Name) and self.ref(items)[0] == "tup":
            n = len(self.trees[items.id][1])
            items = [
                gast.Subscript(value=call.args[0], slice=gast.Constant(j, None), ctx=gast.Load())
                for j in range(n)
            ]
        elif isinstance(items, (gast.List, gast.Tuple)):
            items = items.elts
        else:
            raise Refuse("jnp.concatenate of no tuple")
        ax = axis + len(idx) if axis < 0 else axis
        if not 0 <= ax < len(idx) or not all(isinstance(k, int) for k in idx):
            raise Refuse("jnp.concatenate's shape")
        k = idx[ax]
        for item in items:
            shape = self.shape(self.ref(item))
            if len(shape) != len(idx):
                raise Refuse("jnp.concatenate of items of other ranks")
            if k < shape[ax]:
                return self.atom(item, dt, idx[:ax] + (k,) + idx[ax + 1 :])
            k -= shape[ax]
        raise Refuse("jnp.concatenate's shape")

    def at_update(self, call: Any, op: str, dt: str, idx: Tuple[Any, ...]) -> str:
        """Element ``idx`` of ``ad.at_<op>(x, i, v)``: ``x``'s element, or
        ``op`` of it and ``v``'s where ``i`` (a constant integer or slice, or a
        loop counter) points. Out of bounds as the NumPy backend (JAX): a
        constant index is refused, a counter's update dropped (``mode="drop"``)."""
        if len(call.args) != 3 or _int_keywords(call, {}) or not idx:
            raise Refuse("an .at update of this form")
        if not all(isinstance(k, int) for k in idx):
            raise Refuse("an .at update indexed at run time")
        x, where, v = call.args
        r = self.ref(x)
        if r[0] != "arr" or self.shape(r) != tuple(self.trees[r[1]][2][len(r[2]) :]):
            raise Refuse("an .at update of no array")
        if (
            dt not in ("float32", "float64")
            or self.dtype_of(r) != dt
            or (self.strong(v) and self.dtype_of(self.ref(v)) != dt)
        ):
            raise Refuse("an .at update that converts")  # (NumPy's casting="unsafe")
        keep = self.atom(x, dt, idx)
        wt = self.trees.get(where.id) if isinstance(where, gast.Name) else None
        if wt is not None and wt[0] == "a" and wt[1].startswith("int") and wt[2] == ():
            # an integer known at run time: negative from the end, out of bounds dropped
            if len(idx) != 1:
                raise Refuse("an .at update of a row")
            n, w = self.shape(r)[0], self.element(where.id, ())
            k = f"({w} + {n} if {w} < 0 else {w})"
            new = op.format(keep, self.atom(v, dt, ()))
            return f"({_conv(dt)}({new}) if {k} == {idx[0]} else {keep})"
        probe = gast.Subscript(value=x, slice=_as_slices(where), ctx=gast.Load())
        sel = self.ref(probe)
        if len(sel) == 3:
            sel = sel + ((),)
        # the indices ``x[where]`` covers, and the position of ``idx`` in it
        lead, view = sel[2][len(r[2]) :], sel[3]
        if tuple(idx[: len(lead)]) != tuple(lead):
            return keep
        rest = idx[len(lead) :]
        pos = []
        for (a, s, n), k in zip(view, rest):
            q, m = divmod(k - a, s)
            if m or not 0 <= q < n:
                return keep
            pos.append(q)
        at = tuple(pos) + tuple(rest[len(view) :])
        return f"{_conv(dt)}({op.format(keep, self.atom(v, dt, at))})"

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
            e = self.element(r[1], self.position(r, i))
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
