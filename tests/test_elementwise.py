"""Elementwise primitives (srcjax/primitives/elementwise/) against JAX."""

import pathlib

import numpy as np
import pytest
from helpers import assert_matches_recorded, jax_recorded

import srcjax
import srcjax.numpy as jnp

RECORDED = pathlib.Path(__file__).parent / "data" / "elementwise_jax.npz"
PB = np.array([-3, -2, -1, 0, 1, 2, 3], np.int32)[:, None]
PE = np.array([-3, -2, -1, 0, 1, 2, 3, 31], np.int32)[None, :]
PK = np.array([-2, 0, 3], np.int32)
PX = np.array([1.0, 2.0, 3.0], np.float32)


def _compute(jax, jnp):
    r = {}
    # user B bug 12: integers to negative integer (array) powers
    r["power_grid"] = jnp.power(PB, PE)
    r["power_grid_jit"] = jax.jit(jnp.power)(PB, PE)
    r["power_grid_vmap"] = jax.vmap(jnp.power)(
        np.broadcast_to(PB, (7, 8)), np.broadcast_to(PE, (7, 8))
    )
    r["power_scalar_base"] = jnp.power(2, PK)
    r["power_operator_jit"] = jax.jit(lambda k: 2**k)(PK)
    r["power_operator_jit_arrays"] = jax.jit(lambda b, e: b**e)(PB, PE)
    r["power_int8"] = jnp.power(np.int8(3), np.array([-1, 5, 7], np.int8))
    r["power_uint8"] = jnp.power(np.array([2, 3], np.uint8), np.array([3, 6], np.uint8))
    r["power_vmap"] = jax.vmap(lambda k: jnp.power(2, k))(PK)
    r["power_grad_float_base"] = jax.grad(lambda x: jnp.sum(jnp.power(x, PK)))(PX)
    r["power_grad_scaled"] = jax.grad(lambda x: jnp.sum(x * jnp.power(2, PK)))(PX)
    r["power_jit_grad"] = jax.jit(jax.grad(lambda x, k: jnp.sum(x * 2**k)))(PX, PK)
    # hypot's derivatives at (0, 0): JAX's max/min formula splits the tie (0.5, 0.5)
    hx = np.array([0.0, 0.0, 3.0, -3.0, 1.0], np.float32)
    hy = np.array([0.0, 3.0, 4.0, 0.0, -1.0], np.float32)
    r["hypot_grad"] = jnp.stack(jax.vmap(jax.grad(jnp.hypot, argnums=(0, 1)))(hx, hy))
    r["hypot_grad_scalar"] = jnp.stack(jax.grad(jnp.hypot, argnums=(0, 1))(0.0, 0.0))
    r["hypot_jvp"] = jax.jvp(jnp.hypot, (hx, hy), (PX[[0, 1, 2, 0, 1]], hx + 1.0))[1]
    r["hypot_jit_grad"] = jax.jit(jax.grad(lambda a, b: jnp.sum(jnp.hypot(a, b))))(hx, hy)
    r["hypot_hessian_00"] = jax.hessian(lambda v: jnp.hypot(v[0], v[1]))(np.zeros(2, np.float32))
    return r


def _with_jax():
    import jax
    import jax.numpy as jjnp

    return _compute(jax, jjnp)


def test_integer_power_matches_jax():
    """User B bug 12: ``2 ** k`` and ``jnp.power(int_array, int_array)`` with
    negative exponents raised NumPy's ValueError; JAX gives 0 (1 and -1 for bases 1
    and -1; other bases: binary exponentiation over the exponent's low 6 bits,
    wrapping). Eager jnp.power, jit (operator and call), vmap, grad. Oracle: JAX
    0.10.2, recorded."""
    recorded = jax_recorded(RECORDED, _with_jax)
    assert_matches_recorded(_compute(srcjax, jnp), recorded)


def test_hypot_gradient_at_origin():
    """User B (lower priority): grad(jnp.hypot)(0, 0) was (nan, nan), JAX (0.5,
    0.5); covered by the recorded values above. Elsewhere x / hypot, checked
    against float64 central differences here."""
    from helpers import fd_grad

    v = np.array([0.3, -1.7])
    np.testing.assert_allclose(
        srcjax.grad(lambda v: jnp.hypot(v[0], v[1]))(v),
        fd_grad(lambda v: np.hypot(v[0], v[1]), v),
        rtol=1e-6,
    )


