"""Reverse mode's last reverse trip: a loop-carried cotangent that a reverse trip
computes for the next one (``h_bar`` of the layer input ``h`` in ``for w, b in
params: h = relu(w @ h + b)``) is, on the last trip, the cotangent of the value
the loop started from. Where nothing after the reverse loop reads it (the input
``x`` of an MLP is not differentiated), the last trip skips computing it: the
quickstart MLP's largest GEMM (the first layer's input cotangent, issue 17, R1)."""

from __future__ import annotations

from typing import Any, List, Set

import gast

from ...frontend import nodes as N
from ...primitives.registry import by_public
from .prune import _is_reversed


def skip_last_trip_cotangents(stmts: List[Any], bars: Set[str], live_after: Set[str]) -> None:
    """Guard, in place, the dead last-trip cotangents of the reverse loops at the
    top level of the sweep ``stmts`` (``live_after``: the names read after it).
    A statement is guarded (``if k != last:``) when it is at the top level of a
    reverse loop over a fixed ``range`` (``sj_fixed``), binds a cotangent name
    (in ``bars``) by a call of a primitive without effects, and that name is
    read neither later in the trip nor after the loop."""
    later: Set[str] = set(live_after)
    for s in reversed(stmts):
        if isinstance(s, gast.For) and getattr(s, "sj_fixed", False):
            last = _last_index(s.iter)
            if last is not None:
                _guard(s, bars, later, last)
        later |= set(N.names_in(s))


def _last_index(it: Any) -> Any:
    """The loop variable's value on the last trip of ``it`` (``reversed(range(a[,
    b]))`` or ``range(a[, b])``), as an expression, or None."""
    rev = _is_reversed(it)
    rng = it.args[0] if rev else it
    if not isinstance(rng, gast.Call) or not isinstance(rng.func, gast.Name):
        return None
    if rng.func.id != "range" or rng.keywords or len(rng.args) not in (1, 2):
        return None
    if rev:
        return N.clone(rng.args[0]) if len(rng.args) == 2 else N.const(0)
    stop = N.clone(rng.args[-1])
    return gast.BinOp(left=stop, op=gast.Sub(), right=N.const(1))


def _guard(loop: Any, bars: Set[str], after_loop: Set[str], last: Any) -> None:
    body = loop.body
    k = loop.target.id
    read_later: Set[str] = set()
    for i in range(len(body) - 1, -1, -1):
        s = body[i]
        t = _pure_bar_assign(s, bars)
        if t is not None and t not in read_later and t not in after_loop and t != k:
            test = gast.Compare(left=N.name(k), ops=[gast.NotEq()], comparators=[N.clone(last)])
            guarded = gast.If(test=test, body=[s], orelse=[])
            N.copy_origin(guarded, s)
            for a in ("sj_file", "sj_note"):
                if hasattr(s, a):
                    setattr(guarded, a, getattr(s, a))
            guarded.sj_note = f"{t} of the last trip is not needed"
            body[i] = guarded
        read_later |= set(N.names_in(s))


def _pure_bar_assign(s: Any, bars: Set[str]) -> Any:
    """The cotangent name ``s`` binds, when ``s`` is ``t_bar = ns.f(...)`` of a
    primitive that only computes a value (a pure kind, or an ``array_result``
    helper; no effect, no list push or pop), else None."""
    if not isinstance(s, gast.Assign) or len(s.targets) != 1:
        return None
    t = s.targets[0]
    if not isinstance(t, gast.Name) or t.id not in bars or not isinstance(s.value, gast.Call):
        return None
    try:
        prim = by_public(N.to_source(s.value.func).strip())
    except KeyError:
        return None
    if prim.effectful or prim.stack is not None:
        return None  # (ad.pop_like takes a list's last entry: never skipped)
    if prim.kind not in ("elementwise", "reduction", "linalg", "structural", "creation"):
        if not prim.array_result:  # (the helpers that compute an array and nothing else)
            return None
    return t.id
