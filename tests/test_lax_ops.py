"""jax.lax's basic operations (srcjax/lax/_ops/): values and dtypes against
JAX 0.10.2 (recorded), gradients against float64 finite differences, vmap
against a Python loop, jit against eager, and JAX's TypeErrors."""

from __future__ import annotations

import os

import numpy as np
import pytest
from helpers import assert_close, assert_matches_recorded, fd_grad, jax_recorded

import srcjax
import srcjax.numpy as jnp
from srcjax import lax

RECORDED = os.path.join(os.path.dirname(__file__), "data", "lax_ops_jax.npz")

F = np.array([1.5, -2.5, 0.5, 2.25, -0.75], np.float32)
P = np.array([0.3, 0.9, 1.7, 0.05, 1.2], np.float32)  # positive
U = np.array([0.1, -0.4, 0.7, -0.9, 0.2], np.float32)  # in (-1, 1)
I = np.array([7, -7, 5, -5, 0], np.int32)  # noqa: E741
J = np.array([2, 2, -2, -3, 3], np.int32)
M = np.arange(12.0, dtype=np.float32).reshape(3, 4) / 7.0 - 0.5
HALF = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, 3.7], np.float32)

UNARY_FLOAT = [
    ("neg", F), ("abs", F), ("sign", F), ("floor", F), ("ceil", F), ("exp", F),
    ("exp2", F), ("log", P), ("log1p", P), ("expm1", F), ("sin", F), ("cos", F),
    ("tan", U), ("asin", U), ("acos", U), ("atan", F), ("sinh", F), ("cosh", F),
    ("tanh", F), ("sqrt", P), ("rsqrt", P), ("cbrt", F), ("square", F),
    ("logistic", F), ("erf", F), ("erf_inv", U), ("lgamma", P), ("digamma", P),
    ("is_finite", F),
]  # fmt: skip


