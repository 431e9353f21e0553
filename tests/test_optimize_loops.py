"""jit's specialization passes (transforms/optimize/static_fold.py, licm.py):
what the argument types decide is folded, loop invariants leave the loop, and
the results stay those of the code as written (Python loops as the oracle)."""

from __future__ import annotations

import re

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

STEPS = 4
NO_STEPS = 0


def _rng():
    return np.random.default_rng(0)


def test_vmap_rank_helpers_are_folded_under_jit():
    def f(w, x):
        return jnp.sum(jnp.tanh(x @ w) * w[0])

    w = _rng().standard_normal((5,)).astype(np.float32)
    xs = _rng().standard_normal((8, 3, 5)).astype(np.float32)
    jitted = srcjax.jit(srcjax.vmap(f, in_axes=(None, 0)))
    out = np.asarray(jitted(w, xs))
    want = np.array([np.sum(np.tanh(x @ w) * w[0]) for x in xs], np.float32)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    src = srcjax.source(jitted, w, xs)
    assert "jnp.ndim(" not in src and "ad.batch_axis(" not in src, src


def test_invariant_work_leaves_a_loop_of_known_trips():
    def f(w, x):
        acc = jnp.zeros_like(x)
        for _ in range(STEPS):
            s = jnp.sin(w) * 2.0  # the same every trip
            acc = acc + s * x
            x = x * 0.5
        return acc

    w = _rng().standard_normal((3,)).astype(np.float32)
    x = _rng().standard_normal((3,)).astype(np.float32)
    jitted = srcjax.jit(f)
    out = np.asarray(jitted(w, x))
    acc, xx = np.zeros_like(x), x.copy()
    for _ in range(STEPS):
        acc = acc + (np.sin(w) * np.float32(2.0)) * xx
        xx = xx * np.float32(0.5)
    np.testing.assert_array_equal(out, acc)
    src = srcjax.source(jitted, w, x)
    loop = src[src.index("for _ in range") :]
    assert "jnp.sin" not in loop and "jnp.sin" in src, src


def test_a_loop_that_may_not_run_keeps_its_body():
    def f(w):
        y = w
        for _ in range(NO_STEPS):
            y = jnp.log(w) + 1.0  # never runs: log of a negative never computed
        return y

    w = np.array([-1.0, 2.0], np.float32)
    jitted = srcjax.jit(f)
    np.testing.assert_array_equal(np.asarray(jitted(w)), w)
    src = srcjax.source(jitted, w)
    assert src.index("jnp.log") > src.index("for _ in range"), src


def test_a_value_updated_in_the_loop_is_not_hoisted():
    def f(x):
        t = x
        for _ in range(STEPS):
            t = jnp.cos(t)  # carried from trip to trip
            u = t * 2.0
            u = u + x  # a name assigned twice in the body
            t = t + u * 0.1
        return t

    x = np.array([0.3, -0.7], np.float32)
    out = np.asarray(srcjax.jit(f)(x))
    t = x.copy()
    for _ in range(STEPS):
        t = np.cos(t)
        u = t * np.float32(2.0) + x
        t = t + u * np.float32(0.1)
    np.testing.assert_allclose(out, t, rtol=1e-6)


def _hvp(f, primals, tangents):
    return srcjax.jvp(srcjax.grad(f), primals, tangents)[1]


def _iterate(w, x, d):
    def loss(w):
        return jnp.sum(jnp.logaddexp(0.0, x @ w)) + 0.5 * jnp.sum(w * w)

    out = jnp.zeros_like(w)
    for _ in range(STEPS):
        hd = _hvp(loss, (w,), (d,))
        out = out + hd
        d = hd * 0.5
    return out


