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
    if mode == "vmap":
        return srcjax.vmap(f)(x)
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
