"""Batching rules of reductions and other axis-taking operations: the axis
argument shifted past the batch axis, masks for ``where=``, softmax,
logsumexp, top_k, quantiles and the nan reductions."""

from __future__ import annotations

import numpy as np

from ...frontend import nodes as N
from ..registry import REGISTRY, by_public
from ._base import _axis_rule, _def, _flat_rows, _static_operand

for _n in (
    "jnp.sum",
    "jnp.mean",
    "jnp.prod",
    "jnp.std",
    "jnp.var",
    "jnp.all",
    "jnp.any",
    "jnp.count_nonzero",
    "jnp.median",
):
    by_public(_n).def_batch(_axis_rule(list(by_public(_n).signature.parameters)[0]))

for _n in ("jnp.max", "jnp.min"):
    REGISTRY[_n].def_batch(_axis_rule("x"))

# d prod / dx (jnp.prod's derivatives): the product of the others in each group
_def(["ad.prod_others"], _axis_rule("x"))


def _logsumexp(c):
    ok, rs = c.static("return_sign")
    if not ok or rs:
        return None
    return _axis_rule("a", others=("b",))(c)


_def(["special.logsumexp"], _logsumexp)
_def(["ad.logsumexp_weights"], _axis_rule("a", others=("b",)))


def _top_k_rule(c):
    # per-example k: a loop over the examples
    return None if c.batched("k") else c.rebuild(axis=c.shift_axis("axis", c.arg("operand")))


_def(["lax.top_k"], _top_k_rule)


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


for _n, _x in (
    ("jnp.argmax", "x"),
    ("jnp.argmin", "x"),
    ("jnp.cumsum", "a"),
    ("jnp.cumprod", "a"),
    ("jnp.sort", "a"),
    ("jnp.argsort", "a"),
):
    REGISTRY[_n].def_batch(_flat_axis_rule(_x))


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


_def(["nn.softmax", "nn.log_softmax"], _softmax)


def _mask_zero(c):
    v = c.arg("v")
    if not c.batched("where"):
        return c.rebuild()
    where = c.lift(c.arg("where"), v)
    return c.rebuild(v=c.materialize(v), where=where)


_def(["ad.mask_zero"], _mask_zero)


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


def _mean_scale(c):
    x = c.materialize(c.arg("x"))
    mask = _batched_mask(c, c.arg("x"))
    return c.rebuild(ans=c.materialize(c.arg("ans")), x=x, axis=c.shift_axis("axis", x), **mask)


def _dof_scale(c):
    # the same ratio of sizes for every example: batched or not, it is one number
    x = c.materialize(c.arg("x"))
    return c.rebuild(x=x, ans=c.materialize(c.arg("ans"))), False


def _extremum(c):
    # ``initial`` is a scalar per call (JAX): a per-example one loops
    return None if c.batched("initial") else _masked_reduction("x")(c)


def _extremum_weights(c):
    return None if c.batched("initial") else _mean_scale(c)


def _fill_unselected(c):
    if c.batched("fill"):
        return None
    x = c.materialize(c.arg("x"))
    return c.rebuild(x=x, **_batched_mask(c, c.arg("x")))


_def(["ad.expand_reduced"], _expand_reduced)
_def(["jnp.sum"], _masked_reduction("x"))
_def(["jnp.mean"], _masked_reduction("x"))
_def(["jnp.prod"], _masked_reduction("x"))
_def(["jnp.max", "jnp.min"], _extremum)
_def(["ad.mean_scale"], _mean_scale)
_def(["ad.dof_scale"], _dof_scale)
_def(["ad.extremum_weights"], _extremum_weights)
_def(["ad.fill_unselected"], _fill_unselected)


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


_def(["jnp.quantile", "jnp.percentile"], _quantile_rule)


def _quantile_weights_rule(c):
    if c.batched("q"):
        return None
    return c.rebuild(), False  # depends on the length of the sorted axis only


_def(["ad.quantile_weights", "ad.quantile_dweights"], _quantile_weights_rule)


_def(
    ["jnp.nansum", "jnp.nanmean", "jnp.nanmax", "jnp.nanmin", "jnp.nanvar", "jnp.nanstd"],
    _axis_rule("a"),
)
_def(["ad.nan_deviation"], _axis_rule("a"))
