"""``srcjax.nn``: neural-network functions, as ``jax.nn``.

Activations (``relu``, ``gelu``, ``sigmoid`` ...), ``softmax`` /
``log_softmax``, ``one_hot`` and ``logsumexp``. Each is a registered primitive
with JAX's subgradient conventions (``relu'(0) = 0``); generated code calls
them as ``nn.<name>``.
"""

from __future__ import annotations

import sys as _sys

import numpy as _np

from . import _nn_initializers as initializers
from . import numpy as _jnp
from .codegen.emit import register_namespace as _register_namespace
from .lax import stop_gradient as _stop_gradient
from .primitives.elementwise import tanh
from .primitives.nn import (
    celu,
    elu,
    gelu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    leaky_relu,
    log1mexp,
    log_sigmoid,
    log_softmax,
    one_hot,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    soft_sign,
    softmax,
    softplus,
    swish,
)
from .scipy.special import logsumexp

# `import srcjax.nn.initializers` and `from srcjax.nn import initializers`, as in JAX
_sys.modules.setdefault(__name__ + ".initializers", initializers)

__all__ = [
    "celu",
    "dot_product_attention",
    "elu",
    "gelu",
    "glu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "identity",
    "initializers",
    "leaky_relu",
    "log1mexp",
    "log_sigmoid",
    "log_softmax",
    "logmeanexp",
    "logsumexp",
    "mish",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "sparse_plus",
    "sparse_sigmoid",
    "squareplus",
    "standardize",
    "swish",
    "tanh",
]


# ---------------------------------------------------------------------------
# compositions of primitives (inlined by transformed code like user functions)


def standardize(
    x, axis=-1, mean=None, variance=None, epsilon=1e-5, where=None, *, algorithm="fast"
):
    """Standardize ``x`` to zero mean and unit variance along ``axis``
    (jax.nn.standardize, JAX 0.10.2): ``(x - mean) / sqrt(variance + epsilon)``.

    Args:
        x: array (an integer or bool ``x`` is computed in the default float).
        axis: int, tuple of ints or None (all axes); default the last axis.
        mean: array broadcastable to ``x`` (keep the reduced axes), default
            ``jnp.mean(x, axis, keepdims=True, where=where)``.
        variance: likewise; default ``mean(x**2) - mean**2`` clipped at 0
            (``algorithm="fast"``, JAX's default) or ``mean((x - mean)**2)``
            (``algorithm="stable"``), both with ``where``.
        epsilon: added to the variance.
        where: bool mask broadcastable to ``x``: only those elements enter the
            mean and variance (every element is still standardized; a row with
            no element selected gives NaN, as in JAX).

    Returns:
        An array of ``x``'s shape; dtype JAX's promotion of ``x``'s inexact
        dtype with ``mean``/``variance``/``epsilon`` (float32 for float32 ``x``).
        Differentiable in ``x``, ``mean``, ``variance`` and ``epsilon``.

    Raises:
        ValueError for an unknown ``algorithm``. (JAX's TypeError for list
        arguments is not raised: a list is taken as an array.)
    """
    if algorithm != "fast" and algorithm != "stable":
        raise ValueError(f"Unknown algorithm '{algorithm}'. Expected 'fast' or 'stable'.")
    if mean is None:
        mean = _jnp.mean(x, axis, keepdims=True, where=where)
    if variance is None:
        if algorithm == "stable":
            variance = _jnp.mean(
                _jnp.square(_jnp.subtract(x, mean)), axis, keepdims=True, where=where
            )
        else:
            variance = _jnp.mean(_jnp.square(x), axis, keepdims=True, where=where) - _jnp.square(
                mean
            )
            variance = _jnp.clip(variance, 0)
    return _jnp.subtract(x, mean) / _jnp.sqrt(variance + epsilon)


def identity(x):
    """``x`` as an array, unchanged (jax.nn.identity). Shape and dtype: ``x``'s."""
    return _jnp.asarray(x)


def mish(x):
    """Mish activation ``x * tanh(softplus(x))`` (jax.nn.mish), elementwise.

    Shape: ``x``'s; dtype: ``x``'s float dtype (integers give float32).
    Differentiable (a composition of primitives)."""
    x = _float(x)
    return x * tanh(softplus(x))


def squareplus(x, b=4):
    """Squareplus ``(x + sqrt(x**2 + b)) / 2`` (jax.nn.squareplus), elementwise;
    ``b`` broadcasts against ``x``. Dtype: JAX's inexact promotion of ``x`` and
    ``b`` (a Python ``b`` is weak). Differentiable in ``x`` and ``b``."""
    x = _float(x)
    y = _jnp.add(x, _jnp.sqrt(_jnp.add(_jnp.square(x), b)))
    return y / 2


