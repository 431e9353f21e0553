"""Jitted loops over scalars compiled with Numba (backends/numba_cpu/loops.py).

Oracles: the same loop on NumPy scalars of the same dtype (float32 arithmetic
rounds the same way whether NumPy or Numba computes it: no float64 anywhere).
"""

import numpy as np
import pytest

pytest.importorskip("numba")

import srcjax  # noqa: E402
import srcjax.numpy as jnp  # noqa: E402
from srcjax import lax  # noqa: E402
from srcjax.backends.numba_cpu import loops  # noqa: E402


@pytest.fixture(autouse=True)
def numba_loops(monkeypatch):
    # (generated modules from the disk cache would skip the lowering tested here)
    monkeypatch.setenv("SRCJAX_DISK_CACHE", "0")
    old = srcjax.config.read("numba_loops")
    srcjax.config.update("numba_loops", True)
    yield
    srcjax.config.update("numba_loops", old)


def _newton(x0):
    def body(i, x):
        return x - (x * x - 2.0) / (2.0 * x)

    return lax.fori_loop(0, 200, body, x0)


def test_scalar_fori_loop_is_compiled_and_exact():
    f = srcjax.jit(_newton)
    out = f(3.0)
    x = np.float32(3.0)
    for _ in range(200):
        x = x - (x * x - np.float32(2.0)) / (np.float32(2.0) * x)
    assert isinstance(out, srcjax.Array) and out.dtype == np.float32 and out == x
    src = srcjax.source(f, 3.0)
    assert "Numba region nbloop_" in src and "(compiled, nogil)" in src


def _accumulate(s):
    def body(i, s):
        return s + 0.1 * jnp.sin(s)

    return lax.fori_loop(0, 5000, body, s)


def test_float32_stays_float32():
    # float64 arithmetic rounded at the end gives another number here
    out = srcjax.jit(_accumulate)(np.float32(0.5))
    s = np.float32(0.5)
    for _ in range(5000):
        s = s + np.float32(0.1) * np.sin(s)
    s64 = 0.5
    for _ in range(5000):
        s64 = s64 + 0.1 * np.sin(s64)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, s, rtol=2e-6)  # (sinf vs NumPy's sin: ulps)
    assert abs(float(out) - s64) > abs(float(out) - float(s))


