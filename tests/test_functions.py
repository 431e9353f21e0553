"""jnp functions written as compositions of primitives (srcjax/numpy/_functions/),
checked against values recorded from JAX 0.10.2 (tests/data/functions_jax.npz):
values, shapes and dtypes, eagerly and under grad, vmap and jit.

To re-record with JAX installed: ``SRCJAX_RECORD_JAX=1 python -m pytest
tests/test_functions.py`` (overwrites the .npz from jax itself)."""

import pathlib

import numpy as np
from helpers import assert_matches_recorded, jax_recorded

import srcjax
import srcjax.numpy as sjnp

DATA = pathlib.Path(__file__).parent / "data" / "functions_jax.npz"


def _compute(jax, jnp):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(3, 4)).astype(np.float32)
    v = rng.normal(size=(4,)).astype(np.float32)
    z = np.array([1 + 2j, -1 - 0.5j, 3.0], np.complex64)
    b = a.copy()
    b[0, :] = np.nan
    b[1, 2] = np.nan
    r = {}
    r["atleast_shapes"] = np.array(
        [
            np.asarray(jnp.atleast_1d(1.0)).shape + (0, 0),
            np.asarray(jnp.atleast_2d(v)).shape + (0,),
            np.asarray(jnp.atleast_3d(a)).shape,
            np.asarray(jnp.atleast_3d(v)).shape,
        ],
        dtype=object,
    ).astype(str)
    r["atleast_many"] = np.array(len(jnp.atleast_1d(1.0, v)))
    r["column_stack"] = jnp.column_stack([v, v * 2, a.T])
    r["dstack"] = jnp.dstack([a, a + 1])
    r["hsplit"] = jnp.hsplit(a, 2)[1]
    r["vsplit"] = jnp.vsplit(np.ones((4, 2), np.float32) * np.arange(4)[:, None], [1])[1]
    r["fliplr"] = jnp.fliplr(a)
    r["flipud"] = jnp.flipud(a)
    for k in range(-1, 5):
        r[f"rot90_{k}"] = jnp.rot90(a, k)
    r["rot90_axes"] = jnp.rot90(np.arange(24.0).reshape(2, 3, 4).astype(np.float32), 1, (2, 0))
    r["permute_dims"] = jnp.permute_dims(np.arange(24.0).reshape(2, 3, 4), (2, 0, 1))
    r["tri"] = jnp.tri(3, 4, 1)
    r["tri_int"] = jnp.tri(3, dtype=jnp.int32)
    r["copysign"] = jnp.copysign(v, np.array([1.0, -0.0, 0.0, -2.0], np.float32))
    r["heaviside"] = jnp.heaviside(np.array([-1.0, 0.0, 2.0, np.nan], np.float32), 0.5)
    q, m = jnp.divmod(np.array([7, -7, 7, -7]), np.array([2, 2, -2, -2]))
    r["divmod_q"], r["divmod_r"] = q, m
    r["angle"] = jnp.angle(z)
    r["angle_deg"] = jnp.angle(z, deg=True)
    r["angle_real"] = jnp.angle(np.array([-1.0, 2.0]))
    r["iscomplexobj"] = np.array([jnp.iscomplexobj(z), jnp.iscomplexobj(a)])
    r["isscalar"] = np.array(
        [jnp.isscalar(1.0), jnp.isscalar(np.float32(1)), jnp.isscalar(v), jnp.isscalar([1])]
    )
    r["ptp"] = jnp.ptp(a, axis=1)
    r["ptp_all"] = jnp.ptp(a)
    r["select"] = jnp.select([a > 0.5, a < -0.5], [a, 2 * a], -1.0)
    r["cumulative_sum"] = jnp.cumulative_sum(v, include_initial=True)
    r["cumulative_sum_axis"] = jnp.cumulative_sum(a, axis=1)
    r["ediff1d"] = jnp.ediff1d(a, to_end=np.array([9.0]), to_begin=0.0)
    r["vecdot"] = jnp.vecdot(a, v)
    r["vecdot_complex"] = jnp.vecdot(z, z)
    r["isin"] = jnp.isin(np.array([[1, 2], [3, 4]]), np.array([2, 4, 6]))
    r["isin_invert"] = jnp.isin(np.array([1, 2]), np.array([2]), invert=True)
    r["digitize"] = jnp.digitize(v, np.array([-1.0, 0.0, 1.0], np.float32))
    r["digitize_right"] = jnp.digitize(
        np.array([0.0, 1.0, 2.5]), np.array([0.0, 1.0, 2.0]), right=True
    )
    r["digitize_decreasing"] = jnp.digitize(np.array([0.0, 1.0, 2.5]), np.array([2.0, 1.0, 0.0]))
    r["nanargmax"] = jnp.nanargmax(b, axis=1)
    r["nanargmin"] = jnp.nanargmin(b, axis=1)
    # derivatives and transforms
    r["grad_ptp"] = jax.grad(lambda x: jnp.sum(jnp.ptp(x, axis=0) ** 2))(a)
    r["grad_select"] = jax.grad(
        lambda x: jnp.sum(jnp.select([x > 0.5, x < -0.5], [x * x, jnp.sin(x)], 0.0))
    )(a)
    r["grad_rot90"] = jax.grad(lambda x: jnp.sum(jnp.rot90(x) * jnp.arange(12.0).reshape(4, 3)))(a)
    r["grad_copysign"] = jax.grad(lambda x: jnp.sum(jnp.copysign(x, -1.0) * x))(v)
    r["grad_vecdot"] = jax.grad(lambda x: jnp.sum(jnp.vecdot(x, v) ** 2))(a)
    r["grad_cumulative_sum"] = jax.grad(
        lambda x: jnp.sum(jnp.cumulative_sum(x, include_initial=True) ** 2)
    )(v)
    r["vmap_atleast_2d"] = jax.vmap(lambda x: jnp.atleast_2d(x).sum(0))(a)
    r["jit_rot90"] = jax.jit(lambda x: jnp.rot90(x, 3))(a)
    r["jit_dstack"] = jax.jit(lambda x: jnp.dstack([x, x]))(a)
    r["vmap_select"] = jax.vmap(lambda x: jnp.select([x > 0], [x], 5.0))(a)
    return {k: np.asarray(v) for k, v in r.items()}


