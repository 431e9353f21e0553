"""srcjax.extras (block_until_ready, device_put, checkpoint) and srcjax.tree."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp


def test_tree_short_names_match_tree_util():
    params = {"b": [np.ones(2), 3.0], "a": (np.arange(3.0),)}
    doubled = srcjax.tree.map(lambda v: v * 2, params)
    np.testing.assert_array_equal(doubled["b"][0], 2 * np.ones(2))
    assert doubled["b"][1] == 6.0
    leaves, tdef = srcjax.tree.flatten(params)
    assert len(srcjax.tree.leaves(params)) == len(leaves) == 3
    assert srcjax.tree.structure(params) == tdef
    back = srcjax.tree.unflatten(tdef, leaves)
    np.testing.assert_array_equal(back["a"][0], params["a"][0])
    assert srcjax.tree.reduce(lambda s, v: s + np.sum(v), params, 0.0) == 2.0 + 3.0 + 3.0
    assert srcjax.tree.all([True, (1, {"k": True})])


def test_block_until_ready_and_device_put():
    x = {"w": np.ones((2, 2)), "n": 3}
    assert srcjax.block_until_ready(x) is x
    old = srcjax.config.jax_enable_x64
    srcjax.config.update("jax_enable_x64", False)
    try:
        put = srcjax.device_put(x)
        assert put["w"].dtype == np.float32 and put["n"].dtype == np.int32
        np.testing.assert_array_equal(put["w"], np.ones((2, 2)))
        with pytest.raises(OverflowError):
            srcjax.device_put(2**40)
    finally:
        srcjax.config.update("jax_enable_x64", old)


def _layer(x):
    return jnp.tanh(x) * x


def test_checkpoint_changes_nothing_but_is_accepted():
    """jax.checkpoint / remat only save memory in JAX: same values and gradients.
    Oracle: the derivative of tanh(x) x."""
    f = srcjax.checkpoint(_layer)
    g = srcjax.remat(policy=None)(_layer)
    x = 0.7
    want = np.tanh(x) + x * (1 - np.tanh(x) ** 2)
    for h in (f, g):
        np.testing.assert_allclose(srcjax.grad(h)(x), want, rtol=1e-6)


def _prints_with_debug(x):
    srcjax.debug.print("x={x} s={}", jnp.sum(x), x=x)
    return jnp.sum(x**2)


def test_debug_print_inside_transforms(capsys):
    """jax.debug.print did not exist (fresh-user run 1). It prints on every call,
    under jit and grad too, and is not differentiated. Oracle: the printed text
    and the analytic gradient 2x."""
    x = np.array([1.0, 2.0])
    assert srcjax.jit(_prints_with_debug)(x) == 5.0
    np.testing.assert_allclose(srcjax.grad(_prints_with_debug)(x), [2.0, 4.0])
    out = capsys.readouterr().out
    assert out.count("x=[1. 2.] s=3.0") == 2
