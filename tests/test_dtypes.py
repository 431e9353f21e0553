"""JAX dtype semantics: canonical dtypes, weak typing, the promotion lattice.

Expected values are JAX's (its type-promotion table, and what ``jax.numpy``
returns with ``jax_enable_x64`` off, the default, and on).
"""

from __future__ import annotations

import numpy as np
import pytest

import srcjax
import srcjax.nn as nn
import srcjax.numpy as jnp
import srcjax.scipy.special as special
from srcjax import dtypes
from srcjax.config import config

F16, F32, F64 = np.float16, np.float32, np.float64
I8, I16, I32, I64 = np.int8, np.int16, np.int32, np.int64
U8, U32, U64 = np.uint8, np.uint32, np.uint64
C64, C128 = np.complex64, np.complex128


@pytest.fixture
def x64():
    old = config.jax_enable_x64
    config.update("jax_enable_x64", True)
    yield
    config.update("jax_enable_x64", old)


@pytest.fixture(autouse=True)
def _x64_off_by_default():
    old = config.jax_enable_x64
    config.update("jax_enable_x64", False)
    yield
    config.update("jax_enable_x64", old)


def a(dtype, values=(1, 2)):
    return np.array(values, dtype=dtype)


# -- config ---------------------------------------------------------------------------
def test_config_flag_roundtrip():
    assert config.jax_enable_x64 is False
    assert config.read("jax_enable_x64") is False
    config.update("jax_enable_x64", True)
    assert config.jax_enable_x64 is True and dtypes.x64_enabled()
    config.update("jax_enable_x64", False)
    assert dtypes.default_float() == F32


def test_config_unknown_option():
    with pytest.raises(AttributeError):
        config.update("jax_no_such_option", 1)
    with pytest.raises(AttributeError):
        config.jax_no_such_option  # noqa: B018


# -- canonical and default dtypes -----------------------------------------------------------
def test_canonicalize_x64_off():
    assert dtypes.canonicalize_dtype(F64) == F32
    assert dtypes.canonicalize_dtype(I64) == I32
    assert dtypes.canonicalize_dtype(U64) == U32
    assert dtypes.canonicalize_dtype(C128) == C64
    assert dtypes.canonicalize_dtype(float) == F32
    assert dtypes.canonicalize_dtype(F16) == F16
    assert dtypes.default_float() == F32 and dtypes.default_int() == I32


def test_canonicalize_x64_on(x64):
    assert dtypes.canonicalize_dtype(F64) == F64
    assert dtypes.canonicalize_dtype(I64) == I64
    assert dtypes.default_float() == F64 and dtypes.default_int() == I64


# -- the promotion lattice (JAX's type-promotion table) ------------------------------------
@pytest.mark.parametrize(
    "x, y, want",
    [
        (a(I32), 2.0, F32),  # int32 * weak float -> default float
        (a(F16), 2.0, F16),  # weak float keeps float16
        (a(F32), 2, F32),
        (a(I8), 1, I8),  # weak int keeps int8
        (a(U8), 1, U8),
        (a(I32), a(F16), F16),  # int meets float: the float (NumPy: float64)
        (a(U8), a(I8), I16),
        (a(F16), a(F32), F32),
        (a(F32), np.float64(1.0), F32),  # float64 canonicalized while x64 is off
        (a(U32), a(I32), I32),  # int64 -> int32 while x64 is off
        (a(np.bool_), 1, I32),
        (a(np.bool_), 1.0, F32),
        (a(F32), 1j, C64),
        (a(I32), 1j, C64),
        (1, 2.0, F32),
        (1, 2, I32),
        (True, False, np.bool_),
        (a(I16), a(F32), F32),
        (a(I64), a(F16), F16),
    ],
)
def test_result_type_x64_off(x, y, want):
    assert dtypes.result_type(x, y) == want
    assert dtypes.result_type(y, x) == want


