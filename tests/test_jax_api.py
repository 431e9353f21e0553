"""JAX API names mapped onto srcjax (srcjax/_jax_api.py, jit's lower/trace,
jnp.save/load, jnp.bfloat16): each against the value it must give."""

import os

import numpy as np
import pytest
from helpers import assert_close

import srcjax
import srcjax.numpy as jnp


def _f(x, y):
    return jnp.sin(x) * y + 1.0


def test_make_jaxpr_is_the_generated_source():
    x = np.ones(3, np.float32)
    program = srcjax.make_jaxpr(_f)(x, 2.0)
    text = str(program)
    assert "def _f_jit(x, y):" in text and "jnp.sin(x)" in text
    assert "for x: float32[3], y: float32[]" in text
    assert [(a.shape, a.dtype) for a in program.in_avals] == [((3,), np.float32), ((), np.float32)]
    assert [(a.shape, a.dtype) for a in program.out_avals] == [((3,), np.float32)]
    program2, shape = srcjax.make_jaxpr(_f, return_shape=True)(x, 2.0)
    assert str(program2) == text and shape.shape == (3,)
    with pytest.raises(NotImplementedError):
        srcjax.make_jaxpr(_f, axis_env=[("i", 2)])


def test_lower_compile_and_trace():
    x = np.linspace(0, 1, 4, dtype=np.float32)
    jitted = srcjax.jit(_f)
    lowered = jitted.lower(x, 2.0)
    assert lowered.as_text() == srcjax.source(jitted, x, 2.0)
    compiled = lowered.compile()
    assert compiled.as_text() == lowered.as_text()
    assert_close(compiled(x, 2.0), np.sin(x) * 2 + 1)
    traced = jitted.trace(x, 2.0)
    assert traced.out_info.shape == (4,) and traced.out_info.dtype == np.float32
    assert traced.lower().as_text() == lowered.as_text()
    assert "def _f_jit" in str(traced.jaxpr)
    assert jitted.eval_shape(x, 2.0).shape == (4,)


def _no_arguments():
    return jnp.arange(3.0) * 2 + 1


def _default_only(scale=2.0):
    return jnp.ones(2) * scale


def test_source_and_lower_of_a_function_without_arguments():
    # (debt of session 14: both asked for example arguments; jax.jit(f).lower()
    # lowers the call with no arguments). JAX 0.10.2: [1, 3, 5] float32, [2, 2]
    jitted = srcjax.jit(_no_arguments)
    text = srcjax.source(jitted)
    assert "def _no_arguments_jit():" in text and "for no arguments" in text
    lowered = jitted.lower()
    assert lowered.as_text() == text
    out = lowered.compile()()
    assert out.dtype == np.float32 and np.array_equal(np.asarray(out), [1.0, 3.0, 5.0])
    assert np.array_equal(np.asarray(jitted()), [1.0, 3.0, 5.0])
    traced = jitted.trace()
    assert traced.out_info.shape == (3,) and traced.jaxpr.in_avals == []
    lam = srcjax.jit(lambda: jnp.zeros(2) + 4.0)
    assert "def <lambda>" not in srcjax.source(lam) and "_jit():" in srcjax.source(lam)
    assert np.array_equal(np.asarray(lam.lower().compile()()), [4.0, 4.0])
    # defaults only: the call with none passed
    d = srcjax.jit(_default_only)
    assert np.array_equal(np.asarray(d.lower().compile()()), [2.0, 2.0])

    # a function that needs arguments still says so
    def needs_x(x):
        return x + 1.0

    with pytest.raises(TypeError, match="example arguments"):
        srcjax.source(srcjax.jit(needs_x))
    with pytest.raises(TypeError, match="missing"):
        srcjax.jit(needs_x).lower()


