"""Elementwise chains of jitted code compiled with Numba (backends/numba_cpu/maps.py).

Oracles: the same jitted function with Numba off (the NumPy path), compared to
the bit, dtype and shape included, before and after its regions tier up; the
statement order a Python reading of the original function gives.
"""

import re

import numpy as np
import pytest

pytest.importorskip("numba")

import gast  # noqa: E402

import srcjax  # noqa: E402
import srcjax.numpy as jnp  # noqa: E402
from srcjax.backends.numba_cpu import loops, maps, tiers  # noqa: E402
from srcjax.tree_util import tree_map  # noqa: E402


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
    la, lb = srcjax.tree_util.tree_leaves(a), srcjax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        assert np.array_equal(x, y, equal_nan=True), (x, y)
        if x.dtype.kind == "f":  # the bits: NaN's sign and payload, -0.0
            u = np.dtype(f"u{x.dtype.itemsize}")
            assert np.array_equal(x.view(u), y.view(u)), (x, y)


def _adam(params, m, v, g, t):
    t = t + 1
    m = tree_map(lambda m, g: 0.9 * m + (1 - 0.9) * g, m, g)
    v = tree_map(lambda v, g: 0.999 * v + (1 - 0.999) * g * g, v, g)
    ms = 1 / (1 - 0.9**t)
    vs = 1 / (1 - 0.999**t)
    params = tree_map(lambda p, m, v: p - 1e-3 * (m * ms) / (jnp.sqrt(v * vs) + 1e-8), params, m, v)
    return params, m, v, t


def _leaves(rng, dtype):
    shapes = {"w1": (64, 128), "b1": (128,), "w2": (128, 10), "b2": (10,)}
    return {k: rng.standard_normal(s).astype(dtype) for k, s in shapes.items()}


def _hot(monkeypatch, fn, *args):
    """``fn(*args)`` jitted, called until its regions are compiled (every call's
    result compared with NumPy's)."""
    monkeypatch.setattr(tiers, "HOT_FRACTION", 0.0)
    jf = srcjax.jit(fn)
    want = _numpy_only(fn, *args)
    for _ in range(3):
        _same(jf(*args), want)
    return jf


def _kernel_runs(monkeypatch, text):
    """A list that gets, per call of a kernel of ``text``, whether it gave its
    results (False: a NaN among them, NumPy's statements ran)."""
    runs = []
    for key in re.findall(r"Numba region (nbloop_[0-9a-f]+) .*elementwise statements", text):
        fn = loops._REGIONS[key].fn

        def counted(*args, fn=fn):
            r = fn(*args)
            runs.append(r is not None)
            return r

        monkeypatch.setattr(loops._REGIONS[key], "fn", counted)
    return runs


def _compiled(text):
    """Whether ``text`` calls kernels of this pass, and every one ran compiled."""
    keys = set(re.findall(r"Numba region (nbloop_[0-9a-f]+) .*elementwise statements", text))
    return bool(keys) and all(loops._REGIONS[k].fn is not None for k in keys)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_adam_step_over_a_tree_is_one_kernel_call_and_numpys_bits(dtype, monkeypatch, request):
    if dtype == "float64":
        request.getfixturevalue("x64")
    rng = np.random.default_rng(0)
    p, m, g = (_leaves(rng, dtype) for _ in range(3))
    v = tree_map(lambda a: np.abs(a) * 0.01, _leaves(rng, dtype))
    v["b2"][:3] = 0.0  # sqrt(0): a division by eps only
    args = (p, m, v, g, np.asarray(3.0, dtype))
    jf = _hot(monkeypatch, _adam, *args)
    text = srcjax.source(jf, *args)
    assert _compiled(text)
    # every leaf's 14 statements, the leaves of two ranks, in one kernel's call
    assert text.count("= _nbr.tiered(") == 1 and "these 56 elementwise statements" in text
    # the state fed back, as a training loop does (outputs are the kernels' arrays)
    state = args
    for _ in range(3):
        new = jf(*state)
        _same(new, _numpy_only(_adam, *state))
        state = (*new[:3], g, new[3])


