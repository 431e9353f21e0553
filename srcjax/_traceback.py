"""Traceback filtering, as JAX's (``jax_traceback_filtering``): an uncaught
exception that passed through srcjax is printed without srcjax's own frames,
so the user sees their call, the generated code's lines (which name their
file and line) and the located message with its hint.

``SRCJAX_TRACEBACK_FILTERING=off`` (or ``JAX_TRACEBACK_FILTERING=off``, or
``config.update("jax_traceback_filtering", "off")``) prints every frame. The
hook is installed at ``import srcjax`` only when ``sys.excepthook`` is Python's
own (IPython, pytest and debuggers keep theirs).
"""

from __future__ import annotations

import os
import sys
import traceback
from types import TracebackType
from typing import Optional

__all__ = ["filtered_traceback", "install"]

#: srcjax's package directory: frames of files below it are srcjax's
_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _filtering_on() -> bool:
    for name in ("SRCJAX_TRACEBACK_FILTERING", "JAX_TRACEBACK_FILTERING"):
        value = os.environ.get(name)
        if value is not None:
            return value.strip().lower() not in ("off", "0", "false", "no")
    try:
        from .config import config

        return str(config.read("jax_traceback_filtering")).lower() != "off"
    except Exception:  # noqa: BLE001 - no config: filter
        return True


def _is_srcjax_frame(tb: TracebackType) -> bool:
    return os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_PACKAGE)


def filtered_traceback(tb: Optional[TracebackType]) -> tuple:
    """``(traceback without srcjax's frames, how many were hidden)``. The
    innermost frame is kept when every frame is srcjax's (nothing else to show)."""
    frames = []
    while tb is not None:
        frames.append(tb)
        tb = tb.tb_next
    kept = [t for t in frames if not _is_srcjax_frame(t)]
    if not kept and frames:
        kept = frames[-1:]
    hidden = len(frames) - len(kept)
    head = None
    for t in reversed(kept):  # rebuild the chain from the innermost frame
        head = TracebackType(head, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return head, hidden


def _hook(exc_type, exc, tb) -> None:
    if not _filtering_on() or tb is None:
        sys.__excepthook__(exc_type, exc, tb)
        return
    new_tb, hidden = filtered_traceback(tb)
    if hidden == 0:
        sys.__excepthook__(exc_type, exc, tb)
        return
    traceback.print_exception(exc_type, exc, new_tb)
    print(
        f"({hidden} srcjax-internal frames hidden; SRCJAX_TRACEBACK_FILTERING=off shows them)",
        file=sys.stderr,
    )


def install() -> None:
    """Install the filtering hook where ``sys.excepthook`` is Python's own."""
    if sys.excepthook is sys.__excepthook__:
        sys.excepthook = _hook
