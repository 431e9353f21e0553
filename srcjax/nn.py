"""``srcjax.nn``: neural-network functions, as ``jax.nn``.

Activations (``relu``, ``gelu``, ``sigmoid`` ...), ``softmax`` /
``log_softmax``, ``one_hot`` and ``logsumexp``. Each is a registered primitive
with JAX's subgradient conventions (``relu'(0) = 0``); generated code calls
them as ``nn.<name>``.
"""

from __future__ import annotations

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
    "swish",
]
