"""Record jax.example_libraries.optimizers' numbers for tests/test_optimizers.py.

    python tools/record_optimizers.py jax      # with jax installed (0.10.2 was used)
    python tools/record_optimizers.py srcjax   # the same program on srcjax

Prints a dict {(case, mode): leaves}; the test holds the eager JAX values.
"""

import os
import sys

import numpy as np


def run(jax, jnp, optimizers, jit):
    """Every case's final parameters (tree leaves as lists), keyed (case, mode)."""

    def params0():
        return {
            "w": jnp.asarray(np.linspace(-1, 1, 6).reshape(2, 3), dtype=jnp.float32),
            "b": (
                jnp.asarray([0.5, -0.25, 2.0], dtype=jnp.float32),
                jnp.asarray(0.75, dtype=jnp.float32),
            ),
        }

    C = {
        "w": np.linspace(0.5, 2, 6).reshape(2, 3).astype(np.float32),
        "b": (np.array([1.0, -3.0, 0.1], np.float32), np.float32(2.0)),
    }

    def grads(p):
        return jax.tree_util.tree_map(lambda x, c: x * c - jnp.sin(c * 3.0), p, C)

    OPTS = {
        "sgd": lambda: optimizers.sgd(0.1),
        "sgd_exp": lambda: optimizers.sgd(optimizers.exponential_decay(0.1, 2, 0.5)),
        "momentum": lambda: optimizers.momentum(0.05, 0.9),
        "nesterov": lambda: optimizers.nesterov(0.05, 0.8),
        "adagrad": lambda: optimizers.adagrad(0.1),
        "adagrad_m0": lambda: optimizers.adagrad(0.1, momentum=0.0),
        "rmsprop": lambda: optimizers.rmsprop(0.01),
        "rmsprop_momentum": lambda: optimizers.rmsprop_momentum(0.01, gamma=0.8, momentum=0.7),
        "adam": lambda: optimizers.adam(0.01),
        "adam_poly": lambda: optimizers.adam(
            optimizers.polynomial_decay(0.01, 3, 0.001, 2.0), b1=0.8, b2=0.99, eps=1e-6
        ),
        "adamax": lambda: optimizers.adamax(0.02),
        "sm3": lambda: optimizers.sm3(0.1),
        "sm3_pw": lambda: optimizers.sm3(
            optimizers.piecewise_constant([1, 3], [0.1, 0.05, 0.01]), momentum=0.5
        ),
    }
    out = {}
    for name, mk in OPTS.items():
        init, update, get = mk()
        for mode in ("eager", "jit"):
            st = init(params0())
            up = jit(update) if mode == "jit" else update
            for i in range(5):
                st = up(i, grads(get(st)), st)
            leaves = jax.tree_util.tree_leaves(get(st))
            out[(name, mode)] = [np.asarray(v).tolist() for v in leaves]
    sched = {
        "exp": optimizers.exponential_decay(0.1, 3, 0.5),
        "inv": optimizers.inverse_time_decay(0.1, 3, 0.5),
        "inv_stair": optimizers.inverse_time_decay(0.1, 3, 0.5, staircase=True),
        "poly": optimizers.polynomial_decay(0.1, 4, 0.01, 2.0),
        "pw": optimizers.piecewise_constant([2, 5], [1.0, 0.5, 0.1]),
    }
    for k, s in sched.items():
        out[(k, "sched")] = [float(np.asarray(s(i))) for i in range(8)]
    g = {"a": jnp.asarray([3.0, 4.0]), "b": jnp.asarray([[12.0]])}
    out[("l2", "")] = float(optimizers.l2_norm(g))
    out[("clip", "")] = [
        np.asarray(v).tolist() for v in jax.tree_util.tree_leaves(optimizers.clip_grads(g, 6.5))
    ]
    out[("noclip", "")] = [
        np.asarray(v).tolist() for v in jax.tree_util.tree_leaves(optimizers.clip_grads(g, 13.5))
    ]
    return out


if __name__ == "__main__":
    if sys.argv[1] == "jax":
        import jax
        import jax.numpy as jnp
        from jax.example_libraries import optimizers
    else:
        sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        import srcjax as jax
        import srcjax.numpy as jnp
        from srcjax.example_libraries import optimizers
    print(repr(run(jax, jnp, optimizers, jax.jit)))
