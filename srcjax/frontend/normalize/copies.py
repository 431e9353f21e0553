"""Plain copies of a list or dict (``b = items``) followed, along some path of
the function, by an in-place change of that list (``items.append(x)``,
``b[i] = v``, ...): the decision per copy (:func:`plain_copies`).

srcjax treats lists and dicts as values, and reverse mode reads each name's
value after the forward sweep (a list's length, for the adjoint of its
items): a name still holding a list that grew later reads the grown one (grad
of ``b = items; for v in b: ...; items.append(x)`` in a loop gave 6 for
Python's 7). A copy after which the list is changed is therefore made a
snapshot (``b = ad.shallow_copy(items)``), which is Python's value wherever no
read through one side of the copy can see a change made through the other.
Where one can (``b = items`` before a loop that reads ``b`` after an earlier
trip's ``items.append(x)``), the function is refused at the line of that read.

The analysis is a forward dataflow over the statements, path by path (a fact
is one copy's two sides: the names holding the list through the copied name,
through the new one, what each side changed and whether it escaped), iterated
to a fixpoint around loops. Calls and uses it cannot follow count as changes
and escapes (so they can only make it refuse, never snapshot wrongly).
"""

from __future__ import annotations

from typing import Any, Callable, Dict, FrozenSet, List, Optional, Set, Tuple

import gast

from .analyses import _MUTATORS, _walk_own, parents_unless_captured

#: methods of a list/dict that only read it
_READERS = frozenset({"copy", "index", "count", "get"})
#: builtins that only read a list or dict they are given (and keep no reference)
_PURE_BUILTINS = frozenset(
    {"len", "sum", "list", "tuple", "sorted", "min", "max", "print", "any", "all", "dict"}
    | {"float", "int", "abs", "isinstance", "str", "repr", "set", "bool"}
)
_CONTAINERS = ("list", "dict", "seq")
#: builtins whose iterator reads a list lazily: pure where a for loop consumes it
_LAZY = frozenset({"enumerate", "zip", "reversed", "range", "iter"})

# a fact: (site, names holding the list through the copied name (side 1), through
# the new name (side 2), the change made through side 1 and through side 2 (0:
# none, 1: only appends, which generated code makes in place too, 2: any), side 1
# escaped (a parameter: the caller holds it), side 2 escaped)
_Fact = Tuple[int, FrozenSet[str], FrozenSet[str], int, int, bool, bool]


