"""``srcjax.example_libraries``: JAX's small example libraries, ported.

``optimizers`` (``jax.example_libraries.optimizers``: ``(init_fun, update_fun,
get_params)`` triples) and ``stax`` (``jax.example_libraries.stax``:
``(init_fun, apply_fun)`` layer pairs), written in plain srcjax code so that a
jitted, differentiated or batched training step inlines them like user code.
"""

from . import optimizers, stax  # noqa: F401

__all__ = ["optimizers", "stax"]
