"""The offline CUDA harness: CuPy's kernels compiled and run without a GPU.

Three parts, all that srcjax needs to test its CUDA backend on machines
without a GPU (CI, and the development machines); the third lives in
:mod:`srcjax.testing.fake_cupy` (test infrastructure, a layer above):

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
3. :class:`srcjax.testing.fake_cupy.FakeCupy`, a test double for the part of CuPy's API that srcjax's
   CUDA backend calls (``ndarray``, ``asarray``, ``asnumpy``, kernels,
   ``matmul``, ``einsum``, ``linalg.solve``, ``fft``), whose kernels run
   through parts 1 and 2: the whole CUDA code path of
   :mod:`srcjax.backends.cupy_cuda` runs end to end on the CPU.

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
    contiguous: Sequence[bool] = (),
) -> str:
    """The CUDA source ``cupy.ElementwiseKernel(in_params, out_params,
    operation, name, preamble=...)`` compiles when called with arrays of
    ``in_dtypes`` (inputs flagged in ``scalars`` are Python scalars) whose
    broadcast shape has ``ndim`` dimensions after CuPy's dimension reduction
    (C-contiguous arrays: 1); ``contiguous`` flags each array (inputs, then
    outputs) as C-contiguous in that view. Without CuPy's headers (see
    :func:`with_headers`)."""
    from cupy._core import _kernel  # noqa: PLC0415

    ins = _kernel._get_param_info(in_params, True)
    outs = _kernel._get_param_info(out_params, False)
    params = ins + outs + _kernel._get_param_info("CIndexer _ind", False)
    scalars = tuple(scalars) + (False,) * (len(ins) - len(scalars))
    # (CuPy decides a scalar's type from the parameter, casting the value)
    in_types, out_types, type_map = _kernel._decide_params_type(
        ins, outs, tuple(None if sc else np.dtype(d) for d, sc in zip(in_dtypes, scalars)), ()
    )
    n = len(in_types) + len(out_types)
    contiguous = tuple(contiguous) + (True,) * (n - len(contiguous))
    infos = []
    for t, sc, c in zip(in_types, scalars, contiguous):
        infos.append(_arginfo(3, t, 0) if sc else _arginfo(1, t, ndim, c))
    infos += [_arginfo(1, t, ndim, c) for t, c in zip(out_types, contiguous[len(in_types) :])]
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
    params = (
        ins
        + outs
        + _kernel._get_param_info("CIndexer _in_ind, CIndexer _out_ind", False)
        + _kernel._get_param_info("int32 _block_stride", True)
    )
    in_types, out_types, type_map = _kernel._decide_params_type(
        ins, outs, tuple(np.dtype(d) for d in in_dtypes), ()
    )
    # CuPy adds IndexT: int32 unless one output element reduces over 2**31 inputs
    type_map = _kernel._TypeMap(type_map._pairs + (("IndexT", "int32"),))
    infos = tuple(
        [_arginfo(1, t, in_ndim) for t in in_types]
        + [_arginfo(1, t, out_ndim) for t in out_types]
        + [_arginfo(2, None, in_ndim), _arginfo(2, None, out_ndim), _arginfo(3, np.int32, 0)]
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


def required(reason: Optional[str]) -> Optional[str]:
    """``reason`` (why the offline tests cannot run), unless
    ``SRCJAX_REQUIRE_CUDA_OFFLINE=1`` (CI), where a reason is an error."""
    if reason and os.environ.get("SRCJAX_REQUIRE_CUDA_OFFLINE") == "1":
        raise RuntimeError(f"SRCJAX_REQUIRE_CUDA_OFFLINE=1, but {reason}")
    return reason


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
static inline float __uint_as_float(unsigned int v) { float f; __builtin_memcpy(&f, &v, 4); return f; }
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


_BASE_FLAGS = ["-std=c++17", "-O2", "-fopenmp", "-shared", "-fPIC", "-w"]
_PCH_DIR: Optional[str] = None


def _shim_dir() -> str:
    """A directory holding the shim and its precompiled header (built once per
    process: 1.7 s, after which a kernel file compiles in about 0.3 s, not 1.2 s)."""
    global _PCH_DIR
    if _PCH_DIR is None:
        d = tempfile.mkdtemp(prefix="srcjax-shim-")
        with open(os.path.join(d, "sj_shim.h"), "w") as f:
            f.write(SHIM)
        cmd = ["g++", *_BASE_FLAGS, *_include_flags(), "-x", "c++-header"]
        cmd += [os.path.join(d, "sj_shim.h"), "-o", os.path.join(d, "sj_shim.h.gch")]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"g++ could not compile the CUDA shim:\n{res.stderr[-4000:]}")
        _PCH_DIR = d
    return _PCH_DIR


def compile_cpu(source: str, shim: bool = True, flags: Sequence[str] = ()) -> Any:
    """Compile C++ ``source`` into a shared library with g++ (``-O2 -fopenmp``),
    after :data:`SHIM` when ``shim`` (CuPy kernels; needs CuPy's headers; a
    precompiled header), and load it with ctypes. Cached by the hash of the
    text: put many kernels in one ``source`` where possible."""
    key = hashlib.sha256((str(shim) + source + repr(tuple(flags))).encode()).hexdigest()[:24]
    with _LOCK:
        lib = _LIBS.get(key)
        if lib is not None:
            return lib
        cmd = ["g++", *_BASE_FLAGS]
        text = source
        if shim:
            sd = _shim_dir()
            cmd += [*_include_flags(), f"-I{sd}"]
            text = '#include "sj_shim.h"\n' + source
        d = tempfile.mkdtemp(prefix="srcjax-cpu-")
        src = os.path.join(d, f"k{key}.cpp")
        so = os.path.join(d, f"k{key}.so")
        with open(src, "w") as f:
            f.write(text)
        res = subprocess.run([*cmd, *flags, src, "-o", so], capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError(f"g++ failed on {src}:\n{res.stderr[-4000:]}")
        lib = ctypes.CDLL(so)
        _LIBS[key] = lib
        return lib


# -- running CuPy kernels on the CPU ---------------------------------------------------------
_CTYPES = {
    "bool": ctypes.c_bool, "int8": ctypes.c_int8, "int16": ctypes.c_int16,
    "int32": ctypes.c_int32, "int64": ctypes.c_int64, "uint8": ctypes.c_uint8,
    "uint16": ctypes.c_uint16, "uint32": ctypes.c_uint32, "uint64": ctypes.c_uint64,
    "float32": ctypes.c_float, "float64": ctypes.c_double,
}  # fmt: skip
_STRUCTS: Dict[tuple, Any] = {}


def _struct(kind: str, ndim: int) -> Any:
    """ctypes layout of CuPy's ``CArray<T, ndim, ...>`` (data, size, shape,
    strides; 0-d: data, size) or ``CIndexer<ndim>`` (size, shape, index)."""
    key = (kind, ndim)
    if key not in _STRUCTS:
        P = ctypes.c_ssize_t
        if kind == "array":
            fields = [("data", ctypes.c_void_p), ("size", P)]
            if ndim:
                fields += [("shape", P * ndim), ("strides", P * ndim)]
        else:
            fields = [("size", P)]
            if ndim:
                fields += [("shape", P * ndim), ("index", P * ndim)]
        _STRUCTS[key] = type(f"C{kind}{ndim}", (ctypes.Structure,), {"_fields_": fields})
    return _STRUCTS[key]


def carray(a: np.ndarray, shape: Tuple[int, ...], strides: Tuple[int, ...]) -> Any:
    """``CArray`` over ``a``'s buffer viewed with ``shape`` and byte ``strides``."""
    s = _struct("array", len(shape))()
    s.data = a.ctypes.data
    s.size = int(np.prod(shape, dtype=np.int64))
    if shape:
        s.shape[:] = list(shape)
        s.strides[:] = list(strides)
    return s