def _compute(jax, jnp, lax):
    r = {}
    for name, x in UNARY_FLOAT:
        r["u_" + name] = getattr(lax, name)(x)
    for name in ("neg", "abs", "sign", "square"):
        r["ui_" + name] = getattr(lax, name)(I)
    for name in ("add", "sub", "mul", "div", "rem", "max", "min", "eq", "ne", "lt", "le"):
        r["b_" + name] = getattr(lax, name)(F, P)
        r["bi_" + name] = getattr(lax, name)(I, J)
    r["b_gt"] = lax.gt(F, P)
    r["b_ge"] = lax.ge(I, J)
    r["b_atan2"] = lax.atan2(F, P)
    r["b_pow"] = lax.pow(P, F)
    r["b_pow_int"] = lax.pow(F, J)
    r["weak_add"] = lax.add(I, 3)
    r["weak_mul"] = lax.mul(F, 2.5)
    r["div_by_zero"] = lax.div(I, np.zeros(5, np.int32))
    r["rem_by_zero"] = lax.rem(I, np.zeros(5, np.int32))
    r["integer_pow"] = lax.integer_pow(F, 3)
    r["integer_pow_neg"] = lax.integer_pow(P, -2)
    r["integer_pow_int"] = lax.integer_pow(I, 2)
    r["round"] = lax.round(HALF)
    r["round_even"] = lax.round(HALF, 1)
    r["round_even_enum"] = lax.round(HALF, lax.RoundingMethod.TO_NEAREST_EVEN)
    r["bit_and"] = lax.bitwise_and(I, J)
    r["bit_or"] = lax.bitwise_or(I, J)
    r["bit_xor"] = lax.bitwise_xor(I, J)
    r["bit_not"] = lax.bitwise_not(I)
    r["bit_and_bool"] = lax.bitwise_and(I > 0, J > 0)
    sh = np.array([1, 2, 31, 40, -1], np.int32)
    r["shl"] = lax.shift_left(I, sh)
    r["sra"] = lax.shift_right_arithmetic(I, sh)
    r["srl"] = lax.shift_right_logical(I, sh)
    r["srl_u8"] = lax.shift_right_logical(np.array([200, 7], np.uint8), np.array([1, 9], np.uint8))
    r["clamp"] = lax.clamp(-1.0, F, 1.0)
    r["clamp_arr"] = lax.clamp(np.full(5, -1.0, np.float32), F, np.float32(1.0))
    r["cvt_int"] = lax.convert_element_type(
        np.array([2.7, -2.7, np.nan, 3e10], np.float32), np.int32
    )
    r["cvt_float"] = lax.convert_element_type(I, np.float32)
    r["cvt_bool"] = lax.convert_element_type(F, bool)
    r["cvt_pyint"] = lax.convert_element_type(F, int)
    r["reshape"] = lax.reshape(M, (6, 2))
    r["reshape_dims"] = lax.reshape(M, (2, 6), (1, 0))
    r["transpose"] = lax.transpose(M.reshape(3, 2, 2), (2, 0, 1))
    r["concatenate"] = lax.concatenate([M, M[:1] * 2.0], 0)
    r["squeeze"] = lax.squeeze(M.reshape(1, 3, 1, 4), (0, -2))
    r["expand_dims"] = lax.expand_dims(M, (0, 3))
    r["rev"] = lax.rev(M, (0, 1))
    r["slice"] = lax.slice(M, (1, 0), (3, 4), (1, 2))
    r["slice_nostride"] = lax.slice(M, (0, 1), (2, 3))
    r["slice_in_dim"] = lax.slice_in_dim(M, -3, None, 2, axis=1)
    r["index_in_dim"] = lax.index_in_dim(M, -1, axis=1)
    r["index_in_dim_nokeep"] = lax.index_in_dim(M, 1, keepdims=False)
    r["dot_mv"] = lax.dot(M, F[:4])
    r["dot_mm"] = lax.dot(M, M.T)
    r["dot_vv"] = lax.dot(F, P)
    r["dot_int8"] = lax.dot(np.ones((2, 3), np.int8), np.ones(3, np.int8))
    r["dot_pref"] = lax.dot(
        np.ones((2, 3), np.int8), np.ones(3, np.int8), preferred_element_type=np.int32
    )
    B1 = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4) / 10
    B2 = np.arange(40.0, dtype=np.float32).reshape(2, 4, 5) / 10
    r["dot_general_bmm"] = lax.dot_general(B1, B2, (((2,), (1,)), ((0,), (0,))))
    r["dot_general_mixed"] = lax.dot_general(
        B2, B1, (((1,), (2,)), ((0,), (0,)))
    )  # contracting in the middle: (2, 5, 3)
    r["dot_general_nobatch"] = lax.dot_general(M, M, (((1,), (1,)), ((), ())))
    r["iota"] = lax.iota(np.float32, 4)
    r["iota_int8"] = lax.iota(np.int8, 3)
    r["full"] = lax.full((2, 3), 1.5)
    r["full_int"] = lax.full((2,), 3)
    r["full_dtype"] = lax.full((2,), 3.7, np.int32)
    r["full_like"] = lax.full_like(I, 2.7)
    r["full_like_shape"] = lax.full_like(I, 2.5, np.float32, (2, 2))
    r["argmax"] = lax.argmax(M, 1, np.int32)
    r["argmin"] = lax.argmin(M, 0, np.int32)
    r["argmax_nan"] = lax.argmax(np.array([1.0, np.nan, 3.0], np.float32), 0, np.int32)
    r["cumsum"] = lax.cumsum(M, 1)
    r["cumsum_rev"] = lax.cumsum(M, 0, reverse=True)
    r["cumsum_int8"] = lax.cumsum(np.array([100, 100, 1], np.int8))
    r["cumprod"] = lax.cumprod(F)
    r["cumprod_rev"] = lax.cumprod(F, reverse=True)
    r["sort"] = lax.sort(np.array([1.0, np.nan, -0.5, 3.0, -np.inf], np.float32))
    r["sort_dim0"] = lax.sort(M[::-1], dimension=0)
    r["broadcast"] = lax.broadcast(F, (2,))
    r["broadcast_in_dim"] = lax.broadcast_in_dim(F, (2, 5), (1,))
    r["broadcast_in_dim_1"] = lax.broadcast_in_dim(M[:1], (3, 2, 4), (1, 2))
    r["pad"] = lax.pad(F, np.float32(0.0), [(1, -1, 2)])
    r["pad_neg"] = lax.pad(F, np.float32(9.0), [(-2, -1, 1)])
    r["pad_2d"] = lax.pad(M, np.float32(-1.0), [(1, 0, 1), (0, 2, 0)])
    r["pad_int"] = lax.pad(I, np.int32(4), ((2, 1, 0),))

    # derivatives, vmap and jit
    def loss(x):
        y = lax.mul(lax.add(lax.sin(x), 1.5), lax.rsqrt(lax.add(lax.square(x), 1.0)))
        z = lax.pad(y, 0.5, [(1, -1, 2)])
        return jnp.sum(lax.cumsum(z) * lax.iota(np.float32, 13)) + lax.dot(x, lax.rev(x, (0,)))

    r["grad_loss"] = jax.grad(loss)(F)
    r["grad_div"] = jax.grad(lambda x: jnp.sum(lax.div(x, lax.add(lax.abs(x), 1.0))))(F)
    r["grad_rem"] = jax.grad(lambda x: jnp.sum(lax.rem(x, 0.7) * x))(P)
    r["grad_pad_value"] = jax.grad(
        lambda v: jnp.sum(lax.pad(M * v, v, [(1, 0, 1), (0, 2, 0)]) ** 2)
    )(np.float32(0.3))
    r["grad_dot_general"] = jax.grad(
        lambda a: jnp.sum(lax.dot_general(a, B2, (((2,), (1,)), ((0,), (0,)))) ** 2)
    )(B1)
    r["grad_bid"] = jax.grad(lambda x: jnp.sum(lax.broadcast_in_dim(x, (2, 5), (1,)) ** 2))(F)
    r["grad_clamp"] = jax.grad(lambda x: jnp.sum(lax.clamp(-1.0, x, 1.0) ** 2))(F)
    r["grad_cvt"] = jax.grad(lambda x: jnp.sum(lax.convert_element_type(x, np.float32) ** 2))(F)
    r["grad_integer_pow"] = jax.grad(lambda x: jnp.sum(lax.integer_pow(x, 3)))(F)
    r["grad_slice"] = jax.grad(lambda x: jnp.sum(lax.slice(x, (1, 0), (3, 4), (1, 2)) ** 2))(M)
    r["vmap_pad"] = jax.vmap(lambda x: lax.pad(x, 0.0, [(1, -1, 2)]))(M)
    r["vmap_add"] = jax.vmap(lambda x: lax.add(x, F[:4]))(M)
    r["vmap_cumsum_rev"] = jax.vmap(lambda x: lax.cumsum(x, reverse=True))(M)
    r["vmap_bid"] = jax.vmap(lambda x: lax.broadcast_in_dim(x, (2, 4), (1,)))(M)
    r["jit_loss"] = jax.jit(loss)(F)
    r["jit_div_int"] = jax.jit(lax.div)(I, J)
    return r


