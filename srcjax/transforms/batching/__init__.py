"""Batching (vmap) as an AST -> AST pass over normalized code.

The generated function takes the user's parameters (batched ones with their
mapped axis where the caller put it), moves every mapped axis to the front,
and runs the user's code rewritten so that each value either *carries the
batch axis at axis 0* ("batched") or is exactly the unbatched value every
example shares. Design:

- **Batched-ness analysis.** A forward, flow-sensitive analysis over the IR:
  a statement's result is batched when one of its operands is. At the joins
  of control flow (after an ``if``, at a loop head) a name batched on one
  path is made batched on the others with ``ad.batch_broadcast(v, batch)``
  (a read-only broadcast view), so each name has one batched-ness at each
  program point. Unbatched values are never broadcast otherwise.
- **Containers.** A batched list / tuple / dict has *every* leaf batched: a
  container display with some batched items broadcasts the others. So
  ``params["w"]`` of a batched container is batched, and ``len(lst)`` stays
  the number of items.
- **Primitives.** Each statement with batched operands is rewritten by its
  primitive's batching rule (:mod:`srcjax.primitives.batch_rules`; rule
  convention there). Elementwise primitives need none: operands only get
  their per-example ranks aligned (``ad.expand_to_rank`` inserts unit axes after the
  batch axis where a batched operand has a lower per-example rank than
  another operand), so NumPy's broadcasting lines them up. A call without a
  rule on batched operands (or a call srcjax cannot see into) becomes a
  Python loop over the examples in the generated code, with a ``# no batching
  rule`` note: correct, readable, slow.
- **Per-example metadata.** ``x.shape``, ``x.ndim``, ``x.size`` and
  ``len(x)`` of a batched array read the per-example values.
- **Control flow.** An ``if`` on an unbatched condition stays an ``if``. An
  ``if`` on a batched condition runs the then-branch alone when every example
  takes it, the else-branch alone when none does, and otherwise both, each on
  *safe inputs* (``ad.branch_input``: rows that do not take the branch see
  the inputs of a row that does, with no gradient path) and selects the
  results with ``ad.select``; so gradients through the converted ``if`` never
  pick up NaN/inf from the branch not taken (the "double where" done for the
  user). Side effects in the branches run once for the whole batch, and in
  the mixed case for both branches; ``print`` and ``debug.print`` become
  ``ad.print_examples``, which shows only the examples that run them (one line
  per example for ``debug.print``). A ``while`` with a batched
  test runs until no example continues; its body is a batched ``if`` on the
  per-example "still running" flags, so finished examples keep their values.
- **Generated code is ordinary srcjax input**: every helper is a registered
  primitive with derivative rules where it can carry a derivative, so
  ``grad(vmap(f))`` and ``vmap(vmap(f))`` transform this pass's output.

Modules: :mod:`.generate` (:func:`batch`, the entry), :mod:`.batcher` (the
pass's state and walk, assembled from the mixins :mod:`.statements`,
:mod:`.prints`, :mod:`.branches`, :mod:`.loops`), :mod:`.calls` (what a
batching rule sees: :class:`BatchCall`, :func:`build_call`), :mod:`.spec`
(:class:`BatchSpec`), :mod:`.rename` and :mod:`.helpers`; the analyses it
reads are in :mod:`srcjax.analysis` (static_names, tapes, liveness).
"""

from .calls import BatchCall, build_call
from .generate import batch
from .spec import BatchSpec

__all__ = ["batch", "BatchCall", "BatchSpec", "build_call"]