def test_hvp_in_a_loop_computes_the_primal_once_per_point():
    # the autodiff cookbook's hvp inside conjugate-gradient-like iterations: the
    # primal and gradient at w are the same in every trip; only d changes
    iterate = _iterate

    rng = _rng()
    w = rng.standard_normal((4,)).astype(np.float32)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    d = rng.standard_normal((4,)).astype(np.float32)
    jitted = srcjax.jit(srcjax.vmap(iterate, in_axes=(None, 0, None)))
    xs = np.stack([x, 2 * x])
    got = np.asarray(jitted(w, xs, d))

    def hess(w, x):  # float64 closed form: X^T diag(s(1-s)) X + I
        s = 1 / (1 + np.exp(-(x @ w)))
        return x.T @ (x * (s * (1 - s))[:, None]) + np.eye(len(w))

    for k, xk in enumerate(xs.astype(np.float64)):
        h = hess(w.astype(np.float64), xk)
        out, dd = np.zeros(4), d.astype(np.float64)
        for _ in range(STEPS):
            hd = h @ dd
            out, dd = out + hd, hd * 0.5
        np.testing.assert_allclose(got[k], out, rtol=2e-4, atol=1e-4)
    src = srcjax.source(jitted, w, xs, d)
    loop = src[src.index("for _ in range") :]
    assert "jnp.logaddexp(" not in loop and "jnp.logaddexp(" in src, src  # it left the loop


TRIPS = 3


def test_a_global_trip_count_is_read_live():
    # generated code reads module globals when it runs: after TRIPS = 0 the loop
    # runs no times, so y must still be w (nothing read after the loop moved out)
    global TRIPS

    def f(w):
        y = w
        for _ in range(TRIPS):
            y = jnp.sin(w)
        return y

    w = np.array([0.5, 1.5], np.float32)
    jitted = srcjax.jit(f)
    np.testing.assert_array_equal(np.asarray(jitted(w)), np.sin(w))
    TRIPS = 0
    try:
        np.testing.assert_array_equal(np.asarray(jitted(w)), w)
    finally:
        TRIPS = 3


_TRIPS_SRC = """
def f(xs):
    a = []
    b = []
    c = []
    for x in xs:
        v = x * 2.0
        a.append(v)
        b.append(v)
        v = x * 3.0
        c.append(v)
    return ad.tree_stack(a) + ad.tree_stack(b) * 10.0 + ad.tree_stack(c) * 100.0
"""


def test_lists_pushed_the_same_value_every_trip_are_one_list():
    # optimize/trips.py: b receives a's value on every trip and is only stacked
    # after the loop: it reads a; c receives another value (v was reassigned)
    import types

    import gast

    from srcjax.frontend import nodes as N
    from srcjax.transforms.optimize.trips import merge_trip_lists

    mod = gast.parse(_TRIPS_SRC)
    assert merge_trip_lists(mod.body[0])
    text = N.to_source(mod)
    assert "b.append" not in text and "c.append" in text and "a.append" in text, text
    ns_ad = types.SimpleNamespace(tree_stack=np.stack)
    xs = np.arange(6.0).reshape(3, 2)
    run = {}
    for name, src in (("old", _TRIPS_SRC), ("new", text)):
        env = {"ad": ns_ad}
        exec(src, env)
        run[name] = env["f"](xs)
    np.testing.assert_array_equal(run["new"], run["old"])
    np.testing.assert_array_equal(run["old"], xs * 2 * 11 + xs * 300)


def test_a_reverse_loop_multiplies_by_the_contiguous_transpose_made_once():
    # optimize/transposes.py: ad.matmul_left(g, a, wh) in the reverse scan is
    # ad.matmul_left_t(g, a, wh_t) with wh_t = ad.transposed(wh) before the loop
    # (then ad.matrix_dot(g, wh_t): optimize/direct.py)
    from srcjax import lax

    def loss(w, xs):
        def cell(h, x):
            h = jnp.tanh(x + h @ w)
            return h, jnp.sum(h)

        _, ys = lax.scan(cell, jnp.zeros((2, 3), xs.dtype), xs)
        return jnp.sum(ys)

    rng = _rng()
    w = (rng.standard_normal((3, 3)) * 0.5).astype(np.float32)
    xs = rng.standard_normal((4, 2, 3)).astype(np.float32)
    step = srcjax.jit(srcjax.grad(loss))
    got = np.asarray(step(w, xs))
    want = np.asarray(srcjax.grad(loss)(w, xs))  # (not jitted: matmul_left as written)

    def loss_np(w):
        h = np.zeros((2, 3))
        total = 0.0
        for x in xs:
            h = np.tanh(x + h @ w)
            total += h.sum()
        return total

    fd = np.zeros_like(w, dtype=np.float64)
    for i in range(3):
        for j in range(3):
            e = np.zeros((3, 3))
            e[i, j] = 1e-6
            fd[i, j] = (loss_np(w + e) - loss_np(w - e)) / 2e-6
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, fd, rtol=1e-3, atol=1e-4)
    src = srcjax.source(step, w, xs)
    loop = src[src.index("reversed(range(4))") :]
    assert "ad.transposed(" in src and "ad.transposed(" not in loop, src
    # (of float32 matrices: ad.matmul_left_t's one path, ad.matrix_dot, direct)
    assert re.search(r"= ad\.matrix_dot\(\w+, w_t\)", loop), src


