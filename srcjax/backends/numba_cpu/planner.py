"""One jitted loop planned as a Numba kernel: the types of the names it reads
and writes (jit's abstract values, or inferred locally for a tape pair), its
inputs and outputs, and its source assembled around the statements
:class:`.kernel._Kernel` translates.

:func:`plan` returns the kernel's source (``kernel``, compiled with Numba, and
``box``, plain Python that gives strong scalar results their NumPy dtype), its
inputs with their types, and its outputs.
"""

from __future__ import annotations

import itertools
from typing import Any, Dict, List, Set, Tuple

import gast

from ...frontend import nodes as N
from .kernel import _append_to, _Kernel
from .tapes import _top_names as _names
from .tapes import is_push, relist_source, value_loads
from .trees import Refuse, _conv, _el, _leaves, _same, tree

__all__ = ["plan"]


def _collect(loop: Any, kernel: _Kernel) -> None:
    """The types of every name the loop reads or writes, from jit's avals."""
    skip = {"jnp", "ad"}  # namespaces of the calls the kernel knows
    if kernel.tape is not None:
        skip.add(kernel.tape.name)
    pending: List[Any] = []
    for n in gast.walk(loop):
        if isinstance(n, gast.For):
            if isinstance(n.target, gast.Name):
                kernel.trees[n.target.id] = ("a", "int64", (), False)
                kernel.counters.add(n.target.id)
        avals_in = getattr(n, "sj_avals_in", None)
        if avals_in:
            for name, av in avals_in.items():
                if name in skip:
                    continue
                if av is None and name == "slice":
                    continue  # (the builtin: an ``.at`` update's ``slice(1, None, None)``)
                if av is None:
                    if kernel.tape is not None:
                        continue  # (typed below, from the loop's own statements)
                    raise Refuse(f"{name} has no abstract value")
                kernel.note(name, av)
        if isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name):
            av = getattr(n, "sj_aval", None)
            if av is None:
                if kernel.tape is None:
                    raise Refuse(f"{n.targets[0].id} has no abstract value")
                pending.append(n)
                continue
            kernel.note(n.targets[0].id, av)
            kernel.avals[n.targets[0].id] = av
    _infer_local(kernel, pending)
    for n in gast.walk(loop):
        # a range bound jit knows no abstract value of (a function's int
        # argument, ``ad.scan_length``'s count): an int64 argument; anything
        # else fails the call, and the loop runs in NumPy
        if isinstance(n, gast.Call) and gast.unparse(n.func).strip() == "range":
            for a in n.args:
                if isinstance(a, gast.Name) and a.id not in kernel.trees:
                    kernel.trees[a.id] = ("a", "int64", (), True)
                    kernel.bounds.add(a.id)


def _const_range(it: Any) -> Any:
    """The ``range`` of ``range(...)`` or ``reversed(range(...))`` of constant
    integers (the values a counter takes), else None."""
    args = N.range_args(it)
    if args is None or not all(isinstance(a, gast.Constant) and type(a.value) is int for a in args):
        return None
    return range(*(a.value for a in args))


def _row_reads(loop: Any, kernel: _Kernel) -> Dict[str, int]:
    """The names the loop reads only by row, ``xs[k]`` (``k`` the counter of a
    ``for`` over a constant range from 0 up, never assigned otherwise), and
    never writes: name -> the largest row index read. Such an array is passed
    to the kernel whole and indexed there, so its row's size counts, not its
    own (an array used whole keeps :data:`.trees.MAX_ELEMENTS`)."""
    spans: Dict[str, Any] = {}
    for n in gast.walk(loop):
        if isinstance(n, gast.For) and isinstance(n.target, gast.Name):
            r = _const_range(n.iter)
            old = spans.get(n.target.id, ())
            spans[n.target.id] = None if r is None or old is None else (*old, r)
    targets = {id(n.target) for n in gast.walk(loop) if isinstance(n, gast.For)}
    for n in gast.walk(loop):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store) and id(n) not in targets:
            spans[n.id] = None  # (a counter assigned in the body)
    top: Dict[str, int] = {}
    for c, rs in spans.items():
        if rs is not None and all(not r or min(r) >= 0 for r in rs):
            top[c] = max((max(r) for r in rs if r), default=-1)
    by_row: Dict[str, int] = {}
    bases = set()
    for n in gast.walk(loop):
        if isinstance(n, gast.Subscript) and isinstance(n.value, gast.Name):
            first = n.slice.elts[0] if isinstance(n.slice, gast.Tuple) else n.slice
            if isinstance(first, gast.Name) and first.id in top:
                bases.add(id(n.value))
                name = n.value.id
                by_row[name] = max(by_row.get(name, -1), top[first.id])
    whole = set()
    for n in gast.walk(loop):
        if isinstance(n, gast.Name) and id(n) not in bases:
            whole.add(n.id)  # (read whole, or written)
    rows = {n: hi for n, hi in by_row.items() if n not in whole and n not in top}
    kernel.row_counters = set(top)
    kernel.rowed = set(rows)
    return rows


