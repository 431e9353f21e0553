"""What a jitted function keeps alive: dead loop values released after their loop
(transforms/optimize/release.py) and ``a - c*b`` with a float scalar ``c`` computed
as ``(-c)*b + a`` (transforms/optimize/algebra.py), so NumPy adds into the
product's temporary. Oracles: the same NumPy expressions (bit for bit), and
tracemalloc's peak against the bytes the result itself needs."""

import re
import tracemalloc

import numpy as np

import srcjax
import srcjax.numpy as jnp

RATE = 0.01


def _peak(call):
    """``(call(), its tracemalloc peak)`` for a jitted function called before:
    called once more untraced first, so the peak is a steady call's (the second
    call of a specialization compiles its guard: fastpath.LazyGuard)."""
    call()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        base = tracemalloc.get_traced_memory()[0]
        out = call()
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    return out, peak


def _sgd(w, g):
    return w - RATE * g


def _sgd_const(w, g):
    return w - 0.5 * g


def _sgd_list(params, grads):
    return [p - RATE * q for p, q in zip(params, grads)]


def test_scaled_update_is_bit_exact_and_needs_one_buffer():
    rng = np.random.default_rng(0)
    w = rng.standard_normal(1 << 18).astype(np.float32)  # 1 MiB: NumPy elides from 256 KiB
    g = rng.standard_normal(1 << 18).astype(np.float32)
    # signed zeros, infinities and NaN where the order of operations could show
    w[:6] = [-0.0, 0.0, np.inf, -np.inf, 1.0, np.nan]
    g[:6] = [0.0, -0.0, np.inf, 1.0, np.inf, 2.0]
    for fn, c in ((_sgd, RATE), (_sgd_const, 0.5)):
        f = srcjax.jit(fn)
        with np.errstate(invalid="ignore"):
            want = w - c * g
            got = f(w, g)
        assert got.dtype == want.dtype == np.float32
        assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
        with np.errstate(invalid="ignore"):
            _, peak = _peak(lambda f=f: f(w, g))
        assert peak < 1.25 * w.nbytes, peak  # the result alone, no second buffer
        assert "+" in srcjax.source(f, w, g)


def test_scaled_update_over_list_leaves_of_unknown_shape():
    # R1's SGD step: the leaves' shapes are unknown to jit inside the loop
    rng = np.random.default_rng(1)
    params = [rng.standard_normal((512, 256)).astype(np.float32), np.ones(7, np.float32)]
    grads = [rng.standard_normal((512, 256)).astype(np.float32), np.arange(7, dtype=np.float32)]
    f = srcjax.jit(_sgd_list)
    got = f(params, grads)
    for a, p, q in zip(got, params, grads):
        assert np.array_equal(a, p - RATE * q) and a.dtype == np.float32
    _, peak = _peak(lambda: f(params, grads))
    assert peak < 1.25 * params[0].nbytes, peak


def _int_grads(w, g):
    return w - 2.0 * g


def _int_scale(w, g):
    return w - 3 * g


def test_scaled_update_keeps_numpy_promotion():
    w = np.arange(6, dtype=np.float32)
    g = np.arange(6, dtype=np.uint8)
    got = srcjax.jit(_int_grads)(w, g)
    want = jnp.asarray(w) - 2.0 * jnp.asarray(g)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    # an int scale is left as written (-3 * uint8 would be NumPy's OverflowError)
    got = srcjax.jit(_int_scale)(np.arange(6, dtype=np.uint8), g)
    assert got.dtype == np.uint8 and np.array_equal(got, np.arange(6, dtype=np.uint8) - 3 * g)


def _loop(x, n):
    acc = jnp.zeros_like(x)
    for i in range(n):
        big = x * (i + 1.0)
        tmp = big * 2.0
        acc = acc + tmp
    kept = big
    return acc + kept


def test_loop_values_are_released_after_the_loop_unless_read():
    x = np.linspace(0.0, 1.0, 5, dtype=np.float32)
    f = srcjax.jit(_loop, static_argnums=1)
    got = f(x, 3)
    want = 2.0 * (x * 1.0 + x * 2.0 + x * 3.0) + x * 3.0
    assert np.allclose(got, want, rtol=1e-6)
    text = srcjax.source(f, x, 3)
    released = [line.split("=")[0].strip() for line in text.splitlines() if "released" in line]
    # an array not read after the loop is released; one read after it, the
    # result, and the range counter (a scalar: not worth a line) are not
    assert "tmp" in released
    assert "big" not in released and "acc" not in released and "i" not in released


def _mlp_loss(params, x):
    h = x
    for w, b in params:
        h = jnp.tanh(h @ w + b)
    return jnp.sum(h * h)