class _Flow:
    def __init__(
        self, sites: Dict[int, tuple], pure_arg: Callable[[Any, int], bool], kinds: Dict[str, str]
    ) -> None:
        self.sites = sites  # id(Assign) -> (index, new name, copied name, escaped at start)
        self.kinds = kinds  # source name -> "list" / "dict" / "seq" (container kinds)
        self.pure_arg = pure_arg
        self.changed: Set[int] = set()
        self.appended: Dict[int, Any] = {}  # site -> an append (in place at run time)
        self.seen: Dict[int, Any] = {}  # site index -> the node of a read that sees
        self.measured: Dict[int, Any] = {}  # site -> a len() of the new side that sees
        self.used2: Set[int] = set()  # sites whose new side is used beyond len()

    # -- events ------------------------------------------------------------
    def read(self, state: Set[_Fact], n: str, node: Any, only_len: bool = False) -> None:
        for f in state:
            if n in f[2] and not only_len:
                self.used2.add(f[0])
            if n in f[1] and f[4]:
                self.seen.setdefault(f[0], node)
            elif n in f[2] and f[3]:
                if only_len and f[3] == 1:  # (len(b) after items.append(v): see keep)
                    self.measured.setdefault(f[0], node)
                else:
                    self.seen.setdefault(f[0], node)

    def change(self, state: Set[_Fact], n: str, node: Any, level: int = 2) -> Set[_Fact]:
        """``level``: 1 for a change generated code makes in place too (``append``,
        ``extend``/``+=`` of a display), 2 for one it makes a new list (``insert``,
        ``pop``, ``l[i] = v``, ``del``, a helper's)."""
        self.read(state, n, node)  # (a change reads the list: b.append(v) keeps a's items)
        out = set()
        for f in state:
            s, g1, g2, c1, c2, e1, e2 = f
            if n in g1:
                if e2:
                    self.seen.setdefault(s, node)
                self.changed.add(s)
                if level == 1:
                    self.appended.setdefault(s, node)
                f = (s, g1, g2, max(c1, level), c2, e1, e2)
            elif n in g2:
                if e1:
                    self.seen.setdefault(s, node)
                self.changed.add(s)
                if level == 1:
                    self.appended.setdefault(s, node)
                f = (s, g1, g2, c1, max(c2, level), e1, e2)
            out.add(f)
        return out

    def escape(self, state: Set[_Fact], n: str, node: Any) -> Set[_Fact]:
        self.read(state, n, node)
        return {(f[0], f[1], f[2], f[3], f[4], f[5] or n in f[1], f[6] or n in f[2]) for f in state}

    def bind(self, state: Set[_Fact], n: str) -> Set[_Fact]:
        out = set()
        for f in state:
            g1, g2 = f[1] - {n}, f[2] - {n}
            if g1 or g2:
                out.add((f[0], g1, g2) + f[3:])
        return out

    def copy(self, state: Set[_Fact], t: str, v: str) -> Set[_Fact]:
        out = set()
        for f in self.bind(state, t):
            g1 = f[1] | {t} if v in f[1] else f[1]
            g2 = f[2] | {t} if v in f[2] else f[2]
            out.add((f[0], g1, g2) + f[3:])
        return out

    # -- expressions -------------------------------------------------------
    def expr(self, state: Set[_Fact], e: Any, pure: bool = False) -> Set[_Fact]:
        """``state`` after evaluating ``e``; ``pure``: ``e``'s value is only read."""
        if e is None:
            return state
        if isinstance(e, gast.Name):
            if isinstance(e.ctx, gast.Load):
                if pure:
                    self.read(state, e.id, e)
                    return state
                return self.escape(state, e.id, e)
            return self.bind(state, e.id)
        if isinstance(e, gast.Call):
            return self.call(state, e, pure)
        if isinstance(e, (gast.Lambda, gast.FunctionDef)):  # a closure may keep any name
            for n in gast.walk(e):
                if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                    state = self.escape(state, n.id, n)
            return state
        if isinstance(e, (gast.ListComp, gast.SetComp, gast.GeneratorExp, gast.DictComp)):
            for g in e.generators:
                state = self.expr(state, g.iter, pure=True)
                for c in g.ifs:
                    state = self.expr(state, c, pure=True)
            parts = [e.key, e.value] if isinstance(e, gast.DictComp) else [e.elt]
            for p in parts:
                state = self.expr(state, p)
            return state
        if isinstance(e, gast.Subscript):
            state = self.expr(state, e.slice, pure=True)
            return self.expr(state, e.value, pure=True)
        if isinstance(e, gast.Attribute):
            return self.expr(state, e.value, pure=True)
        if isinstance(e, (gast.BinOp, gast.Compare, gast.UnaryOp, gast.JoinedStr)):
            kids = list(gast.iter_child_nodes(e))
        elif isinstance(e, gast.FormattedValue):
            kids = [e.value]
        elif isinstance(e, gast.Starred):
            return self.expr(state, e.value, pure=pure)
        else:  # displays, `b or c`, `b if t else c`: the value may be the list itself
            for k in gast.iter_child_nodes(e):
                if isinstance(k, gast.expr):
                    state = self.expr(state, k)
            return state
        for k in kids:
            if isinstance(k, gast.expr):
                state = self.expr(state, k, pure=True)
        return state

    def _known(self, n: str) -> bool:
        """Whether ``n`` is known to hold a list or dict (its kind, or one of a
        copy's names whose source's kind is known)."""
        if self.kinds.get(n) in _CONTAINERS:
            return True
        return any(
            n in (t, src) and self.kinds.get(src) in _CONTAINERS
            for _, t, src, _ in self.sites.values()
        )

    def call(self, state: Set[_Fact], e: Any, pure: bool = False) -> Set[_Fact]:
        f = e.func
        if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
            holder = any(f.value.id in g for fact in state for g in fact[1:3])
            if holder or f.attr in _MUTATORS:
                for a in list(e.args) + [k.value for k in e.keywords]:
                    state = self.expr(state, a)  # (stored in the list or the dict)
                if f.attr in _MUTATORS:
                    whole = f.attr == "extend" and e.args and isinstance(e.args[0], gast.List)
                    level = 1 if f.attr == "append" or whole else 2
                    return self.change(state, f.value.id, e, level)
                if f.attr in _READERS or (pure and f.attr in ("keys", "values", "items")):
                    self.read(state, f.value.id, e)
                    return state
                return self.escape(state, f.value.id, e)  # (d.items(): a live view)
        if not isinstance(f, gast.Name):
            state = self.expr(state, f, pure=True)
        args = list(e.args) + [k.value for k in e.keywords]
        for i, a in enumerate(args):
            if isinstance(a, gast.Starred):  # f(*b): b's items, read now
                state = self.expr(state, a.value, pure=True)
                continue
            arg = a
            if not isinstance(arg, gast.Name):
                state = self.expr(state, a)
                continue
            if self.pure_arg(e, i if i < len(e.args) else -1) or not self._known(arg.id):
                # (a name not known to hold a list or dict - a helper's parameter,
                # mostly an array - is changed only by the syntax `change` counts:
                # a call of a function given it is a read)
                measure = isinstance(f, gast.Name) and f.id == "len" and len(args) == 1
                self.read(state, arg.id, arg, only_len=measure)
            else:  # (a helper may change it in place or keep it)
                state = self.escape(state, arg.id, arg)
                state = self.change(state, arg.id, arg)
        return state

    # -- statements --------------------------------------------------------
    def target(self, state: Set[_Fact], t: Any) -> Set[_Fact]:
        if isinstance(t, gast.Name):
            return self.bind(state, t.id)
        if isinstance(t, (gast.Tuple, gast.List)):
            for el in t.elts:
                state = self.target(state, el)
            return state
        if isinstance(t, gast.Starred):
            return self.target(state, t.value)
        if isinstance(t, gast.Subscript):
            state = self.expr(state, t.slice, pure=True)
            if isinstance(t.value, gast.Name):
                return self.change(state, t.value.id, t)
            return self.expr(state, t.value, pure=True)
        if isinstance(t, gast.Attribute):
            return self.expr(state, t.value, pure=True)
        return state

    def block(self, state: Set[_Fact], body: List[Any], jumps: Dict[str, Set[_Fact]]):
        """``state`` after ``body`` (None where no path goes on); the states at a
        ``break``/``continue`` are added to ``jumps``."""
        for s in body:
            if state is None:
                return None
            state = self.stmt(set(state), s, jumps)
        return state

    def stmt(self, state: Set[_Fact], s: Any, jumps: Dict[str, Set[_Fact]]):
        if isinstance(s, (gast.Assign, gast.AnnAssign)):
            targets = s.targets if isinstance(s, gast.Assign) else [s.target]
            v = s.value
            site = self.sites.get(id(s))
            if site is not None or (
                len(targets) == 1 and isinstance(targets[0], gast.Name) and isinstance(v, gast.Name)
            ):
                if isinstance(v, gast.Name):
                    self.read(state, v.id, v)
                    old = v.id
                else:  # b = ident(items): a helper returning its parameter
                    state = self.expr(state, v)
                    old = site[2]
                state = self.copy(state, targets[0].id, old)
                if site is not None:
                    index, new, old, escaped = site
                    side = {old}
                    for f in state:  # (the names holding it already: the old side)
                        if old in f[1] or old in f[2]:
                            side |= f[1] | f[2]
                    side.discard(new)
                    state.add((index, frozenset(side), frozenset({new}), 0, 0, escaped, False))
                return state
            state = self.expr(state, v)
            for t in targets:
                state = self.target(state, t)
            return state
        if isinstance(s, gast.AugAssign):
            state = self.expr(state, s.value, pure=True)
            t = s.target
            if isinstance(t, gast.Name) and self.kinds.get(t.id) in ("list", "dict", "seq"):
                # (l += xs: extends l in place)
                whole = isinstance(s.op, gast.Add) and isinstance(s.value, gast.List)
                return self.change(state, t.id, s, 1 if whole else 2)
            return self.target(self.expr(state, t, pure=True), t)
        if isinstance(s, gast.Expr):
            return self.expr(state, s.value)
        if isinstance(s, gast.Delete):
            for t in s.targets:
                state = self.target(state, t)
            return state
        if isinstance(s, gast.Return):
            if s.value is not None:
                state = self.expr(state, s.value)
            return None
        if isinstance(s, gast.Raise):
            return None
        if isinstance(s, (gast.Break, gast.Continue)):
            key = "break" if isinstance(s, gast.Break) else "continue"
            jumps.setdefault(key, set()).update(state)
            return None
        if isinstance(s, gast.If):
            state = self.expr(state, s.test, pure=True)
            a = self.block(set(state), s.body, jumps)
            b = self.block(set(state), s.orelse, jumps)
            return None if a is None and b is None else (a or set()) | (b or set())
        if isinstance(s, (gast.For, gast.While)):
            return self.loop(state, s, jumps)
        if isinstance(s, gast.With):
            for item in s.items:
                state = self.expr(state, item.context_expr)
                if item.optional_vars is not None:
                    state = self.target(state, item.optional_vars)
            return self.block(state, s.body, jumps)
        if isinstance(s, gast.Try):
            after = self.block(set(state), s.body, jumps)
            into = state | (after or set())
            outs = [] if after is None else [self.block(after, s.orelse, jumps)]
            for h in s.handlers:
                hs = self.target(set(into), h.name) if h.name is not None else set(into)
                outs.append(self.block(hs, h.body, jumps))
            live = [o for o in outs if o is not None]
            state = set().union(*live) if live else None
            if s.finalbody:
                state = self.block(state if state is not None else set(into), s.finalbody, jumps)
            return state
        if isinstance(s, gast.FunctionDef):
            return self.expr(state, s)
        if isinstance(s, gast.Assert):
            return self.expr(state, s.test, pure=True)
        return state  # (pass, global, nonlocal, import)

    def loop(self, state: Set[_Fact], s: Any, jumps: Dict[str, Set[_Fact]]):
        if isinstance(s, gast.For):
            state = self.expr(state, s.iter, pure=True)
        head = set(state)
        while True:
            at = set(head)
            if isinstance(s, gast.While):
                at = self.expr(at, s.test, pure=True)
            inner: Dict[str, Set[_Fact]] = {}
            trip = at if isinstance(s, gast.While) else self.target(set(at), s.target)
            end = self.block(trip, s.body, inner)
            new = head | (end or set()) | inner.get("continue", set())
            if new == head:
                break
            head = new
        if isinstance(s, gast.While):
            head = self.expr(head, s.test, pure=True)
        out = self.block(set(head), s.orelse, jumps)
        breaks = inner.get("break")
        if breaks:
            out = (out or set()) | breaks
        return out


