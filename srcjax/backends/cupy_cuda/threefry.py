"""A RawKernel for ``srcjax.random`` on a device key: threefry2x32 random bits.

``random.bits`` (uint32, uint64) and ``random.uniform`` (float32, scalar
bounds) with a raw key (uint32 ``(2,)``) on the GPU and JAX's default
partitionable counter layout run as one kernel that computes each output
word from its index: word ``i`` is threefry2x32-20 of the counter ``(i >> 32,
i & 0xffffffff)`` under the key, then ``y0 ^ y1`` (32 bits), ``y0 << 32 | y1``
(64 bits) or ``max(lo, fma((y0 ^ y1 >> 9 | 0x3f800000) - 1, hi - lo, lo))`` in
float32 (uniform) -- bit for bit what :mod:`srcjax.random._threefry` computes on
the host (``../shared/prng/SPEC.md``; tested against it).

**Launch configuration.** ``block = (256,)``, ``grid = (min(ceil(n / 256),
65535),)``; a grid-stride loop covers any ``n`` (and the offline harness's single
block on the CPU). Other calls (typed keys, the legacy layout, array bounds,
other dtypes) return ``NotImplemented``: the backend's generic device path.
"""

from __future__ import annotations

from typing import Any, Dict, Tuple

import numpy as np

from ...config import config

__all__ = ["SOURCE", "NAME", "cuda_impls", "BLOCK"]

BLOCK = 256
NAME = "sj_threefry2x32_bits"

_ROUNDS = ((13, 15, 26, 6), (17, 29, 16, 24))


def _source() -> str:
    lines = [
        "#define SJ_ROTL(v, r) (((v) << (r)) | ((v) >> (32 - (r))))",
        f'extern "C" __global__ void {NAME}(const unsigned int* key, unsigned int* out32,',
        "    unsigned long long* out64, float* outf, const long long n, const int mode,",
        "    const float lo, const float hi) {",
        "  // mode 0: 32-bit words, 1: 64-bit words, 2: uniform float32 in [lo, hi)",
        "  const unsigned int k0 = key[0], k1 = key[1], k2 = k0 ^ k1 ^ 0x1BD11BDAu;",
        "  const unsigned int ks[3] = {k0, k1, k2};",
        "  for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < n;",
        "       i += (long long)blockDim.x * gridDim.x) {",
        "    unsigned int a = (unsigned int)((unsigned long long)i >> 32) + k0;",
        "    unsigned int b = (unsigned int)((unsigned long long)i & 0xFFFFFFFFull) + k1;",
    ]
    for s in range(1, 6):
        for r in _ROUNDS[0] if s % 2 else _ROUNDS[1]:
            lines.append(f"    a += b; b = SJ_ROTL(b, {r}); b ^= a;")
        lines.append(f"    a += ks[{s % 3}]; b += ks[{(s + 1) % 3}] + {s}u;")
    lines += [
        "    if (mode == 0) {",
        "      out32[i] = a ^ b;",
        "    } else if (mode == 1) {",
        "      out64[i] = ((unsigned long long)a << 32) | b;",
        "    } else {",
        "      const float f = __uint_as_float(((a ^ b) >> 9) | 0x3F800000u) - 1.0f;",
        "      const float v = fmaf(f, hi - lo, lo);",
        "      outf[i] = (v > lo || v != v) ? v : lo;  // max(lo, v), NaN propagating",
        "    }",
        "  }",
        "}",
    ]
    return "\n".join(lines) + "\n"


#: the kernel's CUDA C
SOURCE = _source()

_OBJECTS: Dict[int, Any] = {}


def _launch(cp: Any, key: Any, n: int, mode: int, dtype: Any, lo: float = 0.0, hi: float = 1.0):
    out = cp.empty((n,), dtype)
    if n == 0:
        return out
    k = _OBJECTS.get(id(cp))
    if k is None:
        k = _OBJECTS[id(cp)] = cp.RawKernel(SOURCE, NAME)
    grid = (min(-(-n // BLOCK), 65535),)
    args = (key, out, out, out, np.int64(n), np.int32(mode), np.float32(lo), np.float32(hi))
    k(grid, (BLOCK,), args)
    return out


def _shape(shape: Any) -> Tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (int(shape),)
    return tuple(int(d) for d in shape)


def cuda_impls(cupy_module: Any, is_device_array: Any) -> Dict[str, Any]:
    """CUDA implementations of ``random.bits`` and ``random.uniform`` (see the
    module docstring); ``NotImplemented`` where a call does not fit the kernel."""

    def raw_key(key: Any) -> bool:
        return (
            is_device_array(key)
            and tuple(key.shape) == (2,)
            and np.dtype(key.dtype) == np.uint32
            and bool(config.read("jax_threefry_partitionable"))
        )

    def bits(key: Any, shape: Any = (), dtype: Any = None) -> Any:
        if not raw_key(key):
            return NotImplemented
        d = np.dtype("uint64" if config.x64_enabled else "uint32") if dtype is None else None
        d = d if d is not None else np.dtype(dtype)
        if d not in (np.uint32, np.uint64):
            return NotImplemented
        shp = _shape(shape)
        n = int(np.prod(shp, dtype=np.int64))
        mode = 0 if d == np.uint32 else 1
        return _launch(cupy_module(), key, n, mode, d).reshape(shp)

    def uniform(
        key: Any, shape: Any = (), dtype: Any = float, minval: Any = 0.0, maxval: Any = 1.0
    ) -> Any:
        if not raw_key(key) or config.x64_enabled:
            return NotImplemented
        if dtype not in (float, np.float32, "float32") and np.dtype(dtype) != np.float32:
            return NotImplemented
        if not all(isinstance(v, (int, float, np.floating, np.integer)) for v in (minval, maxval)):
            return NotImplemented
        shp = _shape(shape)
        n = int(np.prod(shp, dtype=np.int64))
        lo, hi = np.float32(minval), np.float32(maxval)
        return _launch(cupy_module(), key, n, 2, np.float32, lo, hi).reshape(shp)

    return {"random.bits": bits, "random.uniform": uniform}
