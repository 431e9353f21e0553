"""The stages of ``jit(f).lower(*args)`` / ``.compile()`` / ``jit(f).trace(*args)``
and ``make_jaxpr``'s program (JAX 0.10.2's ``jax.stages``), for srcjax: the
program is the generated Python source that runs, where JAX has a jaxpr,
StableHLO or compiled HLO text.

No srcjax imports: jit (``srcjax.jit_api``) builds these, handing in the
functions that compute avals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["Compiled", "GeneratedProgram", "Lowered", "Traced"]


class GeneratedProgram:
    """What srcjax runs for one abstract signature: the generated Python source
    (``str(program)``, ``program.source``), the input avals (``in_avals``: a list
    of :class:`srcjax.ShapeDtypeStruct`) and, on first use, the output avals
    (``out_avals`` / ``out_shape``, from :func:`srcjax.eval_shape`). It stands
    where JAX returns a ``ClosedJaxpr``."""

    def __init__(self, source: str, in_avals: Callable[[], list], out_shape: Callable[[], Any]):
        self.source = source
        self._in_avals = in_avals
        self._out_shape = out_shape

    @property
    def in_avals(self) -> list:
        return self._in_avals()

    @property
    def out_shape(self) -> Any:
        return self._out_shape()

    @property
    def out_avals(self) -> list:
        shape = self.out_shape
        out: list = []

        def walk(t):
            if isinstance(t, (list, tuple)):
                for u in t:
                    walk(u)
            elif isinstance(t, dict):
                for k in sorted(t):
                    walk(t[k])
            elif t is not None:
                out.append(t)

        walk(shape)
        return out

    def pretty_print(self) -> str:
        return self.source

    def __str__(self) -> str:
        return self.source

    def __repr__(self) -> str:
        return self.source


class Compiled:
    """``jit(f).lower(*args).compile()``: the specialized function, callable with
    arguments of the lowered signature; ``as_text()`` is its generated source."""

    def __init__(self, call: Callable, source: str) -> None:
        self._call = call
        self._source = source

    def as_text(self) -> str:
        """The generated Python source (JAX: the compiled HLO text)."""
        return self._source

    def cost_analysis(self) -> None:
        """None: srcjax has no cost model (JAX's backends may return None too)."""
        return None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._call(*args, **kwargs)


class Lowered:
    """``jit(f).lower(*args)``: the program specialized on the arguments'
    shapes, dtypes and static values. ``as_text()`` is the generated source (JAX:
    StableHLO text); ``compile()`` gives a :class:`Compiled`."""

    def __init__(self, call: Callable, source: str) -> None:
        self._call = call
        self._source = source

    def as_text(self, dialect: str | None = None) -> str:
        """The generated Python source; ``dialect`` is accepted and ignored."""
        return self._source

    def compile(self, compiler_options: Any = None) -> Compiled:
        return Compiled(self._call, self._source)

    def cost_analysis(self) -> None:
        return None


class Traced:
    """``jit(f).trace(*args)``: ``jaxpr`` is the :class:`GeneratedProgram`,
    ``out_info`` the output's :class:`srcjax.ShapeDtypeStruct` pytree, ``lower()``
    the :class:`Lowered` stage."""

    def __init__(self, call: Callable, program: GeneratedProgram) -> None:
        self._call = call
        self.jaxpr = program

    @property
    def out_info(self) -> Any:
        return self.jaxpr.out_shape

    def lower(self) -> Lowered:
        return Lowered(self._call, self.jaxpr.source)
