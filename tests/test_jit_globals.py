"""jit specializes on the Python scalars its code reads from module globals and
closure cells (ints, floats, bools, tuples of them), as JAX bakes them in at
trace time, and guards them: rebinding one between calls specializes again, so
the next call gives the new result (JAX would keep the old value). A variable
rebound more than a couple of times is read live instead. Oracles: NumPy."""

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.jit_api import jitted as jit_module

WIDTH = 3
SCALE = 2.0
SHAPE = (2, 3)
USE_BIAS = True
HIDDEN = 4
STEP = 0
ad = 3.0  # a user global named like generated code's namespace (read as ad_)


def _widen(x):
    return jnp.zeros((x.shape[0], WIDTH), x.dtype) + x[:, None]


def _scaled(x):
    return x * SCALE


def _reshaped(x):
    return jnp.reshape(x, SHAPE) * 2.0


def _biased(x):
    if USE_BIAS:
        return x + 1.0
    return x - 1.0


def _times_ad(x):
    return x * ad


def _stepped(x):
    return x + STEP


def test_a_global_int_in_a_shape_is_a_constant_of_the_specialization(monkeypatch):
    x = np.arange(4, dtype=np.float32)
    f = srcjax.jit(_widen)
    np.testing.assert_array_equal(np.asarray(f(x)), np.repeat(x[:, None], 3, axis=1))
    text = srcjax.source(f, x)
    assert "(4, 3)" in text and "WIDTH" not in text  # folded, not read at run time
    monkeypatch.setitem(globals(), "WIDTH", 5)
    out = np.asarray(f(x))  # rebound: specialized again, the new shape
    np.testing.assert_array_equal(out, np.repeat(x[:, None], 5, axis=1))
    assert "(4, 5)" in srcjax.source(f, x)


def test_rebinding_a_float_global_gives_the_new_result(monkeypatch):
    x = np.array([1.0, -2.0], np.float32)
    f = srcjax.jit(_scaled)
    g = srcjax.jit(srcjax.grad(lambda v: jnp.sum(_scaled(v) ** 2)))
    np.testing.assert_allclose(np.asarray(f(x)), x * 2.0)
    np.testing.assert_allclose(np.asarray(g(x)), 2 * x * 2.0**2, rtol=1e-6)
    assert "SCALE" not in srcjax.source(f, x)
    monkeypatch.setitem(globals(), "SCALE", 3.0)
    np.testing.assert_allclose(np.asarray(f(x)), x * 3.0)
    np.testing.assert_allclose(np.asarray(g(x)), 2 * x * 3.0**2, rtol=1e-6)


def test_tuple_and_bool_globals(monkeypatch):
    x = np.arange(6, dtype=np.float32)
    r = srcjax.jit(_reshaped)
    b = srcjax.jit(_biased)
    np.testing.assert_array_equal(np.asarray(r(x)), x.reshape(2, 3) * 2)
    np.testing.assert_array_equal(np.asarray(b(x)), x + 1)
    assert "USE_BIAS" not in srcjax.source(b, x)
    monkeypatch.setitem(globals(), "SHAPE", (3, 2))
    monkeypatch.setitem(globals(), "USE_BIAS", False)
    np.testing.assert_array_equal(np.asarray(r(x)), x.reshape(3, 2) * 2)
    np.testing.assert_array_equal(np.asarray(b(x)), x - 1)


def test_a_global_named_like_a_namespace(monkeypatch):
    x = np.array([1.0, 2.0], np.float32)
    f = srcjax.jit(_times_ad)
    np.testing.assert_allclose(np.asarray(f(x)), x * 3.0)
    monkeypatch.setitem(globals(), "ad", 4.0)
    np.testing.assert_allclose(np.asarray(f(x)), x * 4.0)


