"""nn.sigmoid's numerator (``_logistic``) without np.where: the same bits as the where form, and
the float64 logistic within an ulp or two (oracle: plain NumPy)."""

import numpy as np
import pytest

import srcjax.nn as nn
from srcjax.primitives.nn import _logistic

SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1e-8, -1e-8, 15.0, -15.0]
SPECIAL += [88.7, -88.7, 100.0, -100.0, 1e30, -1e30, 3.4e38, -3.4e38, 0.5, -0.5]


def _where_form(x):
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1, e) / (1 + e)


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_sigmoid_bits_match_the_where_form(dt):
    rng = np.random.default_rng(1)
    with np.errstate(all="ignore"):
        cases = [
            np.array(SPECIAL).astype(dt),
            (rng.standard_normal((16, 128)) * 8).astype(dt)[:, 32:64],  # a strided view
            np.asarray(dt(-3.0)),
        ]
    for x in cases:
        with np.errstate(all="ignore"):
            want = _where_form(x)
        got = _logistic(x)  # (nn.sigmoid narrows float64 without x64)
        assert got.dtype == want.dtype == np.dtype(dt)
        assert np.array_equal(got, want, equal_nan=True)
        assert np.array_equal(np.signbit(got), np.signbit(want))


def test_sigmoid_float32_against_float64():
    x = np.linspace(-30, 30, 2001, dtype=np.float32)
    got = np.asarray(nn.sigmoid(x))
    want = 1 / (1 + np.exp(-x.astype(np.float64)))
    np.testing.assert_allclose(got, want, rtol=3e-7, atol=0)
    assert np.asarray(nn.sigmoid(np.float32(np.nan))) != np.asarray(nn.sigmoid(np.float32(np.nan)))
    assert (
        float(nn.sigmoid(np.float32(-np.inf))) == 0.0
        and float(nn.sigmoid(np.float32(np.inf))) == 1.0
    )
