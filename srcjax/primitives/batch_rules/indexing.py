"""Batching rules of indexing: ``x[idx]`` with batched operands or indices,
``.at[...]`` updates and their adjoints, take / take_along_axis,
dynamic_slice, searchsorted, interp, and the size-dependent primitives
(nonzero, unique) that fall back to a loop."""

from __future__ import annotations

import gast

from ...errors import TransformValueError
from ...frontend import nodes as N
from ..ad.indexing import getitem, index_adjoint, index_take
from ..control.cotangents import tree_index_adjoint
from ..linalg.svd import qr_check, svd_ad_full
from ..setops import argwhere, flatnonzero, nonzero, unique
from ..structural.at import (
    at_add,
    at_get,
    at_max,
    at_min,
    at_multiply,
    at_multiply_others,
    at_multiply_others_d1,
    at_multiply_others_d2,
    at_multiply_others_d3_check,
    at_set,
    at_set_winners,
)
from ..structural.dynamic import dynamic_slice, dynamic_update_slice
from ..structural.interp import (
    interp,
    interp_index,
    interp_put,
    interp_region,
    interp_rows,
    interp_take,
    interp_unset,
)
from ..structural.sorting import searchsorted
from ..structural.take import take, take_along_axis
from ._base import _def, _flat_rows, _helper_materialized, _is_name, _unbatched_result
from .runtime_index import (
    _LEADING_SEPARATOR,
    _LEADING_SEPARATOR_HINT,
    VmapIndexError,
    bsearchsorted,
)


def _take_along_axis(c):
    ok, axis = c.static("axis")
    if not ok:
        return None
    if axis is None:  # along the flattened example (indices are 1-D per example)
        arr = c.arg("arr")
        arr = _flat_rows(c, arr) if c.batched("arr") else N.call("jnp.ravel", [arr])
        arr = c.materialize(arr) if not c.batched("arr") else arr
        ind = c.materialize(c.arg("indices"))
        return c.rebuild(arr=arr, indices=ind, axis=N.const(1))
    arr = c.materialize(c.arg("arr"))
    ind = c.materialize(c.arg("indices"))
    return c.rebuild(arr=arr, indices=ind, axis=c.shift_axis("axis", arr))


_def([take_along_axis], _take_along_axis)


def _take(c):
    ok, axis = c.static("axis")
    if c.batched("indices") or not ok:
        return None
    a = c.arg("a")
    if axis is None:
        flat = _flat_rows(c, a, "a")
        return c.rebuild(a=flat, axis=N.const(1))
    return c.rebuild(axis=c.shift_axis("axis", a))


_def([take], _take)


def _static_index(idx):
    """Whether an index node is built only from constants, slices and None."""
    for n in gast.walk(idx):
        if isinstance(n, gast.Name):
            return False
    return True


def _prepend_colon(idx):
    colon = gast.Slice(lower=None, upper=None, step=None)
    if isinstance(idx, gast.Tuple):
        return gast.Tuple(elts=[colon] + [N.clone(e) for e in idx.elts], ctx=gast.Load())
    return gast.Tuple(elts=[colon, N.clone(idx)], ctx=gast.Load())


def _index_parts(idx):
    return list(idx.elts) if isinstance(idx, gast.Tuple) else [idx]


def _basic_part(p):
    """Whether an index part is statically a slice, an int, ``None`` or ``...``
    (no array: with such parts only, a leading ``:`` batches the index)."""
    if isinstance(p, gast.Slice):
        return True
    if isinstance(p, gast.UnaryOp) and isinstance(p.op, gast.USub):
        p = p.operand
    if isinstance(p, gast.Constant):
        return not isinstance(p.value, bool) and (
            p.value is None or p.value is Ellipsis or isinstance(p.value, int)
        )
    return False


def _int_part(p):
    if isinstance(p, gast.UnaryOp) and isinstance(p.op, gast.USub):
        p = p.operand
    return (
        isinstance(p, gast.Constant) and isinstance(p.value, int) and not isinstance(p.value, bool)
    )