def sparse_plus(x):
    """Sparse plus (jax.nn.sparse_plus): 0 for ``x <= -1``, ``x`` for ``x >= 1``,
    ``(x + 1)**2 / 4`` between; elementwise, float dtype of ``x``. Derivative
    0 at -1 and 1 at 1, as JAX's ``where``."""
    x = _float(x)
    return _jnp.where(x <= -1.0, 0.0, _jnp.where(x >= 1.0, x, (x + 1.0) ** 2 / 4))


def sparse_sigmoid(x):
    """Sparse sigmoid ``clip(x + 1, 0, 2) / 2`` (jax.nn.sparse_sigmoid),
    elementwise. At -1 and 1 the derivative is 0.25 (a clip tie splits it, as
    in JAX)."""
    x = _float(x)
    return 0.5 * _jnp.clip(x + 1.0, 0.0, 2.0)


def glu(x, axis=-1):
    """Gated linear unit (jax.nn.glu): ``x`` split in two halves ``a, b`` along
    ``axis``, ``a * sigmoid(b)``. The result has ``axis`` halved.

    Raises:
        ValueError when ``x.shape[axis]`` is odd (JAX's AssertionError text)."""
    x = _jnp.asarray(x)
    _glu_check(_jnp.shape(x), axis)
    a, b = _jnp.split(x, 2, axis)
    return a * sigmoid(b)


def _float(x):
    """``x`` as an array of its float dtype (integers and bools: float32)."""
    return _jnp.astype(x, _float_dtype(x))


def _float_dtype(x):
    """Static: JAX's inexact dtype for ``x``."""
    from . import dtypes as _dt

    return _dt.to_inexact_dtype(_dt.dtype_of(x))


_float_dtype.__srcjax_inactive__ = True


def _glu_check(shape, axis):
    if shape[axis] % 2 != 0:
        raise ValueError("axis size must be divisible by 2")
    return True


_glu_check.__srcjax_inactive__ = True  # a shape check: not differentiated


def logmeanexp(x, axis=None, where=None, keepdims=False):
    """``log(mean(exp(x)))`` over ``axis`` (jax.nn.logmeanexp):
    ``logsumexp(x) - log(n)``, with ``n`` the number of elements reduced (only
    those ``where`` selects). Shape: ``x``'s with ``axis`` removed (kept as 1
    with ``keepdims``); float dtype of ``x``. Differentiable in ``x``."""
    if where is None:
        lse = logsumexp(x, axis, keepdims=keepdims)
        count = _jnp.sum(_jnp.ones_like(x, dtype=lse.dtype), axis, keepdims=keepdims)
    else:
        w = _jnp.broadcast_to(where, _jnp.shape(x)).astype(lse_dtype(x))
        lse = logsumexp(x, axis, b=w, keepdims=keepdims)
        count = _jnp.sum(w, axis, keepdims=keepdims)
    return lse - _jnp.log(count)


def lse_dtype(x):
    """Static: the float dtype ``logsumexp`` gives ``x``."""
    return _jnp.result_type(_jnp.asarray(x).dtype, _np.float32)


lse_dtype.__srcjax_inactive__ = True


