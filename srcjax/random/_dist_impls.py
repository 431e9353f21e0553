"""The implementations of :mod:`srcjax.random._dists`'s distributions: each
``_<name>_from(keys, ...)`` takes a batch of keys ``(..., 2)`` and returns
``keys.shape[:-1] + shape``, following JAX 0.10.2's definitions step for step
with XLA:CPU's float32 rounding (``._xla32``), bit for bit JAX's. Closed forms
(``truncated_normal`` ... ``geometric``), ``poisson`` (Knuth's and the
rejection sampler) and the gamma family (Marsaglia-Tsang)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import dtypes as _dt
from . import _threefry as _tf
from . import _xla32 as _x
from ._base import _float_dtype, _half_words, _is_half, _partitionable, _shape
from ._samplers import _bernoulli_from, _check_shape, _float32_only, _int_dtype, _to_int

_F = np.float32
_SQRT2 = _tf._SQRT2
_INV_SQRT2 = _tf._f32(0x3F3504F3)  # XLA rewrites x / sqrt(2) as x * f32(1/sqrt(2))
_PI = _F(np.pi)
_EPS = _F(np.finfo(np.float32).eps)


# =========================================================================== helpers
def _fdtype(dtype: Any, name: str) -> np.dtype:
    why = "XLA's float64 log/exp/erf_inv are not reproduced bit for bit"
    return _float32_only(float if dtype is None else dtype, name, why)


def real_param(v: Any, name: str, what: str, list_error: str) -> np.ndarray:
    """A real sampler parameter as an array, arrays canonicalized (64-bit -> 32
    unless x64), Python numbers as NumPy reads them; TypeError ``list_error`` for
    a list or tuple (JAX's words differ between samplers), TypeError for a
    complex or non-numeric one."""
    if isinstance(v, (list, tuple)):
        raise TypeError(list_error)
    a = np.asarray(v)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"{name}: {what} must be real, got dtype {a.dtype}")
    if isinstance(v, (np.ndarray, np.generic)):
        a = np.asarray(_dt.canonicalize_value(a))
    return a


def _param(v: Any, name: str, what: str) -> np.ndarray:
    """A real parameter converted as ``lax.convert_element_type(v, float32)``."""
    msg = f"{name}: {what} must be a scalar or an array, got {type(v).__name__}"
    return real_param(v, name, what, msg).astype(_F)


def _out_shape(name: str, shape: Any, *params: np.ndarray) -> tuple:
    """JAX's ``_check_broadcast_shapes``: ``shape`` (checked against the
    parameters) or, when ``None``, the parameters' broadcast shape."""
    shapes = [np.shape(p) for p in params]
    if shape is None:
        try:
            return tuple(np.broadcast_shapes(*shapes)) if shapes else ()
        except ValueError:
            raise ValueError(
                f"{name}: incompatible parameter shapes {[tuple(s) for s in shapes]}"
            ) from None
    shape = _shape(shape, name)
    _check_shape(name, shape, *shapes)
    return shape


def _words(keys: np.ndarray, shape: tuple) -> np.ndarray:
    return _tf.bits(keys, shape, 32, _partitionable())


def _uniform(keys, shape, lo=0.0, hi=1.0) -> np.ndarray:
    return _tf.uniform32(_words(keys, shape), _F(lo), _F(hi))


def _normal(keys, shape) -> np.ndarray:
    return _tf.normal32(_words(keys, shape))


def _exponential(keys, shape) -> np.ndarray:
    return -_tf.log1p32(-_uniform(keys, shape))


def _split(keys: np.ndarray, n: int) -> list:
    ks = _tf.split(keys, (n,), _partitionable())
    return [ks[..., i, :] for i in range(n)]


def _fma(a, b, c) -> np.ndarray:
    return _tf.fma32(np.asarray(a, _F), np.asarray(b, _F), np.asarray(c, _F))


