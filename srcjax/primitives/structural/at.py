"""The functional updates ``x.at[idx].set/add/multiply/min/max(v)``, with their
derivatives (``multiply`` with duplicate indices by a segmented scan), and the
gather ``x.at[idx].get(mode=, fill_value=)``.

Out of bounds as JAX (:mod:`srcjax.primitives.ad.oob`): each primitive takes
JAX's ``mode``; an update at an index out of bounds is dropped (the default,
``"drop"``, ``"fill"``, ``"promise_in_bounds"``) or its index clamped
(``"clip"``). The rules pass ``mode`` on, and read the cotangent at the slots
the updates wrote with :func:`at_slots_get` (zero for a dropped update). In
bounds, every primitive is NumPy's indexing as before (tried first).
"""

from __future__ import annotations

import builtins

import numpy as np

from srcjax import dtypes as _dt
from srcjax.primitives.ad import (
    flat_positions,
    index_adjoint,
    index_take,
    is_basic_index,
    unbroadcast,
    zeros_like,
)
from srcjax.primitives.ad.indexing import _index_take
from srcjax.primitives.ad.oob import (
    gather_clamped,
    gather_filled,
    pad,
    pad_index,
    scalar_only,
    scatter_dropped,
)

from ._common import _internal, _rand

# ---------------------------------------------------------------------------
# astype (jnp.astype / x.astype: the ad.astype primitive)

# ``astype`` is defined in ad.py (public ``ad.astype``) and re-exported here.


# ---------------------------------------------------------------------------
# getitem samples live in ad.py; .at[idx].<op>(v)


def _at_prepare(x, v):
    # C order: ``ufunc.at`` below writes through ``out.reshape(-1)``, which is a
    # view only of a C-contiguous array (``np.array(x, copy=True)`` keeps the
    # layout of ``x``: a broadcast base under vmap, a transposed one, would get
    # its updates written into a temporary copy and lost)
    out = np.array(x, copy=True, order="C")
    if type(v) is int:
        return out, _int_update(v, out.dtype)
    return out, np.asarray(v)


def _int_update(v, dtype):
    """A Python int update as JAX converts it: an int32 first while x64 is off
    (uint32 ``x``: a uint32; beyond either, JAX's OverflowError, also for a float
    ``x``), then ``x``'s dtype, wrapping (int8 ``x.at[0].set(300)`` writes 44)."""
    if not _dt.x64_enabled():
        top = 2**32 if dtype == np.uint32 else 2**31
        if not -(2**31) <= v < top:
            raise OverflowError(f"Python int {v} too large to convert to int32")
    with np.errstate(over="ignore"):
        return np.asarray(v).astype(dtype)


def _set_raw(x, idx, v):
    out, v = _at_prepare(x, v)
    out[idx] = v
    return out


def _at_set(x, idx, v, mode="drop"):
    """``x.at[idx].set(v)``: a copy of ``x`` with ``x[idx]`` replaced by ``v``
    (duplicate indices: the last write wins; ``mode`` as JAX: an out-of-bounds
    update is dropped, or with ``"clip"`` written at the clamped index)."""
    try:
        return _set_raw(x, idx, v)
    except IndexError:
        return scatter_dropped(_set_raw, x, idx, v, mode=mode)


def _at_ufunc(ufunc, x, idx, v, mode="drop"):
    try:
        return _ufunc_raw(ufunc, x, idx, v)
    except IndexError:
        return scatter_dropped(
            lambda x_, i_, v_: _ufunc_raw(ufunc, x_, i_, v_), x, idx, v, mode=mode
        )


def _ufunc_raw(ufunc, x, idx, v):
    out, v = _at_prepare(x, v)
    if is_basic_index(idx):
        sub = out[idx]
        if np.ndim(sub) == 0:
            out[idx] = ufunc(sub, v)
        else:
            ufunc(sub, v, out=sub, casting="unsafe")
        return out
    pos = flat_positions(out.shape, idx)
    ufunc.at(out.reshape(-1), pos.reshape(-1), np.broadcast_to(v, pos.shape).reshape(-1))
    return out


