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

import numpy as np

from .registry import Primitive, register

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "axis_index", "ppermute"]


def _unbound(axis_name):
    names = axis_name if isinstance(axis_name, (tuple, list)) else (axis_name,)
    return NameError(f"unbound axis name: {names[0]}")


def _psum(x, axis_name, *, axis_index_groups=None):
    """Sum of ``x`` over the mapped axis ``axis_name`` (jax.lax.psum): inside
    ``vmap``/``pmap`` with that name, every example gets the sum over all
    examples (same shape and dtype as ``x``). Raises NameError outside."""
    raise _unbound(axis_name)


def _pmean(x, axis_name, *, axis_index_groups=None):
    """Mean of ``x`` over the mapped axis ``axis_name`` (jax.lax.pmean); shape
    and dtype of ``x``. Raises NameError outside a mapped function."""
    raise _unbound(axis_name)


def _pmax(x, axis_name, *, axis_index_groups=None):
    """Maximum of ``x`` over the mapped axis ``axis_name`` (jax.lax.pmax); not
    differentiable. Raises NameError outside a mapped function."""
    raise _unbound(axis_name)


def _pmin(x, axis_name, *, axis_index_groups=None):
    """Minimum of ``x`` over the mapped axis ``axis_name`` (jax.lax.pmin); not
    differentiable. Raises NameError outside a mapped function."""
    raise _unbound(axis_name)


def _all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    """The values of ``x`` of all examples, stacked along a new leading axis
    (jax.lax.all_gather): shape ``(n,) + x.shape`` for ``n`` examples, ``x``'s
    dtype. Only ``axis=0, tiled=False`` is implemented (others raise
    NotImplementedError when mapped). Raises NameError outside."""
    raise _unbound(axis_name)


def _axis_index(axis_name):
    """This example's position along the mapped axis ``axis_name``
    (jax.lax.axis_index): a 0-d int32 (int64 with x64). Raises NameError
    outside a mapped function."""
    raise _unbound(axis_name)


def _ppermute(x, axis_name, perm):
    """``x`` sent between examples (jax.lax.ppermute): for each ``(src, dst)``
    in ``perm``, example ``dst`` receives ``x`` of example ``src``; examples
    that receive nothing get zeros. Raises NameError outside."""
    raise _unbound(axis_name)


def _collective(public, impl, differentiable=True):
    p = register(Primitive(public, impl, kind="structural", differentiable=differentiable))
    p.samples = lambda rng: []  # no eager value: only meaningful under vmap/pmap
    p.batch_unbatched = True  # psum(1.0, "i") is the axis size
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


def _inverse_perm(perm):
    """``perm`` with sources and destinations swapped (the adjoint's routing)."""
    return tuple((int(d), int(s)) for s, d in perm)


inverse_perm = register(
    Primitive("ad.inverse_perm", _inverse_perm, kind="internal", differentiable=False)
)


def _psum_vjp(g, ans, x, axis_name, *, axis_index_groups=None):
    return psum(g, axis_name)


def _psum_jvp(t, ans, x, axis_name, *, axis_index_groups=None):
    return psum(t, axis_name)


def _pmean_vjp(g, ans, x, axis_name, *, axis_index_groups=None):
    return pmean(g, axis_name)


def _pmean_jvp(t, ans, x, axis_name, *, axis_index_groups=None):
    return pmean(t, axis_name)


def _all_gather_vjp(g, ans, x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    return psum(g, axis_name)[axis_index(axis_name)]


def _all_gather_jvp(t, ans, x, axis_name, *, axis_index_groups=None, axis=0, tiled=False):
    return all_gather(t, axis_name)


def _ppermute_vjp(g, ans, x, axis_name, perm):
    return ppermute(g, axis_name, inverse_perm(perm))


def _ppermute_jvp(t, ans, x, axis_name, perm):
    return ppermute(t, axis_name, perm)


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


def _permute_rows_vjp(g, ans, x, perm, axis=0):
    return permute_rows(g, inverse_perm(perm), axis)


def _permute_rows_jvp(t, ans, x, perm, axis=0):
    return permute_rows(t, perm, axis)


permute_rows.def_vjp(_permute_rows_vjp)
permute_rows.def_jvp(_permute_rows_jvp)
permute_rows.samples = lambda rng: [
    ((rng.normal(size=(3, 2)), ((0, 1), (1, 2), (2, 0))), {}),
    ((rng.normal(size=(2, 3)), ((0, 2), (2, 1))), {"axis": 1}),
]
inverse_perm.samples = lambda rng: [((((0, 1), (1, 2)),), {})]
