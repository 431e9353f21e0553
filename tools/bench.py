"""Side-by-side benchmarks: srcjax against hand-written NumPy (and JAX when installed).

    python tools/bench.py            # full sizes (several GB of RAM for W1/W7)
    python tools/bench.py --quick    # small sizes, fewer repeats: a smoke run
    python tools/bench.py --only W3,W4

Each workload has a NumPy baseline; every other implementation is timed in the
same process (median of ``--repeats`` samples after a warm-up call) and reported
as a ratio to that baseline. Every result is checked against the baseline's
values; a result off by more than the workload's tolerance is marked MISMATCH.
Timings are reported, never asserted. The workloads follow
``shared/anchors/RESULTS.md``:

- W1 seed cube ``x*x*x``, float32 (10000, 10000)
- W2 GELU (tanh approximation, written with ``x**3`` as jax.nn.gelu and the
  anchors write it; a second NumPy row strength-reduces it by hand), 1e7 float32
- W3 d/dx exp(x)/(exp(x)+1) at x=1.0, per call
- W4 MLP 784-512-512-10 (tanh), batch 128, softmax cross-entropy, value_and_grad
  with respect to a params dict
- W4u the same in a child process without ``OPENBLAS_CORETYPE`` (when the
  environment forces OpenBLAS's kernel set: see :func:`w4u`)
- W5 per-example grads, MLP 32-64(tanh)-1, squared error, batch 256
- W7 ``sum((x - mean(x))**2)``, 1e8 float32
- L1 jit(grad) through a lax.scan of 10k (and, as L1x8, 80k) float32 steps:
  the cost per step must not grow with the length
- L2 a scalar lax.fori_loop under jit: 1000 float32 Newton steps (srcjax.jit: the
  default numba_loops="auto", tiered; NumPy only; numba loops compiled at once)
- T1 first transformation of a 30-line function, and the cost of a cached call
- P1 pmap of an elementwise-heavy function over 2 CPU devices (threads) against
  the same pmap on 1 device (the two rows one after the other, each result
  copied once into the stacked output as the 2 devices do) and jit on all of
  it (whose fused kernels use all the cores). A pmap device's fused regions use
  its share of the cores (``NUM_THREADS // jax_num_cpu_devices``: 1 of 2 here)
- P3 the MPI data-parallel step (``mpiexec -n 2`` against ``-n 1``, one device
  and one core per rank), with the allreduce's share of the step
- P2 the seed pmap example (normal matrices, ``x @ x.T``, mean) on 2 devices,
  against ``jax.pmap`` with ``--xla_force_host_platform_device_count=2`` (JAX
  runs in a child process: the flag must be set before jax is imported)
- L3 RK4 of a 3-state ODE, 10,000 steps under jit: value, and grad w.r.t. parameters
- N1-N4 random.normal inside jit (1e3, 1e6) and under vmap over keys, vs jax.jit
- T3 first calls in a fresh process (grad of the T1 function, W4 value_and_grad and
  its jit), with an empty cache directory and then with the disk cache
- A1-A4 srcjax.Array in eager code: operators and ``jnp.sin`` on 1e6 float32,
  operators on scalars, W3 against float32 NumPy scalars
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import math
import os
import platform
import statistics
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Generated code goes to a private cache for this run, so "first transformation"
# really is a first transformation (unless the caller chose a cache directory).
_TMP_CACHE = None
if "SRCJAX_CACHE_DIR" not in os.environ:
    _TMP_CACHE = tempfile.TemporaryDirectory(prefix="srcjax-bench-")
    os.environ["SRCJAX_CACHE_DIR"] = _TMP_CACHE.name

if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def _try_import(name):
    try:
        return __import__(name, fromlist=["_"]), None
    except Exception as e:  # noqa: BLE001 - any import failure means "n/a"
        return None, f"{type(e).__name__}: {e}"


srcjax, SRCJAX_ERR = _try_import("srcjax")
sjnp, _ = _try_import("srcjax.numpy") if srcjax else (None, None)
srandom, _ = _try_import("srcjax.random") if srcjax else (None, None)
if srcjax is not None and not hasattr(srcjax, "jit"):
    try:  # until srcjax/__init__.py exports jit
        from srcjax.jit_api import jit as _srcjax_jit

        srcjax.jit = _srcjax_jit
    except ImportError:
        pass
if os.environ.get("SRCJAX_BENCH_NO_JAX") == "1":  # (T3's children: a process without jax)
    jax, JAX_ERR = None, "SRCJAX_BENCH_NO_JAX=1"
else:
    jax, JAX_ERR = _try_import("jax")
jjnp, _ = _try_import("jax.numpy") if jax else (None, None)


def has(name):
    """Whether the srcjax public API provides ``name`` (grad, vmap, jit, ...)."""
    return srcjax is not None and hasattr(srcjax, name)


# ---------------------------------------------------------------------------
# Measuring
# ---------------------------------------------------------------------------


@dataclass
class Row:
    workload: str
    impl: str
    baseline: bool = False
    median: float | None = None
    min: float | None = None
    first: float | None = None
    status: str = "ok"  # ok | n/a | error
    note: str = ""
    err: float | None = None
    mismatch: bool = False
    extra: dict = field(default_factory=dict)
    result: object = field(default=None, repr=False)


class Bench:
    def __init__(self, repeats, min_sample_s, verbose):
        self.repeats = repeats
        self.min_sample_s = min_sample_s
        self.verbose = verbose
        self.rows: list[Row] = []
        self.reference = {}
        self.count_calls = False
        self.in_process = False

    def time_call(self, fn):
        """(first-call seconds, [per-call seconds per sample], result)."""
        t0 = time.perf_counter()
        result = fn()
        first = time.perf_counter() - t0
        fn()  # warm-up
        # Calls per sample: enough that one sample lasts min_sample_s.
        number = 1
        while True:
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            elapsed = time.perf_counter() - t0
            if elapsed >= self.min_sample_s or number >= 1 << 20:
                break
            number = max(number * 2, int(number * self.min_sample_s / max(elapsed, 1e-9)))
        repeats = self.repeats if elapsed / number < 1.0 else max(3, self.repeats - 2)
        samples = [elapsed / number]
        for _ in range(repeats - 1):
            t0 = time.perf_counter()
            for _ in range(number):
                fn()
            samples.append((time.perf_counter() - t0) / number)
        return first, samples, result

    def run(self, workload, impl, make, *, baseline=False, tol=1e-4, note="", check=True):
        """Time ``make()()``; ``make`` builds the callable (it may raise). A row with
        ``check=False`` (a bandwidth floor) computes something else: not compared."""
        row = Row(workload, impl, baseline=baseline, note=note)
        try:
            fn = make()
            first, samples, result = self.time_call(fn)
        except NotAvailable as e:
            row.status, row.note = "n/a", str(e)
            self.rows.append(row)
            self._log(row)
            return row
        except Exception as e:  # noqa: BLE001 - report, keep benchmarking
            row.status = "error"
            row.note = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:160]
            if self.verbose:
                traceback.print_exc()
            self.rows.append(row)
            self._log(row)
            return row
        row.first = first
        row.result = result
        row.median = statistics.median(samples)
        row.min = min(samples)
        if baseline:
            self.reference[workload] = result
        elif check and workload in self.reference:
            row.err = rel_err(result, self.reference[workload])
            row.mismatch = not (row.err <= tol)
        self.rows.append(row)
        self._log(row)
        return row

    def _log(self, row):
        what = fmt_time(row.median) if row.status == "ok" else row.status
        print(f"  {row.workload} {row.impl}: {what} {row.note}", file=sys.stderr, flush=True)


class NotAvailable(Exception):
    """This implementation does not exist here (library missing or API not implemented)."""


def need(name):
    if srcjax is None:
        raise NotAvailable(f"srcjax not importable ({SRCJAX_ERR})")
    if not has(name):
        raise NotAvailable(f"n/a (not implemented): srcjax.{name}")


def _srcjax_vmap():
    """``srcjax.vmap`` (from ``srcjax.vmap_api`` until ``srcjax`` exports it)."""
    if srcjax is None:
        raise NotAvailable(f"srcjax not importable ({SRCJAX_ERR})")
    if has("vmap"):
        return srcjax.vmap
    try:
        from srcjax.vmap_api import vmap
    except ImportError as e:
        raise NotAvailable(f"n/a (not implemented): srcjax.vmap ({e})") from None
    return vmap


def need_jnp():
    if sjnp is None:
        raise NotAvailable(f"srcjax.numpy not importable ({SRCJAX_ERR or 'missing'})")


def need_jax():
    if jax is None:
        raise NotAvailable("jax not installed")


def _leaves(tree):
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in _leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [x for t in tree for x in _leaves(t)]
    if hasattr(tree, "tree_flatten"):  # a class registered as a pytree
        return _leaves(list(tree.tree_flatten()[0]))
    return [tree]


def rel_err(out, ref):
    """max |out - ref| / max |ref| over all leaves (inf on a structure mismatch)."""
    a, b = _leaves(out), _leaves(ref)
    if len(a) != len(b):
        return math.inf
    num = 0.0
    den = 0.0
    for x, y in zip(a, b):
        x = np.asarray(x, dtype=np.float64)
        y = np.asarray(y, dtype=np.float64)
        if x.shape != y.shape:
            return math.inf
        if x.size:
            num = max(num, float(np.max(np.abs(x - y))))
            den = max(den, float(np.max(np.abs(y))))
    if math.isnan(num):
        return math.inf
    return num / den if den else num


def fmt_time(t):
    if t is None:
        return "-"
    if t < 1e-3:
        return f"{t * 1e6:.2f} µs"
    if t < 1:
        return f"{t * 1e3:.2f} ms"
    return f"{t:.3f} s"


# ---------------------------------------------------------------------------
# Workloads
# ---------------------------------------------------------------------------


def w1(b: Bench, quick):
    n = 2000 if quick else 10000
    x = np.ones((n, n), np.float32)

    def cube(x):
        return x * x * x

    b.run("W1", "numpy eager", lambda: lambda: x * x * x, baseline=True)

    def srcjax_eager():
        need_jnp()
        return lambda: sjnp.multiply(sjnp.multiply(x, x), x)

    def srcjax_jit():
        need("jit")
        f = srcjax.jit(cube)
        return lambda: f(x)

    def jax_jit():
        need_jax()
        f = jax.jit(cube)
        xj = jax.device_put(x)
        return lambda: f(xj).block_until_ready()

    def srcjax_jit_donate():
        need("jit")
        f = srcjax.jit(cube, donate_argnums=0)
        buf = [x.copy()]  # ones: cube(ones) == ones, so feeding the output back is stable

        def call():
            buf[0] = f(buf[0])
            return buf[0]

        return call

    out = np.empty_like(x)
    nbytes = 2 * x.nbytes  # one read and one write
    floor = b.run(
        "W1",
        "np.copyto into preallocated (copy floor)",
        lambda: lambda: (np.copyto(out, x), out)[1],
        check=False,
    )
    b.run("W1", "srcjax eager (jnp ops)", srcjax_eager)
    first = b.run("W1", "srcjax.jit", srcjax_jit)
    b.run("W1", "srcjax.jit(donate_argnums=0), output fed back", srcjax_jit_donate)
    b.run("W1", "jax.jit", jax_jit)
    for row in b.rows:
        if row.workload == "W1":
            _bandwidth(row, nbytes, floor)
    del first
    return f"x*x*x ({n}x{n} f32)"


def _one_blas_thread(run):
    """``run()`` (a ``Bench.run`` call) with NumPy's BLAS on one thread
    (threadpoolctl), the threads restored after. On a machine whose cores are
    busy, OpenBLAS's workers wait for each other's time slices: the same step
    measured 0.3x to 300x jax.jit between runs with two threads, steadily with
    one (docs/blas-threads.md). The row beside the default one separates that
    from srcjax's own time."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return None
    with threadpool_limits(limits=1, user_api="blas"):
        return run()


