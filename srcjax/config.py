"""Global configuration, mirroring ``jax.config``.

``config.update("jax_enable_x64", True)`` turns on 64-bit floats and ints; it is
off by default, as in JAX (``JAX_ENABLE_X64=1`` in the environment turns it on at
import). Reading the flag is cheap: code on hot paths reads the module-level
boolean :data:`x64_enabled` (``from srcjax import config as _cfg; _cfg.x64_enabled``)
rather than going through the ``config`` object.

``config.update("jax_enable_checks", True)`` (``JAX_ENABLE_CHECKS=1``) turns on
srcjax's internal invariant checks, as JAX's flag of that name does for JAX's: every
generated module is re-parsed and compared with the tree it was rendered from, and
every cotangent is checked to have its primal's shape and dtype. They cost time,
so they are off by default; the test suite turns them on. Code reads the module
global :data:`checks_enabled`.

``config.update("jax_debug_nans", True)`` (``JAX_DEBUG_NANS=1``) and
``jax_debug_infs`` (``JAX_DEBUG_INFS=1``) raise ``FloatingPointError`` where a NaN
(an inf) appears, as JAX's flags do: see :mod:`srcjax._debug_nans` for what is
caught. Off, they cost one read of the module global :data:`debug_nonfinite` per
eager primitive and per call of a transformed function.

Other modules that cache something derived from an option (for example the
dtype tables in :mod:`srcjax.dtypes`) register a callback with :func:`on_change`.
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List

__all__ = ["config", "Config", "on_change", "x64_enabled", "checks_enabled"]


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _numba_loops_env() -> Any:
    """``SRCJAX_NUMBA_LOOPS``: 1/true/yes/on, 0/false/no/off, or auto (unset: auto)."""
    v = os.environ.get("SRCJAX_NUMBA_LOOPS", "").strip().lower()
    if v in ("0", "false", "no", "off"):
        return False
    return v in ("1", "true", "yes", "on") or "auto"


#: The current value of ``jax_enable_x64`` as a plain module global (fast to read).
x64_enabled: bool = _env_flag("JAX_ENABLE_X64")
#: ``jax_disable_jit`` (``srcjax.disable_jit()``): jitted functions run as written.
jit_disabled: bool = _env_flag("JAX_DISABLE_JIT")

#: The current value of ``jax_enable_checks`` (srcjax's internal invariant checks).
checks_enabled: bool = _env_flag("JAX_ENABLE_CHECKS")

#: ``jax_debug_nans`` / ``jax_debug_infs``, and whether either is on (the one
#: flag hot paths read)
debug_nans: bool = _env_flag("JAX_DEBUG_NANS")
debug_infs: bool = _env_flag("JAX_DEBUG_INFS")
debug_nonfinite: bool = debug_nans or debug_infs

# Options JAX users commonly set (jax_enable_x64, jax_enable_checks,
# jax_disable_jit, jax_debug_nans, jax_debug_infs and jax_threefry_partitionable
# act; the others are stored and
# can be read back), and srcjax's own.
_DEFAULTS: Dict[str, Any] = {
    "jax_enable_x64": x64_enabled,
    "jax_enable_checks": checks_enabled,
    "jax_platform_name": "",
    "jax_platforms": None,
    "jax_debug_nans": debug_nans,
    "jax_debug_infs": debug_infs,
    "jax_disable_jit": jit_disabled,
    "jax_default_matmul_precision": None,
    "jax_numpy_rank_promotion": "allow",
    "jax_numpy_dtype_promotion": "standard",
    "jax_default_prng_impl": "threefry2x32",
    "jax_threefry_partitionable": True,
    "jax_traceback_filtering": "auto",
    "jax_log_compiles": False,
    "jax_num_cpu_devices": -1,  # -1: SRCJAX_CPU_DEVICES / XLA_FLAGS / 1 (extras.cpu_device_count)
    # srcjax's own options
    "key_reuse_check": "warn",  # "warn" | "error" | "off" (srcjax/frontend/keyreuse.py)
    # compile jitted loops over scalars with Numba when it is installed
    # (srcjax/backends/numba_cpu/loops.py); applies to new jit specializations:
    # "auto" once a loop is hot (tiers.py), True at its first call, False never
    "numba_loops": _numba_loops_env(),
}

#: options with a fixed set of values (checked by Config.update)
_CHOICES: Dict[str, tuple] = {"key_reuse_check": ("warn", "error", "off")}

_listeners: List[Callable[[str, Any], None]] = []


def on_change(callback: Callable[[str, Any], None]) -> Callable[[str, Any], None]:
    """Call ``callback(name, value)`` after every :meth:`Config.update`."""
    _listeners.append(callback)
    return callback


class Config:
    """The ``srcjax.config`` object: ``update(name, value)``, ``read(name)`` and
    attribute access (``config.jax_enable_x64``), as ``jax.config``."""

    def __init__(self) -> None:
        object.__setattr__(self, "_values", dict(_DEFAULTS))

    def update(self, name: str, value: Any) -> None:
        """Set option ``name`` to ``value``. Unknown names raise ``AttributeError``
        (as JAX does)."""
        global x64_enabled, checks_enabled, jit_disabled, debug_nans, debug_infs, debug_nonfinite
        if name not in self._values:
            raise AttributeError(f"Unrecognized config option: {name}")
        if name == "jax_enable_x64":
            value = bool(value)
            x64_enabled = value
        elif name == "jax_enable_checks":
            value = bool(value)
            checks_enabled = value
        elif name == "jax_disable_jit":
            value = bool(value)
            jit_disabled = value
        elif name in ("jax_debug_nans", "jax_debug_infs"):
            value = bool(value)
            if name == "jax_debug_nans":
                debug_nans = value
            else:
                debug_infs = value
            debug_nonfinite = debug_nans or debug_infs
        elif name == "numba_loops" and value != "auto":
            if value not in (True, False, 0, 1):
                raise ValueError(
                    f"config option numba_loops must be 'auto', True or False, got {value!r}"
                )
            value = bool(value)
        if name in _CHOICES and value not in _CHOICES[name]:
            raise ValueError(f"config option {name} must be one of {_CHOICES[name]}, got {value!r}")
        self._values[name] = value
        for cb in list(_listeners):
            cb(name, value)

    def read(self, name: str) -> Any:
        """The current value of option ``name``."""
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    @property
    def jax_enable_x64(self) -> bool:
        return x64_enabled

    @property
    def x64_enabled(self) -> bool:
        return x64_enabled

    def __getattr__(self, name: str) -> Any:
        values = object.__getattribute__(self, "_values")
        if name in values:
            return values[name]
        raise AttributeError(f"Unrecognized config option: {name}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("use config.update(name, value) to change an option")

    def __repr__(self) -> str:
        return f"srcjax.config({self._values!r})"


config = Config()
