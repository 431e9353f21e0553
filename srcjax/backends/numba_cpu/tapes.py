"""grad's tape between a forward loop and its reverse loop, as typed stacks.

Reverse mode through a loop (``transforms/reverse``) writes a *tape*: a local
list ``T = []``; the forward loop pushes each value before overwriting it
(``T.append(x)``) and the reverse loop pops them back (``x = T.pop()``). A
Python list cannot live in a Numba kernel, so a forward loop and its reverse
loop are lowered as a *pair* when

- ``T`` is bound once, to ``[]``, at the function's top level, and is read
  only by the pushes of one top-level loop and the pops of a later one (and
  released with ``T = None``);
- every push is a top-level statement ``T.append(name)`` of the forward body
  and every pop a top-level ``name = T.pop()`` of the reverse body, the pops
  naming the pushes in mirrored order (the pairs are the same every trip).

Each push site then has a fixed place in one trip's record, and the record is
a row of one flat stack per dtype (``float32`` leaves in one array, ...): the
forward kernel writes row ``trip`` (growing the stack geometrically when the
trip count is not known before, a ``while``), the reverse kernel reads the rows
back from the last. Sites whose value the reverse kernel never reads (``k1``
popped and overwritten) take no room; a site whose every assignment in the
forward body is one literal (``dt = 0.001``) takes none either: the reverse
kernel writes the literal. A name whose value before the loop is grad's
forward declaration ``x = None`` is pushed as zeros in the first trip (its
restore is dead).

When the reverse kernel cannot run after the forward one did, :func:`relist`
source (emitted into the forward kernel's file, plain Python) rebuilds the
list the NumPy forward loop would have left (where the reverse loop reads a
value for its type only, zeros of that type; where it reads nothing, None),
and the NumPy reverse loop runs on it: the same results.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Set, Tuple

import gast
import numpy as np

__all__ = ["Site", "Tape", "find_pairs", "is_push", "is_pop", "like_only_args"]

#: helpers whose operand at this position is read for its type only
#: (the cotangent of a container's item: ``like`` fills holes; the shape of ``x``)
_LIKE_ARGS = {"ad.unstack_like": 2, "ad.part": 2, "ad.index_adjoint": 1}


def like_only_args(call: Any) -> Optional[int]:
    """The position of the argument of ``call`` read for its type only, or None."""
    if isinstance(call, gast.Call):
        f = call.func
        if (
            isinstance(f, gast.Attribute)
            and isinstance(f.value, gast.Name)
            and f"{f.value.id}.{f.attr}" in _LIKE_ARGS
        ):
            return _LIKE_ARGS[f"{f.value.id}.{f.attr}"]
    return None


def is_push(s: Any, tape: str) -> Optional[str]:
    """``x`` of the statement ``tape.append(x)``, else None."""
    if (
        isinstance(s, gast.Expr)
        and isinstance(s.value, gast.Call)
        and isinstance(s.value.func, gast.Attribute)
        and s.value.func.attr == "append"
        and isinstance(s.value.func.value, gast.Name)
        and s.value.func.value.id == tape
        and len(s.value.args) == 1
        and not s.value.keywords
        and isinstance(s.value.args[0], gast.Name)
    ):
        return s.value.args[0].id
    return None


def is_pop(s: Any, tape: str) -> Optional[str]:
    """``x`` of the statement ``x = tape.pop()``, else None."""
    if (
        isinstance(s, gast.Assign)
        and len(s.targets) == 1
        and isinstance(s.targets[0], gast.Name)
        and isinstance(s.value, gast.Call)
        and isinstance(s.value.func, gast.Attribute)
        and s.value.func.attr == "pop"
        and isinstance(s.value.func.value, gast.Name)
        and s.value.func.value.id == tape
        and not s.value.args
        and not s.value.keywords
    ):
        return s.targets[0].id
    return None


class Site:
    """One push site: ``name`` (popped into ``target``), ``kind`` (``"store"``: kept on the stacks;
    ``"const"``: the literal ``value``; ``"type"``: read by the NumPy reverse
    loop for its type only; ``"dead"``: never read), whether the name may be
    None before the loop (``maybe_none``), and, once the forward kernel is
    planned, its type tree and its leaves' offsets in a trip's row."""

    def __init__(self, name: str, kind: str, value: Any = None) -> None:
        self.name = name
        #: the name the reverse loop pops the value into (grad may rename it)
        self.target = name
        self.kind = kind
        self.value = value
        self.maybe_none = False
        self.tree: Any = None
        self.aval: Any = None
        #: (dtype, offset) of each element of each leaf, C order
        self.slots: List[Tuple[str, int]] = []


class Tape:
    """A pair's tape: its name, push sites (in push order) and row widths."""

    def __init__(self, name: str, sites: List[Site]) -> None:
        self.name = name
        self.sites = sites
        self.widths: Dict[str, int] = {}

    def dtypes(self) -> List[str]:
        return sorted(self.widths)

    def layout(self, trees: Dict[str, Any], leaves: Any) -> None:
        """Give each stored site its slots, from the forward kernel's type trees."""
        self.widths = {}
        for s in self.sites:
            s.tree = trees[s.name]
            if s.kind != "store":
                continue
            s.slots = []
            for _, lt, _ in leaves(s.name, s.tree, s.name):
                dt, shape = lt[1], lt[2]
                for _ in range(int(np.prod(shape)) if shape else 1):
                    s.slots.append((dt, self.widths.get(dt, 0)))
                    self.widths[dt] = self.widths.get(dt, 0) + 1