def _blas_info():
    """NumPy's BLAS, its kernel and threads (threadpoolctl, when installed), and
    OPENBLAS_CORETYPE: matmul-bound rows (W4) depend on them. OpenBLAS picks its
    kernel from the CPU model; on a VM that reports an older model it may run
    AVX2 (Haswell) kernels on an AVX-512 CPU (OPENBLAS_CORETYPE=SkylakeX fixes
    that: 25-40% faster gemms, measured on the W4 shapes)."""
    env = f"OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'unset')}"
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return f"threadpoolctl not installed; {env}"
    libs = [
        f"{i.get('internal_api')} {i.get('version')} kernel={i.get('architecture')} "
        f"threads={i.get('num_threads')}"
        for i in threadpool_info()
        if i.get("user_api") == "blas"
    ]
    return "; ".join(libs + [env])


def _bandwidth(row, nbytes, floor):
    """Append achieved GB/s (bytes read + written per call) to a row's note,
    and the fraction of the copy floor's bandwidth when one was measured."""
    if row.status != "ok" or not row.median or "GB/s" in row.note:
        return
    gbs = nbytes / row.median / 1e9
    note = f"{gbs:.1f} GB/s"
    if floor is not None and floor.status == "ok" and floor.median and row is not floor:
        note += f" ({floor.median / row.median:.0%} of copy)"
    row.note = f"{row.note}; {note}" if row.note else note


def _gelu(ns):
    """GELU's tanh form as jax.nn.gelu(approximate=True) and the anchors write it
    (``x ** 3``): the issue's W2 ratio is against NumPy eager on this source."""
    c = math.sqrt(2.0 / math.pi)

    def gelu(x):
        return 0.5 * x * (1.0 + ns.tanh(c * (x + 0.044715 * x**3)))

    return gelu


def _gelu_cubed_by_hand(ns):
    """The same GELU with ``x ** 3`` strength-reduced by hand to ``x * x * x``."""
    c = math.sqrt(2.0 / math.pi)

    def gelu(x):
        return 0.5 * x * (1.0 + ns.tanh(c * (x + 0.044715 * x * x * x)))

    return gelu


def w2(b: Bench, quick):
    n = 1_000_000 if quick else 10_000_000
    x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
    b.run("W2", "numpy eager", lambda: (lambda f: lambda: f(x))(_gelu(np)), baseline=True)
    b.run(
        "W2",
        "numpy eager, x*x*x by hand",
        lambda: (lambda f: lambda: f(x))(_gelu_cubed_by_hand(np)),
    )
    out = np.empty_like(x)
    floor = b.run(
        "W2",
        "np.copyto into preallocated (copy floor)",
        lambda: lambda: (np.copyto(out, x), out)[1],
        check=False,
    )

    def srcjax_eager():
        need_jnp()
        f = _gelu(sjnp)
        return lambda: f(x)

    def srcjax_jit():
        need("jit")
        f = srcjax.jit(_gelu(sjnp))
        return lambda: f(x)

    def jax_jit():
        need_jax()
        f = jax.jit(_gelu(jjnp))
        xj = jax.device_put(x)
        return lambda: f(xj).block_until_ready()

    b.run("W2", "srcjax eager (jnp ops)", srcjax_eager, tol=1e-5)
    b.run("W2", "srcjax.jit", srcjax_jit, tol=1e-5)
    b.run("W2", "jax.jit", jax_jit, tol=1e-5)
    for row in b.rows:
        if row.workload == "W2":
            _bandwidth(row, 2 * x.nbytes, floor)
    return f"GELU ({n:.0e} f32)"


def _logistic(ns):
    def logistic(x):
        return ns.exp(x) / (ns.exp(x) + 1.0)

    return logistic


def w3(b: Bench, quick):
    def hand(x):
        e = np.exp(x)
        return e / (e + 1.0) ** 2

    b.run("W3", "numpy hand-written derivative", lambda: lambda: hand(1.0), baseline=True)

    def srcjax_grad():
        need("grad")
        g = srcjax.grad(_logistic(sjnp))
        return lambda: g(1.0)

    def srcjax_jit_grad():
        need("grad")
        need("jit")
        g = srcjax.jit(srcjax.grad(_logistic(sjnp)))
        return lambda: g(1.0)

    def jax_jit_grad():
        need_jax()
        g = jax.jit(jax.grad(_logistic(jjnp)))
        return lambda: g(1.0).block_until_ready()

    b.run("W3", "srcjax.grad", srcjax_grad, tol=1e-6, note="float32")
    b.run("W3", "srcjax.jit(srcjax.grad)", srcjax_jit_grad, tol=1e-6, note="float32")
    b.run("W3", "jax.jit(jax.grad)", jax_jit_grad, tol=1e-6, note="float32")
    return "d/dx exp(x)/(exp(x)+1) at 1.0"


def _mlp_loss(ns):
    def predict(params, x):
        h1 = ns.tanh(x @ params["w1"] + params["b1"])
        h2 = ns.tanh(h1 @ params["w2"] + params["b2"])
        return h2 @ params["w3"] + params["b3"]

    def loss(params, x, y):
        logits = predict(params, x)
        shifted = logits - ns.max(logits, axis=1, keepdims=True)
        logp = shifted - ns.log(ns.sum(ns.exp(shifted), axis=1, keepdims=True))
        return -ns.mean(ns.sum(y * logp, axis=1))

    return loss


def _mlp_backprop(params, x, y):
    """Hand-written value and gradient of the W4 loss."""
    a1 = x @ params["w1"] + params["b1"]
    h1 = np.tanh(a1)
    a2 = h1 @ params["w2"] + params["b2"]
    h2 = np.tanh(a2)
    logits = h2 @ params["w3"] + params["b3"]
    shifted = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shifted)
    s = e.sum(axis=1, keepdims=True)
    logp = shifted - np.log(s)
    value = -np.mean(np.sum(y * logp, axis=1))
    d_logits = (e / s - y) * np.float32(1.0 / x.shape[0])
    grads = {"w3": h2.T @ d_logits, "b3": d_logits.sum(axis=0)}
    d_a2 = (d_logits @ params["w3"].T) * (1 - h2 * h2)
    grads["w2"] = h1.T @ d_a2
    grads["b2"] = d_a2.sum(axis=0)
    d_a1 = (d_a2 @ params["w2"].T) * (1 - h1 * h1)
    grads["w1"] = x.T @ d_a1
    grads["b1"] = d_a1.sum(axis=0)
    return value, grads


