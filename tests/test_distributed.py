"""Multi-process pmap over MPI (srcjax/distributed.py, srcjax/_spmd.py's remote groups).

The MPI tests run ``mpiexec -n 2`` on this machine, 2 CPU devices per process
(4 devices in all), and compare each collective and a data-parallel gradient
step with the same pmap over 4 devices in this one process (the oracle: the
single-process collectives, themselves checked against JAX in test_pmap.py).
They skip when mpi4py or mpiexec is missing (``pip install "srcjax[mpi]"``),
and fail instead with ``SRCJAX_REQUIRE_MPI=1`` (CI installs the extra).
"""

import importlib.util
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import srcjax
from srcjax import lax

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT_S = 240  # the whole mpiexec job; a hang fails the test instead of CI


def _mpi_missing():
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return 'mpi4py is not installed (pip install "srcjax[mpi]")'
    if shutil.which("mpiexec") is None:
        return "mpiexec is not on PATH (pip install mpich, or a system MPI)"
    return None


_MISSING = _mpi_missing()
if _MISSING and os.environ.get("SRCJAX_REQUIRE_MPI") == "1":
    raise RuntimeError(f"SRCJAX_REQUIRE_MPI=1 but {_MISSING}")
needs_mpi = pytest.mark.skipif(_MISSING is not None, reason=_MISSING or "")


