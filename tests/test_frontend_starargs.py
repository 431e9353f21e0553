"""srcjax/frontend/normalize/starargs.py: ``f(*xs)`` calls are expanded to
``f(xs[0], xs[1], ...)`` where the length of ``xs`` is known while transforming
(bugs 13 and 25). Oracles: Python's own call (the normalized function returns
what ``f`` returns), gradients recorded from JAX 0.10.2, float64 finite
differences; a star of unknown length is a located error."""

import functools

import numpy as np
import pytest
from frontend_run import assert_same

import srcjax
import srcjax.numpy as jnp
from srcjax.errors import UnsupportedSyntaxError
from srcjax.experimental.ode import odeint


def _model(w, b, x):
    return jnp.tanh(x @ w + b)


def _loss(params, x):
    return jnp.sum(_model(*params, x))


def _scaled(factor):
    def deco(fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            return factor * fn(*args, **kwargs)

        return wrapper

    return deco


@_scaled(3.0)
def _energy(x, y):
    return jnp.sum(x**2 * y)


def _rhs(y, t, k, c):
    return -k * y + c


TS = jnp.asarray(np.array([0.0, 0.5, 1.0], np.float32))


def _solve(y0, k):
    return odeint(_rhs, y0, TS, *(k, 0.25))[-1]


def _solve_varargs(y0, *args):
    return odeint(_rhs, y0, TS, *args)[-1]


def _displays(x):
    pair = (x, 2.0 * x)
    return jnp.sum(jnp.maximum(*pair)) + jnp.sum(_model(*[x[:, None] * jnp.ones((3, 2)), 1.0], x))


def _sum_all(*xs):
    return sum(xs)


COEFS = (2.0, 3.0)


def _global_tuple(x):
    return _rhs(x, 0.0, *COEFS)


def _unknown_length(xs):
    return _sum_all(*xs)


def test_star_of_displays_and_globals_is_pythons_call():
    x = jnp.asarray(np.array([0.5, -1.0, 2.0], np.float32))
    assert_same(_displays, x)
    assert_same(_global_tuple, x)


def test_star_of_a_tuple_parameter_fills_the_callees_parameters():
    # bug 13: model(*params, x); JAX 0.10.2: every entry 1.6798973 (w 0.3, b 0.1)
    w = jnp.ones((3, 2)) * 0.3
    g_w, g_b = srcjax.grad(_loss)((w, jnp.zeros(2) + 0.1), jnp.ones((4, 3)))
    np.testing.assert_allclose(np.asarray(g_w), np.full((3, 2), 1.6798973), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(g_b), np.full(2, 1.6798973), rtol=1e-5)


def test_a_functools_wraps_decorator_forwarding_star_args():
    # bug 25: wrapper(*args, **kwargs) returning factor * fn(*args, **kwargs)
    x = jnp.arange(3.0)
    gx, gy = srcjax.grad(_energy, argnums=(0, 1))(x, x + 1.0)
    np.testing.assert_allclose(np.asarray(gx), [0.0, 12.0, 36.0])  # JAX: [0, 12, 36]
    np.testing.assert_allclose(np.asarray(gy), [0.0, 3.0, 12.0])  # JAX: [0, 3, 12]
    np.testing.assert_allclose(float(srcjax.jit(_energy)(x, x + 1.0)), 3.0 * 14.0)


def test_odeint_with_star_args_of_a_display_and_of_a_varargs_parameter():
    # JAX 0.10.2: (0.49658522, -0.8243702)
    g = srcjax.grad(_solve, argnums=(0, 1))(1.5, 0.7)
    np.testing.assert_allclose([float(v) for v in g], [0.49658522, -0.8243702], rtol=2e-5)
    g2 = srcjax.grad(lambda y0, k: _solve_varargs(y0, k, 0.25), argnums=(0, 1))(1.5, 0.7)
    np.testing.assert_allclose([float(v) for v in g2], [0.49658522, -0.8243702], rtol=2e-5)

    # float64 finite differences of the closed form y(1) = c/k + (y0 - c/k) e^-k
    def exact(y0, k, c=0.25):
        return c / k + (y0 - c / k) * np.exp(-k)

    h = 1e-6
    fd_k = (exact(1.5, 0.7 + h) - exact(1.5, 0.7 - h)) / (2 * h)
    np.testing.assert_allclose(float(g[1]), fd_k, rtol=1e-4)


def test_a_star_of_unknown_length_is_a_located_error():
    xs = (jnp.ones(2), jnp.ones(2))
    with pytest.raises(UnsupportedSyntaxError, match="length is not known") as info:
        srcjax.grad(lambda t: jnp.sum(_unknown_length(t)))(xs)
    assert "test_frontend_starargs.py" in str(info.value)


def _tanh_layer(w, b, x):
    return jnp.tanh(x @ w + b)


def _star_params_loss(params, x):
    return jnp.sum(_tanh_layer(*params, x))


def test_a_star_whose_length_the_callee_fixes_is_checked_when_called():
    """The star's length came from the callee's parameters (two: w, b): a params
    tuple of three silently used its first two items, where Python (and JAX,
    tracing the call) raises TypeError."""
    w, b, x = jnp.ones((3, 2)), jnp.zeros(2), jnp.ones((4, 3))
    g = srcjax.grad(_star_params_loss)((w, b), x)  # the right length still works
    np.testing.assert_allclose(np.asarray(g[1]), np.full(2, 4 * (1 - np.tanh(3.0) ** 2)), rtol=1e-5)
    for f in (srcjax.grad(_star_params_loss), srcjax.jit(_star_params_loss)):
        with pytest.raises(TypeError, match="3 items where the call needs 2"):
            f((w, b, b), x)


def _star_of_an_array(x):
    def f(a, b, c):
        return a * b + c

    return f(*x)


def test_star_of_a_batched_array_under_vmap():
    """Round 7 item 11 (``f(*array)``): under vmap the length check read the batch
    axis ("gives 2 items where the call needs 3"); the items follow it. JAX 0.10.2:
    vmap gives [5, 26], vmap(vmap) [[5, 26], [14, 92]], jit(vmap(grad))
    [[2, 1, 1], [5, 4, 1]]."""
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(srcjax.vmap(_star_of_an_array)(x)), [5.0, 26.0])
    both = srcjax.vmap(srcjax.vmap(_star_of_an_array))(np.stack([x, 2 * x]))
    np.testing.assert_array_equal(np.asarray(both), [[5.0, 26.0], [14.0, 92.0]])
    g = srcjax.jit(srcjax.vmap(srcjax.grad(_star_of_an_array)))(x)
    np.testing.assert_array_equal(np.asarray(g), [[2.0, 1.0, 1.0], [5.0, 4.0, 1.0]])
