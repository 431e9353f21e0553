"""Steady allocation for repeated calls: glibc malloc's two thresholds, fixed.

A training step allocates and frees the same arrays on every call. glibc serves
blocks above ``M_MMAP_THRESHOLD`` (128 KiB at start) with ``mmap`` and gives the top of
its heap back to the kernel once more than ``M_TRIM_THRESHOLD`` is free there; both
thresholds then move with the program's history (each freed mmap block raises them,
up to 32 MiB and 64 MiB). Whether a step's 0.25-2 MiB arrays land in memory already
mapped or in fresh pages therefore depends on the order of earlier frees: measured
on the W4 MLP step (tools/bench.py), the same code took 1.9 ms or 3.0 ms, the slow
runs paying about 950 page faults per call, and which one a run got changed with
unrelated allocations earlier in the process (hand-written NumPy is exposed too).

:func:`tune` sets the thresholds at once to the values glibc's own policy moves
toward (mmap above 32 MiB, trim above 64 MiB), which stops them moving: blocks up
to 32 MiB are reused from the heap, and at most 64 MiB of free heap top is kept
from the kernel. Arrays above 32 MiB still get their own mapping (and NumPy's
huge-page advice), as before. It runs once, at ``import srcjax``, on Linux with
glibc only; set ``SRCJAX_MALLOC_TUNING=0`` to leave malloc as it is.
"""

from __future__ import annotations

import ctypes
import os
import platform
import sys

_M_TRIM_THRESHOLD = -1  # glibc's <malloc.h> parameter numbers
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20

tuned = False


def tune() -> bool:
    """Fix glibc's mmap and trim thresholds (see the module docstring). Returns
    whether they were set: False off Linux/glibc, when ``SRCJAX_MALLOC_TUNING=0``,
    or when ``mallopt`` refuses."""
    global tuned
    if tuned:
        return True
    if os.environ.get("SRCJAX_MALLOC_TUNING", "1") == "0":
        return False
    if not sys.platform.startswith("linux") or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    tuned = bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and bool(
        mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)
    )
    return tuned