def _mpiexec(script, tmp_path, n=2):
    path = tmp_path / "job.py"
    path.write_text(textwrap.dedent(script))
    env = dict(os.environ, SRCJAX_CPU_DEVICES="2", PYTHONPATH=str(ROOT), OUT=str(tmp_path))
    return subprocess.run(
        ["mpiexec", "-n", str(n), sys.executable, "-m", "mpi4py", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_S,
    )


# The programs both runs compute: each a function of one device's shard.
PROGRAMS = '''
import numpy as np
import srcjax
import srcjax.numpy as jnp
from srcjax import lax


def collectives(x, i):
    ring = [(d, (d + 1) % 4) for d in range(4)]
    px, pi = lax.ppermute((x, i), "i", [(0, 3), (3, 1), (2, 2)])  # a pytree; 0 gets zeros
    return {
        "ppermute_partial": px,
        "ppermute_partial_i": pi,
        "psum": lax.psum(x, "i"),
        "psum_int": lax.psum(i, "i"),
        "pmean": lax.pmean(x, "i"),
        "pmax": lax.pmax(x, "i"),
        "pmin": lax.pmin(x, "i"),
        "all_gather": lax.all_gather(x, "i"),
        "ppermute": lax.ppermute(x, "i", ring),
        "axis_index": lax.axis_index("i"),
        "all_to_all": lax.all_to_all(x[:4, :2], "i", 0, 1),
        "all_to_all_tiled": lax.all_to_all(
            jnp.concatenate([x[:4], x[:4]], 1)[:, :4], "i", 1, 0, tiled=True
        ),
        "psum_scatter": lax.psum_scatter(x[:4], "i"),
        "psum_scatter_tiled": lax.psum_scatter(x[:4], "i", scatter_dimension=0, tiled=True),
    }


def loss(w, x, y):
    return jnp.mean((jnp.tanh(x @ w) - y) ** 2)


def step(w, x, y):
    g = lax.pmean(srcjax.grad(loss)(w, x, y), "i")
    return w - 0.5 * g


def data():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(4, 5, 3))
    y = rng.normal(size=(4, 5))
    i = np.arange(4, dtype=np.int32) * 7 - 3
    return x, y, i


def run(lo, hi):
    """Both programs on global devices lo..hi-1 (this process's shard)."""
    x, y, i = data()
    x, y, i = x[lo:hi], y[lo:hi], i[lo:hi]
    out = srcjax.pmap(collectives, axis_name="i")(x, i)
    w = np.zeros((hi - lo, 3))
    step_p = srcjax.pmap(step, axis_name="i")
    for _ in range(3):
        w = step_p(w, x, y)
    out["w"] = w
    return {k: np.asarray(v) for k, v in out.items()}
'''


@pytest.fixture
def four_devices():
    before = srcjax.config.read("jax_num_cpu_devices")
    srcjax.config.update("jax_num_cpu_devices", 4)
    yield
    srcjax.config.update("jax_num_cpu_devices", before)


def test_single_process_defaults():
    assert srcjax.process_index() == 0
    assert srcjax.process_count() == 1
    assert srcjax.distributed.is_initialized() is False
    assert srcjax.local_devices() == srcjax.devices()
    assert srcjax.local_device_count() == srcjax.device_count()


@needs_mpi
def test_collectives_and_gradient_step_match_one_process(tmp_path, four_devices):
    (tmp_path / "mpi_programs.py").write_text(PROGRAMS)
    proc = _mpiexec(
        """
import os
import numpy as np
import srcjax
from mpi_programs import run
srcjax.distributed.initialize()
r = srcjax.process_index()
assert srcjax.process_count() == 2
assert srcjax.device_count() == 4 and srcjax.local_device_count() == 2
assert [d.process_index for d in srcjax.devices()] == [0, 0, 1, 1]
assert all(d.process_index == r for d in srcjax.local_devices())
assert [d.id for d in srcjax.devices()] == [0, 1, 2, 3]  # global ids, as JAX's
assert [d.id for d in srcjax.local_devices()] == [2 * r, 2 * r + 1]
sh = srcjax.pmap(lambda v: v)(np.ones(2)).sharding
assert sorted(d.id for d in sh.device_set) == [2 * r, 2 * r + 1], sh
np.savez(os.path.join(os.environ["OUT"], f"rank{r}.npz"), **run(2 * r, 2 * r + 2))
""",
        tmp_path,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    spec = importlib.util.spec_from_file_location("mpi_programs", tmp_path / "mpi_programs.py")
    programs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(programs)
    want = programs.run(0, 4)  # the same programs, 4 devices in this process
    got = [np.load(tmp_path / f"rank{r}.npz") for r in range(2)]
    assert set(got[0].files) == set(want)
    for k, v in want.items():
        joined = np.concatenate([g[k] for g in got])
        assert joined.dtype == v.dtype, k
        if k in ("psum", "pmean", "w", "psum_scatter", "psum_scatter_tiled"):
            # float32 sums: local first, then across processes
            np.testing.assert_allclose(joined, v, rtol=1e-6, atol=1e-7, err_msg=k)
        else:
            np.testing.assert_array_equal(joined, v, err_msg=k)
    # and the oracle itself: plain NumPy over the stacked data
    x, y, i = programs.data()
    np.testing.assert_allclose(want["psum"], np.broadcast_to(x.sum(0), x.shape), rtol=1e-6)
    np.testing.assert_array_equal(want["psum_int"], np.full(4, i.sum(), np.int32))
    np.testing.assert_array_equal(want["ppermute"], np.roll(x.astype(np.float32), 1, axis=0))
    np.testing.assert_array_equal(want["all_gather"][2], x.astype(np.float32))
    partial_x = np.zeros((4, 5, 3), np.float32)
    partial_x[[3, 1, 2]] = x.astype(np.float32)[[0, 3, 2]]
    np.testing.assert_array_equal(want["ppermute_partial"], partial_x)
    np.testing.assert_array_equal(want["ppermute_partial_i"], [0, i[3], i[2], i[0]])
    assert not np.allclose(want["w"], 0)  # the step moved the weights
    x32 = x.astype(np.float32)
    # all_to_all(split 0, concat 1): device d gets row d of every device's block, as columns
    np.testing.assert_array_equal(want["all_to_all"], np.stack([x32[:, d, :2].T for d in range(4)]))
    # tiled, split 1 into blocks of one column, concat 0: device d gets column d of each
    both = np.concatenate([x32[:, :4], x32[:, :4]], 2)[:, :, :4]
    np.testing.assert_array_equal(
        want["all_to_all_tiled"], np.stack([both[:, :, d].reshape(16, 1) for d in range(4)])
    )
    total = x32[:, :4].sum(0)  # (4, 3)
    np.testing.assert_allclose(want["psum_scatter"], total, rtol=1e-6)
    np.testing.assert_allclose(want["psum_scatter_tiled"], total[:, None], rtol=1e-6)


@needs_mpi
def test_failing_rank_ends_the_job_with_its_error(tmp_path):
    proc = _mpiexec(
        """
import numpy as np
import srcjax
from srcjax import lax
srcjax.distributed.initialize()
if srcjax.process_index() == 1:
    raise ValueError("rank one broke on purpose")
# rank 0 waits at a collective that rank 1 never joins: Abort must end it
srcjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(np.ones(2))
""",
        tmp_path,
    )
    assert proc.returncode != 0
    out = proc.stdout + proc.stderr
    assert "ValueError: rank one broke on purpose" in out
    assert "aborting the MPI job" in out


def test_initialize_without_mpi4py_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "mpi4py", None)
    with pytest.raises(ImportError, match=r"srcjax\[mpi\]"):
        srcjax.distributed.initialize()
    assert srcjax.distributed.is_initialized() is False


def test_collectives_unchanged_without_remote(four_devices):
    # the single-process path still combines in device order
    x = np.arange(4.0)
    got = srcjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(x)
    np.testing.assert_array_equal(got, np.full(4, 6.0))
