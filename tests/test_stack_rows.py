"""A loop's per-trip list of rows written into its stack as the trips make them
(optimize/stack_rows.py): a scan's ys made by a ufunc, and the reverse loop's
per-trip cotangents of the weights' sums. The rows are the ufunc's own results,
so jit's values must be bit for bit those of the same jit without the rewrite;
the gradients are also checked against grad without jit and float64 central
differences of the program run eagerly."""

import re

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.transforms.optimize import pipeline

T, B, D, H = 5, 16, 3, 64  # (rows of B x H = 1024 elements: stack_rows.MIN_ROW)


def _inputs(seed=0, h=H):
    rng = np.random.default_rng(seed)
    p = {
        "wx": (rng.standard_normal((D, h)) / 2).astype(np.float32),
        "wh": (rng.standard_normal((h, h)) / np.sqrt(h)).astype(np.float32),
        "b": (rng.standard_normal(h) / 4).astype(np.float32),
    }
    return p, rng.standard_normal((T, B, D)).astype(np.float32)


def loss_tanh(p, xs):  # ys the new carry (R3's form), a nonzero start
    def cell(h, x):
        h = jnp.tanh(x @ p["wx"] + h @ p["wh"] + p["b"])
        return h, h

    h0 = jnp.full((B, p["wh"].shape[0]), 0.25, xs.dtype)
    hT, ys = lax.scan(cell, h0, xs)
    return jnp.sum(ys * ys) * 0.5 + jnp.sum(hT * 3.0)


def loss_product(p, xs):  # ys a product of the carry: written in place too
    def cell(h, x):
        h = jnp.tanh(x @ p["wx"] + h @ p["wh"])
        return h, h * p["b"]

    h0 = jnp.zeros((B, p["wh"].shape[0]), xs.dtype)
    _, ys = lax.scan(cell, h0, xs)
    return jnp.sum(jnp.sin(ys))


def loss_sum_of_ys(p, xs):  # the final carry and ys both read
    def cell(h, x):
        h = jnp.sin(x @ p["wx"] + h @ p["wh"])
        return h, jnp.exp(h * 0.5)

    h0 = jnp.zeros((B, p["wh"].shape[0]), xs.dtype)
    hT, ys = lax.scan(cell, h0, xs)
    return jnp.mean(ys) + jnp.sum(hT * ys[-1])


CASES = {"tanh": loss_tanh, "product": loss_product, "sum_of_ys": loss_sum_of_ys}


def _step(loss, monkeypatch, off, tmp_path):
    # (a private cache directory: the module without the rewrite is not the one
    # the disk cache holds)
    monkeypatch.setenv("SRCJAX_CACHE_DIR", str(tmp_path / ("off" if off else "on")))
    if off:
        monkeypatch.setattr(pipeline, "rows_into_stacks", lambda fdef, namer: False)
    f = srcjax.jit(srcjax.value_and_grad(loss))
    return f


@pytest.mark.parametrize("name", sorted(CASES))
def test_rows_written_in_place_are_bit_for_bit(name, monkeypatch, tmp_path):
    loss = CASES[name]
    p, xs = _inputs(len(name))
    on = _step(loss, monkeypatch, False, tmp_path)
    v1, g1 = on(p, xs)
    src = srcjax.source(on, p, xs)
    code = "\n".join(line.split("#")[0] for line in src.splitlines())
    made = re.findall(r"= ad\.ufunc_into\(\w+, k, '(\w+)', ", code)
    assert made, src
    if name == "tanh":  # (R3's form: both loops' lists, no stack copied after either)
        assert sorted(made) == ["multiply", "tanh"] and "ad.tree_stack" not in code, src
    with monkeypatch.context() as m:
        off = _step(loss, m, True, tmp_path)
        v0, g0 = off(p, xs)
        assert "ad.ufunc_into(" not in srcjax.source(off, p, xs)
    assert np.asarray(v1).tobytes() == np.asarray(v0).tobytes()
    for k in p:
        assert np.asarray(g1[k]).dtype == np.float32
        assert np.asarray(g1[k]).tobytes() == np.asarray(g0[k]).tobytes(), k
    # and the values themselves: grad without jit, float64 central differences
    plain = srcjax.grad(loss)(p, xs)
    for k in p:
        np.testing.assert_allclose(np.asarray(g1[k]), np.asarray(plain[k]), rtol=2e-5, atol=2e-6)
    srcjax.config.update("jax_enable_x64", True)
    try:
        q = {k: v.astype(np.float64) for k, v in p.items()}
        x64 = xs.astype(np.float64)
        rng = np.random.default_rng(1)
        for k in p:
            for _ in range(3):
                idx = tuple(int(rng.integers(s)) for s in q[k].shape)
                a, b = {**q, k: q[k].copy()}, {**q, k: q[k].copy()}
                a[k][idx] += 1e-6
                b[k][idx] -= 1e-6
                num = (float(loss(a, x64)) - float(loss(b, x64))) / 2e-6
                np.testing.assert_allclose(float(np.asarray(g1[k])[idx]), num, rtol=2e-3, atol=2e-4)
    finally:
        srcjax.config.update("jax_enable_x64", False)


