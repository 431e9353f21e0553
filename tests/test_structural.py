"""Value checks of the structural primitives (indexing, ``.at[]``, list ops,
sort, pad, ...) against NumPy and JAX's conventions."""

import numpy as np
import pytest
from helpers import fd_grad

import srcjax
import srcjax.numpy as jnp
from srcjax.primitives import ad
from srcjax.primitives import structural as S
from srcjax.primitives.methods import ATTRIBUTES, METHODS


def vjp(p, g, *args, wrt, **kw):
    ans = p(*args, **kw)
    return p.vjps[wrt](g, ans, *args, **kw)


def test_getitem_kinds():
    m = np.arange(12.0).reshape(3, 4)
    for idx in [
        1,
        (1, 2),
        (slice(None, None, -1), 1),
        (Ellipsis, None, 0),
        np.array([2, 0]),
        (np.array([0, 2, 2]), np.array([1, 3, 3])),
        m > 5,
        (slice(None), [0, 0]),
    ]:
        np.testing.assert_array_equal(S.getitem(m, idx), m[idx])
    assert S.getitem({"a": 1, "b": 2}, "b") == 2
    assert S.getitem([10, 20, 30], 1) == 20
    assert S.getitem((1, 2, 3), slice(1, None)) == (2, 3)


def test_index_adjoint_accumulates_duplicates():
    x = np.array([10.0, 20.0, 30.0, 40.0])
    idx = np.array([0, 2, 2, -1])
    g = ad.index_adjoint(np.array([1.0, 2.0, 3.0, 4.0]), x, idx)
    np.testing.assert_array_equal(g, [1.0, 0.0, 5.0, 4.0])
    m = np.arange(12.0).reshape(3, 4)
    rows, cols = np.array([0, 2, 2]), np.array([1, 3, 3])
    g2 = ad.index_adjoint(2 * m[rows, cols], m, (rows, cols))
    expect = np.zeros((3, 4))
    expect[0, 1] = 2.0
    expect[2, 3] = 2 * 2 * 11.0
    np.testing.assert_array_equal(g2, expect)
    g3 = ad.index_adjoint(np.ones((3, 4)), m, np.array([1, 1, 0]))
    np.testing.assert_array_equal(g3, [[1] * 4, [2] * 4, [0] * 4])
    # upper triangle by scalar indexing accumulates nothing
    assert ad.index_adjoint(1.0, m, (1, 2))[1, 2] == 1.0


def test_index_adjoint_containers():
    assert ad.index_adjoint(5.0, {"a": 1.0, "b": np.ones(2)}, "a")["a"] == 5.0
    out = ad.index_adjoint(np.ones(2), [1.0, np.zeros(2), 3.0], 1)
    assert out[0] == 0.0 and out[2] == 0.0 and isinstance(out, list)
    out = ad.index_adjoint((7.0, 8.0), (1.0, 2.0, 3.0), slice(1, None))
    assert out == (0.0, 7.0, 8.0)


def test_argmax_index_gradient_first_tie():
    v = np.array([2.0, 5.0, 5.0, 5.0, 1.0])
    i = int(np.argmax(v))
    np.testing.assert_array_equal(ad.index_adjoint(1.0, v, i), [0, 1, 0, 0, 0])


