"""One jitted loop translated into the source of a Numba kernel (scalarized).

The kernel works on scalars only (:mod:`.trees`: an array is one scalar per
element, a tuple its items), so an elementwise operation is one scalar
statement per element (:mod:`.exprs` translates each element's expression) and
no array is allocated inside the loop. JAX's dtype semantics are kept exactly:
every result is converted to its own dtype, so float32 stays float32 and int32
wraps as in XLA. Anything else raises :class:`.trees.Refuse` with the reason,
and the loop keeps NumPy.

:class:`_Kernel` translates the loop's statements (assignments, ``if``, nested
loops, grad's tape pushes and pops, rows of lists); :func:`.planner.plan` types
the loop's names, picks the kernel's inputs and outputs and assembles its source
around them.
"""

from __future__ import annotations

import itertools
from typing import Any, Dict, List, Set, Tuple

import gast

from .exprs import _CALLS, _Exprs
from .tapes import is_pop, is_push
from .trees import Refuse, _conv, _el, _leaves, _same
from .ufuncs import LOOPED

#: the most kernel lines one loop may become
MAX_LINES = 6000


class _Kernel(_Exprs):
    """Translates one loop into kernel source."""

    def __init__(self, x64: bool, tape: Any = None, role: str = "") -> None:
        super().__init__(x64)
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

    def emit(self, line: str) -> None:
        self.lines.append(line)
        if len(self.lines) > MAX_LINES:
            raise Refuse("too many elements for one kernel")

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
