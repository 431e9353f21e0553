"""grad through a jitted loop with Numba loops on: the forward loop and its
reverse loop compiled as a pair whose tape is typed stacks
(backends/numba_cpu/tapes.py).

Oracles: the same jitted gradient with Numba loops off (the NumPy path, bit for
bit: the kernels compute in float32 as NumPy does, no float64 anywhere), and
central finite differences of a float64 NumPy RK4 written by hand.
"""

import numpy as np
import pytest

pytest.importorskip("numba")

from test_numba_loops import numba_loops  # noqa: E402, F401 - the option on, per test

import srcjax  # noqa: E402
import srcjax.numpy as jnp  # noqa: E402
from srcjax import lax  # noqa: E402
from srcjax.backends.numba_cpu import loops  # noqa: E402

P = np.array([10.0, 28.0, 8.0 / 3.0], np.float32)
Y0 = np.array([1.0, 1.0, 1.0], np.float32)
#: steps (one static count: each count is another kernel to compile)
N = 120


def _lorenz(y, p):
    sigma, rho, beta = p[0], p[1], p[2]
    return jnp.stack([sigma * (y[1] - y[0]), y[0] * (rho - y[2]) - y[1], y[0] * y[1] - beta * y[2]])


def _rk4_step(y, p, dt):
    k1 = _lorenz(y, p)
    k2 = _lorenz(y + 0.5 * dt * k1, p)
    k3 = _lorenz(y + 0.5 * dt * k2, p)
    k4 = _lorenz(y + dt * k3, p)
    return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)


def _energy_fori(p, y0, n):
    y = lax.fori_loop(0, n, lambda i, y: _rk4_step(y, p, 0.001), y0)
    return jnp.sum(y * y)


def _energy_scan(p, y0):
    def body(y, _):
        return _rk4_step(y, p, 0.001), None

    y, _ = lax.scan(body, y0, None, length=300)
    return jnp.sum(y * y)


def _energy_while(p, y0, t_end):
    # the trip count depends on the data: the clock runs at p[0] / 10
    def cond(c):
        return c[1] < t_end

    def body(c):
        y, t = c
        return _rk4_step(y, p, 0.001), t + 0.001 * p[0] / 10.0

    y, _ = lax.while_loop(cond, body, (y0, jnp.float32(0.0)))
    return jnp.sum(y * y)


def _energy64(p, y0, n=None, t_end=None):
    """The same RK4 in float64 NumPy, by hand (the finite differences' function)."""

    def f(y):
        return np.array(
            [p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1], y[0] * y[1] - p[2] * y[2]]
        )

    y, dt, t, k = np.array(y0, np.float64), 0.001, 0.0, 0
    while (k < n) if n is not None else (t < t_end):
        k1 = f(y)
        k2 = f(y + 0.5 * dt * k1)
        k3 = f(y + 0.5 * dt * k2)
        k4 = f(y + dt * k3)
        y = y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        t, k = t + 0.001 * p[0] / 10.0, k + 1
    return float(np.sum(y * y))


def _fd(fun, p, eps=1e-5):
    p = np.array(p, np.float64)
    out = []
    for i in range(3):
        d = np.zeros(3)
        d[i] = eps
        out.append((fun(p + d) - fun(p - d)) / (2 * eps))
    return np.array(out)


def _numpy_path(fn, *args, **jit_kw):
    srcjax.config.update("numba_loops", False)
    try:
        return np.asarray(srcjax.jit(srcjax.grad(fn), **jit_kw)(*args))
    finally:
        srcjax.config.update("numba_loops", True)


def _bits(x):
    x = np.asarray(x)
    assert x.dtype == np.float32
    return x.view(np.uint32)


def test_grad_through_fori_rk4_compiles_both_loops_and_matches_numpy_bit_for_bit():
    f = srcjax.jit(srcjax.grad(_energy_fori), static_argnums=2)
    g = f(P, Y0, N)
    src = srcjax.source(f, P, Y0, N)
    assert "grad's forward loop, its tape tape as typed stacks" in src
    assert "grad's reverse loop, its tape tape as typed stacks" in src
    assert src.count("(compiled, nogil)") == 2
    ref = _numpy_path(_energy_fori, P, Y0, N, static_argnums=2)
    np.testing.assert_array_equal(_bits(g), _bits(ref))
    fd = _fd(lambda q: _energy64(q, Y0, n=N), P)
    np.testing.assert_allclose(g, fd, rtol=2e-3)


def test_the_tape_stacks_are_float32_only():
    f = srcjax.jit(srcjax.grad(_energy_fori), static_argnums=2)
    f(P, Y0, N)
    src = srcjax.source(f, P, Y0, N)
    fwd = [r for r in loops._REGIONS.values() if r.relist is not None and r.key in src]
    assert fwd and all("float64" not in r.source for r in fwd)
    assert all("s_float32 = np.empty(" in r.source for r in fwd)