def test_integer_power_in_fused_jit_code():
    """jit fuses elementwise chains into NumPy ufunc calls with ``out=``: an
    integer power stays a jnp.power call there (np.power refuses negative
    exponents)."""
    b = np.tile(np.arange(-3, 4, dtype=np.int32), 30000)
    e = np.tile(np.arange(-4, 3, dtype=np.int32)[::-1], 30000)
    got = srcjax.jit(lambda b, e: (b**e + 1) * 2)(b, e)
    np.testing.assert_array_equal(got, (jnp.power(b, e) + 1) * 2)
    # (-3)**2, (-2)**1, (-1)**0, 0**-1 == 0, 1**-2 == 1, 2**-3 == 0 (JAX)
    assert got[:6].tolist() == [20, -2, 4, 2, 4, 2]
    f = np.linspace(0.5, 2.0, b.size).astype(np.float32)
    np.testing.assert_allclose(srcjax.jit(lambda f, e: f**e * 2.0)(f, e), f**e * 2.0, rtol=1e-6)


def test_negative_python_int_exponent_of_integers_is_jax_type_error():
    with pytest.raises(TypeError, match="negative powers"):
        jnp.power(PK, -1)


def test_weak_int_beyond_the_integer_dtype_wraps_as_jax():
    # User E bug 7: jnp.multiply(int8_array, 300) raised NumPy's OverflowError; JAX
    # converts the weakly typed 300 to int8 (44) first.
    x = np.array([0, 1, 2], np.int8)
    got = jnp.multiply(x, 300)
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, [0, 44, 88])
    np.testing.assert_array_equal(jnp.add(np.array([1], np.uint8), 256), [1])


def test_weak_int_beyond_the_integer_dtype_wraps_under_jit():
    # User E bug 7, jit part: the operator x * 300 on int8 raised NumPy's OverflowError.
    x = np.array([0, 1, 2], np.int8)
    got = srcjax.jit(lambda v: v * 300)(x)
    assert got.dtype == np.int8
    np.testing.assert_array_equal(got, [0, 44, 88])


def _imag_then_complex(x):
    a = jnp.imag(x * (1 + 2j))  # real, 2x
    return jnp.abs(a + 1j)


def _abs_then_complex(z):
    a = jnp.abs(z)
    return jnp.abs(a * (1 + 2j) + 3j)


def test_real_value_used_with_complex_operands_gets_a_real_cotangent():
    """Reported by the fft work: a real intermediate used with complex operands
    (``a + 1j``) carried a complex cotangent, and imag's rule (``g * -1j``) turned its
    imaginary part into a real gradient: 0.7071 instead of JAX's 1.4142. imag and
    abs now take the real part of their cotangent. Values recorded from JAX 0.10.2."""
    for g in (srcjax.grad(_imag_then_complex), srcjax.jit(srcjax.grad(_imag_then_complex))):
        np.testing.assert_allclose(g(0.5), 1.4142135, rtol=1e-6)
    got = srcjax.vmap(srcjax.grad(_imag_then_complex))(np.array([0.5, 1.5], np.float32))
    np.testing.assert_allclose(got, [1.4142135, 1.8973665], rtol=1e-6)
    z = np.array(1.0 + 2.0j, np.complex64)
    np.testing.assert_allclose(srcjax.grad(_abs_then_complex)(z), 0.9850943 - 1.9701886j, rtol=1e-6)


def _half_power(x):
    return x**0.5


def _half_power_fused(x):
    return jnp.exp(x) * x**0.5


def test_half_power_is_ieee_pow_at_signed_zero_and_minus_infinity():
    """``x ** 0.5`` is ``pow``, not ``sqrt``: JAX gives +0 at -0 and +inf at -inf.
    NumPy's scalar-exponent fast path (and jit's ``x**0.5 -> sqrt`` rewrite) gave
    -0 and NaN. Values recorded from JAX 0.10.2 (float32, eager and jit)."""
    x = jnp.array([-0.0, -np.inf, 4.0, -1.0, np.inf, 0.0], jnp.float32)
    want = np.array([0.0, np.inf, 2.0, np.nan, np.inf, 0.0], np.float32)
    want_fused = np.array([0.0, np.nan, 109.1963, np.nan, np.inf, 0.0], np.float32)
    with np.errstate(invalid="ignore"):
        for f in (_half_power, srcjax.jit(_half_power), lambda v: jnp.power(v, 0.5)):
            got = np.asarray(f(x))
            np.testing.assert_array_equal(got, want)
            assert not np.signbit(got[0])
        got = np.asarray(srcjax.jit(_half_power_fused)(x))
        np.testing.assert_allclose(got, want_fused, rtol=1e-6)
        assert not np.signbit(got[0])
        # the scalar path and float64 agree
        assert not np.signbit(float(_half_power(jnp.float32(-0.0))))
        assert float(srcjax.jit(_half_power)(np.float64(-np.inf))) == np.inf
        assert float(_half_power(jnp.asarray(-np.inf))) == np.inf
        # int ** 0.5 keeps JAX's dtype (float32), complex is untouched
        assert _half_power(jnp.array([4, 9], jnp.int32)).dtype == np.float32
        np.testing.assert_allclose(_half_power(jnp.array([-4 + 0j], jnp.complex64)), [2j])


