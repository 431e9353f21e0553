"""Jacobians: one-hot bases and the assembly of columns (``jacfwd``) or rows
(``jacrev``), looped or batched (one vmap over a stacked basis); the dense
cotangents they need; ``ad.custom_transpose`` (reverse mode through a
``custom_jvp`` rule, by the hook :mod:`srcjax.api_fwd` provides).
"""

from __future__ import annotations

import numpy as np

from .. import hooks
from ..ad.linear import def_transpose_pair
from ..registry import Primitive, register
from ._trees import _fill
from .scan import _leaves_map

# ---------------------------------------------------------------------------
# Jacobians: one-hot bases and assembly of columns (jacfwd) or rows (jacrev).


def _flat(tree):
    from ...tree_util import tree_flatten

    leaves, treedef = tree_flatten(tree)
    return [np.asarray(v) for v in leaves], treedef


def _basis(x, lead=0):
    """One-hot pytrees like ``x``, one per element of its leaves, in flattened order.
    ``x``'s leaves' first ``lead`` axes are vmap batch axes (jacfwd inside a
    vmapped function): the basis is that of one example, the same for all."""
    leaves, treedef = _flat(x)
    shapes = [v.shape[lead:] for v in leaves]
    kinds = [v.dtype if v.dtype.kind in "fc" else np.dtype(np.float32) for v in leaves]
    out = []
    for i, shape in enumerate(shapes):
        for k in range(_prod(shape)):
            parts = [np.zeros(sh, dt) for sh, dt in zip(shapes, kinds)]
            parts[i].reshape(-1)[k] = 1
            out.append(treedef.unflatten(parts))
    return out


basis = register(Primitive("ad.basis", _basis, kind="internal", differentiable=False))


def _blocks(items, outer, inner, items_index_outer, lead=0, olead=0, ilead=0):
    """Assemble a Jacobian with structure outer-tree of inner-tree of blocks.
    Under vmap the first ``lead`` axes of the items' leaves, ``olead`` of
    ``outer``'s and ``ilead`` of ``inner``'s are batch axes: the blocks keep the
    items' batch axes first (one stack for all examples, no loop over them)."""
    o_leaves, o_def = _flat(outer)
    i_leaves, i_def = _flat(inner)
    o_shapes = [o.shape[olead:] for o in o_leaves]
    i_shapes = [v.shape[ilead:] for v in i_leaves]
    flat_items = [_flat(it)[0] for it in items]
    pre = flat_items[0][0].shape[:lead] if lead and flat_items and flat_items[0] else ()
    result = []
    if items_index_outer:  # rows: items[k] is an inner-tree, k runs over outer elements
        off = 0
        for os_ in o_shapes:
            row_blocks = []
            size = _prod(os_)
            for j, (leaf, ls) in enumerate(zip(i_leaves, i_shapes)):
                stack = [flat_items[k][j] for k in range(off, off + size)]
                block = (
                    np.stack(stack, axis=lead) if stack else np.zeros(pre + (0,) + ls, leaf.dtype)
                )
                row_blocks.append(block.reshape(pre + os_ + ls))
            result.append(i_def.unflatten(row_blocks))
            off += size
    else:  # columns: items[k] is an outer-tree, k runs over inner elements
        for jo, (o, os_) in enumerate(zip(o_leaves, o_shapes)):
            row_blocks = []
            off = 0
            for ls in i_shapes:
                size = _prod(ls)
                stack = [flat_items[k][jo] for k in range(off, off + size)]
                block = np.stack(stack, axis=lead) if stack else np.zeros(pre + (0,) + os_, o.dtype)
                block = block.reshape(pre + ls + os_)
                nd_in = len(ls)
                block = np.moveaxis(
                    block,
                    list(range(lead, lead + nd_in)),
                    list(range(lead + len(os_), lead + len(os_) + nd_in)),
                )
                row_blocks.append(block)
                off += size
            result.append(i_def.unflatten(row_blocks))
    return o_def.unflatten(result)


