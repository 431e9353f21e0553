"""The implementations of the samplers built on ``bits``/``uniform``:
``bernoulli``, ``exponential``, ``gumbel``, ``randint``, ``rademacher``,
``permutation``, ``choice``, ``categorical``, ``laplace``, ``logistic`` (one
key each; ``_<name>_b`` over a batch of keys), bit for bit JAX's."""

from __future__ import annotations

import functools
import math
import operator
from typing import Any

import numpy as np

from .. import dtypes as _dt
from ..primitives.reductions import top_k_indices
from . import _threefry as _tf
from ._base import (
    _broadcast_param,
    _float_dtype,
    _key,
    _keys,
    _partitionable,
    _shape,
    _uniform_from,
)

#: the Args/Returns/Raises of the float samplers with ``(key, shape, dtype)``
#: (exponential, laplace, logistic), appended to each one's summary
_FLOAT_SAMPLER_DOC = """

    Args:
        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).
        shape: the result's shape.
        dtype: float32 or float64 (default: the default float dtype, float64
            with ``jax_enable_x64``; float64 uses XLA:CPU's float64 ``log``/``log1p``,
            ``_threefry.log64``/``log1p64``, bit for bit too).

    Returns:
        array of ``shape`` and ``dtype``.

    Raises:
        NotImplementedError: float16.
        ValueError, TypeError: as :func:`uniform`.
    """


# =========================================================================== built on uniform
def _bernoulli_from(keys, p, shape, mode):
    if mode not in ("high", "low"):
        raise ValueError(f"got mode={mode!r}, expected 'high' or 'low'")
    if isinstance(p, (bool, int)) or getattr(p, "dtype", np.dtype(float)).kind != "f":
        d = _dt.dtype_of(p) if not isinstance(p, (np.ndarray, np.generic)) else p.dtype
        raise TypeError(f"bernoulli probability `p` must have a floating dtype, got {d}.")
    d = _float_dtype(_dt.dtype_of(p), "bernoulli")
    p = _dt.canonicalize_value(np.asarray(p)).astype(d)
    if shape is None:
        shape = p.shape
    else:
        shape = _shape(shape, "bernoulli")
        _broadcast_param(p, shape, d, "bernoulli")
    if mode == "low":
        return _uniform_from(keys, shape, d, 0.0, 1.0, "bernoulli") < p
    u = _uniform_from(keys, (2,) + tuple(shape), d, 0.0, 1.0, "bernoulli")
    axis = u.ndim - len(shape) - 1  # the (2,) axis, after any batch of keys
    u1, u2 = np.take(u, 0, axis=axis), np.take(u, 1, axis=axis)
    u2 = u2 * d.type(2.0 ** -np.finfo(d).nmant)
    return u2 < (p - u1).astype(d)


def _bernoulli_b(key, p=0.5, shape=None, mode="low"):
    """vmap's ``bernoulli``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."""
    return _bernoulli_from(_keys(key, "bernoulli"), p, shape, mode)


def _bernoulli(key, p=0.5, shape=None, mode="low"):
    """Bernoulli random booleans (``jax.random.bernoulli``): ``uniform(key, shape,
    p.dtype) < p``; ``mode="high"`` draws two uniforms per value and compares
    ``u2 * 2**-nmant < p - u1``, as JAX.

    Args:
        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).
        p: probability, a float scalar or float array (float32, or float64 with
            ``jax_enable_x64``; a Python float has the default float dtype).
        shape: the result's shape (default ``p``'s shape); ``p`` must broadcast
            to it.
        mode: ``"low"`` (default) or ``"high"``.

    Returns:
        bool array of ``shape``.

    Raises:
        TypeError: a ``p`` that is not floating; an invalid key.
        ValueError: an unknown ``mode``; ``p`` not broadcasting to ``shape``; a
            batch of keys (use ``srcjax.vmap``).
        NotImplementedError: float16 ``p``.
    """
    return _bernoulli_from(_key(key, "bernoulli"), p, shape, mode)


def _xla_log(d):
    """XLA:CPU's ``log`` of dtype ``d`` (float32 or float64), bit for bit."""
    return _tf.log64 if d == np.float64 else _tf.log32


def _xla_log1p(d):
    """XLA:CPU's ``log1p`` of dtype ``d`` (float32 or float64), bit for bit."""
    return _tf.log1p64 if d == np.float64 else _tf.log1p32


