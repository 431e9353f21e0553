"""``jax.random.binomial`` and ``jax.random.multinomial`` (JAX 0.10.2's
algorithms on :mod:`srcjax.random`'s threefry bits).

``binomial`` follows JAX's ``_binomial`` step for step: for ``n * q <= 10``
(``q = min(p, 1 - p)``) the inversion algorithm (counting geometric jumps,
one uniform draw of the whole shape per round), otherwise Hormann's BTRS
transformed rejection (a 3-way key split per round, rounds until every value
of the draw is accepted); both run from the same key and a select picks one,
then ``n - k`` where ``p >= 0.5``. Under ``vmap`` each key runs its own
rounds, as JAX's batched ``while_loop`` does. The float32 arithmetic uses
XLA:CPU's ``log``/``log1p`` (``._threefry``) and fuses multiply-adds where
XLA:CPU does; see :func:`binomial` for what is bit for bit.

``multinomial`` is JAX's sequence of conditional binomials: the key split in
one key per category, ``ratio_i = p_i / sum_{j >= i} p_j`` and
``count_i = binomial(key_i, remaining, clip(ratio_i, 0, 1))``.

Each ``_<name>_from(keys, ...)`` takes keys ``(..., 2)`` and returns
``keys.shape[:-1] + result shape``; the public primitives check that they got a
single key, and vmap's rule calls the batched helpers ``ad.random_<name>_b``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from . import _threefry as _tf
from ._base import _float_dtype, _key, _keys, _partitionable, _shape
from ._dist_impls import real_param
from ._register import _batch_rule, _internal, _key_samples, _ks, _prim
from ._samplers import _check_shape

_F = np.float32

# JAX's table of Stirling-series tails log(k!) - [(k + 1/2) log(k + 1) - (k + 1)
# + log(2 pi)/2] for k = 0..9 (as float32, the dtype JAX builds it in)
_STIRLING_TAIL = np.array(
    [
        0.0810614667953272,
        0.0413406959554092,
        0.0276779256849983,
        0.02079067210376509,
        0.0166446911898211,
        0.0138761288230707,
        0.0118967099458917,
        0.0104112652619720,
        0.00925546218271273,
        0.00833056343336287,
    ],
    _F,
)


# =========================================================================== helpers
def _split(keys: np.ndarray, n: int) -> list:
    ks = _tf.split(keys, (n,), _partitionable())
    return [ks[..., i, :] for i in range(n)]


def _uniform(keys: np.ndarray, shape: tuple) -> np.ndarray:
    return _tf.uniform32(_tf.bits(keys, shape, 32, _partitionable()), _F(0.0), _F(1.0))


def _fma(a, b, c) -> np.ndarray:
    """float32 fused multiply-add; infinite or NaN results as IEEE's (the
    emulation in ``_threefry.fma32`` turns an infinite sum into NaN)."""
    a, b, c = np.asarray(a, _F), np.asarray(b, _F), np.asarray(c, _F)
    with np.errstate(all="ignore"):
        plain = np.multiply(a, b, dtype=np.float64) + c
        out = _tf.fma32(a, b, c)
    return np.where(np.isfinite(plain), out, plain.astype(_F)).astype(_F)


def _f(x) -> np.ndarray:
    return np.asarray(x, _F)


def _per_key(flags: np.ndarray, nbatch: int) -> np.ndarray:
    """``flags`` (``batch + shape``) reduced with ``any`` over the draw's shape:
    one flag per key, shaped to broadcast against ``batch + shape``."""
    shape = flags.shape[nbatch:]
    batch = flags.shape[:nbatch]
    per = flags.reshape(batch + (-1,)).any(-1)
    return per.reshape(batch + (1,) * len(shape))


def _stirling_tail(k: np.ndarray) -> np.ndarray:
    """JAX's ``_stirling_approx_tail``: the table for ``k <= 9`` (index
    ``floor(clip(k, 0, 9))``), else the series ``(1/12 - (1/360 - 1/1260 /
    (k+1)^2) / (k+1)^2) / (k+1)`` evaluated, as JAX does, at ``k`` clipped to
    ``[0, 9]`` (so every ``k > 9`` gets the value at 9)."""
    with np.errstate(invalid="ignore"):
        use_table = k <= _F(9.0)
        kc = np.minimum(np.maximum(k, _F(0.0)), _F(9.0))  # NaN stays NaN (XLA's clamp)
        kc = np.where(np.isnan(k), k, kc).astype(_F)
        k1 = (kc + _F(1.0)).astype(_F)
        kp1sq = (k1 * k1).astype(_F)
        inner = (_F(1.0 / 360) - (_F(1.0 / 1260) / kp1sq).astype(_F)).astype(_F)
        approx = ((_F(1.0 / 12) - (inner / kp1sq).astype(_F)).astype(_F) / k1).astype(_F)
        idx = np.where(np.isnan(kc), 0, np.floor(kc)).astype(np.int64)
    return np.where(use_table, _STIRLING_TAIL[idx], approx).astype(_F)


# =========================================================================== binomial
def _inversion(keys, count, prob, shape):
    """JAX's ``_binomial_inversion``: the number of geometric(prob) jumps whose
    sum stays ``<= count``; a round per ``split`` (first half draws), while any
    value of a key's draw is still going."""
    nb = keys.ndim - 1
    with np.errstate(all="ignore"):
        log1mp = np.broadcast_to(_tf.log1p32(-prob), count.shape)
        num = np.zeros(count.shape, _F)
        gsum = np.zeros(count.shape, _F)
        key = keys
        while True:
            going = _per_key(gsum <= count, nb)
            if not going.any():
                break
            sub, nkey = _split(key, 2)
            # only values still counting matter (a finished one never counts again)
            act = np.asarray(going & (gsum <= count))
            num = np.where(act, (num + _F(1.0)).astype(_F), num)
            u = np.asarray(_uniform(sub, shape))[act]
            geom = np.ceil((_tf.log32(u) / log1mp[act]).astype(_F)).astype(_F)
            gsum[act] = (gsum[act] + geom).astype(_F)
            key = np.where(going.reshape(going.shape[:nb] + (1,)), nkey, key)
    return (num - _F(1.0)).astype(_F)