def cindexer(shape: Tuple[int, ...]) -> Any:
    s = _struct("indexer", len(shape))()
    s.size = int(np.prod(shape, dtype=np.int64))
    if shape:
        s.shape[:] = list(shape)
    return s


def _split_params(text: str) -> List[str]:
    out, depth, cur = [], 0, ""
    for ch in text:
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def cpu_kernels(sources: Sequence[Tuple[str, str]]) -> Any:
    """One library of CuPy kernel sources ``[(name, source), ...]``: each in its
    own namespace, with ``sj_launch_<name>(int threads, <the kernel's
    parameters>)`` running it as one block of ``threads`` OpenMP threads."""
    parts = []
    for k, (name, src) in enumerate(sources):
        head = src[src.index(f"void {name}(") + len(f"void {name}(") :]
        params = _split_params(head[: head.index(")")])
        args = ", ".join(p.split()[-1] for p in params)
        parts.append(
            f"namespace sj_ns{k} {{\n{src}\n"
            f'extern "C" void sj_launch_{name}(int sj_threads, {", ".join(params)}) {{\n'
            f'  _Pragma("omp parallel num_threads(sj_threads)")\n  {name}({args});\n}}\n}}\n'
        )
    return compile_cpu("\n".join(parts))


def reduced_view(shape: Tuple[int, ...], arrays: Sequence[np.ndarray]) -> Tuple[tuple, list]:
    """CuPy's dimension reduction (``_reduced_view_core``): adjacent axes merge
    where every array's strides allow (size-1 axes drop). Returns (shape, the
    arrays' byte strides in it)."""
    shape = list(shape)
    strides = [list(a.strides) for a in arrays]
    keep = [d for d in range(len(shape)) if shape[d] != 1]
    shape = [shape[d] for d in keep]
    strides = [[st[d] for d in keep] for st in strides]
    ax = len(shape) - 1
    while ax > 0:
        if all(st[ax - 1] == shape[ax] * st[ax] for st in strides):
            shape[ax - 1] *= shape[ax]
            del shape[ax]
            for st in strides:
                st[ax - 1] = st[ax]
                del st[ax]
        ax -= 1
    return tuple(shape), [tuple(st) for st in strides]


def _contiguous(shape: tuple, strides: tuple, itemsize: int) -> bool:
    want = itemsize
    for d in range(len(shape) - 1, -1, -1):
        if strides[d] != want:
            return False
        want *= shape[d]
    return True
