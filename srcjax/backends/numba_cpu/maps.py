"""Chains of elementwise array statements compiled with Numba, inside jit's CPU code.

NumPy runs ``m = b1 * m + c1 * g`` as one call per operator, each a pass over
the array and a temporary: a hand-written Adam step over a model's small leaves
(R5) is some 80 such calls. Here the top-level statements ``t = a op b`` of a
jitted function (``+ - * /``, unary ``-``, ``jnp.sqrt``: IEEE operations NumPy
and LLVM both round correctly; comparisons giving bool; ``jnp.where`` with a
bool mask of the shape; ``jnp.maximum``/``minimum`` as NumPy's (:data:`_EXPRS`);
``jnp.abs``) computing in float32/float64, whose array operands have the
result's shape and that dtype (a where's mask: bool) and whose other operands
are scalars (0-d arrays and NumPy scalars of that dtype, Python numbers:
converted to it, as NumPy does; never float64 for float32), are grouped by the
values they pass each other (``optimize``'s ANF names, each assigned once): a
group of :data:`MIN_STATEMENTS` or more that is expected to beat NumPy's calls
(:func:`_worth`) becomes one kernel that computes every element of every
statement in one pass, allocating only the values read elsewhere. The statements between a group's first and last member that depend
on its values move after it (straight-line code: what a statement reads and
writes decides; calls that could write keep their order), so a ``tree_map``'s
update, written out leaf by leaf between list appends, is one group per leaf;
independent groups of one dtype that can be made consecutive together share one
kernel (one call for all of a model's leaves: a loop per group).

The results are NumPy's bits where they are numbers. LLVM takes a NaN's sign
and payload as unspecified (it swaps the operands of ``+``, ``*``: ``x + t`` gave
``t``'s NaN where NumPy gives ``x``'s, and folds negations into their users), so
a kernel that finds a NaN among its float outputs returns None and NumPy's
statements run instead (a NaN result costs one kernel pass more).

Arrays as large as the CPU backend's chunked regions
(:data:`..runtime.CHUNK_MIN_ELEMENTS`) keep those (threads). The kernels are
regions of :mod:`.loops`: tiered with ``numba_loops="auto"`` (NumPy, timed,
until hot), compiled on their first call with ``True``, and any failure keeps
the NumPy statements (kept in the generated code, and shown in
``srcjax.source``).
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Dict, List, Optional, Set, Tuple

import gast
import numpy as np

from ...frontend import nodes as N
from .. import runtime
from . import tiers
from .notes import SHOWN, comment

__all__ = ["lower_maps", "MIN_STATEMENTS"]

#: the fewest statements a group needs to become a kernel
MIN_STATEMENTS = 3
#: microseconds (measured on the reference machine, float32): a NumPy operator's
#: call and per element; a kernel's call, per argument and per element and statement
_NUMPY_CALL_US, _NUMPY_ELEMENT_US = 0.22, 7e-5
_KERNEL_CALL_US, _KERNEL_ARG_US, _KERNEL_ELEMENT_US = 0.9, 0.05, 3e-5
#: how much faster the kernel must be expected to run than NumPy's calls
_MARGIN = 1.5
_OPS = {gast.Add: "+", gast.Sub: "-", gast.Mult: "*", gast.Div: "/"}
#: comparisons: a bool result of two operands of the statement's float dtype
_CMPS = {
    gast.Gt: ">",
    gast.GtE: ">=",
    gast.Lt: "<",
    gast.LtE: "<=",
    gast.Eq: "==",
    gast.NotEq: "!=",
}
#: ``jnp.<name>(...)`` calls taken: (kind, number of arguments)
_CALLS = {
    "sqrt": ("sqrt", 1),
    "abs": ("abs", 1),
    "absolute": ("abs", 1),
    "maximum": ("max", 2),
    "minimum": ("min", 2),
    "where": ("where", 3),
}
#: each kind's element expression in the kernel. NumPy's ``maximum(x, y)`` is
#: ``x`` where ``x > y`` or ``x`` is NaN, else ``y`` (so a NaN propagates, the
#: first one of two, and a tie of 0.0 and -0.0 gives ``y``), at every length,
#: stride and scalar operand (tests/test_numba_maps.py checks the bits)
_EXPRS = {
    "neg": "-{0}",
    "sqrt": "np.sqrt({0})",
    "abs": "abs({0})",
    "max": "({0} if {0} > {1} or {0} != {0} else {1})",
    "min": "({0} if {0} < {1} or {0} != {0} else {1})",
    "where": "({1} if {0} else {2})",
}
_DTYPES = ("float32", "float64")
_BOOL = np.dtype(bool)
#: the largest Python int taken as a constant (larger ones keep NumPy's rules)
_INT_MAX = 2**53
#: list methods that change only their list (generated code's ``mapped.append(v)``)
_GROWS = ("append", "extend")


class _Op:
    """One candidate statement ``target = op(operands)``: ``kind`` is an operator
    symbol (``+ - * /``, a comparison) or a key of :data:`_EXPRS`; each operand
    ``("a", name)`` (an array of the result's shape), ``("s", name)`` (a scalar)
    or ``("c", value)`` (a number). ``dtype`` is the float dtype the statement
    computes in, ``result`` its result's (bool for a comparison)."""

    __slots__ = ("stmt", "target", "kind", "operands", "shape", "dtype", "result")

    def __init__(self, stmt, target, kind, operands, shape, dtype, result):
        self.stmt = stmt
        self.target = target
        self.kind = kind
        self.operands = operands
        self.shape = shape
        self.dtype = dtype
        self.result = result


def _operand(node: Any, shape: tuple, dtype: Any, avals: Dict[str, Any]) -> Optional[tuple]:
    """``node`` as an operand of ``dtype`` (bool: only an array of ``shape``)."""
    if isinstance(node, gast.Constant):
        v = node.value
        if dtype == _BOOL or type(v) not in (int, float) or type(v) is int and abs(v) > _INT_MAX:
            return None
        # (one that overflows the dtype: NumPy's warning, kept)
        return ("c", v) if abs(v) <= np.finfo(dtype).max else None
    if not isinstance(node, gast.Name):
        return None
    av = avals.get(node.id)
    if av is None or getattr(av, "shape", None) is None or not hasattr(av, "ptype"):
        return None
    if av.ptype is not None:  # a Python number: NumPy converts it to the array's dtype
        ok = av.ptype in (int, float) and not av.shape and dtype != _BOOL
        return ("s", node.id) if ok else None
    if av.dtype != dtype:
        return None
    if tuple(av.shape) == shape:
        return ("a", node.id)
    return ("s", node.id) if not av.shape and dtype != _BOOL else None


def _parse(v: Any) -> Optional[Tuple[str, List[Any]]]:
    """(kind, argument nodes) of an expression this pass takes, or None."""
    if isinstance(v, gast.BinOp) and type(v.op) in _OPS:
        return _OPS[type(v.op)], [v.left, v.right]
    if isinstance(v, gast.UnaryOp) and isinstance(v.op, gast.USub):
        return "neg", [v.operand]
    if isinstance(v, gast.Compare) and len(v.ops) == 1 and type(v.ops[0]) in _CMPS:
        return _CMPS[type(v.ops[0])], [v.left, v.comparators[0]]
    if (
        isinstance(v, gast.Call)
        and not v.keywords
        and isinstance(v.func, gast.Attribute)
        and v.func.attr in _CALLS
        and isinstance(v.func.value, gast.Name)
        and v.func.value.id == "jnp"
        and len(v.args) == _CALLS[v.func.attr][1]
        and not any(isinstance(a, gast.Starred) for a in v.args)
    ):
        return _CALLS[v.func.attr][0], list(v.args)
    return None


def _float_dtype(args: List[Any], shape: tuple, avals: Dict[str, Any]) -> Optional[Any]:
    """The dtype of the first float array of ``shape`` among ``args``."""
    for a in args:
        av = avals.get(a.id) if isinstance(a, gast.Name) else None
        if getattr(av, "ptype", 0) is None and tuple(getattr(av, "shape", ()) or ()) == shape:
            if av.dtype.name in _DTYPES:
                return av.dtype
    return None


def _candidate(s: Any, once: Set[str]) -> Optional[_Op]:
    """``s`` as an :class:`_Op`, or None."""
    if not (
        isinstance(s, gast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], gast.Name)
    ):
        return None
    target = s.targets[0].id
    res = getattr(s, "sj_aval", None)
    avals = getattr(s, "sj_avals_in", None) or {}
    if res is None or not hasattr(res, "ptype") or res.ptype is not None or not res.shape:
        return None
    if target not in once or not 0 < res.size < runtime.CHUNK_MIN_ELEMENTS:
        return None
    parsed = _parse(s.value)
    if parsed is None:
        return None
    kind, args = parsed
    shape = tuple(res.shape)
    if kind in _CMPS.values():  # (computes in its float operands' dtype)
        dtype = _float_dtype(args, shape, avals) if res.dtype == _BOOL else None
    else:
        dtype = res.dtype if res.dtype.name in _DTYPES else None
    if dtype is None:
        return None
    wants = [_BOOL, dtype, dtype] if kind == "where" else [dtype] * len(args)
    ops = [_operand(a, shape, w, avals) for a, w in zip(args, wants)]
    if any(o is None for o in ops):
        return None
    # an array of the float dtype among the values computed on (not a where's mask
    # alone: NumPy's rules for two Python numbers differ from JAX's)
    if not any(o[0] == "a" for o in (ops[1:] if kind == "where" else ops)):
        return None
    if any(o[0] != "c" and o[1] not in once for o in ops):
        return None
    return _Op(s, target, kind, ops, shape, dtype, res.dtype)