def _float32_only(dtype, name, why):
    """The sampler ``name``'s dtype (``_float_dtype``), which must be float32:
    NotImplementedError saying ``why`` otherwise (the samplers of _dist_impls
    and _compose; internal)."""
    d = _float_dtype(dtype, name)
    if d != np.float32:
        raise NotImplementedError(
            f"srcjax.random.{name}: float64 is not implemented ({why}); pass dtype=jnp.float32"
        )
    return d


def _exponential_from(keys, shape, dtype):
    d = _float_dtype(dtype, "exponential")
    u = _uniform_from(keys, shape, d, 0.0, 1.0, "exponential")
    return -_xla_log1p(d)(-u)


def _exponential_b(key, shape=(), dtype=float):
    """vmap's ``exponential``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."""
    return _exponential_from(_keys(key, "exponential"), shape, dtype)


def _exponential(key, shape=(), dtype=float):
    """Exponential random values (``jax.random.exponential``): ``-log1p(-u)`` for
    ``u = uniform(key, shape)``, with XLA:CPU's float32 ``log1p`` (SPEC.md §9)."""
    return _exponential_from(_key(key, "exponential"), shape, dtype)


_exponential.__doc__ += _FLOAT_SAMPLER_DOC


def _gumbel_from(keys, shape, dtype, mode):
    if mode != "low":
        raise NotImplementedError(f"srcjax.random.gumbel: mode={mode!r} is not implemented")
    d = _float_dtype(dtype, "gumbel")
    u = _uniform_from(keys, shape, d, _tiny(d), 1.0, "gumbel")
    return -_xla_log(d)(-_xla_log(d)(u))


def _gumbel_b(key, shape=(), dtype=float, mode="low"):
    """vmap's ``gumbel``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."""
    return _gumbel_from(_keys(key, "gumbel"), shape, dtype, mode)


def _gumbel(key, shape=(), dtype=float, mode="low"):
    """Standard Gumbel random values (``jax.random.gumbel``): ``-log(-log(u))`` for
    ``u = uniform(key, shape, minval=finfo(float32).tiny, maxval=1)``, with
    XLA:CPU's float32 ``log`` (SPEC.md §9).

    Args:
        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).
        shape: the result's shape.
        dtype: float32 or float64 (default: the default float dtype; float64
            with XLA:CPU's float64 ``log``, bit for bit too).
        mode: ``"low"`` (the default); JAX's ``"high"``/``"highest"`` are not
            implemented.

    Returns:
        array of ``shape`` and ``dtype``.

    Raises:
        NotImplementedError: float16, or another ``mode``.
        ValueError, TypeError: as :func:`uniform`.
    """
    return _gumbel_from(_key(key, "gumbel"), shape, dtype, mode)


# =========================================================================== integers
def _asarray(v: Any, name: str) -> np.ndarray:
    """``v`` as ``jnp.asarray`` would make it: Python scalars get the default
    dtypes (OverflowError for an int outside int32 while x64 is off), NumPy
    values their canonical dtype. Lists raise JAX's TypeError."""
    if isinstance(v, (list, tuple)):
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(v)}")
    if isinstance(v, (np.ndarray, np.generic)):
        return np.asarray(_dt.canonicalize_value(np.asarray(v)))
    if isinstance(v, bool):
        return np.asarray(v)
    if isinstance(v, int):
        _dt.check_int32_range(v)
        return np.asarray(v, _dt.default_int())
    if isinstance(v, float):
        return np.asarray(v, _dt.default_float())
    if isinstance(v, complex):
        return np.asarray(v, _dt.default_complex())
    raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(v)}")


def _int_dtype(dtype: Any, name: str) -> np.dtype:
    d = _dt.canonicalize_dtype(int if dtype is None else dtype)
    if d.kind not in "iu":
        raise TypeError(f"{name} only accepts integer dtypes, got {d}")
    return d


def _to_int(a: np.ndarray) -> np.ndarray:
    """A non-integer bound as ``astype(int)`` in XLA: truncation, saturating,
    NaN -> 0."""
    if a.dtype.kind in "iu":
        return a
    d = _dt.default_int()
    if a.dtype.kind == "b":
        return a.astype(d)
    info = np.iinfo(d)
    with np.errstate(invalid="ignore"):
        t = np.nan_to_num(np.trunc(np.real(a).astype(np.float64)), nan=0.0)
        return np.clip(t, float(info.min), float(info.max)).astype(d)