def test_small_rows_keep_their_list(monkeypatch, tmp_path):
    # rows of 16 x 8 elements: the stack's copy is cheaper than the calls with
    # out= (and such loops are the Numba scalar kernels')
    p, xs = _inputs(3, h=8)
    f = _step(loss_tanh, monkeypatch, False, tmp_path)
    v, g = f(p, xs)
    assert "ad.ufunc_into(" not in srcjax.source(f, p, xs)
    plain = srcjax.grad(loss_tanh)(p, xs)
    for k in p:
        np.testing.assert_allclose(np.asarray(g[k]), np.asarray(plain[k]), rtol=2e-5, atol=2e-6)


def test_the_final_carry_and_the_rows_are_the_values_made(monkeypatch, tmp_path):
    # the last row is the final carry (a view of the stack): both outputs as
    # the scan run eagerly, and the carry stays its value after another call
    monkeypatch.setenv("SRCJAX_CACHE_DIR", str(tmp_path))
    p, xs = _inputs(4)

    def run(p, xs):
        def cell(h, x):
            h = jnp.tanh(x @ p["wx"] + h @ p["wh"])
            return h, h

        return lax.scan(cell, jnp.zeros((B, H), xs.dtype), xs)

    def loss(p, xs):
        hT, ys = run(p, xs)
        return jnp.sum(ys), (hT, ys)

    f = srcjax.jit(srcjax.value_and_grad(loss, has_aux=True))
    (_, (hT, ys)), _ = f(p, xs)
    assert "ad.ufunc_into(" in srcjax.source(f, p, xs)
    want_hT, want_ys = run(p, xs)
    np.testing.assert_array_equal(np.asarray(ys), np.asarray(want_ys))
    np.testing.assert_array_equal(np.asarray(hT), np.asarray(want_ys)[-1])
    keep = np.asarray(hT).copy()
    f({k: v * 2 for k, v in p.items()}, xs)
    np.testing.assert_array_equal(np.asarray(hT), keep)


def test_the_gpu_backend_keeps_its_lists(monkeypatch, tmp_path):
    # (regression: a stack jit allocates is a NumPy array; on the CUDA backend
    # the device rows written "into" it went to a copy on the device, and the
    # gradients read uninitialized memory: NaN on the CuPy test double)
    from srcjax.backends import cupy_cuda
    from srcjax.backends.cupy_cuda import offline as off
    from srcjax.testing import fake_cupy

    cp = off.cupy_or_none()
    if cp is None or cp.__version__ != off.CUPY_VERSION or off.gxx_available() is not None:
        pytest.skip("the CuPy test double needs CuPy's pinned version and g++")
    monkeypatch.setenv("SRCJAX_CACHE_DIR", str(tmp_path))
    p, xs = _inputs(5)
    _, want = srcjax.jit(srcjax.value_and_grad(loss_tanh))(p, xs)
    with cupy_cuda.use_cupy(fake_cupy.use_fake(ndevices=1)):
        g = srcjax.devices("gpu")[0]
        pd, xd = srcjax.device_put(p, g), srcjax.device_put(xs, g)
        f = srcjax.jit(srcjax.value_and_grad(loss_tanh))
        _, got = f(pd, xd)
        assert "ad.ufunc_into(" not in srcjax.source(f, pd, xd)
        got = srcjax.device_get(got)
    for k in p:
        np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=2e-5, atol=2e-5)