# ---------------------------------------------------------------------------- scheduling
def _effects(s: Any) -> Tuple[Set[str], Set[str], bool]:
    """(names ``s`` reads, names it may write, whether it may have an effect):
    a statement that is no assignment of an expression without calls may write
    every name it reads (a method call appending to a list, an in-place helper).
    A kernel's call (made here) reads its arguments and writes its results."""
    known = getattr(s, "sj_map_effects", None)
    if known is not None:
        return known[0], known[1], False
    if isinstance(s, gast.Pass):
        return set(), set(), False
    reads, writes = set(), set()
    for n in N.walk(s):
        if isinstance(n, gast.Name):
            (reads if isinstance(n.ctx, gast.Load) else writes).add(n.id)
    pure = isinstance(s, gast.Assign) and not any(
        isinstance(
            n, (gast.Call, gast.Lambda, gast.Yield, gast.YieldFrom, gast.Await, gast.NamedExpr)
        )
        for n in N.walk(s.value)
    )
    if not pure and not getattr(s, "sj_map_member", False):
        v = getattr(s, "value", None)
        if (
            isinstance(s, gast.Expr)
            and isinstance(v, gast.Call)
            and isinstance(v.func, gast.Attribute)
            and v.func.attr in _GROWS
            and isinstance(v.func.value, gast.Name)
        ):
            return reads, {v.func.value.id}, True  # (a list grown: only it changes)
        return reads, writes | reads, True
    return reads, writes, False


