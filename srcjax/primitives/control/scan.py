"""``lax.scan`` support: the trip count, slicing and stacking pytrees along the
leading axis, and the cotangent of an array read row by row in a loop
(``ad.rows_adjoint``).
"""

from __future__ import annotations

import numpy as np

from ..ad import def_broadcasting
from ..ad.linear import def_adjoint_pair
from ..registry import Primitive, register
from ._trees import _fill

# ---------------------------------------------------------------------------
# lax.scan support: slicing and stacking pytrees along the leading axis.


def _leaves_map(fn, *trees):
    from ...tree_util import tree_map

    return tree_map(fn, *trees)


def leading_length(xs) -> int | None:
    """The common leading size of ``xs``'s leaves (``lax.scan``'s trip count),
    ``None`` when ``xs`` has no leaves. Raises ValueError when the sizes differ."""
    from ...tree_util import tree_leaves

    leaves = tree_leaves(xs)
    if not leaves:
        return None
    lengths = {np.shape(v)[0] for v in leaves}
    if len(lengths) != 1:
        raise ValueError(f"scan got leading axes of different sizes: {sorted(lengths)}")
    return lengths.pop()


def _scan_length(xs, length=None):
    """Trip count of ``lax.scan``: ``length`` or the leading size of ``xs``'s leaves."""
    n = None if xs is None else leading_length(xs)
    if n is None:
        if length is None:
            raise ValueError("scan got no xs and no length")
        return int(length)
    if length is not None and int(length) != n:
        raise ValueError(f"scan got length={length} but xs have leading size {n}")
    return n


scan_length = register(
    Primitive("ad.scan_length", _scan_length, kind="internal", differentiable=False)
).facts(trip_count=True, static_for_constants=True)


def _keys(d):
    """The keys of the dict ``d`` as a list, in iteration order (``for k in d.items()``)."""
    if not isinstance(d, dict):
        raise TypeError(f"keys()/values()/items() need a dict, got {type(d).__name__}")
    return list(d)


keys = register(Primitive("ad.keys", _keys, kind="internal", differentiable=False))


def _seq_len(xs):
    """``len(xs)`` for ``for v in xs`` in transformed code (the loop reads
    ``xs[i]``). A dict is refused: Python iterates its keys, and ``xs[i]`` would
    read values (or fail with ``KeyError: 0``)."""
    if isinstance(xs, dict):
        raise TypeError(
            "`for k in d` over a dict is not supported inside transformed functions: "
            "write `for k in d.keys()` (or `.items()`, `.values()`)"
        )
    return len(xs)


seq_len = register(Primitive("ad.seq_len", _seq_len, kind="internal", differentiable=False))
seq_len.facts(trip_count=True, from_shapes=True)


def _tree_slice(xs, i):
    """``xs[i]`` for every leaf of the pytree ``xs``."""
    if isinstance(xs, np.ndarray):
        return xs[i]
    return _leaves_map(lambda a: a[i], xs)


def _tree_slice_shape(avals):
    """jit's abstract value of :func:`_tree_slice` of a tuple or dict of arrays
    (a scan's ``xs = (ts[:-1], ts[1:])``) at an integer scalar index: the tuple
    or dict of their rows. None otherwise (an array ``xs`` is run on stand-ins;
    a named tuple, a list, a nested or unknown leaf, a leaf without rows: unknown)."""
    xs, i = avals.get("xs"), avals.get("i")
    index = getattr(i, "value", i)  # (a _Static index holds its int in .value)
    if type(index) is not int and not (
        getattr(i, "shape", None) == () and np.dtype(getattr(i, "dtype", "f")).kind in "iu"
    ):
        return None
    if type(xs) is tuple:
        leaves = list(xs)
    elif type(xs) is dict:
        leaves = list(xs.values())
    else:
        return None
    rows = []
    for a in leaves:
        if getattr(a, "ptype", True) is not None or not a.shape:
            return None  # (not an array with rows)
        rows.append((tuple(a.shape[1:]), a.dtype, a.wt))
    return {"tree": tuple(rows) if type(xs) is tuple else dict(zip(xs, rows))}


