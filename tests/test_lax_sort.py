"""lax.sort of several operands (user L r08): JAX's lexicographic order over
the first ``num_keys`` operands, a tuple result, derivatives through the
permutation, jit and vmap. Expected values were recorded from jax 0.10.2 (CPU)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

NAN = float("nan")
K1 = np.array([[2, 1, 2, 1, 0], [0, 0, 1, 1, 0]], dtype=np.int32)
K2 = np.array([[0.5, 3.0, -1.0, NAN, 2.0], [1.0, -0.0, 0.0, 0.0, 0.0]], dtype=np.float32)
V = np.arange(10.0, dtype=np.float32).reshape(2, 5)


def _eq(got, want):
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def test_user_reproducer_eager_and_jit():
    k = jnp.array([3, 1, 2])
    v = jnp.array([10.0, 20.0, 30.0])
    # jax: tuple ([1 2 3] int32, [20. 30. 10.] float32)
    for r in (lax.sort((k, v), num_keys=1), srcjax.jit(lambda a, b: lax.sort((a, b)))(k, v)):
        _eq(r, ([1, 2, 3], [20.0, 30.0, 10.0]))
        assert r[0].dtype == np.int32 and r[1].dtype == np.float32


def test_two_keys_ties_nan_and_signed_zero():
    r = lax.sort((K1, K2, V), num_keys=2)
    # recorded from jax
    _eq(
        r,
        (
            [[0, 1, 1, 2, 2], [0, 0, 0, 1, 1]],
            [[2.0, 3.0, NAN, -1.0, 0.5], [-0.0, 0.0, 1.0, 0.0, 0.0]],
            [[4.0, 1.0, 3.0, 2.0, 0.0], [6.0, 9.0, 5.0, 7.0, 8.0]],
        ),
    )
    r = lax.sort((K2, V))
    _eq(
        r,
        (
            [[-1.0, 0.5, 2.0, 3.0, NAN], [-0.0, 0.0, 0.0, 0.0, 1.0]],
            [[2.0, 0.0, 4.0, 1.0, 3.0], [6.0, 7.0, 8.0, 9.0, 5.0]],
        ),
    )


def test_list_dimension0_and_single_tuple():
    r = lax.sort([K1, K2, V], dimension=0, num_keys=1)
    _eq(
        r,
        (
            [[0, 0, 1, 1, 0], [2, 1, 2, 1, 0]],
            [[1.0, -0.0, 0.0, NAN, 2.0], [0.5, 3.0, -1.0, 0.0, 0.0]],
            [[5.0, 6.0, 7.0, 3.0, 4.0], [0.0, 1.0, 2.0, 8.0, 9.0]],
        ),
    )
    _eq(lax.sort((K1[0],)), ([0, 1, 1, 2, 2],))
    # one array: still one array
    np.testing.assert_array_equal(lax.sort(K1[0]), [0, 1, 1, 2, 2])


def _f(a, b):
    s = lax.sort((K1, a, b), num_keys=2)
    return jnp.sum(s[1] * jnp.arange(5.0)) + jnp.sum(s[2] ** 2 * jnp.arange(5.0))


A = np.array([[0.5, 3.0, -1.0, 4.0, 2.0], [1.0, -2.0, 0.5, 0.25, 0.0]], dtype=np.float32)
# recorded from jax: grad of _f in both float operands (the second is a key)
GA = [[4.0, 1.0, 3.0, 2.0, 0.0], [2.0, 0.0, 4.0, 3.0, 1.0]]
GB = [[0.0, 2.0, 12.0, 12.0, 0.0], [20.0, 0.0, 56.0, 48.0, 18.0]]


@pytest.mark.parametrize("wrap", [lambda f: f, srcjax.jit])
def test_grad_through_permutation(wrap):
    ga, gb = wrap(srcjax.grad(_f, argnums=(0, 1)))(A, V)
    np.testing.assert_allclose(ga, GA)
    np.testing.assert_allclose(gb, GB)


def test_grad_matches_finite_differences():
    # _f is linear in the first operand while the permutation stays put
    a = A.astype(np.float64)
    g = np.asarray(srcjax.grad(lambda x: _f(x, V))(a))
    eps = 0.1
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        fd = (float(_f(a + d, V)) - float(_f(a - d, V))) / (2 * eps)
        assert abs(fd - g[i]) < 1e-2


def test_vmap():
    _eq(
        srcjax.vmap(lambda k, x: lax.sort((k, x)))(K1, V),
        (
            [[0, 1, 1, 2, 2], [0, 0, 0, 1, 1]],
            [[4.0, 1.0, 3.0, 0.0, 2.0], [5.0, 6.0, 9.0, 7.0, 8.0]],
        ),
    )
    _eq(
        srcjax.vmap(lambda k, x: lax.sort((k, x)), in_axes=(None, 0))(K1[0], V),
        (
            [[0, 1, 1, 2, 2], [0, 1, 1, 2, 2]],
            [[4.0, 1.0, 3.0, 0.0, 2.0], [9.0, 6.0, 8.0, 5.0, 7.0]],
        ),
    )
    g = srcjax.vmap(srcjax.grad(lambda x: jnp.sum(lax.sort((K1[0], x))[1] * jnp.arange(5.0))))(V)
    np.testing.assert_allclose(g, [[3.0, 1.0, 4.0, 2.0, 0.0]] * 2)


def test_errors():
    with pytest.raises(ValueError, match="between 1 and"):
        lax.sort((K1, V), num_keys=3)
    with pytest.raises(ValueError, match="must equal 1"):
        lax.sort(K1, num_keys=2)
    with pytest.raises(TypeError, match="at least one operand"):
        lax.sort(())
    with pytest.raises(TypeError, match="equal shapes"):
        lax.sort((K1, V[0]))
