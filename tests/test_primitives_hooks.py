"""srcjax/primitives/hooks.py: what the primitives need from the layers above
them, installed by those layers at import (no upward import)."""

import numpy as np
import pytest

import srcjax
from srcjax import lax
from srcjax.primitives import conv, hooks
from srcjax.primitives.control import leading_length


def test_api_fwd_installs_transpose_linear():
    # the tangent map of f(m, x) = m @ x in x: t -> m @ t; its transpose is m.T @ ct
    a = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])

    def tangent_map(m, x, t):
        return m @ t

    ct = np.array([0.5, -2.0])
    got = hooks.call("transpose_linear", tangent_map, ct, 1, a, np.zeros(3))
    np.testing.assert_allclose(np.asarray(got), a.T @ ct, rtol=1e-12)


def test_unknown_and_missing_hooks_raise(monkeypatch):
    with pytest.raises(KeyError, match="no primitives hook 'nope'"):
        hooks.provide("nope", print)
    monkeypatch.setitem(hooks.PROVIDERS, "later", "srcjax.somewhere")
    with pytest.raises(RuntimeError, match="import srcjax.somewhere"):
        hooks.call("later")


def test_debug_print_prints_per_example():
    assert srcjax.debug.print in hooks.PER_EXAMPLE_PRINTS
    assert print not in hooks.PER_EXAMPLE_PRINTS


def test_lax_adds_its_window_computations():
    x = np.arange(6.0)
    for fn, init, want in ((lax.add, 0.0, x[:-1] + x[1:]), (lax.max, -np.inf, x[1:])):
        got = lax.reduce_window(x, init, fn, (2,), (1,), "VALID")
        np.testing.assert_array_equal(np.asarray(got), want)
    with pytest.raises(ValueError, match="add, max or min"):
        conv.def_window_computation(np.multiply, "mul")


def test_leading_length():
    assert leading_length({"a": np.zeros((4, 2)), "b": [np.ones(4)]}) == 4
    assert leading_length(()) is None
    with pytest.raises(ValueError, match="different sizes"):
        leading_length((np.zeros(3), np.zeros(2)))
