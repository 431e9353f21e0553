"""Array mode: a jitted loop over fixed-shape arrays as a Numba kernel of whole arrays.

A loop the scalar kernels refuse because an array is too large to scalarize
(R6's Newton-CG loop: ``x`` is 16 x 200 x 20) may still be a region: every
value it touches has a fixed shape from jit's avals (float32/float64/int/bool
arrays of at most :data:`LIMIT` elements, or scalars). Each statement of its
body becomes, in the kernel:

- an elementwise right-hand side (operators, comparisons, ``where``, the calls
  of :data:`.exprs._CALLS`, ``ad.zero_where_counted``): a fresh array of the
  statement's shape and a loop nest writing one element per trip, its
  expression translated by :class:`.exprs._Exprs` (broadcasting by NumPy's rules,
  every operand converted to the result's dtype, NumPy's own loops for
  ``sin``/``exp``...; the same per-element operations NumPy does, so the same
  bits);
- ``ad.matvec``/``ad.vecmat``/``ad.vecdot``: a fresh array filled by NumPy's own
  gufunc loop (:mod:`.gufuncs`, called with the arguments NumPy's call passes);
- ``a[:, None]`` (full slices and new axes): a reshaped view;
- a name: the same array (no statement writes into an array, so sharing is safe);
- ``name = None`` (jit's releases): nothing (refused when the name is an output).

Scalars stay Numba scalars of their dtype (inputs converted in the kernel's
head; strong results boxed as NumPy scalars). Anything else raises
:class:`.trees.Refuse` and the loop keeps NumPy, as do kernels Numba cannot
type (:mod:`.loops`).
"""

from __future__ import annotations

import copy
from typing import Any, Dict, List, Set, Tuple

import gast

from .gufuncs import CORES, present
from .kernel import _Kernel
from .planner import _box, _collect, _dead_lists, _live_in, _names, _numba_type, boundary, imports
from .trees import Refuse, _conv, _leaves, _same

__all__ = ["plan_arrays", "LIMIT"]

#: the most elements one array of an array-mode kernel may have
LIMIT = 1 << 18
#: generated code's gufunc calls -> the gufunc (:data:`.gufuncs.CORES`)
_GUFUNCS = {f"ad.{n}": n for n in ("matvec", "vecmat", "vecdot")}


