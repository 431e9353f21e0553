"""Array mode of the Numba loops (backends/numba_cpu/arrays.py, gufuncs.py): a
jitted loop over arrays too large to scalarize, compiled as a kernel of whole
arrays whose matvec/vecmat/vecdot are NumPy's own gufunc loops.

Oracle: the same jitted program on the NumPy backend (``numba_loops`` off), which
the kernel must match bit for bit (the same float32 operations in the same order,
NumPy's own loops for the products), and plain NumPy float32 loops.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("numba")

from test_numba_loops import numba_loops  # noqa: E402, F401 - the option on, per test

import srcjax  # noqa: E402
import srcjax.numpy as jnp  # noqa: E402
from srcjax import grad, jvp, lax, vmap  # noqa: E402
from srcjax.backends.numba_cpu import gufuncs, loops  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tools", "real_programs"))


def _numpy_only(fn, *args):
    old = srcjax.config.read("numba_loops")
    srcjax.config.update("numba_loops", False)
    try:
        return srcjax.jit(lambda *a: fn(*a))(*args)  # (another jit object than jit(fn))
    finally:
        srcjax.config.update("numba_loops", old)


def _bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), np.max(np.abs(a.astype(np.float64) - b))


def _newton_cg(steps, cg):
    # R6's program (tools/real_programs/r6_newton_cg.py) with other sizes
    def hvp(f, primals, tangents):
        return jvp(grad(f), primals, tangents)[1]

    def newton_cg(w, x, y):
        def loss(w):
            z = x @ w
            return jnp.mean(jnp.logaddexp(0.0, z) - y * z) + 0.005 * jnp.sum(w * w)

        for _ in range(steps):
            g = grad(loss)(w)
            p = jnp.zeros_like(w)
            r = -g
            d = r
            rr = jnp.sum(r * r)
            for _ in range(cg):
                hd = hvp(loss, (w,), (d,))
                alpha = rr / jnp.sum(d * hd)
                p = p + alpha * d
                r = r - alpha * hd
                rr_new = jnp.sum(r * r)
                d = r + (rr_new / rr) * d
                rr = rr_new
            w = w + p
        return w

    return vmap(newton_cg, in_axes=(None, 0, 0))


@pytest.mark.parametrize("seed,shape", [(0, (3, 7, 5)), (1, (5, 40, 9)), (2, (2, 70, 33))])
def test_newton_cg_is_compiled_in_array_mode_bit_for_bit(seed, shape):
    rng = np.random.default_rng(seed)
    P, S, F = shape
    x = rng.standard_normal(shape).astype(np.float32)
    y = (rng.standard_normal((P, S)) > 0).astype(np.float32)
    w0 = (rng.standard_normal(F) * 0.1).astype(np.float32)
    prog = _newton_cg(2, 4)
    f = srcjax.jit(prog)
    got = f(w0, x, y)
    src = srcjax.source(f, w0, x, y)
    line = next(ln for ln in src.splitlines() if "over whole arrays (array mode)" in ln)
    key = line.split("Numba region ")[1].split()[0]
    assert loops._REGIONS[key].fn is not None  # (compiled, not fallen back)
    _bits(got, _numpy_only(prog, w0, x, y))


def test_r6_is_bitwise_the_numpy_backends(tmp_path):
    from load import load

    m = load("R6", "srcjax", str(tmp_path))
    w0, xs, ys = m.make_inputs(np.random.default_rng(0))
    got = m.step(w0, xs, ys)
    assert "array mode" in srcjax.source(m.step, w0, xs, ys)
    srcjax.config.update("numba_loops", False)
    (tmp_path / "off").mkdir()
    m2 = load("R6", "srcjax", str(tmp_path / "off"))
    _bits(got, m2.step(w0, xs, ys))


def _damped(v, w):
    def body(i, v):
        return jnp.where(v > 0.5, v * 0.75, v + w) - 0.125 * w

    return lax.fori_loop(0, 30, body, v)


def test_an_elementwise_loop_over_a_large_array_is_float32_numpys():
    rng = np.random.default_rng(3)
    v0 = rng.standard_normal((30, 40)).astype(np.float32)
    w = rng.standard_normal(40).astype(np.float32)
    f = srcjax.jit(_damped)
    got = f(v0, w)
    assert "array mode" in srcjax.source(f, v0, w)
    v = v0.copy()
    for _ in range(30):  # plain NumPy float32: the weak constants are float32
        v = np.where(v > 0.5, v * np.float32(0.75), v + w) - np.float32(0.125) * w
    _bits(got, v)
    _bits(got, _numpy_only(_damped, v0, w))


def _summed(v):
    def body(i, v):
        return v * 0.5 + jnp.sum(v) * 0.01

    return lax.fori_loop(0, 10, body, v)


def test_a_loop_array_mode_refuses_keeps_numpy_and_says_why():
    v0 = np.arange(100, dtype=np.float32)
    f = srcjax.jit(_summed)
    got = f(v0)
    src = srcjax.source(f, v0)
    assert "(array mode: jnp.sum in array mode)" in src and "Numba region" not in src
    _bits(got, _numpy_only(_summed, v0))


def test_a_gufunc_loop_that_computes_another_thing_is_never_used():
    # the pointer read from PyUFuncObject.functions is checked against the gufunc
    wrong = gufuncs.table_pointer(np.vecmat, "f")
    with pytest.raises(RuntimeError, match="computes another thing"):
        gufuncs._check(np.matvec, "matvec", wrong, np.dtype(np.float32))
    ok = gufuncs.table_pointer(np.matvec, "f")
    gufuncs._check(np.matvec, "matvec", ok, np.dtype(np.float32))


def test_a_failed_gufunc_check_leaves_the_loop_in_numpy(monkeypatch):
    def broken(name, dtype):
        raise RuntimeError(f"np.{name}'s loop read here computes another thing")

    monkeypatch.setattr(gufuncs, "loop_pointer", broken)
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 9, 4)).astype(np.float32)
    y = (rng.standard_normal((2, 9)) > 0).astype(np.float32)
    w0 = np.zeros(4, np.float32)
    prog = _newton_cg(1, 3)
    f = srcjax.jit(prog)
    got = f(w0, x, y)
    src = srcjax.source(f, w0, x, y)
    assert "keeps NumPy" in src and "computes another thing" in src
    _bits(got, _numpy_only(prog, w0, x, y))


def _tanh_relax(v, w):
    def body(i, v):
        return jnp.tanh(v * w) + jnp.exp(-v) * 0.5

    return lax.fori_loop(0, 12, body, v)


def test_numpys_own_transcendental_loops_in_array_mode():
    rng = np.random.default_rng(5)
    v0 = rng.standard_normal((9, 11)).astype(np.float32)
    w = rng.standard_normal((9, 11)).astype(np.float32)
    f = srcjax.jit(_tanh_relax)
    got = f(v0, w)
    assert "array mode" in srcjax.source(f, v0, w)
    v = v0.copy()
    for _ in range(12):
        v = np.tanh(v * w) + np.exp(-v) * np.float32(0.5)
    _bits(got, v)


def _powered(v, e):
    def body(i, v):
        return v**e * 0.25 + 0.5

    return lax.fori_loop(0, 5, body, v)


def test_a_power_keeps_numpy_in_array_mode():
    # (NumPy's float32 pow loop is not Numba's pow; jit writes v ** 2 as v * v)
    v0 = np.linspace(0, 1, 100).astype(np.float32)
    e = np.linspace(0.5, 3, 100).astype(np.float32)
    f = srcjax.jit(_powered)
    got = f(v0, e)
    assert "(array mode: ** in array mode)" in srcjax.source(f, v0, e)
    _bits(got, _numpy_only(_powered, v0, e))


def _hmc(prec_np):
    # fresh-user repro_07 (HMC: a fori_loop leapfrog with grad inside a scan over
    # keys): its inner loop kept NumPy for `x @ prec` and its tuple carry
    prec = jnp.asarray(prec_np)

    def logp(x):
        return -0.5 * x @ prec @ x

    def step(x, key):
        k1, k2 = srcjax.random.split(key)
        p = srcjax.random.normal(k1, x.shape)

        def body(i, s):
            x, p = s
            p = p + 0.05 * grad(logp)(x)
            x = x + 0.1 * p
            p = p + 0.05 * grad(logp)(x)
            return (x, p)

        x1, p1 = lax.fori_loop(0, 10, body, (x, p))
        acc = srcjax.random.uniform(k2) < jnp.exp(logp(x1) - logp(x) - 0.5 * p1 @ p1 + 0.5 * p @ p)
        x = jnp.where(acc, x1, x)
        return x, x

    def sample(key, x0):
        return lax.scan(step, x0, srcjax.random.split(key, 20))[1]

    return sample


@pytest.mark.parametrize("n", [1, 5, 7])
def test_hmc_leapfrog_with_matmul_and_a_tuple_carry_bit_for_bit(n):
    rng = np.random.default_rng(n)
    a = rng.standard_normal((n, n)).astype(np.float32)
    prec = (a @ a.T / n + np.eye(n, dtype=np.float32)).astype(np.float32)
    sample = _hmc(prec)
    key, x0 = srcjax.random.PRNGKey(n), np.zeros(n, np.float32)
    f = srcjax.jit(sample)
    got = f(key, x0)
    src = srcjax.source(f, key, x0)
    line = next(ln for ln in src.splitlines() if "over whole arrays (array mode)" in ln)
    key_ = line.split("Numba region ")[1].split()[0]
    assert loops._REGIONS[key_].fn is not None
    _bits(got, _numpy_only(sample, key, x0))


@pytest.mark.parametrize("name", sorted(gufuncs.CORES))
def test_every_gufunc_loop_read_here_is_numpys(name):
    # (checked on stacks small and BLAS-sized, without a loop dimension, with
    # core dimensions of size 1: NumPy passes stride 0 for those)
    for dt in ("float32", "float64"):
        assert gufuncs.loop_pointer(name, dt)


_SECOND = """
import sys
import numpy as np
import srcjax
import srcjax.numpy as jnp
from srcjax import lax