def w4(b: Bench, quick):
    rng = np.random.default_rng(0)
    sizes = (784, 512, 512, 10)
    params = {}
    for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
        params[f"w{i}"] = (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)
        params[f"b{i}"] = np.zeros(n, np.float32)
    x = rng.standard_normal((128, 784)).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]

    b.run(
        "W4",
        "numpy hand-written backprop",
        lambda: lambda: _mlp_backprop(params, x, y),
        baseline=True,
    )

    def srcjax_vg():
        need("value_and_grad")
        vg = srcjax.value_and_grad(_mlp_loss(sjnp))
        return lambda: vg(params, x, y)

    def srcjax_jit_vg():
        need("value_and_grad")
        need("jit")
        vg = srcjax.jit(srcjax.value_and_grad(_mlp_loss(sjnp)))
        return lambda: vg(params, x, y)

    def jax_vg(jit):
        def make():
            need_jax()
            vg = jax.value_and_grad(_mlp_loss(jjnp))
            if jit:
                vg = jax.jit(vg)
            pj, xj, yj = jax.device_put((params, x, y))

            def call():
                v, g = vg(pj, xj, yj)
                jax.block_until_ready(g)
                return v, g

            return call

        return make

    b.run("W4", "srcjax.value_and_grad", srcjax_vg, tol=1e-4)
    b.run("W4", "srcjax.jit(srcjax.value_and_grad)", srcjax_jit_vg, tol=1e-4)
    _one_blas_thread(
        lambda: b.run("W4", "srcjax.jit(srcjax.value_and_grad), 1 BLAS thread", srcjax_jit_vg)
    )
    b.run("W4", "jax.value_and_grad (no jit)", jax_vg(False), tol=1e-4)
    b.run("W4", "jax.jit(jax.value_and_grad)", jax_vg(True), tol=1e-4)
    return "MLP 784-512-512-10, batch 128"


def w4u(b: Bench, quick):
    """W4 again in a child process without ``OPENBLAS_CORETYPE``, so OpenBLAS picks
    its kernels for this CPU. The GEMMs are most of a W4 step; a machine that
    forces an older kernel set (this one sets ``OPENBLAS_CORETYPE=Haswell`` on an
    AVX-512 CPU) slows NumPy's GEMMs, hand-written and srcjax alike, while XLA
    uses its own. The two runs side by side separate what srcjax adds from what
    the BLAS configuration costs. Skipped when the variable is not set."""
    forced = os.environ.get("OPENBLAS_CORETYPE")
    if not forced:
        b.rows.append(Row("W4u", "(OPENBLAS_CORETYPE not set: W4 is this run)", status="n/a"))
        return "W4 with OpenBLAS's own kernel choice (not forced here)"
    import json
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        cmd = [sys.executable, os.path.abspath(__file__), "--only", "W4", "--rows-json", f.name]
        cmd += ["--repeats", str(b.repeats)] + (["--quick"] if quick else [])
        done = subprocess.run(cmd, env=env, capture_output=True, text=True)
        if done.returncode != 0:
            b.rows.append(Row("W4u", "child run", status="error", note=done.stderr[-200:]))
            return "W4 with OpenBLAS's own kernel choice (child run failed)"
        rows = json.load(open(f.name))
    for r in rows:
        r["workload"] = "W4u"
        b.rows.append(Row(**r))
    kernel = next((r.get("extra", {}).get("blas") for r in rows if r.get("extra")), None)
    return f"W4 in a child process without OPENBLAS_CORETYPE={forced} ({kernel or 'BLAS'})"


def _tiny_loss(ns):
    def loss(params, x, y):
        h = ns.tanh(x @ params["w1"] + params["b1"])
        pred = h @ params["w2"] + params["b2"]
        return ns.sum((pred - y) ** 2)

    return loss


def _per_example_grads(params, x, y):
    """Hand-written per-example gradients, vectorised over the batch."""
    a = x @ params["w1"] + params["b1"]  # (B, 64)
    h = np.tanh(a)
    pred = h @ params["w2"] + params["b2"]  # (B, 1)
    d_pred = 2.0 * (pred - y)  # (B, 1)
    g_w2 = h[:, :, None] * d_pred[:, None, :]  # (B, 64, 1)
    g_b2 = d_pred
    d_a = (d_pred @ params["w2"].T) * (1 - h * h)  # (B, 64)
    g_w1 = x[:, :, None] * d_a[:, None, :]  # (B, 32, 64)
    return {"b1": d_a, "b2": g_b2, "w1": g_w1, "w2": g_w2}


def w5(b: Bench, quick):
    rng = np.random.default_rng(0)
    params = {
        "w1": (rng.standard_normal((32, 64)) / np.sqrt(32)).astype(np.float32),
        "b1": np.zeros(64, np.float32),
        "w2": (rng.standard_normal((64, 1)) / 8).astype(np.float32),
        "b2": np.zeros(1, np.float32),
    }
    x = rng.standard_normal((256, 32)).astype(np.float32)
    y = rng.standard_normal((256, 1)).astype(np.float32)

    b.run(
        "W5",
        "numpy hand-written, batch-vectorised",
        lambda: lambda: _per_example_grads(params, x, y),
        baseline=True,
    )

    def srcjax_vmap_grad(jit):
        def make():
            need("grad")
            f = _srcjax_vmap()(srcjax.grad(_tiny_loss(sjnp)), in_axes=(None, 0, 0))
            if jit:
                need("jit")
                f = srcjax.jit(f)
            return lambda: f(params, x, y)

        return make

    def jax_vmap_grad(jit):
        def make():
            need_jax()
            f = jax.vmap(jax.grad(_tiny_loss(jjnp)), in_axes=(None, 0, 0))
            if jit:
                f = jax.jit(f)
            pj, xj, yj = jax.device_put((params, x, y))
            return lambda: jax.block_until_ready(f(pj, xj, yj))

        return make

    def srcjax_loop_grad():
        need("grad")
        g = srcjax.grad(_tiny_loss(sjnp))

        def run():
            per = [g(params, x[i], y[i]) for i in range(x.shape[0])]
            return {k: np.stack([p[k] for p in per]) for k in per[0]}

        return run

    b.run("W5", "Python loop of srcjax.grad", srcjax_loop_grad, tol=1e-4)
    b.run("W5", "srcjax.vmap(srcjax.grad)", srcjax_vmap_grad(False), tol=1e-4)
    b.run("W5", "srcjax.jit(srcjax.vmap(srcjax.grad))", srcjax_vmap_grad(True), tol=1e-4)
    b.run("W5", "jax.jit(jax.vmap(jax.grad))", jax_vmap_grad(True), tol=1e-4)
    return "per-example grads, batch 256"


def _centered_sq(ns):
    def f(x):
        return ns.sum((x - ns.mean(x)) ** 2)

    return f


def w7(b: Bench, quick):
    n = 10_000_000 if quick else 100_000_000
    x = (np.random.default_rng(0).standard_normal(n, dtype=np.float32) * 2 + 3).astype(np.float32)
    b.run("W7", "numpy eager", lambda: (lambda f: lambda: f(x))(_centered_sq(np)), baseline=True)

    def srcjax_eager():
        need_jnp()
        f = _centered_sq(sjnp)
        return lambda: f(x)

    def srcjax_jit():
        need("jit")
        f = srcjax.jit(_centered_sq(sjnp))
        return lambda: f(x)

    def jax_jit():
        need_jax()
        f = jax.jit(_centered_sq(jjnp))
        xj = jax.device_put(x)
        return lambda: f(xj).block_until_ready()

    b.run("W7", "srcjax eager (jnp ops)", srcjax_eager, tol=1e-5)
    b.run("W7", "srcjax.jit", srcjax_jit, tol=1e-5)
    b.run("W7", "jax.jit", jax_jit, tol=1e-5)
    for row in b.rows:
        if row.workload == "W7":
            _bandwidth(row, x.nbytes, None)  # bytes that must be read: x, once
    return f"sum((x-mean(x))**2) ({n:.0e} f32)"


# -- T1: transformation cost --------------------------------------------------

