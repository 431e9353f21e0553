"""Tiered compilation of jitted loops (``numba_loops="auto"``, the default when
Numba is installed).

A loop that :mod:`.loops` can make a kernel of first runs as NumPy code, timed:
generated code calls ``_nbr.tiered(key)(...)`` (None while the region is cold:
the NumPy loop runs, between ``_nbr.clock()`` and ``_nbr.tiered(key).spent(t)``).
Once the region is *hot*, the next call compiles its kernel (and its partner's,
for grad's forward/reverse pair: they share one tape) and later calls run it.

The rule: a region is hot once the NumPy time it has cost in this process
reaches :data:`HOT_FRACTION` of what compiling it is expected to cost now
(:func:`expected_cost`): Numba's start in this process (import and target
set-up, :data:`STARTUP_S`; paid once per process, by the first region to
compile), then per kernel a fresh compile (:data:`COMPILE_S`) or a load from
Numba's on-disk cache in srcjax's cache directory (:data:`DISK_S`). Costs are
those measured on the reference machine (docs/ARCHITECTURE.md, "Numba loops").

Why a fraction of 1/100: a compiled kernel runs such loops 20-200x faster, so
compiling pays back once the region would have cost about the compile time
again. The rule bets that a jitted loop that has already cost 1% of a compile
will run at least 100x as long again (jitted functions are called in loops:
training, sweeps, samplers): the loss when the bet is wrong is bounded (one
compile per region per process, i.e. at most 100x the time the region had
cost, about 1.3 s), and a process that never runs a hot loop never imports
Numba. With Numba started and the kernel on disk (a second process, after
another region compiled), the threshold is 0.15 ms: such regions compile at
their next call.

A region Numba cannot type is never retried: the failure is kept for the
process and written next to the kernel's file in the cache directory, so later
processes do not try again (unless the Numba version changed).
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from typing import Any, Dict, List, Optional

__all__ = ["tiered", "clock", "status", "Tier", "HOT_FRACTION", "expected_cost"]

#: the fraction of the expected compile cost a region's NumPy time must reach
HOT_FRACTION = 0.01
#: seconds: Numba's first use in a process (import, target and registries)
STARTUP_S = 0.8
#: seconds: compiling one kernel (measured 0.3-1 s for the loops of the bench)
COMPILE_S = 0.5
#: seconds: compiling one array-mode kernel (:mod:`.arrays`; R6's CG loop: 1.5 s CPU)
ARRAY_COMPILE_S = 1.5
#: seconds: one kernel loaded from Numba's on-disk cache, Numba started
DISK_S = 0.015

clock = time.perf_counter
#: ``COMPILE(key, source, sig)``: the kernel compiled, a :class:`.loops.Region`
#: (set by :mod:`.loops`, which generated code reaches tiers through)
COMPILE: Any = None
#: ``NUMBA()``: the numba module, or None where it cannot be imported (set by :mod:`.loops`)
NUMBA: Any = None
_STARTED = False
_LOCK = threading.Lock()
_TIERS: Dict[str, "Tier"] = {}


def started() -> None:
    """Numba has compiled or loaded a kernel in this process: its start is paid."""
    global _STARTED
    _STARTED = True


class _Group:
    """Regions compiled together (one loop, or grad's forward and reverse loop)."""

    __slots__ = ("tiers", "spent_s", "calls", "state", "reason", "on_disk")

    def __init__(self) -> None:
        self.tiers: List[Tier] = []
        self.spent_s = 0.0
        self.calls = 0
        self.state = "cold"  # "cold" | "compiled" | "failed"
        self.reason = ""
        self.on_disk: Optional[bool] = None

    def threshold(self) -> float:
        if self.on_disk is None:
            self.on_disk = all(_on_disk(t.key) for t in self.tiers)
        fresh = sum(t.cost for t in self.tiers)
        return HOT_FRACTION * expected_cost(len(self.tiers), self.on_disk, fresh)

    def tier_up(self) -> None:
        with _LOCK:
            if self.state != "cold":
                return
            if NUMBA() is None:  # (installed but broken: not remembered on disk)
                self.state, self.reason = "failed", "numba cannot be imported"
                return
            try:
                regs = [COMPILE(t.key, t.source, t.sig) for t in self.tiers]
            except Exception as exc:  # noqa: BLE001 - Numba missing or broken: NumPy
                regs, self.reason = [], f"{type(exc).__name__}: {exc}"[:120]
            bad = [r for r in regs if r.fn is None]
            if bad or not regs:
                self.reason = self.reason or bad[0].error
                self.state = "failed"
                for t in self.tiers:
                    _remember_failure(t.key, self.reason)
                return
            started()
            for t, r in zip(self.tiers, regs):
                t.region = r
            self.state = "compiled"


class Tier:
    """One tiered region: its kernel's source, argument types (None in a process
    that read the generated module from the disk cache: typed at the first
    compiled call), its group, and the compiled :class:`.loops.Region`."""

    __slots__ = ("key", "source", "sig", "group", "region", "cost")

    def __init__(self, key: str, source: str, sig: Optional[List[Any]]) -> None:
        self.key = key
        self.source = source
        self.sig = sig
        #: seconds a fresh compile of its kernel is expected to take
        self.cost = ARRAY_COMPILE_S if "\nARRAY_MODE = True\n" in source else COMPILE_S
        self.region: Any = None
        self.group = _Group()
        self.group.tiers.append(self)
        why = _failed_before(key)
        if why:
            self.group.state, self.group.reason = "failed", why

    def join(self, other: "Tier") -> None:
        """Compile with ``other`` (grad's loop pair)."""
        g, h = self.group, other.group
        if g is h:
            return
        for t in h.tiers:
            t.group = g
            g.tiers.append(t)
        g.on_disk = None
        g.spent_s += h.spent_s
        if h.state == "failed":
            g.state, g.reason = "failed", h.reason

    def __call__(self, *args: Any) -> Any:
        """The compiled kernel's results, or None: the NumPy loop runs (cold, a
        failed compile, or arguments the kernel refused)."""
        reg = self.region
        if reg is None:
            g = self.group
            if g.state != "cold" or g.spent_s < g.threshold():
                return None
            g.tier_up()
            reg = self.region
            if reg is None:
                return None
        return reg(*args)

    def relist(self, stacks: Any) -> Any:
        """The forward kernel's tape stacks as the NumPy tape list (:mod:`.tapes`)."""
        return self.region.relist(stacks)

    def spent(self, t0: float) -> None:
        """The NumPy loop ran from ``t0`` (:func:`clock`) to now."""
        g = self.group
        if g.state == "cold":
            g.spent_s += clock() - t0
            g.calls += 1

    def status(self) -> str:
        """Which tier this region is in, in words (for ``srcjax.source``)."""
        g = self.group
        runs = f"{g.calls} NumPy runs, {g.spent_s * 1e3:.2f} ms"
        if g.state == "compiled":
            r = self.region
            if r is not None and r.fn is None:
                return f"tier: NumPy, the compiled kernel failed on its arguments: {r.error}"
            return f"tier: Numba, compiled after {runs}"
        if g.state == "failed":
            return f"tier: NumPy for good, Numba could not compile it: {g.reason}"
        return f"tier: NumPy until hot, {runs} of the {g.threshold() * 1e3:.2f} that make it hot"


def expected_cost(kernels: int, on_disk: bool, fresh: float = 0.0) -> float:
    """Seconds compiling ``kernels`` kernels is expected to cost now (``fresh``:
    their compiles from nothing, default :data:`COMPILE_S` each)."""
    cost = kernels * DISK_S if on_disk else (fresh or kernels * COMPILE_S)
    return (0.0 if _STARTED else STARTUP_S) + cost


def make(key: str, source: str, sig: List[Any], partner: str = "") -> Tier:
    """The tier of a region generated in this process (``partner``: the other
    loop of grad's pair, compiled with it)."""
    t = _TIERS.get(key)
    if t is None:
        t = _TIERS[key] = Tier(key, source, sig)
    if partner and partner in _TIERS:
        _TIERS[partner].join(t)
    return t


def tiered(key: str, partner: str = "") -> Tier:
    """The tier of region ``key``, which generated code calls on each run. In
    another process (a generated module from the disk cache) the kernel is read
    back from its file in the cache directory and hash-checked; Numba is not
    imported until the region is hot."""
    t = _TIERS.get(key)
    if t is not None:
        return t
    t = _TIERS[key] = Tier(key, kernel_text(key), None)
    if partner:
        tiered(partner).join(t)
    return t


def status(source: str) -> str:
    """``source`` (generated code) with each tiered region's comment saying the
    tier it is in now."""
    for key, t in list(_TIERS.items()):
        mark = f"Numba region {key} (tiered"
        if mark in source:
            head, _, tail = source.partition(mark)
            _, _, rest = tail.partition(")")
            source = f"{head}Numba region {key} ({t.status()}){rest}"
    return source


# ---------------------------------------------------------------------------- on disk
def kernel_text(key: str) -> str:
    """The source of kernel ``key`` from its file in the cache directory, hash-checked."""
    path = os.path.join(_cache_dir(), f"{key}_{key[len('nbloop_') :]}.py")
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    if hashlib.sha256(text.encode("utf-8")).hexdigest()[:16] != key[len("nbloop_") :]:
        raise RuntimeError(f"srcjax: the Numba kernel {path} was changed; delete it")
    return text


def _cache_dir() -> str:
    from ...codegen import cache

    return cache.cache_dir()


def _on_disk(key: str) -> bool:
    """Whether Numba's on-disk cache holds a compile of kernel ``key`` (its index
    file, ``<cache>/numba/<dir>/<file>.kernel-<line>.py<ver>.nbi``; which
    signature is not checked: a miss costs a compile)."""
    base = os.path.join(_cache_dir(), "numba")
    head = f"{key}_{key[7:]}.kernel-"
    try:
        for sub in os.listdir(base):
            for name in os.listdir(os.path.join(base, sub)):
                if name.startswith(head) and name.endswith(".nbi"):
                    return True
    except OSError:
        pass
    return False


def _failure_path(key: str) -> str:
    return os.path.join(_cache_dir(), f"{key}_{key[7:]}.failed")


def _numba_version() -> str:
    from importlib import metadata

    try:
        return metadata.version("numba")
    except Exception:  # noqa: BLE001
        return ""


def _remember_failure(key: str, reason: str) -> None:
    try:
        with open(_failure_path(key), "w", encoding="utf-8") as fh:
            fh.write(f"{_numba_version()}\n{reason}\n")
    except OSError:
        pass


def _failed_before(key: str) -> str:
    """The reason kernel ``key`` failed in an earlier process with this Numba, or ""."""
    try:
        with open(_failure_path(key), encoding="utf-8") as fh:
            version, _, reason = fh.read().partition("\n")
    except OSError:
        return ""
    return reason.strip() if version == _numba_version() else ""
