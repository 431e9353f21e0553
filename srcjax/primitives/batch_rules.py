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
registered here (``ad.batch_broadcast``, ``ad.lift``, ``ad.select``,
``ad.branch_input``, ``ad.bmatmul`` ...) carry their own derivative and
batching rules where a derivative can flow through them; the index helpers
(``ad.batch_axis`` ...) compute static metadata and are not differentiable.

Elementwise primitives (``kind == "elementwise"``) need no rule: the pass
aligns per-example ranks and calls them unchanged (:func:`elementwise_rule`).
"""

from __future__ import annotations

import functools

import gast
import numpy as np

from .. import dtypes as _dt
from .._prng_key import PRNGKeyArray, key_base, rewrap
from ..errors import ShapeError, SrcjaxError, TransformValueError
from ..frontend import nodes as N
from .ad import _getitem as _ad_getitem
from .ad import _index_adjoint as _ad_index_adjoint
from .ad import _unbroadcast as _ad_unbroadcast
from .control import (
    _class_kind,
    class_map,
    dict_like,
    tree_slice_adjoint,
)
from .control import _tree_index_adjoint as _container_index_adjoint
from .creation import _dtype_or
from .linalg import _matmul_left, _matmul_right
from .registry import REGISTRY, Primitive, by_public, register

__all__ = ["elementwise_rule"]


def _reg(public, impl, differentiable=True):
    if public in REGISTRY:
        return REGISTRY[public]
    return register(Primitive(public, impl, kind="internal", differentiable=differentiable))


# =========================================================================== runtime helpers
def _canon_scalar(x):
    if isinstance(x, bool):
        return np.asarray(x)
    if isinstance(x, int):
        return np.asarray(x, _dt.default_int())
    if isinstance(x, float):
        return np.asarray(x, _dt.default_float())
    if isinstance(x, complex):
        return np.asarray(x, _dt.default_complex())
    return np.asarray(x)


def _batch_broadcast(x, size, axis=0):
    """``x`` repeated along a new axis ``axis`` of length ``size`` (a read-only
    view); containers leaf by leaf, ``None`` (and a treedef) stays as it is. Python scalars become
    arrays of JAX's default dtypes. Slices and ``...`` (parts of an index tuple)
    stay as they are."""
    if x is None or x is Ellipsis or isinstance(x, (str, slice)):
        return x
    if isinstance(x, dict):  # (a defaultdict keeps its factory, as JAX's)
        return dict_like(x, ((k, _batch_broadcast(v, size, axis)) for k, v in x.items()))
    if isinstance(x, (list, tuple)):
        vals = [_batch_broadcast(v, size, axis) for v in x]
        if hasattr(x, "_fields"):
            return type(x)(*vals)
        return type(x)(vals)
    if _class_kind(x) is not None:
        return class_map(lambda v: _batch_broadcast(v, size, axis), x)
    if isinstance(x, PRNGKeyArray):  # (the key axes lead its data)
        return rewrap(x, _batch_broadcast(x._base_array, size, axis))
    if not isinstance(x, np.ndarray):
        from ..tree_util import PyTreeDef

        if isinstance(x, PyTreeDef):
            return x  # a structure (tree_flatten's treedef): the same in every example
    a = x if isinstance(x, np.ndarray) else _canon_scalar(x)
    a = np.expand_dims(a, axis)
    shape = list(a.shape)
    shape[axis] = size
    return np.broadcast_to(a, tuple(shape))


batch_broadcast = _reg("ad.batch_broadcast", _batch_broadcast).facts(same_structure=("x",))


def _batch_unbroadcast(g, size, axis=0):
    """The adjoint of ``batch_broadcast(x, size, axis)``: ``g`` summed over ``axis``;
    containers leaf by leaf, holes (``None``) stay holes."""
    if g is None:
        return None
    if isinstance(g, dict):
        return {k: _batch_unbroadcast(v, size, axis) for k, v in g.items()}
    if isinstance(g, (list, tuple)):
        vals = [_batch_unbroadcast(v, size, axis) for v in g]
        return type(g)(*vals) if hasattr(g, "_fields") else type(g)(vals)
    if _class_kind(g) is not None:
        return class_map(lambda v: _batch_unbroadcast(v, size, axis), g)
    if np.ndim(g) <= axis:  # a scalar standing for a broadcast value
        return g * size
    return np.sum(g, axis=axis)


batch_unbroadcast = _reg("ad.batch_unbroadcast", _batch_unbroadcast).facts(same_structure=("g",))
batch_unbroadcast.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), 2), {}),
    ((rng.normal(size=(3, 4, 2)), 4, 1), {}),
]


def _batch_unbroadcast_vjp(h, ans, g, size, axis=0):
    return batch_broadcast(h, size, axis)


def _batch_unbroadcast_jvp(t, ans, g, size, axis=0):
    return batch_unbroadcast(t, size, axis)


batch_unbroadcast.def_vjp(_batch_unbroadcast_vjp)
batch_unbroadcast.def_jvp(_batch_unbroadcast_jvp)


def _batch_broadcast_vjp(g, ans, x, size, axis=0):
    return batch_unbroadcast(g, size, axis)


def _batch_broadcast_jvp(t, ans, x, size, axis=0):
    return batch_broadcast(t, size, axis)


batch_broadcast.samples = lambda rng: [
    ((rng.normal(size=(3,)), 2), {}),
    ((rng.normal(size=(2, 3)), 4, 1), {}),
]


def _lift(x, rank, nb=1):
    """``x`` with unit axes inserted at position ``nb`` (after its ``nb`` batch
    axes) so that its per-example rank ``ndim(x) - nb`` is at least ``rank``.
    A Python number stays one: it broadcasts anyway, and as an array it would
    lose its weak type (float64 results from float32 data)."""
    if type(x) in (float, int, bool, complex):
        return x
    x = np.asarray(x)
    extra = rank - (x.ndim - nb)
    if extra <= 0:
        return x
    return x.reshape(x.shape[:nb] + (1,) * extra + x.shape[nb:])


lift = _reg("ad.lift", _lift)


def _lift_vjp(g, ans, x, rank, nb=1):
    return reshape(g, shape_(x))


def _lift_jvp(t, ans, x, rank, nb=1):
    return lift(t, rank, nb)


lift.samples = lambda rng: [
    ((rng.normal(size=(3,)), 2), {}),
    ((rng.normal(size=(2, 3)), 3), {}),
    ((rng.normal(size=(2, 3)), 1), {}),
]


def _aligned(take, v):
    """``take`` reshaped to broadcast against batched ``v`` (same leading axes)."""
    k = np.ndim(take)
    return np.reshape(take, np.shape(take) + (1,) * (np.ndim(v) - k))


def _tree_zeros(x):
    if x is None:
        return None
    if isinstance(x, dict):
        return {k: _tree_zeros(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        vals = [_tree_zeros(v) for v in x]
        return type(x)(*vals) if hasattr(x, "_fields") else type(x)(vals)
    if _class_kind(x) is not None:
        return class_map(_tree_zeros, x)
    x = np.asarray(x)
    return np.zeros(x.shape, x.dtype)


def _select(take, a, b):
    """Per example: ``a`` where ``take`` else ``b`` (``take`` holds one flag per
    example, its axes the leading axes of ``a`` and ``b``). Per-example ranks are
    aligned; containers are selected leaf by leaf; ``None`` (a value undefined on
    one path) gives the other."""
    if a is None and b is None:
        return None
    if a is None or b is None:
        # None is a value not assigned yet on that path, or a zero cotangent (a
        # hole): the examples that take it get zeros, never the other path's value
        other = a if b is None else b
        if isinstance(other, (dict, list, tuple)) or _class_kind(other) is not None:
            zeros = _tree_zeros(other)
        else:
            o = np.asarray(other)
            zeros = np.zeros(o.shape, o.dtype)
        a, b = (other, zeros) if b is None else (zeros, other)
    a_tree = isinstance(a, (dict, list, tuple)) or _class_kind(a) is not None
    b_tree = isinstance(b, (dict, list, tuple)) or _class_kind(b) is not None
    if a_tree != b_tree or (a_tree and type(a) is not type(b)):
        _branch_mismatch(f"a {_kind_of(a)} in one, a {_kind_of(b)} in the other")
    if isinstance(a, dict):
        # a key missing on one side is a hole of a sparse cotangent (ad.forget)
        keys = list(a) + [k for k in b if k not in a]
        return {k: _select(take, a.get(k), b.get(k)) for k in keys}
    if isinstance(a, (list, tuple)):
        if len(a) != len(b) and isinstance(a, tuple):
            # (lists of different lengths: the tapes higher-order adjoint code
            # replays in branches, `tape = tape + [v]`, are selected item by item)
            _branch_mismatch(
                f"a {type(a).__name__} of {len(a)} items in one, of {len(b)} in the other"
            )
        vals = [_select(take, x, y) for x, y in zip(a, b)]
        return type(a)(*vals) if hasattr(a, "_fields") else type(a)(vals)
    if _class_kind(a) is not None:
        return class_map(lambda x, y: _select(take, x, y), a, b)
    if isinstance(a, PRNGKeyArray) or isinstance(b, PRNGKeyArray):
        return rewrap(
            a if isinstance(a, PRNGKeyArray) else b, _select(take, key_base(a), key_base(b))
        )
    k = np.ndim(take)
    a = np.asarray(a)
    b = np.asarray(b)
    if a.ndim > k and b.ndim > k and a.shape[k:] != b.shape[k:]:
        # (a per-example scalar is let through: adjoint code selects zero
        # cotangents held as scalars against arrays)
        _branch_mismatch(f"per-example shape {a.shape[k:]} in one, {b.shape[k:]} in the other")
    nd = max(a.ndim, b.ndim)
    a = _lift(a, nd - k, k)
    b = _lift(b, nd - k, k)
    return np.where(np.reshape(take, np.shape(take) + (1,) * (nd - k)), a, b)


select = _reg("ad.select", _select)


def _check_branch_values(take, a, b, a_batched, b_batched, name, none_is_value=True):
    """Raise unless the values the two branches of a per-example ``if`` give the
    user's variable ``name`` have one structure and one per-example shape: both
    ``None`` or neither, lists of one length, dicts with one key set, arrays of one
    per-example shape (``a_batched``/``b_batched``: whether ``a``/``b`` carry the
    batch axes, those of ``take``; ``none_is_value`` False: a None on one side is
    a path that left the name unset, not checked). :func:`_select` lets these through, as the
    zero cotangents and tapes of generated adjoint code need; a user's value has
    no per-example answer then (Python gives each example its own structure)."""
    k = np.ndim(take)

    def walk(x, y, path):
        where = f"`{name}{path}`"
        if (x is None or y is None) and not none_is_value:
            return
        if (x is None) != (y is None):
            kind = _kind_of(x if y is None else y)
            article = "an" if kind[0] in "aeiou" else "a"
            _branch_mismatch(f"{where} is None in one and {article} {kind} in the other")
        if x is None:
            return
        x_tree = isinstance(x, (dict, list, tuple)) or _class_kind(x) is not None
        y_tree = isinstance(y, (dict, list, tuple)) or _class_kind(y) is not None
        if x_tree or y_tree:
            if type(x) is not type(y):
                _branch_mismatch(f"{where} is a {_kind_of(x)} in one, a {_kind_of(y)} in the other")
            if isinstance(x, dict):
                if set(x) != set(y):
                    _branch_mismatch(
                        f"{where} has keys {sorted(map(str, x))} in one, "
                        f"{sorted(map(str, y))} in the other"
                    )
                for key in x:
                    walk(x[key], y[key], f"{path}[{key!r}]")
            elif isinstance(x, (list, tuple)):
                if len(x) != len(y):
                    _branch_mismatch(
                        f"{where} is a {type(x).__name__} of {len(x)} items in one, "
                        f"of {len(y)} in the other"
                    )
                for i, (u, v) in enumerate(zip(x, y)):
                    walk(u, v, f"{path}[{i}]")
            return
        sx = np.shape(x)[k:] if a_batched else np.shape(x)
        sy = np.shape(y)[k:] if b_batched else np.shape(y)
        if sx != sy:
            _branch_mismatch(f"{where} has per-example shape {sx} in one, {sy} in the other")

    walk(a, b, "")


check_branch_values = _reg("ad.check_branch_values", _check_branch_values, differentiable=False)
check_branch_values.facts(effectful=True)


def _check_cond_types(take, a, b, a_batched, b_batched, what, name_a, name_b):
    """JAX's TypeError when the two branches of a ``lax.cond`` (``what`` "cond")
    or of two ``lax.switch`` branches (``what`` "switch"), both run for a mixed
    batch under vmap, give outputs of different pytree structure, per-example
    shape or dtype (``a_batched``/``b_batched``: whether ``a``/``b`` carry the
    batch axes of ``take``). :func:`_select` would broadcast one of them."""
    from ..lax import _check_branch_types

    k = np.ndim(take)
    lead = (k if a_batched else 0, k if b_batched else 0)
    _check_branch_types(what, (name_a, name_b), a, b, lead)


check_cond_types = _reg("ad.check_cond_types", _check_cond_types, differentiable=False)
check_cond_types.facts(effectful=True)


def _kind_of(x) -> str:
    if isinstance(x, (dict, list, tuple)):
        return type(x).__name__
    if _class_kind(x) is not None:
        return type(x).__name__
    return "array"


def _generated_caller():
    """Location of the innermost line of srcjax-generated code on the stack (its
    message then names the user's line that line comes from), or None."""
    import sys

    from ..codegen import emit
    from ..errors import Location

    f = sys._getframe(1)
    while f is not None:
        if f.f_code.co_filename in emit._ORIGINS:
            return Location(f.f_code.co_filename, f.f_lineno)
        f = f.f_back
    return None


def _branch_mismatch(what: str):
    """A batched ``if`` whose branches give a name values of different structures
    or per-example shapes: no per-example selection exists (JAX's lax.cond refuses
    too); never broadcast one into the other."""
    raise TransformValueError(
        "under vmap, the branches of an `if` (or the passes of a loop) that differ per "
        f"example give a value different structures or shapes: {what}",
        _generated_caller(),
        hint="make both branches give the same structure and shape (e.g. compute both "
        "and choose with jnp.where), or move the condition out of the vmapped function",
    )


def _pair_map(fn, a, b):
    """``fn(a_leaf, b_leaf)`` over the structure of ``a`` with ``b``'s matching
    items (containers and registered classes); a ``None`` on either side (a zero
    cotangent) stays ``None``."""
    if a is None or b is None:
        return None
    if isinstance(a, dict):
        return {
            k: _pair_map(fn, v, b.get(k) if isinstance(b, dict) else b[k]) for k, v in a.items()
        }
    if isinstance(a, (list, tuple)):
        vals = [_pair_map(fn, v, b[i]) for i, v in enumerate(a)]
        return type(a)(*vals) if hasattr(a, "_fields") else type(a)(vals)
    if _class_kind(a) is not None:
        return class_map(lambda v, bv: _pair_map(fn, v, bv), a, b)
    return fn(a, b)


def _select_ct(g, take, x, which):
    """The cotangent of operand ``x`` of ``select(take, a, b)`` (``which`` True for
    ``a``): ``g`` masked to the examples that chose it, summed to ``x``'s shape.
    Containers leaf by leaf; a sparse cotangent keeps its holes (``None``)."""

    def leaf(g, x):
        g = np.asarray(g)
        k = np.ndim(take)
        t = _aligned(take, g)
        masked = np.where(t if which else np.logical_not(t), g, np.zeros((), g.dtype))
        xs = np.shape(x)
        lifted = xs[:k] + (1,) * (g.ndim - len(xs)) + xs[k:]
        axes = tuple(i for i, n in enumerate(lifted) if n == 1 and g.shape[i] != 1)
        if axes:
            masked = masked.sum(axis=axes, keepdims=True)
        return masked.reshape(xs)

    return _pair_map(leaf, g, x)


select_ct = _reg("ad.select_ct", _select_ct)
select_ct.samples = lambda rng: [
    ((rng.normal(size=(3, 2)), np.array([True, False, True]), rng.normal(size=(3, 2)), True), {}),
    ((rng.normal(size=(3, 2)), np.array([True, False, True]), rng.normal(size=(3, 1)), False), {}),
]


def _select_ct_adjoint(h, take, g, which):
    """The transpose of :func:`_select_ct` in ``g``: ``h`` (shaped like ``x``)
    broadcast to ``g``'s shape and masked to the examples with ``take == which``."""

    def leaf(g, h):
        g = np.asarray(g)
        h = np.asarray(h)
        k = np.ndim(take)
        hs = np.shape(h)
        lifted = np.reshape(h, hs[:k] + (1,) * (g.ndim - len(hs)) + hs[k:])
        full = np.broadcast_to(lifted, g.shape)
        t = _aligned(take, g)
        return np.where(t if which else np.logical_not(t), full, np.zeros((), full.dtype))

    return _pair_map(leaf, g, h)


select_ct_adjoint = _reg("ad.select_ct_adjoint", _select_ct_adjoint)
select_ct_adjoint.samples = lambda rng: [
    ((rng.normal(size=(3, 2)), np.array([True, False, True]), rng.normal(size=(3, 2)), True), {}),
    ((rng.normal(size=(3, 1)), np.array([True, False, True]), rng.normal(size=(3, 2)), False), {}),
]


def _select_ct_vjp(h, ans, g, take, x, which):
    return select_ct_adjoint(h, take, g, which)


def _select_ct_jvp(t, ans, g, take, x, which):
    return select_ct(t, take, x, which)


def _select_ct_adjoint_vjp(k, ans, h, take, g, which):
    return select_ct(k, take, h, which)


def _select_ct_adjoint_jvp(t, ans, h, take, g, which):
    return select_ct_adjoint(t, take, g, which)


# (second-order derivatives of vmapped code with a batched `if`: hessian(loss) where
# loss vmaps a function with a branch)
select_ct.def_vjp(g=_select_ct_vjp)
select_ct.def_jvp(g=_select_ct_jvp)
select_ct_adjoint.def_vjp(h=_select_ct_adjoint_vjp)
select_ct_adjoint.def_jvp(h=_select_ct_adjoint_jvp)


def _select_vjp_a(g, ans, take, a, b):
    return select_ct(g, take, a, True)


def _select_vjp_b(g, ans, take, a, b):
    return select_ct(g, take, b, False)


def _select_jvp_a(t, ans, take, a, b):
    return select(take, t, zeros_like(b))


def _select_jvp_b(t, ans, take, a, b):
    return select(take, zeros_like(a), t)


def _select_samples(rng):
    take = np.array([True, False, True])
    return [
        ((take, rng.normal(size=(3, 2)), rng.normal(size=(3, 2))), {}),
        ((take, rng.normal(size=(3,)), rng.normal(size=(3, 2))), {}),
    ]


select.samples = _select_samples


def _branch_input(take, x, which=True):
    """``x`` where ``take == which``, elsewhere the value of ``x`` at the first
    example with ``take == which``: the inputs of a branch evaluated for every example, safe
    for those that do not take it (they compute what a taking example computes;
    the gradient does not flow through the substitute)."""
    if x is None:
        return None  # not assigned yet on this path (see batching.batch)
    if isinstance(x, dict):
        return {k: _branch_input(take, v, which) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        vals = [_branch_input(take, v, which) for v in x]
        return type(x)(*vals) if hasattr(x, "_fields") else type(x)(vals)
    if _class_kind(x) is not None:
        return class_map(lambda v: _branch_input(take, v, which), x)
    if isinstance(x, PRNGKeyArray):
        return rewrap(x, _branch_input(take, x._base_array, which))
    take = np.asarray(take)
    if not which:
        take = np.logical_not(take)
    x = np.asarray(x)
    if take.size == 0 or take.all() or x.ndim < take.ndim:
        return x
    flat = int(np.argmax(take.reshape(-1)))
    if not take.reshape(-1)[flat]:
        return x
    idx = np.unravel_index(flat, take.shape)
    fill = x[idx]
    return np.where(_aligned(take, x), x, fill)


branch_input = _reg("ad.branch_input", _branch_input).facts(same_structure=("x",))
# its rules are the identity's: the substitute values of the examples that do not take
# the branch get no gradient (their results are discarded by ad.select), so finite
# differences agree only where every example takes it
branch_input.samples = lambda rng: [
    ((np.array([True, True, True]), rng.normal(size=(3, 2))), {}),
    ((np.array([False, False]), rng.normal(size=(2, 3)), False), {}),
]


def _branch_input_vjp(g, ans, take, x, which=True):
    return select(take, g, zeros_like(g)) if which else select(take, zeros_like(g), g)


def _branch_input_jvp(t, ans, take, x, which=True):
    return select(take, t, zeros_like(t)) if which else select(take, zeros_like(t), t)


def _tree_stack(parts):
    """Stack a list of equally structured containers leaf by leaf."""
    first = parts[0]
    if isinstance(first, dict):
        return {k: _tree_stack([p[k] for p in parts]) for k in first}
    if isinstance(first, (list, tuple)):
        vals = [_tree_stack([p[i] for p in parts]) for i in range(len(first))]
        return type(first)(*vals) if hasattr(first, "_fields") else type(first)(vals)
    if first is None:
        return None
    if isinstance(first, slice) or first is Ellipsis:
        return first  # a part of an index tuple: the same in every example
    kind = _class_kind(first)
    if kind is not None:
        cols = list(zip(*[kind.flatten(p)[0] for p in parts]))
        it = iter(cols)
        return class_map(lambda _v: _tree_stack(list(next(it))), first)
    return np.stack(parts)


tree_stack = _reg("ad.tree_stack", _tree_stack)
tree_stack.samples = lambda rng: []


def _tree_axis_size(x, axes):
    """The size of the mapped axes of container ``x`` (``axes``: a pytree prefix)."""
    for leaf, ax in _leaves_with_axes(x, axes):
        if ax is not None:
            return np.shape(leaf)[ax]
    raise ValueError("vmap: no mapped leaf in this argument")


tree_axis_size = _reg("ad.tree_axis_size", _tree_axis_size, differentiable=False)


def _shift_tree_axes(axes):
    """``axes`` (a vmap in_axes pytree prefix) for the same value with one more
    leading batch axis: non-negative ints move up by one; negative ints (counted
    from the end) and ``None`` stay."""
    if isinstance(axes, dict):
        return {k: _shift_tree_axes(v) for k, v in axes.items()}
    if isinstance(axes, (list, tuple)):
        vals = [_shift_tree_axes(v) for v in axes]
        return type(axes)(*vals) if hasattr(axes, "_fields") else type(axes)(vals)
    if isinstance(axes, (int, np.integer)) and not isinstance(axes, bool) and axes >= 0:
        return int(axes) + 1
    return axes


def _tree_axis_size_rule(c):
    # the size of an inner vmap's axis is the same for every example of an outer
    # vmap (a static Python int, as range() and the batched code need): read past
    # the outer batch axis
    ok, axes = c.static("axes")
    if not ok:
        return None
    return N.call(
        "ad.tree_axis_size", [c.arg("x"), N.parse_expr(repr(_shift_tree_axes(axes)))]
    ), False


def _leaves_with_axes(x, axes):
    if isinstance(axes, dict):
        for k in axes:
            yield from _leaves_with_axes(x[k], axes[k])
        return
    if isinstance(axes, (list, tuple)):
        for xi, ai in zip(x, axes):
            yield from _leaves_with_axes(xi, ai)
        return
    if isinstance(x, dict):
        for v in x.values():
            yield from _leaves_with_axes(v, axes)
        return
    if isinstance(x, (list, tuple)):
        for v in x:
            yield from _leaves_with_axes(v, axes)
        return
    if _class_kind(x) is not None:
        for v in _class_kind(x).flatten(x)[0]:
            yield from _leaves_with_axes(v, axes)
        return
    if x is not None:
        yield x, axes


_NO_OTHER = object()


def _map_axes(x, axes, fn, role="in_axes", other=_NO_OTHER):
    """``fn(leaf, axis)`` over ``x``, with ``axes`` a pytree prefix of ``x``; a
    mismatch is JAX's ValueError ("must be a tree prefix"), never a silent zip.
    With ``other`` (a tree of ``x``'s structure whose subtrees may be ``None``, a
    sparse cotangent), ``fn(leaf, axis, other_leaf)``."""
    if isinstance(axes, dict):
        if not isinstance(x, dict) or set(axes) != set(x):
            raise _not_a_prefix(role, axes, x)
        out = dict(x)
        for k in axes:
            out[k] = _map_axes(x[k], axes[k], fn, role, _item(other, k))
        return out
    if isinstance(axes, (list, tuple)):
        if not isinstance(x, (list, tuple)) or len(x) != len(axes):
            raise _not_a_prefix(role, axes, x)
        vals = [
            _map_axes(xi, ai, fn, role, _item(other, i)) for i, (xi, ai) in enumerate(zip(x, axes))
        ]
        return type(x)(*vals) if hasattr(x, "_fields") else type(x)(vals)
    if isinstance(x, dict):
        return {k: _map_axes(v, axes, fn, role, _item(other, k)) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        vals = [_map_axes(v, axes, fn, role, _item(other, i)) for i, v in enumerate(x)]
        return type(x)(*vals) if hasattr(x, "_fields") else type(x)(vals)
    if x is None:
        return None
    kind = _class_kind(x)
    if kind is not None:
        xc, aux = kind.flatten(x)
        oc = [_NO_OTHER] * len(xc)
        if other is not _NO_OTHER:
            oc = [None] * len(xc) if other is None else list(kind.flatten(other)[0])
        return kind.unflatten(aux, tuple(_map_axes(v, axes, fn, role, o) for v, o in zip(xc, oc)))
    return fn(x, axes) if other is _NO_OTHER else fn(x, axes, other)


def _item(other, key):
    """``other[key]`` of an optional, possibly sparse tree (see :func:`_map_axes`)."""
    if other is _NO_OTHER or other is None:
        return other
    if isinstance(other, dict):
        return other.get(key)
    return other[key]


def _not_a_prefix(role, axes, x):
    if isinstance(x, dict):
        what = f"a dict with keys {sorted(map(str, x))}"
    elif isinstance(x, (list, tuple)):
        what = f"a {type(x).__name__} of {len(x)} items"
    else:
        what = f"a leaf of type {type(x).__name__}"
    return ValueError(
        f"vmap {role} specification must be a tree prefix of the corresponding value, "
        f"got specification {axes!r} for {what}"
    )


def _tree_batch_in(x, axes, size):
    """Every leaf of ``x`` with its mapped axis moved to the front; leaves with
    axis ``None`` broadcast along a new leading axis."""

    def fn(leaf, ax):
        if ax is None:
            return _batch_broadcast(leaf, size)
        return np.moveaxis(np.asarray(leaf), ax, 0)

    return _map_axes(x, axes, fn)


tree_batch_in = _reg("ad.tree_batch_in", _tree_batch_in)
tree_batch_in.samples = lambda rng: []


def _tree_batch_out(x, axes):
    """Every leaf of batched ``x`` with its batch axis moved to ``axes`` (a pytree
    prefix of ints)."""

    def fn(leaf, ax):
        if ax is None:
            return np.asarray(leaf)[0]
        return np.moveaxis(np.asarray(leaf), 0, ax)

    return _map_axes(x, axes, fn, "out_axes")


tree_batch_out = _reg("ad.tree_batch_out", _tree_batch_out)


def _tree_batch_in_adjoint(g, x, axes):
    """The cotangent of ``x`` from that of ``tree_batch_in(x, axes, size)``: the
    batch axis moved back to ``axes``; summed over it where ``x`` was broadcast."""

    def fn(xl, ax, leaf):
        if leaf is None:
            return None
        if ax is None:
            return np.sum(leaf, axis=0)
        return np.moveaxis(np.asarray(leaf), 0, ax)

    return _map_axes(x, axes, fn, "in_axes", g)


def _tree_batch_out_adjoint(g, x, axes):
    """The cotangent of batched ``x`` from that of ``tree_batch_out(x, axes)``: the
    batch axis moved back to the front; for ``axes`` None (the first example
    taken), ``g`` at example 0 and zeros elsewhere."""

    def fn(xl, ax, leaf):
        if leaf is None:
            return None
        if ax is None:
            out = np.zeros(np.shape(xl), np.result_type(xl, leaf))
            out[0] = leaf
            return out
        return np.moveaxis(np.asarray(leaf), ax, 0)

    return _map_axes(x, axes, fn, "out_axes", g)


tree_batch_in_adjoint = _reg("ad.tree_batch_in_adjoint", _tree_batch_in_adjoint)
tree_batch_out_adjoint = _reg("ad.tree_batch_out_adjoint", _tree_batch_out_adjoint)


def _tbi_vjp(g, ans, x, axes, size):
    return tree_batch_in_adjoint(g, x, axes)


def _tbi_jvp(t, ans, x, axes, size):
    return tree_batch_in(t, axes, size)


def _tbo_vjp(g, ans, x, axes):
    return tree_batch_out_adjoint(g, x, axes)


def _tbo_jvp(t, ans, x, axes):
    return tree_batch_out(t, axes)


def _tbia_vjp(h, ans, g, x, axes):
    return tree_batch_in(h, axes, tree_axis_size(g, 0))


def _tbia_jvp(t, ans, g, x, axes):
    return tree_batch_in_adjoint(t, x, axes)


def _tboa_vjp(h, ans, g, x, axes):
    return tree_batch_out(h, axes)


def _tboa_jvp(t, ans, g, x, axes):
    return tree_batch_out_adjoint(t, x, axes)


tree_batch_in.def_vjp(x=_tbi_vjp)
tree_batch_in.def_jvp(x=_tbi_jvp)
tree_batch_out.def_vjp(x=_tbo_vjp)
tree_batch_out.def_jvp(x=_tbo_jvp)
tree_batch_in_adjoint.def_vjp(g=_tbia_vjp)
tree_batch_in_adjoint.def_jvp(g=_tbia_jvp)
tree_batch_out_adjoint.def_vjp(g=_tboa_vjp)
tree_batch_out_adjoint.def_jvp(g=_tboa_jvp)
tree_batch_in.samples = lambda rng: [
    ((rng.normal(size=(3, 2)), 1, 2), {}),
    (({"a": rng.normal(size=(3,)), "b": rng.normal(size=(2, 3))}, {"a": None, "b": 1}, 3), {}),
]
tree_batch_out.samples = lambda rng: [
    ((rng.normal(size=(3, 2)), 1), {}),
    (({"a": rng.normal(size=(3, 2)), "b": rng.normal(size=(3, 4))}, {"a": 1, "b": 0}), {}),
]
tree_batch_in_adjoint.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), rng.normal(size=(3, 2)), 1), {}),
    ((rng.normal(size=(4, 3)), rng.normal(size=(3,)), None), {}),
]
tree_batch_out_adjoint.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), rng.normal(size=(3, 2)), 1), {}),
]
tree_batch_out.samples = lambda rng: []