def _at_add(x, idx, v, mode="drop"):
    """``x.at[idx].add(v)``: a copy of ``x`` with ``v`` added at ``idx``; duplicate
    indices accumulate (``np.add.at``)."""
    return _at_ufunc(np.add, x, idx, v, mode)


def _at_multiply(x, idx, v, mode="drop"):
    """``x.at[idx].multiply(v)``; duplicate indices multiply repeatedly."""
    return _at_ufunc(np.multiply, x, idx, v, mode)


def _at_min(x, idx, v, mode="drop"):
    """``x.at[idx].min(v)``: elementwise minimum of ``x[idx]`` and ``v``."""
    return _at_ufunc(np.minimum, x, idx, v, mode)


def _at_max(x, idx, v, mode="drop"):
    """``x.at[idx].max(v)``: elementwise maximum of ``x[idx]`` and ``v``."""
    return _at_ufunc(np.maximum, x, idx, v, mode)


at_set = _internal("ad.at_set", _at_set)
at_add = _internal("ad.at_add", _at_add)
at_multiply = _internal("ad.at_multiply", _at_multiply)
at_min = _internal("ad.at_min", _at_min)
at_max = _internal("ad.at_max", _at_max)


def _at_result_shape(avals):
    """An update's result is a copy of ``x`` (its shape and dtype: ``casting=
    "unsafe"``) whatever the index, also one jit knows only at run time (a loop
    counter, ``i - 2``). Arrays only: a Python number's weak type is left to
    the stand-ins."""
    x = avals.get("x")
    if not (hasattr(x, "shape") and hasattr(x, "dtype")) or getattr(x, "ptype", True):
        return None
    if getattr(x, "weak_type", True):
        return None
    return tuple(x.shape), x.dtype


for _p in (at_set, at_add, at_multiply, at_min, at_max):
    _p.kind = "structural"
    _p.facts(result_shape=_at_result_shape)


def _at_get(x, idx, mode=None, fill_value=None):
    """``x.at[idx].get(mode=mode, fill_value=fill_value)``: ``x[idx]`` with JAX's
    out-of-bounds modes: an integer index out of bounds is clamped (the default,
    ``"clip"``, ``"promise_in_bounds"``) or gives ``fill_value`` (``"fill"``,
    ``"drop"``; default NaN for inexact dtypes, the minimum of a signed integer
    dtype, the maximum of an unsigned one, True for bool)."""
    try:
        return np.asarray(x)[idx]
    except IndexError:
        if mode in ("fill", "drop"):
            return gather_filled(x, idx, fill_value)
        return gather_clamped(x, idx)


at_get = _internal("ad.at_get", _at_get)
at_get.kind = "structural"


def _at_get_vjp(g, ans, x, idx, mode=None, fill_value=None):
    return index_adjoint(g, x, idx, mode)


def _at_get_jvp(t, ans, x, idx, mode=None, fill_value=None):
    return at_get(t, idx, mode, 0.0)


at_get.def_vjp(_at_get_vjp)
at_get.def_jvp(_at_get_jvp)


def _at_slots(x, idx, v, *more):
    """Flat positions in ``x`` of the update elements of ``x.at[idx]`` (shape of
    ``x[idx]``) and ``v`` (and ``more``) broadcast to that shape."""
    pos = flat_positions(np.shape(x), idx)
    return pos, [np.broadcast_to(np.asarray(a), pos.shape) for a in (v, *more)]


