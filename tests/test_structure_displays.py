"""A gradient of a plain known structure is built by displays under jit
(transforms/optimize/displays.py): the same containers, types and values as
the structure's unflatten; named tuples and returned trees keep theirs.
Oracle: the derivative written out in NumPy."""

from collections import namedtuple

import numpy as np

import srcjax
import srcjax.numpy as jnp

Pair = namedtuple("Pair", ["w", "b"])


def _tree(rng):
    return {
        "layers": [
            (rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)),
            (rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)),
        ],
        "scale": rng.standard_normal(3).astype(np.float32),
    }


def _loss(p, x):
    h = x * p["scale"]
    for w, b in p["layers"]:
        h = jnp.sin(w * h + b)
    return jnp.sum(h)


def _numpy_grad(p, x):
    """d/dp of :func:`_loss` in float64, by the chain rule."""
    s = p["scale"].astype(np.float64)
    hs = [x * s]
    for w, b in p["layers"]:
        hs.append(np.sin(w * hs[-1] + b))
    g = np.ones(3)
    out = []
    for (w, b), h_in in zip(p["layers"][::-1], hs[-2::-1]):
        d = g * np.cos(w * h_in + b)
        out.append((d * h_in, d))
        g = d * w
    return {"layers": out[::-1], "scale": g * x}


def test_gradient_of_a_dict_of_lists_of_tuples():
    rng = np.random.default_rng(0)
    p, x = _tree(rng), rng.standard_normal(3).astype(np.float32)

    def step(p, x):  # (the gradient read by an update loop, as R1's step reads it)
        g = srcjax.grad(_loss)(p, x)
        new = [(w - 0.1 * dw, b - 0.1 * db) for (w, b), (dw, db) in zip(p["layers"], g["layers"])]
        return new, g["scale"]

    got = srcjax.jit(step)(p, x)
    want = _numpy_grad(p, x)
    for (w, b), (dw, db), (nw, nb) in zip(p["layers"], want["layers"], got[0]):
        np.testing.assert_allclose(nw, w - 0.1 * dw, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(nb, b - 0.1 * db, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[1], want["scale"], rtol=1e-5, atol=1e-6)
    src = srcjax.source(srcjax.jit(step), p, x)
    # (the loss's loop written out, the gradient's leaves known: one display)
    assert "unflatten_upto" not in src and "tree_def" not in src
    assert "cotangent_like" not in src and "tree_unflatten_like" not in src


def test_returned_gradient_keeps_its_types():
    rng = np.random.default_rng(1)
    p, x = _tree(rng), rng.standard_normal(3).astype(np.float32)
    g = srcjax.jit(srcjax.grad(_loss))(p, x)
    want = _numpy_grad(p, x)
    assert type(g) is dict and type(g["layers"]) is list
    assert all(type(t) is tuple for t in g["layers"])
    for (gw, gb), (ww, wb) in zip(g["layers"], want["layers"]):
        np.testing.assert_allclose(gw, ww, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(gb, wb, rtol=1e-5, atol=1e-6)


def test_named_tuple_layers_stay_named_tuples():
    rng = np.random.default_rng(2)
    layers = [
        Pair(rng.standard_normal(3).astype(np.float32), np.float32(0.5) * np.ones(3, np.float32))
    ]
    x = rng.standard_normal(3).astype(np.float32)

    def loss(layers, x):
        h = x
        for layer in layers:
            h = jnp.sin(layer.w * h + layer.b)
        return jnp.sum(h)

    def step(layers, x):
        g = srcjax.grad(loss)(layers, x)
        return [Pair(p.w - 0.1 * d.w, p.b - 0.1 * d.b) for p, d in zip(layers, g)]

    got = srcjax.jit(step)(layers, x)
    w, b = layers[0]
    d = np.cos(w * x + b)
    assert type(got[0]) is Pair
    np.testing.assert_allclose(got[0].w, w - 0.1 * d * x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[0].b, b - 0.1 * d, rtol=1e-5, atol=1e-6)
