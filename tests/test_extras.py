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


def test_array_type_for_isinstance_and_annotations():
    # as jax.Array: what srcjax returns is one, NumPy arrays and Python numbers are not
    assert isinstance(srcjax.numpy.ones(3), srcjax.Array)
    assert isinstance(srcjax.grad(lambda x: x * x)(1.0), srcjax.Array)
    assert not isinstance(np.ones(3, np.float32), srcjax.Array)
    assert not isinstance(1.0, srcjax.Array) and not isinstance([1.0], srcjax.Array)
    assert not issubclass(np.ndarray, srcjax.Array) and not issubclass(list, srcjax.Array)
    with pytest.raises(TypeError):
        srcjax.Array()
    from srcjax.typing import ArrayLike  # noqa: F401  (jax.typing in annotations)


def annotated(x: srcjax.Array, k: "srcjax.typing.ArrayLike" = 2.0) -> srcjax.Array:
    return jnp.sum(x * x) * k


def test_annotated_function_transforms():
    x = np.array([1.0, -2.0], np.float32)
    np.testing.assert_allclose(srcjax.grad(annotated)(x), 4.0 * x)
    assert srcjax.jit(annotated)(x) == np.float32(10.0)
    np.testing.assert_allclose(srcjax.vmap(annotated)(np.stack([x, 2 * x])), [10.0, 40.0])


def test_shape_dtype_struct_and_eval_shape():
    s = srcjax.ShapeDtypeStruct((3, 4), np.float32)
    assert (s.shape, s.dtype, s.ndim, s.size) == ((3, 4), np.dtype(np.float32), 2, 12)
    assert s == srcjax.ShapeDtypeStruct([3, 4], "float32") and hash(s) == hash((s.shape, s.dtype))

    def f(w, x):
        return {"y": jnp.tanh(x @ w["k"]), "n": jnp.sum(x), "i": jnp.argmax(x, axis=1)}

    out = srcjax.eval_shape(f, {"k": s}, np.ones((5, 3)))  # float64 data: float32 (no x64)
    assert out["y"] == srcjax.ShapeDtypeStruct((5, 4), np.float32)
    assert out["n"] == srcjax.ShapeDtypeStruct((), np.float32)
    assert out["i"] == srcjax.ShapeDtypeStruct((5,), np.int32)
    assert srcjax.eval_shape(lambda a: a * 2, 1) == srcjax.ShapeDtypeStruct((), np.int32)


def test_devices():
    (d,) = srcjax.devices()
    assert d.platform == "cpu" and repr(d) == "CpuDevice(id=0)"
    assert srcjax.local_devices() == [d] and srcjax.device_count() == 1
    assert srcjax.local_device_count() == 1 and srcjax.default_backend() == "cpu"
    with pytest.raises(RuntimeError):
        srcjax.devices("gpu")
    x = {"a": np.ones(2)}
    assert srcjax.device_get(x)["a"] is x["a"]


def _scaled_square_sum(a, x):
    return jnp.sum(a * x**2)


def _apply(f, x):
    return f(x)


def test_tree_util_partial_is_a_pytree_through_jit():
    from srcjax.tree_util import Partial, tree_leaves, tree_map

    p = Partial(_scaled_square_sum, np.float32(3.0))
    assert tree_leaves(p) == [np.float32(3.0)] and tree_leaves(Partial(_apply)) == []
    doubled = tree_map(lambda v: 2 * v, p)
    assert isinstance(doubled, Partial) and doubled.func is _scaled_square_sum
    x = np.array([1.0, 2.0], np.float32)
    assert doubled(x) == np.float32(30.0)
    assert srcjax.jit(_apply)(p, x) == np.float32(15.0)
    assert srcjax.jit(_apply)(doubled, x) == np.float32(30.0)
    with pytest.raises(TypeError):
        Partial(3)


def test_tree_leaves_with_path():
    from srcjax.tree_util import keystr, tree_leaves_with_path

    pairs = tree_leaves_with_path({"b": [1, 2], "a": 3})
    assert [(keystr(p), v) for p, v in pairs] == [("['a']", 3), ("['b'][0]", 1), ("['b'][1]", 2)]


def test_eval_shape_of_linear_algebra():
    """Fresh-user run 5: eval_shape ran the function on zeros, so inv/solve
    raised 'Singular matrix'."""
    s = srcjax.ShapeDtypeStruct((3, 3), np.float32)
    assert srcjax.eval_shape(jnp.linalg.inv, s) == s
    out = srcjax.eval_shape(jnp.linalg.solve, s, srcjax.ShapeDtypeStruct((3,), np.float32))
    assert out == srcjax.ShapeDtypeStruct((3,), np.float32)
