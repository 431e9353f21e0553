"""Value checks of the reduction primitives against NumPy and JAX's conventions
(tie splitting, zeros in products, NaN gradient of std at a constant)."""

import pathlib

import numpy as np
import pytest
from helpers import assert_matches_recorded, fd_grad, jax_recorded

import srcjax
import srcjax.nn
import srcjax.numpy as jnp
import srcjax.scipy.special as SS
from srcjax.primitives import reductions as R
from srcjax.primitives.ad import expand_reduced
from srcjax.transforms.rules import call_rule


def vjp(p, g, *args, wrt="x", **kw):
    ans = p(*args, **kw)
    return call_rule(p.vjps[wrt], p, g, ans, *args, **kw)


X = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) - 7.0


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2), 1])
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize(
    "name, ref",
    [
        ("sum", np.sum),
        ("mean", np.mean),
        ("prod", np.prod),
        ("max", np.max),
        ("min", np.min),
        ("var", np.var),
        ("std", np.std),
        ("all", np.all),
        ("any", np.any),
    ],
)
def test_values_match_numpy(name, ref, axis, keepdims):
    got = getattr(R, name)(X, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(got, ref(X, axis=axis, keepdims=keepdims), rtol=1e-5)


def test_dtypes_follow_jax():
    assert R.sum(np.array([True, False, True])).dtype == np.int32
    assert R.mean(np.array([1, 2], dtype=np.int32)).dtype == np.float32
    assert R.sum(np.ones(3, np.float32)).dtype == np.float32
    assert R.argmax(np.array([2.0, 5.0, 5.0])).dtype == np.int32
    assert R.count_nonzero(np.array([0, 1, 2])).dtype == np.int32
    assert R.cumsum(np.array([1, 2], dtype=np.int32)).dtype == np.int32


def test_max_min_ties_split_equally():
    np.testing.assert_allclose(vjp(R.max, 1.0, np.array([1.0, 3.0, 3.0])), [0, 0.5, 0.5])
    np.testing.assert_allclose(
        vjp(R.min, 1.0, np.array([4.0, -1.0, -1.0, -1.0])), [0, 1 / 3, 1 / 3, 1 / 3]
    )
    m = np.array([[2.0, 5.0], [2.0, 1.0], [0.0, 5.0]])
    np.testing.assert_allclose(
        vjp(R.max, np.ones(2), m, axis=0), [[0.5, 0.5], [0.5, 0.0], [0.0, 0.5]]
    )
    np.testing.assert_allclose(vjp(R.amax, 1.0, np.array([7.0, 7.0, 7.0])), [1 / 3] * 3)


def test_argmax_first_of_ties():
    v = np.array([2.0, 5.0, 5.0, 5.0, 1.0])
    assert int(R.argmax(v)) == 1
    assert int(R.argmin(np.array([3.0, 1.0, 1.0]))) == 1
    assert R.argmax(X, axis=1, keepdims=True).shape == (2, 1, 4)


def test_prod_gradient_with_zeros():
    np.testing.assert_allclose(vjp(R.prod, 1.0, np.array([4.0, 0.0])), [0.0, 4.0])
    np.testing.assert_allclose(vjp(R.prod, 1.0, np.array([0.0, 0.0, 2.0])), [0.0, 0.0, 0.0])
    m = np.array([[1.0, 0.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_allclose(
        vjp(R.prod, np.ones(3), m, axis=0), [[4.0, 5.0, 6.0], [1.0, 0.0, 3.0]]
    )
    x = np.array([2.0, 3.0, 0.0, 5.0])
    assert not np.isnan(vjp(R.prod, 1.0, x)).any()


def test_cumsum_cumprod_gradients():
    w = np.array([1.0, -1.0, 2.0])
    np.testing.assert_allclose(
        vjp(R.cumsum, w, np.array([1.0, 2.0, 3.0]), wrt="a"), [2.0, 1.0, 2.0]
    )
    np.testing.assert_allclose(
        vjp(R.cumprod, np.ones(3), np.array([2.0, 0.0, 3.0]), wrt="a"), [1.0, 8.0, 0.0]
    )
    x = np.array([1.0, 0.0])
    g = 2 * R.cumprod(x)
    np.testing.assert_allclose(vjp(R.cumprod, g, x, wrt="a"), [2.0, 0.0])
    m = np.arange(6.0).reshape(2, 3)
    np.testing.assert_allclose(R.cumprod(m, axis=None), np.cumprod(m))
    assert vjp(R.cumprod, np.ones(6), m, wrt="a").shape == (2, 3)


def test_std_constant_nan_var_zero():
    c = np.array([1.0, 1.0], np.float32)
    with np.errstate(all="ignore"):
        assert np.isnan(vjp(R.std, 1.0, c)).all()
    np.testing.assert_array_equal(vjp(R.var, 1.0, c), [0.0, 0.0])
    v = np.array([1.0, 2.0, 4.0])
    np.testing.assert_allclose(vjp(R.std, 1.0, v), [-0.3563483, -0.0890871, 0.4454354], rtol=1e-6)
    np.testing.assert_allclose(
        vjp(R.std, 1.0, v, ddof=1), [-0.4364358, -0.1091089, 0.5455447], rtol=1e-6
    )


def test_logsumexp_stable():
    big = np.array([1000.0, 1001.0, 1002.0], np.float32)
    out = R.logsumexp(big)
    np.testing.assert_allclose(out, 1002.0 + np.log(np.exp(-2.0) + np.exp(-1.0) + 1.0), rtol=1e-6)
    g = vjp(R.logsumexp, 1.0, big, wrt="a")
    assert np.isfinite(g).all()
    np.testing.assert_allclose(g.sum(), 1.0, rtol=1e-4)
    np.testing.assert_allclose(R.logsumexp(np.array([-np.inf, -np.inf])), -np.inf)
    m = np.array([[1000.0, 1001.0], [-5.0, 5.0]])
    np.testing.assert_allclose(R.logsumexp(m, axis=1, keepdims=True).shape, (2, 1))


def test_median():
    x = np.array([3.0, 1.0, 2.0, 10.0])
    assert float(R.median(x)) == 2.5
    np.testing.assert_allclose(vjp(R.median, 1.0, x, wrt="a"), [0.5, 0.0, 0.5, 0.0])
    np.testing.assert_allclose(vjp(R.median, 1.0, np.array([5.0, 1.0, 3.0]), wrt="a"), [0, 0, 1])


def test_expand_reduced_shapes():
    g = np.ones((2, 4))
    assert expand_reduced(g, X, 1, False).shape == X.shape
    assert expand_reduced(np.ones((2, 1, 4)), X, -2, True).shape == X.shape
    assert expand_reduced(1.0, X, None, False).shape == X.shape


# -- quantile / percentile / where= ----------------------------------------------------


@pytest.mark.parametrize("method", ["linear", "lower", "higher", "midpoint", "nearest"])
@pytest.mark.parametrize("axis, keepdims", [(None, False), (1, True), (-1, False), ((0, 2), True)])
def test_quantile_percentile_match_numpy(method, axis, keepdims):
    a = np.random.default_rng(3).normal(size=(2, 5, 4))
    for q in (0.3, np.array([0.0, 0.45, 1.0])):
        want = np.quantile(a, q, axis=axis, keepdims=keepdims, method=method)
        got = R.quantile(a, q, axis=axis, keepdims=keepdims, method=method)
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        got = R.percentile(a, np.asarray(q) * 100, axis=axis, keepdims=keepdims, method=method)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_quantile_dtypes_and_errors():
    assert R.quantile(np.ones(3, np.float32), 0.5).dtype == np.float32
    assert R.quantile(np.arange(4, dtype=np.int32), 0.5).dtype == np.float32
    assert R.percentile(np.arange(5.0), np.array([10.0, 90.0])).shape == (2,)
    with pytest.raises(ValueError):
        R.quantile(np.ones(3), 1.5)
    with pytest.raises(ValueError):
        R.percentile(np.ones(3), -1.0)
    with pytest.raises(ValueError):
        R.quantile(np.ones(3), 0.5, method="cubic")
    with pytest.raises(ValueError):
        R.quantile(np.ones(3), np.ones((2, 2)) / 2)


def test_quantile_gradient_goes_to_the_sorted_neighbours():
    a = np.array([4.0, 1.0, 3.0, 2.0])  # sorted: 1 2 3 4; q=0.5 -> position 1.5
    g = vjp(R.quantile, 1.0, a, 0.5, wrt="a")
    np.testing.assert_allclose(g, [0.0, 0.0, 0.5, 0.5])
    np.testing.assert_allclose(vjp(R.quantile, 1.0, a, 0.5, wrt="q"), 3.0)  # (n-1) * (3 - 2)
    g = vjp(R.percentile, 1.0, a, 50.0, wrt="a", method="higher")
    np.testing.assert_allclose(g, [0.0, 0.0, 1.0, 0.0])


def quantile_loss(x):
    return jnp.sum(jnp.quantile(x, jnp.array([0.2, 0.65]), axis=0) ** 2) + jnp.median(x)


def test_quantile_grad_matches_finite_differences(x64):
    x = np.random.default_rng(5).normal(size=(5, 3))
    np.testing.assert_allclose(srcjax.grad(quantile_loss)(x), fd_grad(quantile_loss, x), rtol=1e-6)


MASK = np.array([[True, False, True, True], [False, False, True, False], [True] * 4])


@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), (-1, False)])
def test_sum_mean_where_match_numpy(axis, keepdims):
    x = X[0]
    np.testing.assert_allclose(R.sum(x, axis=axis, keepdims=keepdims, where=MASK),
                               np.sum(x, axis=axis, keepdims=keepdims, where=MASK))  # fmt: skip
    np.testing.assert_allclose(R.mean(x, axis=axis, keepdims=keepdims, where=MASK),
                               np.mean(x, axis=axis, keepdims=keepdims, where=MASK))  # fmt: skip
    row = np.array([True, False, True, False])  # broadcasts against x
    np.testing.assert_allclose(R.mean(x, axis=-1, where=row), np.mean(x, axis=-1, where=row))


def test_sum_mean_where_gradients():
    x = X[0].astype(np.float64)
    np.testing.assert_array_equal(vjp(R.sum, 1.0, x, where=MASK), MASK.astype(float))
    g = vjp(R.mean, np.ones(3), x, axis=1, where=MASK)
    np.testing.assert_allclose(g, MASK / MASK.sum(axis=1, keepdims=True))
    assert R.sum(np.ones(3, np.int32), where=np.array([True, False, True])).dtype == np.int32


def masked_mean(x):
    return jnp.mean(x**2, axis=1, where=x > 0.0).sum() + jnp.sum(x, where=MASK)


def test_mean_where_grad_and_vmap(x64):
    x = np.random.default_rng(2).normal(size=(3, 4))
    x[:, 0] = 1.0  # every row keeps one element
    np.testing.assert_allclose(srcjax.grad(masked_mean)(x), fd_grad(masked_mean, x), rtol=1e-6)
    xs = np.stack([x, x + 0.5, x * 2])
    got = srcjax.vmap(srcjax.grad(masked_mean))(xs)
    for k in range(3):
        np.testing.assert_allclose(got[k], srcjax.grad(masked_mean)(xs[k]), rtol=1e-12)


# -- NaN reductions, average, cov, logsumexp(b=, return_sign=) ---------------------------
XN = np.random.default_rng(11).normal(size=(3, 4))
XN[0, 1] = XN[2, 3] = XN[1, 0] = np.nan

NAN_FUNCS = ["nansum", "nanmean", "nanmax", "nanmin", "nanvar", "nanstd"]


@pytest.mark.parametrize("name", NAN_FUNCS)
@pytest.mark.parametrize("axis, keepdims", [(None, False), (0, False), (1, True), (-1, False)])
def test_nan_reductions_match_numpy(name, axis, keepdims, x64):  # float64 references
    got = getattr(jnp, name)(XN, axis=axis, keepdims=keepdims)
    np.testing.assert_allclose(got, getattr(np, name)(XN, axis=axis, keepdims=keepdims), rtol=1e-6)
    assert np.asarray(getattr(jnp, name)(XN.astype(np.float32), axis=axis)).dtype == np.float32
    if name in ("nanvar", "nanstd"):
        np.testing.assert_allclose(getattr(jnp, name)(XN, axis=1, ddof=1),
                                   getattr(np, name)(XN, axis=1, ddof=1), rtol=1e-6)  # fmt: skip


def test_nan_reductions_dtypes_and_all_nan_slices():
    assert jnp.nansum(np.arange(4, dtype=np.int32)).dtype == np.int32
    assert jnp.nanmean(np.arange(4, dtype=np.int32)).dtype == np.float32
    allnan = np.array([[np.nan, np.nan], [1.0, 2.0]], np.float32)
    np.testing.assert_array_equal(jnp.nansum(allnan, axis=1), [0.0, 3.0])
    for name in ("nanmean", "nanmax", "nanmin", "nanvar"):
        assert np.isnan(getattr(jnp, name)(allnan, axis=1)[0])
    with pytest.raises(NotImplementedError):
        jnp.nansum(XN, out=np.zeros(()))


def nan_loss(x):
    return (
        2.0 * jnp.nansum(x) + jnp.sum(jnp.nanmean(x, axis=1) ** 2) + jnp.nanmax(x)
        - jnp.sum(jnp.nanmin(x, axis=1)) + jnp.sum(jnp.nanvar(x, axis=1) ** 2)
        + jnp.nanstd(x, ddof=1)
    )  # fmt: skip


def test_nan_reductions_grad_matches_finite_differences_and_zero_at_nan(x64):
    # NaN inputs get a zero gradient (as in JAX; a NaN inside, as in nansum(x**2),
    # still gives NaN through the chain rule there, as in JAX)
    g = srcjax.grad(nan_loss)(XN)
    assert np.all(g[np.isnan(XN)] == 0.0)
    np.testing.assert_allclose(g, fd_grad(nan_loss, XN), rtol=1e-6, atol=1e-8)
    xs = np.stack([XN, XN * 2.0 + 1.0])
    got = srcjax.vmap(srcjax.grad(nan_loss))(xs)
    np.testing.assert_allclose(got, np.stack([srcjax.grad(nan_loss)(x) for x in xs]), rtol=1e-10)
    np.testing.assert_allclose(srcjax.jit(nan_loss)(XN), nan_loss(XN), rtol=1e-12)
    hess = srcjax.hessian(lambda x: jnp.nanvar(x))(XN[0])
    fd = np.stack([fd_grad(lambda x, i=i: srcjax.grad(jnp.nanvar)(x)[i], XN[0]) for i in range(4)])
    np.testing.assert_allclose(hess, fd, rtol=1e-5, atol=1e-7)


def test_nanmax_grad_splits_ties_and_skips_nan(x64):
    x = np.array([1.0, np.nan, 3.0, 3.0])
    np.testing.assert_array_equal(srcjax.grad(jnp.nanmax)(x), [0.0, 0.0, 0.5, 0.5])


def test_average_matches_numpy():
    a = np.random.default_rng(3).normal(size=(3, 4))
    w = np.array([1.0, 2.0, 0.5, 1.5])
    np.testing.assert_allclose(jnp.average(a), np.average(a), rtol=1e-6)
    np.testing.assert_allclose(jnp.average(a, axis=1, weights=w), np.average(a, 1, w), rtol=1e-6)
    ww = np.abs(a) + 0.1
    np.testing.assert_allclose(jnp.average(a, axis=0, weights=ww), np.average(a, 0, ww), rtol=1e-6)
    avg, sw = jnp.average(a, axis=1, weights=w, returned=True)
    want_avg, want_sw = np.average(a, axis=1, weights=w, returned=True)
    np.testing.assert_allclose(avg, want_avg, rtol=1e-6)
    np.testing.assert_allclose(sw, want_sw, rtol=1e-6)
    avg, cnt = jnp.average(a, axis=0, returned=True)
    np.testing.assert_allclose(cnt, np.full(4, 3.0))
    assert jnp.average(a, axis=1, keepdims=True, weights=w).shape == (3, 1)
    assert jnp.average(np.arange(4, dtype=np.int32)).dtype == np.float32
    with pytest.raises(ValueError, match="Axis must be specified"):
        jnp.average(a, weights=w)
    with pytest.raises(ValueError, match="Length of weights"):
        jnp.average(a, axis=0, weights=w)


def test_cov_matches_numpy():
    m = np.random.default_rng(4).normal(size=(3, 6))
    y = np.random.default_rng(5).normal(size=(2, 6))
    np.testing.assert_allclose(jnp.cov(m), np.cov(m), rtol=1e-5)
    np.testing.assert_allclose(jnp.cov(m.T, rowvar=False), np.cov(m.T, rowvar=False), rtol=1e-5)
    np.testing.assert_allclose(jnp.cov(m, bias=True), np.cov(m, bias=True), rtol=1e-5)
    np.testing.assert_allclose(jnp.cov(m, ddof=2), np.cov(m, ddof=2), rtol=1e-5)
    np.testing.assert_allclose(jnp.cov(m, y), np.cov(m, y), rtol=1e-5)
    np.testing.assert_allclose(jnp.cov(m[0]), np.cov(m[0]), rtol=1e-5)
    assert jnp.cov(m[0]).shape == ()
    assert jnp.cov(np.arange(6, dtype=np.int32).reshape(2, 3)).dtype == np.float32
    with pytest.raises(ValueError):
        jnp.cov(np.ones((2, 2, 2)))


def average_cov_loss(a, w):
    return jnp.sum(jnp.average(a, axis=1, weights=w) ** 2) + jnp.sum(jnp.cov(a * w) ** 2)


def test_average_cov_grads_match_finite_differences(x64):
    rng = np.random.default_rng(6)
    a, w = rng.normal(size=(3, 4)), rng.uniform(0.5, 2.0, size=4)
    ga, gw = srcjax.grad(average_cov_loss, argnums=(0, 1))(a, w)
    np.testing.assert_allclose(ga, fd_grad(lambda a: average_cov_loss(a, w), a), rtol=1e-6)
    np.testing.assert_allclose(gw, fd_grad(lambda w: average_cov_loss(a, w), w), rtol=1e-6)
    xs = np.stack([a, a + 1.0, 2.0 * a])
    got = srcjax.vmap(average_cov_loss, in_axes=(0, None))(xs, w)
    np.testing.assert_allclose(got, [average_cov_loss(x, w) for x in xs], rtol=1e-10)


def test_logsumexp_b_and_return_sign_match_scipy():
    sp = pytest.importorskip("scipy.special")
    S = SS
    a = np.random.default_rng(7).normal(size=(3, 4))
    b = np.random.default_rng(8).normal(size=(3, 4))
    np.testing.assert_allclose(S.logsumexp(a, axis=1, b=np.abs(b)),
                               sp.logsumexp(a, axis=1, b=np.abs(b)), rtol=1e-5)  # fmt: skip
    got, sign = S.logsumexp(a, axis=0, b=b, return_sign=True)
    want, want_sign = sp.logsumexp(a, axis=0, b=b, return_sign=True)
    np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_array_equal(sign, want_sign)
    neg = S.logsumexp(a, axis=0, b=b)  # a negative sum is NaN without return_sign (JAX)
    np.testing.assert_array_equal(np.isnan(neg), want_sign < 0)
    assert S.logsumexp(a.astype(np.float32), b=np.float32(2.0)).dtype == np.float32
    np.testing.assert_allclose(srcjax.nn.logsumexp(a, b=2.0), sp.logsumexp(a, b=2.0), rtol=1e-5)


def lse_b_loss(a, b):
    return jnp.sum(SS.logsumexp(a, axis=1, b=b) ** 2)


def test_logsumexp_b_grads_match_finite_differences(x64):
    rng = np.random.default_rng(9)
    a, b = rng.normal(size=(3, 4)), rng.uniform(0.5, 2.0, size=(3, 4))
    ga, gb = srcjax.grad(lse_b_loss, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(ga, fd_grad(lambda a: lse_b_loss(a, b), a), rtol=1e-6)
    np.testing.assert_allclose(gb, fd_grad(lambda b: lse_b_loss(a, b), b), rtol=1e-6)
    got = srcjax.vmap(lse_b_loss)(np.stack([a, a + 1.0]), np.stack([b, 2.0 * b]))
    np.testing.assert_allclose(got, [lse_b_loss(a, b), lse_b_loss(a + 1.0, 2.0 * b)], rtol=1e-10)


# -- float16 accumulates in float32, as in JAX (user report P5) -----------------------------
H16 = np.linspace(0, 100, 1000).astype(np.float16)
ONES16 = np.ones(3000, np.float16)


def _f16(got, want, rtol=1e-3):
    assert np.asarray(got).dtype == np.float16
    np.testing.assert_allclose(np.asarray(got, np.float32), want, rtol=rtol)


def test_float16_reductions_accumulate_in_float32():
    # expected values: JAX 0.10.2 (x64 off); srcjax gave inf / 2048
    _f16(jnp.sum(H16), 50016.0)
    _f16(jnp.sum(H16, dtype=np.float16), 50016.0)
    _f16(jnp.sum(ONES16), 3000.0)
    _f16(jnp.mean(H16), 50.0)
    _f16(jnp.var(H16), 835.0)
    _f16(jnp.var(H16, ddof=1), 836.0)
    _f16(jnp.std(H16), 28.890625)
    _f16(jnp.var(H16.reshape(10, 100), axis=1)[:2], [8.3515625, 8.3515625])
    _f16(jnp.trapezoid(H16), 49952.0)
    _f16(jnp.cumsum(ONES16)[-1], 3000.0)
    _f16(jnp.cumsum(np.ones((3000, 2), np.float16), axis=0)[-1], [3000.0, 3000.0])
    _f16(jnp.prod(np.full(10, 1.5, np.float16)), 57.65625)
    _f16(jnp.cumprod(np.full(10, 1.5, np.float16))[-1], 57.6875)
    _f16(jnp.average(H16), 50.0)
    _f16(jnp.nansum(H16), 50016.0)
    _f16(jnp.nanmean(H16), 50.03125)
    _f16(jnp.nanvar(H16), 835.0)
    _f16(jnp.nanstd(H16), 28.890625)
    _f16(SS.logsumexp(H16 / 10), 14.609375)
    assert np.isinf(jnp.average(H16, weights=H16))  # JAX: inf too (sum of squares > f16 max)


def test_float16_reductions_under_transforms():
    # JAX 0.10.2: jit(var) 835, grads in float16
    _f16(srcjax.jit(jnp.var)(H16), 835.0)
    _f16(srcjax.jit(jnp.sum)(H16), 50016.0)
    x = np.linspace(0, 10, 3000).astype(np.float16)
    _f16(srcjax.jit(lambda x: jnp.sum((x - jnp.mean(x)) ** 2))(x), 25020.0)
    g = srcjax.grad(jnp.var)(H16)
    _f16(g[[0, 1, -1]], [-0.0999755859375, -0.09979248046875, 0.0999755859375])
    g = srcjax.grad(jnp.std)(H16)
    _f16(g[[0, -1]], [-0.0017299652099609375, 0.0017299652099609375], rtol=2e-3)
    _f16(srcjax.grad(lambda x: jnp.cumsum(x)[-1])(ONES16), np.ones(3000))
    _f16(srcjax.grad(jnp.trapezoid)(H16)[[0, 1, -1]], [0.5, 1.0, 0.5])


def test_var_std_derivatives_of_complex_values():
    # JAX 0.10.2: d var = 2 re(conj(x - m) dx) / n (srcjax missed the conjugate)
    x = np.array([0.5, -1.0, 2.0], np.float32)
    f = lambda x: jnp.var(jnp.exp(1j * x) * x)  # noqa: E731
    np.testing.assert_allclose(srcjax.grad(f)(x), [-0.12599546, 0.16124532, 0.81997633], rtol=1e-5)
    g = srcjax.grad(lambda x: jnp.std(jnp.exp(1j * x) * x))(x)
    np.testing.assert_allclose(g, [-0.07430499, 0.09509331, 0.48357546], rtol=1e-5)
    _, t = srcjax.jvp(f, (x,), (np.ones(3, np.float32),))
    assert np.isrealobj(t)
    np.testing.assert_allclose(t, 0.8552262, rtol=1e-5)
    z = np.array([1 + 2j, 0.5 - 1j, 2j], np.complex64)
    want = [0.33333334 - 0.6666667j, 1.3333334j, -0.33333334 - 0.6666667j]
    np.testing.assert_allclose(srcjax.grad(jnp.var)(z), want, rtol=1e-5, atol=1e-7)
    with pytest.raises(srcjax.errors.NonDifferentiableError, match="nanvar"):
        srcjax.grad(lambda x: jnp.nanvar(jnp.exp(1j * x)))(x)


def test_cumsum_and_cumprod_keep_integer_dtypes():
    """cumsum/cumprod of int8/uint8 gave int32/uint32; JAX keeps an integer
    input's dtype (bool accumulates in int32; sum does promote). Oracle: JAX
    0.10.2 dtypes (fresh-user P9)."""
    assert jnp.cumsum(np.ones(3, np.int8)).dtype == np.int8
    assert jnp.cumprod(np.ones(3, np.int8)).dtype == np.int8
    assert jnp.cumsum(np.ones(3, np.uint8)).dtype == np.uint8
    assert jnp.cumsum(np.ones(3, bool)).dtype == np.int32
    assert jnp.sum(np.ones(3, np.int8)).dtype == np.int32
    np.testing.assert_array_equal(jnp.cumsum(np.full(3, 2, np.int8)), [2, 4, 6])


# -- user A bugs 4 and 5: precision of logsumexp's derivatives and of float32 cumsum --------
RECORDED = pathlib.Path(__file__).parent / "data" / "reductions_jax.npz"
X1 = np.array([1e5, 1e5 + 1], np.float32)
X2 = np.array([[1e5, 1e5 + 1, 1e5 - 2], [-3e4, -3e4 + 0.5, -3e4 + 2]], np.float32)
B2 = np.array([[1.0, 2.0, 0.5], [0.3, 1.0, 2.0]], np.float32)
BS = np.array([[1.0, -3.0, 0.5], [-0.3, 1.0, 2.0]], np.float32)  # row 0 sums negative
B0 = np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]], np.float32)  # b == 0 drops a term
XB0 = np.array([[1e5, 1.0, 2.0], [3.0, 5e4, 4.0]], np.float32)
T2 = np.array([[0.5, -1.0, 2.0], [1.0, 0.25, -0.5]], np.float32)
W1 = np.array([1.0, 2.0], np.float32)
W0 = np.array([[1.0, -2.0, 0.5]], np.float32)
V = np.full(10**6, 0.1, np.float32)
M3 = np.full((200000, 3), 0.1, np.float32) * np.array([1.0, 2.0, 3.0], np.float32)
OVER = np.array([3e38, 3e38, -3e38, -3e38, 1.0], np.float32)


