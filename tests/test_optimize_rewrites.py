"""jit's rewrites that made R6 (Newton-CG, forward-over-reverse under vmap) issue
fewer operations: commutative CSE, int-tuple constants propagated (reductions
over the same axes merge), ``a + zeros`` and ``a + (-b)`` simplified, ``ad.expand_to_rank``
of a known shape as a subscript, and a second simplification after jit's
specialization. Oracles: the unoptimized function run by NumPy (bit for bit),
and the generated source for what must be gone."""

from __future__ import annotations

import itertools

import numpy as np
from test_optimize import F32, norm, run, text

import srcjax
import srcjax.numpy as jnp
from srcjax.transforms import optimize as opt


def _code(src: str) -> str:
    return "\n".join(line.split("#")[0] for line in src.splitlines())


def test_cse_merges_commuted_products_and_sums_of_arrays():
    def f(x, y):
        a = x * y
        b = y * x
        c = x + y
        d = y + x
        return a - b + (c - d)

    fdef, n = norm(f)
    opt.infer_avals(fdef, {"x": opt.Aval((4,), F32), "y": opt.Aval((4,), F32)})
    assert opt.cse(fdef) == 2
    opt.propagate(fdef)
    opt.dce(fdef)
    t = _code(text(fdef))
    assert "y * x" not in t and "y + x" not in t
    x = np.array([1.5, -0.0, np.inf, 3.0], np.float32)
    y = np.array([2.0, 0.0, -1.0, 0.25], np.float32)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(run(fdef, n, f, x, y), f(x, y))


def test_cse_keeps_the_order_of_operands_it_cannot_see_are_numbers():
    def f(x, y):
        return x * y - y * x

    fdef, n = norm(f)
    # x unknown (an object whose __mul__ may not commute): left as written
    opt.infer_avals(fdef, {"y": opt.Aval((3,), F32)})
    assert opt.cse(fdef) == 0
    fdef, n = norm(f)
    opt.infer_avals(fdef, {"x": opt.Aval.of(2.0), "y": opt.Aval((3,), F32)})
    assert opt.cse(fdef) == 1  # (a weak Python number commutes too)


def test_int_tuple_axes_propagate_so_equal_reductions_merge():
    def f(x):
        ax = (1,)
        ax2 = (1,)
        return jnp.sum(x, axis=ax) + jnp.sum(x, axis=ax2)

    fdef, n = norm(f)
    opt.propagate(fdef)
    opt.infer_avals(fdef, {"x": opt.Aval((3, 4), F32)})
    assert opt.cse(fdef) == 1
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(run(fdef, n, f, x), f(x))


def test_adding_zeros_and_adding_a_negation_are_simplified_bit_for_bit():
    def f(a, b):
        z = jnp.zeros_like(a)
        nb = -b
        return (a + z) + nb, z + (nb + a), a - z

    fdef, n = norm(f)
    opt.infer_avals(fdef, {"a": opt.Aval((36,), F32), "b": opt.Aval((36,), F32)})
    opt.simplify(fdef, n.namer)
    opt.propagate(fdef)
    opt.dce(fdef)
    t = _code(text(fdef))
    assert "zeros_like" not in t and "-b" not in t, t
    special = [0.0, -0.0, 1.5, -2.0, np.inf, -np.inf]
    pairs = np.array(list(itertools.product(special, special)), np.float32)
    a, b = pairs[:, 0].copy(), pairs[:, 1].copy()
    with np.errstate(invalid="ignore"):
        got3, want3 = run(fdef, n, f, a, b), (a + (-b), (-b) + a, a)
    for got, want in zip(got3, want3):
        assert got.dtype == np.float32
        np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


def test_adding_zeros_that_broadcast_is_kept():
    def f(a):
        z = jnp.zeros((3, 4), a.dtype)
        return a + z  # (4,) + (3, 4): a new shape

    fdef, n = norm(f)
    opt.infer_avals(fdef, {"a": opt.Aval((4,), F32)})
    opt.simplify(fdef, n.namer)
    assert "zeros" in text(fdef)


