#!/usr/bin/env bash
# One prepared run on a lent device machine (Python 3.12 image with CuPy, JAX,
# mpi4py, pytest): a portability check of the whole test suite on another Python,
# NumPy and CPU, the conformance cases, and the CPU benchmarks next to JAX on a
# many-core machine.  srcjax has no CUDA backend yet, so nothing here needs the GPU
# except the environment record.  Results go under $OUT (one file per step).
#
# Run from the repository root, carrying build/gpu-wheels (wheels of what the image
# lacks: gast, beniget, hypothesis, pytest-timeout, rich, scikit-learn; fetch them
# with `pip download --python-version 3.12 --only-binary=:all: ...`) and
# build/conformance (a copy of ../shared/conformance).
set -uo pipefail
OUT=${OUT:-/tmp/gpu_check_out}
mkdir -p "$OUT"
W=build/gpu-wheels
{
  date; nvidia-smi -L; nproc; python -V
  python -c "import numpy, jax; print('numpy', numpy.__version__, 'jax', jax.__version__, jax.devices())"
  python -c "import cupy; print('cupy', cupy.__version__)"
} >"$OUT/env.txt" 2>&1
python -m pip install -q --no-index --find-links "$W" gast beniget hypothesis pytest-timeout rich \
  >"$OUT/install.txt" 2>&1
python -m pip install -q --no-index --find-links "$W" scikit-learn >>"$OUT/install.txt" 2>&1 || true
python -m pip install -q --no-deps --no-build-isolation -e . >>"$OUT/install.txt" 2>&1 \
  || echo "editable install failed; using PYTHONPATH" >>"$OUT/install.txt"
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
export JAX_PLATFORMS=cpu  # JAX is the CPU oracle in the tests and the bench
timeout 330 python -m pytest -q -p no:cacheprovider --maxfail=30 --timeout 120 >"$OUT/pytest.txt" 2>&1
echo "rc=$?" >>"$OUT/pytest.txt"
timeout 120 python build/conformance/run.py -j 8 >"$OUT/conformance.txt" 2>&1
echo "rc=$?" >>"$OUT/conformance.txt"
timeout 150 python tools/bench.py --only W1,W2,W7,W4 --repeats 5 >"$OUT/bench.txt" 2>&1
echo "rc=$?" >>"$OUT/bench.txt"
