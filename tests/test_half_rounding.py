"""bfloat16/float16 arithmetic rounded as JAX rounds it (fresh-user bug F4-04):
reductions accumulate in float32 and round once (JAX's
``_upcast_f16_for_computation``), ``lax.rsqrt`` is computed in float32 and
rounded once, and float16 ``x / python_float`` is XLA's multiplication by the
float16 reciprocal of the constant. Oracle: values recorded from jax 0.10.2
(CPU) on the fixed input ``X``."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

ml_dtypes = pytest.importorskip("ml_dtypes")

X = np.random.default_rng(4).normal(size=(4, 8)).astype(np.float32)

# jax 0.10.2, x = jnp.asarray(X).astype(dtype); the first 8 values of each result
WANT = {
    "bfloat16": {
        "sum": [-0.625, 2.03125, -3.078125, -2.71875],
        "mean": [-0.078125, 0.25390625, -0.384765625, -0.33984375],
        "var": [0.83984375, 1.5390625, 0.703125, 1.3359375],
        "std": [0.91796875, 1.2421875, 0.83984375, 1.15625],
        "rsqrt": [1.1484375, 1.90625, 0.75390625, 1.1484375, 0.7578125, 3.078125, 1.171875,
                  2.015625],
        "div": [-0.7265625, -0.1943359375, 1.8515625, 0.734375, -1.828125, -0.00579833984375,
                -0.6953125, 0.1650390625],
        "softmax": [0.045654296875, 0.0732421875, 0.4609375, 0.1689453125, 0.0167236328125,
                    0.08642578125, 0.046875, 0.10107421875],
        "lse": [2.4375, 3.015625, 2.046875, 2.328125],
    },
    "float16": {
        "sum": [-0.625, 2.029296875, -3.083984375, -2.716796875],
        "mean": [-0.078125, 0.253662109375, -0.385498046875, -0.339599609375],
        "var": [0.83935546875, 1.541015625, 0.70263671875, 1.3330078125],
        "std": [0.916015625, 1.2412109375, 0.83837890625, 1.154296875],
        "rsqrt": [1.1533203125, 1.908203125, 0.7529296875, 1.1474609375, 0.7578125,
                  3.083984375, 1.17578125, 2.005859375],
        "div": [-0.724609375, -0.194091796875, 1.849609375, 0.732421875, -1.82421875,
                -0.0057830810546875, -0.69287109375, 0.165283203125],
        "softmax": [0.04547119140625, 0.07330322265625, 0.4609375, 0.168701171875,
                    0.0169219970703125, 0.08685302734375, 0.04681396484375, 0.10125732421875],
        "lse": [2.439453125, 3.013671875, 2.0390625, 2.32421875],
    },
}  # fmt: skip

OPS = {
    "sum": lambda x: x.sum(-1),
    "mean": lambda x: x.mean(-1),
    "var": lambda x: jnp.var(x, -1),
    "std": lambda x: jnp.std(x, -1),
    "rsqrt": lambda x: lax.rsqrt(jnp.abs(x) + 0.1),
    "div": lambda x: x / 0.9,
    "softmax": lambda x: srcjax.nn.softmax(x, -1)[0],
    "lse": lambda x: srcjax.nn.logsumexp(x, -1),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("how", ["eager", "jit"])
def test_half_precision_rounds_as_jax(dtype, op, how):
    dt = jnp.dtype(dtype)
    x = jnp.asarray(X).astype(dt)
    f = OPS[op] if how == "eager" else srcjax.jit(OPS[op])
    r = f(x)
    assert r.dtype == dt
    got = np.asarray(r).astype(np.float32).ravel()[:8].tolist()
    assert got == WANT[dtype][op]


def test_rsqrt_float16_under_vmap_and_grad():
    a = np.abs(X[:2]).astype(np.float16) + np.float16(0.1)
    want = np.asarray(WANT["float16"]["rsqrt"], np.float16)
    np.testing.assert_array_equal(np.asarray(srcjax.vmap(lax.rsqrt)(a)).ravel()[:8], want)
    # jax 0.10.2: grad(lambda a: lax.rsqrt(a).sum())(float16 [0.5, 2, 3])
    g = srcjax.grad(lambda a: lax.rsqrt(a).sum())(np.array([0.5, 2.0, 3.0], np.float16))
    assert g.dtype == np.float16
    np.testing.assert_allclose(np.asarray(g, np.float32), [-1.414, -0.1768, -0.0962], rtol=2e-3)


def test_float32_rsqrt_and_sums_unchanged():
    x = np.abs(X) + np.float32(0.1)
    np.testing.assert_array_equal(np.asarray(lax.rsqrt(x)), 1 / np.sqrt(x))
    np.testing.assert_array_equal(np.asarray(jnp.sum(X, -1)), X.sum(-1))


B = np.array([True, False])
T = np.array([True, True])
# jax 0.10.2: int32 results for bool operands (NumPy: int8)
BOOL_CASES = {
    "pow": (lambda a, b: a**b, [1, 0]),
    "floordiv": (lambda a, b: a // b, [1, 0]),
    "pow_true": (lambda a, b: a**True, [1, 0]),
    "floordiv_true": (lambda a, b: a // True, [1, 0]),
}


@pytest.mark.parametrize("case", sorted(BOOL_CASES))
@pytest.mark.parametrize("how", ["eager", "jit", "vmap"])
def test_bool_power_and_floor_divide_are_int32(case, how):
    """F4-07: ``bool ** bool`` and ``bool // bool`` are int32 in JAX."""
    f, want = BOOL_CASES[case]
    g = {"eager": f, "jit": srcjax.jit(f), "vmap": srcjax.vmap(f)}[how]
    r = g(jnp.asarray(B), jnp.asarray(T))
    assert r.dtype == np.int32
    assert np.asarray(r).tolist() == want
