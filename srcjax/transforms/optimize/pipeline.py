"""The optimizer's pass order for jit (:func:`optimize`)."""

from __future__ import annotations

from typing import Any, Callable, Dict, Optional

from .algebra import simplify, unit_factors
from .bounds import loop_rows_as_subscripts, restore_subscripts
from .broadcasts import broadcast_operands
from .carry_checks import drop_carry_checks
from .const_operands import const_operands
from .cse import cse
from .dce import dce
from .dead_pops import drop_unread_tape_entries
from .direct import direct_calls
from .displays import structure_displays
from .expands import fold_expands
from .interp import infer_avals
from .item_cotangents import item_cotangents
from .lax_carries import carry_casts
from .licm import hoist_invariants, read_globals_once
from .lse_pairs import pair_logsumexps
from .masks import counted_masks, counted_replace_infs
from .operators import as_operators
from .promote import promote
from .propagate import fold_constants, propagate
from .pytrees import known_trees
from .readouts import popped_rows_as_reads, stacked_readouts
from .rowmaps import row_products
from .rowwise import rowwise_for_all_rows
from .shape_only import shape_only_operands
from .stack_rows import rows_into_stacks
from .static_fold import fold_static, lifts_as_subscripts
from .tape_pairs import pair_tape_entries
from .tape_rows import drop_dead_loop_copies, restored_values_as_rows
from .transposes import transposed_operands
from .trip_order import stacks_in_trip_order
from .trips import merge_trip_lists
from .unroll import unroll_list_loops
from .weak_returns import mark_weak_returns


# ---------------------------------------------------------------------------- driver
def optimize(
    fdef: Any,
    params: Dict[str, Any],
    resolve: Optional[Callable[[str], Any]] = None,
    namer: Any = None,
    boxed: Dict[str, Any] = None,
    cpu: bool = True,
) -> Any:
    """The jit pipeline's passes, in order; avals are left annotated for fusion.
    ``boxed`` names the parameters that are weakly typed in JAX's sense but held
    as NumPy scalars at run time (Python float arguments, see :func:`promote`);
    ``cpu``: the code runs on the CPU backend (NumPy arrays), where jit writes
    rows into stacks it allocates (:func:`rows_into_stacks`)."""
    propagate(fdef)
    fold_constants(fdef)
    infer_avals(fdef, params, resolve)
    if carry_casts(fdef, namer):  # (a weak initial carry the body promotes: JAX converts it)
        infer_avals(fdef, params, resolve)
    if namer is not None:  # (promote, below, keeps JAX's dtypes of the operators)
        as_operators(fdef)
    simplify(fdef, namer)
    cse(fdef)
    propagate(fdef)
    dce(fdef)
    infer_avals(fdef, params, resolve)
    # loops over lists whose length jit's key holds, written out (as jax.jit
    # traces them), and the tape of grad's written-out loops paired
    specialized = namer is not None and unroll_list_loops(fdef, params, namer.fresh)
    if specialized:
        pair_tape_entries(fdef, namer.fresh)
        fold_constants(fdef)
        propagate(fdef)
        dce(fdef)
        infer_avals(fdef, params, resolve)
    # what the argument types decide (ranks, axes, helpers with nothing to do),
    # then loop invariants out of loops, then the repeats that made
    for _ in range(3):
        folded = False
        for _ in range(8):
            if not fold_static(fdef):
                break
            specialized = folded = True
            # (propagate first: `cond = cast is None` after `cast = None` folds now)
            propagate(fdef)
            fold_constants(fdef)
        if not folded:
            break
        dce(fdef)
        infer_avals(fdef, params, resolve)
        if namer is not None:  # (operands that were unknown before the folds)
            as_operators(fdef)
        # (the helpers folded away hid operands: `a + neg_al` is `a + neg` now)
        simplify(fdef, namer)
        # (what the folds made known, a scan's length `n = 50`, types more: again)
    # (after fold_static: `grads = out[1]` is a copy, and every leaf's value known)
    # (a round may write out a loop over known leaves, whose list the next one knows)
    trees_known = False
    for _ in range(8):
        if not known_trees(fdef, params):
            break
        trees_known = specialized = True
        fold_constants(fdef)
        propagate(fdef)
        dce(fdef)
        infer_avals(fdef, params, resolve)
    if trees_known:
        # (leaves of known shapes now: their ranks, axes and helpers are decided)
        for _ in range(8):
            if not fold_static(fdef):
                break
            fold_constants(fdef)
            propagate(fdef)
        dce(fdef)
        infer_avals(fdef, params, resolve)
        simplify(fdef, namer)
    # (after the folds: the lists a reverse loop pushes one value on)
    if merge_trip_lists(fdef):
        specialized = True
    if item_cotangents(fdef):  # (a list's cotangent from all its items' at once)
        dce(fdef)
        infer_avals(fdef, params, resolve)
    if namer is not None and structure_displays(fdef, params, namer.fresh):
        dce(fdef)  # (the leaf lists the displays took apart)
        infer_avals(fdef, params, resolve)
    for _ in range(8 if namer is not None else 0):
        if not shape_only_operands(fdef, params, namer):
            break
        dce(fdef)  # (the work that computed an operand read for its shape alone,
        infer_avals(fdef, params, resolve)  # whose operands may be read so too)
    transposed = transposed_operands(fdef, namer)
    rows = row_products(fdef, namer)
    if broadcast_operands(fdef, namer) or transposed or rows:
        infer_avals(fdef, params, resolve)  # (the new statements, for the motion)
    hoisted = hoist_invariants(fdef, resolve, namer)
    if counted_masks(fdef, namer):  # (masks the motion took out of the loops)
        infer_avals(fdef, params, resolve)
        hoisted = hoist_invariants(fdef, resolve, namer) or True
    if hoisted or specialized:
        for _ in range(8):  # (a merged repeat makes the next one's operands equal)
            if not cse(fdef):
                break
            propagate(fdef)
        dce(fdef)
        infer_avals(fdef, params, resolve)
    # (after CSE: the gradient's replace_inf and its repeat in a jvp are one)
    if counted_replace_infs(fdef, namer):  # (a replace_inf that the mask's count decides)
        infer_avals(fdef, params, resolve)
    if fold_expands(fdef):  # (a broadcast cotangent read by an elementwise operation)
        dce(fdef)
        infer_avals(fdef, params, resolve)
    if direct_calls(fdef):
        # (ad.seed's constant reads nothing: the forward value it read may be dead
        # now, and the constant leaves the loops; a product by it is its operand)
        if unit_factors(fdef):
            propagate(fdef)
        dce(fdef)
        infer_avals(fdef, params, resolve)
        if hoist_invariants(fdef, resolve, namer):
            cse(fdef)
            propagate(fdef)
            dce(fdef)
            infer_avals(fdef, params, resolve)
    if pair_logsumexps(fdef):  # (a cross-entropy's logsumexp and its weights, once)
        infer_avals(fdef, params, resolve)
    popped = popped_rows_as_reads(fdef)  # (the pops' `like` operands are read no more)
    drop_unread_tape_entries(fdef)  # (jit sees both loops of grad's tape)
    if popped:  # (the tape's entries that only pop_like read: their values too)
        dce(fdef)
    if stacked_readouts(fdef, namer):  # (a scan's readout, once for all trips)
        dce(fdef)
        infer_avals(fdef, params, resolve)
    # (after the readouts: the stacked hidden states the reverse loop restores)
    if restored_values_as_rows(fdef, namer):
        drop_unread_tape_entries(fdef)
        restored_values_as_rows(fdef, namer, starts=True)  # (the restores still read)
        drop_dead_loop_copies(fdef.body)
        dce(fdef)
        infer_avals(fdef, params, resolve)
    if rowwise_for_all_rows(fdef, namer):  # (`1 - h * h` of those rows, once)
        dce(fdef)  # (the rows the trips read no more)
        infer_avals(fdef, params, resolve)
    if namer is not None and stacks_in_trip_order(fdef):  # (lists of rows: the arrays)
        dce(fdef)
        infer_avals(fdef, params, resolve)
    if cpu and rows_into_stacks(fdef, namer):  # (the rows the trips make: into their stacks)
        infer_avals(fdef, params, resolve)
    read_globals_once(fdef, resolve, namer)
    if namer is not None:
        _promote_all(fdef, params, resolve, namer, boxed)
        if const_operands(fdef, namer):  # (numbers met twice: 0-d arrays made once)
            infer_avals(fdef, params, resolve)
    drop_carry_checks(fdef)
    restore_subscripts(fdef)
    loop_rows_as_subscripts(fdef)
    lifts_as_subscripts(fdef)
    return fdef


