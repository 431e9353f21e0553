"""The fast paths of helpers that R6 (Newton-CG with jvp(grad(f)) under
jit(vmap)) calls in its inner loop give what their general paths give, bit for
bit: ``jnp.where`` with a Python zero (the derivative rules' ``where(c, 0, g)``),
``ad.replace_inf``, ``ad.zero_where_counted``, ``jnp.isposinf``/``isneginf``, ``ad.batch_broadcast`` of NumPy scalars,
``ad.expand_reduced`` with ``axis=(k,)``, ``jnp.sum``. The oracle is plain NumPy."""

import numpy as np
import pytest

import srcjax.primitives.batch_rules  # noqa: F401 - registers the batching helpers
from srcjax.primitives import registry


def _impl(name):
    return registry.by_public(name).impl


def _same_bits(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a.view(np.uint8), b.view(np.uint8))


def _with_specials(dt, shape=(4, 7)):
    a = np.random.default_rng(3).standard_normal(shape).astype(dt)
    a.flat[:5] = [np.nan, np.inf, -np.inf, -0.0, 0.0]
    return a


@pytest.mark.parametrize("dt", [np.float16, np.float32])
@pytest.mark.parametrize("mask", ["some", "none", "all", "posinf"])
@pytest.mark.parametrize("zero", [0, 0.0, -0.0])
def test_where_with_a_python_zero_is_numpys_where(dt, mask, zero):
    a = _with_specials(dt)
    m = {
        "some": a > 0.5,
        "none": np.zeros(a.shape, bool),
        "all": np.ones(a.shape, bool),
        "posinf": np.isposinf(a),
    }[mask]
    where = _impl("jnp.where")
    r = where(m, x=zero, y=a)
    _same_bits(r, np.where(m, np.asarray(zero, dt), a))
    assert r is not a and not np.shares_memory(r, a)
    _same_bits(where(m, a, zero), np.where(m, a, np.asarray(zero, dt)))
    # float64 without x64: narrowed to float32, as before
    a64 = a.astype(np.float64)
    _same_bits(where(m, zero, a64), np.where(m, zero, a64).astype(np.float32))
    # a nonzero scalar, a broadcast mask, an int array: the general path
    _same_bits(where(m, 2.5, a), np.where(m, np.asarray(2.5, dt), a))
    _same_bits(where(m[0], 0, a), np.where(m[0], np.asarray(0, dt), a))
    ints = np.arange(a.size, dtype=np.int32).reshape(a.shape)
    _same_bits(where(m, 0, ints), np.where(m, 0, ints))


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_isposinf_isneginf_of_floats_are_numpys(dt):
    # one comparison with +-inf for float arrays (False at NaN, as NumPy's)
    a = _with_specials(dt)
    for name, ref in (("jnp.isposinf", np.isposinf), ("jnp.isneginf", np.isneginf)):
        _same_bits(_impl(name)(a), ref(a))
        _same_bits(_impl(name)(a[0, 0]), ref(a[0, 0]))  # (a NumPy scalar: NumPy's function)
        _same_bits(_impl(name)(np.arange(3)), ref(np.arange(3)))
        with pytest.raises(TypeError):
            _impl(name)(np.array([1 + 1j]))


@pytest.mark.parametrize("dt", [np.float16, np.float32])
@pytest.mark.parametrize("mask", ["some", "none", "all"])
def test_zero_where_counted_is_numpys_where(dt, mask):
    # jit's form of where(m, 0, t) / where(m, t, 0) in a loop with the mask's
    # count made before it; with nothing to zero it hands back t itself
    a = _with_specials(dt)
    m = {"some": a > 0.5, "none": np.zeros(a.shape, bool), "all": np.ones(a.shape, bool)}[mask]
    n = _impl("ad.mask_count")(m)
    assert n == np.count_nonzero(m)
    zwc = _impl("ad.zero_where_counted")
    _same_bits(zwc(m, n, a, True), np.where(m, np.asarray(0, dt), a))
    _same_bits(zwc(m, n, a, False), np.where(m, a, np.asarray(0, dt)))
    assert (zwc(m, n, a, True) is a) == (mask == "none")
    assert (zwc(m, n, a, False) is a) == (mask == "all")