def _masked_sum(x, t):
    m = x > 1.0  # the same every trip
    acc = jnp.zeros_like(t)
    for _ in range(STEPS):
        acc = acc + jnp.where(m, 0, t * acc + t)
        acc = acc * 0.5 + jnp.where(m, acc, 0)
    return acc


def _masked_sum_np(x, t):
    m = x > 1.0
    acc = np.zeros_like(t)
    for _ in range(STEPS):
        acc = acc + np.where(m, np.float32(0), t * acc + t)
        acc = acc * np.float32(0.5) + np.where(m, acc, np.float32(0))
    return acc


def test_a_loop_invariant_mask_is_counted_once_before_the_loop():
    # optimize/masks.py: where(m, 0, t) / where(m, t, 0) by a mask the loop does
    # not change is ad.zero_where_counted(m, n, t, ...) with n = ad.mask_count(m)
    # made before the loop; masks with true elements, none, and all of them
    rng = _rng()
    t = rng.standard_normal((3, 5)).astype(np.float32)
    jitted = srcjax.jit(_masked_sum)
    for x in (
        rng.standard_normal((3, 5)).astype(np.float32) * 2,  # some true
        np.zeros((3, 5), np.float32),  # none
        np.full((3, 5), 3.0, np.float32),  # all
    ):
        got = jitted(x, t)
        want = _masked_sum_np(x, t)
        assert got.dtype == np.float32
        np.testing.assert_array_equal(np.asarray(got), want)
    src = srcjax.source(jitted, x, t)
    loop = src[src.index("for _ in range") :]
    assert "ad.mask_count(" in src and "ad.mask_count(" not in loop, src
    assert loop.count("ad.zero_where_counted(") == 2 and "jnp.where(" not in loop, src


