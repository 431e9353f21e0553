"""Issue 20: batched code reads as a person would write it. vmap aligned the
per-example ranks of every two batched operands with two ``ad.lift`` calls
(now ``ad.expand_to_rank``, the name saying what it does), also where one of
them is a per-example scalar (a full reduction), where no axis can be needed.
``analysis/ranks.scalar_names`` finds those names; the oracle for the values is
a Python loop over the examples."""

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax.analysis.ranks import scalar_names
from srcjax.frontend.normalize import normalize
from srcjax.frontend.source import get_source


def normalized_loss(x, w):
    h = jnp.tanh(x @ w)
    total = jnp.sum(h)
    scale = jnp.sqrt(jnp.sum(w**2)) * 2.0
    for _ in range(2):
        total = total * 0.5
    rows = jnp.sum(h, axis=0)
    return total / scale + jnp.mean(rows) / scale


def test_scalar_names():
    src = get_source(normalized_loss)
    norm = normalize(src, ("leaf", "leaf"))
    found = scalar_names(norm.node)
    renamed = {n.split("_")[0] for n in found}
    assert "total" in renamed and "scale" in renamed
    assert not any(n.startswith(("h", "rows", "x", "w")) for n in found), found


def test_no_rank_alignment_with_per_example_scalars():
    rng = np.random.RandomState(0)
    x = rng.normal(size=(5, 3, 4)).astype(np.float32)
    w = rng.normal(size=(5, 4, 2)).astype(np.float32)
    text = srcjax.source(srcjax.vmap(normalized_loss))
    assert "ad.lift" not in text
    # total / scale, rows' mean / scale: all per-example scalars, nothing aligned
    assert "expand_to_rank" not in text, text
    got = srcjax.vmap(normalized_loss)(x, w)
    want = np.array([normalized_loss(x[i], w[i]) for i in range(5)])
    np.testing.assert_allclose(got, want, rtol=1e-6)
    for argnums in (0, 1):
        g = srcjax.grad(normalized_loss, argnums=argnums)
        got = srcjax.vmap(g)(x, w)
        want = np.stack([g(x[i], w[i]) for i in range(5)])
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_alignment_kept_where_ranks_are_unknown():
    def f(x, b):
        return jnp.sum(jnp.tanh(x + b))

    text = srcjax.source(srcjax.vmap(f))
    assert text.count("ad.expand_to_rank(") == 2, text
    x = np.ones((3, 4, 2), np.float32)
    b = np.arange(6, dtype=np.float32).reshape(3, 2)
    want = np.array([f(x[i], b[i]) for i in range(3)])
    np.testing.assert_allclose(srcjax.vmap(f)(x, b), want, rtol=1e-6)
