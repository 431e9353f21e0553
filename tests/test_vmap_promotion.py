"""Python operators under vmap promote as JAX's (fresh-user F4-06) and
jnp.array of a list with typed elements takes their dtype (F4-03).

Expected dtypes and values recorded from JAX 0.10.2 (x64 off)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp


def _mul(p, q):
    return p * q


def _add(p, q):
    return p + q


def _div(p, q):
    return p / q


def _sub(p, q):
    return p - q


def _matmul(p, q):
    return p @ q


OPS = {"*": _mul, "+": _add, "/": _div, "-": _sub, "@": _matmul}

# (dtype of a, dtype of b, operator, JAX's dtype, JAX's values)
VMAP_CASES = [
    ("float16", "int32", "*", "float16", [[3.0, -14.0], [6.0, 20.0]]),
    ("int8", "float16", "+", "float16", [[4.0, -5.0], [5.0, 9.0]]),
    ("uint8", "bfloat16", "*", "bfloat16", [[3.0, -14.0], [6.0, 20.0]]),
    ("bool", "int8", "+", "int8", [[4, -7], [3, 6]]),
    ("int32", "int32", "/", "float32", [[1 / 3, -2 / 7], [1.5, 0.8]]),
    ("float16", "int32", "/", "float16", [[0.333251953125, -0.28564453125], [1.5, 0.7998046875]]),
    ("int8", "uint8", "-", "int16", [[-2, -247], [1, -1]]),
    ("float16", "int8", "@", "float16", [-11.0, 26.0]),
]


def _operands(da, db):
    if da == "bool":
        x = np.array([[True, False], [True, True]])
    else:
        x = np.array([[1, 2], [3, 4]]).astype(getattr(jnp, da))
    y = np.array([[3, -7], [2, 5]])
    y = y.astype(getattr(jnp, db))
    return jnp.asarray(x), jnp.asarray(y)


@pytest.mark.parametrize("da,db,op,dt,want", VMAP_CASES)
@pytest.mark.parametrize("mode", ["eager", "jit", "vmap", "jit_vmap"])
def test_mixed_operator_dtypes_as_jax(mode, da, db, op, dt, want):
    x, y = _operands(da, db)

    f = OPS[op]
    if mode == "vmap":
        out = srcjax.vmap(f)(x, y)
    elif mode == "jit_vmap":  # (jit writes vmap's calls as operators and promotes them)
        out = srcjax.jit(srcjax.vmap(f))(x, y)
    else:
        out = (srcjax.jit(f) if mode == "jit" else f)(x, y)
        if op == "@":
            out = jnp.stack([f(x[i], y[i]) for i in range(2)])
    assert str(out.dtype) == dt
    np.testing.assert_allclose(np.asarray(out, np.float64), np.asarray(want), rtol=1e-6)


def test_vmap_f16_times_typed_int_scalar():
    a = jnp.array([1.5, -2.25], jnp.float16)
    out = srcjax.vmap(lambda v: v * jnp.int32(3))(a)
    assert out.dtype == jnp.float16
    np.testing.assert_array_equal(np.asarray(out, np.float64), [4.5, -6.75])
    q = srcjax.vmap(lambda v, w: v / w)(a, jnp.array([3, 7], jnp.int32))
    assert q.dtype == jnp.float16
    np.testing.assert_array_equal(np.asarray(q, np.float64), [0.5, -0.321533203125])


def _mul_add(p, q):
    return p * q + p


def test_jit_of_vmap_writes_operators():
    # vmap writes a batched operator as its primitive's call (JAX's promotion);
    # jit, knowing the dtypes, writes it back as the operator its passes read
    # (CSE, algebra, fusion), casting only where NumPy's promotion differs
    a = jnp.asarray(np.array([[1.5, -2.0], [0.25, 3.0]], np.float32))
    b = jnp.asarray(np.array([[2.0, 4.0], [-1.0, 0.5]], np.float32))
    g = srcjax.jit(srcjax.vmap(_mul_add))
    np.testing.assert_array_equal(np.asarray(g(a, b)), [[4.5, -10.0], [0.0, 4.5]])
    src = srcjax.source(g, a, b)
    assert "jnp.multiply(" not in src and "jnp.add(" not in src, src
    assert "vmap of" in srcjax.source(srcjax.vmap(_mul_add), a, b)
    assert "jnp.multiply(" in srcjax.source(srcjax.vmap(_mul_add), a, b)
    x16 = jnp.asarray(np.array([[1.5, -2.25]], np.float16))
    i32 = jnp.asarray(np.array([[3, 7]], np.int32))
    out = g(x16, i32)
    assert out.dtype == jnp.float16
    np.testing.assert_array_equal(np.asarray(out, np.float64), [[6.0, -18.0]])


def _user_multiply(p, q):
    return jnp.multiply(p, q) + jnp.true_divide(p, q)


def test_jit_user_primitive_calls_as_operators():
    # a user's jnp.multiply / jnp.true_divide under jit: the operator form, with
    # JAX's dtype (float16 x int32 is float16; values recorded from JAX 0.10.2)
    x = jnp.asarray(np.array([1.5, -2.25], np.float16))
    y = jnp.asarray(np.array([3, 7], np.int32))
    out = srcjax.jit(_user_multiply)(x, y)
    assert out.dtype == jnp.float16
    np.testing.assert_array_equal(np.asarray(out, np.float64), [5.0, -16.078125])


# jnp.array / jnp.asarray of lists (F4-03): (elements, JAX's dtype, values)
LIST_CASES = [
    (lambda: [jnp.array(1, jnp.uint8), 2], "uint8", [1, 2]),
    (lambda: [np.float16(1), 2.5], "float16", [1.0, 2.5]),
    (lambda: [jnp.ones((), jnp.bfloat16), 2.5], "bfloat16", [1.0, 2.5]),
    (lambda: [np.float16(1), np.int32(2)], "float16", [1.0, 2.0]),
    (lambda: [jnp.array(1, jnp.uint8), 2.5], "float32", [1.0, 2.5]),
    (lambda: [[np.float16(1), 2], [3, 4]], "float16", [[1, 2], [3, 4]]),
    (lambda: (np.int8(1), True), "int8", [1, 1]),
    (lambda: [np.int64(1), 2], "int32", [1, 2]),
    (lambda: [np.float64(1), 2], "float32", [1.0, 2.0]),
    (lambda: [1, 2.5], "float32", [1.0, 2.5]),
]


@pytest.mark.parametrize("make,dt,want", LIST_CASES)
@pytest.mark.parametrize("fn", ["array", "asarray"])
def test_array_of_list_takes_typed_elements_dtype(fn, make, dt, want):
    out = getattr(jnp, fn)(make())
    assert str(out.dtype) == dt
    np.testing.assert_array_equal(np.asarray(out, np.float64), np.asarray(want, np.float64))


def _stack_bf16(x):
    return jnp.array([x, 2.5])


def _stack_u8(x):
    return jnp.array([x, 2])


@pytest.mark.parametrize(
    "mode",
    [
        "eager",
        "jit",
        "vmap",  # (the Python number is packed by a batch broadcast: still weak)
    ],
)
def test_array_of_list_in_transforms(mode):
    wrap = {"eager": lambda f: f, "jit": srcjax.jit, "vmap": srcjax.vmap}[mode]
    x = jnp.ones((), jnp.bfloat16)
    u = jnp.array(1, jnp.uint8)
    if mode == "vmap":
        x, u = jnp.ones(2, jnp.bfloat16), jnp.array([1, 3], jnp.uint8)
    out = wrap(_stack_bf16)(x)
    assert str(out.dtype) == "bfloat16"
    ou = wrap(_stack_u8)(u)
    assert str(ou.dtype) == "uint8"
    if mode == "vmap":
        np.testing.assert_array_equal(np.asarray(ou), [[1, 2], [3, 2]])
    else:
        np.testing.assert_array_equal(np.asarray(ou), [1, 2])


def test_vmap_array_of_list_rounds_the_python_number_once():
    # JAX 0.10.2: vmap(lambda v: jnp.array([v, 0.1]))(bf16 [1, 3]) is bfloat16,
    # 0.1 rounded once to bfloat16 (0.10009765625); jit of it the same
    x = jnp.array([1.0, 3.0], jnp.bfloat16)
    for wrap in (lambda f: f, srcjax.jit):
        out = wrap(srcjax.vmap(lambda v: jnp.array([v, 0.1])))(x)
        assert str(out.dtype) == "bfloat16"
        np.testing.assert_array_equal(
            np.asarray(out, np.float64), [[1.0, 0.10009765625], [3.0, 0.10009765625]]
        )
