"""Dtype and value corners found by user L (r02, r04, r05, r09-r13). Expected
values were recorded from jax 0.10.2 (CPU) unless a comment says otherwise."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

# ---------------------------------------------------------------------------
# preferred_element_type: the product is computed in that type (r11)

A8 = np.array([[100, 100], [100, -100]], dtype=np.int8)
V8 = np.array([100, 100, 100], dtype=np.int8)
I32 = np.int32


def _check(r, value, dtype):
    assert np.asarray(r).dtype == dtype
    np.testing.assert_array_equal(r, value)


def test_preferred_element_type_int8():
    # jax: 30000 (int32), not int8's wrapped 48
    _check(jnp.dot(V8, V8, preferred_element_type=I32), 30000, np.int32)
    _check(jnp.einsum("i,i->", V8, V8, preferred_element_type=I32), 30000, np.int32)
    _check(lax.dot(V8, V8, preferred_element_type=I32), 30000, np.int32)
    dn = (((0,), (0,)), ((), ()))
    _check(lax.dot_general(V8, V8, dn, preferred_element_type=np.float32), 30000.0, np.float32)
    want = [[20000, 0], [0, 20000]]
    _check(jnp.matmul(A8, A8, preferred_element_type=I32), want, np.int32)
    _check(jnp.tensordot(A8, A8, 1, preferred_element_type=I32), want, np.int32)
    _check(jnp.inner(A8, A8, preferred_element_type=np.int16), want, np.int16)
    _check(jnp.vdot(A8, A8, preferred_element_type=I32), 40000, np.int32)
    _check(srcjax.jit(lambda x: jnp.dot(x, x, preferred_element_type=I32))(A8), want, np.int32)


@pytest.mark.parametrize(
    "f",
    [
        lambda x: jnp.dot(x, x, preferred_element_type=I32),
        lambda x: jnp.matmul(x, x, preferred_element_type=I32),
        lambda x: jnp.einsum("i,i->", x, x, preferred_element_type=I32),
        lambda x: jnp.inner(x, x, preferred_element_type=I32),
        lambda x: jnp.tensordot(x, x, 1, preferred_element_type=I32),
        lambda x: jnp.vdot(x, x, preferred_element_type=I32),
        lambda x: lax.dot(x, x, preferred_element_type=I32),
    ],
)
def test_preferred_element_type_vmap(f):
    for g in (srcjax.vmap(f), srcjax.jit(srcjax.vmap(f))):
        _check(g(A8), [20000, 20000], np.int32)


def test_vmap_vdot_conjugates():
    a = np.array([[1 + 2j, 3j]], dtype=np.complex64)
    # jax: [14+0j] (srcjax's batched vdot forgot the conjugate)
    np.testing.assert_allclose(srcjax.vmap(jnp.vdot)(a, a), [14.0])


H = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float16)


def _sq(a, b):
    return jnp.sum(jnp.matmul(a, b, preferred_element_type=np.float32) ** 2)


def test_preferred_element_type_float16_derivatives():
    assert jnp.matmul(H, H, preferred_element_type=np.float32).dtype == np.float32
    for g in (srcjax.grad(_sq, argnums=(0, 1)), srcjax.jit(srcjax.grad(_sq, argnums=(0, 1)))):
        ga, gb = g(H, H)
        # jax: float16 cotangents of these values
        _check(ga, [[54.0, 122.0], [118.0, 266.0]], np.float16)
        _check(gb, [[104.0, 152.0], [148.0, 216.0]], np.float16)
    p, t = srcjax.jvp(lambda a: jnp.dot(a, H, preferred_element_type=np.float32), (H,), (H,))
    _check(p, [[7.0, 10.0], [15.0, 22.0]], np.float32)
    _check(t, [[7.0, 10.0], [15.0, 22.0]], np.float32)
    e = srcjax.grad(lambda a: jnp.einsum("ij,jk->", a, H, preferred_element_type=np.float32))(H)
    _check(e, [[3.0, 7.0], [3.0, 7.0]], np.float16)


# ---------------------------------------------------------------------------
# repeat's total_repeat_length, var/std with ddof >= n (r09)

X23 = np.arange(6.0, dtype=np.float32).reshape(2, 3)
R = np.array([1, 0, 2])


def test_repeat_total_repeat_length():
    # recorded from jax
    _check(jnp.repeat(np.arange(3), R, total_repeat_length=4), [0, 2, 2, 2], np.int32)
    _check(jnp.repeat(np.arange(3), R, total_repeat_length=2), [0, 2], np.int32)
    _check(jnp.repeat(np.arange(3), 2, total_repeat_length=4), [0, 0, 1, 1], np.int32)
    want = [[0.0, 2.0, 2.0, 2.0, 2.0], [3.0, 5.0, 5.0, 5.0, 5.0]]
    _check(jnp.repeat(X23, R, axis=1, total_repeat_length=5), want, np.float32)
    _check(jnp.repeat(X23, 2, total_repeat_length=9), [0, 0, 1, 1, 2, 2, 3, 3, 4], np.float32)
    _check(
        jnp.repeat(X23, np.array([0, 0]), axis=0, total_repeat_length=3), [X23[1]] * 3, np.float32
    )
    _check(jnp.repeat(np.float32(3.0), 2, total_repeat_length=3), [3.0, 3.0, 3.0], np.float32)
    assert jnp.repeat(X23, R, axis=1, total_repeat_length=0).shape == (2, 0)
    f = srcjax.jit(lambda r: jnp.repeat(jnp.arange(3), r, total_repeat_length=4))
    _check(f(R), [0, 2, 2, 2], np.int32)


def test_repeat_total_repeat_length_transforms():
    def f(x):
        return jnp.sum(jnp.repeat(x, R, axis=1, total_repeat_length=5) * jnp.arange(5.0))

    # recorded from jax
    _check(srcjax.grad(f)(X23), [[0.0, 0.0, 10.0], [0.0, 0.0, 10.0]], np.float32)
    t = srcjax.jvp(lambda x: jnp.repeat(x, R, axis=1, total_repeat_length=4), (X23,), (2 * X23,))[1]
    _check(t, [[0.0, 4.0, 4.0, 4.0], [6.0, 10.0, 10.0, 10.0]], np.float32)
    g = srcjax.vmap(lambda x: jnp.repeat(x, R, total_repeat_length=4))
    _check(g(X23), [[0.0, 2.0, 2.0, 2.0], [3.0, 5.0, 5.0, 5.0]], np.float32)
    g = srcjax.vmap(lambda r: jnp.repeat(X23[0], r, total_repeat_length=4))
    _check(g(np.array([[1, 0, 2], [0, 3, 0]])), [[0, 2, 2, 2], [1, 1, 1, 2]], np.float32)
    g = srcjax.jit(srcjax.vmap(lambda x: jnp.repeat(x, 2, total_repeat_length=3)))
    _check(g(X23), [[0.0, 0.0, 1.0], [3.0, 3.0, 4.0]], np.float32)


def test_var_std_ddof_at_least_n():
    x = np.arange(2.0, dtype=np.float32)
    # jax: nan wherever n - ddof <= 0 (NumPy: inf)
    for d in (2, 3, 2.5):
        assert np.isnan(jnp.var(x, ddof=d)) and np.isnan(jnp.std(x, ddof=d))
    assert np.isnan(jnp.var(np.arange(3), ddof=3))
    np.testing.assert_allclose(jnp.var(np.arange(3), ddof=2.5), 4.0)
    np.testing.assert_allclose(jnp.var(x, ddof=1.5), 1.0)
    # jax: the gradient is 0 (-0.0) past n, NaN at n == ddof
    g = srcjax.grad(lambda v: jnp.var(v, ddof=3))(x)
    np.testing.assert_array_equal(g, [0.0, 0.0])
    assert np.all(np.isnan(srcjax.grad(lambda v: jnp.var(v, ddof=2))(x)))


# ---------------------------------------------------------------------------
# arange with an integer dtype, convolve's float result, concatenate's dtype (r12)


def test_arange_as_jax_computes_it():
    # recorded from jax: start and step converted to the dtype first
    _check(jnp.arange(0, 5, 1.5, dtype=np.int32), [0, 1, 2, 3], np.int32)
    _check(jnp.arange(0.5, 5, 1.5, dtype=np.int32), [0, 1, 2], np.int32)
    _check(jnp.arange(-1, 5, 1.7, dtype=np.int32), [-1, 0, 1, 2], np.int32)
    _check(jnp.arange(2.5, dtype=np.int32), [0, 1, 2], np.int32)
    _check(jnp.arange(0.5, 4.2, dtype=np.int32), [0, 1, 2, 3], np.int32)
    _check(jnp.arange(np.int8(3)), [0, 1, 2], np.int8)
    _check(jnp.arange(5, 0, -1), [5, 4, 3, 2, 1], np.int32)
    _check(jnp.arange(0, 5, 2, dtype=float), [0.0, 2.0, 4.0], np.float32)
    # float32 arithmetic: float32(start) + float32(step) * i, as jax
    got = jnp.arange(0.3, 7.1, 0.37)
    want = np.float32(0.3) + np.float32(0.37) * np.arange(19, dtype=np.float32)
    _check(got, want, np.float32)
    _check(jnp.arange(0, 1, 0.1, dtype=np.float16)[-2:], [0.7998046875, 0.89990234375], np.float16)


def test_convolve_dtypes():
    # jax: integers promote to the default float
    _check(jnp.convolve(np.arange(5), np.array([1, 2, 3])), [0, 1, 4, 10, 16, 17, 12], np.float32)
    _check(jnp.convolve(np.array([True, False]), np.array([1, 2, 3])), [1, 2, 3, 0], np.float32)
    a = np.arange(5, dtype=np.int8) * 30
    b = np.array([100, 2], dtype=np.int8)
    want = [0, 3000, 6060, 9120, 12180, 240]
    _check(jnp.convolve(a, b, preferred_element_type=np.int32), want, np.int32)
    f = srcjax.jit(jnp.convolve)
    _check(f(np.arange(5), np.array([1, 2, 3])), [0, 1, 4, 10, 16, 17, 12], np.float32)


def test_concatenate_dtype_casts_like_astype():
    ones, zeros = np.ones(2, np.float32), np.zeros(2, np.float32)
    # recorded from jax
    _check(jnp.concatenate([ones, zeros], dtype=np.int32), [1, 1, 0, 0], np.int32)
    _check(jnp.concatenate([np.array([1.7, -1.7]), zeros], dtype=np.int32), [1, -1, 0, 0], np.int32)
    _check(jnp.concatenate([np.array([1, 2]), zeros], dtype=np.float16), [1, 2, 0, 0], np.float16)
    got = jnp.concatenate([np.array([1.5, 2.0]), np.zeros(2, np.int32)], dtype=np.bool_)
    _check(got, [True, True, False, False], np.bool_)
    got = jnp.concatenate([np.array([300, -1]), np.zeros(2, np.int32)], dtype=np.uint8)
    _check(got, [44, 255, 0, 0], np.uint8)
    _check(jnp.hstack([np.array([1.7, -1.7]), zeros], dtype=np.int32), [1, -1, 0, 0], np.int32)
    _check(jnp.vstack([np.array([1.7, -1.7]), zeros], dtype=np.int32), [[1, -1], [0, 0]], np.int32)
    f = srcjax.jit(lambda a, b: jnp.concatenate([a, b], dtype=np.int32))
    _check(f(ones, zeros), [1, 1, 0, 0], np.int32)
    v = srcjax.vmap(lambda a: jnp.concatenate([a, a], dtype=np.int32))(1.5 * np.ones((2, 2)))
    _check(v, [[1, 1, 1, 1]] * 2, np.int32)


def test_concatenate_dtype_derivatives():
    g = srcjax.grad(lambda a: jnp.sum(jnp.concatenate([a, a], dtype=np.float16)))(np.ones(2))
    _check(g, [2.0, 2.0], np.float32)
    t = srcjax.jvp(
        lambda a: jnp.concatenate([a, a], dtype=np.float16), (np.ones(2),), (np.ones(2),)
    )
    _check(t[1], [1.0] * 4, np.float16)
    # jax: zero (float0) through an integer dtype; srcjax's zeros are int32 here
    g = srcjax.grad(lambda a: jnp.sum(jnp.concatenate([a, a], dtype=np.int32) * 1.0))(np.ones(2))
    np.testing.assert_array_equal(g, [0.0, 0.0])
    g = srcjax.grad(lambda a: jnp.sum(jnp.hstack([a, a], dtype=np.int32) * 1.0))(np.ones(2))
    np.testing.assert_array_equal(g, [0.0, 0.0])


# ---------------------------------------------------------------------------
# a Python int that does not fit int32 (x64 off): JAX's OverflowError (r10)

I2 = np.ones(2, np.int32)


@pytest.mark.parametrize(
    "f",
    [
        lambda: jnp.multiply(I2, 2**40),
        lambda: jnp.add(I2, 2**31),
        lambda: jnp.multiply(2**40, I2),
        lambda: jnp.subtract(I2, -(2**40)),
        lambda: jnp.floor_divide(I2, 2**40),
        lambda: jnp.bitwise_and(I2, 2**40),
        lambda: jnp.add(I2, 2**33 + 5),
        lambda: lax.add(I2, 2**40),
        lambda: srcjax.jit(lambda x: x * 2**40)(I2),
        lambda: srcjax.jit(lambda x: jnp.add(x, 2**33 + 5))(I2),
        lambda: srcjax.vmap(lambda x: x * 2**40)(I2),
    ],
)
def test_python_int_beyond_int32_raises(f):
    # jax: OverflowError (srcjax wrapped it: [0 0], [6 6])
    with pytest.raises(OverflowError):
        f()


def test_python_int_in_int32_wraps_into_narrow_types():
    # recorded from jax: a weak int that fits int32 is converted (wrapping)
    _check(jnp.add(I2, 2**31 - 1), [-(2**31)] * 2, np.int32)
    _check(jnp.multiply(np.ones(2, np.int8), 300), [44, 44], np.int8)
    _check(jnp.add(np.ones(2, np.int8), 128), [-127, -127], np.int8)
    _check(jnp.add(np.ones(2, np.uint8), -1), [0, 0], np.uint8)
    _check(jnp.multiply(np.ones(2, np.uint8), 256), [0, 0], np.uint8)
    _check(srcjax.jit(lambda x: x * 300)(np.ones(2, np.int8)), [44, 44], np.int8)


# ---------------------------------------------------------------------------
# integer division by zero (r04, r13) and the derivative of x ** 0.0 at 0 (r05)

NUM = np.array([1, -1, 0], np.int32)
ZERO = np.zeros(3, np.int32)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_integer_floor_divide_by_zero():
    # recorded from jax (XLA: x / 0 is -1, then floor_divide's correction)
    _check(jnp.floor_divide(NUM, ZERO), [-2, -2, -1], np.int32)
    _check(srcjax.jit(lambda a, b: a // b)(NUM, ZERO), [-2, -2, -1], np.int32)
    _check(srcjax.jit(lambda a, b: (a // b) * 2 + 1)(NUM, ZERO), [-3, -3, -1], np.int32)
    _check(srcjax.vmap(lambda a, b: a // b)(NUM, ZERO), [-2, -2, -1], np.int32)
    _check(srcjax.jit(srcjax.vmap(lambda a, b: a // b))(NUM, ZERO), [-2, -2, -1], np.int32)
    _check(jnp.divmod(NUM, ZERO)[0], [-2, -2, -1], np.int32)
    big_a = np.tile(NUM, 30000)
    big_b = np.tile(np.array([0, 0, 0], np.int32), 30000)
    got = srcjax.jit(lambda a, b: (a // b) * 2 + 1)(big_a, big_b)  # a fused region
    _check(got[:3], [-3, -3, -1], np.int32)
    got = srcjax.jit(lambda a, b: a // b)(NUM, np.array([True, False, False]))
    _check(got, [1, -2, -1], np.int32)
    # nonzero divisors keep floor semantics
    _check(jnp.floor_divide(np.array([-7, 7]), np.array([2, -2])), [-4, -4], np.int32)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_jit_python_int_division_by_zero():
    # srcjax.jit(lambda n: n // 0)(3) raised ZeroDivisionError (Python ints);
    # recorded from jax 0.10.2: jit(n // 0)(3) -2, jit(n % 0)(3) 0, both weak
    # int32; jit(n // m)(-3, 0) -2; jit(-n % 0)(3) 0
    def check_weak(r, value):
        _check(r, value, np.int32)
        assert r.weak_type

    check_weak(srcjax.jit(lambda n: n // 0)(3), -2)
    check_weak(srcjax.jit(lambda n: n % 0)(3), 0)
    check_weak(srcjax.jit(lambda n, m: n // m)(-3, 0), -2)
    check_weak(srcjax.jit(lambda n: -n % 0)(3), 0)
    q, r = srcjax.jit(lambda n, m: (n // m, n % m))(-7, 2)  # nonzero: floor semantics
    check_weak(q, -4)
    check_weak(r, 1)
    # eager jnp with an int32 scalar: -2, strongly typed (as jax)
    r = jnp.floor_divide(jnp.int32(3), 0)
    _check(r, -2, np.int32)
    assert not r.weak_type


@pytest.mark.parametrize(
    "f",
    [
        lambda x: x.shape[0] // 0,
        lambda x: x.shape[0] % 0,
        lambda x: x.shape[0] / 0,
        lambda x: x * (x.shape[0] // 0),
        lambda x: x + divmod(x.shape[0], 0)[0],
        lambda x: x * (len(x) % (x.ndim - 1)),
    ],
)
def test_static_int_division_by_zero_raises(f):
    # jax 0.10.2: ZeroDivisionError at trace time (x.shape[0] is a Python int);
    # srcjax's jit folded x.shape[0] // 0 to 0 (NumPy's value, meant for weak
    # stand-ins) and returned it
    x = np.ones(3, np.float32)
    with pytest.raises(ZeroDivisionError):
        srcjax.jit(f)(x)
    with pytest.raises(ZeroDivisionError):
        srcjax.vmap(f)(np.ones((2, 3), np.float32))
    with pytest.raises(ZeroDivisionError):
        f(x)


def test_static_argument_division_by_zero_raises():
    # jax 0.10.2: a static Python int is a Python int: ZeroDivisionError
    with pytest.raises(ZeroDivisionError):
        srcjax.jit(lambda n: n // 0, static_argnums=0)(3)
    with pytest.raises(ZeroDivisionError):
        srcjax.jit(lambda x, n: x * (n % 0), static_argnums=1)(np.ones(2, np.float32), 3)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_unsigned_division_by_zero():
    a, z = np.array([5], np.uint8), np.array([0], np.uint8)
    # recorded from jax: lax.div [255], lax.rem [5], floor_divide [255], mod [0]
    _check(lax.div(a, z), [255], np.uint8)
    _check(lax.rem(a, z), [5], np.uint8)
    _check(jnp.floor_divide(a, z), [255], np.uint8)
    _check(jnp.mod(a, z), [0], np.uint8)
    _check(srcjax.jit(lambda p, q: p // q)(a, z), [255], np.uint8)
    _check(lax.div(np.array([5, -5], np.int8), np.zeros(2, np.int8)), [-1, -1], np.int8)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_grad_of_float_power_zero_at_zero_is_nan():
    # recorded from jax: a float exponent 0 gives 0 * 0**-1 = nan at x = 0
    assert np.isnan(srcjax.grad(lambda x: x**0.0)(0.0))
    assert np.isnan(srcjax.grad(lambda x: lax.pow(x, 0.0))(0.0))
    assert np.isnan(srcjax.grad(lambda x: x**x)(0.0))
    assert np.isnan(srcjax.jvp(lambda x: x**0.0, (0.0,), (1.0,))[1])
    assert np.isnan(srcjax.jit(srcjax.grad(lambda x, y: x**y))(0.0, 0.0))
    np.testing.assert_array_equal(
        srcjax.vmap(srcjax.grad(lambda x: x**0.0))(np.array([0.0, 1.0])), [np.nan, 0.0]
    )
    # an integer exponent 0 has derivative 0 (jax: integer_pow / the integer branch)
    assert srcjax.grad(lambda x: x**0)(0.0) == 0.0
    assert srcjax.grad(lambda x: jnp.power(x, 0))(0.0) == 0.0
    g = srcjax.grad(lambda x: jnp.sum(jnp.power(x, np.array([0, 1, 2]))))(np.zeros(3, np.float32))
    np.testing.assert_array_equal(g, [0.0, 1.0, 0.0])
    g = srcjax.grad(lambda x: jnp.sum(jnp.power(x, np.array([0.0, 1.0, 2.0]))))(
        np.zeros(3, np.float32)
    )
    np.testing.assert_array_equal(g, [np.nan, 1.0, 0.0])
    assert srcjax.grad(lambda x: x**0.0)(2.0) == 0.0
    assert srcjax.grad(srcjax.grad(lambda x: x**3.0))(2.0) == 12.0


# ---------------------------------------------------------------------------
# with x64 on, JAX keeps 32-bit results for 32-bit (and narrower) inputs (r02)


@pytest.fixture
def x64():
    old = srcjax.config.jax_enable_x64
    srcjax.config.update("jax_enable_x64", True)
    yield
    srcjax.config.update("jax_enable_x64", old)


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.uint8, np.uint32, np.bool_])
def test_x64_int_inputs_give_float32(x64, dt):
    o = np.ones(2, dt)
    # recorded from jax (x64): float32 for all of these
    for f in (
        lambda v: jnp.divide(v, v),
        jnp.mean,
        jnp.linalg.norm,
        jnp.sqrt,
        jnp.var,
        jnp.std,
        jnp.average,
        jnp.median,
        jnp.nanmean,
        jnp.nanvar,
    ):
        assert f(o).dtype == np.float32
    # jax: bool / 2 promotes bool with a weak int (int64 with x64) -> float64
    want = np.float64 if dt is np.bool_ else np.float32
    assert jnp.divide(o, 2).dtype == want
    assert srcjax.jit(lambda v: v / 2)(o).dtype == want


def test_x64_keeps_64_bit_where_jax_does(x64):
    o = np.ones(2, np.int64)
    for f in (jnp.mean, jnp.linalg.norm, lambda v: jnp.divide(v, 2), jnp.median):
        assert f(o).dtype == np.float64
    assert jnp.argmax(np.ones(3, np.float32)).dtype == np.int64
    assert jnp.sum(np.ones(2, np.int32)).dtype == np.int64


def test_x64_searchsorted_and_digitize_int32(x64):
    # recorded from jax (x64): int32
    _check(jnp.searchsorted(np.arange(3.0), 1.5), 2, np.int32)
    _check(jnp.searchsorted(np.arange(3), np.array([1, 5]), side="right"), [2, 3], np.int32)
    _check(jnp.digitize(np.arange(4.0), np.array([3.0, 1.0])), [2, 1, 1, 0], np.int32)
    _check(jnp.digitize(np.arange(4.0), np.array([1.0, 3.0]), right=True), [0, 0, 1, 1], np.int32)
    _check(jnp.digitize(np.arange(3.0), np.zeros(0)), [0, 0, 0], np.int32)
    bins = np.array([[3.0, 1.0], [0.5, 2.5]])
    got = srcjax.vmap(lambda b: jnp.digitize(np.arange(4.0), b))(bins)
    _check(got, [[2, 1, 1, 0], [0, 1, 1, 2]], np.int32)
    got = srcjax.jit(jnp.digitize)(np.arange(4.0), np.array([3.0, 1.0]))
    _check(got, [2, 1, 1, 0], np.int32)


# ---------------------------------------------------------------------------
# jit returning a registered class with Python-scalar leaves (r25)


class _Pt:
    def __init__(self, x, y):
        self.x = x
        self.y = y


srcjax.tree_util.register_pytree_node(_Pt, lambda p: ((p.x, p.y), None), lambda a, c: _Pt(*c))


def test_jit_registered_class_scalar_leaves_are_arrays():
    r = srcjax.jit(lambda p: _Pt(p.x * 2, p.y))(_Pt(2.0, 3))
    # jax: float32 Array 4.0 and int32 Array 3 (srcjax: NumPy scalars, as for dicts)
    assert isinstance(r, _Pt)
    assert r.x.dtype == np.float32 and r.x == 4.0
    assert r.y.dtype == np.int32 and r.y == 3
    a = np.ones(2, np.float32)
    r = srcjax.jit(lambda p: p)(_Pt(a, 1.5))
    assert r.x is not a and r.y.dtype == np.float32  # inputs are copied, as arrays are
    np.testing.assert_array_equal(r.x, a)


def test_preferred_element_type_float_to_int_and_narrower():
    a = np.array([1.0001, 2000.3, 3.7e-3, 1e4], dtype=np.float32)
    # recorded from jax: float operands are multiplied in float32, then converted
    _check(jnp.dot(a, a, preferred_element_type=np.int32), 104001200, np.int32)
    i = np.array([3, 4], dtype=np.int32)
    _check(jnp.dot(i, i, preferred_element_type=np.uint32), 25, np.uint32)
    # jax: TypeError for a type narrower than the integer operands'
    for pet in (np.int8, np.float16):
        with pytest.raises(TypeError, match="must not be narrower"):
            jnp.dot(i, i, preferred_element_type=pet)
        with pytest.raises(TypeError, match="must not be narrower"):
            jnp.matmul(i, i, preferred_element_type=pet)