def _row_lists(loop: Any, before: List[Any], kernel: _Kernel) -> Dict[str, int]:
    """Lists the loop builds one row a trip: bound to ``[]`` by the last statement
    before it that binds them, and in the loop (a ``for`` over a constant
    range) only ``lst.append(v)`` once at its top level, ``v`` a strong array or
    scalar the kernel computes. The kernel fills an array of one row a trip,
    and the caller gets its rows as the list (``box``): name -> trips."""
    r = _const_range(loop.iter) if isinstance(loop, gast.For) else None
    if r is None:
        return {}
    out = {}
    for s in loop.body:
        lst = _append_to(s)
        v = s.value.args[0] if lst is not None else None
        t = kernel.trees.get(getattr(v, "id", None))
        if lst is None or t is None or t[0] != "a" or t[3] or lst in kernel.dead_lists:
            continue
        if sum(isinstance(n, gast.Name) and n.id == lst for n in gast.walk(loop)) != 1:
            continue
        last = [st for st in before if lst in _names([st], gast.Store)][-1:]
        if last and isinstance(last[0], gast.Assign) and len(last[0].targets) == 1:
            if isinstance(last[0].value, gast.List) and not last[0].value.elts:
                out[lst] = len(r)
                kernel.row_lists[lst] = t
    return out


def _popped_rows(loop: Any, before: List[Any], kernel: _Kernel, x64: bool) -> Dict[int, Any]:
    """``g = ad.pop_like(L, like)`` once a trip at the top level of ``for k in
    reversed(range(m))``, where ``L = ad.tree_unstack(S, ...)`` is the last
    binding of ``L`` before the loop (after the last of ``S``, an array of ``m``
    rows) and ``L`` appears nowhere else in the loop: trip ``k`` pops row
    ``k``, so the kernel reads ``S[k]`` (``S`` passed whole, as a row read).
    Statement id -> ``(statement, S[k])``; ``S`` joins the row-read inputs."""
    r = _const_range(loop.iter) if isinstance(loop, gast.For) else None
    back = r is not None and gast.unparse(loop.iter.func).strip() == "reversed"
    if not back or r.start != 0 or r.step != 1 or loop.target.id not in kernel.row_counters:
        return {}
    out = {}
    for st in loop.body:
        v = st.value if isinstance(st, gast.Assign) and len(st.targets) == 1 else None
        if not (
            isinstance(v, gast.Call)
            and gast.unparse(v.func).strip() == "ad.pop_like"
            and len(v.args) == 2
            and isinstance(v.args[0], gast.Name)
            and isinstance(st.targets[0], gast.Name)
        ):
            continue
        lst = v.args[0].id
        if sum(isinstance(n, gast.Name) and n.id == lst for n in gast.walk(loop)) != 1:
            continue
        at = [i for i, b in enumerate(before) if lst in _names([b], gast.Store)][-1:]
        u = before[at[0]].value if at and isinstance(before[at[0]], gast.Assign) else None
        if not (
            isinstance(u, gast.Call)
            and gast.unparse(u.func).strip() == "ad.tree_unstack"
            and len(u.args) == 2
            and isinstance(u.args[0], gast.Name)
        ):
            continue
        src = u.args[0].id
        bound = [i for i, b in enumerate(before) if src in _names([b], gast.Store)][-1:]
        av = getattr(before[bound[0]], "sj_aval", None) if bound and bound[0] < at[0] else None
        try:
            t = tree(av, x64, True) if av is not None else None
        except Refuse:
            t = None
        row = kernel.trees.get(st.targets[0].id)
        if (
            t is None
            or t[2][0] != len(r)
            or row is None
            or t[3]
            or not _same(row, ("a",) + t[1:2] + (t[2][1:],))
        ):
            continue
        kernel.trees[src] = t
        kernel.rowed.add(src)
        out[id(st)] = (st, lst, src)
    return out


