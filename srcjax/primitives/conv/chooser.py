"""``ad.reduce_window_chooser`` (max / min over windows) and its selections: its
derivatives route the tangent / cotangent through the element each window
selected, the first in window order among ties (XLA's select-and-scatter).
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Callable, Optional, Sequence

import numpy as np

from ... import dtypes as _dt
from ..ad import reshape as _reshape
from ..ad.linear import def_transpose_pair
from ..creation import shape as _shape
from ..elementwise import maximum as _maximum
from ..elementwise import minimum as _minimum
from ..registry import Primitive, register
from .canonical import _dilate_pad, _undilate_unpad, conv_p
from .plans import ArrayLike, Padding, _dilate_dim, _stride_dim
from .windows import (
    _identity,
    _window_init,
    _window_kind,
    _window_out_shape,
    _window_plan,
    _window_sum_parts,
)

__all__ = ["reduce_window"]

# -- the chooser (max / min over windows) and its selections


def _select_positions(x: np.ndarray, select_max, window, strides, padding, bd, wd):
    """``(windows' reductions, flat index of each window's selected element in
    the padded, dilated block of one leading row, that block's shape)`` for
    ``x`` of shape ``lead + spatial`` (``len(window)`` spatial axes; the leading
    axes are independent rows)."""
    nsp = len(window)
    lead_shape = x.shape[: x.ndim - nsp]
    sp = x.shape[x.ndim - nsp :]
    rows = int(np.prod(lead_shape, dtype=np.int64))
    kind = "max" if select_max else "min"
    xl = x.reshape((rows,) + sp)
    big = _dilate_pad(xl, 1, bd, padding, _identity(kind, x.dtype))
    out_sp = tuple(
        _stride_dim(p, _dilate_dim(k, r), s)
        for p, k, r, s in zip(big.shape[1:], window, wd, strides)
    )
    return big, out_sp, lead_shape, rows


def _chooser_flat(x, select_max, window, strides, padding, bd, wd):
    """Flat indices (into one row of the padded block) of the selected elements,
    shape ``(rows, *out_spatial)``, the padded block's spatial shape, and the
    layout ``(lead_shape, out_spatial)``: the first extreme in window order."""
    big, out_sp, lead_shape, rows = _select_positions(
        x, select_max, window, strides, padding, bd, wd
    )
    kk = int(np.prod(window, dtype=np.int64))
    if 0 in out_sp or rows == 0 or kk == 0:
        return np.zeros((rows,) + out_sp, np.intp), big.shape[1:], lead_shape, out_sp
    k = _window_arg_extreme(big, select_max, window, strides, wd, out_sp)
    offs = np.unravel_index(k, window)
    pos = []
    for d, (s, r) in enumerate(zip(strides, wd)):
        base = np.arange(out_sp[d]) * s
        base = base.reshape((1,) * (1 + d) + (-1,) + (1,) * (len(out_sp) - d - 1))
        pos.append(base + offs[d] * r)
    flat = np.ravel_multi_index(pos, big.shape[1:]) if pos else np.zeros_like(k)
    return flat, big.shape[1:], lead_shape, out_sp


def _reduce_window_chooser_impl(
    operand, select_max, window_dimensions, window_strides, padding, base_dilation, window_dilation
):
    """Maximum (``select_max``) or minimum over strided, dilated windows of the
    padded, base-dilated ``operand`` (JAX's reduce_window_max / _min with the
    identity as init value: padding and holes never win).

    Args:
        operand: array ``lead + spatial``; the options describe the trailing
            ``len(window_dimensions)`` axes (leading axes are independent).
        window_dimensions, window_strides, base_dilation, window_dilation: tuples
            of positive ints; padding: ``(lo, hi)`` pairs.

    Returns:
        ``lead + out_spatial``, operand's dtype (NaN propagates).
    """
    x = _dt.canonicalize_value(np.asarray(operand))
    if _disjoint_windows(
        window_dimensions, window_strides, padding, base_dilation, window_dilation
    ):
        geo = _blocks(x.shape, window_dimensions, window_strides, window_dilation)
        if not geo.empty:  # (the same folds as below, their slices kept)
            fold = np.maximum if select_max else np.minimum
            big = x.reshape((geo.rows,) + geo.sp)
            out = big[geo.slices[0]].copy()
            for idx in geo.slices[1:]:
                fold(out, big[idx], out=out)
            return out.reshape(geo.lead + geo.out_sp)
    big, out_sp, lead_shape, rows = _select_positions(
        x,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    kk = int(np.prod(window_dimensions, dtype=np.int64))
    if 0 in out_sp or rows == 0 or kk == 0:
        kind = "max" if select_max else "min"
        return np.full(lead_shape + out_sp, _identity(kind, x.dtype), x.dtype)
    red = _window_extreme(
        big, select_max, window_dimensions, window_strides, window_dilation, out_sp
    )
    return red.reshape(lead_shape + out_sp)


def _window_slices(window, strides, wdil, out_sp):
    """For each window offset (in window order), the index of the strided slice of
    a ``rows + spatial`` block holding that offset's element of every window."""
    for offs in np.ndindex(*window):
        idx = (slice(None),)
        for i, r, s, n in zip(offs, wdil, strides, out_sp):
            start = i * r
            idx += (slice(start, start + (n - 1) * s + 1, s),)
        yield idx


def _window_arg_extreme(big, select_max, window, strides, wdil, out_sp):
    """The flat window offset of each window's first maximum (minimum) of ``big``,
    NaN first as ``np.argmax``, by one pass over the offsets (see
    :func:`_window_extreme`). Shape ``rows + out_spatial``, intp."""
    best = None
    for k, idx in enumerate(_window_slices(window, strides, wdil, out_sp)):
        part = big[idx]
        if best is None:
            best = part.copy()
            arg = np.zeros(part.shape, np.intp)
            nan = np.isnan(best) if best.dtype.kind in "fc" else None
            continue
        better = part > best if select_max else part < best
        if nan is not None:  # a NaN wins once, and nothing beats it after
            pn = np.isnan(part)
            better = (better & ~nan) | (pn & ~nan)
            nan |= pn
        np.copyto(best, part, where=better)
        arg[better] = k
    return arg


def _window_extreme(big, select_max, window, strides, wdil, out_sp):
    """The maximum (minimum) over windows of ``big`` (``rows + spatial``, padding
    applied): one strided slice per window offset, folded with ``np.maximum``
    (``np.minimum``) into the output. A reduction over the window axes of a
    sliding-window view is ~60x slower (a 2x2 max-pool of a (32, 16, 32, 32) batch:
    12 ms against 0.2 ms). NaN propagates, as with ``np.max``."""
    fold = np.maximum if select_max else np.minimum
    out = None
    for idx in _window_slices(window, strides, wdil, out_sp):
        part = big[idx]
        if out is None:
            out = part.copy()
        else:
            fold(out, part, out=out)
    return out


def _window_gather_impl(
    x,
    operand,
    select_max,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    """``x`` (a tangent) read where each window of ``operand`` has its selected element
    (JAX's select_and_gather_add; zero where that is padding): the tangent of the
    chooser. ``x`` has ``operand``'s shape; result: the chooser's shape, ``x``'s
    dtype."""
    t = np.asarray(x)
    x = _dt.canonicalize_value(np.asarray(operand))
    if t.shape != x.shape:
        x = np.broadcast_to(x, np.broadcast_shapes(x.shape, t.shape))
        t = np.broadcast_to(t, x.shape)
    flat, block, lead_shape, out_sp = _chooser_flat(
        x,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    rows = flat.shape[0]
    tl = t.reshape((rows,) + t.shape[len(lead_shape) :])
    tb = _dilate_pad(tl, 1, base_dilation, padding, 0).reshape(rows, -1)
    if tb.shape[1] == 0:
        return np.zeros(lead_shape + out_sp, t.dtype)
    got = np.take_along_axis(tb, flat.reshape(rows, -1), axis=1)
    return got.reshape(lead_shape + out_sp)


def _window_scatter_impl(
    x,
    operand,
    select_max,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    """``x`` (a cotangent, the chooser's shape) added into the places of ``operand``
    each window selected (JAX's select_and_scatter_add): the chooser's adjoint.
    Result: ``operand``'s shape, ``x``'s dtype."""
    g = np.asarray(x)
    x = _dt.canonicalize_value(np.asarray(operand))
    nsp = len(window_dimensions)
    if g.ndim - nsp != x.ndim - nsp or g.shape[: g.ndim - nsp] != x.shape[: x.ndim - nsp]:
        lead = np.broadcast_shapes(g.shape[: g.ndim - nsp], x.shape[: x.ndim - nsp])
        x = np.broadcast_to(x, lead + x.shape[x.ndim - nsp :])
        g = np.broadcast_to(g, lead + g.shape[g.ndim - nsp :])
    if x.dtype.kind in "biuf" and _disjoint_windows(
        window_dimensions, window_strides, padding, base_dilation, window_dilation
    ):
        return _scatter_disjoint(
            g, x, select_max, window_dimensions, window_strides, window_dilation
        )
    flat, block, lead_shape, out_sp = _chooser_flat(
        x,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )
    rows = flat.shape[0]
    size = int(np.prod(block, dtype=np.int64))
    sp = x.shape[len(lead_shape) :]
    if size == 0 or flat.size == 0:
        return np.zeros(x.shape, g.dtype)
    idx = (flat.reshape(rows, -1) + (np.arange(rows) * size)[:, None]).ravel()
    gl = g.reshape(-1)
    if g.dtype.kind == "c":
        z = np.bincount(idx, gl.real, rows * size) + 1j * np.bincount(idx, gl.imag, rows * size)
    else:
        z = np.bincount(idx, gl.astype(np.float64), rows * size)
    z = z.astype(g.dtype).reshape((rows,) + tuple(block))
    out = _undilate_unpad(z, 1, sp, base_dilation, padding)
    return out.reshape(x.shape)


def _disjoint_windows(window, strides, padding, bd, wd) -> bool:
    """Whether no element is in two windows and none is padding or a hole of a
    base dilation (a max-pool of windows as long as their strides)."""
    return (
        all(d == 1 for d in bd)
        and all(lo == 0 and hi == 0 for lo, hi in padding)
        and all(s >= _dilate_dim(k, r) for k, s, r in zip(window, strides, wd))
    )


class _Blocks:
    """The geometry of :func:`_disjoint_windows` over ``x``'s trailing
    ``len(window)`` axes: each axis cut into ``out`` blocks of its stride (the
    rest past them in no window), a window being elements ``0, r, ..,
    (k - 1) r`` of its block; :meth:`stack` puts each window's elements last."""

    def __init__(self, shape, window, strides, wd):
        nsp = len(window)
        self.lead = shape[: len(shape) - nsp]
        self.rows = math.prod(self.lead)
        self.sp = shape[len(shape) - nsp :]
        self.window = tuple(window)
        self.out_sp = tuple(
            _stride_dim(n, _dilate_dim(k, r), s) for n, k, r, s in zip(self.sp, window, wd, strides)
        )
        self.empty = 0 in self.out_sp or self.rows == 0 or 0 in window
        self.covered = tuple(o * s for o, s in zip(self.out_sp, strides))
        self.crop = (slice(None),) + tuple(slice(0, c) for c in self.covered)
        self.blocks = (self.rows,) + tuple(v for o, s in zip(self.out_sp, strides) for v in (o, s))
        self.win = (slice(None),) + tuple(
            v for k, r in zip(window, wd) for v in (slice(None), slice(0, (k - 1) * r + 1, r))
        )
        self.last = (0,) + tuple(range(1, 2 * nsp, 2)) + tuple(range(2, 2 * nsp + 1, 2))
        self.kk = math.prod(window)
        self.back = tuple(int(i) for i in np.argsort(self.last))
        self.offsets = np.arange(self.kk)
        self.slices = tuple(_window_slices(window, strides, wd, self.out_sp))

    def stack(self, x):
        """``(rows, *out, K)``: each window's elements, in window order."""
        xb = x.reshape((self.rows,) + self.sp)[self.crop].reshape(self.blocks)[self.win]
        return xb.transpose(self.last).reshape((self.rows,) + self.out_sp + (self.kk,))


_blocks_kept = lru_cache(maxsize=256)(_Blocks)


def _blocks(shape, window, strides, wd) -> _Blocks:
    """:class:`_Blocks`, kept per geometry (built anew for unhashable options)."""
    try:
        return _blocks_kept(shape, window, strides, wd)
    except TypeError:
        return _Blocks(shape, window, strides, wd)


def _scatter_disjoint(g, x, select_max, window, strides, wd):
    """:func:`_window_scatter_impl` for :func:`_disjoint_windows` and a real
    operand: the first extreme of each stacked window by ``np.argmax`` /
    ``np.argmin`` (first in window order, the first NaN winning, as the general
    path), the cotangent written where it selected. Nothing to add up, so the
    values are the cotangent's own, as the general path's one-term sums. R8's
    2x2 max-pool's adjoint: ~80 us the general way (flat indices, a float64
    bincount), most of it Python-level work on an (8, 8, 8, 4) block."""
    geo = _blocks(x.shape, window, strides, wd)
    if geo.empty:
        return np.zeros(x.shape, g.dtype)
    stack = geo.stack(x)
    arg = np.argmax(stack, axis=-1) if select_max else np.argmin(stack, axis=-1)
    hit = arg[..., None] == geo.offsets
    gl = g.reshape((geo.rows,) + geo.out_sp)[..., None]
    vals = np.where(hit, gl, 0).astype(g.dtype, copy=False)
    blk = np.zeros(geo.blocks, g.dtype)
    blk[geo.win] = vals.reshape((geo.rows,) + geo.out_sp + geo.window).transpose(geo.back)
    blk = blk.reshape((geo.rows,) + geo.covered)
    if geo.covered == geo.sp:
        return blk.reshape(x.shape)
    out = np.zeros((geo.rows,) + geo.sp, g.dtype)
    out[geo.crop] = blk
    return out.reshape(x.shape)


reduce_window_chooser = register(
    Primitive("ad.reduce_window_chooser", _reduce_window_chooser_impl, kind="internal")
)
window_gather = register(Primitive("ad.window_gather", _window_gather_impl, kind="internal"))
window_scatter = register(Primitive("ad.window_scatter", _window_scatter_impl, kind="internal"))


def _chooser_vjp(
    g,
    ans,
    operand,
    select_max,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    return window_scatter(
        g,
        operand,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )


def _chooser_jvp(
    t,
    ans,
    operand,
    select_max,
    window_dimensions,
    window_strides,
    padding,
    base_dilation,
    window_dilation,
):
    return window_gather(
        t,
        operand,
        select_max,
        window_dimensions,
        window_strides,
        padding,
        base_dilation,
        window_dilation,
    )


reduce_window_chooser.def_vjp(operand=_chooser_vjp)
reduce_window_chooser.def_jvp(operand=_chooser_jvp)


# ad.window_gather and ad.window_scatter: linear in their first operand, each
# other's transpose, with the same further operands (operand, select_max, the
# window options); ``operand`` only selects (piecewise constant): no rule
def_transpose_pair(window_gather, window_scatter)


def _chooser_samples(rng):
    # distinct values: the selection is locally constant, as finite differences need
    def r(*shape):
        return rng.permutation(int(np.prod(shape))).reshape(shape) * 0.1 + rng.uniform(
            0, 0.01, shape
        )

    return [
        ((r(2, 5), True, (2, 2), (1, 2), ((0, 1), (1, 0)), (1, 1), (1, 1)), {}),
        (
            (
                r(
                    6,
                ),
                False,
                (3,),
                (2,),
                ((1, 1),),
                (1,),
                (1,),
            ),
            {},
        ),
        ((r(4, 3), True, (2, 2), (1, 1), ((1, 0), (0, 1)), (2, 1), (1, 2)), {}),
        (
            (
                r(2, 3, 4),
                False,
                (2, 1, 2),
                (1, 1, 1),
                ((0, 0), (0, 0), (-1, 1)),
                (1, 1, 1),
                (1, 1, 1),
            ),
            {},
        ),
    ]


def _gather_samples(rng):
    out = []
    for (x, *rest), kw in _chooser_samples(rng):
        out.append(((rng.normal(size=x.shape), x, *rest), kw))
    return out


def _scatter_samples(rng):
    out = []
    for (x, *rest), kw in _chooser_samples(rng):
        ans = _reduce_window_chooser_impl(x, *rest)
        out.append(((rng.normal(size=ans.shape), x, *rest), kw))
    return out


reduce_window_chooser.samples = _chooser_samples
window_gather.samples = _gather_samples
window_scatter.samples = _scatter_samples


def _window_batch_rule(first):
    """vmap: leading axes are independent rows, so a batched call is the same
    call with every array argument batched (unbatched ones broadcast)."""
    arrays = [first, "operand"] if first else ["operand"]
    options = [
        "select_max",
        "window_dimensions",
        "window_strides",
        "padding",
        "base_dilation",
        "window_dilation",
    ]

    def rule(c):
        if any(c.batched(p) for p in options):
            return None
        return c.rebuild(**{p: c.materialize(c.arg(p)) for p in arrays})

    return rule


reduce_window_chooser.def_batch(_window_batch_rule(None))
for _p in (window_gather, window_scatter):
    _p.def_batch(_window_batch_rule("x"))


def reduce_window(
    operand: ArrayLike,
    init_value: ArrayLike,
    computation: Callable,
    window_dimensions: Sequence[int],
    window_strides: Optional[Sequence[int]] = None,
    padding: Padding = "VALID",
    base_dilation: Optional[Sequence[int]] = None,
    window_dilation: Optional[Sequence[int]] = None,
) -> np.ndarray:
    """Reduction over strided, dilated windows of the padded operand
    (jax.lax.reduce_window, https://docs.jax.dev/en/latest/_autosummary/jax.lax.reduce_window.html).

    Args:
        operand: array of any rank (one array; JAX's pytrees of operands are not
            supported).
        init_value: scalar; the padding value and the start of every reduction.
        computation: ``lax.add``, ``lax.max`` or ``lax.min`` (or ``jnp.add``,
            ``jnp.maximum``, ``jnp.minimum``, ``operator.add``).
        window_dimensions: one positive int per axis of ``operand``.
        window_strides, base_dilation, window_dilation: None (ones) or one
            positive int per axis.
        padding: ``"VALID"`` (default), ``"SAME"``, ``"SAME_LOWER"`` or ``(lo, hi)``
            pairs, one per axis.

    Returns:
        Array of ``operand``'s dtype, axis ``d`` of size ``max(0, (dilated n + lo
        + hi - dilated window) // stride + 1)``. Average pooling is
        ``reduce_window(x, 0., lax.add, ...) / window_size``.

    Raises:
        NotImplementedError for another ``computation``; TypeError/ValueError for
        options that do not match the operand (JAX's checks).

    Derivatives: add is a convolution with a kernel of ones (its derivatives are
    convolutions); max/min send the cotangent to the element each window
    selected (the first among ties), as JAX. An ``init_value`` other than the
    identity enters once per window, as on JAX's CPU backend: ``init + sum`` of
    the operand's elements (padding adds nothing), ``max(init, max)``.
    """
    kind = _window_kind(computation)
    identity = _window_init(kind, operand, init_value)
    plan = _window_plan(
        _shape(operand), window_dimensions, window_strides, padding, base_dilation, window_dilation
    )
    if kind == "add":
        parts = _window_sum_parts(_shape(operand), operand, plan)
        y = conv_p(_reshape(operand, parts[0]), parts[1], plan[1], plan[2], plan[3], plan[4], 1, 1)
        out = _reshape(y, _window_out_shape(_shape(y)))
        if not identity:
            out = out + init_value
    else:
        out = reduce_window_chooser(
            operand, kind == "max", plan[0], plan[1], plan[2], plan[3], plan[4]
        )
        if not identity:
            if kind == "max":
                out = _maximum(out, init_value)
            else:
                out = _minimum(out, init_value)
    return out