def _unblocks(ct, outer, inner, items_index_outer, lead=0, olead=0, ilead=0):
    """The transpose of :func:`_blocks`: the list of item cotangents (batch axes
    as there: the first ``lead`` of ``ct``'s leaves and the items')."""
    from ...tree_util import tree_leaves

    o_leaves, o_def = _flat(outer)
    i_leaves, i_def = _flat(inner)
    o_shapes = [o.shape[olead:] for o in o_leaves]
    i_shapes = [v.shape[ilead:] for v in i_leaves]
    present = [np.shape(v) for v in tree_leaves(ct)]
    pre = present[0][:lead] if lead and present else ()
    # the cotangent of a Jacobian of pytrees may be sparse (holes ``None``, dicts
    # with some keys, lists where the Jacobian has tuples): filled against the
    # Jacobian's own structure first (zeros of each block's shape)
    like = o_def.unflatten(
        [
            i_def.unflatten(
                [
                    np.broadcast_to(
                        np.zeros((), (leaf if items_index_outer else o).dtype), pre + os_ + ls
                    )
                    for leaf, ls in zip(i_leaves, i_shapes)
                ]
            )
            for o, os_ in zip(o_leaves, o_shapes)
        ]
    )
    ct = _fill(ct, like)
    ct_outer = o_def.flatten_up_to(ct) if hasattr(o_def, "flatten_up_to") else None
    if ct_outer is None:
        flat = tree_leaves(ct)
        ct_outer = [flat[j * len(i_leaves) : (j + 1) * len(i_leaves)] for j in range(len(o_leaves))]
    else:
        ct_outer = [_flat(c)[0] for c in ct_outer]
    head = (slice(None),) * lead
    items = []
    if items_index_outer:
        for jo, os_ in enumerate(o_shapes):
            size = _prod(os_)
            blocks = [
                np.asarray(ct_outer[jo][j]).reshape(pre + (size,) + ls)
                for j, ls in enumerate(i_shapes)
            ]
            for k in range(size):
                items.append(i_def.unflatten([block[head + (k,)] for block in blocks]))
    else:
        for j, ls in enumerate(i_shapes):
            size = _prod(ls)
            blocks = [
                np.asarray(ct_outer[jo][j]).reshape(pre + os_ + (size,))
                for jo, os_ in enumerate(o_shapes)
            ]
            for k in range(size):
                items.append(o_def.unflatten([block[..., k] for block in blocks]))
    return items


def _jac_columns(cols, x, out, lead=0, xlead=0, olead=0):
    """Jacobian from jvp columns: outer = ``out``'s tree, inner = ``x``'s tree
    (``lead``, ``xlead``, ``olead``: vmap batch axes, see :func:`_blocks`)."""
    return _blocks(cols, out, x, False, lead, olead, xlead)


def _jac_rows(rows, x, out, lead=0, xlead=0, olead=0):
    """Jacobian from vjp rows: outer = ``out``'s tree, inner = ``x``'s tree."""
    return _blocks(rows, out, x, True, lead, olead, xlead)


def _jac_columns_t(ct, x, out, lead=0, xlead=0, olead=0):
    """Transpose of ``jac_columns`` in its columns."""
    return _unblocks(ct, out, x, False, lead, olead, xlead)


def _jac_rows_t(ct, x, out, lead=0, xlead=0, olead=0):
    """Transpose of ``jac_rows`` in its rows."""
    return _unblocks(ct, out, x, True, lead, olead, xlead)


jac_columns = register(Primitive("ad.jac_columns", _jac_columns, kind="internal"))
jac_rows = register(Primitive("ad.jac_rows", _jac_rows, kind="internal"))
jac_columns_t = register(Primitive("ad.jac_columns_t", _jac_columns_t, kind="internal"))
jac_rows_t = register(Primitive("ad.jac_rows_t", _jac_rows_t, kind="internal"))