def plain_copies(
    fnode: Any,
    kinds: Dict[str, str],
    calls: Any,
) -> Tuple[List[Any], Optional[tuple]]:
    """The plain copies ``b = a`` of a list/dict in ``fnode`` (``kinds``: source
    name -> container kind) to make snapshots, and ``(read node, message,
    hint)`` for the first copy whose two names see each other's changes (None
    if none). ``calls`` (see :class:`Calls`) tells which arguments a call only
    reads and which one it may return."""
    params = {a.id for a in fnode.args.args + fnode.args.kwonlyargs}
    values: Dict[str, List[Any]] = {}  # name -> the values assigned to it (None: other)
    copies: List[Any] = []
    for n in _walk_own(fnode.body):
        if isinstance(n, (gast.Assign, gast.AnnAssign)) and n.value is not None:
            targets = n.targets if isinstance(n, gast.Assign) else [n.target]
            for t in targets:
                for m in gast.walk(t):
                    if isinstance(m, gast.Name) and isinstance(m.ctx, gast.Store):
                        values.setdefault(m.id, []).append(n.value if m is t else None)
            src = None
            if len(targets) == 1 and isinstance(targets[0], gast.Name):
                src = _copied(n.value, calls, lambda a: kinds.get(a) in _CONTAINERS or a in params)
            if src is not None:
                copies.append((n, src))
        elif isinstance(n, (gast.For, gast.comprehension, gast.withitem, gast.NamedExpr)):
            t = n.target if not isinstance(n, gast.withitem) else n.optional_vars
            for m in gast.walk(t) if t is not None else ():
                if isinstance(m, gast.Name):
                    values.setdefault(m.id, []).append(None)
    copies = sorted(
        (c for c in copies if c[1] in values or c[1] in params),
        key=lambda c: (c[0].lineno, c[0].col_offset),
    )
    if not copies:
        return [], None

    def fresh(name: str, seen: Set[str]) -> bool:
        """Whether every value ``name`` is given is a new list/dict (no other
        container or caller may hold it)."""
        if name in params:
            return False
        if name in seen:
            return True  # (a cycle of copies: fresh if the rest is)
        for v in values.get(name, [None]):
            if isinstance(v, gast.Name):
                if not fresh(v.id, seen | {name}):
                    return False
            elif not isinstance(v, (gast.List, gast.ListComp, gast.Dict, gast.DictComp)):
                if not (isinstance(v, gast.BinOp) or _builds_new(v)):
                    return False
        return True

    holders = {src for _, src in copies} | {n.targets[0].id for n, _ in copies}
    pairs = [
        (n.targets[0].id, n.value.id)
        for n in _walk_own(fnode.body)
        if isinstance(n, gast.Assign)
        and len(n.targets) == 1
        and isinstance(n.targets[0], gast.Name)
        and isinstance(n.value, gast.Name)
    ]
    size = 0
    while size != len(holders):  # (every name a chain of copies links to one)
        size = len(holders)
        holders |= {x for pair in pairs if set(pair) & holders for x in pair}
    if not _may_change(fnode, holders, kinds, calls):
        return [], None  # (no list a copy holds is ever changed: nothing to decide)
    sites = {
        id(n): (i, n.targets[0].id, src, not fresh(src, set())) for i, (n, src) in enumerate(copies)
    }
    flow = _Flow(sites, calls.pure_arg, kinds)
    flow.block(set(), fnode.body, {})
    for i, (n, old) in enumerate(copies):
        read = flow.seen.get(i)
        if read is None and i in flow.used2:
            read = flow.measured.get(i)
        if read is not None:
            new = n.targets[0].id
            return [], (
                read,
                f"`{new}` and `{old}` name the same list/dict here (`{new} = "
                f"{gast.unparse(n.value).strip()}` on line {n.lineno}), and a change made "
                "through one of them reaches this read through the other (in this trip of "
                "a loop or a later one); srcjax treats lists and dicts as values, so the "
                "change would be lost",
                f"use one name for the list, or copy it where it is taken: "
                f"`{new} = list({old})` (then `{new}` does not see later changes)",
            )
    # (a copy only measured after appends through the other name keeps Python's
    # alias: generated code appends in place, and reverse mode reads no list
    # through it, only the lengths it taped)
    # (a parameter not known to be a list or dict is never copied, a number's
    # copy would be an array: such a copy is refused where a list it holds is
    # appended to, which generated code does in place too)
    keep = set(flow.measured)
    for i, (n, old) in enumerate(copies):
        if kinds.get(old) in _CONTAINERS:
            continue
        keep.add(i)
        if i in flow.appended and i not in flow.measured:
            new = n.targets[0].id
            return [], (
                flow.appended[i],
                f"the list `{old}` is changed in place after its copy `{new} = "
                f"{gast.unparse(n.value).strip()}` (line {n.lineno}), and srcjax cannot tell "
                f"that `{old}` is a list there; srcjax treats lists as values, so reverse "
                f"mode would read `{new}` after the change",
                f"use one name for the list, or copy it: `{new} = list({old})`",
            )
    return [n for i, (n, _) in enumerate(copies) if i in flow.changed and i not in keep], None


