"""Singular-value derivatives at rank-deficient matrices (fresh-user round 7,
item 10): ``grad(sum(svd(A, compute_uv=False)))`` at ``[[1, 0], [0, 0]]`` was all
NaN (the rules divided the singular-vector terms, zero for ``compute_uv=False``,
by the zero singular value: 0 / 0), and so was the top singular value's. JAX
uses ``1 / s`` with 0 where ``s`` is 0. Expected values: JAX 0.10.2, recorded.
(At a rank-deficient 3x3 the gradient of the sum is U @ V^T, whose null-space
pair is LAPACK's arbitrary choice: JAX's and NumPy's differ there, so it is
checked as a subgradient, not against JAX's numbers.)"""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

E = np.array([[1.0, 0.0], [0.0, 0.0]], np.float32)
R1 = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
R3 = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.0, 1.0, 0.0]], np.float32)


def nuclear(a):
    return jnp.sum(jnp.linalg.svd(a, compute_uv=False))


def top(a):
    return jnp.linalg.svd(a, compute_uv=False)[0]


CASES = [  # JAX 0.10.2: jax.grad(f)(a)
    (nuclear, E, [[1.0, 0.0], [0.0, 1.0]]),
    (top, E, [[1.0, 0.0], [0.0, 0.0]]),
    (nuclear, R1, [[1.0, 0.0], [0.0, 1.0]]),
    (top, R1, [[0.2, 0.4], [0.4, 0.8]]),
    (top, R3, [[0.1188, 0.2410, 0.3563], [0.2376, 0.4820, 0.7127], [0.0171, 0.0348, 0.0514]]),
]


@pytest.mark.parametrize("f, a, want", CASES)
def test_grad_matches_jax(f, a, want):
    np.testing.assert_allclose(srcjax.grad(f)(a), want, atol=2e-4)
    np.testing.assert_allclose(srcjax.jit(srcjax.grad(f))(a), want, atol=2e-4)


def test_jvp_matches_jax():
    t = np.array([[0.5, -1.0], [2.0, 3.0]], np.float32)
    s, ds = srcjax.jvp(lambda a: jnp.linalg.svd(a, compute_uv=False), (E,), (t,))
    np.testing.assert_allclose(s, [1.0, 0.0])
    np.testing.assert_allclose(ds, [0.5, 3.0])  # JAX 0.10.2: diag(U^T T V)
    g = srcjax.grad(lambda a: jnp.linalg.svd(a, full_matrices=False)[1][0])(E)
    np.testing.assert_allclose(g, [[1.0, 0.0], [0.0, 0.0]])  # JAX 0.10.2


def test_rank_deficient_3x3_is_a_subgradient():
    g = np.asarray(srcjax.grad(nuclear)(R3), np.float64)
    assert np.all(np.isfinite(g))
    # the nuclear norm's subgradients are U1 V1^T + W with ||W||_2 <= 1 on the null
    # spaces: <g, A> is the nuclear norm and g's spectral norm is 1
    np.testing.assert_allclose(
        np.sum(g * R3), np.linalg.svd(R3.astype(np.float64))[1].sum(), rtol=1e-5
    )
    np.testing.assert_allclose(np.linalg.norm(g, 2), 1.0, rtol=1e-5)
