"""Module float constants (``jnp.inf``, ``np.inf``, ``math.pi``, an alias of
``jnp`` held in a closure) have JAX's abstract value under jit: a weakly typed
float scalar. Before, ``jnp.inf`` as a loop carry's start had none, and the
Numba planner kept the loop in NumPy ("t has no abstract value"; fresh-user
round 7, repro_13). Oracle: the same loop on NumPy float32 scalars."""

import math

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax


def _numpy_newton(x0, start):
    x, err, i = np.float32(x0), np.float32(start), 0
    while err > 1e-6 and i < 50:
        new = x - (x * x - np.float32(2.0)) / (np.float32(2.0) * x)
        err, x, i = np.float32(abs(new - x)), new, i + 1
    return x, err, i


def _build(J, start):
    def newton(x0):
        def body(s):
            x, _, i = s
            new = x - (x * x - 2.0) / (2.0 * x)
            return new, J.abs(new - x), i + 1

        return lax.while_loop(lambda s: (s[1] > 1e-6) & (s[2] < 50), body, (x0, start(J), 0))

    return newton


STARTS = {
    "jnp.inf": lambda J: J.inf,
    "np.inf": lambda J: np.inf,
    "np.nan_to_num(jnp.nan)": lambda J: np.nan_to_num(J.nan, nan=3.0),
    "math.pi": lambda J: math.pi,
}


@pytest.fixture
def numba_loops(monkeypatch):
    pytest.importorskip("numba")
    monkeypatch.setenv("SRCJAX_DISK_CACHE", "0")
    old = srcjax.config.read("numba_loops")
    srcjax.config.update("numba_loops", True)
    yield
    srcjax.config.update("numba_loops", old)


@pytest.mark.parametrize("start", sorted(STARTS))
def test_values_match_a_numpy_loop(start):
    value = STARTS[start](np)
    f = srcjax.jit(_build(jnp, STARTS[start]))
    x, err, i = f(np.float32(3.0))
    ex, eerr, ei = _numpy_newton(3.0, value)
    assert x.dtype == np.float32 and err.dtype == np.float32
    assert float(x) == ex and float(err) == eerr and int(i) == ei


def test_a_module_constant_is_a_weak_float():
    from srcjax.transforms.optimize.avals import Aval

    def f(x):
        return x * jnp.inf, x + math.pi

    a, b = srcjax.jit(f)(np.float32(2.0))
    assert a.dtype == np.float32 and b.dtype == np.float32  # weak: the operand's dtype
    assert float(a) == np.inf and float(b) == np.float32(2.0) + np.float32(math.pi)
    assert Aval.of(math.pi).weak


def test_the_loop_starting_at_inf_is_compiled(numba_loops):
    f = srcjax.jit(_build(jnp, STARTS["jnp.inf"]))
    x, err, i = f(np.float32(3.0))
    assert (float(x), float(err), int(i)) == _numpy_newton(3.0, np.inf)
    src = srcjax.source(f, np.float32(3.0))
    assert "keeps NumPy" not in src and "Numba region nbloop_" in src
