"""RawKernels: where neither an ElementwiseKernel nor a ReductionKernel fits.

Row-wise softmax, log_softmax and logsumexp over the last axis
(``nn.softmax``, ``nn.log_softmax``, ``special.logsumexp``/``nn.logsumexp`` on a
C-contiguous float32/float64 GPU array without ``where``/``b``) read each row
twice from global memory (max, then sum of exponentials; softmax writes a third
pass) inside one kernel, instead of CuPy's three or four reductions and
broadcasts.

**Launch configuration.** ``grid = (min(rows, 65535),)`` blocks of ``block =
(256,)`` threads: block ``b`` handles rows ``b, b + gridDim.x, ...``; its
threads stride over the row's columns, and the max and the sum are tree
reductions in 256 floats (or doubles) of shared memory, so the block size is
fixed at 256 (a power of two). Every loop is a grid-stride loop, so the same
source runs with any grid, including the offline harness's single block on the
CPU (:mod:`srcjax.backends.cupy_cuda.offline`).

JAX's semantics: the max propagates NaN; softmax and log_softmax shift by the
raw max (an infinite entry gives NaN, as in JAX); logsumexp replaces a
non-finite max by 0 (an all ``-inf`` row gives ``-inf``, an empty one too).
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from ...codegen import c_render

__all__ = ["ROW_SOFTMAX", "row_kernel_source", "row_softmax", "BLOCK", "MODES"]

#: threads per block (the shared-memory trees assume a power of two)
BLOCK = 256
#: what the row kernel computes
MODES = {"softmax": 0, "log_softmax": 1, "logsumexp": 2}

_TEMPLATE = r"""
extern "C" __global__ void NAME(const T* x, T* y, const long long rows,
                                const long long cols, const int mode) {
  // grid-stride over rows: one block per row; threads stride over columns
  __shared__ T sj_red[BLOCK];
  const int t = threadIdx.x;
  for (long long r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* xr = x + r * cols;
    T m = (T)(-SJ_INF);
    for (long long j = t; j < cols; j += blockDim.x) m = sj_max(m, xr[j]);
    sj_red[t] = m;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
      if (t < s) sj_red[t] = sj_max(sj_red[t], sj_red[t + s]);
      __syncthreads();
    }
    m = sj_red[0];
    __syncthreads();
    const T shift = (mode == 2 && !isfinite(m)) ? (T)0 : m;
    T acc = 0;
    for (long long j = t; j < cols; j += blockDim.x) acc += exp(xr[j] - shift);
    sj_red[t] = acc;
    __syncthreads();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
      if (t < s) sj_red[t] += sj_red[t + s];
      __syncthreads();
    }
    const T total = sj_red[0];
    __syncthreads();
    if (mode == 0) {
      for (long long j = t; j < cols; j += blockDim.x) y[r * cols + j] = exp(xr[j] - shift) / total;
    } else if (mode == 1) {
      const T lt = log(total);
      for (long long j = t; j < cols; j += blockDim.x) y[r * cols + j] = xr[j] - shift - lt;
    } else if (t == 0) {
      y[r] = log(total) + shift;
    }
  }
}
"""

_TYPES = {"float32": "float", "float64": "double"}


def row_kernel_source(dtype: Any) -> Tuple[str, str]:
    """``(name, CUDA C)`` of the row kernel for ``dtype`` (float32 or float64),
    the renderer's prelude (``sj_max``, ``SJ_INF``) included."""
    dt = np.dtype(dtype).name
    name = f"sj_row_softmax_{dt}"
    body = _TEMPLATE.replace("NAME", name).replace("BLOCK", str(BLOCK))
    return name, f"typedef {_TYPES[dt]} T;\n" + c_render.prelude("cuda") + body


#: kernel objects by (id of the CuPy module, dtype)
_OBJECTS: Dict[Tuple[int, str], Any] = {}


def _kernel(cp: Any, dtype: np.dtype) -> Any:
    key = (id(cp), dtype.name)
    k = _OBJECTS.get(key)
    if k is None:
        name, src = row_kernel_source(dtype)
        k = _OBJECTS[key] = cp.RawKernel(src, name)
    return k


