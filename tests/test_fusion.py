"""Fusion regions (srcjax.transforms.fusion) and their CPU code
(srcjax.backends.numpy_cpu), each checked on its own."""

from __future__ import annotations

import numpy as np

import srcjax.nn
import srcjax.numpy as jnp
from srcjax.backends import numpy_cpu, runtime
from srcjax.codegen import emit
from srcjax.frontend.normalize import normalize
from srcjax.frontend.source import get_source
from srcjax.transforms import fusion
from srcjax.transforms import optimize as opt

F32 = np.dtype(np.float32)


def analyzed(f, *avals):
    n = normalize(get_source(f))
    fdef = n.node
    params = [a.id for a in fdef.args.args]
    opt.optimize(fdef, dict(zip(params, avals)), None, n.namer)
    return fdef, n


def regions(f, *avals, min_size=16, donate=()):
    fdef, _ = analyzed(f, *avals)
    reads = fusion.read_counts(fdef.body)
    return fusion.find_regions(fdef.body, reads, min_size, donate)


def lowered(f, *avals, min_size=16, donate=()):
    fdef, n = analyzed(f, *avals)
    fdef, count = numpy_cpu.BACKEND.lower(fdef, n.namer, "t.py", donate, min_size=min_size)
    src = get_source(f)
    text = emit.render(fdef, "t", "t.py")
    bindings = dict(n.bindings, _rt=runtime)
    return (
        emit.load(text, fdef.name, src.globals, src.closure, bindings, "fusion_test"),
        text,
        count,
    )


def gelu(x):
    return 0.5 * x * (1.0 + jnp.tanh(0.79788456 * (x + 0.044715 * x**3)))


def test_one_maximal_region():
    ((start, end, reg),) = regions(gelu, opt.Aval((64,), F32))
    assert len(reg.plan) == 9 and reg.mode == "flat"
    assert list(reg.inputs) == ["x"] and len(reg.outputs) == 1
    assert reg.reduction is None


def test_threshold_leaves_small_arrays_alone():
    assert regions(gelu, opt.Aval((8,), F32)) == []


def test_rows_mode_for_lower_rank_operands():
    def f(x, b):
        return jnp.exp(x + b) * 2.0

    ((_, _, reg),) = regions(f, opt.Aval((8, 4), F32), opt.Aval((4,), F32))
    assert reg.mode == "rows"
    assert reg.sliced("x") and not reg.sliced("b")


def test_region_ending_in_reduction_and_lone_reduction():
    def f(x):
        return jnp.sum((x - jnp.mean(x)) ** 3)

    rs = regions(f, opt.Aval((64,), F32))
    assert [r[2].reduce_kind for r in rs] == ["mean", "sum"]
    assert rs[0][2].plan == [] and len(rs[1][2].plan) == 3
    assert rs[1][2].outputs == []  # the cubes live in scratch only


def test_values_read_later_are_outputs():
    def f(x):
        a = jnp.sin(x)
        b = a * 2.0
        n = jnp.linalg.norm(a)  # not fusable: reads `a` after the region
        return b, n

    ((_, _, reg),) = regions(f, opt.Aval((64,), F32))
    assert set(reg.outputs) == {"a", "b"}


def test_unknown_shapes_do_not_fuse():
    def f(x):
        return jnp.sin(x) * 2.0

    assert regions(f, None) == []


def test_donation_analysis():
    def f(x):
        return x * 2.0 + 1.0

    ((_, _, reg),) = regions(f, opt.Aval((64,), F32), donate=("x",))
    assert reg.donate == {reg.outputs[0]: "x"}

    def g(x):
        y = x * 2.0
        return y, jnp.sum(x)  # x read after the output is written

    ((_, _, reg),) = regions(g, opt.Aval((64,), F32), donate=("x",))
    assert reg.donate == {}


def test_emitted_code_runs_and_is_readable(numba_loops_off):
    # (min_size=16: the regions of the NumPy backend alone, without Numba's maps)
    x = np.random.default_rng(0).standard_normal(5000).astype(np.float32)
    fn, text, count = lowered(gelu, opt.Aval(x.shape, F32))
    assert count == 1
    assert "np.tanh(" in text and "out=" in text and "_rt.run_chunked(" in text
    assert "def region(" in text
    np.testing.assert_allclose(fn(x), gelu(x), rtol=2e-6, atol=1e-6)


def test_emitted_rows_and_reduction_code_runs():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((300, 40)).astype(np.float32)
    b = rng.standard_normal(40).astype(np.float32)

    def f(x, b):
        y = jnp.tanh(x * b + 1.0)
        return y, jnp.max(y), jnp.sum(y * y)

    fn, text, count = lowered(f, opt.Aval(x.shape, F32), opt.Aval(b.shape, F32))
    assert "row=(40,)" in text
    for o, r in zip(fn(x, b), f(x, b)):
        np.testing.assert_allclose(o, r, rtol=1e-5, atol=1e-5)


def test_ufunc_map_covers_elementwise_operators():
    from srcjax.primitives.registry import by_public

    assert fusion.ufunc_of(by_public("jnp.add")) is np.add
    assert fusion.ufunc_of(by_public("jnp.tanh")) is np.tanh
    assert fusion.ufunc_of(by_public("jnp.sum")) is None


def relu_chain(x, y):
    z = x * 2.0 + y
    r = srcjax.nn.relu(z)
    return jnp.where(jnp.greater(r, 1.0), r, jnp.sinc(x)) * y