def _bound_test(a, b, alpha, us, v, k, count, m, r, cm1, t_m, s_m, s_cm):
    """BTRS's acceptance test ``log(v alpha / (a / us^2 + b)) <= bound(k)``
    (flat arrays of the values to test)."""
    den = ((a / (us * us).astype(_F)).astype(_F) + b).astype(_F)
    lv = _tf.log32((((v * alpha).astype(_F)) / den).astype(_F))
    ck1 = ((count - k).astype(_F) + _F(1.0)).astype(_F)
    t1 = ((m + _F(0.5)).astype(_F) * t_m).astype(_F)
    t2 = ((count + _F(1.0)).astype(_F) * _tf.log32((cm1 / ck1).astype(_F))).astype(_F)
    l3 = _tf.log32((((r * ck1).astype(_F)) / (k + _F(1.0)).astype(_F)).astype(_F))
    t3 = ((k + _F(0.5)).astype(_F) * l3).astype(_F)
    ub = ((t1 + t2).astype(_F) + t3).astype(_F)
    ub = ((ub + s_m).astype(_F) + s_cm).astype(_F)
    ub = (ub - _stirling_tail(k)).astype(_F) - _stirling_tail((count - k).astype(_F))
    return lv <= ub.astype(_F)


def _btrs(keys, count, prob, shape):
    """JAX's ``_btrs`` (Hormann's transformed rejection with squeeze), a 3-way
    key split per round, until every value of a key's draw is accepted (a later
    acceptance overwrites an earlier one, as in JAX)."""
    nb = keys.ndim - 1
    with np.errstate(all="ignore"):
        one_m_p = (_F(1.0) - prob).astype(_F)
        stddev = np.sqrt(((count * prob).astype(_F) * one_m_p).astype(_F)).astype(_F)
        b = _fma(_F(2.53), stddev, _F(1.15))
        a = _fma(_F(0.01), prob, _fma(_F(0.0248), b, _F(-0.0873)))
        c = _fma(count, prob, _F(0.5))
        v_r = (_F(0.92) - (_F(4.2) / b).astype(_F)).astype(_F)
        r = (prob / one_m_p).astype(_F)
        alpha = ((_F(2.83) + (_F(5.1) / b).astype(_F)).astype(_F) * stddev).astype(_F)
        m = np.floor(((count + _F(1.0)).astype(_F) * prob).astype(_F)).astype(_F)
        # the terms of the bound that do not depend on k
        cm1 = ((count - m).astype(_F) + _F(1.0)).astype(_F)
        t_m = _tf.log32(((m + _F(1.0)).astype(_F) / (r * cm1).astype(_F)).astype(_F))
        s_m = _stirling_tail(m)
        s_cm = _stirling_tail((count - m).astype(_F))
        k_out = np.full(count.shape, _F(-1.0))
        # NaN parameters (count = inf with q = 0) never accept: JAX loops forever
        # there; srcjax stops (the caller's select makes those values inf)
        accepted = np.isnan(stddev) | np.isnan(b)
        key = keys
        while True:
            going = _per_key(~accepted, nb)
            if not going.any():
                break
            key_n, k0, k1 = _split(key, 3)
            u = (_uniform(k0, shape) - _F(0.5)).astype(_F)
            v = _uniform(k1, shape)
            us = (_F(0.5) - np.abs(u)).astype(_F)
            accept1 = (us >= _F(0.07)) & (v <= v_r)
            t = ((((_F(2.0) * a).astype(_F)) / us).astype(_F) + b).astype(_F)
            k = np.floor(_fma(t, u, c)).astype(_F)
            reject = (k < 0) | (k > count)
            # the bound only decides where the squeeze did not: computed there only
            # (elementwise, so the values are the same)
            idx = np.flatnonzero(going & ~accept1 & ~reject)
            accept = np.array(accept1 & going)
            params = (a, b, alpha, us, v, k, count, m, r, cm1, t_m, s_m, s_cm)
            accept.reshape(-1)[idx] = _bound_test(*(np.ravel(x)[idx] for x in params))
            k_out = np.where(accept, k, k_out)
            accepted |= accept
            key = np.where(going.reshape(going.shape[:nb] + (1,)), key_n, key)
    return k_out