def test_a_closure_cell_is_guarded_too():
    n = 2

    def f(x):
        return x * n

    jf = srcjax.jit(f)
    x = np.array([1.0, 3.0], np.float32)
    np.testing.assert_allclose(np.asarray(jf(x)), x * 2)
    n = 5  # noqa: F841 - read by f through its cell
    np.testing.assert_allclose(np.asarray(jf(x)), x * 5)


def test_a_global_rebound_on_every_call_is_read_live_after_a_few(monkeypatch):
    x = np.array([1.0, 2.0], np.float32)
    f = srcjax.jit(_stepped)
    for step in range(8):
        monkeypatch.setitem(globals(), "STEP", step)
        np.testing.assert_allclose(np.asarray(f(x)), x + step)
    # one build per value until the variable counts as volatile, then one that reads it
    assert f._builds == jit_module._MAX_REBINDS + 2
    assert "STEP" in srcjax.source(f, x)


def _rnn_loss(params, xs, ys):
    def cell(h, x):
        h = jnp.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
        return h, h @ params["wo"]

    h0 = jnp.zeros((xs.shape[1], HIDDEN), xs.dtype)
    _, outputs = lax.scan(cell, h0, xs)
    return jnp.mean((outputs - ys) ** 2)


def _rnn_loss_np(params, xs, ys):
    h = np.zeros((xs.shape[1], params["wh"].shape[0]), np.float64)
    outs = []
    for x in xs:
        h = np.tanh(x @ params["wx"] + h @ params["wh"] + params["b"])
        outs.append(h @ params["wo"])
    return np.mean((np.stack(outs) - ys) ** 2)


def _rnn_params(rng, hidden, inputs=3):
    return {
        "wx": (rng.standard_normal((inputs, hidden)) * 0.5).astype(np.float32),
        "wh": (rng.standard_normal((hidden, hidden)) * 0.3).astype(np.float32),
        "b": (rng.standard_normal(hidden) * 0.1).astype(np.float32),
        "wo": (rng.standard_normal((hidden, 1)) * 0.5).astype(np.float32),
    }


def test_scan_carry_shaped_by_a_global_under_jit_value_and_grad(monkeypatch):
    rng = np.random.default_rng(0)
    xs = rng.standard_normal((5, 2, 3)).astype(np.float32)
    ys = rng.standard_normal((5, 2, 1)).astype(np.float32)
    step = srcjax.jit(srcjax.value_and_grad(_rnn_loss))
    for hidden in (4, 6):
        monkeypatch.setitem(globals(), "HIDDEN", hidden)
        params = _rnn_params(rng, hidden)
        value, grads = step(params, xs, ys)
        np.testing.assert_allclose(float(value), _rnn_loss_np(params, xs, ys), rtol=1e-5)
        # d/d b by central differences of the float64 NumPy loss
        p64 = {k: v.astype(np.float64) for k, v in params.items()}
        for i in range(hidden):
            e = np.zeros(hidden)
            e[i] = 1e-6
            fd = (
                _rnn_loss_np({**p64, "b": p64["b"] + e}, xs, ys)
                - _rnn_loss_np({**p64, "b": p64["b"] - e}, xs, ys)
            ) / 2e-6
            np.testing.assert_allclose(np.asarray(grads["b"])[i], fd, rtol=1e-3, atol=1e-6)
        text = srcjax.source(step, params, xs, ys)
        assert f"(2, {hidden})" in text and "HIDDEN" not in text


def test_the_scan_rnn_gradient_is_fully_typed_under_jit():
    # with the carry's shape known, jit follows the scan's stacked outputs (a list
    # grown once per trip of a loop of known length) into the reverse loop: its
    # ad.unbroadcast helpers have nothing to do and are gone
    rng = np.random.default_rng(1)
    xs = rng.standard_normal((5, 2, 3)).astype(np.float32)
    ys = rng.standard_normal((5, 2, 1)).astype(np.float32)
    params = _rnn_params(rng, HIDDEN)
    step = srcjax.jit(srcjax.value_and_grad(_rnn_loss))
    value, grads = step(params, xs, ys)
    np.testing.assert_allclose(float(value), _rnn_loss_np(params, xs, ys), rtol=1e-5)
    text = srcjax.source(step, params, xs, ys)
    assert "range(5)" in text and "scan_length" not in text
    # the bias's, wh's and wx's per-trip factors are one value: one list, one stack
    assert "wh_g_trips" not in text and "wx_g_trips" not in text and "b_g_trips" in text
    assert "ad.unbroadcast(" not in text.split("reversed(range(5))")[1].split("\n    range_")[0]


