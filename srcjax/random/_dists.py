"""The continuous and discrete distributions of ``jax.random`` built on
:mod:`srcjax.random`'s bits, ``uniform`` and ``normal``.

Each ``_<name>_from(keys, ...)`` takes a batch of keys ``(..., 2)`` and
returns ``keys.shape[:-1] + shape``; the public primitive checks that it got a
single key, and vmap's rule calls the batched helper ``ad.random_<name>_b``
(see :func:`srcjax.random._batch_rule`).

The arithmetic follows JAX 0.10.2's definitions step for step with XLA:CPU's
float32 rounding (``._xla32``), so the values equal JAX's bit for bit on the
same machine. Only float32 is implemented: XLA's float64 ``log``/``exp``/
``erf_inv`` kernels are not reproduced, so ``dtype=float64`` raises
``NotImplementedError``.
"""

from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..primitives.elementwise import defderiv as _defderiv
from ..primitives.elementwise import exp as _exp
from ..primitives.elementwise import log as _log
from ..primitives.elementwise import where as _where
from ..primitives.special import digamma as _digamma
from . import (  # defined before srcjax/random/__init__.py imports this module
    _bernoulli_from,
    _check_shape,
    _float_dtype,
    _int_dtype,
    _key,
    _keys,
    _partitionable,
    _shape,
    _to_int,
)
from . import _gammagrad as _gg
from . import _threefry as _tf
from . import _xla32 as _x

_F = np.float32
_SQRT2 = _tf._SQRT2
_INV_SQRT2 = _tf._f32(0x3F3504F3)  # XLA rewrites x / sqrt(2) as x * f32(1/sqrt(2))
_PI = _F(np.pi)
_EPS = _F(np.finfo(np.float32).eps)


# =========================================================================== helpers
def _fdtype(dtype: Any, name: str) -> np.dtype:
    d = _float_dtype(float if dtype is None else dtype, name)
    if d != np.float32:
        raise NotImplementedError(
            f"srcjax.random.{name}: float64 is not implemented (XLA's float64 "
            "log/exp/erf_inv are not reproduced bit for bit); pass dtype=jnp.float32"
        )
    return d


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
def _truncated_normal_from(keys, lower, upper, shape, dtype):
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


def poisson_(key, lam, shape=None, dtype=None):
    return _poisson_from(_one(key, "poisson"), lam, shape, dtype)


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


# =========================================================================== public functions
_COMMON = """
    Args:
        key: a key, typed (shape ``()``) or raw (uint32 ``(2,)``); use ``srcjax.vmap`` for a batch.
{args}        dtype: float32 (the default float dtype unless ``jax_enable_x64``).

    Returns:
        float32 array of {shape_doc}.

    Raises:
        TypeError: an invalid key or shape; a parameter that is a list or complex.
        ValueError: parameter shapes that do not broadcast to ``shape``; a
            non-float dtype; a batch of keys.
        NotImplementedError: float64.

    {extra}"""


def _doc(text: str, args: str, shape_doc: str, extra: str = "") -> str:
    return text + _COMMON.format(args=args, shape_doc=shape_doc, extra=extra)


_NO_GRAD = (
    "Not differentiable in its parameters in srcjax (JAX differentiates through "
    "them): asking for that derivative raises a 'no derivative rule' error."
)
_SHAPE_DOC = "``shape`` (default: the parameters' broadcast shape)"


def _one(key, name):
    return _key(key, name)


def truncated_normal_(key, lower, upper, shape=None, dtype=None):
    return _truncated_normal_from(_one(key, "truncated_normal"), lower, upper, shape, dtype)


def cauchy_(key, shape=(), dtype=None):
    return _cauchy_from(_one(key, "cauchy"), shape, dtype)


def lognormal_(key, sigma=1.0, shape=None, dtype=None):
    return _lognormal_from(_one(key, "lognormal"), sigma, shape, dtype)


def pareto_(key, b, shape=None, dtype=None):
    return _pareto_from(_one(key, "pareto"), b, shape, dtype)


def rayleigh_(key, scale, shape=None, dtype=None):
    return _rayleigh_from(_one(key, "rayleigh"), scale, shape, dtype)


def maxwell_(key, shape=(), dtype=None):
    return _maxwell_from(_one(key, "maxwell"), shape, dtype)


def double_sided_maxwell_(key, loc, scale, shape=(), dtype=None):
    return _double_sided_maxwell_from(_one(key, "double_sided_maxwell"), loc, scale, shape, dtype)