def _prob_param(v: Any, name: str, what: str) -> np.ndarray:
    msg = f"{name} requires ndarray or scalar arguments, got {type(v)} for {what}"
    return real_param(v, name, what, msg)


def _compute_dtype(name: str, *params: np.ndarray) -> None:
    d = _dt.to_inexact_dtype(_dt.result_type(*params))
    if d != np.float32:
        raise NotImplementedError(
            f"srcjax.random.{name}: parameters of dtype {d} are not implemented (JAX "
            "computes in their inexact dtype; srcjax reproduces XLA's float32 "
            "arithmetic only): pass float32 n and p"
        )


def _binomial_core(keys, n, p, shape):
    """Draws (float32, ``keys.shape[:-1] + shape``) for float32 ``n``, ``p``
    broadcasting to ``shape``."""
    batch = keys.shape[:-1]
    full = batch + tuple(shape)
    count = np.broadcast_to(n, full).astype(_F)
    prob = np.broadcast_to(p, full).astype(_F)
    with np.errstate(invalid="ignore"):
        p_lt_half = prob < _F(0.5)
        q = np.where(p_lt_half, prob, (_F(1.0) - prob).astype(_F)).astype(_F)
        count_bad = np.isnan(count) | (count < 0)
        count_inf = np.isinf(count)
        q_nan = np.isnan(q)
        q_neg = q < 0
        q = np.where(q_nan | q_neg, _F(0.01), q).astype(_F)
        use_inv = count_bad | ((count * q).astype(_F) <= _F(10.0))
        count = np.floor(count).astype(_F)
        res = np.zeros(full, _F)
        if use_inv.any():
            res = _inversion(keys, np.where(use_inv, count, _F(0.0)).astype(_F), q, shape)
        if not use_inv.all():
            cb = np.where(use_inv, _F(1e4), count).astype(_F)
            qb = np.where(use_inv, _F(0.5), q).astype(_F)
            res = np.where(use_inv, res, _btrs(keys, cb, qb, shape))
        invalid = q_neg | q_nan | count_bad
        res = np.where(invalid, _F(np.nan), res)
        res = np.where(count_inf & ~invalid, _F(np.inf), res)
        keep = p_lt_half | count_bad | q_nan | count_inf
        res = np.where(keep, res, (count - res).astype(_F))
    return res.astype(_F)


