"""Generated code is a real file: pdb stops in it, tracebacks show its lines."""

import io
import linecache
import os
import pdb
import stat
import traceback

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax.codegen import cache


def loss(w, x):
    h = jnp.tanh(x * w)
    err = h - 1.0
    return jnp.sum(err * err)


def test_pdb_breakpoint_inside_generated_gradient():
    g = srcjax.grad(loss)
    text = srcjax.source(g)
    fn = g._generated(("leaf", "leaf"))
    path = fn.__srcjax_path__
    assert os.path.exists(path)
    lines = text.splitlines()
    # stop on the first backward statement: every forward local is defined there
    target = next(i for i, ln in enumerate(lines, 1) if "_bar" in ln and "=" in ln)
    commands = io.StringIO("continue\np h.shape\np float(jnp.sum(h))\ncontinue\n")
    out = io.StringIO()
    debugger = pdb.Pdb(stdin=commands, stdout=out)
    debugger.use_rawinput = False
    assert debugger.set_break(path, target) is None
    w = np.float32(0.5)
    x = np.arange(3, dtype=np.float32)
    result = debugger.runcall(g, w, x)
    printed = out.getvalue()
    assert "(3,)" in printed
    expected_sum = float(np.sum(np.tanh(x * w)))
    assert f"{expected_sum:.4f}"[:5] in printed
    h = np.tanh(x * w)
    assert np.allclose(result, np.sum(2 * (h - 1) * (1 - h * h) * x), rtol=1e-5)


def test_traceback_points_into_generated_file_and_linecache():
    def bad(x):
        y = jnp.log(x)
        return jnp.sum(y * np.ones(3))  # shapes that do not broadcast, at run time

    g = srcjax.grad(bad)
    try:
        g(np.ones(2, dtype=np.float32))
    except ValueError:  # (was an index out of bounds: that clamps now, as in JAX)
        tb = traceback.format_exc()
    else:  # pragma: no cover
        raise AssertionError("expected ValueError")
    path = g._generated(("leaf",)).__srcjax_path__
    assert path in tb
    assert linecache.getline(path, 1).startswith("# srcjax: grad of bad")


def test_cache_dir_mode_and_hash_check(tmp_path, monkeypatch):
    monkeypatch.setenv("SRCJAX_CACHE_DIR", str(tmp_path / "c"))
    p = cache.write_source("x = 1\n", "demo")
    assert stat.S_IMODE(os.stat(tmp_path / "c").st_mode) == 0o700
    # a tampered file is rewritten, not trusted
    with open(p, "w") as fh:
        fh.write("import os; os.system('echo pwned')\n")
    p2 = cache.write_source("x = 1\n", "demo")
    assert p2 == p
    with open(p) as fh:
        assert fh.read() == "x = 1\n"


def composed_target(x):
    y = jnp.sin(x) * x
    return jnp.sum(y * y)


def test_composed_transforms_name_the_users_lines():
    # jit(grad(f)) and hessian(f) used to label lines with the intermediate
    # generated file (f_grad_<hash>.py:N) instead of this file
    x = np.array([0.5, 1.5])
    for fn, args in [
        (srcjax.jit(srcjax.grad(composed_target)), (x,)),
        (srcjax.grad(srcjax.grad(lambda x: composed_target(x) * 1.0)), ()),
    ]:
        text = srcjax.source(fn, *args)
        lines = [ln for ln in text.splitlines() if "jnp.sin(" in ln]
        assert lines and all("test_debugging.py:" in ln for ln in lines), text
    text = srcjax.source(srcjax.jit(srcjax.grad(composed_target)), x)
    body = [ln for ln in text.splitlines() if "x_bar" in ln or "y_bar" in ln]
    assert any("test_debugging.py:" in ln for ln in body), text
