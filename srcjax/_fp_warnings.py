"""NumPy's floating-point RuntimeWarnings ("divide by zero encountered",
"overflow encountered" ...) silenced where srcjax's own code or generated code
raised them: JAX computes ``inf``/``nan`` without a word (``grad(jnp.sqrt)(0.)``,
the ``where`` trick, ``log1pexp(100.)``, ``0. / 0.``).

A ``np.errstate`` around each call would cost microseconds per call; instead one
warnings filter is appended at ``import srcjax`` (after the user's and Python's
own, so ``-W error`` and the user's filters still win). Its module pattern is an
object whose ``match`` looks at the frame that raised the warning (the innermost
Python frame while the filter is consulted, above NumPy's own Python wrappers):
srcjax's package files and the generated files (:data:`srcjax.errors.ORIGINS`)
match; the user's code, calling NumPy itself, still gets NumPy's warnings. The
check runs only when a warning is raised, never on the hot path. (srcjax imported
inside a ``warnings.catch_warnings()`` block, as pytest collects, loses the filter
with the block: call :func:`install` again.)

The filter is consulted after filters the user adds later (``simplefilter(
"always")``, pytest's ``-W error``), which would still see (or raise) the
warnings. So the entry points of the transformations (a call of jit, grad,
value_and_grad, vmap) also run with NumPy's floating-point errors ignored, as
``np.errstate(all="ignore")`` does: ``set_``/``reset`` around the
whole call (once per call, not per operation: about 0.1 us, the context
variable NumPy 2's errstate sets; ``np.seterr`` on NumPy 1). Not while
``jax_debug_nans`` / ``jax_debug_infs`` checks a call (their errstate raises),
nor while :func:`filters_clean` (the filter alone decides: no cost).
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from . import _debug_nans
from .errors import ORIGINS

__all__ = ["install", "filters_clean"]

_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep
_NUMPY = os.path.dirname(os.path.abspath(np.__file__)) + os.sep
#: NumPy's floating-point error messages (matched case-insensitively from the start)
_MESSAGE = r"(divide by zero|overflow|invalid value|underflow) encountered"


class _RaisedBySrcjax:
    """A warnings-filter module pattern: ``match`` is true when the Python frame
    that raised the warning, skipping NumPy's files, is srcjax's or generated."""

    def match(self, module: str) -> bool:
        f = sys._getframe(1)
        while f is not None and f.f_code.co_filename.startswith(_NUMPY):
            f = f.f_back
        if f is None:
            return False
        filename = f.f_code.co_filename
        return filename.startswith(_PACKAGE) or filename in ORIGINS

    def __repr__(self) -> str:
        return "<srcjax and generated code>"


_PATTERN = _RaisedBySrcjax()


#: ``[filters, length]``: the warnings filter list (and its length) in which
#: srcjax's filter decides every RuntimeWarning of generated code (no filter
#: before it could catch one); while ``warnings.filters`` is that list with that
#: length, the entry points skip their errstate (``[None, -1]``: never)
CLEAN: list = [None, -1]


def install() -> None:
    """Append the filter (once; again after ``warnings.resetwarnings()``)."""
    if not any(f[3] is _PATTERN for f in warnings.filters):
        warnings.filterwarnings(
            "ignore", message=_MESSAGE, category=RuntimeWarning, module="srcjax-fp", append=True
        )
        for i, f in enumerate(warnings.filters):
            if getattr(f[3], "pattern", None) in ("srcjax-fp", "srcjax-fp\\Z"):
                warnings.filters[i] = (f[0], f[1], f[2], _PATTERN, f[4])
                break
    _note_clean()


def _note_clean() -> None:
    """Set :data:`CLEAN` for the current filter list."""
    filters = warnings.filters
    for action, _message, category, module, _line in filters:
        if module is _PATTERN:
            CLEAN[0], CLEAN[1] = filters, len(filters)
            return
        if action != "ignore" and issubclass(RuntimeWarning, category):
            break  # (a filter the user set before importing srcjax: -W error)
    CLEAN[0], CLEAN[1] = None, -1


def filters_clean() -> bool:
    """Whether srcjax's filter alone decides (see :data:`CLEAN`); the entry
    points spell this test out inline."""
    return CLEAN[0] is warnings.filters and len(CLEAN[0]) == CLEAN[1]


try:  # NumPy 2: the context variable np.errstate sets
    from numpy._core.umath import _extobj_contextvar as _EXTOBJ
except ImportError:  # pragma: no cover - NumPy 1
    _EXTOBJ = None

#: > 0 while jax_debug_nans/infs check a call (their errstate raises: not quiet)
CHECKING = _debug_nans._active

if _EXTOBJ is not None:
    with np.errstate(all="ignore"):
        #: what ``np.errstate(all="ignore")`` sets (an argument of :data:`set_`)
        IGNORE = _EXTOBJ.get()
    #: ``token = set_(IGNORE)`` ... ``reset(token)``: the hot entry points call
    #: these C methods inline (0.1 us a call; a Python function around them doubles it)
    set_ = _EXTOBJ.set
    reset = _EXTOBJ.reset
else:  # pragma: no cover - NumPy 1: np.seterr, whose result np.seterr(**) restores
    IGNORE = "ignore"

    def set_(how):
        return np.seterr(all=how)

    def reset(old) -> None:
        np.seterr(**old)
