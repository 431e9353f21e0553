"""srcjax/frontend/normalize/nested.py: transforms called inside transformed code
(grad(f)(x), jvp(f, primals, tangents), a local function lifted). Oracle: float64
central finite differences of the Python function."""

import numpy as np
import pytest
from frontend_run import normalized_text, run_normalized

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