tree_slice = register(Primitive("ad.tree_slice", _tree_slice, kind="structural"))
tree_slice.facts(row_operands=("xs", "i"), result_shape=_tree_slice_shape)


def _row_before(xs, i, first):
    """Row ``i - 1`` of ``xs``, ``first`` for ``i == 0``: what forward trip ``i``
    began with, of a name whose value at the end of each trip is that trip's row
    of ``xs`` (reverse mode's restore of it: optimize/tape_rows.py)."""
    return first if i == 0 else _tree_slice(xs, i - 1)


def _array_and_row(avals):
    """``(xs, first)``'s abstract values where both are arrays and ``first`` has
    the shape and dtype of a row of ``xs`` (else None): the operands of
    :func:`_row_before` and :func:`_rows_before`."""
    xs, first = avals.get("xs"), avals.get("first")
    if getattr(xs, "ptype", True) is not None or getattr(first, "ptype", True) is not None:
        return None
    if not xs.shape or (xs.shape[1:], xs.dtype) != (first.shape, first.dtype):
        return None
    return xs, first


def _row_before_shape(avals):
    """jit's abstract value of :func:`_row_before`: a row of ``xs``, the one of
    ``first`` too (else unknown)."""
    got = _array_and_row(avals)
    if got is None:
        return None
    xs, first = got
    return tuple(xs.shape[1:]), xs.dtype, xs.wt and first.wt


# (row_before and tree_stack_rev appear only in jit's optimized reverse loops,
# code no transform differentiates again: no derivative rules; a grad meeting
# one raises NoDerivativeRuleError)
row_before = register(
    Primitive("ad.row_before", _row_before, kind="internal", differentiable=False)
)
row_before.facts(result_shape=_row_before_shape)
row_before.samples = lambda rng: [((rng.normal(size=(4, 3)), 2, rng.normal(size=(3,))), {})]


def _rows_before(xs, first):
    """The rows :func:`_row_before` reads on trips ``0 .. n - 1`` stacked in
    that order: ``first``, then rows ``0 .. n - 2`` of ``xs`` (the stack of a
    reverse loop's list of them, in the forward trips' order:
    optimize/trip_order.py)."""
    if type(xs) is np.ndarray and type(first) is np.ndarray:
        return np.concatenate((first[None], xs[:-1]))
    return _leaves_map(lambda a, f: np.concatenate((np.asarray(f)[None], a[:-1])), xs, first)


def _rows_before_shape(avals):
    """jit's abstract value of :func:`_rows_before`: ``xs``'s, where ``first`` is
    one of its rows (else unknown)."""
    got = _array_and_row(avals)
    if got is None:
        return None
    xs, first = got
    return tuple(xs.shape), xs.dtype, xs.wt and first.wt


rows_before = register(
    Primitive("ad.rows_before", _rows_before, kind="internal", differentiable=False)
)
rows_before.facts(result_shape=_rows_before_shape)
rows_before.samples = lambda rng: [((rng.normal(size=(4, 3)), rng.normal(size=(3,))), {})]


# A loop's per-trip list of rows written into its stack as the trips make them
# (optimize/stack_rows.py): the stack made empty before the loop, and the one
# ufunc call that makes a trip's row, writing it into its place.


def _empty_rows(shape, dtype):
    """An uninitialized stack of rows, each written once by :func:`_ufunc_into`."""
    return np.empty(shape, dtype)


def _ufunc_into(out, i, name, *args):
    """``np.<name>(*args)`` written into row ``i`` of ``out``: that row (a view)."""
    return getattr(np, name)(*args, out=out[i])