# A 30-line function: straight-line code, a branch and a loop. `{ns}` is the
# namespace (np for the float64 reference, jnp for srcjax); `{k}` makes each
# instance's source unique, so each srcjax.grad is a first transformation.
_T1_TEMPLATE = """\
import numpy as np
import srcjax.numpy as jnp


def f_{k}(x):
    a = {ns}.sin(x) * 1.5
    b = {ns}.cos(x) + a * a
    c = {ns}.exp(-0.5 * x * x)
    d = a * b - c
    e = {ns}.tanh(d) + 0.{k}
    g = {ns}.log1p(e * e)
    h = g * x + b
    if h > 0.0:
        u = h * {ns}.sqrt(1.0 + x * x)
    else:
        u = -h
    v = u / (1.0 + {ns}.abs(a))
    w = v * v - 0.25 * u
    for i in range(3):
        w = w * 0.9 + {ns}.sin(w) * 0.1
    p = w + c * d
    q = p * {ns}.cos(p)
    r = q - 0.5 * g
    s = {ns}.tanh(r) * a
    t = s + e * 0.125
    z = t * t + s
    m = {ns}.maximum(z, 0.0) + 0.5 * {ns}.minimum(z, 0.0)
    n = m * {ns}.exp(-0.1 * m * m)
    o = n + 0.25 * {ns}.sin(3.0 * x)
    k = 0
    while k < 2:
        o = o * 0.95 + 0.05 * {ns}.cos(o)
        k = k + 1
    return o + 0.01 * x
"""


