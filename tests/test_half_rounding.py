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


def _sequential_reference(x):
    """Running sums along the last axis, each float32 sum rounded to x's dtype."""
    out, s = np.empty_like(x), np.zeros(x.shape[:-1], x.dtype)
    for i in range(x.shape[-1]):
        s = (s.astype(np.float32) + x[..., i].astype(np.float32)).astype(x.dtype)
        out[..., i] = s
    return out


# jax 0.10.2 jnp.cumsum(x, -1) of X (4 x 8) in each dtype, row 0 and the last row
CUMSUM_WANT = {
    "float16": (
        [
            -0.65185546875,
            -0.82666015625,
            0.83740234375,
            1.49609375,
            -0.1455078125,
            -0.1507568359375,
            -0.7744140625,
            -0.6259765625,
        ],
        [
            1.482421875,
            -0.34765625,
            -0.350830078125,
            -1.2431640625,
            -0.46728515625,
            -2.583984375,
            -2.927734375,
            -2.716796875,
        ],
    ),
    "bfloat16": (
        [
            -0.65234375,
            -0.828125,
            0.8359375,
            1.5,
            -0.140625,
            -0.1455078125,
            -0.76953125,
            -0.62109375,
        ],
        [1.484375, -0.34375, -0.34765625, -1.234375, -0.45703125, -2.578125, -2.921875, -2.71875],
    ),
}
# jax 0.10.2: columns [15, 16, 40, 255, 256, 299] of jnp.cumsum(L, -1) for
# L = default_rng(5).normal(size=(3, 300)) in each dtype (blocks of 16, two levels)
LONG = np.random.default_rng(5).normal(size=(3, 300)).astype(np.float32)
LONG_COLS = [15, 16, 40, 255, 256, 299]
LONG_WANT = {
    "float16": [[-1.51171875, -1.595703125, -11.71875, -12.7265625, -12.4296875, -12.078125],
                [-2.2421875, -3.56640625, -0.7734375, 3.3515625, 3.642578125, -7.625],
                [2.333984375, 3.52734375, 12.671875, 21.25, 19.625, 9.703125]],
    "bfloat16": [[-1.5078125, -1.59375, -11.6875, -12.625, -12.3125, -11.9375],
                 [-2.234375, -3.5625, -0.75, 3.4375, 3.734375, -7.5625],
                 [2.328125, 3.53125, 12.6875, 21.125, 19.5, 9.5625]],
}  # fmt: skip


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_half_cumsum_is_xlas_scan(dtype):
    """F4-04: JAX's float16/bfloat16 cumsum is XLA's reduce-window: a sequential
    rounded scan up to 16 elements (recorded values), blocks of 16 beyond."""
    dt = jnp.dtype(dtype)
    x = X.astype(dt)
    for f in (lambda v: jnp.cumsum(v, -1), srcjax.jit(lambda v: jnp.cumsum(v, -1))):
        r = np.asarray(f(x)).astype(np.float32)
        assert r[0].tolist() == CUMSUM_WANT[dtype][0]
        assert r[-1].tolist() == CUMSUM_WANT[dtype][1]
    # up to 16 elements: the sequential rounded scan; axis 0 and axis=None agree
    np.testing.assert_array_equal(np.asarray(jnp.cumsum(x, 0)), _sequential_reference(x.T).T)
    np.testing.assert_array_equal(
        np.asarray(jnp.cumsum(x[:2])), _sequential_reference(x[:2].ravel())
    )
    long = np.asarray(jnp.cumsum(LONG.astype(dt), -1)).astype(np.float32)
    assert long[:, LONG_COLS].tolist() == LONG_WANT[dtype]
    long0 = np.asarray(jnp.cumsum(LONG.astype(dt).T, 0)).astype(np.float32)
    assert long0.T[:, LONG_COLS].tolist() == LONG_WANT[dtype]
