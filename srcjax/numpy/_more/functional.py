"""``jax.numpy``'s functional helpers (``apply_along_axis``, ``apply_over_axes``,
``piecewise``) and ``block``, as compositions of primitives."""

from __future__ import annotations

import builtins as _builtins

from ...primitives.ad import broadcast_to, expand_dims, moveaxis, reshape
from ...primitives.creation import asarray, shape
from ...primitives.elementwise import where
from ...primitives.structural import concatenate, stack
from ...primitives.structural import transpose as _transpose
from ._static import _static, norm_axis

# ---------------------------------------------------------------------------
# functional helpers


def _no_extra_args(args, name):
    """JAX's extra positional arguments for the mapped function (unsupported)."""
    if len(args) > 0:
        raise NotImplementedError(
            f"srcjax jnp.{name}: extra positional arguments for the function are not"
            " supported; bind them with a lambda or functools.partial"
        )
    return True


def apply_along_axis(func1d, axis, arr, *args):
    """``func1d`` applied to every 1-D slice of ``arr`` along ``axis``
    (jax.numpy.apply_along_axis): ``func1d(slice, *args)`` must return arrays
    of one shape ``r``; the result has ``arr``'s shape with ``axis`` replaced
    by ``r``. Computed as a loop over the slices (unrolled in transformed
    code); differentiable through ``func1d``. Extra arguments for ``func1d``
    raise NotImplementedError (bind them with a lambda or functools.partial)."""
    _no_extra_args(args, "apply_along_axis")
    a = asarray(arr)
    nd = len(shape(a))
    ax = norm_axis(axis, nd)
    before = shape(a)[:ax]
    after = shape(a)[ax + 1 :]
    rows = reshape(moveaxis(a, ax, -1), (-1, shape(a)[ax]))
    outs = []
    for i in range(shape(rows)[0]):
        outs.append(asarray(func1d(rows[i])))
    res = stack(outs, 0)
    r = shape(res)[1:]
    res = reshape(res, before + after + r)
    nb = len(before)
    na = len(after)
    return _transpose(res, _along_perm(nb, na, len(r)))


def _along_perm_impl(nb, na, nr):
    """Static: the axes order that puts apply_along_axis's result axes (last,
    ``nr`` of them) after the ``nb`` leading ones."""
    return tuple(range(nb)) + tuple(range(nb + na, nb + na + nr)) + tuple(range(nb, nb + na))


_along_perm = _static("ad.more_along_perm", _along_perm_impl)


def apply_over_axes(func, a, axes):
    """``func(a, axis)`` applied for each axis in turn, keeping the rank
    (jax.numpy.apply_over_axes): a result with one axis fewer gets it back
    as length 1. Raises ValueError when ``func`` returns another rank."""
    a = asarray(a)
    for axis in axes:
        b = func(a, axis)
        if len(shape(b)) == len(shape(a)):
            a = b
        elif len(shape(b)) == len(shape(a)) - 1:
            a = expand_dims(b, axis)
        else:
            raise ValueError("function is not returning an array of the correct shape")
    return a


def piecewise(x, condlist, funclist, *args):
    """A piecewise-defined function of ``x`` (jax.numpy.piecewise): where
    ``condlist[i]`` holds (the last true condition wins), ``funclist[i](x)``
    or the constant ``funclist[i]``; elsewhere the extra last entry of
    ``funclist`` (0 if there is none). Result in ``x``'s dtype. Works eagerly
    and under jit/vmap; under grad the functions of the list are run-time
    values srcjax cannot see into, so differentiating through a callable
    piece raises NoDerivativeRuleError (constant pieces are fine). Raises ValueError when ``funclist`` has neither ``len(condlist)`` nor one
    more entries; extra arguments for the functions raise NotImplementedError
    (bind them with a lambda)."""
    _no_extra_args(args, "piecewise")
    x = asarray(x)
    nc = len(condlist)
    nf = len(funclist)
    if nf == nc + 1:
        default = funclist[nc]
    elif nf == nc:
        default = 0
    else:
        raise ValueError(
            f"with {nc} condition(s), either {nc} or {nc + 1} functions are expected; got {nf}"
        )
    out = _piece(default, x)
    for c, f in zip(condlist, funclist):
        out = where(asarray(c, dtype=bool), _piece(f, x), out)
    return out


def _piece(f, x):
    if callable(f):
        return asarray(f(x), dtype=x.dtype)
    return broadcast_to(asarray(f, dtype=x.dtype), shape(x))


def block(arrays):
    """An array assembled from nested lists of blocks (jax.numpy.block): the
    innermost lists are concatenated along the last axis, the next along the
    second to last, and so on (blocks padded to a common rank with leading
    ones). Up to three levels of nesting. Differentiable. Raises ValueError
    for tuples, empty lists or mismatched depths."""
    if isinstance(arrays, tuple):
        raise ValueError(f"jax.numpy.block does not allow tuples, got {arrays}")
    if not isinstance(arrays, list):
        return asarray(arrays)
    depth = _block_depth(arrays)
    if depth == 1:
        return _block_level(arrays, 1, 1)
    if depth == 2:
        return _block_level([_block_level(r, 1, 2) for r in arrays], 2, 2)
    if depth == 3:
        return _block_level(
            [_block_level([_block_level(r, 1, 3) for r in p], 2, 3) for p in arrays], 3, 3
        )
    raise NotImplementedError("srcjax jnp.block: at most three levels of nesting")


def _block_level(xs, level, depth):
    xs = [asarray(x) for x in xs]
    rank = depth
    for x in xs:
        rank = _builtins.max(rank, len(shape(x)))
    xs = [reshape(x, (1,) * (rank - len(shape(x))) + shape(x)) for x in xs]
    return concatenate(xs, axis=-level)


def _block_depth_impl(arrays):
    """Static: the nesting depth of block's lists (JAX's errors)."""

    def walk(xs):
        if isinstance(xs, tuple):
            raise ValueError(f"jax.numpy.block does not allow tuples, got {xs}")
        if not isinstance(xs, list):
            return 0
        if len(xs) == 0:
            raise ValueError("jax.numpy.block does not allow empty list arguments")
        ds = [walk(x) for x in xs]
        if any(d != ds[0] for d in ds[1:]):
            raise ValueError("Mismatched list depths in jax.numpy.block")
        return ds[0] + 1

    return walk(arrays)


_block_depth = _static("ad.more_block_depth", _block_depth_impl)