def other_copies(fnode: Any, kinds: Dict[str, str], calls: Any) -> Optional[tuple]:
    """``(node, message, hint)`` for the first copy of a list or dict that is not
    a plain ``b = items`` - a tuple assignment ``b, k = items, 0`` or a
    conditional expression ``b = items if t else other`` - of a list changed in
    place in ``fnode`` (which :func:`plain_copies` does not decide: grad read
    such a ``b`` after the list grew, 6 for Python's 7), else None."""
    for n in _walk_own(fnode.body):
        if not isinstance(n, gast.Assign):
            continue
        pairs = []
        for t in n.targets:
            v = n.value
            if isinstance(t, (gast.Tuple, gast.List)) and isinstance(v, (gast.Tuple, gast.List)):
                pairs += list(zip(t.elts, v.elts)) if len(t.elts) == len(v.elts) else []
            elif isinstance(t, gast.Name) and isinstance(v, gast.IfExp):
                pairs += [(t, v.body), (t, v.orelse)]
        for t, v in pairs:
            if not (isinstance(t, gast.Name) and isinstance(v, gast.Name)):
                continue
            if kinds.get(v.id) in _CONTAINERS and _may_change(fnode, {t.id, v.id}, kinds, calls):
                return (
                    n,
                    f"`{t.id}` is given the list/dict `{v.id}` here, which is changed in "
                    "place later; srcjax treats lists and dicts as values and decides such "
                    "a shared list only for a plain copy on its own line",
                    f"copy it where it is taken: `{t.id} = list({v.id})`, or write "
                    f"`{t.id} = {v.id}` as its own statement",
                )
    return None