def _cg(a, b):
    # one conjugate-gradient loop per example, as R6 writes it
    x = jnp.zeros_like(b)
    r = b - a @ x
    d = r
    rr = jnp.sum(r * r)
    for _ in range(4):
        ad_ = a @ d
        alpha = rr / jnp.sum(d * ad_)
        x = x + alpha * d
        r = r - alpha * ad_
        rr_new = jnp.sum(r * r)
        d = r + (rr_new / rr) * d
        rr = rr_new
    return x


def test_vmapped_cg_under_jit_lifts_by_subscript_and_matches_eager():
    rng = np.random.default_rng(0)
    m = rng.standard_normal((5, 4, 4)).astype(np.float32)
    a = np.einsum("bij,bkj->bik", m, m) + 4 * np.eye(4, dtype=np.float32)
    b = rng.standard_normal((5, 4)).astype(np.float32)
    f = srcjax.jit(srcjax.vmap(_cg))
    got = np.asarray(f(a, b))
    src = _code(srcjax.source(f, a, b))
    assert "ad.expand_to_rank" not in src and "[:, None]" in src, src
    want = np.stack([np.asarray(_cg_numpy(a[i], b[i])) for i in range(5)])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-6)
    np.testing.assert_allclose(
        np.einsum("bij,bj->bi", a, got), b, rtol=1e-3, atol=1e-3
    )  # (it solves the systems)


def _cg_numpy(a, b):
    x = np.zeros_like(b)
    r = b - a @ x
    d = r
    rr = np.sum(r * r)
    for _ in range(4):
        ad_ = a @ d
        alpha = rr / np.sum(d * ad_)
        x = x + alpha * d
        r = r - alpha * ad_
        rr_new = np.sum(r * r)
        d = r + (rr_new / rr) * d
        rr = rr_new
    return x


def _rk4_energy(p, y0):
    # bench row L3g in small: grad through a fori_loop whose body stacks scalars
    def f(y):
        return jnp.stack(
            [p[0] * (y[1] - y[0]), y[0] * (p[1] - y[2]) - y[1], y[0] * y[1] - p[2] * y[2]]
        )

    def step(i, y):
        k1 = f(y)
        k2 = f(y + 0.005 * k1)
        return y + 0.01 * k2

    y = srcjax.lax.fori_loop(0, 30, step, y0)
    return jnp.sum(y * y)


def _reverse_loop(src: str) -> str:
    lines = _code(src).splitlines()
    start = next(i for i, ln in enumerate(lines) if "reversed(range" in ln)
    indent = len(lines[start]) - len(lines[start].lstrip())
    body = []
    for ln in lines[start + 1 :]:
        if ln.strip() and len(ln) - len(ln.lstrip()) <= indent:
            break
        body.append(ln)
    return "\n".join(body)


def test_tape_restores_are_typed_so_the_reverse_loop_folds_its_helpers():
    # grad's reverse loop restores primal values with `x = tape.pop()`; jit knew
    # nothing about them (nor, after a loop, about names first declared `x = None`),
    # nor about ad.unstack_like's list, so every ad.unbroadcast stayed a call
    p = np.array([10.0, 28.0, 8.0 / 3.0], np.float32)
    y0 = np.array([1.0, 1.0, 1.0], np.float32)
    g = srcjax.grad(_rk4_energy)
    jg = srcjax.jit(g)
    got = np.asarray(jg(p, y0))
    back = _reverse_loop(srcjax.source(jg, p, y0))
    assert "tape.pop()" in back and "ad.unbroadcast" not in back, back
    np.testing.assert_allclose(got, np.asarray(g(p, y0)), rtol=1e-6)
    # against central differences of the same loop in float64
    p64, y64 = p.astype(np.float64), y0.astype(np.float64)

    def energy(pp):
        def f(y):
            return np.array(
                [pp[0] * (y[1] - y[0]), y[0] * (pp[1] - y[2]) - y[1], y[0] * y[1] - pp[2] * y[2]]
            )

        y = y64.copy()
        for _ in range(30):
            y = y + 0.01 * f(y + 0.005 * f(y))
        return np.sum(y * y)

    fd = [(energy(p64 + e) - energy(p64 - e)) / 2e-6 for e in np.eye(3) * 1e-6]
    np.testing.assert_allclose(got, fd, rtol=2e-3)


