"""jit's scan readouts made once for all trips (optimize/readouts.py): grad's
reverse loop reads the stacked cotangent's row k instead of popping it, and the
forward loop's ``h @ w`` feeding only the stacked outputs is one stacked matmul
after the loop. Oracles: a plain NumPy float32 loop (the value, bit for bit) and
backpropagation through time by hand in float64 (the gradient)."""

import re

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

T, B, D, H = 12, 4, 3, 5


def _inputs(seed=0):
    rng = np.random.default_rng(seed)
    p = {
        "wx": (rng.standard_normal((D, H)) / 2).astype(np.float32),
        "wh": (rng.standard_normal((H, H)) / 3).astype(np.float32),
        "wo": (rng.standard_normal((H, 2)) / 2).astype(np.float32),
    }
    xs = rng.standard_normal((T, B, D)).astype(np.float32)
    ys = rng.standard_normal((T, B, 2)).astype(np.float32)
    return p, xs, ys


def _loss(p, xs, ys):
    def cell(h, x):
        h = jnp.tanh(x @ p["wx"] + h @ p["wh"])
        return h, h @ p["wo"]

    _, out = lax.scan(cell, jnp.zeros((B, H), jnp.float32), xs)
    return jnp.sum((out - ys) ** 2)


def _numpy_value(p, xs, ys):
    h = np.zeros((B, H), np.float32)
    outs = []
    for x in xs:
        h = np.tanh(x @ p["wx"] + h @ p["wh"])
        outs.append(h @ p["wo"])
    return np.sum((np.stack(outs) - ys) ** 2)


def _bptt64(p, xs, ys):
    q = {k: v.astype(np.float64) for k, v in p.items()}
    hs = [np.zeros((B, H))]
    for x in xs.astype(np.float64):
        hs.append(np.tanh(x @ q["wx"] + hs[-1] @ q["wh"]))
    g = {k: np.zeros_like(v) for k, v in q.items()}
    carry = np.zeros((B, H))
    for t in reversed(range(T)):
        dy = 2 * (hs[t + 1] @ q["wo"] - ys[t])
        g["wo"] += hs[t + 1].T @ dy
        dz = (carry + dy @ q["wo"].T) * (1 - hs[t + 1] ** 2)
        g["wx"] += xs[t].astype(np.float64).T @ dz
        g["wh"] += hs[t].T @ dz
        carry = dz @ q["wh"].T
    return g


def test_scan_readout_grad_values_and_code():
    p, xs, ys = _inputs()
    f = srcjax.jit(srcjax.value_and_grad(_loss))
    v, g = f(p, xs, ys)
    src = srcjax.source(f, p, xs, ys)
    assert "ad.pop_like" not in src  # the rows of the stacked cotangent are read
    # the readout, once after the loop (the stack is named: the reverse loop
    # reads its rows, optimize/tape_rows.py)
    assert re.search(r"jnp\.matmul\((ad\.tree_stack\(\w+\)|\w+_rows), wo\)", src)
    forward = src.split("for k in range(12)")[1].split("jnp.matmul(")[0]
    assert "@ wo" not in forward  # (not in the forward loop)
    assert np.asarray(v).dtype == np.float32
    np.testing.assert_array_equal(np.asarray(v), _numpy_value(p, xs, ys))
    want = _bptt64(p, xs, ys)
    for k in want:
        assert np.asarray(g[k]).dtype == np.float32
        np.testing.assert_allclose(np.asarray(g[k]), want[k], rtol=2e-5, atol=2e-5)


def _loss_readout_in_carry(p, xs, ys):
    # the product also feeds the carry: it stays in the loop
    def cell(h, x):
        h = jnp.tanh(x @ p["wx"] + h @ p["wh"])
        y = h @ p["wo"]
        return h + jnp.sum(y) * 0.01, y

    _, out = lax.scan(cell, jnp.zeros((B, H), jnp.float32), xs)
    return jnp.sum((out - ys) ** 2)


def test_a_readout_read_in_the_trip_stays_in_the_loop():
    p, xs, ys = _inputs(1)
    f = srcjax.jit(srcjax.value_and_grad(_loss_readout_in_carry))
    v, g = f(p, xs, ys)
    src = srcjax.source(f, p, xs, ys)
    assert "jnp.matmul(ad.tree_stack(" not in src

    # oracle: float64 central differences of a plain NumPy loop
    def loss64(q):
        h = np.zeros((B, H))
        tot = 0.0
        for t in range(T):
            h = np.tanh(xs[t] @ q["wx"] + h @ q["wh"])
            y = h @ q["wo"]
            h = h + y.sum() * 0.01
            tot += np.sum((y - ys[t]) ** 2)
        return tot

    q = {k: v.astype(np.float64) for k, v in p.items()}
    np.testing.assert_allclose(float(v), loss64(q), rtol=1e-5)
    for k in q:
        num = np.zeros_like(q[k])
        for idx in np.ndindex(q[k].shape):
            a, b = {**q, k: q[k].copy()}, {**q, k: q[k].copy()}
            a[k][idx] += 1e-6
            b[k][idx] -= 1e-6
            num[idx] = (loss64(a) - loss64(b)) / 2e-6
        np.testing.assert_allclose(np.asarray(g[k]), num, rtol=1e-3, atol=1e-3)
