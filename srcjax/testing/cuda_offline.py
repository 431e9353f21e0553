"""The offline CUDA harness: CuPy's kernels compiled and run without a GPU.

Three parts, all that srcjax needs to test its CUDA backend on machines
without a GPU (CI, and the development machines):

1. :func:`nvrtc_compile` compiles a kernel's source exactly as CuPy would
   (``cupy-cuda13x==14.2.0``): the full source from CuPy's private code
   builders (:func:`elementwise_source`, :func:`reduction_source`), CuPy's
   header list prepended, ``assemble_cupy_compiler_options()`` plus
   ``-ftz=true -arch=sm_90 --device-as-default-execution-space``, through
   ``cupy.cuda.compiler._NVRTCProgram`` with ``method='cubin'``. NVRTC runs
   without a device (``nvidia-cuda-nvrtc==13.0.88`` from pip); CuPy's own
   ``compile_with_cache`` asks for one, so it is not used.
2. :func:`compile_cpu` compiles C++ (CuPy's generated kernel source, or the C
   renderer's CPU functions) with g++ against :data:`SHIM`, a header that makes
   a CUDA kernel a plain function: ``__global__``/``__device__`` are empty,
   thread and block indices are 0 and dimensions 1 (CuPy's grid-stride loop
   covers every element in one thread), ``__syncthreads`` is an OpenMP barrier
   and ``__shared__`` is ``static`` (so with ``-fopenmp`` one block of N
   threads runs CuPy's real shared-memory reduction). :func:`run_elementwise`
   and :func:`run_reduction` call such kernels through ctypes on NumPy buffers,
   passing CuPy's ``CArray``/``CIndexer`` structs by value.
3. :class:`FakeCupy`, a test double for the part of CuPy's API that srcjax's
   CUDA backend calls (``ndarray``, ``asarray``, ``asnumpy``, kernels,
   ``matmul``, ``einsum``, ``linalg.solve``, ``fft``), whose kernels run
   through parts 1 and 2: the whole CUDA code path of :mod:`srcjax.backends.
   cupy_cuda` runs end to end on the CPU.

These rely on CuPy 14.2.0's private APIs (pinned in the ``cuda13`` extra);
:func:`check_version` refuses any other version, and ``tools/gpu_check.sh``
compares :func:`elementwise_source` with ``kernel.cached_code`` on a GPU.
float16 has no CPU type here: it is checked by NVRTC compilation (and on a GPU).
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

__all__ = [
    "CUPY_VERSION",
    "cupy_or_none",
    "check_version",
    "nvrtc_available",
    "nvrtc_compile",
    "elementwise_source",
    "reduction_source",
    "compile_cpu",
    "gxx_available",
    "SHIM",
]

#: the CuPy release whose private code builders this module calls
CUPY_VERSION = "14.2.0"


def cupy_or_none() -> Any:
    """The installed ``cupy`` module (importing it needs no GPU), or None."""
    try:
        import cupy  # noqa: PLC0415
    except Exception:  # noqa: BLE001 (not installed, or a broken install)
        return None
    return cupy


def check_version(cupy: Any) -> None:
    """Raise RuntimeError unless ``cupy`` is the pinned version."""
    if cupy.__version__ != CUPY_VERSION:
        raise RuntimeError(
            f"srcjax's offline CUDA harness needs cupy {CUPY_VERSION} (its private code "
            f"builders), found {cupy.__version__}: pip install 'srcjax[cuda13]'"
        )


# -- 1. the exact source CuPy compiles, and NVRTC ------------------------------------------
def _arginfo(kind: int, dtype: Any, ndim: int, contiguous: bool = True) -> Any:
    import cupy  # noqa: PLC0415
    from cupy._core import _carray, _kernel  # noqa: PLC0415

    if kind == 1:  # ARG_KIND_NDARRAY
        return _kernel._ArgInfo(1, cupy.ndarray, np.dtype(dtype), ndim, contiguous, True)
    if kind == 2:  # ARG_KIND_INDEXER
        return _kernel._ArgInfo(2, _carray.Indexer, None, ndim, True, True)
    from cupy._core import _scalar  # noqa: PLC0415

    return _kernel._ArgInfo(3, _scalar.CScalar, np.dtype(dtype), 0, True, True)


def elementwise_source(
    in_params: str,
    out_params: str,
    operation: str,
    name: str,
    in_dtypes: Sequence[Any],
    ndim: int,
    preamble: str = "",
    scalars: Sequence[bool] = (),
    loop_prep: str = "",
    after_loop: str = "",
) -> str:
    """The CUDA source ``cupy.ElementwiseKernel(in_params, out_params,
    operation, name, preamble=...)`` compiles when called with arrays of
    ``in_dtypes`` (inputs flagged in ``scalars`` are Python scalars) whose
    broadcast shape has ``ndim`` dimensions after CuPy's dimension reduction
    (C-contiguous arrays: 1). Without CuPy's headers (see :func:`with_headers`)."""
    from cupy._core import _kernel  # noqa: PLC0415

    ins = _kernel._get_param_info(in_params, True)
    outs = _kernel._get_param_info(out_params, False)
    params = ins + outs + _kernel._get_param_info("CIndexer _ind", False)
    scalars = tuple(scalars) + (False,) * (len(ins) - len(scalars))
    in_types, out_types, type_map = _kernel._decide_params_type(
        ins, outs, tuple(np.dtype(d) for d in in_dtypes), ()
    )
    infos = []
    for t, sc in zip(in_types, scalars):
        infos.append(_arginfo(3, t, 0) if sc else _arginfo(1, t, ndim))
    infos += [_arginfo(1, t, ndim) for t in out_types]
    infos.append(_arginfo(2, None, ndim))
    kw = {}
    if loop_prep:
        kw["loop_prep"] = loop_prep
    if after_loop:
        kw["after_loop"] = after_loop
    return _kernel._get_elementwise_kernel_code(
        tuple(infos), type_map, params, operation, name, preamble, **kw
    )