# -- static metadata (not differentiable) ------------------------------------------------
def _batch_axis(axis, ndim):
    """An axis argument of a per-example operation for the batched operand of rank
    ``ndim``: ``None`` -> every per-example axis, ``k >= 0`` -> ``k + 1``; negative
    axes stay."""
    if axis is None:
        return tuple(range(1, ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(int(a) + 1 if a >= 0 else int(a) for a in axis)
    axis = int(axis)
    return axis + 1 if axis >= 0 else axis


batch_axis = _reg("ad.batch_axis", _batch_axis, differentiable=False)


def _static_join(a, b):
    """The value after a batched ``if`` of a name both branches bind to static
    metadata (an axis, a shape): the same for every example, else an error.
    ``None`` is the value of a name a branch did not assign."""
    if a is None:
        return b
    if b is None or a is b:
        return a
    same = a == b
    if isinstance(same, bool) and same:
        return a
    raise TransformValueError(
        "under vmap, a value used as a static argument (an axis or a shape) depends on "
        f"a per-example condition: {a!r} in one branch, {b!r} in the other. Make it the "
        "same in both branches, or move the condition out of the vmapped function."
    )


static_join = _reg("ad.static_join", _static_join, differentiable=False)
static_join.samples = lambda rng: []


def _batch_shape(size, shape):
    """``(size, *shape)``; ``shape`` may be an int."""
    if isinstance(shape, (int, np.integer)):
        return (size, int(shape))
    return (size,) + tuple(shape)


batch_shape = _reg("ad.batch_shape", _batch_shape, differentiable=False)


def _batch_perm(axes, ndim):
    """Axes of ``transpose`` for a batched operand of rank ``ndim``."""
    if axes is None:
        return (0,) + tuple(range(ndim - 1, 0, -1))
    n = ndim - 1
    return (0,) + tuple(int(a) % n + 1 for a in axes)


batch_perm = _reg("ad.batch_perm", _batch_perm, differentiable=False)


def _is_separator(p):
    return p is None or p is Ellipsis or isinstance(p, slice)


def _is_index_array(p):
    """Whether index part ``p`` is an array (or boolean) index: one that makes
    NumPy treat the integers of the same index as advanced too."""
    if _is_separator(p) or isinstance(p, (int, np.integer)) and not isinstance(p, bool):
        return False
    a = np.asarray(p)
    return a.ndim > 0 or a.dtype == np.bool_


def _batch_index(idx, size):
    """``x[idx]`` per example as an index of the batched ``x`` (batch axis 0).

    Usually ``(:, *idx)``. But when ``idx``'s advanced indices (arrays, boolean
    masks, and integers next to them) are separated by a slice, ``...`` or
    ``None``, NumPy moves their broadcast dims to the front of the result, in
    front of a leading ``:``'s batch axis too. The batch axis is then an advanced
    index itself, an ``arange`` broadcast against the others, so the result is
    ``(batch, *advanced dims, *rest)`` as each example's is ``(*advanced dims,
    *rest)``; every user of the index (reads, ``.at`` updates, adjoints) sees the
    same layout."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    if any(_is_index_array(p) for p in parts):
        pos = [k for k, p in enumerate(parts) if not _is_separator(p)]
        if pos[-1] - pos[0] + 1 != len(pos):
            nd = max(
                1 if np.asarray(parts[k]).dtype == np.bool_ else np.ndim(parts[k]) for k in pos
            )
            return (np.arange(size).reshape((size,) + (1,) * nd),) + parts
    return (slice(None),) + parts


batch_index = _reg("ad.batch_index", _batch_index, differentiable=False)


_LEADING_SEPARATOR = (
    "vmap: indexing with a per-example index array after `None` (as in x[None, i]) is not supported"
)
_LEADING_SEPARATOR_HINT = (
    "index first and add the axis afterwards (x[i][None]), or use jnp.take(x, i, axis=k)"
)


class VmapIndexError(SrcjaxError, IndexError):
    """An index that is invalid for one example under vmap (out of bounds; a
    slice bound that differs per example, which JAX refuses with an IndexError:
    slice entries must be static)."""


def _check_example_bounds(expanded, shape, x_batched, where):
    """NumPy's IndexError for an out-of-bounds integer index array, naming the
    axis of one example's array (not the batched array's) and the user's line."""
    if shape is None:
        return
    dims = tuple(shape[1:] if x_batched else shape)
    used = sum(1 for p, _ in expanded if p is not None and p is not Ellipsis)
    axis = 0
    for p, _ in expanded:
        if p is None:
            continue
        if p is Ellipsis:
            axis += max(len(dims) - used, 0)
            continue
        if axis >= len(dims):
            return  # too many indices: NumPy's own error follows
        if not isinstance(p, slice) and np.size(p) and np.asarray(p).dtype.kind in "iu":
            n = dims[axis]
            lo, hi = np.min(p), np.max(p)
            bad = hi if hi >= n else lo if lo < -n else None
            if bad is not None:
                from ..errors import Location

                loc = Location(*where) if where is not None else None
                raise VmapIndexError(
                    f"index {int(bad)} is out of bounds for axis {axis} with size {n} "
                    "(under vmap: the axis of one example)",
                    loc,
                )
        axis += 1


def _gather_index(idx, batched, size, x_batched=True, shape=None, where=None):
    """``x[idx]`` per example where some index parts differ between examples:
    ``batched`` flags each part of the tuple ``idx`` (integer arrays or ints,
    slices, ``None`` and ``...``); the batch coordinate is an ``arange`` broadcast
    against them. ``shape`` is ``x``'s shape (batched or not, per ``x_batched``);
    ``where`` the user's ``(file, line, col)`` for an error.

    Where NumPy keeps the index dims in place for each example (one run of array
    indices behind slices or ``...``: ``x[:, i]``), the leading slices become
    ``arange``s too, so the batch axis comes first and the rest is laid out as
    each example's result is (``(batch, *slice dims, *index dims, *rest)``)."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    # one flag for the whole tuple applies to every part (zip would drop the rest)
    flags = batched if isinstance(batched, tuple) else (batched,) * len(parts)
    expanded = []
    for p, f in zip(parts, flags):
        if _is_separator(p):
            expanded.append((p, False))
            continue
        a = np.asarray(p)
        if a.dtype == np.bool_:
            if f:
                # JAX: NonConcreteBooleanIndexError (the shape would differ per example)
                raise IndexError(
                    "vmap: indexing with a boolean mask that differs between examples is "
                    "not supported (each example would select a different number of "
                    "elements); use jnp.where(mask, x, 0)"
                )
            expanded.extend((n, False) for n in np.nonzero(a))  # NumPy's own reading
            continue
        expanded.append((a, f))
    pos = [k for k, (p, f) in enumerate(expanded) if not _is_separator(p)]
    nd = max(np.ndim(p) - f for p, f in expanded if not _is_separator(p))
    if pos[0] != 0 and pos[-1] - pos[0] + 1 == len(pos):
        # the index dims stay where the first array index is, behind the separators
        out = _gather_behind_slices(expanded, pos[0], nd, size, x_batched, shape, where)
        _check_example_bounds(expanded, shape, x_batched, where)
        return out
    _check_example_bounds(expanded, shape, x_batched, where)
    fixed = tuple(_lift(p, nd, 1) if f else p for p, f in expanded)
    if not x_batched:
        return fixed
    return (np.arange(size).reshape((size,) + (1,) * nd),) + fixed


gather_index = _reg("ad.gather_index", _gather_index, differentiable=False)


def _gather_behind_slices(expanded, first, nd, size, x_batched, shape, where=None):
    """:func:`_gather_index` for ``x[s1, ..., sL, *arrays, *rest]`` with slices or
    ``...`` in front of one run of array indices: each leading slice becomes an
    ``arange`` over its dim, so that every advanced index is contiguous and
    first: NumPy then lays the result out as ``(batch, L slice dims, nd index
    dims, *rest)``, as each example's is without the batch axis."""
    lead = [p for p, _ in expanded[:first]]
    if shape is None or any(p is None for p in lead):
        from ..errors import Location

        loc = Location(*where) if where is not None else _generated_caller()
        raise TransformValueError(_LEADING_SEPARATOR, loc, hint=_LEADING_SEPARATOR_HINT)
    dims = tuple(shape[1:] if x_batched else shape)
    if any(p is Ellipsis for p in lead):
        # `...` spans the dims the other parts do not index
        used = sum(1 for p, _ in expanded if p is not None and p is not Ellipsis)
        k = lead.index(Ellipsis)
        lead = lead[:k] + [slice(None)] * (len(dims) - used) + lead[k + 1 :]
    nl = len(lead)
    rank = 1 + nl + nd
    out = []
    for k, sl in enumerate(lead):
        r = np.arange(*sl.indices(dims[k]))
        out.append(r.reshape((1,) * (1 + k) + r.shape + (1,) * (rank - 2 - k)))
    for p, f in expanded[first:]:
        if f:
            a = _lift(p, nd, 1)
            p = a.reshape(a.shape[:1] + (1,) * nl + a.shape[1:])
        out.append(p)
    if not x_batched:
        return tuple(out)
    return (np.arange(size).reshape((size,) + (1,) * (rank - 1)),) + tuple(out)


def _bgetitem(x, idx):
    """``x[idx]`` per example, for an unbatched index, when ``x`` may be a
    container of batched values the analysis did not see (indexed as is), a
    batched array (indexed with :func:`_batch_index`), an instance of a
    registered class (its own ``__getitem__`` per example) or a batch of
    objects of a user's class (:func:`_stack_objects`: each one's own
    ``__getitem__``)."""
    if isinstance(x, (tuple, list, dict)):
        return x[idx]
    if _class_kind(x) is not None or _is_object_batch(x):
        return _per_object(lambda v: v[idx], x)
    return _ad_getitem(x, _batch_index(idx, np.shape(x)[0]))


def _is_object_batch(x) -> bool:
    return isinstance(x, np.ndarray) and x.dtype == object and x.ndim == 1


def _per_object(fn, x):
    """``fn`` of each example of ``x`` (a registered class instance with batched
    leaves, or a 1-d object array of per-example objects), the results stacked."""
    if _is_object_batch(x):
        rows = [fn(v) for v in x]
    else:
        leaves = [v for v in _ad_tree_leaves(x) if np.ndim(v) > 0]
        if not leaves:
            return fn(x)
        rows = [fn(_tree_row(x, i)) for i in range(np.shape(leaves[0])[0])]
    return _stack_objects(rows)


def _ad_tree_leaves(x):
    from ..tree_util import tree_leaves

    return tree_leaves(x)


def _stack_objects(rows):
    """The per-example results of a user's class called under vmap (the
    per-example loop): stacked as ``ad.tree_stack`` does when they are arrays,
    scalars or pytrees of them, else a 1-d object array holding each example's
    object, on which NumPy applies operators element by element (the object's
    own ``__mul__`` ...) and ``ad.bgetitem`` each one's ``__getitem__``."""
    simple = (np.ndarray, np.generic, bool, int, float, complex, tuple, list, dict)
    if rows and all(isinstance(r, simple) or _class_kind(r) is not None for r in rows):
        return REGISTRY["ad.tree_stack"].impl(rows)
    out = np.empty(len(rows), dtype=object)
    for i, r in enumerate(rows):
        out[i] = r  # one by one: NumPy would read a sequence-like object's items
    return out


stack_objects = _reg("ad.stack_objects", _stack_objects, differentiable=False)


def _batched_pred(cond, lead=1, where=""):
    """``cond``, the condition of an ``if`` (or ``while``) on batched values: one
    bool per example (``lead`` leading batch axes), else NumPy's and JAX's
    error. Without this check an array-valued condition per example (``if x > 0``
    for ``x`` of shape ``(2,)``) was split by the batch logic into wrong-shaped
    results (user Y: a ``(2, 2)`` array from a scalar function)."""
    if np.ndim(cond) > lead:
        raise ShapeError(  # (JAX raises a TypeError here, NumPy a ValueError: both)
            (f"{where}: " if where else "")
            + "The truth value of an array with more than one element is ambiguous "
            f"(an `if`/`while` condition of shape {np.shape(cond)[lead:]} per example "
            "under vmap). Use jnp.any() or jnp.all(), or jnp.where for an elementwise "
            "choice"
        )
    return cond


batched_pred = _reg("ad.batched_pred", _batched_pred, differentiable=False)
batched_pred.samples = lambda rng: [((np.array([True, False]),), {})]


def _object_attr(x, name):
    """Attribute ``name`` of each example's object in ``x`` (a batch of a user's
    class instances, :func:`_stack_objects`), stacked; ``getattr`` otherwise."""
    if _is_object_batch(x):
        return _stack_objects([getattr(v, name) for v in x])
    return getattr(x, name)


object_attr = _reg("ad.object_attr", _object_attr, differentiable=False)


def _bgetitem_adjoint(ct, x, idx, dense=False):
    """Transpose of :func:`_bgetitem` in ``x``. For a container ``x``: sparse
    (``None`` holes elsewhere, ``ad.tree_index_adjoint``'s result) by default;
    with ``dense``, ``ad.index_adjoint``'s (zeros elsewhere, ``x``'s container
    type kept: the cotangent of a tuple is a tuple)."""
    if isinstance(x, (tuple, list, dict)):
        if dense:
            return _ad_index_adjoint(ct, x, idx)
        return _container_index_adjoint(ct, x, idx)
    return _ad_index_adjoint(ct, x, _batch_index(idx, np.shape(x)[0]))


bgetitem = _reg("ad.bgetitem", _bgetitem)
bgetitem_adjoint = _reg("ad.bgetitem_adjoint", _bgetitem_adjoint)
bgetitem.kind = "structural"


def _bgetitem_vjp(g, ans, x, idx):
    return bgetitem_adjoint(g, x, idx)


def _bgetitem_jvp(t, ans, x, idx):
    return bgetitem(t, idx)


def _bgetitem_adjoint_vjp(g, ans, ct, x, idx, dense=False):
    return bgetitem(g, idx)


def _bgetitem_adjoint_jvp(t, ans, ct, x, idx, dense=False):
    return bgetitem_adjoint(t, x, idx, dense)


bgetitem.def_vjp(_bgetitem_vjp)
bgetitem.def_jvp(_bgetitem_jvp)
bgetitem_adjoint.def_vjp(ct=_bgetitem_adjoint_vjp)
bgetitem_adjoint.def_jvp(ct=_bgetitem_adjoint_jvp)
_BGETITEM_INDICES = [1, (np.array([1, 0]), slice(None), np.array([0, 2])), (np.array([2, 0]), 1)]
bgetitem.samples = lambda rng: [((rng.normal(size=(2, 3, 4, 3)), i), {}) for i in _BGETITEM_INDICES]
bgetitem_adjoint.samples = lambda rng: [
    ((rng.normal(size=np.shape(_bgetitem(x, i))), x, i), {})
    for x, i in ((rng.normal(size=(2, 3, 4, 3)), i) for i in _BGETITEM_INDICES)
]


def _example_size(x):
    """The per-example number of elements of batched ``x``."""
    s = np.shape(x)[1:]
    return int(np.prod(s)) if s else 1


example_size = _reg("ad.example_size", _example_size, differentiable=False)


def _example_len(x):
    """``len`` of one example of batched ``x`` (a container the analysis took for
    an array: its own length, as every example's)."""
    if isinstance(x, (tuple, list, dict)):
        return len(x)
    if _is_object_batch(x) or _class_kind(x) is not None:
        # a user's objects per example: each one's own __len__ (one value, as
        # len() must be a Python int)
        lengths = _per_object(len, x)
        first = int(np.ravel(lengths)[0]) if np.size(lengths) else 0
        if np.any(np.asarray(lengths) != first):
            raise TypeError(
                "under vmap, len() of this object differs per example "
                f"({sorted(set(np.ravel(lengths).tolist()))}); it must be one Python int"
            )
        return first
    s = np.shape(x)
    if len(s) < 2:
        raise TypeError("len() of unsized object")
    return s[1]


example_len = _reg("ad.example_len", _example_len, differentiable=False)


def _squeeze_axes(shape, axis=None):
    """Axes of ``squeeze`` for a batched operand of shape ``shape``."""
    if axis is None:
        return tuple(i for i in range(1, len(shape)) if shape[i] == 1)
    return _batch_axis(axis, len(shape))


squeeze_axes = _reg("ad.squeeze_axes", _squeeze_axes, differentiable=False)


def _batch_pad_width(pad_width, ndim):
    """``pad_width`` of a per-example ``pad`` for the batched operand."""
    pw = np.broadcast_to(np.asarray(pad_width, dtype=int), (ndim - 1, 2))
    return ((0, 0),) + tuple((int(a), int(b)) for a, b in pw)


batch_pad_width = _reg("ad.batch_pad_width", _batch_pad_width, differentiable=False)


@functools.lru_cache(maxsize=512)
def _batch_einsum_spec(spec, flags):
    """``spec`` of an einsum over per-example operands, for the operands with
    ``flags[i]`` carrying a leading batch axis: a fresh label for that axis."""
    spec = spec.replace(" ", "")
    if "->" in spec:
        lhs, out = spec.split("->")
    else:
        lhs = spec
        labels = lhs.replace("...", "").replace(",", "")
        out = ("..." if "..." in lhs else "") + "".join(
            sorted(c for c in set(labels) if labels.count(c) == 1)
        )
    used = set(spec)
    free = next(c for c in "zyxwvutsrqponmlkjihgfedcbaZYXWVUTSRQPONMLKJIHGFEDCBA" if c not in used)
    ins = lhs.split(",")
    ins = [free + s if f else s for s, f in zip(ins, flags)]
    return ",".join(ins) + "->" + free + out


def _batch_einsum_spec_any(spec, flags):
    """:func:`_batch_einsum_spec` with ``flags`` any sequence of booleans."""
    return _batch_einsum_spec(spec, tuple(flags))


batch_einsum_spec = _reg("ad.batch_einsum_spec", _batch_einsum_spec_any, False)


# -- batched matmul (fast paths, per-example semantics) ---------------------------------
def _bmatmul(a, b, ab, bb):
    """Per example ``a @ b``; ``ab`` / ``bb`` say which operand has a leading
    batch axis. A hole (``None``, a zero cotangent in second-order code) gives a
    scalar zero, which its consumer broadcasts (user J: grad of grad through vmap).
    Operands whose per-example shapes do not fit raise JAX's TypeError (a
    ``ShapeError``) naming those shapes and the user's line."""
    if a is None or b is None:
        other = b if a is None else a
        return np.zeros((), _dt.to_inexact_dtype(np.result_type(other)))
    if _user_object(a) or _user_object(b):
        # a user's class with its own __matmul__/__rmatmul__: `@` per example
        n = len(a) if ab else len(b)
        rows = [(a[i] if ab else a) @ (b[i] if bb else b) for i in range(n)]
        return _stack_objects(rows)
    a = np.asarray(a)
    b = np.asarray(b)
    try:
        return _bmatmul_arrays(a, b, ab, bb)
    except ValueError:
        raise _example_contraction_error(a, b, ab, bb) from None


def _user_object(x) -> bool:
    """An operand that is no array: an instance of a user's class (not a
    registered pytree), or a batch of them (:func:`_stack_objects`)."""
    if _is_object_batch(x):
        return True
    simple = (np.ndarray, np.generic, bool, int, float, complex, list, tuple, dict)
    return not isinstance(x, simple) and _class_kind(x) is None


def _example_contraction_error(a, b, ab, bb):
    """The eager matmul's error for one example's operands, at the user's line."""
    import types

    from ..errors import ShapeError, format_location
    from .linalg import _contraction_error

    ea = types.SimpleNamespace(shape=np.shape(a)[1:] if ab else np.shape(a))
    eb = types.SimpleNamespace(shape=np.shape(b)[1:] if bb else np.shape(b))
    err = _contraction_error(ea, eb)
    return ShapeError(
        format_location(f"{err} (under vmap: one example's operands)", _generated_caller())
    )


def _bmatmul_arrays(a, b, ab, bb):
    if not bb:
        if b.ndim <= 2:
            return np.matmul(a, b)
        ra = a.ndim - 1
        if ra == 1:
            return np.matmul(a[:, None, :], b[..., None, :, :])[..., 0, :]
        return np.matmul(_lift(a, b.ndim), b)
    if not ab:
        rb = b.ndim - 1
        if rb >= 2:
            return np.matmul(a, _lift(b, a.ndim)) if a.ndim > 2 else np.matmul(a, b)
        # per-example vector b
        if a.ndim == 1:
            return np.matmul(b, a)
        return (
            np.matmul(a, b[:, :, None])[..., 0]
            if a.ndim == 2
            else np.moveaxis(np.matmul(a, b.T), -1, 0)  # (one product, no loop)
        )
    ra, rb = a.ndim - 1, b.ndim - 1
    a2 = a[:, None, :] if ra == 1 else a
    b2 = b[:, :, None] if rb == 1 else b
    n = max(a2.ndim, b2.ndim)
    a2 = _lift(a2, n - 1)
    b2 = _lift(b2, n - 1)
    r = np.matmul(a2, b2)
    if rb == 1:
        r = r[..., 0]
    if ra == 1:
        r = r[..., 0, :] if rb != 1 else r[..., 0]
    return r


bmatmul = _reg("ad.bmatmul", _bmatmul).facts(array_result=True)


def _per_example(fn, args, flags, size):
    """Fallback: ``fn`` per example in a loop, stacked."""
    rows = []
    for i in range(size):
        rows.append(fn(*[a[i] if f else a for a, f in zip(args, flags)]))
    return np.stack(rows)


def _size_of(args, flags):
    for a, f in zip(args, flags):
        if f:
            return np.shape(a)[0]
    return 1


def _bmatmul_left(g, a, b, ab, bb):
    """Per example the cotangent of ``a`` in ``a @ b`` (summed over the examples
    when ``a`` is not batched); ``g`` is batched. Zeros like ``a`` when ``g`` or
    ``b`` is a hole (``None``). The sum over examples is contracted inside the
    product (one GEMM over the batch axis, as JAX's dot_general batching emits),
    never a per-example stack that is summed after."""
    if g is None or b is None:
        return np.zeros(np.shape(a), _dt.to_inexact_dtype(np.result_type(a)))
    g = np.asarray(g)
    a = np.asarray(a)
    b = np.asarray(b)
    ra = a.ndim - (1 if ab else 0)
    rb = b.ndim - (1 if bb else 0)
    if not ab:
        r = _summed_left(g, b, ra, rb, bb)
        if r is not None:
            return r
    if ra in (1, 2) and rb == 2 and not bb:
        r = np.matmul(g, b.T)
    elif ra == 1 and rb == 1:
        r = g[:, None] * (b if bb else b[None, :])
    elif ra == 2 and rb == 1:  # per example outer(g, b)
        r = g[:, :, None] * (b[:, None, :] if bb else b[None, None, :])
    elif ra == 1 and rb == 2 and bb:  # per example b @ g
        r = np.matmul(b, g[..., None])[..., 0]
    elif ra == 2 and rb == 2 and bb:
        r = np.matmul(g, np.swapaxes(b, -1, -2))
    else:
        size = g.shape[0]
        r = _per_example(_matmul_left, (g, a, b), (True, ab, bb), size)
    if not ab:
        r = r.sum(axis=0)
    return r


def _summed_left(g, b, ra, rb, bb):
    """``sum_i g_i @ b_i.T`` (the cotangent of an unbatched ``a``) as one product
    contracting the batch axis, or None where no such form is written here."""
    if not bb:
        if rb == 2 and ra in (1, 2):  # g: (B, [n,] k), b: (m, k)
            return np.matmul(g.sum(axis=0), b.T)
        if rb == 1 and ra == 2:  # outer(sum_i g_i, b)
            return np.multiply.outer(g.sum(axis=0), b)
        if rb == 1 and ra == 1:
            return g.sum(axis=0) * b
        return None
    if ra == 2 and rb == 1:  # sum_i outer(g_i, b_i): g.T @ b, one GEMM
        return np.matmul(g.T, b)
    if ra == 1 and rb == 1:  # sum_i g_i b_i
        return np.matmul(g, b)
    if ra == 1 and rb == 2:  # sum_i b_i @ g_i
        return np.tensordot(b, g, axes=([0, 2], [0, 1]))
    if ra == 2 and rb == 2:  # sum_i g_i @ b_i.T
        return np.tensordot(g, b, axes=([0, 2], [0, 2]))
    return None


def _bmatmul_right(g, a, b, ab, bb):
    """Per example the cotangent of ``b`` in ``a @ b`` (summed over the examples
    when ``b`` is not batched); ``g`` is batched. Zeros like ``b`` when ``g`` or
    ``a`` is a hole (``None``). As in :func:`_bmatmul_left`, a sum over examples
    is contracted inside the product."""
    if g is None or a is None:
        return np.zeros(np.shape(b), _dt.to_inexact_dtype(np.result_type(b)))
    g = np.asarray(g)
    a = np.asarray(a)
    b = np.asarray(b)
    ra = a.ndim - (1 if ab else 0)
    rb = b.ndim - (1 if bb else 0)
    if not bb:
        r = _summed_right(g, a, ra, rb, ab)
        if r is not None:
            return r
    if bb and ab and ra == 1 and rb == 2:
        return a[:, :, None] * g[:, None, :]
    if bb and ab and ra == 2 and rb == 2:
        return np.matmul(np.swapaxes(a, -1, -2), g)
    if bb and not ab and ra == 2 and rb == 2:
        return np.matmul(a.T, g)
    if ra == 2 and rb == 1:  # per example a^T @ g
        r = np.matmul(np.swapaxes(a, -1, -2), g[..., None])[..., 0] if ab else np.matmul(g, a)
        return r if bb else r.sum(axis=0)
    if ra == 1 and rb == 1:  # per example g * a
        r = g[:, None] * (a if ab else a[None, :])
        return r if bb else r.sum(axis=0)
    if ra == 1 and rb == 2:  # per example outer(a, g)
        r = (a[:, :, None] if ab else a[None, :, None]) * g[:, None, :]
        return r if bb else r.sum(axis=0)
    size = g.shape[0]
    r = _per_example(_matmul_right, (g, a, b), (True, ab, bb), size)
    if not bb:
        r = r.sum(axis=0)
    return r


def _summed_right(g, a, ra, rb, ab):
    """``sum_i a_i.T @ g_i`` (the cotangent of an unbatched ``b``) as one product
    contracting the batch axis, or None where no such form is written here."""
    if ab:
        if rb == 2 and ra == 1:  # sum_i outer(a_i, g_i): a.T @ g
            return np.matmul(a.T, g)
        if rb == 2 and ra == 2:  # the examples' rows stacked: one GEMM
            return np.matmul(a.reshape(-1, a.shape[-1]).T, g.reshape(-1, g.shape[-1]))
        if rb == 1 and ra == 2:  # sum_i a_i.T @ g_i
            return np.tensordot(a, g, axes=([0, 1], [0, 1]))
        if rb == 1 and ra == 1:  # sum_i g_i a_i
            return np.matmul(g, a)
        return None
    if rb == 2 and ra == 2:
        return np.matmul(a.T, g.sum(axis=0))
    if rb == 2 and ra == 1:  # outer(a, sum_i g_i)
        return np.multiply.outer(a, g.sum(axis=0))
    if rb == 1 and ra == 2:
        return np.matmul(g.sum(axis=0), a)
    if rb == 1 and ra == 1:
        return g.sum(axis=0) * a
    return None


bmatmul_left = _reg("ad.bmatmul_left", _bmatmul_left).facts(array_result=True)
bmatmul_right = _reg("ad.bmatmul_right", _bmatmul_right).facts(array_result=True)
bmatmul_left.samples = lambda rng: []
bmatmul_right.samples = lambda rng: []


def _bmatmul_vjp_a(g, ans, a, b, ab, bb):
    return bmatmul_left(g, a, b, ab, bb)


def _bmatmul_vjp_b(g, ans, a, b, ab, bb):
    return bmatmul_right(g, a, b, ab, bb)


def _bmatmul_jvp_a(t, ans, a, b, ab, bb):
    return bmatmul(t, b, ab, bb)


def _bmatmul_jvp_b(t, ans, a, b, ab, bb):
    return bmatmul(a, t, ab, bb)


bmatmul.samples = lambda rng: [
    ((rng.normal(size=(4, 3)), rng.normal(size=(3, 2)), True, False), {}),
    ((rng.normal(size=(4, 3)), rng.normal(size=(4, 3, 2)), True, True), {}),
    ((rng.normal(size=(2, 3)), rng.normal(size=(4, 3, 2)), False, True), {}),
    ((rng.normal(size=(4, 2, 3)), rng.normal(size=(3, 2)), True, False), {}),
]


def _bunbroadcast(g, x, gb, xb):
    """Per example ``unbroadcast(g, x)``: ``g`` summed down to the per-example
    shape of ``x`` (the result is batched when ``g`` is)."""
    g = np.asarray(g)
    xs = np.shape(x)[1:] if xb else np.shape(x)
    if not gb:  # (x's dtype, not float64: unbroadcast casts to the operand's dtype)
        return _ad_unbroadcast(g, np.zeros(xs, getattr(x, "dtype", g.dtype)))
    gs = g.shape[1:]
    if gs == xs:
        return g
    lead = len(gs) - len(xs)
    axes = tuple(range(1, lead + 1)) + tuple(
        1 + lead + i for i, n in enumerate(xs) if n == 1 and gs[lead + i] != 1
    )
    out = g.sum(axis=axes) if axes else g
    return out.reshape((g.shape[0],) + tuple(xs))


bunbroadcast = _reg("ad.bunbroadcast", _bunbroadcast).facts(array_result=True)
bunbroadcast.samples = lambda rng: []


def _bunbroadcast_vjp(h, ans, g, x, gb, xb):
    return broadcast_to(lift(h, ndim_(g) - 1), shape_(g))


# =========================================================================== rules
def _p(name):
    return by_public(name)


reshape = _p("jnp.reshape")
shape_ = _p("jnp.shape")
ndim_ = _p("jnp.ndim")
zeros_like = _p("jnp.zeros_like")
broadcast_to = _p("jnp.broadcast_to")
unbroadcast = _p("ad.unbroadcast")

batch_broadcast.def_vjp(_batch_broadcast_vjp)
batch_broadcast.def_jvp(_batch_broadcast_jvp)
lift.def_vjp(_lift_vjp)
lift.def_jvp(_lift_jvp)
select.def_vjp(a=_select_vjp_a, b=_select_vjp_b)
select.def_jvp(a=_select_jvp_a, b=_select_jvp_b)
branch_input.def_vjp(x=_branch_input_vjp)
branch_input.def_jvp(x=_branch_input_jvp)
bmatmul.def_vjp(_bmatmul_vjp_a, _bmatmul_vjp_b)
bmatmul.def_jvp(_bmatmul_jvp_a, _bmatmul_jvp_b)
bunbroadcast.def_vjp(g=_bunbroadcast_vjp)


# bmatmul_left(g, a, b) = per example g @ b.T (summed unless `a` is batched) and
# bmatmul_right(g, a, b) = per example a.T @ g (summed unless `b` is batched) are
# the two adjoints of bmatmul: bilinear, in (g, b) and in (g, a); the remaining
# operand only gives the shape. Their rules are therefore bmatmul and each other
# (jacfwd(jacrev(f)) and jacrev(jacrev(f)) of code with a matmul need them).
def _bmatmul_left_jvp_g(t, ans, g, a, b, ab, bb):
    return bmatmul_left(t, a, b, ab, bb)


def _bmatmul_left_jvp_b(t, ans, g, a, b, ab, bb):
    return bmatmul_left(g, a, t, ab, bb)


def _bmatmul_left_vjp_g(h, ans, g, a, b, ab, bb):
    return broadcast_to(bmatmul(h, b, ab, bb), shape_(g))


def _bmatmul_left_vjp_b(h, ans, g, a, b, ab, bb):
    return bmatmul_right(g, h, b, ab, bb)


def _bmatmul_right_jvp_g(t, ans, g, a, b, ab, bb):
    return bmatmul_right(t, a, b, ab, bb)


def _bmatmul_right_jvp_a(t, ans, g, a, b, ab, bb):
    return bmatmul_right(g, t, b, ab, bb)


def _bmatmul_right_vjp_g(h, ans, g, a, b, ab, bb):
    return broadcast_to(bmatmul(a, h, ab, bb), shape_(g))


def _bmatmul_right_vjp_a(h, ans, g, a, b, ab, bb):
    return bmatmul_left(g, a, h, ab, bb)


def _adjoint_samples(rng):
    """(g, a, b, ab, bb) with g shaped like a @ b: every batching of bmatmul."""
    out = []
    for (a, b, ab, bb), _ in bmatmul.samples(rng) + [
        ((rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), True, True), {}),
        ((rng.normal(size=(3,)), rng.normal(size=(4, 3, 2)), False, True), {}),
    ]:
        g = rng.normal(size=np.shape(_bmatmul(a, b, ab, bb)))
        out.append(((g, a, b, ab, bb), {}))
    return out


