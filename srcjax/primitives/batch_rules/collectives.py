"""Batching rules of the collectives over a named axis (``lax.psum``,
``pmean``, ``pmax``, ``pmin``, ``all_gather``, ``axis_index``, ``ppermute``,
``psum_scatter``, ``all_to_all``): under ``vmap(axis_name=...)`` they reduce
or permute along the batch axis."""

from __future__ import annotations

import gast

from ...errors import TransformValueError
from ...frontend import nodes as N
from .. import collectives as coll
from ..control.cotangents import densify
from ._base import _def
from .runtime_trees import tree_axis_sum, tree_axis_sum_ct


def _where(c):
    """The user's file:line of the call being batched, when known."""
    try:
        return c.bp.norm.src.location(c.origin)
    except AttributeError:
        return None


def _collective_names(c):
    """(this vmap's name is among the call's axis names, the other names).
    Raises for what would give other numbers than JAX: a collective in code only
    some examples run (a per-example branch or loop: the examples that skip it
    hold stand-in values there), and ``axis_index_groups``."""
    if c.bp.mixed_depth:
        raise TransformValueError(
            f"{c.prim.public} inside an `if` or loop whose condition differs per example "
            "is not supported under vmap/pmap: the examples that skip it have no value "
            "there (JAX runs both branches of a lax.cond for every example)",
            _where(c),
            hint="compute the collective before or after the branch, or both branch values "
            "and choose with jnp.where",
        )
    if "axis_index_groups" in c.prim.signature.parameters:
        ok_g, groups = c.static("axis_index_groups")
        if not ok_g or groups is not None:
            raise TransformValueError(f"{c.prim.public}: axis_index_groups is not supported yet")
    ok, names = c.static("axis_name")
    mine = getattr(c.bp.spec, "axis_name", None)
    if not ok:
        raise TransformValueError(
            f"{c.prim.public}: axis_name must be a constant (a string or a tuple of strings)"
        )
    names = tuple(names) if isinstance(names, (tuple, list)) else (names,)
    if mine is None or mine not in names:
        return False, names
    return True, tuple(n for n in names if n != mine)


def _collective_rest(c, expr, rest, batched):
    """``expr`` (the reduction over this vmap's axis), still reduced over the
    outer names in ``rest`` by the enclosing vmaps."""
    if rest:
        expr = N.call(c.prim.public, [expr, N.const(rest)])
    return expr if batched else (expr, False)


def _tree_axis_rule(c):
    # under a further vmap (vmap(vmap(...))): the value's axis 0 is that vmap's,
    # the reduced one is behind it
    ok, axis = c.static("axis")
    if not ok:
        return None
    kws = {"axis": N.const(int(axis) + 1)}
    if "g" in c.bound:
        return c.rebuild(g=c.materialize(c.arg("g")), x=c.materialize(c.arg("x")), **kws)
    return c.rebuild(x=c.materialize(c.arg("x")), **kws)


_def([tree_axis_sum, tree_axis_sum_ct], _tree_axis_rule)


def _reduce_rule(jnp_name, unbatched):
    def rule(c):
        mine, rest = _collective_names(c)
        if not mine:
            return c.rebuild()  # another vmap's axis: per example, as it is
        if jnp_name in ("jnp.sum", "jnp.mean"):
            # a pytree of gradients (lax.pmean(grads, "batch")) or an array: leaf
            # by leaf, decided at run time (grad's results are not tracked as trees)
            scale = (
                gast.BinOp(N.const(1.0), gast.Div(), c.size)
                if jnp_name == "jnp.mean"
                else N.const(1.0)
            )
            expr = N.call(
                "ad.tree_axis_sum",
                [c.arg("x"), c.size, N.const(bool(c.batched("x"))), scale],
            )
            return _collective_rest(c, expr, rest, False)
        if c.is_container(c.arg("x")):
            raise TransformValueError(
                f"{c.prim.public} of a pytree is not supported yet: apply it to each leaf",
                _where(c),
            )
        x = c.arg("x")
        if c.batched("x"):
            expr = N.call(jnp_name, [x], {"axis": N.const(0)})
        else:
            expr = unbatched(c, x)
        return _collective_rest(c, expr, rest, False)

    return rule


_def([coll.psum], _reduce_rule("jnp.sum", lambda c, x: gast.BinOp(x, gast.Mult(), c.size)))
_def([coll.pmean], _reduce_rule("jnp.mean", lambda c, x: x))
_def([coll.pmax], _reduce_rule("jnp.max", lambda c, x: x))
_def([coll.pmin], _reduce_rule("jnp.min", lambda c, x: x))


