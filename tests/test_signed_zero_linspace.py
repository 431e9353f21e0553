"""Signed zeros, geomspace's endpoint and linspace's bits as JAX's (user9's
report, items 3-4). Expected values recorded from JAX 0.10.2 (bit patterns as
unsigned ints)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

X = np.array([-0.0, 0.0, -0.3, -1.4, 0.3, -0.0], np.float32)
Y = np.array([-0.7, -0.7, -0.7, 0.7, 0.7, np.inf], np.float32)
# JAX 0.10.2: x // y, x % y (their signs are the point)
FLOORDIV = [-0.0, -0.0, -0.0, -2.0, 0.0, 0.0]
MOD = [-0.0, 0.0, -0.3, -0.0, 0.3, -0.0]


def _bits_equal(got, want):
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def _divide_and_sign(x, y):
    return x // y, x % y, jnp.floor_divide(x, y), jnp.mod(x, y), jnp.sign(x), 1.0 / jnp.sign(x)


@pytest.mark.parametrize("jit", [False, True])
def test_zero_signs_follow_jax(jit):
    f = srcjax.jit(_divide_and_sign) if jit else _divide_and_sign
    q, m, q2, m2, s, inv = f(jnp.asarray(X), jnp.asarray(Y))
    for got, want in ((q, FLOORDIV), (q2, FLOORDIV), (m, MOD), (m2, MOD)):
        _bits_equal(got, want)
    _bits_equal(s, [-0.0, 0.0, -1.0, -1.0, 1.0, -0.0])
    assert inv[0] == -np.inf and inv[1] == np.inf
    assert np.signbit(jnp.sign(-0.0)) and np.signbit(jnp.floor_divide(-0.0, -0.7))
    _bits_equal(jnp.divmod(jnp.float32(-0.0), jnp.float32(0.7)), [0.0, -0.0])


def test_log10_and_geomspace_endpoints_exact():
    np.testing.assert_array_equal(
        np.asarray(jnp.log10(jnp.array([1000.0, 100.0, 0.001, 7.0]))).view(np.uint32),
        [1077936128, 1073741824, 3225419776, 1062754393],
    )
    assert jnp.geomspace(1, 1000, 4)[-1].item() == 1000.0
    assert srcjax.jit(lambda: jnp.geomspace(1.0, 1000.0, 4))()[-1].item() == 1000.0
    assert jnp.logspace(-3, 3, 7)[2].item() == 0.10000002384185791


LINSPACE_F16_BF16_F32 = [
    [0, 16042, 17066, 17664, 18090, 18474, 18688],
    [0, 16342, 16470, 16544, 16598, 16645, 16672],
    [0, 1070945622, 1079334230, 1084227584, 1087722838, 1090868566, 1092616192],
]


@pytest.mark.parametrize("k,dt", enumerate(["float16", "bfloat16", "float32"]))
def test_linspace_bits_match_jax(k, dt):
    pytest.importorskip("ml_dtypes")
    got = np.asarray(jnp.linspace(0, 10, 7, dtype=getattr(jnp, dt)))
    np.testing.assert_array_equal(
        got.view(np.uint16 if k < 2 else np.uint32), LINSPACE_F16_BF16_F32[k]
    )
    jitted = np.asarray(srcjax.jit(lambda a: jnp.linspace(a, 10, 7, dtype=getattr(jnp, dt)))(0.0))
    np.testing.assert_array_equal(jitted.view(got.dtype), got)


def test_linspace_more_shapes_match_jax_bits():
    pytest.importorskip("ml_dtypes")
    got = np.asarray(jnp.linspace(0.3, 7.1, 6, endpoint=False)).view(np.uint32)
    np.testing.assert_array_equal(
        got, [1050253722, 1068988280, 1076118597, 1080872142, 1083878059, 1086254832]
    )
    a = np.array([0.5, -2.25, 3.0], np.float32)
    b = np.array([4.0, 1.5, -7.75], np.float32)
    np.testing.assert_array_equal(
        np.asarray(jnp.linspace(a, b, 5)).view(np.uint32),
        [
            [1056964608, 3222274048, 1077936128],
            [1068498944, 3215458304, 1050673152],
            [1074790400, 3200253952, 3222798336],
            [1078460416, 1058013184, 3231842304],
            [1082130432, 1069547520, 3237478400],
        ],
    )
    np.testing.assert_array_equal(
        np.asarray(jnp.linspace(-1.7, 3.3, 11, dtype=jnp.bfloat16)).view(np.uint16),
        [49114, 49050, 48949, 48712, 16024, 16204, 16295, 16358, 16403, 16435, 16467],
    )
    np.testing.assert_array_equal(
        np.asarray(jnp.linspace(2.5, -9.1, 13, dtype=jnp.float16)).view(np.uint16),
        [16640, 15906, 14474, 46696, 48502, 49322, 49818, 50244, 50492, 50739, 50986, 51217, 51341],
    )
    assert jnp.linspace(-3, 7, 6, dtype=jnp.int32).tolist() == [-3, -1, 0, 3, 5, 7]
    assert jnp.linspace(0, 10, 7, retstep=True)[1].item() == 1.6666667461395264