bmatmul_left.samples = bmatmul_right.samples = _adjoint_samples
bmatmul_left.def_jvp(g=_bmatmul_left_jvp_g, b=_bmatmul_left_jvp_b)
bmatmul_left.def_vjp(g=_bmatmul_left_vjp_g, b=_bmatmul_left_vjp_b)
bmatmul_right.def_jvp(g=_bmatmul_right_jvp_g, a=_bmatmul_right_jvp_a)
bmatmul_right.def_vjp(g=_bmatmul_right_vjp_g, a=_bmatmul_right_vjp_a)


def _bunbroadcast_jvp(t, ans, g, x, gb, xb):
    return bunbroadcast(t, x, gb, xb)


bunbroadcast.def_jvp(g=_bunbroadcast_jvp)


def _is_name(node):
    return isinstance(node, gast.Name)


def elementwise_rule(c):
    """Elementwise primitives: align the per-example ranks of the batched operands
    with the other array operands, then call the primitive unchanged."""
    if c.prim.public == "jnp.where" and c.bound.get("x") is None:
        return None  # one-argument where (nonzero): shapes differ per example
    names = []
    for pname, v in c.bound.items():
        items = v if isinstance(v, list) else [v]
        for it in items:
            if _is_name(it):
                names.append((pname, it))
    changes = {}
    if len(names) > 1:
        for pname, node in names:
            if not c.batched(pname) or isinstance(c.bound[pname], list):
                continue
            cur = node
            for qname, other in names:
                if qname == pname or (_is_name(other) and other.id == node.id):
                    continue
                cur = c.lift(cur, other)
            changes[pname] = cur
    if c.prim.op == "unary not":
        # `not x` per example; written as a comparison so that it stays an array
        # operation when this code is normalized again
        return gast.Compare(
            left=changes.get("x", c.arg("x")), ops=[gast.Eq()], comparators=[N.const(False)]
        )
    return c.rebuild(**changes)


