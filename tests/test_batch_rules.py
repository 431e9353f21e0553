"""srcjax.primitives.batch_rules: the batched products' adjoints against a Python
loop over the examples, and the quickstart MLP's gradient kept to whole GEMMs."""

import itertools
import tracemalloc

import numpy as np
import pytest
from helpers import assert_close

import srcjax
import srcjax.numpy as jnp
from srcjax.primitives import batch_rules as br

RNG = np.random.default_rng(3)
B = 5


def _operands(ra, rb, ab, bb):
    """Per-example a (n[, k]) and b (k[, m]) of ``a @ b``, stacked when batched."""
    n, k, m = 2, 3, 4
    a_shape = (n, k) if ra == 2 else (k,)
    b_shape = (k, m) if rb == 2 else (k,)
    a = RNG.normal(size=((B,) if ab else ()) + a_shape)
    b = RNG.normal(size=((B,) if bb else ()) + b_shape)
    return a, b


CASES = [c for c in itertools.product((1, 2), (1, 2), (False, True), (False, True)) if c[2] or c[3]]


@pytest.mark.parametrize("ra,rb,ab,bb", CASES)
def test_matmul_adjoints_match_a_loop_over_examples(ra, rb, ab, bb):
    a, b = _operands(ra, rb, ab, bb)
    out = br._bmatmul(a, b, ab, bb)
    g = RNG.normal(size=out.shape)
    want_a, want_b = [], []
    for i in range(B):
        ai, bi = (a[i] if ab else a), (b[i] if bb else b)
        # the cotangents of one example's a @ b, by the rules of the matrix product
        ga = np.multiply.outer(g[i], bi) if rb == 1 else g[i] @ bi.T
        gb = np.multiply.outer(ai, g[i]) if ra == 1 else ai.T @ g[i]
        if ra == 1 and rb == 1:
            ga, gb = g[i] * bi, g[i] * ai
        want_a.append(ga)
        want_b.append(gb)
    want_a = np.stack(want_a) if ab else np.sum(want_a, axis=0)
    want_b = np.stack(want_b) if bb else np.sum(want_b, axis=0)
    got_a = br._bmatmul_left(g, a, b, ab, bb)
    got_b = br._bmatmul_right(g, a, b, ab, bb)
    assert got_a.shape == np.shape(a) and got_b.shape == np.shape(b)
    assert_close(got_a, want_a, rtol=1e-12)
    assert_close(got_b, want_b, rtol=1e-12)


def test_unbatched_matrix_times_batched_vectors_is_one_gemm(monkeypatch):
    # vmap(lambda v: w @ v): per example w @ v_i, written as one GEMM v @ w.T,
    # never a broadcast stack of B matrix-vector products (w (n, m) against
    # v[:, :, None] (B, m, 1) was 4.7x slower for the quickstart's first layer)
    w = RNG.normal(size=(6, 4)).astype(np.float32)
    v = RNG.normal(size=(B, 4)).astype(np.float32)
    ranks = []
    real = np.matmul

    def spy(x, y, *args, **kwargs):
        ranks.append((np.ndim(x), np.ndim(y)))
        return real(x, y, *args, **kwargs)

    monkeypatch.setattr(br.runtime_products.np, "matmul", spy)
    got = br._bmatmul(w, v, False, True)
    monkeypatch.undo()
    assert ranks == [(2, 2)]
    assert got.dtype == np.float32
    assert_close(got, np.stack([w.astype(np.float64) @ v[i] for i in range(B)]), rtol=1e-6)


# -- the JAX quickstart's MLP: vmap(predict, in_axes=(None, 0)) inside grad ------------
SIZES = (784, 256, 256, 10)
BATCH = 128


def _relu(x):
    return jnp.maximum(0, x)


def _predict(params, image):
    activations = image
    for w, b in params[:-1]:
        activations = _relu(jnp.dot(w, activations) + b)
    final_w, final_b = params[-1]
    logits = jnp.dot(final_w, activations) + final_b
    return logits - srcjax.scipy.special.logsumexp(logits)


def _loss(params, images, targets):
    preds = srcjax.vmap(_predict, in_axes=(None, 0))(params, images)
    return -jnp.mean(preds * targets)


def _quickstart_inputs():
    rng = np.random.default_rng(0)
    params = [
        ((rng.standard_normal((n, m)) * 0.05).astype(np.float32), np.zeros(n, np.float32))
        for m, n in zip(SIZES[:-1], SIZES[1:])
    ]
    x = rng.standard_normal((BATCH, SIZES[0])).astype(np.float32)
    y = np.eye(SIZES[-1], dtype=np.float32)[rng.integers(0, SIZES[-1], BATCH)]
    return params, x, y