def _schedule(body: List[Any], members: List[Any]) -> Tuple[Optional[List[Any]], int]:
    """(``body`` reordered so that ``members`` (in their order) are consecutive, at
    the place of the last one: the statements between that depend on a member
    (or on such a statement) move after them; the number of members). When
    member ``j`` depends on one of those: (None, j)."""
    index = {id(s): k for k, s in enumerate(body)}
    first, last = index[id(members[0])], index[id(members[-1])]
    mset = {id(m) for m in members}
    d_reads: Set[str] = set()  # what the moved statements read, write
    d_writes: Set[str] = set()
    m_reads: Set[str] = set()
    m_writes: Set[str] = set()
    d_effect = False
    before, after = [], []
    j = 0
    for s in body[first : last + 1]:
        reads, writes, effect = _effects(s)
        if id(s) in mset:
            if reads & d_writes or writes & (d_reads | d_writes):
                return None, j
            j += 1
            m_reads |= reads
            m_writes |= writes
            continue
        moved = (
            reads & (m_writes | d_writes)
            or writes & (m_reads | m_writes | d_reads | d_writes)
            or (effect and d_effect)
        )
        if moved:
            after.append(s)
            d_reads |= reads
            d_writes |= writes
            d_effect = d_effect or effect
        else:
            before.append(s)
    return body[:first] + before + members + after + body[last + 1 :], j