# =========================================================================== closed forms
def _truncated_normal_half(keys, lower, upper, shape, d):
    """float16/bfloat16 ``truncated_normal``: JAX's recipe in ``d``, each
    operation rounded to ``d`` (``erf``/``erf_inv`` in float32, XLA:CPU's,
    rounded once), as XLA:CPU upcasts half-precision operations one at a time."""
    msg = "truncated_normal: {} must be a scalar or an array, got {}"
    lo = real_param(lower, "truncated_normal", "lower", msg.format("lower", type(lower).__name__))
    hi = real_param(upper, "truncated_normal", "upper", msg.format("upper", type(upper).__name__))
    lo, hi = lo.astype(d), hi.astype(d)
    shape = _out_shape("truncated_normal", shape, lo, hi)
    sqrt2 = np.array(np.sqrt(2), d)
    a = _x.erf32((lo / sqrt2).astype(d).astype(_F), scalar=lo.ndim == 0).astype(d)
    b = _x.erf32((hi / sqrt2).astype(d).astype(_F), scalar=hi.ndim == 0).astype(d)
    with np.errstate(all="ignore"):
        u = _tf.uniform_half(_half_words(keys, shape, d), a, b)
        out = (sqrt2 * _tf.erfinv32(u.astype(_F)).astype(d)).astype(d)
    low = np.nextafter(lo, np.array(np.inf, d)).astype(d)
    high = np.nextafter(hi, np.array(-np.inf, d)).astype(d)
    return np.minimum(np.maximum(out, low), high).astype(d)


def _truncated_normal_from(keys, lower, upper, shape, dtype):
    d = _float_dtype(float if dtype is None else dtype, "truncated_normal")
    if _is_half(d):
        return _truncated_normal_half(keys, lower, upper, shape, d)
    _fdtype(dtype, "truncated_normal")
    lo = _param(lower, "truncated_normal", "lower")
    hi = _param(upper, "truncated_normal", "upper")
    shape = _out_shape("truncated_normal", shape, lo, hi)
    a = _x.erf32(lo * _INV_SQRT2, scalar=lo.ndim == 0)
    b = _x.erf32(hi * _INV_SQRT2, scalar=hi.ndim == 0)
    with np.errstate(all="ignore"):  # u = -1 (a bound far in the tail) gives -inf, clipped
        u = _tf.uniform32(_words(keys, shape), a, b)
        out = (_SQRT2 * _tf.erfinv32(u)).astype(_F)
    low = np.nextafter(lo, _F(np.inf)).astype(_F)
    high = np.nextafter(hi, _F(-np.inf)).astype(_F)
    return np.minimum(np.maximum(out, low), high).astype(_F)


def _cauchy_from(keys, shape, dtype):
    _fdtype(dtype, "cauchy")
    shape = _shape(shape, "cauchy")
    u = _uniform(keys, shape, _EPS, _F(1.0))
    return _x.tanf(((u - _F(0.5)).astype(_F) * _PI).astype(_F))


def _lognormal_from(keys, sigma, shape, dtype):
    _fdtype(dtype, "lognormal")
    s = _param(sigma, "lognormal", "sigma")
    shape = _out_shape("lognormal", shape, s)
    # XLA folds the two multiplications: erf_inv(u) * (sqrt(2) * sigma)
    u = _tf.uniform32(_words(keys, shape), _tf._NORMAL_LO, _F(1.0))
    return _x.exp32((_tf.erfinv32(u) * (_SQRT2 * s).astype(_F)).astype(_F))


def _pareto_from(keys, b, shape, dtype):
    _fdtype(dtype, "pareto")
    b = _param(b, "pareto", "b")
    shape = _out_shape("pareto", shape, b)
    with np.errstate(divide="ignore", invalid="ignore"):
        # XLA divides by a scalar as a multiplication by its reciprocal
        return _x.exp32((_exponential(keys, shape) * (_F(1.0) / b).astype(_F)).astype(_F))


def _rayleigh_from(keys, scale, shape, dtype):
    _fdtype(dtype, "rayleigh")
    s = _param(scale, "rayleigh", "scale")
    shape = _out_shape("rayleigh", shape, s)
    lu = _tf.log32(_uniform(keys, shape))
    with np.errstate(invalid="ignore"):
        return (s * np.sqrt((lu * _F(-2.0)).astype(_F))).astype(_F)


def _norm3(x: np.ndarray) -> np.ndarray:
    """``jnp.linalg.norm(x, axis=-1)`` of a length-3 last axis as XLA:CPU reduces
    it. Its order depends on the size: small outputs are a fused chain
    ``sqrt(fma(x2, x2, fma(x0, x0, x1 * x1)))``; from 2000 rows on the
    vectorised ``sqrt((x0**2 + x2**2) + x1**2)``. Between 64 and 2000 rows XLA
    mixes the two and some values here differ from JAX's by an ulp."""
    rows = int(np.prod(x.shape[:-1], dtype=np.int64)) if x.ndim > 1 else 1
    sq = (x * x).astype(_F)
    if rows >= 2000:
        acc = ((sq[..., 0] + sq[..., 2]).astype(_F) + sq[..., 1]).astype(_F)
    else:
        acc = _fma(x[..., 2], x[..., 2], _fma(x[..., 0], x[..., 0], sq[..., 1]))
    return np.sqrt(acc).astype(_F)