def _compute_with_jax():
    import jax
    import jax.numpy as jjnp

    return _compute(jax, jjnp)


def test_values_shapes_dtypes_match_jax():
    recorded = jax_recorded(DATA, _compute_with_jax)
    assert_matches_recorded(_compute(srcjax, sjnp), recorded, rtol=1e-5, atol=1e-6)


def test_varargs_helper_is_inlined_under_transforms():
    """A `def f(*xs)` helper called from transformed code binds `xs` to a tuple
    (atleast_1d(*arys) needs it); each inlined call gets its own tuple."""
    from helpers_varargs import pair_total, single_total

    a = np.ones(2, np.float32)
    b = np.arange(2.0, dtype=np.float32)
    assert pair_total(a, b) == np.float32(33.0)
    np.testing.assert_array_equal(srcjax.grad(pair_total)(a, b), 30.0 * a)
    assert srcjax.jit(pair_total)(a, b) == np.float32(33.0)
    np.testing.assert_array_equal(
        srcjax.vmap(pair_total)(np.stack([a, b]), np.stack([b, a])), [33.0, 21.0]
    )
    # total() with no arguments, then total(a): the second call reads its own tuple
    np.testing.assert_array_equal(srcjax.grad(single_total)(a), 2.0 * a)


def test_cumulative_sum_accumulates_small_ints_as_sum():
    """Fresh-user run 5: cumulative_sum kept int8 and overflowed ([100, -56, 44]);
    JAX 0.10.2 accumulates in int32 (uint8 in uint32), as sum does."""
    got = sjnp.cumulative_sum(np.array([100, 100, 100], np.int8))
    assert got.dtype == np.int32 and list(got) == [100, 200, 300]
    assert sjnp.cumulative_sum(np.ones(3, np.uint8)).dtype == np.uint32
    assert sjnp.cumulative_sum(np.ones(3, np.float16)).dtype == np.float16


def test_rot90_by_a_full_turn_is_canonical():
    """Fresh-user run 5: rot90(k=4) of an int64 array returned int64 (JAX: int32)."""
    assert sjnp.rot90(np.arange(4).reshape(2, 2), 4).dtype == np.int32


# ---------------------------------------------------------------------------
# lexsort, histogram, histogram_bin_edges, float_power, ix_: values recorded
# from JAX 0.10.2 in tests/data/functions_hist_jax.npz.
HIST_DATA = pathlib.Path(__file__).parent / "data" / "functions_hist_jax.npz"


