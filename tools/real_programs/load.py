"""Load an R program (tools/real_programs) under JAX or, by changing only its
import lines, under srcjax. Used by tools/bench.py and tests/test_real_programs.py."""

from __future__ import annotations

import importlib.util
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = {
    "R1": "r1_quickstart_mlp.py",
    "R2": "r2_dp_sgd.py",
    "R3": "r3_scan_rnn.py",
    "R4": "r4_monte_carlo.py",
    "R5": "r5_pytree_adam.py",
    "R6": "r6_newton_cg.py",
    "R7": "r7_vmap_hessian.py",
    "R8": "r8_cnn.py",
}
#: fresh users' scan-heavy programs (tools/bench.py --users; not in --quick's
#: default rows, nor in tests/test_real_programs.py)
USER_FILES = {
    "U1": "u1_lstm.py",
    "U2": "u2_gru.py",
    "U3": "u3_adam_scan.py",
    "U4": "u4_mh_scan.py",
    "U5": "u5_newton_vmap.py",
}


def to_srcjax_imports(text: str) -> str:
    """A program's source with only its ``jax`` import lines rewritten to srcjax's
    (``import jax`` -> ``import srcjax as jax``, ``import jax.numpy as jnp`` ->
    ``import srcjax.numpy as jnp``, ``from jax.X import Y`` -> ``from srcjax.X
    import Y``); every other line stays as the JAX user wrote it."""
    out = []
    for line in text.splitlines(keepends=True):
        body = line.rstrip("\n")
        body = re.sub(r"^import jax$", "import srcjax as jax", body)
        body = re.sub(r"^import jax((?:\.\w+)+) as ", r"import srcjax\1 as ", body)
        body = re.sub(r"^from jax((?:\.\w+)*) import ", r"from srcjax\1 import ", body)
        out.append(body + line[len(line.rstrip("\n")) :])
    return "".join(out)


def load(key: str, lib: str, tmpdir: str):
    """The module of row ``key`` ("R1"...) imported under ``lib`` ("jax" or
    "srcjax"); the srcjax copy is written to ``tmpdir`` (srcjax reads the source
    of the functions it transforms, so the copy must be a file)."""
    path = os.path.join(HERE, {**FILES, **USER_FILES}[key])
    name = f"real_{key.lower()}_{lib}"
    if lib == "srcjax":
        with open(path) as fh:
            text = to_srcjax_imports(fh.read())
        path = os.path.join(tmpdir, f"{name}.py")
        with open(path, "w") as fh:
            fh.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
