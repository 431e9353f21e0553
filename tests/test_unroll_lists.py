"""jit writes out loops over Python lists whose length its key knows
(transforms/optimize/unroll.py) and pairs grad's tape in the straight-line code
that makes (optimize/tape_pairs.py); a list whose length may change is never
folded. Oracles: plain NumPy (forward and hand-written backprop) and the same
Python loop run eagerly."""

import re

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp


def _has_loop(src):
    return re.search(r"^\s+for ", src, re.M) is not None


def _params(rng, sizes):
    return [
        (
            (rng.standard_normal((n, m)) * 0.3).astype(np.float32),
            (rng.standard_normal(n) * 0.1).astype(np.float32),
        )
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def _mlp_loss(params, x):
    h = x
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w.T + b)
    w, b = params[-1]
    return jnp.sum((h @ w.T + b) ** 2)


def _numpy_grads(params, x):
    """Hand-written backprop of :func:`_mlp_loss` in float64."""
    p64 = [(w.astype(np.float64), b.astype(np.float64)) for w, b in params]
    acts = [x.astype(np.float64)]
    for w, b in p64[:-1]:
        acts.append(np.tanh(acts[-1] @ w.T + b))
    w, b = p64[-1]
    g = 2 * (acts[-1] @ w.T + b)
    grads = [(g.T @ acts[-1], g.sum(0))]
    g = g @ w
    for k in range(len(p64) - 2, -1, -1):
        w, b = p64[k]
        g = g * (1 - acts[k + 1] ** 2)
        grads.append((g.T @ acts[k], g.sum(0)))
        g = g @ w
    return grads[::-1]


@pytest.mark.parametrize("sizes", [(5, 4, 3, 2), (5, 4, 4, 4, 3, 2), (5, 2)])
def test_grad_over_layer_list_written_out(sizes):
    rng = np.random.default_rng(0)
    params = _params(rng, sizes)
    x = rng.standard_normal((6, sizes[0])).astype(np.float32)
    step = srcjax.jit(srcjax.grad(_mlp_loss))
    got = step(params, x)
    want = _numpy_grads(params, x)
    assert len(got) == len(want)
    for (gw, gb), (ww, wb) in zip(got, want):
        np.testing.assert_allclose(gw, ww, rtol=2e-4, atol=1e-5)
        np.testing.assert_allclose(gb, wb, rtol=2e-4, atol=1e-5)
    src = srcjax.source(step, params, x)
    assert not _has_loop(src)  # (both of grad's loops written out)
    assert "tape" not in src  # (its pushes and pops paired into names)


def test_vmapped_predict_in_grad_matches_numpy():
    """R1's shape: per-example predict under vmap(in_axes=(None, 0)) in grad in jit."""
    rng = np.random.default_rng(1)
    params = _params(rng, (7, 5, 5, 3))
    x = rng.standard_normal((4, 7)).astype(np.float32)

    def predict(params, v):
        h = v
        for w, b in params[:-1]:
            h = jnp.tanh(jnp.dot(w, h) + b)
        w, b = params[-1]
        return jnp.dot(w, h) + b

    def loss(params, x):
        return jnp.sum(srcjax.vmap(predict, in_axes=(None, 0))(params, x) ** 2)

    got = srcjax.jit(srcjax.grad(loss))(params, x)
    for (gw, gb), (ww, wb) in zip(got, _numpy_grads(params, x)):
        np.testing.assert_allclose(gw, ww, rtol=2e-4, atol=1e-5)
        np.testing.assert_allclose(gb, wb, rtol=2e-4, atol=1e-5)


def _sum_items(xs):
    s = 0.0
    for v in xs:
        s = s + v
    return s


def test_appended_copy_of_a_parameter_is_not_folded():
    """``xs = params[:]`` has the parameter's length in jit's key, but the append
    makes it one longer: the loop over it must run three trips."""

    def f(params, x):
        xs = params[:]
        xs.append(x * 2)
        return _sum_items(xs) * 1.0

    x = np.arange(3, dtype=np.float32)
    params = [x + 1, x + 2]
    want = (x + 1) + (x + 2) + 2 * x
    np.testing.assert_allclose(srcjax.jit(f)(params, x), want)
    g = srcjax.jit(srcjax.grad(lambda p, x: jnp.sum(f(p, x))))(params, x)
    np.testing.assert_allclose(g[0], np.ones(3))
    np.testing.assert_allclose(g[1], np.ones(3))


def test_data_dependent_if_in_the_loop_stays_a_loop():
    """A branch on a value is not decided per trip: the loop is kept, and right."""

    def f(params, x):
        s = x
        for w in params:
            if jnp.sum(w) > 0:
                s = s + w
            else:
                s = s - w
        return jnp.sum(s * s)

    rng = np.random.default_rng(2)
    params = [rng.standard_normal(3).astype(np.float32) for _ in range(3)]
    x = rng.standard_normal(3).astype(np.float32)
    s = x.astype(np.float64)
    for w in params:
        s = s + w if w.sum() > 0 else s - w
    np.testing.assert_allclose(srcjax.jit(f)(params, x), np.sum(s * s), rtol=1e-5)
    g = srcjax.jit(srcjax.grad(f, argnums=1))(params, x)
    np.testing.assert_allclose(g, 2 * s, rtol=1e-5)


def test_tuple_of_layers_and_a_long_list():
    """A tuple of layers is written out; a list longer than the unroll limit (16)
    keeps its loops; both match NumPy."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(4).astype(np.float32)

    def f(ws, x):
        h = x
        for w in ws:
            h = jnp.sin(w * h)
        return jnp.sum(h)

    for n in (3, 20):
        ws = [rng.standard_normal(4).astype(np.float32) for _ in range(n)]
        args = (tuple(ws) if n == 3 else ws, x)
        h = x.astype(np.float64)
        hs = [h]
        for w in ws:
            h = np.sin(w * h)
            hs.append(h)
        np.testing.assert_allclose(srcjax.jit(f)(*args), h.sum(), rtol=1e-5)
        # d/dx by the chain rule, in float64
        g = np.ones(4)
        for w, h_in in zip(ws[::-1], hs[-2::-1]):
            g = g * np.cos(w * h_in) * w
        got = srcjax.jit(srcjax.grad(f, argnums=1))(*args)
        np.testing.assert_allclose(got, g, rtol=1e-4, atol=1e-6)
        src = srcjax.source(srcjax.jit(srcjax.grad(f, argnums=1)), *args)
        assert _has_loop(src) == (n == 20)