def f(v, w):
    def body(i, v):
        return jnp.where(v > 0.5, v * 0.75, v + w) - 0.125 * w
    return lax.fori_loop(0, 30, body, v)

srcjax.config.update("numba_loops", sys.argv[1] == "on")
rng = np.random.default_rng(3)
v = rng.standard_normal((30, 40)).astype(np.float32)
w = rng.standard_normal(40).astype(np.float32)
g = srcjax.jit(f)
out = np.asarray(g(v, w))
src = srcjax.source(g, v, w)
if sys.argv[1] == "on":
    from srcjax.backends.numba_cpu import loops
    assert "over whole arrays (array mode)" in src, src
    assert loops._REGIONS and all(r.fn is not None for r in loops._REGIONS.values())
sys.stdout.write(out.tobytes().hex())
"""


def test_a_second_process_reads_the_array_kernel_back_with_the_same_bits(tmp_path):
    prog = tmp_path / "second.py"
    prog.write_text(_SECOND)
    # (users' runs: without the internal checks, jit writes `t = v > 0.5` on its own,
    # which array mode once refused as an operation on weak values)
    env = {**os.environ, "SRCJAX_CACHE_DIR": str(tmp_path / "cache"), "JAX_ENABLE_CHECKS": "0"}
    env["PYTHONPATH"] = os.pathsep.join([os.getcwd(), env.get("PYTHONPATH", "")])

    def run(mode):
        r = subprocess.run(
            [sys.executable, str(prog), mode], env=env, capture_output=True, text=True
        )
        assert r.returncode == 0, r.stderr[-2000:]
        return r.stdout

    want = run("off")
    assert np.isfinite(np.frombuffer(bytes.fromhex(want), np.float32)).all()
    assert run("on") == want  # (compiled, written to Numba's disk cache)
    assert run("on") == want  # (read back)
    assert any(n.endswith(".nbi") for _, _, fs in os.walk(tmp_path / "cache") for n in fs)
