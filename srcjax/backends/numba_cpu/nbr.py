"""What generated code binds as ``_nbr``: :mod:`.loops`'s ``region`` and
:mod:`.tiers`' ``tiered`` and ``clock``, imported at their first use, by a
module that has a Numba region (jitted code without one does not pay for
importing them). A tiered region (the default) does not import :mod:`.loops`
and its kernel translator until it is hot and compiles (a module of Numba maps
only, read back from the disk cache by another process, imports neither). A
real module, so generated modules that bind it go to the disk cache."""

from typing import Any


def __getattr__(name: str) -> Any:
    if name in ("tiered", "clock"):
        from . import numba, tiers

        if tiers.COMPILE is None:  # (set by .loops when it is imported)
            tiers.COMPILE, tiers.NUMBA = _compile, numba
        value = getattr(tiers, name)
    else:
        from . import loops

        value = getattr(loops, name)
    globals()[name] = value  # (later reads: a plain module global)
    return value


def _compile(key: str, source: str, sig: Any) -> Any:
    """:func:`.loops._compile`, imported when a tier first compiles (importing
    :mod:`.loops` then makes it ``tiers.COMPILE``)."""
    from . import loops

    return loops._compile(key, source, sig)