def _with_jax():
    import jax
    import jax.numpy as jjnp

    return {k: np.asarray(v) for k, v in _compute(jax, jjnp, jax.lax).items()}


def test_lax_ops_match_jax():
    """Values and dtypes of every operation, plus grad/vmap/jit of compositions.
    Oracle: JAX 0.10.2, recorded."""
    recorded = jax_recorded(RECORDED, _with_jax)
    ours = _compute(srcjax, jnp, lax)
    assert_matches_recorded(ours, recorded, rtol=2e-6, atol=1e-6)


def test_same_primitive_objects():
    from srcjax.primitives import registry

    assert lax.exp is jnp.exp and lax.tanh is jnp.tanh and lax.neg is jnp.negative
    assert lax.logistic is registry.REGISTRY["nn.sigmoid"]
    assert lax.erf_inv is registry.REGISTRY["special.erfinv"]
    assert srcjax.jacobian is srcjax.jacrev


@pytest.mark.parametrize(
    "call",
    [
        lambda: lax.add(I, F),
        lambda: lax.add(F, 2),
        lambda: lax.add(I, 2.5),
        lambda: lax.sub(F, F.astype(np.float16)),
        lambda: lax.mul(np.uint8(3), np.int8(3)),
        lambda: lax.max(I, F),
        lambda: lax.eq(I, F),
        lambda: lax.gt(F, 1),
        lambda: lax.div(I, F),
        lambda: lax.rem(F, I),
        lambda: lax.clamp(0, F, 1),
        lambda: lax.concatenate([I, F], 0),
        lambda: lax.pad(I, 0.0, [(1, 0, 0)]),
        lambda: lax.bitwise_and(F, F),
        lambda: lax.add(I > 0, J > 0),
        lambda: lax.atan2(I, J),
        lambda: lax.pow(I, I),
        lambda: lax.integer_pow(I, -1),
        lambda: lax.shift_right_logical(np.uint8(200), 1),
    ],
)
def test_mixed_dtypes_raise_type_error_as_jax(call):
    with pytest.raises(TypeError):
        call()