def _batched_index(c, idx, x_batched, x=None):
    """The index of the batched array ``x`` for per-example index ``idx``."""
    parts = _index_parts(idx)
    flags = [c.bp.is_batched(p) for p in parts]
    for k, (p, f) in enumerate(zip(parts, flags)):
        if f and isinstance(p, gast.Slice):
            err = c.error(
                f"under vmap, a bound of the slice at position {k} of this index differs "
                "per example (it depends on a vmapped value); the length of the result would differ per example. Slice bounds must be "
                "static, as in JAX (IndexError: slice entries must be static integers)",
                hint="use lax.dynamic_slice(x, (start,), (size,)) for a per-example start "
                "with a fixed size, or jnp.where with a mask of the wanted positions",
            )
            raise VmapIndexError(err.bare_message, err.loc, err.hint)
    if not any(flags):
        if all(_basic_part(p) for p in parts):
            return _prepend_colon(idx)
        # an array among the parts may move the advanced dims to the front:
        # decided at run time (ad.batch_index)
        return N.call("ad.batch_index", [N.index_value(idx), c.size])
    seps = [isinstance(p, gast.Slice) or _basic_part(p) and not _int_part(p) for p in parts]
    kept = [k for k, sep in enumerate(seps) if not sep]
    if (
        seps[0]
        and kept[-1] - kept[0] + 1 == len(kept)
        and all(f or _int_part(p) for p, f, sep in zip(parts, flags, seps) if not sep)
        and any(isinstance(p, gast.Constant) and p.value is None for p in parts[: kept[0]])
    ):
        # known now (else ad.gather_index raises the same when it runs)
        raise c.error(_LEADING_SEPARATOR, _LEADING_SEPARATOR_HINT)
    args = [
        N.index_value(idx),
        N.const(tuple(flags)) if isinstance(idx, gast.Tuple) else N.const(flags[0]),
        c.size,
        N.const(bool(x_batched)),
    ]
    if x is not None:  # (slices in front of the index arrays need x's dims)
        args.append(N.call("jnp.shape", [N.clone(x)]))
        if not isinstance(idx, gast.Tuple) or any(
            isinstance(p, gast.Constant) and p.value is None for p in parts
        ):
            # a `None` in front of the index arrays is known only when it runs
            loc = c.error("").loc
            if loc is not None:
                args.append(N.const((loc.filename, loc.lineno, loc.col)))
    return N.call("ad.gather_index", args)


def _getitem(c):
    x = c.arg("x")
    idx = c.bound["idx"]
    if c.is_container(x):
        if c.batched("idx"):
            return None
        return c.rebuild()
    xb = c.batched("x")
    if not xb and not c.bp.is_batched(idx):
        return c.rebuild()
    if xb and not c.bp.is_batched(idx):
        # x might be a container of batched values that the analysis did not see
        # (a tangent tuple built in a loop, a gradient dict indexed by a key from a
        # loop): decide at run time
        return N.call("ad.bgetitem", [x, N.index_value(idx)])
    return N.item(x, _batched_index(c, idx, xb, x))


_def([getitem], _getitem)


def _at_rule(c):
    x = c.materialize(c.arg("x"))
    idx = c.bound["idx"]
    v = c.arg("v")
    new_idx = _batched_index(c, idx, True, x)
    if c.batched("v"):
        target = N.item(N.clone(x), N.clone(new_idx))  # (clamps: only its ndim is read)
        v = c.let(
            (v.id if _is_name(v) else "v") + "_al",
            N.call(
                "ad.expand_to_rank",
                [v, gast.BinOp(left=N.call("jnp.ndim", [target]), op=gast.Sub(), right=N.const(1))],
            ),
        )
    return c.call(c.prim.public, [x, N.index_value(new_idx), v], _mode_kws(c))


def _mode_kws(c, names=("mode",)):
    """The static out-of-bounds keywords (``mode``, ``fill_value``) of the call."""
    return {k: c.arg(k) for k in names if k in c.bound}


_def([at_set, at_add, at_multiply, at_min, at_max], _at_rule)


def _at_get_rule(c):
    """``ad.at_get(x, idx, mode, fill_value)`` / ``ad.at_slots_get(g, idx, mode)``:
    a gather, batched as ``x[idx]`` is (its out-of-bounds handling works on the
    batched index: the batch coordinate is always in bounds)."""
    xname = "x" if "x" in c.bound else "g"
    x = c.arg(xname)
    idx = c.bound["idx"]
    xb = c.batched(xname)
    if not xb and not c.bp.is_batched(idx):
        return c.rebuild()
    new_idx = _batched_index(c, idx, xb, x)
    return c.call(c.prim.public, [x, N.index_value(new_idx)], _mode_kws(c, ("mode", "fill_value")))


