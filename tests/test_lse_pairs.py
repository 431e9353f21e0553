"""jit computes a logsumexp and the softmax weights its derivative reads once
(transforms/optimize/lse_pairs.py, ad.logsumexp_pair). Oracle: the same
function's gradient without jit (the two separate calls), bit for bit, and
float64 NumPy."""

import numpy as np

import srcjax
import srcjax.numpy as jnp


def xent(w, x, y):
    logits = x @ w
    logp = logits - srcjax.nn.logsumexp(logits, axis=1, keepdims=True)
    return -jnp.mean(jnp.sum(y * logp, axis=1))


def _data(seed=0, scale=1.0):
    rng = np.random.default_rng(seed)
    w = (rng.standard_normal((5, 4)) * scale).astype(np.float32)
    x = rng.standard_normal((6, 5)).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[rng.integers(0, 4, 6)]
    return w, x, y


def _numpy_grad(w, x, y):
    w, x, y = (a.astype(np.float64) for a in (w, x, y))
    z = x @ w
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    return x.T @ ((p - y) / len(x))


def test_a_cross_entropy_gradient_pairs_them_bit_for_bit():
    f = srcjax.jit(srcjax.value_and_grad(xent))
    args = _data()
    text = srcjax.source(f, *args)
    assert "ad.logsumexp_pair(" in text and "ad.logsumexp_weights" not in text
    value, grad = f(*args)
    want_value, want_grad = srcjax.value_and_grad(xent)(*args)
    np.testing.assert_array_equal(np.asarray(value), np.asarray(want_value))
    np.testing.assert_array_equal(np.asarray(grad), np.asarray(want_grad))
    np.testing.assert_allclose(np.asarray(grad), _numpy_grad(*args), rtol=2e-5, atol=1e-6)


def test_an_infinite_logit_takes_the_general_path_in_both():
    w, x, y = _data(1)
    x[0, :] = 0.0
    w[:, 2] = np.inf  # row 0's logits: nan (0 * inf); others +-inf
    f = srcjax.jit(srcjax.grad(xent))
    got = np.asarray(f(w, x, y))
    want = np.asarray(srcjax.grad(xent)(w, x, y))
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[~np.isnan(got)], want[~np.isnan(want)])


def weighted(w, x, b):
    logits = x @ w
    return jnp.sum(srcjax.scipy.special.logsumexp(logits, axis=1, b=b))


def test_weights_with_b_are_left_as_they_are():
    w, x, _ = _data(2)
    b = np.linspace(0.5, 2.0, 4).astype(np.float32)
    f = srcjax.jit(srcjax.grad(weighted))
    assert "ad.logsumexp_pair" not in srcjax.source(f, w, x, b)
    np.testing.assert_allclose(
        np.asarray(f(w, x, b)), np.asarray(srcjax.grad(weighted)(w, x, b)), rtol=1e-6
    )
