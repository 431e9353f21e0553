"""Generated modules on disk across processes (srcjax.codegen.diskcache).

A "second process" is simulated by importing the same file again as a fresh
module (new function objects: the in-memory caches miss, the disk entry is all
that is shared); one test runs a real second interpreter. Oracles: the same
computation in NumPy, derivatives by hand.
"""

import hashlib
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import srcjax
from srcjax.codegen import diskcache

_COUNT = [0]


@pytest.fixture
def cache_dir(tmp_path, monkeypatch):
    d = tmp_path / "cache"
    monkeypatch.setenv("SRCJAX_CACHE_DIR", str(d))
    monkeypatch.delenv("SRCJAX_DISK_CACHE", raising=False)
    for k in diskcache.STATS:
        monkeypatch.setitem(diskcache.STATS, k, 0)
    return d


def _module(path, text=None):
    """Import ``path`` (written from ``text`` first) as a new module object."""
    if text is not None:
        path.write_text(textwrap.dedent(text))
        # a fresh mtime for linecache's check (rewrites within one second)
        stamp = 10**18 + _COUNT[0] * 10**9
        os.utime(path, ns=(stamp, stamp))
    _COUNT[0] += 1
    name = path.stem
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


_SRC = """
import srcjax.numpy as jnp

SCALE = {scale}


def helper(x):
    return jnp.sin(x) * SCALE


def f(x, y):
    return jnp.sum(helper(x) * y + x * x)
"""


def _f_np(x, y, scale):
    return np.sum(np.sin(x) * scale * y + x * x)


def _stats():
    return dict(diskcache.STATS)


def test_second_load_hits_and_gives_the_same_gradient(cache_dir, tmp_path):
    x = np.array([0.1, 0.5, 1.5], np.float32)
    y = np.array([1.0, -2.0, 0.5], np.float32)
    want = np.cos(x) * 2.0 * y + 2 * x  # d/dx by hand, SCALE = 2
    mod = _module(tmp_path / "dc_mod1.py", _SRC.format(scale=2.0))
    g1 = srcjax.grad(mod.f)(x, y)
    assert _stats()["stores"] == 1 and _stats()["hits"] == 0
    mod = _module(tmp_path / "dc_mod1.py")  # the same file, new function objects
    g2 = srcjax.grad(mod.f)(x, y)
    assert _stats()["hits"] == 1
    np.testing.assert_allclose(g1, want, rtol=1e-6)
    np.testing.assert_array_equal(g1, g2)
    entries = list(cache_dir.glob("*.entry.json"))
    assert len(entries) == 1
    assert oct(cache_dir.stat().st_mode & 0o777) == "0o700"
    assert oct(entries[0].stat().st_mode & 0o777) == "0o600"


def test_an_edited_source_is_never_served_stale(cache_dir, tmp_path):
    x = np.array([0.3, 0.7], np.float32)
    y = np.array([2.0, 1.0], np.float32)
    mod = _module(tmp_path / "dc_mod2.py", _SRC.format(scale=2.0))
    srcjax.grad(mod.f)(x, y)
    # a module-level value the code reads, then the function's own text
    mod = _module(tmp_path / "dc_mod2.py", _SRC.format(scale=3.0))
    np.testing.assert_allclose(srcjax.grad(mod.f)(x, y), np.cos(x) * 3.0 * y + 2 * x, rtol=1e-6)
    edited = _SRC.format(scale=3.0).replace("x * x)", "x * x * x)")
    mod = _module(tmp_path / "dc_mod2.py", edited)
    np.testing.assert_allclose(srcjax.grad(mod.f)(x, y), np.cos(x) * 3.0 * y + 3 * x * x, rtol=1e-6)
    assert _stats()["hits"] == 0


