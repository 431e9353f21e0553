"""Multi-process SPMD over MPI (``jax.distributed``): one process per MPI rank.

Under ``mpiexec -n P python script.py``, :func:`initialize` reads
``MPI.COMM_WORLD`` (mpi4py): process ``r`` of ``P`` owns its local CPU devices
(``srcjax.local_devices()``, as many as ``jax_num_cpu_devices`` says, the same
number in every process), and ``srcjax.devices()`` lists the devices of all
processes. ``pmap`` then spans the global devices: each process calls the
mapped function with its own shard (the mapped axis as long as its local device
count), and the collectives combine the local devices first (threads,
:mod:`srcjax._spmd`), then the processes with MPI buffer-protocol calls on
NumPy arrays (``Allreduce`` for ``psum``/``pmean``/``pmax``/``pmin``/``psum_scatter``,
``Sendrecv`` for ``ppermute``, ``Alltoall`` for ``all_to_all``, ``Allgather`` for
``all_gather`` and the rest), never pickling
arrays. Every process must call the same pmaps and collectives in the same
order, with the same shapes and dtypes, as in JAX.

An uncaught exception in any process prints its traceback and calls
``MPI.COMM_WORLD.Abort(1)``, so the job ends with that error instead of the
other ranks waiting at their next collective forever.

Install: ``pip install "srcjax[mpi]"`` (mpi4py and the MPICH wheel), or
mpi4py built against Open MPI / a cluster's own MPI.

Semantics: https://docs.jax.dev/en/latest/multi_process.html
"""

from __future__ import annotations

import sys
import time
import traceback
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from .backends import _devices

__all__ = ["initialize", "shutdown", "is_initialized", "process_index", "process_count"]

_COMM: Any = None


def initialize(
    coordinator_address: Optional[str] = None,
    num_processes: Optional[int] = None,
    process_id: Optional[int] = None,
    **kwargs: Any,
) -> None:
    """Join the MPI job this process runs in (``jax.distributed.initialize``).

    The process count and index come from ``MPI.COMM_WORLD``; JAX's
    ``coordinator_address``/``num_processes``/``process_id`` are accepted, and
    when given must agree with MPI's. Installs an exception hook that aborts
    the whole job on an uncaught exception. Calling it twice is a RuntimeError,
    as in JAX.

    Raises:
        ImportError: mpi4py is not installed (``pip install "srcjax[mpi]"``).
        RuntimeError: already initialized.
        ValueError: ``num_processes``/``process_id`` disagree with MPI's.
    """
    global _COMM
    del coordinator_address, kwargs
    if _COMM is not None:
        raise RuntimeError("distributed.initialize should only be called once.")
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ImportError(
            'srcjax.distributed.initialize needs mpi4py: pip install "srcjax[mpi]" (or mpi4py '
            "built against Open MPI or your cluster's MPI), then run under mpiexec"
        ) from e
    comm = MPI.COMM_WORLD
    if num_processes is not None and int(num_processes) != comm.Get_size():
        raise ValueError(f"num_processes={num_processes}, but MPI runs {comm.Get_size()}")
    if process_id is not None and int(process_id) != comm.Get_rank():
        raise ValueError(f"process_id={process_id}, but this is MPI rank {comm.Get_rank()}")
    _COMM = _Remote(comm, MPI)
    _devices.set_processes(_COMM.rank, _COMM.size)
    previous = sys.excepthook

    def abort_on_error(kind: Any, value: Any, tb: Any) -> None:
        text = "".join(traceback.format_exception(kind, value, tb))
        sys.stderr.write(f"srcjax: process {comm.Get_rank()} failed; aborting the MPI job\n{text}")
        sys.stderr.flush()
        # (let mpiexec's proxy forward the message before Abort kills the job: under
        # load the traceback was lost in the pipe, and the job ended without its error)
        time.sleep(0.5)
        comm.Abort(1)
        previous(kind, value, tb)  # pragma: no cover (Abort does not return)

    sys.excepthook = abort_on_error


def shutdown() -> None:
    """Forget the MPI job (``jax.distributed.shutdown``); MPI itself finalizes at exit."""
    global _COMM
    _COMM = None
    _devices.set_processes(0, 1)


def is_initialized() -> bool:
    """Whether :func:`initialize` has run (``jax.distributed.is_initialized``)."""
    return _COMM is not None


def process_index() -> int:
    """This process's index, 0 to ``process_count() - 1`` (``jax.process_index``)."""
    return 0 if _COMM is None else _COMM.rank


def process_count() -> int:
    """The number of processes (``jax.process_count``): 1 unless initialized under MPI."""
    return 1 if _COMM is None else _COMM.size


def _contiguous(a: np.ndarray) -> np.ndarray:
    """``a`` as a C-contiguous buffer for MPI (0-d stays 0-d)."""
    a = np.asarray(a)
    return a if a.flags.c_contiguous else a.copy()


def remote() -> Optional["_Remote"]:
    """The cross-process communicator for pmap's groups, or None in one process."""
    return _COMM if _COMM is not None and _COMM.size > 1 else None


