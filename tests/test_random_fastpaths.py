"""The samplers' paths for scalar parameters (srcjax/random/_samplers.py), which
skip the general path's array arithmetic on one-element arrays.

Oracles: values recorded from JAX 0.10.2 (CPU; both threefry schemes), and the
general path itself (the same parameters as one-element arrays), to the bit.
"""

import numpy as np
import pytest

import srcjax.numpy as jnp
from srcjax import random
from srcjax.config import config

# jax.random.randint(jax.random.PRNGKey(11), ...) under each scheme
JAX = {
    True: {
        "u32": [2621320024, 192726, 2156811667, 2116697347, 2718727930],
        "scalar": -6,
        "i16": [29621, 13555, 32512, 15056, 26567, -24444],
        "u8neg": [85, 211, 144, 0, 247, 20],
        "float_bounds": [6, 5, 6, 3],
        "zero_d": [[41, -25], [28, -4], [-69, 64]],
    },
    False: {
        "u32": [150333162, 3205562484, 1602574266, 2837977090, 3127071538],
        "scalar": -5,
        "i16": [4404, -27375, 9728, -12881, -3617, -18105],
        "u8neg": [228, 113, 128, 255, 47, 183],
        "float_bounds": [7, 7, 8, 2],
        "zero_d": [[-96, -3], [20, -69], [11, -29]],
    },
}


@pytest.fixture(params=[True, False], ids=["partitionable", "legacy"])
def scheme(request):
    old = config.read("jax_threefry_partitionable")
    config.update("jax_threefry_partitionable", request.param)
    yield request.param
    config.update("jax_threefry_partitionable", old)


def test_randint_scalar_bounds_recorded(scheme):
    want = JAX[scheme]
    k = random.PRNGKey(11)
    r = random.randint(k, (5,), 3, np.uint32(4000000000), jnp.uint32)
    assert r.dtype == np.uint32 and r.tolist() == want["u32"]
    r = random.randint(k, (), -7, 13)
    assert r.shape == () and r.dtype == np.int32 and int(r) == want["scalar"]
    r = random.randint(k, (6,), -30000, 40000, jnp.int16)  # maxval clipped to int16's
    assert r.dtype == np.int16 and r.tolist() == want["i16"]
    r = random.randint(k, (6,), -5, 300, jnp.uint8)  # both bounds clipped
    assert r.dtype == np.uint8 and r.tolist() == want["u8neg"]
    assert random.randint(k, (4,), 2.7, 9.9).tolist() == want["float_bounds"]
    r = random.randint(k, (3, 2), np.int32(-100), np.int32(100))
    assert r.tolist() == want["zero_d"]


@pytest.mark.parametrize(
    "dtype", [jnp.int8, jnp.uint8, jnp.int16, jnp.uint16, jnp.int32, jnp.uint32]
)
def test_randint_scalar_bounds_are_the_general_paths_numbers(scheme, dtype):
    info = np.iinfo(np.dtype(dtype))
    edges = [info.min, info.min + 1, -1, 0, 1, 2, 7, 100, info.max - 1, info.max, info.max + 1]
    edges = sorted({e for e in edges if -(2**31) <= e < 2**31})
    k = random.PRNGKey(5)
    for i, lo in enumerate(edges):
        for hi in edges[::2] + [lo]:
            k = random.fold_in(k, i)
            for shape in [(), (7,), (2, 3)]:
                a = random.randint(k, shape, lo, hi, dtype)
                # (one value: the same random words as one of shape (1,))
                general = shape or (1,)
                b = random.randint(k, general, np.full(general, lo), np.full(general, hi), dtype)
                b = b.reshape(shape)
                assert a.dtype == b.dtype and a.shape == b.shape == shape
                assert np.array_equal(a, b), (lo, hi, shape)


def _jax_search(a, v):
    """jnp.searchsorted(a, v, method="scan") as JAX writes it: a fixed number
    of halvings, NaN of a sorting last (the oracle, one value at a time)."""
    n = len(a)
    out = []
    for x in v:
        low, high = 0, n
        for _ in range(int(np.ceil(np.log2(n + 1)))):
            mid = low + (high - low) // 2
            am = a[min(mid, n - 1)]
            if x <= am or np.isnan(am):
                high = mid
            else:
                low = mid
        out.append(high)
    return out


def test_searchsorted_of_sorted_weights_is_jaxs_search():
    from srcjax.random import _samplers

    rng = np.random.default_rng(0)
    for t in range(400):
        n = int(rng.integers(1, 40))
        a = np.sort(rng.standard_normal(n)).astype(np.float32)
        if t % 3 == 0:
            a = np.round(a)  # ties: the first of equal values
        if t % 5 == 0:
            a[-1] = np.inf
        if t % 7 == 0:
            a = rng.standard_normal(n).astype(np.float32)  # unsorted: the loop
        if t % 11 == 0:
            a[rng.integers(n)] = np.nan
        v = np.concatenate([rng.standard_normal(6), a[:3], [np.nan, np.inf, -np.inf]])
        v = v.astype(np.float32)
        got = _samplers._searchsorted_left(a, v)
        assert got.dtype == np.int64 and got.tolist() == _jax_search(a, v), (a, v)


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.float16, jnp.bfloat16])
def test_uniform_python_float_bounds_are_the_array_bounds_numbers(scheme, dtype):
    k = random.PRNGKey(9)
    for lo, hi in [(0.0, 1.0), (-3.3, 0.1), (0.1, 0.1 + 1e-9), (1e-30, 3e38), (-7.0, -7.5)]:
        a = random.uniform(k, (5,), dtype, lo, hi)
        b = random.uniform(k, (5,), dtype, np.full(5, lo), np.full(5, hi))
        assert a.dtype == b.dtype == np.dtype(dtype)
        assert np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True), (lo, hi)


# jax.random.fold_in(jax.random.PRNGKey(123), d) for d = 0, 7, 2**32 - 1 (both
# schemes), and fold_in(fold_in(k, 5), uint32(9))
JAX_FOLD = [[969380169, 3408994049], [4195957486, 134989543], [2301478522, 2278974641]]
JAX_FOLD2 = [3107901485, 2830696789]


def test_fold_in_of_one_key_recorded_and_as_a_batch(scheme):
    k = random.PRNGKey(123)
    assert [random.fold_in(k, d).tolist() for d in (0, 7, 2**32 - 1)] == JAX_FOLD
    assert random.fold_in(random.fold_in(k, 5), np.uint32(9)).tolist() == JAX_FOLD2
    # (one key and one number take their own path: the batched path's words)
    from srcjax.random import _threefry

    keys = np.asarray(random.split(k, 5))
    data = np.arange(5, dtype=np.uint32) * np.uint32(977)
    batched = _threefry.fold_in(keys, data)
    for i in range(5):
        assert _threefry.fold_in(keys[i], data[i]).tolist() == batched[i].tolist()