def test_a_mask_the_loop_changes_is_not_counted():
    def f(x, t):
        acc = jnp.zeros_like(t)
        for _ in range(STEPS):
            m = acc > 0.5
            acc = acc + jnp.where(m, 0, t)
        return acc

    t = np.abs(_rng().standard_normal((4,))).astype(np.float32)
    jitted = srcjax.jit(f)
    acc = np.zeros_like(t)
    for _ in range(STEPS):
        acc = acc + np.where(acc > 0.5, np.float32(0), t)
    np.testing.assert_array_equal(np.asarray(jitted(t, t)), acc)
    assert "ad.zero_where_counted(" not in srcjax.source(jitted, t, t)


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_helpers_with_known_operands_are_their_one_call(dt, request):
    # optimize/direct.py: ad.sum_of_products over the last axis, vmap's per-example
    # matrix @ vector and its cotangent for the vector are the gufunc calls
    # (ad.vecdot, ad.matvec, ad.vecmat) their fast paths make, for float32 and
    # float64; an integer product keeps the general helper
    def f(w, x):
        z = jnp.tanh(x @ w)
        return jnp.sum(w * w) + jnp.sum(z * z)

    def g(w, x):  # per example: d/dw of f, and <w, w> as a sum of products
        return srcjax.grad(f)(w, x), jnp.sum(w * x[0])

    if dt == np.float64:
        request.getfixturevalue("x64")
    rng = _rng()
    ws = rng.standard_normal((6, 3)).astype(dt)
    xs = rng.standard_normal((6, 4, 3)).astype(dt)
    jitted = srcjax.jit(srcjax.vmap(g))
    gw, s = jitted(ws, xs)
    for k in range(6):
        w, x = ws[k].astype(np.float64), xs[k].astype(np.float64)
        z = np.tanh(x @ w)
        want = 2 * w + x.T @ (2 * z * (1 - z * z))
        np.testing.assert_allclose(np.asarray(gw[k]), want, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(float(s[k]), w @ x[0], rtol=1e-5, atol=1e-6)
    assert gw.dtype == dt and s.dtype == dt
    src = srcjax.source(jitted, ws, xs)
    assert "ad.matvec(" in src and "ad.vecmat(" in src and "ad.vecdot(" in src, src
    assert "ad.bmatmul(" not in src and "ad.sum_of_products(" not in src, src
    ints = np.arange(12).reshape(4, 3)
    h = srcjax.jit(srcjax.vmap(lambda a, b: jnp.sum(a * b)))
    np.testing.assert_array_equal(np.asarray(h(ints, ints)), (ints * ints).sum(1))
    assert "ad.vecdot(" not in srcjax.source(h, ints, ints)


def test_a_loop_adds_a_broadcast_copy_of_an_invariant_bias_made_once():
    # optimize/broadcasts.py: h + b in a scan cell, b of shape (3,) and h of
    # (2, 3), adds b_b = ad.broadcast_copy(b, (2, 3)) made before the loop; the
    # results are the same bit for bit (a Python loop over NumPy is the oracle)
    from srcjax import lax

    def run(w, b, xs):
        def cell(h, x):
            h = jnp.tanh(x @ w + b)
            return h, h * b

        return lax.scan(cell, jnp.zeros((2, 3), xs.dtype), xs)

    rng = _rng()
    w = (rng.standard_normal((3, 3)) * 0.5).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    xs = rng.standard_normal((5, 2, 3)).astype(np.float32)
    jitted = srcjax.jit(run)
    h, ys = jitted(w, b, xs)
    hw, ysw = np.zeros((2, 3), np.float32), []
    for x in xs:
        hw = np.tanh(x @ w + b)
        ysw.append(hw * b)
    np.testing.assert_array_equal(np.asarray(h), hw)
    np.testing.assert_array_equal(np.asarray(ys), np.stack(ysw))
    src = srcjax.source(jitted, w, b, xs)
    loop = src[src.index("for k in range(5)") :]
    assert "ad.broadcast_copy(b, (2, 3))" in src and "ad.broadcast_copy(" not in loop, src
    assert loop.count("_b") >= 2, src  # both uses read the copy


def test_a_bias_of_another_dtype_or_a_large_result_is_not_copied():
    # a copy must not change a result's type (an int32 bias, float32 h: the
    # operands keep their dtypes) nor cost a large array
    from srcjax import lax

    def run(b, xs):
        def cell(h, x):
            h = h * 0.5 + x + b
            return h, None

        return lax.scan(cell, jnp.zeros(xs.shape[1:], xs.dtype), xs)[0]

    xs = np.ones((3, 2, 4), np.float32)
    bi = np.arange(4, dtype=np.int32)
    out = srcjax.jit(run)(bi, xs)
    assert "ad.broadcast_copy(" not in srcjax.source(srcjax.jit(run), bi, xs)
    big = np.ones((3, 300, 300), np.float32)
    b32 = np.ones(300, np.float32)
    assert "ad.broadcast_copy(" not in srcjax.source(srcjax.jit(run), b32, big)
    h = np.zeros((2, 4), np.float32)
    for x in xs:
        h = h * 0.5 + x + bi
    np.testing.assert_allclose(np.asarray(out), h, rtol=1e-6)


def test_a_scans_products_of_its_rows_by_an_invariant_matrix_are_one_stacked_product():
    # optimize/rowmaps.py: x @ wx of the scanned row x is the row of
    # jnp.matmul(xs, wx), made once before the loop; the same BLAS products, so
    # the same bits as a Python loop over NumPy. A row that is a vector (GEMV,
    # not GEMM) keeps its product in the loop.
    from srcjax import lax

    def run(wx, wh, xs):
        def cell(h, x):
            h = jnp.tanh(x @ wx + h @ wh)
            return h, h

        return lax.scan(cell, jnp.zeros((xs.shape[1], wh.shape[0]), xs.dtype), xs)

    rng = _rng()
    wx = rng.standard_normal((4, 3)).astype(np.float32)
    wh = (rng.standard_normal((3, 3)) * 0.5).astype(np.float32)
    xs = rng.standard_normal((6, 2, 4)).astype(np.float32)
    jitted = srcjax.jit(run)
    h, ys = jitted(wx, wh, xs)
    hw, ysw = np.zeros((2, 3), np.float32), []
    for x in xs:
        hw = np.tanh(x @ wx + hw @ wh)
        ysw.append(hw)
    np.testing.assert_array_equal(np.asarray(h), hw)
    np.testing.assert_array_equal(np.asarray(ys), np.stack(ysw))
    src = srcjax.source(jitted, wx, wh, xs)
    head, loop = src.split("for k in range(6)")
    assert "jnp.matmul(xs, wx)" in head and "@ wx" not in loop, src
    vectors = rng.standard_normal((6, 4)).astype(np.float32)
    src = srcjax.source(
        srcjax.jit(lambda wx, xs: run(wx, np.eye(3, dtype=np.float32), xs)), wx, vectors
    )
    assert "jnp.matmul(xs, wx)" not in src, src


_X_GLOBAL = np.random.default_rng(5).standard_normal((30, 4)).astype(np.float32)


def _global_nll(w):
    z = _X_GLOBAL @ w
    return jnp.mean(jnp.logaddexp(0.0, z)) + 1e-3 * w @ w


def test_a_hessian_inside_jit_computes_the_primal_once():
    # jacfwd's loop over the basis inside a jitted function: its trip count is the
    # basis' length (ad.seq_len from shapes) and the primal at w, computed from a
    # global matrix the function never changes, leaves the loop (licm.py)
    @srcjax.jit
    def h(w):
        return srcjax.hessian(_global_nll)(w)

    w = np.array([0.3, -0.2, 0.5, 0.1], np.float32)
    got = np.asarray(h(w))
    x, wd = _X_GLOBAL.astype(np.float64), w.astype(np.float64)
    s = 1 / (1 + np.exp(-(x @ wd)))
    want = x.T @ (x * (s * (1 - s))[:, None]) / len(x) + 2e-3 * np.eye(4)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)
    src = srcjax.source(h, w)
    start = src.index("    for ")
    loop = src[start:]
    assert loop.startswith("    for i in range(4):"), src
    assert "jnp.logaddexp(" in src[:start], src
    assert loop.count("jnp.logaddexp(") <= 1, src  # (the gradient after the loop)


