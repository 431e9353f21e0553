"""Batching rules (vmap) for the registry's primitives, and the helpers the
batched code calls.

Rule convention
---------------
A batching rule is a plain Python function run by the batching pass
(:mod:`srcjax.transforms.batching`) at transformation time, attached with
``prim.def_batch(rule)``::

    def rule(c: BatchCall) -> expression | (expression, batched) | None

``c`` describes one call of the primitive in normalized code: ``c.bound``
(parameter name -> argument node), ``c.batched(p)`` (whether argument ``p``
carries the batch axis, always at axis 0), ``c.static(p)`` (its compile-time
value, if constant), and builders: ``c.rebuild(p=node)`` (the same call with
arguments replaced), ``c.shift_axis(p, x)`` (an axis argument for the batched
operand ``x``: ``1`` for ``0``, per-example axes for ``None``),
``c.materialize(node)`` (an unbatched operand broadcast along a new leading
axis), ``c.lift(x, other)`` (aligns per-example ranks), ``c.let(base, expr)``
(emit ``name = expr`` first) and ``c.size`` (the batch size). The rule returns
the expression of the batched result (batched along axis 0), or ``(expr,
False)`` when the result is the same for every example (``jnp.shape``), or
``None`` to let the pass fall back to a Python loop over the examples.

Rules produce calls of ordinary registered primitives, so the batched code is
itself srcjax input (``grad(vmap(f))``, ``vmap(vmap(f))``). The helpers
registered in the ``runtime_*`` modules (``ad.batch_broadcast``, ``ad.expand_to_rank``, ``ad.select``,
``ad.branch_input``, ``ad.bmatmul`` ...) carry their own derivative and
batching rules where a derivative can flow through them; the index helpers
(``ad.batch_axis`` ...) compute static metadata and are not differentiable.

Elementwise primitives (``kind == "elementwise"``) need no rule: the pass
aligns per-example ranks and calls them unchanged (:func:`elementwise_rule`).

Layout: ``_base`` (registering helpers, ``_def``, shared rule builders); the
runtime helpers batched code calls, each a registered ``ad.*`` primitive with
its own derivative rules (``runtime_trees``, ``runtime_select``,
``runtime_index``, ``runtime_products``, ``runtime_shape``); the rules, one
module per family (``elementwise``, ``containers``, ``control``, ``adjoints``,
``reductions``, ``structural``, ``creation``, ``indexing``, ``linalg``,
``collectives``, ``nested``). Importing this package attaches them all.
"""

# ruff: noqa: I001  (the order is deliberate: helpers register before the rules attach)
from __future__ import annotations

# the runtime helpers first: rules below attach to the ad.* primitives they register
from . import _base, runtime_trees, runtime_select, runtime_index  # noqa: F401
from . import runtime_products, runtime_shape  # noqa: F401
from . import elementwise, containers, control, adjoints, reductions  # noqa: F401
from . import structural, creation, indexing, linalg, collectives, nested  # noqa: F401

# re-exported: the names the rest of srcjax and the tests import from this package
from ._base import _def  # noqa: F401
from .elementwise import elementwise_rule
from .runtime_products import _bmatmul, _bmatmul_left, _bmatmul_right  # noqa: F401
from .runtime_products import bdot, bmatmul, bmatmul_left, bmatmul_right  # noqa: F401
from .runtime_select import _check_cond_types  # noqa: F401
from .runtime_trees import _tree_row  # noqa: F401  (primitives/control.py)

__all__ = ["elementwise_rule"]
