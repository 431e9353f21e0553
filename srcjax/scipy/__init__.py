"""``srcjax.scipy``: the parts of ``jax.scipy`` srcjax provides (``special``,
``linalg``, ``stats``, ``optimize``, ``signal``)."""

from . import linalg, optimize, signal, special, stats

__all__ = ["linalg", "optimize", "signal", "special", "stats"]
