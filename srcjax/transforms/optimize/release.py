"""Dead loop values released after their loop (:func:`release_after_loops`)."""

from __future__ import annotations

from typing import Any, List, Set

import gast

from ...frontend import nodes as N


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