@pytest.mark.parametrize(
    "x, y, want",
    [
        (a(I32), 2.0, F64),
        (a(I32), a(F32), F32),
        (a(I64), a(F32), F32),
        (a(U32), a(I32), I64),
        (a(U64), a(I64), F64),  # both reach f* -> default float
        (a(F32), np.float64(1.0), F64),
        (1, 2.0, F64),
        (a(I32), 1j, C128),
        (a(C64), a(I64), C64),
    ],
)
def test_result_type_x64_on(x64, x, y, want):
    assert dtypes.result_type(x, y) == want


def test_weak_type_flag():
    assert dtypes.result_type(2.0, return_weak_type_flag=True) == (F32, True)
    assert dtypes.result_type(a(F32), 2.0, return_weak_type_flag=True) == (F32, False)


def test_to_inexact():
    assert dtypes.to_inexact_dtype(I8) == F32
    assert dtypes.to_inexact_dtype(np.bool_) == F32
    assert dtypes.to_inexact_dtype(I32) == F32
    assert dtypes.to_inexact_dtype(I64) == F32  # int64 -> float64 -> float32 (x64 off)
    assert dtypes.to_inexact_dtype(F16) == F16


# -- what the primitives return (conformance cases 059 / 060) ---------------------------
def d(x):
    return np.asarray(x).dtype


def test_weak_promotion_in_operators():
    f32, f16, i32, i8, u8 = a(F32), a(F16), a(I32), a(I8), a(U8)
    assert d(jnp.multiply(f32, 2.0)) == F32
    assert d(jnp.multiply(f32, 2)) == F32
    assert d(jnp.multiply(f16, 2.0)) == F16
    assert d(jnp.multiply(i32, 2.0)) == F32
    assert d(jnp.multiply(i32, 2)) == I32
    assert d(jnp.add(i8, 1)) == I8
    assert d(jnp.add(u8, 1)) == U8
    assert d(jnp.add(i32, f16)) == F16
    assert d(jnp.add(u8, a(I8))) == I16
    assert d(jnp.add(f16, f32)) == F32
    assert d(jnp.add(f32, np.float64(1.0))) == F32
    assert d(jnp.power(i32, 2.0)) == F32
    assert d(jnp.multiply(np.float32(3.0), 2)) == F32
    np.testing.assert_array_equal(jnp.multiply(f32, 2.5), np.array([2.5, 5.0], F32))


def test_true_divide_of_ints_is_float32():
    assert d(jnp.true_divide(a(I32), a(I32))) == F32
    assert d(jnp.divide(a(I64), 2)) == F32
    assert d(jnp.true_divide(1, 2)) == F32
    assert float(jnp.true_divide(1, 2)) == 0.5


def test_true_divide_x64(x64):
    assert d(jnp.true_divide(a(I32), a(I32))) == F32  # JAX: int32 -> float32 even with x64
    assert d(jnp.true_divide(a(I64), a(I64))) == F64
    assert d(jnp.true_divide(a(I32), a(F32))) == F32


def test_python_scalars_default_to_32_bit():
    assert d(jnp.add(1, 2)) == I32
    assert d(jnp.add(1.0, 2)) == F32
    assert d(jnp.sin(1.0)) == F32
    assert d(jnp.exp(1)) == F32
    assert d(jnp.negative(3)) == I32
    assert d(jnp.abs(-3.0)) == F32
    assert d(jnp.maximum(1.0, 0.0)) == F32


def test_float64_inputs_are_canonicalized():
    x = np.ones(3)
    assert d(jnp.sin(x)) == F32
    assert d(jnp.add(x, x)) == F32
    assert d(jnp.negative(x)) == F32
    assert d(jnp.where(x > 0, x, 0.0)) == F32
    assert d(jnp.clip(x, 0.0, 1.0)) == F32


def test_transcendental_of_ints():
    assert d(jnp.sin(a(I32))) == F32
    assert d(jnp.sin(a(I8))) == F32  # NumPy: float16
    assert d(jnp.exp(a(np.bool_, [True, False]))) == F32
    assert d(jnp.sqrt(a(I16))) == F32
    assert d(jnp.arctan2(a(I32), a(I32))) == F32
    assert d(jnp.logaddexp(a(I8), a(I8))) == F32
    assert d(jnp.reciprocal(a(I32))) == F32
    assert d(jnp.sinc(a(I32))) == F32
    assert d(special.erf(a(I32))) == F32
    assert d(nn.sigmoid(a(I32))) == F32


