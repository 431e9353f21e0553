"""``maximum``, ``minimum``, ``fmax``, ``fmin``, ``clip`` and ``where``."""

from __future__ import annotations

import numpy as np

from ... import dtypes as _dt
from ...dtypes import (
    BINARY_SUSPECT,
)
from ..registry import Primitive, register
from ._base import _binary_impl, _binop, _ew, _ndarray, defderiv
from .logic import isfinite, isnan, isposinf

__all__ = ["clip", "maximum", "minimum", "fmax", "fmin", "where", "nan_to_num"]

# =============================================================================
# Maximum, minimum, clip and where
# =============================================================================
_F32 = np.dtype(np.float32)
_PY_REAL = (int, float)
#: the fewest elements for which a Python-number operand of maximum/minimum is
#: filled into an array first (below it the fill costs more than it saves)
_FILL_MIN = 1024


def _minmax_impl(ufunc, name: str, doc: str):
    """``ufunc`` (np.maximum / np.minimum) with JAX's dtypes, where a Python number
    against a float32 array of ``_FILL_MIN`` elements or more is first filled into
    a float32 array of that shape: NumPy's loop for an array against a scalar
    (stride 0) is 3-5x slower than against an array (ReLU's ``maximum(0, x)`` on
    128x256 float32: 10-14 us, against 2 us plus a 1 us fill). The number in
    float32 is what NumPy's weak promotion makes of it and the operands keep
    their order (NumPy returns the second at a tie of 0.0 and -0.0), so the
    values are the same bits either way."""
    base = _binary_impl(ufunc, name, doc)

    def impl(x, y):
        if type(y) is _ndarray and type(x) in _PY_REAL:
            if y.dtype is _F32 and y.size >= _FILL_MIN and -1e38 < x < 1e38:
                f = np.empty(y.shape, _F32)
                f.fill(x)
                return ufunc(f, y, out=f)
        elif type(x) is _ndarray and type(y) in _PY_REAL:
            if x.dtype is _F32 and x.size >= _FILL_MIN and -1e38 < y < 1e38:
                f = np.empty(x.shape, _F32)
                f.fill(y)
                return ufunc(x, f, out=f)
        return base(x, y)

    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = doc
    return impl


maximum = _binop(
    "jnp.maximum", np.maximum,
    "Elementwise maximum, propagating NaN. At ties the derivative splits 0.5/0.5 (JAX).",
    None, {"fiub": "sj_max({x}, {y})"}, maker=_minmax_impl,
)  # fmt: skip
minimum = _binop(
    "jnp.minimum", np.minimum,
    "Elementwise minimum, propagating NaN. At ties the derivative splits 0.5/0.5 (JAX).",
    None, {"fiub": "sj_min({x}, {y})"}, maker=_minmax_impl,
)  # fmt: skip
fmax = _binop(
    "jnp.fmax", np.fmax, "Elementwise maximum ignoring NaN. At a tie the derivative goes to y (JAX).",
    None, "fmax({x}, {y})",
)  # fmt: skip
fmin = _binop(
    "jnp.fmin", np.fmin, "Elementwise minimum ignoring NaN. At a tie the derivative goes to y (JAX).",
    None, "fmin({x}, {y})",
)  # fmt: skip


def _balanced_eq(x, z, y):
    """``1`` where ``x == z != y``, ``0.5`` where ``x == z == y``, else ``0``, in
    ``z``'s float dtype: the partial of ``z = max(x, y)`` (or ``min``) in ``x``,
    splitting ties evenly as JAX. Piecewise constant (zero derivative)."""
    dt = _dt.to_inexact_dtype(_dt.dtype_of(z))
    eqx = np.equal(x, z)
    # z is max(x, y) or min(x, y) (every caller's), so x == y means x == z == y;
    # the and with x == z below runs only where there is a tie (rare), and keeps
    # the definition for any z (the C form's, tests/test_c_render.py)
    tie = np.equal(x, y)
    # computed in z's dtype (a where of Python floats computes in float64, and
    # its scalar operands make it ~40x slower than these three passes)
    shape = np.shape(eqx)
    if type(eqx) is _ndarray and shape == np.shape(tie):
        r = eqx.astype(dt)  # (the common case: np.broadcast_shapes costs 1.3 us)
    else:
        r = np.empty(np.broadcast_shapes(shape, np.shape(tie)), dt)
        np.copyto(r, eqx)
    if tie.any():
        np.copyto(r, dt.type(0.5), where=np.logical_and(tie, eqx))
    return r