def _winners_raw(x, idx, v):
    """Static: 1 where an update element of ``x.at[idx].set(v)`` is the one that
    lands in ``ans`` (duplicate indices: one write wins, found by the same
    assignment ``at_set`` does), else 0; shape of ``x[idx]``."""
    pos, _ = _at_slots(x, idx, v)
    dtype = np.result_type(_dt.default_float(), np.asarray(v).dtype)
    if pos.size == np.unique(pos).size:
        return np.ones(pos.shape, dtype)
    ids = np.full(np.shape(x), -1, dtype=np.int64)
    ids[idx] = np.arange(pos.size).reshape(pos.shape)
    return (ids[idx] == np.arange(pos.size).reshape(pos.shape)).astype(dtype)


def _at_set_winners(x, idx, v, mode="drop"):
    try:
        return _winners_raw(x, idx, v)
    except IndexError:
        won = scatter_dropped(_winners_raw, x, idx, v, cut=False, mode=mode)
        if mode == "clip" or (mode == "promise_in_bounds" and scalar_only(np.shape(x), idx)):
            return won  # (JAX: with scalar indices the promise's transpose reads clamped)
        # a dropped update wins nowhere (JAX: the update ids scattered in the
        # same mode drop it too), also under "promise_in_bounds" with index arrays
        new, axes = pad_index(np.shape(x), idx)
        return won * pad(np.ones(np.shape(x), won.dtype), axes, 0)[new]


_at_set_winners.__doc__ = _winners_raw.__doc__
at_set_winners = _internal("ad.at_set_winners", _at_set_winners, differentiable=False)


def _at_set_vjp_x(g, ans, x, idx, v, mode="drop"):
    return at_set(g, idx, 0.0, mode)


def _at_set_vjp_v(g, ans, x, idx, v, mode="drop"):
    return unbroadcast(index_take(g, idx, mode) * at_set_winners(x, idx, v, mode), v)


def _at_set_jvp_x(t, ans, x, idx, v, mode="drop"):
    return at_set(t, idx, 0.0, mode)


def _at_set_jvp_v(t, ans, x, idx, v, mode="drop"):
    return at_set(zeros_like(ans), idx, t, mode)


at_set.def_vjp(x=_at_set_vjp_x, v=_at_set_vjp_v)
at_set.def_jvp(x=_at_set_jvp_x, v=_at_set_jvp_v)


def _at_add_vjp_x(g, ans, x, idx, v, mode="drop"):
    return g


def _at_add_vjp_v(g, ans, x, idx, v, mode="drop"):
    return unbroadcast(index_take(g, idx, mode), v)


def _at_add_jvp_x(t, ans, x, idx, v, mode="drop"):
    return t


def _at_add_jvp_v(t, ans, x, idx, v, mode="drop"):
    return at_add(zeros_like(ans), idx, t, mode)


at_add.def_vjp(x=_at_add_vjp_x, v=_at_add_vjp_v)
at_add.def_jvp(x=_at_add_jvp_x, v=_at_add_jvp_v)


# ``x.at[idx].multiply(v)`` with duplicate indices multiplies every update of a
# slot in: ans[p] = x[p] * prod(v[k] for pos[k] == p). So d ans[p] / d v[k] is
# x[p] times the product of the OTHER updates of that slot (JAX: scatter_mul's
# derivative), computed here without dividing (zeros are fine) by a segmented
# scan, and differentiated again with the same scan over truncated
# multivariate dual numbers (one direction per derivative order).


def _jet_mul(a, b):
    """Product of two truncated multivariate dual numbers: lists indexed by the
    bit set of directions, ``(ab)[m] = sum over s within m of a[s] * b[m - s]``."""
    out = []
    for m in range(len(a)):
        acc = None
        s = m
        while True:
            term = a[s] * b[m ^ s]
            acc = term if acc is None else acc + term
            if s == 0:
                break
            s = (s - 1) & m
        out.append(acc)
    return out