def weibull_min_(key, scale, concentration, shape=(), dtype=None):
    return _weibull_min_from(_one(key, "weibull_min"), scale, concentration, shape, dtype)


def triangular_(key, left, mode, right, shape=None, dtype=None):
    return _triangular_from(_one(key, "triangular"), left, mode, right, shape, dtype)


def wald_(key, mean, shape=None, dtype=None):
    return _wald_from(_one(key, "wald"), mean, shape, dtype)


def geometric_(key, p, shape=None, dtype=None):
    return _geometric_from(_one(key, "geometric"), p, shape, dtype)


def gamma_(key, a, shape=None, dtype=None):
    return _gamma_from(_one(key, "gamma"), a, shape, dtype, False)


def loggamma_(key, a, shape=None, dtype=None):
    return _gamma_from(_one(key, "loggamma"), a, shape, dtype, True)


truncated_normal_.__doc__ = _doc(
    "Standard normal values truncated to ``(lower, upper)``\n    "
    "(``jax.random.truncated_normal``): ``sqrt(2) * erf_inv(uniform(key, shape,\n    "
    "minval=erf(lower/sqrt2), maxval=erf(upper/sqrt2)))`` clipped into the open\n    "
    "interval, with XLA:CPU's float32 ``erf``/``erf_inv``. Bit for bit with\n    "
    "scalar bounds; with array bounds and large outputs (e.g. ``(400, 50)``) XLA\n    "
    "evaluates the bounds' transforms in another order and values can differ.\n",
    "        lower, upper: float bounds, scalars or arrays.\n"
    "        shape: the result's shape (default: lower and upper broadcast).\n",
    _SHAPE_DOC,
    _NO_GRAD,
)
cauchy_.__doc__ = _doc(
    "Standard Cauchy values (``jax.random.cauchy``): ``tan(pi * (u - 0.5))`` for\n    "
    "``u = uniform(key, shape, minval=eps, maxval=1)``; ``tan`` is the C library's\n    "
    "``tanf``, as XLA:CPU calls it.\n",
    "        shape: the result's shape (default ``()``).\n",
    "``shape``",
)
lognormal_.__doc__ = _doc(
    "Lognormal values (``jax.random.lognormal``): ``exp(sigma * normal(key, shape))``.\n",
    "        sigma: scale of the underlying normal (default 1).\n"
    "        shape: the result's shape (default ``sigma``'s shape).\n",
    _SHAPE_DOC,
    _NO_GRAD,
)
pareto_.__doc__ = _doc(
    "Pareto values (``jax.random.pareto``): ``exp(exponential(key, shape) / b)``.\n",
    "        b: the shape parameter.\n        shape: the result's shape (default ``b``'s shape).\n",
    _SHAPE_DOC,
    _NO_GRAD,
)
rayleigh_.__doc__ = _doc(
    "Rayleigh values (``jax.random.rayleigh``): ``scale * sqrt(-2 log(u))``.\n",
    "        scale: the scale parameter.\n        shape: the result's shape (default ``scale``'s shape).\n",
    _SHAPE_DOC,
    _NO_GRAD,
)
maxwell_.__doc__ = _doc(
    "One-sided Maxwell values (``jax.random.maxwell``): the norm of 3 standard\n    "
    "normals. Bit for bit with JAX below 64 and from 2000 values on; in between\n    "
    "XLA mixes two summation orders and some values differ by an ulp.\n",
    "        shape: the result's shape (default ``()``).\n",
    "``shape``",
)
double_sided_maxwell_.__doc__ = _doc(
    "Double-sided Maxwell values (``jax.random.double_sided_maxwell``):\n    "
    "``sign * maxwell * scale + loc`` with Rademacher signs (key split in two).\n    "
    "As JAX, the result's shape is ``shape + broadcast(loc, scale).shape`` (just\n    "
    "the parameters' shape when ``shape`` is empty). Same ulp caveat as maxwell.\n",
    "        loc, scale: location and scale.\n        shape: leading shape (default ``()``).\n",
    "``shape + broadcast_shapes(loc.shape, scale.shape)``",
    _NO_GRAD,
)
weibull_min_.__doc__ = _doc(
    "Weibull values (``jax.random.weibull_min``): ``(-log1p(-u)) ** (1 /\n    "
    "concentration) * scale``; ``pow`` is the C library's ``powf``, as XLA:CPU.\n",
    "        scale, concentration: the parameters (broadcasting to ``shape``).\n"
    "        shape: the result's shape (default ``()``).\n",
    "``shape``",
    _NO_GRAD,
)
triangular_.__doc__ = _doc(
    "Triangular values (``jax.random.triangular``) by inverting the CDF.\n",
    "        left, mode, right: the parameters.\n"
    "        shape: the result's shape (default: the parameters broadcast).\n",
    _SHAPE_DOC,
    _NO_GRAD,
)
wald_.__doc__ = _doc(
    "Wald (inverse Gaussian) values (``jax.random.wald``), Michael-Schucany-Haas\n    "
    "with a normal from the first and a uniform from the second key of a split.\n",
    "        mean: the mean.\n        shape: the result's shape (default ``mean``'s shape).\n",
    _SHAPE_DOC,
    _NO_GRAD,
)
geometric_.__doc__ = (
    "Geometric values, the number of trials to the first success\n    "
    "(``jax.random.geometric``): ``floor(log(u) / log1p(-p)) + 1``.\n\n    "
    "Args:\n        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).\n"
    "        p: success probability (float).\n"
    "        shape: the result's shape (default ``p``'s shape).\n"
    "        dtype: an integer dtype (default int32, int64 with x64).\n\n    "
    "Returns:\n        integer array of ``shape``.\n\n    "
    "Raises:\n        TypeError: a non-integer dtype; an invalid key.\n"
    "        ValueError: ``p`` not broadcasting to ``shape``; a batch of keys.\n"
)
poisson_.__doc__ = (
    "Poisson random values (``jax.random.poisson``), JAX's algorithm: Knuth's\n    "
    "(products of uniforms, one draw of the whole shape per round) for ``lam < 10``\n    "
    "or NaN, Hormann's transformed rejection otherwise, both from the same key;\n    "
    "0 where ``lam == 0``. Bit for bit with JAX for ``lam < 10``; for ``lam >= 10``\n    "
    "the accept test uses SciPy's ``lgamma`` (XLA's float32 one is not reproduced):\n    "
    "an acceptance flips now and then and, as JAX redraws the whole array until\n    "
    "every value is accepted, about 4% of such values differ from JAX's (same\n    "
    "distribution: tested by moments). Not differentiable (integer values).\n\n    "
    "Args:\n        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).\n"
    "        lam: the rates (>= 0), real scalar or array.\n"
    "        shape: the result's shape (default ``lam``'s shape).\n"
    "        dtype: an integer dtype (default int32, int64 with x64).\n\n    "
    "Returns:\n        integer array of ``shape``.\n\n    "
    "Raises:\n        TypeError: a non-integer dtype; an invalid key; a list or complex ``lam``.\n"
    "        ValueError: ``lam`` not broadcasting to ``shape``; a batch of keys.\n"
)
_GAMMA_NOTE = (
    "Key usage, the rejection loop and the arithmetic follow JAX's\n    "
    "``_gamma_one`` (Marsaglia-Tsang; alpha < 1 boosted by ``u ** (1/alpha)``),\n    "
    "but NOT bit-exact: XLA:CPU computes ``1 / sqrt(d)`` with the processor's\n    "
    "approximate ``rsqrt`` instruction refined by Newton steps (its bits depend on\n    "
    "the CPU vendor), srcjax with a correctly rounded division. The draws then\n    "
    "differ from JAX's by a few ulps for some ``a`` (and, very rarely, an\n    "
    "acceptance decision flips).\n"
)
gamma_.__doc__ = _doc(
    "Gamma(a, 1) values (``jax.random.gamma``).\n\n    " + _GAMMA_NOTE,
    "        a: the shape parameter, > 0.\n        shape: the result's shape (default ``a``'s shape).\n",
    _SHAPE_DOC,
    "Differentiable in ``a`` by implicit reparameterization, as JAX: ``dx/da =\n"
    "    -(dP/da) / (dP/dx)`` for the CDF ``P(a, x)`` (``random_gamma_grad``, JAX's\n"
    "    series / continued fraction, evaluated in float64); second derivatives too\n"
    "    (also reverse over reverse, which JAX refuses); a third raises 'no\n"
    "    derivative rule'.",
)
loggamma_.__doc__ = _doc(
    "Logs of Gamma(a, 1) values computed in log space (``jax.random.loggamma``).\n\n    "
    + _GAMMA_NOTE,
    "        a: the shape parameter, > 0.\n        shape: the result's shape (default ``a``'s shape).\n",
    _SHAPE_DOC,
    "Differentiable in ``a`` as JAX: ``d log(x) / da = G(a, x) / x`` with ``G``\n"
    "    gamma's implicit derivative and ``x = exp(log x)`` (0 replaced by the\n"
    "    smallest normal float32).",
)


