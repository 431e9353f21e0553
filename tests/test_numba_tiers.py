"""Tiered compilation of jitted loops (numba_loops="auto": backends/numba_cpu/tiers.py).

Oracles: the same jitted function with Numba off (the NumPy path), compared to
the bit, dtype included, before and after the region tiers up; plain NumPy for
the ufunc loops the kernels call.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("numba")

import srcjax  # noqa: E402
import srcjax.numpy as jnp  # noqa: E402
from srcjax import lax  # noqa: E402
from srcjax.backends import numba_cpu  # noqa: E402
from srcjax.backends.numba_cpu import loops, tiers  # noqa: E402


@pytest.fixture(autouse=True)
def auto(monkeypatch):
    monkeypatch.setenv("SRCJAX_DISK_CACHE", "0")
    old = srcjax.config.read("numba_loops")
    srcjax.config.update("numba_loops", "auto")
    yield
    srcjax.config.update("numba_loops", old)


def _numpy_only(fn, *args):
    srcjax.config.update("numba_loops", False)
    try:
        return srcjax.jit(lambda *a: fn(*a))(*args)  # (another jit object than jit(fn))
    finally:
        srcjax.config.update("numba_loops", "auto")


def _same(a, b):
    for x, y in zip(srcjax.tree_util.tree_leaves(a), srcjax.tree_util.tree_leaves(b)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        assert np.array_equal(x, y, equal_nan=True), (x, y)


def _pendulum(t):
    def step(i, s):
        th, om = s
        om = om - 0.01 * 9.81 * jnp.sin(th)
        return th + 0.01 * om, om

    return lax.fori_loop(0, 300, step, (t, jnp.zeros_like(t)))


def _bounce(h0):
    def cond(s):
        return s[2] < 3

    def body(s):
        h, v, nb, t = s
        v = v - 9.81 * 0.002
        h = h + v * 0.002
        h, v, nb = lax.cond(
            h < 0, lambda a: (-a[0], -0.9 * a[1], a[2] + 1), lambda a: a, (h, v, nb)
        )
        return h, v, nb, t + 0.002

    return lax.while_loop(cond, body, (h0, jnp.float32(0.0), 0, jnp.float32(0.0)))


@pytest.mark.parametrize(
    "fn, arg",
    [(_pendulum, np.linspace(0.1, 2.0, 4, dtype=np.float32)), (_bounce, np.float32(1.0))],
)
def test_a_hot_loop_tiers_up_and_gives_the_numpy_paths_numbers(fn, arg, monkeypatch):
    want = _numpy_only(fn, arg)
    f = srcjax.jit(fn)
    _same(f(arg), want)  # (cold: the NumPy loop, timed)
    src = srcjax.source(f, arg)
    assert "tier: NumPy until hot, 1 NumPy runs" in src
    monkeypatch.setattr(tiers, "HOT_FRACTION", 0.0)
    _same(f(arg), want)  # hot: compiled now, and run
    _same(f(arg), want)
    assert "tier: Numba, compiled after 1 NumPy runs" in srcjax.source(f, arg)


def test_a_cold_loop_does_not_import_numba(tmp_path):
    code = (
        "import sys, numpy as np, srcjax\n"
        "from srcjax import lax\n"
        "f = srcjax.jit(lambda x: lax.fori_loop(0, 50, lambda i, v: v * 0.5 + 1.0, x))\n"
        "assert float(f(np.float32(1.0))) == float(f(np.float32(1.0)))\n"
        "assert srcjax.config.read('numba_loops') == 'auto'\n"
        "assert '_nbr.tiered(' in srcjax.source(f, np.float32(1.0))\n"
        "print('numba' in sys.modules)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "SRCJAX_NUMBA_LOOPS"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    script = tmp_path / "cold.py"
    script.write_text(code)
    out = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def test_a_region_numba_cannot_compile_is_never_retried(monkeypatch, tmp_path):
    monkeypatch.setenv("SRCJAX_CACHE_DIR", str(tmp_path))
    calls = []

    def broken(fn=None, **kw):
        calls.append(1)
        raise RuntimeError("no")

    monkeypatch.setattr(numba_cpu, "njit", broken)
    monkeypatch.setattr(loops, "_REGIONS", {})
    monkeypatch.setattr(tiers, "_TIERS", {})
    monkeypatch.setattr(tiers, "HOT_FRACTION", 0.0)

    def g(x0):
        return lax.fori_loop(0, 9, lambda i, x: x * 1.25 - 0.5, x0)

    want = _numpy_only(g, np.float32(3.0))
    f = srcjax.jit(g)
    for _ in range(4):
        _same(f(np.float32(3.0)), want)
    assert 1 <= len(calls) <= 2  # (one compile, and one without the on-disk cache)
    src = srcjax.source(f, np.float32(3.0))
    assert "tier: NumPy for good, Numba could not compile it: RuntimeError: no" in src
    # another process (no tiers in memory) reads the failure from the cache directory
    key = src.split("Numba region ")[1].split()[0]
    monkeypatch.setattr(tiers, "_TIERS", {})
    assert tiers.tiered(key).group.state == "failed"
    tried = len(calls)
    _same(srcjax.jit(g)(np.float32(3.0)), want)
    assert len(calls) == tried


def test_grad_through_a_loop_tiers_its_forward_and_reverse_loops_together(monkeypatch):
    def energy(th0):
        def step(i, s):
            th, om = s
            om = om - 0.01 * 9.81 * jnp.sin(th)
            return th + 0.01 * om, om

        th, om = lax.fori_loop(0, 100, step, (th0, jnp.float32(0.0)))
        return 0.5 * om**2 - 9.81 * jnp.cos(th)

    g = srcjax.grad(energy)
    want = _numpy_only(g, np.float32(1.0))
    f = srcjax.jit(g)
    _same(f(np.float32(1.0)), want)
    monkeypatch.setattr(tiers, "HOT_FRACTION", 0.0)
    _same(f(np.float32(1.0)), want)
    _same(f(np.float32(1.0)), want)
    src = srcjax.source(f, np.float32(1.0))
    if "grad's forward loop" in src:
        assert src.count("tier: Numba, compiled after") == 2


def test_the_second_process_reads_kernels_back_and_tiers_up(monkeypatch):
    f = srcjax.jit(_pendulum)
    arg = np.ones(4, np.float32)
    want = _numpy_only(_pendulum, arg)
    _same(f(arg), want)
    key = srcjax.source(f, arg).split("Numba region ")[1].split()[0]
    monkeypatch.setattr(tiers, "_TIERS", {})  # (as a new process: the kernel from its file)
    monkeypatch.setattr(tiers, "HOT_FRACTION", 0.0)
    t = tiers.tiered(key)
    assert t.sig is None and t.group.state == "cold"
    t.spent(tiers.clock())
    out = t((arg, np.zeros(4, np.float32)))  # (the loop carry, one tuple)
    assert out is not None and t.group.state == "compiled"
    _same(out[0], want)


def test_kernels_call_numpys_own_loops_to_the_bit():
    from srcjax.backends.numba_cpu import ufuncs

    u1, u2, m1, m2 = ufuncs.ufcalls()
    nb = numba_cpu.numba()

    @nb.njit
    def four(p, x, y, o):  # (one call over 4 elements, as NumPy's own on a (4,) array)
        for i in range(0, x.shape[0] - 3, 4):
            xs = (x[i], x[i + 1], x[i + 2], x[i + 3])
            ys = (y[i], y[i + 1], y[i + 2], y[i + 3])
            o[i], o[i + 1], o[i + 2], o[i + 3] = m1(p, xs) if y is x else m2(p, xs, ys)

    @nb.njit
    def one(p, x, o):
        for i in range(x.shape[0]):
            o[i] = u1(p, x[i])

    @nb.njit
    def two(p, x, y, o):
        for i in range(x.shape[0]):
            o[i] = u2(p, x[i], y[i])

    rng = np.random.default_rng(0)
    for dt in ("float32", "float64"):
        x = rng.uniform(-3, 3, 3000).astype(dt)
        y = rng.uniform(-3, 3, 3000).astype(dt)
        x[:5] = [np.nan, np.inf, -np.inf, 0.0, 1e30]
        for name in sorted(ufuncs.LOOPED):
            uf = getattr(np, name)
            o = np.empty_like(x)
            p = ufuncs.loop_pointer(name, dt)
            one(p, x, o) if uf.nin == 1 else two(p, x, y, o)
            with np.errstate(all="ignore"):
                want = uf(x) if uf.nin == 1 else uf(x, y)
            assert np.array_equal(o, want, equal_nan=True), (name, dt)
            o4 = np.empty_like(x)
            four(p, x, x if uf.nin == 1 else y, o4)
            assert np.array_equal(o4, want, equal_nan=True), (name, dt, "4 at once")


def test_without_numba_auto_is_numpy(monkeypatch):
    import importlib.util

    arg = np.ones(4, np.float32)
    want = _numpy_only(_pendulum, arg)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "numba" else real(name, *a)
    )
    # as in a process where numba is not installed: not found, and its import fails
    monkeypatch.setattr(numba_cpu, "_TRIED", False)
    monkeypatch.setattr(numba_cpu, "_FINDABLE", None)
    assert numba_cpu.loop_mode("auto") == ""
    monkeypatch.setattr(numba_cpu, "_TRIED", True)
    monkeypatch.setattr(numba_cpu, "_NUMBA", None)
    assert numba_cpu.loop_mode("auto") == "" and numba_cpu.loop_mode(True) == ""
    f = srcjax.jit(lambda t: _pendulum(t))  # (not the jit object of the other tests)
    _same(f(arg), want)
    _same(f(arg), want)
    assert "Numba" not in srcjax.source(f, arg)


def test_the_option_takes_auto_true_or_false():
    with pytest.raises(ValueError, match="numba_loops"):
        srcjax.config.update("numba_loops", "sometimes")
    srcjax.config.update("numba_loops", 1)
    assert srcjax.config.read("numba_loops") is True
