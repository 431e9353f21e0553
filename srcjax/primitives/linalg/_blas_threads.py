"""One BLAS thread for LAPACK calls on small matrices.

Some OpenBLAS LAPACK routines split even tiny problems over the BLAS worker
threads: SciPy's bundled OpenBLAS (0.3.30 in SciPy 1.17) solves an 8x8
triangular system (``trtrs``) on two threads, and ``syevd`` (``np.linalg.eigh``)
of a 30x30 matrix waits for a worker too (upstream's list of routines without a
size guard: OpenMathLib/OpenBLAS#1886). On an idle machine the workers gain
nothing at these sizes (30x30: the same median time with 1, 2 or 13 threads);
on a loaded one the caller waits for a worker the kernel has not scheduled yet.
Measured on a 2-core machine at load 9-11, 30x30 ``solve_triangular``: 98th
percentile 17-36 ms with 2 threads, 10 us with 1; the fresh user's
``jit(grad(cholesky))`` alternated 60 us and 30-48 ms for that reason
(docs/issues/fresh-user-round5-2026-12-06.md, item 04).

:func:`call_small` runs such a call with one thread when its work is small,
through threadpoolctl (the library scikit-learn and SciPy use to control BLAS
pools; an optional dependency: without it calls run as they are). The limit is
set and restored around the one call (1-2 us), and only where the call is
small. GEMMs are left alone: OpenBLAS keeps tiny ones on one
thread itself, and larger ones gain from the threads on an idle machine (see
docs/blas-threads.md for the trade-off and the knobs a user has).
"""

from __future__ import annotations

import os
import sys
import threading

#: work (rows * rows * right-hand sides, or n**3 for a decomposition) up to which a
#: call runs on one BLAS thread: 64**3, OpenBLAS's own single-thread limit for
#: gemm (m*n*k below 65536 * 4) and, upstream, for trtrs (m < 64)
SMALL_WORK = 64**3

_FOUND: dict = {}  # package name -> its BLAS controllers (found once)


def _controllers(package: str) -> list:
    """threadpoolctl's controllers of the BLAS library that ``package`` ("numpy"
    or "scipy", already imported) calls: the loaded BLAS libraries inside its
    installed folder (the wheels bundle their own OpenBLAS), else all loaded
    BLAS libraries (one shared library, as conda installs them). Found once per
    package; ``[]`` without threadpoolctl."""
    found = _FOUND.get(package)
    if found is None:
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            found = []
        else:
            libs = ThreadpoolController().select(user_api="blas").lib_controllers
            root = os.path.realpath(os.path.dirname(sys.modules[package].__file__))
            own = [c for c in libs if os.path.realpath(c.filepath).startswith(root)]
            found = own or list(libs)
        _FOUND[package] = found
    return found


def call_small(package: str, work: int, fn, *args, small: int = SMALL_WORK, **kwargs):
    """``fn(*args, **kwargs)``, a LAPACK routine of ``package`` ("numpy" or
    "scipy"), with that package's BLAS limited to one thread for the call when
    ``work`` is at most ``small`` (:data:`SMALL_WORK`; einsum's paths pass their
    own). The previous thread count is restored afterwards, also when ``fn``
    raises."""
    if work > small:
        return fn(*args, **kwargs)
    limited = []
    for c in _controllers(package):
        n = c.get_num_threads()
        if n is not None and n > 1:
            c.set_num_threads(1)
            limited.append((c, n))
    if not limited:
        return fn(*args, **kwargs)
    try:
        return fn(*args, **kwargs)
    finally:
        for c, n in limited:
            c.set_num_threads(n)
        # threadpoolctl lets one Python thread at a time control OpenBLAS's shared
        # pool, the first to set it (usually the main thread, which may keep it).
        # Another thread gives control back, so that limits the user sets in
        # other threads keep working. (In the main thread that would cost 2-4 us
        # per call: control is taken again on the next call.)
        if threading.current_thread() is not threading.main_thread():
            for c, _ in limited:
                clear = getattr(type(c), "clear_controlling_thread", None)
                if clear is not None:
                    clear()