def test_type_error_inside_transforms():
    with pytest.raises(TypeError, match="same dtypes"):
        srcjax.grad(lambda x: jnp.sum(lax.add(x, 2)))(F)
    with pytest.raises(TypeError, match="same dtypes"):
        srcjax.jit(lambda x, k: lax.add(x, k))(F, I)
    with pytest.raises(TypeError, match="same dtypes"):
        srcjax.vmap(lambda x: lax.mul(x, I))(M[:, :1] + np.zeros((3, 5), np.float32))


def _loss(x):
    y = lax.mul(lax.add(lax.sin(x), 1.5), lax.rsqrt(lax.add(lax.square(x), 1.0)))
    z = lax.pad(y, 0.5, [(1, -1, 2)])
    w = lax.div(lax.cumsum(z, reverse=True), lax.add(lax.abs(z), 1.0))
    v = lax.clamp(-2.0, lax.rem(w, 0.9), 2.0)
    s = lax.slice(lax.broadcast_in_dim(v, (2, 13), (1,)), (0, 1), (2, 13), (1, 3))
    return jnp.sum(lax.tanh(s)) + lax.dot(x, lax.rev(x, (0,))) + jnp.sum(lax.cumprod(x))


def _loss_general(a):
    b = lax.reshape(lax.iota(a.dtype, 40), (2, 4, 5)) / 40.0
    out = lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))))
    out = lax.transpose(lax.expand_dims(out, (1,)), (1, 0, 2, 3))
    return jnp.sum(lax.logistic(lax.squeeze(out, (0,))) * lax.exp(lax.neg(lax.square(out))))


@pytest.mark.parametrize("fn, shape", [(_loss, (5,)), (_loss_general, (2, 3, 4))])
def test_grad_vmap_jit_jvp_of_compositions(x64, fn, shape):
    rng = np.random.default_rng(0)
    x = rng.normal(size=shape)
    g = srcjax.grad(fn)(x)
    assert_close(g, fd_grad(fn, x), rtol=1e-5, atol=1e-7)
    assert_close(srcjax.jit(srcjax.grad(fn))(x), g, rtol=1e-12)
    assert_close(srcjax.jit(fn)(x), fn(x), rtol=1e-12)
    xs = rng.normal(size=(3,) + shape)
    assert_close(srcjax.vmap(fn)(xs), [fn(v) for v in xs], rtol=1e-12)
    assert_close(srcjax.vmap(srcjax.grad(fn))(xs), [srcjax.grad(fn)(v) for v in xs], rtol=1e-10)
    t = rng.normal(size=shape)
    _, tan = srcjax.jvp(fn, (x,), (t,))
    assert_close(tan, np.sum(g * t), rtol=1e-10, atol=1e-12)