def _load_source(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def t1(b: Bench, quick, tmpdir):
    """First transformation of a fresh 30-line function, and cached-call overhead."""
    n_fresh = 3 if quick else 7
    x0 = 0.7
    token = f"{os.getpid()}{time.time_ns() % 100000}"
    mods = []
    for i in range(n_fresh + 1):
        k = f"{token}{i}"
        for ns in ("np", "jnp"):
            path = os.path.join(tmpdir, f"t1_{ns}_{k}.py")
            with open(path, "w") as fh:
                fh.write(_T1_TEMPLATE.format(k=k, ns=ns))
        mods.append(k)

    # float64 central-difference reference, from the NumPy instance.
    k0 = mods[0]
    f_np = getattr(_load_source(os.path.join(tmpdir, f"t1_np_{k0}.py"), f"t1_np_{k0}"), f"f_{k0}")
    h = 1e-6
    ref = (f_np(x0 + h) - f_np(x0 - h)) / (2 * h)

    row = Row("T1", "first srcjax.grad + call of a 30-line function")
    try:
        need("grad")
        n_lines = len(_T1_TEMPLATE.split("def f_", 1)[1].splitlines())
        times = []
        value = None
        for k in mods[1:]:
            mod = _load_source(os.path.join(tmpdir, f"t1_jnp_{k}.py"), f"t1_jnp_{k}")
            f = getattr(mod, f"f_{k}")
            t0 = time.perf_counter()
            g = srcjax.grad(f)
            out = g(x0)
            times.append(time.perf_counter() - t0)
            if value is None:
                value = out
        row.median, row.min = statistics.median(times), min(times)
        row.note = f"{n_lines}-line function, {len(times)} fresh functions"
        # each instance differs only in a constant, so all share one derivative
        row.err = abs(float(value) - ref) / abs(ref)
        row.mismatch = not row.err <= 1e-3
    except NotAvailable as e:
        row.status, row.note = "n/a", str(e)
    except Exception as e:  # noqa: BLE001
        row.status, row.note = "error", f"{type(e).__name__}: {e}"[:160]
    b.rows.append(row)
    b._log(row)

    # Cached calls: a transformed square vs the hand-written derivative.
    def square(x):
        return x * x

    def hand_dsquare(x):
        return 2.0 * x

    base = b.run(
        "T2", "hand-written 2*x (Python)", lambda: lambda: hand_dsquare(3.0), baseline=True
    )

    def cached_call():
        need("grad")
        g = srcjax.grad(square)
        return lambda: g(3.0)

    def rewrap_call():
        need("grad")
        return lambda: srcjax.grad(square)(3.0)

    called = b.run("T2", "srcjax.grad(square), cached call", cached_call, tol=1e-6)
    if called.status == "ok" and base.status == "ok":
        called.note = f"overhead over hand-written ≈ {fmt_time(called.median - base.median)}"
    b.run(
        "T2",
        "srcjax.grad(square)(x) re-created each call",
        rewrap_call,
        tol=1e-6,
        note="transformation-cache hit",
    )
    return "transformation and call overhead"


def h1(b: Bench, quick):
    """Hessian of a 100-dimensional scalar function (log-sum-exp of a quadratic form)."""
    rng = np.random.default_rng(0)
    n = 100
    a = (rng.standard_normal((n, n)) / np.sqrt(n)).astype(np.float32)
    x = rng.standard_normal(n).astype(np.float32)

    def lse_quad(ns):
        def f(v):
            return ns.log(ns.sum(ns.exp(-0.5 * (a @ v) * v)))

        return f

    f_np = lse_quad(np)

    def fd_hessian():
        # central differences of the analytic gradient, float64 (the baseline)
        v64 = x.astype(np.float64)
        a64 = a.astype(np.float64)

        def grad(v):
            q = -0.5 * (a64 @ v) * v
            w = np.exp(q - q.max())
            w /= w.sum()
            return -0.5 * ((a64 @ v) * w + a64.T @ (w * v))

        eps = 1e-4
        cols = [(grad(v64 + eps * e) - grad(v64 - eps * e)) / (2 * eps) for e in np.eye(n)]
        return np.stack(cols, 1)

    del f_np
    b.run("H1", "finite-difference Hessian (NumPy, float64)", lambda: fd_hessian, baseline=True)

    def srcjax_h(jit):
        def make():
            need("hessian")
            h = srcjax.hessian(lse_quad(sjnp))
            if jit:
                need("jit")
                h = srcjax.jit(h)
            return lambda: h(x)

        return make

    def jax_h(jit):
        def make():
            need_jax()
            h = jax.hessian(lse_quad(jjnp))
            if jit:
                h = jax.jit(h)
            xj = jax.device_put(x)
            return lambda: jax.block_until_ready(h(xj))

        return make

    b.run("H1", "srcjax.hessian", srcjax_h(False), tol=1e-3)
    b.run("H1", "srcjax.jit(srcjax.hessian)", srcjax_h(True), tol=1e-3)
    b.run("H1", "jax.hessian (no jit)", jax_h(False), tol=1e-3)
    b.run("H1", "jax.jit(jax.hessian)", jax_h(True), tol=1e-3)
    return "hessian, n=100"


def _scan_loss(ns, lax):
    def step(h, x):
        h = ns.tanh(h * 0.9 + x)
        return h, h

    def loss(x):
        h, ys = lax.scan(step, 0.0, x)
        return ns.sum(ys)

    return loss


def _bptt_by_hand(x):
    """The gradient of the L1 loss, by hand on NumPy float32 scalars."""
    h = np.float32(0.0)
    hs = []
    for xt in x:
        h = np.tanh(h * np.float32(0.9) + xt)
        hs.append(h)
    g = np.empty_like(x)
    gh = np.float32(0.0)
    for t in range(len(x) - 1, -1, -1):
        ga = (gh + np.float32(1.0)) * (np.float32(1.0) - hs[t] * hs[t])
        g[t] = ga
        gh = ga * np.float32(0.9)
    return g


def l1(b: Bench, quick):
    """jit(grad) through a long lax.scan: the cost per step must not grow with the
    length (it did: 24 us per step at 10k, 89 us at 80k)."""
    rng = np.random.default_rng(0)
    for key, n in (("L1", 2_000 if quick else 10_000), ("L1x8", 16_000 if quick else 80_000)):
        x = (0.1 * rng.standard_normal(n)).astype(np.float32)
        per = f"{n} steps"
        b.run(
            key,
            "NumPy float32 scalars, by hand",
            lambda x=x: lambda: _bptt_by_hand(x),
            baseline=True,
            note=per,
        )

        def srcjax_jit_grad(x=x):
            need("grad")
            need("jit")
            g = srcjax.jit(srcjax.grad(_scan_loss(sjnp, srcjax.lax)))
            return lambda: g(x)

        def jax_jit_grad(x=x):
            need_jax()
            g = jax.jit(jax.grad(_scan_loss(jjnp, jax.lax)))
            xj = jax.device_put(x)
            return lambda: g(xj).block_until_ready()

        row = b.run(key, "srcjax.jit(srcjax.grad)", srcjax_jit_grad, tol=1e-5, note=per)
        if row.median:
            row.note += f", {row.median / n * 1e6:.1f} us/step"
        b.run(key, "jax.jit(jax.grad)", jax_jit_grad, tol=1e-5, note=per)
    return "grad of sum(lax.scan(tanh(0.9 h + x))) through a long scan (L1x8: 8x longer)"


def _newton(ns, lax):
    def newton(x0):
        def body(i, x):
            return x - (x * x - 2.0) / (2.0 * x)

        return lax.fori_loop(0, 1000, body, x0)

    return newton


def _newton_by_hand(x0):
    x = np.float32(x0)
    two = np.float32(2.0)
    for _ in range(1000):
        x = x - (x * x - two) / (two * x)
    return x


def _numba_loops(make, value=True):
    """``make()``'s call with the option ``numba_loops`` set to ``value`` (True:
    compiled at the first call; False: NumPy only) while it builds and first runs
    (the option decides new jit specializations: the calls' arguments must keep
    their types and shapes)."""
    need("jit")
    from srcjax.backends import numba_cpu

    if value and not numba_cpu.available():
        raise NotAvailable("numba not installed")
    old = srcjax.config.read("numba_loops")
    srcjax.config.update("numba_loops", value)
    try:
        call = make()
    finally:
        srcjax.config.update("numba_loops", old)

    built = []

    def run():
        if built:  # (specialized: later calls do not read the option; setting it costs ~10 us)
            return call()
        srcjax.config.update("numba_loops", value)
        try:
            out = call()
        finally:
            srcjax.config.update("numba_loops", old)
        built.append(1)
        return out

    return run


def l2(b: Bench, quick):
    """A scalar lax.fori_loop under jit (1000 Newton steps for sqrt(2))."""
    b.run("L2", "NumPy float32 scalars", lambda: lambda: _newton_by_hand(1.0), baseline=True)

    def srcjax_jit():
        need("jit")
        f = srcjax.jit(_newton(sjnp, srcjax.lax))
        return lambda: f(1.0)

    def jax_jit():
        need_jax()
        f = jax.jit(_newton(jjnp, jax.lax))
        return lambda: f(1.0).block_until_ready()

    # the default (numba_loops="auto" with Numba installed: NumPy until the loop is
    # hot, then compiled; tiers.py) first, before another row starts Numba
    b.run("L2", "srcjax.jit", srcjax_jit, tol=1e-6)
    b.run("L2", "srcjax.jit (NumPy only)", lambda: _numba_loops(srcjax_jit, False), tol=1e-6)
    b.run("L2", "srcjax.jit (numba loops)", lambda: _numba_loops(srcjax_jit), tol=1e-6)
    b.run("L2", "jax.jit", jax_jit, tol=1e-6)
    return "scalar lax.fori_loop, 1000 Newton steps, float32"


# ---------------------------------------------------------------------------
# R1-R8: real programs (tools/real_programs), run unchanged after changing imports
# ---------------------------------------------------------------------------


def _real_programs():
    """tools/real_programs/load.py (loads an R program under jax or srcjax)."""
    if "real_programs_load" not in sys.modules:
        path = os.path.join(ROOT, "tools", "real_programs", "load.py")
        _load_source(path, "real_programs_load")
    return sys.modules["real_programs_load"]


def _real_program(key, lib, tmpdir):
    return _real_programs().load(key, lib, tmpdir)


def _tracemalloc_peak(call):
    """Peak bytes NumPy allocates during one ``call()`` (temporaries and outputs;
    the inputs, allocated before, are not counted)."""
    import tracemalloc

    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = call()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    del out
    return peak


def _xla_peak(jitted, args):
    """XLA's own account of one call's buffers (temporaries + outputs), the
    counterpart of :func:`_tracemalloc_peak` (XLA's allocator is not traced)."""
    m = jitted.lower(*args).compile().memory_analysis()
    return int(m.temp_size_in_bytes + m.output_size_in_bytes)


def _fmt_bytes(n):
    return f"{n / 2**20:.1f} MiB" if n >= 2**20 else f"{n / 2**10:.0f} KiB"


def _numpy_calls():
    """tools/numpy_calls.py (the --count-calls diagnostic)."""
    if "numpy_calls" not in sys.modules:
        _load_source(os.path.join(ROOT, "tools", "numpy_calls.py"), "numpy_calls")
    return sys.modules["numpy_calls"]


def real_row(key):
    def bench_row(b: Bench, quick, tmpdir):
        doc = None
        peaks = {}

        def srcjax_step():
            need("jit")
            mod = _real_program(key, "srcjax", tmpdir)
            args = mod.make_inputs(np.random.default_rng(0))

            def call():
                return mod.step(*args)

            call()
            peaks["srcjax"] = _tracemalloc_peak(call)
            if b.count_calls:
                peaks["calls"] = _numpy_calls().count_numpy_calls(call)
            return call

        def jax_step():
            need_jax()
            nonlocal doc
            mod = _real_program(key, "jax", tmpdir)
            doc = (mod.__doc__ or "").split("\n\n")[0].replace("\n", " ")
            args = jax.device_put(mod.make_inputs(np.random.default_rng(0)))
            try:
                peaks["jax"] = _xla_peak(mod.step, args)
            except Exception:  # noqa: BLE001 - memory is a note, not the row
                pass
            if b.count_calls:
                peaks["jax_primitives"] = _numpy_calls().jaxpr_primitives(mod.step, *args)

            def call():
                return jax.block_until_ready(mod.step(*args))

            return call

        # srcjax first: XLA's worker threads, once started, compete with NumPy's
        # BLAS threads for the cores; JAX's result is the reference (checked after)
        row = b.run(key, "srcjax.jit", srcjax_step, check=False)
        one = _one_blas_thread(
            lambda: b.run(key, "srcjax.jit, 1 BLAS thread", srcjax_step, check=False)
        )
        base = b.run(key, "jax.jit", jax_step, baseline=True)
        ours = [row] + ([one] if one is not None else [])
        b.rows.insert(len(b.rows) - 1 - len(ours), b.rows.pop())  # the baseline first
        for r in ours:
            if r.status == "ok" and base.status == "ok":
                r.err = rel_err(r.result, b.reference[key])
                r.mismatch = not (r.err <= 2e-4)
        if base.status == "ok" and "jax" in peaks:
            base.note = f"peak {_fmt_bytes(peaks['jax'])} (XLA temp+output)"
        if row.status == "ok" and "srcjax" in peaks:
            note = f"peak {_fmt_bytes(peaks['srcjax'])} (tracemalloc)"
            if "jax" in peaks and peaks["jax"]:
                note += f", {peaks['srcjax'] / peaks['jax']:.1f}× JAX's"
            if "calls" in peaks:
                fmt = _numpy_calls().format_counts
                note += "; " + fmt(peaks["calls"], peaks.get("jax_primitives"))
            row.note = note
        return doc or key

    def isolated_row(b: Bench, quick, tmpdir):
        """The row in a child process of its own: threads left spinning by an
        earlier row (XLA's pool, OpenBLAS's) do not slow this one, and in the
        child srcjax runs before JAX has started any."""
        if os.environ.get("SRCJAX_BENCH_IN_CHILD") or b.in_process:
            return bench_row(b, quick, tmpdir)
        import ast
        import json
        import subprocess

        env = {**os.environ, "SRCJAX_BENCH_IN_CHILD": "1"}
        with tempfile.NamedTemporaryFile(suffix=".json") as f:
            cmd = [sys.executable, os.path.abspath(__file__), "--only", key]
            cmd += ["--rows-json", f.name, "--repeats", str(b.repeats)]
            cmd += (["--quick"] if quick else []) + (["--count-calls"] if b.count_calls else [])
            done = subprocess.run(cmd, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                b.rows.append(Row(key, "child run", status="error", note=done.stderr[-200:]))
                return key
            rows = json.load(open(f.name))
        for r in rows:
            r.pop("result", None)
            b.rows.append(Row(**r))
            b._log(b.rows[-1])
        files = {**_real_programs().FILES, **_real_programs().USER_FILES}
        path = os.path.join(ROOT, "tools", "real_programs", files[key])
        with open(path) as fh:
            doc = ast.get_docstring(ast.parse(fh.read())) or key
        return doc.split("\n\n")[0].replace("\n", " ")

    isolated_row.__name__ = key.lower()
    return isolated_row


def _elementwise_heavy(ns):
    def f(x):
        y = ns.sin(x) * ns.exp(-x * x) + ns.tanh(x)
        return ns.sqrt(y * y + 1.0) - ns.cos(y) * 0.5

    return f


def p1(b: Bench, quick):
    n = 1_000_000 if quick else 8_000_000
    x = np.random.default_rng(0).standard_normal((2, n)).astype(np.float32)
    b.run(
        "P1", "numpy eager", lambda: (lambda f: lambda: f(x))(_elementwise_heavy(np)), baseline=True
    )

    def on(ndev):
        def make():
            need("pmap")
            srcjax.config.update("jax_num_cpu_devices", 2)
            f = _elementwise_heavy(sjnp)
            if ndev == 2:
                g = srcjax.pmap(f)
                return lambda: g(x)
            g = srcjax.pmap(f)
            out = np.empty_like(x)  # (each row's result copied once, as the devices do)
            return lambda: np.concatenate([g(x[:1]), g(x[1:])], out=out)

        return make

    def jitted():
        need("jit")
        g = srcjax.jit(_elementwise_heavy(sjnp))
        return lambda: g(x)

    one = b.run("P1", "srcjax.pmap, 1 device (rows in turn)", on(1), tol=1e-5)
    two = b.run("P1", "srcjax.pmap, 2 devices", on(2), tol=1e-5)
    b.run("P1", "srcjax.jit (no pmap)", jitted, tol=1e-5)
    if one.median and two.median:
        two.note = f"{one.median / two.median:.2f}x the 1-device pmap"
    return f"elementwise-heavy pmap (2 x {n:.0e} f32)"


_P2_JAX = """
import os, sys, time, statistics
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
import jax, jax.numpy as jnp
from jax import random
r, c, reps = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
draw = jax.pmap(lambda key: random.normal(key, (r, c)))
gram = jax.pmap(lambda x: jnp.dot(x, x.T))
mean = jax.pmap(jnp.mean)
def run():
    keys = random.split(random.PRNGKey(0), 2)
    return mean(gram(draw(keys))).block_until_ready()
run()
ts = []
for _ in range(reps):
    t = time.perf_counter(); out = run(); ts.append(time.perf_counter() - t)
print(statistics.median(ts), *[float(v) for v in out])
"""


def p2(b: Bench, quick):
    r, c = (500, 600) if quick else (2000, 2400)
    reps = 3

    def ours():
        need("pmap")
        srcjax.config.update("jax_num_cpu_devices", 2)
        draw = srcjax.pmap(lambda key: srandom.normal(key, (r, c)))
        gram = srcjax.pmap(lambda x: sjnp.dot(x, x.T))
        mean = srcjax.pmap(sjnp.mean)

        def seed():
            keys = srandom.split(srandom.PRNGKey(0), 2)
            return mean(gram(draw(keys)))

        return seed

    row = b.run("P2", "srcjax.pmap, 2 devices", ours, baseline=True)
    jrow = Row("P2", "jax.pmap, 2 host devices (child process)")
    import subprocess

    try:
        if importlib.util.find_spec("jax") is None:
            raise NotAvailable("jax not installed")
        out = subprocess.run(
            [sys.executable, "-c", _P2_JAX, str(r), str(c), str(reps)],
            capture_output=True,
            text=True,
            timeout=1200,
        )
        t, *vals = out.stdout.split()
        jrow.median = jrow.min = float(t)
        ref = np.asarray(b.reference.get("P2"), np.float64)
        jrow.err = rel_err(np.asarray([float(v) for v in vals]), ref)
        jrow.mismatch = not jrow.err <= 1e-5
        if row.median:
            jrow.note = f"srcjax/jax = {row.median / jrow.median:.2f}"
    except NotAvailable as e:
        jrow.status, jrow.note = "n/a", str(e)
    except Exception as e:  # noqa: BLE001
        jrow.status, jrow.note = "error", f"{type(e).__name__}: {e}"[:160]
    b.rows.append(jrow)
    b._log(jrow)
    return f"seed pmap example ({r}x{c} normal matrices per device)"


_P3_RANK = """
import json, os, statistics, sys, time
import numpy as np
import srcjax, srcjax.numpy as jnp
from srcjax import lax
srcjax.distributed.initialize()
comm = srcjax.distributed._COMM
spent = [0.0, 0.0]  # wall and this thread's CPU seconds inside MPI Allreduce
if comm is not None:  # (psum/pmean across processes)
    plain = comm.allreduce
    def timed(local, how):
        t, c = time.perf_counter(), time.thread_time()
        try:
            return plain(local, how)
        finally:
            spent[0] += time.perf_counter() - t
            spent[1] += time.thread_time() - c
    comm.allreduce = timed
batch, din, hidden, dout, steps = map(int, sys.argv[1:6])
def loss(p, x, y):
    h = jnp.tanh(x @ p["w1"] + p["b1"])
    return jnp.mean((h @ p["w2"] - y) ** 2)
def step(p, x, y):
    g = lax.pmean(srcjax.grad(loss)(p, x, y), "batch")
    return {k: p[k] - 0.01 * g[k] for k in p.keys()}
rng = np.random.default_rng(srcjax.process_index())
x = rng.standard_normal((1, batch, din)).astype(np.float32)
y = rng.standard_normal((1, batch, dout)).astype(np.float32)
p0 = np.random.default_rng(0)
p = {"w1": 0.05 * p0.standard_normal((1, din, hidden)).astype(np.float32),
     "b1": np.zeros((1, hidden), np.float32),
     "w2": 0.05 * p0.standard_normal((1, hidden, dout)).astype(np.float32)}
train = srcjax.pmap(step, axis_name="batch")
p = train(p, x, y)
ts = []
spent[:] = [0.0, 0.0]
cpu = time.thread_time()  # (device 0 runs on this thread: the step's compute)
for _ in range(steps):
    t = time.perf_counter(); p = train(p, x, y); ts.append(time.perf_counter() - t)
compute = (time.thread_time() - cpu - spent[1]) / steps
pure = 0.0
if comm is not None:  # the allreduce alone, the ranks in step (no waiting for a slower one)
    g = np.ones(sum(v[0].size for v in p.values()), np.float32)
    tp = []
    for _ in range(20):
        comm.comm.Barrier()
        t = time.perf_counter(); plain(g, "sum"); tp.append(time.perf_counter() - t)
    pure = statistics.median(tp)
line = json.dumps({"rank": srcjax.process_index(), "median": statistics.median(ts),
                   "min": min(ts), "allreduce": spent[0] / steps, "compute_cpu": compute,
                   "pure_allreduce": pure})
sys.stdout.write(line + "\\n")  # (one write: the ranks share stdout)
sys.stdout.flush()
"""


def p3(b: Bench, quick):
    """The MPI data-parallel step (an MLP's pmean'd gradient step, one CPU device
    and one core per rank) with 2 ranks against 1 rank: each rank a batch of
    the same size, so the throughput ratio is 2 x t(1 rank) / t(2 ranks)."""
    import json
    import re
    import shutil
    import subprocess

    batch, din, hidden, dout = (1024, 128, 256, 10) if quick else (4096, 512, 1024, 10)
    steps = 5 if quick else 20
    env = {
        **os.environ,
        "SRCJAX_CPU_DEVICES": "1",
        "SRCJAX_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""),
    }
    rows = {}
    for n in (1, 2):
        row = Row("P3", f"srcjax.pmap over MPI, {n} rank{'s' if n > 1 else ''} x 1 device")
        try:
            need("pmap")
            if shutil.which("mpiexec") is None or importlib.util.find_spec("mpi4py") is None:
                raise NotAvailable('mpiexec/mpi4py not installed (pip install "srcjax[mpi]")')
            with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
                f.write(_P3_RANK)
            cmd = ["mpiexec", "-n", str(n), sys.executable, "-m", "mpi4py", f.name]
            cmd += [str(v) for v in (batch, din, hidden, dout, steps)]
            done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
            os.unlink(f.name)
            if done.returncode != 0:
                raise RuntimeError(done.stderr[-200:])
            got = [json.loads(m) for m in re.findall(r"\{[^{}]*\}", done.stdout)]
            if len(got) != n:
                raise RuntimeError(f"expected {n} ranks' timings, got: {done.stdout[-200:]}")
            row.median = max(g["median"] for g in got)
            row.min = max(g["min"] for g in got)
            share = max(g["allreduce"] for g in got) / row.median
            row.extra["compute_cpu"] = max(g["compute_cpu"] for g in got)
            row.extra["pure_allreduce"] = max(g["pure_allreduce"] for g in got)
            row.note = f"{n * batch} examples/step; allreduce {100 * share:.1f}% of the step"
            rows[n] = row
        except NotAvailable as e:
            row.status, row.note = "n/a", str(e)
        except Exception as e:  # noqa: BLE001
            row.status, row.note = "error", f"{type(e).__name__}: {e}"[:160]
        row.baseline = n == 1
        b.rows.append(row)
        b._log(row)
    if 1 in rows and 2 in rows:
        rows[2].note += f"; {2 * rows[1].median / rows[2].median:.2f}x 1 rank's throughput"
        # by CPU time (meaningful on a loaded host): each rank's compute on its own
        # core plus the allreduce alone, against one rank's compute
        c1, c2 = rows[1].extra["compute_cpu"], rows[2].extra["compute_cpu"]
        pure = rows[2].extra["pure_allreduce"]
        rows[2].note += (
            f"; by CPU time {2 * c1 / (c2 + pure):.2f}x (compute {1e3 * c1:.1f} / "
            f"{1e3 * c2:.1f} ms, allreduce alone {1e3 * pure:.2f} ms = "
            f"{100 * pure / (c2 + pure):.1f}%)"
        )
    return f"MPI data-parallel MLP step ({batch}x{din} -> {hidden} -> {dout} per rank)"


# ---------------------------------------------------------------------------
# Issue 17 (latency, disk cache, random, compiled loops): rows of helper E
# ---------------------------------------------------------------------------

# T3: a child process imports srcjax (not timed), then times each first call
# (transformation + call); run with an empty cache directory, then again with the
# one the first child filled (the second process of the disk cache).
_T3_CHILD = r"""
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(sys.argv[1], "tools"))
import numpy as np
import srcjax, srcjax.numpy as jnp
try:
    from srcjax.codegen import diskcache
    hits = lambda: diskcache.STATS["hits"]
except ImportError:  # (a srcjax without the disk cache: the "before" column)
    hits = lambda: "n/a"
import bench
which = sys.argv[3]
rng = np.random.default_rng(0)
sizes = (784, 512, 512, 10)
params = {}
for i, (m, n) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
    params[f"w{i}"] = (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32)
    params[f"b{i}"] = np.zeros(n, np.float32)
x = rng.standard_normal((128, 784)).astype(np.float32)
y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]
bench._mlp_backprop(params, x, y)  # page faults and BLAS start-up, not srcjax's
if which == "grad30":
    mod = bench._load_source(sys.argv[2], "t3_fn")
    make, args = (lambda: srcjax.grad(mod.f_3)), (0.7,)
elif which == "w4vg":
    make, args = (lambda: srcjax.value_and_grad(bench._mlp_loss(jnp))), (params, x, y)
else:
    make, args = (lambda: srcjax.jit(srcjax.value_and_grad(bench._mlp_loss(jnp)))), (params, x, y)
t0, c0 = time.perf_counter(), time.process_time()
fn = make()
fn(*args)
wall, cpu = time.perf_counter() - t0, time.process_time() - c0
calls = []
for _ in range(5):
    t0 = time.perf_counter(); fn(*args); calls.append(time.perf_counter() - t0)
print(json.dumps({"wall": wall, "cpu": cpu, "call": min(calls), "hits": hits()}))
"""


def t3(b: Bench, quick, tmpdir):
    """First calls in a fresh process (transformation + one call), without and with
    the disk cache a previous process filled. Each measurement is its own child
    process (one BLAS thread, so the call inside is a few ms of CPU time)."""
    import json
    import subprocess

    src = os.path.join(tmpdir, "t3_fn.py")
    with open(src, "w") as fh:
        fh.write(_T1_TEMPLATE.format(k="3", ns="jnp"))
    what = {
        "grad30": "grad of the 30-line T1 function",
        "w4vg": "W4 value_and_grad",
        "w4jit": "W4 jit(value_and_grad)",
    }
    for name, label in what.items():
        cache = tempfile.mkdtemp(prefix="srcjax-bench-t3-")
        # without jax in the child: importing it adds ~70k objects to every full
        # garbage collection (50 ms each instead of ~12), which is not srcjax's cost
        env = dict(
            os.environ, SRCJAX_CACHE_DIR=cache, OPENBLAS_NUM_THREADS="1", SRCJAX_BENCH_NO_JAX="1"
        )
        for run in ("empty cache", "disk cache"):
            row = Row("T3", f"{label}, {run}")
            done = subprocess.run(
                [sys.executable, "-c", _T3_CHILD, ROOT, src, name],
                env=env,
                capture_output=True,
                text=True,
                timeout=600,
            )
            if done.returncode != 0:
                row.status, row.note = "error", done.stderr.strip()[-160:]
            else:
                got = json.loads(done.stdout.strip().splitlines()[-1])
                row.median = row.min = got["wall"]
                row.note = (
                    f"cpu {fmt_time(got['cpu'])}; a later call {fmt_time(got['call'])}; "
                    f"disk hits {got['hits']}"
                )
            b.rows.append(row)
            b._log(row)
    return "first calls in a fresh process: empty cache directory, then the disk cache"


def _rk4_program(ns, lax):
    """A Lorenz system integrated by RK4 as a JAX user writes it."""

    def lorenz(y, p):
        sigma, rho, beta = p[0], p[1], p[2]
        return ns.stack(
            [sigma * (y[1] - y[0]), y[0] * (rho - y[2]) - y[1], y[0] * y[1] - beta * y[2]]
        )

    def rk4_step(y, p, dt):
        k1 = lorenz(y, p)
        k2 = lorenz(y + 0.5 * dt * k1, p)
        k3 = lorenz(y + 0.5 * dt * k2, p)
        k4 = lorenz(y + dt * k3, p)
        return y + dt / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)

    def final_energy(p, y0, n):
        y = lax.fori_loop(0, n, lambda i, y: rk4_step(y, p, 0.001), y0)
        return ns.sum(y * y)

    return final_energy


def _rk4_by_hand(p, y0, n):
    def f(y):
        return np.array(
            [p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1], y[0] * y[1] - p[2] * y[2]],
            np.float32,
        )

    y, dt = y0.copy(), np.float32(0.001)
    for _ in range(n):
        k1 = f(y)
        k2 = f(y + np.float32(0.5) * dt * k1)
        k3 = f(y + np.float32(0.5) * dt * k2)
        k4 = f(y + dt * k3)
        y = y + dt / np.float32(6.0) * (k1 + np.float32(2.0) * k2 + np.float32(2.0) * k3 + k4)
    return np.sum(y * y)