def _lse_cumsum_compute(jax, jnp, lse):
    """The programs of bugs 4 and 5 (and the neighbouring paths), for JAX and srcjax."""
    r = {}
    r["lse_grad"] = jax.grad(lambda x: lse(x))(X1)
    r["lse_grad_axis1"] = jax.grad(lambda x: jnp.sum(lse(x, axis=1) * W1))(X2)
    r["lse_grad_axis0_keepdims"] = jax.grad(lambda x: jnp.sum(lse(x, 0, keepdims=True) * W0))(X2)
    r["lse_grad_b_a"] = jax.grad(lambda x: jnp.sum(lse(x, axis=1, b=B2) * W1))(X2)
    r["lse_grad_b_b"] = jax.grad(lambda b: jnp.sum(lse(X2, axis=1, b=b) * W1))(B2)
    r["lse_grad_b0_a"] = jax.grad(lambda x: jnp.sum(lse(x, axis=1, b=B0) * W1))(XB0)
    r["lse_grad_b0_b"] = jax.grad(lambda b: jnp.sum(lse(XB0, axis=1, b=b) * W1))(B0)
    r["lse_b0_value"] = lse(XB0, axis=1, b=B0)
    r["lse_grad_negative_sum"] = jax.grad(lambda x: jnp.sum(lse(x, axis=1, b=BS) * W1))(X2)
    r["lse_rs_grad_a"] = jax.grad(
        lambda x: jnp.sum(lse(x, axis=1, b=BS, return_sign=True)[0] * W1)
    )(X2)
    r["lse_rs_grad_b"] = jax.grad(
        lambda b: jnp.sum(lse(X2, axis=1, b=b, return_sign=True)[0] * W1)
    )(BS)
    r["lse_rs_jvp"] = jax.jvp(lambda x: lse(x, axis=1, b=BS, return_sign=True), (X2,), (T2,))[1][0]
    r["lse_jvp"] = jax.jvp(lambda x: lse(x, axis=1), (X2,), (T2,))[1]
    r["lse_jvp_b"] = jax.jvp(lambda x, b: lse(x, axis=1, b=b), (X2, B2), (T2, 0.5 * T2))[1]
    r["lse_jacfwd"] = jax.jacfwd(lambda x: lse(x, axis=1))(X2)
    r["lse_jacrev"] = jax.jacrev(lambda x: lse(x, axis=1))(X2)
    r["lse_hessian"] = jax.hessian(lambda x: lse(x))(X1)
    r["lse_hessian_b"] = jax.hessian(lambda x: lse(x, b=B2[0]))(X2[0])
    r["lse_vmap_grad"] = jax.vmap(jax.grad(lambda x: lse(x)))(X2)
    r["lse_vmap_grad_b"] = jax.vmap(jax.grad(lambda x, b: lse(x, b=b)))(X2, B2)
    r["lse_jit_grad_b"] = jax.jit(jax.grad(lambda x: lse(x, b=B2)))(X2)
    r["cumsum"] = jnp.cumsum(V)[np.array([0, 499999, 10**6 - 1])]
    r["cumsum_axis0"] = jnp.cumsum(M3, axis=0)[-1]
    r["cumsum_flat"] = jnp.cumsum(M3)[-1]
    r["cumsum_complex"] = jnp.cumsum(V * np.complex64(1 + 2j))[-1]
    r["cumsum_overflow"] = jnp.cumsum(OVER)
    r["cumsum_overflow_inf"] = jnp.cumsum(np.append(OVER, -np.inf).astype(np.float32))
    r["cumsum_grad"] = jax.grad(lambda v: jnp.sum(jnp.cumsum(v) * V))(V)[np.array([0, 500000])]
    r["cumsum_jvp"] = jax.jvp(jnp.cumsum, (V,), (V,))[1][-1]
    r["cumsum_jit"] = jax.jit(jnp.cumsum)(V)[-1]
    r["cumsum_vmap"] = jax.vmap(jnp.cumsum)(V.reshape(2, -1))[:, -1]
    r["cumulative_sum"] = jnp.cumulative_sum(V)[-1]
    return r


