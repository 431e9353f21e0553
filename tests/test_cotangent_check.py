"""srcjax._cotangent_check: under jax_enable_checks (on in the test suite), every
cotangent a transform returns has its primal's shape and dtype (issue 21)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import _cotangent_check as cc
from srcjax import tree_util as tu
from srcjax.api import FLOAT0


def test_checks_are_on_in_the_test_suite():
    assert srcjax.config.jax_enable_checks


def test_a_cotangent_of_another_shape_dtype_or_structure_is_refused():
    ok = [np.zeros(3, np.float32), np.float32(0.0)]
    cc.check_cotangents(tu, ok, [np.ones(3, np.float32), np.float32(1.5)], "grad", ["a", "b"])
    with pytest.raises(AssertionError, match=r"cotangent of b has shape \(3,\)"):
        cc.check_cotangents(tu, [np.zeros(3, np.float32)], [np.float32(1.5)], "grad", ["b"])
    with pytest.raises(AssertionError, match="dtype float64"):
        cc.check_cotangents(tu, [np.zeros(3)], [np.ones(3, np.float32)], "grad", ["a"])
    with pytest.raises(AssertionError, match="structure"):
        cc.check_cotangents(tu, [(np.zeros(3),)], [{"w": np.ones(3)}], "grad", ["p"])
    # pytree leaves are checked one by one
    with pytest.raises(AssertionError, match=r"p \(leaf 1\)"):
        p = {"a": np.ones(2, np.float32), "b": np.ones(2, np.float32)}
        g = {"a": np.zeros(2, np.float32), "b": np.zeros((), np.float32)}
        cc.check_cotangents(tu, [g], [p], "grad", ["p"])


def test_integer_primals_get_float0_cotangents():
    cc.check_cotangents(tu, [np.zeros(3, FLOAT0)], [np.arange(3)], "grad", ["n"])
    with pytest.raises(AssertionError):
        cc.check_cotangents(tu, [np.zeros(3, np.float32)], [np.arange(3)], "grad", ["n"])


def test_a_batched_cotangent_has_one_leading_axis_more():
    cc.check_cotangents(tu, [np.zeros((4, 3), np.float32)], [np.ones(3, np.float32)], "v", ["a"], 1)
    with pytest.raises(AssertionError, match=r"shape \(3,\)"):
        # the vmap(grad) case: (4, 3) for a () primal
        cc.check_cotangents(tu, [np.zeros((4, 3), np.float32)], [np.float32(1.5)], "v", ["y"], 1)


def test_the_api_boundaries_check_what_they_return(monkeypatch):
    # a transform that returned a gradient of the rebinding's shape (the bug of
    # issue 21) fails at every boundary that returns cotangents
    def f(x, y):
        return jnp.sum(x) * y

    x = np.arange(3.0, dtype=np.float32)
    calls = []
    real = cc.check_cotangents

    def spy(tu_, cts, primals, what, names, batch=0):
        calls.append(what)
        return real(tu_, cts, primals, what, names, batch)

    monkeypatch.setattr(cc, "check_cotangents", spy)
    srcjax.grad(f, argnums=(0, 1))(x, 1.5)
    srcjax.value_and_grad(f, argnums=(0, 1))(x, 1.5)
    srcjax.jit(srcjax.grad(f, argnums=(0, 1)))(x, 1.5)
    srcjax.vjp(f, x, 1.5)[1](np.float32(1.0))
    srcjax.vmap(srcjax.grad(f, argnums=(0, 1)), in_axes=(0, None))(np.ones((4, 3), np.float32), 1.5)
    assert calls == ["grad", "value_and_grad", "grad", "vjp", "vmap of grad"]


def test_jacrev_leaves_end_with_their_primals_shapes():
    cc.check_jacobian(tu, np.zeros((2, 3), np.float32), [np.ones(3, np.float32)], "jacrev")
    with pytest.raises(AssertionError):
        cc.check_jacobian(tu, np.zeros((2, 4), np.float32), [np.ones(3, np.float32)], "jacrev")
    j = srcjax.jacrev(lambda x: x[:2] * 2.0)(np.ones(3, np.float32))
    assert j.shape == (2, 3)


def test_vjp_pullback_stays_a_transformable_partial():
    import functools

    _, pullback = srcjax.vjp(lambda x: jnp.sin(x), np.ones(3, np.float32))
    assert isinstance(pullback, functools.partial)
    ct = np.ones(3, np.float32)
    np.testing.assert_allclose(srcjax.jit(pullback)(ct)[0], np.cos(np.ones(3)), rtol=1e-6)
