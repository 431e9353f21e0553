"""Every example runs, as a user would run it, and prints what it promises."""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")

# Each example file has a test below; adding an example means adding its check.
CHECKED = {
    "seed_grad.py",
    "seed_jit.py",
    "seed_vmap.py",
    "train_digits.py",
    "stax_digits.py",
    "per_example_clipping.py",
    "newton.py",
    "ode_adaptive.py",
    "ode_adjoint.py",
    "fixed_point.py",
    "gp_regression.py",
    "seed_pmap.py",
    "data_parallel_digits.py",
    "mpi_data_parallel.py",
}


def run_example(name, *args, cwd=None, timeout=300):
    env = dict(os.environ)
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    env["MPLBACKEND"] = "Agg"
    r = subprocess.run(
        [sys.executable, os.path.join(EXAMPLES, name), *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd or ROOT,
        timeout=timeout,
    )
    assert r.returncode == 0, f"{name} failed:\n{r.stdout}\n{r.stderr}"
    return r.stdout


def test_every_example_is_checked():
    found = {f for f in os.listdir(EXAMPLES) if f.endswith(".py")}
    assert found == CHECKED, f"examples without a test (or stale entries): {found ^ CHECKED}"


def test_seed_grad():
    out = run_example("seed_grad.py")
    m = re.search(r"grad\(logistic\)\(1\.0\) = ([0-9.]+)", out)
    assert m, out
    # d/dx 1/(1+exp(-x)) at 1 = s(1)(1 - s(1)) = 0.19661193324...; float32 rounding
    # moves the 8th digit (0.19661193/4 by operation order; JAX prints 0.19661197).
    assert abs(float(m.group(1)) - 0.19661193324148185) < 1e-6


def test_seed_grad_show():
    out = run_example("seed_grad.py", "--show")
    assert "def " in out
    assert "x_bar" in out
    assert "grad(logistic)(1.0) = 0.196611" in out


def test_seed_jit():
    out = run_example("seed_jit.py", "--n", "1000", "--show")
    assert "def cube_jit(x):" in out
    assert re.search(r"cube\(x\):\s+[0-9.]+ ms", out), out
    assert re.search(r"jit_cube\(x\):\s+[0-9.]+ ms", out), out  # timings printed, not asserted


def test_seed_vmap():
    out = run_example("seed_vmap.py", "--batch", "32", "--show")
    assert "def loss_grad_vmap(" in out
    m = re.search(r"max abs difference to a Python loop of grad: ([0-9.e+-]+)", out)
    assert m, out
    assert float(m.group(1)) < 1e-4


def test_train_digits(tmp_path):
    out = run_example("train_digits.py", "--out", str(tmp_path), "--no-progress", cwd=tmp_path)
    lines = out.strip().splitlines()
    assert re.search(r"epoch\s+1\s+train loss", out), out
    m = re.fullmatch(r"test accuracy: ([0-9.]+)", lines[-1])
    assert m, lines[-1]
    assert float(m.group(1)) >= 0.95, out
    png = tmp_path / "loss_curve.png"
    if importlib.util.find_spec("matplotlib") is not None:
        assert png.exists() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    else:
        assert "no loss curve" in out


def _number(pattern, out):
    m = re.search(pattern, out)
    assert m, out
    return float(m.group(1))


def test_stax_digits(tmp_path):
    # small settings: 2 epochs on 600 images (the full run reaches >= 0.97)
    out = run_example(
        "stax_digits.py",
        *("--epochs", "2", "--train-size", "600", "--out", str(tmp_path), "--no-progress"),
        cwd=tmp_path,
    )
    assert "(1 specialization of the step)" in out
    assert _number(r"test accuracy: ([0-9.]+)", out) >= 0.8, out
    if importlib.util.find_spec("matplotlib") is not None:
        assert (tmp_path / "stax_loss_curve.png").read_bytes()[:4] == b"\x89PNG"


def test_stax_digits_show():
    out = run_example("stax_digits.py", "--epochs", "1", "--train-size", "64", "--show")
    assert "def update_jit(i, opt_state, batch):" in out


def test_per_example_clipping():
    out = run_example("per_example_clipping.py", "--steps", "60")
    assert _number(r"a Python loop of grad: max abs difference ([0-9.e+-]+)", out) < 1e-6
    assert _number(r"accuracy: ([0-9.]+)", out) >= 0.95, out


def test_newton():
    out = run_example("newton.py", "--iters", "8")
    assert _number(r"final gradient norm: ([0-9.e+-]+)", out) < 1e-10, out
    assert _number(r"between the two minimizers: ([0-9.e+-]+)", out) < 1e-8, out


def test_ode_adaptive():
    out = run_example("ode_adaptive.py", "--t1", "3.0")
    assert _number(r"max relative difference: ([0-9.e+-]+)", out) < 1e-6, out


def test_ode_adjoint():
    out = run_example("ode_adjoint.py", "--steps", "80", "--lr", "0.05")
    assert _number(r"max relative difference: ([0-9.e+-]+)", out) < 1e-5, out
    assert _number(r"loss: [0-9.]+ -> ([0-9.]+)", out) < 0.05, out


def test_fixed_point():
    out = run_example("fixed_point.py")
    # grad of sqrt by iteration against 1 / (2 sqrt(a)), float32
    for mode in ("eager", "jit", "vmap", "local"):
        assert _number(mode + r" max relative error: ([0-9.e+-]+)", out) < 1e-6, out
    assert _number(r"implicit function theorem: ([0-9.e+-]+)", out) < 1e-5, out


def test_gp_regression():
    out = run_example("gp_regression.py", "--n", "25", "--steps", "60")
    assert _number(r"central differences: max abs difference ([0-9.e+-]+)", out) < 1e-6, out
    assert _number(r"RMSE against sin\(2x\): ([0-9.]+)", out) < 0.2, out


def test_seed_pmap():
    # JAX 0.10.2 with 2 host devices, at a small size (CI): default scheme
    # [1.307019  1.1721832]; legacy, keys 0 and 1 of an 8-key split
    # [1.1446762 1.1730349]. (Full size, 5000x6000: [1.2110119 1.2357731].)
    for flags, want in (((), (1.307019, 1.1721832)), (("--legacy",), (1.1446762, 1.1730349))):
        out = run_example("seed_pmap.py", "--shape", "500", "600", *flags)
        m = re.search(r"\[([0-9.]+)\s+([0-9.]+)\]", out)
        assert m, out
        got = (float(m.group(1)), float(m.group(2)))
        assert got == pytest.approx(want, rel=1e-5), out
        assert "on 2 CPU devices" in out


def test_data_parallel_digits():
    out = run_example("data_parallel_digits.py", "--steps", "5", "--batch", "256")
    m = re.search(r"one device ([0-9.]+), 2 devices ([0-9.]+)", out)
    assert m and float(m.group(1)) == pytest.approx(float(m.group(2)), rel=1e-6), out
    m = re.search(r"= ([0-9.e+-]+) \(max \|param\| ([0-9.e+-]+)\)", out)
    assert m and float(m.group(1)) <= 1e-6 * float(m.group(2)) + 1e-7, out
    assert re.search(r"throughput: one device [0-9,]+ examples/s, 2 devices [0-9,]+", out), out


def test_mpi_data_parallel():
    # one process with 4 devices, then (with mpiexec) 2 processes of 2 devices:
    # the same losses and weights (float32 sums in another order: to 1e-5)
    import shutil

    pytest.importorskip("mpi4py", reason='mpi4py is not installed (pip install "srcjax[mpi]")')
    env = dict(os.environ, SRCJAX_CPU_DEVICES="4")
    one = subprocess.run(
        [sys.executable, os.path.join(EXAMPLES, "mpi_data_parallel.py")],
        capture_output=True,
        text=True,
        env=dict(env, PYTHONPATH=ROOT),
        timeout=300,
    )
    assert one.returncode == 0, one.stdout + one.stderr
    assert "process 0/1: w = " in one.stdout
    losses = [float(v) for v in re.findall(r"loss ([0-9.]+)", one.stdout)]
    assert len(losses) == 20 and losses[-1] < 0.2 * losses[0], one.stdout
    if shutil.which("mpiexec") is None:
        pytest.skip("mpiexec is not on PATH (pip install mpich)")
    two = subprocess.run(
        ["mpiexec", "-n", "2", sys.executable, "-m", "mpi4py"]
        + [os.path.join(EXAMPLES, "mpi_data_parallel.py")],
        capture_output=True,
        text=True,
        env=dict(env, PYTHONPATH=ROOT, SRCJAX_CPU_DEVICES="2"),
        timeout=300,
    )
    assert two.returncode == 0, two.stdout + two.stderr
    got = [float(v) for v in re.findall(r"loss ([0-9.]+)", two.stdout)]
    assert got == pytest.approx(losses, rel=1e-5, abs=1e-5), two.stdout
    # ([^]]*: the two ranks' lines may still meet on one line of the shared pipe)
    w_one = re.search(r"process 0/1: w = \[([^]]*)\]", one.stdout).group(1).split()
    for r in (0, 1):
        w = re.search(rf"process {r}/2: w = \[([^]]*)\]", two.stdout).group(1).split()
        assert [float(v) for v in w] == pytest.approx([float(v) for v in w_one], abs=2e-4)