# ---------------------------------------------------------------------------- kernels
def _kernel_source(groups: List[List[_Op]], outputs: List[str]) -> Tuple[str, List[str]]:
    """(the kernel's source, the names of its arguments in order): arrays first
    (``a0``...), then scalars (``s0``...), numbered in order of first use; one
    loop over the elements of each group (independent groups, one dtype)."""
    arrays: Dict[str, str] = {}
    scalars: Dict[str, str] = {}
    dt = f"np.{groups[0][0].dtype.name}"
    wanted = set(outputs)
    flat, loops_, results = [], [], []
    for g, group in enumerate(groups):
        local: Dict[str, str] = {}
        mine: List[str] = []  # (this group's arrays)
        lines = []
        for k, op in enumerate(group):
            vals = []
            for kind, x in op.operands:
                if kind == "c":
                    vals.append(f"{dt}({x!r})")
                elif kind == "s":
                    vals.append(scalars.setdefault(x, f"s{len(scalars)}"))
                elif x in local:
                    vals.append(local[x])
                else:
                    if x not in arrays:
                        arrays[x] = f"a{len(arrays)}"
                        mine.append(arrays[x])
                    vals.append(arrays[x] + "_[i]")
            t = f"t{g}_{k}"
            if op.kind in _EXPRS:
                expr = _EXPRS[op.kind].format(*vals)
            else:
                expr = f"{vals[0]} {op.kind} {vals[1]}"
            local[op.target] = t
            if op.result != _BOOL:  # (the statement's dtype, as NumPy's result)
                expr = f"{dt}({expr})"
            lines.append(f"        {t} = {expr}")
        first = next((arrays[x] for kind, x in group[0].operands if kind == "a" and x in arrays))
        n = f"n{g}"
        flat.append(f"    {n} = {first}.size")
        for a in mine:
            flat.append(f"    if {a}.size != {n}:")
            flat.append("        raise ValueError('shapes')")
            flat.append(f"    {a}_ = np.ascontiguousarray({a}).reshape({n})")
        outs = [
            (f"o{len(results) + j}", local[op.target], f"np.{op.result.name}")
            for j, op in enumerate([op for op in group if op.target in wanted])
        ]
        loops_ += [f"    {o} = np.empty({n}, {d.replace('bool', 'bool_')})" for o, _, d in outs]
        loops_.append(f"    for i in range({n}):")
        loops_ += lines + [f"        {o}[i] = {t}" for o, t, _ in outs]
        # (a NaN output: NumPy's statements run instead, see the module docstring)
        loops_ += [f"        nan = nan | ({t} != {t})" for _, t, d in outs if d != "np.bool"]
        results += [f"{o}.reshape({first}.shape)" for o, _, _ in outs]
    params = list(arrays.values()) + list(scalars.values())
    head = ["import numpy as np", "", "", f"def kernel({', '.join(params)}):"]
    head += flat + [f"    {v} = {dt}(np.asarray({v})[()])" for v in scalars.values()]
    head.append("    nan = False")
    tail = ["    if nan:", "        return None"]
    tail += [f"    return ({''.join(r + ', ' for r in results)})"]
    return "\n".join(head + loops_ + tail) + "\n", list(arrays) + list(scalars)