def _same(c):
    """The primitive applied to the batched operands as they are (it acts on
    trailing axes or elementwise, or broadcasts over leading axes)."""
    return c.rebuild()


def _materialized(c, *names):
    """Every operand ``names`` made batched, then the same call."""
    changes = {}
    for n in names:
        v = c.bound.get(n)
        if (
            v is not None
            and not isinstance(v, list)
            and not (isinstance(v, gast.Constant) and v.value is None)
        ):
            changes[n] = c.materialize(v)
    return c.rebuild(**changes)


def _def(names, rule):
    """Attach the batching rule ``rule`` to the primitives ``names`` (public
    names); an unknown name is an error at import, never a rule silently lost."""
    for n in names:
        by_public(n).def_batch(rule)


# -- same-call family --------------------------------------------------------------------
_def(
    [
        "jnp.zeros_like",
        "jnp.ones_like",
        "jnp.empty_like",
        "jnp.copy",
        "jnp.asarray",
        "jnp.array",
        "ad.zeros_like",
        "ad.astype",
        "jnp.matrix_transpose",
        "jnp.tril",
        "jnp.triu",
        "jnp.linalg.inv",
        "jnp.linalg.det",
        "jnp.linalg.slogdet",
        "jnp.linalg.cholesky",
        "jnp.linalg.eigh",
        "jnp.linalg.eigvalsh",
        "ad.replace_inf",
        "ad.cholesky_phi",
    ],
    _same,
)


def _full_like(c):
    if c.batched("fill_value") and not c.batched("a"):
        return c.rebuild(
            a=c.materialize(c.arg("a")), fill_value=c.lift(c.arg("fill_value"), c.arg("a"))
        )
    if c.batched("fill_value"):
        return c.rebuild(fill_value=c.lift(c.arg("fill_value"), c.arg("a")))
    return c.rebuild()


_def(["jnp.full_like"], _full_like)


def _tree_same(c):
    """Container helpers of reverse mode: every container operand made batched."""
    names = [n for n in c.bound if n not in ("idx", "name")]
    return _materialized(c, *names)


_def(["ad.tree_add", "ad.part", "ad.push", "ad.fill_none", "ad.add_any"], _tree_same)


def _getattr_rule(c):
    """``x.name`` of a batched object: batched, except a static attribute (one
    that is no child of the registered class: aux data), the same for all."""
    x, name = c.bound.get("x"), c.bound.get("name")
    if isinstance(x, gast.Name) and x.id in getattr(c.bp, "object_batches", ()):
        # a batch of a user's class instances (ad.stack_objects): per object
        return N.call("ad.object_attr", [N.clone(x), N.clone(name)])
    if isinstance(x, gast.Name) and isinstance(name, gast.Constant):
        skel = c.bp.skel.get(x.id)
        if isinstance(skel, tuple) and skel[0] == "class" and name.value in skel[2]:
            return c.rebuild(), False
    return c.rebuild()


_def(["ad.getattr"], _getattr_rule)
_def(["ad.static_attr"], lambda c: (c.rebuild(), False))


def _attr_rule(c):
    """``ad.attr_adjoint(ct, x, name)`` / ``ad.attr_part(ct, x, name)``: a batched
    object is one whose leaves carry the batch axis, so the same call places (or
    takes) the batched part; ``ct`` is made batched when only ``x`` is."""
    return _materialized(c, "ct")


_def(["ad.attr_adjoint", "ad.attr_part"], _attr_rule)


def _setitem(c):
    if c.batched("idx"):
        return None
    x = c.arg("x")
    if c.is_container(x):
        return _materialized(c, "x", "v")
    return None


_def(["ad.setitem"], _setitem)


def _pop(c):
    return c.rebuild()


_def(["ad.pop", "ad.pop_like"], _pop)


def _row_stand_in(x):
    """Zeros shaped and typed like one example of batched ``x`` (leading axis
    dropped); defined for an empty batch too."""
    x = np.asarray(x)
    return np.zeros(x.shape[1:], x.dtype)


row_stand_in = _reg("ad.row_stand_in", _row_stand_in, differentiable=False)
row_stand_in.samples = lambda rng: [((rng.normal(size=(3, 2)),), {})]


def _row_stand_in_rule(c):
    return N.call("ad.row_stand_in", [N.call("ad.row_stand_in", [c.arg("x")])]), False


def _seed(c):
    # one seed for every example, from a stand-in of one example's output (not
    # out[0]: the batch may be empty)
    x = c.arg("out")
    return N.call(c.prim.public, [N.call("ad.row_stand_in", [x])]), False


_def(["ad.seed", "ad.seed_holomorphic"], _seed)
_def(["ad.row_stand_in"], _row_stand_in_rule)


def _shape_query(c):
    name = c.prim.public
    x = c.arg("a")
    if name == "jnp.shape":
        return (
            gast.Subscript(
                value=N.call("jnp.shape", [x]),
                slice=gast.Slice(lower=N.const(1), upper=None, step=None),
                ctx=gast.Load(),
            ),
            False,
        )
    if name == "jnp.ndim":
        return gast.BinOp(left=N.call("jnp.ndim", [x]), op=gast.Sub(), right=N.const(1)), False
    if name == "jnp.size":
        ok, axis = c.static("axis")
        if ok and axis is None:
            return N.call("ad.example_size", [x]), False
        return N.call("jnp.size", [x], {"axis": c.shift_axis("axis", x)}), False
    return None


_def(["jnp.shape", "jnp.ndim", "jnp.size"], _shape_query)


# -- reductions and other axis-taking operations ---------------------------------------
def _axis_rule(xname, axis="axis", others=()):
    def rule(c):
        changes = {}
        x = c.arg(xname)
        if not c.batched(xname):
            x = c.materialize(x)
            changes[xname] = x
        for o in others:
            v = c.bound.get(o)
            if v is not None and not isinstance(v, gast.Constant):
                changes[o] = c.lift(c.materialize(v), x) if c.batched(o) else c.materialize(v)
        changes[axis] = c.shift_axis(axis, x)
        return c.rebuild(**changes)

    return rule


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
            flat = c.let(
                (x.id if _is_name(x) else "x") + "_flat",
                N.call("jnp.reshape", [x, gast.Tuple(elts=[c.size, N.const(-1)], ctx=gast.Load())]),
            )
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


def _one_hot(c):
    if c.batched("num_classes"):
        return None
    return c.rebuild(axis=c.shift_axis("axis", c.arg("x")))


_def(["nn.one_hot"], _one_hot)


def _flip(c):
    return c.rebuild(axis=c.shift_axis("axis", c.arg("m")))


_def(["jnp.flip"], _flip)


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


# -- structural --------------------------------------------------------------------------
def _reshape(c):
    if c.batched("shape"):
        return None
    a = c.arg("a")
    ok, shape = c.static("shape")
    if ok and shape is not None:
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        new = gast.Tuple(elts=[c.size] + [N.const(s) for s in shape], ctx=gast.Load())
    else:
        new = N.call("ad.batch_shape", [c.size, c.arg("shape")])
    return c.rebuild(a=a, shape=new)


_def(["jnp.reshape"], _reshape)


def _ravel(c):
    return N.call(
        "jnp.reshape", [c.arg("a"), gast.Tuple(elts=[c.size, N.const(-1)], ctx=gast.Load())]
    )


_def(["jnp.ravel"], _ravel)


def _transpose(c):
    a = c.arg("a")
    ok, axes = c.static("axes")
    if ok and axes is not None:
        return c.rebuild(axes=N.const((0,) + tuple(k + 1 if k >= 0 else k for k in axes)))
    if c.batched("axes"):
        return None
    return c.rebuild(
        axes=N.call("ad.batch_perm", [c.arg("axes") if not ok else N.const(None), c.ndim(a)])
    )


_def(["jnp.transpose"], _transpose)
if "T" in getattr(__import__("srcjax.primitives.methods", fromlist=["METHODS"]), "METHODS", {}):
    pass


def _axes_args(*names):
    def rule(c):
        x = c.arg(list(c.prim.signature.parameters)[0])
        changes = {}
        for n in names:
            if c.batched(n):
                return None
            changes[n] = c.shift_axis(n, x)
        return c.rebuild(**changes)

    return rule


REGISTRY["jnp.swapaxes"].def_batch(_axes_args("axis1", "axis2"))
REGISTRY["jnp.moveaxis"].def_batch(_axes_args("source", "destination"))
REGISTRY["jnp.expand_dims"].def_batch(_axes_args("axis"))
REGISTRY["jnp.diagonal"].def_batch(_axes_args("axis1", "axis2"))
REGISTRY["jnp.trace"].def_batch(_axes_args("axis1", "axis2"))
REGISTRY["jnp.unstack"].def_batch(_axes_args("axis"))


def _split(c):
    if c.batched("indices_or_sections"):
        return None
    return c.rebuild(axis=c.shift_axis("axis", c.arg("ary")))


_def(["jnp.split", "jnp.array_split"], _split)


def _squeeze(c):
    a = c.arg("a")
    ok, axis = c.static("axis")
    if ok and axis is not None:
        return c.rebuild(axis=c.shift_axis("axis", a))
    axis = N.const(None) if ok else c.arg("axis")
    return c.rebuild(axis=N.call("ad.squeeze_axes", [N.call("jnp.shape", [a]), axis]))


_def(["jnp.squeeze"], _squeeze)


def _int_axis_arg(c, pname):
    ok, axis = c.static(pname)
    if ok:
        if axis is None:
            return None
        return N.const(axis + 1 if axis >= 0 else axis)
    return N.call("ad.shift_int_axis", [c.arg(pname)])


def _shift_int_axis(axis):
    """An integer axis of a per-example operation for batched operands."""
    if axis is None:
        raise NotImplementedError("vmap: axis=None here (flattening) is not supported")
    axis = int(axis)
    return axis + 1 if axis >= 0 else axis


_reg("ad.shift_int_axis", _shift_int_axis, differentiable=False)


