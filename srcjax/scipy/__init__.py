"""``srcjax.scipy``: the parts of ``jax.scipy`` srcjax provides (``special``)."""

from . import special

__all__ = ["special"]
