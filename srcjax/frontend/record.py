"""What one transformation read from its environment, for the disk cache.

While a transformation runs inside :class:`recording`, the normalizer reports
every non-local name it resolves (:func:`note_lookup`: the closure cell or
globals dict, the name, the object found or :data:`MISSING`) and
:func:`srcjax.codegen.emit.load` every module it loads (:func:`note_load`).
:mod:`srcjax.codegen.diskcache` stores fingerprints of those facts with the
generated module and checks them in the next process. Recordings nest: the
innermost one collects (a transform built while another one is normalizing
records its own); ``recording(active=False)`` collects nothing (a disk hit's
own load is no part of the enclosing transformation's output).
"""

from __future__ import annotations

import threading
from typing import Any, List, Optional

__all__ = ["MISSING", "Recorder", "recording", "note_lookup", "note_load", "note_warning"]

#: the object a lookup found when the name was not bound (maybe a builtin)
MISSING = object()

_LOCAL = threading.local()


class Recorder:
    """What one transformation read and loaded (see :class:`recording`)."""

    def __init__(self) -> None:
        self.lookups: List[tuple] = []  # (scope, name, object found or MISSING)
        self.loads: List[dict] = []  # emit.load's arguments and result
        #: warnings the transformation gives (the key-reuse check's, as
        #: ``[text, filename, lineno]``): a disk hit, which skips it, gives them again
        self.warnings: List[list] = []


def _stack() -> list:
    st = getattr(_LOCAL, "stack", None)
    if st is None:
        st = _LOCAL.stack = []
    return st


class recording:
    """``with recording() as rec:`` collects the lookups and loads of the
    transformation run inside (``rec`` is None when ``active`` is false)."""

    def __init__(self, active: bool = True) -> None:
        self.rec = Recorder() if active else None

    def __enter__(self) -> Optional[Recorder]:
        _stack().append(self.rec)
        return self.rec

    def __exit__(self, *exc: Any) -> None:
        _stack().pop()


def _top() -> Optional[Recorder]:
    st = getattr(_LOCAL, "stack", None)
    return st[-1] if st else None


def note_lookup(scope: Any, name: str, obj: Any) -> None:
    """The normalizer resolved the non-local ``name`` in ``scope`` (a closure
    cell, a globals dict) to ``obj`` (:data:`MISSING`: not bound there)."""
    rec = _top()
    if rec is not None:
        rec.lookups.append((scope, name, obj))


def note_load(info: dict) -> None:
    """:func:`srcjax.codegen.emit.load` built a function (its arguments and the
    function, ``info["fn"]``)."""
    rec = _top()
    if rec is not None:
        rec.loads.append(info)


def note_warning(item: list) -> None:
    """The transformation warns ``item`` (``[text, filename, lineno]``; see
    :func:`srcjax.frontend.keyreuse.report`)."""
    rec = _top()
    if rec is not None:
        rec.warnings.append(list(item))