def _ufunc_into_shape(avals):
    """jit's abstract value of :func:`_ufunc_into`: a row of ``out``."""
    out = avals.get("out")
    if getattr(out, "ptype", True) is not None or not out.shape:
        return None
    return tuple(out.shape[1:]), out.dtype


empty_rows = register(
    Primitive("ad.empty_rows", _empty_rows, kind="internal", differentiable=False)
)
ufunc_into = register(
    Primitive("ad.ufunc_into", _ufunc_into, kind="internal", differentiable=False)
)
ufunc_into.facts(effectful=True, result_shape=_ufunc_into_shape)
empty_rows.samples = lambda rng: []  # (uninitialized values: tests/test_stack_rows.py)
ufunc_into.samples = lambda rng: [
    ((np.zeros((3, 2)), 1, "multiply", rng.normal(size=(2,)), rng.normal(size=(2,))), {})
]


def _tree_slice_adjoint(ct, xs, i):
    """Cotangent of ``xs`` from that of ``xs[i]``: zeros with ``ct`` at row ``i``."""

    def one(c, a):
        out = np.zeros(np.shape(a), dtype=np.result_type(a, c))
        out[i] = c
        return out

    if isinstance(xs, np.ndarray) and ct is not None:
        return one(ct, xs)
    ct = _fill(ct, _tree_slice(xs, i))  # a sparse cotangent: holes become zeros
    return _leaves_map(one, ct, xs)


tree_slice_adjoint = register(
    Primitive("ad.tree_slice_adjoint", _tree_slice_adjoint, kind="internal")
)


def_adjoint_pair(tree_slice, tree_slice_adjoint)
tree_slice.samples = lambda rng: [((rng.normal(size=(4, 3)), 2), {})]


tree_slice_adjoint.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(4, 3)), 1), {})]


def _tree_stack(items):
    """Stack a list of pytrees with equal structure leafwise along a new axis 0."""
    if not items:
        raise ValueError("cannot stack an empty list (scan of length 0)")
    first = items[0]
    if type(first) is np.ndarray and first.ndim:
        # one C-level copy of equal rows: np.array of the list, accepted when it
        # has the shape and dtype np.stack gives equal rows (np.stack's checks
        # and views, or a Python test of each row, cost more than the copy for a
        # scan's many small rows: 50 rows of 32 x 1, 17 -> 5 us)
        try:
            out = np.array(items)
        except (ValueError, TypeError):
            out = None
        if (
            out is not None
            and out.dtype == first.dtype
            and out.shape[1:] == first.shape
            and out.shape[0] == len(items)
        ):
            return out
    if isinstance(first, (np.ndarray, np.generic, float, int)):
        return np.stack(items)
    return _leaves_map(lambda *leaves: np.stack(leaves), *items)


tree_stack = register(Primitive("ad.tree_stack", _tree_stack, kind="structural"))


def _tree_stack_shape(avals):
    """jit's abstract value of the stack of a list of arrays of one shape and
    dtype (a scan's ``ys``): weak where every row is (JAX's ys of a weak carry)."""
    rows = avals.get("items")
    if not isinstance(rows, list) or not rows:
        return None
    first = rows[0]
    if getattr(first, "ptype", True) is not None:
        return None  # (not an array row: Python scalars, containers, unknown)
    for r in rows:
        if getattr(r, "ptype", True) is not None or (r.shape, r.dtype) != (
            first.shape,
            first.dtype,
        ):
            return None
    return (len(rows),) + tuple(first.shape), first.dtype, all(r.wt for r in rows)


tree_stack.facts(result_shape=_tree_stack_shape)


def _tree_stack_rev(items):
    """:func:`_tree_stack` of ``items`` last first: the per-trip list of a
    reverse loop stacked in the forward loop's trip order (optimize/trip_order.py)."""
    return _tree_stack(items[::-1])