class _Remote:
    """The processes of an MPI communicator, combining NumPy arrays with
    buffer-protocol calls (called by one thread of each process at a time)."""

    def __init__(self, comm: Any, mpi: Any) -> None:
        self.comm = comm
        self.mpi = mpi
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()

    def allgather(self, local: np.ndarray) -> np.ndarray:
        """``local`` of every process stacked on a new leading axis (``Allgather``)."""
        local = _contiguous(local)
        out = np.empty((self.size,) + local.shape, local.dtype)
        self.comm.Allgather(local, out)
        return out

    def allreduce(self, local: np.ndarray, how: str) -> np.ndarray:
        """``local`` combined over the processes (``Allreduce`` with SUM/MAX/MIN)."""
        op = {"sum": self.mpi.SUM, "max": self.mpi.MAX, "min": self.mpi.MIN}[how]
        local = _contiguous(local)
        out = np.empty_like(local)
        if local.dtype == np.bool_:  # (MPI has no bool reductions: as bytes)
            self.comm.Allreduce(local.view(np.uint8), out.view(np.uint8), op=op)
        else:
            self.comm.Allreduce(local, out, op=op)
        return out

    def exchange(self, local_values: List[Any]) -> List[Any]:
        """Every device's value, in global device order, from this process's
        devices' ``local_values`` (pytrees of one structure, shapes and dtypes
        in every process): one ``Allgather`` per leaf of the stacked values."""
        from .tree_util import tree_flatten, tree_unflatten

        flat = [tree_flatten(v) for v in local_values]
        treedef = flat[0][1]
        total = self.size * len(local_values)
        columns = []
        for j in range(len(flat[0][0])):
            leaves = [f[0][j] for f in flat]
            got = self.allgather(np.stack([np.asarray(v) for v in leaves]))
            got = got.reshape((total,) + got.shape[2:])
            kind = type(leaves[0])
            columns.append([kind(g) for g in got] if kind in (int, float, bool) else list(got))
        return [tree_unflatten(treedef, [c[d] for c in columns]) for d in range(total)]

    def alltoall(self, local_blocks: List[np.ndarray]) -> List[np.ndarray]:
        """``all_to_all`` over the processes: ``local_blocks[l]`` (local device
        ``l``'s blocks, one per global device, stacked: shape ``(n, ...)``) ->
        for each local device, the blocks sent to it by every global device, in
        global device order (stacked likewise). One ``Alltoall``: process ``q``
        receives, from every local device, the blocks of ``q``'s devices."""
        local = len(local_blocks)
        stacked = np.stack([np.asarray(b) for b in local_blocks])  # (src, n, ...)
        shape = stacked.shape[2:]
        # (dst process, src local device, dst local device, ...): one row per process
        send = np.ascontiguousarray(
            np.swapaxes(stacked.reshape((local, self.size, local) + shape), 0, 1)
        )
        recv = np.empty_like(send)  # (src process, src local device, dst local device, ...)
        self.comm.Alltoall(send, recv)
        return [recv[:, :, d].reshape((self.size * local,) + shape) for d in range(local)]

    def permute(self, local_values: List[Any], perm: List[Tuple[int, int]]) -> Dict[int, Any]:
        """``ppermute`` over the processes: for each ``(src, dst)`` of ``perm``
        (global device indices) with ``dst`` on this process, ``dst`` -> the value
        of ``src``. Local pairs are looked up; for each process distance ``k``
        one ``Sendrecv`` per leaf sends to rank + k what its devices receive and
        receives from rank - k (message sizes follow from ``perm`` on both sides)."""
        from .tree_util import tree_flatten, tree_unflatten

        n = len(local_values)
        off = self.rank * n
        flat = [tree_flatten(v) for v in local_values]
        treedef = flat[0][1]
        kinds = [type(leaf) for leaf in flat[0][0]]
        leaves = [[np.asarray(leaf) for leaf in f[0]] for f in flat]
        got: Dict[int, List[Any]] = {}
        for s, d in perm:
            if d // n == self.rank and s // n == self.rank:
                got[d] = list(leaves[s - off])
        for k in range(1, self.size):
            to, frm = (self.rank + k) % self.size, (self.rank - k) % self.size
            send = [s for s, d in perm if s // n == self.rank and d // n == to]
            recv = [d for s, d in perm if s // n == frm and d // n == self.rank]
            for j, like in enumerate(leaves[0]):
                if send:
                    out = np.stack([leaves[s - off][j] for s in send])
                else:
                    out = np.empty((0,) + like.shape, like.dtype)
                into = np.empty((len(recv),) + like.shape, like.dtype)
                self.comm.Sendrecv(out, dest=to, sendtag=j, recvbuf=into, source=frm, recvtag=j)
                for d, row in zip(recv, into):
                    got.setdefault(d, [None] * len(leaves[0]))[j] = row
        return {
            d: tree_unflatten(
                treedef,
                [kind(v) if kind in (int, float, bool) else v for kind, v in zip(kinds, ls)],
            )
            for d, ls in got.items()
        }

    def reduce(self, local: Any, how: str) -> Any:
        """The pytree ``local`` (this process's devices already combined) combined
        over the processes leaf by leaf (``Allreduce``)."""
        from .tree_util import tree_map

        def one(leaf: Any) -> Any:
            out = self.allreduce(np.asarray(leaf), how)
            if type(leaf) in (int, float, bool):
                return type(leaf)(out)
            return out[()] if isinstance(leaf, np.generic) else out

        return tree_map(one, local)