def _jet_exclusive_scan(jet, seg):
    """Exclusive product of each element's predecessors in its segment (``seg``
    sorted, one id per element), by doubling: O(n log(longest segment))."""
    n = seg.size
    incl = [np.array(c) for c in jet]
    d = 1
    longest = np.max(np.unique(seg, return_counts=True)[1]) if n else 0
    while d < longest:
        same = np.zeros(n, bool)
        same[d:] = seg[d:] == seg[:-d]
        prev = [np.concatenate([np.zeros(d, c.dtype), c[:-d]]) for c in incl]
        prod = _jet_mul(incl, prev)
        incl = [np.where(same, pc, c) for pc, c in zip(prod, incl)]
        d *= 2
    first = np.ones(n, bool)
    first[1:] = seg[1:] != seg[:-1]
    out = []
    for m, c in enumerate(incl):
        shifted = np.concatenate([np.zeros(1, c.dtype), c[:-1]]) if n else c
        out.append(np.where(first, 1.0 if m == 0 else 0.0, shifted).astype(c.dtype))
    return out


def _at_multiply_others_jet(x, idx, v, dirs, mode="drop"):
    try:
        return _others_jet_raw(x, idx, v, dirs)
    except IndexError:
        return scatter_dropped(
            lambda x_, i_, v_: _others_jet_raw(x_, i_, v_, dirs), x, idx, v, cut=False, mode=mode
        )


def _others_jet_raw(x, idx, v, dirs):
    """For each update element ``k`` of ``x.at[idx].multiply(v)`` (shape of
    ``x[idx]``): the product of the other updates into the same slot,
    differentiated once in each direction of ``dirs`` (multilinear in them)."""
    pos, arrs = _at_slots(x, idx, v, *dirs)
    dtype = np.result_type(*arrs)
    if dtype.kind not in "fc":
        dtype = np.result_type(dtype, _dt.default_float())
    flat = pos.reshape(-1)
    k = len(dirs)
    if flat.size == np.unique(flat).size:
        # every update has a slot of its own: the product of the others is 1
        return np.full(pos.shape, 1.0 if k == 0 else 0.0, dtype)
    order = np.argsort(flat, kind="stable")
    seg = flat[order]
    # element k of the jet: bit i set = differentiated in direction i
    jet = [np.zeros(flat.size, dtype) for _ in range(1 << k)]
    jet[0] = arrs[0].reshape(-1)[order].astype(dtype)
    for i, t in enumerate(arrs[1:]):
        jet[1 << i] = t.reshape(-1)[order].astype(dtype)
    before = _jet_exclusive_scan(jet, seg)
    rev = [c[::-1] for c in jet]
    after = [c[::-1] for c in _jet_exclusive_scan(rev, seg[::-1])]
    full = _jet_mul(before, after)[-1]
    out = np.empty(flat.size, dtype)
    out[order] = full
    return out.reshape(pos.shape)


def _at_multiply_others(x, idx, v, mode="drop"):
    """Static in ``x`` (its shape only): for each update element of
    ``x.at[idx].multiply(v)``, the product of the other updates into its slot
    (1 where indices do not repeat); shape of ``x[idx]``."""
    return _at_multiply_others_jet(x, idx, v, (), mode)


def _at_multiply_others_d1(x, idx, v, t, mode="drop"):
    """Derivative of :func:`_at_multiply_others` in ``v`` along ``t``."""
    return _at_multiply_others_jet(x, idx, v, (t,), mode)


def _at_multiply_others_d2(x, idx, v, t, s, mode="drop"):
    """Second derivative of :func:`_at_multiply_others` in ``v`` along ``t``, ``s``."""
    return _at_multiply_others_jet(x, idx, v, (t, s), mode)


def _at_multiply_others_d3_check(x, idx, v, mode="drop"):
    """Zeros like ``x[idx]`` when no slot of ``x.at[idx]`` gets more than three
    updates (then the third derivative of the product of the others is zero);
    otherwise not implemented. Out-of-bounds updates as ``mode`` does."""
    try:
        return _d3_check_raw(x, idx, v)
    except IndexError:
        return scatter_dropped(_d3_check_raw, x, idx, v, cut=False, mode=mode)


