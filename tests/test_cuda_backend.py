"""The CUDA backend (srcjax.backends.cupy_cuda) and the device API
(srcjax.devices), end to end on the CPU through the CuPy test double
(srcjax.testing.fake_cupy): every kernel launched is the exact source CuPy
14.2.0 would compile, run through g++ and the CUDA shim; every other operation
runs on the double's "device" arrays, which refuse implicit conversion to NumPy
as CuPy's do. Oracles: the same functions on the NumPy backend, and NumPy.

Tests that need a real GPU skip when cupy.cuda.is_available() is False."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import srcjax
import srcjax.nn as nn
import srcjax.numpy as jnp
import srcjax.random as jr
import srcjax.scipy.special as sp
from srcjax import lax
from srcjax.backends import cupy_cuda
from srcjax.backends.cupy_cuda import offline as off
from srcjax.testing import fake_cupy

_cp = off.cupy_or_none()
#: why no CUDA test can run (CuPy missing, or not the version the harness reads)
_why_cupy = off.required(
    "cupy is not installed (pip install 'srcjax[cuda13]')"
    if _cp is None
    else (None if _cp.__version__ == off.CUPY_VERSION else f"cupy {_cp.__version__}")
)
#: why the emulated path cannot run (it also compiles CuPy's kernels with g++);
#: the real-GPU variants do not need g++
_why = _why_cupy or off.required(off.gxx_available())
pytestmark = pytest.mark.skipif(_why_cupy is not None, reason=str(_why_cupy))


@pytest.fixture
def gpu():
    """Two fake GPUs, the double installed as CuPy."""
    if _why is not None:
        pytest.skip(_why)
    fake = fake_cupy.use_fake(ndevices=2)
    cupy_cuda.HOST_CALLS.clear()
    with cupy_cuda.use_cupy(fake):
        yield fake


_real_gpu = _cp is not None and _why_cupy is None and bool(_cp.cuda.is_available())


@pytest.fixture(params=["emulated", "real GPU"])
def on_gpu(request):
    """The CUDA path on the test double, and on a real GPU when there is one."""
    if request.param == "emulated":
        if _why is not None:
            pytest.skip(_why)
        fake = fake_cupy.use_fake(ndevices=2)
        cupy_cuda.HOST_CALLS.clear()
        with cupy_cuda.use_cupy(fake):
            yield fake
    else:
        if not _real_gpu:
            pytest.skip("no GPU: cupy.cuda.is_available() is False")
        cupy_cuda.HOST_CALLS.clear()
        yield _cp


# -- devices ---------------------------------------------------------------------------
def test_devices_without_a_gpu_are_the_cpu():
    if _real_gpu and srcjax.devices()[0].platform == "gpu":
        pytest.skip("a GPU is present (the default device is the GPU)")
    assert srcjax.devices() == [srcjax.devices("cpu")[0]]
    assert repr(srcjax.devices()[0]) == "CpuDevice(id=0)"
    assert srcjax.default_backend() == "cpu"
    with pytest.raises(RuntimeError, match="no GPU"):
        srcjax.devices("gpu")


def test_devices_list_each_gpu(gpu):
    d = srcjax.devices()
    assert [repr(x) for x in d] == ["CudaDevice(id=0)", "CudaDevice(id=1)"]
    assert srcjax.devices("gpu") == d == srcjax.local_devices()
    assert srcjax.devices("cuda") == d
    assert d[0].platform == "gpu" and isinstance(d[0], srcjax.CudaDevice)
    assert srcjax.default_backend() == "gpu"
    assert srcjax.device_count() == 2
    assert srcjax.devices("cpu")[0].platform == "cpu"


@pytest.mark.parametrize("how", ["config", "SRCJAX_PLATFORMS", "JAX_PLATFORMS"])
def test_platforms_cpu_hides_the_gpus(gpu, how, monkeypatch):
    # (each way alone: SRCJAX_PLATFORMS=cuda,cpu, as tools/gpu_check.sh sets it,
    # would take precedence over JAX_PLATFORMS)
    monkeypatch.delenv("SRCJAX_PLATFORMS", raising=False)
    monkeypatch.delenv("JAX_PLATFORMS", raising=False)
    if how == "config":
        srcjax.config.update("jax_platforms", "cpu")
    else:
        monkeypatch.setenv(how, "cpu")
    try:
        assert srcjax.devices() == srcjax.devices("cpu")
        assert srcjax.default_backend() == "cpu"
        with pytest.raises(RuntimeError, match="jax_platforms=cpu"):
            srcjax.devices("gpu")
    finally:
        srcjax.config.update("jax_platforms", None)


def test_device_put_and_get_round_trip(gpu):
    g0, g1 = srcjax.devices("gpu")
    tree = {"w": np.arange(6.0).reshape(2, 3), "b": [1.5, np.int64(3)]}
    on = srcjax.device_put(tree, g1)
    # an srcjax.Array holding the double's (CuPy's) buffer, .device its GPU
    assert _on_device(on["w"]) and on["w"].device == g1
    assert isinstance(_buffer(on["w"]), fake_cupy.FakeArray) and _buffer(on["w"]).device_id == 1
    assert on["w"].dtype == np.float32  # JAX's canonical dtype (x64 off)
    assert on["b"][1].dtype == np.int32 and on["b"][1].device == g1
    back = srcjax.device_get(on)
    assert type(back["w"]) is np.ndarray and type(back["b"][0]) is np.ndarray
    np.testing.assert_array_equal(back["w"], np.arange(6.0, dtype=np.float32).reshape(2, 3))
    assert srcjax.device_put(on["w"], g1) is on["w"]  # already there
    assert srcjax.device_put(on["w"], g0).device == g0
    on_cpu = srcjax.device_put(on["w"], srcjax.devices("cpu")[0])
    assert isinstance(on_cpu, srcjax.Array) and type(_buffer(on_cpu)) is np.ndarray
    assert on_cpu.device == srcjax.devices("cpu")[0]
    # np.asarray copies a GPU Array to the host (CuPy itself refuses implicit conversion)
    h = np.asarray(on["w"])
    assert type(h) is np.ndarray and h.dtype == np.float32
    np.testing.assert_array_equal(h, back["w"])
    assert "Array([[0., 1., 2.]," in repr(on["w"]) and str(on["b"][0]) == "1.5"
    # the default device is the first GPU
    assert srcjax.device_put(np.ones(3)).device == g0


def test_mixing_devices_in_one_call_names_both(gpu):
    g0, g1 = srcjax.devices("gpu")
    a = srcjax.device_put(np.ones(4, np.float32), g0)
    b = srcjax.device_put(np.ones(4, np.float32), g1)
    with pytest.raises(
        ValueError, match=r"argument x is on CudaDevice\(id=0\).*y on CudaDevice\(id=1\)"
    ):
        srcjax.jit(_add)(a, b)
    both = r"argument x is on CudaDevice\(id=0\) and argument y on CudaDevice\(id=1\)"
    with pytest.raises(ValueError, match="jnp.add: incompatible devices: " + both):
        jnp.add(a, b)  # eager: the same error
    with pytest.raises(ValueError, match=both):
        a + b  # an operator is jnp.add
    with pytest.raises(ValueError, match=r"jnp.stack: .*CudaDevice\(id=0\).*CudaDevice\(id=1\)"):
        jnp.stack([a, b])
    # host values next to a GPU array are committed to it (JAX's uncommitted arrays)
    for host in (np.ones(4, np.float32), jnp.ones(4), 1.0):
        assert (a + host).device == g0 and (host * b).device == g1


def test_eager_results_are_arrays_on_the_inputs_device(on_gpu):
    g1 = srcjax.devices("gpu")[-1]
    xh = np.array([[1.0, -2.0, 4.0], [0.5, 3.0, -1.0]], np.float32)
    x = srcjax.device_put(xh, g1)
    got = {
        "sin*2": jnp.sin(x) * 2.0,
        "op": -(x @ x.T) / 3,
        "method sum": x.sum(axis=1),
        "astype": x.astype(jnp.int32),
        "where": jnp.where(x > 0, x, 0.0),
        "item": x[1, 2],
        "gather": x[np.array([1, 0, 1])],
        "at set": x.at[0, 1].set(7.0),
        "at add": x.at[:, 0].add(1.0),
        "reshape": x.reshape(3, 2),
        "T": x.T,
        "mean": jnp.mean(x),
    }
    want = {
        "sin*2": np.sin(xh) * 2,
        "op": -(xh @ xh.T) / 3,
        "method sum": xh.sum(axis=1),
        "astype": xh.astype(np.int32),
        "where": np.where(xh > 0, xh, 0),
        "item": xh[1, 2],
        "gather": xh[[1, 0, 1]],
        "at set": np.where(np.arange(6).reshape(2, 3) == 1, 7, xh),
        "at add": xh + np.array([[1, 0, 0]] * 2, np.float32),
        "reshape": xh.reshape(3, 2),
        "T": xh.T,
        "mean": xh.mean(),
    }
    for k, v in got.items():
        assert _on_device(v) and v.device == g1, k
        h = np.asarray(v)
        assert type(h) is np.ndarray and h.dtype == want[k].dtype, k
        np.testing.assert_allclose(h, want[k], rtol=1e-6, err_msg=k)
    # device_get brings a pytree of them to the host as NumPy arrays
    back = srcjax.device_get(got)
    assert all(type(v) is np.ndarray for v in back.values())
    assert float(got["mean"]) == pytest.approx(float(xh.mean())) and bool(got["item"] < 0)


def test_jit_results_are_arrays_on_the_gpu(on_gpu):
    g = srcjax.devices("gpu")[0]
    x = srcjax.device_put(np.arange(6.0, dtype=np.float32).reshape(2, 3), g)
    out = srcjax.jit(_tree_out)(x, 2.0)
    assert set(out) == {"a", "b"} and isinstance(out["b"], tuple)
    for v in (out["a"], *out["b"]):
        assert _on_device(v) and v.device == g
    np.testing.assert_allclose(np.asarray(out["a"]), np.exp(np.arange(6.0)).reshape(2, 3) * 2)
    np.testing.assert_allclose(srcjax.device_get(out["b"][1]), 15.0)
    # and a jitted gradient taken on the GPU
    gx = srcjax.jit(srcjax.grad(_loss))(x, x.T)
    assert _on_device(gx) and gx.shape == (2, 3)


def _tree_out(x, s):
    return {"a": jnp.exp(x) * s, "b": (x + 1, jnp.sum(x))}


def _add(x, y):
    return x + y


# -- jit on the GPU ----------------------------------------------------------------------
def _chain(x, b):
    y = jnp.sin(x) * 2.0 + b
    z = jnp.tanh(y) * jnp.maximum(y, 0.0)
    return jnp.sum(z * z), z


def _loss(w, x):
    h = jnp.tanh(x @ w)
    return jnp.mean(h * h)


def _buffer(v):
    return srcjax._array.buffer(v)


def _host(v):
    """A result as a NumPy array (np.asarray copies an Array on a GPU to the host)."""
    return np.asarray(v)


def _on_device(v):
    """An srcjax.Array on a GPU: holding a CuPy (double's) buffer, .device a CudaDevice."""
    return (
        isinstance(v, srcjax.Array)
        and cupy_cuda.is_device_array(_buffer(v))
        and isinstance(v.device, srcjax.CudaDevice)
        and v.device.id == _buffer(v).device.id
    )


def test_jit_forward_runs_fused_kernels_and_matches_numpy(on_gpu):
    rng = np.random.default_rng(0)
    x = rng.normal(size=(64, 33)).astype(np.float32)
    b = np.float32(0.3)
    jf = srcjax.jit(_chain)
    s, z = jf(srcjax.device_put(x), b)
    assert _on_device(z) and _on_device(s)
    s_ref, z_ref = _chain(x, b)  # the NumPy backend
    np.testing.assert_allclose(_host(z), z_ref, rtol=3e-6, atol=1e-6)
    np.testing.assert_allclose(_host(s), s_ref, rtol=2e-5)
    assert _host(s).dtype == np.float32 and _host(z).dtype == np.float32
    text = srcjax.source(jf, srcjax.device_put(x), b)
    # one ElementwiseKernel for the chain, one ReductionKernel for the sum
    assert text.count("_cuda.sj_") == 2, text
    assert "ElementwiseKernel sj_f_" in text and "ReductionKernel sj_f_sum_" in text
    assert cupy_cuda.HOST_CALLS == {}


def test_host_arguments_move_to_the_default_gpu(on_gpu):
    x = np.linspace(-2, 2, 50).astype(np.float32)
    s, z = srcjax.jit(_chain)(x, 1.0)  # NumPy inputs: the default device is a GPU
    assert _on_device(z)
    np.testing.assert_allclose(_host(z), _chain(x, 1.0)[1], rtol=3e-6, atol=1e-6)


def test_jit_of_grad_runs_the_backward_pass_on_the_gpu(on_gpu):
    rng = np.random.default_rng(1)
    w = (rng.normal(size=(5, 3)) * 0.3).astype(np.float32)
    x = rng.normal(size=(8, 5)).astype(np.float32)
    step = srcjax.jit(srcjax.value_and_grad(_loss))
    v, g = step(srcjax.device_put(w), srcjax.device_put(x))
    v_ref, g_ref = srcjax.value_and_grad(_loss)(w, x)
    np.testing.assert_allclose(_host(v), v_ref, rtol=2e-5)
    np.testing.assert_allclose(_host(g), g_ref, rtol=2e-5, atol=1e-7)
    # and against float64 finite differences
    from srcjax.testing.fd import fd_grad

    g_fd = fd_grad(lambda w_: float(_loss(w_.astype(np.float32), x)), w, eps=1e-3)
    np.testing.assert_allclose(_host(g), g_fd, rtol=2e-2, atol=2e-4)
    assert cupy_cuda.HOST_CALLS == {}, cupy_cuda.HOST_CALLS


def test_jit_of_vmap_runs_batched_code_on_the_gpu(on_gpu):
    def per_example(w, x):
        return jnp.sum(jnp.tanh(w * x + 1.0))

    w = np.linspace(-1, 1, 7).astype(np.float32)
    xs = np.random.default_rng(2).normal(size=(9, 7)).astype(np.float32)
    f = srcjax.jit(srcjax.vmap(per_example, in_axes=(None, 0)))
    out = f(srcjax.device_put(w), srcjax.device_put(xs))
    np.testing.assert_allclose(_host(out), np.tanh(w * xs + 1.0).sum(axis=1), rtol=2e-6)


def test_a_new_batch_size_does_not_compile_again(gpu):
    jf = srcjax.jit(_chain)
    jf(srcjax.device_put(np.ones((16, 8), np.float32)), 0.5)
    compiles = gpu.stats.compiles
    assert compiles == 2
    for n in (32, 48, 1000):  # new shapes: jit specializes again, the kernels are reused
        s, z = jf(srcjax.device_put(np.full((n, 8), 0.25, np.float32)), 0.5)
        np.testing.assert_allclose(_host(z), _chain(np.full((n, 8), 0.25, np.float32), 0.5)[1],
                                   rtol=3e-6)  # fmt: skip
    assert gpu.stats.compiles == compiles  # no kernel compiled for a new batch size


def test_kernels_are_cached_by_source_hash(gpu):
    def f(x):
        return jnp.exp(x) * 3.0 - x

    x = srcjax.device_put(np.arange(10, dtype=np.float32))
    # two jit objects (and two specializations): the same kernel source, one kernel
    a, b = srcjax.jit(f), srcjax.jit(f, donate_argnums=0)
    np.testing.assert_allclose(_host(a(x)), np.exp(np.arange(10.0)) * 3 - np.arange(10.0),
                               rtol=2e-6)  # fmt: skip
    b(srcjax.device_put(np.arange(10, dtype=np.float32)))
    ta = srcjax.source(a, x)
    names = {w.split("(")[0] for w in ta.split() if w.startswith("_cuda.sj_")}
    assert len(names) == 1 and names.pop() in srcjax.source(b, x)
    assert gpu.stats.compiles == 1 and len(gpu.stats.sources) == 1


def test_matmul_einsum_solve_fft_go_through_cupy(on_gpu):
    def f(a, b):
        m = a @ b
        e = jnp.einsum("ij,jk->ik", a, b)
        s = jnp.linalg.solve(a @ a.T + 3.0 * jnp.eye(4), b)
        r = jnp.abs(jnp.fft.fft(a[0]))
        return m, e, s, r

    rng = np.random.default_rng(3)
    a = rng.normal(size=(4, 4)).astype(np.float32)
    b = rng.normal(size=(4, 2)).astype(np.float32)
    got = srcjax.jit(f)(srcjax.device_put(a), srcjax.device_put(b))
    want = f(a, b)
    for g_, w_ in zip(got, want):
        assert _on_device(g_)
        np.testing.assert_allclose(_host(g_), w_, rtol=1e-4, atol=1e-5)


def _axis_stats(x, b, k):
    m = jnp.max(x, axis=-1, keepdims=True)
    e = jnp.exp(x - m)
    softmax = e / jnp.sum(e, axis=-1, keepdims=True)  # row-wise, by hand
    rows = jnp.sum(x * b, axis=1)
    cols = jnp.max(jnp.abs(x) + 1.0, axis=0)  # NaN propagates, as JAX's max
    mid = jnp.mean(x * x, axis=(0, 2))
    ints = jnp.sum(k * 3 - 1, axis=-1)
    lo = jnp.min(k - 2, axis=(-1, 0))
    return softmax, rows, cols, mid, ints, lo


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_reductions_over_axes_end_fused_regions(on_gpu, dt):
    """A region ending in a sum/max/min/mean over some axes (keepdims too) is
    one ReductionKernel called with those axes; values as the NumPy backend's."""
    rng = np.random.default_rng(7)
    x = rng.normal(size=(4, 37, 33)).astype(dt)
    x[1, 2, 3] = np.nan
    k = rng.integers(-50, 50, size=(4, 37, 33)).astype(np.int32)
    b = dt(0.75)
    want = srcjax.jit(_axis_stats)(x, b, k)  # the NumPy backend
    text = srcjax.source(srcjax.jit(_axis_stats), x, b, k, target="cuda")
    host = text.split("\n// ----")[0]
    assert host.count("ReductionKernel") == 7 and host.count(", axis=(") == 7, host
    assert host.count("keepdims=True") == 2 and "jnp.sum(" not in host and "jnp.max(" not in host
    got = srcjax.jit(_axis_stats)(srcjax.device_put(x), b, srcjax.device_put(k))
    for g, w in zip(got, want):
        assert _on_device(g) and g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(
            _host(g), np.asarray(w), rtol=2e-6 if dt == np.float32 else 1e-12
        )
    assert np.isnan(_host(got[2])[2, 3]) and np.isnan(_host(got[0])[1, 2]).all()
    assert cupy_cuda.HOST_CALLS == {}


def _row_loss(w, x):
    z = x @ w
    m = jnp.max(z, axis=-1, keepdims=True)
    lse = jnp.log(jnp.sum(jnp.exp(z - m), axis=-1)) + m[:, 0]
    return jnp.mean(lse - z[:, 0])


def test_jit_grad_through_row_reductions(on_gpu):
    rng = np.random.default_rng(8)
    w = rng.normal(size=(16, 10)).astype(np.float32)
    x = rng.normal(size=(64, 16)).astype(np.float32)
    want = srcjax.jit(srcjax.grad(_row_loss))(w, x)
    got = srcjax.jit(srcjax.grad(_row_loss))(srcjax.device_put(w), srcjax.device_put(x))
    assert _on_device(got)
    np.testing.assert_allclose(_host(got), np.asarray(want), rtol=1e-5, atol=1e-7)
    # the adjoint of z[:, 0] / m[:, 0] (a basic index) stays on the device
    assert "ad.index_adjoint" not in cupy_cuda.HOST_CALLS


def _split(x):
    y = jnp.sin(x) * 2.0 + 1.0
    z = jnp.nextafter(y, 10.0)  # (no C expression: ends the region)
    return jnp.exp(-z) + y


def test_a_primitive_without_c_expression_splits_the_region(on_gpu):
    """The kernels on either side and the call between them all run on the GPU."""
    x = np.linspace(-2, 2, 300, dtype=np.float32).reshape(3, 100)
    want = srcjax.jit(_split)(x)
    host = srcjax.source(srcjax.jit(_split), x, target="cuda").split("\n// ----")[0]
    assert host.count("ElementwiseKernel") == 2 and "jnp.nextafter(" in host, host
    got = srcjax.jit(_split)(srcjax.device_put(x))
    assert _on_device(got)
    np.testing.assert_allclose(_host(got), np.asarray(want), rtol=1e-6)


def test_integer_and_bool_regions_keep_jax_semantics(on_gpu):
    def f(i, x):
        q = i // 3
        r = i % -4
        m = jnp.where(i > 0, x, -x)
        return q, r, m, jnp.max(i * 2)

    i = np.arange(-6, 6, dtype=np.int32)
    x = np.linspace(0, 1, 12).astype(np.float32)
    got = srcjax.jit(f)(srcjax.device_put(i), srcjax.device_put(x))
    want = f(i, x)
    for g_, w_ in zip(got, want):
        np.testing.assert_array_equal(_host(g_), w_)
        assert _host(g_).dtype == np.asarray(w_).dtype


# -- regressions found by the conformance cases through the CUDA path -------------------------
def _power_series(x, n):
    acc = jnp.zeros_like(x)
    term = jnp.ones_like(x)
    for k in range(n):
        acc = acc + term  # a region whose output rebinds its input (a loop carry)
        term = term * x / (k + 1)
    return acc


def test_a_region_may_rebind_its_input(on_gpu):
    # conformance 049: the kernel declared `acc` both as input and output (g++/NVRTC
    # refused it); host constants jit folded (zeros_like) were passed to a kernel
    x = np.array([0.5, 1.0], np.float32)
    f = srcjax.jit(_power_series, static_argnums=1)
    np.testing.assert_allclose(_host(f(srcjax.device_put(x), 8)), _power_series(x, 8), rtol=1e-6)


def _upper_sum(x):
    return jnp.sum(jnp.triu(x) * x)


def test_a_host_result_of_numpy_dispatch_is_committed_to_the_device(on_gpu):
    # conformance 081: ad.index_adjoint scattered device values into np.zeros and
    # returned a host array, which the next device operator refused
    x = np.arange(9.0, dtype=np.float32).reshape(3, 3)
    g = srcjax.jit(srcjax.grad(_upper_sum))(srcjax.device_put(x))
    assert _on_device(g)
    np.testing.assert_allclose(_host(g), srcjax.grad(_upper_sum)(x), rtol=1e-6)


def test_eager_calls_run_where_their_inputs_live(on_gpu):
    # conformance 059: jnp.asarray of a jitted GPU result
    x = srcjax.device_put(np.array([1.0, 2.0, 4.0]))
    y = jnp.sin(x) * 2.0
    assert _on_device(y) and _host(y).dtype == np.float32
    np.testing.assert_allclose(_host(y), np.sin([1.0, 2.0, 4.0]).astype(np.float32) * 2, rtol=1e-6)
    assert _on_device(jnp.asarray(x)) and jnp.asarray(x).dtype == np.float32
    np.testing.assert_allclose(_host(jnp.sum(x)), 7.0)


def _identity(a):
    return a


def test_a_jitted_output_never_is_an_argument(on_gpu):
    x = srcjax.device_put(np.arange(3, dtype=np.float32))
    y = srcjax.jit(_identity)(x)
    assert y is not x and _on_device(y)
    np.testing.assert_array_equal(_host(y), [0, 1, 2])


# -- RawKernels ---------------------------------------------------------------------------
def _rows(x):
    return nn.softmax(x), nn.log_softmax(x, axis=-1), sp.logsumexp(x, axis=-1)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_row_softmax_logsumexp_raw_kernel_matches_numpy(on_gpu, dt):
    rng = np.random.default_rng(4)
    x = (rng.normal(size=(9, 517)) * 10).astype(dt)
    x[1] = -np.inf  # all -inf: softmax NaN, logsumexp -inf (JAX)
    x[2, 5] = np.nan
    x[3, 7] = np.inf
    x64 = srcjax.config.jax_enable_x64
    srcjax.config.update("jax_enable_x64", dt == np.float64)
    try:
        with np.errstate(invalid="ignore"):
            want = _rows(x)  # the NumPy backend (JAX's values)
            got = srcjax.jit(_rows)(srcjax.device_put(x))
    finally:
        srcjax.config.update("jax_enable_x64", x64)
    tol = 3e-6 if dt == np.float32 else 1e-13
    for g, w in zip(got, want):
        assert _on_device(g)
        np.testing.assert_allclose(_host(g), w, rtol=tol, atol=tol, equal_nan=True)
        assert _host(g).dtype == dt
    assert np.isneginf(_host(got[2])[1]) and np.isnan(_host(got[0])[1]).all()
    assert cupy_cuda.HOST_CALLS == {}


def test_row_kernel_launches_one_raw_kernel(gpu):
    x = srcjax.device_put(np.ones((4, 8), np.float32))
    srcjax.jit(lambda v: nn.softmax(v))(x)
    assert gpu.stats.launches == 1 and gpu.stats.compiles == 1
    assert any("sj_row_softmax_float32" in src for src in gpu.stats.sources.values())


def _draws(key):
    k1, k2 = key, jr.clone(key)  # (the same key on purpose: both draw from it)
    return jr.bits(k1, (1000,)), jr.uniform(k2, (3, 333), minval=-2.0, maxval=5.0)


def test_threefry_bits_and_uniform_on_a_device_key_are_bit_exact(on_gpu):
    key = np.asarray(jr.PRNGKey(42))
    want = _draws(key)  # srcjax.random on the host: bit for bit jax.random (its own tests)
    got = srcjax.jit(_draws)(srcjax.device_put(key))
    for g, w in zip(got, want):
        assert _on_device(g)
        np.testing.assert_array_equal(_host(g), w)
        assert _host(g).dtype == w.dtype
    assert cupy_cuda.HOST_CALLS == {}


def test_bias_and_activation_over_a_matmul_output_are_one_kernel(on_gpu):
    def layer(x, w, b):
        return jnp.tanh(x @ w + b) * 0.5

    rng = np.random.default_rng(5)
    x, w = rng.normal(size=(16, 8)).astype(np.float32), rng.normal(size=(8, 4)).astype(np.float32)
    b = rng.normal(size=(4,)).astype(np.float32)
    f = srcjax.jit(layer)
    out = f(*srcjax.device_put((x, w, b)))
    np.testing.assert_allclose(_host(out), layer(x, w, b), rtol=2e-6, atol=1e-6)
    text = srcjax.source(f, *srcjax.device_put((x, w, b)))
    assert text.count("_cuda.sj_") == 1 and "x @ w" in text  # cuBLAS, then one fused epilogue


# -- the generated source ----------------------------------------------------------------
def test_source_with_target_cuda_shows_host_code_and_kernels_without_a_gpu():
    x = np.ones((128, 64), np.float32)
    text = srcjax.source(srcjax.jit(_chain), x, np.float32(1), target="cuda")
    host, _, kernels = text.partition("// ---- CUDA kernel")
    assert "def _chain_jit(x, b):" in host and "_cuda.sj_f_" in host
    assert "# ElementwiseKernel sj_f_" in host
    assert 'extern "C" __global__ void sj_f_' in kernels  # CuPy's full kernel source
    assert "CUPY_FOR(i, _ind.size())" in kernels
    assert text.count("// ---- CUDA kernel") == 2
    # the CPU target is the plain jit source
    cpu = srcjax.source(srcjax.jit(_chain), x, np.float32(1), target="cpu")
    assert "_cuda." not in cpu


def test_cli_show_target_cuda(tmp_path):
    src = tmp_path / "model.py"
    src.write_text(
        "import srcjax.numpy as jnp\n\n"
        "def gelu(x):\n"
        "    return 0.5 * x * (1.0 + jnp.tanh(0.7978845608 * (x + 0.044715 * x * x * x)))\n"
    )
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(srcjax.__file__)))
    out = subprocess.run(
        [sys.executable, "-m", "srcjax", "show", f"{src}:gelu", "--jit", "--target", "cuda",
         "--args", "f32[4096,4096]", "--color", "never"],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "ElementwiseKernel sj_f_" in out.stdout
    assert 'extern "C" __global__ void sj_f_' in out.stdout


@pytest.mark.skipif(
    _cp is None or not _cp.cuda.is_available(), reason="no GPU: cupy.cuda.is_available() is False"
)
def test_on_a_real_gpu_jit_matches_numpy():
    x = np.random.default_rng(0).normal(size=(1000, 100)).astype(np.float32)
    s, z = srcjax.jit(_chain)(srcjax.device_put(x, srcjax.devices("gpu")[0]), np.float32(0.5))
    np.testing.assert_allclose(_cp.asnumpy(z), _chain(x, np.float32(0.5))[1], rtol=3e-6, atol=1e-6)


# -- pmap over GPUs (srcjax/backends/cupy_cuda/spmd.py) --------------------------------
@pytest.fixture
def two_cpu_devices():
    before = srcjax.config.read("jax_num_cpu_devices")
    srcjax.config.update("jax_num_cpu_devices", 2)
    yield
    srcjax.config.update("jax_num_cpu_devices", before)


def _spmd_step(x, w):
    """A per-device program with psum, pmean and all_gather (exact arithmetic
    only, so the GPU and CPU pmaps must agree bit for bit)."""
    total = lax.psum(x * w, "i")
    return x / total, lax.pmean(x - w, "i"), lax.all_gather(x + 1.0, "i"), lax.psum(2, "i")


def test_pmap_over_two_gpus_matches_the_cpu_pmap(gpu, two_cpu_devices):
    x = np.arange(1.0, 9.0, dtype=np.float32).reshape(2, 4)
    w = np.float32(0.5)
    on_cpu = srcjax.pmap(
        _spmd_step, axis_name="i", in_axes=(0, None), devices=srcjax.devices("cpu")
    )(x, w)
    g = srcjax.devices("gpu")
    out = srcjax.pmap(_spmd_step, axis_name="i", in_axes=(0, None), devices=g)(x, w)
    two = np.stack([(x - w).mean(0)] * 2)
    oracle = (x / (x * w).sum(0), two, np.stack([x + 1.0] * 2), np.array([4, 4]))
    for o, c, want in zip(out, on_cpu, oracle):
        np.testing.assert_array_equal(np.asarray(o), np.asarray(c))
        np.testing.assert_array_equal(np.asarray(o), want)
        assert o.dtype == c.dtype and o.shape == c.shape
        assert o.sharding == c.sharding.__class__(
            srcjax.sharding.Mesh(g, ("_internal_pmap_axis_name",)), c.sharding.spec
        )
        # each shard lives on its GPU, in that GPU's own buffer
        for k, s in enumerate(o.addressable_shards):
            assert s.device == g[k] and _on_device(s.data) and s.data.device == g[k]
            assert _buffer(s.data).device_id == k
            np.testing.assert_array_equal(_host(s.data), np.asarray(c.addressable_shards[k].data))
    # one non-blocking stream per device, made on that device, synchronized at
    # each of the 3 collectives on arrays and at the end
    streams = gpu.stats.streams
    assert sorted(s.device_id for s in streams) == [0, 1]
    assert all(s.non_blocking and s.synchronized == 4 for s in streams)
    assert cupy_cuda.HOST_CALLS == {}  # (the collectives' GPU path, not the fallback)


def test_pmap_psum_across_two_gpus_default_devices(gpu):
    x = np.array([[1.0, 2.0], [10.0, 20.0]], np.float32)
    # GPUs are the default platform: pmap's devices are the GPUs
    y = srcjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(x)
    np.testing.assert_array_equal(np.asarray(y), np.array([[11.0, 22.0]] * 2, np.float32))
    assert [s.device for s in y.addressable_shards] == srcjax.devices("gpu")
    assert [_buffer(s.data).device_id for s in y.addressable_shards] == [0, 1]
    # a GPU input is split over the GPUs too; out_axes=None: each GPU holds the value
    xg = srcjax.device_put(x, srcjax.devices("gpu")[1])
    z = srcjax.pmap(lambda v: lax.psum(v, "i"), axis_name="i", out_axes=None)(xg)
    np.testing.assert_array_equal(np.asarray(z), np.array([11.0, 22.0], np.float32))
    assert [_buffer(s.data).device_id for s in z.addressable_shards] == [0, 1]
    assert len(gpu.stats.streams) == 4  # (2 calls, a stream per device each)
    with pytest.raises(ValueError, match="num_replicas=3"):
        srcjax.pmap(lambda v: v)(np.ones((3, 2), np.float32))