def _infer_local(kernel: _Kernel, pending: List[Any]) -> None:
    """Types of a tape pair's assignments jit's inference left unknown: in a
    reverse loop whose trip count is known only at run time (a ``while``'s),
    values of the forward loop may be None when no trip ran, so everything
    computed from them is unknown, although the kernel runs only after the
    forward kernel did. An operation of one float dtype (weak operands aside)
    and ``ad.unbroadcast`` of equal shapes keep the type; anything else stays
    unknown and the pair keeps NumPy. The kernel's inputs are typed by jit."""
    left = list(pending)
    while left:
        still = []
        for s in left:
            t = kernel.local_tree(s.value)
            if t is None:
                still.append(s)
            else:
                kernel.note_tree(s.targets[0].id, t)
        if len(still) == len(left):
            raise Refuse(f"{still[0].targets[0].id} has no abstract value")
        left = still


def _dead_lists(fdef: Any) -> Set[str]:
    """Lists the function only builds: bound to ``[]`` and otherwise only the
    receiver of ``.append(v)`` (scan's per-step outputs when the body returns
    None for them); appending to them changes nothing anyone reads."""
    receivers, names = set(), []
    for n in N.walk(fdef):  # (one walk: planned once per loop, 3 walks were 22% of
        # a first jit(grad) of associative_scan, userprogs7 repro_06)
        if isinstance(n, gast.Name):
            names.append(n)
        elif isinstance(n, gast.Expr) and _append_to(n) is not None:
            receivers.add(id(n.value.func.value))
        elif isinstance(n, gast.Assign) and isinstance(n.value, gast.List) and not n.value.elts:
            receivers.update(id(t) for t in n.targets)
    out, others = set(), set()
    for n in names:
        (out if id(n) in receivers else others).add(n.id)
    return out - others


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


def _box(
    outputs: List[str], trees: Dict[str, Any], opaque: bool = False, lists: Any = ()
) -> List[str]:
    """``box(r)``: the kernel's results with strong scalars as NumPy scalars of
    their dtype (Numba returns Python floats/ints); [] when nothing needs it.
    ``opaque``: one more result (a tape's stacks) passed as it is; ``lists``:
    outputs built one row a trip, returned as the list of their rows."""
    exprs, need = [], bool(lists)
    for k, o in enumerate(outputs):
        if o in lists:
            exprs.append(f"list(r[{k}])")
            continue

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
    if opaque:
        exprs.append(f"r[{len(outputs)}]")
    if not need:
        return []
    return ["", "", "def box(r):", f"    return ({', '.join(exprs)},)"]


def _none_at_entry(before: List[Any]) -> Set[str]:
    """The names that may be None when a loop after the top-level statements
    ``before`` starts: bound to None (grad's forward declarations, releases)
    and not bound again by a later top-level assignment."""
    state: Dict[str, bool] = {}
    for st in before:
        if (
            isinstance(st, gast.Assign)
            and len(st.targets) == 1
            and isinstance(st.targets[0], gast.Name)
        ):
            v = st.value
            state[st.targets[0].id] = isinstance(v, gast.Constant) and v.value is None
            continue
        for a in gast.walk(st):
            if (
                isinstance(a, gast.Assign)
                and isinstance(a.value, gast.Constant)
                and a.value.value is None
            ):
                for t in a.targets:
                    if isinstance(t, gast.Name):
                        state[t.id] = True
    return {n for n, none in state.items() if none}