def _top_names(stmts: List[Any], ctx: type) -> Set[str]:
    out = set()
    for s in stmts:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, ctx):
                out.add(n.id)
    return out


def _tape_uses(stmt: Any, tape: str) -> int:
    return sum(isinstance(n, gast.Name) and n.id == tape for n in gast.walk(stmt))


def find_pairs(body: List[Any]) -> List[Tuple[int, int, str]]:
    """``(forward index, reverse index, tape)`` of each loop pair of ``body``
    (a function's top-level statements) whose tape can become stacks: loops
    that only push and loops that only pop match like parentheses (grad of
    two loops in a row: F1 F2 R2 R1, one tape); a pair whose pushes and pops
    are all top-level statements, as many in each, is a candidate. Other
    pushing or popping loops keep the list (balanced between a pair's loops,
    so a compiled pair leaves it as NumPy would)."""
    pairs = []
    for i, s in enumerate(body):
        if not (
            isinstance(s, gast.Assign)
            and len(s.targets) == 1
            and isinstance(s.targets[0], gast.Name)
            and isinstance(s.value, gast.List)
            and not s.value.elts
        ):
            continue
        tape = s.targets[0].id
        found: List[Tuple[int, int, str]] = []
        opened: List[Tuple[int, int]] = []  # (index, top-level pushes or -1)
        ok, released = True, False
        for j, t in enumerate(body):
            if j == i or not _tape_uses(t, tape):
                continue
            if released:
                ok = False
            elif isinstance(t, gast.Assign) and is_pop(t, tape) is None:
                # `tape = None` (a release) after the last loop, nothing else
                released = isinstance(t.value, gast.Constant) and t.value.value is None
                ok = ok and released and not opened and len(t.targets) == 1
            elif isinstance(t, (gast.For, gast.While)) and not t.orelse:
                uses = _tape_uses(t, tape)
                pushes = _calls(t, tape, "append")
                pops = _calls(t, tape, "pop")
                top_push = sum(is_push(x, tape) is not None for x in t.body)
                top_pop = sum(is_pop(x, tape) is not None for x in t.body)
                if pushes == uses and j > i:
                    opened.append((j, top_push if top_push == uses else -1))
                elif pops == uses and opened:
                    f, n = opened.pop()
                    if n >= 0 and top_pop == uses == n:
                        found.append((f, j, tape))
                else:
                    ok = False
            else:
                ok = False
        if ok and not opened:
            pairs.extend(found)
    return pairs


def _calls(stmt: Any, tape: str, attr: str) -> int:
    """How many ``tape.<attr>(...)`` calls ``stmt`` makes."""
    return sum(
        isinstance(n, gast.Call)
        and isinstance(n.func, gast.Attribute)
        and n.func.attr == attr
        and isinstance(n.func.value, gast.Name)
        and n.func.value.id == tape
        for n in gast.walk(stmt)
    )


