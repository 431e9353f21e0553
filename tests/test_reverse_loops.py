"""Reverse mode through lax loops (srcjax/transforms/reverse/hoist.py, deferred.py):
loop-invariant reads moved before the loop, a scan body's tuple read item by item,
and the cotangents of loop-invariant operands summed over the trips in one product
after the reverse loop. Oracles: float64 NumPy (hand-written BPTT, central
differences of a NumPy forward) and a Python loop over examples."""

import numpy as np
import pytest
from helpers import assert_close

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

RNG = np.random.default_rng(7)
T, B, NX, H = 6, 3, 4, 5


def _params():
    return {
        "wx": (RNG.standard_normal((NX, H)) * 0.5).astype(np.float32),
        "wh": (RNG.standard_normal((H, H)) * 0.5).astype(np.float32),
        "b": (RNG.standard_normal(H) * 0.1).astype(np.float32),
        "wo": (RNG.standard_normal((H, 1)) * 0.5).astype(np.float32),
    }


def _rnn_loss(params, xs, ys):
    def cell(h, x):
        pre = jnp.dot(x, params["wx"]) + params["b"] + jnp.dot(h, params["wh"])
        h = jnp.tanh(pre)
        return h, jnp.dot(h, params["wo"])

    last, outputs = lax.scan(cell, jnp.zeros((xs.shape[1], H), xs.dtype), xs)
    return jnp.sum(jnp.square(outputs - ys))


def _bptt(params, xs, ys):
    """The loss and its gradient by hand in float64 (backpropagation through time)."""
    p = {k: v.astype(np.float64) for k, v in params.items()}
    xs, ys = xs.astype(np.float64), ys.astype(np.float64)
    hs = [np.zeros((xs.shape[1], H))]
    for x in xs:
        hs.append(np.tanh(x @ p["wx"] + hs[-1] @ p["wh"] + p["b"]))
    outs = np.stack([h @ p["wo"] for h in hs[1:]])
    loss = np.sum((outs - ys) ** 2)
    g = {k: np.zeros_like(v) for k, v in p.items()}
    dh_next = np.zeros((xs.shape[1], H))
    for t in reversed(range(len(xs))):
        dout = 2 * (outs[t] - ys[t])
        g["wo"] += hs[t + 1].T @ dout
        dh = dout @ p["wo"].T + dh_next
        da = dh * (1 - hs[t + 1] ** 2)
        g["wx"] += xs[t].T @ da
        g["wh"] += hs[t].T @ da
        g["b"] += da.sum(0)
        dh_next = da @ p["wh"].T
    return loss, g


def _rnn_data(steps=T):
    xs = RNG.standard_normal((steps, B, NX)).astype(np.float32)
    ys = RNG.standard_normal((steps, B, 1)).astype(np.float32)
    return xs, ys


@pytest.mark.parametrize("wrap", [lambda f: f, srcjax.jit], ids=["eager", "jit"])
def test_scan_rnn_gradient_matches_float64_bptt(wrap):
    params = _params()
    xs, ys = _rnn_data()
    value, grads = wrap(srcjax.value_and_grad(_rnn_loss))(params, xs, ys)
    want_value, want = _bptt(params, xs, ys)
    assert_close(value, want_value, rtol=1e-5)
    for k in params:
        assert grads[k].dtype == np.float32
        assert_close(grads[k], want[k], rtol=1e-4, atol=1e-5)


