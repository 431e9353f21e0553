"""``initial=`` of jnp.sum, jnp.prod and jnp.nansum (session 16's debt: "unexpected
keyword argument"), eagerly and under grad, jit and vmap. Transformed code calls
the reduction without it and then ``ad.plus_initial``/``ad.times_initial``, so
the reduction's own rules are unchanged (prod's adjoint is scaled by
``initial``). Values recorded from JAX 0.10.2 (``jax.numpy`` in place of
``srcjax.numpy``). Not matched: JAX's ``Array.sum`` method drops ``initial``
(``x.sum(initial=1.0)`` is 9.0 there, 10.0 here and in ``jnp.sum``)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

X = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, -6.0]], np.float32)

# (name, function, JAX 0.10.2's value, its dtype)
CASES = [
    ("sum", lambda x: jnp.sum(x, initial=10.0), 19.0, "float32"),
    ("sum_axis", lambda x: jnp.sum(x, axis=0, initial=1.0), [6.0, 8.0, -2.0], "float32"),
    ("sum_where", lambda x: jnp.sum(x, axis=1, initial=1.0, where=x > 1.5), [6.0, 10.0], "float32"),
    ("sum_int", lambda x: jnp.sum(jnp.arange(4), initial=2), 8, "int32"),
    ("prod", lambda x: jnp.prod(x, axis=1, initial=2.0), [12.0, -240.0], "float32"),
    ("prod_all", lambda x: jnp.prod(x, initial=2.0), -1440.0, "float32"),
    ("sum_empty", lambda x: jnp.sum(x[:0], axis=0, initial=3.0), [3.0, 3.0, 3.0], "float32"),
    ("nansum", lambda x: jnp.nansum(x, initial=1.0), 10.0, "float32"),
    ("max", lambda x: jnp.max(x, axis=1, initial=4.5), [4.5, 5.0], "float32"),
]


@pytest.mark.parametrize("name,f,want,dt", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_initial_values_match_jax(name, f, want, dt, mode):
    g = srcjax.jit(f) if mode == "jit" else f
    r = np.asarray(g(jnp.asarray(X)))
    assert r.dtype == np.dtype(dt)
    np.testing.assert_allclose(r, np.asarray(want, dt), rtol=1e-6)


def test_initial_under_vmap_matches_jax():
    r = srcjax.vmap(lambda x: jnp.sum(x, initial=1.0))(X)
    np.testing.assert_allclose(np.asarray(r), [7.0, 4.0])
    r = srcjax.vmap(lambda x: jnp.prod(x, initial=-1.0))(X)
    np.testing.assert_allclose(np.asarray(r), [-6.0, 120.0])


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_initial_gradients_match_jax(mode):
    def wrap(f):
        return srcjax.jit(srcjax.grad(f)) if mode == "jit" else srcjax.grad(f)

    g = wrap(lambda x: jnp.sum(x * x, initial=5.0))(X)
    np.testing.assert_allclose(np.asarray(g), 2 * X)
    g = wrap(lambda x: jnp.prod(x, initial=2.0))(X)
    want = [[-1440.0, -720.0, -480.0], [-360.0, -288.0, 240.0]]  # JAX 0.10.2
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6)
    g = wrap(lambda x: jnp.sum(jnp.prod(x, axis=1, initial=-0.5)))(X)
    want = -0.5 * np.prod(X, axis=1, keepdims=True) / X  # (no zeros in X)
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-6)
    # forward mode: jvp of prod with initial
    _, t = srcjax.jvp(lambda x: jnp.prod(x, initial=2.0), (X,), (np.ones_like(X),))
    np.testing.assert_allclose(float(t), 2.0 * np.sum(np.prod(X) / X), rtol=1e-6)
