"""srcjax.image.resize (session 16's debt: jax.image missing): nearest, linear,
cubic, lanczos3, lanczos5, with and without antialias, values recorded from JAX
0.10.2 (x1 = [1, 4, 2, -1, 3] to 8 and 3 samples; X = arange(20).reshape(4, 5)
** 1.5 / 10 to (3, 7)), eagerly and under jit, grad and vmap."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

X1 = np.array([1.0, 4.0, 2.0, -1.0, 3.0], np.float32)
X2 = (np.arange(20.0, dtype=np.float32).reshape(4, 5) ** 1.5 / 10).astype(np.float32)

# (method, size or "2d", antialias) -> JAX 0.10.2's jax.image.resize
JAX = {
    ("nearest", 8, True): [1.0, 1.0, 4.0, 2.0, 2.0, -1.0, 3.0, 3.0],
    ("nearest", 3, True): [1.0, 2.0, 3.0],
    ("nearest", 3, False): [1.0, 2.0, 3.0],
    ("nearest", "2d", True): [
        [0.0, 0.1, 0.1, 0.2828427, 0.5196152, 0.5196152, 0.8],
        [3.1622777, 3.6482873, 3.6482873, 4.156922, 4.6872168, 4.6872168, 5.2383204],
        [5.809475, 6.4, 6.4, 7.0092797, 7.636753, 7.636753, 8.281908],
    ],
    ("linear", 8, True): [1.0, 2.3125, 3.875, 2.625, 1.0625, -0.8125, 1.25, 3.0],
    ("linear", 3, True): [2.2857141, 1.7777778, 1.285714],
    ("linear", 3, False): [2.0, 2.0, 1.666666],
    ("linear", "2d", True): [
        [0.3354102, 0.4356948, 0.5802481, 0.7535977, 0.9599946, 1.1828876, 1.37],
        [2.1401558, 2.37949, 2.6862714, 3.004474, 3.3405492, 3.6867712, 3.96916],
        [5.015316, 5.334842, 5.73994, 6.153573, 6.580944, 7.0162954, 7.368832],
    ],
    ("cubic", 8, True): [
        0.7841328,
        2.2850783,
        4.01416,
        2.8666992,
        0.9013672,
        -1.0029297,
        1.2697797,
        3.2878227,
    ],
    ("cubic", 3, True): [2.3999999, 1.7534887, 1.1846159],
    ("cubic", 3, False): [1.8965511, 2.0, 1.7931029],
    ("cubic", "2d", True): [
        [0.1503623, 0.2308666, 0.3716035, 0.538791, 0.7294392, 0.9675562, 1.1425645],
        [2.0616274, 2.2937403, 2.6360927, 2.9593046, 3.2949135, 3.6826053, 3.95782],
        [5.2388515, 5.553143, 6.011668, 6.436208, 6.870269, 7.3638654, 7.711536],
    ],
    ("lanczos3", 8, True): [
        0.6310906,
        2.2681575,
        4.1007204,
        3.274548,
        0.513536,
        -1.0911694,
        1.2424164,
        3.5022814,
    ],
    ("lanczos3", 3, True): [2.573556, 1.7236526, 1.0320752],
    ("lanczos3", 3, False): [1.9217814, 1.9999999, 1.7239356],
    ("lanczos3", "2d", True): [
        [0.1045451, 0.1741005, 0.322257, 0.4806523, 0.6499751, 0.9163254, 1.0759441],
        [2.021615, 2.236958, 2.6213117, 2.9242752, 3.2336388, 3.6710854, 3.9256802],
        [5.321145, 5.6110945, 6.124665, 6.520943, 6.9221706, 7.4785056, 7.8002386],
    ],
    ("lanczos5", 8, True): [
        0.6657192,
        2.1110938,
        4.151969,
        3.516113,
        0.2872329,
        -1.1324356,
        1.3379762,
        3.5241907,
    ],
    ("lanczos5", 3, True): [2.6958907, 1.7105697, 0.9315178],
    ("lanczos5", 3, False): [1.7984778, 2.0, 1.7892742],
    ("lanczos5", "2d", True): [
        [0.1174859, 0.1759107, 0.3611034, 0.4936839, 0.6379401, 0.9396334, 1.0902724],
        [2.0031073, 2.1986609, 2.6573172, 2.9102635, 3.169843, 3.6803024, 3.915331],
        [5.330303, 5.592482, 6.198748, 6.5286517, 6.8637853, 7.513173, 7.8085203],
    ],
}


def _run(key, wrap):
    m, n, aa = key
    if n == "2d":
        return wrap(lambda x: srcjax.image.resize(x, (3, 7), m, antialias=aa))(X2)
    return wrap(lambda x: srcjax.image.resize(x, (n,), m, antialias=aa))(X1)


@pytest.mark.parametrize("key", list(JAX), ids=[f"{m}-{n}-{aa}" for m, n, aa in JAX])
@pytest.mark.parametrize("mode", ["eager", "jit"])
def test_resize_matches_jax(key, mode):
    got = _run(key, srcjax.jit if mode == "jit" else (lambda f: f))
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), np.asarray(JAX[key], np.float32), atol=3e-6)


def test_names_dtypes_grad_vmap_as_jax():
    # JAX 0.10.2: an int image resized linearly is float32; nearest keeps int32
    r = srcjax.image.resize(jnp.arange(6, dtype=jnp.int32), (4,), "linear")
    np.testing.assert_allclose(np.asarray(r), [0.375, 1.7777779, 3.2222223, 4.625], rtol=1e-6)
    r = srcjax.image.resize(jnp.arange(6, dtype=jnp.int32), (9,), "nearest")
    assert np.asarray(r).dtype == np.int32
    np.testing.assert_array_equal(np.asarray(r), [0, 1, 1, 2, 3, 3, 4, 5, 5])
    r = srcjax.image.resize(X1, (8,), "bilinear")
    np.testing.assert_allclose(np.asarray(r), JAX[("linear", 8, True)], rtol=1e-6)
    r = srcjax.image.resize(X1, (8,), srcjax.image.ResizeMethod.CUBIC)
    np.testing.assert_allclose(np.asarray(r), JAX[("cubic", 8, True)], rtol=1e-6)
    g = srcjax.grad(lambda x: jnp.sum(srcjax.image.resize(x, (8,), "linear") ** 2))(X1)
    # (jax.grad of the same function, JAX 0.10.2)
    np.testing.assert_allclose(np.asarray(g), [4.6015625, 10.9296875, 5.453125, 0.234375, 7.40625])
    v = srcjax.vmap(lambda r: srcjax.image.resize(r, (8,), "linear"))(np.stack([X1, 2 * X1]))
    np.testing.assert_allclose(np.asarray(v)[1], 2 * np.asarray(JAX[("linear", 8, True)]))
    assert srcjax.image.resize(jnp.ones((2, 3, 4)), (2, 6, 4), "linear").shape == (2, 6, 4)


def test_errors_as_jax():
    with pytest.raises(ValueError, match="shape must have length equal to the number of dim"):
        srcjax.image.resize(X1, (3, 3), "linear")
    with pytest.raises(ValueError, match='Unknown resize method "foo"'):
        srcjax.image.resize(X1, (3,), "foo")