def test_lower_without_arguments_is_not_the_last_specialization():
    # jit(f).lower() is the call f(), not the last call's program
    d = srcjax.jit(_default_only)
    d(np.float32(3.0))
    lowered = d.lower()
    assert "scale: float32[]" in srcjax.source(d, np.float32(3.0))
    assert "scale: float32[]" not in lowered.as_text()
    assert np.array_equal(np.asarray(lowered.compile()()), [2.0, 2.0])


def _records(x, seen):
    seen.append(type(x).__name__)
    return x * 2


def test_disable_jit_runs_the_function_as_written():
    jitted = srcjax.jit(_records, static_argnums=1)
    seen = []
    with srcjax.disable_jit():
        out = jitted(np.ones(2, np.float32), seen)
    assert_close(out, [2.0, 2.0])
    assert jitted._cache_size() == 0  # nothing generated
    assert not srcjax.config.jax_disable_jit
    srcjax.config.update("jax_disable_jit", True)
    try:
        jitted(np.ones(2, np.float32), seen)
        assert jitted._cache_size() == 0
    finally:
        srcjax.config.update("jax_disable_jit", False)
    assert seen == ["ndarray", "ndarray"]


def test_clear_caches():
    jitted = srcjax.jit(lambda v: v + 1)
    g = srcjax.grad(lambda v: v * v)
    jitted(np.ones(2, np.float32))
    g(1.0)
    assert jitted._cache_size() == 1 and g._cache
    srcjax.clear_caches()
    assert jitted._cache_size() == 0 and not g._cache
    assert float(g(3.0)) == 6.0  # transforms again


@srcjax.custom_gradient
def _clip_gradient(x):
    return x, lambda g: (jnp.clip(g, -1.0, 1.0),)


@srcjax.custom_gradient
def _product(x, y):
    return x * y, lambda g: (g * y, g * x)


def test_custom_gradient():
    # JAX's documented example: the identity with its incoming gradient clipped
    x = np.array([0.1, 2.0], np.float32)

    def loss(v):
        return jnp.sum(_clip_gradient(v) * 5.0 * v)

    want = np.clip(5.0 * x, -1, 1) + 5.0 * x
    assert_close(srcjax.grad(loss)(x), want)
    assert_close(srcjax.jit(srcjax.grad(loss))(x), want)
    per_example = srcjax.vmap(srcjax.grad(lambda v: _clip_gradient(v) * 5.0 * v))(x)
    assert_close(per_example, want)
    gx, gy = srcjax.grad(_product, argnums=(0, 1))(2.0, 3.0)
    assert (float(gx), float(gy)) == (3.0, 2.0)
    with pytest.raises(TypeError, match="positional parameters only"):
        srcjax.custom_gradient(lambda *xs: (xs[0], lambda g: g))


def test_closure_convert_and_linear_transpose():
    scale = np.float32(3.0)
    converted, consts = srcjax.closure_convert(lambda v: v * scale, 1.0)
    assert consts == [] and float(converted(2.0, *consts)) == 6.0
    a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    transpose = srcjax.linear_transpose(lambda v: a @ v, srcjax.ShapeDtypeStruct((2,), np.float32))
    (ct,) = transpose(np.array([1.0, 0.0, 2.0], np.float32))
    assert_close(ct, a.T @ np.array([1.0, 0.0, 2.0]))
    t2 = srcjax.linear_transpose(lambda u, v: 2.0 * u + v, 1.0, 1.0)
    assert tuple(float(c) for c in t2(np.float32(1.5))) == (3.0, 1.5)


def test_checkpoint_policies_are_accepted():
    p = srcjax.checkpoint_policies
    for policy in (
        p.everything_saveable,
        p.nothing_saveable,
        p.dots_saveable,
        p.checkpoint_dots,
        p.dots_with_no_batch_dims_saveable,
        p.save_only_these_names("a", "b"),
        p.save_any_names_but_these("c"),
        p.save_from_both_policies(p.dots_saveable, p.nothing_saveable),
    ):
        f = srcjax.checkpoint(lambda v: jnp.sin(v) ** 2, policy=policy)
        assert_close(srcjax.grad(f)(0.5), np.sin(1.0), rtol=1e-6)
    from srcjax._jax_api import checkpoint_name

    assert_close(srcjax.grad(lambda v: checkpoint_name(v * v, "sq"))(3.0), 6.0)