_def([at_get], _at_get_rule)


def _example_mode(c, idx):
    """``mode=`` of a gather's adjoint (``ad.index_adjoint``) for a per-example index ``idx`` with batched parts: JAX's per-example rule
    (:func:`runtime_index._example_index_mode`), or the call's mode."""
    mode = c.arg("mode") if "mode" in c.bound else N.const(None)
    if not c.bp.is_batched(idx):
        return {} if "mode" not in c.bound else {"mode": mode}
    parts = _index_parts(idx)
    flags = tuple(c.bp.is_batched(p) for p in parts)
    flags = N.const(flags) if isinstance(idx, gast.Tuple) else N.const(flags[0])
    return {"mode": N.call("ad.example_index_mode", [N.index_value(idx), flags, mode])}


def _index_take_rule(c):
    g = c.arg("g")
    idx = c.bound["idx"]
    gb = c.batched("g")
    if not gb and not c.bp.is_batched(idx):
        return c.rebuild()
    if c.is_container(g):
        return None if c.bp.is_batched(idx) else c.rebuild()
    if not c.bp.is_batched(idx):
        # g may be a container of batched values the analysis did not see (a
        # custom_vjp's cotangent tuple): decided at run time, as ad.bgetitem
        return c.call("ad.bindex_take", [g, N.index_value(idx)], _mode_kws(c))
    new_idx = _batched_index(c, idx, gb, g)
    return c.call(c.prim.public, [g, N.index_value(new_idx)], _mode_kws(c))


_def([index_take], _index_take_rule)


def _at_helper_rule(c):
    """``ad.at_set_winners`` / ``ad.at_multiply_others*(x, idx, v, ...)``: per
    update element of ``x.at[idx]``; ``x`` gives the slots only (its shape), so
    batching it makes the slots of different examples distinct."""
    x = c.materialize(c.arg("x"))
    new_idx = _batched_index(c, c.bound["idx"], True, x)
    ops = []
    for name in ("v", "t", "s"):
        if name not in c.bound:
            continue
        a = c.arg(name)
        if c.batched(name):
            target = N.item(N.clone(x), N.clone(new_idx))  # (clamps: only its ndim is read)
            a = c.let(
                (a.id if _is_name(a) else name) + "_al",
                N.call(
                    "ad.expand_to_rank",
                    [
                        a,
                        gast.BinOp(
                            left=N.call("jnp.ndim", [target]), op=gast.Sub(), right=N.const(1)
                        ),
                    ],
                ),
            )
        ops.append(a)
    return c.call(c.prim.public, [x, N.index_value(new_idx), *ops], _mode_kws(c))


_def(
    [
        at_set_winners,
        at_multiply_others,
        at_multiply_others_d1,
        at_multiply_others_d2,
        at_multiply_others_d3_check,
    ],
    _at_helper_rule,
)


def _index_adjoint(c):
    g = c.materialize(c.arg("g"))
    x = c.materialize(c.arg("x"))
    idx = c.bound["idx"]
    if not c.bp.is_batched(idx) and (_static_index(idx) or isinstance(idx, gast.Name)):
        # x may be a tuple the analysis did not see (a custom_vjp's outputs, a
        # captured list of layers indexed by a loop variable): decide at run
        # time, as ad.index_adjoint does (dense: zeros in the other items)
        args = [g, x, N.index_value(idx), N.const(True)]
        return c.call("ad.bgetitem_adjoint", args, _mode_kws(c))
    new_idx = N.index_value(_batched_index(c, idx, True, x))
    return c.call(c.prim.public, [g, x, new_idx], _example_mode(c, idx))


_def([index_adjoint], _index_adjoint)


