"""Transform outputs have JAX's dtypes: 32-bit unless x64 is on.

Inside transformed code NumPy's operators follow NumPy's promotion
(``int32 * float32`` is float64); vmap, jvp and jacfwd returned such values
as float64 where JAX gives float32. Outputs are now narrowed at the boundary
(jit_api._unalias). Values recorded from jax 0.10.2 (CPU); srcjax computes
the intermediate in float64, so the last bit may differ (rtol 1e-6).
"""

import numpy as np

import srcjax

IDX = np.arange(3, dtype=np.int32)
X = np.array([1.5, 2.5, -0.5], np.float32)


def mixed(x, i):
    return x * i + i / 3


# jax.vmap(mixed)(X, IDX) and the jvp's primal output (float32)
WANT = np.array([0.0, 2.8333333, -0.3333333], np.float32)


def check(got, want):
    assert got.dtype == np.float32, got.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)


def test_vmap_output_is_float32():
    check(srcjax.vmap(mixed)(X, IDX), WANT)


def test_jvp_outputs_are_float32():
    p, t = srcjax.jvp(lambda x: mixed(x, IDX), (X,), (X,))
    check(p, WANT)
    check(t, np.array([0.0, 2.5, -1.0], np.float32))  # JAX's tangent


def test_jacfwd_is_float32():
    j = srcjax.jacfwd(lambda x: mixed(x, IDX))(X)
    check(j, np.diag(IDX.astype(np.float32)))


def test_int64_results_narrow_and_dicts_too():
    out = srcjax.vmap(lambda i: {"n": i * np.int64(3), "f": i * np.float64(0.5)})(IDX)
    assert out["n"].dtype == np.int32 and out["f"].dtype == np.float32
    np.testing.assert_array_equal(out["n"], [0, 3, 6])
    np.testing.assert_array_equal(out["f"], [0.0, 0.5, 1.0])


def test_x64_keeps_64_bits(x64):
    got = srcjax.vmap(mixed)(X.astype(np.float64), IDX.astype(np.int64))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, [0.0, 2.5 + 1 / 3, -1 + 2 / 3], rtol=1e-15)


SHIFT = np.arange(3, dtype=np.int32)  # a module-level array: jit cannot see its dtype


def test_jit_of_a_global_int_array_is_float32():
    # jit's fast path returned NumPy's float64 (the promotion pass does not know
    # the global's dtype); jax.jit gives float32
    f = srcjax.jit(lambda x: x * SHIFT + SHIFT / 3)
    check(f(X), WANT)
    s = srcjax.jit(lambda x: x[2] * SHIFT[2] + np.float64(0.5))(X)
    assert s.dtype == np.float32 and s == np.float32(-0.5)


def test_vjp_and_linearize_primal_outputs_are_float32():
    out, vjp_fn = srcjax.vjp(lambda x: mixed(x, IDX), X)
    check(out, WANT)
    (ct,) = vjp_fn(np.ones(3, np.float32))
    check(ct, IDX.astype(np.float32))  # JAX's cotangent: d(x * i)/dx = i
    out, _ = srcjax.linearize(lambda x: mixed(x, IDX), X)
    check(out, WANT)


def test_vjp_function_returns_dicts_in_jax_key_order():
    # jax 0.10.2: the cotangent dict of vjp's function has keys ['b', 'w'] (sorted)
    p = {"w": np.ones(2, np.float32), "b": np.zeros(2, np.float32)}
    out, vjp_fn = srcjax.vjp(lambda p: p["w"] * 2 + p["b"], p)
    (g,) = vjp_fn(np.ones(2, np.float32))
    assert list(g) == ["b", "w"]
    np.testing.assert_array_equal(g["w"], [2.0, 2.0])
    np.testing.assert_array_equal(g["b"], [1.0, 1.0])


def test_jvp_refuses_an_integer_tangent_for_a_float_primal():
    # jax: TypeError "dtypes must be equal ..." (srcjax accepted it; user X)
    import pytest

    with pytest.raises(TypeError, match="dtypes must be equal"):
        srcjax.jvp(lambda x: x * 2, (X,), (np.array([1, 2, 3], np.int32),))
    _, t = srcjax.jvp(lambda x: x * 2, (X,), (np.ones(3, np.float64),))  # narrowed, as JAX
    assert t.dtype == np.float32