def _d3_check_raw(x, idx, v):
    """Zeros like ``x[idx]`` when no slot of ``x.at[idx]`` gets more than three
    updates (then the third derivative of the product of the others is zero);
    otherwise not implemented."""
    pos, _ = _at_slots(x, idx, v)
    flat = pos.reshape(-1)
    if flat.size and np.max(np.unique(flat, return_counts=True)[1]) > 3:
        raise NotImplementedError(
            "srcjax: fourth and higher derivatives of x.at[idx].multiply(v) with more "
            "than three updates into one position are not implemented"
        )
    return np.zeros(pos.shape, np.result_type(_dt.default_float(), np.asarray(v).dtype))


at_multiply_others = _internal("ad.at_multiply_others", _at_multiply_others)
at_multiply_others_d1 = _internal("ad.at_multiply_others_d1", _at_multiply_others_d1)
at_multiply_others_d2 = _internal("ad.at_multiply_others_d2", _at_multiply_others_d2)
at_multiply_others_d3_check = _internal(
    "ad.at_multiply_others_d3_check", _at_multiply_others_d3_check, differentiable=False
)


# the Jacobian of the product of the others (per slot, over update elements) is
# symmetric, as are its higher derivatives: a vjp is the jvp along the cotangent
def _amo_vjp_x(g, ans, x, idx, v, mode="drop"):
    return zeros_like(x)


def _amo_jvp_x(t, ans, x, idx, v, mode="drop"):
    return zeros_like(ans)


def _amo_vjp_v(g, ans, x, idx, v, mode="drop"):
    return unbroadcast(at_multiply_others_d1(x, idx, v, g, mode), v)


def _amo_jvp_v(t, ans, x, idx, v, mode="drop"):
    return at_multiply_others_d1(x, idx, v, t, mode)


at_multiply_others.def_vjp(x=_amo_vjp_x, v=_amo_vjp_v)
at_multiply_others.def_jvp(x=_amo_jvp_x, v=_amo_jvp_v)


def _amo1_vjp_x(g, ans, x, idx, v, t, mode="drop"):
    return zeros_like(x)


def _amo1_jvp_x(t_, ans, x, idx, v, t, mode="drop"):
    return zeros_like(ans)


def _amo1_vjp_v(g, ans, x, idx, v, t, mode="drop"):
    return unbroadcast(at_multiply_others_d2(x, idx, v, t, g, mode), v)


def _amo1_jvp_v(t_, ans, x, idx, v, t, mode="drop"):
    return at_multiply_others_d2(x, idx, v, t, t_, mode)


def _amo1_vjp_t(g, ans, x, idx, v, t, mode="drop"):
    return unbroadcast(at_multiply_others_d1(x, idx, v, g, mode), t)


def _amo1_jvp_t(t_, ans, x, idx, v, t, mode="drop"):
    return at_multiply_others_d1(x, idx, v, t_, mode)


at_multiply_others_d1.def_vjp(x=_amo1_vjp_x, v=_amo1_vjp_v, t=_amo1_vjp_t)
at_multiply_others_d1.def_jvp(x=_amo1_jvp_x, v=_amo1_jvp_v, t=_amo1_jvp_t)


def _amo2_vjp_x(g, ans, x, idx, v, t, s, mode="drop"):
    return zeros_like(x)


def _amo2_jvp_x(t_, ans, x, idx, v, t, s, mode="drop"):
    return zeros_like(ans)


def _amo2_vjp_v(g, ans, x, idx, v, t, s, mode="drop"):
    return unbroadcast(at_multiply_others_d3_check(x, idx, v, mode), v)


def _amo2_jvp_v(t_, ans, x, idx, v, t, s, mode="drop"):
    return at_multiply_others_d3_check(x, idx, v, mode)


