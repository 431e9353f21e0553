"""GPU rows of tools/bench.py (``python tools/bench.py --gpu``), side by side in one run.

Rows (issue 18's targets in brackets; each timing synchronizes the device):

- G1 cube ``x * x * x`` on 1e8 float32: srcjax.jit on the GPU, CuPy eager, cupy.fuse,
  jax.jit; GB/s and the fraction of the H200's 4.8 TB/s HBM bandwidth [>= 80%];
- G2 GELU (tanh form) on 1e8 float32: the same four [srcjax >= 3x CuPy eager,
  >= cupy.fuse, >= jax.jit; >= 80% of HBM bandwidth];
- G3 the W4 MLP's ``jit(value_and_grad)`` step: srcjax, the same model by hand in
  CuPy, jax.jit [>= hand CuPy, within 1.2x of jax.jit];
- G4 a fused kernel's first call (source to launched kernel, NVRTC compile
  included; a fresh kernel each time) and a cache hit of a jitted call
  [first <= 0.5 s, hit < 20 us].

Without CuPy or a GPU every row is ``n/a`` with the reason.
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import time

import numpy as np

HBM_BYTES_PER_S = 4.8e12  # NVIDIA H200


def _cupy(need):
    try:
        import cupy as cp
    except Exception as e:  # noqa: BLE001
        raise need(f"cupy not importable ({type(e).__name__})") from None
    try:
        ok = cp.cuda.is_available()
    except Exception as e:  # noqa: BLE001
        raise need(f"no GPU ({type(e).__name__})") from None
    if not ok:
        raise need("no GPU (cupy.cuda.is_available() is False)")
    return cp


def _jax_gpus(bench):
    """(jax, its GPUs) or NotAvailable saying why not."""
    if bench.jax is None:
        raise bench.NotAvailable("jax not installed")
    import jax

    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        raise bench.NotAvailable("jax has no GPU here")
    return jax, gpus


def _sync(cp, f):
    def call():
        out = f()
        cp.cuda.Stream.null.synchronize()
        return out

    return call


def _cube(ns):
    def cube(x):
        return x * x * x

    return cube


def _elementwise_rows(b, bench, key, make, n):
    NA = bench.NotAvailable

    def srcjax_gpu():
        cp = _cupy(NA)
        import srcjax

        dev = srcjax.devices("gpu")[0]
        x = srcjax.device_put(np.random.default_rng(0).standard_normal(n).astype(np.float32), dev)
        import srcjax.numpy as sjnp

        f = srcjax.jit(make(sjnp), device=dev)
        return _sync(cp, lambda: f(x))

    def cupy_eager():
        cp = _cupy(NA)
        x = cp.asarray(np.random.default_rng(0).standard_normal(n).astype(np.float32))
        f = make(cp)
        return _sync(cp, lambda: f(x))

    def cupy_fuse():
        cp = _cupy(NA)
        x = cp.asarray(np.random.default_rng(0).standard_normal(n).astype(np.float32))
        f = cp.fuse(make(cp))
        return _sync(cp, lambda: f(x))

    def jax_jit():
        jax, gpus = _jax_gpus(bench)
        x = jax.device_put(np.random.default_rng(0).standard_normal(n).astype(np.float32), gpus[0])
        f = jax.jit(make(bench.jjnp))
        return lambda: f(x).block_until_ready()

    def host(v):
        if hasattr(v, "__cuda_array_interface__") or hasattr(v, "__srcjax_device_array__"):
            return v.get()  # a CuPy array (or the test double's)
        return np.asarray(v)

    # (results are compared after the timings, on the host: no transfer is timed)
    rows = [
        b.run(key, "cupy eager", cupy_eager, check=False),
        b.run(key, "srcjax.jit (cuda)", srcjax_gpu, check=False),
        b.run(key, "cupy.fuse", cupy_fuse, check=False),
        b.run(key, "jax.jit (gpu)", jax_jit, check=False),
    ]
    rows[0].baseline = True
    ref = host(rows[0].result) if rows[0].result is not None else None
    for r in rows:
        if r.result is not None:
            r.result = host(r.result)
            if ref is not None and r is not rows[0]:
                r.err = bench.rel_err(r.result, ref)
                r.mismatch = not (r.err <= 1e-5)
        if r.status == "ok" and r.median:
            gbs = 2 * 4 * n / r.median
            r.note = f"{gbs / 1e9:.0f} GB/s ({gbs / HBM_BYTES_PER_S:.0%} of HBM)"


def g1(b, bench, quick):
    n = 10_000_000 if quick else 100_000_000
    _elementwise_rows(b, bench, "G1", _cube, n)
    return f"cube x*x*x on the GPU ({n:.0e} f32)"


def g2(b, bench, quick):
    n = 10_000_000 if quick else 100_000_000
    _elementwise_rows(b, bench, "G2", bench._gelu_cubed_by_hand, n)
    return f"GELU on the GPU ({n:.0e} f32)"


def g3(b, bench, quick):
    NA = bench.NotAvailable
    sizes = [784, 512, 512, 10]
    batch = 128 if quick else 1024
    rng = np.random.default_rng(0)
    params = [
        ((rng.standard_normal((m, k)) / np.sqrt(m)).astype(np.float32), np.zeros(k, np.float32))
        for m, k in zip(sizes[:-1], sizes[1:])
    ]
    x = rng.standard_normal((batch, sizes[0])).astype(np.float32)
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, batch)]

    def loss(ns):
        def f(params, x, y):
            h = x
            for w, c in params[:-1]:
                h = ns.tanh(h @ w + c)
            w, c = params[-1]
            logits = h @ w + c
            z = logits - ns.max(logits, axis=1, keepdims=True)
            logp = z - ns.log(ns.sum(ns.exp(z), axis=1, keepdims=True))
            return -ns.mean(ns.sum(logp * y, axis=1))

        return f

    def by_hand():
        cp = _cupy(NA)
        P = [(cp.asarray(w), cp.asarray(c)) for w, c in params]
        X, Y = cp.asarray(x), cp.asarray(y)

        def step():
            hs = [X]
            for w, c in P[:-1]:
                hs.append(cp.tanh(hs[-1] @ w + c))
            w, c = P[-1]
            logits = hs[-1] @ w + c
            z = logits - logits.max(axis=1, keepdims=True)
            e = cp.exp(z)
            s = e.sum(axis=1, keepdims=True)
            logp = z - cp.log(s)
            val = -(logp * Y).sum(axis=1).mean()
            g = (e / s - Y) / batch
            grads = []
            for i in range(len(P) - 1, -1, -1):
                w, _ = P[i]
                grads.append((hs[i].T @ g, g.sum(axis=0)))
                if i:
                    g = (g @ w.T) * (1 - hs[i] * hs[i])
            return val, grads[::-1]

        return _sync(cp, step)

    def srcjax_gpu():
        cp = _cupy(NA)
        import srcjax
        import srcjax.numpy as sjnp

        dev = srcjax.devices("gpu")[0]
        P, X, Y = srcjax.device_put((params, x, y), dev)
        f = srcjax.jit(srcjax.value_and_grad(loss(sjnp)), device=dev)
        return _sync(cp, lambda: f(P, X, Y))

    def jax_jit():
        jax, gpus = _jax_gpus(bench)
        P, X, Y = jax.device_put((params, x, y), gpus[0])
        f = jax.jit(jax.value_and_grad(loss(bench.jjnp)))
        return lambda: jax.block_until_ready(f(P, X, Y))

    for r in (
        b.run("G3", "CuPy by hand", by_hand, baseline=True, check=False),
        b.run("G3", "srcjax.jit(value_and_grad) (cuda)", srcjax_gpu, check=False),
        b.run("G3", "jax.jit(value_and_grad) (gpu)", jax_jit, check=False),
    ):
        r.result = None
    return f"W4 MLP step on the GPU (784-512-512-10, batch {batch})"


def g4(b, bench, quick):
    NA = bench.NotAvailable
    counter = [0]

    def first_call():
        cp = _cupy(NA)
        import srcjax

        dev = srcjax.devices("gpu")[0]
        x = srcjax.device_put(np.ones(1 << 20, np.float32), dev)

        d = tempfile.mkdtemp(prefix="srcjax-g4-")
        sys.path.insert(0, d)

        def fresh():
            # a new constant in a new file: a new kernel source each time
            counter[0] += 1
            name = f"g4_{counter[0]}"
            with open(os.path.join(d, name + ".py"), "w") as fh:
                fh.write(
                    "import srcjax.numpy as jnp\n\n"
                    f"def f(v):\n    return jnp.tanh(v * {counter[0] + 0.5}) + 1.0\n"
                )
            mod = importlib.import_module(name)
            f = srcjax.jit(mod.f, device=dev)
            t0 = time.perf_counter()
            f(x)
            cp.cuda.Stream.null.synchronize()
            return time.perf_counter() - t0

        return fresh

    def cache_hit():
        _cupy(NA)
        import srcjax
        import srcjax.numpy as sjnp

        dev = srcjax.devices("gpu")[0]
        x = srcjax.device_put(np.ones(16, np.float32), dev)
        f = srcjax.jit(lambda v: sjnp.tanh(v) * 2.0, device=dev)
        f(x)
        return lambda: f(x)  # (not synchronized: the host cost of a hit)

    b.run("G4", "first call of a new fused kernel (NVRTC included)", first_call, baseline=True,
          check=False)  # fmt: skip
    b.run("G4", "jitted call, cache hit (host time)", cache_hit, check=False)
    return "fused-kernel compile time and cache-hit cost on the GPU"


GPU_WORKLOADS = {"G1": g1, "G2": g2, "G3": g3, "G4": g4}