def test_an_edited_helper_in_another_file_is_not_served_stale(cache_dir, tmp_path):
    x = np.array([0.3, 0.7], np.float32)
    helper = tmp_path / "dc_helper3.py"
    main = tmp_path / "dc_main3.py"
    main_src = """
    import srcjax.numpy as jnp
    from dc_helper3 import h


    def f(x):
        return jnp.sum(h(x))
    """
    sys.path.insert(0, str(tmp_path))
    try:
        _module(helper, "def h(x):\n    return x * x\n")
        mod = _module(main, main_src)
        np.testing.assert_allclose(srcjax.grad(mod.f)(x), 2 * x, rtol=1e-6)
        _module(helper, "def h(x):\n    return x * x * x\n")
        mod = _module(main)  # main.py unchanged: only h's file changed
        np.testing.assert_allclose(srcjax.grad(mod.f)(x), 3 * x * x, rtol=1e-6)
        assert _stats()["hits"] == 0 and _stats()["stale"] == 1
        mod = _module(main)  # and now the new entry serves
        np.testing.assert_allclose(srcjax.grad(mod.f)(x), 3 * x * x, rtol=1e-6)
        assert _stats()["hits"] == 1
    finally:
        sys.path.remove(str(tmp_path))


def test_changed_argnums_and_in_axes_are_other_entries(cache_dir, tmp_path):
    x = np.array([0.3, 0.7], np.float32)
    y = np.array([2.0, 1.0], np.float32)
    mod = _module(tmp_path / "dc_mod4.py", _SRC.format(scale=1.0))
    srcjax.grad(mod.f, argnums=0)(x, y)
    mod = _module(tmp_path / "dc_mod4.py")
    np.testing.assert_allclose(srcjax.grad(mod.f, argnums=1)(x, y), np.sin(x), rtol=1e-6)
    assert _stats()["hits"] == 0
    xs = np.stack([x, 2 * x])
    v0 = srcjax.vmap(mod.f, in_axes=(0, None))(xs, y)
    np.testing.assert_allclose(v0, [_f_np(r, y, 1.0) for r in xs], rtol=1e-6)
    mod = _module(tmp_path / "dc_mod4.py")
    v1 = srcjax.vmap(mod.f, in_axes=(None, 0))(x, xs)
    np.testing.assert_allclose(v1, [_f_np(x, r, 1.0) for r in xs], rtol=1e-6)
    assert _stats()["hits"] == 0
    v0b = srcjax.vmap(mod.f, in_axes=(0, None))(xs, y)
    np.testing.assert_array_equal(v0, v0b)
    # only the repeated in_axes: its batched code, and that code specialized with
    # JAX's weak types for the call's signature (vmap_api: jit's _WeakTyped)
    assert _stats()["hits"] == 2


_JIT_SRC = """
import srcjax.numpy as jnp


def g(x, n):
    for _ in range(n):
        x = jnp.sin(x) + x
    return x * 2.0
"""


def _g_np(x, n):
    for _ in range(n):
        x = np.sin(x) + x
    return x * 2.0


def test_jit_entries_follow_static_args_shapes_dtypes_and_x64(cache_dir, tmp_path):
    path = tmp_path / "dc_mod5.py"
    mod = _module(path, _JIT_SRC)
    x3 = np.array([0.1, 0.2, 0.3], np.float32)
    srcjax.jit(mod.g, static_argnums=1)(x3, 2)
    cases = [
        (x3, 3),  # another static value
        (np.ones(4, np.float32), 2),  # another shape
        (np.array([1, 2, 3], np.int32), 2),  # another dtype
        (x3, 2),  # the stored one
    ]
    for x, n in cases:
        mod = _module(path)
        out = srcjax.jit(mod.g, static_argnums=1)(x, n)
        np.testing.assert_allclose(out, _g_np(x.astype(np.float32), n), rtol=1e-6)
        assert out.dtype == np.float32
    assert _stats()["hits"] == 1
    srcjax.config.update("jax_enable_x64", True)
    try:
        mod = _module(path)
        out = srcjax.jit(mod.g, static_argnums=1)(x3.astype(np.float64), 2)
        assert out.dtype == np.float64
        np.testing.assert_allclose(out, _g_np(x3.astype(np.float64), 2), rtol=1e-12)
    finally:
        srcjax.config.update("jax_enable_x64", False)
    assert _stats()["hits"] == 1