def _collatz_steps(n):
    def cond(c):
        return c[0] != 1

    def body(c):
        k, steps = c
        k = jnp.where(k % 2 == 0, k // 2, 3 * k + 1)
        return k, steps + 1

    return lax.while_loop(cond, body, (n, 0))[1]


def _int_wrap(k):
    def body(i, k):
        return k * 3 + 1

    return lax.fori_loop(0, 40, body, k)


def test_int32_arithmetic_wraps_as_in_jax():
    out = srcjax.jit(_int_wrap)(np.int32(7))
    k = np.int32(7)
    with np.errstate(over="ignore"):
        for _ in range(40):
            k = k * np.int32(3) + np.int32(1)
    assert out.dtype == np.int32 and out == k


def test_while_loop_with_integer_ops_falls_back_or_compiles_correctly():
    out = srcjax.jit(_collatz_steps)(np.int32(27))
    assert int(out) == 111  # Collatz: 27 takes 111 steps


def _with_array(x):
    def body(i, v):
        return v * 0.5 + jnp.sum(v) * 0.01

    return lax.fori_loop(0, 10, body, x)


def test_a_loop_over_a_small_array_with_a_sum_is_compiled():
    x = np.arange(4, dtype=np.float32)
    f = srcjax.jit(_with_array)
    out = f(x)
    v = x.copy()
    for _ in range(10):
        v = v * np.float32(0.5) + v.sum() * np.float32(0.01)
    assert out.dtype == np.float32 and out.shape == (4,)
    np.testing.assert_allclose(out, v, rtol=1e-6)  # (the sum's order: C order, NumPy's pairwise)
    assert "Numba region nbloop_" in srcjax.source(f, x)


def test_a_loop_over_a_large_array_keeps_numpy():
    x = np.arange(100, dtype=np.float32)
    f = srcjax.jit(_with_array)
    out = f(x)
    v = x.copy()
    for _ in range(10):
        v = v * np.float32(0.5) + v.sum() * np.float32(0.01)
    np.testing.assert_allclose(out, v, rtol=1e-6)
    assert "keeps NumPy (an array of 100 elements)" in srcjax.source(f, x)


def test_a_loop_numba_cannot_compile_keeps_numpy_and_is_not_retried(monkeypatch):
    import srcjax.backends.numba_cpu as nbc

    calls = []

    def broken(fn=None, **kw):
        calls.append(1)
        raise RuntimeError("no")

    monkeypatch.setattr(nbc, "njit", broken)
    monkeypatch.setattr(loops, "_REGIONS", {})

    def g(x0):
        return lax.fori_loop(0, 7, lambda i, x: x * 1.5 + 0.25, x0)

    f = srcjax.jit(g)
    want = np.float32(1.0)
    for _ in range(7):
        want = want * np.float32(1.5) + np.float32(0.25)
    assert f(1.0) == want and f(1.0) == want
    assert "Numba could not compile this loop" in srcjax.source(f, 1.0)
    tried = len(calls)  # (one compile, and one without the on-disk cache)
    assert 1 <= tried <= 2
    assert f(np.float32(1.0)) == want  # (another kernel: its result is boxed as a float32)
    tried = len(calls)
    srcjax.jit(g)(2.0)  # another jit object, the same kernel: not compiled again
    assert len(calls) == tried


def test_a_region_is_read_back_from_its_file():
    f = srcjax.jit(_newton)
    want = f(3.0)
    src = srcjax.source(f, 3.0)
    key = src.split("Numba region ")[1].split()[0]
    fresh = dict(loops._REGIONS)
    fresh.pop(key)
    old = loops._REGIONS
    loops._REGIONS = fresh
    try:
        assert loops.region(key)(np.float32(3.0))[0] == want
    finally:
        loops._REGIONS = old


def test_off_by_default_without_the_option():
    srcjax.config.update("numba_loops", False)
    f = srcjax.jit(lambda x0: lax.fori_loop(0, 3, lambda i, x: x * 2.0, x0))
    assert f(1.0) == 8.0
    assert "Numba" not in srcjax.source(f, 1.0)


def test_a_kernel_whose_numba_cache_entry_does_not_load_is_compiled_afresh():
    # Seen in a full run: Numba's on-disk entry of a kernel read back by `region` named the
    # module "<dynamic>" (written by an earlier srcjax) and loading it raised
    # ModuleNotFoundError from the user's jitted call.
    src = "def kernel(x):\n    return (x * np.float32(2.0),)\n"
    ns = {"np": np}
    exec(src, ns)

    class _Unloadable:
        py_func = ns["kernel"]

        def __call__(self, *args):
            raise ModuleNotFoundError("No module named '<dynamic>'")

    reg = loops.Region("nbloop_test", _Unloadable(), "", src)
    reg.python = ns["kernel"]
    (got,) = reg(np.float32(1.5))
    assert got == 3.0
    assert hasattr(reg.fn, "py_func") and not isinstance(reg.fn, _Unloadable)


def _dead_before_loop(x):
    # (fuzz.py --eager, seed 17, program 4) v0 is dead before the loop (set in it,
    # set again after it before any read): jit's dead-code elimination drops
    # v0 = -v2, and the region must not take v0 as an input or an output
    v0 = x
    v1 = jnp.sin(x)
    v2 = x * 0.5 + 0.1
    v0 = -v2
    n1 = 0
    while n1 < 2 and jnp.sum(v2 * v2) < 18.75:
        v0 = v2 + v2
        n1 = n1 + 1
    v0 = v2 + v1
    return jnp.sum(v0 * v1)


@pytest.mark.parametrize("how", [True, "auto", False])
def test_a_name_set_in_the_loop_and_dead_after_it_is_no_region_input(how):
    srcjax.config.update("numba_loops", how)
    x = np.linspace(-1, 1, 5).astype(np.float32)
    v2 = x * np.float32(0.5) + np.float32(0.1)
    want = np.sum((v2 + np.sin(x)) * np.sin(x), dtype=np.float32)
    for _ in range(3):
        np.testing.assert_allclose(srcjax.jit(_dead_before_loop)(x), want, rtol=1e-6)


def _halve_three_times(x):
    n = 0
    while n < 3:
        x = x * 0.5
        n = n + 1
    return x


def test_changing_the_option_changes_the_code_of_a_function_jitted_before():
    # (found with the test above: the in-process specializations kept the code made
    # for the option's old value; the disk cache keyed on it already)
    x = np.ones(3, np.float32)
    seen = {}
    for how in ["auto", False, True]:
        srcjax.config.update("numba_loops", how)
        f = srcjax.jit(_halve_three_times)
        src = srcjax.source(f, x)
        seen[how] = ("tiered(" in src, "nbloop" in src)
        np.testing.assert_array_equal(f(x), np.full(3, 0.125, np.float32))
    assert seen == {"auto": (True, True), False: (False, False), True: (False, True)}
