"""Uncaught srcjax errors print without srcjax's frames (srcjax/_traceback.py),
and SRCJAX_TRACEBACK_FILTERING=off prints them all."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROGRAM = """
import srcjax
import srcjax.numpy as jnp


def f(x):
    return x["a"] * 2


def main():
    srcjax.jit(f)(jnp.ones(3))


main()
"""


def _run(tmp_path, **env_extra):
    path = tmp_path / "user_program.py"
    path.write_text(PROGRAM)
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env.pop("SRCJAX_TRACEBACK_FILTERING", None)
    env.pop("JAX_TRACEBACK_FILTERING", None)
    env.update(env_extra)
    r = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=120
    )
    assert r.returncode == 1
    return r.stderr


def test_srcjax_frames_are_hidden(tmp_path):
    err = _run(tmp_path)
    frames = [line for line in err.splitlines() if line.lstrip().startswith('File "')]
    assert frames and all("user_program.py" in line for line in frames), err
    assert "user_program.py:7:12: indexing an array" in err
    assert "srcjax-internal frames hidden; SRCJAX_TRACEBACK_FILTERING=off shows them" in err


def test_filtering_off_shows_every_frame(tmp_path):
    err = _run(tmp_path, SRCJAX_TRACEBACK_FILTERING="off")
    # (jit's frames: srcjax/jit_api/, a package since the lane-L5 split)
    assert os.path.join("srcjax", "jit_api", "") in err and "frames hidden" not in err
