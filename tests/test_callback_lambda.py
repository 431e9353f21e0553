"""Lambdas passed to jax.pure_callback / jax.debug.callback inside transformed
functions (fresh-user round 4, F4-M5: they were refused with "a lambda used as
a value here is not supported"). The lambda is a function value passed to the
callback primitive, made from its own source. Values as JAX 0.10.2 gives them
(/work/userprogs4/p_22a_callback_lambda.py run under both)."""

from __future__ import annotations

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.errors import UnsupportedSyntaxError

LOG = []


def test_pure_callback_lambda_under_jit():
    @srcjax.jit
    def f(x):
        y = srcjax.pure_callback(
            lambda a: np.sort(np.asarray(a))[::-1].copy(),
            srcjax.ShapeDtypeStruct(x.shape, x.dtype),
            x,
        )
        return y * 2

    r = f(jnp.array([1.0, 3.0, 2.0]))
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r, [6.0, 4.0, 2.0])


def test_debug_callback_lambda_under_grad():
    LOG.clear()

    def g(x):
        srcjax.debug.callback(lambda v: LOG.append(float(v)), x.sum())
        return jnp.sin(x).sum()

    r = srcjax.grad(g)(jnp.array([0.5, 1.0], jnp.float32))
    np.testing.assert_allclose(r, [0.87758256, 0.5403023], rtol=1e-6)
    assert LOG == [1.5]


def test_pure_callback_lambda_under_vmap_and_keyword():
    def h(x):
        return srcjax.pure_callback(
            lambda a: np.asarray(a) + 1,
            srcjax.ShapeDtypeStruct((), jnp.float32),
            x,
            vmap_method="sequential",
        )

    np.testing.assert_array_equal(srcjax.vmap(h)(jnp.arange(3.0)), [1.0, 2.0, 3.0])

    def k(x):  # the callback by keyword
        c = srcjax.pure_callback(
            callback=lambda: np.float32(2.0),
            result_shape_dtypes=srcjax.ShapeDtypeStruct((), jnp.float32),
        )
        return x * c

    np.testing.assert_array_equal(srcjax.jit(k)(jnp.arange(3.0)), [0.0, 2.0, 4.0])


def test_lambda_reading_locals_is_closure_converted():
    # the locals it reads are passed after the call's *args (JAX's closure
    # conversion); under vmap each example's values
    LOG.clear()

    def f(x):
        n = 3.0
        s = x * 2
        srcjax.debug.callback(lambda v: LOG.append((float(v), float(n))), x.sum())
        y = srcjax.pure_callback(
            lambda a: np.asarray(a) * n + np.asarray(s),
            srcjax.ShapeDtypeStruct(x.shape, x.dtype),
            x,
        )
        return y.sum()

    assert float(srcjax.jit(f)(jnp.array([1.0, 2.0]))) == 15.0
    assert LOG == [(3.0, 3.0)]

    def g(x):
        return srcjax.pure_callback(
            lambda a: np.asarray(a) * 10 + np.asarray(x) + 1,
            srcjax.ShapeDtypeStruct((), jnp.float32),
            x,
            vmap_method="sequential",
        )

    np.testing.assert_array_equal(srcjax.vmap(g)(jnp.arange(3.0)), [1.0, 12.0, 23.0])

    LOG.clear()

    def h(x):
        k = 2.0
        srcjax.debug.callback(lambda v: LOG.append(float(v) * float(k)), x)
        return x

    srcjax.vmap(h)(jnp.arange(3.0))
    assert LOG == [0.0, 2.0, 4.0]


def test_lambda_with_defaults_reading_locals_says_how_to_pass_them():
    def f(x):
        n = 3.0
        srcjax.debug.callback(lambda v, m=1: print(v, n, m), x)
        return x

    with pytest.raises(UnsupportedSyntaxError, match=r"reads values local .*\(n\)") as ei:
        srcjax.jit(f)(1.0)
    assert "lambda v, n: ..., x, n" in str(ei.value)
    assert "test_callback_lambda.py" in str(ei.value)