@functools.lru_cache(maxsize=None)
def _tiny(d: np.dtype) -> float:
    """The smallest normal number of float dtype ``d``, as a Python float (exact:
    a float32 or float64 value; a Python number takes the samplers' scalar path)."""
    return float(np.finfo(d).tiny)


@functools.lru_cache(maxsize=None)
def _int_range(d: np.dtype) -> tuple:
    """``(min, max)`` of integer dtype ``d`` as Python ints (np.iinfo once)."""
    info = np.iinfo(d)
    return int(info.min), int(info.max)


def _clip_convert(a: np.ndarray, d: np.dtype) -> np.ndarray:
    """Integer ``a`` converted to integer ``d``, clipped to ``d``'s range
    instead of wrapping (JAX's ``_convert_and_clip_integer``)."""
    (smin, smax), (dmin, dmax) = _int_range(a.dtype), _int_range(d)
    lo, hi = max(smin, dmin), min(smax, dmax)
    if a.ndim == 0:  # (a bound given as a scalar: Python ints, np.clip costs 10 us)
        return np.asarray(min(max(int(a), lo), hi), d)
    return np.clip(a, a.dtype.type(lo), a.dtype.type(hi)).astype(d)


def _urem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """XLA's unsigned remainder: ``a % 0 == a``."""
    zero = b == 0
    return np.where(zero, a, a % np.where(zero, b.dtype.type(1), b)).astype(b.dtype)


def _check_shape(name: str, shape: tuple, *param_shapes) -> None:
    try:
        out = np.broadcast_shapes(shape, *param_shapes)
    except ValueError:
        out = None
    if out != tuple(shape):
        raise ValueError(
            f"{name}: parameter shapes {list(param_shapes)} must broadcast to the shape "
            f"argument {tuple(shape)}"
        )


