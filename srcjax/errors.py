"""Exceptions raised by srcjax, each pointing at the user's source.

Every error that concerns user code is a subclass of both :class:`SrcjaxError`
and the matching built-in (``TypeError``, ``ValueError``,
``NotImplementedError``), so ``except TypeError`` keeps working as with JAX.
Its message reads::

    model.py:12:11: no derivative rule for `scipy.stats.norm.pdf` on a path to the output
        h = norm.pdf(x) * w
            ^^^^^^^^^^^
    hint: wrap the call in a function decorated with @srcjax.custom_vjp, ...
"""

from __future__ import annotations

import linecache
from typing import Optional

__all__ = [
    "SrcjaxError",
    "UnsupportedSyntaxError",
    "NoDerivativeRuleError",
    "NonDifferentiableError",
    "RecursionUnsupportedError",
    "ResolutionError",
    "TransformTypeError",
    "TransformValueError",
    "SourceUnavailableError",
    "Location",
    "format_location",
]


class Location:
    """A place in user source: file name, 1-based line, 0-based column."""

    __slots__ = ("filename", "lineno", "col", "end_col", "line_text")

    def __init__(
        self,
        filename: str,
        lineno: int,
        col: int = 0,
        end_col: Optional[int] = None,
        line_text: Optional[str] = None,
    ) -> None:
        self.filename = filename
        self.lineno = lineno
        self.col = col
        self.end_col = end_col
        self.line_text = line_text

    def short(self) -> str:
        import os

        return f"{os.path.basename(self.filename)}:{self.lineno}"

    def __repr__(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.col + 1}"


def format_location(message: str, loc: Optional[Location], hint: Optional[str] = None) -> str:
    """``file:line:col: message``, then the source line, a caret, and a hint."""
    if loc is None:
        text = message
    else:
        text = f"{loc.filename}:{loc.lineno}:{loc.col + 1}: {message}"
        line = loc.line_text
        if line is None:
            line = linecache.getline(loc.filename, loc.lineno)
        if line:
            raw = line.rstrip("\n")
            stripped = raw.lstrip()
            indent = len(raw) - len(stripped)
            col = max(loc.col - indent, 0)
            width = 1
            if loc.end_col is not None and loc.end_col > loc.col:
                width = loc.end_col - loc.col
            width = max(1, min(width, len(stripped) - col))
            text += f"\n    {stripped}\n    {' ' * col}{'^' * width}"
    if hint:
        text += f"\nhint: {hint}"
    return text


class SrcjaxError(Exception):
    """Base class of srcjax's errors about user code."""

    def __init__(
        self, message: str, loc: Optional[Location] = None, hint: Optional[str] = None
    ) -> None:
        self.loc = loc
        self.hint = hint
        self.bare_message = message
        super().__init__(format_location(message, loc, hint))


class UnsupportedSyntaxError(SrcjaxError, NotImplementedError):
    """A construct the transform cannot handle (``try``, ``yield``, ``global`` writes ...)."""


class NoDerivativeRuleError(SrcjaxError, NotImplementedError):
    """A call with no derivative rule lies on a path from an input to the output."""


class NonDifferentiableError(SrcjaxError, TypeError):
    """Differentiation with respect to an integer/bool input, or a non-scalar output."""


class RecursionUnsupportedError(SrcjaxError, NotImplementedError):
    """A user function calls itself, directly or not."""


class ResolutionError(SrcjaxError, NameError):
    """A name in user code could not be resolved statically."""


class TransformTypeError(SrcjaxError, TypeError):
    """Wrong argument types for a transformation (JAX raises ``TypeError`` here)."""


class TransformValueError(SrcjaxError, ValueError):
    """Wrong argument values for a transformation (JAX raises ``ValueError`` here)."""


class SourceUnavailableError(SrcjaxError, ValueError):
    """The source of a function cannot be found (built-in, C extension, ``exec``)."""