def _worth(statements: int, size: int, args: int) -> bool:
    """Whether a kernel of ``statements`` on ``size`` elements, called with
    ``args`` arguments, is expected to beat NumPy's one call per statement (on
    a few small arrays NumPy's calls cost less than one kernel call)."""
    numpy_us = statements * (_NUMPY_CALL_US + size * _NUMPY_ELEMENT_US)
    kernel_us = _KERNEL_CALL_US + args * _KERNEL_ARG_US + size * statements * _KERNEL_ELEMENT_US
    return numpy_us >= _MARGIN * kernel_us


def _groups(body: List[Any], once: Set[str]) -> List[List[_Op]]:
    """The candidate statements of ``body`` joined through the values they read
    from each other (one shape and dtype per group), in order."""
    ops = [op for op in (_candidate(s, once) for s in body) if op is not None]
    by_target = {op.target: op for op in ops}
    parent = {id(op): id(op) for op in ops}

    def find(k):
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    for op in ops:
        for kind, x in op.operands:
            src = by_target.get(x) if kind == "a" else None
            if src is not None and src.shape == op.shape and src.dtype == op.dtype:
                parent[find(id(op))] = find(id(src))
    groups: Dict[int, List[_Op]] = {}
    for op in ops:
        groups.setdefault(find(id(op)), []).append(op)
    return [g for g in groups.values() if len(g) >= MIN_STATEMENTS]


def _assigned_once(fdef: Any) -> Set[str]:
    counts: Dict[str, int] = {}
    for a in fdef.args.args:
        counts[a.id] = counts.get(a.id, 0) + 1
    for n in N.walk(fdef):
        if n is fdef:
            continue
        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Del)):
            counts[n.id] = counts.get(n.id, 0) + 1
        elif isinstance(n, (gast.FunctionDef, gast.Lambda, gast.Global, gast.Nonlocal)):
            return set()  # (nested scopes: not this pass's straight-line code)
    return {k for k, v in counts.items() if v == 1}


def _outputs(body: List[Any], groups: List[List[_Op]]) -> List[str]:
    """The groups' values that a statement of ``body`` other than theirs reads."""
    mids = {id(op.stmt) for g in groups for op in g}
    targets = {op.target for g in groups for op in g}
    read: Set[str] = set()
    for s in body:
        if id(s) not in mids:
            read |= {n.id for n in N.walk(s) if isinstance(n, gast.Name) and n.id in targets}
    return [op.target for g in groups for op in g if op.target in read]


def _members(body: List[Any], groups: List[List[_Op]]) -> List[Any]:
    """The groups' statements in the order of ``body``."""
    index = {id(s): k for k, s in enumerate(body)}
    return sorted((op.stmt for g in groups for op in g), key=lambda m: index[id(m)])


def lower_maps(fdef: Any, filename: str, tier: bool) -> int:
    """Replace the groups of elementwise statements at the top of ``fdef`` by
    calls of their kernels (the statements kept for when one returns None):
    groups that pay alone, and independent ones of one dtype that can be made
    consecutive together share one kernel (one call: an Adam step's leaves).
    Returns the number of kernel calls."""
    once = _assigned_once(fdef)
    if not once:
        return 0
    ready = []
    todo = _groups(fdef.body, once)
    while todo:
        group = todo.pop(0)
        for op in group:
            op.stmt.sj_map_member = True
        body, j = _schedule(fdef.body, [op.stmt for op in group])
        if body is None:
            # member j reads what reads an earlier one: the members before it are
            # one group, it and those after another
            todo[:0] = [g for g in (group[:j], group[j:]) if len(g) >= MIN_STATEMENTS]
            continue
        outputs = _outputs(body, [group])
        if outputs:
            args = _kernel_source([group], outputs)[1]
            if _worth(len(group), math.prod(group[0].shape), len(args)):
                ready.append(group)
    count = 0
    shown: Set[str] = set()  # (a kernel's lines are shown over its first call only)
    bundle: List[List[_Op]] = []
    for group in ready + [None]:
        if group is not None and bundle and group[0].dtype == bundle[0][0].dtype:
            if _schedule(fdef.body, _members(fdef.body, bundle + [group]))[0] is not None:
                bundle.append(group)
                continue
        if bundle:
            count += _emit(fdef, bundle, tier, shown)
        bundle = [group]
    return count


