"""Source-level optimization passes over the normalized IR (IR -> IR).

Each pass takes the normalized ``FunctionDef`` (see
:mod:`srcjax.frontend.normalize`), edits its body in place and returns it, so
each can be applied and tested alone:

- :func:`bind_static`: static arguments become constant assignments at the top.
- :func:`propagate`: copy and constant propagation (``y = x; z = y * 2`` reads
  ``x``), block-local with invalidation on reassignment and around loops.
- :func:`fold_constants`: Python operators on constants (``0.5 * 2.0``) are
  evaluated at transformation time, with Python's semantics (weak types kept).
- :func:`infer_avals`: abstract values (shape, dtype, weak type) of every
  assigned name, from the argument signature: an analysis, annotating each
  assignment with ``stmt.sj_aval`` and the operands' values with
  ``stmt.sj_avals_in``.
- :func:`simplify`: algebraic simplification (``x*1``, ``x+0``, ``x-0``,
  ``x**1``, ``x**2 -> x*x``, ``x**3 -> x*x*x``, ``x**4``, ``x**0.5 -> ad.pow_half`` (IEEE pow, not sqrt, at -0/-inf),
  ``x**-1 -> 1/x``), only where the dtype and shape are unchanged (needs avals).
- :func:`cse`: common-subexpression elimination of pure primitive calls.
- :func:`dce`: dead-code elimination of pure statements whose result is never read.
- :func:`mark_weak_returns`: a returned value whose abstract value is a weak
  Python scalar goes out through ``ad.weak_value`` (jit's weakly typed results).

Inlining of user calls is done by the normalizer. Purity: primitives of kinds
elementwise, reduction, linalg, structural and creation, copies and container
displays are pure; everything else (``print``, list ``append``/``pop``, calls
without a rule, internal AD helpers) is kept as written.

Modules, one pass each: :mod:`.propagate` (bind_static, propagate,
fold_constants), :mod:`.interp` (infer_avals over :mod:`.avals`),
:mod:`.algebra` (simplify), :mod:`.carry_checks`, :mod:`.cse`, :mod:`.dce`,
:mod:`.inline` (inline_temporaries), :mod:`.operators` (as_operators: calls of
operator primitives as operators), :mod:`.promote`, :mod:`.release`
(release_after_loops, release_after_last_read, release_in_loops, run by jit last:
dead values set to None), :mod:`.loop_facts` (what the inference knows of
loops), :mod:`.trips` (merge_trip_lists), :mod:`.transposes`
(transposed_operands), :mod:`.broadcasts` (broadcast_operands), :mod:`.expands`
(fold_expands), :mod:`.const_operands`, :mod:`.rowmaps` (row_products), :mod:`.dead_pops`
(drop_unread_tape_entries); :mod:`.pipeline` runs
them in order (optimize); :mod:`.common` holds what they share.
"""

from .algebra import simplify
from .avals import Aval, ClassAval, check_branch_avals
from .common import PURE_KINDS
from .cse import cse
from .dce import dce
from .flat_results import build as build_flat
from .flat_results import flat_results
from .flat_results import parameters as flat_parameters
from .inline import inline_temporaries
from .interp import infer_avals
from .pipeline import jax_types, optimize
from .promote import promote
from .propagate import bind_static, fold_constants, is_literal, propagate
from .release import (
    release_after_last_read,
    release_after_loops,
    release_in_loops,
    take_dead_items,
)
from .weak_returns import mark_weak_returns

__all__ = [
    "Aval",
    "ClassAval",
    "bind_static",
    "is_literal",
    "propagate",
    "fold_constants",
    "infer_avals",
    "simplify",
    "cse",
    "dce",
    "inline_temporaries",
    "release_after_loops",
    "release_after_last_read",
    "take_dead_items",
    "release_in_loops",
    "optimize",
    "jax_types",
    "promote",
    "PURE_KINDS",
    "check_branch_avals",
    "mark_weak_returns",
    "flat_results",
    "build_flat",
    "flat_parameters",
]