def _randint_from(keys, shape, minval, maxval, dtype):
    shape = _shape(shape, "randint")
    d = _int_dtype(dtype, "randint")
    lo, hi = _asarray(minval, "randint"), _asarray(maxval, "randint")
    sd = d
    if d.itemsize < 4:  # sampled in 32 bits, as JAX, to reduce the bias
        sd = np.dtype(np.int32)
        info = np.iinfo(d)
        with np.errstate(over="ignore"):
            lo = _to_int(lo).astype(np.int32).clip(info.min, info.max)
            hi = _to_int(hi).astype(np.int32).clip(info.min, info.max + 1)
    if lo.ndim or hi.ndim:  # (scalars broadcast to any shape)
        _check_shape("randint", shape, lo.shape, hi.shape)
    lo, hi = _to_int(lo), _to_int(hi)
    out_of_range = hi > min(_int_range(sd)[1], _int_range(hi.dtype)[1])
    lo, hi = _clip_convert(lo, sd), _clip_convert(hi, sd)
    nbits = 8 * sd.itemsize
    ud = np.dtype(f"uint{nbits}")
    ks = _tf.split(keys, (2,), _partitionable())
    higher = _tf.bits(ks[..., 0, :], shape, nbits, _partitionable())
    lower = _tf.bits(ks[..., 1, :], shape, nbits, _partitionable())
    if lo.ndim == 0 and hi.ndim == 0:
        out = _scalar_span(higher, lower, lo, hi, bool(out_of_range), sd, ud)
        if out is not None:
            return out.reshape(keys.shape[:-1] + shape).astype(d)
    with np.errstate(over="ignore"):
        span = np.atleast_1d(hi - lo).astype(ud)  # wraps, as XLA
        one = ud.type(1)
        span = np.where(hi <= lo, one, span).astype(ud)
        span = np.where(out_of_range & (hi > lo), span + one, span).astype(ud)
        mult = _urem(np.full(span.shape, 2 ** (nbits // 2), ud), span)
        mult = _urem(mult * mult, span)
        offset = _urem(_urem(higher, span) * mult + _urem(lower, span), span)
        out = (lo + offset.astype(sd)).astype(sd)
    return out.reshape(keys.shape[:-1] + shape).astype(d)


def _scalar_span(higher, lower, lo, hi, out_of_range: bool, sd, ud) -> Any:
    """:func:`_randint_from`'s result for scalar bounds: the span and its
    multiplier in Python ints, wrapped as the unsigned arrays wrap (the general
    path's six ``_urem`` calls on one-element arrays were most of a small draw);
    None for a span of 0 (the whole range of 64 bits), left to that path."""
    m = 1 << (8 * ud.itemsize)
    ilo, ihi = int(lo), int(hi)
    span = 1 if ihi <= ilo else (ihi - ilo) % m
    if out_of_range and ihi > ilo:
        span = (span + 1) % m
    if span == 0:
        return None
    mult = (1 << (4 * ud.itemsize)) % span
    mult = (mult * mult) % m % span
    sp, mu = ud.type(span), ud.type(mult)
    if higher.ndim:  # (arrays wrap without a warning; NumPy scalars warn)
        return (lo + (((higher % sp) * mu + lower % sp) % sp).astype(sd)).astype(sd)
    with np.errstate(over="ignore"):
        offset = ((higher % sp) * mu + lower % sp) % sp
        return (lo + offset.astype(sd)).astype(sd)


def _randint_b(key, shape, minval, maxval, dtype=None):
    """vmap's ``randint``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."""
    return _randint_from(_keys(key, "randint"), shape, minval, maxval, dtype)


def _randint(key, shape, minval, maxval, dtype=None):
    """Uniform random integers in ``[minval, maxval)`` (``jax.random.randint``).

    As JAX: two words of random bits per value (from the two keys of
    ``split(key)``) reduced modulo ``maxval - minval`` (so slightly biased
    unless the span is a power of two); 8- and 16-bit dtypes sample in 32 bits;
    ``maxval <= minval`` gives ``minval``; bounds are clipped to ``dtype``'s
    range (``randint(k, s, 0, 256, uint8)`` covers all of uint8).

    Args:
        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).
        shape: the result's shape (a tuple of ints; an int ``n`` means ``(n,)``).
        minval, maxval: integer scalars or arrays broadcasting to ``shape``
            (floats are truncated, as JAX's ``astype(int)``).
        dtype: an integer dtype; default int32 (int64 with ``jax_enable_x64``).

    Returns:
        array of ``shape`` and ``dtype``.

    Raises:
        TypeError: a non-integer dtype; an invalid key or shape.
        ValueError: bounds that do not broadcast to ``shape``; a batch of keys
            (use ``srcjax.vmap``).
        OverflowError: a Python int bound outside int32 while x64 is off.
    """
    return _randint_from(_key(key, "randint"), shape, minval, maxval, dtype)


def _rademacher_from(keys, shape, dtype):
    d = _dt.canonicalize_dtype(int if dtype is None else dtype)
    b = _bernoulli_from(keys, 0.5, _shape(shape, "rademacher"), "low")
    return (2 * b.astype(np.int64) - 1).astype(d)


def _rademacher_b(key, shape=(), dtype=None):
    """vmap's ``rademacher``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."""
    return _rademacher_from(_keys(key, "rademacher"), shape, dtype)


def _rademacher(key, shape=(), dtype=None):
    """Random signs, -1 or 1 with probability 1/2 each (``jax.random.rademacher``):
    ``2 * bernoulli(key, 0.5, shape) - 1`` converted to ``dtype``.

    Args:
        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).
        shape: the result's shape.
        dtype: default int32 (int64 with ``jax_enable_x64``); any numeric dtype
            (an unsigned one wraps -1 around, as JAX).

    Returns:
        array of ``shape`` and ``dtype``.

    Raises:
        TypeError, ValueError: an invalid key or shape; a batch of keys.
    """
    return _rademacher_from(_key(key, "rademacher"), shape, dtype)


# =========================================================================== permutations
def _canon_axis(axis: Any, ndim: int) -> int:
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def _shuffle_from(keys, x: np.ndarray, axis: int) -> np.ndarray:
    """JAX's ``_shuffle``: rounds of a stable sort of ``x`` along ``axis`` by fresh
    uint32 words; ``keys.shape[:-1] + x.shape``."""
    batch = keys.shape[:-1]
    # (never at an integer: 3 log(n) / log(2**32 - 1) is one only for n**3 = (2**32 - 1)**k)
    rounds = math.ceil(3 * math.log(max(1, x.size)) / math.log(2**32 - 1))
    out = np.broadcast_to(x, batch + x.shape) if batch else x
    ax = len(batch) + axis
    for _ in range(rounds):
        ks = _tf.split(keys, (2,), _partitionable())
        keys, sub = ks[..., 0, :], ks[..., 1, :]
        words = _tf.bits(sub, x.shape, 32, _partitionable())
        order = np.argsort(words, axis=ax, kind="stable")
        out = out[order] if out.ndim == 1 else np.take_along_axis(out, order, axis=ax)
    return np.array(out)


def _take_b(arr: np.ndarray, ind: np.ndarray, axis: int, nb: int) -> np.ndarray:
    """``np.take(arr, ind[b], axis)`` for each of the ``nb`` leading batch axes of
    ``ind``: ``ind.shape[:nb] + arr.shape[:axis] + ind.shape[nb:] +
    arr.shape[axis+1:]``. Out-of-range indices read JAX's fill value."""
    n = arr.shape[axis]
    bad = (ind < 0) | (ind >= n)
    r = np.moveaxis(arr, axis, 0)[np.where(bad, 0, ind)]
    if np.any(bad):
        d = arr.dtype
        fill = (
            np.nan
            if d.kind in "fc"
            else (
                True if d.kind == "b" else (np.iinfo(d).max if d.kind == "u" else np.iinfo(d).min)
            )
        )
        r = np.where(bad.reshape(bad.shape + (1,) * (r.ndim - bad.ndim)), d.type(fill), r)
    ni = ind.ndim - nb
    return np.moveaxis(r, list(range(nb + ni, nb + ni + axis)), list(range(nb, nb + axis)))


def _permutation_from(keys, x, axis, independent):
    if not isinstance(x, (int, np.integer, float, bool, np.ndarray, np.generic)):
        raise TypeError(
            f"permutation requires ndarray or scalar arguments, got {type(x)} at position 0."
        )
    arr = _asarray(x, "permutation")
    axis = _canon_axis(axis, arr.ndim or 1)
    if arr.ndim == 0:
        if arr.dtype.kind not in "iu":
            raise TypeError("x must be an integer or at least 1-dimensional")
        return _shuffle_from(keys, np.arange(int(arr), dtype=_dt.default_int()), axis)
    if independent or arr.ndim == 1:
        return _shuffle_from(keys, arr, axis)
    ind = _shuffle_from(keys, np.arange(arr.shape[axis], dtype=_dt.default_int()), 0)
    if ind.ndim == 1:  # (one key: a permutation of arange, every index in range)
        return np.take(arr, ind, axis=axis)
    return _take_b(arr, ind, axis, ind.ndim - 1)


def _permutation_b(key, x, axis=0, independent=False):
    """vmap's ``permutation``: keys ``(..., 2)`` -> ``(...,) + x.shape`` (internal)."""
    return _permutation_from(_keys(key, "permutation"), x, axis, independent)


def _permutation(key, x, axis=0, independent=False):
    """A random permutation of ``arange(x)`` or of ``x`` along ``axis``
    (``jax.random.permutation``).

    As JAX: ``ceil(3 ln(n) / ln(2**32 - 1))`` rounds (one up to n = 1625 elements)
    of a stable sort by fresh random uint32 words, each round from a new
    ``split`` of the key. With ``independent=False`` one permutation of the
    indices reorders whole slices along ``axis``; with ``independent=True``
    every 1-D slice along ``axis`` is shuffled on its own.

    Args:
        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).
        x: an integer scalar ``n`` (permutes ``arange(n)``) or an array.
        axis: the axis to permute along.
        independent: shuffle each slice along ``axis`` independently.

    Returns:
        ``arange(n)`` permuted (int32, int64 with ``jax_enable_x64``), or an
        array of ``x``'s shape and (canonical) dtype.

    Raises:
        TypeError: a non-integer scalar ``x``; a list ``x``; an invalid key.
        ValueError: ``axis`` out of bounds; a batch of keys (use ``srcjax.vmap``).

    Not differentiable in ``x`` in srcjax (JAX is): asking for that derivative
    raises an error.
    """
    return _permutation_from(_key(key, "permutation"), x, axis, independent)


def _float_param(p: Any, name: str) -> np.ndarray:
    """``p`` promoted to inexact as JAX's ``promote_dtypes_inexact``."""
    a = _asarray(p, name) if not isinstance(p, (list, tuple)) else None
    if a is None:
        raise TypeError(f"{name} requires ndarray or scalar arguments, got {type(p)}")
    if a.dtype.kind in "biu":
        a = a.astype(_dt.to_inexact_dtype(a.dtype))
    return a


def _cumsum_xla(x: np.ndarray, base: int = 16) -> np.ndarray:
    """``jnp.cumsum`` of a 1-D float array with XLA:CPU's rounding: a sequential
    sum up to ``base`` elements; longer, XLA rewrites the scan as a tree: blocks
    of ``base`` (zero-padded) are summed sequentially, and each block adds the
    exclusive prefix of the block totals (computed the same way, recursively)."""
    n = x.shape[0]
    if n <= base:
        return np.cumsum(x, dtype=x.dtype)
    blocks = np.zeros(-(-n // base) * base, x.dtype)
    blocks[:n] = x
    inner = np.cumsum(blocks.reshape(-1, base), axis=1, dtype=x.dtype)
    prefix = np.zeros(inner.shape[0], x.dtype)
    prefix[1:] = _cumsum_xla(inner[:-1, -1].copy(), base)
    return (inner + prefix[:, None]).astype(x.dtype).reshape(-1)[:n]


def _searchsorted_left(a: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``jnp.searchsorted(a, v)`` (method ``"scan"``): JAX's fixed-length binary
    search, which is what matters when ``a`` is not sorted."""
    n = a.shape[0]
    if not np.isnan(a).any() and (a[:-1] <= a[1:]).all():
        # (sorted, a cumulative sum of probabilities: the search's fixed point is
        # the lower bound, NaNs of v last, as NumPy's; one call for the loop's 3n)
        return np.searchsorted(a, v, "left").astype(np.int64)
    low = np.zeros(v.shape, np.int64)
    high = np.full(v.shape, n, np.int64)
    for _ in range(int(np.ceil(np.log2(n + 1)))):
        mid = low + (high - low) // 2
        am = a[np.minimum(mid, n - 1)]
        with np.errstate(invalid="ignore"):
            # NaNs sort last: v <= a[mid] unless v is NaN and a[mid] is not
            left = (v <= am) | np.isnan(am)
        low, high = np.where(left, low, mid), np.where(left, mid, high)
    return high


def _top_k_indices(v: np.ndarray, k: int) -> np.ndarray:
    """``lax.top_k(v, k)[1]`` along the last axis: descending in IEEE total order
    (NaN first, +0 before -0), ties to the lower index."""
    return top_k_indices(v, k)


def _log(x: np.ndarray) -> np.ndarray:
    if x.dtype not in (np.float32, np.float64):
        raise NotImplementedError(
            f"srcjax.random: {x.dtype} probabilities are not implemented (XLA's log is "
            "reproduced for float32 and float64); pass float32 values"
        )
    return _xla_log(x.dtype)(x)


def _choice_from(keys, a, shape, replace, p, axis, mode):
    from collections.abc import Sequence

    if not isinstance(shape, Sequence):
        raise TypeError(f"shape argument of jax.random.choice must be a sequence, got {shape}")
    shape = _shape(shape, "choice")
    arr = _asarray(a, "choice")
    if arr.ndim == 0:
        n_inputs = int(arr)
    else:
        axis = _canon_axis(axis, arr.ndim)
        n_inputs = arr.shape[axis]
    batch = keys.shape[:-1]
    nb = len(batch)
    n_draws = math.prod(shape)
    if n_draws == 0:
        return np.zeros(batch + shape, arr.dtype)
    if n_inputs <= 0:
        raise ValueError("a must be greater than 0 unless no samples are taken")
    if not replace and n_draws > n_inputs:
        raise ValueError(
            f"Cannot take a larger sample (size {n_draws}) than population (size "
            f"{n_inputs}) when 'replace=False'"
        )
    if p is None:
        if replace:
            ind = _randint_from(keys, shape, 0, n_inputs, None)
            result = ind if arr.ndim == 0 else _take_b(arr, ind, axis, nb)
        else:
            if arr.ndim == 0 and axis not in (0, -1):
                raise IndexError("too many indices for array")
            x = n_inputs if arr.ndim == 0 else arr
            perm = _permutation_from(keys, np.asarray(x) if arr.ndim == 0 else x, axis, False)
            ax = nb + (0 if arr.ndim == 0 else axis)
            result = perm[(slice(None),) * ax + (slice(n_draws),)]
    else:
        pa = _float_param(p, "choice")
        if pa.shape != (n_inputs,):
            raise ValueError(
                "p must be None or a 1D vector with the same size as a.shape[axis]. "
                f"p has shape {pa.shape} and a.shape[axis] is {n_inputs}."
            )
        d = _float_dtype(pa.dtype, "choice")
        if replace:
            cum = _cumsum_xla(pa.astype(d))
            u = _uniform_from(keys, shape, d, 0.0, 1.0, "choice")
            r = (cum[-1] * (d.type(1) - u)).astype(d)
            ind = _searchsorted_left(cum, r).astype(_dt.default_int())
        else:
            g = _gumbel_from(keys, (n_inputs,), d, "low" if mode is None else mode)
            ind = _top_k_indices((g + _log(pa)).astype(d), n_draws).astype(_dt.default_int())
        result = ind if arr.ndim == 0 else _take_b(arr, ind, axis, nb)
    out = shape if arr.ndim == 0 else arr.shape[:axis] + shape + arr.shape[axis + 1 :]
    return np.asarray(result).reshape(batch + out)


def _choice_b(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """vmap's ``choice``: keys ``(..., 2)`` -> ``(...,) + result`` (internal)."""
    return _choice_from(_keys(key, "choice"), a, shape, replace, p, axis, mode)


def _choice(key, a, shape=(), replace=True, p=None, axis=0, mode=None):
    """A random sample from ``a`` (``jax.random.choice``).

    As JAX: with replacement and no ``p``, indices from ``randint(key, shape, 0,
    n)``; without replacement, the first ``prod(shape)`` entries of
    ``permutation(key, a, axis)``; with ``p`` and replacement, a search of
    ``cumsum(p)[-1] * (1 - uniform(key, shape))`` in ``cumsum(p)``; with ``p`` and
    without replacement, the Gumbel top-k trick (``gumbel(key, (n,)) + log(p)``).

    Args:
        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).
        a: an int ``n`` (sample ``arange(n)``) or an array (sample slices along
            ``axis``).
        shape: the sample's shape, a sequence of ints (default ``()``).
        replace: sample with replacement (default True).
        p: optional 1-D probabilities of length ``n`` (not necessarily
            normalised); float32 (float64 with replacement under x64).
        axis: the axis of ``a`` to sample along.
        mode: the Gumbel mode for ``p`` without replacement: ``None`` / ``"low"``.

    Returns:
        for an int ``a``: int32 (int64 with x64) of ``shape``; else ``a``'s dtype
        and shape ``a.shape[:axis] + shape + a.shape[axis+1:]``.

    Raises:
        TypeError: ``shape`` not a sequence; a list ``a``; an invalid key.
        ValueError: ``a`` with no entries; more draws than entries without
            replacement; ``p`` of the wrong shape; ``axis`` out of bounds; a
            batch of keys (use ``srcjax.vmap``).
        NotImplementedError: float16 ``p`` without replacement; ``mode="high"``.

    Not differentiable in ``a`` in srcjax: asking for that derivative raises an
    error.
    """
    return _choice_from(_key(key, "choice"), a, shape, replace, p, axis, mode)


def _categorical_from(keys, logits, axis, shape, replace, mode):
    lg = _asarray(logits, "categorical")
    if mode not in (None, "low"):
        raise NotImplementedError(f"srcjax.random.categorical: mode={mode!r} is not implemented")
    if -lg.ndim <= axis < lg.ndim:
        batch_shape = lg.shape[: axis % lg.ndim] + lg.shape[axis % lg.ndim + 1 :]
    else:
        batch_shape = tuple(int(s) for s in np.delete(lg.shape, axis))  # (its IndexError)
    if shape is None:
        shape = batch_shape
    else:
        shape = _shape(shape, "categorical")
        _check_shape("categorical", shape, batch_shape)
    prefix = shape[: len(shape) - len(batch_shape)]
    nb = keys.ndim - 1
    if replace:
        ax = axis - lg.ndim if axis >= 0 else axis
        lshape = list(shape[len(shape) - len(batch_shape) :])
        lshape.insert(ax % lg.ndim, lg.shape[ax])
        g = _gumbel_from(keys, prefix + tuple(lshape), lg.dtype, "low")
        return np.argmax(g + lg, axis=ax).astype(_dt.default_int())
    v = (lg + _gumbel_from(keys, lg.shape, lg.dtype, "low")).astype(lg.dtype)
    k = math.prod(prefix)
    if k > lg.shape[axis]:
        raise ValueError(
            f"Number of samples without replacement ({k}) cannot exceed number of "
            f"categories ({lg.shape[axis]})."
        )
    idx = _top_k_indices(np.moveaxis(v, nb + _canon_axis(axis, lg.ndim), -1), k)
    idx = np.moveaxis(idx, -1, nb)  # batch + (k,) + batch_shape
    return idx.reshape(keys.shape[:-1] + shape)


def _categorical_b(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """vmap's ``categorical``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."""
    return _categorical_from(_keys(key, "categorical"), logits, axis, shape, replace, mode)


def _categorical(key, logits, axis=-1, shape=None, replace=True, mode=None):
    """Random category indices with probabilities ``softmax(logits, axis)``
    (``jax.random.categorical``).

    As JAX: the Gumbel-max trick, ``argmax(gumbel(key, ...) + logits, axis)``
    (first index on ties); without replacement the Gumbel top-k trick, one
    Gumbel draw per logit and ``top_k`` (IEEE total order, ties to the lower
    index).

    Args:
        key: a key: typed (shape ``()``) or raw (uint32, shape ``(2,)``).
        logits: float32 unnormalised log-probabilities (``-inf`` = impossible).
        axis: the axis of ``logits`` holding the categories.
        shape: the result's shape, broadcast-compatible with
            ``np.delete(logits.shape, axis)`` (the default); without replacement,
            ``(k,) + that`` draws ``k`` distinct categories.
        replace: sample with replacement (default True).
        mode: ``None`` / ``"low"`` (JAX's ``"high"`` is not implemented).

    Returns:
        int32 (int64 with ``jax_enable_x64``; int32 without replacement) array
        of ``shape``.

    Raises:
        ValueError: non-float logits; ``shape`` not broadcasting; more draws than
            categories without replacement; a batch of keys (use ``srcjax.vmap``).
        NotImplementedError: float16 logits; ``mode="high"``.
        TypeError: an invalid key or shape.
    """
    return _categorical_from(_key(key, "categorical"), logits, axis, shape, replace, mode)


# =========================================================================== more float32 transforms
_NEG_ONE_UP = _tf._f32(0xBF7FFFFF)  # -1 + finfo(float32).epsneg


def _laplace_from(keys, shape, dtype):
    d = _float_dtype(dtype, "laplace")
    lo = _NEG_ONE_UP if d == np.float32 else -1.0 + np.finfo(np.float64).epsneg
    u = _uniform_from(keys, shape, d, lo, 1.0, "laplace")
    return (np.sign(u) * _xla_log1p(d)(-np.abs(u))).astype(d)


def _laplace_b(key, shape=(), dtype=float):
    """vmap's ``laplace``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."""
    return _laplace_from(_keys(key, "laplace"), shape, dtype)


def _laplace(key, shape=(), dtype=float):
    """Standard Laplace random values (``jax.random.laplace``): ``sign(u) *
    log1p(-|u|)`` for ``u = uniform(key, shape, minval=-1 + epsneg, maxval=1)``,
    with XLA:CPU's float32 ``log1p`` (SPEC.md §9)."""
    return _laplace_from(_key(key, "laplace"), shape, dtype)


_laplace.__doc__ += _FLOAT_SAMPLER_DOC


def _logistic_from(keys, shape, dtype):
    d = _float_dtype(dtype, "logistic")
    x = _uniform_from(keys, shape, d, _tiny(d), 1.0, "logistic")
    return (_xla_log(d)(x) - _xla_log1p(d)(-x)).astype(d)


def _logistic_b(key, shape=(), dtype=float):
    """vmap's ``logistic``: keys ``(..., 2)`` -> ``(...,) + shape`` (internal)."""
    return _logistic_from(_keys(key, "logistic"), shape, dtype)


def _logistic(key, shape=(), dtype=float):
    """Standard logistic random values (``jax.random.logistic``): ``log(x) -
    log1p(-x)`` for ``x = uniform(key, shape, minval=finfo(float32).tiny,
    maxval=1)``, with XLA:CPU's float32 ``log``/``log1p`` (SPEC.md §9)."""
    return _logistic_from(_key(key, "logistic"), shape, dtype)


_logistic.__doc__ += _FLOAT_SAMPLER_DOC
