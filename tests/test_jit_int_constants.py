"""Integer operators on constant arrays under jit (fresh-user round 7, items 02
and 03): ``jnp.array([1, -1, 0, 7]) // jnp.array([0, 0, 0, 0])`` gave NumPy's
[0 0 0 0] under jit (eager and JAX: [-2 -2 -1 -2]) and ``2 ** jnp.array([-1, 2])``
raised NumPy's "Integers to negative integer powers are not allowed" (JAX: [0 4]).
jnp.array of a list has no abstract value under jit, so promote left NumPy's
operator. The audit's other integer edge cases (``%`` by zero, shifts past the
width, NaN/inf to int) are checked on constants, arguments and vmap. Expected
values: JAX 0.10.2, recorded."""

import warnings

import numpy as np

import srcjax
import srcjax.numpy as jnp

A = np.array([1, -8, 0, 7], np.int32)
Z = np.array([0, 40, 0, 33], np.int32)
F = np.array([np.nan, np.inf, -np.inf, 3.7], np.float32)

# jax.jit(edge_cases)(A, Z, F), JAX 0.10.2
JAX = [
    [-2, -1, -1, 0],
    [0, 32, 0, 7],
    [1, 0, 0, 0],
    [1, -1, 0, 0],
    [0, 2147483647, -2147483648, 3],
    [0, 9],
    [1, 64, 0, 49],
]


def edge_cases(a, z, f):
    return (
        a // z,
        a % z,
        a << z,
        a >> z,
        f.astype(jnp.int32),
        jnp.array([2, 3]) ** jnp.array([-1, 2]),
        a**2,
    )


def edge_constants(x):
    a = jnp.array([1, -8, 0, 7])
    z = jnp.array([0, 40, 0, 33])
    f = jnp.array([np.nan, np.inf, -np.inf, 3.7])
    return edge_cases(a, z, f) + (x,)


def floordiv_by_zero(x):
    return x + jnp.array([1, -1, 0, 7]) // jnp.array([0, 0, 0, 0])


def pow_negative(x):
    return x + 2 ** jnp.array([-1, 2])


def _lists(out):
    return [np.asarray(v).tolist() for v in out]


def test_reported_programs():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # JAX 0.10.2: jax.jit(f)(0) and eager
        np.testing.assert_array_equal(floordiv_by_zero(0), [-2, -2, -1, -2])
        np.testing.assert_array_equal(srcjax.jit(floordiv_by_zero)(0), [-2, -2, -1, -2])
        np.testing.assert_array_equal(pow_negative(0), [0, 4])
        np.testing.assert_array_equal(srcjax.jit(pow_negative)(0), [0, 4])
        np.testing.assert_array_equal(
            srcjax.vmap(pow_negative)(np.zeros(2, np.int32)), [[0, 4]] * 2
        )
        x = np.float32(1.5)
        g = srcjax.jit(srcjax.grad(lambda x: (x * (2 ** jnp.array([-1, 2]))).sum()))(x)
        np.testing.assert_allclose(g, 4.0)  # JAX 0.10.2
        g = srcjax.jit(srcjax.grad(lambda x: (x * floordiv_by_zero(0)).sum()))(x)
        np.testing.assert_allclose(g, -7.0)  # JAX 0.10.2


def test_integer_edge_cases_everywhere():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        args = (jnp.asarray(A), jnp.asarray(Z), jnp.asarray(F))
        assert _lists(edge_cases(*args)) == JAX
        assert _lists(srcjax.jit(edge_cases)(A, Z, F)) == JAX
        assert _lists(srcjax.jit(edge_constants)(0))[:-1] == JAX
        batched = srcjax.vmap(edge_cases)(A[None], Z[None], F[None])
        assert [v[0] for v in _lists(batched)] == JAX
