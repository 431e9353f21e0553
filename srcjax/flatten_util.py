"""``srcjax.flatten_util``: one flat vector for a whole pytree, as
``jax.flatten_util`` (https://docs.jax.dev/en/latest/jax.flatten_util.html).

``flat, unravel = ravel_pytree(params)`` concatenates the raveled leaves of
``params`` into one 1-D array (the leaves' dtypes promoted together, as JAX
does); ``unravel(v)`` cuts a vector of that length back into a pytree of
``params``' structure, shapes and dtypes.

Both are plain Python over primitives, so transformed code inlines them:
``unravel`` made outside a transformed function can be called inside one (a
loss written on the flat vector, differentiated with ``grad``, batched with
``vmap``, compiled with ``jit``), and ``ravel_pytree`` called inside one gives a
differentiable ``flat``. An ``unravel`` *made* inside a transformed function is
a run-time value there: calling it runs under ``jit``, but differentiating
through that call is a clear "no derivative rule" error (make ``unravel``
outside, from a pytree of the same structure, shapes and dtypes).
"""

from __future__ import annotations

import collections
import functools
from typing import Any, Callable

import numpy as _np

from . import dtypes as _dt
from .frontend import nodes as N
from .primitives.ad import astype as _astype
from .primitives.creation import asarray as _asarray
from .primitives.creation import shape as _shape
from .primitives.creation import zeros as _zeros
from .primitives.registry import Primitive, register
from .tree_util import PyTreeDef, tree_flatten, tree_unflatten

__all__ = ["ravel_pytree", "unravel_pytree"]


class _Unravel:
    """What ``unravel`` needs to know of the raveled pytree: its structure, the
    leaves' shapes and split points, and their dtypes (``from_dtypes`` None when
    they all have one dtype: ``unravel`` is then dtype-polymorphic)."""

    def __init__(
        self,
        treedef: PyTreeDef,
        shapes: tuple,
        cuts: tuple,
        total: int,
        from_dtypes: tuple | None,
        to_dtype: Any,
    ) -> None:
        self.treedef = treedef
        self.shapes = shapes
        self.cuts = cuts  # split points of the flat vector
        self.total = total
        self.from_dtypes = from_dtypes  # None: one dtype (no conversions)
        self.to_dtype = to_dtype
        # complex -> real leaves take the real part first (no ComplexWarning)
        self.real_first = (
            None
            if from_dtypes is None
            else tuple(
                _np.dtype(to_dtype).kind == "c" and _np.dtype(d).kind != "c" for d in from_dtypes
            )
        )

    def __repr__(self) -> str:
        return f"<unravel spec for {self.treedef!r}>"


def unravel_pytree(spec: _Unravel, flat: Any) -> Any:
    """The pytree ``spec`` describes, cut from ``flat`` (the ``unravel`` that
    :func:`ravel_pytree` returns is this function with ``spec`` bound).

    ``flat``: an array of shape ``(n,)`` (n the raveled size). With one leaf
    dtype the leaves take ``flat``'s dtype; else each leaf gets its own dtype
    back (complex to real keeps the real part). Raises ValueError when
    ``flat``'s first axis is not ``n`` and TypeError when leaves of several
    dtypes were raveled and ``flat`` does not have their promoted dtype (JAX's
    errors)."""
    flat = _asarray(flat)
    unravel_check(spec, _shape(flat), flat.dtype)
    return tree_unflatten(spec.treedef, unravel_leaves(spec, flat))


# -- the primitives: one call for all leaves (no per-leaf loop in generated code) --
def _leaf_dtype(spec: _Unravel, i: int, like: Any) -> Any:
    return _np.result_type(like) if spec.from_dtypes is None else spec.from_dtypes[i]


def _pieces(spec: _Unravel, flat: _np.ndarray, lead: int) -> list:
    """``flat`` cut into one piece per leaf, each reshaped to the leaf's shape
    (after the ``lead`` leading batch axes)."""
    if not spec.shapes:
        return []
    batch = flat.shape[:lead]
    parts = _np.split(flat, spec.cuts, axis=lead)
    return [c.reshape(batch + shape) for c, shape in zip(parts, spec.shapes)]