class _ArrayKernel(_Kernel):
    """Translates one loop into a kernel over whole arrays."""

    slices = False  # (a fused run reads its elements at its own index)

    limit = LIMIT

    def __init__(self, x64: bool) -> None:
        super().__init__(x64)
        #: NumPy gufunc loops the kernel calls (name, dtype): their addresses are arguments
        self.gufuncs: Set[Tuple[str, str]] = set()
        #: the scalar of each element computed so far in the loop nest being written
        self.local: Dict[str, str] = {}
        #: the kernel's outputs (read after the loop), and names always stored as arrays
        self.outputs: Set[str] = set()
        self.stored: Set[str] = set()

    def element(self, leaf: str, idx: Tuple[Any, ...]) -> str:
        if leaf in self.local:
            return self.local[leaf]  # (an element of the fused run, at its own index)
        if not idx:
            return leaf
        return f"{leaf}[{', '.join(map(str, idx))}]"

    def strong(self, node: Any) -> bool:
        if isinstance(node, gast.Compare):  # (NumPy compares a strong operand's elements)
            return any(self.strong(x) for x in [node.left, *node.comparators])
        if isinstance(node, gast.Subscript):  # (an item of a tuple: its leaf's type)
            try:
                r = self.ref(node)
            except Refuse:
                r = ("",)
            if r[0] == "arr":
                t = self.trees.get(r[1])
                return t is not None and t[0] == "a" and not t[3]
        return super().strong(node)

    def reduce(self, fname: str, arg: Any, dt: str) -> str:
        raise Refuse(f"{fname} in array mode")

    def stack(self, call: Any, dt: str, idx: Tuple[int, ...]) -> str:
        raise Refuse("jnp.stack in array mode")

    def index_adjoint(self, args: List[Any], dt: str, idx: Tuple[int, ...]) -> str:
        raise Refuse("ad.index_adjoint in array mode")

    def expr(self, value: Any, dt: str, idx: Tuple[Any, ...]) -> str:
        if (
            isinstance(value, gast.Call)
            and gast.unparse(value.func).strip() == "ad.zero_where_counted"
            and len(value.args) == 4
            and not value.keywords
        ):
            # zeros where the mask is (or is not) set; the count only saves NumPy a copy
            mask, _, v, flag = value.args
            if not (isinstance(flag, gast.Constant) and type(flag.value) is bool):
                raise Refuse("ad.zero_where_counted of no constant flag")
            zero, keep = f"{_conv(dt)}(0)", self.atom(v, dt, idx)
            a, b = (zero, keep) if flag.value else (keep, zero)
            return f"({a} if {self.atom(mask, 'bool', idx)} else {b})"
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Pow):
            # (NumPy's ``x ** 2`` is ``square``, ``x ** 0.5`` ``sqrt``: not Numba's pow)
            raise Refuse("** in array mode")
        return super().expr(value, dt, idx)

    def kind(self, target: str, value: Any) -> str:
        """How statement ``target = value`` is written: "alias", "gufunc", "view",
        "scalar" or "map" (a loop nest over ``target``'s elements)."""
        t = self.trees.get(target)
        if t is None:
            raise Refuse(f"{target}: a tuple inside a tuple")
        if t[0] == "t":
            return "tuple"
        if isinstance(value, gast.Name):
            return "alias"
        if self.product(value) is not None:
            return "gufunc"
        if isinstance(value, gast.Subscript) and self.view_of(value, t) is not None:
            return "view"
        return "map" if t[2] else "scalar"

    def block(self, stmts: List[Any], indent: int) -> None:
        """``stmts``, with runs of elementwise statements of one shape fused
        into one loop nest (:meth:`fused`)."""
        pad = "    " * indent
        run: List[Any] = []
        for s in list(stmts) + [None]:
            if s is not None and self.joins(run, s):
                run.append(s)
                continue
            if run:
                self.fused(pad, [(st.targets[0].id, st.value) for st in run])
                run = []
            if s is None:
                break
            if self.joins([], s):
                run = [s]
            else:
                super().block([s], indent)
        if not stmts:
            self.emit(pad + "pass")

    def joins(self, run: List[Any], s: Any) -> bool:
        """Whether ``s`` is an elementwise statement that can join ``run``: the same
        shape, a new target, and no element of the run's read but at its own index."""
        if not (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and self.kind(s.targets[0].id, s.value) == "map"
        ):
            return False
        if not run:
            return True
        target = s.targets[0].id
        made = {st.targets[0].id for st in run}
        if target in made or self.trees[target][2] != self.trees[run[0].targets[0].id][2]:
            return False
        for n in gast.walk(s.value):
            if isinstance(n, gast.Subscript) and made & {
                x.id for x in gast.walk(n) if isinstance(x, gast.Name)
            }:
                return False
        return True

    def assign(self, pad: str, target: str, value: Any) -> None:
        t = self.trees[target]
        kind = self.kind(target, value)
        if kind == "tuple":
            self.tuple_assign(pad, target, value)
            return
        _, dt, shape, _ = t
        if kind == "alias":
            src = self.trees.get(value.id)
            if src is None or not _same(src, t):
                raise Refuse(f"{target} = {value.id} of another type")
            self.emit(f"{pad}{target} = {value.id if shape else f'{_conv(dt)}({value.id})'}")
        elif kind == "gufunc":
            self.gufunc(pad, target, *self.product(value), t)
        elif kind == "view":
            self.emit(f"{pad}{target} = {self.view_of(value, t)}.reshape({shape!r})")
        elif kind == "map":
            self.fused(pad, [(target, value)])
        else:
            self.weak_only(target, value)
            self.emit(f"{pad}{target} = {_conv(dt)}({self.expr(value, dt, ())})")

    def weak_only(self, target: str, value: Any) -> None:
        if not isinstance(value, gast.Constant) and not self.strong(value):
            # (NumPy computes weak Python numbers in float64 and rounds later)
            raise Refuse(f"{target}: an operation on weak values only")

    def loads_outside(self, values: List[Any]) -> Set[str]:
        """The names the loop reads outside the expressions ``values``, and its outputs."""
        skip = {id(v) for v in values}
        out = set(self.outputs)
        todo = [self.loop]
        while todo:
            n = todo.pop()
            if id(n) in skip:
                continue
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                out.add(n.id)
            todo.extend(gast.iter_child_nodes(n))
        for name in list(out):  # (a tuple's leaves)
            t = self.trees.get(name)
            if t is not None and t[0] == "t":
                out.update(leaf for leaf, _, _ in _leaves(name, t, ""))
        return out

    def fused(self, pad: str, run: List[Tuple[str, Any]]) -> None:
        """Statements ``target = value`` of one shape as one loop nest: each
        element computed into a scalar (read by the later statements of the run)
        and stored into a fresh array where anything else reads the name."""
        shape = self.trees[run[0][0]][2]
        idx = tuple(f"ix__{k}" for k in range(len(shape)))
        inner: List[str] = []
        keep: List[str] = []
        made: Set[str] = set()
        # (kept: read after the run, by another statement, the next trip or after
        # the loop, or read in the run before it is set: the last trip's array)
        elsewhere = self.loads_outside([v for _, v in run])
        before: Set[str] = set()
        self.local = {}
        try:
            for target, value in run:
                self.weak_only(target, value)
                dt = self.trees[target][1]
                before |= {n.id for n in gast.walk(value) if isinstance(n, gast.Name)} - made
                if target in elsewhere or target in before or target in self.stored:
                    keep.append(target)
                e = f"{target}__e"
                inner.append(f"{e} = {_conv(dt)}({self.expr(value, dt, idx)})")
                if target in keep:
                    inner.append(f"{target}__n[{', '.join(idx)}] = {e}")
                self.local[target] = e
                made.add(target)
        finally:
            self.local = {}
        for target in keep:
            self.emit(f"{pad}{target}__n = np.empty({shape!r}, {_conv(self.trees[target][1])})")
        for k, n in enumerate(shape):
            self.emit(f"{pad}{'    ' * k}for ix__{k} in range({n}):")
        for line in inner:
            self.emit(f"{pad}{'    ' * len(shape)}{line}")
        for target in keep:
            self.emit(f"{pad}{target} = {target}__n")

    def product(self, value: Any) -> Any:
        """``(gufunc, operands)`` of ``ad.matvec(a, b)`` (``vecmat``, ``vecdot``),
        ``a @ b`` or ``jnp.matmul(a, b)`` (by the operands' ranks), else None."""
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.MatMult):
            name, args = "matmul", [value.left, value.right]
        elif isinstance(value, gast.Call) and not value.keywords and len(value.args) == 2:
            f = gast.unparse(value.func).strip()
            name, args = _GUFUNCS.get(f, "matmul" if f == "jnp.matmul" else ""), value.args
            if not name:
                return None
        else:
            return None
        if name == "matmul":
            trees = [self.trees.get(getattr(a, "id", None)) for a in args]
            ranks = tuple(len(t[2]) if t is not None and t[0] == "a" else 0 for t in trees)
            name = {(1, 1): "matmul_vv", (1, 2): "matmul_vm", (2, 1): "matmul_mv"}.get(ranks, name)
        return name, args

    def tuple_assign(self, pad: str, target: str, value: Any) -> None:
        """``target = (a, b)`` or ``target = c`` of a tuple: its leaves (every item
        computed before any is rebound, as Python evaluates a display)."""
        t = self.trees[target]
        if isinstance(value, gast.Name):
            src = self.trees.get(value.id)
            if src is None or not _same(src, t):
                raise Refuse(f"{target} = {value.id} of another type")
            for (leaf, _, _), (old, _, _) in zip(_leaves(target, t, ""), _leaves(value.id, t, "")):
                self.emit(f"{pad}{leaf} = {old}")
            return
        if not (
            isinstance(value, (gast.Tuple, gast.List))
            and len(value.elts) == len(t[1])
            and all(kid[0] == "a" for kid in t[1])
        ):
            raise Refuse(f"{target}: a tuple other than a display of arrays")
        for k, (e, kid) in enumerate(zip(value.elts, t[1])):
            self.trees[f"{target}__t{k}__v"] = kid
            self.stored.add(f"{target}__t{k}__v")
            self.assign(pad, f"{target}__t{k}__v", e)
        for k in range(len(t[1])):
            self.emit(f"{pad}{target}__t{k} = {target}__t{k}__v")

    def gufunc(self, pad: str, target: str, name: str, args: List[Any], t: Any) -> None:
        """``target = a @ b`` (``ad.matvec(a, b)``...): NumPy's gufunc loop."""
        ops = []
        for a in args:
            o = self.trees.get(a.id) if isinstance(a, gast.Name) else None
            if o is None or o[0] != "a" or o[1] != t[1] or o[3]:
                raise Refuse(f"{name} of operands of other dtypes")
            ops.append(o)
        dt = t[1]
        if dt not in ("float32", "float64"):
            raise Refuse(f"{name} of {dt}")
        core = [present(c) for c in CORES[name]]
        shapes = [o[2] for o in ops] + [t[2]]
        outer = len(shapes[0]) - len(core[0])
        if outer not in (0, 1) or any(len(s) - len(c) != outer for s, c in zip(shapes, core)):
            raise Refuse(f"{name} over more than one loop dimension")
        if outer and (len({s[0] for s in shapes}) != 1 or name.startswith("matmul_")):
            raise Refuse(f"{name} that broadcasts")
        sizes: dict = {}
        for s, c in zip(shapes, core):
            for q, letter in enumerate(c):
                if sizes.setdefault(letter, s[outer + q]) != s[outer + q]:
                    raise Refuse(f"{name} of mismatched shapes")
        self.gufuncs.add((name, dt))
        a, b = (x.id for x in args)
        self.emit(f"{pad}{target}__n = np.empty({t[2]!r}, {_conv(dt)})")
        self.emit(f"{pad}gu_{name}(gu__{name}__{dt}, {a}, {b}, {target}__n)")
        self.emit(f"{pad}{target} = {target}__n")

    def view_of(self, value: Any, t: Any) -> Any:
        """The name ``a`` of ``a[:, None]`` (full slices and new axes only) when
        ``t`` is its type reshaped, else None."""
        if not isinstance(value.value, gast.Name):
            return None
        items = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
        kept = 0
        for it in items:
            if isinstance(it, gast.Slice) and it.lower is None and it.upper is None:
                if it.step is not None:
                    return None
                kept += 1
            elif not (isinstance(it, gast.Constant) and it.value is None):
                return None
        src = self.trees.get(value.value.id)
        if src is None or src[0] != "a" or src[1] != t[1] or len(src[2]) != kept:
            return None
        if tuple(d for d in t[2] if d != 1) != tuple(d for d in src[2] if d != 1):
            raise Refuse("a view of another shape")
        return value.value.id