def _jac_columns_shape(avals):
    """``ad.jac_columns``' abstract value for jit: for an array ``x`` and an array
    ``out`` of one float dtype (jacfwd of a function of one array, a ``hessian``),
    ``out``'s shape then ``x``'s, in that dtype; else None (not known now)."""
    x, out = avals.get("x"), avals.get("out")
    for a in (x, out):
        if not (hasattr(a, "shape") and hasattr(a, "dtype")) or getattr(a, "weak", True):
            return None
    if x.dtype != out.dtype or np.dtype(x.dtype).kind != "f":
        return None
    lead, xlead, olead = (avals.get(k, 0) for k in ("lead", "xlead", "olead"))
    if not all(type(n) is int for n in (lead, xlead, olead)) or lead != olead:
        return None  # (batched columns of an unbatched output: their shapes unknown)
    return tuple(out.shape) + tuple(x.shape)[xlead:], out.dtype


jac_columns.facts(result_shape=_jac_columns_shape)


def _blocks_rule(items, outer_inner):
    """Batching rule of ``ad.jac_columns``/``jac_rows``/``ad.basis`` and the
    transposes: batched operands (every leaf with its batch axis first, as
    vmap's per-example loop reads them with ``ad.tree_row``) get one more lead
    axis each; the items' batch axis is kept first in the result. Unbatched
    items give the same result for every example (it reads only the other
    operands' per-example shapes): one, unbatched."""

    def rule(c):
        from ...frontend import nodes as N

        changes = {}
        for name, lead in ((items, "lead"),) + outer_inner:
            if c.batched(name):
                ok, val = c.static(lead)
                if not ok:
                    return None
                changes[lead] = N.const(int(val or 0) + 1)
        expr = c.rebuild(**changes)
        return expr if c.batched(items) else (expr, False)

    return rule


for _p in (jac_columns, jac_rows, jac_columns_t, jac_rows_t):
    _p.def_batch(
        _blocks_rule(next(iter(_p.signature.parameters)), (("x", "xlead"), ("out", "olead")))
    )
# (the basis reads only its operand's per-example shapes and dtypes)
basis.def_batch(_blocks_rule("", (("x", "lead"),)))
def_transpose_pair(jac_columns, jac_columns_t)
def_transpose_pair(jac_rows, jac_rows_t)
for _p in (jac_columns, jac_rows, jac_columns_t, jac_rows_t):
    _p.samples = lambda rng: []  # list operands; checked against finite differences in tests


def _custom_transpose(tangent_map, ct, position, *args):
    """``J^T ct`` for the linear map ``t -> tangent_map(*args, t)`` (the tangent of
    argument ``position``), by srcjax's reverse mode on ``tangent_map``'s source
    (the hook ``"transpose_linear"`` that :mod:`srcjax.api_fwd` provides). Used to
    differentiate ``custom_jvp`` functions in reverse mode."""
    return hooks.call("transpose_linear", tangent_map, ct, position, *args)


# differentiable, but with no rules: a second derivative through a custom_jvp
# rule in reverse mode raises instead of silently giving zero
custom_transpose = register(Primitive("ad.custom_transpose", _custom_transpose, kind="internal"))
custom_transpose.missing_rule_hint = (
    "second derivatives of a custom_jvp function that go through reverse mode are not "
    "supported yet; use forward-over-forward (jacfwd(jacfwd(f))) or srcjax.custom_vjp"
)
custom_transpose.samples = lambda rng: []


# ---------------------------------------------------------------------------
# Batched Jacobians (one vmap over a stacked one-hot basis instead of a loop).


def _prod(shape):
    n = 1
    for d in shape:
        n *= int(d)
    return n


