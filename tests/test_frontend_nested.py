"""srcjax/frontend/normalize/nested.py: transforms called inside transformed code
(grad(f)(x), jvp(f, primals, tangents), a local function lifted). Oracle: float64
central finite differences of the Python function."""

import numpy as np
import pytest
from frontend_run import normalized_text, run_normalized
from helpers import assert_close

import srcjax
import srcjax.numpy as jnp


def _f(v):
    return jnp.sum(jnp.sin(v) * v)


def grad_inside(x):
    return srcjax.grad(_f)(x) * 2.0


def grad_of_a_closure(x, k):
    def g(v):
        return jnp.sum(jnp.exp(v * k))

    return srcjax.grad(g)(x)


def jvp_inside(x, t):
    y, y_dot = srcjax.jvp(_f, (x,), (t,))
    return y, y_dot


def _fd_grad(f, x, eps=1e-6):
    x = np.asarray(x, dtype=np.float64)
    out = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = eps
        out.flat[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return out


def _np_f(v):
    return float(np.sum(np.sin(v) * v))


X = np.array([0.3, -1.1, 2.0])


@pytest.fixture(autouse=True)
def _x64(x64):  # (conftest's: float64, for the finite-difference oracles)
    yield


def test_grad_inside_matches_finite_differences():
    got = run_normalized(grad_inside, X)
    np.testing.assert_allclose(got, 2.0 * _fd_grad(_np_f, X), rtol=1e-7, atol=1e-8)


def test_grad_of_a_local_function_closing_over_a_local():
    k = 0.7
    got = run_normalized(grad_of_a_closure, X, k)
    want = _fd_grad(lambda v: float(np.sum(np.exp(v * k))), X)
    np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-8)


def test_jvp_inside_matches_a_directional_difference():
    t = np.array([1.0, 0.5, -2.0])
    y, y_dot = run_normalized(jvp_inside, X, t)
    eps = 1e-6
    want_dot = (_np_f(X + eps * t) - _np_f(X - eps * t)) / (2 * eps)
    np.testing.assert_allclose(y, _np_f(X), rtol=1e-12)
    np.testing.assert_allclose(y_dot, want_dot, rtol=1e-7)


def test_the_nested_transform_is_inlined():
    text = normalized_text(grad_inside)
    assert "grad(" not in text


def _model(w, x):
    return jnp.tanh(w * x)


def _loss_of(w, x, f):
    return jnp.sum(f(w, x) ** 2)


def _act_loss(w, x, act):
    return jnp.sum(act(w * x) ** 2)


def _step_passing_a_function(w, x):
    return srcjax.grad(_loss_of)(w, x, _model) + srcjax.grad(_act_loss)(w, x, jnp.sin)


def test_a_function_passed_to_a_nested_grad(x64):
    """grad(loss)(w, x, model) inside jit / vmap (fresh-user bug 35): the inner
    grad took `model` for an array argument, 'no derivative rule for `f`'. JAX
    0.10.2 gives 2.0062618 for grad(_loss_of) at w=0.5; oracle here: float64
    central differences of the Python function."""
    x = np.array([1.0, 2.0])

    def step_fd(w):
        def total(v):
            return float(_loss_of(v, x, _model)), float(_act_loss(v, x, jnp.sin))

        (a1, b1), (a0, b0) = total(w + 1e-6), total(w - 1e-6)
        return (a1 - a0) / 2e-6 + (b1 - b0) / 2e-6

    for w in (0.5, 1.0):
        want = step_fd(w)
        assert_close(srcjax.jit(_step_passing_a_function)(w, x), want, rtol=1e-7)
    ws = np.array([0.5, 1.0])
    got = srcjax.vmap(_step_passing_a_function, in_axes=(0, None))(ws, x)
    assert_close(got, [step_fd(0.5), step_fd(1.0)], rtol=1e-7)