# one loss per operation (srcjax resolves a call by the function's source)
W4 = np.arange(1.0, 5.0)
UNARY_LOSSES = [
    ("exp", 1, lambda v: jnp.sum(lax.exp(v) * W4)),
    ("exp2", 1, lambda v: jnp.sum(lax.exp2(v) * W4)),
    ("log", 2, lambda v: jnp.sum(lax.log(v) * W4)),
    ("log1p", 2, lambda v: jnp.sum(lax.log1p(v) * W4)),
    ("expm1", 1, lambda v: jnp.sum(lax.expm1(v) * W4)),
    ("sin", 1, lambda v: jnp.sum(lax.sin(v) * W4)),
    ("cos", 1, lambda v: jnp.sum(lax.cos(v) * W4)),
    ("tan", 3, lambda v: jnp.sum(lax.tan(v) * W4)),
    ("asin", 3, lambda v: jnp.sum(lax.asin(v) * W4)),
    ("acos", 3, lambda v: jnp.sum(lax.acos(v) * W4)),
    ("atan", 1, lambda v: jnp.sum(lax.atan(v) * W4)),
    ("sinh", 1, lambda v: jnp.sum(lax.sinh(v) * W4)),
    ("cosh", 1, lambda v: jnp.sum(lax.cosh(v) * W4)),
    ("tanh", 1, lambda v: jnp.sum(lax.tanh(v) * W4)),
    ("sqrt", 2, lambda v: jnp.sum(lax.sqrt(v) * W4)),
    ("rsqrt", 2, lambda v: jnp.sum(lax.rsqrt(v) * W4)),
    ("cbrt", 2, lambda v: jnp.sum(lax.cbrt(v) * W4)),
    ("square", 1, lambda v: jnp.sum(lax.square(v) * W4)),
    ("logistic", 1, lambda v: jnp.sum(lax.logistic(v) * W4)),
    ("erf", 1, lambda v: jnp.sum(lax.erf(v) * W4)),
    ("erf_inv", 3, lambda v: jnp.sum(lax.erf_inv(v) * W4)),
    ("lgamma", 2, lambda v: jnp.sum(lax.lgamma(v) * W4)),
    ("digamma", 2, lambda v: jnp.sum(lax.digamma(v) * W4)),
]
BINARY_LOSSES = [
    ("add", lambda v: jnp.sum(lax.add(v, v[::-1] + 0.1) ** 2)),
    ("sub", lambda v: jnp.sum(lax.sub(v, v[::-1] + 0.1) ** 2)),
    ("mul", lambda v: jnp.sum(lax.mul(v, v[::-1] + 0.1) ** 2)),
    ("div", lambda v: jnp.sum(lax.div(v, v[::-1] + 0.1) ** 2)),
    ("rem", lambda v: jnp.sum(lax.rem(v, v[::-1] + 0.1) ** 2)),
    ("max", lambda v: jnp.sum(lax.max(v, v[::-1] + 0.1) ** 2)),
    ("min", lambda v: jnp.sum(lax.min(v, v[::-1] + 0.1) ** 2)),
    ("atan2", lambda v: jnp.sum(lax.atan2(v, v[::-1] + 0.1) ** 2)),
    ("pow", lambda v: jnp.sum(lax.pow(v, v[::-1] + 0.1) ** 2)),
]


@pytest.mark.parametrize("name, dom, loss", UNARY_LOSSES, ids=[u[0] for u in UNARY_LOSSES])
def test_unary_grads_against_fd(x64, name, dom, loss):
    rng = np.random.default_rng(1)
    x = {1: rng.normal(size=4), 2: rng.uniform(0.5, 2.0, 4), 3: rng.uniform(-0.8, 0.8, 4)}[dom]
    assert_close(srcjax.grad(loss)(x), fd_grad(loss, x), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name, loss", BINARY_LOSSES, ids=[b[0] for b in BINARY_LOSSES])
def test_binary_grads_against_fd(x64, name, loss):
    x = np.random.default_rng(2).uniform(0.5, 2.0, 4)
    assert_close(srcjax.grad(loss)(x), fd_grad(loss, x), rtol=1e-5, atol=1e-7)


def test_integer_and_shift_ops_under_vmap_and_jit():
    xs = np.stack([I, J, I * 3])
    sh = np.abs(J)
    for name in ("div", "rem", "shift_left", "shift_right_arithmetic", "shift_right_logical"):
        op = getattr(lax, name)
        got = srcjax.vmap(lambda a, op=op: op(a, sh))(xs)
        assert np.array_equal(got, np.stack([op(a, sh) for a in xs])), name
        assert np.array_equal(srcjax.jit(op)(I, sh), op(I, sh)), name
    got = srcjax.vmap(lambda a: lax.round(a))(np.stack([HALF, -HALF]))
    assert np.array_equal(got, np.stack([lax.round(HALF), lax.round(-HALF)]))


def test_dot_shape_errors_and_unsupported():
    with pytest.raises(ValueError, match="dimension_numbers"):
        lax.dot(np.ones((2, 2, 3)), np.ones(3))
    with pytest.raises(TypeError, match="broadcast_in_dim"):
        lax.broadcast_in_dim(np.ones(3), (3, 2), (1,))
