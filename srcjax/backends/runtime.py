"""Run-time helpers called by jit-generated CPU code (bound as ``_rt``).

Generated code stays readable NumPy; the few mechanics that would clutter it
live here:

- :func:`run_chunked` runs a fused region over cache-sized chunks of its
  operands, spread over a thread pool sized to the cores (NumPy releases the
  GIL inside ufunc loops, so the threads run in parallel). Each thread keeps
  its own scratch buffers (thread-local, reused across calls), so a chain of n
  operations makes no temporary the size of the input. Reductions return one
  partial per chunk; partials are combined in chunk order, so results do not
  depend on thread timing.
- :func:`empty` allocates outputs from a small buffer pool: a large buffer whose
  last user array died is handed out again instead of asking the kernel for
  fresh pages (on the reference machine, page faults on a fresh 400 MB output
  cost about as much as the arithmetic; see ``shared/anchors/RESULTS.md``, W6).
- :func:`donated` reuses a donated argument's buffer for an output.

Measured choices (AMD EPYC, 2 cores, numpy 2.4, ``x*x*x`` on 1e8 float32,
see ``tools/bench.py``): 512 KiB chunks beat 32 KiB ones (19 ms vs 31 ms with
2 threads) and 4 MiB ones (31 ms); one contiguous block of chunks per thread
beats an interleaved or dynamic schedule; smaller regions run as plain NumPy (see :data:`CHUNK_MIN_ELEMENTS`).
With many threads the chunks grow (see :func:`default_chunk_bytes`): every NumPy call
in a chunk takes and releases the GIL, and with 16 threads those hand-offs, not the
memory, set the pace of small chunks.
"""

from __future__ import annotations

import os
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, List, Optional, Sequence

import numpy as np

from .. import _spmd as spmd

__all__ = [
    "run_chunked",
    "combine_centered",
    "empty",
    "donated",
    "clear_pool",
    "CHUNK_BYTES",
    "CHUNK_MIN_ELEMENTS",
    "NUM_THREADS",
]

#: regions with fewer elements run unchunked (plain NumPy); a region of cheap
#: operations only (+, -, *, comparisons ...) needs CHUNK_MIN_ELEMENTS_CHEAP.
#: Measured (x*x*x and GELU, float32, 2 cores): below 2^21 elements NumPy's own
#: passes run from L2/L3 and chunking only adds thread hand-offs (GELU 2^20:
#: 0.78 ms plain, 0.81 ms chunked; 2^22: 9.0 ms plain, 3.8 ms chunked); a
#: cheap chain such as x*x*x wins only once the data outgrows the L3 cache
#: (2^22: 1.0 ms plain, 1.4 ms chunked; 2^24: 8.3 ms plain, 5.5 ms chunked).
CHUNK_MIN_ELEMENTS = int(os.environ.get("SRCJAX_CHUNK_MIN", 1 << 21))
CHUNK_MIN_ELEMENTS_CHEAP = int(os.environ.get("SRCJAX_CHUNK_MIN_CHEAP", 1 << 23))


