"""Collective operations over a named mapped axis (``jax.lax.psum`` and friends).

A collective names an axis introduced by ``vmap(..., axis_name=...)`` or
``pmap(..., axis_name=...)``; it combines the values of all the examples (or
emulated devices) along that axis. The batching pass rewrites each call whose
axis it maps into ordinary array code over the batch axis (``psum`` becomes a
``jnp.sum`` over axis 0, the same for every example; see the rules at the end
of :mod:`srcjax.primitives.batch_rules`). Called outside any mapped function of
that name, a collective raises JAX's ``NameError("unbound axis name: i")``.

Derivatives follow JAX: the cotangent of ``psum(x)`` is ``psum`` of the
cotangents (every example's output depends on every ``x``), ``pmean``'s is
``pmean``, ``all_gather``'s is this example's row of the summed cotangents,
``ppermute``'s is the inverse permutation. ``axis_index`` is an integer;
``pmax``/``pmin`` have no derivative (an error, as in JAX). Semantics: https://docs.jax.dev/en/latest/jax.lax.html
(parallel operators).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import _spmd
from .registry import Primitive, register

__all__ = [
    "psum",
    "pmean",
    "pmax",
    "pmin",
    "all_gather",
    "axis_index",
    "ppermute",
    "pshuffle",
    "psum_scatter",
    "all_to_all",
]


def _unbound(axis_name):
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    return NameError(f"unbound axis name: {names[0]}")


# -- on pmap's devices (srcjax/_spmd.py): each device is a thread, and a
# collective exchanges this device's value with the other devices of the axis


def _names(axis_name):
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _device(name):
    """``(group, index)`` of this pmap device for axis ``name``, or JAX's NameError."""
    b = _spmd.bound(name)
    if b is None:
        raise _unbound(name)
    return b


def _members(groups, index, size):
    """The device indices this device's collective combines (its
    ``axis_index_groups`` group, or all ``size`` of them), in group order."""
    if groups is None:
        return list(range(size))
    flat = [int(d) for g in groups for d in g]
    if sorted(flat) != list(range(size)) or len({len(g) for g in groups}) != 1:
        raise ValueError(
            f"axis_index_groups must cover the {size} devices of the axis once each, in "
            f"groups of one size; got {groups}"
        )
    for g in groups:
        if index in [int(d) for d in g]:
            return [int(d) for d in g]
    raise AssertionError("unreachable")  # pragma: no cover


def _gathered(x, axis_name, groups):
    """The values of ``x`` on the devices this one combines with (in order), and
    this device's position among them; over several axis names, the devices of
    all of them (the first name outermost)."""
    vals = [x]
    pos = 0
    for name in _names(axis_name):
        group, i = _device(name)
        members = _members(groups, i, group.size)
        rows = group.exchange(i, vals)
        vals = [v for m in members for v in rows[m]]
        pos = members.index(i) * len(rows[i]) + pos
    return vals, pos


def _position(axis_name, groups):
    """``(n, pos)``: how many devices this one's collective combines and its
    position among them (the order :func:`_gathered` lists them in)."""
    count, pos = 1, 0
    for name in _names(axis_name):
        group, i = _device(name)
        members = _members(groups, i, group.size)
        pos = members.index(i) * count + pos
        count *= len(members)
    return count, pos


def _tree_stack(vals):
    tree_map = _spmd.tree_map

    return tree_map(lambda *leaves: np.stack([np.asarray(v) for v in leaves]), *vals)


def _stacked_sum(stacked, scale=1.0):
    """Each leaf summed over its leading (device) axis, times ``scale``, in the
    dtypes vmap's ``ad.tree_axis_sum`` gives (bools sum as ints, a mean of ints
    is a float), so a pmap and a vmap collective give the same numbers."""
    from .. import dtypes

    tree_map = _spmd.tree_map

    def one(a):
        if scale != 1.0 and a.dtype.kind in "biu":
            a = a.astype(dtypes.default_float())
        dt = a.dtype if a.dtype.kind != "b" else np.dtype(dtypes.default_int())
        s = np.sum(a, axis=0, dtype=dt)
        if scale != 1.0:
            s = (s * np.asarray(scale, dt)).astype(dt, copy=False)
        return s

    return tree_map(one, stacked)