def test_weak_numbers_zero_d_arrays_and_special_values(monkeypatch):
    def f(x, y, s):
        a = x * 2 - y  # a Python number converted to float32, as NumPy does
        b = a / y + s  # a 0-d float32 array
        return -jnp.sqrt(b * a) + a, b

    x = np.array([[1.0, -2.0, 0.0], [3.5, np.inf, np.nan]], np.float32)
    y = np.array([[0.0, 1.0, -0.0], [2.0, 1.0, 1.0]], np.float32)
    rng = np.random.default_rng(1)  # (enough elements that a kernel pays)
    x = np.tile(x, (20, 10)) * rng.uniform(0.5, 2, (40, 30)).astype(np.float32)
    y = np.tile(y, (20, 10)) * rng.uniform(0.5, 2, (40, 30)).astype(np.float32)
    args = (x, y, np.asarray(0.25, np.float32))
    jf = _hot(monkeypatch, f, *args)
    assert _compiled(srcjax.source(jf, *args))
    out = jf(*args)
    assert np.asarray(out[0]).dtype == np.float32
    _same(out, _numpy_only(f, x, y, np.float32(0.25)))  # (a NumPy scalar for the 0-d array)


def test_transposed_views_and_broadcast_operands(monkeypatch):
    def f(x, row):
        a = x.T  # a view that is not C-contiguous
        c = (a * a + a * 3.0 - 1.0) / (a + 2.0) * a
        return c * row + c  # row broadcasts: not this pass's (keeps NumPy)

    x = np.arange(1200, dtype=np.float32).reshape(30, 40) / 7
    row = np.linspace(-1, 1, 30, dtype=np.float32)
    jf = _hot(monkeypatch, f, x, row)
    _same(jf(x, row), _numpy_only(f, x, row))
    assert _compiled(srcjax.source(jf, x, row))
    xt = np.asfortranarray(np.arange(1200, dtype=np.float32).reshape(40, 30) / 3).T
    _same(jf(xt, row), _numpy_only(f, xt, row))


def test_statements_between_move_after_a_group_keeping_their_order():
    code = (
        "def f(x, c, s):\n"
        "    a = x * c\n"
        "    out = []\n"
        "    out.append(a)\n"  # reads a: after the group
        "    log = []\n"
        "    log.append(s)\n"  # an effect after one that moved: after it too
        "    b = a + x\n"
        "    k = s * 2\n"  # independent: stays before
        "    d = b * k\n"
        "    return out, log, d\n"
    )
    fdef = gast.parse(code).body[0]
    body = fdef.body
    members = [body[0], body[5], body[7]]
    order, taken = maps._schedule(body, members)
    assert taken == 3
    text = [gast.unparse(s).strip() for s in order]
    assert text == [
        "out = []",
        "log = []",
        "k = s * 2",
        "a = x * c",
        "b = a + x",
        "d = b * k",
        "out.append(a)",
        "log.append(s)",
        "return (out, log, d)",
    ]


def test_a_member_reading_a_moved_statement_is_no_group():
    code = (
        "def f(x, c):\n"
        "    a = x * c\n"
        "    z = g(a)\n"  # a call that reads a member: moves after it
        "    b = a + z\n"  # reads it: the group cannot be one pass
        "    d = b * x\n"
        "    return d\n"
    )
    body = gast.parse(code).body[0].body
    assert maps._schedule(body, [body[0], body[2], body[3]]) == (None, 1)


def test_few_statements_on_small_arrays_keep_numpy(monkeypatch):
    # (three NumPy calls on 12 elements cost less than one kernel call)
    def f(x):
        return x * x + x * 3.0 - 1.0

    x = np.arange(12, dtype=np.float32)
    jf = _hot(monkeypatch, f, x)
    assert "Numba region" not in srcjax.source(jf, x)

    def g(x):  # (nor do comparisons, where, maximum on a few hundred elements)
        return jnp.where(x > 0.5, x, 0.1 * x) + jnp.maximum(x, 0.0)

    x = np.linspace(-1, 1, 300, dtype=np.float32)
    jg = _hot(monkeypatch, g, x)
    assert "Numba region" not in srcjax.source(jg, x)
    x = np.linspace(-1, 1, 30000, dtype=np.float32)  # (and on 30000 they pay)
    assert _compiled(srcjax.source(_hot(monkeypatch, g, x), x))


def test_an_int_specialization_keeps_numpy(monkeypatch):
    def f(x):
        return x * x + x * 2.0 - 1.0

    x = np.arange(6, dtype=np.float32)
    monkeypatch.setattr(tiers, "HOT_FRACTION", 0.0)
    jf = srcjax.jit(f)
    jf(x)
    # an int array of the same shape: another specialization, NumPy's dtype rules
    xi = np.arange(6, dtype=np.int32)
    _same(jf(xi), _numpy_only(f, xi))
    _same(jf(x), _numpy_only(f, x))