#: XLA's buffers for jax.jit(jax.grad(loss)) of this program (temporaries
#: 267,264 + outputs 1,077,336 bytes), recorded from jax 0.10.2's
#: ``compile().memory_analysis()`` on this CPU
JAX_GRAD_PEAK_BYTES = 1_344_600


def test_quickstart_gradient_keeps_gemms_whole():
    params, x, y = _quickstart_inputs()
    grad = srcjax.jit(srcjax.grad(_loss))
    grads = grad(params, x, y)
    # values: the weight cotangents are sums over the examples of outer products
    # (a loop over examples in float64 gives them)
    w, b = params[-1]
    h = x.astype(np.float64)
    for wl, bl in params[:-1]:
        h = np.maximum(0, h @ wl.T.astype(np.float64) + bl)
    logits = h @ w.T.astype(np.float64) + b
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    d_logits = -(y - p * y.sum(1, keepdims=True)) / y.size
    want_w = sum(np.multiply.outer(d_logits[i], h[i]) for i in range(BATCH))
    assert_close(grads[-1][0], want_w, rtol=1e-4, atol=1e-7)
    assert_close(grads[-1][1], d_logits.sum(0), rtol=1e-4, atol=1e-7)
    # the generated code contracts over the batch axis: the unbatched weight's
    # cotangent is one product (bmatmul_left with `a` unbatched), no per-example
    # outer product and no einsum building one (one a layer: jit writes out the
    # loop over the layers, whose length its key holds)
    text = srcjax.source(grad, params, x, y)
    assert text.count("ad.bmatmul_left(") == len(params)
    assert all(", False, True)" in line for line in text.splitlines() if "bmatmul_left(" in line)
    assert "outer" not in text and "einsum" not in text
    # memory: a per-example stack of the first layer's cotangent alone would be
    # 128 x 256 x 784 float32 = 100 MiB; JAX's whole step is 1.3 MiB
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = grad(params, x, y)
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    del out
    assert peak <= 1.5 * JAX_GRAD_PEAK_BYTES, peak


# -- pytree utilities under vmap: one pass over the batched leaves, not a loop ----------
def _clip_one(g):
    norm = jnp.sqrt(sum(jnp.sum(leaf * leaf) for leaf in srcjax.tree_util.tree_leaves(g)))
    scale = jnp.minimum(1.0, 1.0 / (norm + 1e-6))
    return srcjax.tree_util.tree_map(lambda leaf: leaf * scale, g)


def test_per_example_clipping_by_tree_map_is_batched_whole():
    # DP-SGD's clipping: tree_leaves / tree_map under vmap looped over the
    # examples (ad.tree_row per example: 30x slower than jax.jit at batch 256)
    g = {"w": RNG.normal(size=(6, 3, 2)), "b": RNG.normal(size=(6, 2))}
    clip = srcjax.jit(srcjax.vmap(_clip_one))
    got = clip(g)
    for i in range(6):  # a loop over the examples in float64
        norm = np.sqrt(np.sum(g["w"][i] ** 2) + np.sum(g["b"][i] ** 2))
        scale = min(1.0, 1.0 / (norm + 1e-6))
        assert_close(got["w"][i], g["w"][i] * scale, rtol=1e-6)
        assert_close(got["b"][i], g["b"][i] * scale, rtol=1e-6)
    text = srcjax.source(clip, g)
    assert "tree_row" not in text and "for row" not in text


def test_stack_of_matrices_times_per_example_vector_is_one_product():
    # a (2, 3, 4) unbatched @ a batched vector: was a Python loop over examples
    a = RNG.normal(size=(2, 3, 4))
    v = RNG.normal(size=(B, 4))
    got = br._bmatmul(a, v, False, True)
    assert_close(got, np.stack([a @ v[i] for i in range(B)]), rtol=1e-12)
    f = srcjax.vmap(lambda x: jnp.sum(jnp.tanh(a @ x)))
    g = srcjax.vmap(srcjax.grad(lambda x: jnp.sum(jnp.tanh(a @ x))))
    want_g = [np.einsum("ijk,ij->k", a, 1 - np.tanh(a @ v[i]) ** 2) for i in range(B)]
    # (float32: x64 is off here)
    assert_close(f(v), [np.sum(np.tanh(a @ v[i])) for i in range(B)], rtol=1e-5, atol=1e-5)
    assert_close(g(v), want_g, rtol=1e-5, atol=1e-5)