def _tree_index_adjoint(c):
    x = c.arg("x")
    if c.is_container(x):
        if c.batched("idx"):
            # `lst[i]` with a per-example i: each item's cotangent is ct where i
            # picked it (a dense list: the per-example sparse ones differ in shape)
            return N.call("ad.bseq_index_adjoint", [c.materialize(c.arg("ct")), x, c.arg("idx")])
        idx = c.bound["idx"]
        if _static_index(idx) or isinstance(idx, gast.Name):
            # x may turn out an array at run time (svd's result, a tuple only with
            # compute_uv): then the index must skip the batch axis of a batched x
            ct = c.materialize(c.arg("ct"))
            return N.call("ad.bgetitem_adjoint", [ct, c.materialize(x), N.index_value(idx)])
        return c.rebuild(ct=c.materialize(c.arg("ct")))
    ct = c.materialize(c.arg("ct"))
    x = c.materialize(x)
    idx = c.bound["idx"]
    if not c.bp.is_batched(idx) and (_static_index(idx) or isinstance(idx, gast.Name)):
        # x may be a container the analysis did not see (a loop carry, a value
        # taken out of a container): decide at run time, as ad.getitem does
        return N.call("ad.bgetitem_adjoint", [ct, x, N.index_value(idx)])
    mode = _example_mode(c, idx)
    idx = N.index_value(_batched_index(c, idx, True, x))
    return N.call("ad.index_adjoint", [ct, x, idx], mode)


_def([tree_index_adjoint], _tree_index_adjoint)


def _searchsorted_rule(c):
    if not c.batched("a"):
        return c.rebuild()
    ok, sorter = c.static("sorter")
    if not ok or sorter is not None:
        return None
    kws = {"side": c.arg("side")} if "side" in c.bound else None
    return c.call("ad.bsearchsorted", [c.arg("a"), c.materialize(c.arg("v"))], kws)


_def([searchsorted], _searchsorted_rule)
_def([bsearchsorted], _helper_materialized("a", "v"))


def _interp_rows_call(c):
    """``ad.interp_rows`` with ``x``, ``xp``, ``fp`` batched and batched
    ``left``/``right`` aligned with ``x``."""
    x = c.materialize(c.arg("x"))
    args = [x, c.materialize(c.arg("xp")), c.materialize(c.arg("fp"))]
    kws = {}
    for p in ("left", "right", "period"):
        if p in c.bound:
            v = c.arg(p)
            kws[p] = c.lift(v, c.arg("x")) if c.batched(p) else v
    return c.call("ad.interp_rows", args, kws)


def _interp_rule(c):
    if not any(c.batched(p) for p in ("xp", "fp", "left", "right")):
        return c.rebuild()  # jnp.interp takes any shape of x
    return _interp_rows_call(c)


_def([interp], _interp_rule)
_def([interp_rows], _interp_rows_call)
_def([interp_index, interp_region], _helper_materialized("x", "xp"))
_def([interp_take], _helper_materialized("v", "i"))
_def([interp_put], _helper_materialized("g", "v", "i"))


_def([interp_unset, qr_check, svd_ad_full], _unbatched_result)


def _dynamic_slice_rule(c):
    # the same primitive over the batch axis too (its derivative rules apply);
    # per-example start indices: a loop over the examples
    if c.batched("start_indices") or c.batched("slice_sizes"):
        return None
    starts = N.call("ad.batch_starts", [c.arg("start_indices")])
    sizes = N.call("ad.batch_shape", [c.size, c.arg("slice_sizes")])
    return c.rebuild(start_indices=starts, slice_sizes=sizes)


def _dynamic_update_slice_rule(c):
    if c.batched("start_indices"):
        return None
    starts = N.call("ad.batch_starts", [c.arg("start_indices")])
    return c.rebuild(
        operand=c.materialize(c.arg("operand")),
        update=c.materialize(c.arg("update")),
        start_indices=starts,
    )


_def([dynamic_slice], _dynamic_slice_rule)
_def([dynamic_update_slice], _dynamic_update_slice_rule)


def _sized_per_example(c):
    """Results whose length depends on the values: each example needs the same
    length, so ``size=`` is required under vmap, as in JAX; with it, the
    examples run in a loop (the padding rules are per example)."""
    ok, size = c.static("size")
    if c.bound.get("size") is None or (ok and size is None):
        raise TransformValueError(
            f"vmap: {c.prim.public} has a result whose length depends on each example's "
            f"values; pass size= (and fill_value=) to {c.prim.public}, as JAX requires",
            hint=f"{c.prim.public}(x, size=n) pads or cuts the result to n entries",
        )
    return None


_def([nonzero, flatnonzero, argwhere, unique], _sized_per_example)
