"""Batching rules of reductions and other axis-taking operations: the axis
argument shifted past the batch axis, masks for ``where=``, softmax,
logsumexp, top_k, quantiles and the nan reductions."""

from __future__ import annotations

import gast
import numpy as np

from ...frontend import nodes as N
from ..ad.cumprod import cumprod_jvp, cumprod_vjp, prod_others
from ..ad.static import group_last, last_onehot, ungroup_last
from ..ad.sums import expand_reduced
from ..ad.sums import sum as sum_p
from ..nn import log_softmax, mask_zero, softmax
from ..reductions.basic import (
    amax,
    amin,
    argmax,
    argmin,
    extremum_weights,
    fill_unselected,
    mean,
    mean_scale,
    prod,
)
from ..reductions.cumulative import cumprod, cumsum
from ..reductions.logical import all as all_p
from ..reductions.logical import any as any_p
from ..reductions.logical import count_nonzero
from ..reductions.logsumexp import logsumexp, logsumexp_weights
from ..reductions.moments import dof_scale, std, var
from ..reductions.nan import nan_deviation, nanmax, nanmean, nanmin, nanstd, nansum, nanvar
from ..reductions.order import (
    median,
    percentile,
    quantile,
    quantile_dweights,
    quantile_weights,
    top_k,
)
from ..structural.sorting import argsort, sort
from ._base import _axis_rule, _def, _flat_rows, _same, _static_operand

for _p in (sum_p, mean, prod, std, var, all_p, any_p, count_nonzero, median):
    _def([_p], _axis_rule(list(_p.signature.parameters)[0]))
_def([amax, amin], _axis_rule("x"))

# d prod / dx (jnp.prod's derivatives): the product of the others in each group
_def([prod_others], _axis_rule("x"))
# ... and its own derivatives (hessian of jnp.prod, jnp.median's rules): the
# grouping of the reduced axes last, and the division-free adjoints of cumprod,
# on the whole batch (each was a loop over the examples: p14's
# vmap(hessian(... + jnp.prod(x))) ran 13 of them, nested under jacfwd's basis)
_def([group_last], _axis_rule("x"))
_def([last_onehot], _same)


def _ungroup_last_rule(c):
    x = c.materialize(c.arg("x"))
    return c.rebuild(y=c.materialize(c.arg("y")), x=x, axis=c.shift_axis("axis", x))


_def([ungroup_last], _ungroup_last_rule)


def _cumprod_adjoint_rule(vname):
    """``ad.cumprod_jvp(t, x, axis)`` / ``ad.cumprod_vjp(g, x, axis)``: both
    operands batched (``vname`` lifted to ``x``'s per-example rank), the axis
    shifted past the batch axis."""

    def rule(c):
        x = c.materialize(c.arg("x"))
        v = c.materialize(c.arg(vname))
        if c.batched(vname):
            v = c.lift(v, c.arg("x"))
        return c.rebuild(**{vname: v, "x": x, "axis": c.shift_axis("axis", x)})

    return rule


_def([cumprod_jvp], _cumprod_adjoint_rule("t"))
_def([cumprod_vjp], _cumprod_adjoint_rule("g"))


def _logsumexp(c):
    ok, rs = c.static("return_sign")
    if not ok or rs:
        return None
    return _axis_rule("a", others=("b",))(c)


_def([logsumexp], _logsumexp)
_def([logsumexp_weights], _axis_rule("a", others=("b",)))


def _top_k_rule(c):
    # per-example k: a loop over the examples
    return None if c.batched("k") else c.rebuild(axis=c.shift_axis("axis", c.arg("operand")))


_def([top_k], _top_k_rule)


def _flat_axis_rule(xname, none_flatten=True):
    """``axis=None`` means "flattened" (argmax, cumsum, sort ...): reshape each
    example to a vector and work along axis 1."""

    def rule(c):
        x = c.arg(xname)
        ok, axis = c.static("axis")
        if ok and axis is None and none_flatten:
            flat = _flat_rows(c, x)
            return c.rebuild(**{xname: flat, "axis": N.const(1)})
        if not ok:
            return None
        return c.rebuild(axis=c.shift_axis("axis", x))

    return rule


for _p, _x in (
    (argmax, "x"),
    (argmin, "x"),
    (cumsum, "a"),
    (cumprod, "a"),
    (sort, "a"),
    (argsort, "a"),
):
    _def([_p], _flat_axis_rule(_x))