def test_transcendental_x64(x64):
    assert d(jnp.sin(1.0)) == F64
    assert d(jnp.sin(a(I64))) == F64
    assert d(jnp.sin(a(I32))) == F32  # JAX: int32 -> float32 even with x64
    assert d(jnp.sin(a(F32))) == F32
    assert d(jnp.add(a(I32), a(F32))) == F32  # NumPy: float64
    assert d(jnp.add(a(F64), a(F32))) == F64
    assert d(jnp.multiply(a(I64), 2.0)) == F64


def test_rounding_keeps_ints():
    assert d(jnp.floor(a(I32))) == I32
    assert d(jnp.ceil(a(I32))) == I32
    assert d(jnp.round(a(I32))) == I32
    assert d(jnp.rint(a(I32))) == F32  # JAX: rint always gives floats
    assert d(jnp.round(2.5)) == F32
    assert float(jnp.round(2.5)) == 2.0  # ties to even


def test_complex_and_predicates():
    assert d(jnp.abs(a(C64, [1 + 1j]))) == F32
    assert d(jnp.abs(1 + 1j)) == F32
    assert d(jnp.isnan(a(F32))) == np.bool_
    assert d(jnp.less(a(I32), 1.5)) == np.bool_
    assert d(jnp.logical_and(a(I32), True)) == np.bool_


def test_where_and_nonzero():
    c = np.array([True, False])
    assert d(jnp.where(c, a(F32), 0)) == F32
    assert d(jnp.where(c, 1.0, 2.0)) == F32
    assert d(jnp.where(c, a(I32), 1.5)) == F32
    assert d(jnp.where(c, a(I32), a(F16))) == F16
    (idx,) = jnp.where(np.array([0.0, 1.0, 2.0]) > 0)
    assert idx.dtype == I32
    np.testing.assert_array_equal(idx, [1, 2])
    (idx,) = jnp.where(np.array([0, 1, 1]), size=4, fill_value=-1)
    np.testing.assert_array_equal(idx, [1, 2, -1, -1])


def test_nn_dtypes():
    x = a(F32, [1000.0, 1001.0, 1002.0])
    assert d(nn.softmax(x)) == F32
    np.testing.assert_allclose(nn.softmax(x), [0.09003057, 0.24472848, 0.66524094], rtol=1e-6)
    assert d(nn.one_hot(a(I32, [0, 2]), 3)) == F32
    np.testing.assert_array_equal(
        nn.one_hot(np.array([0, 2, 5]), 3), np.eye(3)[[0, 2]].tolist() + [[0, 0, 0]]
    )
    assert d(nn.relu(a(I32, [-1, 2]))) == I32
    assert d(nn.gelu(a(F16, [1.0]))) == F16


def test_logaddexp_large_values():
    got = jnp.logaddexp(1000.0, 1000.0)
    assert d(got) == F32
    np.testing.assert_allclose(got, 1000.6931762695312, rtol=1e-7)


def test_dtype_names_exported():
    # (JAX's scalar types: equal to NumPy's, called they give Arrays; test_scalar_types)
    assert jnp.float32 == np.float32 and jnp.int32 == np.int32 and jnp.bool_ == np.bool_
    assert jnp.ndarray is srcjax.Array  # (JAX: jnp.ndarray is jax.Array; main 134711d)
    assert jnp.newaxis is None and jnp.pi == np.pi and np.isinf(jnp.inf)
    assert jnp.dtype("float32") == F32


