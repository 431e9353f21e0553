"""srcjax.ops (jax.ops): segment reductions. Expected values recorded from JAX 0.10.2
(x64 off) with the same inputs; segment_prod's gradient (JAX has none for repeated
ids) against float64 central differences."""

import numpy as np
import pytest
from helpers import fd_grad

import srcjax
import srcjax.numpy as jnp

D = np.array([[1.0, 5.0], [3.0, 2.0], [3.0, -1.0], [0.5, 4.0], [2.0, 2.0]], np.float32)
IDS = np.array([0, 0, 2, 2, -1])  # -1: dropped, as JAX
DI = np.array([4, 1, 7, 2], np.int32)
IDI = np.array([1, 1, 0, 3])
W = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
INF = np.inf
IMAX, IMIN = 2147483647, -2147483648

RECORDED = {
    "segment_max": (
        [[3.0, 5.0], [-INF, -INF], [3.0, 4.0], [-INF, -INF]],
        [7, 4, IMIN, 2, IMIN],
        [[0.0, 2.0], [1.0, 0.0], [5.0, 0.0], [0.0, 6.0], [0.0, 0.0]],
        [
            [[0.0, 10.0], [6.0, 0.0], [6.0, 0.0], [0.0, 8.0], [0.0, 0.0]],
            [[0.0, 12.0], [8.0, 0.0], [8.0, 0.0], [0.0, 10.0], [0.0, 0.0]],
        ],
    ),
    "segment_min": (
        [[1.0, 2.0], [INF, INF], [0.5, -1.0], [INF, INF]],
        [7, 1, IMAX, 2, IMAX],
        [[1.0, 0.0], [0.0, 2.0], [0.0, 6.0], [5.0, 0.0], [0.0, 0.0]],
        [
            [[2.0, 0.0], [0.0, 4.0], [0.0, -2.0], [1.0, -0.0], [0.0, 0.0]],
            [[4.0, 0.0], [0.0, 6.0], [0.0, 0.0], [3.0, 0.0], [0.0, 0.0]],
        ],
    ),
    "segment_sum": (
        [[4.0, 7.0], [0.0, 0.0], [3.5, 3.0], [0.0, 0.0]],
        [7, 5, 0, 2, 0],
        [[1.0, 2.0], [1.0, 2.0], [5.0, 6.0], [5.0, 6.0], [0.0, 0.0]],
        [
            [[8.0, 14.0], [8.0, 14.0], [7.0, 6.0], [7.0, 6.0], [0.0, 0.0]],
            [[12.0, 18.0], [12.0, 18.0], [11.0, 10.0], [11.0, 10.0], [0.0, 0.0]],
        ],
    ),
}


def _weighted(op):
    def f(d):
        return jnp.sum(op(d, IDS, 4)[:3] * W)

    return f


def _squares(op):
    def f(r):
        return jnp.sum(op(r, IDS, 3) ** 2)

    return f


@pytest.mark.parametrize("name", sorted(RECORDED))
def test_segment_reductions_match_jax(name):
    op = getattr(srcjax.ops, name)
    value, ints, grad, vmap_grad = RECORDED[name]
    got = op(D, IDS, 4)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, value)
    gi = op(DI, IDI, 5)
    assert gi.dtype == np.int32
    np.testing.assert_array_equal(gi, ints)
    for g in (srcjax.grad(_weighted(op)), srcjax.jit(srcjax.grad(_weighted(op)))):
        np.testing.assert_array_equal(g(D), grad)
    batch = np.stack([D, D + 1.0])
    np.testing.assert_array_equal(srcjax.vmap(srcjax.grad(_squares(op)))(batch), vmap_grad)
    rows = srcjax.vmap(lambda r: op(r, IDS, 3))(np.stack([D, -D]))
    np.testing.assert_array_equal(rows[1], op(-D, IDS, 3))


def test_segment_prod_values_and_gradient():
    got = srcjax.ops.segment_prod(D, IDS, 4)
    # recorded from JAX: empty segments hold 1
    np.testing.assert_array_equal(got, [[3.0, 10.0], [1.0, 1.0], [1.5, -4.0], [1.0, 1.0]])
    np.testing.assert_array_equal(srcjax.ops.segment_prod(DI, IDI, 5), [7, 4, 1, 2, 1])
    g = srcjax.grad(_weighted(srcjax.ops.segment_prod))(D)

    def oracle(d):  # the same products in float64, by a Python loop
        out = np.ones((4, 2))
        for row, s in zip(d, IDS):
            if 0 <= s < 4:
                out[s] *= row
        return float(np.sum(out[:3] * W))

    np.testing.assert_allclose(g, fd_grad(oracle, D.astype(np.float64)), rtol=1e-5, atol=1e-6)


def test_segment_errors():
    with pytest.raises(ValueError, match="1-D"):
        srcjax.ops.segment_max(D, IDS[:3], 4)
    with pytest.raises(NotImplementedError, match="mode"):
        srcjax.ops.segment_min(D, IDS, 4, mode="clip")
