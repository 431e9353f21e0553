"""jit gives a primitive that reads an operand only for its shape and dtype
(``Primitive.shape_only``: ad.expand_reduced's ``x``) a stand-in of that
operand, and the work that computed it goes (transforms/optimize/shape_only.py).
Oracle: float64 NumPy, and the same program without jit bit for bit."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import grad, jit, jvp, value_and_grad, vmap
from srcjax.primitives.registry import REGISTRY

L2 = 0.01


def _loss(w, x, y):
    z = x @ w
    return jnp.mean(jnp.logaddexp(0.0, z) - y * z) + 0.5 * L2 * jnp.sum(w * w)


def hvp(w, x, y, d):
    # the autodiff cookbook's forward-over-reverse, as R6's Newton-CG
    return jvp(grad(lambda w: _loss(w, x, y)), (w,), (d,))[1]


def _numpy_hvp(w, x, y, d):
    w, x, d = (a.astype(np.float64) for a in (w, x, d))
    s = 1 / (1 + np.exp(-(x @ w)))
    return x.T @ (s * (1 - s) * (x @ d)) / len(x) + L2 * d


def _numpy_loss(w, x, y):
    w, x, y = (a.astype(np.float64) for a in (w, x, y))
    z = x @ w
    return np.mean(np.logaddexp(0.0, z) - y * z) + 0.5 * L2 * np.sum(w * w)


def _problems(rng, n=3):
    x = rng.standard_normal((n, 30, 5)).astype(np.float32)
    y = (rng.random((n, 30)) > 0.5).astype(np.float32)
    w = rng.standard_normal(5).astype(np.float32)
    d = rng.standard_normal(5).astype(np.float32)
    return w, x, y, d


def test_batched_hvp_no_longer_computes_the_unused_loss():
    w, x, y, d = _problems(np.random.default_rng(0))
    batched = vmap(hvp, in_axes=(None, 0, 0, None))
    f = jit(batched)
    got = np.asarray(f(w, x, y, d))
    src = srcjax.source(f, w, x, y, d)
    # the loss's y * z, its difference and w * w were computed for the shapes
    # of their sums' cotangents alone
    assert "y * " not in src and "logaddexp - " not in src and "w * w" not in src
    # the mean's cotangent is a scalar: it multiplies as one, never broadcast to
    # y's shape first (5bfb87e, a scalar's expansion read is the scalar)
    assert "ad.expand_reduced(" not in src
    assert got.dtype == np.float32 and got.shape == (3, 5)
    for k in range(3):
        np.testing.assert_allclose(got[k], _numpy_hvp(w, x[k], y[k], d), rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(got, np.asarray(batched(w, x, y, d)), rtol=1e-6, atol=1e-7)


def test_a_loss_that_is_returned_is_still_computed():
    # value_and_grad: the mean reads y * z for its value, so it stays; the
    # cotangent's expansion is left as it was
    w, x, y, _ = _problems(np.random.default_rng(1))
    f = jit(vmap(value_and_grad(_loss), in_axes=(None, 0, 0)))
    val, g = f(w, x, y)
    src = srcjax.source(f, w, x, y)
    assert "y * " in src
    for k in range(3):
        assert float(val[k]) == pytest.approx(_numpy_loss(w, x[k], y[k]), rel=2e-6)
    want = np.asarray(vmap(value_and_grad(_loss), in_axes=(None, 0, 0))(w, x, y)[1])
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6, atol=1e-7)


def test_shape_stand_in_is_a_read_only_view_of_the_abstract_value():
    s = REGISTRY["ad.shape_stand_in"].impl((4, 3), "float32")
    assert s.shape == (4, 3) and s.dtype == np.float32 and not s.flags.writeable
    assert s.strides == (0, 0)  # (no memory: its values are never read)
    assert REGISTRY["ad.shape_stand_in"].impl((4, 3), "float32") is s
    assert REGISTRY["ad.shape_stand_in"].impl((), "float64").shape == ()