def reduction_source(
    in_params: str,
    out_params: str,
    map_expr: str,
    reduce_expr: str,
    post_map_expr: str,
    identity: Optional[str],
    name: str,
    reduce_type: Optional[str],
    in_dtypes: Sequence[Any],
    in_ndim: int = 1,
    out_ndim: int = 0,
    preamble: str = "",
    block_size: int = 512,
) -> str:
    """The CUDA source ``cupy.ReductionKernel(in_params, out_params, map_expr,
    reduce_expr, post_map_expr, identity, name, reduce_type, preamble=...)``
    compiles for inputs of ``in_dtypes`` reduced from ``in_ndim`` to
    ``out_ndim`` dimensions (a full reduction of a contiguous array: 1 -> 0),
    with CuPy's default block size (512)."""
    from cupy._core import _kernel, _reduction  # noqa: PLC0415

    ins = _kernel._get_param_info(in_params, True)
    outs = _kernel._get_param_info(out_params, False)
    params = ins + outs + _kernel._get_param_info("CIndexer _in_ind, CIndexer _out_ind", False)
    in_types, out_types, type_map = _kernel._decide_params_type(
        ins, outs, tuple(np.dtype(d) for d in in_dtypes), ()
    )
    infos = tuple(
        [_arginfo(1, t, in_ndim) for t in in_types]
        + [_arginfo(1, t, out_ndim) for t in out_types]
        + [_arginfo(2, None, in_ndim), _arginfo(2, None, out_ndim)]
    )
    return _reduction._ReductionKernel_get_cached_function_code(
        len(ins), len(outs), params, infos, type_map, name, block_size,
        reduce_type, identity, map_expr, reduce_expr, post_map_expr, preamble, (),
    )  # fmt: skip


def with_headers(source: str) -> str:
    """``source`` with CuPy's header list prepended, as ``compile_with_cache`` does."""
    from cupy._core import core  # noqa: PLC0415

    return "".join(f"#include <{h}>\n" for h in core._cupy_header_list) + source


def nvrtc_options(arch: str = "sm_90") -> Tuple[str, ...]:
    """CuPy's NVRTC options for ``arch`` (the H200 is ``sm_90``)."""
    from cupy._core import core  # noqa: PLC0415

    return core.assemble_cupy_compiler_options(()) + (
        "-ftz=true", f"-arch={arch}", "--device-as-default-execution-space",
    )  # fmt: skip


_NVRTC_OK: Optional[str] = None


