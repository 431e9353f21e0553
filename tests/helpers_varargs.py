"""User functions with `*args` for tests/test_functions.py (source must be in a file)."""

import srcjax.numpy as jnp


def total(*xs):
    s = 0.0
    for x in xs:
        s = s + jnp.sum(x * x)
    return s * len(xs)


def pair_total(a, b):
    return total(a, b, 2.0 * a)


def single_total(a):
    return total() + total(a)