def sites(fwd: Any, rev: Any, tape: str, after_rev: List[Any]) -> List[Site]:
    """The push sites of a pair, or a reason (str) why it is none."""
    pushes = [n for n in (is_push(s, tape) for s in fwd.body) if n is not None]
    pops = [n for n in (is_pop(s, tape) for s in rev.body) if n is not None]
    if len(pops) != len(pushes):
        return "the reverse loop's pops do not mirror the forward loop's pushes"  # type: ignore[return-value]
    value_loads, all_loads = set(), set()
    for s in rev.body:
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                all_loads.add(n.id)
        value_loads |= _value_loads(s)
    read_after = _top_names(after_rev, gast.Load)
    consts: Dict[str, Any] = {}
    for s in gast.walk(fwd):
        if isinstance(s, (gast.For, gast.AugAssign, gast.AnnAssign, gast.NamedExpr)):
            for n in gast.walk(s.target):
                if isinstance(n, gast.Name):
                    consts[n.id] = None
        if isinstance(s, gast.Assign):
            for t in s.targets:
                for n in gast.walk(t):
                    if isinstance(n, gast.Name):
                        v = s.value
                        c = (
                            (type(v.value), v.value)
                            if isinstance(v, gast.Constant)
                            and type(v.value) in (int, float, bool)
                            and s in fwd.body
                            and isinstance(t, gast.Name)
                            else None
                        )
                        consts[n.id] = c if consts.get(n.id, c) == c else None
    out = []
    for name, target in zip(pushes, pops[::-1]):
        if target in value_loads or target in read_after:
            c = consts.get(name)
            site = Site(name, "const", c[1]) if c is not None else Site(name, "store")
        elif target in all_loads:
            site = Site(name, "type")
        else:
            site = Site(name, "dead")
        site.target = target
        out.append(site)
    return out


def _value_loads(stmt: Any) -> Set[str]:
    """Names ``stmt`` reads for their values (not a helper's ``like`` operand)."""
    skip: Set[int] = set()
    out: Set[str] = set()
    for n in gast.walk(stmt):
        k = like_only_args(n)
        if k is not None and len(n.args) > k and isinstance(n.args[k], gast.Name):
            skip.add(id(n.args[k]))
    for n in gast.walk(stmt):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load) and id(n) not in skip:
            out.add(n.id)
    return out


value_loads = _value_loads


# ---------------------------------------------------------------------------- relist
def relist_source(tape: Tape, var: str) -> List[str]:
    """``def relist(t)``: the list the NumPy forward loop would have built, from
    the forward kernel's tape ``t`` (trips, then one stack per dtype)."""
    lines = ["", "", f"def relist({var}):", f"    trips = {var}[0]"]
    for k, dt in enumerate(tape.dtypes()):
        lines.append(f"    s_{dt} = {var}[{k + 1}]")
    lines += ["    out = []", "    for j in range(trips):"]
    for dt in tape.dtypes():
        lines.append(f"        b_{dt} = j * {tape.widths[dt]}")
    for s in tape.sites:
        if s.kind == "dead":
            e = "None"
        elif s.kind == "const":
            e = repr(s.value)
        else:
            slots = iter(s.slots)
            e = _py(s.aval, s.kind, slots)
        if s.maybe_none and s.kind != "dead":
            e = f"None if j == 0 else {e}"
        lines.append(f"        out.append({e})")
    lines.append("    return out")
    return lines


def _py(aval: Any, kind: str, slots: Any) -> str:
    """The Python expression of a value of ``aval`` (``kind`` "type": zeros,
    a stand-in of the same type; else read from its slots)."""
    if isinstance(aval, (list, tuple)):
        items = [_py(a, kind, slots) for a in aval]
        if isinstance(aval, list):
            return "[" + ", ".join(items) + "]"
        return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
    shape = tuple(aval.shape)
    ptype = getattr(aval, "ptype", None)
    if ptype is not None:  # a weak Python scalar
        if kind == "type":
            return {bool: "False", int: "0"}.get(ptype, "0.0")
        dt, off = next(slots)
        return f"{ptype.__name__}(s_{dt}[b_{dt} + {off}])"
    dt = np.dtype(aval.dtype).name
    if kind == "type":
        return f"np.zeros({shape!r}, np.{dt})" if shape else f"np.{dt}(0)"
    if not shape:
        sdt, off = next(slots)
        return f"np.{dt}(s_{sdt}[b_{sdt} + {off}])"
    size = int(np.prod(shape))
    first = None
    for _ in range(size):
        sdt, off = next(slots)
        first = (sdt, off) if first is None else first
    sdt, off = first
    return f"s_{sdt}[b_{sdt} + {off}:b_{sdt} + {off + size}].reshape({shape!r}).copy()"