def l3(b: Bench, quick):
    """RK4 of a 3-state ODE (Lorenz), 10,000 steps under jit: the value, and the
    gradient with respect to the parameters (L3g)."""
    n = 2_000 if quick else 10_000
    p = np.array([10.0, 28.0, 8.0 / 3.0], np.float32)
    y0 = np.array([1.0, 1.0, 1.0], np.float32)
    note = f"{n} steps"
    b.run("L3", "NumPy float32, by hand", lambda: lambda: _rk4_by_hand(p, y0, n), baseline=True)

    def sj(grad):
        need("jit")
        fn = _rk4_program(sjnp, srcjax.lax)
        fn = srcjax.grad(fn) if grad else fn
        f = srcjax.jit(fn, static_argnums=2)
        return lambda: f(p, y0, n)

    def jx(grad):
        need_jax()
        fn = _rk4_program(jjnp, jax.lax)
        fn = jax.grad(fn) if grad else fn
        f = jax.jit(fn, static_argnums=2)
        pj, yj = jax.device_put((p, y0))
        return lambda: f(pj, yj, n).block_until_ready()

    b.run("L3", "srcjax.jit", lambda: sj(False), tol=1e-3, note=note)
    b.run(
        "L3",
        "srcjax.jit (numba loops)",
        lambda: _numba_loops(lambda: sj(False)),
        tol=1e-3,
        note=note,
    )
    b.run("L3", "jax.jit", lambda: jx(False), tol=1e-3, note=note)
    ref = b.run("L3g", "jax.jit(jax.grad)", lambda: jx(True), baseline=True, note=note)
    del ref
    b.run("L3g", "srcjax.jit(srcjax.grad)", lambda: sj(True), tol=1e-3, note=note)
    b.run(
        "L3g",
        "srcjax.jit(srcjax.grad) (numba loops)",
        lambda: _numba_loops(lambda: sj(True)),
        tol=1e-3,
        note=note,
    )
    return "RK4 of the Lorenz system under jit: value (L3) and grad w.r.t. parameters (L3g)"


