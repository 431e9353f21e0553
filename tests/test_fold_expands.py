"""jit lets an elementwise operation broadcast a reduction's cotangent itself
instead of reading ad.expand_reduced's view of it
(transforms/optimize/expands.py). Oracle: the same gradient without jit, bit
for bit, and float64 NumPy."""

import re

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax.transforms.optimize import pipeline


def xent(w, x, y):
    logits = x @ w
    logp = logits - srcjax.nn.logsumexp(logits, axis=1, keepdims=True)
    return -jnp.mean(jnp.sum(y * logp, axis=1))


def _numpy_xent_grad(w, x, y):
    w, x, y = (a.astype(np.float64) for a in (w, x, y))
    z = x @ w
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    return x.T @ ((p - y) / len(x))


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_a_cross_entropy_gradient_reads_its_scalar_and_keepdims_cotangents():
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 4)).astype(np.float32)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[rng.integers(0, 4, 6)]
    f = srcjax.jit(srcjax.value_and_grad(xent))
    # (the mean's seed expanded twice, the logsumexp's keepdims cotangent once)
    assert "expand_reduced" not in srcjax.source(f, w, x, y)
    value, grad = f(w, x, y)
    want_value, want_grad = srcjax.value_and_grad(xent)(w, x, y)
    _same(value, want_value)
    _same(grad, want_grad)
    np.testing.assert_allclose(np.asarray(grad), _numpy_xent_grad(w, x, y), rtol=2e-5, atol=1e-6)


def rows(x, v):
    return jnp.sum(jnp.sum(x * x, axis=1) * v)


def cols(x, v):
    return jnp.sum(jnp.sum(x * x, axis=0) * v)


def test_a_row_sums_cotangent_stays_a_column_of_a_square_operand():
    # sum(x, axis=1)'s cotangent (n,) broadcast by NumPy against (n, n) would be
    # a row: the expansion (a column) must stay
    x = np.arange(9, dtype=np.float32).reshape(3, 3) / 4
    v = np.array([1.0, -2.0, 3.0], np.float32)
    f = srcjax.jit(srcjax.grad(rows))
    assert "expand_reduced" in srcjax.source(f, x, v)
    _same(f(x, v), srcjax.grad(rows)(x, v))
    np.testing.assert_allclose(np.asarray(f(x, v)), 2 * x * v[:, None], rtol=1e-6)


def test_a_column_sums_cotangent_is_broadcast_by_the_operation():
    x = np.arange(12, dtype=np.float32).reshape(4, 3) / 4
    v = np.array([1.0, -2.0, 3.0], np.float32)
    f = srcjax.jit(srcjax.grad(cols))
    assert "expand_reduced" not in srcjax.source(f, x, v)
    _same(f(x, v), srcjax.grad(cols)(x, v))
    np.testing.assert_allclose(np.asarray(f(x, v)), 2 * x * v[None, :], rtol=1e-6)


def test_a_float64_cotangent_of_a_float32_operand_keeps_its_type():
    def mixed(x, s):
        return jnp.sum(jnp.sum(x, axis=0) * s)

    x = np.ones((3, 2), np.float32)
    s = np.float64(0.1)
    f = srcjax.jit(srcjax.grad(mixed))
    _same(f(x, s), srcjax.grad(mixed)(x, s))


def _loss_cg(w, x, y):
    z = x @ w
    return jnp.mean(jnp.logaddexp(0.0, z) - y * z) + 0.5 * 1e-2 * jnp.sum(w * w)


def _cg_steps(w, x, y):
    # forward-over-reverse in a loop (R6's shape): the mean's and the penalty's
    # seeds, vmap's broadcasts of an unbatched scalar, are read in the loop
    d = -srcjax.grad(_loss_cg)(w, x, y)
    acc = jnp.zeros_like(w)
    for _ in range(3):
        hd = srcjax.jvp(srcjax.grad(lambda v: _loss_cg(v, x, y)), (w,), (d,))[1]
        acc = acc + hd
        d = hd / jnp.sum(hd * hd)
    return acc


def test_a_vmapped_scalar_seed_read_in_a_loop_is_the_scalar(monkeypatch):
    rng = np.random.default_rng(1)
    w = rng.standard_normal(5).astype(np.float32)
    x = rng.standard_normal((3, 7, 5)).astype(np.float32)
    y = (rng.random((3, 7)) > 0.5).astype(np.float32)
    f = srcjax.jit(srcjax.vmap(lambda w, x, y: _cg_steps(w, x, y), in_axes=(None, 0, 0)))
    src = srcjax.source(f, w, x, y)
    loop = src[re.search(r"for \w+ in range\(3\)", src).start() :]
    # (the products in the loop read the 0-d seeds, not their expansions)
    assert "_bar" not in loop, src
    got = f(w, x, y)
    # the same jitted code without the fold (another function: another cache entry)
    monkeypatch.setattr(pipeline, "fold_expands", lambda fdef: 0)
    g = srcjax.jit(srcjax.vmap(lambda w, x, y: 1 * _cg_steps(w, x, y), in_axes=(None, 0, 0)))
    assert "_bar * " in srcjax.source(g, w, x, y)
    _same(got, g(w, x, y))
    # float64 oracle: the Hessian of the mean logistic loss plus the penalty
    w64, x64, y64 = (a.astype(np.float64) for a in (w, x, y))
    want = np.zeros((3, 5))
    for i in range(3):
        s = 1 / (1 + np.exp(-(x64[i] @ w64)))
        h = x64[i].T @ (x64[i] * (s * (1 - s))[:, None]) / 7 + 1e-2 * np.eye(5)
        d = -(x64[i].T @ (s - y64[i]) / 7 + 1e-2 * w64)
        for _ in range(3):
            hd = h @ d
            want[i] += hd
            d = hd / (hd @ hd)
    np.testing.assert_allclose(np.asarray(f(w, x, y)), want, rtol=2e-4, atol=1e-5)
