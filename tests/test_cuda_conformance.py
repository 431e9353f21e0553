"""The public conformance cases that use jit, through the CUDA path in emulated
mode (tools/cuda_conformance.py: the CuPy test double is the default GPU).

The cases live outside the repository (``../shared/conformance`` next to the checkout or its parent, or
``$SRCJAX_CONFORMANCE``); without them this test skips, saying so."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from srcjax.backends.cupy_cuda import offline as off

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CANDIDATES = [os.path.join(ROOT, *([".."] * k), "shared", "conformance") for k in (1, 2)]
CONF = os.environ.get("SRCJAX_CONFORMANCE") or next(
    (c for c in _CANDIDATES if os.path.isdir(c)), _CANDIDATES[0]
)
_cp = off.cupy_or_none()


@pytest.mark.skipif(
    not os.path.isdir(os.path.join(CONF, "cases")), reason=f"no conformance cases at {CONF}"
)
@pytest.mark.skipif(
    _cp is None or off.gxx_available() is not None, reason="needs srcjax[cuda13] and g++"
)
def test_conformance_cases_using_jit_pass_through_the_cuda_path():
    proc = subprocess.run(
        [sys.executable, os.path.join(ROOT, "tools", "cuda_conformance.py"), "--conformance", CONF],
        capture_output=True, text=True, timeout=600, cwd=ROOT,
    )  # fmt: skip
    lines = proc.stdout.strip().splitlines()
    assert lines, proc.stderr[-2000:]
    assert proc.returncode == 0, "\n".join(lines)
    passed = int(lines[-1].split()[0])
    assert passed >= 12, lines[-1]
    # the cases that jit elementwise code launched kernels
    assert any("PASS 003_jit_cube_ones (" in ln and "0 kernel launches" not in ln for ln in lines)
