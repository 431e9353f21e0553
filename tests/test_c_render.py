"""The C renderer (srcjax.codegen.c_render): fused regions rendered from the
registry's C expressions, compiled with the system compiler (g++) and checked
against the NumPy backend (each primitive's NumPy implementation, which follows
JAX's values and dtypes).

Every primitive with a C expression is rendered for every dtype its template
covers, with special values (NaN, +-inf, +-0, integer division by zero) among
the inputs; all kernels go into one file (one g++ run)."""

from __future__ import annotations

import ctypes
import re
import warnings

import numpy as np
import pytest

import srcjax  # noqa: F401  (registers the primitives)
from srcjax.backends.cupy_cuda import offline as off
from srcjax.codegen import c_render as C
from srcjax.primitives.registry import REGISTRY

pytestmark = pytest.mark.skipif(off.gxx_available() is not None, reason="g++ is not installed")

DTYPES = [np.float32, np.float64, np.int32, np.int64, np.bool_, np.complex64]
N = 64
# CUDA-only device functions (no glibc counterpart): checked by NVRTC in test_cuda_offline
CUDA_ONLY = {"special.erfinv", "special.ndtri"}


def _inputs(prim, dt, k, rng):
    dt = np.dtype(dt)
    lo, hi = prim.test_domain
    if dt.kind == "f":
        x = rng.uniform(lo, hi, N).astype(dt)
        x[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5][:8]
        return np.roll(x, k * 3)  # specials meet each other and ordinary values
    if dt.kind == "c":
        re_ = rng.uniform(lo, hi, N)
        im = rng.uniform(lo, hi, N)
        return (re_ + 1j * im).astype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, N).astype(bool)
    if prim.public in ("jnp.left_shift", "jnp.right_shift"):
        return rng.integers(0, 8, N).astype(dt)
    x = rng.integers(-9, 10, N).astype(dt)
    x[:3] = [0, -7, 7]
    return np.roll(x, k)


def _operand_params(prim, tmpl):
    used = set(re.findall(r"{(\w+)}", tmpl))
    out = []
    for p in prim.signature.parameters.values():
        if p.name not in used:
            continue
        if p.default is p.empty or p.default is None:
            out.append(p.name)
    return out


def _cases():
    rng = np.random.default_rng(0)
    cases = []
    for prim in REGISTRY.values():
        if prim.c_expr is None or prim.kind != "elementwise" or prim.public in CUDA_ONLY:
            continue
        for dt in DTYPES:
            # the compute dtype of a one-op region is its result dtype (or the
            # operands' for a predicate): find the template the renderer will use
            names = None
            for probe in (dt, np.float32):
                tmpl = C.template_for(prim, np.dtype(probe))
                if tmpl is not None:
                    names = _operand_params(prim, tmpl)
                    break
            if not names:
                continue
            args = []
            for k, n in enumerate(names):
                if n == "condition":
                    args.append(rng.integers(0, 2, N).astype(bool))
                else:
                    args.append(_inputs(prim, dt, k, rng))
            try:
                with warnings.catch_warnings(), np.errstate(all="ignore"):
                    warnings.simplefilter("ignore")
                    want = np.asarray(prim.impl(*args))
            except Exception:  # noqa: BLE001 (the primitive refuses this dtype)
                continue
            if want.shape != (N,) or want.dtype.name not in (
                "bool",
                "int32",
                "int64",
                "float32",
                "float64",
                "complex64",
            ):
                continue
            cases.append((prim, names, args, want))
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def compiled():
    funcs = []
    rendered = []
    for i, (prim, names, args, want) in enumerate(CASES):
        inputs = {n: a.dtype for n, a in zip(names, args)}
        step = C.Step(prim, [("in", n) for n in names], "out", want.dtype)
        try:
            r = C.render([step], inputs, ["out"], target="cpu")
        except C.NotRenderable as e:
            rendered.append(e)
            continue
        rendered.append(r)
        funcs.append(C.cpu_function(r, f"case{i}"))
    lib = off.compile_cpu(C.prelude("cpu") + "\n".join(funcs), shim=False)
    return lib, rendered


