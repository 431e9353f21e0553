"""Reverse mode (vjp / grad) as an AST -> AST pass over normalized code.

The generated function runs the user's (normalized) code forward, then an
adjoint sweep in reverse order. Design (Tangent's model, tightened):

- **Activity.** Only values that depend on the differentiated inputs get
  adjoints; statements whose result's adjoint is statically zero emit nothing.
- **Adjoints** are named ``x_bar``. Each statement's adjoint code is its
  primitive's rules inlined as templates (:mod:`srcjax.transforms.rules`).
- **Control flow.** An ``if`` records its condition in a variable (it already
  is one after normalization) and the adjoint sweep branches on it. A ``while``
  counts its trips; its adjoint is ``for _ in range(n)``. A ``for i in
  range(...)`` is reversed as ``for i in reversed(range(...))``.
- **What is recorded.** The adjoint sweep needs a primal value exactly when an
  inlined rule reads it. Such a value is saved only where the forward code
  later overwrites it: outside loops in a plain variable (``x_prev = x``),
  inside loops on a tape (``tape.append(x)`` / ``x = tape.pop()``). Straight
  line code without overwrites records nothing.
- **Zeros.** Adjoints are symbolic zeros until their first contribution;
  control flow materializes them (``0.0`` for arrays, ``None`` -- a hole -- for
  containers, whose cotangents are sparse: reading ``params["w"]`` contributes
  ``{"w": w_bar}``) only where a branch or a loop needs a value;
  ``ad.cotangent_like`` fills holes with zeros once, at the end.

Modules: :mod:`.generate` (the pass: :class:`Reverse` and :func:`reverse`),
:mod:`.cotangents`, :mod:`.adjoint` (straight-line adjoints),
:mod:`.control_flow` (``if`` and loops), :mod:`.primal` (the forward sweep
with its saves), :mod:`.prune` (tape and liveness helpers).
"""

from .generate import Reverse, reverse

__all__ = ["reverse", "Reverse"]