def row_softmax(cp: Any, x: Any, mode: str, keepdims: bool = False) -> Any:
    """Launch the row kernel (see the module docstring) on GPU array ``x``
    (float32/float64, reduced over its last axis). Returns a GPU array:
    ``x``'s shape for softmax/log_softmax, the rows' shape for logsumexp (with
    a trailing 1 when ``keepdims``)."""
    dt = np.dtype(x.dtype)
    x = cp.ascontiguousarray(x)
    cols = int(x.shape[-1]) if x.ndim else 1
    rows = int(x.size // cols) if cols else int(np.prod(x.shape[:-1], dtype=np.int64))
    if mode == "logsumexp":
        shape = tuple(x.shape[:-1]) + ((1,) if keepdims else ())
    else:
        shape = tuple(x.shape)
    y = cp.empty(shape, dt)
    if rows == 0:
        return y
    grid = (min(rows, 65535),)
    _kernel(cp, dt)(grid, (BLOCK,), (x, y, np.int64(rows), np.int64(cols), np.int32(MODES[mode])))
    return y


#: primitive -> (mode, whether the call fits the kernel)
def _last_axis(axis: Any, ndim: int) -> bool:
    if isinstance(axis, (tuple, list)):
        if len(axis) != 1:
            return False
        axis = axis[0]
    return isinstance(axis, int) and not isinstance(axis, bool) and axis in (-1, ndim - 1)


def cuda_impls(cupy_module: Any, is_device_array: Any) -> Dict[str, Any]:
    """The CUDA implementations of the row primitives: the row kernel where the
    call fits it, else ``NotImplemented`` (the backend's generic device path)."""

    def fits(x: Any) -> bool:
        return is_device_array(x) and x.ndim >= 1 and np.dtype(x.dtype).name in _TYPES

    def softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
        if where is not None or not fits(x) or not _last_axis(axis, x.ndim):
            return NotImplemented
        return row_softmax(cupy_module(), x, "softmax")

    def log_softmax(x: Any, axis: Any = -1, where: Any = None) -> Any:
        if where is not None or not fits(x) or not _last_axis(axis, x.ndim):
            return NotImplemented
        return row_softmax(cupy_module(), x, "log_softmax")

    def logsumexp(
        a: Any, axis: Any = None, b: Any = None, keepdims: bool = False, return_sign: bool = False
    ) -> Any:
        if b is not None or return_sign or not fits(a):
            return NotImplemented
        if axis is None and a.ndim == 1:
            axis = -1
        if not _last_axis(axis, a.ndim):
            return NotImplemented
        return row_softmax(cupy_module(), a, "logsumexp", keepdims)

    def asarray(a: Any, dtype: Any = None, order: Any = None, copy: Any = None) -> Any:
        if not is_device_array(a) or order not in (None, "K", "C"):
            return NotImplemented
        return _canonical(a, dtype, copy is True)

    def array(obj: Any, dtype: Any = None, copy: bool = True, order: Any = "K", ndmin: int = 0):
        if not is_device_array(obj) or ndmin or order not in (None, "K", "C"):
            return NotImplemented
        return _canonical(obj, dtype, bool(copy))

    return {
        "nn.softmax": softmax,
        "nn.log_softmax": log_softmax,
        "special.logsumexp": logsumexp,
        "jnp.asarray": asarray,
        "jnp.array": array,
    }


def _canonical(x: Any, dtype: Any, copy: bool) -> Any:
    """``x`` (a GPU array) with JAX's canonical dtype (or ``dtype``'s)."""
    from ...dtypes import canonicalize_dtype  # noqa: PLC0415

    dt = canonicalize_dtype(x.dtype if dtype is None else dtype)
    if dt != x.dtype:
        return x.astype(dt)
    return x.copy() if copy else x


#: the primitives whose calls in host code launch the row kernel
ROW_SOFTMAX = ("nn.softmax", "nn.log_softmax", "special.logsumexp", "nn.logsumexp")