def _hist_inputs():
    rng = np.random.default_rng(3)
    x = rng.normal(size=(40,)).astype(np.float32)
    w = rng.uniform(size=(40,)).astype(np.float32)
    k1 = np.array([2, 4, 2, 3, 5, 3, 2], np.int32)
    k2 = np.array([1, 2, 1, 3, 2, 1, 1], np.int32)
    kf = np.array([0.5, np.nan, -1.0, 0.5, 2.0, -np.inf, 0.5], np.float32)
    return x, w, k1, k2, kf


def _hist_compute(jax, jnp):
    x, w, k1, k2, kf = _hist_inputs()
    r = {}
    r["lexsort"] = jnp.lexsort([k1, k2])
    r["lexsort_3"] = jnp.lexsort((k1, kf, k2))
    r["lexsort_float"] = jnp.lexsort([kf])
    r["lexsort_array"] = jnp.lexsort(np.stack([k1, k2]))
    two = np.stack([k1[:6].reshape(2, 3), k2[:6].reshape(2, 3)])
    r["lexsort_axis0"] = jnp.lexsort(two, axis=0)
    r["lexsort_axis1"] = jnp.lexsort(two)
    r["lexsort_scalar"] = jnp.lexsort([np.float32(1.0)])
    r["vmap_lexsort"] = jax.vmap(lambda a, b: jnp.lexsort((a, b)))(two[0], two[1])
    r["jit_lexsort"] = jax.jit(lambda a, b: jnp.lexsort([a, b]))(k1, kf)
    hists = {
        "default": dict(),
        "bins5": dict(bins=5),
        "range": dict(bins=4, range=(-1.0, 1.0)),
        "edges": dict(bins=np.array([-2.0, -0.5, 0.0, 0.3, 2.0], np.float32)),
        "weights": dict(bins=6, weights=w),
        "density": dict(bins=7, density=True),
        "density_w": dict(bins=np.array([-3.0, 0.0, 0.5, 3.0]), weights=w, density=True),
    }
    for name, kw in hists.items():
        r[f"hist_{name}"], r[f"hist_{name}_edges"] = jnp.histogram(x, **kw)
    r["hist_int"], r["hist_int_edges"] = jnp.histogram(np.array([1, 2, 2, 3, 7]), bins=3)
    r["hist_const"], r["hist_const_edges"] = jnp.histogram(np.full(4, 2.0, np.float32), bins=2)
    r["hist_2d"], r["hist_2d_edges"] = jnp.histogram(x.reshape(5, 8), bins=3, range=(0, 1))
    r["hist_int_w"], _ = jnp.histogram(np.array([1.0, 2.0]), bins=2, weights=np.array([3, 4]))
    r["bin_edges"] = jnp.histogram_bin_edges(x, bins=4)
    r["bin_edges_range"] = jnp.histogram_bin_edges(x, 3, range=[0, 2])
    r["bin_edges_int"] = jnp.histogram_bin_edges(np.arange(5), 2)
    r["grad_hist_weights"] = jax.grad(
        lambda w: jnp.sum(jnp.histogram(x, bins=5, weights=w)[0] ** 2)
    )(w)
    r["grad_hist_density"] = jax.grad(
        lambda x: jnp.sum(jnp.histogram(x, bins=4, density=True)[0] * jnp.arange(4.0))
    )(x)
    r["grad_bin_edges"] = jax.grad(lambda x: jnp.sum(jnp.histogram_bin_edges(x, 3) ** 2))(x)
    r["vmap_hist"] = jax.vmap(lambda x: jnp.histogram(x, bins=3, range=(-1, 1))[0])(
        x.reshape(4, 10)
    )
    r["vmap_hist_auto"] = jax.vmap(lambda x: jnp.histogram(x, bins=3))(x.reshape(4, 10))
    r["jit_hist"] = jax.jit(lambda x, w: jnp.histogram(x, bins=4, weights=w, density=True))(x, w)
    a = np.array([0.5, 2.0, 0.0, 3.0], np.float32)
    r["float_power"] = jnp.float_power(a, np.array([2.0, -1.5, 3.0, 0.5], np.float32))
    r["float_power_int"] = jnp.float_power(np.array([2, 3, -2]), 2)
    r["float_power_int_neg"] = jnp.float_power(np.array([2, 4]), np.array([-1, -2]))
    r["float_power_scalar"] = jnp.float_power(a, 2)
    r["float_power_nan"] = jnp.float_power(-3.0, 1.7)
    r["float_power_f16"] = jnp.float_power(np.float16([1.5, 2.0]), np.float16(3))
    r["float_power_c"] = jnp.float_power(np.complex64([1 + 1j]), 2.0)
    r["grad_float_power_x"] = jax.grad(lambda x: jnp.sum(jnp.float_power(x, 2.5)))(a)
    r["grad_float_power_y"] = jax.grad(lambda y: jnp.sum(jnp.float_power(a, y)))(a + 1.0)
    r["vmap_float_power"] = jax.vmap(jnp.float_power)(a, a + 1.0)
    ix = jnp.ix_(np.array([0, 2]), np.array([1, 3, 0]))
    r["ix_0"], r["ix_1"] = ix
    grid = np.arange(20.0, dtype=np.float32).reshape(4, 5)
    r["ix_take"] = grid[jnp.ix_(np.array([3, 1]), np.array([4, 0, 2]))]
    r["ix_three"] = jnp.ix_(np.array([1.5]), np.array([1, 2]), np.array([0, 1, 2]))[2]
    r["ix_empty"] = jnp.ix_(np.array([], np.float32), np.array([1]))[0]
    r["grad_ix"] = jax.grad(lambda u, v: jnp.sum(jnp.sin(sum(jnp.ix_(u, v)))), argnums=(0, 1))(
        a, a[:3]
    )
    r["jit_ix"] = jax.jit(lambda u, v: jnp.asarray(grid)[jnp.ix_(u, v)])(
        np.array([0, 3]), np.array([1])
    )
    out = {}
    for k, v in r.items():
        if isinstance(v, tuple):
            for j, e in enumerate(v):
                out[f"{k}_{j}"] = np.asarray(e)
        else:
            out[k] = np.asarray(v)
    return out


