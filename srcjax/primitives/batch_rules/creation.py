"""Batching rules of creation primitives (``jnp.full``, ``jnp.linspace``, index
creation) whose operands only give shapes and dtypes."""

from __future__ import annotations

import gast

from ... import dtypes as _dt
from ...frontend import nodes as N
from ..creation import (
    _dtype_or,
    arange,
    diag_indices,
    empty,
    eye,
    full,
    identity,
    linspace,
    mesh_axis_shape,
    ones,
    tril_indices,
    triu_indices,
    zeros,
)
from ._base import _def, _lifted_to_shape, _reg, _unbatched_result


def _static_creation(c):
    """Creation from shapes (``zeros(shape)``): a shape that differs between
    examples cannot be vectorized; the pass falls back to a loop (whose stack
    then fails unless every example has the same shape, as in JAX)."""
    return None


_def(
    [zeros, ones, empty, arange, eye, identity],
    _static_creation,
)


def _full_rule(c):
    if c.batched("shape"):
        return None
    shape = c.arg("shape")
    lifted = _lifted_to_shape(c, c.arg("fill_value"), N.clone(shape), "fill")
    return c.rebuild(shape=N.call("ad.batch_shape", [c.size, shape]), fill_value=lifted)


_def([full], _full_rule)


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
    s_al = c.let("lin_start_al", N.call("ad.expand_to_rank", [N.clone(start), rank_of(stop)]))
    e_al = c.let("lin_stop_al", N.call("ad.expand_to_rank", [N.clone(stop), rank_of(start)]))
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


_def([linspace], _linspace_rule)
_def([triu_indices, tril_indices, diag_indices], _static_creation)
# static helpers whose operands only stand for a rank, a shape or a dtype: the
# same result for every example
_def([mesh_axis_shape], _unbatched_result)