def _promote_all(fdef: Any, params: Dict[str, Any], resolve: Any, namer: Any, boxed: Any) -> bool:
    """:func:`promote` (and :func:`carry_casts`) until nothing changes (each round
    re-infers the abstract values the casts it made change). Returns whether
    anything changed."""
    changed = False
    for _ in range(64):
        if not (carry_casts(fdef, namer) or promote(fdef, namer, boxed)):
            break
        changed = True
        infer_avals(fdef, params, resolve)
    return changed


def jax_types(
    fdef: Any,
    params: Dict[str, Any],
    resolve: Optional[Callable[[str], Any]],
    namer: Any,
    boxed: Dict[str, Any],
) -> bool:
    """The passes of :func:`optimize` that give JAX's dtypes and weak types, and
    nothing else: abstract values from the signature, :func:`promote` (casts
    where NumPy's promotion differs from JAX's, boxed weak scalars included)
    and :func:`mark_weak_returns`. The code is otherwise left as it is (no
    folding, no fusion): what ``grad``/``value_and_grad``/``jvp`` run, without
    jit, on a call with weakly typed Python scalar arguments (see
    :mod:`srcjax.jit_api.jitted`, ``_WeakTyped``). Returns whether a dtype
    changed (a cast was inserted): else the code computes what it computed,
    only its weak results are marked."""
    env = infer_avals(fdef, params, resolve)
    changed = _promote_all(fdef, params, resolve, namer, boxed)
    if changed:  # (the casts changed abstract values after them)
        env = infer_avals(fdef, params, resolve)
    mark_weak_returns(fdef, env)
    return changed