def _unravel_leaves(spec: _Unravel, flat: Any, lead: int = 0) -> list:
    """The leaves cut from ``flat`` (``lead`` leading batch axes first): reshaped
    and, for mixed dtypes, converted back to their own dtypes."""
    flat = _np.asarray(flat)
    out: list = []
    for i, c in enumerate(_pieces(spec, flat, lead)):
        if spec.from_dtypes is not None:
            if spec.real_first[i]:
                c = c.real
            c = _astype.impl(c, spec.from_dtypes[i])  # (a buffer, not an Array)
        out.append(c)
    return out


def _unravel_linear(spec: _Unravel, flat: Any, lead: int = 0) -> list:
    """The tangent (or cotangent) map of :func:`_unravel_leaves`: the same cut,
    with zeros for integer and boolean leaves (their conversion has no
    derivative; JAX's float0) and floating leaves in their own dtypes."""
    flat = _np.asarray(flat)
    out: list = []
    for i, c in enumerate(_pieces(spec, flat, lead)):
        if spec.from_dtypes is not None:
            d = _np.dtype(spec.from_dtypes[i])
            if d.kind not in "fc":
                c = _np.zeros(c.shape, flat.dtype if flat.dtype.kind == "f" else _np.float32)
            else:
                c = (c.real if spec.real_first[i] else c).astype(d)
        out.append(c)
    return out


def _ravel_leaves(spec: _Unravel, leaves: Any, lead: int = 0) -> Any:
    """The leaves (a list; ``None`` or missing items are zeros: sparse
    cotangents) converted to the flat dtype, raveled and concatenated. With
    ``lead`` batch axes, a leaf without them (unbatched) is broadcast."""
    items = [] if leaves is None else list(leaves)
    items += [None] * (len(spec.shapes) - len(items))
    batch = ()
    for x, shape in zip(items, spec.shapes):
        if x is not None and _np.ndim(x) == lead + len(shape):
            batch = _np.shape(x)[:lead]
            break
    to = _np.dtype(spec.to_dtype)
    if spec.from_dtypes is None:
        # dtype-polymorphic: the leaves' own (common) dtype
        known = [x for x in items if x is not None]
        to = _dt.result_type(*known) if known else to
    parts = []
    for x, shape in zip(items, spec.shapes):
        n = int(_np.prod(shape, dtype=_np.int64))
        if x is None:
            parts.append(_np.zeros(batch + (n,), to))
            continue
        x = _np.asarray(x)
        if x.dtype != to:
            x = _astype(x, to)
        if x.ndim < len(batch) + len(shape):
            x = _np.broadcast_to(x, batch + tuple(shape))
        parts.append(_np.reshape(x, batch + (n,)))
    if not parts:
        return _np.zeros(batch + (0,), to)
    return _np.concatenate(parts, axis=lead)


def _ravel_linear(spec: _Unravel, leaves: Any, lead: int = 0) -> Any:
    """:func:`_ravel_leaves` for tangents and cotangents: integer and boolean
    leaves contribute zeros."""
    items = [] if leaves is None else list(leaves)
    items += [None] * (len(spec.shapes) - len(items))
    if spec.from_dtypes is not None:
        items = [
            None if _np.dtype(d).kind not in "fc" else x for x, d in zip(items, spec.from_dtypes)
        ]
    return _ravel_leaves(spec, items, lead)


def _holey_leaves(td: PyTreeDef, t: Any, out: list) -> None:
    """The leaves of ``t`` at ``td``'s leaf positions, ``None`` where ``t`` has a
    hole (a ``None`` subtree, a missing dict key: sparse cotangents)."""
    if td.kind is None:
        out.append(t)
        return
    if t is None:
        out.extend([None] * td.num_leaves)
        return
    if td.node_type in (dict, collections.OrderedDict, collections.defaultdict) and isinstance(
        t, dict
    ):
        keys = td.aux[1] if td.node_type is collections.defaultdict else td.aux
        children = [t.get(k) for k in keys]
    else:
        children = list(td.kind.flatten(t)[0])
    for c, cd in zip(children, td.children_defs):
        _holey_leaves(cd, c, out)


