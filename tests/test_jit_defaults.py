"""jit of a function whose call leaves out parameters with defaults: JAX calls
the Python function with only the passed arguments, so a default is a Python
constant of the trace (weakly typed, static for control flow and shapes).
srcjax's specialization binds such a literal default as a constant of the code
(``n=3 (default)``), as it binds static arguments; an argument passed for it is
an argument as any other. Expected values, dtypes and weak types: JAX 0.10.2
(``jax.jit(f)(*args)``, x64 off), recorded by hand."""

import math

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

F32 = np.float32


def zeros_n(x, n=3):
    return jnp.zeros(n) + x


def float_of_default(x, n=4):
    return x + float(n)


def sqrt_of_default(x, n=4):
    return x * math.sqrt(n)


def loop_n(x, n=3):
    for i in range(n):
        x = x * 2.0 + i
    return x


def branch(x, n=3):
    if n > 2:
        return x * 2
    return x


def returns_default(x, n=3):
    return n


def default_times_float(x, n=3):
    return n * 0.5


def scale(x, s=2.0):
    return x * s


def fori_n(x, n=5):
    return lax.fori_loop(0, n, lambda i, c: c + i, x)


def kwonly(x, *, n=3):
    return jnp.zeros(n) + x


def axis_default(x, axis=(0, 1)):
    return jnp.sum(x, axis=axis)


def mode_default(x, mode="sum"):
    return jnp.sum(x) if mode == "sum" else jnp.max(x)


# (name, f, args, JAX's value, dtype, weak_type)
CASES = [
    ("zeros_n", zeros_n, (F32(1.5),), [1.5, 1.5, 1.5], "float32", False),
    ("float_of_default", float_of_default, (np.ones(2, np.int32),), [5.0, 5.0], "float32", True),
    ("sqrt_of_default", sqrt_of_default, (np.ones(2, np.float16),), [2.0, 2.0], "float16", False),
    ("loop_n", loop_n, (np.ones(3, F32),), [12.0, 12.0, 12.0], "float32", False),
    ("branch", branch, (F32(1.5),), 3.0, "float32", False),
    ("returns_default", returns_default, (F32(1.5),), 3, "int32", True),
    ("default_times_float", default_times_float, (F32(1.0),), 1.5, "float32", True),
    ("scale", scale, (np.ones(2, np.float16),), [2.0, 2.0], "float16", False),
    ("fori_n", fori_n, (F32(0.5),), 10.5, "float32", False),
    ("kwonly", kwonly, (F32(1.0),), [1.0, 1.0, 1.0], "float32", False),
    ("axis_default", axis_default, (np.ones((2, 3), F32),), 6.0, "float32", False),
    ("mode_default", mode_default, (np.arange(3.0, dtype=F32),), 3.0, "float32", False),
]


@pytest.mark.parametrize("name, f, args, want, dtype, weak", CASES, ids=[c[0] for c in CASES])
def test_an_unpassed_default_is_jaxs_python_constant(name, f, args, want, dtype, weak):
    out = srcjax.jit(f)(*args)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(want, dtype))
    assert out.dtype == np.dtype(dtype)
    assert out.weak_type is weak


def test_the_specialization_binds_the_default_as_a_constant():
    text = srcjax.source(srcjax.jit(loop_n), np.ones(3, F32))
    assert "n=3 (default)" in text.splitlines()[0]
    assert "for i in range(3):" in text  # the loop's trip count known
    text = srcjax.source(srcjax.jit(kwonly), F32(1.0))
    assert "n=3 (default)" in text.splitlines()[0]


def test_a_passed_argument_is_still_an_argument():
    jitted = srcjax.jit(loop_n)
    x = np.ones(3, F32)
    np.testing.assert_array_equal(np.asarray(jitted(x)), [12.0, 12.0, 12.0])
    # JAX: n passed is traced (an int32 scalar); Python's loop over it then fails
    # in JAX, srcjax runs it: the value is what the loop computes
    np.testing.assert_array_equal(np.asarray(jitted(x, 1)), [2.0, 2.0, 2.0])
    np.testing.assert_array_equal(np.asarray(jitted(x, n=2)), [5.0, 5.0, 5.0])
    np.testing.assert_array_equal(np.asarray(jitted(x)), [12.0, 12.0, 12.0])
    text = srcjax.source(jitted, x, 2)
    assert "(default)" not in text.splitlines()[0]