def n1(b: Bench, quick):
    """random.normal inside jit (1e3, 1e6 values) and under vmap over 16 keys, with
    srcjax's compiled kernels (Numba), its NumPy path and jax.jit; the baseline is
    NumPy's own (different) generator, so only the ratios are compared."""
    sizes = [("N1", 1_000, 1), ("N2", 1_000_000, 1), ("N3", 1_000, 16)]
    if not quick:
        sizes.append(("N4", 62_500, 16))
    for key, n, nkeys in sizes:
        note = f"{nkeys} keys x {n}" if nkeys > 1 else f"{n} values"
        rng = np.random.default_rng(0)
        b.run(
            key,
            "NumPy default_rng.standard_normal",
            lambda n=n, nkeys=nkeys, rng=rng: lambda: rng.standard_normal((nkeys, n), np.float32),
            baseline=True,
            note=note,
        )

        def make_srcjax(n=n, nkeys=nkeys, kernels=True):
            need("jit")
            from srcjax.random import _threefry as tf

            def draw(k):
                return srcjax.random.normal(k, (n,))

            keys = srcjax.random.split(srcjax.random.PRNGKey(0), nkeys)
            f = srcjax.jit(srcjax.vmap(draw)) if nkeys > 1 else srcjax.jit(draw)
            arg = keys if nkeys > 1 else keys[0]
            if not hasattr(tf, "kernels"):  # (a srcjax without them: NumPy only)
                if kernels:
                    raise NotAvailable("no compiled kernels in this srcjax")
                return lambda: f(arg)
            if kernels and tf.kernels() is None:
                raise NotAvailable("numba not installed")

            if kernels:
                return lambda: f(arg)

            def call():
                tf.use_kernels(False)
                try:
                    return f(arg)
                finally:
                    tf.use_kernels(True)

            return call

        def make_jax(n=n, nkeys=nkeys):
            need_jax()

            def draw(k):
                return jax.random.normal(k, (n,))

            keys = jax.random.split(jax.random.PRNGKey(0), nkeys)
            f = jax.jit(jax.vmap(draw)) if nkeys > 1 else jax.jit(draw)
            arg = keys if nkeys > 1 else keys[0]
            return lambda: f(arg).block_until_ready()

        fast = b.run(key, "srcjax.jit (Numba kernels)", make_srcjax, check=False, note=note)
        if n * nkeys <= 100_000 or not quick:
            b.run(
                key,
                "srcjax.jit (NumPy path)",
                lambda: make_srcjax(kernels=False),
                check=False,
                note=note,
            )
        ref = b.run(key, "jax.jit", make_jax, check=False, note=note)
        if fast.median and ref.median:
            fast.note += f"; / jax.jit = {fast.median / ref.median:.2f}x"
    return "random.normal inside jit (N1 1e3, N2 1e6), and vmap over 16 keys (N3, N4)"