def _call(lib, name, r, args, n):
    outs = [np.empty(n, dt) for dt in r.outputs.values()]
    cargs = [ctypes.c_long(n)]
    for a in args:
        a = np.ascontiguousarray(a)
        cargs += [a.ctypes.data_as(ctypes.c_void_p), ctypes.c_long(0 if a.size == 1 else 1)]
    cargs += [o.ctypes.data_as(ctypes.c_void_p) for o in outs]
    getattr(lib, name)(*cargs)
    return outs


def _check(got, want, what):
    assert got.dtype == want.dtype, what
    if want.dtype.kind in "biu":
        np.testing.assert_array_equal(got, want, err_msg=what)
        return
    tol = 2e-6 if want.dtype in (np.float32, np.complex64) else 1e-13
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=what)
    if want.dtype.kind == "f":
        # NaN where NumPy/JAX has NaN, nowhere else
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what)


def test_enough_cases(compiled):
    _, rendered = compiled
    done = [c for c, r in zip(CASES, rendered) if not isinstance(r, C.NotRenderable)]
    assert len({c[0].public for c in done}) >= 95, len(done)
    assert len(done) >= 400, len(done)


@pytest.mark.parametrize(
    "i", range(len(CASES)), ids=[f"{c[0].public}-{c[3].dtype}-{c[2][0].dtype}" for c in CASES]
)
def test_primitive_matches_numpy(compiled, i):
    lib, rendered = compiled
    prim, names, args, want = CASES[i]
    r = rendered[i]
    if isinstance(r, C.NotRenderable):
        pytest.skip(f"not rendered (the region would end here): {r}")
    (got,) = _call(lib, f"case{i}", r, args, N)
    _check(got, want, f"{prim.public} on {[a.dtype.name for a in args]}:\n{r.body}")


def _region(steps, inputs, outputs):
    return C.render(steps, inputs, outputs, target="cpu")


def test_fused_chain_promotion_weak_constants_and_select():
    P = REGISTRY
    f32, i32 = np.dtype(np.float32), np.dtype(np.int32)
    steps = [
        # t = i * x (int32 * float32 -> float32); u = sin(t) + 0.1 (weak: float32)
        C.Step(P["jnp.multiply"], [("in", "i"), ("in", "x")], "t", f32),
        C.Step(P["jnp.sin"], [("val", "t")], "s", f32),
        C.Step(P["jnp.add"], [("val", "s"), ("const", 0.1)], "u", f32),
        # c = i > 2 (exact int comparison); w = where(c, u, -x)
        C.Step(P["jnp.greater"], [("in", "i"), ("const", 2)], "c", np.dtype(bool)),
        C.Step(P["jnp.negative"], [("in", "x")], "nx", f32),
        C.Step(P["jnp.where"], [("val", "c"), ("val", "u"), ("val", "nx")], "w", f32),
        # m = maximum(w, x) propagates NaN; q = i // 3, r = i % -4 (JAX's signs)
        C.Step(P["jnp.maximum"], [("val", "w"), ("in", "x")], "m", f32),
        C.Step(P["jnp.floor_divide"], [("in", "i"), ("const", 3)], "q", i32),
        C.Step(P["jnp.mod"], [("in", "i"), ("const", -4)], "r", i32),
        C.Step(P["jnp.true_divide"], [("val", "q"), ("val", "r")], "d", f32),
    ]
    r = _region(steps, {"i": i32, "x": f32}, ["m", "q", "r", "d", "u"])
    assert "0.10000000149011612f" in r.body  # the float32 value JAX gives 0.1
    assert "(float)(v_i)" in r.body  # (i is reserved in CuPy's kernels: renamed)
    lib = off.compile_cpu(C.prelude("cpu") + C.cpu_function(r, "chain"), shim=False)
    i = np.arange(-6, 6, dtype=np.int32)
    x = np.linspace(-1, 1, 12).astype(np.float32)
    x[3] = np.nan
    m, q, rr, d, u = _call(lib, "chain", r, [i, x], 12)
    import srcjax.numpy as jnp

    with np.errstate(all="ignore"):
        u_want = jnp.add(jnp.sin(jnp.multiply(i, x)), 0.1)
        w = jnp.where(jnp.greater(i, 2), u_want, -x)
        m_want = jnp.maximum(w, x)
        q_want = jnp.floor_divide(i, 3)
        r_want = jnp.mod(i, -4)
        d_want = jnp.true_divide(q_want, r_want)
    _check(u, np.asarray(u_want), "u")
    _check(m, np.asarray(m_want), "m")
    _check(q, np.asarray(q_want), "q")
    _check(rr, np.asarray(r_want), "r")
    _check(d, np.asarray(d_want), "d")
    assert np.isnan(m[3])


