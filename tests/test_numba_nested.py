"""Loops inside a jitted loop that keeps NumPy, made Numba regions
(backends/numba_cpu/loops.py ``_inside``): HMC's leapfrog ``fori_loop`` inside
a ``scan`` over random keys (uint32, which the kernels do not take).

Oracles: the same function with Numba off (the NumPy path), to the bit, dtype
included; a float32 NumPy loop written out by hand (the random draws from
srcjax.random eagerly, whose streams tests/test_random*.py hold to JAX's).
"""

import numpy as np
import pytest

pytest.importorskip("numba")

import srcjax  # noqa: E402
import srcjax.numpy as jnp  # noqa: E402
from srcjax import lax, random  # noqa: E402
from srcjax.backends.numba_cpu import tiers  # noqa: E402


@pytest.fixture(autouse=True)
def numba_on(monkeypatch):
    monkeypatch.setenv("SRCJAX_DISK_CACHE", "0")
    old = srcjax.config.read("numba_loops")
    srcjax.config.update("numba_loops", True)
    yield
    srcjax.config.update("numba_loops", old)


def _numpy_only(fn, *args):
    old = srcjax.config.read("numba_loops")
    srcjax.config.update("numba_loops", False)
    try:
        return srcjax.jit(lambda *a: fn(*a))(*args)  # (another jit object than jit(fn))
    finally:
        srcjax.config.update("numba_loops", old)


def _same(a, b):
    la, lb = srcjax.tree_util.tree_leaves(a), srcjax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        assert np.array_equal(x, y, equal_nan=True), (x, y)


def _scan_of_keys(key, x0):
    def step(x, k):
        u = random.uniform(k)

        def body(i, s):
            return s * 0.5 + u

        x = lax.fori_loop(0, 10, body, x)
        return x, x

    return lax.scan(step, x0, random.split(key, 30))


def test_a_fori_loop_inside_a_scan_over_keys_is_compiled():
    key, x0 = random.PRNGKey(3), np.float32(0.25)
    f = srcjax.jit(_scan_of_keys)
    out = f(key, x0)
    src = srcjax.source(f, key, x0)
    assert "this loop keeps NumPy (dtype uint32)" in src
    assert src.count("Numba region nbloop_") == 1
    _same(out, _numpy_only(_scan_of_keys, key, x0))
    x, ys = np.float32(0.25), []
    for k in np.asarray(random.split(key, 30)):
        u = np.asarray(random.uniform(k))
        for _ in range(10):
            x = x * np.float32(0.5) + u
        ys.append(x)
    assert out[0].dtype == np.float32 and out[0] == x
    np.testing.assert_array_equal(out[1], np.array(ys, np.float32))


def _carried_by_the_inner_loop(key, x):
    # acc: set by the inner loop only, read by the next trip before it (y) and
    # after the outer loop; z: set by the inner loop before it reads it, read
    # only by the next outer trip; key: changed by the outer loop only
    acc = x
    z = x
    ys = []
    for t in range(12):
        y = acc * 2.0 + z
        key, sub = random.split(key)
        u = random.uniform(sub)
        for i in range(4):
            z = acc * u
            acc = acc * 0.5 + z
        ys.append(y)
    return acc, jnp.stack(ys)


def test_a_value_the_inner_loop_carries_across_outer_trips():
    key, x = random.PRNGKey(1), np.float32(0.25)
    f = srcjax.jit(_carried_by_the_inner_loop)
    out = f(key, x)
    assert srcjax.source(f, key, x).count("Numba region nbloop_") == 1
    _same(out, _numpy_only(_carried_by_the_inner_loop, key, x))
    acc, z, ys = np.float32(0.25), np.float32(0.25), []
    for _ in range(12):
        ys.append(acc * np.float32(2.0) + z)
        key, sub = np.asarray(random.split(key))
        u = np.asarray(random.uniform(sub))
        for _ in range(4):
            z = acc * u
            acc = acc * np.float32(0.5) + z
    assert out[0] == acc
    np.testing.assert_array_equal(out[1], np.array(ys, np.float32))


def _while_of_keys(key, x0):
    def cond(c):
        return c[2] < 7

    def body(c):
        key, x, n = c
        key, sub = random.split(key)
        u = random.uniform(sub)
        x = lax.fori_loop(0, 5, lambda i, s: s - 0.25 * s + u, x)
        return key, x, n + 1

    return lax.while_loop(cond, body, (key, x0, 0))[1]


def test_inside_a_while_loop_and_tiered(monkeypatch):
    key, x0 = random.PRNGKey(7), np.float32(-1.5)
    want = _numpy_only(_while_of_keys, key, x0)
    srcjax.config.update("numba_loops", "auto")
    f = srcjax.jit(_while_of_keys)
    _same(f(key, x0), want)  # (cold: the NumPy loop, timed)
    assert "tier: NumPy until hot" in srcjax.source(f, key, x0)
    monkeypatch.setattr(tiers, "HOT_FRACTION", 0.0)
    _same(f(key, x0), want)  # hot: compiled now, and run
    _same(f(key, x0), want)
    assert "tier: Numba, compiled after" in srcjax.source(f, key, x0)


def _type_changes(key, x):
    # s is a float32 scalar in the first outer trip, a vector after it: no
    # kernel may take it (it would read the first element only)
    s = x
    tot = 0.0
    for t in range(6):
        key, sub = random.split(key)
        u = random.uniform(sub)
        for i in range(3):
            s = s + u
        tot = tot + jnp.sum(s)
        s = jnp.ones(3) * jnp.sum(s) if t % 2 == 0 else s
    return tot


def test_a_value_whose_type_changes_between_outer_trips_keeps_numpy():
    key, x = random.PRNGKey(2), np.float32(0.25)
    f = srcjax.jit(_type_changes)
    out = f(key, x)
    assert "Numba region nbloop_" not in srcjax.source(f, key, x)
    _same(out, _numpy_only(_type_changes, key, x))
    s, tot = np.float32(0.25), np.float32(0.0)
    for t in range(6):
        key, sub = np.asarray(random.split(key))
        u = np.asarray(random.uniform(sub))
        for _ in range(3):
            s = s + u
        tot = tot + np.sum(s)
        s = np.ones(3, np.float32) * np.sum(s) if t % 2 == 0 else s
    np.testing.assert_allclose(out, tot, rtol=1e-6)