def test_a_reverse_scans_readout_outer_products_are_one_product_before_the_loop():
    # optimize/rowmaps.py (_popped_outer_products): the cotangent of h in h @ wo
    # (wo of one column) is ad.matmul_left(y_bar, h, wo), y_bar popped from the
    # rows of the stacked output cotangent; it is row k of one jnp.dot made before
    # the reverse loop. The bits equal grad's own (not jitted) per-row products;
    # float64 central differences check the gradient.
    from srcjax import lax

    def loss(wh, wo, xs):
        def cell(h, x):
            h = jnp.tanh(x + h @ wh)
            return h, h @ wo

        _, ys = lax.scan(cell, jnp.zeros((2, 3), xs.dtype), xs)
        return jnp.sum(ys * ys)

    rng = _rng()
    wh = (rng.standard_normal((3, 3)) * 0.5).astype(np.float32)
    wo = rng.standard_normal((3, 1)).astype(np.float32)
    xs = rng.standard_normal((4, 2, 3)).astype(np.float32)
    step = srcjax.jit(srcjax.grad(loss, argnums=(0, 1)))
    got = [np.asarray(g) for g in step(wh, wo, xs)]
    eager = [np.asarray(g) for g in srcjax.grad(loss, argnums=(0, 1))(wh, wo, xs)]
    for g, e in zip(got, eager):
        # (within rounding: since optimize/trip_order.py jit sums wh's and wo's
        # trips in the forward order, grad in the reverse one)
        np.testing.assert_allclose(g, e, rtol=5e-7, atol=1e-7)

    def loss_np(wh, wo):
        h = np.zeros((2, 3))
        total = 0.0
        for x in xs:
            h = np.tanh(x + h @ wh)
            total += np.sum((h @ wo) ** 2)
        return total

    w64 = [wh.astype(np.float64), wo.astype(np.float64)]
    for which, g in enumerate(got):
        fd = np.zeros(w64[which].shape)
        for idx in np.ndindex(fd.shape):
            plus = [w.copy() for w in w64]
            minus = [w.copy() for w in w64]
            plus[which][idx] += 1e-6
            minus[which][idx] -= 1e-6
            fd[idx] = (loss_np(*plus) - loss_np(*minus)) / 2e-6
        np.testing.assert_allclose(g, fd, rtol=1e-3, atol=1e-4)
    src = srcjax.source(step, wh, wo, xs)
    head, loop = src.split("for k in reversed(range(4))")
    assert "jnp.dot(jnp.reshape(" in head and "ad.matmul_left(" not in loop, src
    assert "[k]" in loop, src  # (the row of the product: a subscript)