def _device_reduce(x, axis_name, groups, how):
    names = _names(axis_name)
    if groups is None and len(names) == 1:
        group, i = _device(names[0])
        if group.remote is not None:  # across processes: locally first, then Allreduce
            scale = 1.0 if how != "mean" else 1.0 / group.size
            local = functools.partial(_combine, how=how, scale=scale)
            return group.reduce(i, x, local, "sum" if how == "mean" else how)
    vals, _ = _gathered(x, axis_name, groups)
    return _combine(vals, how, 1.0 if how != "mean" else 1.0 / len(vals))


def _combine(vals, how, scale):
    """``vals`` (one pytree per device) reduced by ``how``; sums times ``scale``."""
    if how in ("sum", "mean"):
        if all(type(v) in (float, int) for v in vals):
            return sum(vals) * scale if how == "mean" else sum(vals)
        return _stacked_sum(_tree_stack(vals), scale)
    tree_map = _spmd.tree_map

    op = np.max if how == "max" else np.min
    return tree_map(lambda a: op(a, axis=0), _tree_stack(vals))


def _psum(x, axis_name, *, axis_index_groups=None):
    """Sum of ``x`` over the mapped axis ``axis_name`` (jax.lax.psum): inside
    ``vmap``/``pmap`` with that name, every example (device) gets the sum over
    all of them, or over its group of ``axis_index_groups`` (a list of lists of
    device indices) under ``pmap``; a pytree leaf by leaf, same shapes and
    dtypes as ``x`` (bools and ints sum as ints). Raises NameError outside."""
    return _device_reduce(x, axis_name, axis_index_groups, "sum")


def _pmean(x, axis_name, *, axis_index_groups=None):
    """Mean of ``x`` over the mapped axis ``axis_name`` (jax.lax.pmean); shapes
    and dtypes of ``x`` (ints give floats). Raises NameError outside a mapped
    function."""
    return _device_reduce(x, axis_name, axis_index_groups, "mean")


def _pmax(x, axis_name, *, axis_index_groups=None):
    """Maximum of ``x`` over the mapped axis ``axis_name`` (jax.lax.pmax); not
    differentiable. Raises NameError outside a mapped function."""
    return _device_reduce(x, axis_name, axis_index_groups, "max")


def _pmin(x, axis_name, *, axis_index_groups=None):
    """Minimum of ``x`` over the mapped axis ``axis_name`` (jax.lax.pmin); not
    differentiable. Raises NameError outside a mapped function."""
    return _device_reduce(x, axis_name, axis_index_groups, "min")


def _all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """The values of ``x`` of all examples (devices), stacked along a new axis
    ``axis`` (jax.lax.all_gather): shape ``x.shape[:axis] + (n,) + x.shape[axis:]``
    for ``n`` of them, or concatenated along ``axis`` with ``tiled=True``;
    ``x``'s dtype. Under ``vmap`` only ``axis=0, tiled=False`` is implemented
    (others raise NotImplementedError). Raises NameError outside."""
    tree_map = _spmd.tree_map

    vals, _ = _gathered(x, axis_name, axis_index_groups)
    join = np.concatenate if tiled else np.stack
    return tree_map(lambda *leaves: join([np.asarray(v) for v in leaves], axis=axis), *vals)


def _axis_index(axis_name):
    """This example's (device's) position along the mapped axis ``axis_name``
    (jax.lax.axis_index): a 0-d int32 (int64 with x64). Raises NameError
    outside a mapped function."""
    from .. import dtypes

    index = 0
    for name in _names(axis_name):
        group, i = _device(name)
        index = index * group.size + i
    return np.asarray(index, dtypes.default_int())


