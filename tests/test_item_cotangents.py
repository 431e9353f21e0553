"""jit writes the cotangent of a list or tuple whose every item got exactly one
cotangent as one display (``transforms/optimize/item_cotangents.py``: U1's LSTM
gates from ``jnp.split`` and its ``(h, c)`` carry), and leaves the other cases
(an item without a cotangent, an item read twice by separate reads) to the
runtime helpers. Oracles: gradients written out by hand in float64 NumPy."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

X = np.linspace(-1.0, 1.0, 12).astype(np.float32)


def _all_gates(x):
    a, b, c, d = jnp.split(x, 4)
    return jnp.sum(a * b) + jnp.sum(jnp.tanh(c) * d)


def _all_gates_grad(x):
    a, b, c, d = np.split(x.astype(np.float64), 4)
    t = np.tanh(c)
    return np.concatenate([b, a, (1 - t * t) * d, t])


def _one_gate_unused(x):
    a, b, _ = jnp.split(x, 3)
    return jnp.sum(a * b)


def _one_gate_unused_grad(x):
    a, b, c = np.split(x.astype(np.float64), 3)
    return np.concatenate([b, a, np.zeros_like(c)])


def _item_read_twice(x):
    p = jnp.split(x, 2)
    return jnp.sum(p[0] * 2.0) + jnp.sum(p[0] * p[1])


def _item_read_twice_grad(x):
    a, b = np.split(x.astype(np.float64), 2)
    return np.concatenate([2.0 + b, a])


def _scan_tuple_carry(x):
    def body(c, v):
        h, s = c
        a, b = jnp.split(v, 2)
        return (jnp.tanh(a * h + b), s + h), h

    (h, s), _ = lax.scan(body, (jnp.ones(2), jnp.zeros(2)), jnp.reshape(x, (3, 4)))
    return jnp.sum(h * s)


@pytest.mark.parametrize(
    "fn, grad",
    [
        (_all_gates, _all_gates_grad),
        (_one_gate_unused, _one_gate_unused_grad),
        (_item_read_twice, _item_read_twice_grad),
    ],
)
def test_jit_grad_of_split_items_matches_the_hand_written_gradient(fn, grad):
    np.testing.assert_allclose(srcjax.jit(srcjax.grad(fn))(X), grad(X), rtol=1e-5, atol=1e-6)


def test_every_gate_cotangent_is_one_display():
    # (the case the pass is for: it must apply, else this test file checks nothing new)
    text = srcjax.source(srcjax.jit(srcjax.grad(_all_gates)), X)
    assert "the cotangents of every item" in text or "no hole to fill" in text


def test_scan_with_a_tuple_carry_and_split_items():
    # central differences (step 1e-2: truncation ~1e-4, float32 rounding ~1e-5)
    x = X.astype(np.float64)
    want = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = 1e-2
        hi = float(_scan_tuple_carry((x + e).astype(np.float32)))
        lo = float(_scan_tuple_carry((x - e).astype(np.float32)))
        want[i] = (hi - lo) / 2e-2
    got = srcjax.jit(srcjax.grad(_scan_tuple_carry))(X)
    np.testing.assert_allclose(got, want, rtol=1e-2, atol=1e-3)
    text = srcjax.source(srcjax.jit(srcjax.grad(_scan_tuple_carry)), X)
    assert "the cotangents of every item" in text