def _hist_with_jax():
    import jax
    import jax.numpy as jjnp

    return _hist_compute(jax, jjnp)


def test_lexsort_histogram_float_power_ix_match_jax():
    recorded = jax_recorded(HIST_DATA, _hist_with_jax)
    with np.errstate(all="ignore"):
        ours = _hist_compute(srcjax, sjnp)
    assert_matches_recorded(ours, recorded, rtol=1e-5, atol=1e-6)


def test_histogram_float_power_grads_match_finite_differences():
    from helpers import fd_grad

    from srcjax import config

    x, w, *_ = _hist_inputs()
    x, w = x.astype(np.float64), w.astype(np.float64)
    config.update("jax_enable_x64", True)
    try:
        cases = [
            (lambda w: sjnp.sum(sjnp.histogram(x, bins=5, weights=w)[0] ** 2), w),
            (lambda x: sjnp.sum(sjnp.histogram(x, 4, density=True)[0] * sjnp.arange(4.0)), x),
            (lambda x: sjnp.sum(sjnp.histogram_bin_edges(x, 3) ** 2), x),
            (lambda a: sjnp.sum(sjnp.float_power(a, 2.5) + sjnp.float_power(2.0, a)), w + 0.5),
        ]
        for f, v in cases:
            np.testing.assert_allclose(srcjax.grad(f)(v), fd_grad(f, v), rtol=1e-6, atol=1e-8)
    finally:
        config.update("jax_enable_x64", False)


def test_lexsort_histogram_vmap_and_jit():
    x, w, k1, k2, kf = _hist_inputs()
    xs = x.reshape(4, 10)
    ws = w.reshape(4, 10)
    cases = [
        (lambda a: sjnp.lexsort([a, -a]), xs),
        (lambda a: sjnp.histogram(a, bins=3, weights=a * a, density=True), xs),
        (lambda a: sjnp.histogram(ws[0], bins=a, weights=ws[1]), np.sort(xs[:, :4], axis=1)),
        (lambda a: sjnp.float_power(a, 1.5), ws),
        (lambda a: sjnp.ix_(a, a[:2])[1], xs),
        (srcjax.grad(lambda a: sjnp.histogram(a, bins=3, density=True)[0][1]), xs),
    ]
    for f, batch in cases:
        got = srcjax.tree_util.tree_leaves(srcjax.vmap(f)(batch))
        want = [srcjax.tree_util.tree_leaves(f(b)) for b in batch]
        for j, g in enumerate(got):
            np.testing.assert_allclose(g, np.stack([w_[j] for w_ in want]), rtol=1e-6, atol=1e-7)
        for g, e in zip(
            srcjax.tree_util.tree_leaves(srcjax.jit(f)(batch[0])),
            srcjax.tree_util.tree_leaves(f(batch[0])),
        ):
            np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-7)