def _binomial_from(keys, n, p, shape, dtype):
    d = _float_dtype(float if dtype is None else dtype, "binomial")
    n = _prob_param(n, "binomial", "n")
    p = _prob_param(p, "binomial", "p")
    if shape is None:
        try:
            shape = tuple(np.broadcast_shapes(n.shape, p.shape))
        except ValueError:
            raise ValueError(
                f"binomial: incompatible shapes for broadcasting: {n.shape}, {p.shape}"
            ) from None
    else:
        shape = _shape(shape, "binomial")
        _check_shape("binomial", shape, n.shape, p.shape)
    _compute_dtype("binomial", p)
    return _binomial_core(keys, n, p, shape).astype(d)


def binomial_(key, n, p, shape=None, dtype=None):
    """Binomial random values (``jax.random.binomial``,
    https://docs.jax.dev/en/latest/_autosummary/jax.random.binomial.html).

    JAX's algorithm (module docstring): inversion for ``n * q <= 10``, BTRS
    rejection otherwise, ``n - k`` for ``p >= 0.5``; ``n`` is floored. Bit for
    bit equal to jax 0.10.2 on CPU for float32 parameters (checked on thousands
    of draws over both algorithms and the special values below). Not
    differentiable: the values are piecewise constant in ``n`` and ``p`` and the
    gradient is zero, as JAX's.

    Special values, as JAX: NaN where ``p`` is NaN, ``p < 0`` or ``p > 1``, or
    ``n`` is NaN or negative; ``inf`` where ``n`` is infinite (for ``p`` equal
    to 0 or 1 too, where JAX's rejection loop never ends).

    Args:
        key: a key, typed (shape ``()``) or raw (uint32 ``(2,)``); use ``srcjax.vmap`` for a batch.
        n: number of trials, real scalar or array (converted to float32).
        p: success probability, real scalar or array.
        shape: the result's shape, broadcast-compatible with ``n`` and ``p``;
            default their broadcast shape.
        dtype: a float dtype for the values (default float32; float64 with
            ``jax_enable_x64``).

    Returns:
        array of ``shape`` and ``dtype`` holding whole numbers in ``[0, n]``.

    Raises:
        TypeError: an invalid key; a list or complex ``n``/``p``.
        ValueError: a non-float ``dtype``; shapes that do not broadcast; a batch
            of keys.
        NotImplementedError: parameters whose inexact dtype is not float32
            (float16 ``p``; float64 with ``jax_enable_x64``: XLA's float64 and
            float16 arithmetic is not reproduced), or ``dtype=float16``.
    """
    return _binomial_from(_key(key, "binomial"), n, p, shape, dtype)


# =========================================================================== multinomial
def _multinomial_from(keys, n, p, shape=None, dtype=None, unroll=1):
    d = _float_dtype(float if dtype is None else dtype, "multinomial")
    n = _prob_param(n, "multinomial", "n")
    p = _prob_param(p, "multinomial", "p")
    _compute_dtype("multinomial", n, p)
    if not isinstance(unroll, (bool, int, np.integer)):  # lax.scan's option: no effect here
        raise TypeError(f"multinomial: unroll must be an int or a bool, got {unroll!r}")
    if p.ndim < 1:
        raise ValueError("multinomial: p must have at least one dimension (the categories)")
    if shape is None:
        shape = p.shape
    else:
        shape = _shape(shape, "multinomial")
    shape = tuple(shape)
    if len(shape) < 1:
        raise ValueError("multinomial: shape must have at least one dimension")
    try:
        nb_ = np.broadcast_to(n, shape[:-1])
        pb = np.broadcast_to(p, shape)
    except ValueError:
        raise ValueError(
            f"multinomial: n of shape {n.shape} and p of shape {p.shape} do not "
            f"broadcast to {shape[:-1]} and {shape}"
        ) from None
    nb_ = nb_.astype(_F)
    pb = np.moveaxis(pb.astype(_F), -1, 0)  # categories first
    ncat = pb.shape[0]
    # JAX's lax.cumsum(p, 0, reverse=True): XLA reduce-window sums, summed from the
    # end of the axis one element at a time in float32
    remaining = np.empty_like(pb)
    acc = np.zeros(pb.shape[1:], _F)
    for i in range(ncat - 1, -1, -1):
        acc = (acc + pb[i]).astype(_F)
        remaining[i] = acc
    with np.errstate(all="ignore"):
        ratios = (pb / np.where(remaining == 0, _F(1.0), remaining)).astype(_F)
    batch = keys.shape[:-1]
    cat_keys = _tf.split(keys, (ncat,), _partitionable())  # batch + (ncat, 2)
    rem = np.broadcast_to(nb_, batch + nb_.shape).astype(_F)
    counts = []
    for i in range(ncat):
        ratio = np.clip(ratios[i], _F(0.0), _F(1.0))
        c = _binomial_core(cat_keys[..., i, :], rem, ratio, shape[:-1])
        rem = (rem - c).astype(_F)
        counts.append(c)
    out = np.stack(counts, axis=-1) if counts else np.zeros(batch + shape, _F)
    return out.astype(d)