def test_scan_rnn_weight_cotangents_are_one_product_after_the_loop():
    params = _params()
    xs, ys = _rnn_data()
    text = srcjax.source(srcjax.value_and_grad(_rnn_loss), params, xs, ys)
    forward, backward = text.split("# backward")
    loop = forward.split("for k in range(n):")[1]
    # the weights are read once, before the loop: no tape entry per trip for them
    assert "params['wh']" in forward and "params['wh']" not in loop
    rev = backward.split("for k in reversed(range(n)):")[1].split("\n    if ")[0]
    # no dict cotangent built, no small GEMM per reverse trip for a weight, no
    # tuple cotangent of the cell's (h, y) split per trip
    assert "tree_index_adjoint" not in rev and "dot_right" not in rev
    assert "ad.part(" not in rev
    after = backward.split("for k in reversed(range(n)):")[1].split("\n    if ", 1)[1]
    assert after.count("ad.bdot_right(ad.tree_stack(") == 3  # wx, wh, wo
    assert "ad.unbroadcast(ad.tree_stack(" in after  # b


def _central_differences(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    g = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        d = np.zeros_like(x)
        d[i] = eps
        g[i] = (f(x + d) - f(x - d)) / (2 * eps)
    return g


def _fori(w, h0, product, trips=4):
    def body(i, h):
        return jnp.tanh(product(h, w)) * 0.9

    return jnp.sum(lax.fori_loop(0, trips, body, h0) ** 2)


def _fori_numpy(w, h0, product):
    h = np.asarray(h0, np.float64)
    for _ in range(4):
        h = np.tanh(product(h, w)) * 0.9
    return np.sum(h**2)


# (w's shape, h's shape, the product): a 2-d weight on the right or left of a
# matrix or vector carry, and a stack of weights (batched matmul, the per-example
# path of the deferred sum)
PRODUCTS = [
    ((3, 3), (2, 3), lambda h, w: h @ w),
    ((3, 3), (3,), lambda h, w: h @ w),
    ((3, 3), (3,), lambda h, w: w @ h),
    ((3, 3), (3, 2), lambda h, w: w @ h),
    ((2, 3, 3), (2, 4, 3), lambda h, w: h @ w),
    ((2, 3, 3), (2, 3, 4), lambda h, w: w @ h),
]


@pytest.mark.parametrize("w_shape,h_shape,product", PRODUCTS)
def test_fori_loop_invariant_weight_gradient_matches_finite_differences(w_shape, h_shape, product):
    w = (RNG.standard_normal(w_shape) * 0.6).astype(np.float32)
    h0 = RNG.standard_normal(h_shape).astype(np.float32)
    want = _central_differences(lambda v: _fori_numpy(v, h0, product), w)
    grad = srcjax.grad(lambda w, h0: _fori(w, h0, product))
    assert_close(grad(w, h0), want, rtol=2e-3, atol=1e-4)
    assert_close(srcjax.jit(grad)(w, h0), want, rtol=2e-3, atol=1e-4)


@pytest.mark.parametrize("wrap", [lambda f: f, srcjax.jit], ids=["eager", "jit"])
def test_a_loop_of_no_trips_gives_zeros_for_its_invariant_weight(wrap):
    # fori_loop(0, 0, ...) returns h0: the weight's cotangent is zeros of its shape
    w = RNG.standard_normal((3, 3)).astype(np.float32)
    h0 = RNG.standard_normal((2, 3)).astype(np.float32)
    g = wrap(srcjax.grad(lambda w, h0: _fori(w, h0, lambda h, w: h @ w, trips=0)))(w, h0)
    assert np.shape(g) == (3, 3) and g.dtype == np.float32 and not np.any(g)


def test_vmap_of_the_scan_rnn_gradient_matches_a_loop_over_examples():
    params = _params()
    xs = RNG.standard_normal((4, T, B, NX)).astype(np.float32)
    ys = RNG.standard_normal((4, T, B, 1)).astype(np.float32)
    grads = srcjax.vmap(srcjax.grad(_rnn_loss), in_axes=(None, 0, 0))(params, xs, ys)
    for e in range(4):
        _, want = _bptt(params, xs[e], ys[e])
        for k in params:
            assert_close(grads[k][e], want[k], rtol=1e-4, atol=1e-5)


def _fori_mm(w, h0):
    def body(i, h):
        return jnp.tanh(h @ w) * 0.9

    return jnp.sum(lax.fori_loop(0, 4, body, h0) ** 2)


def test_second_derivative_through_the_deferred_sum_matches_finite_differences():
    # grad of (grad . v): the deferred bmatmul_right is differentiated again
    w = (RNG.standard_normal((3, 3)) * 0.6).astype(np.float32)
    h0 = RNG.standard_normal((2, 3)).astype(np.float32)
    v = RNG.standard_normal((3, 3)).astype(np.float32)

    def directional(w, h0, v):
        return jnp.sum(srcjax.grad(_fori_mm)(w, h0) * v)

    def directional_numpy(wf):
        g = _central_differences(lambda u: _fori_numpy(u, h0, np.matmul), wf, eps=1e-5)
        return np.sum(g * v)

    want = _central_differences(directional_numpy, w, eps=1e-3)
    assert_close(srcjax.grad(directional)(w, h0, v), want, rtol=2e-2, atol=2e-3)


def _vmapped_fori(w, hs):
    # the loop under vmap: its weight's cotangent is vmap's batched form,
    # ad.bmatmul_right(g, a, w, True, False), summed over the examples
    return jnp.sum(srcjax.vmap(_fori_mm, in_axes=(None, 0))(w, hs))


# (w's shape, one example's h shape): a vector or matrix per example times a
# 2-d weight, and a stack of weights (the product's broadcast batch axis)
VMAPPED = [((3, 3), (3,)), ((3, 3), (2, 3)), ((2, 3, 3), (2, 4, 3))]


@pytest.mark.parametrize("w_shape,h_shape", VMAPPED)
@pytest.mark.parametrize("wrap", [lambda f: f, srcjax.jit], ids=["eager", "jit"])
def test_vmapped_loop_weight_cotangent_is_one_call_after_the_loop(wrap, w_shape, h_shape):
    # the trips' rows of g and a joined along the examples' axis: one
    # bmatmul_right after the reverse loop (its sum's order differs from the
    # per-trip adds: float64 central differences, with tolerance)
    w = (RNG.standard_normal(w_shape) * 0.6).astype(np.float32)
    hs = RNG.standard_normal((5, *h_shape)).astype(np.float32)

    def numpy_loss(v):
        return sum(_fori_numpy(v, h, np.matmul) for h in hs)

    want = _central_differences(numpy_loss, w)
    grad = srcjax.grad(_vmapped_fori)
    assert_close(wrap(grad)(w, hs), want, rtol=2e-3, atol=1e-4)
    text = srcjax.source(grad, w, hs)
    rev = text.split("reversed(range(")[1].split("\n    if ")[0]
    assert "bmatmul_right" not in rev
    assert "ad.bmatmul_right(jnp.concatenate(" in text


def _two_weights(w, u, h0):
    def body(i, h):
        return jnp.tanh(h @ w + h @ u) * 0.9

    return jnp.sum(lax.fori_loop(0, 4, body, h0) ** 2)


def _vmapped_two_weights(w, u, hs):
    return jnp.sum(srcjax.vmap(_two_weights, in_axes=(None, None, 0))(w, u, hs))


def test_vmapped_loop_lists_of_one_value_are_joined_once():
    # w's and u's cotangents read the same g and h each trip: jit keeps one
    # list of each (merge_trip_lists) and concatenates it once
    w, u = (RNG.standard_normal((2, 3, 3)) * 0.4).astype(np.float32)
    hs = RNG.standard_normal((5, 3)).astype(np.float32)

    def numpy_loss(wu):
        def one(h):
            for _ in range(4):
                h = np.tanh(h @ wu[0] + h @ wu[1]) * 0.9
            return np.sum(h**2)

        return sum(one(h.astype(np.float64)) for h in hs)

    want = _central_differences(numpy_loss, np.stack([w, u]))
    grad = srcjax.jit(srcjax.grad(_vmapped_two_weights, argnums=(0, 1)))
    got = grad(w, u, hs)
    assert_close(got[0], want[0], rtol=2e-3, atol=1e-4)
    assert_close(got[1], want[1], rtol=2e-3, atol=1e-4)
    text = srcjax.source(grad, w, u, hs)
    assert text.count("jnp.concatenate(") == 2
    assert text.count("_trips.append(") == 2


def test_second_derivative_through_the_vmapped_deferred_sum():
    # grad of (grad . v) through the concatenated operands' bmatmul_right
    w = (RNG.standard_normal((3, 3)) * 0.6).astype(np.float32)
    hs = RNG.standard_normal((3, 2, 3)).astype(np.float32)
    v = RNG.standard_normal((3, 3)).astype(np.float32)

    def directional(w, hs, v):
        return jnp.sum(srcjax.grad(_vmapped_fori)(w, hs) * v)

    def directional_numpy(wf):
        f = lambda u: sum(_fori_numpy(u, h, np.matmul) for h in hs)  # noqa: E731
        return np.sum(_central_differences(f, wf, eps=1e-5) * v)

    want = _central_differences(directional_numpy, w, eps=1e-3)
    assert_close(srcjax.grad(directional)(w, hs, v), want, rtol=2e-2, atol=2e-3)


def test_a_read_of_a_list_the_loop_appends_to_is_not_moved():
    # hist[-1] changes on every trip: it stays in the loop (values by hand)
    def f(x):
        hist = [x]
        for _ in range(3):
            hist.append(hist[-1] * 2.0)
        return jnp.sum(hist[-1])

    assert float(srcjax.grad(f)(np.float32(1.5))) == 8.0
    assert float(f(np.float32(1.5))) == 12.0


def _stack_sum_primitives():
    from srcjax.primitives import batch_rules  # noqa: F401  (the batched forms)
    from srcjax.primitives.registry import REGISTRY

    return sorted({p.public for p in REGISTRY.values() if p.stack_sum})


def test_stack_sum_facts_are_the_reverse_rules_of_products_and_broadcasts():
    assert _stack_sum_primitives() == [
        "ad.bmatmul_right",
        "ad.dot_left",
        "ad.dot_right",
        "ad.matmul_left",
        "ad.matmul_right",
        "ad.unbroadcast",
    ]


@pytest.mark.parametrize("public", _stack_sum_primitives())
def test_stack_sum_fact_holds_on_the_primitives_samples(public):
    # the batched form on operands stacked (or, for vmap's batched forms,
    # concatenated along the examples' axis) over 3 trips is the sum of the
    # per-trip calls (float64, for every sample of the primitive the fact's
    # given constants admit)
    from srcjax.primitives.registry import by_public, stack_sum_form

    prim = by_public(public)
    stacked, target, flags, given, join = stack_sum_form(prim)
    params = list(prim.signature.parameters)
    rng = np.random.default_rng(11)
    checked = 0
    for args, kwargs in prim.samples(rng):
        assert not kwargs
        bound = dict(zip(params, args))
        if any(bound.get(p) is not v for p, v in given):
            continue
        checked += 1
        trips = [
            [rng.normal(size=np.shape(a)) if p in stacked else a for p, a in zip(params, args)]
            for _ in range(3)
        ]
        want = sum(prim.impl(*t) for t in trips)
        joined = np.stack if join == "stack" else np.concatenate
        batched = [
            joined([t[i] for t in trips]) if p in stacked else args[i]
            for i, p in enumerate(params[: len(args)])
        ]
        got = by_public(target).impl(*batched, *flags)
        assert np.shape(got) == np.shape(want)
        assert_close(got, want, rtol=1e-12, atol=1e-12)
    assert checked


# -- the last reverse trip of a loop over layers (lasttrip.py) --------------------------
LAYERS = [(4, 3), (5, 4), (2, 5)]


def _mlp(params, x):
    h = x
    for w, b in params:
        h = jnp.tanh(jnp.dot(h, w.T) + b)
    return jnp.sum(h * h)


def _mlp_numpy_grads(params, x):
    """float64 backpropagation by hand: (grads of (w, b) per layer, grad of x)."""
    p = [(w.astype(np.float64), b.astype(np.float64)) for w, b in params]
    hs = [x.astype(np.float64)]
    for w, b in p:
        hs.append(np.tanh(hs[-1] @ w.T + b))
    g = 2 * hs[-1]
    grads = []
    for (w, b), h_in, h_out in zip(reversed(p), reversed(hs[:-1]), reversed(hs[1:])):
        da = g * (1 - h_out**2)
        grads.append((da.T @ h_in, da.sum(0)))
        g = da @ w
    return grads[::-1], g


def _mlp_params():
    return [
        (
            (RNG.standard_normal(s) * 0.5).astype(np.float32),
            RNG.standard_normal(s[0]).astype(np.float32),
        )
        for s in LAYERS
    ]


@pytest.mark.parametrize("wrap", [lambda f: f, srcjax.jit], ids=["eager", "jit"])
def test_the_inputs_cotangent_is_skipped_on_the_last_trip_only_when_unused(wrap):
    params = _mlp_params()
    x = RNG.standard_normal((6, 3)).astype(np.float32)
    want_p, want_x = _mlp_numpy_grads(params, x)
    grads = wrap(srcjax.grad(_mlp))(params, x)
    for (gw, gb), (ww, wb) in zip(grads, want_p):
        assert_close(gw, ww, rtol=1e-4, atol=1e-6)
        assert_close(gb, wb, rtol=1e-4, atol=1e-6)
    text = srcjax.source(srcjax.grad(_mlp), params, x)
    assert "of the last trip is not needed" in text
    # with x differentiated too, the last trip's cotangent is x's: computed
    gp, gx = wrap(srcjax.grad(_mlp, argnums=(0, 1)))(params, x)
    assert_close(gx, want_x, rtol=1e-4, atol=1e-6)
    for (gw, gb), (ww, wb) in zip(gp, want_p):
        assert_close(gw, ww, rtol=1e-4, atol=1e-6)
    text = srcjax.source(srcjax.grad(_mlp, argnums=(0, 1)), params, x)
    assert "of the last trip is not needed" not in text


@pytest.mark.parametrize("last_first", [False, True])
def test_rows_adjoint_of_every_row_in_order_is_their_stack(last_first):
    from srcjax.primitives.control.scan import _rows_adjoint

    xs = RNG.standard_normal((4, 2, 3)).astype(np.float32)
    rows = [RNG.standard_normal((2, 3)).astype(np.float32) for _ in range(4)]
    got = _rows_adjoint(rows, xs, last_first=last_first)
    want = np.stack(rows[::-1] if last_first else rows)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    # a missing row (a hole) or a partial range keeps the general path: zeros there
    part = _rows_adjoint([rows[0], None], xs, start=1)
    np.testing.assert_array_equal(part, np.stack([0 * rows[0], rows[0], 0 * rows[0], 0 * rows[0]]))


def test_a_python_loop_of_no_trips_does_not_read_what_its_body_reads():
    # for over range(0): the body's d["w"] never runs (the key is missing); only
    # lax loops, which JAX traces whatever their length, have reads moved out
    def f(d, x, n):
        for _ in range(n):
            x = x * d["w"]
        return jnp.sum(x)

    d = {"v": np.float32(2.0)}
    g = srcjax.grad(f, argnums=1)(d, np.ones(3, np.float32), 0)
    np.testing.assert_array_equal(g, np.ones(3, np.float32))


def test_a_pop_from_a_cotangent_list_is_never_skipped_on_the_last_trip():
    # second and third derivatives through a loop with a tape: the second-order
    # sweep pops tape cotangents (ad.pop_like) on every trip, the last one too
    def f(x):
        y = x
        for _ in range(2):
            y = jnp.sin(y) * y if y > 0 else -y * y
        return y

    d2 = srcjax.grad(srcjax.grad(f))
    d3 = srcjax.grad(d2)
    eps = 1e-3
    for x in (0.7, -0.4):
        want = (float(d2(x + eps)) - float(d2(x - eps))) / (2 * eps)
        assert_close(d3(x), want, rtol=1e-3)


def _make_signed(k, sign):
    if sign > 0:
        return lambda i, v: v + k
    return lambda i, v: v - k


def _branchy(k, x, sign, mode):
    if mode == "factory":
        body = _make_signed(k, sign)
    else:

        def body(i, v):
            return v + k if sign > 0 else v - k

    return jnp.sum(lax.fori_loop(0, 4, body, x) * x)


@pytest.mark.parametrize("mode", ["factory", "inline"])
@pytest.mark.parametrize("sign", [1, -1])
def test_an_invariant_cotangent_in_a_branch_not_taken_on_every_trip(mode, sign):
    """The cotangent of k, loop-invariant, is added in one branch of the body: it
    was deferred to a list pushed in that branch and stacked after the loop
    whenever the loop ran, so a branch never taken stacked an empty list
    (ValueError "cannot stack an empty list"; found with a fori_loop body from a
    factory with an `if`). Oracle: d/dk sum((x +- 4k) * x) = +-4 sum(x)."""
    x = np.array([0.5, 1.5], np.float32)
    want = sign * 4.0 * x.sum()
    f = lambda k, x: _branchy(k, x, sign, mode)  # noqa: E731
    assert_close(srcjax.grad(f)(np.float32(0.25), x), want, rtol=1e-6)
    assert_close(srcjax.jit(srcjax.grad(f))(np.float32(0.25), x), want, rtol=1e-6)


def _scan_per_length(w):
    # session 16's debt: the scan body closes over this trip's slice by a default
    # (``v=v``); its cotangent's zeros before the reverse scan were made like the
    # last trip's slice (shape (3,) on the trip of shape (2,): ShapeError)
    total = 0.0
    for n in (2, 3):
        v = w[:n]

        def cell(c, x, v=v):
            return c * jnp.sum(v) + x, c

        c, _ = lax.scan(cell, 1.0, jnp.arange(3.0))
        total = total + c
    return total


def _fori_per_length(w):
    total = 0.0
    for n in (1, 3, 2):
        v = w[:n] * 2.0
        total = total + lax.fori_loop(0, 2, lambda i, c, v=v: c * jnp.sum(v) + i, 1.0)
    return total


def _python_oracle(w, lengths, scale, xs):
    """The same programs as Python loops over float64 numbers."""
    total = 0.0
    for n in lengths:
        s, c = scale * sum(w[:n]), 1.0
        for x in xs:
            c = c * s + x
        total += c
    return total


@pytest.mark.parametrize("wrap", [lambda f: f, srcjax.jit], ids=["eager", "jit"])
def test_loop_closing_over_a_slice_of_each_outer_trip(wrap):
    w = np.array([0.5, 0.25, 0.125], np.float32)
    # jax.grad in JAX 0.10.2 (float32)
    np.testing.assert_allclose(
        np.asarray(wrap(srcjax.grad(_scan_per_length))(w)), [5.984375, 5.984375, 3.296875]
    )
    # central differences of the Python loops in float64
    for f, args in (
        (_scan_per_length, ((2, 3), 1.0, (0, 1, 2))),
        (_fori_per_length, ((1, 3, 2), 2.0, (0, 1))),
    ):
        w64 = w.astype(np.float64)
        fd = []
        for i in range(3):
            e = np.zeros(3)
            e[i] = 1e-6
            fd.append((_python_oracle(w64 + e, *args) - _python_oracle(w64 - e, *args)) / 2e-6)
        np.testing.assert_allclose(float(f(w)), _python_oracle(w64, *args), rtol=1e-6)
        assert_close(np.asarray(wrap(srcjax.grad(f))(w)), np.array(fd), rtol=1e-5, atol=1e-5)