def _lse_cumsum_with_jax():
    import jax
    import jax.numpy as jjnp
    from jax.scipy.special import logsumexp

    return _lse_cumsum_compute(jax, jjnp, logsumexp)


def test_logsumexp_derivatives_and_float32_cumsum_match_jax():
    """User A bug 4: the derivatives of logsumexp were exp(x - lse) with a float32
    lse rounded by up to half an ulp of 1e5 (grad(logsumexp)([1e5, 1e5 + 1]) was
    [0.26914635 0.73161554], JAX [0.26894143 0.7310586]). Bug 5: float32 cumsum
    accumulated sequentially in float32 (cumsum(full(10**6, 0.1))[-1] 100958.34,
    JAX 100000.016). Oracle: JAX 0.10.2 (x64 off), recorded."""
    recorded = jax_recorded(RECORDED, _lse_cumsum_with_jax)
    ours = _lse_cumsum_compute(srcjax, jnp, SS.logsumexp)
    assert_matches_recorded(ours, recorded, rtol=3e-6, atol=1e-30)


def test_narrow_float_cumsum_is_jaxs():
    """float16 cumsum is JAX's (XLA's blocked scan, fresh-user F4-04), no longer
    the correctly rounded running sums: jax 0.10.2 gives 498.5 at the end here
    (exact 500), a few ulps off, and srcjax now gives the same bits."""
    h = np.full(5000, 0.1, np.float16)
    got = jnp.cumsum(h)
    assert got.dtype == np.float16
    # jax 0.10.2: jnp.cumsum(h)[[15, 16, 999, 4095, 4999]]
    want = [1.59765625, 1.697265625, 99.8125, 408.25, 498.5]
    assert np.asarray(got)[[15, 16, 999, 4095, 4999]].astype(np.float64).tolist() == want