def test_half_power_with_a_numpy_scalar_exponent_follows_jax():
    """NumPy's fast path also triggers for a 0-d exponent; JAX's promotion decides
    the dtype (float16 base, float32 exponent -> float32). JAX 0.10.2 values."""
    x = jnp.array([-0.0, -np.inf, 9.0], jnp.float16)
    got = jnp.power(x, np.float32(0.5))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(got), [0.0, np.inf, 3.0])
    assert not np.signbit(np.asarray(got)[0])
    got = jnp.power(x, jnp.asarray(0.5, jnp.float16))
    assert got.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(got), [0.0, np.inf, 3.0])


def _half_power_sum(x):
    return jnp.sum(x**0.5)


def test_half_power_under_grad_and_vmap_keeps_pow_values():
    x = jnp.array([-0.0, -np.inf, 4.0], jnp.float32)
    with np.errstate(invalid="ignore", divide="ignore"):
        np.testing.assert_array_equal(np.asarray(srcjax.vmap(_half_power)(x)), [0.0, np.inf, 2.0])
        v, g = srcjax.value_and_grad(_half_power_sum)(jnp.array([4.0, 9.0], jnp.float32))
        np.testing.assert_allclose(float(v), 5.0)
        np.testing.assert_allclose(np.asarray(g), [0.25, 1.0 / 6.0], rtol=1e-6)
        # second derivative through the generated ad.pow_half: -0.25 x**-1.5
        h = srcjax.grad(srcjax.grad(lambda t: t**0.5))(4.0)
        np.testing.assert_allclose(float(h), -0.25 * 4.0**-1.5, rtol=1e-6)


def test_half_power_minus_infinity_next_to_nan():
    # found by tests/test_c_render.py: np.min is NaN when a NaN is present, which hid -inf
    x = jnp.array([[np.nan, -np.inf], [4.0, -0.0]], jnp.float32)
    np.testing.assert_array_equal(np.asarray(x**0.5), [[np.nan, np.inf], [2.0, 0.0]])


def test_maximum_gradient_splits_ties_in_float32_with_broadcasting():
    # the partial of max (ad.balanced_eq) computed in the operands' float32, with a
    # broadcast second operand and a NaN; values recorded from jax 0.10.2:
    # jax.grad(lambda x, y: jnp.sum(jnp.maximum(x, y) * 3), argnums=(0, 1))
    x = np.array([[1.0, 2.0, np.nan, 0.0], [3.0, -1.0, 2.0, 0.0]], np.float32)
    y = np.array([2.0, 2.0, 1.0, 0.0], np.float32)
    f = lambda x, y: jnp.sum(jnp.maximum(x, y) * np.float32(3))  # noqa: E731
    for grad in (srcjax.grad(f, argnums=(0, 1)), srcjax.jit(srcjax.grad(f, argnums=(0, 1)))):
        gx, gy = grad(x, y)
        assert gx.dtype == np.float32 and gy.dtype == np.float32
        np.testing.assert_array_equal(gx, [[0.0, 1.5, 0.0, 1.5], [3.0, 0.0, 3.0, 1.5]])
        np.testing.assert_array_equal(gy, [3.0, 4.5, 0.0, 3.0])
    relu_grad = srcjax.grad(lambda x: jnp.sum(jnp.maximum(0, x)))
    np.testing.assert_array_equal(relu_grad(np.array([-1.0, 0.0, 2.0], np.float32)), [0, 0.5, 1])


def test_maximum_minimum_of_a_number_and_a_large_float32_array_same_bits_as_numpy():
    # a Python number against a float32 array of 1024+ elements is filled into an
    # array first (NumPy's scalar loop is 3-5x slower): the same bits as NumPy's
    # scalar path, signed zeros, NaN and infinities included, in either order
    rng = np.random.default_rng(3)
    x = rng.standard_normal((40, 64)).astype(np.float32)
    x[0, :6] = [np.nan, -0.0, 0.0, np.inf, -np.inf, 0.5]
    impls = {"maximum": (jnp.maximum, np.maximum), "minimum": (jnp.minimum, np.minimum)}
    for ours, theirs in impls.values():
        for c in (0, -0.0, 0.0, 0.5, 3, -(2**30), 1e30):
            for a, b in (((c, x)), ((x, c))):
                got = np.asarray(ours(a, b))
                want = theirs(a, b)
                assert got.dtype == want.dtype == np.float32
                np.testing.assert_array_equal(got, want)
                np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    # and under jit, the ReLU of the quickstart: values of np.maximum(0, x)
    relu = srcjax.jit(lambda v: jnp.maximum(0, v))
    np.testing.assert_array_equal(np.signbit(relu(x)), np.signbit(np.maximum(0, x)))
    np.testing.assert_array_equal(relu(x), np.maximum(0, x))
