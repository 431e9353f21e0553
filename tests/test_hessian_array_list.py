"""Hessians of functions that build their value with ``jnp.array([...])`` of
scalars (issue 17, userprogs5 07c): under jacfwd(jacrev(f)) the cotangent of
the list is batched, ``ad.array_adjoint`` of it is ``ad.barray_adjoint`` (every
row at once, no per-example loop), and jit knows the list's depth
(``ad.list_depth`` from the display's abstract value), so the helpers after it
are decided. Oracle: float64 central differences of the gradient."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.primitives.batch_rules.runtime_shape import _barray_adjoint
from srcjax.primitives.creation import _array_adjoint


def _f(x):
    v = jnp.array([x[0] ** 2 * x[1], jnp.sin(x[1]) * x[2], jnp.exp(x[0] * x[2])])
    return jnp.sum(v**2)


def _nested(x):
    v = jnp.array([[x[0] * x[1], x[1] ** 2], [jnp.cos(x[2]), x[0] * x[2]]])
    return jnp.sum(v**3)


def _fd_hessian(f, x, eps=1e-6):
    g = srcjax.grad(f)
    cols = [
        (np.asarray(g(x + eps * e)) - np.asarray(g(x - eps * e))) / (2 * eps)
        for e in np.eye(len(x))
    ]
    return np.stack(cols, 1)


@pytest.fixture
def x64():
    srcjax.config.update("jax_enable_x64", True)
    yield
    srcjax.config.update("jax_enable_x64", False)


@pytest.mark.parametrize("f", [_f, _nested])
@pytest.mark.parametrize(
    "make",
    [
        lambda f: srcjax.jit(srcjax.hessian(f)),
        lambda f: srcjax.hessian(f),
        lambda f: srcjax.jit(srcjax.jacrev(srcjax.jacrev(f))),
        lambda f: srcjax.jit(srcjax.jacfwd(srcjax.jacfwd(f))),
    ],
)
def test_hessian_of_array_display_matches_differences(x64, f, make):
    x = np.array([0.5, 1.0, -0.3])
    h = np.asarray(make(f)(x))
    np.testing.assert_allclose(h, _fd_hessian(f, x), rtol=1e-6, atol=1e-7)


def test_jit_hessian_has_no_per_example_loop():
    x = np.array([0.5, 1.0, -0.3], np.float32)
    src = srcjax.source(srcjax.jit(srcjax.hessian(_f)), x)
    assert "ad.barray_adjoint" in src
    assert "ad.tree_row" not in src and "    for " not in src
    assert "ad.list_depth" not in src  # (decided: 1)


def test_jit_hessian_float32_equals_eager():
    x = np.array([0.5, 1.0, -0.3], np.float32)
    a = np.asarray(srcjax.jit(srcjax.hessian(_f))(x))
    b = np.asarray(srcjax.hessian(_f)(x))
    assert a.dtype == b.dtype == np.float32
    np.testing.assert_array_equal(a, b)


def test_barray_adjoint_is_the_rows_adjoints_stacked():
    rng = np.random.default_rng(0)
    g = rng.normal(size=(4, 2, 2, 3)).astype(np.float32)
    like = [[rng.normal(size=3), rng.normal(size=3)], [rng.normal(size=3), rng.normal(size=3)]]
    got = _barray_adjoint(g, like)
    rows = [_array_adjoint(g[b], like) for b in range(4)]
    for i in range(2):
        for j in range(2):
            want = np.stack([r[i][j] for r in rows])
            assert got[i][j].dtype == want.dtype
            np.testing.assert_array_equal(got[i][j], want)
    scalars = (1.5, np.float32(2.0), True)
    g2 = rng.normal(size=(4, 3)).astype(np.float32)
    got2 = _barray_adjoint(g2, scalars)
    assert type(got2) is tuple
    for k in range(3):
        want = np.stack([_array_adjoint(g2[b], scalars)[k] for b in range(4)])
        assert got2[k].shape == want.shape == (4,)
        np.testing.assert_array_equal(got2[k], want)


def test_jit_hessian_drops_the_unread_primal_gradient():
    # jacfwd(jacrev(f)) reads the gradient's tangent only: the primal gradient's
    # chain (`x_bar = x_bar_new + ad.index_adjoint(...)`, a name assigned again
    # and again) is dead, and jit's top-level dead-store pass drops it
    x = np.array([0.5, 1.0, -0.3], np.float32)
    src = srcjax.source(srcjax.jit(srcjax.hessian(_f)), x)
    assert "ad.index_adjoint(" not in src


def test_dead_stores_keep_values_read_later():
    def f(x, n):
        y = x * 2.0
        z = y + 1.0
        y = jnp.sin(x)  # y assigned again: its first value is read by z only
        w = z * 3.0
        w = w + y  # w's first value read here
        acc = x
        for i in range(n):
            acc = acc + w * i
        y = acc * 0.5  # dead: never read
        return acc + z

    x = np.array([0.25, -1.5, 2.0], np.float32)
    y = x * np.float32(2.0)
    z = y + np.float32(1.0)
    w = z * np.float32(3.0) + np.sin(x)
    acc = x
    for i in range(3):
        acc = acc + w * np.float32(i)
    got = srcjax.jit(f, static_argnums=1)(x, 3)
    np.testing.assert_allclose(np.asarray(got), acc + z, rtol=1e-6)


def test_list_dtype_of_one_typed_dtype():
    # (the fast path of jnp.array's list dtype: items of one NumPy type and
    # dtype; JAX's dtypes, 64-bit narrowed without x64)
    from srcjax.primitives.creation import _list_dtype

    f32 = [np.float32(1.0), np.float32(2.0)]
    assert _list_dtype(f32) == np.float32
    assert _list_dtype([np.zeros(2), np.ones(2)]) == np.float32  # float64 -> float32
    assert _list_dtype([np.zeros(2, np.int32)] * 3) == np.int32
    assert _list_dtype([np.zeros(2, np.float16), np.zeros(2, np.float32)]) == np.float32
    assert _list_dtype([np.float16(1.0), 2.5]) == np.float16  # (weak 2.5: general path)
    a = srcjax.jit(lambda x: jnp.array([x[0] * x[1], x[2]]))(np.arange(3, dtype=np.float32))
    assert np.asarray(a).dtype == np.float32 and not a.weak_type
    np.testing.assert_array_equal(np.asarray(a), np.array([0.0, 2.0], np.float32))