def test_at_ops_functional():
    x = np.zeros(5)
    idx = np.array([0, 2, 2])
    y = S.at_add(x, idx, np.array([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(y, [1.0, 0.0, 5.0, 0.0, 0.0])
    assert (x == 0).all()  # functional
    np.testing.assert_array_equal(S.at_set(x, 1, 7.0), [0, 7, 0, 0, 0])
    np.testing.assert_array_equal(S.at_multiply(np.ones(3) * 2, np.array([1, 1]), 3.0), [2, 18, 2])
    np.testing.assert_array_equal(S.at_min(np.ones(3), 0, -1.0), [-1, 1, 1])
    np.testing.assert_array_equal(S.at_max(np.ones(3), (slice(None),), 0.0), [1, 1, 1])
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(S.at_set(m, (0, 1), 0.0)[0, 1], 0.0)


def test_at_gradients():
    x = np.arange(5.0)
    idx = np.array([0, 2, 2])
    v = np.array([1.0, 2.0, 3.0])
    g = np.arange(5.0) + 1
    np.testing.assert_array_equal(vjp(S.at_add, g, x, idx, v, wrt="v"), [1.0, 3.0, 3.0])
    np.testing.assert_array_equal(vjp(S.at_add, g, x, idx, v, wrt="x"), g)
    np.testing.assert_array_equal(vjp(S.at_set, g, x, 1, 9.0, wrt="x"), [1, 0, 3, 4, 5])
    assert vjp(S.at_set, g, x, 1, 9.0, wrt="v") == 2.0
    np.testing.assert_array_equal(vjp(S.at_set, g, x, slice(0, 2), 9.0, wrt="v"), 3.0)


def test_concat_stack_split_adjoints():
    a = np.array([[1.0, 2.0], [3.0, 4.0]])
    b = np.array([[0.5, -1.0], [2.0, 0.0]])
    c = S.concatenate([a, b], axis=1)
    parts = vjp(S.concatenate, np.arange(8.0).reshape(2, 4), [a, b], wrt="arrays", axis=1)
    assert isinstance(parts, list)
    np.testing.assert_array_equal(parts[0], [[0, 1], [4, 5]])
    np.testing.assert_array_equal(c, np.concatenate([a, b], 1))
    st = S.stack([a, b], axis=1)
    np.testing.assert_array_equal(st, np.stack([a, b], 1))
    gs = vjp(S.stack, np.ones((2, 2, 2)), [a, b], wrt="arrays", axis=1)
    assert len(gs) == 2 and gs[1].shape == (2, 2)
    p = S.split(np.arange(8.0).reshape(4, 2), 2)
    assert len(p) == 2
    g = vjp(S.split, [None, np.ones((2, 2))], np.arange(8.0).reshape(4, 2), 2, wrt="ary")
    np.testing.assert_array_equal(g, [[0, 0], [0, 0], [1, 1], [1, 1]])
    q = S.array_split(np.arange(8.0), 3)
    assert [len(t) for t in q] == [3, 3, 2]
    h = vjp(S.hstack, np.arange(4.0), [a[0], b[1]], wrt="tup")
    np.testing.assert_array_equal(h[1], [2.0, 3.0])
    v = vjp(S.vstack, np.ones((3, 2)), [np.ones(2), np.ones((2, 2))], wrt="tup")
    assert v[0].shape == (2,) and v[1].shape == (2, 2)


def test_sort_argsort_stable():
    x = np.array([3.0, 1.0, 3.0, 2.0])
    np.testing.assert_array_equal(S.argsort(x), [1, 3, 0, 2])
    assert S.argsort(x).dtype == np.int32
    np.testing.assert_array_equal(S.sort(x), [1, 2, 3, 3])
    np.testing.assert_array_equal(S.sort(x, descending=True), [3, 3, 2, 1])
    np.testing.assert_array_equal(S.argsort(x, descending=True), [0, 2, 3, 1])
    g = vjp(S.sort, np.array([10.0, 20.0, 30.0, 40.0]), x, wrt="a")
    np.testing.assert_array_equal(g, [30.0, 10.0, 40.0, 20.0])


def test_misc_values_match_numpy():
    m = np.arange(12.0).reshape(3, 4)
    np.testing.assert_array_equal(S.tile(m, (2, 1)), np.tile(m, (2, 1)))
    np.testing.assert_array_equal(S.repeat(m, 2, axis=0), np.repeat(m, 2, axis=0))
    np.testing.assert_array_equal(S.pad(m, 1), np.pad(m, 1))
    np.testing.assert_array_equal(S.roll(m, 1, 1), np.roll(m, 1, 1))
    np.testing.assert_array_equal(S.take(m, np.array([0, 5])), np.take(m, [0, 5]))
    np.testing.assert_array_equal(S.diag(np.array([1.0, 2.0]), 1), np.diag([1.0, 2.0], 1))
    np.testing.assert_array_equal(S.diagonal(m, 1), np.diagonal(m, 1))
    np.testing.assert_array_equal(S.triu(m, 1), np.triu(m, 1))
    np.testing.assert_array_equal(S.transpose(np.ones((2, 3, 4)), (2, 0, 1)).shape, (4, 2, 3))
    assert S.astype(m, np.int32).dtype == np.int32
    assert ad.unbroadcast(np.ones((4, 3)), np.ones((4, 1))).shape == (4, 1)
    assert float(ad.unbroadcast(np.ones((4, 3)), 2.0)) == 12.0
    same = np.ones(3)
    assert ad.unbroadcast(same, np.zeros(3)) is same
    np.testing.assert_array_equal(
        vjp(S.repeat, np.arange(6.0), np.array([1.0, 2.0]), 3, wrt="a"), [3.0, 12.0]
    )
    np.testing.assert_array_equal(
        vjp(S.tile, np.ones((4, 3)), np.ones(3), (4, 1), wrt="A"), [4] * 3
    )
    np.testing.assert_array_equal(
        vjp(S.pad, np.arange(5.0), np.ones(3), 1, wrt="array"), [1.0, 2.0, 3.0]
    )


def test_zeros_like_and_add_any_pytrees():
    z = ad.zeros_like({"w": np.ones((2, 2), np.float32), "b": [1.0, (2.0,)]})
    assert z["w"].dtype == np.float32 and z["b"][0] == 0.0 and z["b"][1] == (0.0,)
    s = ad.add_any({"a": 1.0, "b": [np.ones(2), None]}, {"a": 2.0, "b": [None, np.ones(2)]})
    assert s["a"] == 3.0 and s["b"][1].shape == (2,)
    assert ad.add_any(None, 2.0) == 2.0


def test_methods_table():
    assert METHODS["sum"].public == "jnp.sum"
    assert METHODS["reshape"].public == "jnp.reshape"
    assert METHODS["astype"].public == "ad.astype"
    assert ATTRIBUTES["T"].public == "jnp.transpose"


@pytest.mark.parametrize("shape, idx", [((4, 5), (1, slice(None))), ((6,), np.arange(6) > 2)])
def test_getitem_rule_is_index_adjoint(shape, idx):
    x = np.ones(shape)
    g = np.ones(np.shape(x[idx]))
    out = S.getitem.vjps["x"](g, x[idx], x, idx)
    assert out.shape == shape and out.sum() == g.sum()


# -- diff / searchsorted / interp ------------------------------------------------------


def test_diff_matches_numpy():
    a = np.arange(24.0).reshape(2, 3, 4) ** 2
    for n, axis in [(1, -1), (2, -1), (1, 0), (2, 1), (0, -1), (3, 2)]:
        np.testing.assert_array_equal(S.diff(a, n, axis), np.diff(a, n, axis))
    v = np.array([1.0, 4.0, 9.0])
    np.testing.assert_array_equal(S.diff(v, prepend=0.0, append=[20.0, 30.0]),
                                  np.diff(v, prepend=0.0, append=[20.0, 30.0]))  # fmt: skip
    m = np.ones((2, 3))
    np.testing.assert_array_equal(S.diff(m, axis=0, prepend=np.zeros((1, 3))),
                                  np.diff(m, axis=0, prepend=np.zeros((1, 3))))  # fmt: skip
    assert S.diff(np.ones(3, np.float32), prepend=0.0).dtype == np.float32
    assert S.diff(np.array([1, 5, 2], np.int32)).dtype == np.int32
    np.testing.assert_array_equal(S.diff(np.array([True, False, False])), [True, False])
    with pytest.raises(ValueError):
        S.diff(np.float32(1.0))
    with pytest.raises(ValueError):
        S.diff(np.ones(3), -1)


def diff_loss(x):
    return jnp.sum(jnp.diff(x, 2, prepend=0.5) ** 3)


def test_diff_gradient_matches_finite_differences(x64):
    x = np.array([0.3, -1.2, 0.8, 2.0, 0.1])
    np.testing.assert_allclose(srcjax.grad(diff_loss)(x), fd_grad(diff_loss, x), rtol=1e-6)


def test_searchsorted_matches_numpy():
    a = np.array([0.0, 1.0, 1.0, 2.5, 4.0])
    v = np.array([[-1.0, 1.0], [2.0, 9.0]])
    for side in ("left", "right"):
        got = S.searchsorted(a, v, side=side)
        np.testing.assert_array_equal(got, np.searchsorted(a, v, side=side))
        assert got.dtype == np.int32 and got.shape == v.shape
    order = np.array([2, 0, 1])
    np.testing.assert_array_equal(S.searchsorted(np.array([3.0, 1.0, 2.0]), 2.5, sorter=order),
                                  np.searchsorted(np.array([3.0, 1.0, 2.0]), 2.5, sorter=order))  # fmt: skip
    assert not S.searchsorted.differentiable
    with pytest.raises(ValueError):
        S.searchsorted(np.ones((2, 2)), 1.0)
    with pytest.raises(ValueError):
        S.searchsorted(a, 1.0, side="middle")


def test_searchsorted_dtype_x64(x64):
    # jax 0.10.2 with x64: int32 (the smallest int type holding len(a))
    assert S.searchsorted(np.arange(3.0), 1.5).dtype == np.int32


def test_interp_matches_numpy():
    xp = np.array([-1.0, 0.0, 0.5, 2.0])
    fp = np.array([3.0, -1.0, 2.0, 0.0])
    x = np.array([[-2.0, -1.0, -0.3], [0.5, 1.7, 2.0], [2.5, 0.25, 0.0]])
    np.testing.assert_allclose(S.interp(x, xp, fp), np.interp(x, xp, fp), rtol=1e-6)
    np.testing.assert_allclose(S.interp(x, xp, fp, left=-7.0, right=9.0),
                               np.interp(x, xp, fp, left=-7.0, right=9.0), rtol=1e-6)  # fmt: skip
    assert S.interp(x, xp, fp).dtype == np.float32  # x64 off: float32, as in JAX
    assert S.interp(np.array([1, 2]), np.array([0, 3]), np.array([0, 6])).dtype == np.float32
    assert S.interp(0.25, xp, fp).shape == ()
    with pytest.raises(ValueError):
        S.interp(x, np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(NotImplementedError):
        S.interp(x, xp, fp, period=1.0)


def interp_loss(x, fp):
    return jnp.sum(jnp.interp(x, jnp.array([-1.0, 0.0, 0.5, 2.0]), fp, right=fp[0]) ** 2)


def test_interp_gradients_match_finite_differences(x64):
    x = np.array([-1.5, -0.4, 0.2, 1.1, 2.2])
    fp = np.array([3.0, -1.0, 2.0, 0.5])
    gx, gfp = srcjax.grad(interp_loss, argnums=(0, 1))(x, fp)
    np.testing.assert_allclose(gx, fd_grad(lambda v: interp_loss(v, fp), x), rtol=1e-6)
    np.testing.assert_allclose(gfp, fd_grad(lambda v: interp_loss(x, v), fp), rtol=1e-6)
    # x below xp[0] with left=None: the value is fp[0], a zero slope in x
    assert gx[0] == 0.0


# -- triu/tril/diag_indices, meshgrid, logspace, append, trapezoid -----------------------
def test_index_creation_matches_numpy_with_default_int():
    for got, want in [
        (jnp.triu_indices(4), np.triu_indices(4)),
        (jnp.triu_indices(3, 1, 5), np.triu_indices(3, 1, 5)),
        (jnp.tril_indices(4, -1), np.tril_indices(4, -1)),
        (jnp.tril_indices(3, k=1, m=2), np.tril_indices(3, k=1, m=2)),
        (jnp.diag_indices(3), np.diag_indices(3)),
        (jnp.diag_indices(2, ndim=3), np.diag_indices(2, ndim=3)),
    ]:
        assert isinstance(got, tuple) and len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == np.int32  # x64 off
    with pytest.raises(ValueError):
        jnp.diag_indices(-1)


def upper_sum(x):
    i, j = jnp.triu_indices(x.shape[0], 1)
    d = jnp.diag_indices(x.shape[0])
    return jnp.sum(x[i, j] ** 2) + jnp.sum(x[d])


def test_index_creation_inside_transforms(x64):
    x = np.random.default_rng(31).normal(size=(3, 3))
    np.testing.assert_allclose(srcjax.grad(upper_sum)(x), np.triu(2 * x, 1) + np.eye(3))
    np.testing.assert_allclose(srcjax.jit(upper_sum)(x), upper_sum(x))
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(srcjax.vmap(upper_sum)(xs), [upper_sum(x), upper_sum(2 * x)])


@pytest.mark.parametrize("indexing", ["xy", "ij"])
@pytest.mark.parametrize("sparse", [False, True])
def test_meshgrid_matches_numpy(indexing, sparse):
    xs = [np.arange(3.0), np.arange(4, dtype=np.float32), np.arange(2)]
    for k in (1, 2, 3):
        got = jnp.meshgrid(*xs[:k], indexing=indexing, sparse=sparse)
        want = np.meshgrid(*xs[:k], indexing=indexing, sparse=sparse)
        assert isinstance(got, list) and len(got) == k
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    # each input keeps its dtype, canonicalized (JAX 0.10.2: float32, int32 for an int64 input)
    assert [g.dtype for g in jnp.meshgrid(xs[1], xs[2])] == [np.float32, np.int32]
    with pytest.raises(ValueError, match="1D"):
        jnp.meshgrid(np.ones((2, 2)), xs[0])
    with pytest.raises(ValueError, match="indexing"):
        jnp.meshgrid(xs[0], indexing="xx")


def mesh_loss(x, y):
    gx, gy = jnp.meshgrid(x, y)
    hx, hy = jnp.meshgrid(x, y, indexing="ij", sparse=True)
    return jnp.sum(jnp.sin(gx) * gy**2) + jnp.sum(hx * hy)


def test_meshgrid_grad_vmap_jit(x64):
    rng = np.random.default_rng(32)
    x, y = rng.normal(size=3), rng.normal(size=4)
    gx, gy = srcjax.grad(mesh_loss, argnums=(0, 1))(x, y)
    np.testing.assert_allclose(gx, fd_grad(lambda x: mesh_loss(x, y), x), rtol=1e-6)
    np.testing.assert_allclose(gy, fd_grad(lambda y: mesh_loss(x, y), y), rtol=1e-6)
    only_x = srcjax.grad(lambda x, y: jnp.sum(jnp.meshgrid(x, y)[0] ** 2))(x, y)
    np.testing.assert_allclose(only_x, 2 * x * len(y))  # the unused output's cotangent is zero
    np.testing.assert_allclose(srcjax.jit(mesh_loss)(x, y), mesh_loss(x, y), rtol=1e-12)
    xs = np.stack([x, x + 1.0])
    got = srcjax.vmap(srcjax.grad(mesh_loss), in_axes=(0, None))(xs, y)
    np.testing.assert_allclose(got, np.stack([srcjax.grad(mesh_loss)(v, y) for v in xs]))
    fwd = srcjax.jacfwd(mesh_loss)(x, y)
    np.testing.assert_allclose(fwd, gx, rtol=1e-10)


def test_logspace_append_trapezoid_match_numpy():
    np.testing.assert_allclose(jnp.logspace(0.0, 2.0, 5), np.logspace(0.0, 2.0, 5), rtol=1e-6)
    np.testing.assert_allclose(jnp.logspace(1.0, 3.0, 4, endpoint=False, base=2.0),
                               np.logspace(1.0, 3.0, 4, endpoint=False, base=2.0), rtol=1e-6)  # fmt: skip
    assert jnp.logspace(0.0, 1.0, 3).dtype == np.float32
    assert jnp.logspace(0.0, 1.0, 3, dtype=np.float16).dtype == np.float16
    a, b = np.arange(6.0).reshape(2, 3), np.ones((1, 3))
    np.testing.assert_array_equal(jnp.append(a, b), np.append(a, b))
    np.testing.assert_array_equal(jnp.append(a, b, axis=0), np.append(a, b, axis=0))
    np.testing.assert_array_equal(jnp.append(a, 7.0), np.append(a, 7.0))
    with pytest.raises(ValueError):
        jnp.append(a, np.ones(3), axis=0)
    trap = getattr(np, "trapezoid", None) or np.trapz
    y = np.random.default_rng(33).normal(size=(3, 5))
    x = np.cumsum(np.random.default_rng(34).uniform(0.1, 1.0, size=5))
    np.testing.assert_allclose(jnp.trapezoid(y), trap(y), rtol=1e-6)
    np.testing.assert_allclose(jnp.trapezoid(y, dx=0.5, axis=0), trap(y, dx=0.5, axis=0), rtol=1e-6)
    np.testing.assert_allclose(jnp.trapezoid(y, x), trap(y, x), rtol=1e-6)
    np.testing.assert_allclose(jnp.trapezoid(y, y + 10.0), trap(y, y + 10.0), rtol=1e-6)
    assert jnp.trapezoid(np.arange(4, dtype=np.int32)).dtype == np.float32


def log_app_trap_loss(s, y):
    ls = jnp.logspace(s, 2.0 * s, 4, base=3.0)
    return jnp.trapezoid(jnp.append(y, ls) ** 2, dx=0.3) + jnp.trapezoid(y, ls[:3] + y)


def test_logspace_append_trapezoid_grads_match_finite_differences(x64):
    s, y = np.array(0.4), np.random.default_rng(35).normal(size=3)
    gs, gy = srcjax.grad(log_app_trap_loss, argnums=(0, 1))(s, y)
    np.testing.assert_allclose(gs, fd_grad(lambda s: log_app_trap_loss(s, y), s), rtol=1e-6)
    np.testing.assert_allclose(gy, fd_grad(lambda y: log_app_trap_loss(s, y), y), rtol=1e-6)
    ss = np.array([0.4, 0.1, -0.3])
    got = srcjax.vmap(log_app_trap_loss, in_axes=(0, None))(ss, y)
    np.testing.assert_allclose(got, [log_app_trap_loss(v, y) for v in ss], rtol=1e-10)
    np.testing.assert_allclose(srcjax.jit(log_app_trap_loss)(s, y), log_app_trap_loss(s, y))


def test_take_modes_follow_jax():
    """jnp.take ignored `mode` and raised IndexError out of range (fresh-user P14).
    Oracle: values recorded from JAX 0.10.2 (clip clamps to [0, n-1], negative
    indices too; wrap is modulo n; fill, the default, keeps [-n, n) and fills the
    rest with NaN / the signed minimum / fill_value)."""
    v = np.array([0.3, -1.2, 2.0, 0.5], np.float32)
    i = np.array([-6, -5, -4, -1, 0, 3, 4, 5, 9])
    nan = np.nan
    want = {
        "clip": [0.3, 0.3, 0.3, 0.3, 0.3, 0.5, 0.5, 0.5, 0.5],
        "wrap": [2.0, 0.5, 0.3, 0.5, 0.3, 0.5, 0.3, -1.2, -1.2],
        "fill": [nan, nan, 0.3, 0.5, 0.3, 0.5, nan, nan, nan],
        None: [nan, nan, 0.3, 0.5, 0.3, 0.5, nan, nan, nan],
    }
    for mode, w in want.items():
        np.testing.assert_allclose(jnp.take(v, i, mode=mode), w, rtol=1e-6)
    np.testing.assert_allclose(
        jnp.take(v, i, mode="fill", fill_value=-1.0),
        [-1, -1, 0.3, 0.5, 0.3, 0.5, -1, -1, -1],
        rtol=1e-6,
    )
    assert list(jnp.take(np.arange(4, dtype=np.int32), i))[:3] == [-(2**31), -(2**31), 0]
    w9 = np.arange(9.0, dtype=np.float32)
    g = srcjax.grad(lambda v: jnp.sum(jnp.take(v, i) * w9))(v)
    np.testing.assert_allclose(g, [6.0, 0.0, 0.0, 8.0])
    g = srcjax.grad(lambda v: jnp.sum(jnp.take(v, i, mode="clip") * w9))(v)
    np.testing.assert_allclose(g, [10.0, 0.0, 0.0, 26.0])
    np.testing.assert_allclose(
        srcjax.jit(lambda v: jnp.take(v, i, mode="wrap"))(v), want["wrap"], rtol=1e-6
    )
