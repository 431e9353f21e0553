"""Transforms read a function's source as the file is now (user Y).

After an edit and importlib.reload (IPython's %run and %autoreload do the
same), grad and jit used linecache's first copy of the file: the old body,
a silently wrong derivative (2.0 where the reloaded function gives 3.0).
"""

import importlib
import os
import sys

import numpy as np

import srcjax


def _write(path, factor):
    with open(path, "w") as f:
        f.write(f"import srcjax.numpy as jnp\n\n\ndef f(x):\n    return jnp.sin(x) * {factor}\n")
    # a new mtime even on a coarse clock: linecache compares size and mtime
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9 * factor))


def test_grad_and_jit_see_a_reloaded_module(tmp_path):
    name = "srcjax_reload_probe"
    path = tmp_path / f"{name}.py"
    _write(path, 2)
    sys.path.insert(0, str(tmp_path))
    try:
        mod = importlib.import_module(name)
        assert float(srcjax.grad(mod.f)(0.0)) == 2.0
        _write(path, 3)
        importlib.reload(mod)
        assert float(mod.f(np.float32(np.pi / 2))) == 3.0  # Python runs the new body
        assert float(srcjax.grad(mod.f)(0.0)) == 3.0  # (was 2.0: the old source)
        np.testing.assert_allclose(srcjax.jit(mod.f)(np.float32(np.pi / 2)), 3.0, rtol=1e-6)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(name, None)
