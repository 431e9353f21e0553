"""``srcjax.nn``: neural-network functions, as ``jax.nn``.

Activations (``relu``, ``gelu``, ``sigmoid`` ...), ``softmax`` /
``log_softmax``, ``one_hot`` and ``logsumexp``. Each is a registered primitive
with JAX's subgradient conventions (``relu'(0) = 0``); generated code calls
them as ``nn.<name>``.
"""

from __future__ import annotations

from . import numpy as _jnp
from .primitives.nn import (
    celu,
    elu,
    gelu,
    hard_sigmoid,
    hard_silu,
    hard_swish,
    hard_tanh,
    leaky_relu,
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
from .primitives.reductions import logsumexp

__all__ = [
    "celu",
    "elu",
    "gelu",
    "hard_sigmoid",
    "hard_silu",
    "hard_swish",
    "hard_tanh",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "logsumexp",
    "one_hot",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "soft_sign",
    "softmax",
    "softplus",
    "standardize",
    "swish",
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
