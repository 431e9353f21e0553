"""Refuse source that is not the code Python runs (fresh user 8,
r_stale_source.py): a module's file edited after import (an editor, a notebook
with autoreload off, a long run) made transforms read the new text while
Python kept the old code, so ``grad(f)`` of a loaded ``f`` computing ``2 * x``
gave 300.

:func:`check_current` compiles the text srcjax found for a function (its
``def`` block, or the lambda's span) at the same line numbers and with the
same ``from __future__`` flags, and compares a fingerprint of that code with
the function's ``__code__``, recursively through nested functions, lambdas and
comprehensions:

- the name and parameter counts of each code object;
- the constants (numbers, strings, docstrings: ``2.0`` -> ``300.0``);
- every name used (locals, globals, attributes, free and cell variables, as
  one set over the code and the code nested in it, so a closure compiled
  alone, whose free variables become globals, still matches);
- the set of line numbers with code (a statement added, moved or removed).

Not the bytecode: modules loaded through an import hook that rewrites their
AST (pytest's assert rewriting) compile to other bytecode than their text
does (a method call ``jnp.sin(x)`` there is LOAD_ATTR + CALL, compiled alone
LOAD_METHOD), and a false alarm is worse than the stale read. So the guard
misses an edit that keeps every part above: an operator changed (``x * 2`` ->
``x + 2``, ``<`` -> ``<=``), operands or statements reordered within the same
lines, a name swapped for another the function already uses (``x * x * 2`` for
``x * 2``). Names holding ``__`` are left out (a method's ``__x`` is
``_Class__x`` in its code, mangled with the class name the text compiled alone
does not have; ``super()`` adds ``__class__``). Changes only to comments or
blank lines that keep the line numbers are no change to the code.
Code an import hook rewrote (pytest's asserts: names such as ``@py_assert1``
that no source can hold) is not checked either.
Files without a copy on disk (notebook cells, srcjax's generated functions)
cannot go stale and are not checked. A verdict is kept per code object and
text, so each function is compiled once per process.
"""

from __future__ import annotations
import __future__

import types
from typing import Any, Dict, Tuple

from ..errors import Location, SourceUnavailableError

__all__ = ["check_current"]

_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag

_VERDICTS: Dict[Tuple[types.CodeType, str], bool] = {}


def _names(code: types.CodeType) -> set:
    """Every name ``code`` and the code nested in it use. One set for the whole
    subtree: a free variable a function only hands on to a nested lambda is in
    its ``co_freevars`` when compiled in place, and only in the lambda's names
    when compiled alone."""
    names = set(code.co_names) | set(code.co_varnames)
    names |= set(code.co_freevars) | set(code.co_cellvars)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _names(c)
    return names


def _fingerprint(code: types.CodeType) -> tuple:
    names = _names(code)
    consts = []
    nested = []
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            nested.append(_fingerprint(c))
        else:
            consts.append((type(c).__name__, repr(c)))
    lines = frozenset(line for _, _, line in code.co_lines() if line is not None)
    return (
        code.co_name,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        frozenset(n for n in names if "__" not in n),
        tuple(sorted(consts)),
        lines,
        tuple(sorted(nested, key=repr)),
    )


def _rewritten(code: types.CodeType) -> bool:
    """Whether ``code`` holds a name no Python source can write (``@py_assert1``:
    pytest rewrites the asserts of test modules), recursively."""
    for n in code.co_varnames + code.co_names:
        if not n.isidentifier():
            return True
    return any(isinstance(c, types.CodeType) and _rewritten(c) for c in code.co_consts)


def _find(code: types.CodeType, name: str, first: int) -> Any:
    """The code object named ``name`` starting at line ``first`` among the
    constants of ``code`` (recursively), or None."""
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            if c.co_name == name and c.co_firstlineno == first:
                return c
            found = _find(c, name, first)
            if found is not None:
                return found
    return None


def _compiled(text: str, code: types.CodeType, first: int, lambda_: bool) -> Any:
    """``code``'s counterpart compiled from ``text`` at line ``first``, or None
    when the text does not compile or holds no such function."""
    flags = code.co_flags & _FUTURE_FLAGS
    if lambda_:
        src = "\n" * (first - 1) + "(" + text + "\n)"
        mode = "eval"
    elif text[:1] in (" ", "\t"):
        # an indented def (a method, a nested function): the body of an `if`
        src = "\n" * max(first - 2, 0) + "if 1:\n" + text
        mode = "exec"
    else:
        src = "\n" * (first - 1) + text
        mode = "exec"
    try:
        top = compile(src, code.co_filename, mode, flags=flags, dont_inherit=True)
    except (SyntaxError, ValueError):
        return None
    return _find(top, code.co_name, code.co_firstlineno)


def check_current(code: types.CodeType, text: str, first: int, lambda_: bool = False) -> None:
    """Raise :class:`SourceUnavailableError` at ``code``'s file and line when
    ``text`` (found at line ``first`` of its file) does not compile to the code
    ``code`` runs (the file changed since the function was defined)."""
    key = (code, text)
    ok = _VERDICTS.get(key)
    if ok is None:
        if _rewritten(code):
            ok = True  # (an import hook's AST rewrite: pytest's asserts; cannot tell)
        else:
            other = _compiled(text, code, first, lambda_)
            ok = other is not None and _fingerprint(other) == _fingerprint(code)
        _VERDICTS[key] = ok
    if not ok:
        where = Location(code.co_filename, code.co_firstlineno, 0, None)
        raise SourceUnavailableError(
            f"{where.filename}:{where.lineno}: the source of {code.co_name} in the file is not "
            "the code Python runs: the file changed since the function was defined",
            hint="reload the module (importlib.reload) or re-run the script, then transform it again",
        )