def test_groups_that_cannot_be_made_consecutive_together_keep_two_kernels(monkeypatch):
    def f(x, y):
        a = (x * 2.0 + x * x - 1.0) / (x + 3.0) * x
        s = jnp.sum(a)  # reads the first group; the second reads it
        b = (y * s + y * y - s) / (y + 2.0) * y
        return a, b

    rng = np.random.default_rng(2)
    x = rng.standard_normal((40, 30)).astype(np.float32)
    y = rng.standard_normal(5000).astype(np.float32)
    jf = _hot(monkeypatch, f, x, y)
    text = srcjax.source(jf, x, y)
    assert _compiled(text) and text.count("= _nbr.tiered(") == 2


def _specials(dtype, shape, seed, nan=True):
    """Random normals of ``shape`` with every pair of special values (with
    ``nan``: NaN of both signs and a payload, +-inf; +-0.0, +-1, subnormals,
    +-1e18) among them."""
    dt = np.dtype(dtype)
    u = np.dtype(f"u{dt.itemsize}")
    payload = np.array(0x7FC12345 if dt.itemsize == 4 else 0x7FF8000012345678, u).view(dt)
    tiny = np.finfo(dt).smallest_subnormal
    sp = [0.0, -0.0, 1.0, -1.0, tiny, -tiny, 1e18, -1e18, 2 * tiny]
    sp = np.array(sp + ([np.nan, -np.nan, payload, np.inf, -np.inf] if nan else []), dt)
    rng = np.random.default_rng(seed)
    x, y = (rng.standard_normal(shape).astype(dt) for _ in range(2))
    n = sp.size * sp.size
    x.reshape(-1)[:n] = np.repeat(sp, sp.size)
    y.reshape(-1)[:n] = np.tile(sp, sp.size)
    y.reshape(-1)[n : n + 50] = x.reshape(-1)[n : n + 50]  # (ties)
    return x, y


