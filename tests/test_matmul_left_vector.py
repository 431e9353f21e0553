"""``ad.matmul_left`` of a vector by a matrix (the cotangent of ``y`` in ``y @ w``,
one ``gemv``: user8 p06's RK4 gradient makes 160 such calls a step). Oracles:
float64 NumPy products, float64 central differences of an RK4 loss."""

from __future__ import annotations

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.primitives.linalg.bilinear import _matmul_left


@pytest.mark.parametrize("dt_g,dt_b", [(np.float32, np.float32), (np.float64, np.float64),
                                       (np.float32, np.float64)])  # fmt: skip
def test_vector_by_matrix_cotangent(dt_g, dt_b):
    rng = np.random.default_rng(0)
    a, b, g = rng.standard_normal(3), rng.standard_normal((3, 5)), rng.standard_normal(5)
    got = _matmul_left(g.astype(dt_g), a.astype(dt_b), b.astype(dt_b))
    assert got.shape == (3,) and got.dtype == np.result_type(dt_g, dt_b)
    want = b.astype(dt_b).astype(np.float64) @ g.astype(dt_g).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-6)


def _rk4_loss(p, y0):
    def f(y):
        return jnp.tanh(y @ p["w1"]) @ p["w2"] - 0.1 * y

    def step(y, _):
        h = 0.1
        k1 = f(y)
        k2 = f(y + h / 2 * k1)
        k3 = f(y + h / 2 * k2)
        k4 = f(y + h * k3)
        y = y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return y, y

    _, ys = srcjax.lax.scan(step, y0, None, length=6)
    return jnp.sum(ys**2)


def test_rk4_scan_gradient(x64):
    rng = np.random.default_rng(1)
    p = {"w1": 0.5 * rng.standard_normal((2, 4)), "w2": 0.5 * rng.standard_normal((4, 2))}
    y0 = np.array([1.0, 0.0])
    g = srcjax.jit(srcjax.grad(_rk4_loss))(p, y0)
    f = srcjax.jit(_rk4_loss)
    h = 1e-6
    for name, idx in (("w1", (1, 2)), ("w2", (3, 0))):
        up = {k: v.copy() for k, v in p.items()}
        dn = {k: v.copy() for k, v in p.items()}
        up[name][idx] += h
        dn[name][idx] -= h
        fd = (float(f(up, y0)) - float(f(dn, y0))) / (2 * h)
        np.testing.assert_allclose(np.asarray(g[name])[idx], fd, rtol=1e-6, atol=1e-9)