def _ravel_tree(spec: _Unravel, tree: Any, lead: int = 0) -> Any:
    """:func:`_ravel_leaves` of the leaves of ``tree`` (``spec``'s structure)."""
    items: list = []
    _holey_leaves(spec.treedef, tree, items)
    return _ravel_leaves(spec, items, lead)


def _ravel_tree_linear(spec: _Unravel, tree: Any, lead: int = 0) -> Any:
    """:func:`_ravel_linear` of the leaves of ``tree`` (holes are zeros)."""
    items: list = []
    _holey_leaves(spec.treedef, tree, items)
    return _ravel_linear(spec, items, lead)


def _unravel_tree_linear(spec: _Unravel, flat: Any, lead: int = 0) -> Any:
    """:func:`_unravel_linear` put into ``spec``'s structure."""
    return spec.treedef.unflatten(_unravel_linear(spec, flat, lead))


unravel_leaves = register(Primitive("ad.unravel_leaves", _unravel_leaves, kind="internal"))
unravel_linear = register(Primitive("ad.unravel_linear", _unravel_linear, kind="internal"))
ravel_linear = register(Primitive("ad.ravel_linear", _ravel_linear, kind="internal"))
ravel_tree = register(Primitive("ad.ravel_tree", _ravel_tree, kind="internal"))
ravel_tree_linear = register(Primitive("ad.ravel_tree_linear", _ravel_tree_linear, kind="internal"))
unravel_tree_linear = register(
    Primitive("ad.unravel_tree_linear", _unravel_tree_linear, kind="internal")
)
for _p in (unravel_leaves, unravel_linear, unravel_tree_linear):
    _p.returns_tree = True


def _def_linear(prim, operand, transpose, linear):
    """Rules of ``prim(spec, <operand>, lead)``, linear in ``operand``: the vjp is
    ``transpose(spec, g, lead)`` and the jvp ``linear(spec, t, lead)`` (``prim``'s
    linear form, the same map on a tangent)."""

    def vjp(g, ans, spec, lead=0):
        return transpose(spec, g, lead)

    def jvp(t, ans, spec, lead=0):
        return linear(spec, t, lead)

    prim.def_vjp(**{operand: vjp})
    prim.def_jvp(**{operand: jvp})


# two transpose pairs: unravel_linear / ravel_linear, unravel_tree_linear / ravel_tree_linear
_def_linear(unravel_leaves, "flat", ravel_linear, unravel_linear)
_def_linear(unravel_linear, "flat", ravel_linear, unravel_linear)
_def_linear(ravel_linear, "leaves", unravel_linear, ravel_linear)
_def_linear(ravel_tree, "tree", unravel_tree_linear, ravel_tree_linear)
_def_linear(ravel_tree_linear, "tree", unravel_tree_linear, ravel_tree_linear)
_def_linear(unravel_tree_linear, "flat", ravel_tree_linear, unravel_tree_linear)


def _lead_batch(operand: str) -> Callable[[Any], Any]:
    """Batching rule: one more leading batch axis (the spec is static)."""

    def rule(c):
        if c.batched("spec") or not c.batched(operand):
            return None
        ok, lead = c.static("lead")
        if not ok:
            return None
        return c.rebuild(lead=N.const(int(lead or 0) + 1))

    return rule


for _p in (unravel_leaves, unravel_linear, unravel_tree_linear):
    _p.def_batch(_lead_batch("flat"))
ravel_linear.def_batch(_lead_batch("leaves"))
ravel_tree.def_batch(_lead_batch("tree"))
ravel_tree_linear.def_batch(_lead_batch("tree"))
for _p in (
    unravel_leaves,
    unravel_linear,
    ravel_linear,
    ravel_tree,
    ravel_tree_linear,
    unravel_tree_linear,
):
    _p.samples = lambda rng: []  # a spec argument: tests/test_flatten_util.py