def test_a_default_that_is_no_literal_is_read_when_called():
    w = np.arange(3.0, dtype=F32)

    def with_array(x, w=w):
        return x * w

    out = srcjax.jit(with_array)(F32(2.0))
    np.testing.assert_array_equal(np.asarray(out), [0.0, 2.0, 4.0])


def test_jit_of_grad_with_a_default():
    def loss(x, n=3):
        return jnp.sum(x**n)

    # JAX 0.10.2: jax.jit(jax.grad(loss))(2 * ones(2)) == [12, 12]
    out = srcjax.jit(srcjax.grad(loss))(np.full(2, 2.0, F32))
    np.testing.assert_array_equal(np.asarray(out), [12.0, 12.0])


def _float_of_constant(x):
    return x + float(4)


def _int_of_constant(x):
    return jnp.zeros(int(2.7)) + x


def _shadowed_float(x):
    float = jnp.float16  # noqa: A001 - the function's own name, no builtin
    return x + float(4)


def test_a_conversion_of_a_constant_is_a_weak_python_number():
    # (found with float(n) of a default) JAX 0.10.2: [5, 5] float32, weak_type=True;
    # zeros(int(2.7)) + 1.5: [1.5, 1.5]; a shadowing float16: [5, 5] float16
    out = srcjax.jit(_float_of_constant)(np.ones(2, np.int32))
    assert out.dtype == np.float32 and out.weak_type is True
    np.testing.assert_array_equal(np.asarray(out), [5.0, 5.0])
    out = srcjax.jit(_int_of_constant)(F32(1.5))
    np.testing.assert_array_equal(np.asarray(out), [1.5, 1.5])
    out = srcjax.jit(_shadowed_float)(np.ones(2, np.int32))
    assert out.dtype == np.float16
    np.testing.assert_array_equal(np.asarray(out), [5.0, 5.0])


def _vmap_of_defaulted_lambda(x):
    return srcjax.vmap(lambda r, k=3: r * k)(x)


def _grad_of_defaulted_lambda(x):
    return srcjax.grad(lambda y, m=3: jnp.sum(y**m))(x)


def test_a_transformed_lambda_with_a_literal_default_inside_jit():
    # the lifted lambda had no __defaults__: vmap's code asked for k
    # ("lifted_vmap() missing a required positional argument: 'k'").
    # JAX 0.10.2: jit(vmap(lambda r, k=3: r * k))(arange(3.)) == [0, 3, 6];
    # jit(grad(lambda y, m=3: sum(y ** m)))(2 * ones(2)) == [12, 12]
    x = np.arange(3.0, dtype=F32)
    np.testing.assert_array_equal(np.asarray(srcjax.jit(_vmap_of_defaulted_lambda)(x)), [0, 3, 6])
    y = np.full(2, 2.0, F32)
    np.testing.assert_array_equal(np.asarray(srcjax.jit(_grad_of_defaulted_lambda)(y)), [12, 12])


def test_a_transformed_lambda_with_a_default_read_from_a_local_inside_jit():
    """Session 15's debt: ``vmap(lambda r, k=n: ...)`` inside jit with ``n`` a local
    raised "lifted_vmap() missing a required positional argument: 'k'". The
    default is evaluated where the lambda is written (a loop's index each trip,
    a traced sum). Expected: JAX 0.10.2, ``jax.jit(f)(x)``, recorded."""
    x = np.arange(1, 4, dtype=F32)

    def per_trip(x):
        outs = []
        for i in range(3):
            outs.append(srcjax.vmap(lambda r, k=i: r * k)(x))
        return jnp.stack(outs)

    def traced(x):
        n = x.shape[0]
        s = jnp.sum(x)
        return srcjax.vmap(lambda r, k=n, m=s: r * k + m)(x)

    def nested(x):
        s = jnp.sum(x)
        return srcjax.grad(lambda r, k=s: jnp.sum(srcjax.vmap(lambda q, j=k: q * j)(r)) ** 2)(x)

    cases = [
        (per_trip, [[0.0, 0.0, 0.0], [1.0, 2.0, 3.0], [2.0, 4.0, 6.0]]),
        (traced, [9.0, 12.0, 15.0]),
        (nested, [432.0, 432.0, 432.0]),
    ]
    for f, want in cases:
        for g in (srcjax.jit(f), f):
            got = np.asarray(g(x))
            assert got.dtype == np.float32
            np.testing.assert_allclose(got, np.array(want, F32), rtol=1e-6)