def _maxwell_from(keys, shape, dtype):
    _fdtype(dtype, "maxwell")
    shape = _shape(shape, "maxwell")
    return _norm3(_normal(keys, shape + (3,)))


def _double_sided_maxwell_from(keys, loc, scale, shape, dtype):
    _fdtype(dtype, "double_sided_maxwell")
    loc = _param(loc, "double_sided_maxwell", "loc")
    scale = _param(scale, "double_sided_maxwell", "scale")
    shape = _shape(shape, "double_sided_maxwell")
    pshape = tuple(np.broadcast_shapes(loc.shape, scale.shape))
    if not shape:
        shape = pshape
    shape = shape + pshape  # as JAX: the parameters' shape is appended
    k_m, k_r = _split(keys, 2)
    m = _norm3(_normal(k_m, shape + (3,)))
    sign = (2 * _bernoulli_from(k_r, 0.5, shape, "low").astype(np.int32) - 1).astype(_F)
    sm = (sign * m).astype(_F)
    if int(np.prod(shape, dtype=np.int64)) >= 2000:  # XLA's vectorised loop: not fused
        return ((sm * scale).astype(_F) + loc).astype(_F)
    return _fma(sm, scale, loc)


def _weibull_min_from(keys, scale, concentration, shape, dtype):
    _fdtype(dtype, "weibull_min")
    shape = _shape(shape, "weibull_min")
    s = _param(scale, "weibull_min", "scale")
    if isinstance(concentration, (int, float)) and not isinstance(concentration, bool):
        inv = _F(1.0 / concentration)  # a Python number: divided in Python
    else:
        with np.errstate(divide="ignore"):
            inv = (_F(1.0) / _param(concentration, "weibull_min", "concentration")).astype(_F)
    e = -_tf.log1p32(-_uniform(keys, shape))
    return (_x.powf(e, inv) * s).astype(_F)


def _triangular_from(keys, left, mode, right, shape, dtype):
    _fdtype(dtype, "triangular")
    left = _param(left, "triangular", "left")
    mode = _param(mode, "triangular", "mode")
    right = _param(right, "triangular", "right")
    shape = _out_shape("triangular", shape, left, mode, right)
    with np.errstate(all="ignore"):
        rl = (right - left).astype(_F)
        ml = (mode - left).astype(_F)
        rm = (right - mode).astype(_F)
        fc = (ml / rl).astype(_F)
        u = _uniform(keys, shape)
        out1 = (left + np.sqrt(((u * rl).astype(_F) * ml).astype(_F))).astype(_F)
        out2 = right - np.sqrt((((_F(1.0) - u).astype(_F) * rl).astype(_F) * rm).astype(_F))
        return np.where(u < fc, out1, out2.astype(_F)).astype(_F)


def _wald_from(keys, mean, shape, dtype):
    _fdtype(dtype, "wald")
    mu = _param(mean, "wald", "mean")
    shape = _out_shape("wald", shape, mu)
    k1, k2 = _split(keys, 2)
    v = _normal(k1, shape)
    z = _uniform(k2, shape)
    with np.errstate(all="ignore"):
        y = (v * v).astype(_F)
        y_sq = (y * y).astype(_F)
        mu_sq = (mu * mu).astype(_F)
        sq = np.sqrt(_fma((_F(4.0) * mu).astype(_F), y, (mu_sq * y_sq).astype(_F)))
        half = (mu * _F(0.5)).astype(_F)
        x = (mu + ((mu_sq * y).astype(_F) * _F(0.5)).astype(_F)).astype(_F)
        x = _fma(-half, sq, x)
        w = np.where(z <= (mu / (mu + x).astype(_F)).astype(_F), x, (mu_sq / x).astype(_F))
    return np.asarray(w, _F)