def test_lexsort_histogram_ix_errors():
    import pytest

    with pytest.raises(TypeError, match="len > 0"):
        sjnp.lexsort([])
    with pytest.raises(ValueError, match="same shape"):
        sjnp.lexsort([np.ones(3), np.ones(4)])
    with pytest.raises(ValueError, match="same shape as a"):
        sjnp.histogram(np.ones(3), weights=np.ones(4))
    with pytest.raises(NotImplementedError, match="string values"):
        sjnp.histogram(np.ones(3), bins="auto")
    with pytest.raises(ValueError, match="sequence of scalars"):
        sjnp.histogram(np.ones(3), range=(0.0, 1.0, 2.0))
    with pytest.raises(ValueError, match="1-dimensional"):
        sjnp.ix_(np.ones((2, 2)))
    with pytest.raises(NotImplementedError, match="Boolean"):
        sjnp.ix_(np.array([True, False]))


def test_linspace_to_an_integer_dtype_floors_as_jax():
    """User D bug 1: linspace(..., dtype=int32) truncated toward zero (NumPy's
    cast); JAX 0.10.2 floors first ([-5, -2, 1, 5]), in eager, jit and vmap, and
    its retstep step stays float32. Under jit, linspace(..., int32) + an int32
    array was float64."""
    i32 = np.int32
    want = np.array([-5, -2, 1, 5], i32)
    got = sjnp.linspace(-5, 5, 4, dtype=sjnp.int32)
    assert got.dtype == i32
    np.testing.assert_array_equal(got, want)
    got = srcjax.jit(lambda: sjnp.linspace(-1, 0, 4, dtype=sjnp.int32))()
    assert got.dtype == i32
    np.testing.assert_array_equal(got, np.array([-1, -1, -1, 0], i32))
    v = np.arange(10, dtype=np.float32)
    got = srcjax.jit(lambda v: v[sjnp.linspace(-10, 0, 4, dtype=sjnp.int32)])(v)
    np.testing.assert_array_equal(got, np.array([0.0, 3.0, 6.0, 0.0], np.float32))
    got = srcjax.vmap(lambda s: sjnp.linspace(s, 0, 4, dtype=sjnp.int32))(
        np.array([-1.0, -5.0], np.float32)
    )
    assert got.dtype == i32
    np.testing.assert_array_equal(got, np.array([[-1, -1, -1, 0], [-5, -4, -2, 0]], i32))
    got, step = sjnp.linspace(-5, 5, 4, dtype=sjnp.int32, retstep=True)
    np.testing.assert_array_equal(got, want)
    assert step.dtype == np.float32 and np.isclose(step, 10 / 3)
    a = np.array([1, 2, 3, 4], i32)
    got = srcjax.jit(lambda a: sjnp.linspace(0, 10, 4, dtype=sjnp.int32) + a)(a)
    assert got.dtype == i32
    np.testing.assert_array_equal(got, np.array([1, 5, 9, 14], i32))


def test_histogram_weights_vmap_grad_matches_loop():
    """User F bug 6: vmap(grad) through histogram(..., weights=w) crashed (`w is
    None` of a batched w was taken as a per-example condition). Against the
    exact answer (each weight's bin index) and a per-example loop."""
    data = np.array([0.0, 1.0, 2.0, 3.0, 4.0], np.float32)
    W = np.array([[1.0, 2, 3, 4, 5], [5, 4, 3, 2, 1]], np.float32)

    def f(w):
        return sjnp.sum(sjnp.histogram(data, bins=3, weights=w)[0] * sjnp.arange(3.0))

    got = srcjax.vmap(srcjax.grad(f))(W)
    np.testing.assert_array_equal(got, [[0.0, 0, 1, 2, 2]] * 2)
    np.testing.assert_array_equal(got, np.stack([srcjax.grad(f)(w) for w in W]))
    # data batched too, and the weights' squares
    xs = np.stack([data, data[::-1] * 0.7])

    def h(x, w):
        return sjnp.sum(sjnp.histogram(x, bins=4, weights=w)[0] ** 2)

    got = srcjax.vmap(srcjax.grad(h, argnums=1))(xs, W)
    want = np.stack([srcjax.grad(h, argnums=1)(x, w) for x, w in zip(xs, W)])
    np.testing.assert_allclose(got, want, rtol=1e-6)