def _unravel_check(spec: _Unravel, shape: tuple, dtype: Any) -> bool:
    """Static: JAX's errors for a vector ``unravel`` cannot cut (per-example
    shape under vmap)."""
    shape = tuple(shape)
    if len(shape) == 0 or shape[0] != spec.total:
        raise ValueError(
            f"unravel: sum of sizes {spec.total} must be equal to dimension 0 of the "
            f"operand shape {list(shape)} (the length of the vector ravel_pytree returned)"
        )
    if spec.from_dtypes is not None and _np.dtype(dtype) != _np.dtype(spec.to_dtype):
        raise TypeError(
            f"unravel function given array of dtype {_np.dtype(dtype)}, "
            f"but expected dtype {_np.dtype(spec.to_dtype)}"
        )
    return True


def _unravel_spec(tree: Any, lead: int = 0) -> _Unravel:
    """Static: the :class:`_Unravel` of ``tree`` (its structure, the leaves'
    shapes and canonical dtypes: a Python float counts as float32 and a Python
    int as int32, as ``jax.dtypes.dtype`` says). Under vmap every leaf has
    ``lead`` batch axes first, which are not part of the spec."""
    leaves, treedef = tree_flatten(tree)
    shapes = tuple(tuple(_np.shape(x))[lead:] for x in leaves)
    sizes = [int(_np.prod(s, dtype=_np.int64)) for s in shapes]
    cuts = tuple(int(c) for c in _np.cumsum(sizes)[:-1]) if sizes else ()
    dts = tuple(_dt.canonicalize_dtype(_dt.dtype_of(x)) for x in leaves)
    if not dts:
        return _Unravel(treedef, shapes, cuts, 0, None, _np.dtype(_np.float32))
    to = dts[0]
    for d in dts[1:]:
        to = _dt.promote_types(to, d)
    mixed = any(d != to for d in dts)
    return _Unravel(treedef, shapes, cuts, sum(sizes), dts if mixed else None, to)


def _no_leaves(spec: _Unravel) -> bool:
    """Static: True for a pytree without leaves."""
    return len(spec.shapes) == 0


def _static(public: str, impl: Callable[..., Any]) -> Primitive:
    p = register(Primitive(public, impl, kind="internal", differentiable=False))
    p.def_batch(lambda c: (c.rebuild(), False))  # structure only: the same for every example
    p.samples = lambda rng: []  # not differentiable, no array operands: nothing to check
    return p


unravel_check = _static("ad.unravel_check", _unravel_check)
unravel_spec = _static("ad.unravel_spec", _unravel_spec)


def _spec_batch(c):
    """The spec of a batched pytree: per example (every leaf of a batched pytree
    carries the batch axes)."""
    if not c.batched("tree"):
        return c.rebuild(), False
    ok, lead = c.static("lead")
    if not ok:
        return None
    return c.rebuild(lead=N.const(int(lead or 0) + 1)), False


unravel_spec.def_batch(_spec_batch)
no_leaves = _static("ad.unravel_no_leaves", _no_leaves)


def ravel_pytree(pytree: Any) -> tuple[Any, Callable[[Any], Any]]:
    """Ravel a pytree of arrays and scalars into one 1-D array
    (``jax.flatten_util.ravel_pytree``).

    Args:
        pytree: any pytree; its leaves are arrays or scalars.

    Returns:
        ``(flat, unravel)``: ``flat`` has shape ``(n,)`` with ``n`` the total
        number of elements of the leaves, in flattening order, and dtype the
        promotion of the leaves' canonical dtypes (``float32`` and an empty
        vector for a pytree without leaves); ``unravel(v)`` maps a vector of
        shape ``(n,)`` back to a pytree of ``pytree``'s structure and leaf
        shapes. When all leaves have one dtype ``unravel`` keeps ``v``'s dtype;
        else each leaf is converted back to its own dtype and ``v`` must have
        ``flat``'s dtype (TypeError otherwise). A ``v`` of another length is a
        ValueError.

    Inside a transformed function ``flat`` is differentiable; the returned
    ``unravel`` is a run-time value there (see the module docstring).
    """
    spec = unravel_spec(pytree)
    if no_leaves(spec):
        return _zeros((0,), "float32"), functools.partial(unravel_pytree, spec)
    # (asarray: an Array eagerly also for NumPy leaves, as JAX's result)
    return _asarray(ravel_tree(spec, pytree)), functools.partial(unravel_pytree, spec)
