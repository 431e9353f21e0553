"""Fresh-user round 7 leftovers (/work/userprogs7/REPORT.md item 12): an
operator with a string operand under jit / grad raised NumPy's UFuncTypeError
("ufunc 'multiply' did not contain a loop ...") from generated code. JAX
0.10.2's errors, recorded (jit, grad and eager alike):

- ``x * "a"`` and ``"a" * x``: TypeError "Only integer scalar arrays can be
  converted to a scalar index."
- ``x + "a"``: TypeError "unsupported operand type(s) for +: ... and 'str'"
  (JAX names its tracer / ArrayImpl type; srcjax eager names 'Array')
- ``x < "a"``: TypeError "'<' not supported between instances of ... and 'str'"
"""

import traceback

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

HERE = __file__


def times_a(x):
    return x * "a"


def a_times(x):
    return "a" * x


def plus_a(x):
    return x + "a"


def pow_a(x):
    return x ** "a"


def less_a(x):
    return x < "a"


CASES = [
    (times_a, "Only integer scalar arrays can be converted to a scalar index."),
    (a_times, "Only integer scalar arrays can be converted to a scalar index."),
    (plus_a, "unsupported operand type(s) for +: 'Array' and 'str'"),
    (pow_a, "unsupported operand type(s) for ** or pow(): 'Array' and 'str'"),
    (less_a, "'<' not supported between instances of 'Array' and 'str'"),
]


@pytest.mark.parametrize("fn, message", CASES)
@pytest.mark.parametrize("transform", ["jit", "grad"])
def test_string_operand_is_jaxs_type_error_at_the_users_line(fn, message, transform):
    if transform == "jit":
        call = lambda: srcjax.jit(fn)(np.ones(3, np.float32))  # noqa: E731
    else:
        call = lambda: srcjax.grad(lambda x: jnp.sum(fn(x)))(jnp.ones(3))  # noqa: E731
    with pytest.raises(TypeError) as info:
        call()
    assert type(info.value) is TypeError  # (not NumPy's UFuncTypeError)
    assert str(info.value) == message
    line = fn.__code__.co_firstlineno + 1
    frames = [(f.filename, f.lineno) for f in traceback.extract_tb(info.value.__traceback__)]
    assert (HERE, line) in frames
    assert "\n".join(info.value.__notes__).startswith(f"at {HERE}:{line}:")


def test_string_operand_eager_message_unchanged():
    with pytest.raises(TypeError, match="unsupported operand type"):
        plus_a(jnp.ones(3))


# -- item 8 leftover: integers to negative integer array powers under grad -------------
# JAX 0.10.2 (docs/sharp_bits.md: an integer to a negative integer power is 0):
# grad(lambda x: sum(x * 2 ** jnp.array([-1, 2])))([1.5, 2.]) = [0, 4];
# grad(lambda x, e: sum(x * e ** e))(x, [-1, 2]) = [-1, 4];
# grad(lambda x, e: sum(x ** e * 2 ** e))(x, [-1, 2]) = [-0, 16] and its
# hessian diag [0, 8] (a float base with an int exponent array differentiates).
X = np.array([1.5, 2.0], np.float32)


def const_exponent(x):
    return jnp.sum(x * 2 ** jnp.array([-1, 2]))


def self_power(x, e):
    return jnp.sum(x * e**e)


def float_base(x, e):
    return jnp.sum(x**e * 2**e)


@pytest.mark.parametrize("transform", ["grad", "jit(grad)", "vmap(grad)"])
def test_integer_negative_power_under_grad_is_jaxs_zero(transform):
    e = jnp.array([-1, 2])
    cases = [
        (lambda x, e: const_exponent(x), [0.0, 4.0]),
        (self_power, [-1.0, 4.0]),
        (float_base, [0.0, 16.0]),
    ]
    for fn, want in cases:
        g = srcjax.grad(fn)
        if transform == "jit(grad)":
            g = srcjax.jit(g)
        if transform == "vmap(grad)":
            got = srcjax.vmap(g, (0, None))(jnp.asarray(np.stack([X, X])), e)
            np.testing.assert_allclose(np.asarray(got), [want, want], rtol=1e-6)
        else:
            np.testing.assert_allclose(np.asarray(g(jnp.asarray(X), e)), want, rtol=1e-6)


