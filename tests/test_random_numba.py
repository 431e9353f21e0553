"""srcjax.random's compiled kernels (random/_numba.py) against its NumPy path.

The NumPy path is checked against values recorded from jax 0.10.2 in
tests/test_random*.py (which, with Numba installed, run the kernels too); here
the kernels must give the NumPy path's bits exactly: every word class of the
float32 transforms, both counter layouts, batches of keys, vmap and jit.
"""

import numpy as np
import pytest

pytest.importorskip("numba")

import srcjax  # noqa: E402
from srcjax.random import _threefry as tf  # noqa: E402

pytestmark = pytest.mark.skipif(tf.kernels() is None, reason="the kernels did not compile")


@pytest.fixture
def numpy_path():
    """Run a block with the kernels off: ``with numpy_path(): ...``."""
    import contextlib

    @contextlib.contextmanager
    def off():
        tf.use_kernels(False)
        try:
            yield
        finally:
            tf.use_kernels(True)

    return off


def _same_bits(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a.view(np.uint32), b.view(np.uint32))


def _words(n, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.integers(0, 2**32, n, dtype=np.uint64).astype(np.uint32)
    # the ends of the word range and the neighbours of the float32 boundaries
    edges = [0, 1, 511, 512, 513, 2**31 - 512, 2**31, 2**31 + 511, 2**32 - 513, 2**32 - 1]
    return np.concatenate([w, np.array(edges, np.uint32)])


def test_normal_and_uniform_transforms_bit_for_bit_on_many_words(numpy_path):
    w = _words(300_000)
    k = tf.kernels()
    got_n = k.normal_of_words(w)
    got_u = k.uniform_of_words(w, np.float32(-3.5), np.float32(7.25))
    with numpy_path():
        want_n = tf.normal32(w)
        want_u = tf.uniform32(w, np.float32(-3.5), np.float32(7.25))
    assert got_n.dtype == np.float32 and got_u.dtype == np.float32  # no float64 promotion
    _same_bits(got_n, want_n)
    _same_bits(got_u, want_u)


@pytest.mark.parametrize("partitionable", [True, False])
@pytest.mark.parametrize("shape", [(), (1,), (7,), (3, 5), (1001,)])
def test_bits_normal_uniform_of_keys_match_numpy(numpy_path, partitionable, shape):
    key = srcjax.random.PRNGKey(17)
    old = srcjax.config.read("jax_threefry_partitionable")
    srcjax.config.update("jax_threefry_partitionable", partitionable)
    try:
        got = (
            srcjax.random.bits(key, shape),
            srcjax.random.normal(key, shape),
            srcjax.random.uniform(key, shape, minval=-2.0, maxval=3.0),
        )
        with numpy_path():
            want = (
                srcjax.random.bits(key, shape),
                srcjax.random.normal(key, shape),
                srcjax.random.uniform(key, shape, minval=-2.0, maxval=3.0),
            )
    finally:
        srcjax.config.update("jax_threefry_partitionable", old)
    for g, w in zip(got, want):
        _same_bits(g, w)


def test_normal_under_vmap_over_keys_and_inside_jit(numpy_path):
    keys = srcjax.random.split(srcjax.random.PRNGKey(3), 5)

    def draw(k):
        return srcjax.random.normal(k, (257,))

    got_v = srcjax.vmap(draw)(keys)
    got_j = srcjax.jit(draw)(keys[0])
    with numpy_path():
        want_v = np.stack([draw(k) for k in keys])
    _same_bits(got_v, want_v)
    _same_bits(got_j, want_v[0])


def test_recorded_jax_values_with_the_kernels():
    # jax.random.normal(jax.random.PRNGKey(0), (4,)) and uniform(PRNGKey(1), (3,)),
    # recorded from jax 0.10.2 (partitionable threefry, the default)
    want_n = np.array(
        [1.622642159461975, 2.0252647399902344, -0.4335944354534149, -0.07861734926700592],
        np.float32,
    )
    want_u = np.array([0.4386324882507324, 0.5337529182434082, 0.44591832160949707], np.float32)
    np.testing.assert_array_equal(srcjax.random.normal(srcjax.random.PRNGKey(0), (4,)), want_n)
    np.testing.assert_array_equal(srcjax.random.uniform(srcjax.random.PRNGKey(1), (3,)), want_u)


@pytest.mark.parametrize("partitionable", [True, False])
@pytest.mark.parametrize("num", [1, 2, 3, (2, 3), 257])
def test_split_and_fold_in_kernels_match_numpy(numpy_path, partitionable, num):
    keys = np.asarray(srcjax.random.split(srcjax.random.PRNGKey(5), 4))  # a batch of 4 keys
    data = np.array([0, 1, 2**31, 2**32 - 1], np.uint32)
    old = srcjax.config.read("jax_threefry_partitionable")
    srcjax.config.update("jax_threefry_partitionable", partitionable)
    try:
        got = (
            srcjax.random.split(keys[0], num),
            tf.split(keys, num if isinstance(num, tuple) else (num,), partitionable),
            srcjax.random.fold_in(keys[1], 12345),
            tf.fold_in(keys, data),
            tf.fold_in(keys[0], data),  # one key, many data
        )
        with numpy_path():
            want = (
                srcjax.random.split(keys[0], num),
                tf.split(keys, num if isinstance(num, tuple) else (num,), partitionable),
                srcjax.random.fold_in(keys[1], 12345),
                tf.fold_in(keys, data),
                tf.fold_in(keys[0], data),
            )
    finally:
        srcjax.config.update("jax_threefry_partitionable", old)
    for g, w in zip(got, want):
        _same_bits(g, w)


def test_split_in_a_jitted_fori_loop_matches_jax():
    # bug 23's random walk, keeping each step's draw; second coordinates recorded
    # from jax 0.10.2 (the sum is not compared: XLA contracts pos + sqrt2 * erfinv
    # into one fma, srcjax rounds the product and the sum separately)
    @srcjax.jit
    def walk(key):
        def body(i, c):
            key, hist = c
            key, sub = srcjax.random.split(key)
            return key, hist.at[i].set(srcjax.random.normal(sub, (2,)))

        return srcjax.lax.fori_loop(0, 10, body, (key, srcjax.numpy.zeros((10, 2))))

    key, hist = walk(srcjax.random.PRNGKey(0))
    want = [
        "-0x1.9b3e3p-2",
        "0x1.8cb9b6p-1",
        "0x1.b05b7p-5",
        "0x1.965954p+0",
        "0x1.97579cp-1",
        "-0x1.23c17ap+0",
        "0x1.f31e8ap-1",
        "-0x1.d4c624p-4",
        "0x1.2e03e4p-4",
    ]
    got = np.asarray(hist)[:, 1]
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got[1:], np.array([float.fromhex(w) for w in want], np.float32))
    assert float(got[0]) == float.fromhex("-0x1.04912ep+1")