def _concat(c):
    arrays = c.arg("arrays")
    axis = _int_axis_arg(c, "axis")
    if axis is None:
        ok, dtype = c.static("dtype")
        if not ok or dtype is not None or not c.is_container(arrays):
            return None
        # axis=None: every example's items flattened, then joined
        return N.call("ad.bjoin", [c.materialize(arrays), N.const("flat"), N.const(1)])
    return c.rebuild(arrays=c.materialize(arrays), axis=axis)


def _stack(c):
    arrays = c.arg("arrays")
    if c.batched("arrays") and _is_name(arrays) and not c.is_container(arrays):
        # stack(x) of an array (list(x) is a copy of x): per example its rows
        # stacked back, x itself for axis 0; the batch axis must not be iterated
        ok, ax = c.static("axis")
        if ok and ax in (0, None):
            # (a list the analysis did not know as one: its items stacked behind
            # the batch axis, see _array_rule)
            arr = c.let("stacked", N.call("jnp.asarray", [arrays]))
            return N.call(
                "jnp.moveaxis", [arr, N.call("ad.list_depth", [N.clone(arrays)]), N.const(0)]
            )
        return None
    axis = _int_axis_arg(c, "axis")
    if axis is None:
        return None
    return c.rebuild(arrays=c.materialize(arrays), axis=axis)


_def(["jnp.concatenate"], _concat)
_def(["jnp.stack"], _stack)


def _flat_rows(c, x):
    """Batched ``x`` with every example flattened: ``reshape(x, (size, -1))``."""
    return c.let(
        (x.id if _is_name(x) else "x") + "_flat",
        N.call(
            "jnp.reshape", [N.clone(x), gast.Tuple(elts=[c.size, N.const(-1)], ctx=gast.Load())]
        ),
    )


def _roll(c):
    ok, axis = c.static("axis")
    if not ok or c.batched("shift"):
        return None
    a = c.arg("a")
    if axis is None:
        # roll of the flattened example, reshaped back
        rolled = c.let("rolled", c.rebuild(a=_flat_rows(c, a), axis=N.const(1)))
        return N.call("jnp.reshape", [rolled, N.call("jnp.shape", [a])])
    return c.rebuild(axis=c.shift_axis("axis", a))


_def(["jnp.roll"], _roll)


def _repeat(c):
    ok, axis = c.static("axis")
    if not ok or c.batched("repeats"):
        return None
    if axis is None:  # repeat of the flattened example
        return c.rebuild(a=_flat_rows(c, c.arg("a")), axis=N.const(1))
    return c.rebuild(axis=c.shift_axis("axis", c.arg("a")))


_def(["jnp.repeat"], _repeat)


def _pad(c):
    if c.batched("pad_width") or c.batched("constant_values"):
        return None
    a = c.arg("array")
    return c.rebuild(pad_width=N.call("ad.batch_pad_width", [c.arg("pad_width"), c.ndim(a)]))


_def(["jnp.pad"], _pad)


def _broadcast_to(c):
    if c.batched("shape"):
        return None
    arr = c.arg("array")
    shape = c.arg("shape")
    lifted = c.let(
        (arr.id if _is_name(arr) else "x") + "_al",
        N.call("ad.lift", [arr, N.call("len", [N.call("ad.as_shape", [shape])])]),
    )
    return c.rebuild(array=lifted, shape=N.call("ad.batch_shape", [c.size, shape]))


_def(["jnp.broadcast_to"], _broadcast_to)


def _as_shape(shape):
    """``shape`` as a tuple (an int becomes a 1-tuple)."""
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(shape)


_reg("ad.as_shape", _as_shape, differentiable=False)


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


_def(["jnp.take_along_axis"], _take_along_axis)


def _take(c):
    ok, axis = c.static("axis")
    if c.batched("indices") or not ok:
        return None
    a = c.arg("a")
    if axis is None:
        flat = c.let(
            (a.id if _is_name(a) else "a") + "_flat",
            N.call("jnp.reshape", [a, gast.Tuple(elts=[c.size, N.const(-1)], ctx=gast.Load())]),
        )
        return c.rebuild(a=flat, axis=N.const(1))
    return c.rebuild(axis=c.shift_axis("axis", a))


_def(["jnp.take"], _take)


# -- indexing ------------------------------------------------------------------------------
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
    return gast.Subscript(value=x, slice=_batched_index(c, idx, xb, x), ctx=gast.Load())


_def(["ad.getitem"], _getitem)


def _at_rule(c):
    x = c.materialize(c.arg("x"))
    idx = c.bound["idx"]
    v = c.arg("v")
    new_idx = _batched_index(c, idx, True, x)
    if c.batched("v"):
        target = gast.Subscript(value=N.clone(x), slice=N.clone(new_idx), ctx=gast.Load())
        v = c.let(
            (v.id if _is_name(v) else "v") + "_al",
            N.call(
                "ad.lift",
                [v, gast.BinOp(left=N.call("jnp.ndim", [target]), op=gast.Sub(), right=N.const(1))],
            ),
        )
    return N.call(c.prim.public, [x, N.index_value(new_idx), v])


_def(["ad.at_set", "ad.at_add", "ad.at_multiply", "ad.at_min", "ad.at_max"], _at_rule)


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
            target = gast.Subscript(value=N.clone(x), slice=N.clone(new_idx), ctx=gast.Load())
            a = c.let(
                (a.id if _is_name(a) else name) + "_al",
                N.call(
                    "ad.lift",
                    [
                        a,
                        gast.BinOp(
                            left=N.call("jnp.ndim", [target]), op=gast.Sub(), right=N.const(1)
                        ),
                    ],
                ),
            )
        ops.append(a)
    return N.call(c.prim.public, [x, N.index_value(new_idx), *ops])


_def(
    [
        "ad.at_set_winners",
        "ad.at_multiply_others",
        "ad.at_multiply_others_d1",
        "ad.at_multiply_others_d2",
        "ad.at_multiply_others_d3_check",
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
        return N.call("ad.bgetitem_adjoint", [g, x, N.index_value(idx), N.const(True)])
    return N.call(c.prim.public, [g, x, N.index_value(_batched_index(c, idx, True, x))])


_def(["ad.index_adjoint"], _index_adjoint)
_def(["ad.tree_axis_size"], _tree_axis_size_rule)


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
    idx = N.index_value(_batched_index(c, idx, True, x))
    return N.call("ad.index_adjoint", [ct, x, idx])


_def(["ad.tree_index_adjoint"], _tree_index_adjoint)


def _cotangent_like(c):
    x = c.arg("x")
    if c.is_container(x):
        return _materialized(c, "ct", "x")
    # x may still be a container at run time (a parameter of an inlined grad whose
    # kind was not known: a closed-over list of (W, b) under vmap): decided there
    return N.call("ad.bcotangent_like", [c.materialize(c.arg("ct")), c.materialize(x)])


def _broadcast_like_rule(c):
    """``ad.broadcast_like(x, like)``: per-example ranks aligned, then broadcast."""
    return N.call(
        "ad.bbroadcast_like",
        [c.arg("x"), c.arg("like"), N.const(c.batched("x")), N.const(c.batched("like"))],
    )


def _bbroadcast_like(x, like, xb, lb):
    """Batched ``broadcast_like``: per-example ranks aligned after the batch axis."""
    x = np.asarray(x)
    shape = tuple(np.shape(like))
    if not lb:
        shape = (x.shape[0],) + shape  # x is batched
    if xb:
        missing = (len(shape) - 1) - (x.ndim - 1)
        if missing > 0:
            x = x.reshape(x.shape[:1] + (1,) * missing + x.shape[1:])
    if x.shape == shape:
        return x
    return np.broadcast_to(x, shape)


bbroadcast_like = _reg("ad.bbroadcast_like", _bbroadcast_like).facts(array_result=True)
bbroadcast_like.missing_rule_hint = (
    "differentiating vmap-ed forward-mode code (grad of vmap of jvp) is not supported yet"
)
bbroadcast_like.samples = lambda rng: []


def _bbroadcast_like_jvp(t, ans, x, like, xb, lb):
    return bbroadcast_like(t, like, xb, lb)


def _bbroadcast_like_vjp(h, ans, x, like, xb, lb):
    return bunbroadcast(h, x, True, True) if xb else unbroadcast(h, x)


bbroadcast_like.def_jvp(x=_bbroadcast_like_jvp)
bbroadcast_like.def_vjp(x=_bbroadcast_like_vjp)


_def(["ad.broadcast_like"], _broadcast_like_rule)


_def(["ad.cotangent_like"], _cotangent_like)


def _bcotangent_like(ct, x):
    """Batched ``ad.cotangent_like(ct, x)`` (both carry the batch axis): holes
    filled with zeros of ``x``'s leaves, ``x``'s container types kept, each leaf
    of ``ct`` given ``x``'s per-example rank (unit axes after the batch axis),
    broadcast and cast to ``x``'s floating dtype."""
    if isinstance(x, dict):
        return type(x)(
            (k, _bcotangent_like(ct.get(k) if isinstance(ct, dict) else None, v))
            for k, v in x.items()
        )
    if isinstance(x, (list, tuple)):
        parts = [None] * len(x) if ct is None else list(ct) + [None] * (len(x) - len(ct))
        vals = [_bcotangent_like(g, v) for g, v in zip(parts, x)]
        return type(x)(*vals) if hasattr(x, "_fields") else type(x)(vals)
    if ct is not None and x is not None and _class_kind(x) is None:
        ct = _lift(ct, np.ndim(x) - 1)
    return REGISTRY["ad.cotangent_like"].impl(ct, x)


bcotangent_like = _reg("ad.bcotangent_like", _bcotangent_like)


def _bcotangent_like_vjp(g, ans, ct, x):
    # as ad.cotangent_like's: the identity (the cotangent reaching a gradient's
    # final form has its primal's shape; filling holes is linear)
    return g


def _bcotangent_like_jvp(t, ans, ct, x):
    return bcotangent_like(t, x)


bcotangent_like.def_vjp(ct=_bcotangent_like_vjp)
bcotangent_like.def_jvp(ct=_bcotangent_like_jvp)
bcotangent_like.samples = lambda rng: [
    ((rng.normal(size=(3, 2)), rng.normal(size=(3, 2))), {}),
    (
        (
            [rng.normal(size=(3,)), rng.normal(size=(3, 2))],
            (rng.normal(size=(3,)), rng.normal(size=(3, 2))),
        ),
        {},
    ),
]


def _unbroadcast(c):
    return N.call(
        "ad.bunbroadcast",
        [c.arg("g"), c.arg("x"), N.const(c.batched("g")), N.const(c.batched("x"))],
    ), c.batched("g")


_def(["ad.unbroadcast"], _unbroadcast)


def _pysum(c):
    x = c.arg("x")
    if c.is_container(x):
        return _materialized(c, "x") if not c.batched("start") else None
    if c.batched("start"):
        return None
    total = N.call("jnp.sum", [x], {"axis": N.const(1)})
    ok, start = c.static("start")
    if ok and start == 0:
        return total
    return gast.BinOp(left=total, op=gast.Add(), right=c.arg("start"))


_def(["ad.pysum"], _pysum)


# -- products ----------------------------------------------------------------------------
def _product_operands(c):
    """``a`` and ``b``, cast to ``preferred_element_type`` when one is given (JAX
    computes the product in that type)."""
    a, b = c.arg("a"), c.arg("b")
    ok, pet = c.static("preferred_element_type")
    if ok and pet is None:
        return a, b
    pet = c.arg("preferred_element_type")
    return N.call("ad.astype", [a, pet]), N.call("ad.astype", [b, N.clone(pet)])


def _pet_kw(c):
    """``{"preferred_element_type": ...}`` for a product's ``einsum`` when given."""
    ok, pet = c.static("preferred_element_type")
    return {} if ok and pet is None else {"preferred_element_type": c.arg("preferred_element_type")}


def _matmul(c):
    a, b = _product_operands(c)
    return N.call("ad.bmatmul", [a, b, N.const(c.batched("a")), N.const(c.batched("b"))])


_def(["jnp.matmul"], _matmul)


def _matmul_left_expr(c):
    g = c.materialize(c.arg("g"))
    return (
        N.call(
            "ad.bmatmul_left",
            [g, c.arg("a"), c.arg("b"), N.const(c.batched("a")), N.const(c.batched("b"))],
        ),
        True,
    )


def _matmul_right_expr(c):
    g = c.materialize(c.arg("g"))
    return (
        N.call(
            "ad.bmatmul_right",
            [g, c.arg("a"), c.arg("b"), N.const(c.batched("a")), N.const(c.batched("b"))],
        ),
        True,
    )


def _matmul_left_rule(c):
    # the cotangent of `a` is per example (batched) whatever is batched
    expr, _ = _matmul_left_expr(c)
    # bmatmul_left sums over examples when `a` is unbatched: keep it per example
    if not c.batched("a"):
        a = c.materialize(c.arg("a"))
        return N.call(
            "ad.bmatmul_left",
            [c.materialize(c.arg("g")), a, c.arg("b"), N.const(True), N.const(c.batched("b"))],
        )
    return expr


def _matmul_right_rule(c):
    if not c.batched("b"):
        b = c.materialize(c.arg("b"))
        return N.call(
            "ad.bmatmul_right",
            [c.materialize(c.arg("g")), c.arg("a"), b, N.const(c.batched("a")), N.const(True)],
        )
    expr, _ = _matmul_right_expr(c)
    return expr


_def(["ad.matmul_left"], _matmul_left_rule)
_def(["ad.matmul_right"], _matmul_right_rule)


def _einsum(c):
    ops = c.bound["operands"]
    flags = tuple(c.bp.is_batched(o) for o in ops)
    ok, spec = c.static("subscripts")
    if c.batched("subscripts"):
        return None
    if ok and isinstance(spec, str):
        new = N.const(_batch_einsum_spec(spec, flags))
    else:
        new = N.call("ad.batch_einsum_spec", [c.arg("subscripts"), N.const(flags)])
    return c.rebuild(subscripts=new)


_def(["jnp.einsum"], _einsum)


def _bilinear(kind):
    def rule(c):
        a, b = c.arg("a"), c.arg("b")
        spec = N.call(
            "ad.batch_einsum_spec",
            [
                N.call("ad.bilinear_spec", [N.const(kind), _example(c, a), _example(c, b)]),
                N.const((c.batched("a"), c.batched("b"))),
            ],
        )
        return N.call("jnp.einsum", [spec, a, b], _pet_kw(c))

    return rule


def _example(c, x):
    """One example of ``x`` (for static shape queries)."""
    if c.bp.is_batched(x):
        return gast.Subscript(value=N.clone(x), slice=N.const(0), ctx=gast.Load())
    return N.clone(x)


def _dot(c):
    # dot on per-example ranks <= 2 is matmul
    a, b = _product_operands(c)
    return N.call("ad.bdot", [a, b, N.const(c.batched("a")), N.const(c.batched("b"))])


def _bdot(a, b, ab, bb):
    """Per example ``dot(a, b)``."""
    ra = np.ndim(a) - (1 if ab else 0)
    rb = np.ndim(b) - (1 if bb else 0)
    if ra >= 1 and rb >= 1 and ra <= 2 and rb <= 2:
        return _bmatmul(a, b, ab, bb)
    spec = _batch_einsum_spec(
        _bilinear_impl("dot", np.zeros((1,) * ra), np.zeros((1,) * rb)), (ab, bb)
    )
    return np.einsum(spec, a, b)


def _bilinear_impl(kind, a, b):
    return by_public("ad.bilinear_spec").impl(kind, a, b)


bdot = _reg("ad.bdot", _bdot)


def _bdot_vjp_a(g, ans, a, b, ab, bb):
    return bmatmul_left(g, a, b, ab, bb)


def _bdot_vjp_b(g, ans, a, b, ab, bb):
    return bmatmul_right(g, a, b, ab, bb)


def _bdot_jvp_a(t, ans, a, b, ab, bb):
    return bdot(t, b, ab, bb)  # bilinear


def _bdot_jvp_b(t, ans, a, b, ab, bb):
    return bdot(a, t, ab, bb)


# the adjoints above are bmatmul's, exact for operands of rank 1 and 2 (where dot
# is matmul): the samples stay there
bdot.samples = lambda rng: (
    bmatmul.samples(rng)
    + [
        ((rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), True, True), {}),
        ((rng.normal(size=(3,)), rng.normal(size=(4, 3, 2)), False, True), {}),
    ]
)
bdot.def_vjp(_bdot_vjp_a, _bdot_vjp_b)
bdot.def_jvp(_bdot_jvp_a, _bdot_jvp_b)

_def(["jnp.dot"], _dot)
_def(["jnp.inner"], _bilinear("inner"))


def _vdot(c):
    a = c.let("a_flat", N.call("jnp.reshape", [c.arg("a"), _flat_shape(c, "a")]))
    b = c.let("b_flat", N.call("jnp.reshape", [c.arg("b"), _flat_shape(c, "b")]))
    spec = {(True, True): "bi,bi->b", (True, False): "bi,i->b", (False, True): "i,bi->b"}[
        (c.batched("a"), c.batched("b"))
    ]
    # vdot conjugates its first operand
    return N.call("jnp.einsum", [N.const(spec), N.call("jnp.conj", [a]), b], _pet_kw(c))


def _flat_shape(c, name):
    if c.batched(name):
        return gast.Tuple(elts=[c.size, N.const(-1)], ctx=gast.Load())
    return N.const((-1,))


_def(["jnp.vdot"], _vdot)


def _outer(c):
    a = c.let("a_flat", N.call("jnp.reshape", [c.arg("a"), _flat_shape(c, "a")]))
    b = c.let("b_flat", N.call("jnp.reshape", [c.arg("b"), _flat_shape(c, "b")]))
    spec = {(True, True): "bi,bj->bij", (True, False): "bi,j->bij", (False, True): "i,bj->bij"}[
        (c.batched("a"), c.batched("b"))
    ]
    return N.call("jnp.einsum", [N.const(spec), a, b])


_def(["jnp.outer"], _outer)


def _tensordot(c):
    ok, axes = c.static("axes")
    if c.batched("axes"):
        return None
    # axes not written as a literal (a constant list or array): passed to the spec
    # helper at run time
    axes_node = N.const(axes) if ok else c.arg("axes")
    a, b = c.arg("a"), c.arg("b")
    spec = N.call(
        "ad.batch_einsum_spec",
        [
            N.call(
                "ad.bilinear_spec",
                [N.const("tensordot"), _example(c, a), _example(c, b), axes_node],
            ),
            N.const((c.batched("a"), c.batched("b"))),
        ],
    )
    return N.call("jnp.einsum", [spec, a, b], _pet_kw(c))


_def(["jnp.tensordot"], _tensordot)


def _solve(c):
    # numpy's solve treats a stacked right-hand side as matrices: with a batched
    # (materialized) `a`, a per-example vector `b` becomes a column first, so the
    # batched call is jnp.linalg.solve itself, with all its derivative rules
    # (per-example batch dimensions of a and of the right-hand side broadcast: both
    # are lifted to the same per-example rank first)
    a = c.materialize(c.arg("a"))
    b = c.materialize(c.arg("b"))
    col = c.let("rhs", N.call("ad.rhs_column", [b, a]))

    def per_example_rank(x):
        return gast.BinOp(left=N.call("jnp.ndim", [x]), op=gast.Sub(), right=N.const(1))

    a_l = c.let("a_lifted", N.call("ad.lift", [a, per_example_rank(col)]))
    col_l = c.let("rhs_lifted", N.call("ad.lift", [col, per_example_rank(a)]))
    x = c.let("solved", N.call("jnp.linalg.solve", [a_l, col_l]))
    return N.call("ad.rhs_uncolumn", [x, b, a])


def _rhs_column(b, a):
    """``b`` as a column when it is a vector per example of the batched
    matrices ``a`` (``b.ndim == a.ndim - 1``), else ``b``."""
    b = np.asarray(b)
    return b[..., None] if b.ndim == np.ndim(a) - 1 else b


def _rhs_uncolumn(x, b, a):
    """The inverse of :func:`_rhs_column` for a solution ``x``."""
    x = np.asarray(x)
    return x[..., 0] if np.ndim(b) == np.ndim(a) - 1 else x


rhs_column = _reg("ad.rhs_column", _rhs_column)
rhs_uncolumn = _reg("ad.rhs_uncolumn", _rhs_uncolumn)


def _rhs_column_vjp(g, ans, b, a):
    return rhs_uncolumn(g, b, a)


def _rhs_column_jvp(t, ans, b, a):
    return rhs_column(t, a)


def _rhs_uncolumn_vjp(g, ans, x, b, a):
    return rhs_column(g, a) if np.ndim(b) == np.ndim(a) - 1 else g


def _rhs_uncolumn_jvp(t, ans, x, b, a):
    return rhs_uncolumn(t, b, a)


rhs_column.def_vjp(b=_rhs_column_vjp)
rhs_column.def_jvp(b=_rhs_column_jvp)
rhs_uncolumn.def_vjp(x=_rhs_uncolumn_vjp)
rhs_uncolumn.def_jvp(x=_rhs_uncolumn_jvp)
rhs_column.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), rng.normal(size=(2, 3, 3))), {}),
    ((rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 3, 3))), {}),
]
rhs_uncolumn.samples = lambda rng: [
    ((rng.normal(size=(2, 3, 1)), rng.normal(size=(2, 3)), rng.normal(size=(2, 3, 3))), {}),
    ((rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 3, 3))), {}),
]