def test_an_outer_product_by_matmul_is_numpys_product_bit_for_bit():
    # jnp.matmul of a (..., m, 1) stack by a (1, n) matrix takes np.dot (NumPy's
    # matmul makes no BLAS call for one contracted term: 25x slower); the values
    # are NumPy's matmul's exactly, for float32 and float64 and a transposed view
    rng = _rng()
    for sa, sb, dt in [((40, 1), (1, 8), np.float32), ((5, 4, 1), (1, 6), np.float32)]:
        a = rng.standard_normal(sa).astype(dt)
        b = rng.standard_normal(sb).astype(dt)
        for bb in (b, np.ascontiguousarray(b.T).T):
            got = np.asarray(jnp.matmul(a, bb))
            want = np.matmul(a, bb)
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)
    a = rng.standard_normal((3, 1)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(srcjax.jit(jnp.matmul)(a, a.T)), np.matmul(a, a.T))


def test_tape_entries_no_adjoint_reads_are_not_pushed():
    # optimize/dead_pops.py: grad's forward scan pushes x @ wx, h @ wh and their
    # sum before overwriting them, and its reverse loop pops them into names it
    # never reads; jit drops those pushes and pops. The tanh output the adjoint
    # reads stays on the tape; the gradient equals grad's own (not jitted) bits.
    from srcjax import lax

    def loss(wx, wh, xs):
        def cell(h, x):
            h = jnp.tanh(x @ wx + h @ wh)
            return h, h

        _, hs = lax.scan(cell, jnp.zeros((2, 3), xs.dtype), xs)
        return jnp.sum(hs * hs)

    rng = _rng()
    wx = rng.standard_normal((4, 3)).astype(np.float32)
    wh = (rng.standard_normal((3, 3)) * 0.5).astype(np.float32)
    xs = rng.standard_normal((5, 2, 4)).astype(np.float32)
    step = srcjax.jit(srcjax.grad(loss, argnums=(0, 1)))
    got = step(wx, wh, xs)
    want = srcjax.grad(loss, argnums=(0, 1))(wx, wh, xs)
    for g, w in zip(got, want):
        # (within rounding: jit sums the trips in the forward order, trip_order.py)
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6, atol=1e-7)
    src = srcjax.source(step, wx, wh, xs)
    plain = srcjax.source(srcjax.grad(loss, argnums=(0, 1)), wx, wh, xs)
    pushed = [
        ln.split("tape.append(")[1].split(")")[0] for ln in src.splitlines() if "tape.append(" in ln
    ]
    before = [ln for ln in plain.splitlines() if "tape.append(" in ln]
    # (the tanh output, restored from the tape before optimize/tape_rows.py, is
    # now read as a row of the stacked hs: no entry is left)
    assert len(pushed) < len(before), (src, plain)
    assert src.count("tape.pop()") == len(pushed), src
    for name in ("matmul", "matmul1"):
        assert name not in pushed, src