tree_stack_rev = register(
    Primitive("ad.tree_stack_rev", _tree_stack_rev, kind="internal", differentiable=False)
)
tree_stack_rev.facts(result_shape=_tree_stack_shape)
tree_stack_rev.samples = lambda rng: [(([rng.normal(size=(2, 3)), rng.normal(size=(2, 3))],), {})]


def _tree_unstack(ct, items):
    """The cotangents of the items of ``tree_stack(items)``: a list, one per item."""
    n = len(items)
    if isinstance(ct, np.ndarray):
        return [ct[k] for k in range(n)]
    return [_leaves_map(lambda a, k=k: a[k], ct) for k in range(n)]


tree_unstack = register(Primitive("ad.tree_unstack", _tree_unstack, kind="internal"))


def_adjoint_pair(tree_stack, tree_unstack)
tree_stack.samples = lambda rng: []  # list operand; covered by the lax.scan tests


tree_unstack.samples = lambda rng: []


# -- the cotangent of an array read row by row in a loop ----------------------------------
# `for k in range(n): x1 = xs[k]` (lax.scan's xs, `for row in xs`): the reverse sweep
# pushes each row's cotangent on a list, and `ad.rows_adjoint` stacks them once after
# the loop, instead of adding a zero array of xs's size per trip (quadratic in n).


def _row_positions(n, start, last_first):
    """Rows of ``xs`` that a list of ``n`` row cotangents holds, in list order."""
    first = int(start)
    return range(first + n - 1, first - 1, -1) if last_first else range(first, first + n)


def _rows_adjoint(rows, xs, start=0, last_first=False, axis=0):
    """The cotangent of ``xs`` from the cotangents of its rows ``xs[start + j]``.

    ``rows``: a list of ``n`` cotangents (pytrees like a row of ``xs``; ``None`` or
    holes are zeros; Python scalars broadcast), one per trip of a loop that read
    rows ``start``, ``start + 1``, ... ``start + n - 1``; with ``last_first`` the
    list holds them from the last row read back to the first (the order in which
    the reverse sweep pushes them). ``axis``: how many leading (vmap) axes come
    before the rows' axis in every leaf of ``xs`` and of the row cotangents.
    Returns zeros like ``xs`` (dtype: the result type of ``xs`` and the
    cotangents) with the rows filled in; rows read twice (negative ``start``)
    add up."""
    from ...tree_util import tree_flatten, tree_unflatten

    n = len(rows)
    if type(xs) is np.ndarray and not axis and n and n == len(xs) and xs.ndim > 1 and start == 0:
        shape, dtype = xs.shape[1:], xs.dtype
        if dtype.kind == "f" and all(
            type(v) is np.ndarray and v.shape == shape and v.dtype == dtype for v in rows
        ):
            # every row read once, in order (a scan over all of xs): the rows are
            # the cotangent, concatenated (no zeros to fill, no flipped copy)
            return np.concatenate(rows[::-1] if last_first else rows).reshape(xs.shape)
    pos = _row_positions(n, start, last_first)
    leaves, treedef = tree_flatten(xs)
    lead = (slice(None),) * axis
    if isinstance(xs, np.ndarray):
        per_leaf = [list(rows)]
    else:
        per_leaf = [[] for _ in leaves]
        like = _tree_slice_at(xs, 0, axis) if n else None
        for r in rows:
            r_leaves = tree_flatten(_fill(r, like))[0]
            for lst, v in zip(per_leaf, r_leaves):
                lst.append(v)
    out = []
    for leaf, items in zip(leaves, per_leaf):
        a = np.asarray(leaf)
        row_shape = a.shape[:axis] + a.shape[axis + 1 :]
        kinds = {a.dtype}
        scalar = None
        dense = []
        for v in items:
            if v is None:
                dense.append(0)
                continue
            if isinstance(v, (np.ndarray, np.generic)):
                kinds.add(v.dtype)
            else:
                scalar = v  # a Python scalar: weakly typed
            dense.append(v)
        dtype = np.result_type(*kinds, *(() if scalar is None else (scalar,)))
        if dtype.kind == "f" and a.dtype.kind == "f":
            dtype = a.dtype  # (a floating array's cotangent has its dtype)
        res = np.zeros(a.shape, dtype)
        if n:
            block = np.stack([np.broadcast_to(v, row_shape) for v in dense], axis=axis)
            lo = int(start)
            if lo >= 0 and lo + n <= a.shape[axis]:
                if last_first:
                    block = np.flip(block, axis=axis)
                res[lead + (slice(lo, lo + n),)] = block
            else:  # negative positions: count from the end, and may meet others
                for j, p in enumerate(pos):
                    res[lead + (p,)] += block[lead + (j,)]
        out.append(res)
    return tree_unflatten(treedef, out)