def _emit(fdef: Any, groups: List[List[_Op]], tier: bool, shown: Set[str]) -> int:
    """``groups`` made consecutive in ``fdef`` and replaced by their kernel's call."""
    members = _members(fdef.body, groups)
    body = _schedule(fdef.body, members)[0]
    if body is None:  # (not expected: checked before)
        return 0
    outputs = _outputs(body, groups)
    src, args = _kernel_source(groups, outputs)
    key = "nbloop_" + hashlib.sha256(src.encode()).hexdigest()[:16]
    if tier:
        from ...codegen import cache

        cache.write_source(src, key)
        tiers.make(key, src, None)
    else:
        from . import loops  # (numba_loops=True: compiled now; tiered maps never need it)

        loops._compile(key, src, None)  # (typed on its first call)
    at = next(k for k, s in enumerate(body) if s is members[0])
    call = _call(members, key, args, outputs, tier, src if key not in shown else "")
    shown.add(key)
    fdef.body = body[:at] + call + body[at + len(members) :]
    return 1


def _call(
    members: List[Any], key: str, args: List[str], outputs: List[str], tier: bool, src: str
) -> List[Any]:
    """The kernel's call, the statements kept for when it returns None (timed
    for :mod:`.tiers` with ``tier``), and comments showing the kernel."""
    get = f"_nbr.tiered({key!r})" if tier else f"_nbr.region({key!r})"
    res = f"_nb_{key[-8:]}"
    text = f"{res} = {get}({', '.join(args)})\nif {res} is None:\n    pass\n"
    text += f"else:\n    {', '.join(outputs)}{',' if len(outputs) == 1 else ''} = {res}\n"
    stmts = N.parse_stmts(text)
    test = stmts[-1]
    kept = list(members)
    if tier:
        clk = f"_nbc_{key[-8:]}"
        kept = N.parse_stmts(f"{clk} = _nbr.clock()") + kept
        kept += N.parse_stmts(f"_nbr.tiered({key!r}).spent({clk})")
    test.body = kept
    names = {m.targets[0].id for m in members} | {res, f"_nbc_{key[-8:]}"}
    stmts[0].sj_map_effects = (set(args), {res})
    test.sj_map_effects = (set(args) | {res}, names)
    like = members[-1]
    how = "tiered: NumPy until hot, then compiled, nogil" if tier else "compiled, nogil"
    lines = [ln[4:] for ln in src.splitlines() if ln.startswith(("    for", "        t"))]
    what = f"these {len(members)} elementwise statements in one pass over the elements"
    if lines:
        notes = [f"Numba region {key} ({how}): {what}, as"]
        notes += ["  " + ln for ln in lines[:SHOWN]]
        if len(lines) > SHOWN:
            notes.append(f"  ... ({len(lines) - SHOWN} more lines)")
    else:
        notes = [f"Numba region {key} ({how}): {what} (its kernel as above)"]
    out = [comment(t, like) for t in notes]
    for node in list(stmts) + list(test.orelse) + kept:
        if any(node is m for m in members):
            continue
        gast.copy_location(node, like)
        node.sj_origin = getattr(like, "sj_origin", None)
        node.sj_file = getattr(like, "sj_file", None)
    return out + stmts
