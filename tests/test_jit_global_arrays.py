"""jit knows the shape and dtype of the arrays its code reads from module globals
and closure cells (srcjax/jit_api/global_facts.py): the values are still read
live on every call, but the optimizer types everything computed from them (a
closed-over matrix in a loop body: the loop's carry checks are decided at
transformation time). A guard on the variable's type, shape and dtype
specializes again when it no longer holds. Oracles: NumPy (float64 loops)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.jit_api import jitted as jit_module

PREC = np.diag(np.linspace(1.0, 4.0, 5)).astype(np.float32)
MAT = np.arange(6, dtype=np.float32).reshape(2, 3)
ROWS = np.ones((2, 1), np.float32)


def _logp(x):
    return -0.5 * x @ PREC @ x


def _leapfrog(x, p):
    def body(i, s):
        x, p = s
        p = p + 0.05 * srcjax.grad(_logp)(x)
        x = x + 0.1 * p
        p = p + 0.05 * srcjax.grad(_logp)(x)
        return (x, p)

    return lax.fori_loop(0, 10, body, (x, p))


def _leapfrog_np(x, p, prec):
    x, p = x.astype(np.float64), p.astype(np.float64)
    prec = prec.astype(np.float64)
    for _ in range(10):
        p = p - 0.05 * (prec @ x)
        x = x + 0.1 * p
        p = p - 0.05 * (prec @ x)
    return x, p


def _times_mat(x):
    return x @ MAT


def _times_rows(x):
    return x @ ROWS


def test_a_global_matrix_in_a_loop_with_grad_is_typed_and_right():
    rng = np.random.default_rng(0)
    x, p = (rng.standard_normal(5).astype(np.float32) for _ in range(2))
    f = srcjax.jit(_leapfrog)
    x1, p1 = f(x, p)
    ex, ep = _leapfrog_np(x, p, PREC)
    np.testing.assert_allclose(np.asarray(x1), ex, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(p1), ep, rtol=1e-5, atol=1e-6)
    assert np.asarray(x1).dtype == np.float32
    # the body's carry keeps its types: decided now, not checked on every trip
    assert "check_carry" not in srcjax.source(f, x, p)


def test_a_closed_over_array_is_typed_too():
    prec = np.eye(3, dtype=np.float32) * 2.0

    def step(x):
        def body(i, x):
            return x - 0.1 * (prec @ x)

        return lax.fori_loop(0, 4, body, x)

    f = srcjax.jit(step)
    x = np.array([1.0, -2.0, 0.5], np.float32)
    np.testing.assert_allclose(np.asarray(f(x)), x * 0.8**4, rtol=1e-6)
    assert "check_carry" not in srcjax.source(f, x)


def test_values_are_read_live_and_the_same_shape_keeps_the_specialization(monkeypatch):
    x = np.array([1.0, 2.0], np.float32)
    f = srcjax.jit(_times_mat)
    np.testing.assert_allclose(np.asarray(f(x)), x @ MAT)
    builds = f._builds
    other = MAT * -3.0
    monkeypatch.setitem(globals(), "MAT", other)  # same type, shape and dtype
    np.testing.assert_allclose(np.asarray(f(x)), x @ other)
    assert f._builds == builds
    other[0, 0] = 100.0  # written in place: read live, as before
    np.testing.assert_allclose(np.asarray(f(x)), x @ other)
    assert f._builds == builds


def test_another_shape_or_dtype_specializes_again(monkeypatch):
    x = np.array([1.0, 2.0], np.float32)
    f = srcjax.jit(_times_mat)
    np.testing.assert_allclose(np.asarray(f(x)), x @ MAT)
    wide = np.arange(8, dtype=np.float32).reshape(2, 4)
    monkeypatch.setitem(globals(), "MAT", wide)
    out = np.asarray(f(x))
    assert out.shape == (4,)
    np.testing.assert_allclose(out, x @ wide)
    half = wide.astype(np.float16)
    monkeypatch.setitem(globals(), "MAT", half)
    out = np.asarray(f(x))
    assert out.dtype == np.float32  # float32 @ float16 is float32 (JAX's promotion)
    np.testing.assert_allclose(out, x @ wide)
    monkeypatch.setitem(globals(), "MAT", srcjax.numpy.asarray(wide))  # an Array now
    np.testing.assert_allclose(np.asarray(f(x)), x @ wide)


def test_an_array_reshaped_in_place_specializes_again(monkeypatch):
    mat = np.arange(6, dtype=np.float32).reshape(2, 3)
    monkeypatch.setitem(globals(), "MAT", mat)
    x = np.array([1.0, 2.0], np.float32)
    f = srcjax.jit(_times_mat)
    np.testing.assert_allclose(np.asarray(f(x)), x @ mat)
    mat.shape = (3, 2)  # the same object, another shape
    with pytest.raises(ValueError):
        f(x)  # (2,) @ (3, 2): NumPy's shape error, as for an unknown global
    y = np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_allclose(np.asarray(f(y)), y @ mat)


def test_a_global_array_changing_shape_on_every_call_is_read_live_after_a_few(monkeypatch):
    f = srcjax.jit(_times_rows)  # (a function of its own: jit's builds are counted per function)
    for n in range(1, 8):
        mat = np.ones((2, n), np.float32) * n
        monkeypatch.setitem(globals(), "ROWS", mat)
        x = np.array([1.0, 2.0], np.float32)
        np.testing.assert_allclose(np.asarray(f(x)), x @ mat)
    # one build per shape until the variable counts as volatile, then one that reads it
    assert f._builds == jit_module._MAX_REBINDS + 2


def test_grad_of_a_loss_reading_global_data_under_jit():
    rng = np.random.default_rng(1)
    data = rng.standard_normal((6, 3)).astype(np.float32)
    target = rng.standard_normal(6).astype(np.float32)

    def loss(w):
        return jnp.mean((jnp.tanh(data @ w) - target) ** 2)

    w = rng.standard_normal(3).astype(np.float32)
    g = np.asarray(srcjax.jit(srcjax.grad(loss))(w))

    def loss64(w):
        return np.mean((np.tanh(data.astype(np.float64) @ w) - target) ** 2)

    eps = 1e-6
    w64 = w.astype(np.float64)
    fd = [(loss64(w64 + eps * e) - loss64(w64 - eps * e)) / (2 * eps) for e in np.eye(3)]
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-6)