@pytest.mark.parametrize(
    "shape, axis", [((4096, 64), 1), ((64, 300), 0), ((3, 70, 9), 1), ((2, 3, 200, 4), -2)]
)
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_short_axis_cumsum_is_the_float64_scan(shape, axis, dtype):
    """A float32 scan along a short axis of a large array (R4's 4096 paths of 64
    steps) runs as one add per position; the sums are NumPy's float64 running
    sums in the same order, rounded once (oracle: np.cumsum in float64)."""
    x = np.random.default_rng(3).standard_normal(shape) * 1e3
    x = (x + 1j * x[::-1] if dtype == np.complex64 else x).astype(dtype)
    wide = np.complex128 if dtype == np.complex64 else np.float64
    got = np.asarray(jnp.cumsum(x, axis=axis))
    assert got.dtype == dtype and got.shape == x.shape
    np.testing.assert_array_equal(got, np.cumsum(x, axis=axis, dtype=wide).astype(dtype))


def _compiled_scan_or_skip():
    from srcjax.primitives.reductions import cumulative

    if cumulative.SCAN_KERNEL.get() is None:
        pytest.skip("Numba is not available")
    return cumulative


def test_compiled_float32_cumsum_is_the_numpy_paths_bits():
    """With Numba, a large float32 scan along the last axis (or flattened) runs
    as one compiled pass (backends/numba_cpu/scans.py): bit for bit the NumPy
    path's float64 running sums rounded once (oracle: np.cumsum in float64),
    a leading -0.0 kept."""
    cumulative = _compiled_scan_or_skip()
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((300, 100)) * 1e4).astype(np.float32)
    x[:, 0] = -0.0
    x[7] = np.float32(1e-30)
    for axis in (1, -1, None):
        assert cumulative._compiled_rows(x, axis) is not None
        got = np.asarray(jnp.cumsum(x, axis=axis))
        want = np.cumsum(x, axis=axis, dtype=np.float64).astype(np.float32)
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    assert cumulative._compiled_rows(x, 0) is None  # (not the rows: the NumPy path)


