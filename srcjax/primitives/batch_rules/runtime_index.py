"""Runtime helpers of batched code that compute static metadata (axes,
shapes, permutations, index tuples: not differentiable) and per-example
indexing (``ad.batch_index``, ``ad.gather_index``, ``ad.bgetitem``, batches of
a user's objects, ``ad.bseq_index_adjoint``, ``ad.bsearchsorted``)."""

from __future__ import annotations

import functools

import numpy as np

from ... import dtypes as _dt
from ..._array import Array
from ...errors import ShapeError, SrcjaxError, TransformValueError
from ..ad import _getitem as _ad_getitem
from ..ad import _index_adjoint as _ad_index_adjoint
from ..ad.indexing import _index_take as _ad_index_take
from ..ad.linear import def_adjoint_pair, def_linear_map, def_with_adjoint
from ..control._trees import _class_kind
from ..control.cotangents import _tree_index_adjoint as _container_index_adjoint
from ..control.scan import tree_stack
from ._base import _reg
from .runtime_select import _aligned, _generated_caller
from .runtime_trees import _lift, _tree_row


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


batch_axis = _reg("ad.batch_axis", _batch_axis, differentiable=False).facts(
    pure=True, static_for_constants=True
)


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


# (of constants, known now: jit folds the shape of a batched reshape)
batch_shape = _reg("ad.batch_shape", _batch_shape, differentiable=False).facts(
    pure=True, static_for_constants=True
)


def _batch_perm(axes, ndim):
    """Axes of ``transpose`` for a batched operand of rank ``ndim``."""
    if axes is None:
        return (0,) + tuple(range(ndim - 1, 0, -1))
    n = ndim - 1
    return (0,) + tuple(int(a) % n + 1 for a in axes)


batch_perm = _reg("ad.batch_perm", _batch_perm, differentiable=False).facts(
    pure=True, static_for_constants=True
)


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
    if type(idx) is int:  # (the common index: one Python int)
        return (slice(None), idx)
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
        return _gather_behind_slices(expanded, pos[0], nd, size, x_batched, shape, where)
    # (an index out of bounds of one example's axis is out of bounds of the same
    # axis of the batched array: the gather or update that uses it handles it)
    fixed = tuple(_lift(p, nd, 1) if f else p for p, f in expanded)
    if not x_batched:
        return fixed
    return (np.arange(size).reshape((size,) + (1,) * nd),) + fixed


gather_index = _reg("ad.gather_index", _gather_index, differentiable=False)


def _example_index_mode(idx, batched, mode=None):
    """The out-of-bounds mode of the adjoint of one example's ``x[idx]`` for the
    batched call (``batched`` flags the parts as :func:`_gather_index`'s): each
    example's scalar integer indices make JAX's adjoint clamp (``"clip"``),
    though the batched index is an array (whose adjoint would drop)."""
    if mode not in (None, "promise_in_bounds"):
        return mode
    parts = idx if isinstance(idx, tuple) else (idx,)
    flags = batched if isinstance(batched, tuple) else (batched,) * len(parts)
    for p, f in zip(parts, flags):
        if _is_separator(p):
            continue
        a = np.asarray(p)
        if a.dtype == np.bool_ or a.ndim - bool(f) > 0:
            return mode
    return "clip"


example_index_mode = _reg("ad.example_index_mode", _example_index_mode, differentiable=False)


def _gather_behind_slices(expanded, first, nd, size, x_batched, shape, where=None):
    """:func:`_gather_index` for ``x[s1, ..., sL, *arrays, *rest]`` with slices or
    ``...`` in front of one run of array indices: each leading slice becomes an
    ``arange`` over its dim, so that every advanced index is contiguous and
    first: NumPy then lays the result out as ``(batch, L slice dims, nd index
    dims, *rest)``, as each example's is without the batch axis."""
    lead = [p for p, _ in expanded[:first]]
    if shape is None or any(p is None for p in lead):
        from ...errors import Location

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
    from ...tree_util import tree_leaves

    return tree_leaves(x)