WORKLOADS = {
    "W1": w1,
    "W2": w2,
    "W3": w3,
    "W4": w4,
    "W4u": w4u,
    "W5": w5,
    "W7": w7,
    "H1": h1,
    "L1": l1,
    "L2": l2,
    "T1": t1,
    **{f"R{i}": real_row(f"R{i}") for i in range(1, 9)},
    "P1": p1,
    "P2": p2,
    "P3": p3,
    "T3": t3,
    "N1": n1,
    "L3": l3,
}


# -- A1-A4: srcjax.Array in eager code (issue 16) ------------------------------
# (their own block: other rows are added above WORKLOADS by others)


def a1(b: Bench, quick):
    """Operators on Arrays of 1e6 float32 against the same NumPy operators."""
    n = 10**5 if quick else 10**6
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal(n, np.float32), rng.standard_normal(n, np.float32)
    b.run("A1", "numpy x * y + x", lambda: lambda: x * y + x, baseline=True)

    def arrays():
        need_jnp()
        ax, ay = sjnp.asarray(x), sjnp.asarray(y)
        return lambda: ax * ay + ax

    b.run("A1", "srcjax Array x * y + x", arrays, tol=0)
    return f"eager operators on {n:.0e} float32"


def a2(b: Bench, quick):
    """An eager ``jnp`` elementwise function on 1e6 float32 against NumPy's."""
    n = 10**5 if quick else 10**6
    x = np.random.default_rng(0).standard_normal(n, np.float32)
    b.run("A2", "numpy np.sin(x)", lambda: lambda: np.sin(x), baseline=True)

    def arrays():
        need_jnp()
        ax = sjnp.asarray(x)
        return lambda: sjnp.sin(ax)

    b.run("A2", "srcjax jnp.sin(Array)", arrays, tol=0)
    return f"eager jnp.sin on {n:.0e} float32"


def a3(b: Bench, quick):
    """Operators on scalars: ``x * y + x`` of 0-d float32 Arrays against NumPy
    float32 scalars (the target: at most 1 us added per operation, 2 here)."""
    x, y = np.float32(1.5), np.float32(-0.25)
    b.run("A3", "numpy float32 scalars x * y + x", lambda: lambda: x * y + x, baseline=True)

    def arrays():
        need_jnp()
        ax, ay = sjnp.asarray(x), sjnp.asarray(y)
        return lambda: ax * ay + ax

    def jnp_calls():
        need_jnp()
        ax, ay = sjnp.asarray(x), sjnp.asarray(y)
        return lambda: sjnp.add(sjnp.multiply(ax, ay), ax)

    b.run("A3", "srcjax 0-d Arrays x * y + x", arrays, tol=0)
    b.run("A3", "srcjax jnp.add(jnp.multiply(x, y), x)", jnp_calls, tol=0)
    return "two operations on float32 scalars"


def a4(b: Bench, quick):
    """W3 against a hand-written derivative in float32 NumPy scalars (the result
    JAX defines; W3's baseline computes in float64)."""
    one = np.float32(1.0)

    def hand(x):
        e = np.exp(x)
        return e / (e + np.float32(1.0)) ** 2

    b.run("A4", "numpy float32 hand-written derivative", lambda: lambda: hand(one), baseline=True)

    def srcjax_grad():
        need("grad")
        g = srcjax.grad(_logistic(sjnp))
        return lambda: g(1.0)

    b.run("A4", "srcjax.grad (W3)", srcjax_grad, tol=1e-6, note="target <= 2x")
    return "W3 against float32 NumPy scalars"


WORKLOADS.update({"A1": a1, "A2": a2, "A3": a3, "A4": a4})

#: U1-U5: fresh users' loop-heavy programs (tools/real_programs/u*.py), run as
#: the R rows are; only with --users or --only (not in a plain or --quick run)
USER_WORKLOADS = {f"U{i}": real_row(f"U{i}") for i in range(1, 6)}


# ---------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------


def report(b: Bench, titles, wall, args):
    import numpy

    lines = ["# srcjax benchmarks", ""]
    lines.append(f"- date: {time.strftime('%Y-%m-%dT%H:%M:%S%z')}")
    load = f", loadavg {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
    lines.append(
        f"- machine: {platform.system()} {platform.machine()}, nproc={os.cpu_count()}{load}"
    )
    versions = [f"python {platform.python_version()}", f"numpy {numpy.__version__}"]
    if srcjax is not None:
        versions.append(f"srcjax {getattr(srcjax, '__version__', '(dev)')}")
    else:
        versions.append(f"srcjax not importable ({SRCJAX_ERR})")
    versions.append(f"jax {jax.__version__}" if jax is not None else "jax not installed")
    lines.append("- versions: " + ", ".join(versions))
    lines.append("- BLAS: " + _blas_info())
    lines.append(
        f"- repeats={args.repeats}, quick={args.quick}, total wall time {wall:.1f} s; "
        "ratio = median / median of the workload's baseline row"
    )
    lines.append("")
    for key, title in titles:
        lines.append(f"- **{key}**: {title}")
    lines.append("")
    lines.append(
        "| workload | implementation | median | min | ratio | first call | check | notes |"
    )
    lines.append("|---|---|---|---|---|---|---|---|")
    base = {r.workload: r for r in b.rows if r.baseline and r.status == "ok"}
    for r in b.rows:
        if r.status == "n/a":
            median, ratio = "n/a", "n/a"
        elif r.status == "error":
            median, ratio = r.note.split(":")[0], "-"
        else:
            median = fmt_time(r.median)
            ref = base.get(r.workload)
            ratio = f"{r.median / ref.median:.2f}×" if ref and ref.median else "-"
        if r.baseline:
            check = "baseline"
        elif r.err is None:
            check = "-"
        else:
            check = ("**MISMATCH** " if r.mismatch else "") + f"err={r.err:.1e}"
        lines.append(
            f"| {r.workload} | {r.impl} | {median} | {fmt_time(r.min)} | {ratio} | "
            f"{fmt_time(r.first)} | {check} | {r.note} |"
        )
    return "\n".join(lines)


def _gpu_row(row, this, b, quick):
    return row(b, this, quick)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few repeats")
    parser.add_argument("--repeats", type=int, default=None, help="samples per row (default 7)")
    parser.add_argument("--only", default=None, help="comma-separated workloads, e.g. W3,W4")
    parser.add_argument("--verbose", action="store_true", help="print tracebacks of failures")
    parser.add_argument(
        "--count-calls",
        action="store_true",
        help="R rows: count the NumPy calls one srcjax step makes (tools/numpy_calls.py)",
    )
    parser.add_argument(
        "--gpu",
        action="store_true",
        help="the GPU rows G1-G4 (tools/bench_gpu.py: CUDA backend vs CuPy, cupy.fuse, jax.jit)",
    )
    parser.add_argument(
        "--in-process",
        action="store_true",
        help="R rows: run in this process, not one child process per row",
    )
    parser.add_argument(
        "--users",
        action="store_true",
        help="the fresh users' loop programs U1-U5 (LSTM, GRU, Adam in scan, MH over keys, vmapped Newton)",
    )
    parser.add_argument("--rows-json", default=None, help=argparse.SUPPRESS)  # (W4u's child)
    args = parser.parse_args(argv)
    if args.gpu:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import bench_gpu

        this = sys.modules[__name__]
        for k, row in bench_gpu.GPU_WORKLOADS.items():
            WORKLOADS[k] = functools.partial(_gpu_row, row, this)
        if not args.only:
            args.only = ",".join(bench_gpu.GPU_WORKLOADS)
    if args.repeats is None:
        args.repeats = 3 if args.quick else 7
    if args.users or args.only:
        WORKLOADS.update(USER_WORKLOADS)
        if not args.only:
            args.only = ",".join(USER_WORKLOADS)
    wanted = list(WORKLOADS) if not args.only else [w.strip() for w in args.only.split(",")]
    unknown = [w for w in wanted if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workloads {unknown}; choose from {list(WORKLOADS)}")

    b = Bench(args.repeats, 0.005 if args.quick else 0.02, args.verbose)
    b.count_calls = args.count_calls
    b.in_process = args.in_process
    titles = []
    t_start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="srcjax-bench-src-") as tmpdir:
        for key in wanted:
            print(f"{key} ...", file=sys.stderr, flush=True)
            if key in ("T1", "T3") or key.startswith(("R", "U")):
                titles.append((key, WORKLOADS[key](b, args.quick, tmpdir)))
            else:
                titles.append((key, WORKLOADS[key](b, args.quick)))
    if args.rows_json:
        import dataclasses
        import json

        rows = [dataclasses.asdict(dataclasses.replace(r, result=None)) for r in b.rows]
        if rows:
            rows[0]["extra"] = {**rows[0]["extra"], "blas": _blas_info()}
        with open(args.rows_json, "w") as f:
            json.dump(rows, f)
        return 0
    print(report(b, titles, time.perf_counter() - t_start, args))
    return 0


if __name__ == "__main__":
    sys.exit(main())