@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_replace_inf_is_where_isposinf(dt):
    a = _with_specials(dt)
    _same_bits(_impl("ad.replace_inf")(a), np.where(np.isposinf(a), np.asarray(0, dt), a))
    b = np.array([1.0, 2.0], dt)
    r = _impl("ad.replace_inf")(b)
    _same_bits(r, b)
    assert not np.shares_memory(r, b)


@pytest.mark.parametrize(
    "x, dtype",
    [
        (np.float32(1.5), np.float32),
        (np.float16(1.5), np.float16),
        (np.int8(3), np.int8),
        (np.bool_(True), np.bool_),
        (np.float64(1.5), np.float32),  # (a Python float too: the default float)
        (np.complex128(1 + 2j), np.complex64),
        (1.5, np.float32),
        (3, np.int32),
    ],
)
def test_batch_broadcast_of_scalars(x, dtype):
    r = _impl("ad.batch_broadcast")(x, 4)
    assert r.shape == (4,) and r.dtype == dtype
    np.testing.assert_array_equal(r, np.full(4, x, dtype))


def test_batch_broadcast_of_arrays():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    bb = _impl("ad.batch_broadcast")
    for axis in (0, 1, -1):
        r = bb(a, 4, axis)
        want = np.repeat(np.expand_dims(a, axis), 4, axis=axis)
        _same_bits(r, want)


@pytest.mark.parametrize("axis", [None, 0, 1, -1, (1,), (-1,), (0, 2), (2, 0), ()])
@pytest.mark.parametrize("keepdims", [False, True])
def test_sum_and_expand_reduced(axis, keepdims):
    x = _with_specials(np.float32, (3, 4, 5))
    x.flat[:5] = 1.0  # (finite sums)
    s = _impl("jnp.sum")(x, axis=axis, keepdims=keepdims)
    _same_bits(s, np.sum(x, axis=axis, keepdims=keepdims))
    e = _impl("ad.expand_reduced")(s, x, axis=axis, keepdims=keepdims, where=None)
    _same_bits(e, np.broadcast_to(np.sum(x, axis=axis, keepdims=True), x.shape))


@pytest.mark.parametrize(
    "a_shape, shape",
    [((3,), (4, 3)), ((1,), (5,)), ((), (2, 3)), ((2, 1, 3), (2, 4, 3)), ((3, 1), (2, 3, 4))]
    + [((4,), (4,)), ((0,), (2, 0)), ((3,), (3, 1)), ((2,), (4, 3))],
)
@pytest.mark.parametrize("dt", [np.float32, np.int8, np.bool_, np.complex64])
def test_broadcast_view_is_numpys_broadcast_to(a_shape, shape, dt):
    from srcjax.primitives.ad._common import broadcast_view

    a = np.asarray(np.random.default_rng(4).standard_normal(a_shape)).astype(dt)
    try:
        want = np.broadcast_to(a, shape)
    except ValueError:
        with pytest.raises(ValueError):
            broadcast_view(a, shape)
        return
    r = broadcast_view(a, shape)
    _same_bits(r, want)
    assert not r.flags.writeable
    assert a.size == 0 or np.shares_memory(r, a)
    strided = np.repeat(a, 2, axis=-1)[..., ::2] if a.ndim else a  # (not contiguous)
    if a.ndim:
        _same_bits(broadcast_view(strided, shape), np.broadcast_to(strided, shape))