def test_elementwise_primitives_without_a_ufunc_fuse():
    """Regression: regions were keyed on NumPy ufuncs, so nn.relu, jnp.where and
    jnp.sinc (elementwise, no ufunc alias) split the chain into several regions
    and ran unfused. Regions hold primitives now; the CPU backend calls such a
    primitive on each chunk."""
    a = opt.Aval((4096,), F32)
    ((_, _, reg),) = regions(relu_chain, a, a)
    publics = [step.prim.public for step in reg.plan]
    assert {"nn.relu", "jnp.where", "jnp.sinc"} <= set(publics)
    assert all(isinstance(step, fusion.Step) for step in reg.plan)
    rng = np.random.default_rng(3)
    x, y = (rng.standard_normal(4096).astype(np.float32) for _ in range(2))
    fn, text, count = lowered(relu_chain, a, a)
    assert count == 1
    assert "[...] = nn.relu(" in text and "[...] = jnp.where(" in text
    out, ref = fn(x, y), relu_chain(x, y)
    assert out.dtype == ref.dtype
    np.testing.assert_allclose(out, ref, rtol=1e-6, atol=1e-6)


def test_a_backend_predicate_decides_what_fuses():
    a = opt.Aval((4096,), F32)
    fdef, _ = analyzed(relu_chain, a, a)
    reads = fusion.read_counts(fdef.body)

    def only_ufuncs(prim, ops, values, res):
        return fusion.ufunc_of(prim) is not None

    found = fusion.find_regions(fdef.body, reads, 16, (), True, None, only_ufuncs)
    assert len(found) >= 2  # split at every primitive without a ufunc
    for _, _, reg in found:
        assert all(fusion.ufunc_of(step.prim) is not None for step in reg.plan)


# ---------------------------------------------------------------- one-pass centered sums
def centered(x):
    return jnp.sum((x - jnp.mean(x)) ** 2)


def centered_square_method(x):
    return jnp.sum(jnp.square(x.mean() - x))


def centered_and_mean(x):
    m = jnp.mean(x)
    return jnp.sum((x - m) * (x - m)), m


def test_mean_then_centered_square_is_one_region():
    for f in (centered, centered_square_method, centered_and_mean):
        ((start, end, reg),) = regions(f, opt.Aval((4096,), F32))
        assert reg.center is not None and reg.reduce_kind == "sum", f.__name__
        assert list(reg.inputs) == ["x"]
        assert "one pass" in fusion.describe(reg)


def test_centered_merge_needs_the_same_array_and_private_deviations():
    def other_array(x, y):
        return jnp.sum((x - jnp.mean(y)) ** 2)

    def deviations_reused(x):
        d = x - jnp.mean(x)
        return jnp.sum(d * d), d

    def cube(x):
        d = x - jnp.mean(x)
        return jnp.sum(d * d * d)

    a = opt.Aval((4096,), F32)
    assert all(r[2].center is None for r in regions(other_array, a, a))
    assert all(r[2].center is None for r in regions(deviations_reused, a))
    assert all(r[2].center is None for r in regions(cube, a))


def test_centered_region_matches_float64_over_many_chunks(monkeypatch):
    monkeypatch.setattr(runtime, "CHUNK_BYTES", 4096)  # 1024-element chunks
    rng = np.random.default_rng(2)
    for n in (1024, 5003, 20480):
        # a large offset makes a naive one-pass sum(x**2) - n*mean**2 useless
        x = (rng.standard_normal(n) * 0.5 + 1000.0).astype(np.float32)
        x64 = x.astype(np.float64)
        want = np.sum((x64 - x64.mean()) ** 2)
        for f in (centered, centered_square_method):
            fn, text, count = lowered(f, opt.Aval(x.shape, F32))
            assert count == 1 and "reduce='centered'" in text
            got = fn(x)
            assert got.dtype == np.float32
            np.testing.assert_allclose(got, want, rtol=2e-5)
        fn, text, _ = lowered(centered_and_mean, opt.Aval(x.shape, F32))
        s, m = fn(x)
        assert abs(m - x64.mean()) < 1e-4 and m.dtype == np.float32
        np.testing.assert_allclose(s, np.sum((x64 - float(m)) ** 2), rtol=2e-5)


def test_combine_centered_identity_is_exact_in_float64():
    rng = np.random.default_rng(3)
    x = rng.standard_normal(1000) + 5.0
    chunk = 300
    parts = []
    for lo in range(0, x.size, chunk):
        c = x[lo : lo + chunk]
        parts.append((np.sum(c), np.mean(c), np.sum((c - np.mean(c)) ** 2)))
    mean, m2 = runtime.combine_centered(parts, x.size, chunk, np.float64)
    assert mean == np.sum([p[0] for p in parts]) / x.size
    np.testing.assert_allclose(m2, np.sum((x - mean) ** 2), rtol=1e-12)


def test_float16_reductions_are_left_to_the_primitives():
    # JAX accumulates float16 in float32 (user report P5): the fused chunked sums
    # would accumulate in float16, so float16 reductions stay primitive calls
    f16 = opt.Aval((1 << 16,), np.dtype(np.float16))
    assert all(r[2].reduce_kind is None for r in regions(centered, f16))
    fn, text, _ = lowered(centered, f16)
    x = np.linspace(0, 1, 1 << 16).astype(np.float16)
    got = fn(x)
    assert got.dtype == np.float16
    np.testing.assert_allclose(float(got), np.sum((x - x.mean(dtype=np.float64)) ** 2.0), rtol=1e-3)
