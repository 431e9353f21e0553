"""Batching rules of structural primitives: shape and dtype queries, reshape, ravel,
transpose, split, squeeze, concatenate, stack, roll, repeat, pad,
broadcast_to, flip, one_hot, diag, hstack/vstack, tile, kron, diff, meshgrid."""

from __future__ import annotations

import gast
import numpy as np

from ...frontend import nodes as N
from ..ad.shapes import expand_dims, moveaxis, reshape
from ..ad.sums import broadcast_to
from ..creation import (
    array,
    asarray,
    iscomplexobj,
    isrealobj,
    mesh_tangent,
    meshgrid,
    ndim,
    shape,
    size,
)
from ..linalg.products import kron, trace
from ..nn import one_hot
from ..structural.diff import diff, diff_adjoint, diff_embed
from ..structural.joining import array_split, concatenate, hstack, split, stack, unstack, vstack
from ..structural.layout import flip, ravel, roll, squeeze, swapaxes, transpose
from ..structural.pad_diag import diag, diagonal, pad
from ..structural.take import repeat, tile
from ._base import _def, _example, _flat_rows, _is_name, _lifted_to_shape, _reg, _static_operand
from .runtime_shape import bdiag, bdiag_adjoint, bjoin, bkron_shape, bsplit


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


_def([shape, ndim, size], _shape_query)


def _dtype_query(c):
    return c.rebuild(), False  # the batched operand has each example's dtype


_def([iscomplexobj, isrealobj], _dtype_query)


def _one_hot(c):
    if c.batched("num_classes"):
        return None
    return c.rebuild(axis=c.shift_axis("axis", c.arg("x")))


_def([one_hot], _one_hot)


def _flip(c):
    return c.rebuild(axis=c.shift_axis("axis", c.arg("m")))


_def([flip], _flip)


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


_def([reshape], _reshape)


def _ravel(c):
    return N.call(
        "jnp.reshape", [c.arg("a"), gast.Tuple(elts=[c.size, N.const(-1)], ctx=gast.Load())]
    )


_def([ravel], _ravel)


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


_def([transpose], _transpose)
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


swapaxes.def_batch(_axes_args("axis1", "axis2"))
moveaxis.def_batch(_axes_args("source", "destination"))
expand_dims.def_batch(_axes_args("axis"))
diagonal.def_batch(_axes_args("axis1", "axis2"))
trace.def_batch(_axes_args("axis1", "axis2"))
unstack.def_batch(_axes_args("axis"))


def _split(c):
    if c.batched("indices_or_sections"):
        return None
    return c.rebuild(axis=c.shift_axis("axis", c.arg("ary")))


_def([split, array_split], _split)


def _squeeze(c):
    a = c.arg("a")
    ok, axis = c.static("axis")
    if ok and axis is not None:
        return c.rebuild(axis=c.shift_axis("axis", a))
    axis = N.const(None) if ok else c.arg("axis")
    return c.rebuild(axis=N.call("ad.squeeze_axes", [N.call("jnp.shape", [a]), axis]))


_def([squeeze], _squeeze)


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


_def([concatenate], _concat)
_def([stack], _stack)


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


_def([roll], _roll)


def _repeat(c):
    ok, axis = c.static("axis")
    if not ok or c.batched("repeats"):
        return None
    if axis is None:  # repeat of the flattened example
        return c.rebuild(a=_flat_rows(c, c.arg("a")), axis=N.const(1))
    return c.rebuild(axis=c.shift_axis("axis", c.arg("a")))


_def([repeat], _repeat)


def _pad(c):
    if c.batched("pad_width") or c.batched("constant_values"):
        return None
    a = c.arg("array")
    return c.rebuild(pad_width=N.call("ad.batch_pad_width", [c.arg("pad_width"), c.ndim(a)]))


_def([pad], _pad)


def _broadcast_to(c):
    if c.batched("shape"):
        return None
    shape = c.arg("shape")
    lifted = _lifted_to_shape(c, c.arg("array"), shape, "x")
    return c.rebuild(array=lifted, shape=N.call("ad.batch_shape", [c.size, shape]))


_def([broadcast_to], _broadcast_to)


def _as_shape(shape):
    """``shape`` as a tuple (an int becomes a 1-tuple)."""
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(shape)


_reg("ad.as_shape", _as_shape, differentiable=False)


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


_def([array], _array_rule("object"))
_def([asarray], _array_rule("a"))


def _static_nb(c):
    ok, nb = c.static("nb")
    return (ok, 1 if nb is None else nb)


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


_def([diag], _diag_rule)
_def([bdiag], _bdiag_rule)
_def([bdiag_adjoint], _bdiag_adjoint_rule)


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


_def([hstack], _join_rule("hstack"))
_def([vstack], _join_rule("vstack"))
_def([bjoin], _bjoin_rule)
_def([bsplit], _bsplit_rule)


def _batch_reps(reps, ndim):
    """``reps`` of a per-example ``tile`` for the batched operand of rank ``ndim``
    (already lifted to per-example rank ``>= len(reps)``): padded with ones."""
    reps = _as_shape(reps)
    return (1,) * (ndim - len(reps)) + tuple(int(r) for r in reps)


_reg("ad.batch_reps", _batch_reps, differentiable=False)


def _tile_rule(c):
    if c.batched("reps"):
        return None
    reps = c.arg("reps")
    lifted = _lifted_to_shape(c, c.arg("A"), N.clone(reps), "x")
    return c.rebuild(A=lifted, reps=N.call("ad.batch_reps", [reps, c.ndim(lifted)]))


_def([tile], _tile_rule)


def _bkron_shape_rule(c):
    """Nested vmap: the shapes of one outer example (the same for all)."""
    if any(c.batched(n) for n in ("ab", "bb", "which")):
        return None
    return c.rebuild(a=_example(c, c.arg("a")), b=_example(c, c.arg("b"))), False


_def([bkron_shape], _bkron_shape_rule)


def _kron_rule(c):
    a, b = c.arg("a"), c.arg("b")
    flags = [N.const(c.batched("a")), N.const(c.batched("b"))]

    def shape(which):
        return N.call("ad.bkron_shape", [N.clone(a), N.clone(b), *flags, N.const(which)])

    ra = c.let("kron_a", N.call("jnp.reshape", [N.clone(a), shape(0)]))
    rb = c.let("kron_b", N.call("jnp.reshape", [N.clone(b), shape(1)]))
    prod = c.let("kron_ab", gast.BinOp(left=ra, op=gast.Mult(), right=rb))
    return N.call("jnp.reshape", [prod, shape(2)])


_def([kron], _kron_rule)


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


_def([diff], _diff_rule("a"))
_def([diff_adjoint], _diff_rule("g"))
_def([diff_embed], _diff_rule("h"))


def _meshgrid_rule(c):
    """Per-example 1-D inputs: a loop over the examples (each output is a
    broadcast of one input; the stacked loop result is the batched grid)."""
    return None


_def([meshgrid, mesh_tangent], _meshgrid_rule)