# -- non-elementwise primitives (call_dtypes._jax_dtypes) ----------------------------
def test_products_and_joins_promote_like_jax():
    # user report P7; expected dtypes and values from JAX 0.10.2 (x64 off)
    i, f = np.arange(4, dtype=I32), np.ones(4, F32)
    assert d(jnp.concatenate([i, f])) == F32  # NumPy: float64
    assert d(jnp.concatenate([i, f.astype(F16)])) == F16
    assert d(jnp.stack([i, f])) == d(jnp.hstack([i, f])) == d(jnp.vstack([i, f])) == F32
    assert d(jnp.append(i, f)) == F32
    np.testing.assert_array_equal(jnp.dot(i, f), np.float32(6.0))
    assert d(jnp.dot(i, f)) == d(jnp.inner(i, f)) == d(jnp.vdot(i, f)) == F32
    assert d(jnp.outer(i, f)) == d(jnp.kron(i, f)) == d(jnp.tensordot(i, f, 1)) == F32
    assert d(jnp.matmul(i, f)) == d(jnp.einsum("i,i->", i, f)) == F32
    assert d(jnp.dot(2.0, f)) == F32 and d(jnp.dot(2.0, f.astype(F16))) == F16  # weak 2.0
    assert d(jnp.linalg.solve(np.eye(2, dtype=I32), np.ones(2, F32))) == F32


def test_float64_inputs_are_canonicalized_beyond_elementwise():
    # user report P7: jnp.sin(float64) was float32 already, these were float64
    x = np.ones(4)
    assert d(jnp.sum(x)) == d(jnp.mean(x)) == d(jnp.cumsum(x)) == F32
    assert d(jnp.matmul(x, x)) == d(jnp.sort(x)) == d(jnp.take(x, np.array([0, 1]))) == F32
    assert d(jnp.linalg.inv(np.eye(2))) == d(jnp.linalg.inv(np.eye(2, dtype=I32))) == F32
    assert [d(v) for v in jnp.linalg.slogdet(np.eye(2))] == [F32, F32]
    assert [d(v) for v in jnp.linalg.eigh(np.eye(2))] == [F32, F32]
    assert d(jnp.sum(2.5)) == d(jnp.full_like(x, 1.5)) == F32
    assert d(jnp.linalg.norm(x)) == F32 and float(jnp.linalg.norm(x)) == 2.0


def test_float64_inputs_beyond_elementwise_x64(x64):
    x = np.ones(4)
    assert d(jnp.sum(x)) == d(jnp.matmul(x, x)) == F64
    assert d(jnp.concatenate([a(I32), a(F32)])) == F32  # JAX: float32 even with x64
    assert d(jnp.dot(a(I64), a(F64))) == F64


def test_gradients_keep_float32():
    # user report P7 (grads were float64); JAX 0.10.2 values
    import srcjax

    g = srcjax.grad(lambda s: jnp.sum(jnp.linalg.cholesky(s)))(np.eye(2, dtype=F32) * 2)
    assert d(g) == F32
    np.testing.assert_allclose(g, np.full((2, 2), 0.35355335), rtol=1e-6)
    g = srcjax.grad(lambda x: jnp.quantile(x, 0.3))(np.arange(4, dtype=F32))
    assert d(g) == F32
    np.testing.assert_allclose(g, [0.09999996, 0.90000004, 0.0, 0.0], rtol=1e-6)
    g = srcjax.grad(lambda w: jnp.sum(jnp.dot(2.0, w)))(np.ones(4, F32))
    assert d(g) == F32
    np.testing.assert_array_equal(g, [2.0, 2.0, 2.0, 2.0])


def test_float_to_integer_astype_saturates_like_jax():
    """astype(uint8) of [-1, 300] gave [255, 44] (NumPy's undefined wraparound);
    JAX (XLA) saturates, maps NaN to 0 and truncates toward zero (fresh-user P9).
    Oracle: values recorded from JAX 0.10.2."""
    import srcjax

    x = np.array([-1.0, 300.0, np.nan, 1e10, -1e10, 2.7, -2.7], np.float32)
    want = {
        np.uint8: [0, 255, 0, 255, 0, 2, 0],
        np.int8: [-1, 127, 0, 127, -128, 2, -2],
        np.int32: [-1, 300, 0, 2147483647, -2147483648, 2, -2],
        np.uint32: [0, 300, 0, 4294967295, 0, 2, 0],
    }
    for dt, w in want.items():
        np.testing.assert_array_equal(jnp.astype(x, dt), w)
        got = srcjax.jit(lambda a, dt=dt: a.astype(dt))(x)
        assert got.dtype == dt
        np.testing.assert_array_equal(got, w)