def nvrtc_available() -> Optional[str]:
    """None when NVRTC compiles here, else why not (for a skip reason)."""
    global _NVRTC_OK
    if _NVRTC_OK is None:
        cp = cupy_or_none()
        if cp is None:
            _NVRTC_OK = "cupy is not installed (pip install 'srcjax[cuda13]')"
        elif cp.__version__ != CUPY_VERSION:
            _NVRTC_OK = f"the offline harness needs cupy {CUPY_VERSION}, found {cp.__version__}"
        else:
            try:
                nvrtc_compile('extern "C" __global__ void sj_probe() {}', "sj_probe")
                _NVRTC_OK = ""
            except Exception as e:  # noqa: BLE001
                _NVRTC_OK = f"NVRTC does not compile here: {type(e).__name__}: {e}"[:300]
    return _NVRTC_OK or None


def nvrtc_compile(source: str, name: str, arch: str = "sm_90") -> bytes:
    """Compile ``source`` (without CuPy's headers) as CuPy would, to a cubin.
    Raises CuPy's ``CompileException`` (with NVRTC's log) on an error."""
    from cupy.cuda import compiler  # noqa: PLC0415

    prog = compiler._NVRTCProgram(with_headers(source), f"{name}.cu", method="cubin")
    cubin, _ = prog.compile(nvrtc_options(arch))
    return cubin


# -- 2. g++ and the CUDA shim --------------------------------------------------------------
#: the header that turns a CUDA kernel into a C++ function (see the module docstring)
SHIM = r"""
#pragma once
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <omp.h>
using std::isinf; using std::isnan; using std::signbit; using std::isfinite;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
#define __restrict__
struct sj_dim3 { unsigned int x, y, z; };
#define threadIdx (sj_dim3{(unsigned int)omp_get_thread_num(), 0, 0})
#define blockDim (sj_dim3{(unsigned int)omp_get_num_threads(), 1, 1})
static const sj_dim3 blockIdx = {0, 0, 0}, gridDim = {1, 1, 1};
static inline void __syncthreads() {
  _Pragma("omp barrier")
}
static inline int __popc(unsigned int v) { return __builtin_popcount(v); }
static inline int __popcll(unsigned long long v) { return __builtin_popcountll(v); }
template <typename T> static inline T atomicAdd(T* p, T v) { T o; _Pragma("omp atomic capture") { o = *p; *p += v; } return o; }
static inline double __longlong_as_double(long long v) { double d; __builtin_memcpy(&d, &v, 8); return d; }
#include <cupy/complex.cuh>
#include <cupy/carray.cuh>
#include <cupy/math_constants.h>
static inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
static inline float normcdf(float x) { return 0.5f * erfcf(-x * (float)M_SQRT1_2); }
static inline double sinpi(double x) { return sin(M_PI * x); }
static inline float sinpi(float x) { return sinf((float)M_PI * x); }
"""

_LOCK = threading.Lock()
_LIBS: Dict[str, Any] = {}


def gxx_available() -> Optional[str]:
    """None when g++ is on PATH, else why not."""
    return None if shutil.which("g++") else "g++ is not installed"


def _include_flags() -> List[str]:
    cp = cupy_or_none()
    if cp is None:
        return []
    inc = os.path.join(os.path.dirname(cp.__file__), "_core", "include")
    return [f"-I{inc}"] + [f"-I{inc}/cupy/_cccl/{d}" for d in ("thrust", "libcudacxx", "cub")]


def compile_cpu(source: str, shim: bool = True, flags: Sequence[str] = ()) -> Any:
    """Compile C++ ``source`` into a shared library with g++ (``-O2 -fopenmp``),
    with :data:`SHIM` first when ``shim`` (CuPy kernels; needs CuPy's headers),
    and load it with ctypes. Cached by the hash of the text: compile many
    kernels in one ``source`` (g++ costs about a second a file)."""
    text = (SHIM + "\n" if shim else "") + source
    key = hashlib.sha256((text + repr(tuple(flags))).encode()).hexdigest()[:24]
    with _LOCK:
        lib = _LIBS.get(key)
        if lib is not None:
            return lib
        d = tempfile.mkdtemp(prefix="srcjax-cpu-")
        src = os.path.join(d, f"k{key}.cpp")
        so = os.path.join(d, f"k{key}.so")
        with open(src, "w") as f:
            f.write(text)
        cmd = ["g++", "-std=c++17", "-O2", "-fopenmp", "-shared", "-fPIC", "-w"]
        cmd += (_include_flags() if shim else []) + list(flags) + [src, "-o", so]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"g++ failed on {src}:\n{res.stderr[-4000:]}")
        lib = ctypes.CDLL(so)
        _LIBS[key] = lib
        return lib