def _softmax(c):
    # where=: a batched mask gets unit axes up to x's rank; an unbatched one
    # broadcasts against the batched x from the right as it is
    x = c.arg("x")
    changes = {}
    if c.batched("where"):
        changes["where"] = c.lift(c.arg("where"), x)  # (x's per-example rank)
        x = c.materialize(x)
        changes["x"] = x
    changes["axis"] = c.shift_axis("axis", x)
    return c.rebuild(**changes)


_def([softmax, log_softmax], _softmax)


def _mask_zero(c):
    v = c.arg("v")
    if not c.batched("where"):
        return c.rebuild()
    where = c.lift(c.arg("where"), v)
    return c.rebuild(v=c.materialize(v), where=where)


_def([mask_zero], _mask_zero)


def _batched_mask(c, like):
    """The ``where=`` mask of a reduction for the batched operand ``like``: an
    unbatched mask broadcasts over the batch axis by itself; a batched one gets
    unit axes so that it broadcasts against each example."""
    if not _static_operand(c, "where") and c.batched("where"):
        return {"where": c.lift(c.arg("where"), like)}
    return {}


def _expand_reduced(c):
    g = c.materialize(c.arg("g"))
    x = c.materialize(c.arg("x"))
    mask = _batched_mask(c, c.arg("x"))
    return c.rebuild(g=g, x=x, axis=c.shift_axis("axis", x), **mask)


def _masked_reduction(xname):
    def rule(c):
        x = c.materialize(c.arg(xname))
        mask = _batched_mask(c, c.arg(xname))
        return c.rebuild(**{xname: x, "axis": c.shift_axis("axis", x)}, **mask)

    return rule


def _per_example_of_reduction(c):
    x = c.materialize(c.arg("x"))
    mask = _batched_mask(c, c.arg("x"))
    return c.rebuild(ans=c.materialize(c.arg("ans")), x=x, axis=c.shift_axis("axis", x), **mask)


def _mean_scale(c):
    call = _per_example_of_reduction(c)
    w = c.bound.get("where")
    if w is None or (isinstance(w, gast.Constant) and w.value is None):
        # without a mask: one number from the sizes, the same for every example
        # (the mean's cotangent is scaled before it is broadcast: it must not
        # look batched)
        return call, False
    return call


def _dof_scale(c):
    # the same ratio of sizes for every example: batched or not, it is one number
    x = c.materialize(c.arg("x"))
    return c.rebuild(x=x, ans=c.materialize(c.arg("ans"))), False


def _extremum(c):
    # ``initial`` is a scalar per call (JAX): a per-example one loops
    return None if c.batched("initial") else _masked_reduction("x")(c)


def _extremum_weights(c):
    return None if c.batched("initial") else _per_example_of_reduction(c)


def _fill_unselected(c):
    if c.batched("fill"):
        return None
    x = c.materialize(c.arg("x"))
    return c.rebuild(x=x, **_batched_mask(c, c.arg("x")))


_def([expand_reduced], _expand_reduced)
_def([sum_p], _masked_reduction("x"))
_def([mean], _masked_reduction("x"))
_def([prod], _masked_reduction("x"))
_def([amax, amin], _extremum)
_def([mean_scale], _mean_scale)
_def([dof_scale], _dof_scale)
_def([extremum_weights], _extremum_weights)
_def([fill_unselected], _fill_unselected)


def _quantile_rule(c):
    if c.batched("q"):
        return None
    a = c.arg("a")
    call = c.rebuild(axis=c.shift_axis("axis", a))
    ok, q = c.static("q")
    if ok and np.ndim(q) == 0:
        return call
    # the quantile axes come first: move the batch axis in front of them
    return c.call("jnp.moveaxis", [call, c.ndim(c.arg("q")), N.const(0)])


_def([quantile, percentile], _quantile_rule)


def _quantile_weights_rule(c):
    if c.batched("q"):
        return None
    return c.rebuild(), False  # depends on the length of the sorted axis only


_def([quantile_weights, quantile_dweights], _quantile_weights_rule)


_def(
    [nansum, nanmean, nanmax, nanmin, nanvar, nanstd],
    _axis_rule("a"),
)
_def([nan_deviation], _axis_rule("a"))
