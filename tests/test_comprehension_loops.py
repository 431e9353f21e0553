"""Comprehensions with several ``for`` clauses (fresh-user round 7, item 11:
"comprehensions with several `for` is not supported"): ``[a * b for a in xs for
b in ys]`` is the loops nested in order, each clause's conditions around the
loops after it, the loop variables the comprehension's own (a later iterable
may read an earlier variable: ``for v in row``). Under jit, grad and vmap.
Expected: JAX 0.10.2 (``jax.jit(f)(x)``, ``jax.grad(f)(x)``), recorded."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

X = np.arange(1, 7, dtype=np.float32) / 4


def rows(x):
    m = jnp.reshape(x, (2, 3))
    return jnp.stack([v * 2 for row in m for v in row]).sum()


def triangle(x):
    return sum([x[i] * x[j] for i in range(3) for j in range(i)])


def dict_of_pairs(x):
    d = {(i, j): x[i] * j for i in range(2) for j in range(1, 3) if i != j}
    return sum(d.values())


def conditions_between(x):
    return jnp.stack(
        [a * b for a in [x[0], x[1], x[2]] if True for b in [x[3], x[4]] if b is not None]
    ).sum()


def shadowing(x):
    a = 5.0
    r = [a * b for a in x for b in x]
    return sum(r) + a  # (the comprehension's `a` is its own: 5.0 here)


CASES = {
    rows: (10.5, [2.0] * 6),
    triangle: (0.6875, [1.25, 1.0, 0.75, 0.0, 0.0, 0.0]),
    dict_of_pairs: (1.75, [3.0, 2.0, 0.0, 0.0, 0.0, 0.0]),
    conditions_between: (3.375, [2.25, 2.25, 2.25, 1.5, 1.5, 0.0]),
    shadowing: (32.5625, [10.5] * 6),
}


@pytest.mark.parametrize("f", list(CASES), ids=lambda f: f.__name__)
def test_two_for_comprehensions_as_jax(f):
    value, grad = CASES[f]
    for g in (f, srcjax.jit(f)):
        np.testing.assert_allclose(float(g(X)), value, rtol=1e-6)
    for d in (srcjax.grad(f), srcjax.jit(srcjax.grad(f))):
        np.testing.assert_allclose(np.asarray(d(X)), grad, rtol=1e-6)
    got = np.asarray(srcjax.vmap(f)(np.stack([X, X])))
    np.testing.assert_allclose(got, [value, value], rtol=1e-6)