_GLOBAL_SHAPE_SRC = """
import srcjax.numpy as jnp

WIDTH = 3


def widen(x):
    return jnp.zeros((x.shape[0], WIDTH), x.dtype) + x[:, None]
"""


def test_a_jit_entry_specialized_on_a_global_is_not_served_for_another_value(cache_dir, tmp_path):
    # jit folds the module global WIDTH into the code (a guarded constant): an
    # entry built for WIDTH = 3 must not serve a process where WIDTH is 4
    path = tmp_path / "dc_mod_width.py"
    x = np.array([1.0, 2.0], np.float32)
    mod = _module(path, _GLOBAL_SHAPE_SRC)
    out = srcjax.jit(mod.widen)(x)
    np.testing.assert_array_equal(out, np.repeat(x[:, None], 3, axis=1))
    assert "WIDTH" not in srcjax.source(srcjax.jit(mod.widen), x)
    mod = _module(path)  # a second process, the value it was built for: a hit
    jf = srcjax.jit(mod.widen)
    np.testing.assert_array_equal(jf(x), np.repeat(x[:, None], 3, axis=1))
    assert _stats()["hits"] == 1
    mod.WIDTH = 5  # the loaded code is guarded as the built one is
    np.testing.assert_array_equal(jf(x), np.repeat(x[:, None], 5, axis=1))
    mod = _module(path)  # a third process, same file, the global rebound first
    mod.WIDTH = 4
    out = srcjax.jit(mod.widen)(x)
    np.testing.assert_array_equal(out, np.repeat(x[:, None], 4, axis=1))
    assert _stats()["hits"] == 1 and _stats()["stale"] >= 1


def test_a_tampered_entry_is_rejected(cache_dir, tmp_path):
    x = np.array([0.3, 0.7], np.float32)
    y = np.array([2.0, 1.0], np.float32)
    want = np.cos(x) * y + 2 * x
    mod = _module(tmp_path / "dc_mod6.py", _SRC.format(scale=1.0))
    srcjax.grad(mod.f)(x, y)
    (entry,) = cache_dir.glob("*.entry.json")
    data = json.loads(entry.read_text())
    # generated code that would return something else, with the text's own hash
    # fixed up but not the payload's
    payload = data["payload"]
    payload["text"] = payload["text"].replace("return ", "return 0 * ", 1)
    payload["text_sha256"] = hashlib.sha256(payload["text"].encode()).hexdigest()
    entry.write_text(json.dumps(data))
    mod = _module(tmp_path / "dc_mod6.py")
    np.testing.assert_allclose(srcjax.grad(mod.f)(x, y), want, rtol=1e-6)
    assert _stats()["rejected"] == 1 and _stats()["hits"] == 0
    entry.write_text("{not json")
    mod = _module(tmp_path / "dc_mod6.py")
    np.testing.assert_allclose(srcjax.grad(mod.f)(x, y), want, rtol=1e-6)
    assert _stats()["rejected"] == 2
    mod = _module(tmp_path / "dc_mod6.py")  # rewritten by the last transformation
    np.testing.assert_allclose(srcjax.grad(mod.f)(x, y), want, rtol=1e-6)
    assert _stats()["hits"] == 1


def test_uncacheable_code_still_works_and_is_not_stored(cache_dir):
    # an inlined helper's closure over an array is bound by value: memory only
    w = np.array([1.0, 2.0], np.float32)

    def outer():
        def h(x):
            return x * w

        def f(x):
            return srcjax.numpy.sum(h(x))

        return f

    for _ in range(2):
        np.testing.assert_allclose(srcjax.grad(outer())(np.ones(2, np.float32)), w)
    assert _stats()["hits"] == 0