balanced_eq = _ew(
    "ad.balanced_eq", _balanced_eq, differentiable=False,
    c_expr="(({x}) == ({z}) ? (({y}) == ({z}) ? 0.5 : 1.0) : 0.0)",
)  # fmt: skip


def _max_x(g, ans, x, y):
    return g * balanced_eq(x, ans, y)


def _max_y(g, ans, x, y):
    return g * balanced_eq(y, ans, x)


defderiv(maximum, _max_x, _max_y)
defderiv(minimum, _max_x, _max_y)


def _fmax_x(g, ans, x, y):
    # JAX: fmax(x, y) = where((x > y) | isnan(y), x, y): a tie goes to y
    return g * ((x > y) | isnan(y))


def _fmax_y(g, ans, x, y):
    return g * ~((x > y) | isnan(y))


def _fmin_x(g, ans, x, y):
    return g * ((x < y) | isnan(y))


def _fmin_y(g, ans, x, y):
    return g * ~((x < y) | isnan(y))


defderiv(fmax, _fmax_x, _fmax_y)
defderiv(fmin, _fmin_x, _fmin_y)


def _clip(x, min=None, max=None):  # noqa: A002 (JAX's parameter names)
    """Clip ``x`` to ``[min, max]`` (either bound may be ``None``), as JAX:
    ``minimum(maximum(x, min), max)``, so at ``x == min`` or ``x == max`` the
    derivative is 0.5 (ties split)."""
    r = x
    if min is not None:
        r = np.maximum(r, min)
    if max is not None:
        r = np.minimum(r, max)
    if r is x:
        return np.asarray(x, dtype=_dt.dtype_of(x))[()] if type(x) is not _ndarray else x
    if r.dtype in BINARY_SUSPECT:
        return r.astype(_dt.result_type(x, *[b for b in (min, max) if b is not None]))
    return r


clip = _ew(
    "jnp.clip", _clip, np.clip, broadcasting=True,
    c_expr={"fiu": "sj_min(sj_max({x}, {min}), {max})"},
).facts(shape_changing=True)  # fmt: skip


def _clip_partial(x, min, max, wrt):  # noqa: A002
    """Partial derivative of ``clip(x, min, max)`` in the operand named ``wrt``
    (``"x"``, ``"min"`` or ``"max"``), as for ``minimum(maximum(x, min), max)``
    with ties split 0.5/0.5. Piecewise constant (zero derivative)."""
    m = x if min is None else np.maximum(x, min)
    out = m if max is None else np.minimum(m, max)
    if wrt == "max":
        return _balanced_eq(max, out, m)
    d_out = 1.0 if max is None else _balanced_eq(m, out, max)
    if wrt == "x":
        d_m = 1.0 if min is None else _balanced_eq(x, m, min)
    else:
        d_m = _balanced_eq(min, m, x)
    r = np.asarray(d_m * d_out, dtype=_dt.to_inexact_dtype(_dt.dtype_of(out)))
    return r if r.ndim else r[()]


clip_partial = _ew("ad.clip_partial", _clip_partial, differentiable=False)


def _clip_x(g, ans, x, min=None, max=None):  # noqa: A002
    return g * clip_partial(x, min, max, "x")


def _clip_min(g, ans, x, min=None, max=None):  # noqa: A002
    return g * clip_partial(x, min, max, "min")


def _clip_max(g, ans, x, min=None, max=None):  # noqa: A002
    return g * clip_partial(x, min, max, "max")


