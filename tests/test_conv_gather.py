"""``ad.conv`` by one gather and one GEMM (``primitives/conv/gather.py``, the
path of small convolutions without groups): values and both gradients against a
float64 NumPy oracle written from the definition, over strides, paddings
(asymmetric, negative), lhs and rhs dilations and 1-3 spatial axes."""

import itertools

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.primitives.conv.gather import gather_plan


def conv64(x, w, strides, padding, ldil, rdil):
    """The convolution from its definition, in float64: ``x`` dilated by
    ``ldil`` (zeros between), padded by ``padding`` (negative: cropped), then
    every strided window, dilated by ``rdil``, times ``w`` summed."""
    x = np.asarray(x, np.float64)
    w = np.asarray(w, np.float64)
    nsp = x.ndim - 2
    dil = np.zeros(x.shape[:2] + tuple((n - 1) * d + 1 for n, d in zip(x.shape[2:], ldil)))
    dil[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in ldil)] = x
    grow = [(0, 0), (0, 0)] + [(max(lo, 0), max(hi, 0)) for lo, hi in padding]
    xp = np.pad(dil, grow)
    crop = tuple(
        slice(-min(lo, 0), xp.shape[2 + i] + min(hi, 0)) for i, (lo, hi) in enumerate(padding)
    )
    xp = xp[(slice(None), slice(None)) + crop]
    ks = w.shape[2:]
    out_sp = tuple(
        max(0, (p - (k - 1) * r - 1) // s + 1)
        for p, k, r, s in zip(xp.shape[2:], ks, rdil, strides)
    )
    out = np.zeros((x.shape[0], w.shape[0]) + out_sp)
    if 0 in out_sp:
        return out
    for kidx in itertools.product(*[range(k) for k in ks]):
        sl = tuple(
            slice(k * r, k * r + (n - 1) * s + 1, s)
            for k, r, n, s in zip(kidx, rdil, out_sp, strides)
        )
        part = xp[(slice(None), slice(None)) + sl]
        out += np.einsum("nc...,oc->no...", part, w[(slice(None), slice(None)) + kidx])
    assert out.ndim == nsp + 2
    return out


def adjoints64(x, w, g, opts):
    """``(d sum(conv * g) / dx, / dw)`` in float64: the convolution is linear in
    each operand, so each entry is the oracle of a basis array against ``g``."""
    gx = np.zeros(x.shape)
    for i in np.ndindex(*x.shape):
        e = np.zeros(x.shape)
        e[i] = 1.0
        gx[i] = np.sum(conv64(e, w, *opts) * g)
    gw = np.zeros(w.shape)
    for i in np.ndindex(*w.shape):
        e = np.zeros(w.shape)
        e[i] = 1.0
        gw[i] = np.sum(conv64(x, e, *opts) * g)
    return gx, gw


CASES = [
    # x shape, w shape, strides, padding, lhs dilation, rhs dilation
    ((2, 1, 8, 8), (4, 1, 3, 3), (1, 1), ((1, 1), (1, 1)), (1, 1), (1, 1)),  # R8's SAME
    ((2, 4, 4, 4), (8, 4, 3, 3), (2, 2), ((1, 1), (1, 1)), (1, 1), (1, 1)),  # R8's stride 2
    ((2, 3, 5, 6), (2, 3, 3, 2), (2, 3), ((1, 2), (0, 1)), (1, 1), (1, 1)),  # asymmetric
    ((1, 2, 6, 5), (3, 2, 2, 3), (1, 2), ((-1, 1), (2, -1)), (1, 1), (1, 1)),  # crops
    ((2, 2, 3, 4), (3, 2, 3, 3), (1, 1), ((2, 2), (1, 2)), (2, 3), (1, 1)),  # lhs dilation
    ((2, 2, 7, 6), (2, 2, 2, 3), (2, 1), ((1, 0), (1, 1)), (1, 1), (2, 2)),  # rhs dilation
    ((3, 2, 9), (2, 2, 4), (3,), ((2, 1),), (2,), (1,)),  # 1-D, both
    ((1, 2, 4, 3, 3), (2, 2, 2, 2, 2), (1, 2, 1), ((1, 0), (0, 1), (1, 1)), (1, 1, 1), (1, 1, 2)),
]


def _data(xs, ws, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=xs).astype(np.float32), rng.normal(size=ws).astype(np.float32)


@pytest.mark.parametrize("case", CASES)
def test_small_convolutions_take_the_gather_path_and_match_float64(case):
    xs, ws, strides, padding, ld, rd = case
    x, w = _data(xs, ws)
    assert gather_plan(xs, ws, x.dtype, w.dtype, strides, padding, ld, rd, 1, 1) is not None
    got = lax.conv_general_dilated(x, w, strides, padding, ld, rd)
    want = conv64(x, w, strides, padding, ld, rd)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("case", CASES[:7])
def test_both_gradients_match_the_float64_adjoints(case, jit):
    xs, ws, strides, padding, ld, rd = case
    x, w = _data(xs, ws, 1)
    want_y = conv64(x, w, strides, padding, ld, rd)
    g = np.random.default_rng(2).normal(size=want_y.shape).astype(np.float32)

    def loss(x, w):
        return jnp.sum(lax.conv_general_dilated(x, w, strides, padding, ld, rd) * g)

    fn = srcjax.grad(loss, argnums=(0, 1))
    gx, gw = (srcjax.jit(fn) if jit else fn)(x, w)
    want_x, want_w = adjoints64(x, w, g, (strides, padding, ld, rd))
    assert gx.dtype == np.float32 and gw.dtype == np.float32
    np.testing.assert_allclose(gx, want_x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(gw, want_w, rtol=1e-4, atol=1e-4)


def test_nhwc_cnn_gradient_matches_float64():
    # R8's layout (NHWC/HWIO) and both its convolutions, through jit(grad)
    rng = np.random.default_rng(5)
    x = rng.normal(size=(2, 6, 6, 2)).astype(np.float32)
    w1 = (rng.normal(size=(3, 3, 2, 3)) * 0.3).astype(np.float32)
    w2 = (rng.normal(size=(3, 3, 3, 2)) * 0.3).astype(np.float32)
    dn = ("NHWC", "HWIO", "NHWC")

    def f(w1, w2):
        h = lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dn)
        h = lax.conv_general_dilated(h, w2, (2, 2), ((1, 1), (1, 1)), dimension_numbers=dn)
        return jnp.sum(h * h)

    got1, got2 = srcjax.jit(srcjax.grad(f, argnums=(0, 1)))(w1, w2)

    def f64(w1, w2):  # NCHW/OIHW float64 oracle of the same function
        h = conv64(
            x.transpose(0, 3, 1, 2), w1.transpose(3, 2, 0, 1), (1, 1), ((1, 1),) * 2, (1, 1), (1, 1)
        )
        h = conv64(h, w2.transpose(3, 2, 0, 1), (2, 2), ((1, 1),) * 2, (1, 1), (1, 1))
        return np.sum(h * h)

    for got, k in ((got1, 0), (got2, 1)):
        ws = [w1.astype(np.float64), w2.astype(np.float64)]
        want = np.zeros(ws[k].shape)
        for i in np.ndindex(*ws[k].shape):
            eps = 1e-6
            up = [a.copy() for a in ws]
            dn_ = [a.copy() for a in ws]
            up[k][i] += eps
            dn_[k][i] -= eps
            want[i] = (f64(*up) - f64(*dn_)) / (2 * eps)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_large_grouped_and_integer_convolutions_keep_the_general_path():
    f32 = np.dtype(np.float32)
    big = gather_plan(
        (32, 3, 32, 32), (16, 3, 3, 3), f32, f32, (1, 1), ((1, 1),) * 2, (1, 1), (1, 1), 1, 1
    )
    grouped = gather_plan(
        (2, 4, 5, 5), (4, 2, 3, 3), f32, f32, (1, 1), ((1, 1),) * 2, (1, 1), (1, 1), 2, 1
    )
    i32 = np.dtype(np.int32)
    ints = gather_plan(
        (2, 4, 5, 5), (4, 4, 3, 3), i32, i32, (1, 1), ((1, 1),) * 2, (1, 1), (1, 1), 1, 1
    )
    assert big is None and grouped is None and ints is None
    # and the general path still computes them (grouped, against the oracle per group)
    x, w = _data((2, 4, 5, 5), (4, 2, 3, 3))
    got = lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)), feature_group_count=2)
    want = np.concatenate(
        [
            conv64(
                x[:, 2 * i : 2 * i + 2], w[2 * i : 2 * i + 2], (1, 1), ((1, 1),) * 2, (1, 1), (1, 1)
            )
            for i in range(2)
        ],
        axis=1,
    )
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
