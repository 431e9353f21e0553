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


# -- the filled carry cotangent (JAX's instantiate_zeros for a lax loop's carry) --


def _two_state_scan(x):
    """A scan carrying (h, c) whose result reads only h: the carry's cotangent
    after the loop is (h_bar, None)."""

    def cell(carry, xi):
        h, c = carry
        c = jnp.sin(c * x + xi) + 0.5 * h
        h = jnp.tanh(h * x + c)
        return (h, c), None

    (h, _), _ = lax.scan(cell, (x * 0.5, x * 0.25), jnp.array([0.3, -0.7, 1.1]))
    return h * h


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_third_derivative_through_a_scan_with_a_partly_read_carry(mode, x64):
    # a third derivative through the fill (b47f94c's fill of every carried
    # container made one through Python loops and tapes wrong)
    t = srcjax.jit if mode == "jit" else (lambda f: f)
    d2 = t(srcjax.grad(srcjax.grad(_two_state_scan)))
    d3 = t(srcjax.grad(srcjax.grad(srcjax.grad(_two_state_scan))))
    eps = 1e-5
    for x in (0.7, -0.4):
        fd = (float(d2(x + eps)) - float(d2(x - eps))) / (2 * eps)
        np.testing.assert_allclose(float(d3(x)), fd, rtol=1e-6)


def _scans_of_two_sizes(w):
    # a lax.scan inside a Python loop whose carry shrinks between the loop's
    # trips: the fill before each reverse scan needs that trip's carry
    total = 0.0
    v = w
    for _ in range(3):

        def cell(carry, xi):
            h, c = carry
            return (jnp.tanh(h * v + xi), c + jnp.sum(h)), None  # noqa: B023 (used in the trip)

        (h, _), _ = lax.scan(cell, (v, jnp.zeros(())), jnp.arange(4.0))
        total = total + jnp.sum(h * h)
        v = h[1:] * 0.5 + 0.1
    return total


@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_carry_fill_inside_an_outer_loop_of_changing_shapes(mode, x64):
    w0 = np.array([0.3, -1.2, 0.8, 0.5])
    t = srcjax.jit if mode == "jit" else (lambda f: f)
    g = t(srcjax.grad(_scans_of_two_sizes))(w0)
    np.testing.assert_allclose(g, fd_grad(_scans_of_two_sizes, w0), rtol=1e-6)


def test_lstm_reverse_loop_is_typed_under_jit():
    # (h_bar, None) entering the reverse loop and (h_bar, c_bar) leaving a trip
    # left jit unable to type it: every adjoint helper stayed (ad.densify,
    # ad.unbroadcast, jnp.multiply through its wrapper); filled, they fold
    params, xs = _inputs()
    text = srcjax.source(srcjax.jit(srcjax.grad(lstm_loss)), params, xs)
    loop = text.split("for k in reversed(range(")[1]
    assert "ad.densify(" not in loop and "ad.unbroadcast(lstm_cell" not in loop
    assert "jnp.multiply(" not in loop


def test_inexact_fill_leaves_integer_and_class_holes():
    from srcjax.primitives.control.cotangents import _fill_holes

    like = (np.ones(2, np.float32), np.int32(3), 2.0, {"k": np.arange(2)}, State(1.0, 2))
    got = _fill_holes((None, None, None, None, None), like, inexact=True)
    assert type(got) is list and len(got) == 5
    np.testing.assert_array_equal(got[0], np.zeros(2, np.float32))
    assert got[0].dtype == np.float32
    assert got[1] is None and got[4] is None and got[3] == {"k": None}
    assert float(got[2]) == 0.0
    g = np.full(2, 5.0, np.float32)
    assert _fill_holes([g, None, None, None, None], like, inexact=True)[0] is g


# -- a scan's cell called with the params dict (hoisted), under vmap (typed) --


def _gru_cell(p, h, x):
    z = jax.nn.sigmoid(x @ p["wz"] + h @ p["uz"])
    n = jnp.tanh(x @ p["wn"] + (z * h) @ p["un"])
    return (1 - z) * n + z * h


def _birnn_loss(p, xs):
    def birnn(p, seq):
        h0 = jnp.zeros(p["uz"].shape[0], seq.dtype)

        def cell(carry, x):
            h, c = carry
            h = _gru_cell(p, h, x)
            return (h, c + jnp.sum(h)), h

        _, fwd = lax.scan(cell, (h0, jnp.zeros((), seq.dtype)), seq)
        (hb, _), bwd = lax.scan(cell, (h0, jnp.zeros((), seq.dtype)), seq, reverse=True)
        return jnp.sum(jnp.concatenate([fwd, bwd], -1) ** 2) + jnp.sum(hb)

    return jnp.sum(jax.vmap(birnn, in_axes=(None, 0))(p, xs))


def _birnn_h_loss(p, xs):
    """The bidirectional GRU of a fresh user's program (tools/real_programs/u2_gru.py)."""

    def birnn(p, seq):
        h0 = jnp.zeros(p["uz"].shape[0], seq.dtype)

        def cell(h, x):
            h = _gru_cell(p, h, x)
            return h, h

        _, fwd = lax.scan(cell, h0, seq)
        _, bwd = lax.scan(cell, h0, seq, reverse=True)
        return jnp.concatenate([fwd, bwd], -1)

    return jnp.mean(jax.vmap(birnn, in_axes=(None, 0))(p, xs) ** 2)


def _gru_inputs(dtype):
    rng = np.random.default_rng(7)
    p = {
        k: rng.standard_normal((3, 4) if k[0] == "w" else (4, 4)) * 0.5
        for k in ("wz", "uz", "wn", "un")
    }
    return {k: v.astype(dtype) for k, v in p.items()}, rng.standard_normal((2, 5, 3)).astype(dtype)


@pytest.mark.parametrize("loss", [_birnn_loss, _birnn_h_loss])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_vmapped_scans_of_a_cell_taking_params_match_finite_differences(mode, loss, x64):
    p, xs = _gru_inputs(np.float64)
    t = srcjax.jit if mode == "jit" else (lambda f: f)
    g = t(srcjax.grad(loss))(p, xs)
    for k in ("uz", "wn"):

        def f(w, k=k):
            return float(loss({**p, k: w}, xs))

        np.testing.assert_allclose(np.asarray(g[k]), fd_grad(f, p[k]), rtol=1e-6, atol=1e-9)


def test_vmapped_scan_grad_reads_params_once():
    # the cell's `p` (an inlined parameter, `gru_cell_p = p` every trip) moves
    # out of the loop with its reads: no dict cotangent is built per trip
    p, xs = _gru_inputs(np.float32)
    text = srcjax.source(srcjax.jit(srcjax.grad(_birnn_h_loss)), p, xs)
    loops = [loop.split("released")[0] for loop in text.split("in reversed(range(")[1:]]
    assert len(loops) == 2
    for body in loops:
        assert not any(f"'{k}')" in body for k in p)  # (no params_bar[k] per trip)
    # (typed too before 42ee862: the reverse scan's ys are read through
    # `ys[::-1]`, a static slice of a list appended to, which jit no longer types,
    # and the loss after it, so both reverse loops are untyped again)