def _repro(x, y):  # (fresh user round 7, repro 07)
    return jnp.where(x > y, x * y, x - y) + jnp.maximum(x, 0.3) * jnp.minimum(y, -0.2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_where_maximum_minimum_and_a_comparison_are_one_kernel_with_numpys_bits(
    dtype, monkeypatch, request
):
    if dtype == "float64":
        request.getfixturevalue("x64")
    x, y = _specials(dtype, (60, 70), 3)
    jf = _hot(monkeypatch, _repro, x, y)
    text = srcjax.source(jf, x, y)
    assert _compiled(text) and "these 8 elementwise statements" in text
    # the NumPy statements the kernel replaces, the literals in the array's dtype
    dt = np.dtype(dtype).type
    want = np.where(x > y, x * y, x - y) + np.maximum(x, dt(0.3)) * np.minimum(y, dt(-0.2))
    runs = _kernel_runs(monkeypatch, text)
    _same(jf(x, y), want)  # (NaN results: NumPy's statements)
    _same(jf(y, x), _numpy_only(_repro, y, x))
    x, y = _specials(dtype, (60, 70), 5, nan=False)
    for a, b in ((x, y), (y, x), (-x, y)):
        _same(jf(a, b), _numpy_only(_repro, a, b))
    assert runs == [False, False, True, True, True]


def _every_kind(x, y, s, m):
    a = jnp.maximum(x, y)
    b = jnp.minimum(y, x)
    c = jnp.maximum(0.1, x) - jnp.minimum(s, y)  # a scalar first; a 0-d array
    d = jnp.where(m, a, -0.0) * jnp.where(x <= b, 2, c)  # a mask argument; Python numbers
    e = jnp.abs(d - a) + jnp.sqrt(jnp.absolute(c)) / jnp.where(y != 0.1, y, s)
    return a, b, c, d, e, x > y, x >= s, x < 1e-40, x <= b, x == y, a != b


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_kind_with_special_values_scalars_and_bool_outputs(dtype, monkeypatch, request):
    if dtype == "float64":
        request.getfixturevalue("x64")
    x, y = _specials(dtype, (50, 40), 4)
    args = (x, y, np.asarray(-0.0, dtype), x > 0.5)
    jf = _hot(monkeypatch, _every_kind, *args)
    text = srcjax.source(jf, *args)
    assert _compiled(text) and text.count("= _nbr.tiered(") == 1
    assert "jnp.where" not in text.split("_nbr.tiered(")[1].split("if _nb_")[0]
    runs = _kernel_runs(monkeypatch, text)
    out = jf(*args)
    assert [np.asarray(o).dtype for o in out[-6:]] == [np.dtype(bool)] * 6
    assert np.asarray(out[0]).dtype == np.dtype(dtype)
    _same(out, _numpy_only(_every_kind, *args))
    # NumPy's maximum and minimum: the first NaN, the second of a 0.0/-0.0 tie
    xt, yt = np.full((50, 40), 0.0, dtype), np.full((50, 40), -0.0, dtype)
    xt[0, 1], yt[0, 1], xt[0, 2], yt[0, 2] = -0.0, 0.0, np.nan, -np.nan
    a, b = (np.asarray(o)[0, :3] for o in jf(xt, yt, *args[2:])[:2])
    assert np.signbit(a).tolist() == [True, False, False] and np.isnan(a[2])
    assert np.signbit(b).tolist() == [False, True, True] and np.isnan(b[2])
    # no NaN: the kernel's results (y without zeros: c / y stays a number)
    x, y = _specials(dtype, (50, 40), 6, nan=False)
    y[y == 0] = 0.5
    for a, b in ((x, y), (-y, -x)):
        args = (a, b, np.asarray(-0.0, dtype), a > 0.5)
        _same(jf(*args), _numpy_only(_every_kind, *args))
    assert runs == [False, False, True, True]


def test_two_nans_meeting_keep_numpys_first_one(monkeypatch):
    # LLVM put the argument x second in x + t (t = y * 2 * 3) and returned t's NaN
    # where NumPy's x + t returns x's (its sign here): a NaN result runs NumPy's
    def f(x, y):
        return x + (y * 2.0) * 3.0 - 1.0, -(x * 2.0) * 3.0 + y

    x = np.full((100, 100), -np.nan, np.float32)
    y = np.full((100, 100), np.nan, np.float32)
    jf = _hot(monkeypatch, f, x, y)
    assert _compiled(srcjax.source(jf, x, y))
    runs = _kernel_runs(monkeypatch, srcjax.source(jf, x, y))
    assert np.signbit(np.asarray(jf(x, y)[0])).all() and runs == [False]


_FRESH_PROCESS = r"""
import sys
import numpy as np
import srcjax, srcjax.numpy as jnp
from srcjax.backends.numba_cpu import tiers

srcjax.config.update("numba_loops", "auto")

def f(x, y):
    a = x * y + 1.0
    b = a * a - y
    return jnp.tanh(b) * x + a

rng = np.random.default_rng(0)
x, y = (rng.standard_normal((256, 128)).astype(np.float32) for _ in range(2))
jf = srcjax.jit(f)
first = jf(x, y)
translator = [m for m in ("loops", "planner", "kernel", "exprs", "tapes")
              if "srcjax.backends.numba_cpu." + m in sys.modules]
print("imported after the first call:", translator)
tiers.HOT_FRACTION = 0.0  # (hot now: the tier compiles on the next call)
outs = [jf(x, y) for _ in range(3)]
print("loops imported when hot:", "srcjax.backends.numba_cpu.loops" in sys.modules)
print(srcjax.source(jf, x, y).count("tier: Numba, compiled"), "compiled")
srcjax.config.update("numba_loops", False)
want = srcjax.jit(lambda x, y: f(x, y))(x, y)
u = lambda a: np.asarray(a).view(np.uint32)
print("same bits:", all(np.array_equal(u(o), u(want)) for o in [first] + outs))
"""


def test_code_with_maps_only_imports_no_loop_translator_and_still_tiers_up(tmp_path):
    # A function with Numba maps and no loop neither imported .loops nor its
    # translator (planner, kernel, exprs, tapes) on its first call (they were
    # ~50 ms of W4's first jit call without .pyc files); in a fresh process, its
    # tier compiles through _nbr when hot, importing .loops then, with NumPy's bits.
    import os
    import subprocess
    import sys

    script = tmp_path / "maps_only.py"
    script.write_text(_FRESH_PROCESS)
    env = dict(os.environ, SRCJAX_CACHE_DIR=str(tmp_path), SRCJAX_DISK_CACHE="0")
    done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    out = done.stdout
    assert "imported after the first call: []" in out, out
    assert "loops imported when hot: True" in out, out
    assert "1 compiled" in out, out
    assert "same bits: True" in out, out
