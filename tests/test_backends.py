"""The backend protocol (srcjax.backends.base), the backend registry
(srcjax.backends) and implementations keyed by backend (Primitive.impls)."""

from __future__ import annotations

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import backends
from srcjax.backends import base, numpy_cpu, runtime
from srcjax.frontend import nodes as N
from srcjax.primitives.registry import CPU, Primitive, by_public
from srcjax.transforms import fusion


def test_cpu_backend_is_the_default_and_implements_the_protocol(numba_loops_off):
    cpu = backends.get()
    assert cpu is backends.get("cpu") is numpy_cpu.BACKEND
    assert isinstance(cpu, base.Backend) and cpu.name == CPU == "cpu"
    assert cpu.platform == "cpu"
    assert cpu.namespaces() == {"_rt": runtime}
    assert cpu.min_region_size() == (runtime.CHUNK_MIN_ELEMENTS, runtime.CHUNK_MIN_ELEMENTS_CHEAP)
    assert cpu.impl(by_public("jnp.sin")) is by_public("jnp.sin").impl


def test_unknown_backend_names_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown srcjax backend 'tpu' \(known: .*cpu"):
        backends.get("tpu")


def test_for_device_picks_by_platform():
    cpu = backends.get("cpu")
    assert backends.for_device(None) is cpu
    assert backends.for_device(srcjax.devices()[0]) is cpu
    assert backends.for_device("cpu") is cpu
    # a device without a backend of its own runs on the default one, as before
    assert backends.for_device("CpuDevice(id=0)") is cpu


def test_cpu_array_hooks_are_numpy():
    cpu = backends.get("cpu")
    a = cpu.asarray([1.0, 2.0], np.float32)
    assert type(a) is np.ndarray and a.dtype == np.float32 and cpu.is_array(a)
    assert cpu.to_host(a) is a or np.array_equal(cpu.to_host(a), a)
    e = cpu.empty((2, 3), np.int32)
    assert e.shape == (2, 3) and e.dtype == np.int32
    assert not cpu.is_array([1.0])


def test_impls_are_keyed_by_backend():
    def impl(x):
        return np.asarray(x) + 1

    p = Primitive("test_backends.plus_one", impl)
    assert p.impls == {"cpu": impl} and p.impl is impl
    assert p(np.float32(1.0)) == 2.0
    with pytest.raises(NotImplementedError, match="test_backends.plus_one .* 'toy' backend"):
        p.impl_for("toy")

    def toy(x):
        return ("toy", x)

    assert p.def_impl("toy", toy) is toy
    assert p.impl_for("toy") is toy and p.impl_for("cpu") is impl
    assert p(np.float32(1.0)) == 2.0  # eager calls stay on the CPU implementation


def test_registered_primitives_keep_impl_and_cpu_impl_together():
    prim = by_public("jnp.sum")  # wrapped by the registry for JAX's dtypes
    assert prim.impls[CPU] is prim.impl
    assert prim.impl_for("cpu") is prim.impl


class _StepByStep(base.Backend):
    """A toy backend: each fused region becomes one plain call per step, written
    by the primitive's public name (as a C or CUDA renderer writes one
    expression per step from ``step.prim.c_expr``)."""

    name = "toy"
    platform = "toy"

    def __init__(self):
        self.regions = []

    def can_fuse(self, prim, operands, values, res):
        return prim.c_expr is not None and super().can_fuse(prim, operands, values, res)

    def lower_region(self, region, namer, filename):
        self.regions.append(region)
        lines = []
        for step in region.plan:
            args = []
            for kind, v in step.operands:
                args.append(N.to_source(v) if kind == "const" else v)
            lines.append(f"{step.target} = {step.prim.public}({', '.join(args)})")
        if region.reduction is not None:
            lines.append(N.to_source(region.reduction).strip())
        return [s for text in lines for s in N.parse_stmts(text)]


def _poly(x, y):
    a = jnp.sin(x) * y
    b = a + jnp.exp(y)
    return jnp.sum(b * b)


def test_a_backend_lowers_regions_through_the_shared_walk():
    from srcjax.codegen import emit
    from srcjax.frontend.normalize import normalize
    from srcjax.frontend.source import get_source
    from srcjax.transforms import optimize as opt

    n = normalize(get_source(_poly))
    fdef = n.node
    f32 = np.dtype(np.float32)
    opt.optimize(fdef, {"x": opt.Aval((64,), f32), "y": opt.Aval((64,), f32)}, None, n.namer)
    toy = _StepByStep()
    fdef, count = toy.lower(fdef, n.namer, "t.py", min_size=16)
    assert count == 1
    (reg,) = toy.regions
    assert [s.prim.public for s in reg.plan] == [
        "jnp.sin",
        "jnp.multiply",
        "jnp.exp",
        "jnp.add",
        "jnp.multiply",
    ]
    assert all(s.aval.dtype == f32 and s.aval.shape == (64,) for s in reg.plan)
    assert set(reg.inputs) == {"x", "y"} and reg.reduce_kind == "sum"
    src = get_source(_poly)
    text = emit.render(fdef, "t", "t.py")
    fn = emit.load(text, fdef.name, src.globals, src.closure, dict(n.bindings), "toy_backend")
    rng = np.random.default_rng(0)
    x, y = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
    np.testing.assert_allclose(fn(x, y), _poly(x, y), rtol=1e-6)


def test_jit_lowers_through_the_backend_protocol(monkeypatch):
    """jit reaches the backend only through srcjax.backends: a backend registered
    for a device's platform lowers that device's specializations."""
    toy = _StepByStep()
    monkeypatch.setitem(backends._LOADED, "toy", toy)
    monkeypatch.setattr(toy, "min_region_size", lambda: (16, None))

    class ToyDevice:
        platform = "toy"

    f = srcjax.jit(_poly, device=ToyDevice())
    rng = np.random.default_rng(1)
    x, y = (rng.standard_normal(64).astype(np.float32) for _ in range(2))
    np.testing.assert_allclose(f(x, y), _poly(x, y), rtol=1e-6)
    assert len(toy.regions) == 1
    assert isinstance(toy.regions[0].plan[0], fusion.Step)


def test_cpu_entry_is_the_generated_function_itself():
    def fn(x):
        return x

    assert backends.get("cpu").entry(fn, srcjax.devices()[0]) is fn
