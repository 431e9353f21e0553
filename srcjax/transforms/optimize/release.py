"""Dead values released: after their loop (:func:`release_after_loops`), and
large arrays after their last read in straight-line code
(:func:`release_after_last_read`)."""

from __future__ import annotations

from typing import Any, Dict, List, Set

import gast

from ...frontend import nodes as N
from .avals import Aval
from .common import _assigned, _is_assign


def release_after_loops(fdef: Any) -> Any:
    """After each loop of the function's top level, ``name = None`` for every
    name the loop assigns that no later statement reads.

    A value bound inside a loop stays alive until the function returns unless
    something rebinds its name: the last trip's temporaries of a reversed loop
    (a layer's cotangents in R1, 128 x 256 float32 each) were still held while
    the update after it allocated the new parameters, a third of the step's
    peak memory above JAX's. Reads are counted anywhere after the loop (a
    later loop that reads the name before rebinding it keeps it), so only
    names that are surely dead are released; nothing else changes."""
    body = fdef.body
    out: List[Any] = []
    for k, s in enumerate(body):
        out.append(s)
        if not isinstance(s, (gast.For, gast.While)):
            continue
        later: Set[str] = set()
        for t in body[k + 1 :]:
            later.update(N.names_in(t))
        small = _scalars(s)
        for name in N.assigned_names([s]):
            if name not in later and name not in small and not _released_next(body, k, name):
                free = N.copy_origin(N.assign(name, N.const(None)), s)
                free.sj_note = "released: not read after the loop"
                if getattr(s, "sj_file", None):
                    free.sj_file = s.sj_file
                out.append(free)
    fdef.body = out
    return fdef


def _scalars(loop: Any) -> Set[str]:
    """Names in ``loop`` that hold scalars only (not worth a line): a ``range``
    loop's counter, and names every assignment of which has a 0-d abstract value."""
    out: Set[str] = set()
    if isinstance(loop, gast.For) and isinstance(loop.target, gast.Name):
        it = loop.iter
        if (
            isinstance(it, gast.Call)
            and isinstance(it.func, gast.Name)
            and it.func.id == "reversed"
        ):
            it = it.args[0] if it.args else it
        if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range":
            out.add(loop.target.id)
    shapes: dict = {}
    for stmt in N.walk_stmts(loop.body):
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
            t = stmt.targets[0]
            if isinstance(t, gast.Name):
                aval = getattr(stmt, "sj_aval", None)
                scalar = getattr(aval, "shape", None) == ()
                shapes[t.id] = shapes.get(t.id, True) and scalar
    return out | {n for n, scalar in shapes.items() if scalar}


def _released_next(body: List[Any], k: int, name: str) -> bool:
    """Whether the statements right after the loop already set ``name`` to None."""
    for t in body[k + 1 :]:
        if not (
            isinstance(t, gast.Assign)
            and len(t.targets) == 1
            and isinstance(t.targets[0], gast.Name)
            and isinstance(t.value, gast.Constant)
            and t.value.value is None
        ):
            return False
        if t.targets[0].id == name:
            return True
    return False


#: arrays at least this large (elements) are released after their last read
RELEASE_MIN_SIZE = 1024


def release_after_last_read(fdef: Any) -> int:
    """``a = None`` after the top-level statement that reads array ``a`` for the
    last time (arrays of at least ``RELEASE_MIN_SIZE`` elements by their
    abstract value, computed by a primitive in a top-level assignment before (not
    an attribute or item of another value), never read by the
    return): in straight-line code every temporary otherwise stays alive until the
    function returns (an unrolled backward pass keeps every layer's cotangents),
    where a loop reassigning it freed the last one (the straight-line
    counterpart of :func:`release_after_loops`). Run after
    ``inline_temporaries``; returns how many names it releases."""
    body = fdef.body
    big: Dict[str, int] = {}  # name -> index of its (first) top-level binding
    last: Dict[str, int] = {}  # name -> index of the top-level statement reading it last
    unsafe: set = set()
    for i, s in enumerate(body):
        for n in gast.walk(s):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load):
                last[n.id] = i
        if isinstance(s, gast.Return):
            unsafe |= {n.id for n in gast.walk(s) if isinstance(n, gast.Name)}
        if _is_assign(s):
            a = getattr(s, "sj_aval", None)
            t = s.targets[0].id
            op = s.sj_op
            made = op.kind == "copy" or (op.kind == "prim" and op.prim.part is None)  # (no part)
            if made and isinstance(a, Aval) and a.size >= RELEASE_MIN_SIZE and t not in big:
                big[t] = i
        elif not isinstance(s, gast.Assign):
            unsafe |= _assigned(s)  # (bound in a branch or loop: maybe unbound later)
    params = {a.id for a in fdef.args.args}
    after: Dict[int, List[str]] = {}
    for name, i in big.items():
        j = last.get(name)
        if j is None or j < i or name in unsafe or name in params:
            continue
        if any(_rebinds(body[k], name) for k in range(i + 1, len(body))):
            continue  # (rebound later: its last value is another array)
        after.setdefault(j, []).append(name)
    if not after:
        return 0
    out: List[Any] = []
    for i, s in enumerate(body):
        out.append(s)
        for name in sorted(after.get(i, ())):
            free = N.copy_origin(N.assign(name, N.const(None)), s)
            free.sj_note = "released: not read after this"
            if getattr(s, "sj_file", None):
                free.sj_file = s.sj_file
            out.append(free)
    fdef.body = out
    return sum(len(v) for v in after.values())


def _rebinds(s: Any, name: str) -> bool:
    return any(
        isinstance(n, gast.Name) and n.id == name and isinstance(n.ctx, gast.Store)
        for n in gast.walk(s)
    )
