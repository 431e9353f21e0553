"""jit decides a convolution's plan from the argument types (fresh user 8, p03:
``ad.conv_dtype`` returned None, "keep the operands' dtypes", which jit could
not represent, so every plan after it ran on each call); and a string the
generated code compares (``reduce_window``'s kind) folds its branches."""

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax import lax


def _loss(w, x):
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    h = lax.reduce_window(jnp.tanh(y), -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    return jnp.sum(h**2)


RNG = np.random.default_rng(5)
W = (RNG.normal(size=(3, 3, 2, 3)) * 0.3).astype(np.float32)
X = RNG.normal(size=(2, 6, 6, 2)).astype(np.float32)


def test_jit_grad_of_conv_has_its_plans_decided_and_matches_differences():
    fn = srcjax.jit(srcjax.grad(_loss))
    text = srcjax.source(fn, W, X)
    first = text[: text.index("ad.reduce_window_chooser")]
    assert "ad.conv_dtype" not in first and "ad.conv_plan" not in first, text
    assert "ad.window_kind" not in text and "== 'add'" not in text, text
    got = np.asarray(fn(W, X))
    assert got.dtype == np.float32
    w64, x64 = W.astype(np.float64), X.astype(np.float64)

    def f64(w):
        out = srcjax.config.jax_enable_x64
        srcjax.config.update("jax_enable_x64", True)
        try:
            return float(_loss(w, x64))
        finally:
            srcjax.config.update("jax_enable_x64", out)

    want = np.zeros_like(w64)
    eps = 1e-6
    for k in np.ndindex(*w64.shape):
        d = np.zeros_like(w64)
        d[k] = eps
        want[k] = (f64(w64 + d) - f64(w64 - d)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-4)
