"""lax control flow whose function argument is made by a factory call
(fresh-user round 5, item 03: ``lax.fori_loop(0, n, make_step(jnp, dt), x)``
under jit was refused). The factory is inlined once, before the loop, and its
returned closure's free variables are the factory call's arguments. Oracle:
the same loops written as plain Python loops (float64 central differences for
the gradients)."""

import functools

import numpy as np
import pytest
from helpers import assert_close, fd_grad

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.errors import UnsupportedSyntaxError


def make_step(np_, dt):
    def step(i, x):
        return x + dt * np_.sin(x)

    return step


def make_affine(k):
    return lambda i, x: x * k + i


def make_cond(limit):
    return lambda c: c[0] < limit


def make_scan_step(a):
    def step(c, v):
        c = c * a + v
        return c, c * 2.0

    return step


def pendulum(x, dt):  # the user's program: the body made in the call
    return lax.fori_loop(0, 10, make_step(jnp, dt), x)


def affine(x, k):
    return jnp.sum(lax.fori_loop(1, 5, make_affine(k), x))


def while_(x):
    return lax.while_loop(make_cond(4), lambda c: (c[0] + 1, c[1] * 1.5), (0, x))[1]


def scan_(x, xs):
    c, ys = lax.scan(make_scan_step(0.5), x, xs)
    return jnp.sum(c) + jnp.sum(ys)


def map_(xs, k):
    return jnp.sum(lax.map(make_sq(k), xs))


def make_sq(k):
    return lambda v: jnp.sum(v * v) * k


def cond_(x, p):
    return lax.cond(p, make_sq(2.0), make_sq(-1.0), x)


def switch_(x, i):
    return lax.switch(i, [make_sq(1.0), make_sq(3.0)], x)


def _py_pendulum(x, dt):
    for _ in range(10):
        x = x + dt * np.sin(x)
    return x


def _py_affine(x, k):
    for i in range(1, 5):
        x = x * k + i
    return np.sum(x)


def test_a_fori_loop_body_made_by_a_factory_call():
    """The user's program (JAX 0.10.2: 1.1828462 at x0=0.5, dt=0.1)."""
    x0 = np.float32(0.5)
    assert_close(srcjax.jit(lambda x: pendulum(x, 0.1))(x0), 1.1828462, rtol=1e-6)
    assert_close(srcjax.jit(pendulum)(x0, 0.1), _py_pendulum(0.5, 0.1), rtol=1e-6)
    assert_close(pendulum(x0, 0.1), _py_pendulum(0.5, 0.1), rtol=1e-6)
    g = fd_grad(lambda x: _py_pendulum(x, 0.1), np.float64(0.5))
    assert_close(srcjax.grad(pendulum)(x0, 0.1), g, rtol=1e-5)
    assert_close(srcjax.jit(srcjax.grad(pendulum))(x0, 0.1), g, rtol=1e-5)
    xs = np.array([0.5, -1.0, 2.0], np.float32)
    want = [_py_pendulum(float(v), 0.1) for v in xs]
    assert_close(srcjax.vmap(pendulum, in_axes=(0, None))(xs, 0.1), want, rtol=1e-6)
    # the factory's argument a traced value (its closure reads the array)
    x = np.array([0.5, 2.0], np.float32)
    for k in (0.5, -1.5):
        assert_close(srcjax.jit(affine)(x, k), _py_affine(x, k), rtol=1e-6)
        gk = fd_grad(lambda kk: _py_affine(x.astype(np.float64), kk), np.float64(k))
        assert_close(srcjax.grad(affine, argnums=1)(x, k), gk, rtol=1e-5)
        assert_close(srcjax.jit(srcjax.grad(affine, argnums=1))(x, k), gk, rtol=1e-5)


def test_other_lax_functions_made_by_factory_calls():
    x = np.array([0.5, -1.0], np.float32)
    xs = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    assert_close(srcjax.jit(while_)(x), x * 1.5**4, rtol=1e-6)
    c, ys = x.astype(np.float64), []
    for v in xs:
        c = c * 0.5 + v
        ys.append(c * 2.0)
    assert_close(srcjax.jit(scan_)(x, xs), c.sum() + np.sum(ys), rtol=1e-6)
    assert_close(srcjax.grad(scan_)(x, xs), np.full(2, 0.125 + 2 * (0.5 + 0.25 + 0.125)))
    assert_close(srcjax.jit(map_)(xs, 3.0), 3.0 * np.sum(xs * xs), rtol=1e-6)
    for p, want in ((True, 2.0), (False, -1.0)):
        assert_close(srcjax.jit(cond_)(x, p), want * np.sum(x * x), rtol=1e-6)
    for i, want in ((0, 1.0), (1, 3.0)):
        assert_close(srcjax.jit(switch_)(x, i), want * np.sum(x * x), rtol=1e-6)
        assert_close(srcjax.grad(switch_)(x, i), 2 * want * x, rtol=1e-6)


_cached_affine = functools.lru_cache(maxsize=None)(make_affine)


def test_a_factory_whose_source_cannot_be_read_stays_a_clear_error():
    """An lru_cache-wrapped factory is no Python function srcjax inlines: the
    error names the user's line, as before."""

    def f(x):
        return lax.fori_loop(0, 3, _cached_affine(2.0), x)

    with pytest.raises(UnsupportedSyntaxError, match=r"test_lax_factory_bodies.py:\d+:\d+"):
        srcjax.jit(f)(np.float32(1.0))