def test_zero_trips_match_numpy():
    for n in (0,):
        f = srcjax.jit(srcjax.grad(_energy_fori), static_argnums=2)
        ref = _numpy_path(_energy_fori, P, Y0, n, static_argnums=2)
        np.testing.assert_array_equal(_bits(f(P, Y0, n)), _bits(ref))


def test_a_reverse_kernel_that_fails_runs_numpy_on_the_rebuilt_tape(monkeypatch):
    f = srcjax.jit(srcjax.grad(_energy_fori), static_argnums=2)
    f(P, Y0, N)
    src = srcjax.source(f, P, Y0, N)
    rev = [r for r in loops._REGIONS.values() if r.none_check and r.key in src]
    assert len(rev) == 1
    calls = []

    def boom(*args):
        calls.append(len(args))
        raise ValueError("a kernel that fails on its arguments")

    monkeypatch.setattr(rev[0], "fn", boom)
    g = f(P, Y0, N)
    assert calls and rev[0].fn is None  # remembered: NumPy from now on
    ref = _numpy_path(_energy_fori, P, Y0, N, static_argnums=2)
    np.testing.assert_array_equal(_bits(g), _bits(ref))
    np.testing.assert_array_equal(_bits(f(P, Y0, N)), _bits(ref))


def test_relist_rebuilds_the_list_the_numpy_forward_loop_builds(monkeypatch):
    f = srcjax.jit(srcjax.grad(_energy_fori), static_argnums=2)
    f(P, Y0, N)
    src = srcjax.source(f, P, Y0, N)
    (fwd,) = [r for r in loops._REGIONS.values() if r.relist is not None and r.key in src]
    seen = []
    kernel = fwd.fn

    def record(*args):
        seen.append(kernel(*args))
        return seen[-1]

    monkeypatch.setattr(fwd, "fn", record)
    f(P, Y0, N)
    stacks = seen[-1][-1]
    rebuilt = fwd.relist(stacks)
    assert stacks[0] == N and len(rebuilt) % N == 0
    per = len(rebuilt) // N
    first, second, third = rebuilt[:per], rebuilt[per : 2 * per], rebuilt[2 * per : 3 * per]
    # forward declarations are pushed as None in the first trip only; the
    # literal dt = 0.001 comes back as the Python float it is
    nones = [sum(x is None for x in trip) for trip in (first, second, third)]
    assert nones[0] > nones[1] == nones[2]
    floats = [x for x in second if type(x) is float]
    assert 0.001 in floats
    assert any(isinstance(x, np.ndarray) and x.dtype == np.float32 for x in second)
    assert any(isinstance(x, list) and len(x) == 3 for x in second)  # jnp.stack's list display
    # a trip pushes what the trip before computed: trip 3 pushes `sub = y[1] - y[0]`
    # of the state entering trip 2 (y0 advanced once)
    y1 = _rk4_by_hand(Y0, 1)
    assert any(type(x) is np.float32 and x == y1[1] - y1[0] for x in third)
    assert not any(type(x) is np.float32 and x == y1[1] - y1[0] for x in second)


def _rk4_by_hand(y, n):
    """RK4 in float32 NumPy, operation for operation as the jitted code."""
    p, dt = P, np.float32(0.001)

    def f(y):
        return np.array(
            [p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1], y[0] * y[1] - p[2] * y[2]],
            np.float32,
        )

    for _ in range(n):
        k1 = f(y)
        k2 = f(y + np.float32(0.0005) * k1)
        k3 = f(y + np.float32(0.0005) * k2)
        k4 = f(y + dt * k3)
        y = y + np.float32(0.001 / 6.0) * (((k1 + 2.0 * k2) + 2.0 * k3) + k4)
    return y


def test_grad_through_scan_rk4_compiles_and_matches_numpy_and_finite_differences():
    f = srcjax.jit(srcjax.grad(_energy_scan))
    g = f(P, Y0)
    # (scan's constant length makes the reverse loop's carry typed: jit's
    # inference knows the loop runs)
    assert srcjax.source(f, P, Y0).count("(compiled, nogil)") == 2
    ref = _numpy_path(_energy_scan, P, Y0)
    np.testing.assert_array_equal(_bits(g), _bits(ref))
    fd = _fd(lambda q: _energy64(q, Y0, n=300), P)
    np.testing.assert_allclose(g, fd, rtol=2e-3)


