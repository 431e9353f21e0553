"""A helper module whose globals have the names of the normalizer's temporaries
(``select``, ``cond``, ``out``): see tests/test_regressions.py."""

import srcjax.numpy as jnp
from srcjax.lax import cond  # noqa: F401  (a global named like a temporary)


def select(a):
    return a


def out(a):
    return a


def ordered(x, y):
    lo, hi = (x, y) if jnp.sum(x) < jnp.sum(y) else (y, x)
    if jnp.sum(x) > 0 and jnp.sum(y) > 0:
        lo = lo * 1.5
    return lo * 2.0 + hi


def center(x):
    return x - jnp.mean(x)


def scale_by_rows(x):
    t, d = x.shape
    return x * t


def rows_loss(x):
    # the inlined center(x)'s result is a temporary named `out`, passed on to
    # scale_by_rows: it was taken for the module's function `out`
    return jnp.sum(scale_by_rows(center(x)) ** 2)