def test_integer_negative_power_second_derivative():
    e = jnp.array([-1, 2])
    h = srcjax.hessian(float_base)(jnp.asarray(X), e)
    np.testing.assert_allclose(np.asarray(h), [[0.0, 0.0], [0.0, 8.0]], atol=1e-6)
    # a float exponent array: both derivatives as JAX (x: y x^(y-1), y: log(x) x^y)
    y = jnp.array([0.7, 3.0])
    gx, gy = srcjax.grad(lambda x, y: jnp.sum(x**y), (0, 1))(jnp.asarray(X), y)
    np.testing.assert_allclose(np.asarray(gx), [0.61983, 12.0], rtol=1e-5)
    np.testing.assert_allclose(np.asarray(gy), [0.53854, 5.54518], rtol=1e-5)


def test_python_number_powers_stay_python():
    def f(x, n):
        k = n ** (n - 3)  # a Python int to a negative power: Python's 0.5
        return jnp.sum(x) * k

    np.testing.assert_array_equal(np.asarray(srcjax.grad(f)(jnp.asarray(X), 2)), [0.5, 0.5])


# -- item 10 leftover: Python's round() of an array inside transforms ------------------
# JAX 0.10.2 (Array.__round__): round(f32[0.3, 1.7, 2.5]) = int32 [0, 2, 2];
# round(x, 1) keeps float32; round(int32 [1, -3, 7] * 2) = int32 [2, -6, 14];
# jit(round)(2.5) = int32 2; grad of sum(x * round(x) + round(x, 1) * x) at
# [0.3, 1.7, 2.5] = [0.3, 3.7, 4.5] (round has no tangent); a static count
# round(n * 0.5) stays Python's (range of it, n = 5: b below gives 2.22).
XF = np.array([0.3, 1.7, 2.5], np.float32)


def rounds(x):
    return round(x), round(x, 1), round(x * 2)


def static_count(x):
    n = x.shape[0]
    s = 0.0
    for i in range(round(n * 0.5)):
        s = s + x[i] * round(n * 0.37, 2)
    return s


def rounded_products(x):
    return jnp.sum(x * round(x) + round(x, 1) * x)


@pytest.mark.parametrize("transform", ["jit", "vmap", "jit(vmap)"])
def test_round_of_an_array_is_jaxs_under_transforms(transform):
    t = {
        "jit": srcjax.jit,
        "vmap": srcjax.vmap,
        "jit(vmap)": lambda f: srcjax.jit(srcjax.vmap(f)),
    }[transform]
    r0, r1, r2 = t(rounds)(jnp.asarray(XF))
    assert r0.dtype == np.int32 and np.asarray(r0).tolist() == [0, 2, 2]
    assert r1.dtype == np.float32
    np.testing.assert_allclose(np.asarray(r1), [0.3, 1.7, 2.5], rtol=1e-6)
    assert r2.dtype == np.int32 and np.asarray(r2).tolist() == [1, 3, 5]
    i0, _, i2 = t(rounds)(jnp.array([1, -3, 7], jnp.int32))
    assert i0.dtype == np.int32 and np.asarray(i0).tolist() == [1, -3, 7]
    assert np.asarray(i2).tolist() == [2, -6, 14]


def test_round_of_a_traced_python_float_and_static_counts():
    r = srcjax.jit(lambda x: round(x))(2.5)
    assert r.dtype == np.int32 and int(r) == 2  # (half to even, an array as JAX's)
    np.testing.assert_allclose(float(srcjax.jit(static_count)(jnp.asarray(XF))), 2.22, rtol=1e-6)
    np.testing.assert_allclose(float(static_count(jnp.asarray(XF))), 2.22, rtol=1e-6)


@pytest.mark.parametrize("transform", ["grad", "jit(grad)"])
def test_round_has_no_tangent(transform):
    g = srcjax.grad(rounded_products)
    if transform == "jit(grad)":
        g = srcjax.jit(g)
    np.testing.assert_allclose(np.asarray(g(jnp.asarray(XF))), [0.3, 3.7, 4.5], rtol=1e-6)