def _sgd_step(params, x):
    grads = srcjax.grad(_mlp_loss)(params, x)
    return [(w - RATE * dw, b - RATE * db) for (w, b), (dw, db) in zip(params, grads)]


def _sgd_step_keeping_grads(params, x):
    grads = srcjax.grad(_mlp_loss)(params, x)
    new = [(w - RATE * dw, b - RATE * db) for (w, b), (dw, db) in zip(params, grads)]
    return new, grads


def _mlp_params(rng, sizes):
    return [
        (
            (rng.standard_normal((m, n)) * 0.1).astype(np.float32),
            (rng.standard_normal(n) * 0.1).astype(np.float32),
        )
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def _numpy_sgd_grads(params, x):
    """The MLP's gradient by hand in float64 (the oracle)."""
    hs = [x.astype(np.float64)]
    for w, b in params:
        hs.append(np.tanh(hs[-1] @ w + b))
    g = 2.0 * hs[-1]
    out = []
    for (w, b), h_in, h_out in zip(params[::-1], hs[-2::-1], hs[:0:-1]):
        gz = g * (1.0 - h_out * h_out)
        out.append((h_in.T @ gz, gz.sum(axis=0)))
        g = gz @ w.T
    return out[::-1]


def test_update_loop_frees_each_gradient_once_used():
    """The SGD step over a list of (w, b): each layer's gradient is taken out of
    the gradient's list (``ad.take_item``, ``take_dead_items``) and ``w - lr * dw``
    is computed in ``dw``'s own buffer (``ad.scaled_item``, then NumPy's in-place
    add into that temporary), so the new parameters need no memory of their own:
    the step's peak is the gradient's (2.10x the parameters' bytes before, 1.80x
    with the taking alone, 1.10x now). Oracle: a float64 NumPy gradient, and
    tracemalloc against the parameters' bytes."""
    rng = np.random.default_rng(2)
    params = _mlp_params(rng, (64, 512, 512, 64))
    x = rng.standard_normal((8, 64)).astype(np.float32)
    f = srcjax.jit(_sgd_step)
    got = f(params, x)
    for (w, b), (gw, gb), (nw, nb) in zip(params, _numpy_sgd_grads(params, x), got):
        np.testing.assert_allclose(nw, w - RATE * gw, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(nb, b - RATE * gb, rtol=1e-5, atol=1e-6)
    assert "ad.scaled_item(" in srcjax.source(f, params, x)
    nbytes = sum(w.nbytes + b.nbytes for w, b in params)
    _, peak = _peak(lambda: f(params, x))
    assert peak < 1.25 * nbytes, peak / nbytes
    # the caller's lists are never emptied
    assert all(w is not None and b is not None for w, b in params)


def test_update_loop_leaves_a_gradient_read_later_whole():
    """A gradient the function also returns is read after the loop: its list is
    not taken from (a regression guard: emptied slots would come back as None)."""
    rng = np.random.default_rng(3)
    params = _mlp_params(rng, (16, 32, 8))
    x = rng.standard_normal((4, 16)).astype(np.float32)
    f = srcjax.jit(_sgd_step_keeping_grads)
    new, grads = f(params, x)
    # (a list taken from is never the one returned: jit may build the returned
    # gradient's leaf list apart from the tree the loop reads)
    src = srcjax.source(f, params, x)
    taken = set(re.findall(r"ad\.take_item\((\w+),", src))
    returned = set(re.findall(r"\w+", [ln for ln in src.splitlines() if "return" in ln][-1]))
    assert not taken & returned
    assert all(w is not None and b is not None for w, b in grads)
    for (gw, gb), (ow, ob) in zip(grads, _numpy_sgd_grads(params, x)):
        np.testing.assert_allclose(gw, ow, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gb, ob, rtol=1e-5, atol=1e-6)
    for (w, b), (gw, gb), (nw, nb) in zip(params, grads, new):
        np.testing.assert_array_equal(nw, w - RATE * gw)


def test_take_item_clears_only_a_list_nothing_else_holds():
    from srcjax.primitives.ad.indexing import _take_item

    def sole():
        items = [np.zeros(3), np.ones(3)]
        got = _take_item(items, 1)
        return got, items

    got, items = sole()
    assert np.array_equal(got, np.ones(3)) and items[1] is None and items[0] is not None

    def shared():
        items = [np.zeros(3), np.ones(3)]
        alias = items
        got = _take_item(items, 1)
        return got, alias

    got, alias = shared()
    assert np.array_equal(got, np.ones(3)) and alias[1] is not None
    t = (np.zeros(2), np.ones(2))
    assert _take_item(t, 0) is t[0]  # a tuple is read, never changed


def test_scaled_item_writes_only_into_an_item_nothing_else_holds():
    """``ad.scaled_item(c, items, k)`` is ``c * items[k]`` bit for bit; it reuses
    the item's buffer only when nothing else can see it (oracle: NumPy's
    product, and the other holder's array left unchanged)."""
    from srcjax.primitives.ad.indexing import _scaled_item, _take_item

    w = np.array([1.5, -0.0, np.inf, 3.0], np.float32)

    def sole():
        grads = [(w.copy(), w[:2].copy())]
        pair = _take_item(grads, 0, True)
        first = _scaled_item(-0.25, pair, 0)
        return first, pair

    first, pair = sole()
    assert first.dtype == np.float32
    np.testing.assert_array_equal(first.view(np.uint32), (-0.25 * w).view(np.uint32))
    assert pair[0] is None and pair[1] is not None  # (a list: the tuple had no other holder)

    def shared():
        leaf = w.copy()
        grads = [(leaf,)]
        pair = _take_item(grads, 0, True)
        return _scaled_item(-0.25, pair, 0), leaf

    first, leaf = shared()
    np.testing.assert_array_equal(leaf, w)  # the other holder's array is untouched
    np.testing.assert_array_equal(first, -0.25 * w)

    def strong_scale():
        grads = [w.copy()]
        return _scaled_item(np.float64(2.0), grads, 0)

    got = strong_scale()  # a NumPy float64 scale promotes: no in-place float32 product
    assert got.dtype == (np.float64(2.0) * w).dtype


def _alias_returned(xs):
    ys = [x * 2.0 for x in xs]
    zs = ys
    out = [y + 1.0 for y in ys]
    return out, zs


def _item_read_twice(params, grads):
    return [(w - RATE * g[0] * g[0], b - RATE * g[1]) for (w, b), g in zip(params, grads)]


def test_taken_lists_keep_what_another_name_still_reads():
    """A list read by a loop but still held by another name that is returned,
    and items read twice in the loop body: every value is as written (oracle:
    the same Python on NumPy arrays)."""
    xs = [np.full(300, float(i), np.float32) for i in range(3)]
    out, zs = srcjax.jit(_alias_returned)(xs)
    for i, (o, z) in enumerate(zip(out, zs)):
        np.testing.assert_array_equal(z, np.full(300, 2.0 * i, np.float32))
        np.testing.assert_array_equal(o, np.full(300, 2.0 * i + 1.0, np.float32))
    rng = np.random.default_rng(4)
    params = _mlp_params(rng, (300, 200, 10))
    grads = _mlp_params(rng, (300, 200, 10))
    before = [(gw.copy(), gb.copy()) for gw, gb in grads]
    got = srcjax.jit(_item_read_twice)(params, grads)
    for (gw, gb), (ow, ob) in zip(grads, before):
        np.testing.assert_array_equal(gw, ow)
        np.testing.assert_array_equal(gb, ob)
    for (w, b), (gw, gb), (nw, nb) in zip(params, grads, got):
        np.testing.assert_array_equal(nw, w - RATE * gw * gw)
        np.testing.assert_array_equal(nb, b - RATE * gb)
    # the caller's gradient list is never emptied nor written
    assert all(gw is not None and gb is not None for gw, gb in grads)


def _trips(x, w):
    acc = jnp.zeros_like(x)
    last = x
    for _ in range(4):
        z = x @ w  # (loop-invariant: hoisted)
        a = jnp.exp(acc * 0.5)
        b = a * z
        c = jnp.sin(b)
        last = c  # (read after the loop: kept)
        acc = acc + c  # (carried: kept)
    return acc + last


def _trips_numpy(x, w):
    acc = np.zeros_like(x)
    last = x
    z = x @ w
    for _ in range(4):
        c = np.sin(np.exp(acc * np.float32(0.5)) * z)
        last = c
        acc = acc + c
    return acc + last


def test_one_trip_temporaries_released_inside_the_loop():
    # a trip's temporaries were alive through the rest of the trip and the next
    # trip up to their rebinding (R6: the gradient's temporaries through all the
    # conjugate-gradient iterations); release_in_loops frees each after its last read
    rng = np.random.default_rng(2)
    x = rng.standard_normal((64, 64)).astype(np.float32)
    w = (0.1 * rng.standard_normal((64, 64))).astype(np.float32)
    f = srcjax.jit(_trips)
    got = f(x, w)
    want = _trips_numpy(x, w)
    assert got.dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-6, atol=1e-6)
    src = srcjax.source(f, x, w)
    released = {line.split("=")[0].strip() for line in src.splitlines() if "in the trip" in line}
    assert released == {"a", "b", "c"}, src
    _, peak = _peak(lambda: f(x, w))
    # acc, last and z, two of a trip's temporaries and the result; 7 buffers before
    assert peak < 5.5 * x.nbytes, peak / x.nbytes