def test_integer_division_by_zero_is_jax():
    # XLA's values (recorded from jax 0.10.2): x // 0 is -1 for x == 0, else -2;
    # x % 0 is 0
    P = REGISTRY
    i32 = np.dtype(np.int32)
    steps = [
        C.Step(P["jnp.floor_divide"], [("in", "a"), ("in", "b")], "q", i32),
        C.Step(P["jnp.mod"], [("in", "a"), ("in", "b")], "r", i32),
    ]
    r = _region(steps, {"a": i32, "b": i32}, ["q", "r"])
    lib = off.compile_cpu(C.prelude("cpu") + C.cpu_function(r, "divz"), shim=False)
    a = np.array([5, -5, 0, 7, -7], np.int32)
    b = np.array([0, 0, 0, -2, 2], np.int32)
    q, rr = _call(lib, "divz", r, [a, b], 5)
    np.testing.assert_array_equal(q, [-2, -2, -1, -4, -4])
    np.testing.assert_array_equal(rr, [0, 0, 0, -1, 1])


def test_a_primitive_without_c_expression_ends_the_region():
    P = REGISTRY
    f32 = np.dtype(np.float32)
    assert P["jnp.cumsum"].c_expr is None
    steps = [
        C.Step(P["jnp.exp"], [("in", "x")], "e", f32),
        C.Step(P["jnp.cumsum"], [("val", "e")], "c", f32),
        C.Step(P["jnp.sin"], [("val", "c")], "s", f32),
    ]
    assert C.renderable_prefix(steps, {"x": f32}) == 1
    with pytest.raises(C.NotRenderable, match="cumsum"):
        C.render(steps, {"x": f32}, ["s"])


def test_float16_computes_in_float32_and_rounds_each_step():
    P = REGISTRY
    f16 = np.dtype(np.float16)
    steps = [
        C.Step(P["jnp.exp"], [("in", "x")], "e", f16),
        C.Step(P["jnp.multiply"], [("val", "e"), ("const", 3.0)], "y", f16),
    ]
    r = C.render(steps, {"x": f16}, ["y"], target="cuda")
    assert r.body.splitlines() == [
        "float16 e = float16(exp((float)(x)));",
        "y = float16(((float)(e) * 3.0f));",
    ]
    with pytest.raises(C.NotRenderable, match="float16"):
        C.render(steps, {"x": f16}, ["y"], target="cpu")


def test_complex_needs_a_complex_template():
    P = REGISTRY
    c64 = np.dtype(np.complex64)
    ok = C.render([C.Step(P["jnp.exp"], [("in", "z")], "e", c64)], {"z": c64}, ["e"])
    assert "exp(z)" in ok.body
    with pytest.raises(C.NotRenderable):
        C.render([C.Step(P["jnp.floor"], [("in", "z")], "f", c64)], {"z": c64}, ["f"])
