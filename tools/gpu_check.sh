#!/usr/bin/env bash
# One prepared run of the CUDA backend on a lent NVIDIA H200 machine (issue 18).
# The image: Python 3.12.3 at /opt/torch/.venv/bin/python3 with cupy-cuda13x 14.2.0,
# numpy 2.5.2 and jax 0.11.2 with CUDA. Results go under $OUT, one file per step:
#
#   env.txt          GPU, driver, versions
#   install.txt      what was installed from the carried wheels
#   cuda_tests.txt   the CUDA tests for real (tests/test_cuda_backend.py,
#                    tests/test_cuda_offline.py, tests/test_c_render.py): the
#                    real-GPU tests run instead of skipping
#   sources.txt      the offline harness's kernel sources checked against CuPy's
#                    kernel.cached_code for every kernel the renderer makes
#                    (tools/gpu_check_sources.py)
#   bench_gpu.txt    python tools/bench.py --gpu (G1-G4 next to CuPy, cupy.fuse, jax.jit)
#
# Prepare on a machine with network access, from the repository root:
#   python -m pip download --python-version 3.12 --only-binary=:all: --no-deps \
#       -d build/gpu-wheels gast beniget pytest pytest-timeout hypothesis rich
# then run on the device machine with build/gpu-wheels carried:
#   bash tools/gpu_check.sh      (about 6 minutes; every step has its own timeout)
set -uo pipefail
OUT=${OUT:-/tmp/gpu_check_out}
mkdir -p "$OUT"
PY=${PY:-/opt/torch/.venv/bin/python3}
[ -x "$PY" ] || PY=python3
W=build/gpu-wheels
{
  date; nvidia-smi; nproc; "$PY" -V
  "$PY" -c "import numpy, cupy; print('numpy', numpy.__version__, 'cupy', cupy.__version__,
cupy.cuda.runtime.runtimeGetVersion(), cupy.cuda.runtime.driverGetVersion(),
cupy.cuda.Device(0).compute_capability)"
  "$PY" -c "import jax; print('jax', jax.__version__, jax.devices())"
} >"$OUT/env.txt" 2>&1
"$PY" -m pip install -q --no-index --find-links "$W" gast beniget pytest pytest-timeout \
  hypothesis rich >"$OUT/install.txt" 2>&1 || echo "wheel install failed" >>"$OUT/install.txt"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
# srcjax computes on the GPU; JAX (the oracle in some tests) stays on the CPU
export SRCJAX_PLATFORMS=cuda,cpu JAX_PLATFORMS=cpu
timeout 180 "$PY" -m pytest -q -p no:cacheprovider --timeout 120 -rs \
  tests/test_cuda_backend.py tests/test_cuda_offline.py tests/test_c_render.py \
  >"$OUT/cuda_tests.txt" 2>&1
echo "rc=$?" >>"$OUT/cuda_tests.txt"
timeout 90 "$PY" tools/gpu_check_sources.py >"$OUT/sources.txt" 2>&1
echo "rc=$?" >>"$OUT/sources.txt"
unset JAX_PLATFORMS  # the benchmark's jax.jit rows run on the GPU
timeout 240 "$PY" tools/bench.py --gpu --repeats 5 >"$OUT/bench_gpu.txt" 2>&1
echo "rc=$?" >>"$OUT/bench_gpu.txt"