def test_grad_through_a_while_loop_with_a_data_dependent_trip_count():
    t_end = np.float32(0.05)
    g = srcjax.jit(srcjax.grad(_energy_while))(P, Y0, t_end)
    ref = _numpy_path(_energy_while, P, Y0, t_end)
    np.testing.assert_array_equal(_bits(g), _bits(ref))
    # the trip count moves with p[0] in finite differences: hold it at this p's
    # float32 count (the derivative is of the function at a fixed count)
    k, t = 0, np.float32(0.0)
    while t < t_end:
        t, k = np.float32(t + np.float32(0.001) * P[0] / np.float32(10.0)), k + 1
    fd = _fd(lambda q: _energy64(q, Y0, n=k), P)
    np.testing.assert_allclose(g, fd, rtol=2e-3)


def _two_loops(p, y):
    # one tape for both loops: F1 F2 R2 R1, each pair compiled on its own
    y = lax.fori_loop(0, 50, lambda i, y: y + 0.01 * jnp.sin(p * y), y)
    y = lax.fori_loop(0, 30, lambda i, y: y * (1.0 + 0.001 * p) - 0.01 * y * y, y)
    return jnp.sum(y * y)


def _cond_then_plain(p, y):
    # the first loop pushes inside branches (it keeps the list), the second is a pair
    def body(i, y):
        return lax.cond(y[0] > 1.0, lambda y: y * 0.9, lambda y: y + 0.05 * p, y)

    y = lax.fori_loop(0, 40, body, y)
    y = lax.fori_loop(0, 30, lambda i, y: y + 0.01 * jnp.cos(p * y), y)
    return jnp.sum(y * y)


Q = np.array([0.7, 1.3, 0.4], np.float32)
Z = np.array([0.2, 0.6, 1.1], np.float32)


def test_two_loops_on_one_tape_are_two_pairs():
    f = srcjax.jit(srcjax.grad(_two_loops))
    g = f(Q, Z)
    assert srcjax.source(f, Q, Z).count("(compiled, nogil)") == 4
    np.testing.assert_array_equal(_bits(g), _bits(_numpy_path(_two_loops, Q, Z)))


def test_a_pair_inside_a_numpy_loop_pair_shares_the_list(monkeypatch):
    f = srcjax.jit(srcjax.grad(_cond_then_plain))
    g = f(Q, Z)
    src = srcjax.source(f, Q, Z)
    assert src.count("(compiled, nogil)") == 2
    ref = _numpy_path(_cond_then_plain, Q, Z)
    np.testing.assert_array_equal(_bits(g), _bits(ref))
    # the compiled reverse loop fails: its rebuilt entries go on top of the
    # first loop's, which the NumPy reverse loop of that one pops afterwards
    (rev,) = [r for r in loops._REGIONS.values() if r.none_check and r.key in src]

    def boom(*args):
        raise ValueError("a kernel that fails on its arguments")

    monkeypatch.setattr(rev, "fn", boom)
    np.testing.assert_array_equal(_bits(f(Q, Z)), _bits(ref))


def _energy_while_array(p, y0):
    # the carry is the state itself; the trip count depends on p and y0
    def cond(y):
        return y[0] < 3.0

    def body(y):
        return y + 0.01 * p * (1.0 + jnp.sin(y))

    return jnp.sum(lax.while_loop(cond, body, y0) ** 2)


def _energy_fori_traced(p, y0, n):
    y = lax.fori_loop(0, n, lambda i, y: _rk4_step(y, p, 0.001), y0)
    return jnp.sum(y * y)


def test_a_while_loop_with_an_array_carry_compiles_both_loops():
    # the reverse loop's trip count is known at run time only, so jit's
    # inference leaves its cotangents unknown; the kernel types them itself
    f = srcjax.jit(srcjax.grad(_energy_while_array))
    g = f(Q, Z)
    assert srcjax.source(f, Q, Z).count("(compiled, nogil)") == 2
    np.testing.assert_array_equal(_bits(g), _bits(_numpy_path(_energy_while_array, Q, Z)))

    def energy64(q):
        y = Z.astype(np.float64)
        for _ in range(k):
            y = y + 0.01 * q * (1.0 + np.sin(y))
        return float(np.sum(y**2))

    k, y = 0, Z.copy()
    while y[0] < np.float32(3.0):
        y = y + np.float32(0.01) * Q * (np.float32(1.0) + np.sin(y))
        k += 1
    np.testing.assert_allclose(g, _fd(energy64, Q), rtol=2e-3)


def test_a_fori_loop_with_a_traced_trip_count_compiles_both_loops():
    f = srcjax.jit(srcjax.grad(_energy_fori_traced))
    g = f(P, Y0, N)
    assert srcjax.source(f, P, Y0, N).count("(compiled, nogil)") == 2
    np.testing.assert_array_equal(_bits(g), _bits(_numpy_path(_energy_fori_traced, P, Y0, N)))
    np.testing.assert_allclose(g, _fd(lambda q: _energy64(q, Y0, n=N), P), rtol=2e-3)
