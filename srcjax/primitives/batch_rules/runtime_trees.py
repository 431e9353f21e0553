"""Runtime helpers of batched code for pytree-shaped values: broadcasting a
value along a new batch axis and its adjoint (``ad.batch_broadcast`` /
``ad.batch_unbroadcast``), per-example rank alignment (``ad.expand_to_rank``), vmap's
in_axes/out_axes moves (``ad.tree_batch_in`` / ``ad.tree_batch_out`` and their
adjoints), stacking and slicing containers (``ad.tree_stack``,
``ad.tree_row``, lax.scan's ``ad.btree_*``) and sums over a named axis
(``ad.tree_axis_sum``). Each carries its derivative rules and samples."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ..._prng_key import PRNGKeyArray, rewrap
from ..ad._common import broadcast_view
from ..ad.linear import def_adjoint_pair, def_linear_map, def_transpose_pair
from ..ad.shapes import reshape
from ..control._trees import _class_kind, class_map, dict_like, note_broadcast_source
from ..control.scan import tree_slice_adjoint, tree_unstack
from ..creation import shape as shape_
from ._base import _def_rules, _reg


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
    if type(x) is np.ndarray:  # (first: the common case)
        return _broadcast_new_axis(x, size, axis)
    if isinstance(x, np.generic) and not isinstance(x, (float, complex)):
        # a NumPy scalar of its own dtype (np.float64 and np.complex128 are Python
        # numbers too: narrowed below); new memory, remembered as below
        return note_broadcast_source(_broadcast_new_axis(np.asarray(x), size, axis), x)
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
        from ...tree_util import PyTreeDef

        if isinstance(x, PyTreeDef):
            return x  # a structure (tree_flatten's treedef): the same in every example
    if isinstance(x, np.ndarray):
        return _broadcast_new_axis(x, size, axis)
    # (new memory for a scalar: remembered, so that two broadcasts of it are one value)
    return note_broadcast_source(_broadcast_new_axis(_canon_scalar(x), size, axis), x)


def _broadcast_new_axis(a, size, axis):
    a = a[None] if axis == 0 else np.expand_dims(a, axis)
    shape = list(a.shape)
    shape[axis] = size
    return broadcast_view(a, tuple(shape))


batch_broadcast = _reg("ad.batch_broadcast", _batch_broadcast).facts(
    same_structure=("x",), pure=True, weak_leaves_from=("x",)
)


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


def_transpose_pair(batch_broadcast, batch_unbroadcast)


def _tree_avals(x, leaf):
    """``x`` (an abstract value: a leaf, or a tuple or list of them) with ``leaf``
    applied to each leaf, as the ``result_shape`` rules give it (``{"tree": t}``),
    or None where a leaf is not known."""

    def walk(a):
        if type(a) in (tuple, list):
            items = [walk(v) for v in a]
            return None if any(v is None for v in items) else type(a)(items)
        return leaf(a) if hasattr(a, "ptype") else None

    t = walk(x)
    return None if t is None else {"tree": t}


def _static_int(v):
    v = getattr(v, "value", v)  # (a name's value known to jit)
    return v if type(v) is int else None


def _batch_broadcast_avals(avals):
    """jit's abstract value of ``ad.batch_broadcast(x, size)``: each leaf of ``x``
    with the new axis, its weak type kept (vmap's broadcast of an unbatched weak
    carry ``0.0`` is weak in JAX: a scan's ys from it are too); a Python int or
    float leaf the default dtype's array."""
    size, axis = _static_int(avals.get("size")), _static_int(avals.get("axis", 0))
    if size is None or axis is None:
        return None

    def leaf(a):
        if a.ptype is not None:
            if a.ptype not in (int, float):
                return None
            dt = _canon_scalar(a.ptype(0)).dtype
            return (size,), dt, True
        if not 0 <= axis <= len(a.shape):
            return None
        return a.shape[:axis] + (size,) + a.shape[axis:], a.dtype, a.wt

    return _tree_avals(avals.get("x"), leaf)


batch_broadcast.facts(result_shape=_batch_broadcast_avals)
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


lift = _reg("ad.expand_to_rank", _lift).facts(pure=True, identity_operand="x")


def _lift_vjp(g, ans, x):
    return reshape(g, shape_(x))


def _lift_jvp(t, ans, rank, nb=1):
    return lift(t, rank, nb)


lift.samples = lambda rng: [
    ((rng.normal(size=(3,)), 2), {}),
    ((rng.normal(size=(2, 3)), 3), {}),
    ((rng.normal(size=(2, 3)), 1), {}),
]


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


tree_axis_size = _reg("ad.tree_axis_size", _tree_axis_size, differentiable=False).facts(
    pure=True, from_shapes=True
)


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


def _tbia_vjp(h, ans, g, axes):
    return tree_batch_in(h, axes, tree_axis_size(g, 0))


def _tbia_jvp(t, ans, x, axes):
    return tree_batch_in_adjoint(t, x, axes)


def_linear_map(tree_batch_in, tree_batch_in_adjoint, 0, 2)  # its adjoint reads (x, axes)
def_adjoint_pair(tree_batch_out, tree_batch_out_adjoint)
_def_rules(tree_batch_in_adjoint, "g", _tbia_vjp, _tbia_jvp)
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

lift.def_vjp(_lift_vjp)
lift.def_jvp(_lift_jvp)


def _row_stand_in(x):
    """Zeros shaped and typed like one example of batched ``x`` (leading axis
    dropped); defined for an empty batch too."""
    x = np.asarray(x)
    return np.zeros(x.shape[1:], x.dtype)


row_stand_in = _reg("ad.row_stand_in", _row_stand_in, differentiable=False)
row_stand_in.facts(pure=True, shape_only=("x",))
row_stand_in.samples = lambda rng: [((rng.normal(size=(3, 2)),), {})]


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


def _tree_row_jvp(t, ans, i):
    return tree_row(t, i)


# (per-example loops of batched code differentiated again: jacfwd(jacrev(f)) where
# f vmaps something with no batching rule)
tree_row.def_vjp(_tree_row_vjp)
tree_row.def_jvp(_tree_row_jvp)


def _tree_map(fn, *trees):
    from ...tree_util import tree_map

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

    from ..control._trees import _fill  # (the holes of a sparse cotangent: zeros)

    return _tree_map(one, _fill(ct, _btree_slice(xs, i)), xs)


def _btree_stack(items):
    """Per example ``stack(items)``: the new axis goes after the batch axis."""
    return _tree_map(lambda *leaves: np.stack([np.asarray(v) for v in leaves], axis=1), *items)


def _btree_unstack(ct, items):
    """Per example the list of cotangents of the items of ``tree_stack(items)``."""
    n = len(items)
    return [_tree_map(lambda a, k=k: np.asarray(a)[:, k], ct) for k in range(n)]


def _btree_slice_avals(avals):
    """jit's abstract value of ``ad.btree_slice(xs, i)``: each leaf without its
    second axis (the scanned one after the batch axis)."""

    def leaf(a):
        if a.ptype is not None or len(a.shape) < 2:
            return None
        return a.shape[:1] + a.shape[2:], a.dtype, a.wt

    return _tree_avals(avals.get("xs"), leaf)


def _btree_stack_avals(avals):
    """jit's abstract value of ``ad.btree_stack(items)`` (a batched scan's ys):
    the rows' leaves stacked after the batch axis, weak where every row's leaf is
    (the ys of a weak carry), when the rows agree in shape and dtype."""
    rows = avals.get("items")
    if type(rows) is not list or not rows:
        return None

    def stack(*leaves):
        first = leaves[0]
        if type(first) in (tuple, list):
            if any(type(v) is not type(first) or len(v) != len(first) for v in leaves):
                return None
            parts = [stack(*vs) for vs in zip(*leaves)]
            return None if any(p is None for p in parts) else type(first)(parts)
        for a in leaves:
            if getattr(a, "ptype", True) is not None or not a.shape:
                return None
            if (a.shape, a.dtype) != (first.shape, first.dtype):
                return None
        shape = first.shape[:1] + (len(leaves),) + first.shape[1:]
        return shape, first.dtype, all(a.wt for a in leaves)

    t = stack(*rows)
    return None if t is None else {"tree": t}


# the four are two transpose pairs, as ad.tree_slice/tree_stack and their adjoints
btree_slice = _reg("ad.btree_slice", _btree_slice)
btree_slice_adjoint = _reg("ad.btree_slice_adjoint", _btree_slice_adjoint)
btree_stack = _reg("ad.btree_stack", _btree_stack)
btree_unstack = _reg("ad.btree_unstack", _btree_unstack)
for _p in (btree_slice, btree_slice_adjoint, btree_stack, btree_unstack):
    _p.samples = lambda rng: []
btree_slice.facts(result_shape=_btree_slice_avals)
btree_stack.facts(result_shape=_btree_stack_avals)


def_adjoint_pair(btree_slice, btree_slice_adjoint)
def_adjoint_pair(btree_stack, btree_unstack)
btree_unstack.returns_tree = True
tree_unstack.returns_tree = True


def _bscan_length(xs, length=None):
    """``lax.scan``'s trip count when ``xs`` carries a batch axis first."""
    from ..control.scan import _scan_length

    per_example = _tree_map(lambda a: np.asarray(a)[0], xs)
    return _scan_length(per_example, length)


_bsl = _reg("ad.bscan_length", _bscan_length, differentiable=False)
_bsl.facts(trip_count=True)  # (known to jit from the shapes of xs, as ad.scan_length)


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
    from ...tree_util import tree_map

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


def_adjoint_pair(tree_axis_sum, tree_axis_sum_ct)
tree_axis_sum.samples = lambda rng: [((rng.normal(size=(3, 2)), 3, True), {"scale": 0.5})]
tree_axis_sum_ct.samples = lambda rng: [
    ((rng.normal(size=(2,)), rng.normal(size=(3, 2)), 3, True), {"scale": 0.5})
]