def test_disk_cache_off(cache_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("SRCJAX_DISK_CACHE", "0")
    mod = _module(tmp_path / "dc_mod7.py", _SRC.format(scale=1.0))
    x = np.array([0.3], np.float32)
    srcjax.grad(mod.f)(x, x)
    assert not list(cache_dir.glob("*.entry.json"))


def test_a_second_process_loads_the_entries(cache_dir, tmp_path):
    path = tmp_path / "dc_mod8.py"
    path.write_text(_SRC.format(scale=2.0))
    script = textwrap.dedent(
        f"""
        import importlib.util
        import numpy as np
        import srcjax
        from srcjax.codegen import diskcache
        spec = importlib.util.spec_from_file_location("dc_mod8", {str(path)!r})
        mod = importlib.util.module_from_spec(spec); spec.loader.exec_module(mod)
        x = np.array([0.25, 1.0], np.float32)
        v, g = srcjax.jit(srcjax.value_and_grad(mod.f))(x, x)
        print(diskcache.STATS["hits"], float(v), *g.tolist())
        """
    )
    env = dict(os.environ, SRCJAX_CACHE_DIR=str(cache_dir))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    outs = []
    for _ in range(2):
        done = subprocess.run(
            [sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr
        outs.append(done.stdout.split())
    assert outs[0][0] == "0" and outs[1][0] == "2"  # value_and_grad, and its jit
    assert outs[0][1:] == outs[1][1:]
    x = np.array([0.25, 1.0], np.float32)
    np.testing.assert_allclose(float(outs[1][1]), _f_np(x, x, 2.0), rtol=1e-6)
    want = np.cos(x) * 2.0 * x + 2 * x  # d/dx only (argnums=0)
    np.testing.assert_allclose([float(v) for v in outs[1][2:]], want, rtol=1e-6)


_REDEF_SRC = """
def helper(x):
    return 2.0 * x


def uses(x):
    return helper(x)


def redefine():
    global helper

    def helper(x):  # the same qualified name in the same file
        return 7.0 * x
"""


def test_a_helper_redefined_under_its_own_name_is_not_served_stale(cache_dir, tmp_path):
    # regression: fingerprints of module+qualname+file text took the redefined
    # helper for the old one (tests/test_regressions.py gave 2.0 instead of 7.0)
    path = tmp_path / "dc_mod9.py"
    mod = _module(path, _REDEF_SRC)
    assert srcjax.grad(mod.uses)(1.0) == 2.0
    mod = _module(path)
    mod.redefine()
    assert srcjax.grad(mod.uses)(1.0) == 7.0
    mod = _module(path)  # (one entry per key: the redefined helper's is stale now)
    assert srcjax.grad(mod.uses)(1.0) == 2.0
    assert _stats()["hits"] == 0 and _stats()["stale"] == 2  # both changes seen


def test_two_lambdas_on_one_line_are_two_entries(cache_dir):
    # regression: both had the key of file, qualname and line (grad(f) gave g's)
    f, g = (lambda x: srcjax.numpy.sum(x * x)), (lambda x: srcjax.numpy.sum(x * x * x))
    x = np.array([-0.5, 1.5], np.float32)
    np.testing.assert_allclose(srcjax.grad(g)(x), 3 * x * x, rtol=1e-6)
    np.testing.assert_allclose(srcjax.grad(f)(x), 2 * x, rtol=1e-6)
    h, k = (lambda x: x * 2.0), (lambda x: x * 3.0)
    assert srcjax.grad(h)(1.0) == 2.0 and srcjax.grad(k)(1.0) == 3.0


_KEY_REUSE_SRC = """
from srcjax import random


def g(key):
    a = random.normal(key)
    b = random.normal(key)
    return a + b
"""


def test_a_cache_hit_repeats_the_key_reuse_warning(cache_dir, tmp_path, monkeypatch):
    """A disk-cache hit skips normalization, where the key-reuse check runs: the
    warning was lost from the second process on (found by the frontend split).
    The entry stores the warnings of its build; a hit issues them again."""
    from srcjax.frontend import keyreuse

    key = srcjax.random.PRNGKey(0)
    mod = _module(tmp_path / "dc_keyreuse.py", _KEY_REUSE_SRC)
    monkeypatch.setattr(keyreuse, "_REPORTED", set())
    with pytest.warns(keyreuse.KeyReuseWarning, match="already consumed") as first:
        want = srcjax.jit(mod.g)(key)
    assert diskcache.STATS["stores"] == 1
    mod = _module(tmp_path / "dc_keyreuse.py")  # a new process, as far as the cache knows
    monkeypatch.setattr(keyreuse, "_REPORTED", set())
    with pytest.warns(keyreuse.KeyReuseWarning, match="already consumed") as again:
        got = srcjax.jit(mod.g)(key)
    assert diskcache.STATS["hits"] == 1
    assert (again[0].filename, again[0].lineno) == (first[0].filename, first[0].lineno)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_srcjax_file_stats_follow_os_walk_and_see_an_edit(tmp_path):
    """The fingerprint of srcjax's files (part of every key) lists each .py file
    with its size and mtime in os.walk's order (the oracle: os.walk + relpath, as
    it was computed before), skips __pycache__, and changes when a file does."""
    from srcjax.codegen import cache

    for rel in ("b.py", "a.py", "z.txt", "sub/c.py", "sub/deep/d.py", "a_dir/e.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x = 1\n")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__" / "f.py").write_text("")
    expected = []
    for dirpath, dirnames, filenames in os.walk(tmp_path):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
        for fname in sorted(filenames):
            if fname.endswith(".py"):
                st = os.stat(os.path.join(dirpath, fname))
                rel = os.path.relpath(os.path.join(dirpath, fname), tmp_path)
                expected.append(f"{rel}:{st.st_size}:{st.st_mtime_ns};")
    got = []
    cache.py_file_stats(str(tmp_path), "", got)
    assert got == expected and len(got) == 5
    (tmp_path / "sub" / "c.py").write_text("x = 12\n")
    again = []
    cache.py_file_stats(str(tmp_path), "", again)
    assert again != got and [a for a in again if "sub/c.py" in a][0].startswith("sub/c.py:7:")


def test_the_collector_is_back_on_after_a_transformation(cache_dir, monkeypatch):
    """Transformations run with the cyclic collector paused (a latency fix); it is
    on again afterwards, after a failed transformation too, and a user's own
    gc.disable() is left as it was."""
    import gc

    def f(x):
        return srcjax.numpy.sin(x) * x

    def bad(x):
        x.fill(0.0)  # refused while transforming
        return x

    def g(x):
        return srcjax.numpy.cos(x) * x

    assert gc.isenabled()
    assert float(srcjax.grad(f)(0.5)) == pytest.approx(np.cos(0.5) * 0.5 + np.sin(0.5))
    assert gc.isenabled()
    with pytest.raises(AttributeError, match="in place"):
        srcjax.grad(bad)(0.5)
    assert gc.isenabled()
    # and off meanwhile (seen from the normalizer, which every transformation runs)
    from srcjax import driver

    seen = []
    normalize = driver.normalize
    monkeypatch.setattr(
        driver, "normalize", lambda *a: seen.append(gc.isenabled()) or normalize(*a)
    )
    assert float(srcjax.grad(g)(0.5)) == pytest.approx(np.cos(0.5) - 0.5 * np.sin(0.5))
    assert seen == [False] and gc.isenabled()
    gc.disable()
    try:
        srcjax.jit(f)(0.25)
        assert not gc.isenabled()
    finally:
        gc.enable()


_TREE_SRC = """
import collections

from srcjax import tree_util as tu

State = collections.namedtuple("State", ["w", "b"])


def step(p, s):
    q = tu.tree_map(lambda a: a * s + 1.0, p)
    return q, (tu.tree_map(lambda a: a - 1.0, p), s)
"""


def test_a_jit_entry_returning_known_trees_keeps_their_template(cache_dir, tmp_path):
    # jit returns trees of a known structure as their leaves and its boundary
    # builds them (optimize/flat_results.py): the template travels in the entry
    path = tmp_path / "dc_tree.py"
    w = np.array([1.0, 2.0], np.float32)
    b = np.array([3.0], np.float32)
    for run in range(2):
        mod = _module(path, _TREE_SRC if run == 0 else None)
        jitted = srcjax.jit(mod.step)
        q, (r, s) = jitted(mod.State(w, b), np.float32(2.0))
        assert type(q) is mod.State and type(r) is mod.State
        assert type(q.w) is srcjax.Array and type(s) is srcjax.Array
        np.testing.assert_array_equal(np.asarray(q.w), w * 2 + 1)
        np.testing.assert_array_equal(np.asarray(q.b), b * 2 + 1)
        np.testing.assert_array_equal(np.asarray(r.w), w - 1)
        assert float(s) == 2.0
        text = srcjax.source(jitted, mod.State(w, b), np.float32(2.0))
        assert "leaves: jit's boundary builds" in text
    assert _stats()["stores"] == 1 and _stats()["hits"] == 1, diskcache.LAST_REASON


_GLOBAL_ARRAY_SRC = """
import numpy as np
import srcjax.numpy as jnp

MAT = np.arange(6, dtype=np.float32).reshape(2, 3)


def times(x):
    return jnp.tanh(x @ MAT)
"""


def test_a_jit_entry_typed_by_a_global_array_is_guarded_on_its_shape(cache_dir, tmp_path):
    # jit knows the shape and dtype of the global array MAT (read live, guarded:
    # jit_api/global_facts.py); the entry is stored with that guard and serves a
    # process whose MAT has them, never one whose MAT has another shape
    path = tmp_path / "dc_mod_mat.py"
    x = np.array([1.0, -2.0], np.float32)
    mod = _module(path, _GLOBAL_ARRAY_SRC)
    np.testing.assert_allclose(srcjax.jit(mod.times)(x), np.tanh(x @ mod.MAT), rtol=1e-6)
    assert _stats()["stores"] == 1
    mod = _module(path)  # a second process: a hit, and its values read live
    mod.MAT = mod.MAT * 0.5
    np.testing.assert_allclose(srcjax.jit(mod.times)(x), np.tanh(x @ mod.MAT), rtol=1e-6)
    assert _stats()["hits"] == 1
    mod = _module(path)  # a third, whose MAT has another shape: not served
    mod.MAT = np.ones((2, 4), np.float32)
    out = srcjax.jit(mod.times)(x)
    assert out.shape == (4,)
    np.testing.assert_allclose(out, np.tanh(x @ mod.MAT), rtol=1e-6)
    assert _stats()["hits"] == 1


def _loads(monkeypatch):
    """Record emit.load's calls: (the code it was handed, the function it made)."""
    from srcjax.codegen import emit

    calls = []
    real = emit.load

    def load(*args, **kwargs):
        fn = real(*args, **kwargs)
        code = args[7] if len(args) > 7 else kwargs.get("code")
        calls.append((code, fn))
        return fn

    monkeypatch.setattr(emit, "load", load)
    return calls


def _same_code(a, b):
    return (a.co_code, a.co_consts, a.co_names, a.co_filename) == (
        b.co_code,
        b.co_consts,
        b.co_names,
        b.co_filename,
    )


def test_a_hit_runs_the_stored_code_of_its_text(cache_dir, tmp_path, monkeypatch):
    """The entry keeps the module code compiled from its text (a hit does not
    compile again). Oracle: compile() of the text in the file the hit wrote."""
    x = np.array([0.3, 0.7], np.float32)
    y = np.array([2.0, 1.0], np.float32)
    mod = _module(tmp_path / "dc_code1.py", _SRC.format(scale=2.0))
    srcjax.grad(mod.f)(x, y)
    calls = _loads(monkeypatch)
    mod = _module(tmp_path / "dc_code1.py")
    got = srcjax.grad(mod.f)(x, y)
    np.testing.assert_allclose(got, np.cos(x) * 2.0 * y + 2 * x, rtol=1e-6)
    assert _stats()["hits"] == 1 and len(calls) == 1
    code, fn = calls[0]
    assert code is not None  # (the stored code was handed over)
    path = fn.__code__.co_filename
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    want = [c for c in compile(text, path, "exec").co_consts if hasattr(c, "co_code")]
    assert len(want) == 1 and _same_code(fn.__code__, want[0])


def test_stored_code_changed_without_the_hash_is_rejected(cache_dir, tmp_path):
    """Code that is not what the text compiles to (the text's hash fixed up, not
    the payload's) is never run: the entry is rejected and built again."""
    import base64
    import marshal

    x = np.array([0.3, 0.7], np.float32)
    y = np.array([2.0, 1.0], np.float32)
    want = np.cos(x) * y + 2 * x
    mod = _module(tmp_path / "dc_code2.py", _SRC.format(scale=1.0))
    srcjax.grad(mod.f)(x, y)
    (entry,) = cache_dir.glob("*.entry.json")
    data = json.loads(entry.read_text())
    payload = data["payload"]
    path = os.path.join(str(cache_dir), "elsewhere.py")
    other = compile(payload["text"].replace("return ", "return 0 * ", 1), path, "exec")
    payload["code"] = base64.b64encode(marshal.dumps(other)).decode()
    entry.write_text(json.dumps(data))
    mod = _module(tmp_path / "dc_code2.py")
    np.testing.assert_allclose(srcjax.grad(mod.f)(x, y), want, rtol=1e-6)
    assert _stats()["rejected"] == 1 and _stats()["hits"] == 0


def test_entries_in_a_moved_cache_directory_compile_for_the_new_files(
    cache_dir, tmp_path, monkeypatch
):
    """Stored code names the file it was compiled for; entries copied to another
    cache directory serve, compiled again for the files written there (tracebacks
    and inspect read those), not run as code of a file in the old directory."""
    import shutil

    x = np.array([0.3, 0.7], np.float32)
    y = np.array([2.0, 1.0], np.float32)
    mod = _module(tmp_path / "dc_code3.py", _SRC.format(scale=2.0))
    srcjax.grad(mod.f)(x, y)
    moved = tmp_path / "moved"
    moved.mkdir(mode=0o700)
    for e in cache_dir.glob("*.entry.json"):
        shutil.copy(e, moved / e.name)
    monkeypatch.setenv("SRCJAX_CACHE_DIR", str(moved))
    calls = _loads(monkeypatch)
    mod = _module(tmp_path / "dc_code3.py")
    got = srcjax.grad(mod.f)(x, y)
    np.testing.assert_allclose(got, np.cos(x) * 2.0 * y + 2 * x, rtol=1e-6)
    assert _stats()["hits"] == 1
    (code, fn) = calls[0]
    path = fn.__code__.co_filename
    assert os.path.dirname(path) == str(moved) and code.co_filename != path
    with open(path, encoding="utf-8") as fh:
        want = [c for c in compile(fh.read(), path, "exec").co_consts if hasattr(c, "co_code")]
    assert _same_code(fn.__code__, want[0])


_LEAF_SRC = """
import srcjax.numpy as jnp
from srcjax import tree_util as tu


def is_pair(n):
    return isinstance(n, tuple)


def f(tr):
    out = tu.tree_map(lambda p: jnp.sin(p[0]) * p[1], tr, is_leaf=is_pair)
    return sum(jnp.sum(v) for v in tu.tree_leaves(out))


def g(x):
    return jnp.sum(jnp.sin(x) * x)
"""


def test_a_hit_imports_the_registering_modules_its_code_needs(cache_dir, tmp_path):
    """A hit imports the modules that register primitives (its build had them)
    when its code first names one not found, not before: grad(g)'s entry lists
    srcjax.primitives.tree_is_leaf (loaded by the build of grad(f) in the same
    process) and a process calling only grad(g) does not import it; grad(f)'s
    code calls ad.leaves_upto, which a process that has not imported it yet
    finds. Oracles: d/dx by hand, in three real processes."""
    path = tmp_path / "dc_leaf.py"
    path.write_text(_LEAF_SRC)
    script = textwrap.dedent(
        f"""
        import importlib.util, sys
        import numpy as np
        import srcjax
        from srcjax.codegen import diskcache
        spec = importlib.util.spec_from_file_location("dc_leaf", {str(path)!r})
        mod = sys.modules["dc_leaf"] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        leaf = "srcjax.primitives.tree_is_leaf"
        print(leaf in sys.modules)
        x = np.array([0.5, -1.0], np.float32)
        if "f" in sys.argv[1]:
            out = srcjax.grad(mod.f)({{"a": (x, 2 * x), "b": [(x, x)]}})
            print(*np.concatenate([np.ravel(v) for v in srcjax.tree_util.tree_leaves(out)]))
        if "g" in sys.argv[1]:
            print(*srcjax.grad(mod.g)(x).tolist())
        print(leaf in sys.modules, diskcache.STATS["hits"])
        """
    )
    env = dict(os.environ, SRCJAX_CACHE_DIR=str(cache_dir))
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    outs = {}
    for which in ("fg", "g", "f"):
        done = subprocess.run(
            [sys.executable, "-c", script, which],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        outs[which] = done.stdout.split("\n")
    x = np.array([0.5, -1.0], np.float32)
    dg = np.cos(x) * x + np.sin(x)
    c, s = np.cos(x), np.sin(x)
    df = np.concatenate([c * 2 * x, s, c * x, s])  # d/d(p0), d/d(p1) of sin(p0) * p1
    assert outs["fg"][0] == "False" and outs["fg"][-2] == "True 0"
    np.testing.assert_allclose([float(v) for v in outs["fg"][2].split()], dg, rtol=1e-6)
    assert outs["g"][0] == "False" and outs["g"][-2] == "False 1"  # listed, not needed
    np.testing.assert_allclose([float(v) for v in outs["g"][1].split()], dg, rtol=1e-6)
    assert outs["f"][0] == "False" and outs["f"][-2] == "True 1"  # needed: imported
    np.testing.assert_allclose([float(v) for v in outs["f"][1].split()], df, rtol=1e-6)


def test_the_file_text_hash_follows_each_edit(tmp_path):
    """The hash of a file's text in keys and fingerprints is kept while linecache
    holds the same lines; an edit of the same size (a constant changed) gives
    the new text's hash. Oracle: hashlib over the file's text."""
    from srcjax.codegen.descriptions import _file_text_sha

    path = tmp_path / "dc_sha.py"
    for i, text in enumerate(("x = 1\n", "x = 2\n", "x = 2\ny = 3\n")):
        path.write_text(text)
        stamp = 10**18 + (i + 1) * 10**9  # (a new mtime for linecache's check)
        os.utime(path, ns=(stamp, stamp))
        want = hashlib.sha256(text.encode()).hexdigest()
        assert _file_text_sha(str(path)) == want
        assert _file_text_sha(str(path)) == want  # (the kept hash)