def _amo2_vjp_t(g, ans, x, idx, v, t, s, mode="drop"):
    return unbroadcast(at_multiply_others_d2(x, idx, v, g, s, mode), t)


def _amo2_jvp_t(t_, ans, x, idx, v, t, s, mode="drop"):
    return at_multiply_others_d2(x, idx, v, t_, s, mode)


def _amo2_vjp_s(g, ans, x, idx, v, t, s, mode="drop"):
    return unbroadcast(at_multiply_others_d2(x, idx, v, t, g, mode), s)


def _amo2_jvp_s(t_, ans, x, idx, v, t, s, mode="drop"):
    return at_multiply_others_d2(x, idx, v, t, t_, mode)


at_multiply_others_d2.def_vjp(x=_amo2_vjp_x, v=_amo2_vjp_v, t=_amo2_vjp_t, s=_amo2_vjp_s)
at_multiply_others_d2.def_jvp(x=_amo2_jvp_x, v=_amo2_jvp_v, t=_amo2_jvp_t, s=_amo2_jvp_s)


def _at_multiply_vjp_x(g, ans, x, idx, v, mode="drop"):
    return at_multiply(g, idx, v, mode)


def _at_multiply_vjp_v(g, ans, x, idx, v, mode="drop"):
    return unbroadcast(
        index_take(g, idx, mode) * index_take(x, idx, mode) * at_multiply_others(x, idx, v, mode),
        v,
    )


def _at_multiply_jvp_x(t, ans, x, idx, v, mode="drop"):
    return at_multiply(t, idx, v, mode)


def _at_multiply_jvp_v(t, ans, x, idx, v, mode="drop"):
    others = index_take(x, idx, mode) * at_multiply_others(x, idx, v, mode)
    return at_add(zeros_like(ans), idx, others * t, mode)


at_multiply.def_vjp(x=_at_multiply_vjp_x, v=_at_multiply_vjp_v)
at_multiply.def_jvp(x=_at_multiply_jvp_x, v=_at_multiply_jvp_v)


def _at_tie_count(x, idx, v, ans, mode="drop"):
    """Static: at each position of ``ans``, how many of ``x`` and the scattered
    ``v`` values equal it (ties of ``.at[].min/max`` share the gradient; the
    updates dropped out of bounds count nowhere)."""
    cnt = (np.asarray(x) == ans).astype(np.result_type(ans))
    hits = (np.asarray(v) == _index_take(ans, idx, mode)).astype(cnt.dtype)
    return _at_ufunc(np.add, cnt, idx, hits, mode)


at_tie_count = _internal("ad.at_tie_count", _at_tie_count, differentiable=False)


def _at_extremal_vjp_x(g, ans, x, idx, v, mode="drop"):
    return g * (x == ans) / at_tie_count(x, idx, v, ans, mode)


def _at_extremal_vjp_v(g, ans, x, idx, v, mode="drop"):
    share = index_take(g / at_tie_count(x, idx, v, ans, mode), idx, mode)
    return unbroadcast(share * (v == index_take(ans, idx, mode)), v)


def _at_extremal_jvp_x(t, ans, x, idx, v, mode="drop"):
    return t * (x == ans) / at_tie_count(x, idx, v, ans, mode)


def _at_extremal_jvp_v(t, ans, x, idx, v, mode="drop"):
    hit = t * (v == index_take(ans, idx, mode))
    return at_add(zeros_like(ans), idx, hit, mode) / at_tie_count(x, idx, v, ans, mode)


for _p in (at_min, at_max):
    _p.def_vjp(x=_at_extremal_vjp_x, v=_at_extremal_vjp_v)
    _p.def_jvp(x=_at_extremal_jvp_x, v=_at_extremal_jvp_v)


