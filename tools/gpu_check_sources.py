"""On a GPU: the offline harness's kernel sources are exactly CuPy's.

For every one-operation kernel the C renderer makes of a registry primitive (all
dtypes, as tests/test_cuda_offline.py builds them) and a few reductions, build
the real ``cupy.ElementwiseKernel`` / ``ReductionKernel``, call it on
contiguous arrays, and compare ``kernel.cached_code`` with
``srcjax.backends.cupy_cuda.kernels.source(spec)`` (the offline harness's
reconstruction from CuPy's private code builders). Prints one line per
mismatch and a summary; exit status 1 on any mismatch. Run by tools/gpu_check.sh.
"""

from __future__ import annotations

import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "tests"))


def main() -> int:
    import cupy as cp
    from test_cuda_offline import _one_step_specs

    import srcjax  # noqa: F401
    from srcjax.backends.cupy_cuda import kernels as K
    from srcjax.codegen import c_render as C
    from srcjax.primitives.registry import REGISTRY

    if not cp.cuda.is_available():
        print("no GPU: nothing checked")
        return 1
    specs = _one_step_specs()
    f32 = np.dtype(np.float32)
    steps = [C.Step(REGISTRY["jnp.multiply"], [("in", "x"), ("in", "x")], "q", f32)]
    specs += [K.reduction_spec(steps, {"x": f32}, "q", kind, f32, "r") for kind in
              ("sum", "mean", "max", "min")]  # fmt: skip
    bad = ok = failed = 0
    for spec in specs:
        try:
            k = K.build(cp, spec)
            args = [cp.ones(1000, dt) for dt in spec.in_dtypes]
            k(*args)
            got = k.cached_code
        except Exception as e:  # noqa: BLE001
            failed += 1
            print(f"ERROR {spec.name}: {type(e).__name__}: {str(e)[:200]}")
            continue
        want = K.source(spec, ndim=1)
        if got != want:
            bad += 1
            print(f"MISMATCH {spec.name} ({spec.in_params})")
        else:
            ok += 1
    print(f"{ok} identical, {bad} different, {failed} errors, of {len(specs)} kernels")
    return 0 if bad == 0 and failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
