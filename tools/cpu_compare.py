"""CPU time per step of a real-program row (tools/real_programs, R1-R6): srcjax.jit
against jax.jit in one process, medians of process_time over blocks of calls
(the measure TEAM.md asks for on a loaded machine; wall clock there is noise).

    OPENBLAS_NUM_THREADS=1 python tools/cpu_compare.py R6 [--calls 200] [--rounds 2]

``OPENBLAS_CORETYPE``/``OPENBLAS_L2_SIZE`` (set in this environment to force
OpenBLAS's Haswell kernels) make NumPy's small matrix products 2-3x slower and
do not touch XLA's: the script runs itself again without them, as
``tools/bench.py`` does (``--keep-openblas-env`` measures with them).

Which srcjax is measured is whichever ``import srcjax`` finds (PYTHONPATH): run
it once per tree to compare two trees, as docs/bench-2026-12-06-speedR6.md does.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time

_FORCED = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
if "--keep-openblas-env" not in sys.argv and any(k in os.environ for k in _FORCED):
    # (before NumPy loads OpenBLAS, which reads them once)
    env = {k: v for k, v in os.environ.items() if k not in _FORCED}
    os.execve(sys.executable, [sys.executable, *sys.argv], env)

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "real_programs"))


def _median_cpu(fn, calls: int, blocks: int = 7) -> float:
    for _ in range(10):
        fn()
    out = []
    for _ in range(blocks):
        t0 = time.process_time()
        for _ in range(calls):
            fn()
        out.append((time.process_time() - t0) / calls)
    return float(np.median(out))


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("row", help="R1 ... R6")
    ap.add_argument("--calls", type=int, default=200, help="calls per timed block")
    ap.add_argument("--rounds", type=int, default=2, help="srcjax/jax measurement pairs")
    ap.add_argument(
        "--keep-openblas-env", action="store_true", help="keep OPENBLAS_CORETYPE/L2_SIZE"
    )
    args = ap.parse_args(argv)
    import load

    import srcjax

    ms = load.load(args.row, "srcjax", tempfile.mkdtemp())
    mj = load.load(args.row, "jax", tempfile.mkdtemp())
    inputs = ms.make_inputs(np.random.default_rng(0))
    import jax

    # (the JAX module's own inputs: a pytree class of the srcjax copy, R5's MLP,
    # is no pytree for JAX)
    jinputs = jax.device_put(mj.make_inputs(np.random.default_rng(0)))
    print(f"srcjax from {os.path.dirname(srcjax.__file__)}")
    for _ in range(args.rounds):
        s = _median_cpu(lambda: ms.step(*inputs), args.calls)
        j = _median_cpu(lambda: jax.block_until_ready(mj.step(*jinputs)), args.calls)
        print(
            f"{args.row}: srcjax.jit {s * 1e6:.0f} us, jax.jit {j * 1e6:.0f} us, ratio {s / j:.2f}"
        )


if __name__ == "__main__":
    main()