def test_float_to_integer_asarray_saturates_like_jax():
    """User B (lower priority): jnp.asarray(x, dtype=uint8) / jnp.array of a float
    array wrapped (-1.0, 300.0 -> 255, 44) in jit; JAX converts an array as
    astype does, saturating (NaN -> 0). Oracle: JAX 0.10.2 (jit, vmap and grad:
    [0, 255, 0], [-1, 127, 0], grad [0, 255, 2])."""
    import srcjax

    x = np.array([-1.0, 300.0, np.nan], np.float32)
    u8 = srcjax.jit(lambda a: jnp.asarray(a, dtype=jnp.uint8))(x)
    assert u8.dtype == np.uint8
    np.testing.assert_array_equal(u8, [0, 255, 0])
    np.testing.assert_array_equal(jnp.asarray(x, dtype=jnp.uint8), [0, 255, 0])
    np.testing.assert_array_equal(jnp.array(x, dtype=jnp.int8), [-1, 127, 0])
    i8 = srcjax.jit(lambda a: jnp.array(a, dtype=jnp.int8))(x)
    np.testing.assert_array_equal(i8, [-1, 127, 0])
    np.testing.assert_array_equal(srcjax.vmap(lambda a: a.astype(jnp.int8))(x), [-1, 127, 0])
    np.testing.assert_array_equal(
        srcjax.vmap(lambda a: jnp.asarray(a, dtype=jnp.uint8))(x), [0, 255, 0]
    )
    y = np.array([-1.0, 300.0, 2.0], np.float32)
    g = srcjax.grad(lambda a: jnp.sum(jnp.asarray(a, dtype=jnp.uint8).astype(jnp.float32) * a))(y)
    np.testing.assert_array_equal(g, [0.0, 255.0, 2.0])


def _run_python(code: str) -> str:
    """stdout of ``code`` in a fresh interpreter that imports this checkout's srcjax."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=root + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_import_does_not_import_ml_dtypes():
    """ml_dtypes (0.15-0.5 s to import) is imported only when a bfloat16 is asked for."""
    assert _run_python("import sys, srcjax; print('ml_dtypes' in sys.modules)") == "False"


def test_bfloat16_imported_after_srcjax_joins_the_lattice():
    """A bfloat16 array from an ml_dtypes the user imported after srcjax promotes
    as in JAX (recorded from jax 0.10.2): a Python float keeps bfloat16,
    bfloat16 with float16 is float32, with int8 bfloat16."""
    pytest.importorskip("ml_dtypes")
    code = (
        "import numpy as np, srcjax.numpy as jnp, ml_dtypes\n"
        "from srcjax import dtypes\n"
        "x = np.array([1.0, 2.5], ml_dtypes.bfloat16)\n"
        "print(dtypes.result_type(x, 1.0), dtypes.promote_types(x.dtype, np.float16),\n"
        "      dtypes.promote_types(x.dtype, np.int8), jnp.add(x, 1.0).dtype)"
    )
    assert _run_python(code).split() == ["bfloat16", "float32", "bfloat16", "bfloat16"]


def test_missing_ml_dtypes_names_the_extra():
    """Without ml_dtypes, jnp.bfloat16 is an AttributeError naming srcjax[ml-dtypes]."""
    code = (
        "import sys\n"
        "sys.modules['ml_dtypes'] = None  # as if not installed\n"
        "import srcjax.numpy as jnp, srcjax.dtypes as d\n"
        "for get in (lambda: jnp.bfloat16, lambda: d.float8_e4m3fn):\n"
        "    try:\n"
        "        get()\n"
        "    except AttributeError as e:\n"
        "        print(e)\n"
        "print(jnp.float32(1.5) + 1.0)"
    )
    lines = _run_python(code).splitlines()
    assert len(lines) == 3 and all("'srcjax[ml-dtypes]'" in line for line in lines[:2])
    assert lines[0].startswith("srcjax.numpy.bfloat16 needs the ml_dtypes package")
    assert lines[2] == "2.5"
