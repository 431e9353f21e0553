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