def _basis_stack(x, lead=0):
    """``eye(n)`` shaped ``(n, *s)``, ``n`` the size of ``s``: all one-hot tangents
    of ``x`` (per-example shape ``s``). ``x``'s first ``lead`` axes are vmap batch
    axes (the Jacobian called inside a vmapped function): the basis is the same for
    every example, a read-only broadcast ``(*x.shape[:lead], n, *s)``."""
    x = np.asarray(x)
    s = x.shape[lead:]
    n = _prod(s)
    dt = x.dtype if x.dtype.kind in "fc" else np.float32
    e = np.eye(n, dtype=dt).reshape((n,) + s)
    return np.broadcast_to(e, x.shape[:lead] + e.shape) if lead else e


def _lead_rule(*names):
    """Batching rule of a Jacobian helper whose operands ``names`` carry their vmap
    batch axes first, counted by the matching ``lead`` arguments (constants): one
    more axis for each batched operand. The result is batched when the first
    operand is (its leaves are what the result is made of); otherwise it depends on
    the other operands' per-example shapes only, the same for every example."""

    def rule(c):
        from ...frontend import nodes as N

        changes = {}
        for name, lead in names:
            if not c.batched(name):
                continue
            if c.is_container(c.arg(name)):
                return None  # a container with some unbatched leaves: per example
            ok, val = c.static(lead)
            if not ok:
                return None
            changes[lead] = N.const(int(val or 0) + 1)
        expr = c.rebuild(**changes)
        return expr if c.batched(names[0][0]) else (expr, False)

    return rule


basis_stack = register(
    Primitive("ad.basis_stack", _basis_stack, kind="internal", differentiable=False)
)
basis_stack.def_batch(_lead_rule(("x", "lead")))


def _cobasis_stack(out, lead=0):
    """One-hot cotangents for every element of the pytree ``out``, stacked: a tree
    like ``out`` whose leaves have a leading axis of ``out``'s total size. With
    ``lead`` vmap batch axes in front of every leaf, the same stack for every
    example, broadcast behind them (read-only)."""
    leaves, treedef = _flat(out)
    m = sum(_prod(v.shape[lead:]) for v in leaves)
    parts = []
    off = 0
    for v in leaves:
        vs = v.shape[lead:]
        size = _prod(vs)
        dt = v.dtype if v.dtype.kind in "fc" else np.float32
        block = np.zeros((m, size), dt)
        block[off : off + size] = np.eye(size, dtype=dt)
        block = block.reshape((m,) + vs)
        parts.append(np.broadcast_to(block, v.shape[:lead] + block.shape) if lead else block)
        off += size
    return treedef.unflatten(parts)


cobasis_stack = register(
    Primitive("ad.cobasis_stack", _cobasis_stack, kind="internal", differentiable=False)
)
cobasis_stack.def_batch(_lead_rule(("out", "lead")))


def _jac_from_columns(v, x, lead=0, xlead=0):
    """Stacked jvp columns ``v`` (a tree, leaves ``(*B, n, *So)``) -> leaves ``(*B,
    *So, *Sx)``; ``B`` the first ``lead`` axes (vmap's), ``Sx`` the shape of ``x``
    after its first ``xlead`` axes."""
    sx = np.shape(x)[xlead:]
    nx = len(sx)

    def one(c):
        c = np.asarray(c)
        pre = c.shape[:lead]
        so = c.shape[lead + 1 :]
        k = len(pre)
        r = c.reshape(pre + sx + so)
        if so:  # (x's axes after the output's: one transpose, moveaxis's order)
            r = r.transpose(
                tuple(range(k)) + tuple(range(k + nx, k + nx + len(so))) + tuple(range(k, k + nx))
            )
        return r if r.flags.writeable else r.copy()  # a view of a (broadcast) basis

    return _leaves_map(one, v)


def _jac_to_columns(v, x, lead=0, xlead=0):
    """Transpose of :func:`_jac_from_columns` (``v``: a cotangent like its result)."""
    sx = np.shape(x)[xlead:]
    nx = len(sx)
    n = _prod(sx)

    def one(c):
        c = np.asarray(c)
        pre = c.shape[:lead]
        so = c.shape[lead : c.ndim - nx]
        k = lead + len(so)
        moved = np.moveaxis(c, list(range(k, k + nx)), list(range(lead, lead + nx)))
        return moved.reshape(pre + (n,) + so)

    return _leaves_map(one, v)


