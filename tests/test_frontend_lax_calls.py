"""srcjax/frontend/normalize/lax_calls.py: lax.cond, switch, fori_loop, while_loop,
scan and map lowered to Python control flow. Oracle: the same loops written in
plain Python."""

import numpy as np
import pytest
from frontend_run import normalized_text, run_normalized

import srcjax.numpy as jnp
from srcjax import lax


def cond(x, p):
    return lax.cond(p, lambda v: v * 2.0, lambda v: v - 1.0, x)


def fori(x):
    return lax.fori_loop(1, 5, lambda i, c: c * i + 1.0, x)


def while_(x):
    return lax.while_loop(lambda c: c[0] < 6, lambda c: (c[0] + 1, c[1] * 1.5), (0, x))


def scan(x, xs):
    def step(c, v):
        c = c * 0.5 + v
        return c, c * 2.0

    return lax.scan(step, x, xs)


def map_(xs):
    return lax.map(lambda v: jnp.sum(v * v), xs)


X = np.array([0.5, -1.0])
XS = np.arange(6.0).reshape(3, 2)


def _python_scan(c, xs):
    ys = []
    for v in xs:
        c = c * 0.5 + v
        ys.append(c * 2.0)
    return c, np.stack(ys)


def _python_fori(c):
    for i in range(1, 5):
        c = c * i + 1.0
    return c


def _python_while(c):
    k = 0
    while k < 6:
        k, c = k + 1, c * 1.5
    return k, c


@pytest.mark.parametrize("p", [True, False])
def test_cond(p):
    np.testing.assert_allclose(run_normalized(cond, X, p), X * 2.0 if p else X - 1.0)


def test_fori_loop():
    np.testing.assert_allclose(run_normalized(fori, X), _python_fori(X))


def test_while_loop():
    k, c = run_normalized(while_, X)
    want_k, want_c = _python_while(X)
    assert k == want_k
    np.testing.assert_allclose(c, want_c)


def test_scan():
    c, ys = run_normalized(scan, X, XS)
    want_c, want_ys = _python_scan(X, XS)
    np.testing.assert_allclose(c, want_c)
    np.testing.assert_allclose(ys, want_ys)


def test_map():
    np.testing.assert_allclose(run_normalized(map_, XS), (XS * XS).sum(axis=1))


@pytest.mark.parametrize("f", [cond, fori, while_, scan, map_])
def test_no_lax_control_flow_call_is_left(f):
    text = normalized_text(f)
    for name in ("lax.cond", "lax.fori_loop", "lax.while_loop", "lax.scan", "lax.map"):
        assert name + "(" not in text
