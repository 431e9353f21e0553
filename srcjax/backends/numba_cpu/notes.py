"""The comments generated code shows over a Numba region (its kernel's first
lines, or why a loop kept NumPy): what :mod:`.loops` and :mod:`.maps` both
write, in a module of its own so that code with maps only does not import
the loops' translator."""

from __future__ import annotations

from typing import Any

import gast

#: kernel lines shown in the comments of generated code
SHOWN = 24


def comment(text: str, like: Any) -> Any:
    """A statement that renders as the comment ``text``, placed at ``like``."""
    node = gast.Pass()
    gast.copy_location(node, like)
    node.sj_comment = text
    return node