def _usable_cores() -> int:
    """Cores this process may run on (its affinity mask where the OS has one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


#: worker threads, including the calling thread
NUM_THREADS = max(1, int(os.environ.get("SRCJAX_NUM_THREADS", 0)) or _usable_cores())


def default_chunk_bytes(nthreads: int) -> int:
    """Bytes of one chunk of an operand for ``nthreads`` worker threads.

    512 KiB up to 4 threads, then growing with the thread count (1 MiB for 8,
    2 MiB for 16), at most 4 MiB. Measured with ``SRCJAX_CHUNK_BYTES`` swept over
    256 KiB .. 8 MiB (jit of W1 ``x*x*x`` on 1e8, W2 GELU on 1e7, W7 centered sum
    of squares on 1e8 float32):

    - AMD EPYC, 2 cores, 1 MiB L2 each: 512 KiB best (W1 19 ms vs 31 ms at 4 MiB).
    - Intel Xeon, 16 cores, 2 MiB L2 each, 300 MiB L3 (numpy 2.5, Python 3.12):
      with 16 threads 2 MiB beat 512 KiB (W1 24 vs 34 ms, W2 8.9 vs 16 ms, W7 22
      vs 53 ms; 8 MiB was slower again); with 2 to 8 threads 512 KiB to 1 MiB
      were best. The bigger chunks pay for fewer GIL hand-offs per byte.
    """
    return min(4 << 20, (512 * 1024) * max(1, nthreads // 4))


#: bytes of one scratch buffer per chunk (a chunk of each operand fits in L2)
CHUNK_BYTES = int(os.environ.get("SRCJAX_CHUNK_BYTES", 0)) or default_chunk_bytes(NUM_THREADS)
#: output buffers at least this large come from the pool
POOL_MIN_BYTES = 1 << 22
#: the pool holds at most this many bytes of idle buffers
POOL_MAX_BYTES = int(os.environ.get("SRCJAX_POOL_BYTES", 4 << 30))

_executor: Optional[ThreadPoolExecutor] = None
_executor_lock = threading.Lock()
_local = threading.local()


def _pool_executor() -> ThreadPoolExecutor:
    global _executor
    if _executor is None:
        with _executor_lock:
            if _executor is None:
                _executor = ThreadPoolExecutor(
                    max_workers=max(1, NUM_THREADS - 1), thread_name_prefix="srcjax-cpu"
                )
    return _executor


def _scratch(specs: Sequence[tuple]) -> List[np.ndarray]:
    """This thread's scratch buffers for ``specs`` = [(shape, dtype), ...]."""
    cache = getattr(_local, "scratch", None)
    if cache is None:
        cache = _local.scratch = {}
    out = []
    seen: dict = {}
    for shape, dtype in specs:
        key = (shape, np.dtype(dtype).str)
        i = seen.get(key, 0)
        seen[key] = i + 1
        bufs = cache.setdefault(key, [])
        while len(bufs) <= i:
            bufs.append(np.empty(shape, dtype))
        out.append(bufs[i])
    return out