def _geometric_from(keys, p, shape, dtype):
    d = _int_dtype(dtype, "geometric")
    p = _param(p, "geometric", "p")
    shape = _out_shape("geometric", shape, p)
    u = _uniform(keys, shape)
    u = np.where(u == 0, _F(1.0), u)
    with np.errstate(all="ignore"):
        g = np.floor((_tf.log32(u) / _tf.log1p32(-p)).astype(_F)) + _F(1.0)
    return _to_int(g.astype(_F)).astype(d)


# =========================================================================== poisson
def _poisson_knuth(keys, lam, shape):
    """JAX's ``_poisson_knuth``: one uniform draw of the whole ``shape`` per round
    (key split each round), ``k`` counting while ``sum(log u) > -lam``."""
    batch = keys.shape[:-1]
    k = np.zeros(batch + shape, np.int64)
    logp = np.zeros(batch + shape, _F)
    key = keys
    with np.errstate(all="ignore"):
        going = logp > -lam
        while going.any():
            key, sub = _split(key, 2)
            k = np.where(going, k + 1, k)
            logp = (logp + _tf.log32(_uniform(sub, shape))).astype(_F)
            going = logp > -lam
    return k - 1


def _poisson_rejection(keys, lam, shape):
    """JAX's ``_poisson_rejection`` (Hormann's transformed rejection), each
    round splitting the key in three; XLA's fused multiply-adds emulated;
    ``lgamma`` is SciPy's, rounded to float32: XLA's float32 lgamma differs by
    ulps for about half the arguments, which flips an acceptance now and then,
    and since JAX keeps drawing (and overwriting accepted values) until every
    value of the draw is accepted, one flip changes others: about 4% of the
    values differ from JAX's (same distribution)."""
    from scipy import special

    batch = keys.shape[:-1]
    with np.errstate(all="ignore"):
        log_lam = _tf.log32(lam)
        b = _fma(_F(2.53), np.sqrt(lam).astype(_F), _F(0.931))
        a = _fma(_F(0.02483), b, _F(-0.059))
        inv_alpha = (_F(1.1239) + (_F(1.1328) / (b - _F(3.4)).astype(_F)).astype(_F)).astype(_F)
        v_r = (_F(0.9277) - (_F(3.6224) / (b - _F(2.0)).astype(_F)).astype(_F)).astype(_F)
        out = np.full(batch + shape, _F(-1.0))
        accepted = np.zeros(batch + shape, bool)
        key = keys
        while True:
            # as JAX's while_loop (vmapped over keys: per key), until every value of
            # a key's draw is accepted; a later acceptance overwrites an earlier one
            going = ~accepted.reshape(batch + (-1,)).all(-1)
            if not going.any():
                break
            going = going.reshape(batch + (1,) * len(shape))
            key, k0, k1 = _split(key, 3)
            u = (_uniform(k0, shape) - _F(0.5)).astype(_F)
            v = _uniform(k1, shape)
            us = (_F(0.5) - np.abs(u)).astype(_F)
            two_a = (_F(2.0) * a).astype(_F)
            k = np.floor((_fma((two_a / us).astype(_F) + b, u, lam) + _F(0.43)).astype(_F))
            k = k.astype(_F)
            den = ((a / (us * us).astype(_F)).astype(_F) + b).astype(_F)
            s_ = _tf.log32(((v * inv_alpha).astype(_F) / den).astype(_F))
            lg = special.gammaln((k + _F(1.0)).astype(np.float64)).astype(_F)
            t_ = (_fma(k, log_lam, -lam) - lg).astype(_F)
            accept1 = (us >= _F(0.07)) & (v <= v_r)
            reject = (k < 0) | ((us < _F(0.013)) & (v > us))
            accept = accept1 | (~reject & (s_ <= t_))
            accept &= going
            out = np.where(accept, k, out)
            accepted |= accept
    return out


def _poisson_from(keys, lam, shape, dtype):
    d = _int_dtype(dtype, "poisson")
    lam = _param(lam, "poisson", "lam")
    if shape is None:
        shape = lam.shape
    else:
        shape = _shape(shape, "poisson")
        _check_shape("poisson", shape, lam.shape)
    batch = keys.shape[:-1]
    lam = np.broadcast_to(lam, batch + shape).astype(_F)
    knuth = np.isnan(lam) | (lam < 10)
    res = np.zeros(batch + shape, np.int64)
    if knuth.any():
        res = _poisson_knuth(keys, np.where(knuth, lam, _F(0.0)), shape)
    if not knuth.all():
        rej = _poisson_rejection(keys, np.where(knuth, _F(1e5), lam), shape)
        res = np.where(knuth, res, rej.astype(np.int64))
    res = np.where(lam == 0, 0, res)
    return res.astype(d)