def test_compiled_float32_cumsum_overflow_stays_infinite():
    """An overflow (or a NaN) in the compiled scan's result sends the scan to the
    NumPy path, whose running sum stays infinite as a float32 scan does. Oracle:
    a float32 Python loop."""
    _compiled_scan_or_skip()
    x = np.full((64, 300), 1.0, np.float32)
    x[3, :3] = [3e38, 3e38, -3e38]
    x[5, 10] = np.nan
    got = np.asarray(jnp.cumsum(x, axis=1))
    want = np.empty_like(x)
    with np.errstate(over="ignore", invalid="ignore"):
        for i in range(64):
            s = np.float32(0)
            for j in range(300):
                s = np.float32(s + x[i, j])
                want[i, j] = s
    np.testing.assert_array_equal(got, want)


def test_short_axis_cumsum_overflow_stays_infinite():
    """A float32 running sum that overflows stays inf along the axis (as a
    float32 scan does) on the short-axis path too: 3e38 + 3e38 is inf, adding
    -3e38 after it leaves inf (the float64 sum would come back to 3e38), and a
    NaN in the input is NaN from there on. Oracle: a float32 Python loop."""
    x = np.full((200, 64), 3e38, np.float32)
    x[5, 1] = -3e38
    x[7, 2] = np.nan
    x[:, 3:] = np.linspace(-1.0, 1.0, 200 * 61, dtype=np.float32).reshape(200, 61)
    got = np.asarray(jnp.cumsum(x, axis=0))
    want = np.empty_like(x)
    with np.errstate(over="ignore", invalid="ignore"):
        for j in range(3):
            s = np.float32(0)
            for i in range(200):
                s = np.float32(s + x[i, j])
                want[i, j] = s
    want[:, 3:] = np.cumsum(x[:, 3:], axis=0, dtype=np.float64).astype(np.float32)
    np.testing.assert_array_equal(got, want)