def _ppermute(x, axis_name, perm):
    """``x`` sent between examples (devices) (jax.lax.ppermute): for each
    ``(src, dst)`` in ``perm``, example ``dst`` receives ``x`` of example
    ``src``; examples that receive nothing get zeros. Raises NameError outside."""
    tree_map = _spmd.tree_map

    names = _names(axis_name)
    if len(names) == 1:
        group, i = _device(names[0])
        if group.remote is not None:  # across processes: Sendrecv (distributed._Remote)
            pairs = [(int(s), int(d)) for s, d in perm]
            got = group.combine(i, x, lambda vals: group.remote.permute(vals, pairs))
            if i in got:
                return got[i]
            return tree_map(lambda a: np.zeros_like(np.asarray(a)), x)
    vals, me = _gathered(x, axis_name, None)
    src = [int(s) for s, d in perm if int(d) == me]
    if src:
        return vals[src[0]]
    return tree_map(lambda a: np.zeros_like(np.asarray(a)), x)


def _pshuffle(x, axis_name, perm):
    """``x`` of example (device) ``perm[i]`` on example ``i`` (jax.lax.pshuffle;
    ``perm`` a permutation of ``range(n)``). Raises NameError outside."""
    return _ppermute(x, axis_name, _shuffle_pairs(perm))


def _shuffle_pairs(perm):
    """``pshuffle``'s ``perm`` (device ``i`` receives from ``perm[i]``) as
    ``ppermute``'s ``(src, dst)`` pairs; ValueError unless a permutation."""
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"pshuffle: perm must be a permutation of range(n), got {perm}")
    return tuple((p, i) for i, p in enumerate(perm))


def _psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """``psum`` of ``x``, of which example (device) ``i`` keeps part ``i`` along
    ``scatter_dimension`` (jax.lax.psum_scatter): that axis must have the size
    of the mapped axis ``n`` (it is removed), or with ``tiled=True`` a multiple
    of it (a block of ``size / n`` is kept). Raises NameError outside."""
    n, me = _position(axis_name, axis_index_groups)
    # (the sum of all, as psum: across processes one Allreduce, not an all-gather)
    total = np.asarray(_device_reduce(x, axis_name, axis_index_groups, "sum"))
    d = scatter_dimension % max(total.ndim, 1)
    if not tiled:
        if total.shape[d] != n:
            raise ValueError(
                f"psum_scatter: dimension {d} of the operand has size {total.shape[d]}, "
                f"but the axis has {n} devices (pass tiled=True to scatter blocks)"
            )
        return np.take(total, me, axis=d)
    if total.shape[d] % n:
        raise ValueError(
            f"psum_scatter: dimension {d} of size {total.shape[d]} does not split into {n} blocks"
        )
    block = total.shape[d] // n
    return np.take(total, np.arange(me * block, (me + 1) * block), axis=d)


def _all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False):
    """Block ``j`` of ``x`` along ``split_axis`` sent to example (device) ``j``,
    the blocks received joined along ``concat_axis`` in sender order
    (jax.lax.all_to_all). Without ``tiled`` the split axis has the size of the
    mapped axis and is replaced by a new axis at ``concat_axis``; with
    ``tiled`` the blocks are concatenated. Across processes (one axis name, no
    ``axis_index_groups``) the blocks travel by one MPI ``Alltoall``
    (``distributed._Remote.alltoall``). Raises NameError outside."""
    names = _names(axis_name)
    if axis_index_groups is None and len(names) == 1:
        group, i = _device(names[0])
        if group.remote is not None:
            n = group.size
            blocks = np.stack(_blocks(np.asarray(x), n, split_axis, tiled))
            got = group.combine(i, blocks, group.remote.alltoall)
            parts = list(got[i - group.offset])
            return _join_blocks(parts, split_axis, concat_axis, tiled)
    vals, me = _gathered(x, axis_name, axis_index_groups)
    n = len(vals)
    parts = [_blocks(np.asarray(v), n, split_axis, tiled)[me] for v in vals]
    return _join_blocks(parts, split_axis, concat_axis, tiled)


