"""Rule makers for linear maps: one call gives a primitive that is linear in its
first operand (and the helper that computes its transpose) their vjp and jvp
rules, which would otherwise be written out again for every such pair.

The maps are ``p(x, *rest)``: linear in ``x``, with ``rest`` static or
reference operands (an axis, an index, the array whose shape a cotangent
takes) that get no rule. Two shapes of transpose occur:

- :func:`def_linear`: the transpose is ``transpose(g, *rest)``, with the same
  ``rest`` (``ad.forget(ct, idx)`` is its own; ``ad.tri_rhs`` and
  ``ad.tri_unrhs`` are each other's: :func:`def_transpose_pair`);
- :func:`def_with_adjoint`: the transpose is an adjoint helper
  ``adjoint(g, x, *rest)`` that also reads ``x`` (its shape or structure:
  ``ad.getitem(x, idx)`` and ``ad.index_adjoint(g, x, idx)``), and
  :func:`def_adjoint_of` gives the helper its own rules (linear in ``g``, its
  transpose is ``p`` again); :func:`def_adjoint_pair` does both.

:func:`def_linear_map` is the one all of them call (the transpose reads the
operands ``operands[start:stop]``); :func:`def_identity` gives the rules of
operands that pass derivatives through (a sum's, a check's).

The rules take ``(g, ans, *operands)``: :func:`srcjax.transforms.rules.inline_rule`
binds ``operands`` to every argument of the call in order (defaults filled in),
and spells ``p(g, *operands[1:])`` out as ``p(g, idx)``, so the generated code
is the same as with rules written out for each primitive's parameter names.
A primitive with keyword-only or ``*`` parameters cannot take these rules
(its operands have no single order): a TypeError when the rules are made.
"""

from __future__ import annotations

import inspect
from typing import Any

__all__ = [
    "def_adjoint_of",
    "def_adjoint_pair",
    "def_identity",
    "def_linear",
    "def_linear_map",
    "def_transpose_pair",
    "def_with_adjoint",
]

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


def _positional(*prims: Any) -> None:
    for p in prims:
        if any(q.kind not in _POSITIONAL for q in p.signature.parameters.values()):
            raise TypeError(
                f"{p.public}: linear-map rules bind operands in order; "
                "a keyword-only or * parameter has none"
            )


def def_linear_map(
    p: Any, transpose: Any, start: int, stop: Any = None, tangent: Any = None
) -> None:
    """Rules of ``p(x, *rest)``, linear in ``x``, whose transpose is
    ``transpose(g, *operands[start:stop])``, ``operands`` being ``(x, *rest)``:
    the jvp is ``tangent(t, *rest)`` (by default ``p`` itself), the vjp that
    transpose. The makers below are this one with their ``start`` and ``stop``
    (which inline as literals)."""
    tangent = p if tangent is None else tangent
    _positional(p, transpose, tangent)

    def vjp(g, ans, *operands):
        return transpose(g, *operands[start:stop])

    def jvp(t, ans, *operands):
        return tangent(t, *operands[1:])

    p.def_vjp(vjp)
    p.def_jvp(jvp)


def def_linear(p: Any, transpose: Any = None) -> None:
    """Rules of ``p(x, *rest)``, linear in ``x``, whose transpose is
    ``transpose(g, *rest)`` (by default ``p`` itself: a self-adjoint map, a
    mask or a permutation that is its own inverse)."""
    def_linear_map(p, p if transpose is None else transpose, 1)


def def_transpose_pair(p: Any, q: Any) -> None:
    """:func:`def_linear` both ways: ``p(x, *rest)`` and ``q(x, *rest)`` are
    linear in ``x`` and each other's transpose (``ad.tri_rhs`` and
    ``ad.tri_unrhs``, ``jnp.fft.fftshift`` and ``ifftshift``)."""
    def_linear(p, q)
    def_linear(q, p)


def def_with_adjoint(p: Any, adjoint: Any, tangent: Any = None) -> None:
    """Rules of ``p(x, *rest)``, linear in ``x``, whose transpose is the helper
    ``adjoint(g, x, *rest)`` (which reads ``x`` for its shape or structure).
    ``tangent``: the map of tangents when it is not ``p`` (``ad.astype``'s is
    ``ad.cast_tangent``, zeros for an integer ``dtype``)."""
    def_linear_map(p, adjoint, 0, tangent=tangent)


def def_adjoint_of(adjoint: Any, p: Any) -> None:
    """Rules of the helper ``adjoint(g, x, *rest)``, the transpose of ``p(x,
    *rest)`` (see :func:`def_with_adjoint`): it is linear in ``g`` and its
    transpose is ``p(h, *rest)`` again; ``x`` only gives the shape (no rule)."""
    def_linear_map(adjoint, p, 2)


def def_adjoint_pair(p: Any, adjoint: Any) -> None:
    """:func:`def_with_adjoint` and :func:`def_adjoint_of`: the rules of a
    linear ``p(x, *rest)`` and of its transpose helper ``adjoint(g, x, *rest)``."""
    def_with_adjoint(p, adjoint)
    def_adjoint_of(adjoint, p)


def def_identity(p: Any, count: int = 1) -> None:
    """Rules of a primitive whose first ``count`` operands pass derivatives
    through unchanged (``ad.add_any(a, b)``, a sum;
    ``ad.check_cotangent(ct, out)``, a check): each one's vjp is ``g``, its jvp
    ``t``."""
    _positional(p)

    def vjp(g, ans, *operands):
        return g

    def jvp(t, ans, *operands):
        return t

    p.def_vjp(*[vjp] * count)
    p.def_jvp(*[jvp] * count)
