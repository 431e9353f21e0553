"""Re-nesting (:func:`inline_temporaries`): a temporary read once, right after
it is computed, goes back into the expression that reads it."""

from __future__ import annotations

from typing import Any, Dict, List

import gast

from ...frontend import nodes as N
from .avals import Aval
from .common import _assigned, _is_assign, _is_pure, _Subst, read_counts
from .release import RELEASE_MIN_SIZE


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
    reads = read_counts(fdef.body)
    stores: Dict[str, int] = {}
    for n in N.walk(gast.Module(body=fdef.body, type_ignores=[])):
        if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
            stores[n.id] = stores.get(n.id, 0) + 1
    params = {a.id for a in fdef.args.args}
    _inline_block(fdef.body, reads, stores, keep | params)
    return fdef


def _inline_block(stmts: List[Any], reads, stores, keep) -> None:
    for s in stmts:
        if isinstance(s, gast.If):
            _inline_block(s.body, reads, stores, keep)
            _inline_block(s.orelse, reads, stores, keep)
        elif isinstance(s, (gast.While, gast.For)):
            _inline_block(s.body, reads, stores, keep)
    big = _large_values(stmts)
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
        if target is None or (j > i + 1 and _holds_longer(s, deps, target, stmts[j:], big)):
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


def _large_values(stmts: List[Any]) -> set:
    """Names the block binds once, at its top, to a large array of its own (of at
    least ``RELEASE_MIN_SIZE`` elements, not a part of another value): what the
    release passes free after its last read."""
    seen: Dict[str, int] = {}
    out = set()
    for s in stmts:
        for t in _assigned(s):
            seen[t] = seen.get(t, 0) + 1
        if not _is_assign(s):
            continue
        a, op = getattr(s, "sj_aval", None), s.sj_op
        made = op.kind == "copy" or (op.kind == "prim" and op.prim.part is None)
        if made and isinstance(a, Aval) and a.size >= RELEASE_MIN_SIZE:
            out.add(s.targets[0].id)
    return {t for t in out if seen[t] == 1}


def _holds_longer(s: Any, deps: set, target: Any, rest: List[Any], big: set) -> bool:
    """Whether folding ``s`` into a display ``target`` further down would keep a
    large array it reads alive past its last read (R1's gradient leaves gathered
    into ``[(dw1, db1), ...]``: every layer's activations held until the last
    leaf)."""
    op = getattr(target, "sj_op", None)
    if op is None or op.kind != "pack":
        return False
    later = {n.id for u in rest for n in N.walk(u) if isinstance(n, gast.Name)}
    return any(d in big and d not in later for d in deps)