defderiv(clip, _clip_x, _clip_min, _clip_max)
clip.samples = lambda rng: [
    ((rng.uniform(-2, 2, s), -0.5, 0.7), {}) for s in [(), (3,), (2, 3)]
] + [
    ((rng.uniform(-2, 2, (2, 3)), rng.uniform(-1.5, -0.2, (3,)), rng.uniform(0.2, 1.5, (2, 1))), {}),
    ((rng.uniform(-2, 2, (4,)),), {"min": rng.uniform(-1, 0, (4,))}),
    ((rng.uniform(-2, 2, (4,)),), {"max": rng.uniform(0, 1, (4,))}),
]  # fmt: skip


def _where(condition, x=None, y=None, *, size=None, fill_value=None):
    """``x`` where ``condition`` is true, else ``y`` (broadcasting; JAX dtype
    promotion of ``x`` and ``y``). With only ``condition``, the indices of its
    nonzero elements (``jnp.nonzero``), padded or cut to ``size`` if given.

    Derivatives follow JAX: ``where(condition, g, 0)`` to ``x`` and
    ``where(condition, 0, g)`` to ``y``, so a NaN or infinite partial in the
    branch not taken still reaches the gradient through its own rule."""
    if x is None and y is None:
        return _nonzero(condition, size, fill_value)
    if x is None or y is None:
        raise ValueError("Either both or neither of the x and y arguments should be provided")
    if type(condition) is np.ndarray and condition.dtype.kind == "b":
        if type(x) is np.ndarray and type(y) in (int, float) and y == 0:
            if x.dtype in _ZERO_FILL and x.shape == condition.shape:
                return _zero_fill(x, condition, y, False)
        elif type(y) is np.ndarray and type(x) in (int, float) and x == 0:
            if y.dtype in _ZERO_FILL and y.shape == condition.shape:
                return _zero_fill(y, condition, x, True)
    r = np.where(condition, x, y)
    if r.dtype in BINARY_SUSPECT:
        dt = _dt.result_type(x, y)
        if dt != r.dtype:
            return r.astype(dt)
    return r


#: dtypes of the arrays :func:`_zero_fill` takes (a Python 0 is weak: the result
#: keeps the array's dtype; float64 is narrowed unless x64 is on: the general path)
_ZERO_FILL = frozenset(np.dtype(t) for t in (np.float16, np.float32))


def _zero_fill(a, condition, zero, where_true):
    """``np.where(condition, zero, a)`` (``where_true``) or ``np.where(condition,
    a, zero)``, bit for bit, for a float array ``a`` and a bool mask of its
    shape: a copy of ``a`` with ``zero`` (a Python 0 or -0.0) written only where
    the mask asks for it, and nothing written when no element needs it (the
    derivative rules' ``where(isposinf(x), 0, t)``, whose mask is almost always
    all false: ~1 us instead of ~3.5 us on 16 x 200 float32)."""
    r = a.copy()
    n = np.count_nonzero(condition)
    if where_true and n:
        np.copyto(r, zero, where=condition)
    elif not where_true and n < condition.size:
        np.copyto(r, zero, where=~condition)
    return r


# jit's form of ``where(m, 0, t)`` / ``where(m, t, 0)`` inside a loop whose mask
# ``m`` does not change (optimize/masks.py; the derivative rules' masks, such as
# logaddexp's ``isposinf`` in R6's Newton-CG loop, are nearly always all false):
# ``n = ad.mask_count(m)`` is counted once, before the loop, and each trip only
# copies ``t`` (and writes the zeros when ``n`` says some are needed).


def _mask_count(condition):
    """How many elements of the bool mask ``condition`` are true."""
    return np.count_nonzero(condition)


def _zero_where_counted(condition, n, a, where_true):
    """:func:`_zero_fill` given ``n``, the :func:`_mask_count` of ``condition``.
    With nothing to zero it is ``a`` itself: jit's code (its only caller) never
    writes into an array, and the call boundary copies a result that aliases an
    argument (R6: two copies of 16 x 200 per CG trip saved)."""
    if type(a) is np.ndarray and a.dtype in _ZERO_FILL and a.shape == condition.shape:
        if where_true and n:
            r = a.copy()
            np.copyto(r, 0, where=condition)
            return r
        if not where_true and n < condition.size:
            r = a.copy()
            np.copyto(r, 0, where=~condition)
            return r
        return a
    return where(condition, 0, a) if where_true else where(condition, a, 0)