def _scoped(x):
    with srcjax.named_scope("layer1"):
        y = jnp.sin(x) * 2.0
        if y > 0:
            with srcjax.named_scope("inner"):
                y = y * y
    return y


def test_named_scope_inside_transformed_code():
    # (2 sin x)**2 where positive, else 2 sin x
    assert_close(srcjax.grad(_scoped)(1.0), 8 * np.sin(1.0) * np.cos(1.0), rtol=1e-6)
    assert_close(srcjax.grad(_scoped)(-1.0), 2 * np.cos(-1.0), rtol=1e-6)
    assert_close(srcjax.jit(_scoped)(1.0), (2 * np.sin(1.0)) ** 2, rtol=1e-6)
    with srcjax.named_scope("eager"):
        assert float(_scoped(-1.0)) < 0
    with pytest.raises(TypeError):
        srcjax.named_scope(3).__enter__()


def _precise(w, x):
    with srcjax.default_matmul_precision("float32"):
        y = x @ w
    return jnp.sum(y * y)


def test_default_matmul_precision_inside_transformed_code():
    """Fresh-user report F4-M4: refused as "`with` blocks are not supported".
    Oracle: d/dw sum((x @ w)**2) = 2 x^T (x @ w)."""
    w = np.array([[1.0, 2.0], [0.5, -1.0]])
    x = np.array([[1.0, 3.0], [2.0, 1.0]])
    assert_close(srcjax.grad(_precise)(w, x), 2 * x.T @ (x @ w))
    assert_close(srcjax.jit(_precise)(w, x), np.sum((x @ w) ** 2))
    with srcjax.default_matmul_precision("highest"):
        assert_close(_precise(w, x), np.sum((x @ w) ** 2))
    with pytest.raises(TypeError):
        srcjax.default_matmul_precision(3).__enter__()


def test_save_load_savez(tmp_path):
    x = jnp.arange(6.0).reshape(2, 3)
    jnp.save(os.path.join(tmp_path, "x.npy"), x)
    np.testing.assert_array_equal(jnp.load(os.path.join(tmp_path, "x.npy")), x)
    jnp.savez(os.path.join(tmp_path, "p.npz"), w=x, b=jnp.zeros(3))
    jnp.savez_compressed(os.path.join(tmp_path, "q.npz"), x)
    with jnp.load(os.path.join(tmp_path, "p.npz")) as f:
        assert sorted(f.files) == ["b", "w"]
        np.testing.assert_array_equal(f["w"], x)


def test_bfloat16_and_float8():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    assert jnp.bfloat16 is ml_dtypes.bfloat16 and jnp.float8_e4m3fn is ml_dtypes.float8_e4m3fn
    x = jnp.asarray([1.0, 2.5, 3.0], dtype=jnp.bfloat16)
    assert x.dtype == jnp.bfloat16
    # JAX's promotion: a Python float keeps bfloat16, float32 wins, bf16 + f16 is f32
    assert jnp.add(x, 1.0).dtype == jnp.bfloat16
    assert jnp.add(x, np.float32(1)).dtype == np.float32
    assert jnp.promote_types(jnp.bfloat16, jnp.float16) == np.float32
    assert srcjax.jit(lambda v: v * 2 + 1)(x).dtype == jnp.bfloat16
    np.testing.assert_array_equal(srcjax.jit(lambda v: v * 2 + 1)(x).astype(np.float32), [3, 6, 7])
    with pytest.raises(AttributeError, match="no attribute"):
        jnp.float9  # noqa: B018