_def(["jnp.linalg.solve"], _solve)


def _norm(c):
    x = c.arg("x")
    ok, axis = c.static("axis")
    okord, ord_ = c.static("ord")
    if not ok or not okord:
        return None
    if axis is None and ord_ is None:
        flat = c.let(
            (x.id if _is_name(x) else "x") + "_flat",
            N.call("jnp.reshape", [x, gast.Tuple(elts=[c.size, N.const(-1)], ctx=gast.Load())]),
        )
        return c.rebuild(x=flat, axis=N.const(1))
    return c.rebuild(axis=c.shift_axis("axis", x))


_def(["jnp.linalg.norm"], _norm)


# -- the batching helpers themselves (nested vmap) ---------------------------------------
def _helper_materialized(*names):
    def rule(c):
        return _materialized(c, *names)

    return rule


_def(["ad.select"], _helper_materialized("take", "a", "b"))
# (nested vmap: the inner vmap's check ran on the values it could see; not repeated)
_def(["ad.check_branch_values"], lambda c: (N.const(None), False))
_def(["ad.check_cond_types"], lambda c: (N.const(None), False))
# the dtype check reads the whole batch at once
_def(["ad.require_constant"], lambda c: (c.rebuild(), False))
_def(["ad.branch_input"], _helper_materialized("take", "x"))
_def(["ad.rhs_column"], _helper_materialized("b", "a"))
_def(["ad.rhs_uncolumn"], _helper_materialized("x", "b", "a"))


def _batch_broadcast_rule(c):
    if c.batched("size"):
        return None
    ok, axis = c.static("axis")
    if not ok:
        return None
    return c.rebuild(axis=N.const((axis or 0) + 1))


_def(["ad.batch_broadcast", "ad.batch_unbroadcast"], _batch_broadcast_rule)


def _lift_rule(c):
    if c.batched("rank"):
        return None
    ok, nb = c.static("nb")
    if not ok:
        return None
    return c.rebuild(nb=N.const((1 if nb is None else nb) + 1))


_def(["ad.lift"], _lift_rule)


def _static_creation(c):
    """Creation from shapes (``zeros(shape)``): a shape that differs between
    examples cannot be vectorized; the pass falls back to a loop (whose stack
    then fails unless every example has the same shape, as in JAX)."""
    return None


_def(
    ["jnp.zeros", "jnp.ones", "jnp.empty", "jnp.arange", "jnp.eye", "jnp.identity"],
    _static_creation,
)


def _bseq_index_adjoint(ct, x, idx):
    """The cotangent of the list/tuple ``x`` (batched items) from that of
    ``x[idx]`` with a per-example integer ``idx``: item ``j`` gets ``ct`` where
    ``idx == j`` (negative indices count from the end), zeros elsewhere."""
    if isinstance(x, dict) and isinstance(idx, (str, int)):
        return {idx: ct}  # a key popped from a batched tape: the same in every row
    if not isinstance(x, (list, tuple)):
        raise TypeError(f"vmap: a per-example index into a {type(x).__name__} is not supported")
    n = len(x)
    ct = np.asarray(ct)
    where = np.mod(np.asarray(idx), n)
    items = []
    for j in range(n):
        mask = where == j
        # an item no example picks gets a hole: the items may differ in shape
        # (multi_dot's matrices; an index popped from a batched tape is batched
        # though the same in every row), so zeros shaped like ``ct`` would be wrong
        items.append(
            np.where(_aligned(mask, ct), ct, np.zeros((), ct.dtype)) if mask.any() else None
        )
    return type(x)(*items) if hasattr(x, "_fields") else type(x)(items)


def _bseq_pick(g, idx):
    """``g[idx[b]][b]`` per example ``b``: the item a per-example index picks from
    a list of batched cotangents (the transpose of :func:`_bseq_index_adjoint`)."""
    where = np.mod(np.asarray(idx), len(g))
    out = None
    for j in np.unique(where):  # only the picked items (others may be holes or differ in shape)
        if g[j] is None:
            continue
        v = np.asarray(g[j])
        out = np.zeros_like(v) if out is None else out
        out = np.where(_aligned(where == j, v), v, out)
    return out


bseq_index_adjoint = _reg("ad.bseq_index_adjoint", _bseq_index_adjoint)
bseq_pick = _reg("ad.bseq_pick", _bseq_pick)


def _bsia_vjp(h, ans, ct, x, idx):
    return bseq_pick(h, idx)


def _bsia_jvp(t, ans, ct, x, idx):
    return bseq_index_adjoint(t, x, idx)


def _bpick_vjp(h, ans, g, idx):
    return bseq_index_adjoint(h, g, idx)


def _bpick_jvp(t, ans, g, idx):
    return bseq_pick(t, idx)


bseq_index_adjoint.def_vjp(ct=_bsia_vjp)
bseq_index_adjoint.def_jvp(ct=_bsia_jvp)
bseq_pick.def_vjp(g=_bpick_vjp)
bseq_pick.def_jvp(g=_bpick_jvp)
bseq_index_adjoint.samples = lambda rng: [
    ((rng.normal(size=(4, 2)), [rng.normal(size=(4, 2))] * 3, np.array([0, 2, 1, -1])), {}),
]
bseq_pick.samples = lambda rng: [
    (([rng.normal(size=(4, 2)) for _ in range(3)], np.array([0, 2, 1, -1])), {}),
]