def _copied(v: Any, calls: Any, wanted: Callable[[str], bool]) -> Optional[str]:
    """The name (one ``wanted``) whose list ``v`` may be: ``items`` in ``items``
    or ``ident(items)`` (a helper returning its parameter); else None."""
    if isinstance(v, gast.Name):
        return v.id if wanted(v.id) else None
    if (
        isinstance(v, gast.Call)
        and isinstance(v.func, gast.Name)
        and any(isinstance(a, gast.Name) and wanted(a.id) for a in v.args)
    ):
        i = calls.returned_arg(v)
        if i is not None and i < len(v.args) and isinstance(v.args[i], gast.Name):
            return v.args[i].id if wanted(v.args[i].id) else None
    return None


def _may_change(fnode: Any, names: Set[str], kinds: Dict[str, str], calls: Any) -> bool:
    """Whether ``fnode`` may change in place a list one of ``names`` holds, as
    :class:`_Flow` counts changes: a method that changes it, ``l += ...``,
    ``l[i] = v``, ``del l[i]``, or a call it cannot follow given the name."""
    for n in _walk_own(fnode.body):
        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            if n.target.id in names and kinds.get(n.target.id) in _CONTAINERS:
                return True
        elif isinstance(n, gast.Subscript) and isinstance(n.ctx, (gast.Store, gast.Del)):
            if isinstance(n.value, gast.Name) and n.value.id in names:
                return True
        elif isinstance(n, gast.Call):
            f = n.func
            if isinstance(f, gast.Attribute) and isinstance(f.value, gast.Name):
                if f.attr in _MUTATORS and f.value.id in names:
                    return True
                if f.value.id in names or f.attr in _MUTATORS:
                    continue  # (its arguments are stored or read, not changed)
            args = list(n.args) + [k.value for k in n.keywords]
            for i, a in enumerate(args):
                if isinstance(a, gast.Name) and a.id in names and _known(a.id, kinds, names):
                    if not calls.pure_arg(n, i if i < len(n.args) else -1):
                        return True
    return False