def _blocks(v, n, split_axis, tiled=True):
    """``v`` split into ``n`` blocks along ``split_axis`` (ValueError unless it
    divides; without ``tiled`` unless it is ``n`` long, JAX's message)."""
    if not tiled and v.shape[split_axis] != n:
        raise ValueError(
            "all_to_all requires the size of the mapped axis axis_name to equal "
            f"x.shape[split_axis], but they are {n} and {v.shape[split_axis]} respectively."
        )
    if v.shape[split_axis] % n:
        raise ValueError(
            f"all_to_all: split_axis {split_axis} of size {v.shape[split_axis]} does not "
            f"split into {n} blocks"
        )
    return np.split(v, n, axis=split_axis)


def _join_blocks(parts, split_axis, concat_axis, tiled):
    """The blocks a device received (in sender order) joined as all_to_all's result."""
    if tiled:
        return np.concatenate(parts, axis=concat_axis)
    return np.stack([np.squeeze(b, split_axis) for b in parts], axis=concat_axis)


def _collective(public, impl, differentiable=True):
    p = register(Primitive(public, impl, kind="structural", differentiable=differentiable))
    p.samples = lambda rng: []  # no eager value: only meaningful under vmap/pmap
    p.batch_unbatched = True  # psum(1.0, "i") is the axis size
    p.communicates = True  # (jit never runs it on stand-ins: see optimize)
    return p


psum = _collective("lax.psum", _psum)
pmean = _collective("lax.pmean", _pmean)
# (differentiable with no rule: a derivative through them is an error, as in JAX,
# never a silent zero)
pmax = _collective("lax.pmax", _pmax)
pmin = _collective("lax.pmin", _pmin)
pmax.missing_rule_hint = pmin.missing_rule_hint = (
    "JAX does not differentiate pmax/pmin either; use all_gather and jnp.max"
)
all_gather = _collective("lax.all_gather", _all_gather)
axis_index = _collective("lax.axis_index", _axis_index, differentiable=False)
ppermute = _collective("lax.ppermute", _ppermute)
pshuffle = _collective("lax.pshuffle", _pshuffle)
psum_scatter = _collective("lax.psum_scatter", _psum_scatter)
all_to_all = _collective("lax.all_to_all", _all_to_all)


def _inverse_perm(perm):
    """``perm`` with sources and destinations swapped (the adjoint's routing)."""
    return tuple((int(d), int(s)) for s, d in perm)


inverse_perm = register(
    Primitive("ad.inverse_perm", _inverse_perm, kind="internal", differentiable=False)
)
shuffle_pairs = register(
    Primitive("ad.shuffle_pairs", _shuffle_pairs, kind="internal", differentiable=False)
)


def _psum_vjp(g, ans, axis_name, *, axis_index_groups=None):
    return psum(g, axis_name, axis_index_groups=axis_index_groups)


def _psum_jvp(t, ans, axis_name, *, axis_index_groups=None):
    return psum(t, axis_name, axis_index_groups=axis_index_groups)


def _pmean_vjp(g, ans, axis_name, *, axis_index_groups=None):
    return pmean(g, axis_name, axis_index_groups=axis_index_groups)


def _pmean_jvp(t, ans, axis_name, *, axis_index_groups=None):
    return pmean(t, axis_name, axis_index_groups=axis_index_groups)