# -- lax.top_k (with its derivatives, vmap and jit), jnp.allclose / jnp.isclose -------------
TOPK_RECORDED = pathlib.Path(__file__).parent / "data" / "top_k_allclose_jax.npz"
TK = np.array(
    [[1.0, 3.0, 3.0, np.nan, -0.0, 0.0, -np.inf, 2.0], [5.0, -1.0, 5.0, 5.0, 0.5, 7.0, 0.0, 1.0]],
    np.float32,
)
TKF = np.array([[0.3, -1.2, 2.5, 0.7, 2.5], [1.5, 0.1, -0.4, 3.0, 0.2]], np.float32)
TKW = np.array([1.0, -2.0, 0.5], np.float32)


def _top_k_compute(jax, jnp, lax):
    r = {}
    for name, x, k in [
        ("f32", TK, 8),
        ("f32_k3", TK, 3),
        ("f64in", TK[1].astype(np.float64), 4),
        ("f16", TK.astype(np.float16), 5),
        ("i8", np.array([3, 1, 3, -128, 127, 2], np.int8), 4),
        ("u32", np.array([[3, 0, 4294967295, 3]], np.uint32), 3),
        ("bool", np.array([True, False, True, False]), 3),
        ("k0", TKF, 0),
        ("3d", np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) % 5, 2),
    ]:
        v, i = lax.top_k(x, k)
        r[f"top_k_{name}_values"], r[f"top_k_{name}_indices"] = v, i
    r["top_k_grad"] = jax.grad(lambda x: jnp.sum(lax.top_k(x, 3)[0] * TKW))(TKF)
    r["top_k_grad_square"] = jax.grad(lambda x: jnp.sum(lax.top_k(x * x, 2)[0]))(TKF)
    r["top_k_jvp"] = jax.jvp(lambda x: lax.top_k(x, 3)[0], (TKF,), (TKF + 1.0,))[1]
    r["top_k_jacfwd"] = jax.jacfwd(lambda x: lax.top_k(x, 2)[0])(TKF[0])
    r["top_k_jacrev"] = jax.jacrev(lambda x: lax.top_k(x, 2)[0])(TKF[0])
    r["top_k_vmap_values"], r["top_k_vmap_indices"] = jax.vmap(lambda x: lax.top_k(x, 2))(TKF)
    r["top_k_vmap_axis1"] = jax.vmap(lambda x: lax.top_k(x, 2)[0], in_axes=1)(TKF)
    r["top_k_vmap_grad"] = jax.vmap(jax.grad(lambda x: jnp.sum(lax.top_k(x, 2)[0] ** 2)))(TKF)
    r["top_k_jit_values"], r["top_k_jit_indices"] = jax.jit(lambda x: lax.top_k(x, 4))(TKF)
    r["top_k_jit_grad"] = jax.jit(jax.grad(lambda x: jnp.sum(lax.top_k(x, 3)[0] * TKW)))(TKF)
    a = np.array([1.0, 2.0, np.nan, np.inf, -np.inf, 1e-9, 100.0], np.float32)
    b = np.array([1.0 + 1e-6, 2.1, np.nan, np.inf, np.inf, 0.0, 100.001], np.float32)
    r["isclose"] = jnp.isclose(a, b)
    r["isclose_nan"] = jnp.isclose(a, b, equal_nan=True)
    r["isclose_tol"] = jnp.isclose(a, b, rtol=0.1, atol=0.0)
    r["isclose_int"] = jnp.isclose(
        np.array([10**9, 5], np.int32), np.array([10**9 + 1, 5], np.int32)
    )
    r["isclose_int_float"] = jnp.isclose(np.array([1, 2], np.int32), np.float32(1.0000001))
    r["isclose_complex"] = jnp.isclose(np.array([1 + 1j, 2j], np.complex64), 1 + 1.000001j)
    r["isclose_bcast"] = jnp.isclose(TKF, TKF[:1], atol=0.5)
    r["allclose"] = jnp.allclose(a, b)
    r["allclose_nan"] = jnp.allclose(a[:4], b[:4], rtol=1e-5, equal_nan=True)
    r["allclose_true"] = jnp.allclose(TKF, TKF + 1e-7)
    r["allclose_int"] = jnp.allclose(np.array([3, 4]), np.array([3, 4]))
    r["allclose_jit"] = jax.jit(lambda x, y: jnp.allclose(x, y, atol=0.2))(TKF, TKF + 0.1)
    r["allclose_vmap"] = jax.vmap(lambda x: jnp.allclose(x, TKF[0], atol=1.0))(TKF)
    return r


