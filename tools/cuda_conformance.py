#!/usr/bin/env python3
"""The conformance cases that use ``jit``, through the CUDA path in emulated mode.

Each case of ``../shared/conformance/cases`` whose source mentions ``jit`` runs in a
fresh subprocess with the CuPy test double (srcjax.testing.fake_cupy) installed
as CuPy, so the default device is an (emulated) GPU and every jitted call takes
the CUDA backend: its kernels are CuPy's exact sources run on the CPU through
g++. Results come back with ``srcjax.device_get`` (as ``np.asarray`` brings a
jax.Array back) and are judged by the conformance runner's own comparison
(``run.py``'s ``judge``, each case's tolerance). Each line also says how many
kernels the case launched and which primitives ran on host copies.

    python tools/cuda_conformance.py [--conformance DIR] [filters...]

Last line: ``N passed, N failed``; exit status 0 when all passed.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _load_runner(conf_dir):
    spec = importlib.util.spec_from_file_location(
        "conformance_run", os.path.join(conf_dir, "run.py")
    )
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def child(case_path, out_dir):
    """Run one case with the emulated GPU; write meta.json and result.npz as run.py's child."""
    import traceback

    import numpy as np

    sys.path.insert(0, os.path.dirname(case_path))
    meta = {"status": "error"}
    import srcjax
    from srcjax.backends import cupy_cuda
    from srcjax.testing import fake_cupy

    fake = fake_cupy.use_fake()
    try:
        with cupy_cuda.use_cupy(fake):
            assert srcjax.default_backend() == "gpu"
            spec = importlib.util.spec_from_file_location("case", case_path)
            mod = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(mod)
            tol = getattr(mod, "TOL", None)
            meta["module"] = {"tol": list(tol) if tol is not None else None}
            result = mod.run()
            arrays = {k: np.asarray(srcjax.device_get(v)) for k, v in result.items()}
        np.savez(os.path.join(out_dir, "result.npz"), **arrays)
        meta["status"] = "ok"
    except BaseException as exc:  # noqa: BLE001 - reported
        meta["error_type"] = type(exc).__name__
        meta["error_mro"] = [c.__name__ for c in type(exc).__mro__]
        meta["error_msg"] = (str(exc).strip().splitlines() or [""])[0]
        meta["traceback"] = traceback.format_exc()[-3000:]
    meta["launches"] = fake.stats.launches
    meta["kernels"] = fake.stats.compiles
    meta["host_calls"] = dict(cupy_cuda.HOST_CALLS)
    with open(os.path.join(out_dir, "meta.json"), "w") as f:
        json.dump(meta, f)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("filters", nargs="*")
    ap.add_argument("--conformance", default=os.path.join(ROOT, "..", "shared", "conformance"))
    ap.add_argument("-v", "--verbose", action="store_true")
    ap.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(*args.child)
        return 0
    conf = os.path.abspath(args.conformance)
    run = _load_runner(conf)
    cases = os.path.join(conf, "cases")
    names = [n for n in run.list_cases(args.filters)
             if "jit" in open(os.path.join(cases, n + ".py")).read()]  # fmt: skip
    passed = failed = 0
    for name in names:
        exp_meta, exp_values = run.load_expected(os.path.join(conf, "expected", name + ".npz"))
        with tempfile.TemporaryDirectory() as out:
            env = dict(os.environ, PYTHONPATH=ROOT, PYTHONHASHSEED="0")
            proc = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--child",
                 os.path.join(cases, name + ".py"), out],
                env=env, cwd=cases, capture_output=True, text=True, timeout=300,
            )  # fmt: skip
            mpath = os.path.join(out, "meta.json")
            if not os.path.exists(mpath):
                meta, arrays = {"status": "crash", "returncode": proc.returncode}, None
            else:
                meta = json.load(open(mpath))
                arrays = None
                if meta["status"] == "ok":
                    import numpy as np

                    with np.load(os.path.join(out, "result.npz")) as z:
                        arrays = {k: z[k] for k in z.files}
        status, reason = run.judge(name, exp_meta, exp_values, meta, arrays, proc.stderr, 300)
        passed += status == "PASS"
        failed += status != "PASS"
        how = f"{meta.get('launches', 0)} kernel launches, {meta.get('kernels', 0)} kernels"
        host = meta.get("host_calls")
        if host:
            how += f", on host: {host}"
        print(f"{status} {name} ({how}){': ' + reason if reason else ''}")
        if args.verbose and meta.get("traceback"):
            print(meta["traceback"])
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