def test_a_scans_row_reads_are_subscripts_under_jit():
    # optimize/bounds.loop_rows_as_subscripts: ad.tree_slice(xs, k) in
    # for k in range(n) over the n rows of an array is xs[k] (in bounds), in the
    # forward and the reverse loop; a row of a tuple of arrays keeps the helper.
    # The values are a Python loop's, the gradient grad's own bits.
    from srcjax import lax

    def loss(w, xs):
        def cell(h, x):
            h = jnp.tanh(h * w + x)
            return h, h

        _, hs = lax.scan(cell, jnp.zeros(3, xs.dtype), xs)
        return jnp.sum(hs * hs)

    rng = _rng()
    w = rng.standard_normal(3).astype(np.float32)
    xs = rng.standard_normal((5, 3)).astype(np.float32)
    step = srcjax.jit(srcjax.value_and_grad(loss))
    val, g = step(w, xs)
    h, total = np.zeros(3, np.float32), np.float32(0)
    for x in xs:
        h = np.tanh(h * w + x)
        total += np.sum(h * h)
    np.testing.assert_allclose(float(val), total, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(srcjax.grad(loss)(w, xs)))
    src = srcjax.source(step, w, xs)
    assert "xs[k]" in src and "ad.tree_slice(xs, k)" not in src, src

    def pair_loss(w, xs, ys):
        def cell(h, xy):
            x, y = xy
            return h * w + x * y, h

        return jnp.sum(lax.scan(cell, jnp.zeros(3, xs.dtype), (xs, ys))[0])

    src = srcjax.source(srcjax.jit(pair_loss), w, xs, xs)
    assert "ad.tree_slice(" in src, src
    h = np.zeros(3, np.float32)
    for x in xs:
        h = h * w + x * x
    np.testing.assert_allclose(float(srcjax.jit(pair_loss)(w, xs, xs)), np.sum(h), rtol=1e-6)


def test_newton_with_hessian_and_solve_in_fori_loop_keeps_its_carry_known():
    # fresh-user round 5, item 07e: fori_loop over w - solve(hessian(f)(w), grad(f)(w)).
    # The carry's abstract value survives ad.jac_columns, ad.cotangent_like and
    # jnp.linalg.solve (their result_shape rules), so jacfwd's inner loop has a
    # known trip count and the primal at w leaves it
    from srcjax import lax

    @srcjax.jit
    def newton(w):
        def body(i, w):
            g = srcjax.grad(_global_nll)(w)
            return w - jnp.linalg.solve(srcjax.hessian(_global_nll)(w), g)

        return lax.fori_loop(0, 3, body, w)

    w0 = np.zeros(4, np.float32)
    got = np.asarray(newton(w0))
    x = _X_GLOBAL.astype(np.float64)
    w = w0.astype(np.float64)
    for _ in range(3):
        s = 1 / (1 + np.exp(-(x @ w)))
        g = x.T @ s / len(x) + 2e-3 * w
        h = x.T @ (x * (s * (1 - s))[:, None]) / len(x) + 2e-3 * np.eye(4)
        w = w - np.linalg.solve(h, g)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, w, rtol=1e-4, atol=1e-5)
    src = srcjax.source(newton, w0)
    inner = src[src.index("in range(4):") :].split("\n")[1:]  # (jacfwd's loop)
    loop_lines = [ln for ln in inner if ln.startswith(" " * 12)]
    assert loop_lines and not any("jnp.logaddexp(" in ln for ln in loop_lines), src


