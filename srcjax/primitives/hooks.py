"""Hooks: services the primitives need from the layers above them.

The primitives layer sits below the frontend, the transforms and the public
API (see ``tests/test_layering.py``), so it never imports them. Where a
primitive's implementation needs one of their services, this module owns the
hook and the higher layer fills it when it is imported:

- ``"transpose_linear"``: ``transpose_linear(tangent_map, ct, position, *args)``
  is ``J^T ct`` for the linear map ``t -> tangent_map(*args, t)`` (the tangent
  of argument ``position``), by reverse mode on ``tangent_map``'s source.
  ``ad.custom_transpose`` calls it (reverse mode through a ``custom_jvp`` rule);
  :mod:`srcjax.api_fwd` provides it.
- :data:`PER_EXAMPLE_PRINTS`: the printing functions that print one line per
  running example under ``vmap`` (``srcjax.debug.print``, added by
  :mod:`srcjax.debug`); ``ad.print_examples`` prints any other function's
  batch once.
"""

from __future__ import annotations

from typing import Any, Callable, Dict

__all__ = ["provide", "call", "PER_EXAMPLE_PRINTS"]

#: hook name -> the module that provides it (for the error when it is missing)
PROVIDERS: Dict[str, str] = {"transpose_linear": "srcjax.api_fwd"}

_HOOKS: Dict[str, Callable[..., Any]] = {}

#: functions that print one line per running example under vmap
PER_EXAMPLE_PRINTS: set = set()


def provide(name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    """Install ``fn`` as the hook ``name`` (one of :data:`PROVIDERS`); returns
    ``fn``. Raises KeyError for an unknown name."""
    if name not in PROVIDERS:
        raise KeyError(f"no primitives hook {name!r} (there are: {', '.join(sorted(PROVIDERS))})")
    _HOOKS[name] = fn
    return fn


def call(name: str, *args: Any) -> Any:
    """Call the hook ``name`` with ``args``. Raises RuntimeError naming the
    module that provides it when that module was never imported."""
    fn = _HOOKS.get(name)
    if fn is None:
        raise RuntimeError(
            f"the primitives hook {name!r} is not installed: import {PROVIDERS[name]}"
            " (`import srcjax` does)"
        )
    return fn(*args)