def _live_in(loop: Any) -> Set[str]:
    """The names a trip may read before it sets them (a top-level assignment
    sets a name for the rest of the trip; the test and the iterable too)."""
    head = loop.test if isinstance(loop, gast.While) else loop.iter
    live = value_loads(gast.Expr(value=head))
    stored: Set[str] = set()
    if isinstance(loop, gast.For) and isinstance(loop.target, gast.Name):
        stored.add(loop.target.id)
    for s in loop.body:
        live |= value_loads(s) - stored
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            stored.add(s.targets[0].id)
    if isinstance(loop, gast.While):
        live |= value_loads(gast.Expr(value=loop.test))
    return live


def _live_after(after: List[Any]) -> Set[str]:
    """The names the top-level statements ``after`` a loop may read before they
    set them (a name set again first is dead at the loop's end: jit's dead-code
    elimination may have dropped its value before the loop too)."""
    live: Set[str] = set()
    killed: Set[str] = set()
    for s in after:
        if isinstance(s, gast.For) and isinstance(s.target, gast.Name):
            # (the loop sets its counter before its body reads it: a reverse
            # loop's row reads S[k] do not read the forward loop's k)
            body = _names(s.body, gast.Load) - {s.target.id}
            live |= (_names([gast.Expr(value=s.iter)], gast.Load) | body) - killed
            continue
        live |= _names([s], gast.Load) - killed
        if isinstance(s, gast.Assign) and len(s.targets) == 1:
            if isinstance(s.targets[0], gast.Name):
                killed.add(s.targets[0].id)
    return live


def _pushed_first(loop: Any, tape: str, names: Set[str]) -> Set[str]:
    """Those of ``names`` the loop reads before it first sets them (at its top
    level) only as ``tape.append(name)``: grad's pushes of a forward
    declaration's ``None`` in the first trip."""
    ok, bad, stored = set(), set(), set()
    for s in loop.body:
        pushed = is_push(s, tape)
        if pushed is not None:
            if pushed not in stored:
                ok.add(pushed)
            continue
        bad |= (value_loads(s) & names) - stored
        if isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name):
            stored.add(s.targets[0].id)
    # (set at the top level every trip: later trips push values, never None)
    return (ok - bad) & names & stored


def boundary(
    fdef: Any,
    loop: Any,
    k: Any,
    outside: List[Any],
    before: List[Any],
    after: Any,
    entry: Any,
    own: Set[str],
    rowsrc: Set[str] = frozenset(),
) -> Tuple[List[str], List[str], Set[str], Set[str]]:
    """``(inputs, outputs, names read outside, inputs maybe None at entry)`` of
    ``loop`` (arguments as :func:`plan`'s; ``own``: names the kernel keeps to
    itself, ``rowsrc``: arrays it reads by row); raises :class:`Refuse` where an
    input or output has no type, or a binding of one before the loop another."""
    x64 = k.x64
    loaded = _live_in(loop) - own
    stored = _names([loop], gast.Store) - own
    defined = {a.id for a in fdef.args.args} | _names(before, gast.Store)
    read_outside = _names(outside, gast.Load) if after is None else _live_after(after)
    if entry is not None:
        read_outside = entry[0]
    outputs = sorted(n for n in stored if n in read_outside)
    inputs = sorted((loaded & defined) | set(outputs) | set(rowsrc))
    if any(o not in defined for o in outputs):
        raise Refuse("a value first set inside the loop is read after it")
    for n in inputs + outputs:
        if n not in k.trees:
            raise Refuse(f"{n} has no known dtype")
    # every binding of an input outside the loop must have its type
    # (a forward declaration `x = None` of generated code does not)
    # (statements after a top-level loop do not bind what it starts from)
    maybe_none = _none_at_entry(before) if entry is None else set(entry[1])
    for st in before:
        for a in gast.walk(st):
            if (
                isinstance(a, gast.Assign)
                and len(a.targets) == 1
                and isinstance(a.targets[0], gast.Name)
                and a.targets[0].id in k.trees
            ):
                name = a.targets[0].id
                if isinstance(a.value, gast.Constant) and a.value.value is None:
                    pass  # (a forward declaration or a release: _none_at_entry)
                elif name in k.bounds:
                    pass  # (its type is checked by the kernel's call)
                elif getattr(a, "sj_aval", None) is None:
                    raise Refuse(f"{name} has no abstract value")
                elif not _same(tree(a.sj_aval, x64, name in k.rowed, k.limit), k.trees[name]):
                    raise Refuse(f"{name} changes type")
            elif isinstance(a, (gast.For, gast.AugAssign)) or (
                isinstance(a, gast.Assign) and not all(isinstance(t, gast.Name) for t in a.targets)
            ):
                bound = _names([a], gast.Store) if not isinstance(a, gast.For) else set()
                if bound & set(inputs):
                    raise Refuse("an input bound by unpacking")
    return inputs, outputs, read_outside, maybe_none & set(inputs)