def _softplus_hvp_sum(w, x, d):
    # grad of a softplus loss and its jvp (forward-over-reverse): logaddexp's
    # derivative masks replace_inf(z), and its tangent's where(isposinf(z), 0, .)
    def loss(v):
        return jnp.sum(jnp.logaddexp(0.0, x @ v))

    acc = jnp.zeros_like(w)
    for _ in range(STEPS):
        acc = acc + srcjax.jvp(srcjax.grad(loss), (w,), (d,))[1]
        d = d * 0.5
    return acc + srcjax.grad(loss)(w)


def test_replace_inf_reads_the_counted_mask_of_the_same_value(monkeypatch):
    # optimize/masks.counted_replace_infs: ad.replace_inf(z) in a block that also
    # computes isposinf(z) (and its count) reads them; the same bits as the code
    # without the rewrite, with and without infinite z
    from srcjax.transforms.optimize import pipeline

    rng = _rng()
    w = rng.standard_normal(4).astype(np.float32)
    w[0] = abs(w[0]) + 0.5  # (the rows [inf, 0, 0, 0] below: z = +inf)
    d = rng.standard_normal(4).astype(np.float32)
    finite = rng.standard_normal((6, 4)).astype(np.float32)
    jitted = srcjax.jit(_softplus_hvp_sum)
    src = srcjax.source(jitted, w, finite, d)
    assert "ad.replace_inf(" not in src and "ad.zero_where_counted(isposinf," in src, src
    monkeypatch.setattr(pipeline, "counted_replace_infs", lambda fdef, namer: False)
    plain = srcjax.jit(lambda w, x, d: 1 * _softplus_hvp_sum(w, x, d))
    assert "ad.replace_inf(" in srcjax.source(plain, w, finite, d)
    for x in (finite, np.array([[np.inf, 0, 0, 0], [1, 2, 3, 4]] * 3, np.float32)):
        got, want = np.asarray(jitted(w, x, d)), np.asarray(plain(w, x, d))
        assert got.dtype == want.dtype == np.float32
        np.testing.assert_array_equal(got, want)  # (the second: z = +inf zeroed)
        assert np.isinf(x @ w).any() == (x is not finite)
    # float64 oracle: H d = x^T diag(s (1 - s)) x d, the gradient x^T s
    x64, w64, d64 = (a.astype(np.float64) for a in (finite, w, d))
    s = 1 / (1 + np.exp(-(x64 @ w64)))
    h = x64.T @ (x64 * (s * (1 - s))[:, None])
    want = x64.T @ s + sum(h @ (d64 * 0.5**k) for k in range(STEPS))
    np.testing.assert_allclose(np.asarray(jitted(w, finite, d)), want, rtol=1e-5, atol=1e-5)


def test_a_constant_list_display_leaves_the_loop_with_its_array():
    # jnp.array([1.0, 4.0]) in a scan's body (a Metropolis-Hastings target,
    # tools/real_programs/u4_mh_scan.py) was built on every trip
    from srcjax import lax

    def f(x):
        def body(c, _):
            c = c * 0.9 + jnp.sum(c / jnp.array([1.0, 4.0]))
            return c, c

        return lax.scan(body, x, None, length=STEPS)[1]

    x = np.array([0.5, -1.5], np.float32)
    got = np.asarray(srcjax.jit(f)(x))
    c, want = x.copy(), []
    for _ in range(STEPS):
        c = c * np.float32(0.9) + np.sum(c / np.array([1.0, 4.0], np.float32))
        want.append(c)
    np.testing.assert_allclose(got, np.stack(want), rtol=1e-6)
    text = srcjax.source(srcjax.jit(f), x)
    made = "jnp.array([1.0, 4.0])"
    assert text.count(made) == 1 and text.index(made) < text.index("for k in range(")


def test_a_list_display_the_loop_appends_to_stays_in_it():
    def f(x):
        total = x
        for _ in range(STEPS):
            items = [1.0, 2.0]
            items.append(total[0])
            total = total + jnp.array(items)
        return total

    x = np.array([0.5, -1.5, 2.0], np.float32)
    got = np.asarray(srcjax.jit(f)(x))
    total = x.copy()
    for _ in range(STEPS):
        total = total + np.array([1.0, 2.0, total[0]], np.float32)
    np.testing.assert_allclose(got, total, rtol=1e-6)
