"""A module whose helper tests/test_jit.py redefines (as a notebook cell run again)."""


def act(x):
    return x * 2.0


def user(x):
    return act(x) + 1.0


import srcjax.numpy as jnp  # noqa: E402

ACT = jnp.sin  # a global alias of a primitive, rebound by tests/test_jit.py


def through_alias(w):
    return ACT(w)