def _all_gather_vjp(g, ans, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    # (JAX's transpose: each device's part of the summed cotangent, within its group)
    return psum_scatter(
        g, axis_name, scatter_dimension=axis, axis_index_groups=axis_index_groups, tiled=tiled
    )


def _all_gather_jvp(t, ans, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    return all_gather(t, axis_name, axis_index_groups=axis_index_groups, axis=axis, tiled=tiled)


def _ppermute_vjp(g, ans, axis_name, perm):
    return ppermute(g, axis_name, inverse_perm(perm))


def _ppermute_jvp(t, ans, axis_name, perm):
    return ppermute(t, axis_name, perm)


def _pshuffle_vjp(g, ans, axis_name, perm):
    return ppermute(g, axis_name, inverse_perm(shuffle_pairs(perm)))


def _pshuffle_jvp(t, ans, axis_name, perm):
    return pshuffle(t, axis_name, perm)


def _psum_scatter_vjp(
    g, ans, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False
):
    return all_gather(
        g, axis_name, axis_index_groups=axis_index_groups, axis=scatter_dimension, tiled=tiled
    )


def _psum_scatter_jvp(
    t, ans, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False
):
    return psum_scatter(
        t,
        axis_name,
        scatter_dimension=scatter_dimension,
        axis_index_groups=axis_index_groups,
        tiled=tiled,
    )


def _all_to_all_vjp(
    g, ans, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False
):
    return all_to_all(
        g, axis_name, concat_axis, split_axis, axis_index_groups=axis_index_groups, tiled=tiled
    )


def _all_to_all_jvp(
    t, ans, axis_name, split_axis, concat_axis, *, axis_index_groups=None, tiled=False
):
    return all_to_all(
        t, axis_name, split_axis, concat_axis, axis_index_groups=axis_index_groups, tiled=tiled
    )


pshuffle.def_vjp(_pshuffle_vjp)
pshuffle.def_jvp(_pshuffle_jvp)
psum_scatter.def_vjp(_psum_scatter_vjp)
psum_scatter.def_jvp(_psum_scatter_jvp)
all_to_all.def_vjp(_all_to_all_vjp)
all_to_all.def_jvp(_all_to_all_jvp)
psum.def_vjp(_psum_vjp)
psum.def_jvp(_psum_jvp)
pmean.def_vjp(_pmean_vjp)
pmean.def_jvp(_pmean_jvp)
all_gather.def_vjp(_all_gather_vjp)
all_gather.def_jvp(_all_gather_jvp)
ppermute.def_vjp(_ppermute_vjp)
ppermute.def_jvp(_ppermute_jvp)


# ---------------------------------------------------------------------------
# run-time helpers of the batched code


def _permute_rows(x, perm, axis=0):
    """Slices of ``x`` along ``axis`` (the mapped axis) routed by ``perm``: slice
    ``dst`` is slice ``src`` of ``x`` for each ``(src, dst)``; slices nobody
    sends to are zeros. Shape and dtype of ``x``."""
    x = np.asarray(x)
    out = np.zeros_like(x)
    lead = (slice(None),) * axis
    for s, d in perm:
        out[lead + (int(d),)] = x[lead + (int(s),)]
    return out


permute_rows = register(Primitive("ad.permute_rows", _permute_rows, kind="internal"))


def _permute_rows_vjp(g, ans, perm, axis=0):
    return permute_rows(g, inverse_perm(perm), axis)


def _permute_rows_jvp(t, ans, perm, axis=0):
    return permute_rows(t, perm, axis)


permute_rows.def_vjp(_permute_rows_vjp)
permute_rows.def_jvp(_permute_rows_jvp)
permute_rows.samples = lambda rng: [
    ((rng.normal(size=(3, 2)), ((0, 1), (1, 2), (2, 0))), {}),
    ((rng.normal(size=(2, 3)), ((0, 2), (2, 1))), {"axis": 1}),
]
inverse_perm.samples = lambda rng: [((((0, 1), (1, 2)),), {})]
shuffle_pairs.samples = lambda rng: [(([1, 2, 0],), {})]