def _top_k_with_jax():
    import jax
    import jax.numpy as jjnp

    return _top_k_compute(jax, jjnp, jax.lax)


def test_top_k_allclose_isclose_match_jax():
    """lax.top_k (descending, NaN first, +0 before -0, ties to the lower index,
    int32 indices), its gradient (the cotangent scattered to the indices), jvp,
    vmap and jit; jnp.isclose / jnp.allclose. Oracle: JAX 0.10.2, recorded."""
    recorded = jax_recorded(TOPK_RECORDED, _top_k_with_jax)
    ours = _top_k_compute(srcjax, jnp, srcjax.lax)
    assert_matches_recorded(ours, recorded, rtol=1e-6)


def test_top_k_errors_and_finite_differences(x64):
    with pytest.raises(ValueError, match="nonnegative"):
        srcjax.lax.top_k(np.ones(3), -1)
    with pytest.raises(ValueError, match="no larger than"):
        srcjax.lax.top_k(np.ones(3), 4)
    with pytest.raises(ValueError, match="dimension"):
        srcjax.lax.top_k(np.float32(1.0), 1)
    with pytest.raises(TypeError):
        srcjax.lax.top_k(np.ones(3), 1.5)
    x = np.random.default_rng(3).normal(size=(3, 5))
    f = lambda x: jnp.sum(srcjax.lax.top_k(jnp.sin(x), 3)[0] ** 2)  # noqa: E731
    np.testing.assert_allclose(srcjax.grad(f)(x), fd_grad(f, x), rtol=1e-6, atol=1e-9)


# -- initial= and where= (user B bug 3) ----------------------------------------------------
MASKED_RECORDED = pathlib.Path(__file__).parent / "data" / "masked_reductions_jax.npz"
MS = np.array([-1.0, -2.0], np.float32)
MT = np.array([0.0, -2.0, 0.0], np.float32)  # ties initial=0
MA = np.array([[0.2, 0.4, 0.1], [1.5, 2.0, 1.2]], np.float32)  # row 0 has nothing > 1
MM = MA > 1.0
MC = np.array([[0.5, 1.5, 2.5], [3.0, -1.0, 1.0]], np.float32)


def _masked_compute(jax, jnp):
    r = {}
    hinge = lambda s: jnp.max(s, initial=0.0)  # noqa: E731
    r["max_initial_value"] = hinge(MS)
    r["max_initial_grad"] = jax.grad(hinge)(MS)
    r["min_initial_grad"] = jax.grad(lambda s: jnp.min(s, initial=0.0))(-MS)
    r["max_initial_jvp"] = jax.jvp(hinge, (MS,), (np.ones(2, np.float32),))[1]
    r["max_initial_tie_grad"] = jax.grad(hinge)(MT)
    r["max_initial_tie_jvp"] = jax.jvp(hinge, (MT,), (np.array([1.0, 2.0, 3.0], np.float32),))[1]
    r["min_initial_tie_grad"] = jax.grad(lambda s: jnp.min(s, initial=0.0))(-MT)
    rowmax = lambda a: jnp.sum(jnp.max(a, axis=1, initial=1.0) * W1)  # noqa: E731
    r["max_initial_axis_grad"] = jax.grad(rowmax)(MA)
    r["max_initial_axis_jit_grad"] = jax.jit(jax.grad(rowmax))(MA)
    r["max_initial_axis_vmap_grad"] = jax.vmap(jax.grad(lambda a: jnp.max(a, initial=1.0)))(MA)
    r["max_initial_axis_hessian_diag"] = jax.grad(
        lambda a: jnp.sum(jax.grad(lambda b: jnp.max(b * b, initial=1.0))(a))
    )(MA)
    row1 = lambda a: jnp.mean(a, axis=1, where=a > 1.0)[1]  # noqa: E731
    r["mean_where_value"] = jnp.mean(MA, axis=1, where=MM)
    r["mean_where_grad"] = jax.grad(row1)(MA)
    r["mean_where_grad_empty_row_read"] = jax.grad(lambda a: jnp.mean(a, axis=1, where=a > 1.0)[0])(
        MA
    )
    r["mean_where_jvp"] = jax.jvp(lambda a: jnp.mean(a, axis=1, where=MM), (MA,), (MC,))[1]
    r["mean_where_jit_grad"] = jax.jit(jax.grad(row1))(MA)
    r["mean_where_vmap_grad"] = jax.vmap(jax.grad(lambda a: jnp.mean(a, where=a > 1.0)))(MA)
    r["sum_where_grad"] = jax.grad(lambda a: jnp.sum(a, axis=1, where=MM)[1])(MA)
    reds = {
        "max": lambda a: jnp.max(a, axis=1, where=a > 1.0, initial=-5.0),
        "min": lambda a: jnp.min(a, axis=1, where=a > 1.0, initial=5.0),
    }
    alls = {
        "max": lambda a: jnp.max(a, where=a > 1.0, initial=-5.0),
        "min": lambda a: jnp.min(a, where=a > 1.0, initial=5.0),
    }
    for name, red in reds.items():
        r[f"{name}_where_value"] = red(MA)
        r[f"{name}_where_grad"] = jax.grad(lambda a: jnp.sum(red(a) * W1))(MA)  # noqa: B023
        r[f"{name}_where_jvp"] = jax.jvp(red, (MA,), (MC,))[1]
        r[f"{name}_where_vmap_grad"] = jax.vmap(jax.grad(alls[name]))(MA)
        r[f"{name}_where_jit_grad"] = jax.jit(jax.grad(lambda a: jnp.sum(red(a))))(MA)  # noqa: B023
    prow = lambda a: jnp.prod(a, axis=1, where=a > 1.0)  # noqa: E731
    r["prod_where_value"] = prow(MC)
    r["prod_where_all"] = jnp.prod(MC, where=MC > 1.0)
    r["prod_where_grad"] = jax.grad(lambda a: jnp.sum(prow(a) * W1))(MC)
    r["prod_where_jvp"] = jax.jvp(prow, (MC,), (MA,))[1]
    r["prod_where_vmap_grad"] = jax.vmap(jax.grad(lambda a: jnp.prod(a, where=a > 1.0)))(MC)
    r["prod_where_jit_grad"] = jax.jit(jax.grad(lambda a: jnp.sum(prow(a))))(MC)
    return r


