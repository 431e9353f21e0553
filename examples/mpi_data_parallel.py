"""Data-parallel training over MPI processes: each process holds a shard of the
batch on its local devices, and ``pmean`` averages the gradients over all of
them (local devices first, then the processes with MPI ``Allreduce``).

Run (2 processes, 2 CPU devices each, 4 devices in all)::

    pip install "srcjax[mpi]"
    SRCJAX_CPU_DEVICES=2 mpiexec -n 2 python -m mpi4py examples/mpi_data_parallel.py

Without mpiexec it runs in one process on its local devices. It prints the
loss after each step (process 0 only) and the final weights.
"""

import sys

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

srcjax.distributed.initialize()


def loss(w, x, y):
    return jnp.mean((x @ w - y) ** 2)


def step(w, x, y):
    """One SGD step on this device's shard; the gradient averaged over all devices."""
    g = srcjax.grad(loss)(w, x, y)
    g = lax.pmean(g, "batch")
    return w - 0.1 * g, lax.pmean(loss(w, x, y), "batch")


def batch(n_devices, per_device=8, features=3, seed=0):
    """The whole data set (identical in every process), one shard per global device."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n_devices, per_device, features)).astype(np.float32)
    w_true = np.arange(1.0, features + 1.0, dtype=np.float32)
    return x, (x @ w_true).astype(np.float32)


def main(steps=20):
    n_local = srcjax.local_device_count()
    x, y = batch(srcjax.device_count())
    mine = slice(srcjax.process_index() * n_local, (srcjax.process_index() + 1) * n_local)
    x, y = x[mine], y[mine]  # this process feeds its local devices
    w = np.zeros((n_local, 3), np.float32)  # replicated per local device
    train = srcjax.pmap(step, axis_name="batch")
    for i in range(steps):
        w, value = train(w, x, y)
        if srcjax.process_index() == 0:
            print(f"step {i}: loss {float(value[0]):.5f}")
    return w[0]


if __name__ == "__main__":
    w = main()
    # one write per line (print writes the text and the newline separately, and the
    # ranks share the terminal: their lines would interleave)
    line = f"process {srcjax.process_index()}/{srcjax.process_count()}: w = {np.round(w, 4)}"
    sys.stdout.write(line + "\n")
    sys.stdout.flush()