@pytest.mark.parametrize("dts", [(np.float32, np.float32), (np.float64, np.float32)])
def test_batched_matvec_and_its_vector_cotangent_per_example(dts):
    rng = np.random.default_rng(5)
    a = rng.standard_normal((6, 5, 4)).astype(dts[0])
    v = rng.standard_normal((6, 4)).astype(dts[1])
    g = rng.standard_normal((6, 5)).astype(dts[1])
    got = _impl("ad.bmatmul")(a, v, True, True)
    want = np.stack([a[i] @ v[i] for i in range(6)])
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)
    got = _impl("ad.bmatmul_right")(g, a, v, True, True)
    want = np.stack([a[i].T @ g[i] for i in range(6)])
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_batched_matvec_of_unfit_shapes_is_jax_error():
    from srcjax.errors import ShapeError

    a = np.ones((6, 5, 4), np.float32)
    with pytest.raises(ShapeError):
        _impl("ad.bmatmul")(a, np.ones((6, 3), np.float32), True, True)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_expand_dims_of_one_axis_is_numpys(shape):
    # (R7: prod's rules call it three times a step; the fast path skips NumPy's
    # axis normalization)
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    f = _impl("jnp.expand_dims")
    for axis in range(-a.ndim - 1, a.ndim + 1):
        got, want = f(a, axis), np.expand_dims(a, axis)
        _same_bits(got, want)
        assert np.shares_memory(got, a) or a.size <= 1
    for bad in (a.ndim + 1, -a.ndim - 2):
        with pytest.raises(np.exceptions.AxisError):
            f(a, bad)


@pytest.mark.parametrize("axis", [2, -1, (1, 2), (0, 2), 0, None, (0, 1, 2)])
def test_group_last_and_back_are_moveaxis_and_reshape(axis):
    x = np.random.default_rng(4).normal(size=(2, 3, 4)).astype(np.float32)
    axes = tuple(range(3)) if axis is None else tuple(sorted(np.atleast_1d(axis) % 3))
    rest = tuple(i for i in range(3) if i not in axes)
    want = np.transpose(x, rest + axes).reshape(tuple(x.shape[i] for i in rest) + (-1,))
    got = _impl("ad.group_last")(x, axis)
    _same_bits(got, want)
    _same_bits(_impl("ad.ungroup_last")(got, x, axis), x)


def _scatter_add_loop(g, arr, idx, axis):
    """The adjoint of take_along_axis (in-bounds indices) by a Python loop of
    additions into zeros: every output position adds its cotangent."""
    out = np.zeros(arr.shape, np.result_type(g))
    g = np.broadcast_to(g, np.broadcast_shapes(g.shape, idx.shape))
    idx = np.broadcast_to(idx, g.shape)
    for pos in np.ndindex(*g.shape):
        target = list(pos)
        target[axis] = idx[pos]
        out[tuple(target)] += g[pos]
    return out


@pytest.mark.parametrize(
    "arr_shape,idx_shape,axis",
    [
        ((8, 10), (8, 1), 1),
        ((8, 10), (1, 1), 1),
        ((3, 4, 5), (3, 1, 5), 1),
        ((3, 4, 5), (3, 2, 5), 1),
    ],
)
def test_take_along_axis_adjoint_is_a_scatter_add(arr_shape, idx_shape, axis):
    # one index per row (a cross-entropy's y[:, None], R8) takes a write, not
    # np.add.at; several per row (the last case) still add up; -0.0 becomes 0.0
    rng = np.random.default_rng(11)
    arr = rng.normal(size=arr_shape).astype(np.float32)
    idx = rng.integers(0, arr_shape[axis], idx_shape)
    out_shape = tuple(
        idx_shape[i] if i == axis else max(arr_shape[i], idx_shape[i])
        for i in range(len(arr_shape))
    )
    g = rng.normal(size=out_shape).astype(np.float32)
    g.flat[0] = -0.0
    got = _impl("ad.take_along_axis_adjoint")(g, arr, idx, axis)
    want = _scatter_add_loop(g, arr, idx, axis)
    _same_bits(got, want)
    assert not np.signbit(got).any() or np.signbit(want).any()