def _grown_then_read(x):
    out = []
    out.append(x)
    out.append(x * 2.0)
    total = x * 0.0
    for v in out:  # (a list grown in straight-line code: its length is not guessed)
        total = total + v
    rows = []
    for i in range(3):
        if i > 0:  # (appended on some trips only: not a list of 3)
            rows.append(total * i)
    return jnp.stack(rows), len(rows)


def test_lists_grown_outside_a_known_loop_keep_their_run_time_length():
    x = np.array([1.0, 2.0], np.float32)
    got, n = srcjax.jit(_grown_then_read)(x)
    want = np.stack([3 * x * 1, 3 * x * 2])
    np.testing.assert_allclose(np.asarray(got), want)
    assert int(n) == 2


def test_scalar_global_of_another_module_read_by_its_helper():
    """Fresh-user round 6, item 15 (repro_15.py): a float global of another
    module, read by that module's helper, stayed baked in under jit (3,3,3,0,5,5,5
    where Python gives 3,4,5,0,5,6,7); every call now sees the value Python
    does, under jit, grad and vmap."""
    import helpers_scale as m

    f = srcjax.jit(lambda x: m.helper(x) + 1)
    g = srcjax.grad(lambda x: m.helper(x) * x)
    v = srcjax.vmap(lambda x: m.padded(x))
    seen = []
    try:
        for scale, flag in [
            (2.0, True),
            (3.0, True),
            (4.0, True),
            (4.0, False),
            (5.0, True),
            (6.0, True),
        ]:
            m.SCALE, m.FLAG = scale, flag
            python = m.helper(1.0) + 1
            seen.append(float(f(1.0)))
            assert seen[-1] == python
            assert float(g(2.0)) == (4.0 * scale if flag else -4.0)
            np.testing.assert_array_equal(np.asarray(v(np.zeros(2, np.float32))), [scale, scale])
    finally:
        m.SCALE, m.FLAG = 2.0, True
    assert seen == [3.0, 4.0, 5.0, 0.0, 6.0, 7.0]


class _Scaled:
    """A callable model whose scale is an instance attribute (jit(_Scaled(2.0)))."""

    def __init__(self, s):
        self.s = s

    def __call__(self, x):
        return jnp.sin(x) * self.s


def test_a_jitted_instances_scalar_attribute_is_a_guarded_constant():
    # JAX bakes self.s in at trace time: a Python float, weakly typed (the result
    # too: 0.5 * 2.0 is a weak float32); rebinding it specializes again here
    m = _Scaled(2.0)
    f = srcjax.jit(m)
    y = f(0.5)
    assert y.weak_type and y.dtype == np.float32
    np.testing.assert_allclose(float(y), np.sin(np.float32(0.5)) * 2.0, rtol=1e-6)
    m.s = 3.0
    np.testing.assert_allclose(float(f(0.5)), np.sin(np.float32(0.5)) * 3.0, rtol=1e-6)
    m.s = np.ones(2, np.float32)  # no longer a scalar: read live
    np.testing.assert_allclose(np.asarray(f(0.5)), np.full(2, np.sin(np.float32(0.5))), rtol=1e-6)
    x = np.float32([0.5, 1.0])
    for step in range(8):  # rebound on every call: read live after a few builds
        m.s = float(step)
        np.testing.assert_allclose(np.asarray(f(x)), np.sin(x) * step, rtol=1e-6)
    assert f._builds <= jit_module._MAX_REBINDS + 4
