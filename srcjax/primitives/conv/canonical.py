"""The canonical convolution ``ad.conv`` (``lhs`` ``(N, C, *spatial)``, ``rhs``
``(O, I, *window)``, explicit padding): its implementation, its derivative rules
(convolutions again, differentiable to any order) and its batching rule (the
vmapped axis folded into the convolution).
"""

from __future__ import annotations

from typing import Any, Callable

import gast
import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from ... import dtypes as _dt
from ...frontend import nodes as N
from ..ad import reshape as _reshape
from ..creation import shape as _shape
from ..registry import Primitive, register
from ..structural import flip as _flip
from ..structural import swapaxes as _swapaxes
from ..structural import transpose as _transpose
from .gather import conv_by_gather, gather_plan
from .plans import (
    _batch_out_shape_impl,
    _batch_plan_impl,
    _conv_dtype_impl,
    _conv_out_spatial,
    _conv_plan_impl,
    _conv_transpose_plan_impl,
    _dilate_dim,
    _lhs_adjoint_plan_impl,
    _rhs_adjoint_plan_impl,
)

# ---------------------------------------------------------------------------
# the canonical convolution


def _placement(n: int, d: int, lo: int, size: int):
    """Where items ``0..n-1`` of an axis land after dilation by ``d`` and padding
    ``lo`` in an axis of ``size``: ``(source slice, destination slice)``, or None
    when none lands inside."""
    if n == 0 or size <= 0:
        return None
    first = max(0, -(lo // d))  # ceil(-lo / d), at least 0
    last = min(n - 1, (size - 1 - lo) // d) if size - 1 - lo >= 0 else -1
    if last < first:
        return None
    start = lo + first * d
    return slice(first, last + 1), slice(start, start + (last - first) * d + 1, d)


def _placements(lead: int, shape, dil, pads, sizes):
    """``(undilated, dilated)`` index tuples pairing the items of an array of
    ``shape`` (its axes from ``lead`` on) with their places in its dilated and
    padded form of spatial ``sizes`` (:func:`_placement` per axis), or None when
    some axis is cropped away entirely."""
    plain, spread = [slice(None)] * lead, [slice(None)] * lead
    for n, d, (lo, _), size in zip(shape, dil, pads, sizes):
        place = _placement(n, d, lo, size)
        if place is None:
            return None
        plain.append(place[0])
        spread.append(place[1])
    return tuple(plain), tuple(spread)


def _dilate_pad(x: np.ndarray, lead: int, dil, pads, fill) -> np.ndarray:
    """``x`` with its axes from ``lead`` on dilated (``d - 1`` holes between
    neighbours) and padded by ``(lo, hi)`` (negative values crop), the new
    places set to ``fill``."""
    sp = x.shape[lead:]
    if all(d == 1 for d in dil) and all(lo == 0 and hi == 0 for lo, hi in pads):
        return x
    sizes = tuple(max(_dilate_dim(n, d) + lo + hi, 0) for n, d, (lo, hi) in zip(sp, dil, pads))
    out = np.full(x.shape[:lead] + sizes, fill, dtype=x.dtype)
    places = _placements(lead, sp, dil, pads, sizes)
    if places is not None:
        out[places[1]] = x[places[0]]
    return out


def _undilate_unpad(z: np.ndarray, lead: int, shape, dil, pads) -> np.ndarray:
    """The inverse reading of :func:`_dilate_pad`: the entries of ``z`` (its
    axes from ``lead`` on padded and dilated from ``shape``) that hold the
    original items, zero where an item was cropped away."""
    out = np.zeros(z.shape[:lead] + tuple(shape), dtype=z.dtype)
    places = _placements(lead, shape, dil, pads, z.shape[lead:])
    if places is not None:
        out[places[0]] = z[places[1]]
    return out


def _windows(x: np.ndarray, lead: int, window, strides, wdil) -> np.ndarray:
    """A view ``x.shape[:lead] + out_spatial + window`` of the strided, dilated
    windows of ``x``'s axes from ``lead`` on (every window fits)."""
    eff = tuple(_dilate_dim(k, r) for k, r in zip(window, wdil))
    axes = tuple(range(lead, x.ndim))
    v = sliding_window_view(x, eff, axis=axes) if axes else x
    idx = (slice(None),) * lead
    idx += tuple(slice(None, None, s) for s in strides)
    idx += tuple(slice(None, None, r) for r in wdil)
    return v[idx]


def _compute_dtype(dt: np.dtype) -> np.dtype:
    """The dtype a convolution is computed in: float32 for 16-bit floats (as
    XLA:CPU accumulates them), int32 for bool, else ``dt``."""
    if dt.kind == "b":
        return np.dtype(np.int32)
    if dt.kind == "f" and dt.itemsize < 4:
        return np.dtype(np.float32)
    if dt.kind == "V" or dt.name == "bfloat16":
        return np.dtype(np.float32)
    return dt


#: output positions from which the columns layout (C*K, M) beats rows (M, C*K)
#: (measured on 2 cores: a (32, 3, 32, 32) batch with 16 3x3 filters takes ~1 ms
#: that way, 3-18 ms the other; 256 examples of 4x4 the reverse)
_COLUMNS_LAST = 64


def _conv_impl(
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    feature_group_count,
    batch_group_count,
):
    """Canonical convolution (XLA's ConvGeneralDilated with dimension numbers
    ``NC...``/``OI...``/``NC...``).

    Args:
        lhs: ``(N, C, *S)`` array; rhs: ``(O, I, *K)`` array of the same dtype,
            with ``C == I * feature_group_count``.
        window_strides, lhs_dilation, rhs_dilation: one positive int per spatial
            dimension; padding: one ``(lo, hi)`` int pair per spatial dimension
            (negative values crop the dilated ``lhs``).
        feature_group_count, batch_group_count: positive ints, one of them 1.

    Returns:
        ``(N // batch_group_count, O, *out)`` of the operands' dtype, ``out[d] =
        max(0, (dilated S[d] + lo + hi - dilated K[d]) // stride + 1)``.
    """
    lhs = _dt.canonicalize_value(np.asarray(lhs))
    rhs = _dt.canonicalize_value(np.asarray(rhs))
    try:
        plan = gather_plan(
            lhs.shape,
            rhs.shape,
            lhs.dtype,
            rhs.dtype,
            window_strides,
            padding,
            lhs_dilation,
            rhs_dilation,
            feature_group_count,
            batch_group_count,
        )
    except TypeError:  # (options given as lists: the general path below)
        plan = None
    if plan is not None:
        return conv_by_gather(lhs, rhs, plan)
    dt = np.result_type(lhs.dtype, rhs.dtype)
    fgc, bgc = int(feature_group_count), int(batch_group_count)
    n, c = lhs.shape[:2]
    o, i = rhs.shape[:2]
    sp, ks = lhs.shape[2:], rhs.shape[2:]
    out_sp = _conv_out_spatial(sp, ks, window_strides, padding, lhs_dilation, rhs_dilation)
    out_shape = (n // bgc, o) + out_sp
    g = fgc * bgc
    if 0 in out_shape or 0 in ks or i == 0 or c == 0:
        return np.zeros(out_shape, dt)
    cdt = _compute_dtype(dt)
    x = _dilate_pad(lhs.astype(cdt, copy=False), 2, lhs_dilation, padding, 0)
    w = _windows(x, 2, ks, window_strides, rhs_dilation)  # (N, C, *out_sp, *ks)
    nsp = len(sp)
    m = int(np.prod(out_sp, dtype=np.int64))
    kk = int(np.prod(ks, dtype=np.int64))
    ysp = tuple(range(3, 3 + nsp))
    ksp = tuple(range(3 + nsp, 3 + 2 * nsp))
    # groups: (bgc, N / bgc, C) for batch groups, (N, fgc, C / fgc) for feature
    # groups; the group axis is 0 or 1 of ``w``'s three leading axes
    lead = (bgc, n // bgc, c) if bgc > 1 else (n, g, c // g)
    ci = lead[2]
    w = w.reshape(lead + w.shape[2:])
    f = rhs.astype(cdt, copy=False).reshape(g, o // g, ci * kk)
    if m >= _COLUMNS_LAST:
        # many output positions: columns (.., C*K, M), one matmul per example and
        # group straight into the (.., O, M) layout
        cols = w.transpose((0, 1, 2) + ksp + ysp).reshape(lead[:2] + (ci * kk, m))
        if bgc > 1:
            res = np.matmul(f[:, None], cols).transpose(1, 0, 2, 3)  # (N/bgc, g, O/g, M)
        else:
            res = np.matmul(f[None], cols)  # (N, g, O/g, M)
        out = np.ascontiguousarray(res).reshape(out_shape)
    else:
        # few output positions: rows (g, N*M, C*K), one matmul per group
        if bgc > 1:
            cols = w.transpose((0, 1) + ysp + (2,) + ksp).reshape(g, (n // bgc) * m, ci * kk)
        else:
            cols = w.transpose((1, 0) + ysp + (2,) + ksp).reshape(g, n * m, ci * kk)
        res = np.matmul(cols, f.transpose(0, 2, 1))  # (g, out_n * m, o // g)
        res = res.reshape((g, n // bgc, m, o // g)).transpose(1, 0, 3, 2)
        out = np.ascontiguousarray(res).reshape(out_shape)
    if cdt != dt:
        out = (out != 0) if dt.kind == "b" else out.astype(dt)
    return out


conv_p = register(Primitive("ad.conv", _conv_impl, kind="internal"))


def _static(public: str, impl: Callable) -> Primitive:
    p = register(Primitive(public, impl, kind="internal", differentiable=False))
    p.def_batch(lambda c: (c.rebuild(), False))  # shapes and options only: unbatched
    p.static_result = True
    return p


_conv_plan = _static("ad.conv_plan", _conv_plan_impl)
_conv_dtype = _static("ad.conv_dtype", _conv_dtype_impl)
_conv_dtype.facts(from_shapes=True)  # (reads the operands' dtypes only)
_conv_transpose_plan = _static("ad.conv_transpose_plan", _conv_transpose_plan_impl)
_lhs_adjoint_plan = _static("ad.conv_lhs_adjoint_plan", _lhs_adjoint_plan_impl)
_rhs_adjoint_plan = _static("ad.conv_rhs_adjoint_plan", _rhs_adjoint_plan_impl)
_batch_plan = _static("ad.conv_batch_plan", _batch_plan_impl)
_batch_out_shape = _static("ad.conv_batch_out_shape", _batch_out_shape_impl)


# -- derivative rules (convolutions again: differentiable to any order)


def _conv_vjp_lhs(
    g,
    ans,
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    feature_group_count,
    batch_group_count,
):
    plan = _lhs_adjoint_plan(
        _shape(lhs),
        _shape(rhs),
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        feature_group_count,
        batch_group_count,
    )
    kernel = _reshape(_transpose(_reshape(rhs, plan[0]), plan[1]), plan[2])
    kernel = _flip(kernel, plan[3])
    out = conv_p(
        g,
        kernel,
        lhs_dilation,
        plan[4],
        window_strides,
        rhs_dilation,
        feature_group_count * batch_group_count,
        1,
    )
    return _reshape(_transpose(_reshape(out, plan[5]), plan[6]), plan[7])


def _conv_vjp_rhs(
    g,
    ans,
    lhs,
    rhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    feature_group_count,
    batch_group_count,
):
    plan = _rhs_adjoint_plan(
        _shape(lhs),
        _shape(rhs),
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        feature_group_count,
        batch_group_count,
    )
    out = conv_p(
        _swapaxes(lhs, 0, 1),
        _swapaxes(g, 0, 1),
        rhs_dilation,
        plan[0],
        lhs_dilation,
        window_strides,
        plan[1],
        plan[2],
    )
    return _swapaxes(out, 0, 1)


def _conv_jvp_lhs(
    t,
    ans,
    rhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    feature_group_count,
    batch_group_count,
):
    return conv_p(
        t,
        rhs,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        feature_group_count,
        batch_group_count,
    )


def _conv_jvp_rhs(
    t,
    ans,
    lhs,
    window_strides,
    padding,
    lhs_dilation,
    rhs_dilation,
    feature_group_count,
    batch_group_count,
):
    return conv_p(
        lhs,
        t,
        window_strides,
        padding,
        lhs_dilation,
        rhs_dilation,
        feature_group_count,
        batch_group_count,
    )


conv_p.def_vjp(_conv_vjp_lhs, _conv_vjp_rhs)
conv_p.def_jvp(_conv_jvp_lhs, _conv_jvp_rhs)


def _conv_samples(rng):
    def r(*shape):
        return rng.normal(size=shape)

    return [
        # 1-D, stride 2, asymmetric padding
        ((r(2, 3, 7), r(4, 3, 3), (2,), ((1, 2),), (1,), (1,), 1, 1), {}),
        # 2-D, lhs and rhs dilation, a negative (cropping) pad
        ((r(1, 2, 5, 4), r(3, 2, 2, 2), (1, 2), ((2, -1), (1, 1)), (2, 1), (1, 2), 1, 1), {}),
        # feature groups
        ((r(2, 4, 6), r(6, 2, 3), (1,), ((1, 1),), (1,), (2,), 2, 1), {}),
        # batch groups
        ((r(4, 2, 5), r(6, 2, 2), (2,), ((0, 1),), (1,), (1,), 1, 2), {}),
        # 3-D
        (
            (
                r(1, 2, 3, 3, 4),
                r(2, 2, 2, 1, 2),
                (1, 1, 2),
                ((0, 0), (1, 0), (0, 1)),
                (1, 1, 1),
                (1, 1, 1),
                1,
                1,
            ),
            {},
        ),
    ]


conv_p.samples = _conv_samples
_conv_plan.samples = lambda rng: [
    (((2, 3, 5), (4, 3, 2), (1,), "SAME", None, None, None, 1, 1), {})
]
_conv_dtype.samples = lambda rng: [((np.ones(2), np.ones(2), None), {})]
_conv_transpose_plan.samples = lambda rng: [
    (((2, 5, 3), (2, 3, 4), (2,), "SAME", None, None, False), {})
]
_lhs_adjoint_plan.samples = lambda rng: [
    (((2, 3, 5), (4, 3, 2), (1,), ((0, 0),), (1,), (1,), 1, 1), {})
]
_rhs_adjoint_plan.samples = lambda rng: [
    (((2, 3, 5), (4, 3, 2), (1,), ((0, 0),), (1,), (1,), 1, 1), {})
]
_batch_plan.samples = lambda rng: [(((3, 2, 3, 5), (4, 3, 2), True, False, 1, 1), {})]
_batch_out_shape.samples = lambda rng: [
    (((6, 4, 4), _batch_plan_impl((3, 2, 3, 5), (4, 3, 2), True, False, 1, 1)), {})
]


# -- batching: fold the vmapped axis into the convolution


def _item(node: Any, k: int) -> Any:
    return gast.Subscript(value=N.clone(node), slice=N.const(k), ctx=gast.Load())


def _conv_batch_rule(c):
    others = [
        "window_strides",
        "padding",
        "lhs_dilation",
        "rhs_dilation",
        "feature_group_count",
        "batch_group_count",
    ]
    if any(c.batched(p) for p in others):
        return None  # a per-example option: loop over the examples
    lb, rb = c.batched("lhs"), c.batched("rhs")
    lhs, rhs = c.arg("lhs"), c.arg("rhs")
    plan = c.let(
        "conv_fold",
        N.call(
            "ad.conv_batch_plan",
            [
                N.call("jnp.shape", [N.clone(lhs)]),
                N.call("jnp.shape", [N.clone(rhs)]),
                N.const(lb),
                N.const(rb),
                c.arg("feature_group_count"),
                c.arg("batch_group_count"),
            ],
        ),
    )

    def fold(x, k, base):
        if not c.batched(base):
            return x
        a = c.let(base + "_f", N.call("jnp.reshape", [x, _item(plan, k)]))
        a = c.let(base + "_f", N.call("jnp.transpose", [a, _item(plan, k + 1)]))
        return c.let(base + "_f", N.call("jnp.reshape", [a, _item(plan, k + 2)]))

    lf = fold(lhs, 0, "lhs")
    rf = fold(rhs, 3, "rhs")
    y = c.let(
        "conv_y",
        c.rebuild(
            lhs=lf,
            rhs=rf,
            feature_group_count=_item(plan, 6),
            batch_group_count=_item(plan, 7),
        ),
    )
    back = c.let("conv_back", N.call("ad.conv_batch_out_shape", [N.call("jnp.shape", [y]), plan]))
    y = c.let("conv_y", N.call("jnp.reshape", [y, _item(back, 0)]))
    y = c.let("conv_y", N.call("jnp.transpose", [y, _item(back, 1)]))
    return N.call("jnp.reshape", [y, _item(back, 2)])


conv_p.def_batch(_conv_batch_rule)
