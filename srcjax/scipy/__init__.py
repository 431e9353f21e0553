"""``srcjax.scipy``: the parts of ``jax.scipy`` srcjax provides (``special``,
``linalg``, ``stats``, ``optimize``)."""

from . import linalg, optimize, special, stats

__all__ = ["linalg", "optimize", "special", "stats"]
