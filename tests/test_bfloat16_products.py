"""Matrix products of bfloat16 arrays (fresh-user bug 34): NumPy's matmul gives
float32 for them and its einsum refuses them; JAX gives bfloat16, accumulated in
float32 and rounded once. Oracle: values and dtypes recorded from jax 0.10.2."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)

_rng = np.random.default_rng(0)
A = _rng.normal(size=(3, 64)).astype(BF16)
B = _rng.normal(size=(64, 2)).astype(BF16)
#: jax 0.10.2: a @ b, jit, jnp.dot and jnp.einsum("ij,jk->ik") of the bfloat16 arrays
WANT = [-13.3125, -11.625, -8.125, 0.7734375, -11.0625, -10.9375]
#: jax 0.10.2: a @ b.astype(float32), and matmul(a, b, preferred_element_type=float32)
WANT_F32 = [-13.288396835327148, -11.612378120422363, -8.102132797241211,
            0.7741985321044922, -11.074687957763672, -10.961915969848633]  # fmt: skip


def _check(r, dtype, want, rtol=0.0):
    assert r.dtype == dtype
    np.testing.assert_allclose(np.asarray(r, np.float32).ravel(), want, rtol=rtol)


def test_products_of_bfloat16_are_bfloat16():
    a, b = jnp.asarray(A), jnp.asarray(B)
    for r in (
        a @ b,
        jnp.matmul(a, b),
        jnp.dot(a, b),
        jnp.einsum("ij,jk->ik", a, b),
        srcjax.jit(lambda a, b: a @ b)(a, b),
        srcjax.jit(lambda a, b: jnp.einsum("ij,jk->ik", a, b))(a, b),
        srcjax.vmap(lambda r, b: r @ b, in_axes=(0, None))(a, b),
    ):
        _check(r, BF16, WANT)


def test_mixed_and_preferred_element_type():
    a, b = jnp.asarray(A), jnp.asarray(B)
    _check(a @ b.astype(jnp.float32), np.dtype(np.float32), WANT_F32, rtol=1e-6)
    _check(jnp.matmul(a, b, preferred_element_type=jnp.float32), np.float32, WANT_F32, rtol=1e-6)
    jitted = srcjax.jit(
        lambda a, b: jnp.einsum("ij,jk->ik", a, b, preferred_element_type=jnp.float32)
    )
    _check(jitted(a, b), np.float32, WANT_F32, rtol=1e-6)
