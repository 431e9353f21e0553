"""Gradients of ``lax.scan`` whose loss reads only part of the carry (the carry's
cotangent leaves the loss as ``(h_bar, None)``), and of loops carrying a
namedtuple state. Oracles: gradients recorded from jax 0.10.2
(``SRCJAX_RECORD_JAX=1`` re-records them) and float64 central differences.
(b47f94c filled such carry cotangents with zeros before the reverse loop; it was
reverted: it made a third derivative through loops wrong, see
test_regressions::test_third_derivative_through_loops_branches_and_tapes.)"""

import os
import types

import numpy as np
import pytest
from helpers import assert_matches_recorded, fd_grad, jax_recorded

import srcjax
import srcjax as jax
import srcjax.numpy as jnp
from srcjax import lax

RECORDED = os.path.join(os.path.dirname(__file__), "data", "scan_carry_holes_jax.npz")
T, B, NIN, H = 5, 3, 4, 6


def lstm_cell(params, carry, x):
    h, c = carry
    z = x @ params["wi"] + h @ params["wh"] + params["b"]
    i, f, g, o = jnp.split(z, 4, axis=-1)
    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    h = jax.nn.sigmoid(o) * jnp.tanh(c)
    return (h, c), h


def lstm_loss(params, xs):
    h0 = jnp.zeros((xs.shape[1], H), xs.dtype)
    c0 = jnp.zeros((xs.shape[1], H), xs.dtype)
    (h, c), _ = lax.scan(lambda carry, x: lstm_cell(params, carry, x), (h0, c0), xs)
    return jnp.sum(h @ params["wo"])


def counter_loss(params, xs):
    """A carry with an int32 step counter that scales the state and a float leaf
    (``total``) the loss never reads."""

    def cell(carry, x):
        h, k, total = carry
        scale = (k + 1).astype(h.dtype) / T
        h = jnp.tanh(x @ params["wi"][:, :H] + scale * (h @ params["wh"][:, :H]))
        return (h, k + 1, total + jnp.sum(h)), None

    h0 = jnp.zeros((xs.shape[1], H), xs.dtype)
    start = (h0, jnp.int32(0), jnp.zeros((), xs.dtype))
    (h, k, _), _ = lax.scan(cell, start, xs)
    return jnp.sum(h @ params["wo"]) * k.astype(h.dtype)


LOSSES = {"lstm": lstm_loss, "counter": counter_loss}


def _inputs(dtype=np.float32):
    rng = np.random.default_rng(3)
    params = {
        "wi": rng.standard_normal((NIN, 4 * H)) / np.sqrt(NIN),
        "wh": rng.standard_normal((H, 4 * H)) / np.sqrt(H),
        "b": 0.1 * rng.standard_normal(4 * H),
        "wo": rng.standard_normal((H, 1)) / np.sqrt(H),
    }
    xs = rng.standard_normal((T, B, NIN))
    return {k: v.astype(dtype) for k, v in params.items()}, xs.astype(dtype)


def _bound(fn, lib):
    g = {**fn.__globals__, "jax": lib, "jnp": lib.numpy, "lax": lib.lax}
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


def _grads(lib, transform):
    out = {}
    params, xs = _inputs()
    for name, fn in LOSSES.items():
        f = fn if lib is srcjax else _bound(fn, lib)
        if name == "lstm" and lib is not srcjax:
            f.__globals__["lstm_cell"] = _bound(lstm_cell, lib)
        g = transform(lib.grad(f))(params, xs)
        for k in sorted(g):
            out[f"{name}/{k}"] = np.asarray(g[k])
    return out


def _with_jax():
    import jax

    return _grads(jax, jax.jit)


@pytest.fixture(scope="module")
def recorded():
    return jax_recorded(RECORDED, _with_jax)


@pytest.mark.parametrize("mode", ["jit", "eager"])
def test_partial_carry_grads_match_jax(mode, recorded):
    transform = srcjax.jit if mode == "jit" else (lambda f: f)
    assert_matches_recorded(_grads(srcjax, transform), recorded, rtol=2e-5, atol=1e-6)


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_partial_carry_grads_match_finite_differences(name, x64):
    params, xs = _inputs(np.float64)
    g = srcjax.jit(srcjax.grad(LOSSES[name]))(params, xs)
    for k in ("wh", "wo"):

        def f(w, k=k):
            return float(LOSSES[name]({**params, k: w}, xs))

        np.testing.assert_allclose(np.asarray(g[k]), fd_grad(f, params[k]), rtol=1e-6, atol=1e-8)


State = __import__("collections").namedtuple("State", "leaves tag")


def _steps(w):
    # a namedtuple state whose field is tuple(a list the inner loop appends to),
    # carried by an outer Python loop (example_libraries.optimizers' shape): the
    # filled carry cotangent holds a tuple where the inner loop's reverse pops a list
    s = State((w, w * 0.0), 0)
    for _ in range(3):
        new = []
        for leaf in s.leaves:
            new.append(jnp.sin(leaf) + 0.5 * leaf)
        s = State(tuple(new), s.tag)
    return jnp.sum(s.leaves[0] ** 2) + jnp.sum(s.leaves[1])


def test_filled_tuple_cotangent_of_a_list_is_popped_as_a_list(x64):
    # regression: b47f94c's fill gave ad.seq_cotangent a tuple, and ad.pop failed
    w0 = np.array([0.3, -1.2])
    np.testing.assert_allclose(srcjax.grad(_steps)(w0), fd_grad(_steps, w0), rtol=1e-6)
    np.testing.assert_allclose(srcjax.jit(srcjax.grad(_steps))(w0), fd_grad(_steps, w0), rtol=1e-6)
