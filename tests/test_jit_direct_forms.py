"""Helpers whose operands' abstract values decide their path are, under jit, the
one call that path makes (the ``direct`` rule on the primitive, applied by
optimize/direct.py): ``ad.seed`` of a float scalar is the constant
``ad.one(dtype)`` (the forward value it read is dead when nothing else reads
it), ``ad.tree_add`` of two arrays of one shape and dtype is ``a + b``,
``ad.matmul_left/right`` of vectors and a vector by a matrix are ``g * b``,
``np.matvec``, ``np.vecmat``; ``ad.cotangent_like`` of an array with its
operand's shape and dtype is that array. Oracles: NumPy float64 and gradients
by hand."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

PREC = np.diag(np.linspace(1.0, 4.0, 5)).astype(np.float32) + 0.1


def _logp(x):
    return -0.5 * x @ PREC @ x


def _leapfrog(x, p):
    def body(i, s):
        x, p = s
        p = p + 0.05 * srcjax.grad(_logp)(x)
        return (x + 0.1 * p, p)

    return lax.fori_loop(0, 6, body, (x, p))


def test_grad_of_a_quadratic_form_in_a_loop():
    rng = np.random.default_rng(0)
    x, p = (rng.standard_normal(5).astype(np.float32) for _ in range(2))
    f = srcjax.jit(_leapfrog)
    x1, p1 = f(x, p)
    ex, ep = x.astype(np.float64), p.astype(np.float64)
    sym = 0.5 * (PREC + PREC.T).astype(np.float64)
    for _ in range(6):
        ep = ep - 0.05 * (sym @ ex)  # d/dx (-0.5 x^T A x) = -0.5 (A + A^T) x
        ex = ex + 0.1 * ep
    np.testing.assert_allclose(np.asarray(x1), ex, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(p1), ep, rtol=2e-5, atol=1e-6)
    text = srcjax.source(f, x, p)
    # (the seed is the constant ad.one, and its products are their other operands:
    # tests/test_unit_factors.py)
    assert "ad.seed(" not in text and "ad.one(" not in text
    assert "ad.matvec(" in text and "ad.matmul_left" not in text and "ad.matmul_right" not in text
    assert "ad.cotangent_like" not in text and "ad.tree_add" not in text
    # the seed's constant reads nothing: the forward value x^T A x is never computed
    code = "\n".join(line.split("#")[0] for line in text.splitlines())
    assert code.count("@") == 1  # (x @ A, an adjoint term's operand; A @ x is ad.matvec)


def test_tree_add_of_two_arrays_is_an_addition():
    def f(x):
        return jnp.sum(jnp.sin(x)) + jnp.sum(x * x)

    x = np.linspace(-1.0, 1.0, 7).astype(np.float32)
    g = srcjax.jit(srcjax.grad(f))
    np.testing.assert_allclose(np.asarray(g(x)), np.cos(x) + 2 * x, rtol=1e-6)
    assert "ad.tree_add" not in srcjax.source(g, x)


def test_matrix_by_vector_cotangent_is_vecmat():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)

    def f(a, b):
        return jnp.sum(jnp.tanh(a @ b))

    g = srcjax.jit(srcjax.grad(f, argnums=(0, 1)))
    ga, gb = g(a, b)
    t = 1 - np.tanh(a.astype(np.float64) @ b) ** 2
    np.testing.assert_allclose(np.asarray(gb), t @ a, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ga), np.outer(t, b), rtol=1e-5)
    assert "ad.vecmat(" in srcjax.source(g, a, b)


def test_vector_dot_cotangents_are_products():
    def f(x, y):
        return jnp.tanh(x @ y)

    x = np.array([0.5, -1.0, 2.0], np.float32)
    y = np.array([0.25, 0.5, -0.125], np.float32)
    g = srcjax.jit(srcjax.grad(f, argnums=(0, 1)))
    gx, gy = g(x, y)
    t = 1 - np.tanh(np.dot(x.astype(np.float64), y)) ** 2
    np.testing.assert_allclose(np.asarray(gx), t * y, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(gy), t * x, rtol=1e-6)
    assert np.asarray(gx).dtype == np.float32


def test_mixed_dtypes_keep_the_general_helpers():
    # a float16 vector with a float32 matrix: no direct form (one dtype only);
    # the general helper gives the float16 cotangent, as JAX does
    m = np.eye(3, dtype=np.float32) * 2.0

    def f(x):
        return jnp.sum((x @ m) ** 2)

    x = np.array([1.0, 2.0, -1.0], np.float16)
    g = srcjax.jit(srcjax.grad(f))
    out = np.asarray(g(x))
    assert out.dtype == np.float16
    np.testing.assert_allclose(out.astype(np.float64), 8.0 * x.astype(np.float64), rtol=1e-3)
    assert "ad.matmul_left" in srcjax.source(g, x)


def test_a_non_scalar_output_still_fails_as_jax_does():
    with pytest.raises(TypeError, match="scalar"):
        srcjax.jit(srcjax.grad(lambda x: x * 2.0))(np.ones(3, np.float32))


HEADS = 8


def test_a_numpy_function_of_constants_is_known_inside_generated_code():
    # np.sqrt(HEADS) runs now, as JAX's trace runs it: under jit(value_and_grad)
    # (the generated gradient code, transformed again) its value is static, so
    # everything after it is typed (the seed is the constant)
    def f(x):
        return jnp.sum(jnp.tanh(x) / np.sqrt(HEADS))

    x = np.linspace(-1.0, 1.0, 5).astype(np.float32)
    g = srcjax.jit(srcjax.value_and_grad(f))
    value, grad = g(x)
    np.testing.assert_allclose(float(value), np.sum(np.tanh(x)) / np.sqrt(8), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(grad), (1 - np.tanh(x) ** 2) / np.sqrt(8), rtol=1e-6)
    assert np.asarray(grad).dtype == np.float32
    assert "ad.one('float32')" in srcjax.source(g, x)