# =========================================================================== gamma family
_THIRD = _F(1.0 / 3.0)
_SQUEEZE = _F(0.0331)


def _gamma_cond(X, V, U, d):
    """Marsaglia-Tsang's rejection test (True = reject, draw again)."""
    with np.errstate(all="ignore"):
        t1 = U >= _fma(-_SQUEEZE, (X * X).astype(_F), _F(1.0))
        inner = ((_F(1.0) - V).astype(_F) + _tf.log32(V)).astype(_F)
        t2 = _tf.log32(U) >= _fma(X, _F(0.5), (d * inner).astype(_F))
    return t1 & t2


def _gamma_flat(keys: np.ndarray, alpha: np.ndarray, log_space: bool) -> np.ndarray:
    """One Marsaglia-Tsang draw per (key, alpha) pair, both flat: JAX's
    ``_gamma_one`` with its key usage (a split for the boost draw, a 3-way split
    per proposal, a split per normal draw of the inner ``v <= 0`` loop)."""
    m = alpha.shape[0]
    boost = alpha >= _F(1.0)
    a = np.where(boost, alpha, (alpha + _F(1.0)).astype(_F)).astype(_F)
    with np.errstate(invalid="ignore", divide="ignore"):
        d = (a - _THIRD).astype(_F)
        c = (_THIRD / np.sqrt(d)).astype(_F)
    key, sub = _split(keys, 2)
    X = np.zeros(m, _F)
    V = np.ones(m, _F)
    U = np.full(m, _F(2.0))
    active = np.ones(m, bool)
    while True:
        active[active] = _gamma_cond(X[active], V[active], U[active], d[active])
        idx = np.nonzero(active)[0]
        if idx.size == 0:
            break
        key_i, xk, uk = _split(key[idx], 3)
        key[idx] = key_i
        x = np.zeros(idx.size, _F)
        v = np.full(idx.size, _F(-1.0))
        kk = xk
        ci = c[idx]
        while True:
            todo = np.nonzero(v <= 0)[0]  # NaN parameters leave the loop, as in JAX
            if todo.size == 0:
                break
            k2, s2 = _split(kk[todo], 2)
            kk[todo] = k2
            xn = _normal(s2, ())
            x[todo] = xn
            v[todo] = _fma(xn, ci[todo], _F(1.0))
        X[idx] = (x * x).astype(_F)
        V[idx] = ((v * v).astype(_F) * v).astype(_F)
        U[idx] = _uniform(uk, ())
    with np.errstate(all="ignore"):
        if log_space:
            ls = _tf.log1p32(-_uniform(sub, ()))  # -exponential
            lb = np.where(
                boost | (ls == 0), _F(0.0), (ls * (_F(1.0) / alpha).astype(_F)).astype(_F)
            )
            return ((_tf.log32(d) + _tf.log32(V)).astype(_F) + lb).astype(_F)
        samples = (_F(1.0) - _uniform(sub, ())).astype(_F)
        bst = np.where(boost, _F(1.0), _x.powf(samples, (_F(1.0) / alpha).astype(_F)))
        return (((d * V).astype(_F)) * bst).astype(_F)


def _gamma_impl(keys, a: np.ndarray, shape: tuple, log_space: bool) -> np.ndarray:
    """``shape`` draws per key of ``keys (..., 2)``: key ``i`` of
    ``split(key, prod(shape))`` for the element at flat index ``i``."""
    batch = keys.shape[:-1]
    n = int(np.prod(shape, dtype=np.int64))
    ks = _tf.split(keys, (n,), _partitionable()).reshape(-1, 2)
    alpha = np.broadcast_to(np.broadcast_to(a, shape).reshape(-1), batch + (n,)).reshape(-1)
    out = _gamma_flat(ks.copy(), np.ascontiguousarray(alpha, _F), log_space)
    return out.reshape(batch + tuple(shape))


def _gamma_from(keys, a, shape, dtype, log_space=False):
    name = "loggamma" if log_space else "gamma"
    _fdtype(dtype, name)
    a = _param(a, name, "a")
    shape = _out_shape(name, shape, a)
    return _gamma_impl(keys, a, shape, log_space)