def _tree_row(x, i):
    """Example ``i`` of batched container ``x`` (every leaf indexed)."""
    if isinstance(x, dict):
        return {k: _tree_row(v, i) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        vals = [_tree_row(v, i) for v in x]
        return type(x)(*vals) if hasattr(x, "_fields") else type(x)(vals)
    if x is None or isinstance(x, str):
        return x  # a dict key popped from a batched tape is the same in every row
    if isinstance(x, slice) or x is Ellipsis:
        return x  # a part of an index tuple (a per-example loop over ad.gather_index)
    if _class_kind(x) is not None:
        return class_map(lambda v: _tree_row(v, i), x)
    return x[i]


tree_row = _reg("ad.tree_row", _tree_row).facts(same_structure=("x",))
tree_row.samples = lambda rng: [((rng.normal(size=(4, 3)), 2), {})]


def _tree_row_vjp(g, ans, x, i):
    return tree_slice_adjoint(g, x, i)


def _tree_row_jvp(t, ans, x, i):
    return tree_row(t, i)


# (per-example loops of batched code differentiated again: jacfwd(jacrev(f)) where
# f vmaps something with no batching rule)
tree_row.def_vjp(_tree_row_vjp)
tree_row.def_jvp(_tree_row_jvp)


def _array_rule(pname):
    """``jnp.array(obj)`` / ``jnp.asarray(obj)`` of a batched operand: a (nested)
    list of batched arrays puts the batch axis after the list axes, moved back to
    the front; the list depth is read at run time (0 for an array), so a list
    the analysis did not know as one (a branch- or loop-dependent structure)
    gets the right layout too."""

    def rule(c):
        obj = c.arg(pname)
        if not (c.is_container(obj) or _is_name(obj)):
            return c.rebuild()
        arr = c.let("stacked", c.rebuild())
        return N.call("jnp.moveaxis", [arr, N.call("ad.list_depth", [obj]), N.const(0)])

    return rule


def _list_depth(x):
    """How many list/tuple levels wrap the arrays of ``x``."""
    d = 0
    while isinstance(x, (list, tuple)) and len(x):
        x = x[0]
        d += 1
    return d


_reg("ad.list_depth", _list_depth, differentiable=False)
_def(["jnp.array"], _array_rule("object"))
_def(["jnp.asarray"], _array_rule("a"))


# -- diag / hstack / vstack / tile / kron / linspace / full --------------------------------
def _static_nb(c):
    ok, nb = c.static("nb")
    return (ok, 1 if nb is None else nb)


def _bdiag(v, k=0, nb=1):
    """Per example ``diag(v, k)`` for ``v`` with ``nb`` leading batch axes: a 1-D
    example becomes a matrix with it on diagonal ``k``, a 2-D example gives its
    diagonal ``k``."""
    v = np.asarray(v)
    k = int(k)
    if v.ndim - nb == 1:
        n = v.shape[-1]
        m = n + abs(k)
        out = np.zeros(v.shape[:-1] + (m, m), v.dtype)
        i = np.arange(n)
        rows, cols = (i, i + k) if k >= 0 else (i - k, i)
        out[..., rows, cols] = v
        return out
    if v.ndim - nb != 2:
        raise ValueError("diag: input must be 1-D or 2-D")
    return np.diagonal(v, k, nb, nb + 1).copy()


def _bdiag_adjoint(g, v, k=0, nb=1):
    """Adjoint of :func:`_bdiag` in ``v``: for 1-D examples the diagonal ``k`` of
    ``g``, for 2-D examples zeros like ``v`` with ``g`` on diagonal ``k``."""
    g = np.asarray(g)
    k = int(k)
    if np.ndim(v) - nb == 1:
        return np.diagonal(g, k, -2, -1).copy()
    out = np.zeros(np.shape(v), g.dtype)
    n = g.shape[-1]
    i = np.arange(n)
    rows, cols = (i, i + k) if k >= 0 else (i - k, i)
    out[..., rows, cols] = g
    return out


bdiag = _reg("ad.bdiag", _bdiag)
bdiag_adjoint = _reg("ad.bdiag_adjoint", _bdiag_adjoint)


def _bdiag_vjp(g, ans, v, k=0, nb=1):
    return bdiag_adjoint(g, v, k, nb)


def _bdiag_jvp(t, ans, v, k=0, nb=1):
    return bdiag(t, k, nb)


def _bdiag_adjoint_vjp(h, ans, g, v, k=0, nb=1):
    return bdiag(h, k, nb)


def _bdiag_adjoint_jvp(t, ans, g, v, k=0, nb=1):
    return bdiag_adjoint(t, v, k, nb)


bdiag.def_vjp(_bdiag_vjp)
bdiag.def_jvp(_bdiag_jvp)
bdiag_adjoint.def_vjp(g=_bdiag_adjoint_vjp)
bdiag_adjoint.def_jvp(g=_bdiag_adjoint_jvp)
bdiag.samples = lambda rng: [
    ((rng.normal(size=(2, 3)), 1), {}),
    ((rng.normal(size=(2, 3, 4)), -1), {}),
]
bdiag_adjoint.samples = lambda rng: []


def _diag_rule(c):
    if c.batched("k"):
        return None
    return N.call("ad.bdiag", [c.arg("v"), c.arg("k") or N.const(0), N.const(1)])


def _bdiag_rule(c):
    ok, nb = _static_nb(c)
    if not ok or c.batched("k"):
        return None
    return c.rebuild(v=c.materialize(c.arg("v")), nb=N.const(nb + 1))


def _bdiag_adjoint_rule(c):
    ok, nb = _static_nb(c)
    if not ok or c.batched("k"):
        return None
    return c.rebuild(g=c.materialize(c.arg("g")), v=c.materialize(c.arg("v")), nb=N.const(nb + 1))


_def(["jnp.diag"], _diag_rule)
_def(["ad.bdiag"], _bdiag_rule)
_def(["ad.bdiag_adjoint"], _bdiag_adjoint_rule)


def _join_layout(arrays, kind, nb):
    """(per-item shapes after promotion, concatenation axis) of a batched
    ``hstack`` / ``vstack`` / ``concatenate(axis=None)`` (``kind="flat"``) of
    ``arrays`` (each with ``nb`` leading batch axes)."""
    if kind == "flat":
        return [
            tuple(np.shape(a))[:nb] + (int(np.prod(np.shape(a)[nb:], dtype=int)),) for a in arrays
        ], nb
    rank = 1 if kind == "hstack" else 2
    shapes = []
    for a in arrays:
        s = tuple(np.shape(a))
        extra = rank - (len(s) - nb)
        if extra > 0:
            s = s[:nb] + (1,) * extra + s[nb:]
        shapes.append(s)
    if kind == "hstack" and len(shapes[0]) - nb > 1:
        return shapes, nb + 1
    return shapes, nb


def _bjoin(arrays, kind="hstack", nb=1, like=None):
    """Per example ``hstack(arrays)`` / ``vstack(arrays)`` /
    ``concatenate(arrays, axis=None)`` (``kind``: ``"hstack"``, ``"vstack"``,
    ``"flat"``) for items with ``nb`` leading batch axes; ``None`` items (with
    ``like``) are zeros."""
    if like is not None:
        arrays = [
            np.zeros(np.shape(b), np.result_type(b)) if a is None else a
            for a, b in zip(arrays, like)
        ]
    shapes, axis = _join_layout(arrays, kind, nb)
    return np.concatenate([np.reshape(a, s) for a, s in zip(arrays, shapes)], axis=axis)


def _bsplit(g, arrays, kind="hstack", nb=1):
    """Adjoint of :func:`_bjoin`: ``g`` cut into pieces shaped like ``arrays``."""
    g = np.asarray(g)
    shapes, axis = _join_layout(arrays, kind, nb)
    cuts = np.cumsum([s[axis] for s in shapes])[:-1]
    pieces = np.split(g, cuts, axis=axis)
    return [np.reshape(p, np.shape(a)) for p, a in zip(pieces, arrays)]


bjoin = _reg("ad.bjoin", _bjoin)
bsplit = _reg("ad.bsplit", _bsplit)


def _bjoin_vjp(g, ans, arrays, kind="hstack", nb=1, like=None):
    return bsplit(g, arrays if like is None else like, kind, nb)


def _bjoin_jvp(t, ans, arrays, kind="hstack", nb=1, like=None):
    return bjoin(t, kind, nb, arrays if like is None else like)


def _bsplit_vjp(h, ans, g, arrays, kind="hstack", nb=1):
    return bjoin(h, kind, nb, ans)


def _bsplit_jvp(t, ans, g, arrays, kind="hstack", nb=1):
    return bsplit(t, arrays, kind, nb)


bjoin.def_vjp(_bjoin_vjp)
bjoin.def_jvp(_bjoin_jvp)
bsplit.def_vjp(g=_bsplit_vjp)
bsplit.def_jvp(g=_bsplit_jvp)
bjoin.samples = lambda rng: [
    (([rng.normal(size=(2,)), rng.normal(size=(2, 3))], "hstack"), {}),
    (([rng.normal(size=(2, 3)), rng.normal(size=(2, 2, 3))], "vstack"), {}),
]
bsplit.samples = lambda rng: []


def _join_rule(kind):
    def rule(c):
        ok, dtype = c.static("dtype")
        tup = c.arg("tup")
        if not ok or dtype is not None or not c.is_container(tup):
            return None
        return N.call("ad.bjoin", [c.materialize(tup), N.const(kind), N.const(1)])

    return rule


def _bjoin_rule(c):
    ok, nb = _static_nb(c)
    if not ok or c.batched("kind"):
        return None
    return c.rebuild(
        arrays=c.materialize(c.arg("arrays")),
        like=c.materialize(c.arg("like")),
        nb=N.const(nb + 1),
    )


def _bsplit_rule(c):
    ok, nb = _static_nb(c)
    if not ok or c.batched("kind"):
        return None
    return c.rebuild(
        g=c.materialize(c.arg("g")), arrays=c.materialize(c.arg("arrays")), nb=N.const(nb + 1)
    )


_def(["jnp.hstack"], _join_rule("hstack"))
_def(["jnp.vstack"], _join_rule("vstack"))
_def(["ad.bjoin"], _bjoin_rule)
_def(["ad.bsplit"], _bsplit_rule)


def _batch_reps(reps, ndim):
    """``reps`` of a per-example ``tile`` for the batched operand of rank ``ndim``
    (already lifted to per-example rank ``>= len(reps)``): padded with ones."""
    reps = _as_shape(reps)
    return (1,) * (ndim - len(reps)) + tuple(int(r) for r in reps)


_reg("ad.batch_reps", _batch_reps, differentiable=False)


def _tile_rule(c):
    if c.batched("reps"):
        return None
    a = c.arg("A")
    reps = c.arg("reps")
    lifted = c.let(
        (a.id if _is_name(a) else "x") + "_al",
        N.call("ad.lift", [a, N.call("len", [N.call("ad.as_shape", [N.clone(reps)])])]),
    )
    return c.rebuild(A=lifted, reps=N.call("ad.batch_reps", [reps, c.ndim(lifted)]))


_def(["jnp.tile"], _tile_rule)


def _bkron_shape(a, b, ab, bb, which):
    """Static shapes of the batched ``kron(a, b)`` computed as
    ``reshape(reshape(a, A) * reshape(b, B), OUT)``: ``which`` 0 -> ``A``, 1 ->
    ``B``, 2 -> ``OUT`` (``ab`` / ``bb``: which operand has a leading batch axis)."""
    sa = tuple(np.shape(a))
    sb = tuple(np.shape(b))
    size = sa[0] if ab else sb[0]
    sa = sa[1:] if ab else sa
    sb = sb[1:] if bb else sb
    nd = max(len(sa), len(sb))
    pa = (1,) * (nd - len(sa)) + sa
    pb = (1,) * (nd - len(sb)) + sb
    if which == 0:
        return (size if ab else 1,) + tuple(v for x in pa for v in (x, 1))
    if which == 1:
        return (size if bb else 1,) + tuple(v for x in pb for v in (1, x))
    return (size,) + tuple(x * y for x, y in zip(pa, pb))


_reg("ad.bkron_shape", _bkron_shape, differentiable=False)


def _bkron_shape_rule(c):
    """Nested vmap: the shapes of one outer example (the same for all)."""
    if any(c.batched(n) for n in ("ab", "bb", "which")):
        return None
    return c.rebuild(a=_example(c, c.arg("a")), b=_example(c, c.arg("b"))), False


_def(["ad.bkron_shape"], _bkron_shape_rule)


def _kron_rule(c):
    a, b = c.arg("a"), c.arg("b")
    flags = [N.const(c.batched("a")), N.const(c.batched("b"))]

    def shape(which):
        return N.call("ad.bkron_shape", [N.clone(a), N.clone(b), *flags, N.const(which)])

    ra = c.let("kron_a", N.call("jnp.reshape", [N.clone(a), shape(0)]))
    rb = c.let("kron_b", N.call("jnp.reshape", [N.clone(b), shape(1)]))
    prod = c.let("kron_ab", gast.BinOp(left=ra, op=gast.Mult(), right=rb))
    return N.call("jnp.reshape", [prod, shape(2)])


_def(["jnp.kron"], _kron_rule)


def _full_rule(c):
    if c.batched("shape"):
        return None
    fill = c.arg("fill_value")
    shape = c.arg("shape")
    lifted = c.let(
        (fill.id if _is_name(fill) else "fill") + "_al",
        N.call("ad.lift", [fill, N.call("len", [N.call("ad.as_shape", [N.clone(shape)])])]),
    )
    return c.rebuild(shape=N.call("ad.batch_shape", [c.size, shape]), fill_value=lifted)


_def(["jnp.full"], _full_rule)


def _linspace_dtype(dtype):
    """The result dtype of ``linspace`` for its ``dtype`` argument."""
    return _dtype_or(dtype, _dt.default_float())


_reg("ad.linspace_dtype", _linspace_dtype, differentiable=False)


def _linspace_frac_shape(num, ndim, axis):
    """Shape putting the ``num`` fractions of ``linspace`` along ``axis`` of a
    batched result of rank ``ndim``."""
    shape = [1] * ndim
    shape[axis % ndim] = int(num)
    return tuple(shape)


_reg("ad.linspace_frac_shape", _linspace_frac_shape, differentiable=False)


def _linspace_rule(c):
    """Per example ``start * (1 - frac) + stop * frac`` with the fractions of
    ``linspace(0, 1, num, endpoint)`` along the (shifted) ``axis``."""
    okr, retstep = c.static("retstep")
    oka, axis = c.static("axis")
    if not okr or retstep or not oka or not isinstance(axis, int):
        return None
    if c.batched("num") or c.batched("endpoint") or c.batched("dtype"):
        return None
    start = c.materialize(c.arg("start"))
    stop = c.materialize(c.arg("stop"))
    start = c.let("lin_start", start)
    stop = c.let("lin_stop", stop)
    rank_of = lambda x: gast.BinOp(  # noqa: E731
        left=N.call("jnp.ndim", [N.clone(x)]), op=gast.Sub(), right=N.const(1)
    )
    s_al = c.let("lin_start_al", N.call("ad.lift", [N.clone(start), rank_of(stop)]))
    e_al = c.let("lin_stop_al", N.call("ad.lift", [N.clone(stop), rank_of(start)]))
    bax = N.const(axis + 1 if axis >= 0 else axis)
    s_e = c.let("lin_start_e", N.call("jnp.expand_dims", [N.clone(s_al), N.clone(bax)]))
    dtype = c.let("lin_dtype", N.call("ad.linspace_dtype", [c.arg("dtype") or N.const(None)]))
    num = c.arg("num") or N.const(50)
    endpoint = c.arg("endpoint") or N.const(True)
    frac = c.let("lin_frac", N.call("ad.linspace_frac", [num, endpoint, N.clone(dtype)]))
    frac = c.let(
        "lin_frac_r",
        N.call(
            "jnp.reshape",
            [
                frac,
                N.call(
                    "ad.linspace_frac_shape",
                    [N.clone(num), N.call("jnp.ndim", [N.clone(s_e)]), N.clone(bax)],
                ),
            ],
        ),
    )
    # JAX's start * (1 - frac) + stop * frac: exactly stop at the endpoint (start
    # + 1.0 * (stop - start) can miss it by an ulp; histogram compares with it)
    e_e = c.let("lin_stop_e", N.call("jnp.expand_dims", [N.clone(e_al), N.clone(bax)]))
    one_minus = gast.BinOp(left=N.const(1), op=gast.Sub(), right=N.clone(frac))
    out = c.let(
        "lin_out",
        gast.BinOp(
            left=gast.BinOp(left=s_e, op=gast.Mult(), right=one_minus),
            op=gast.Add(),
            right=gast.BinOp(left=frac, op=gast.Mult(), right=e_e),
        ),
    )
    # JAX floors before casting to an integer dtype
    is_int = c.let("lin_is_int", N.call("ad.linspace_is_int", [N.clone(dtype)]))
    floor = c.let("lin_floor", N.call("jnp.floor", [N.clone(out)]))
    out = c.let("lin_out_c", N.call("jnp.where", [is_int, floor, N.clone(out)]))
    return N.call("ad.astype", [out, dtype])


_def(["jnp.linspace"], _linspace_rule)


# -- lax.scan's pytree slicing and stacking under vmap -----------------------------------
def _tree_map(fn, *trees):
    from ..tree_util import tree_map

    return tree_map(fn, *trees)


def _btree_slice(xs, i):
    """Per example ``xs[i]`` (every leaf has the batch axis first)."""
    return _tree_map(lambda a: np.asarray(a)[:, i], xs)


def _btree_slice_adjoint(ct, xs, i):
    """Per example the cotangent of ``xs`` from that of ``xs[i]``."""

    def one(c, a):
        a = np.asarray(a)
        c = np.asarray(c)
        out = np.zeros(a.shape, np.result_type(a, c))
        out[:, i] = c
        return out

    from .control import _fill  # (the holes of a sparse cotangent: zeros)

    return _tree_map(one, _fill(ct, _btree_slice(xs, i)), xs)


def _btree_stack(items):
    """Per example ``stack(items)``: the new axis goes after the batch axis."""
    return _tree_map(lambda *leaves: np.stack([np.asarray(v) for v in leaves], axis=1), *items)


def _btree_unstack(ct, items):
    """Per example the list of cotangents of the items of ``tree_stack(items)``."""
    n = len(items)
    return [_tree_map(lambda a, k=k: np.asarray(a)[:, k], ct) for k in range(n)]


for _name, _fn in (
    ("ad.btree_slice", _btree_slice),
    ("ad.btree_slice_adjoint", _btree_slice_adjoint),
    ("ad.btree_stack", _btree_stack),
    ("ad.btree_unstack", _btree_unstack),
):
    _p = _reg(_name, _fn)
    _p.samples = lambda rng: []

# the four are two transpose pairs, as ad.tree_slice/tree_stack and their adjoints
btree_slice = REGISTRY["ad.btree_slice"]
btree_slice_adjoint = REGISTRY["ad.btree_slice_adjoint"]
btree_stack = REGISTRY["ad.btree_stack"]
btree_unstack = REGISTRY["ad.btree_unstack"]


def _btree_slice_vjp(g, ans, xs, i):
    return btree_slice_adjoint(g, xs, i)


def _btree_slice_jvp(t, ans, xs, i):
    return btree_slice(t, i)


def _btsa_vjp(g, ans, ct, xs, i):
    return btree_slice(g, i)


def _btsa_jvp(t, ans, ct, xs, i):
    return btree_slice_adjoint(t, xs, i)


def _btree_stack_vjp(g, ans, items):
    return btree_unstack(g, items)


def _btree_stack_jvp(t, ans, items):
    return btree_stack(t)


def _btree_unstack_vjp(g, ans, ct, items):
    return btree_stack(g)


def _btree_unstack_jvp(t, ans, ct, items):
    return btree_unstack(t, items)


btree_slice.def_vjp(_btree_slice_vjp)
btree_slice.def_jvp(_btree_slice_jvp)
btree_slice_adjoint.def_vjp(_btsa_vjp)
btree_slice_adjoint.def_jvp(_btsa_jvp)
btree_stack.def_vjp(_btree_stack_vjp)
btree_stack.def_jvp(_btree_stack_jvp)
btree_unstack.def_vjp(_btree_unstack_vjp)
btree_unstack.def_jvp(_btree_unstack_jvp)
REGISTRY["ad.btree_unstack"].returns_tree = True
if "ad.tree_unstack" in REGISTRY:
    REGISTRY["ad.tree_unstack"].returns_tree = True


def _tree_slice_rule(c):
    if not c.batched("xs"):
        return c.rebuild(), False
    if c.batched("i"):
        return None
    return N.call("ad.btree_slice", [c.arg("xs"), c.arg("i")])


def _tree_slice_adjoint_rule(c):
    if c.batched("i"):
        return None
    ct = c.materialize(c.arg("ct"))
    xs = c.materialize(c.arg("xs"))
    return N.call("ad.btree_slice_adjoint", [ct, xs, c.arg("i")])


def _tree_stack_rule(c):
    items = c.arg("items")
    if not c.batched("items"):
        return c.rebuild(), False
    return N.call("ad.btree_stack", [c.materialize(items)])


def _tree_unstack_rule(c):
    if not c.batched("ct"):
        return c.rebuild(), False
    return N.call("ad.btree_unstack", [c.arg("ct"), c.arg("items")])


def _tree_leaves_rule(c):
    # a batched container's leaves all carry the batch axis: its leaves are the
    # examples' leaves stacked (no loop over the examples)
    ok, is_leaf = c.static("is_leaf")
    if not ok or is_leaf is not None:
        return None  # (a predicate sees one example's subtrees: per example)
    return c.rebuild(), True


def _tree_unflatten_like_rule(c):
    # only the structure of `tree` is read: the same in every example
    if not c.batched("leaves"):
        return None
    return c.rebuild(), True


_def(["ad.tree_leaves"], _tree_leaves_rule)
_def(["ad.tree_unflatten_like"], _tree_unflatten_like_rule)
_def(["ad.tree_slice"], _tree_slice_rule)
_def(["ad.tree_slice_adjoint"], _tree_slice_adjoint_rule)
_def(["ad.tree_stack"], _tree_stack_rule)
_def(["ad.tree_unstack"], _tree_unstack_rule)


def _bscan_length(xs, length=None):
    """``lax.scan``'s trip count when ``xs`` carries a batch axis first."""
    from .control import _scan_length

    per_example = _tree_map(lambda a: np.asarray(a)[0], xs)
    return _scan_length(per_example, length)


_bsl = _reg("ad.bscan_length", _bscan_length, differentiable=False)


def _scan_length_rule(c):
    if not c.batched("xs"):
        return c.rebuild(), False
    return N.call("ad.bscan_length", [c.arg("xs"), c.arg("length")]), False


_def(["ad.scan_length"], _scan_length_rule)


def _keys_rule(c):
    """``ad.keys(d)``: a batched dict has the keys of one example."""
    return N.call("ad.keys", [c.arg("d")]), False


_def(["ad.keys"], _keys_rule)


def _seq_len_rule(c):
    xs = c.arg("xs")
    if c.batched("xs") and not c.is_container(xs):
        return N.call("ad.example_len", [xs]), False  # per example: the second axis
    return N.call("ad.seq_len", [xs]), False


_def(["ad.seq_len"], _seq_len_rule)
_def(["ad.cast_cotangent", "ad.cast_tangent", "ad.keep_if_inexact"], _same)


def _check_bwd(c):
    # per-example shapes compared on the whole batch: both sides batched
    prims = c.arg("primals")
    if isinstance(prims, gast.Tuple):
        prims = gast.Tuple(elts=[c.materialize(e) for e in prims.elts], ctx=gast.Load())
    elif prims is not None:
        prims = c.materialize(prims)
    return c.rebuild(out=c.materialize(c.arg("out")), primals=prims)


_def(["ad.check_bwd"], _check_bwd)


# -- diff / searchsorted / interp / cross / quantile / qr / svd / pinv / matrix_power -----
def _static_operand(c, name):
    """Whether operand ``name`` is absent or a literal (``prepend=0.0``)."""
    v = c.bound.get(name)
    return v is None or isinstance(v, gast.Constant)


def _diff_rule(xname):
    def rule(c):
        # array prepend / append operands: a loop over the examples (a scalar one
        # broadcasts per example, an array one would need batching along with a)
        if not (_static_operand(c, "prepend") and _static_operand(c, "append")):
            return None
        x = c.materialize(c.arg(xname))
        changes = {xname: x, "axis": c.shift_axis("axis", x)}
        if "a" in c.bound and xname != "a":
            changes["a"] = c.materialize(c.arg("a"))
        return c.rebuild(**changes)

    return rule


_def(["jnp.diff"], _diff_rule("a"))
_def(["ad.diff_adjoint"], _diff_rule("g"))
_def(["ad.diff_embed"], _diff_rule("h"))


def _bsearchsorted(a, v, side="left"):
    """Row-wise ``searchsorted``: ``a`` of shape ``(*batch, n)``, ``v`` of shape
    ``(*batch, *rest)``; int32 (also with x64, as JAX, unless ``n`` needs
    int64) of ``v``'s shape."""
    a = np.asarray(a)
    v = np.asarray(v)
    k = a.ndim - 1
    dt = np.int32 if a.shape[-1] <= np.iinfo(np.int32).max else _dt.default_int()
    out = np.empty(v.shape, dtype=dt)
    for r in np.ndindex(*a.shape[:k]):
        out[r] = np.searchsorted(a[r], v[r], side=side)
    return out


bsearchsorted = _reg("ad.bsearchsorted", _bsearchsorted, differentiable=False)


def _searchsorted_rule(c):
    if not c.batched("a"):
        return c.rebuild()
    ok, sorter = c.static("sorter")
    if not ok or sorter is not None:
        return None
    kws = {"side": c.arg("side")} if "side" in c.bound else None
    return c.call("ad.bsearchsorted", [c.arg("a"), c.materialize(c.arg("v"))], kws)


_def(["jnp.searchsorted"], _searchsorted_rule)
_def(["ad.bsearchsorted"], _helper_materialized("a", "v"))


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


_def(["jnp.interp"], _interp_rule)
_def(["ad.interp_rows"], _interp_rows_call)
_def(["ad.interp_index", "ad.interp_region"], _helper_materialized("x", "xp"))
_def(["ad.interp_take"], _helper_materialized("v", "i"))
_def(["ad.interp_put"], _helper_materialized("g", "v", "i"))


def _unbatched_result(c):
    """The result does not depend on the batched operands' values (a static
    flag, or a shape check): the same for every example."""
    return c.rebuild(), False


_def(["ad.interp_unset", "ad.qr_check", "ad.svd_ad_full"], _unbatched_result)


def _cross_rule(c):
    for p in ("axisa", "axisb", "axisc", "axis"):
        ok, v = c.static(p)
        if not ok or (v is not None and v >= 0):
            return None  # non-negative vector axes: a loop over the examples
    changes = {}
    for p, other in (("a", "b"), ("b", "a")):
        if c.batched(p):
            changes[p] = c.lift(c.arg(p), c.arg(other))
    return c.rebuild(**changes)


_def(["jnp.cross"], _cross_rule)


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


def _pinv_rule(c):
    if c.batched("rtol") or c.batched("rcond"):
        return None
    return c.rebuild()


_def(["jnp.linalg.pinv"], _pinv_rule)
_def(
    [
        "jnp.linalg.qr",
        "jnp.linalg.svd",
        "jnp.linalg.matrix_power",
        "ad.upper_right",
        "ad.diag_blocks_sum",
    ],
    _same,
)
_def(["ad.block_upper"], _helper_materialized("a", "t"))
_def(["ad.svd_embed"], _helper_materialized("g", "usv"))
_def(["ad.svd_select"], _helper_materialized("h", "usv"))


# -- nan reductions / logsumexp(b=) / index creation / meshgrid / solve_triangular -------
_def(
    ["jnp.nansum", "jnp.nanmean", "jnp.nanmax", "jnp.nanmin", "jnp.nanvar", "jnp.nanstd"],
    _axis_rule("a"),
)
_def(["ad.nan_deviation"], _axis_rule("a"))
_def(["ad.one_if_none", "ad.tri_mask", "ad.real_only"], _same)
_def(["jnp.triu_indices", "jnp.tril_indices", "jnp.diag_indices"], _static_creation)
# static helpers whose operands only stand for a rank, a shape or a dtype: the
# same result for every example
_def(
    ["ad.mesh_axis_shape", "ad.inexact_dtype", "ad.average_weight_shape", "ad.convolve_table"],
    _unbatched_result,
)


def _meshgrid_rule(c):
    """Per-example 1-D inputs: a loop over the examples (each output is a
    broadcast of one input; the stacked loop result is the batched grid)."""
    return None


_def(["jnp.meshgrid", "ad.mesh_tangent"], _meshgrid_rule)


def _solve_triangular_rule(c):
    # a vector right-hand side is told apart by ndim(a) == ndim(b) + 1: batch both
    # so that the relation holds for the batched operands too
    return c.rebuild(a=c.materialize(c.arg("a")), b=c.materialize(c.arg("b")))


_def(["jnp.linalg.solve_triangular"], _solve_triangular_rule)
_def(["ad.tri_rhs", "ad.tri_unrhs"], _helper_materialized("y", "a", "b"))


def _check_cotangent(c):
    """Per-example check: the mapped axes of the cotangent and of the output are
    skipped (counted, so nested vmaps skip one more each)."""
    _, cb = c.static("ct_batch")
    _, ob = c.static("out_batch")
    expr = c.rebuild(
        ct_batch=N.const((cb or 0) + int(c.batched("ct"))),
        out_batch=N.const((ob or 0) + int(c.batched("out"))),
    )
    return expr if c.batched("ct") else (expr, False)


_def(["ad.check_cotangent"], _check_cotangent)


def _construct_rule(c):
    """``ad.construct(cls, *args)`` (and its derivative helpers) under vmap: the
    arguments made batched, the same call (the instance's fields are batched);
    the helpers find the fields by identity of memory, which broadcasting keeps."""
    changes = {}
    for pname, v in c.bound.items():
        if pname == "cls":
            continue
        if isinstance(v, list):
            changes[pname] = [a if isinstance(a, gast.Constant) else c.materialize(a) for a in v]
        elif pname in ("g", "t", "ans"):
            changes[pname] = c.materialize(v)
    return c.rebuild(**changes)


_def(["ad.construct", "ad.construct_ct", "ad.construct_tangent"], _construct_rule)


def _project_real_rule(c):
    """``ad.project_real(g, x)`` looks at dtypes only: the same call on batched
    operands (it ran as a per-example loop, 15x slower on W5)."""
    expr = c.rebuild()
    return expr if c.batched("g") else (expr, False)


_def(["ad.project_real"], _project_real_rule)


# -- the adjoints of jnp.dot under vmap -------------------------------------------------
def _bdot_left(g, a, b, ab, bb):
    """Per example the cotangent of ``a`` in ``dot(a, b)`` (summed over the
    examples when ``a`` is not batched); ``g`` is batched. Ranks 1 and 2 are
    matmul's (vectorized); others (scalars, higher ranks) run per example."""
    from .linalg import _dot_left

    ra = np.ndim(a) - (1 if ab else 0)
    rb = np.ndim(b) - (1 if bb else 0)
    if 1 <= ra <= 2 and 1 <= rb <= 2:
        return _bmatmul_left(g, a, b, ab, bb)
    r = _per_example(_dot_left, (g, a, b), (True, ab, bb), np.shape(g)[0])
    return r if ab else r.sum(axis=0)


def _bdot_right(g, a, b, ab, bb):
    """Per example the cotangent of ``b`` in ``dot(a, b)`` (summed over the
    examples when ``b`` is not batched); ``g`` is batched."""
    from .linalg import _dot_right

    ra = np.ndim(a) - (1 if ab else 0)
    rb = np.ndim(b) - (1 if bb else 0)
    if 1 <= ra <= 2 and 1 <= rb <= 2:
        return _bmatmul_right(g, a, b, ab, bb)
    r = _per_example(_dot_right, (g, a, b), (True, ab, bb), np.shape(g)[0])
    return r if bb else r.sum(axis=0)


bdot_left = _reg("ad.bdot_left", _bdot_left).facts(array_result=True)
bdot_right = _reg("ad.bdot_right", _bdot_right).facts(array_result=True)


# bilinear in (g, b) / (g, a); transposes through dot itself (bdot, every rank)
def _bdot_left_jvp_g(t, ans, g, a, b, ab, bb):
    return bdot_left(t, a, b, ab, bb)


def _bdot_left_jvp_b(t, ans, g, a, b, ab, bb):
    return bdot_left(g, a, t, ab, bb)


def _bdot_left_vjp_g(h, ans, g, a, b, ab, bb):
    return broadcast_to(bdot(h, b, ab, bb), shape_(g))


def _bdot_left_vjp_b(h, ans, g, a, b, ab, bb):
    return bdot_right(g, h, b, ab, bb)


def _bdot_right_jvp_g(t, ans, g, a, b, ab, bb):
    return bdot_right(t, a, b, ab, bb)


def _bdot_right_jvp_a(t, ans, g, a, b, ab, bb):
    return bdot_right(g, t, b, ab, bb)


def _bdot_right_vjp_g(h, ans, g, a, b, ab, bb):
    return broadcast_to(bdot(a, h, ab, bb), shape_(g))


def _bdot_right_vjp_a(h, ans, g, a, b, ab, bb):
    return bdot_left(g, a, h, ab, bb)


def _bdot_adjoint_samples(rng):
    """(g, a, b, ab, bb) with g shaped like dot(a, b) per example, every rank."""
    out = list(_adjoint_samples(rng))
    for a, b, ab, bb in (
        (rng.normal(size=(4,)), rng.normal(size=(4, 2, 3, 2)), True, True),  # scalar a
        (rng.normal(size=(4, 2, 2, 3)), rng.normal(size=(3, 2)), True, False),  # rank 3
        (rng.normal(size=(2, 3)), rng.normal(size=(4, 2, 3, 2)), False, True),  # rank 3 b
    ):
        g = rng.normal(size=np.shape(_bdot(a, b, ab, bb)))
        out.append(((g, a, b, ab, bb), {}))
    return out


bdot_left.samples = bdot_right.samples = _bdot_adjoint_samples
bdot_left.def_jvp(g=_bdot_left_jvp_g, b=_bdot_left_jvp_b)
bdot_left.def_vjp(g=_bdot_left_vjp_g, b=_bdot_left_vjp_b)
bdot_right.def_jvp(g=_bdot_right_jvp_g, a=_bdot_right_jvp_a)
bdot_right.def_vjp(g=_bdot_right_vjp_g, a=_bdot_right_vjp_a)


def _dot_left_rule(c):
    # the cotangent of `a` per example: `a` made batched (see _matmul_left_rule)
    return N.call(
        "ad.bdot_left",
        [
            c.materialize(c.arg("g")),
            c.materialize(c.arg("a")),
            c.arg("b"),
            N.const(True),
            N.const(c.batched("b")),
        ],
    )


def _dot_right_rule(c):
    return N.call(
        "ad.bdot_right",
        [
            c.materialize(c.arg("g")),
            c.arg("a"),
            c.materialize(c.arg("b")),
            N.const(c.batched("a")),
            N.const(True),
        ],
    )


_def(["ad.dot_left"], _dot_left_rule)
_def(["ad.dot_right"], _dot_right_rule)


def _batch_starts(starts):
    """Start indices of a dynamic slice with the batch axis first (start 0)."""
    if np.ndim(starts):
        return (0,) + tuple(int(s) for s in np.asarray(starts).reshape(-1))
    return (0,) + tuple(starts)


batch_starts = _reg("ad.batch_starts", _batch_starts, differentiable=False)


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


_def(["lax.dynamic_slice"], _dynamic_slice_rule)
_def(["lax.dynamic_update_slice"], _dynamic_update_slice_rule)


# -- nonzero / flatnonzero / argwhere / unique -----------------------------------------------
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


_def(["jnp.nonzero", "jnp.flatnonzero", "jnp.argwhere", "jnp.unique"], _sized_per_example)


# -- collectives over a named axis (psum, pmean, ..., vmap/pmap axis_name) ----------------
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


def _tree_axis_sum(x, size, batched, scale=1.0, axis=0):
    """``psum``/``pmean`` of a pytree over the batch axis, leaf by leaf: the sum
    over axis 0 of a batched leaf (times ``scale``), ``size * scale`` times an
    unbatched one. Holes (``None``) stay holes."""

    def one(a):
        if a is None:
            return None
        a = np.asarray(a)
        if scale != 1.0 and a.dtype.kind in "biu":  # pmean of ints: a float, as jnp.mean
            a = a.astype(_dt.default_float())
        dt = a.dtype if a.dtype.kind != "b" else np.dtype(_dt.default_int())
        s = np.sum(a, axis=axis, dtype=dt) if batched else (a * size).astype(dt, copy=False)
        if scale != 1.0:
            s = (s * np.asarray(scale, dt)).astype(dt, copy=False)
        return s

    if type(x) in (float, int):  # psum(2.0, "i"): a weak Python number stays one
        return x * size if scale == 1.0 else x * size * scale
    if isinstance(x, (np.ndarray, np.generic)):
        return one(x)
    return _tree_map(one, x)


def _tree_axis_sum_ct(g, x, size, batched, scale=1.0, axis=0):
    """The adjoint of :func:`_tree_axis_sum`: each leaf's cotangent broadcast back
    over the batch axis (times ``scale``)."""
    from ..tree_util import tree_map

    def one(ct, a):
        if ct is None:
            return None
        ct = np.asarray(ct) * np.asarray(scale, np.result_type(ct))
        if batched:
            return np.broadcast_to(np.expand_dims(ct, axis), np.shape(a)).copy()
        return ct * size

    return tree_map(one, g, x, is_leaf=lambda v: v is None)


tree_axis_sum = _reg("ad.tree_axis_sum", _tree_axis_sum)
tree_axis_sum_ct = _reg("ad.tree_axis_sum_ct", _tree_axis_sum_ct)


def _tree_axis_sum_vjp(g, ans, x, size, batched, scale=1.0, axis=0):
    return tree_axis_sum_ct(g, x, size, batched, scale, axis)


def _tree_axis_sum_jvp(t, ans, x, size, batched, scale=1.0, axis=0):
    return tree_axis_sum(t, size, batched, scale, axis)


def _tree_axis_sum_ct_vjp(h, ans, g, x, size, batched, scale=1.0, axis=0):
    return tree_axis_sum(h, size, batched, scale, axis)


def _tree_axis_sum_ct_jvp(t, ans, g, x, size, batched, scale=1.0, axis=0):
    return tree_axis_sum_ct(t, x, size, batched, scale, axis)


tree_axis_sum.def_vjp(x=_tree_axis_sum_vjp)
tree_axis_sum.def_jvp(x=_tree_axis_sum_jvp)
tree_axis_sum_ct.def_vjp(g=_tree_axis_sum_ct_vjp)
tree_axis_sum_ct.def_jvp(g=_tree_axis_sum_ct_jvp)
tree_axis_sum.samples = lambda rng: [((rng.normal(size=(3, 2)), 3, True), {"scale": 0.5})]
tree_axis_sum_ct.samples = lambda rng: [
    ((rng.normal(size=(2,)), rng.normal(size=(3, 2)), 3, True), {"scale": 0.5})
]


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


_def(["ad.tree_axis_sum", "ad.tree_axis_sum_ct"], _tree_axis_rule)


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


_def(["lax.psum"], _reduce_rule("jnp.sum", lambda c, x: gast.BinOp(x, gast.Mult(), c.size)))
_def(["lax.pmean"], _reduce_rule("jnp.mean", lambda c, x: x))
_def(["lax.pmax"], _reduce_rule("jnp.max", lambda c, x: x))
_def(["lax.pmin"], _reduce_rule("jnp.min", lambda c, x: x))


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


def _ppermute_rule(c):
    mine, rest = _collective_names(c)
    if rest:
        raise TransformValueError("lax.ppermute takes one axis name")
    x = c.arg("x")
    if not mine:
        return c.rebuild()
    x = x if c.batched("x") else c.materialize(x)
    return N.call("ad.permute_rows", [x, c.arg("perm")])


def _pshuffle_rule(c):
    mine, rest = _collective_names(c)
    if rest:
        raise TransformValueError("lax.pshuffle takes one axis name")
    x = c.arg("x")
    if not mine:
        return c.rebuild()
    x = x if c.batched("x") else c.materialize(x)
    return N.call("ad.permute_rows", [x, N.call("ad.shuffle_pairs", [c.arg("perm")])])


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


_def(["lax.all_gather"], _all_gather_rule)
_def(["lax.axis_index"], _axis_index_rule)
_def(["lax.ppermute"], _ppermute_rule)
_def(["lax.pshuffle"], _pshuffle_rule)
_def(["lax.psum_scatter"], _psum_scatter_rule)
_def(["lax.all_to_all"], _all_to_all_rule)
_def(["ad.shuffle_pairs"], lambda c: (c.rebuild(), False))
_def(["ad.permute_rows"], _permute_rows_rule)
_def(["ad.inverse_perm"], lambda c: (c.rebuild(), False))


def _densify_rule(c):
    # a hole (None) becomes zeros like the batched `like`; an array stays itself
    return c.rebuild(ct=c.materialize(c.arg("ct")), like=c.materialize(c.arg("like")))


_def(["ad.densify"], _densify_rule)


# -- per-example helpers under an outer vmap: the two batch axes folded into one -------
# ad.bmatmul / bmatmul_left / bmatmul_right / bunbroadcast / bbroadcast_like act per
# example of one vmap (flags say which operands carry its leading axis). Batched
# again by an outer vmap (vmap(jacfwd(f)), vmap(jacrev(f)), vmap(vmap(grad(f)))),
# the outer axis and the inner one are folded into one leading axis of size
# outer * inner (operands carrying only one of them broadcast along the other),
# the helper runs once on the folded operands, and its result is unfolded: no
# per-example Python loop.
def _fold_axes(x, lead=0):
    """``x`` with axes ``lead`` and ``lead + 1`` merged into one (a reshape)."""
    x = np.asarray(x)
    s = x.shape
    return x.reshape(s[:lead] + (s[lead] * s[lead + 1],) + s[lead + 2 :])


def _unfold_axes(x, n, lead=0):
    """``x`` with axis ``lead`` split into ``(n, size // n)`` (a reshape)."""
    x = np.asarray(x)
    s = x.shape
    return x.reshape(s[:lead] + (int(n), s[lead] // int(n)) + s[lead + 1 :])


fold_axes = _reg("ad.fold_axes", _fold_axes)
unfold_axes = _reg("ad.unfold_axes", _unfold_axes)


def _fold_axes_vjp(g, ans, x, lead=0):
    return unfold_axes(g, shape_(x)[lead], lead)


def _unfold_axes_vjp(g, ans, x, n, lead=0):
    return fold_axes(g, lead)


def _fold_axes_jvp(t, ans, x, lead=0):
    return fold_axes(t, lead)


def _unfold_axes_jvp(t, ans, x, n, lead=0):
    return unfold_axes(t, n, lead)


fold_axes.def_vjp(x=_fold_axes_vjp)
fold_axes.def_jvp(x=_fold_axes_jvp)
unfold_axes.def_vjp(x=_unfold_axes_vjp)
unfold_axes.def_jvp(x=_unfold_axes_jvp)
fold_axes.samples = lambda rng: [
    ((rng.normal(size=(2, 3, 4)),), {}),
    ((rng.normal(size=(2, 3, 4)), 1), {}),
]
unfold_axes.samples = lambda rng: [
    ((rng.normal(size=(6, 4)), 2), {}),
    ((rng.normal(size=(4, 6)), 3, 1), {}),
]


def _lead_shifted_rule(c):
    # one more leading (batch) axis before the folded ones
    if any(c.batched(p) for p in ("n", "lead") if p in c.bound):
        return None
    ok, lead = c.static("lead")
    if not ok:
        return None
    return c.rebuild(lead=N.const((lead or 0) + 1))


_def(["ad.fold_axes", "ad.unfold_axes"], _lead_shifted_rule)


def _axis_len(x, axis):
    """``x.shape[axis]`` (a static int: the size of an inner vmap's axis)."""
    return int(np.shape(x)[axis])


axis_len = _reg("ad.axis_len", _axis_len, differentiable=False)


def _axis_len_rule(c):
    ok, axis = c.static("axis")
    if not ok or c.batched("axis"):
        return None
    return c.rebuild(axis=N.const(int(axis) + 1)), False  # the same for every example


_def(["ad.axis_len"], _axis_len_rule)


def _folded_operand(c, pname, inner, force, inner_size):
    """Operand ``pname`` over the folded (outer * inner) axis: ``(node, flag)``.
    ``inner``: whether it carries the inner axis (its flag); ``force``: fold it
    even when it carries neither axis (a shape reference whose cotangent must
    stay per example)."""
    x = c.arg(pname)
    outer = c.batched(pname)
    if outer and inner:
        return N.call("ad.fold_axes", [x]), True
    if outer:
        return N.call(
            "ad.fold_axes", [N.call("ad.batch_broadcast", [x, inner_size, N.const(1)])]
        ), True
    if inner:
        return N.call("ad.fold_axes", [N.call("ad.batch_broadcast", [x, c.size, N.const(0)])]), True
    if force:
        both = N.call("ad.batch_broadcast", [N.call("ad.batch_broadcast", [x, inner_size]), c.size])
        return N.call("ad.fold_axes", [both]), True
    return x, False


def _folded_rule(arrays, flags, result_inner, per_example=None, shape_only=()):
    """A batching rule for a per-example helper ``prim(*arrays, *flags)``:
    ``arrays`` its array parameters, ``flags`` the matching inner-batch flag
    parameters (``None``: always batched), ``result_inner(flag values)`` whether
    the result carries the inner axis; ``per_example`` names an array whose
    result is summed over the inner axis when its flag is False (a matmul
    adjoint of an operand shared by the inner examples): folded anyway, and the
    sum taken after unfolding. ``shape_only``: arrays read for their shape
    only (the result is the same for every outer example when only they carry
    the outer axis and no inner axis is involved)."""

    def rule(c):
        vals = {}
        for f in flags:
            if f is None:
                continue
            ok, v = c.static(f)
            if not ok or not isinstance(v, (bool, np.bool_)):
                return None
            vals[f] = bool(v)
        for p in arrays:
            node = c.bound.get(p)
            if node is None or (isinstance(node, gast.Constant) and node.value is None):
                return None  # a hole: the helper's own zeros (rare: the loop)
        inner = {p: (True if f is None else vals[f]) for p, f in zip(arrays, flags)}
        if not result_inner(vals):
            # the result carries no inner axis: the outer axis is the only batch
            # axis (a shape reference carrying the inner one gives its first row)
            changes = {}
            for p, f in zip(arrays, flags):
                if inner[p]:
                    if p not in shape_only:
                        return None
                    ax = N.const(1 if c.batched(p) else 0)
                    changes[p] = N.call("jnp.take", [c.arg(p), N.const(0)], {"axis": ax})
                if f is not None:
                    changes[f] = N.const(c.batched(p))
            data = [p for p in arrays if p not in shape_only]
            return c.rebuild(**changes), any(c.batched(p) for p in data)
        ref = next(p for p in arrays if inner[p])
        ref_axis = 1 if c.batched(ref) else 0
        size_i = c.let("inner_size", N.call("ad.axis_len", [c.arg(ref), N.const(ref_axis)]))
        changes = {}
        summed = per_example is not None and not inner[per_example]
        for p, f in zip(arrays, flags):
            node, flag = _folded_operand(c, p, inner[p], p == per_example, size_i)
            changes[p] = node
            if f is not None:
                changes[f] = N.const(flag)
        out = N.call("ad.unfold_axes", [c.rebuild(**changes), c.size])
        if summed:
            out = N.call("jnp.sum", [out], {"axis": N.const(1)})
        return out

    return rule


_def(["ad.bmatmul"], _folded_rule(("a", "b"), ("ab", "bb"), lambda v: v["ab"] or v["bb"]))
_def(
    ["ad.bmatmul_left"],
    _folded_rule(("g", "a", "b"), (None, "ab", "bb"), lambda v: True, per_example="a"),
)
_def(
    ["ad.bmatmul_right"],
    _folded_rule(("g", "a", "b"), (None, "ab", "bb"), lambda v: True, per_example="b"),
)
_def(
    ["ad.bunbroadcast"],
    _folded_rule(("g", "x"), ("gb", "xb"), lambda v: v["gb"], shape_only=("x",)),
)
_def(["ad.bbroadcast_like"], _folded_rule(("x", "like"), ("xb", "lb"), lambda v: True))


def _batched_pred_rule(c):
    """Batched again by an outer vmap: one more leading axis."""
    _, lead = c.static("lead")  # (a constant: written by batching._pred_check)
    return c.rebuild(lead=N.const((1 if lead is None else lead) + 1))


_def(["ad.batched_pred"], _batched_pred_rule)
