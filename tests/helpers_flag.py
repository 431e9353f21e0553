"""A module-level feature flag guarding a branch srcjax cannot transform (user E F25)."""

import math

import srcjax.numpy as jnp

USE_OTHER = False


def flagged(x):
    if USE_OTHER:
        return math.nonexistent_function(x) * 2  # never runs while the flag is off
    if not USE_OTHER:
        x = x + 1.0
    return jnp.sin(x) * 2.0