def _maybe_loop(x, n):
    acc = None
    for _ in range(n):
        acc = x * 2.0
    return acc


def test_a_loop_that_may_not_run_keeps_the_value_from_before_it():
    f = srcjax.jit(_maybe_loop, static_argnums=1)
    x = np.ones(3, np.float32)
    assert f(x, 0) is None
    np.testing.assert_array_equal(np.asarray(f(x, 2)), 2 * x)


def test_cse_merges_a_chain_of_repeats_in_one_pass():
    # forward-over-reverse recomputes a gradient's tail: each repeat reads the
    # one before it, so a pass that merged only one link per pass needed one pass
    # per link (R6: seven links, more than the pipeline's eight passes left)
    def f(x, y):
        a1 = x * y
        b1 = jnp.sin(a1)
        c1 = b1 + x
        d1 = jnp.sum(c1, axis=0)
        a2 = x * y
        b2 = jnp.sin(a2)
        c2 = b2 + x
        d2 = jnp.sum(c2, axis=0)
        return d1 - d2 + d2

    fdef, n = norm(f)
    opt.infer_avals(fdef, {"x": opt.Aval((4,), F32), "y": opt.Aval((4,), F32)})
    assert opt.cse(fdef) == 4
    assert opt.cse(fdef) == 0
    opt.propagate(fdef)
    opt.dce(fdef)
    t = _code(text(fdef))
    assert t.count("jnp.sin(") == 1 and t.count("jnp.sum(") == 1, t
    x = np.array([1.5, -0.0, np.inf, 3.0], np.float32)
    y = np.array([2.0, 0.0, -1.0, 0.25], np.float32)
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(run(fdef, n, f, x, y), f(x, y))


def test_cse_key_through_a_merged_name_is_forgotten_when_the_target_rebinds_it():
    """tools/fuzz.py --eager --seed 16, program 133: `sin(v0)` merged into v1 (the
    copy `sin = v1`), then `v1 = sin * x` rebinds v1; its key read v1 through the
    merged name, so the later `v1 * x` was taken for the new v1 (jit returned
    sum(sin(x) * x), not sum(sin(x) * x * x)). Oracle: NumPy."""

    def f(x):
        v0 = x
        v1 = jnp.sin(x)
        v1 = jnp.sin(v0) * v0
        return jnp.sum(v1 * v0)

    x = np.linspace(-2.0, 2.0, 5).astype(np.float32) + 0.25
    want = np.sum(np.sin(x) * x * x, dtype=np.float32)
    np.testing.assert_allclose(srcjax.jit(f)(x), want, rtol=1e-6)
    fdef, n = norm(f)
    opt.infer_avals(fdef, {"x": opt.Aval((5,), F32)})
    opt.cse(fdef)
    opt.propagate(fdef)
    opt.dce(fdef)
    np.testing.assert_allclose(run(fdef, n, f, x), want, rtol=1e-6)


def test_cse_chain_stops_where_a_name_is_rebound():
    def f(x, y):
        a1 = x * y
        b1 = jnp.sin(a1)
        a2 = x * y
        x = x + 1.0
        b2 = jnp.sin(a2)
        c1 = b1 * x
        c2 = b2 * x
        return c1 - c2 + jnp.sin(x * y)

    fdef, n = norm(f)
    opt.infer_avals(fdef, {"x": opt.Aval((3,), F32), "y": opt.Aval((3,), F32)})
    opt.cse(fdef)
    opt.propagate(fdef)
    opt.dce(fdef)
    t = _code(text(fdef))
    assert t.count("jnp.sin(") == 2, t  # (sin(x * y) after x changed is another value)
    x = np.array([1.5, -2.0, 3.0], np.float32)
    y = np.array([2.0, 0.5, -1.0], np.float32)
    np.testing.assert_array_equal(run(fdef, n, f, x, y), f(x, y))
