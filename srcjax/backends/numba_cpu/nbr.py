"""What generated code binds as ``_nbr``: :mod:`.loops`'s ``region``, ``tiered``
and ``clock``, imported at their first use, by a module that has a loop region
(jitted code without one does not pay for importing the kernel translator). A
real module, so generated modules that bind it go to the disk cache."""

from typing import Any


def __getattr__(name: str) -> Any:
    from . import loops

    value = getattr(loops, name)
    globals()[name] = value  # (later reads: a plain module global)
    return value