def _at_samples(rng):
    # the first: repeated indices (a slot updated three times, one twice), and
    # an unbatched base with batched updates in the vmap test
    return [
        ((_rand(rng, 5), np.array([0, 2, 2, -1, 2, 0]), _rand(rng, 6)), {}),
        ((_rand(rng, 4, 3), (slice(1, 3), 0), _rand(rng, 2)), {}),
        ((_rand(rng, 4, 3), 1, _rand(rng, 3)), {}),
        ((_rand(rng, 4, 3), (np.array([0, 3, 0]), np.array([1, 2, 1])), _rand(rng, 3)), {}),
        ((_rand(rng, 4, 3), np.array([True, False, True, False]), _rand(rng, 3)), {}),
        # a scalar update broadcast into a repeated slot
        ((_rand(rng, 4), np.array([1, 3, 1]), _rand(rng)), {}),
        # out of bounds (JAX's modes): dropped updates, clamped ones (a repeated slot)
        ((_rand(rng, 5), np.array([0, 7, -1, -9, 2]), _rand(rng, 5)), {}),
        ((_rand(rng, 5), np.array([0, 7, -1, -9, 2]), _rand(rng, 5)), {"mode": "clip"}),
        ((_rand(rng, 4, 3), (1, 5), _rand(rng)), {"mode": "drop"}),
    ]


def _at_extremal_samples(rng):
    # two-way ties (base with an update, two updates): central differences see
    # the tie as the mean of both sides, JAX's rule splits the derivative evenly
    x = _rand(rng, 5)
    v = _rand(rng, 4)
    v[0] = x[1]
    v[2] = v[3] = builtins.max(abs(x[4]), abs(x[4] - 1)) * 3 + 1
    tie_max = ((x, np.array([1, 3, 4, 4]), v), {})
    w = v.copy()
    w[2] = w[3] = -w[2]
    tie_min = ((x, np.array([1, 3, 4, 4]), w), {})
    return _at_samples(rng) + [tie_max, tie_min]


def _at_others_samples(rng, extra=0):
    out = []
    for args, kw in _at_samples(rng):
        x, idx, v = args
        shape = np.shape(_index_take(x, idx))
        out.append(((x, idx, v) + tuple(_rand(rng, *shape) for _ in range(extra)), kw))
    # a zero update in a repeated slot (no division by the updates)
    v = _rand(rng, 6)
    v[1] = 0.0
    out.append(
        (
            (_rand(rng, 5), np.array([0, 2, 2, -1, 2, 0]), v)
            + tuple(_rand(rng, 6) for _ in range(extra)),
            {},
        )
    )
    return out


def _at_get_samples(rng):
    # (mode None with an index array out of bounds: JAX's cotangent is not the
    # derivative there; with scalar indices it is)
    i = np.array([0, 7, -1, -9, 2])
    return [
        ((_rand(rng, 4, 3), (6, -7)), {}),
        ((_rand(rng, 5), i), {"mode": "clip"}),
        # (a fill value, not NaN: finite differences check the rules)
        ((_rand(rng, 5), i), {"mode": "fill", "fill_value": 0.5}),
        ((_rand(rng, 5), i), {"mode": "drop", "fill_value": -1.0}),
        (
            (_rand(rng, 4, 3), (slice(None), np.array([4, 0, -4]))),
            {"mode": "fill", "fill_value": 2.0},
        ),
        ((_rand(rng, 4, 3), (2, 1)), {"mode": "fill"}),
    ]


at_get.samples = _at_get_samples
at_set.samples = _at_samples
at_add.samples = _at_samples
at_multiply.samples = _at_samples
at_min.samples = _at_extremal_samples
at_max.samples = _at_extremal_samples
at_set_winners.samples = _at_samples
at_multiply_others.samples = _at_others_samples
at_multiply_others_d1.samples = lambda rng: _at_others_samples(rng, 1)
at_multiply_others_d2.samples = lambda rng: _at_others_samples(rng, 2)
at_multiply_others_d3_check.samples = _at_samples
