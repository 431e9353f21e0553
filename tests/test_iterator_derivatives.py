"""Derivatives through iterator objects (fresh-user round 7, item 09).

``next(iter(d.values()))``, ``sum(iter(xs))`` and ``itertools.starmap`` over
``zip``/``enumerate`` gave a zero gradient and tangent: ``iter``, ``zip`` and
``enumerate`` ran as opaque Python whose results AD took for constants. Now the
frontend desugars them where it can (the first value, the sequence itself, a
comprehension), and an iterator object that still holds a differentiated value
is a located NoDerivativeRuleError. Expected values: JAX 0.10.2 (recorded).
"""

import itertools
import operator

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.errors import NoDerivativeRuleError

X = np.array([0.5, 1.0, -0.3], np.float32)
ONES = np.ones(3, np.float32)


def first_leaf(params):
    w = next(iter(params.values()))
    return jnp.sum(w**2) + jnp.sum(params["b"])


def dot_zip(x):
    return sum(itertools.starmap(operator.mul, zip([x[0], x[1]], [x[1], x[2]])))


def dot_enum(x):
    return sum(itertools.starmap(operator.mul, enumerate([x[0], x[1], x[2]])))


def dot_tuples(x):
    return sum(itertools.starmap(operator.mul, [(x[0], x[1]), (x[1], x[2])]))


def sum_iter(x):
    return sum(iter([x[0], x[1]]))


def loop_iter(x):
    t = 0.0
    for v in iter([x[0], x[2]]):
        t = t + v * v
    return t


def listed_zip(x):
    pairs = list(zip([x[0], x[1]], [x[1], x[2]]))
    return pairs[1][0] * pairs[1][1]


def next_dict(x):
    d = {"u": x[1], "v": x[2]}
    return next(iter(d.values())) * 3.0


def listed_map(x):
    return sum(list(map(jnp.sin, [x[0], x[1]])))


# JAX 0.10.2: jax.grad(f)(X)
CASES = [
    (dot_zip, [1.0, 0.19999999, 1.0]),
    (dot_enum, [0.0, 1.0, 2.0]),
    (dot_tuples, [1.0, 0.19999999, 1.0]),
    (sum_iter, [1.0, 1.0, 0.0]),
    (loop_iter, [1.0, 0.0, -0.6]),
    (listed_zip, [0.0, -0.3, 1.0]),
    (next_dict, [0.0, 3.0, 0.0]),
    (listed_map, [0.87758255, 0.5403023, 0.0]),
]


@pytest.mark.parametrize("f, want", CASES, ids=[c[0].__name__ for c in CASES])
def test_grad_jit_grad_jvp(f, want):
    want = np.array(want, np.float32)
    np.testing.assert_allclose(srcjax.grad(f)(X), want, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(srcjax.jit(srcjax.grad(f))(X), want, rtol=1e-6, atol=1e-7)
    _, tangent = srcjax.jvp(f, (X,), (ONES,))
    np.testing.assert_allclose(tangent, want.sum(), rtol=1e-6)
    np.testing.assert_allclose(srcjax.jit(f)(X), f(X), rtol=1e-6)


def test_first_value_of_dict():
    p = {"a": np.array([1.0, 2.0], np.float32), "b": np.array([3.0], np.float32)}
    g = srcjax.grad(first_leaf)(p)  # JAX: {'a': [2., 4.], 'b': [1.]}
    np.testing.assert_allclose(g["a"], [2.0, 4.0])
    np.testing.assert_allclose(g["b"], [1.0])


def opaque_next(x):
    it = iter([x[0], x[1]])
    return next(it) * 2.0  # JAX: [2, 0, 0]; srcjax: refused, never 0


def opaque_zip(x):
    z = zip([x[0]], [x[1]])
    return sum(a * b for a, b in z)


@pytest.mark.parametrize("f", [opaque_next, opaque_zip])
def test_iterator_object_is_refused(f):
    for make in (srcjax.grad, lambda f: lambda x: srcjax.jvp(f, (x,), (ONES,))):
        with pytest.raises(NoDerivativeRuleError, match="test_iterator_derivatives.py"):
            make(f)(X)


def test_undifferentiated_iterators_still_run():
    np.testing.assert_allclose(srcjax.jit(opaque_next)(X), 1.0)
    np.testing.assert_allclose(
        srcjax.grad(lambda x: opaque_next(srcjax.lax.stop_gradient(x)))(X), 0
    )