def multinomial_(key, n, p, *, shape=None, dtype=None, unroll=1):
    """Multinomial counts (``jax.random.multinomial``,
    https://docs.jax.dev/en/latest/_autosummary/jax.random.multinomial.html).

    JAX's algorithm: categories in order, ``count_i = binomial(key_i,
    n - count_0 - ... - count_{i-1}, clip(p_i / sum_{j >= i} p_j, 0, 1))`` with
    ``key_i`` the ``i``-th of ``split(key, k)``. ``p`` need not be normalized.
    Bit for bit equal to jax 0.10.2 on CPU for float32 parameters. Not
    differentiable (zero gradient, as JAX's).

    Args:
        key: a key, typed (shape ``()``) or raw (uint32 ``(2,)``); use ``srcjax.vmap`` for a batch.
        n: number of trials, broadcastable to ``shape[:-1]``.
        p: probabilities, categories along the last axis.
        shape: the result's shape including the categories axis, which
            ``p`` broadcasts to (as JAX 0.10.2 does); default ``p.shape``.
        dtype: a float dtype for the counts (default float32; float64 with
            ``jax_enable_x64``).
        unroll: JAX's ``lax.scan`` unrolling; accepted and ignored.

    Returns:
        array of ``shape`` and ``dtype``; the counts along the last axis sum to
        ``floor(n)`` when ``p`` has no zero tail.

    Raises:
        TypeError: an invalid key; a list or complex ``n``/``p``.
        ValueError: a non-float ``dtype``; ``p`` without a categories axis;
            ``n``/``p`` not broadcasting to ``shape``; a batch of keys.
        NotImplementedError: as :func:`binomial` (non-float32 parameters).
    """
    return _multinomial_from(_key(key, "multinomial"), n, p, shape, dtype, unroll)


# =========================================================================== registration
def _register():
    f32 = np.float32

    def binomial_b(key, n, p, shape=None, dtype=None):
        """vmap's ``binomial``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."""
        return _binomial_from(_keys(key, "binomial"), n, p, shape, dtype)

    def multinomial_b(key, n, p, shape=None, dtype=None, unroll=1):
        """vmap's ``multinomial``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."""
        return _multinomial_from(_keys(key, "multinomial"), n, p, shape, dtype, unroll)

    binomial = _prim(
        "random.binomial",
        binomial_,
        lambda rng: [
            ((k, f32(n), f32(p), (5,)), {})
            for k, n, p in zip(_key_samples(rng), (10, 60), (0.3, 0.6))
        ],
    )
    binomial_bp = _internal(
        "ad.random_binomial_b",
        binomial_b,
        lambda rng: [((_ks(rng), f32(40.0), f32(0.4), (3,)), {})],
    )
    multinomial = _prim(
        "random.multinomial",
        multinomial_,
        lambda rng: [
            ((k, f32(n), np.array([0.2, 0.3, 0.5], f32)), {})
            for k, n in zip(_key_samples(rng), (10, 80))
        ],
    )
    multinomial_bp = _internal(
        "ad.random_multinomial_b",
        multinomial_b,
        lambda rng: [((_ks(rng), f32(30.0), np.array([0.5, 0.5], f32)), {})],
    )
    for pub, helper in ((binomial, binomial_bp), (multinomial, multinomial_bp)):
        pub.def_batch(_batch_rule(helper))
        helper.def_batch(_batch_rule(helper))
    return binomial, multinomial


binomial, multinomial = _register()