def _masked_with_jax():
    import jax
    import jax.numpy as jjnp

    return _masked_compute(jax, jjnp)


def test_initial_and_where_reductions_match_jax():
    """User B bug 3: grad/jvp of max/min with ``initial=`` was NaN where the initial
    value wins (0/0 in the tie count), and grad of ``mean(where=)`` NaN on a row with
    no selected element even when the loss did not read it. Ties with ``initial``
    split the cotangent as JAX's ``lax.max(initial, reduce_max(x))`` does; ``where=``
    on max/min/prod as in JAX. Oracle: JAX 0.10.2 (x64 off), recorded."""
    recorded = jax_recorded(MASKED_RECORDED, _masked_with_jax)
    ours = _masked_compute(srcjax, jnp)
    assert_matches_recorded(ours, recorded, rtol=1e-6)


def test_max_where_needs_initial():
    with pytest.raises(ValueError, match="initial"):
        jnp.max(MA, where=MM)
    with pytest.raises(ValueError, match="initial"):
        srcjax.jit(lambda a: jnp.min(a, where=a > 1.0))(MA)


# Zero-size inputs (known gap of session 5): JAX's values, recorded from JAX 0.10.2 —
# mean/var/std of nothing are NaN (no warning), prod is 1, logsumexp is -inf, and
# every gradient is an empty float32 array of the input's shape. srcjax raised
# ZeroDivisionError (mean/var/std rules), IndexError (prod's) or NumPy's "zero-size
# array to reduction operation maximum" (logsumexp, softmax, log_softmax).
_EMPTY_CASES = [
    ("mean", lambda x: jnp.mean(x), (0,), np.nan),
    ("var", lambda x: jnp.var(x), (0,), np.nan),
    ("std", lambda x: jnp.std(x), (0,), np.nan),
    ("prod", lambda x: jnp.prod(x), (0,), 1.0),
    ("mean axis 0", lambda x: jnp.sum(jnp.mean(x, axis=0)), (0, 3), np.nan),
    ("var axis 0", lambda x: jnp.sum(jnp.var(x, axis=0)), (0, 3), np.nan),
    ("prod axis 0", lambda x: jnp.sum(jnp.prod(x, axis=0)), (0, 3), 3.0),
    ("logsumexp", lambda x: SS.logsumexp(x), (0,), -np.inf),
    ("softmax", lambda x: jnp.sum(srcjax.nn.softmax(x)), (0,), 0.0),
    ("log_softmax axis 0", lambda x: jnp.sum(srcjax.nn.log_softmax(x, axis=0)), (0, 3), 0.0),
]


@pytest.mark.parametrize("name,f,shape,value", _EMPTY_CASES, ids=[c[0] for c in _EMPTY_CASES])
def test_zero_size_reductions_and_their_gradients(name, f, shape, value, recwarn):
    x = np.zeros(shape, np.float32)
    v = f(x)
    assert np.asarray(v).dtype == np.float32
    np.testing.assert_array_equal(v, np.float32(value))
    for g in (srcjax.grad(f), srcjax.jit(srcjax.grad(f))):
        gx = g(x)
        assert gx.shape == shape and gx.dtype == np.float32
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_var_std_with_ddof_equal_to_n():
    """n == ddof: NaN value and gradient as JAX (was ZeroDivisionError in the rule)."""
    x1 = np.array([2.0], np.float32)
    assert np.isnan(jnp.var(x1, ddof=1))
    assert np.isnan(srcjax.grad(lambda x: jnp.var(x, ddof=1))(x1)).all()
    assert np.isnan(srcjax.grad(lambda x: jnp.std(x, ddof=1))(x1)).all()


def test_vmap_grad_of_var_ddof_matches_loop():
    """ad.dof_scale (var/std's 1/(n - ddof)) batches as one number for every row."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4) ** 1.5
    pairs = [
        (lambda r: jnp.var(r, ddof=1), lambda r: np.var(r, ddof=1)),
        (lambda r: jnp.std(r), np.std),
    ]
    for fn, oracle in pairs:
        got = srcjax.jit(srcjax.vmap(srcjax.grad(fn)))(x)
        want = np.stack([fd_grad(oracle, row.astype(np.float64)) for row in x])
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_top_k_returns_a_list_as_jax():
    """User H: lax.top_k returned a tuple; JAX 0.10.2 returns [values, indices]
    (the pytree structure differs). Eager and jit; derivatives unchanged."""
    x = np.array([[3.0, 1.0, 4.0, 1.5], [0.5, 9.0, 2.0, 6.0]], np.float32)
    for r in (srcjax.lax.top_k(x, 2), srcjax.jit(lambda v: srcjax.lax.top_k(v, 2))(x)):
        assert type(r) is list and len(r) == 2
        np.testing.assert_array_equal(r[0], [[4.0, 3.0], [9.0, 6.0]])
        np.testing.assert_array_equal(r[1], [[2, 0], [1, 3]])
    g = srcjax.grad(lambda v: jnp.sum(srcjax.lax.top_k(v, 2)[0] ** 2))(x)
    np.testing.assert_array_equal(g, [[6.0, 0.0, 8.0, 0.0], [0.0, 18.0, 0.0, 12.0]])
    t = srcjax.jvp(lambda v: srcjax.lax.top_k(v[0], 2)[0], (x,), (np.ones_like(x),))[1]
    np.testing.assert_array_equal(t, [1.0, 1.0])


def _cumsum_then_mean(x):
    c = jnp.cumsum(x, axis=1)
    return jnp.mean(c, axis=-1) + jnp.ndim(c)


def test_jit_knows_cumsum_keeps_its_operands_shape():
    """jit's abstract interpretation gave cumsum (a primitive of the reduction
    kind) the shape of a reduction over its axis: ``jnp.ndim(cumsum(x, axis=1))``
    of a matrix was folded to 1 and the mean after it taken over the wrong axis
    (this returned [3.5, 13.5, ...]). Oracle: NumPy."""
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    got = srcjax.jit(_cumsum_then_mean)(x)
    np.testing.assert_array_equal(got, np.mean(np.cumsum(x, axis=1), axis=-1) + 2)