def _all_gather_rule(c):
    mine, rest = _collective_names(c)
    if not mine:
        if c.batched("x"):  # the gathered axis would land before this vmap's
            raise TransformValueError(
                "lax.all_gather over an enclosing vmap's axis inside an inner vmap is not "
                "supported yet",
                _where(c),
                hint="gather in the outer function, or swap the two vmaps",
            )
        return c.rebuild()
    for p, want in (("axis", 0), ("tiled", False)):
        ok, v = c.static(p)
        if not ok or v != want:
            raise TransformValueError(
                f"lax.all_gather: only axis=0, tiled=False is implemented (got {p}={v!r})"
            )
    x = c.arg("x")
    stacked = x if c.batched("x") else c.materialize(x)  # the batch axis is the gathered one
    return _collective_rest(c, stacked, rest, False)


def _axis_index_rule(c):
    mine, rest = _collective_names(c)
    if not mine:
        return c.rebuild(), False
    if rest:
        raise TransformValueError("lax.axis_index takes one axis name")
    return N.call("jnp.arange", [c.size])


def _permute_rule(name, perm):
    """``lax.ppermute`` / ``lax.pshuffle`` (``name``) under ``vmap(axis_name=...)``:
    the examples permuted by ``ad.permute_rows`` with the row permutation
    ``perm(c)``; over another axis name, the same call."""

    def rule(c):
        mine, rest = _collective_names(c)
        if rest:
            raise TransformValueError(f"{name} takes one axis name")
        x = c.arg("x")
        if not mine:
            return c.rebuild()
        x = x if c.batched("x") else c.materialize(x)
        return N.call("ad.permute_rows", [x, perm(c)])

    return rule


def _scatter_static(c, names):
    out = {}
    for p in names:
        ok, v = c.static(p)
        if not ok:
            raise TransformValueError(f"{c.prim.public}: {p} must be a constant", _where(c))
        out[p] = v
    if out.get("tiled"):
        raise TransformValueError(
            f"{c.prim.public}(tiled=True) is not implemented under vmap (it is under pmap)",
            _where(c),
        )
    return out


def _psum_scatter_rule(c):
    # example i keeps part i of the sum over the examples: the scattered axis of the
    # sum becomes the batch axis
    mine, rest = _collective_names(c)
    if not mine:
        return c.rebuild()
    if rest:
        raise TransformValueError("lax.psum_scatter takes one axis name under vmap")
    st = _scatter_static(c, ("scatter_dimension", "tiled"))
    x = c.arg("x") if c.batched("x") else c.materialize(c.arg("x"))
    total = N.call("jnp.sum", [x], {"axis": N.const(0)})
    return N.call("jnp.moveaxis", [total, N.const(int(st["scatter_dimension"])), N.const(0)])


def _all_to_all_rule(c):
    # out[j] holds x[i]'s block j at position i of concat_axis: the split axis becomes
    # the batch axis, the batch axis goes to concat_axis
    mine, rest = _collective_names(c)
    if not mine:
        return c.rebuild()
    if rest:
        raise TransformValueError("lax.all_to_all takes one axis name under vmap")
    st = _scatter_static(c, ("split_axis", "concat_axis", "tiled"))
    x = c.arg("x") if c.batched("x") else c.materialize(c.arg("x"))
    y = N.call("jnp.moveaxis", [x, N.const(1 + int(st["split_axis"])), N.const(0)])
    return N.call("jnp.moveaxis", [y, N.const(1), N.const(1 + int(st["concat_axis"]))])


def _permute_rows_rule(c):
    x = c.materialize(c.arg("x"))
    return c.rebuild(x=x, axis=c.shift_axis("axis", x))


_def([coll.all_gather], _all_gather_rule)
_def([coll.axis_index], _axis_index_rule)
_def([coll.ppermute], _permute_rule("lax.ppermute", lambda c: c.arg("perm")))
_def(
    [coll.pshuffle],
    _permute_rule("lax.pshuffle", lambda c: N.call("ad.shuffle_pairs", [c.arg("perm")])),
)
_def([coll.psum_scatter], _psum_scatter_rule)
_def([coll.all_to_all], _all_to_all_rule)
_def([coll.shuffle_pairs], lambda c: (c.rebuild(), False))
_def([coll.permute_rows], _permute_rows_rule)
_def([coll.inverse_perm], lambda c: (c.rebuild(), False))


def _densify_rule(c):
    # a hole (None) becomes zeros like the batched `like`; an array stays itself
    return c.rebuild(ct=c.materialize(c.arg("ct")), like=c.materialize(c.arg("like")))


_def([densify], _densify_rule)
