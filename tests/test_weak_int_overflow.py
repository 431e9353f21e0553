"""A Python int beyond int32 meeting an array while x64 is off (session 15's
debt): ``x + 2**31`` with float32 ``x`` gave 2.1e9 in srcjax (NumPy computes in
float32); JAX converts the int to its weakly typed int32 first and raises
OverflowError, eagerly and under jit, vmap and grad. The same for every
elementwise ``jnp`` function's operand (``jnp.maximum(x, 2**31)``,
``jnp.where(c, x, 2**31)``, comparisons, ``%``) and every dtype of ``x``; not for
a power's exponent (``x ** 2**31`` is an integer power in JAX) nor for ints that
fit (``x + (2**31 - 1)``, ``x + -2**31``) nor with x64 on. Which calls raise:
JAX 0.10.2, recorded (each case ran with jax.numpy in place of srcjax.numpy)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

_BIG = 2**31  # a module-level constant (read as a global, no constant at normalize)

# (name, operand dtype, function): OverflowError in JAX 0.10.2 eager, jit, vmap
# (and grad where the operand is float32)
RAISES = [
    ("add", "float32", lambda x: x + 2**31),
    ("radd", "float32", lambda x: 2**31 + x),
    ("sub_neg", "float32", lambda x: x - 2**31),
    ("below", "float32", lambda x: x + (-(2**31) - 1)),
    ("mul_2_32", "float32", lambda x: x * 2**32),
    ("u32", "uint32", lambda x: x + 2**31),
    ("f16", "float16", lambda x: x + 2**31),
    ("c64", "complex64", lambda x: x + 2**31),
    ("gt", "float32", lambda x: x > 2**31),
    ("mod", "float32", lambda x: x % 2**40),
    ("jnp_add", "float32", lambda x: jnp.add(x, 2**31)),
    ("maximum", "float32", lambda x: jnp.maximum(x, 2**31)),
    ("where", "float32", lambda x: jnp.where(x > 0, x, 2**31)),
    ("clip", "float32", lambda x: jnp.clip(x, 0, 2**31)),
    ("global", "float32", lambda x: x + _BIG),
    ("global_i32", "int32", lambda x: x * _BIG),
    ("global_jnp", "float32", lambda x: jnp.maximum(x, _BIG)),
    # .at updates convert a Python int to int32 first, whatever x's dtype
    ("at_set", "float32", lambda x: x.at[0].set(2**31)),
    ("at_set_i32", "int32", lambda x: x.at[0].set(2**31)),
    ("at_set_below", "int32", lambda x: x.at[0].set(-(2**31) - 1)),
    ("at_set_i16", "int16", lambda x: x.at[0].set(2**31)),
    ("at_set_u32_2_32", "uint32", lambda x: x.at[0].set(2**32)),
    ("at_add", "float32", lambda x: x.at[0].add(2**31)),
    ("at_mul_slice", "int32", lambda x: x.at[:2].multiply(2**40)),
    ("at_min_global", "int32", lambda x: x.at[0].min(_BIG)),
]

# (name, dtype, function, JAX 0.10.2's value at ones(3) of dtype, its dtype)
ALLOWED = [
    ("in_range", "float32", lambda x: x + (2**31 - 1), 2147483648.0, "float32"),
    ("lowest", "float32", lambda x: x + -(2**31), -2147483648.0, "float32"),
    ("power", "float32", lambda x: x**2**31, 1.0, "float32"),
    ("float", "float32", lambda x: x + float(2**31), 2147483648.0, "float32"),
    ("u8_wraps", "uint8", lambda x: x + 300, 45, "uint8"),
    ("python_only", "float32", lambda x: x + (2**31 - 2**31 + 1), 2.0, "float32"),
]


def _modes(dtype):
    modes = ["eager", "jit", "vmap"]
    if dtype == "float32":
        modes.append("grad")
    return modes


def _run(mode, f, x):
    if mode == "eager":
        return f(x)
    if mode == "jit":
        return srcjax.jit(f)(x)
    if mode == "vmap":  # (a batch of two rows: .at[0] needs a row per example)
        return srcjax.vmap(f)(jnp.stack([x, x]))[1]
    return srcjax.grad(lambda x: jnp.sum(f(x)).astype(jnp.float32))(x)


@pytest.mark.parametrize("name,dtype,f", RAISES, ids=[c[0] for c in RAISES])
def test_int_beyond_int32_raises_as_jax(name, dtype, f):
    for mode in _modes(dtype):
        x = jnp.ones(3, dtype)
        with pytest.raises(OverflowError, match="too large to convert to int32"):
            _run(mode, f, x)


@pytest.mark.parametrize("name,dtype,f,want,wdt", ALLOWED, ids=[c[0] for c in ALLOWED])
def test_ints_jax_accepts(name, dtype, f, want, wdt):
    for mode in ("eager", "jit", "vmap"):
        r = _run(mode, f, jnp.ones(3, dtype))
        assert np.asarray(r).dtype == np.dtype(wdt), mode
        np.testing.assert_array_equal(np.asarray(r), np.full(3, want, wdt))


# (name, function, JAX 0.10.2's value at ones(3) of dtype, dtype): .at updates
# with ints JAX converts (uint32 takes [-2**31, 2**32); others wrap to x's dtype),
# and jnp.full/full_like, which wrap a Python int into the dtype (NumPy's astype:
# np.asarray(v) is int64/uint64, beyond those an OverflowError)
WRAPS = [
    ("at_set_u32", "uint32", lambda x: x.at[0].set(2**31), [2147483648, 1, 1], "uint32"),
    ("at_set_u32_neg", "uint32", lambda x: x.at[0].set(-(2**31)), [2147483648, 1, 1], "uint32"),
    ("at_set_i8", "int8", lambda x: x.at[0].set(300), [44, 1, 1], "int8"),
    ("at_add_i8", "int8", lambda x: x.at[0].add(300), [45, 1, 1], "int8"),
    ("at_set_i16", "int16", lambda x: x.at[1].set(70000), [1, 4464, 1], "int16"),
    ("at_set_u8_neg", "uint8", lambda x: x.at[0].set(-1), [255, 1, 1], "uint8"),
    ("at_set_lowest", "float32", lambda x: x.at[2].set(-(2**31)), [1, 1, -(2.0**31)], "float32"),
    (
        "full",
        "float32",
        lambda x: jnp.full(3, 2**31) + x.astype(jnp.int32),
        [-(2**31) + 1] * 3,
        "int32",
    ),
    ("full_global", "int32", lambda x: jnp.full(3, _BIG) * x, [-(2**31)] * 3, "int32"),
    ("full_2_32_5", "int32", lambda x: jnp.full(3, 2**32 + 5) + 0 * x, [5] * 3, "int32"),
    ("full_below", "int32", lambda x: jnp.full(3, -(2**31) - 1) + 0 * x, [2**31 - 1] * 3, "int32"),
    ("full_2_64_1", "int32", lambda x: jnp.full(3, 2**64 - 1) + 0 * x, [-1] * 3, "int32"),
    ("full_i8", "int8", lambda x: jnp.full(3, 300, dtype=jnp.int8) + 0 * x, [44] * 3, "int8"),
    ("full_u8", "uint8", lambda x: jnp.full(3, -1, dtype=jnp.uint8) + 0 * x, [255] * 3, "uint8"),
    ("full_like_i8", "int8", lambda x: jnp.full_like(x, 300), [44] * 3, "int8"),
    ("full_like_u32", "uint32", lambda x: jnp.full_like(x, -1), [2**32 - 1] * 3, "uint32"),
    ("full_like_f", "float32", lambda x: jnp.full_like(x, 2**64), [2.0**64] * 3, "float32"),
    (
        "lax_full",
        "int32",
        lambda x: srcjax.lax.full((3,), 2**31, jnp.int32) + 0 * x,
        [-(2**31)] * 3,
        "int32",
    ),
]


@pytest.mark.parametrize("name,dtype,f,want,wdt", WRAPS, ids=[c[0] for c in WRAPS])
def test_ints_jax_wraps(name, dtype, f, want, wdt):
    for mode in ("eager", "jit", "vmap"):
        r = _run(mode, f, jnp.ones(3, dtype))
        assert np.asarray(r).dtype == np.dtype(wdt), mode
        np.testing.assert_array_equal(np.asarray(r), np.asarray(want, wdt), err_msg=mode)


@pytest.mark.parametrize("v", [2**64, -(2**63) - 1])
def test_full_beyond_64_bits_raises_as_jax(v):
    # JAX 0.10.2: OverflowError "Python int too large to convert to C long"
    for g in (lambda: jnp.full(3, v), srcjax.jit(lambda: jnp.full(3, v))):
        with pytest.raises(OverflowError, match="too large to convert"):
            g()


def test_error_names_the_users_line():
    def f(x):
        y = jnp.sin(x)
        return y * 2**31  # the line named

    line = f.__code__.co_firstlineno + 2
    for g in (srcjax.jit(f), srcjax.vmap(f), srcjax.grad(lambda x: jnp.sum(f(x)))):
        with pytest.raises(OverflowError) as ei:
            g(jnp.ones(3))
        text = str(ei.value) + "".join(getattr(ei.value, "__notes__", []))
        assert f"test_weak_int_overflow.py:{line}" in text


def test_static_python_ints_stay_python_arithmetic():
    # JAX: a static int times 2**31 is Python's int (no array met): 3 * 2**31 // 2**31 == 3
    f = srcjax.jit(lambda x, n: x + (n * 2**31) // 2**31, static_argnums=1)
    np.testing.assert_array_equal(np.asarray(f(jnp.ones(2), 3)), np.full(2, 4.0, np.float32))


def test_x64_on_computes(x64):
    # with x64 on the int is an int64: JAX gives float64 2147483649.0 (x64 on,
    # float64 ones); srcjax the same under every transform
    for mode in ("eager", "jit", "vmap"):
        r = _run(mode, lambda x: x + 2**31, jnp.ones(3))
        np.testing.assert_array_equal(np.asarray(r), np.full(3, 2147483649.0))