_HELPERS: dict = {}


def _register_elementwise(public, impl, domain, hint):
    from ..primitives.registry import Primitive, register

    p = register(Primitive(public, impl, kind="elementwise", broadcasting=True))
    p.test_domain = domain
    p.missing_rule_hint = hint
    return p


def _register_all():
    from . import _batch_rule, _internal, _key_samples, _ks, _prim

    f32 = np.float32
    table = [
        # name, public impl, batched impl, public samples, batched samples, param
        (
            "truncated_normal",
            truncated_normal_,
            _truncated_normal_from,
            lambda k: ((k, f32(-1.0), f32(2.0), (4,)), {}),
            (f32(-1.0), f32(2.0), (3,)),
            True,
        ),
        ("cauchy", cauchy_, _cauchy_from, lambda k: ((k, (4,)), {}), ((3,), None), False),
        (
            "lognormal",
            lognormal_,
            _lognormal_from,
            lambda k: ((k, f32(0.5), (4,)), {}),
            (f32(0.5), (3,), None),
            True,
        ),
        (
            "pareto",
            pareto_,
            _pareto_from,
            lambda k: ((k, f32(2.0), (4,)), {}),
            (f32(2.0), (3,), None),
            True,
        ),
        (
            "rayleigh",
            rayleigh_,
            _rayleigh_from,
            lambda k: ((k, f32(1.5), (4,)), {}),
            (f32(1.5), (3,), None),
            True,
        ),
        ("maxwell", maxwell_, _maxwell_from, lambda k: ((k, (4,)), {}), ((3,), None), False),
        (
            "double_sided_maxwell",
            double_sided_maxwell_,
            _double_sided_maxwell_from,
            lambda k: ((k, f32(0.5), f32(2.0), (4,)), {}),
            (f32(0.5), f32(2.0), (3,), None),
            True,
        ),
        (
            "weibull_min",
            weibull_min_,
            _weibull_min_from,
            lambda k: ((k, f32(1.5), f32(2.0), (4,)), {}),
            (f32(1.5), f32(2.0), (3,), None),
            True,
        ),
        (
            "triangular",
            triangular_,
            _triangular_from,
            lambda k: ((k, f32(-1.0), f32(0.2), f32(1.0), (4,)), {}),
            (f32(-1.0), f32(0.2), f32(1.0), (3,), None),
            True,
        ),
        (
            "wald",
            wald_,
            _wald_from,
            lambda k: ((k, f32(1.5), (4,)), {}),
            (f32(1.5), (3,), None),
            True,
        ),
        (
            "geometric",
            geometric_,
            _geometric_from,
            lambda k: ((k, f32(0.3), (4,)), {}),
            (f32(0.3), (3,), None),
            False,
        ),
        (
            "poisson",
            poisson_,
            _poisson_from,
            lambda k: ((k, f32(3.0), (4,)), {}),
            (f32(12.0), (3,), None),
            False,
        ),
        (
            "gamma",
            gamma_,
            _gamma_from,
            lambda k: ((k, f32(1.5), (4,)), {}),
            (f32(1.5), (3,), None),
            True,
        ),
        (
            "loggamma",
            loggamma_,
            lambda keys, a, shape=None, dtype=None: _gamma_from(keys, a, shape, dtype, True),
            lambda k: ((k, f32(0.5), (4,)), {}),
            (f32(0.5), (3,), None),
            True,
        ),
    ]
    out = {}
    for name, pub, frm, samp, bsamp, has_param in table:
        sig = inspect.signature(pub)

        def b_impl(key, *args, _frm=frm, _name=name, _sig=sig, **kw):
            bound = _sig.bind(key, *args, **kw)
            bound.apply_defaults()
            rest = list(bound.arguments.values())[1:]
            return _frm(_keys(key, _name), *rest)

        b_impl.__signature__ = inspect.signature(pub)
        b_impl.__doc__ = f"vmap's ``{name}``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."
        p = _prim(
            f"random.{name}",
            pub,
            lambda rng, _s=samp: [_s(k) for k in _key_samples(rng)],
            differentiable=has_param,
        )
        if has_param:
            p.missing_rule_hint = (
                f"srcjax.random.{name} is not differentiable in its parameters "
                "(JAX is: it differentiates through the sampler)"
            )
        helper = _internal(
            f"ad.random_{name}_b", b_impl, lambda rng, _b=bsamp: [((_ks(rng),) + _b, {})]
        )
        p.def_batch(_batch_rule(helper))
        helper.def_batch(_batch_rule(helper))
        out[name] = p
        _HELPERS[name] = helper
    return out


