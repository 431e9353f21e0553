"""Weak types of jit's results inside containers (user 06): a weakly typed
scalar (``jnp.array(0.0)``, a Python float) inside a dict, list or tuple
argument is weak as one passed alone, a dict/list result keeps its weak
leaves, and ``jit(grad(f))(params)`` gives a weak gradient for each weak
leaf of ``params`` (a gradient has its primal's type), so ``grad *
float16_array`` stays float16.

Expected weak types, dtypes and values recorded from jax 0.10.2 on CPU."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import tree_util as tu


def _weak(tree):
    return [bool(leaf.weak_type) for leaf in tu.tree_leaves(tree)]


def _f(p):
    return jnp.exp(p["a"]) * 2.0


def test_jit_grad_of_a_weak_leaf_in_a_dict_is_weak():
    g = srcjax.jit(srcjax.grad(_f))({"a": jnp.array(0.0)})["a"]
    assert g.weak_type and g.dtype == np.float32 and float(g) == 2.0
    # the consequence the user saw: float32 instead of float16
    h = g * jnp.ones(2, jnp.float16)
    assert h.dtype == np.float16 and not h.weak_type
    np.testing.assert_array_equal(h, [2.0, 2.0])


CASES = [
    # (name, function of srcjax, expected weak_type of each leaf, from jax 0.10.2)
    ("jit dict arg", lambda: srcjax.jit(_f)({"a": jnp.array(0.0)}), [True]),
    ("jit(grad) dict of float", lambda: srcjax.jit(srcjax.grad(_f))({"a": 0.0}), [True]),
    ("jit dict result", lambda: srcjax.jit(lambda p: {"a": p["a"] * 2.0})({"a": 0.0}), [True]),
    (
        "jit(grad) weak and strong leaves",
        lambda: srcjax.jit(srcjax.grad(lambda p: jnp.sum(jnp.exp(p["a"]) * p["b"])))(
            {"a": jnp.array(0.0), "b": jnp.ones(2)}
        ),
        [True, False],
    ),
    (
        "jit(value_and_grad) weak and strong leaves",
        lambda: srcjax.jit(srcjax.value_and_grad(lambda p: jnp.sum(jnp.exp(p["a"]) * p["b"])))(
            {"a": jnp.array(0.0), "b": jnp.ones(2)}
        ),
        [False, True, False],
    ),
    (
        "jit(grad) strong leaf",
        lambda: srcjax.jit(srcjax.grad(_f))({"a": np.float32(0.0)}),
        [False],
    ),
    (
        "jit mixed dict result",
        lambda: srcjax.jit(lambda x, y: {"a": x * 2.0, "b": y * x, "c": [x, y]})(
            1.0, np.ones(2, np.float32)
        ),
        [True, False, True, False],
    ),
    (
        "jit list result",
        lambda: srcjax.jit(lambda x, y: [x * 2.0, y])(1.0, np.ones(2, np.float32)),
        [True, False],
    ),
    (
        "jit(grad) list of weak leaves",
        lambda: srcjax.jit(srcjax.grad(lambda p: jnp.exp(p[0]) * p[1]))(
            [jnp.array(0.0), jnp.array(1.0)]
        ),
        [True, True],
    ),
    (
        "jit(grad) int-keyed dict",
        lambda: srcjax.jit(srcjax.grad(lambda p: jnp.exp(p[0]) * 2.0))({0: jnp.array(0.0)}),
        [True],
    ),
]


@pytest.mark.parametrize("name, run, want", CASES, ids=[c[0] for c in CASES])
def test_weak_types_of_container_results(name, run, want):
    assert _weak(run()) == want


def test_values_of_container_results():
    # jax 0.10.2: grad {a: 0.0, b: [1, 1]} of sum(exp(a) * b) -> a: 2.0, b: [1, 1]
    g = srcjax.jit(srcjax.grad(lambda p: jnp.sum(jnp.exp(p["a"]) * p["b"])))(
        {"a": jnp.array(0.0), "b": jnp.ones(2)}
    )
    assert float(g["a"]) == 2.0 and g["a"].dtype == np.float32
    np.testing.assert_array_equal(g["b"], [1.0, 1.0])
    out = srcjax.jit(lambda x, y: {"a": x * 2.0, "b": y * x, "c": [x, y]})(
        1.5, np.ones(2, np.float32)
    )
    assert float(out["a"]) == 3.0 and float(out["c"][0]) == 1.5
    np.testing.assert_array_equal(out["b"], [1.5, 1.5])


# -- eager lax control flow on Python floats -------------------------------------------
EAGER = [
    # (name, srcjax call, expected weak_type of each leaf, from jax 0.10.2)
    (
        "cond",
        lambda: srcjax.lax.cond(True, lambda a, b: a + b, lambda a, b: a - b, 1.0, 2.0),
        [True],
    ),
    ("cond const", lambda: srcjax.lax.cond(True, lambda: 1.0, lambda: 2.0), [True]),
    (
        "switch",
        lambda: srcjax.lax.switch(1, [lambda a: a + 1.0, lambda a: a * 2.0], 1.0),
        [True],
    ),
    ("fori_loop", lambda: srcjax.lax.fori_loop(0, 3, lambda i, c: c * 0.5, 1.0), [True]),
    (
        "while_loop",
        lambda: srcjax.lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, 1.0),
        [True],
    ),
    ("scan", lambda: srcjax.lax.scan(lambda c, x: (c * 0.5, c), 1.0, None, length=3), [True, True]),
    (
        "fori_loop, strong body",
        lambda: srcjax.lax.fori_loop(0, 2, lambda i, c: c * np.float32(2), 1.0),
        [False],
    ),
]


# (eager loops run their first trip with JAX's types and give their results the
# types it gave: srcjax/lax/_carry_types.py; the later trips on NumPy scalars)


@pytest.mark.parametrize("name, run, want", EAGER, ids=lambda c: c if isinstance(c, str) else "")
def test_eager_control_flow_on_python_floats_is_weak(name, run, want):
    assert _weak(run()) == want


def test_eager_control_flow_values():
    # jax 0.10.2: 0.125 (fori), 16.0 (while), carry 0.125 and ys [1, 0.5, 0.25] (scan)
    assert float(srcjax.lax.fori_loop(0, 3, lambda i, c: c * 0.5, 1.0)) == 0.125
    assert float(srcjax.lax.while_loop(lambda c: c < 10.0, lambda c: c * 2.0, 1.0)) == 16.0
    c, ys = srcjax.lax.scan(lambda c, x: (c * 0.5, c), 1.0, None, length=3)
    assert float(c) == 0.125 and ys.dtype == np.float32
    np.testing.assert_array_equal(ys, [1.0, 0.5, 0.25])
    h = srcjax.lax.cond(True, lambda a, b: a + b, lambda a, b: a - b, 1.0, 2.0) * jnp.ones(
        2, jnp.float16
    )
    assert h.dtype == np.float16