def _known(n: str, kinds: Dict[str, str], names: Set[str]) -> bool:
    """Whether ``n`` (one of the copies' ``names``) may be known to hold a list or
    dict: its kind or that of a name linked to it by copies is a container's."""
    return kinds.get(n) in _CONTAINERS or any(kinds.get(m) in _CONTAINERS for m in names)


def _builds_new(v: Any) -> bool:
    return (
        isinstance(v, gast.Call)
        and isinstance(v.func, gast.Name)
        and v.func.id in ("list", "dict", "sorted")
    )


#: a function's code -> its parsed ``def`` (read only here; None: no source)
_SOURCES: Dict[Any, Any] = {}


class Calls:
    """What the calls of the function normalizer ``norm`` converts do with
    their arguments, for :func:`plain_copies`."""

    def __init__(self, norm: Any) -> None:
        self.norm = norm

    def _callee(self, call: Any) -> Any:
        try:
            status, obj = self.norm.resolve(call.func)
        except Exception:  # noqa: BLE001 - not resolvable: a call we cannot follow
            return None
        return obj if status == "found" else None

    def _source(self, obj: Any) -> Any:
        import inspect

        from ..source import get_source

        if not inspect.isfunction(obj):
            return None
        code = obj.__code__
        if code not in _SOURCES:
            try:
                _SOURCES[code] = get_source(obj).node
            except Exception:  # noqa: BLE001 - no source: not followed
                _SOURCES[code] = None
        return _SOURCES[code]

    def pure_arg(self, call: Any, i: int) -> bool:
        """Whether ``call`` only reads its ``i``-th argument (-1: a keyword): a
        builtin that only reads (``len``, ``sum``, a ``for`` over ``enumerate``),
        a NumPy/JAX function or a primitive (functional), a custom_jvp/vjp's
        function, or a user function or lambda whose parameter is only read
        (see :meth:`_only_read`: ``z * 2`` reads ``z``)."""
        if isinstance(call.func, gast.Lambda):  # (lambda z: z * 2)(x)
            return self._pure_item(call.func, i)
        items = self._listed_functions(call.func)
        if items is not None:  # acts[i](x): each function the list holds
            return all(self._pure_item(f, i) for f in items)
        return self._pure_obj(self._callee(call), i)

    def _listed_functions(self, func: Any) -> Optional[List[Any]]:
        """The items of ``acts`` in a call ``acts[i](...)`` where ``acts`` is bound
        once, to a list or tuple display (of functions: see
        ``FunctionsMixin.call_list_item``), else None."""
        if not (isinstance(func, gast.Subscript) and isinstance(func.value, gast.Name)):
            return None
        name = func.value.id
        found = [
            n.value
            for n in _walk_own(self.norm.src.node.body)
            if isinstance(n, gast.Assign)
            and any(isinstance(t, gast.Name) and t.id == name for t in n.targets)
        ]
        if len(found) != 1 or not isinstance(found[0], (gast.List, gast.Tuple)):
            return None
        return list(found[0].elts)

    def _resolve_here(self, f: Any) -> Any:
        try:
            status, obj = self.norm.resolve(f)
        except Exception:  # noqa: BLE001 - not resolvable: not followed
            return None
        return obj if status == "found" else None

    def _pure_item(self, f: Any, i: int, depth: int = 0) -> bool:
        """Whether the function ``f`` (an item of a display, a lambda called
        where it is written) only reads its ``i``-th argument: a lambda's
        parameter, a known function's."""
        if isinstance(f, gast.Lambda):
            params = f.args.args
            if f.args.vararg is not None or not 0 <= i < len(params):
                return False
            from .. import nodes as N
            from ..source import _lambda_to_def

            fdef = _lambda_to_def(N.clone(f))
            return self._only_read(fdef, params[i].id, self._resolve_here, depth)
        if not isinstance(f, (gast.Name, gast.Attribute)):
            return False
        return self._pure_obj(self._resolve_here(f), i, depth)

    def _pure_obj(self, obj: Any, i: int, depth: int = 0) -> bool:
        import builtins

        if type(obj).__module__ == "srcjax.custom" and hasattr(obj, "fun"):
            obj = obj.fun  # (custom_jvp/vjp: its function; its rules are pure, as in JAX)
        obj = getattr(obj, "__srcjax_buffers_of__", obj)  # (_array.on_buffers: fn's)
        if obj is None or depth > 4:
            return False
        name = getattr(obj, "__name__", None) or ""
        if getattr(builtins, name, None) is obj:
            return name in _PURE_BUILTINS or name in _LAZY
        module = getattr(obj, "__module__", None) or ""
        if module.split(".")[0] in ("numpy", "jax", "jaxlib", "math", "srcjax"):
            return True
        fdef = self._source(obj) if i >= 0 else None
        if fdef is None or fdef.args.vararg is not None or i >= len(fdef.args.args):
            return False
        scope = dict(getattr(obj, "__globals__", {}))
        for n in gast.walk(fdef.args):  # (its own names hide the globals)
            if isinstance(n, gast.Name):
                scope[n.id] = None
        for n in _walk_own(fdef.body):
            if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load):
                scope[n.id] = None
        return self._only_read(fdef, fdef.args.args[i].id, lambda f: _lookup(f, scope), depth)

    def _only_read(self, fdef: Any, p: str, resolve: Callable[[Any], Any], depth: int) -> bool:
        """Whether ``fdef`` only reads its parameter ``p`` and keeps no reference
        to it past the call: every use iterated, indexed, measured, an operand
        of arithmetic or a comparison (``z * 2``: a new value), an attribute read
        or a method call that does not change a list or dict (``z.sum()``), or an
        argument a function ``resolve`` finds only reads (NumPy's, a pure
        builtin's, a user function's, followed). Never stored, returned,
        closed over, changed in place (``p += ...``, ``p[i] = v``)."""
        from .analyses import only_read_in_place

        if only_read_in_place(fdef, p):
            return True
        parents = parents_unless_captured(fdef, p)
        if parents is None:
            return False
        for node in _walk_own(fdef.body):
            if not (isinstance(node, gast.Name) and node.id == p):
                continue
            up = parents.get(id(node))
            if isinstance(node.ctx, gast.Store) and not isinstance(up, gast.AugAssign):
                continue  # (p rebound: its later uses are checked the same way)
            if not isinstance(node.ctx, gast.Load) or not self._read_use(
                node, up, parents, resolve, depth
            ):
                return False
        return True

    def _read_use(
        self, node: Any, up: Any, parents: Dict[int, Any], resolve: Any, depth: int
    ) -> bool:
        """Whether the use ``node`` (a parameter's name; ``up``: its parent) only
        reads the value and keeps no reference to it (see :meth:`_only_read`)."""
        if isinstance(up, gast.For) and up.iter is node:
            return True
        if isinstance(up, (gast.BinOp, gast.UnaryOp, gast.Compare)):
            return True
        if isinstance(up, (gast.Subscript, gast.Attribute)) and up.value is node:
            if not isinstance(up.ctx, gast.Load):
                return False
            if isinstance(up, gast.Subscript):
                return True
            return up.attr not in _MUTATORS and up.attr not in ("keys", "values", "items")
        if isinstance(up, gast.keyword):
            up, i = parents.get(id(up)), -1
        elif isinstance(up, gast.Call) and node in up.args:
            i = up.args.index(node)
        else:
            return False
        if not isinstance(up, gast.Call) or up.func is node:
            return False
        if isinstance(up.func, gast.Lambda):
            return self._pure_item(up.func, i, depth + 1)
        return self._pure_obj(resolve(up.func), i, depth + 1)

    def returned_arg(self, call: Any) -> Optional[int]:
        """The position of the parameter a user function's ``return p``
        returns as it is (its value is then the caller's list), else None."""
        fdef = self._source(self._callee(call))
        if fdef is None:
            return None
        params = [a.id for a in fdef.args.args]
        for n in _walk_own(fdef.body):
            if isinstance(n, gast.Return) and isinstance(n.value, gast.Name):
                if n.value.id in params:
                    return params.index(n.value.id)
        return None


def _lookup(f: Any, scope: Dict[str, Any]) -> Any:
    """The object a name/attribute chain ``f`` names in a function's globals
    ``scope`` (or the builtins), else None."""
    import builtins
    import inspect

    if isinstance(f, gast.Name):
        return scope.get(f.id, getattr(builtins, f.id, None))
    if isinstance(f, gast.Attribute):
        base = _lookup(f.value, scope)
        if inspect.ismodule(base) or inspect.isclass(base):
            return getattr(base, f.attr, None)
    return None