def _stack_objects(rows):
    """The per-example results of a user's class called under vmap (the
    per-example loop): stacked as ``ad.tree_stack`` does when they are arrays,
    scalars or pytrees of them, else a 1-d object array holding each example's
    object, on which NumPy applies operators element by element (the object's
    own ``__mul__`` ...) and ``ad.bgetitem`` each one's ``__getitem__``. Only
    rows that are all such objects make an object array: rows that are arrays
    (srcjax Arrays too: user 08's ``lax.rsqrt(x) @ w`` was a silent ``(6,)``
    object array of per-row Arrays) are stacked, and a mix is an error."""
    arrays = [_is_array_row(r) for r in rows]
    if rows and all(arrays):
        return tree_stack.impl([r._buf if isinstance(r, Array) else r for r in rows])
    if any(arrays):
        kinds = sorted({type(r).__name__ for r in rows})
        raise TransformValueError(
            "vmap's per-example results mix arrays and other objects "
            f"({', '.join(kinds)}): they cannot be stacked into one batched value",
            _generated_caller(),
        )
    out = np.empty(len(rows), dtype=object)
    for i, r in enumerate(rows):
        out[i] = r  # one by one: NumPy would read a sequence-like object's items
    return out


#: the per-example values :func:`_stack_objects` stacks as arrays (containers and
#: registered classes by their leaves)
_ARRAY_ROWS = (Array, np.ndarray, np.generic, bool, int, float, complex, tuple, list, dict)


def _is_array_row(r) -> bool:
    return isinstance(r, _ARRAY_ROWS) or _class_kind(r) is not None


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


def _bgetitem_adjoint(ct, x, idx, dense=False, mode=None):
    """Transpose of :func:`_bgetitem` in ``x``. For a container ``x``: sparse
    (``None`` holes elsewhere, ``ad.tree_index_adjoint``'s result) by default;
    with ``dense``, ``ad.index_adjoint``'s (zeros elsewhere, ``x``'s container
    type kept: the cotangent of a tuple is a tuple). ``mode``: the
    out-of-bounds mode of ``ad.index_adjoint``."""
    if isinstance(x, (tuple, list, dict)):
        if dense:
            return _ad_index_adjoint(ct, x, idx)
        return _container_index_adjoint(ct, x, idx)
    return _ad_index_adjoint(ct, x, _batch_index(idx, np.shape(x)[0]), mode)


def _bindex_take(g, idx, mode=None):
    """``ad.index_take(g, idx, mode)`` per example for an unbatched index, when
    ``g`` may be a container of batched values (indexed as is) or a batched
    array (indexed with :func:`_batch_index`), as :func:`_bgetitem`."""
    if isinstance(g, (tuple, list, dict)):
        return g[idx]
    return _ad_index_take(g, _batch_index(idx, np.shape(g)[0]), mode)


bindex_take = _reg("ad.bindex_take", _bindex_take)
bgetitem = _reg("ad.bgetitem", _bgetitem)
bgetitem_adjoint = _reg("ad.bgetitem_adjoint", _bgetitem_adjoint)
bgetitem.kind = "structural"


def_with_adjoint(bgetitem, bgetitem_adjoint)
def_linear_map(bgetitem_adjoint, bgetitem, 2, 3)  # (its own dense flag: no operand of bgetitem)


def _bindex_take_vjp(h, ans, g, idx, mode=None):
    return bgetitem_adjoint(h, g, idx, False, mode)


def _bindex_take_jvp(t, ans, g, idx, mode=None):
    return bindex_take(t, idx, mode)


bindex_take.def_vjp(_bindex_take_vjp)
bindex_take.def_jvp(_bindex_take_jvp)
bindex_take.samples = lambda rng: [
    ((rng.normal(size=(3, 4)), 1), {}),
    ((rng.normal(size=(3, 5)), np.array([0, 7, -1])), {"mode": "drop"}),
    ((rng.normal(size=(3, 5)), np.array([0, 7, -1])), {"mode": "clip"}),
]
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
    ``flags[i]`` carrying a leading batch axis: a fresh label for that axis.
    Terms past ``flags`` (``ad.einsum_with_consts``'s constants) are unbatched."""
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
    ins = [free + s if i < len(flags) and flags[i] else s for i, s in enumerate(ins)]
    return ",".join(ins) + "->" + free + out


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


def_adjoint_pair(bseq_pick, bseq_index_adjoint)
bseq_index_adjoint.samples = lambda rng: [
    ((rng.normal(size=(4, 2)), [rng.normal(size=(4, 2))] * 3, np.array([0, 2, 1, -1])), {}),
]
bseq_pick.samples = lambda rng: [
    (([rng.normal(size=(4, 2)) for _ in range(3)], np.array([0, 2, 1, -1])), {}),
]


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


def _batch_starts(starts):
    """Start indices of a dynamic slice with the batch axis first (start 0)."""
    if np.ndim(starts):
        return (0,) + tuple(int(s) for s in np.asarray(starts).reshape(-1))
    return (0,) + tuple(starts)


batch_starts = _reg("ad.batch_starts", _batch_starts, differentiable=False)
