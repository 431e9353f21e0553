#!/usr/bin/env bash
# One prepared run of the CUDA backend on a lent NVIDIA H200 machine (issue 18).
# The image: Python 3.12.3 at /opt/torch/.venv/bin/python3 with cupy-cuda13x 14.2.0,
# numpy 2.5.2 and jax 0.11.2 with CUDA. Results go under $OUT, one file per step:
#
#   env.txt          GPU, driver, versions, g++, and a probe kernel (NVRTC found?)
#   install.txt      what was installed from the carried wheels, and where
#   cuda_tests.txt   the CUDA tests for real (tests/test_cuda_backend.py,
#                    tests/test_cuda_oob.py, tests/test_cuda_offline.py,
#                    tests/test_c_render.py): the real-GPU variants run instead of
#                    skipping; the emulated ones need g++ (skipped without it)
#   sources.txt      the offline harness's kernel sources checked against CuPy's
#                    kernel.cached_code for every kernel the renderer makes
#                    (tools/gpu_check_sources.py)
#   bench_gpu.txt    python tools/bench.py --gpu (G1-G4 next to CuPy, cupy.fuse, jax.jit)
#
# Prepare on a machine with network access, from the repository root (about 1 MB of
# pure-Python wheels with their dependencies; the CUDA tests, the source check and
# the benchmark need nothing else the image lacks):
#   python -m pip download --python-version 3.12 --platform manylinux2014_x86_64 \
#       --only-binary=:all: -d build/gpu-wheels gast beniget pytest pytest-timeout
# Do not carry nvidia-cuda-nvrtc: its wheel is 90 MB, over the device tool's 64 MiB
# carry; the image's CuPy must find NVRTC itself (env.txt's probe says whether it did).
# Then run on the device machine with build/gpu-wheels carried:
#   bash tools/gpu_check.sh                 (all steps, about 8 minutes)
#   bash tools/gpu_check.sh tests sources   (some steps: env install tests sources bench;
#                                            split the run when one call is limited to 10 min)
# The carried packages go to build/gpu-site (pip --target: the image's venv may not
# be writable by the user that runs the command), put on PYTHONPATH by every step.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_check_out}
mkdir -p "$OUT"
PY=${PY:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
W=build/gpu-wheels
SITE=$PWD/build/gpu-site
STEPS=${*:-env install tests sources bench}
export PYTHONPATH=$PWD:$SITE${PYTHONPATH:+:$PYTHONPATH}
# srcjax computes on the GPU; JAX (the oracle in some tests) stays on the CPU
export SRCJAX_PLATFORMS=cuda,cpu
# JAX and CuPy share the GPU in the benchmark: no 75% preallocation by XLA
export XLA_PYTHON_CLIENT_PREALLOCATE=false

want() { case " $STEPS " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }

if want env; then
  {
    date; nvidia-smi; nproc; "$PY" -V; command -v g++ || echo "no g++ (emulated tests skip)"
    "$PY" -c "import numpy, cupy; print('numpy', numpy.__version__, 'cupy', cupy.__version__,
cupy.cuda.runtime.runtimeGetVersion(), cupy.cuda.runtime.driverGetVersion(),
cupy.cuda.Device(0).compute_capability)"
    "$PY" -c "import jax; print('jax', jax.__version__, jax.devices())"
    "$PY" -c "import cupy as cp
k = cp.ElementwiseKernel('float32 x', 'float32 y', 'y = x * 2', 'sj_probe')
print('probe kernel (NVRTC):', k(cp.arange(4, dtype=cp.float32)))"
  } >"$OUT/env.txt" 2>&1
fi

if want install; then
  {
    need=""
    for spec in gast:gast beniget:beniget pytest:pytest pytest_timeout:pytest-timeout; do
      "$PY" -c "import ${spec%%:*}" 2>/dev/null || need="$need ${spec##*:}"
    done
    echo "missing from the image:${need:- nothing}"
    for pkg in $need; do  # (one at a time: one failure does not stop the others)
      "$PY" -m pip install -q --no-index --find-links "$W" --target "$SITE" "$pkg" \
        || echo "installing $pkg from $W failed (is $W carried?)"
    done
    "$PY" -c "import gast, beniget, pytest; print('gast', gast.__file__); print('pytest', pytest.__version__)"
  } >"$OUT/install.txt" 2>&1
fi

if want tests; then
  to=""
  "$PY" -c "import pytest_timeout" 2>/dev/null && to="--timeout 120"
  # shellcheck disable=SC2086
  JAX_PLATFORMS=cpu timeout 300 "$PY" -m pytest -q -p no:cacheprovider $to -rs \
    tests/test_cuda_backend.py tests/test_cuda_oob.py tests/test_cuda_offline.py \
    tests/test_c_render.py >"$OUT/cuda_tests.txt" 2>&1
  echo "rc=$?" >>"$OUT/cuda_tests.txt"
fi

if want sources; then
  JAX_PLATFORMS=cpu timeout 90 "$PY" tools/gpu_check_sources.py >"$OUT/sources.txt" 2>&1
  echo "rc=$?" >>"$OUT/sources.txt"
fi

if want bench; then
  # (the benchmark's jax.jit rows run on the GPU: JAX_PLATFORMS unset)
  timeout 200 "$PY" tools/bench.py --gpu --repeats 5 >"$OUT/bench_gpu.txt" 2>&1
  echo "rc=$?" >>"$OUT/bench_gpu.txt"
fi
ls -l "$OUT"