def run_chunked(
    region: Callable[..., Any],
    n: int,
    chunk: int,
    scratch: Sequence[Any] = (),
    row: tuple = (),
    reduce: Optional[str] = None,
    dtype: Any = None,
    count: int = 0,
) -> Any:
    """Call ``region(lo, hi, *scratch_slices)`` for chunks ``[lo, hi)`` of ``range(n)``.

    ``n`` counts rows of the flattened (``row == ()``) or row-chunked operands;
    each scratch buffer has shape ``(chunk,) + row`` and dtype from ``scratch``.
    With ``reduce`` ("sum", "mean", "max", "min"), ``region`` returns a partial
    per chunk and the combined value (of ``dtype``) is returned; ``mean``
    divides the sum by ``count``. Sums combine float32 partials pairwise, as
    ``np.sum`` does, so the accuracy is NumPy's.
    """
    nchunks = (n + chunk - 1) // chunk
    specs = [((chunk,) + tuple(row), d) for d in scratch]
    parts: List[Any] = [None] * nchunks

    def work(first: int, last: int) -> None:
        bufs = _scratch(specs)
        for c in range(first, last):
            lo = c * chunk
            hi = min(n, lo + chunk)
            m = hi - lo
            if m == chunk:
                parts[c] = region(lo, hi, *bufs)
            else:
                parts[c] = region(lo, hi, *[b[:m] for b in bufs])

    nthreads = min(spmd.threads(NUM_THREADS), nchunks)  # (a pmap device: its share)
    if nthreads <= 1:
        work(0, nchunks)
    else:
        bounds = [nchunks * i // nthreads for i in range(nthreads + 1)]
        ex = _pool_executor()
        futures = [ex.submit(work, bounds[i], bounds[i + 1]) for i in range(1, nthreads)]
        work(bounds[0], bounds[1])
        for f in futures:
            f.result()
    if reduce is None:
        return None
    if reduce == "centered":
        return combine_centered(parts, n, chunk, dtype)
    return combine(parts, reduce, dtype, count)


def combine(parts: List[Any], reduce: str, dtype: Any, count: int = 0) -> Any:
    """Combine per-chunk partial reductions (in chunk order)."""
    dt = np.dtype(dtype)
    if reduce in ("sum", "mean"):
        acc = np.asarray(parts, dtype=dt if reduce == "sum" else np.result_type(*parts))
        total = np.sum(acc)  # pairwise over the partials, like np.sum over the data
        if reduce == "mean":
            total = total / count
        return dt.type(total)
    if reduce == "max":
        return dt.type(np.max(np.asarray(parts)))
    if reduce == "min":
        return dt.type(np.min(np.asarray(parts)))
    raise ValueError(f"unknown reduction {reduce!r}")


def combine_centered(parts: List[Any], n: int, chunk: int, dtype: Any) -> tuple:
    """``(mean, sum((x - mean)**2))`` from per-chunk ``(sum, mean, sum of squared
    deviations from the chunk's mean)``, so both come from one read of ``x``.

    ``mean`` is combined exactly as the ``"mean"`` reduction combines it (pairwise
    over the chunk sums, in ``dtype``), so it equals the two-pass program's mean.
    The squared deviations from that mean follow from each chunk's by the
    parallel-variance identity (Chan, Golub & LeVeque, "Algorithms for computing
    the sample variance", 1983): for a chunk of ``n_c`` values with mean ``m_c``,
    ``sum((x - a)**2) = sum((x - m_c)**2) + 2 (m_c - a) sum(x - m_c) + n_c (m_c - a)**2``;
    the correction terms are evaluated in float64 (``sum(x - m_c)`` is the
    rounding left in ``m_c``: ``s_c - n_c m_c``).
    """
    dt = np.dtype(dtype)
    sums = np.array([p[0] for p in parts], dtype=dt)
    mean = dt.type(np.sum(sums) / n)
    a = float(mean)
    total = 0.0
    corr = 0.0
    for c, (s_c, m_c, q_c) in enumerate(parts):
        n_c = min(chunk, n - c * chunk)
        d = float(m_c) - a
        total += float(q_c)
        corr += n_c * d * d + 2.0 * d * (float(s_c) - n_c * float(m_c))
    return mean, dt.type(total + corr)


# ---------------------------------------------------------------------------- buffer pool
_pool: List[np.ndarray] = []
_pool_lock = threading.Lock()


def empty(shape: tuple, dtype: Any) -> np.ndarray:
    """``np.empty(shape, dtype)``, from the pool for large buffers.

    A pooled buffer is handed out again once no array refers to it any more
    (its reference count drops back to the pool's own references), so a jitted
    function called in a loop writes its output into warm, already-mapped
    memory. :func:`clear_pool` returns the memory to the system.
    """
    dt = np.dtype(dtype)
    size = 1
    for d in shape:
        size *= d
    nbytes = size * dt.itemsize
    if nbytes < POOL_MIN_BYTES:
        return np.empty(shape, dt)
    place = spmd.take_place(tuple(shape), dt)  # (a pmap device: its row of the output)
    if place is not None:
        return place
    with _pool_lock:
        for buf in _pool:
            # references: the pool list, `buf`, and getrefcount's argument
            if buf.nbytes == nbytes and sys.getrefcount(buf) <= 3:
                return buf.view(dt).reshape(shape)
        buf = np.empty(nbytes, np.uint8)
        _pool.append(buf)
        _trim()
    return buf.view(dt).reshape(shape)


def _trim() -> None:
    idle = [b for b in _pool if sys.getrefcount(b) <= 3]
    total = sum(b.nbytes for b in idle)
    while idle and total > POOL_MAX_BYTES:
        b = idle.pop(0)
        total -= b.nbytes
        _pool.remove(b)


def clear_pool() -> None:
    """Forget every pooled buffer (memory in use by live arrays stays valid)."""
    with _pool_lock:
        _pool.clear()


def pool_bytes() -> int:
    with _pool_lock:
        return sum(b.nbytes for b in _pool)


def donated(x: Any, shape: tuple, dtype: Any) -> np.ndarray:
    """``x`` itself when its buffer can hold the output (a writeable, C-contiguous
    ndarray of exactly ``shape`` and ``dtype``), else a fresh buffer."""
    if (
        type(x) is np.ndarray
        and x.shape == tuple(shape)
        and x.dtype == dtype
        and x.flags.c_contiguous
        and x.flags.writeable
    ):
        return x
    return empty(shape, dtype)