def _is_release(s: Any) -> bool:
    return (
        isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Constant)
        and s.value.value is None
        and str(getattr(s, "sj_note", "")).startswith("released")
    )


def plan_arrays(
    fdef: Any, loop: Any, outside: List[Any], x64: bool, after: Any = None, entry: Any = None
) -> Tuple[str, list, list]:
    """``(kernel source, [(input, numba type spec)], outputs)`` of ``loop`` in
    array mode (arguments as :func:`.planner.plan`'s, without tapes); raises
    :class:`Refuse`."""
    k = _ArrayKernel(x64)
    released = {s.targets[0].id for s in loop.body if _is_release(s)}
    lp = copy.copy(loop)
    lp.body = [s for s in loop.body if not _is_release(s)]
    k.loop = lp
    k.dead_lists = _dead_lists(fdef)
    _collect(lp, k)
    before = outside if after is None else outside[: len(outside) - len(after)]
    inputs, outputs, _, maybe_none = boundary(
        fdef, lp, k, outside, before, after, entry, set(k.dead_lists)
    )
    if maybe_none:
        raise Refuse(f"{sorted(maybe_none)[0]} may be None")
    # names bound outside the function (jit's constants, e.g. a closed-over array):
    # arguments too, read where the generated code calls the kernel
    free = _live_in(lp) - set(inputs) - _names([lp], gast.Store) - k.dead_lists
    free -= {"jnp", "ad"} | {
        c.func.id
        for c in gast.walk(lp)
        if isinstance(c, gast.Call) and isinstance(c.func, gast.Name)
    }
    for n in sorted(free):
        if n not in k.trees or n in k.counters:
            raise Refuse(f"{n} has no known dtype")
    inputs = sorted(set(inputs) | free)
    if released & set(outputs):
        raise Refuse("a value released in the loop is read after it")
    k.outputs = set(outputs)
    k.block([lp], 1)
    head = []
    for n in inputs:
        tuple_ = k.trees[n][0] == "t"
        for leaf, (_, dt, shape, _), acc in _leaves(n, k.trees[n], n):
            if not shape:
                head.append(f"    {leaf} = {_conv(dt)}({acc})")
            elif tuple_:
                head.append(f"    {leaf} = {acc}")
    looped, gu = sorted(k.ufuncs), sorted(k.gufuncs)
    lines = imports(looped)
    if gu:
        names = sorted({n for n, _ in gu})
        lines += [
            "from srcjax.backends.numba_cpu.gufuncs import gucalls",
            "",
            f"{', '.join(f'gu_{n}' for n in names)}, = gucalls{tuple(names)!r}",
            f"GUFUNCS = {tuple(gu)!r}",
        ]
    params = inputs + [f"uf__{n}__{dt}" for n, dt in looped]
    params += [f"gu__{n}__{dt}" for n, dt in gu]

    def build(prefix: str, t: Any) -> str:
        if t[0] == "a":
            return prefix
        items = [build(f"{prefix}__t{j}", c) for j, c in enumerate(t[1])]
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

    rets = [build(n, k.trees[n]) for n in outputs]
    ret = ", ".join(rets) + ("," if len(rets) == 1 else "")
    src = "\n".join(
        lines
        + ["ARRAY_MODE = True", "", "", f"def kernel({', '.join(params)}):"]
        + head
        + k.lines
        + [f"    return ({ret})"]
        + _box(outputs, k.trees)
        + [""]
    )
    return src, [(n, _numba_type(k.trees[n])) for n in inputs], outputs
