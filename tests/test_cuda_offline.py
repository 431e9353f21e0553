"""The offline CUDA harness (srcjax.backends.cupy_cuda.offline) and the CUDA kernel
specifications (srcjax.backends.cupy_cuda.kernels), without a GPU:

- NVRTC compiles the exact source CuPy 14.2.0 would compile for every kernel
  the C renderer makes of a registry primitive, for every dtype including
  float16 (one program, each kernel in its own namespace), and a few kernels
  alone, exactly as CuPy would;
- CuPy's generated elementwise and reduction kernels run on the CPU (g++ with
  the shim, OpenMP for the shared-memory reduction) and match NumPy.

Needs ``pip install 'srcjax[cuda13]'`` (cupy-cuda13x 14.2.0, nvidia-cuda-nvrtc
13.0.x); without it these tests skip, saying so."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import srcjax  # noqa: F401  (registers the primitives)
from srcjax.backends.cupy_cuda import kernels as K
from srcjax.backends.cupy_cuda import offline as off
from srcjax.codegen import c_render as C
from srcjax.primitives.registry import REGISTRY
from srcjax.testing import fake_cupy

# (CI sets SRCJAX_REQUIRE_CUDA_OFFLINE=1: there a missing piece is an error, not a skip)
_why_nvrtc = off.required(off.nvrtc_available())
needs_nvrtc = pytest.mark.skipif(_why_nvrtc is not None, reason=str(_why_nvrtc))
_cp = off.cupy_or_none()
_why_cpu = (
    "cupy is not installed (pip install 'srcjax[cuda13]')"
    if _cp is None
    else (off.gxx_available() or (None if _cp.__version__ == off.CUPY_VERSION else "cupy version"))
)
_why_cpu = off.required(_why_cpu)
needs_cpu = pytest.mark.skipif(_why_cpu is not None, reason=str(_why_cpu))

DTYPES = ["float16", "float32", "float64", "int32", "int64", "bool", "complex64"]


def _one_step_specs():
    specs = []
    for prim in REGISTRY.values():
        if prim.c_expr is None or prim.kind != "elementwise":
            continue
        for dt in DTYPES:
            d = np.dtype(dt)
            calc = np.dtype(np.float32) if d == np.float16 else d
            tmpl = C.template_for(prim, calc)
            if tmpl is None:
                continue
            used = set(re.findall(r"{(\w+)}", tmpl))
            names = [
                p.name
                for p in prim.signature.parameters.values()
                if p.name in used and (p.default is p.empty or p.default is None)
            ]
            if not names:
                continue
            inputs = {n: (np.dtype(bool) if n == "condition" else d) for n in names}
            try:  # the result dtype as the NumPy backend (JAX's promotion) gives it
                with np.errstate(all="ignore"), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = np.asarray(prim.impl(*[np.ones(4, inputs[n]) for n in names])).dtype
            except Exception:  # noqa: BLE001 (the primitive refuses this dtype)
                continue
            step = C.Step(prim, [("in", n) for n in names], "out", res)
            try:
                specs.append(K.elementwise_spec([step], inputs, ["out"], prim.name))
            except C.NotRenderable:
                continue
    return specs


@needs_nvrtc
def test_nvrtc_compiles_every_rendered_primitive_in_every_dtype():
    specs = _one_step_specs()
    assert len(specs) >= 250, len(specs)
    assert any("float16" in s.in_params for s in specs)
    assert any("complex64" in s.in_params for s in specs)
    sources = [K.source(s) for s in specs]
    # one program: each kernel's exact source in a namespace of its own
    # (CuPy's float16 header included once, outside: it has an include guard)
    program = "#include <cupy/float16.cuh>\n" + "\n".join(
        f"namespace sj_n{i} {{\n{src}\n}}" for i, src in enumerate(sources)
    )
    cubin = off.nvrtc_compile(program, "sj_all")
    assert cubin[:4] == b"\x7fELF"


@needs_nvrtc
def test_exact_sources_compile_alone():
    f32, i32, f16 = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.float16)
    P = REGISTRY
    steps = [
        C.Step(P["jnp.multiply"], [("in", "x"), ("in", "b")], "t", f32),
        C.Step(P["jnp.tanh"], [("val", "t")], "y", f32),
    ]
    ew = K.elementwise_spec(steps, {"x": f32, "b": f32}, ["y"], "gelu_like")
    red = K.reduction_spec(steps, {"x": f32, "b": f32}, "y", "sum", f32, "loss")
    mx = K.reduction_spec([], {"x": i32}, "x", "max", i32, "top")
    half = K.elementwise_spec(
        [C.Step(P["jnp.exp"], [("in", "h")], "e", f16)], {"h": f16}, ["e"], "half"
    )
    for spec in (ew, red, mx, half):
        src = K.source(spec)
        assert f'extern "C" __global__ void {spec.name}(' in src
        assert off.nvrtc_compile(src, spec.name)[:4] == b"\x7fELF"


@needs_nvrtc
def test_raw_kernels_compile():
    from srcjax.backends.cupy_cuda import raw, threefry

    for name, src in [raw.row_kernel_source("float32"), raw.row_kernel_source("float64"),
                      (threefry.NAME, threefry.SOURCE)]:  # fmt: skip
        assert off.nvrtc_compile(src, name)[:4] == b"\x7fELF"


@needs_nvrtc
def test_compile_error_is_cupys_compile_exception_with_the_log():
    from cupy.cuda.compiler import CompileException

    with pytest.raises(CompileException, match="undefined"):
        off.nvrtc_compile('extern "C" __global__ void k() { undefined_thing(); }', "k")


# -- running on the CPU ------------------------------------------------------------------
@pytest.fixture
def fake():
    return fake_cupy.use_fake()


def _steps_bias_act():
    P = REGISTRY
    f32 = np.dtype(np.float32)
    return [
        C.Step(P["jnp.add"], [("in", "x"), ("in", "b")], "z", f32),
        C.Step(P["jnp.tanh"], [("val", "z")], "t", f32),
        C.Step(P["jnp.multiply"], [("val", "t"), ("const", 0.5)], "h", f32),
        C.Step(P["jnp.maximum"], [("val", "h"), ("in", "x")], "y", f32),
        C.Step(P["jnp.greater"], [("val", "y"), ("const", 0.0)], "pos", np.dtype(bool)),
    ]


@needs_cpu
def test_elementwise_kernel_runs_cupys_source_on_the_cpu(fake):
    f32 = np.dtype(np.float32)
    spec = K.elementwise_spec(_steps_bias_act(), {"x": f32, "b": f32}, ["y", "pos"], "act")
    k = K.build(fake, spec)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(33, 17)).astype(np.float32)
    x[0, 0] = np.nan
    b = rng.normal(size=(17,)).astype(np.float32)  # broadcast along rows
    y, pos = k(fake.asarray(x), fake.asarray(b))
    with np.errstate(invalid="ignore"):
        y_want = np.maximum(np.tanh(x + b) * np.float32(0.5), x)
    np.testing.assert_allclose(fake.asnumpy(y), y_want, rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(fake.asnumpy(pos), y_want > 0)
    assert np.isnan(fake.asnumpy(y)[0, 0])
    # the source ran is CuPy's, with the broadcast operand non-contiguous in 2-d
    assert "const CArray<float, 2, 0, 1> _raw_b" in k.cached_code
    # a scalar argument (CuPy passes NumPy scalars by value)
    y2, _ = k(fake.asarray(x), np.float32(0.25))
    with np.errstate(invalid="ignore"):
        np.testing.assert_allclose(
            fake.asnumpy(y2), np.maximum(np.tanh(x + np.float32(0.25)) * 0.5, x), rtol=2e-6
        )


@needs_cpu
@pytest.mark.parametrize(
    "kind,dt",
    [("sum", "float32"), ("mean", "float32"), ("max", "float32"), ("min", "float64"),
     ("max", "int32"), ("sum", "int32")],
)  # fmt: skip
def test_reduction_kernel_runs_cupys_shared_memory_tree_on_the_cpu(fake, kind, dt):
    P = REGISTRY
    d = np.dtype(dt)
    rng = np.random.default_rng(1)
    n = 100_003  # not a multiple of the block size
    if d.kind == "f":
        x = rng.normal(size=n).astype(d)
        steps = [C.Step(P["jnp.multiply"], [("in", "x"), ("in", "x")], "q", d)]
        want_in = x * x
    else:
        x = rng.integers(-1000, 1000, n).astype(d)
        steps = [C.Step(P["jnp.subtract"], [("in", "x"), ("const", 3)], "q", d)]
        want_in = x - 3
    spec = K.reduction_spec(steps, {"x": d}, "q", kind, d, "red")
    got = fake.asnumpy(K.build(fake, spec)(fake.asarray(x)))
    want = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min}[kind](
        want_in.astype(np.float64) if d.kind == "f" else want_in
    )
    if d.kind == "f":
        np.testing.assert_allclose(got, want, rtol=1e-5 if d == np.float32 else 1e-12)
    else:
        assert got == want
    assert got.dtype == d


@needs_cpu
def test_max_reduction_propagates_nan(fake):
    f32 = np.dtype(np.float32)
    x = np.arange(5000, dtype=np.float32)
    x[1234] = np.nan
    spec = K.reduction_spec([], {"x": f32}, "x", "max", f32, "mx")
    assert np.isnan(fake.asnumpy(K.build(fake, spec)(fake.asarray(x))))


def test_kernel_names_are_source_hashes():
    f32 = np.dtype(np.float32)
    a = K.elementwise_spec(_steps_bias_act(), {"x": f32, "b": f32}, ["y"], "act")
    b = K.elementwise_spec(_steps_bias_act(), {"x": f32, "b": f32}, ["y"], "act")
    c = K.elementwise_spec(_steps_bias_act(), {"x": f32, "b": f32}, ["pos"], "act")
    assert a == b and a.name == b.name
    assert a.name != c.name and re.fullmatch(r"sj_act_[0-9a-f]{8}", a.name)


@pytest.mark.skipif(
    _cp is None or not _cp.cuda.is_available(), reason="no GPU: cupy.cuda.is_available() is False"
)
def test_offline_sources_match_cupys_cached_code_on_a_gpu():
    cp = _cp
    f32 = np.dtype(np.float32)
    spec = K.elementwise_spec(_steps_bias_act(), {"x": f32, "b": f32}, ["y"], "act")
    k = K.build(cp, spec)
    k(cp.ones(1000, np.float32), cp.ones(1000, np.float32))
    assert k.cached_code == K.source(spec, ndim=1)