def dot_product_attention(
    query,
    key,
    value,
    bias=None,
    mask=None,
    *,
    scale=None,
    is_causal=False,
    query_seq_lengths=None,
    key_value_seq_lengths=None,
    local_window_size=None,
    implementation=None,
    return_residual=False,
):
    """Scaled dot-product attention (jax.nn.dot_product_attention, its ``xla``
    implementation): ``softmax(q k^T * scale + bias, masked) v`` per head.

    Shapes (B batch, T query length, S key length, N query heads, K key/value
    heads with N a multiple of K, H head size): ``query`` ``(B, T, N, H)`` or
    ``(T, N, H)``; ``key`` and ``value`` ``(B, S, K, H)`` or ``(S, K, H)``;
    ``bias`` and ``mask`` (bool, True = attend) broadcastable to ``(B, N, T,
    S)`` given with 4 dimensions or fewer (leading ones are added);
    ``query_seq_lengths`` / ``key_value_seq_lengths`` int32 ``(B,)``;
    ``local_window_size`` an int or ``(left, right)``. ``scale`` defaults to
    ``1 / sqrt(H)``; ``is_causal`` masks keys after the query position.

    Logits are computed in ``promote_types(query.dtype, float32)``, the softmax
    in float32, the probabilities cast to ``key``'s dtype; masked logits get
    ``-0.7 * finfo.max`` (capped at float32's), as JAX.

    Returns:
        An array of ``query``'s shape and dtype; with ``return_residual`` also
        the logsumexp of the logits, shape ``query.shape[:-1]`` (not
        differentiated, as in JAX).

    Raises:
        ValueError for inconsistent shapes or dtypes (JAX's messages) and an
        unknown ``implementation``; NotImplementedError for
        ``implementation="cudnn"`` (no cuDNN in srcjax).
    """
    _attention_implementation(implementation)
    output_shape = _jnp.shape(query)
    query = _jnp.asarray(query)
    key = _jnp.asarray(key)
    value = _jnp.asarray(value)
    q = _jnp.reshape(query, _lead_ones(_jnp.shape(query)))
    k = _jnp.reshape(key, _lead_ones(_jnp.shape(key)))
    v = _jnp.reshape(value, _lead_ones(_jnp.shape(value)))
    plan = _attention_plan(
        _jnp.shape(q),
        q.dtype,
        _jnp.shape(k),
        k.dtype,
        _jnp.shape(v),
        v.dtype,
        _attention_meta(bias),
        _attention_meta(mask),
        _attention_meta(query_seq_lengths),
        _attention_meta(key_value_seq_lengths),
        scale,
        is_causal,
        local_window_size,
    )
    # grouped heads: query (B, T, K, G, H); logits (B, K, G, T, S)
    q = _jnp.reshape(q, plan["q_grouped"]).astype(plan["logits_dtype"])
    logits = _jnp.einsum("btkgh,bskh->bkgts", q, k.astype(plan["logits_dtype"]))
    logits = logits * _jnp.asarray(plan["scale"], plan["logits_dtype"])
    if bias is not None:
        b = _grouped(_jnp.reshape(bias, _lead_ones(_jnp.shape(bias))), plan)
        logits = (logits + b).astype(plan["logits_dtype"])
    if plan["masked"]:
        keep = _jnp.asarray(plan["static_mask"])
        if mask is not None:
            m = _grouped(_jnp.reshape(mask, _lead_ones(_jnp.shape(mask))), plan)
            keep = _jnp.logical_and(keep, m)
        if query_seq_lengths is not None:
            qpos = _jnp.arange(plan["T"])[None, :, None]
            qlen = _jnp.asarray(query_seq_lengths)[:, None, None]
            keep = _jnp.logical_and(keep, (qpos < qlen)[:, None, None, :, :])
        if key_value_seq_lengths is not None:
            kpos = _jnp.arange(plan["S"])[None, None, :]
            klen = _jnp.asarray(key_value_seq_lengths)[:, None, None]
            keep = _jnp.logical_and(keep, (kpos < klen)[:, None, None, :, :])
        logits = _jnp.where(keep, logits, _jnp.asarray(plan["large_negative"], logits.dtype))
    logits32 = logits.astype(_np.float32)
    probs = softmax(logits32, axis=-1).astype(plan["dtype"])
    # products summed in at least float32 and rounded once, as XLA's CPU dot
    acc = plan["logits_dtype"]
    encoded = _jnp.einsum("bkgts,bskh->btkgh", probs.astype(acc), v.astype(acc))
    encoded = encoded.astype(plan["dtype"])
    if query_seq_lengths is not None:
        qpos = _jnp.arange(plan["T"])[None, :]
        qmask = (qpos < _jnp.asarray(query_seq_lengths)[:, None]).astype(encoded.dtype)
        encoded = encoded * qmask[:, :, None, None, None]
    out = _jnp.reshape(encoded, output_shape)
    if return_residual:
        lse = logsumexp(logits32, axis=-1).astype(plan["dtype"])  # (B, K, G, T)
        lse = _jnp.transpose(lse, (0, 3, 1, 2))
        return out, _stop_gradient(_jnp.reshape(lse, output_shape[:-1]))
    return out


def _attention_implementation(implementation):
    if implementation == "cudnn":
        raise NotImplementedError(
            "dot_product_attention(implementation='cudnn'): srcjax has no cuDNN; "
            "use implementation=None or 'xla'"
        )
    if implementation is not None and implementation != "xla":
        raise ValueError(f"Unsupported implementation option: {implementation}")
    return True


def _lead_ones(shape):
    """Static: ``shape`` with leading ones up to 4 dimensions (JAX's _ensure_4d)."""
    shape = tuple(shape)
    return (1,) * max(0, 4 - len(shape)) + shape