def test_log_and_log1p_kernels_bit_for_bit(numpy_path):
    rng = np.random.default_rng(1)
    bits = rng.integers(0, 2**32, 200_000, dtype=np.uint64).astype(np.uint32)
    special = np.array(
        [0.0, -0.0, 1.0, -1.0, 1e-45, 2.0**-126, 0.5, 2.0, np.inf, -np.inf, np.nan, 1e-8, -0.99],
        np.float32,
    )
    x = np.concatenate([bits.view(np.float32), special, rng.random(1000, np.float32)])
    k = tf.kernels()
    got = (k.log_of(x), k.log1p_of(x), tf.log32(x[:5].reshape(5, 1)), tf.log1p32(np.float32(0.25)))
    with numpy_path(), np.errstate(invalid="ignore"):  # inf * 0 in the NumPy path
        want = (
            tf.log32(x),
            tf.log1p32(x),
            tf.log32(x[:5].reshape(5, 1)),
            tf.log1p32(np.float32(0.25)),
        )
    for g, w in zip(got, want):
        _same_bits(g, w)


def test_a_large_batch_of_keys_is_shared_among_threads_bit_for_bit(monkeypatch, numpy_path):
    # normal/split over many keys run their rows on the runtime's threads (R4:
    # 4096 keys x 64 normals); the values are the one-thread kernel's and the
    # NumPy path's, whatever the split of the rows
    from srcjax.backends import runtime
    from srcjax.random import _numba as kn

    keys = kn.split_keys(np.array([0, 7], np.uint32), (1001,), True)
    monkeypatch.setattr(runtime, "NUM_THREADS", 3)
    threaded = kn.normal_keys(keys, (70,)), kn.split_keys(keys, (67,), True)
    monkeypatch.setattr(kn, "PARALLEL_MIN", 1 << 62)
    alone = kn.normal_keys(keys, (70,)), kn.split_keys(keys, (67,), True)
    with numpy_path():
        want = srcjax.vmap(lambda k: srcjax.random.normal(k, (70,)))(keys)
    for a, b in zip(threaded, alone):
        _same_bits(a, b)
    _same_bits(threaded[0], want)
