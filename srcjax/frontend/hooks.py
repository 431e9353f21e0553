"""What the frontend needs from the layers above it, filled by them at import.

The frontend sits below codegen and the public transforms (the layer order of
tests/test_layering.py), yet normalizing needs a few of their services: the
names generated code binds, the reparse check of rendered source, and the jvp
of a function called inside transformed code (``srcjax.jvp(f, ...)`` in a
function being differentiated). Each is a :class:`Hook` here that the higher
module sets when it is imported (``hooks.namespaces.set(namespaces)`` at the
end of ``srcjax/codegen/emit.py``), so the dependency points down.
``import srcjax`` imports every module that fills one; calling a hook nobody
set raises RuntimeError naming the module that sets it.
"""

from __future__ import annotations

from typing import Any, Callable, Optional

__all__ = ["Hook", "namespaces", "means_the_same", "check_reparse", "jvp_function"]


class Hook:
    """A function slot of the frontend that a higher layer fills.

    Args:
        name: the hook's name, for errors.
        provider: the module that sets it at import (for errors).
    """

    __slots__ = ("name", "provider", "fn")

    def __init__(self, name: str, provider: str) -> None:
        self.name = name
        self.provider = provider
        self.fn: Optional[Callable[..., Any]] = None

    def set(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        """Make ``fn`` the hook's implementation; returns ``fn``."""
        self.fn = fn
        return fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fn = self.fn
        if fn is None:
            raise RuntimeError(
                f"srcjax.frontend.hooks.{self.name} is not set: {self.provider} sets it "
                "when imported (import srcjax first)"
            )
        return fn(*args, **kwargs)

    def __repr__(self) -> str:
        return f"Hook({self.name!r}, set by {self.provider}: {self.fn!r})"


#: ``namespaces() -> {name: module}``: the names every generated module binds
#: (``np``, ``jnp``, ``ad``, ``lax`` ...)
namespaces = Hook("namespaces", "srcjax.codegen.emit")
#: ``means_the_same(name, obj) -> bool``: the user's global ``name`` holding
#: ``obj`` is what generated code means by ``name`` (numpy as ``np``)
means_the_same = Hook("means_the_same", "srcjax.codegen.emit")
#: ``check_reparse(fdef, text, rendered=True)``: ``text`` parses back to ``fdef``
#: (raises otherwise; run under ``jax_enable_checks``)
check_reparse = Hook("check_reparse", "srcjax.codegen.emit")
#: ``jvp_function(fun, kinds, has_aux, linearize, positions=None) -> (generated,
#: bound)``: the generated jvp of ``fun``
jvp_function = Hook("jvp_function", "srcjax.api_fwd")