def _attention_meta(t):
    """Static: ``(4-d shape, dtype)`` of an optional argument, None if absent."""
    if t is None:
        return None
    a = _np.asarray(t) if not hasattr(t, "dtype") else t
    return _lead_ones(_np.shape(a)), _np.dtype(a.dtype)


def _attention_plan(
    q_shape,
    q_dtype,
    k_shape,
    k_dtype,
    v_shape,
    v_dtype,
    bias,
    mask,
    qlen,
    kvlen,
    scale,
    is_causal,
    window,
):
    """Static: JAX's shape and dtype checks, and the shapes, scale and static
    mask of the grouped computation."""
    from . import dtypes as _dt

    def check(shape, dtype, want, want_dtype, name):
        if len(shape) != len(want):
            raise ValueError(f"{name} ndim should be {len(want)}, but got {len(shape)}")
        if want_dtype is not None and _np.dtype(dtype) != _np.dtype(want_dtype):
            raise ValueError(f"{name} dtype should be {_np.dtype(want_dtype)}, but got {dtype}")
        for i in range(len(shape)):
            if want[i] != -1 and shape[i] != want[i]:
                raise ValueError(f"{name} shape should be {list(want)}: but got {tuple(shape)}")

    B, S, K, H = (int(d) for d in k_shape)
    check(v_shape, v_dtype, [B, S, K, H], k_dtype, "value")
    check(q_shape, q_dtype, [B, -1, -1, H], k_dtype, "query")
    if mask is not None:
        check(mask[0], mask[1], [-1] * 4, _np.bool_, "mask")
    if bias is not None:
        check(bias[0], bias[1], [-1] * 4, None, "bias")
    for meta, name in ((qlen, "query_seq_lengths"), (kvlen, "key_value_seq_lengths")):
        if meta is not None:
            shape = meta[0][-1:] if len(meta[0]) == 4 and meta[0][:3] == (1, 1, 1) else meta[0]
            check(shape, meta[1], [B], _np.int32, name)
    T, N = int(q_shape[1]), int(q_shape[2])
    if N % K != 0:
        raise ValueError(
            f"The number of query heads must be a multiple of key/value heads, but got {N} vs {K}"
        )
    G = N // K
    for meta, name in ((bias, "bias"), (mask, "mask")):
        if meta is not None and meta[0][1] not in (1, N):
            raise ValueError(f"{name} shape should broadcast to {(B, N, T, S)}: got {meta[0]}")
    logits_dtype = _dt.promote_types(q_dtype, _np.float32)
    static = _np.ones((T, S), bool)
    masked = mask is not None or qlen is not None or kvlen is not None
    if is_causal:
        static &= _np.tril(_np.ones((T, S), bool))
        masked = True
    if window is not None:
        if isinstance(window, int):
            window = (window, window)
        left, right = window
        qpos = _np.arange(T)[:, None]
        kpos = _np.arange(S)[None, :]
        static &= (qpos <= kpos + left) & (qpos >= kpos - right)
        masked = True
    big = min(float(_np.finfo(logits_dtype).max), float(_np.finfo(_np.float32).max))
    return {
        "q_grouped": (B, T, K, G, H),
        "logits_dtype": logits_dtype,
        "dtype": _np.dtype(k_dtype),
        "scale": (1.0 / _np.sqrt(H)) if scale is None else scale,
        "T": T,
        "S": S,
        "K": K,
        "G": G,
        "N": N,
        "masked": masked,
        "static_mask": static,
        "large_negative": -0.7 * big,
    }


def _grouped(t, plan):
    """A 4-d ``(B|1, N|1, T|1, S|1)`` bias or mask as ``(B|1, K, G, T|1, S|1)``."""
    return _jnp.reshape(_grouped_broadcast(t, plan), _grouped_shape(_jnp.shape(t), plan))


def _grouped_broadcast(t, plan):
    return _jnp.broadcast_to(t, _heads_shape(_jnp.shape(t), plan))


def _heads_shape(shape, plan):
    """Static: ``shape`` with its head axis broadcast to N."""
    return (shape[0], plan["N"], shape[2], shape[3])


def _grouped_shape(shape, plan):
    """Static: the ``(B, K, G, T, S)`` form of a ``(B, N, T, S)`` shape."""
    return (shape[0], plan["K"], plan["G"], shape[2], shape[3])


for _f in (
    _attention_implementation,
    _lead_ones,
    _attention_meta,
    _attention_plan,
    _heads_shape,
    _grouped_shape,
):
    _f.__srcjax_inactive__ = True

_register_namespace("nn", _sys.modules[__name__])  # generated code's `nn`