def _jac_from_rows(v, out, lead=0, olead=0):
    """Stacked vjp rows ``v`` ``(*B, m, *Sx)`` -> a tree like ``out`` with leaves
    ``(*B, *So, *Sx)``; ``B`` the first ``lead`` axes of ``v`` (vmap's), ``So``
    each leaf's shape after its first ``olead`` axes."""
    leaves, treedef = _flat(out)
    rows = np.asarray(v)
    pre = rows.shape[:lead]
    sx = rows.shape[lead + 1 :]
    head = (slice(None),) * lead
    parts = []
    off = 0
    for v in leaves:
        vs = v.shape[olead:]
        size = _prod(vs)
        part = rows[head + (slice(off, off + size),)].reshape(pre + vs + sx)
        parts.append(part if part.flags.writeable else part.copy())  # a view of the basis
        off += size
    return treedef.unflatten(parts)


def _jac_to_rows(v, out, lead=0, olead=0):
    """Transpose of :func:`_jac_from_rows` (``v``: a cotangent like its result)."""
    leaves, _ = _flat(out)
    cts, _ = _flat(v)
    blocks = []
    for v, c in zip(leaves, cts):
        vs = v.shape[olead:]
        pre = c.shape[:lead]
        sx = c.shape[lead + len(vs) :]
        blocks.append(c.reshape(pre + (_prod(vs),) + sx))
    return np.concatenate(blocks, axis=lead)


jac_from_columns = register(Primitive("ad.jac_from_columns", _jac_from_columns, kind="internal"))
jac_to_columns = register(Primitive("ad.jac_to_columns", _jac_to_columns, kind="internal"))
jac_from_rows = register(Primitive("ad.jac_from_rows", _jac_from_rows, kind="internal"))
jac_to_rows = register(Primitive("ad.jac_to_rows", _jac_to_rows, kind="internal"))
for _p in (jac_from_columns, jac_to_columns):
    _p.def_batch(_lead_rule(("v", "lead"), ("x", "xlead")))
for _p in (jac_from_rows, jac_to_rows):
    _p.def_batch(_lead_rule(("v", "lead"), ("out", "olead")))


# each pair is linear in ``v`` and each other's transpose
def_transpose_pair(jac_from_columns, jac_to_columns)
def_transpose_pair(jac_from_rows, jac_to_rows)
jac_from_columns.samples = lambda rng: [
    ((rng.normal(size=(6, 4)), rng.normal(size=(2, 3))), {}),
    ((rng.normal(size=(5, 6, 4)), rng.normal(size=(5, 2, 3))), {"lead": 1, "xlead": 1}),
    ((rng.normal(size=(5, 6, 4)), rng.normal(size=(2, 3))), {"lead": 1}),
]
jac_to_columns.samples = lambda rng: [
    ((rng.normal(size=(4, 2, 3)), rng.normal(size=(2, 3))), {}),
    ((rng.normal(size=(5, 4, 2, 3)), rng.normal(size=(5, 2, 3))), {"lead": 1, "xlead": 1}),
]
jac_from_rows.samples = lambda rng: [
    ((rng.normal(size=(6, 3)), rng.normal(size=(2, 3))), {}),
    ((rng.normal(size=(5, 6, 3)), rng.normal(size=(5, 2, 3))), {"lead": 1, "olead": 1}),
]
jac_to_rows.samples = lambda rng: [
    ((rng.normal(size=(2, 3, 3)), rng.normal(size=(2, 3))), {}),
    ((rng.normal(size=(5, 2, 3, 3)), rng.normal(size=(5, 2, 3))), {"lead": 1, "olead": 1}),
]
