"""Module-level variables read by inlined helpers (user X).

A helper of the transformed function's own module that reads a module global
was inlined with the global's bare name, so a local of the caller (``lr``) or a
name of generated code (a scan's loop counter ``k``) captured it: silently
wrong values under jit, grad, vmap and jvp. Expected values from jax 0.10.2.
"""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

lr = 0.1


def sgd(p, g):
    return p - lr * g  # the global lr


def step(p):
    lr = 100.0  # noqa: F841 (a caller's local of the same name)
    g = srcjax.grad(lambda q: q**2)(p)
    return sgd(p, g)


def inner(w):
    return w * lr


def outer(w):
    return inner(w) + 1.0


def h(lr):  # the caller's parameter is named lr
    return outer(lr)


def test_a_callers_local_does_not_capture_a_helpers_global():
    # jax: 0.8 for step (plain, jit, grad); h: 1.2, 1.2, grad 0.1
    for got in (step(1.0), srcjax.jit(step)(1.0), srcjax.grad(step)(1.0)):
        np.testing.assert_allclose(got, 0.8, rtol=1e-6)
    np.testing.assert_allclose(srcjax.jit(h)(2.0), 1.2, rtol=1e-6)
    np.testing.assert_allclose(srcjax.grad(h)(2.0), 0.1, rtol=1e-6)


k = jnp.array([10.0, 20.0, 30.0])


def force(w):
    return w * k  # the global k


def scan_loss(w):
    def body(c, _):
        return c + force(w), None

    return jnp.sum(lax.scan(body, jnp.zeros(3), None, length=3)[0])


pred = 2.0


def scaled(v):
    return v * pred


def cond_loss(w):
    return jnp.sum(lax.cond(w > 0, lambda v: scaled(v), lambda v: -v, jnp.ones(3) * w))


@pytest.mark.parametrize("f, value, slope", [(scan_loss, 180.0, 180.0), (cond_loss, 9.0, 6.0)])
def test_generated_names_do_not_capture_a_helpers_global(f, value, slope):
    # jax: scan_loss(1.0) = 180 (the counter k of the scan gave 9), cond_loss(1.5) = 9
    w = 1.0 if f is scan_loss else 1.5
    np.testing.assert_allclose(srcjax.jit(f)(w), value, rtol=1e-6)
    v, g = srcjax.value_and_grad(f)(w)
    np.testing.assert_allclose([v, g], [value, slope], rtol=1e-6)
    np.testing.assert_allclose(srcjax.vmap(f)(np.array([w], np.float32)), [value], rtol=1e-6)
    np.testing.assert_allclose(srcjax.jvp(f, (w,), (1.0,))[1], slope, rtol=1e-6)


def test_a_helpers_global_is_read_live():
    # generated code reads module globals when it runs, as Python does
    global lr
    f = srcjax.jit(lambda p: sgd(p, 1.0))
    np.testing.assert_allclose(f(1.0), 0.9, rtol=1e-6)
    old, lr = lr, 0.5
    try:
        np.testing.assert_allclose(f(1.0), 0.5, rtol=1e-6)
    finally:
        lr = old