def _tree_slice_at(xs, i, axis):
    if isinstance(xs, np.ndarray):
        return xs[(slice(None),) * axis + (i,)]
    return _leaves_map(lambda a: np.asarray(a)[(slice(None),) * axis + (i,)], xs)


def _rows_of(g, rows, start=0, last_first=False, axis=0):
    """The transpose of :func:`_rows_adjoint`: the list of rows of ``g`` that
    ``rows`` stand for, in the same order (``g[start + j]``, or from the last
    row back with ``last_first``)."""
    pos = _row_positions(len(rows), start, last_first)
    if g is None:
        return [None] * len(rows)
    return [_tree_slice_at(g, p, axis) for p in pos]


rows_adjoint = register(Primitive("ad.rows_adjoint", _rows_adjoint, kind="internal"))
rows_of = register(Primitive("ad.rows_of", _rows_of, kind="internal"))
rows_of.returns_tree = True


def _rows_adjoint_vjp(g, ans, rows, xs, start=0, last_first=False, axis=0):
    return rows_of(g, rows, start, last_first, axis)


def _rows_adjoint_jvp(t, ans, rows, xs, start=0, last_first=False, axis=0):
    return rows_adjoint(t, xs, start, last_first, axis)


def _rows_of_vjp(h, ans, g, rows, start=0, last_first=False, axis=0):
    return rows_adjoint(h, g, start, last_first, axis)


def _rows_of_jvp(t, ans, g, rows, start=0, last_first=False, axis=0):
    return rows_of(t, rows, start, last_first, axis)


rows_adjoint.def_vjp(_rows_adjoint_vjp)
rows_adjoint.def_jvp(_rows_adjoint_jvp)
rows_of.def_vjp(_rows_of_vjp)
rows_of.def_jvp(_rows_of_jvp)
rows_adjoint.samples = lambda rng: []  # a list operand: tests/test_lax.py checks them
rows_of.samples = lambda rng: []


def _rows_batch(first: str):
    """Under vmap: both operands batched, one more leading axis skipped."""

    def rule(c):
        if not (c.batched(first) or c.batched("rows")):
            return c.rebuild(), False
        from ...frontend import nodes as N

        _, ax = c.static("axis")
        return c.rebuild(
            **{first: c.materialize(c.arg(first)), "rows": c.materialize(c.arg("rows"))},
            axis=N.const((ax or 0) + 1),
        )

    return rule


rows_adjoint.def_batch(_rows_batch("xs"))
rows_of.def_batch(_rows_batch("g"))


def _broadcast_like(x, like):
    """``x`` broadcast to ``like``'s shape (a tangent of a broadcasting primitive)."""
    shape = np.shape(like)
    if np.shape(x) == shape:
        return x
    return np.broadcast_to(x, shape)


broadcast_like = register(Primitive("ad.broadcast_like", _broadcast_like, kind="internal"))
broadcast_like.facts(array_result=True, identity_operand="x")


def_broadcasting(broadcast_like)
broadcast_like.samples = lambda rng: [((rng.normal(size=(3,)), rng.normal(size=(2, 3))), {})]
