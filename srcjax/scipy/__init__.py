"""``srcjax.scipy``: the parts of ``jax.scipy`` srcjax provides (``special``,
``linalg``)."""

from . import linalg, special, stats

__all__ = ["linalg", "special", "stats"]