def _nonzero(condition, size, fill_value):
    idx = np.nonzero(condition)
    dt = _dt.default_int()
    if size is not None:
        fill = 0 if fill_value is None else fill_value
        fills = fill if isinstance(fill, (tuple, list)) else (fill,) * len(idx)
        out = []
        for i, f in zip(idx, fills):
            i = i[:size]
            if len(i) < size:
                i = np.concatenate([i, np.full(size - len(i), f, dtype=i.dtype)])
            out.append(i)
        idx = tuple(out)
    return tuple(i.astype(dt, copy=False) for i in idx)


where = _ew(
    "jnp.where", _where, np.where, broadcasting=True,
    c_expr={"fiubc": "({condition} ? {x} : {y})"},
).facts(shape_changing=True)  # fmt: skip


def _where_x(g, ans, condition):
    return where(condition, g, 0)


def _where_y(g, ans, condition):
    return where(condition, 0, g)


defderiv(where, None, _where_x, _where_y)
where.samples = lambda rng: [
    ((rng.uniform(-1, 1, s) > 0, rng.uniform(-2, 2, s), rng.uniform(-2, 2, s)), {})
    for s in [(), (3,), (2, 3)]
] + [
    ((rng.uniform(-1, 1, (2, 3)) > 0, rng.uniform(-2, 2, (3,)), rng.uniform(-2, 2, (2, 1))), {}),
    ((rng.uniform(-1, 1, (3,)) > 0, rng.uniform(-2, 2, (2, 3)), rng.uniform(-2, 2, ())), {}),
]  # fmt: skip


mask_count = register(
    Primitive("ad.mask_count", _mask_count, kind="internal", differentiable=False)
).facts(pure=True)
zero_where_counted = register(
    Primitive("ad.zero_where_counted", _zero_where_counted, kind="internal", differentiable=False)
).facts(array_result=True, pure=True)
mask_count.samples = lambda rng: [((rng.uniform(-1, 1, (2, 3)) > 0,), {})]
zero_where_counted.samples = lambda rng: [
    ((m, int(m.sum()), rng.normal(size=(2, 3)).astype(np.float32), t), {})
    for m in [rng.uniform(-1, 1, (2, 3)) > 0]
    for t in (True, False)
]


def _replace_inf(x):
    """``x`` with ``+inf`` replaced by 0 (keeps ``logaddexp``'s derivative finite
    at infinite inputs, as JAX)."""
    if type(x) is np.ndarray and x.dtype in _ZERO_FILL:
        return _zero_fill(x, x == np.inf, 0, True)  # (x == inf: isposinf of a float)
    return np.where(np.isposinf(x), 0, x)


replace_inf = _ew("ad.replace_inf", _replace_inf, c_expr="(isinf({x}) && {x} > 0 ? 0 : {x})")


def _replace_inf_x(g, ans, x):
    return where(isposinf(x), 0, g)


defderiv(replace_inf, _replace_inf_x)


def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """``x`` with NaN replaced by ``nan`` and infinities by ``posinf`` /
    ``neginf`` (default: the largest finite values of the dtype). The
    derivative is ``g`` at finite entries and 0 elsewhere."""
    x = np.asarray(x) if type(x) is not _ndarray else x
    return _dt.canonicalize_value(
        np.nan_to_num(x, copy=True, nan=nan, posinf=posinf, neginf=neginf)
    )


nan_to_num = _ew("jnp.nan_to_num", _nan_to_num, np.nan_to_num)


def _nan_to_num_x(g, ans, x):
    return where(isfinite(x), g, 0)


defderiv(nan_to_num, _nan_to_num_x)


# JAX computes nan_to_num with a strongly typed constant or conversion: strongly typed
# results whatever the operands' weak types (registry.Primitive.weak_result)
nan_to_num.facts(weak_result=False)
