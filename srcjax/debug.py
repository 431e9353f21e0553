"""``srcjax.debug`` (``jax.debug``): printing from inside transformed functions.

srcjax does not trace, so a plain ``print`` already runs on every call inside
``jit``/``grad``/``vmap``; ``debug.print`` is provided so that JAX code using it
runs unchanged.
"""

from __future__ import annotations

import builtins
from typing import Any

from ._callback import debug_callback as callback  # (jax.debug.callback)
from .primitives import hooks as _hooks

__all__ = ["print", "callback"]


def print(fmt: str, *args: Any, **kwargs: Any) -> None:  # noqa: A001 (JAX's name)
    """Print ``fmt.format(*args, **kwargs)`` (``jax.debug.print``).

    Args:
        fmt: a ``str.format`` template (``"x={x}"``).
        *args, **kwargs: values to format (arrays print as NumPy prints them;
            under ``vmap`` one line per example, as in JAX; inside a
            per-example ``if`` or loop, only the examples that run it).

    Returns:
        None. Not differentiable (it has no output).
    """
    builtins.print(fmt.format(*args, **kwargs))


print.__srcjax_inactive__ = True  # inside transformed code: called as it is
_hooks.PER_EXAMPLE_PRINTS.add(print)  # under vmap: one line per running example