def imports(looped: List[Any]) -> List[str]:
    """A kernel file's first lines: NumPy, and the intrinsics calling NumPy's
    loops ``looped`` (``(name, dtype)``; their addresses are trailing arguments
    the :class:`.loops.Region` passes)."""
    out = ["import numpy as np"]
    if looped:
        out += [
            "from srcjax.backends.numba_cpu.ufuncs import ufcalls",
            "",
            "ufcall1, ufcall2, ufmap1, ufmap2 = ufcalls()",
            f"UFUNCS = {tuple(looped)!r}",
        ]
    return out


def plan(
    fdef: Any,
    loop: Any,
    outside: List[Any],
    x64: bool,
    after: Any = None,
    tape: Any = None,
    role: str = "",
    entry: Any = None,
) -> Tuple[str, list, list]:
    """``(kernel source, [(input, numba type spec)], outputs)`` of ``loop``;
    raises :class:`Refuse`. ``after``: the statements after the loop (the
    outputs are the names it sets that they read; default ``outside``).
    ``tape``/``role``: the loop is the forward (``"push"``) or the reverse
    (``"pop"``) loop of a pair sharing ``tape`` (:mod:`.tapes`): the forward
    kernel returns the tape's stacks last, the reverse one reads them from its
    last input ``nbtape``. ``entry``: a loop inside other loops (:mod:`.loops`),
    ``(names live after it, names maybe None at its entry)``, with ``outside``
    every statement whose binding may reach it (the enclosing bodies whole) and
    ``after`` None (a list it builds one row a trip, or pops, refuses it: the
    binding before it is not one)."""
    k = _Kernel(x64, tape, role)
    k.loop = loop
    k.dead_lists = _dead_lists(fdef)
    if tape is not None and after is not None:
        for st in outside[: len(outside) - len(after)]:
            if isinstance(st, gast.Assign) and isinstance(st.targets[0], gast.Name):
                av = getattr(st, "sj_aval", None)
                try:
                    k.seeds[st.targets[0].id] = tree(av, x64) if av is not None else None
                except Refuse:
                    k.seeds[st.targets[0].id] = None
        k.seeds = {n: t for n, t in k.seeds.items() if t is not None}
    rows = _row_reads(loop, k)
    _collect(loop, k)
    for name, hi in rows.items():
        t = k.trees.get(name)
        if t is None or t[0] != "a" or not hi < t[2][0]:
            raise Refuse(f"{name}'s rows are read out of bounds")
    before = outside if after is None else outside[: len(outside) - len(after)]
    lists = _row_lists(loop, before, k)
    pops = _popped_rows(loop, before, k, x64)
    if entry is not None and (lists or pops):
        raise Refuse("a list built or popped one row a trip in a loop inside a loop")
    popped = {lst for _, lst, _ in pops.values()}
    own = ({tape.name} if tape is not None else set()) | k.dead_lists | set(lists) | popped
    rowsrc = {src for _, _, src in pops.values()}
    inputs, outputs, read_outside, maybe_none = boundary(
        fdef, loop, k, outside, before, after, entry, own, rowsrc
    )
    if popped & read_outside:
        raise Refuse("a popped list is read after the loop")
    built = sorted(n for n in lists if n in read_outside)
    zeros: Set[str] = set()
    if role == "push":
        # pushed as zeros in the first trip (the NumPy loop pushes None there)
        zeros = _pushed_first(loop, tape.name, maybe_none)
        for site in tape.sites:
            site.maybe_none = site.name in zeros
            if site.kind == "const" and not site.maybe_none:
                site.kind = "store"
            site.aval = k.avals.get(site.name)
            if site.aval is None or site.name not in k.trees:
                raise Refuse(f"{site.name} has no abstract value")
        tape.layout(k.trees, _leaves)
    elif role == "pop":
        for site in tape.sites:
            if site.maybe_none and site.target in outputs:
                raise Refuse(f"{site.target} may be None after the loop")
        maybe_none = set()  # (the generated code calls the kernel only without None)
    if maybe_none - zeros:
        raise Refuse(f"{sorted(maybe_none - zeros)[0]} may be None")
    args = [n for n in inputs if n not in zeros]
    saved = [(st, st.value) for st, _, _ in pops.values()]
    try:
        for st, _, src in pops.values():  # (trip k pops row k: a row read while translated)
            st.value = gast.Subscript(
                value=gast.Name(src, gast.Load(), None, None),
                slice=gast.Name(loop.target.id, gast.Load(), None, None),
                ctx=gast.Load(),
            )
        k.block([loop], 1)
    finally:
        for st, v in saved:
            st.value = v
    head = []
    for n in inputs:
        if n in k.rowed:
            continue  # (passed whole, indexed in the kernel)
        for leaf, (_, dt, shape, _), acc in _leaves(n, k.trees[n], n):
            for i in itertools.product(*map(range, shape)):
                at = f"{acc}[{', '.join(map(str, i))}]" if i else acc
                at = f"{_conv(dt)}(0)" if n in zeros else f"{_conv(dt)}({at})"
                head.append(f"    {_el(leaf, i)} = {at}")
    for n in built:
        _, dt, shape, _ = k.row_lists[n]
        head.append(f"    {n}__o = np.empty({(lists[n],) + shape!r}, {_conv(dt)})")
        head.append(f"    {n}__n = 0")
    if role == "push":
        head.append("    n__trips = 0")
        cap = "16"
        if isinstance(loop, gast.For):
            it = loop.iter
            if not (isinstance(it, gast.Call) and gast.unparse(it.func).strip() == "range"):
                raise Refuse("a tape loop over something else than range")
            cap = f"max(len(range({', '.join(k.range_arg(a) for a in it.args)})), 1)"
        for dt in tape.dtypes():
            head.append(f"    s_{dt} = np.empty({cap} * {tape.widths[dt]}, {_conv(dt)})")
    elif role == "pop":
        head.append("    n__trips = nbtape[0]")
        for j, dt in enumerate(tape.dtypes()):
            head.append(f"    s_{dt} = nbtape[{j + 1}]")
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
    rets += [f"{n}__o" for n in built]
    extra: List[str] = []
    if role == "push":
        rets.append("(n__trips, " + "".join(f"s_{dt}, " for dt in tape.dtypes()) + ")")
        extra = relist_source(tape, "t")
    ret = ", ".join(rets) + ("," if len(rets) == 1 else "")
    params = args + (["nbtape"] if role == "pop" else [])
    looped = sorted(k.ufuncs)
    params += [f"uf__{n}__{dt}" for n, dt in looped]
    src = "\n".join(
        imports(looped)
        + ["", "", f"def kernel({', '.join(params)}):"]
        + head
        + k.lines
        + tail
        + [f"    return ({ret})"]
        + _box(outputs + built, k.trees, opaque=role == "push", lists=set(built))
        + extra
        + [""]
    )
    types = [(n, _numba_type(k.trees[n])) for n in args]
    if role == "pop":
        types.append(("nbtape", ("tuple", ["int64"] + [("array", dt, 1) for dt in tape.dtypes()])))
    return src, types, outputs + built