_PRIMS = _register_all()


# =========================================================================== gamma's derivative
def _random_gamma_grad(a, x):
    """``dx/da`` of Gamma(a, 1) samples ``x`` by implicit reparameterization
    (``jax.lax.random_gamma_grad``): ``-(dP/da) / (dP/dx)`` for the CDF ``P(a,
    x)``, with JAX's series / continued fraction (see ``_gammagrad``).

    ``a``, ``x``: broadcastable real arrays or scalars; result: their broadcast
    shape, JAX's inexact promotion of their dtypes (float32 for Python floats).
    NaN for ``a <= 0``, ``x < 0`` or NaN inputs, 0 at ``x = 0``. Differentiable
    in ``x`` and ``a`` once more; a third derivative in ``a`` raises 'no derivative
    rule'."""
    return _gg.gamma_grad(a, x)


def _random_gamma_grad_da(a, x):
    """``d/da`` of :func:`_random_gamma_grad` at fixed ``x`` (internal; shapes
    and dtypes as it). Not differentiable: a further derivative raises."""
    return _gg.gamma_grad_da(a, x)


random_gamma_grad = _register_elementwise(
    "ad.random_gamma_grad", _random_gamma_grad, (0.5, 3.0), hint=None
)
random_gamma_grad_da = _register_elementwise(
    "ad.random_gamma_grad_da",
    _random_gamma_grad_da,
    (0.5, 3.0),
    hint=(
        "srcjax differentiates gamma samples in `a` twice at most (the third "
        "derivative of the implicit reparameterization is not implemented)"
    ),
)


