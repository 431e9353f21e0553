"""jit drops products by the seed of a scalar loss, ``x * ad.one(dtype)``
(transforms/optimize/algebra.py ``unit_factors``): the gradient inside a loop
(HMC's leapfrog, Langevin steps) evaluates ``out_bar * (...)`` every trip.

Oracles: values recorded from JAX 0.10.2 (jax.jit, CPU); the same jitted code
with the fold turned off, to the bit (``x * 1`` is ``x`` in IEEE arithmetic).
"""

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.transforms.optimize import pipeline

C = np.array([0.5, 1.0, 2.0], np.float32)
X0 = np.array([1.0, -2.0, 0.25], np.float32)
# jax.jit of _langevin (JAX 0.10.2, CPU)
JAX_LANGEVIN = [0.21463873982429504, -0.08478230983018875, 0.0003094850108027458]


def _langevin(x0):
    def body(i, x):
        return x - 0.05 * srcjax.grad(lambda v: jnp.sum(v * v * C))(x)

    return lax.fori_loop(0, 30, body, x0)


def _leapfrog(x, p):
    prec = jnp.asarray(np.diag(np.linspace(1, 4, 3)).astype(np.float32))

    def logp(x):
        return -0.5 * x @ prec @ x

    def body(i, s):
        x, p = s
        p = p + 0.05 * srcjax.grad(logp)(x)
        x = x + 0.1 * p
        return x, p + 0.05 * srcjax.grad(logp)(x)

    return lax.fori_loop(0, 10, body, (x, p))


def _without_the_fold(monkeypatch, fn, *args):
    monkeypatch.setattr(pipeline, "unit_factors", lambda fdef: False)
    try:
        return srcjax.jit(lambda *a: fn(*a))(*args)  # (another jit object)
    finally:
        monkeypatch.undo()


def test_a_gradient_in_a_loop_loses_its_seed_product(monkeypatch):
    f = srcjax.jit(_langevin)
    out = f(X0)
    src = srcjax.source(f, X0)
    # (the seed's product and the sum's expansion of it are gone, and with them
    # the forward value read only for its shape: the loop is two products now)
    assert "ad.one" not in src and "expand_reduced" not in src
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, JAX_LANGEVIN, rtol=2e-6, atol=1e-9)
    want = _without_the_fold(monkeypatch, _langevin, X0)
    assert np.array_equal(np.asarray(out), np.asarray(want))


def test_leapfrog_bitwise_the_unfolded_code(monkeypatch):
    x, p = np.array([0.3, -1.0, 2.0], np.float32), np.array([1.0, 0.5, -0.5], np.float32)
    out = srcjax.jit(_leapfrog)(x, p)
    want = _without_the_fold(monkeypatch, _leapfrog, x, p)
    for a, b in zip(out, want):
        assert a.dtype == b.dtype == np.float32
        assert np.array_equal(np.asarray(a), np.asarray(b))
    # (float64 oracle of the same leapfrog: the gradient is -prec @ x)
    prec = np.diag(np.linspace(1, 4, 3))
    x64, p64 = x.astype(np.float64), p.astype(np.float64)
    for _ in range(10):
        p64 = p64 + 0.05 * (-prec @ x64)
        x64 = x64 + 0.1 * p64
        p64 = p64 + 0.05 * (-prec @ x64)
    np.testing.assert_allclose(out[0], x64, rtol=1e-5)
    np.testing.assert_allclose(out[1], p64, rtol=1e-5)


def _masked(x0, m):
    def body(i, x):
        return x - 0.05 * srcjax.grad(lambda v: jnp.sum(v * v * C, where=m))(x)

    return lax.fori_loop(0, 30, body, x0)


def test_a_masked_sums_cotangent_is_no_unit_factor():
    # expand_reduced with a where mask: zeros where it is false, not ones
    m = np.array([True, False, True])
    out = srcjax.jit(_masked)(X0, m)
    x = X0.copy()
    for _ in range(30):
        x = x - np.float32(0.05) * np.where(m, np.float32(2.0) * C * x, np.float32(0.0))
    assert out.dtype == np.float32 and out[1] == X0[1]  # (no gradient: never moved)
    np.testing.assert_allclose(out, x, rtol=2e-6, atol=1e-9)