def _rgg_a(g, ans, a, x):
    return g * random_gamma_grad_da(a, x)


def _rgg_x(g, ans, a, x):
    return g * (_digamma(a) - _log(x) + ans * (1.0 - (a - 1.0) / x))


def _rgg_samples(rng):
    out = []
    for s in [(), (3,), (2, 3)]:
        a = rng.uniform(0.3, 4.0, s)
        out.append(((a, a * rng.uniform(0.2, 2.5, s)), {}))  # series and fraction
    out.append(((rng.uniform(0.5, 2.0, (3,)), rng.uniform(2.5, 6.0, (2, 3))), {}))
    return out


_defderiv(random_gamma_grad, _rgg_a, _rgg_x)
random_gamma_grad.samples = _rgg_samples
random_gamma_grad_da.samples = _rgg_samples


def _gamma_a(g, ans, key, a, shape=None, dtype=None):
    return g * random_gamma_grad(a, ans)


def _loggamma_a(g, ans, key, a, shape=None, dtype=None):
    # JAX: d log(x) / da = G(a, x) / x with x = exp(log x), 0 replaced by tiny
    s = _exp(ans)
    s = _where(s == 0, _TINY, s)
    return g * random_gamma_grad(a, s) / s


_TINY = _F(np.finfo(np.float32).tiny)
_IMPLICIT_HINT = (
    "srcjax.random.{} is differentiable in `a` only (implicit reparameterization, "
    "as JAX); its rule is not the derivative of the sampler's arithmetic, so the "
    "registry's finite-difference checks skip it (tests/test_random_dists.py checks it)"
)
for _name, _rule in (("gamma", _gamma_a), ("loggamma", _loggamma_a)):
    for _p in (_PRIMS[_name], _HELPERS[_name]):
        _p.broadcasting = True
        _p.differentiable = True
        _p.missing_rule_hint = _IMPLICIT_HINT.format(_name)
        _p.def_vjp(a=_rule)
        _p.def_jvp(a=_rule)
truncated_normal = _PRIMS["truncated_normal"]
cauchy = _PRIMS["cauchy"]
lognormal = _PRIMS["lognormal"]
pareto = _PRIMS["pareto"]
rayleigh = _PRIMS["rayleigh"]
maxwell = _PRIMS["maxwell"]
double_sided_maxwell = _PRIMS["double_sided_maxwell"]
weibull_min = _PRIMS["weibull_min"]
triangular = _PRIMS["triangular"]
wald = _PRIMS["wald"]
geometric = _PRIMS["geometric"]
poisson = _PRIMS["poisson"]
gamma = _PRIMS["gamma"]
loggamma = _PRIMS["loggamma"]
