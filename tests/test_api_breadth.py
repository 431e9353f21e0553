"""JAX API breadth found missing by a fresh-user port: jax.nn's newer
activations, dot_product_attention and initializers, jax.tree.transpose /
tree_reduce inside grad, jnp's nan-aware reductions and angle, scipy.special's
entropy functions, lax.top_k's container type.

Expected values: recorded from JAX 0.10.2 (CPU) into ``data/api_breadth_jax.npz``
by running ``_compute`` below with ``jax`` (``SRCJAX_RECORD_JAX=1 pytest
tests/test_api_breadth.py`` re-records), a few small ones pasted with a comment;
derivatives also against float64 finite differences, vmap against loops.
"""

# ruff: noqa: B023 (the loops' lambdas are called at once)
from __future__ import annotations

import operator
import pathlib

import numpy as np
import pytest
from helpers import assert_matches_recorded, fd_grad, jax_recorded

import srcjax
import srcjax.numpy as jnp

RECORDED = pathlib.Path(__file__).parent / "data" / "api_breadth_jax.npz"

_rng = np.random.default_rng(0)
X7 = np.array([-3.0, -1.0, -0.5, 0.0, 0.25, 1.0, 2.5], np.float32)
Y = (np.arange(12, dtype=np.float32).reshape(3, 4) / 5 - 1).astype(np.float32)
WHERE = np.array([[True, False, True, True], [False, False, True, False], [True] * 4])
# attention inputs: B=2, T=3, S=4, N=4 query heads, K=2 key/value heads, H=3
AQ = _rng.normal(size=(2, 3, 4, 3)).astype(np.float32)
AK = _rng.normal(size=(2, 4, 2, 3)).astype(np.float32)
AV = _rng.normal(size=(2, 4, 2, 3)).astype(np.float32)
ABIAS = _rng.normal(size=(1, 4, 3, 4)).astype(np.float32)
AMASK = _rng.random(size=(2, 1, 3, 4)) > 0.3
AMASK[..., 0] = True
AW = _rng.normal(size=(2, 3, 4, 3)).astype(np.float32)


def _compute_nn(jax, jnp, nn):
    r = {}
    for name in ("mish", "squareplus", "sparse_plus", "sparse_sigmoid", "identity", "tanh"):
        f = getattr(nn, name)
        r[name] = f(X7)
        r[name + "_grad"] = jax.vmap(jax.grad(f))(X7)
        r[name + "_f16"] = f(X7.astype(np.float16))
        r[name + "_int"] = f(np.array([1, 2], np.int32))
    xp = np.abs(X7[X7 != 0])
    r["log1mexp"] = nn.log1mexp(xp)
    r["log1mexp_grad"] = jax.vmap(jax.grad(nn.log1mexp))(xp)
    r["squareplus_b"] = nn.squareplus(X7, 0.5)
    r["squareplus_db"] = jax.grad(lambda b: jnp.sum(nn.squareplus(X7, b)))(0.5)
    r["glu"] = nn.glu(Y)
    r["glu_axis0"] = nn.glu(np.arange(8.0, dtype=np.float32).reshape(4, 2) / 3, axis=0)
    r["glu_grad"] = jax.grad(lambda y: jnp.sum(nn.glu(y) ** 2))(Y)
    r["lme"] = nn.logmeanexp(Y)
    r["lme_axis1"] = nn.logmeanexp(Y, axis=1)
    r["lme_keep"] = nn.logmeanexp(Y, axis=0, keepdims=True)
    r["lme_where"] = nn.logmeanexp(Y, axis=1, where=WHERE)
    r["lme_grad"] = jax.grad(lambda y: jnp.sum(nn.logmeanexp(y, axis=1, where=WHERE)))(Y)
    dpa = nn.dot_product_attention
    r["dpa"] = dpa(AQ, AK, AV)
    r["dpa_bias_mask"] = dpa(AQ, AK, AV, ABIAS, AMASK)
    r["dpa_causal"] = dpa(AQ, AK, AV, is_causal=True, scale=0.3)
    r["dpa_window"] = dpa(AQ, AK, AV, local_window_size=(1, 0))
    r["dpa_seqlen"] = dpa(
        AQ,
        AK,
        AV,
        query_seq_lengths=np.array([2, 3], np.int32),
        key_value_seq_lengths=np.array([3, 1], np.int32),
    )
    r["dpa_res_out"], r["dpa_res_lse"] = dpa(AQ, AK, AV, ABIAS, return_residual=True)
    r["dpa_3d"] = dpa(AQ[0], AK[0], AV[0])
    r["dpa_f16"] = dpa(AQ.astype(np.float16), AK.astype(np.float16), AV.astype(np.float16))

    def loss(q, k, v, b):
        return jnp.sum(dpa(q, k, v, b, AMASK, is_causal=True) * AW)

    grads = jax.grad(loss, argnums=(0, 1, 2, 3))(AQ, AK, AV, ABIAS)
    for name, g in zip(("q", "k", "v", "bias"), grads):
        r["dpa_grad_" + name] = g
    return r


def _compute_init(jax, init):
    key = jax.random.PRNGKey(42)
    r = {}
    r["init_zeros"] = init.zeros(key, (2, 3))
    r["init_ones16"] = init.ones(key, (2,), np.float16)
    r["init_const"] = init.constant(0.3)(key, (2, 2))
    r["init_uniform"] = init.uniform(0.5)(key, (3, 4))
    r["init_normal"] = init.normal(0.2)(key, (5,))
    r["init_tnormal"] = init.truncated_normal(0.3, lower=-1.0, upper=1.5)(key, (2, 5))
    r["init_glorot_u"] = init.glorot_uniform()(key, (4, 6))
    r["init_glorot_n"] = init.glorot_normal()(key, (4, 6))
    r["init_xavier_u"] = init.xavier_uniform()(key, (6, 4))
    r["init_lecun_u"] = init.lecun_uniform()(key, (3, 3, 2, 5))
    r["init_lecun_n"] = init.lecun_normal()(key, (3, 3, 2, 5))
    r["init_he_u"] = init.he_uniform()(key, (7, 3))
    r["init_he_n"] = init.he_normal(in_axis=0, out_axis=1, batch_axis=2)(key, (3, 4, 2))
    r["init_kaiming_n"] = init.kaiming_normal()(key, (5, 3))
    r["init_vs_fanout_n"] = init.variance_scaling(0.5, "fan_out", "normal")(key, (3, 5))
    r["init_vs_geo_u"] = init.variance_scaling(2.0, "fan_geo_avg", "uniform")(key, (3, 5))
    vs = init.variance_scaling
    r["init_vs_c64_u"] = vs(1.0, "fan_in", "uniform", dtype=np.complex64)(key, (2, 3))
    r["init_vs_c64_tn"] = vs(1.0, "fan_in", "truncated_normal", dtype=np.complex64)(key, (2, 3))
    r["init_orth"] = init.orthogonal()(key, (3, 5))
    r["init_orth_col0"] = init.orthogonal(2.0, column_axis=0)(key, (3, 2, 2))
    r["init_delta"] = init.delta_orthogonal()(key, (3, 2, 4))
    return r


def _compute_tree(jax, jnp):
    r = {}
    p = {"a": np.array([1.0, 2.0], np.float32), "b": (np.float32(3.0), Y)}

    def f(p):
        return jax.tree.reduce(jnp.multiply, jax.tree.map(lambda x: jnp.sum(x**2), p))

    def g(p):
        return jax.tree_util.tree_reduce(lambda acc, x: acc + jnp.sum(jnp.sin(x)), p, 0.5)

    for name, fn in (("reduce_mul", f), ("reduce_init", g)):
        grad = jax.grad(fn)(p)
        r["tree_" + name] = fn(p)
        r["tree_" + name + "_ga"] = grad["a"]
        r["tree_" + name + "_gb0"] = grad["b"][0]
        r["tree_" + name + "_gb1"] = grad["b"][1]
    return r


SX = np.array([-1.0, 0.0, 0.3, 1.0, 2.5], np.float32)
SP = np.array([0.0, 0.0, 0.2, 1.0, 3.0, -1.0], np.float32)
SQ = np.array([0.0, 0.5, 0.7, 1.0, 0.25, 1.0], np.float32)


def _compute_special(jax, sp):
    r = {}
    r["sp_entr"] = sp.entr(SX)
    r["sp_entr_grad"] = jax.vmap(jax.grad(sp.entr))(SX[2:])
    r["sp_entr_int"] = sp.entr(np.array([0, 1, 2], np.int32))
    r["sp_rel"] = sp.rel_entr(SP, SQ)
    r["sp_kl"] = sp.kl_div(SP, SQ)
    for name in ("rel_entr", "kl_div"):
        f = getattr(sp, name)
        r[f"sp_{name}_gp"] = jax.vmap(jax.grad(f))(SP, SQ)
        r[f"sp_{name}_gq"] = jax.vmap(jax.grad(f, argnums=1))(SP, SQ)
    r["sp_kl_f16"] = sp.kl_div(SP.astype(np.float16), 2.0)
    return r


NANS = np.array([[1.5, np.nan, 2.0], [np.nan, -0.5, 3.0]], np.float32)


def _compute_nan(jax, jnp):
    a = NANS
    r = {}
    r["nan_cumsum"] = jnp.nancumsum(a)
    r["nan_cumsum1"] = jnp.nancumsum(a, axis=1)
    r["nan_cumprod0"] = jnp.nancumprod(a, axis=0)
    r["nan_prod"] = jnp.nanprod(a)
    r["nan_prod1"] = jnp.nanprod(a, axis=1, keepdims=True)
    r["nan_prod_where"] = jnp.nanprod(a, axis=0, where=np.array([True, False, True]))
    r["nan_cumsum_int"] = jnp.nancumsum(np.array([1, 2, 3], np.int32))
    r["nan_g_cumsum"] = jax.grad(lambda x: jnp.sum(jnp.nancumsum(x, axis=1) ** 2))(a)
    r["nan_g_cumprod"] = jax.grad(lambda x: jnp.sum(jnp.nancumprod(x, axis=1)))(a)
    r["nan_g_prod"] = jax.grad(lambda x: jnp.sum(jnp.nanprod(x, axis=0)))(a)
    r["nan_angle"] = jnp.angle(np.array([1 + 1j, -1.0, -2j, 0.0], np.complex64))
    r["nan_angle_deg"] = jnp.angle(np.array([-1.0, 2.0, 0.0], np.float32), deg=True)
    return r


def _compute(jax, jnp, nn, init, sp):
    r = _compute_nn(jax, jnp, nn)
    r.update(_compute_nan(jax, jnp))
    r.update(_compute_special(jax, sp))
    r.update(_compute_init(jax, init))
    r.update(_compute_tree(jax, jnp))
    return {k: np.asarray(v) for k, v in r.items()}


def _compute_with_jax():
    import jax
    import jax.numpy as jjnp
    import jax.scipy.special as jsp
    from jax.nn import initializers

    return _compute(jax, jjnp, jax.nn, initializers, jsp)


@pytest.fixture(scope="module")
def recorded():
    return jax_recorded(RECORDED, _compute_with_jax)


@pytest.fixture(scope="module")
def ours():
    import srcjax.scipy.special as ssp
    from srcjax.nn import initializers

    return _compute(srcjax, jnp, srcjax.nn, initializers, ssp)


def _subset(d, keys):
    return {k: d[k] for k in keys}


def test_nn_functions_match_jax(recorded, ours):
    keys = [k for k in recorded if not k.startswith(("dpa", "init_", "tree_", "sp_", "nan_"))]
    assert_matches_recorded(_subset(ours, keys), _subset(recorded, keys), rtol=3e-6, atol=1e-7)


def test_nn_derivatives_finite_differences(x64):
    nn = srcjax.nn
    x = np.array([-2.5, -0.7, -0.2, 0.3, 0.8, 2.0])
    for f in (nn.mish, nn.squareplus, nn.sparse_plus, nn.sparse_sigmoid, nn.log1mexp):
        xs = np.abs(x) if f is nn.log1mexp else x
        got = srcjax.vmap(srcjax.grad(f))(xs)
        want = [fd_grad(f, v) for v in xs]
        np.testing.assert_allclose(got, np.ravel(want), rtol=1e-7, atol=1e-9, err_msg=f.__name__)
    y = np.linspace(-1, 1, 12).reshape(3, 4)
    for f in (
        lambda y: jnp.sum(nn.glu(y.reshape(4, 3), axis=0) ** 3),
        lambda y: jnp.sum(nn.logmeanexp(y, axis=1, where=WHERE) ** 2),
    ):
        np.testing.assert_allclose(srcjax.grad(f)(y), fd_grad(f, y), rtol=1e-7, atol=1e-9)


def test_nn_jit_vmap_and_errors():
    nn = srcjax.nn
    for f in (nn.mish, nn.sparse_plus, nn.squareplus, nn.log1mexp):
        np.testing.assert_allclose(srcjax.jit(f)(np.abs(X7)), f(np.abs(X7)), rtol=1e-6)
    ys = np.stack([Y, 2 * Y])
    np.testing.assert_allclose(
        srcjax.vmap(lambda y: nn.logmeanexp(y, axis=0))(ys),
        [nn.logmeanexp(y, axis=0) for y in ys],
        rtol=1e-6,
    )
    np.testing.assert_allclose(srcjax.vmap(nn.glu)(ys), [nn.glu(y) for y in ys], rtol=1e-6)
    with pytest.raises(ValueError, match="divisible by 2"):
        nn.glu(np.ones((3, 3), np.float32))


def test_dot_product_attention_matches_jax(recorded, ours):
    keys = [k for k in recorded if k.startswith("dpa")]
    assert_matches_recorded(_subset(ours, keys), _subset(recorded, keys), rtol=2e-5, atol=2e-6)


def test_dot_product_attention_transforms_and_errors():
    dpa = srcjax.nn.dot_product_attention
    want = dpa(AQ, AK, AV, ABIAS, AMASK, is_causal=True)
    np.testing.assert_allclose(
        srcjax.jit(lambda q, k, v: dpa(q, k, v, ABIAS, AMASK, is_causal=True))(AQ, AK, AV),
        want,
        rtol=1e-6,
        atol=1e-7,
    )
    # vmap over a leading axis of 3-D inputs against a loop
    per = srcjax.vmap(lambda q, k, v: dpa(q, k, v))(AQ, AK, AV)
    # (float32: the batched products are one np.matmul since d588111, the loop's a
    # matmul per example; sums in another order differ by ~1e-7 absolute)
    loop = [dpa(AQ[i], AK[i], AV[i]) for i in range(2)]
    np.testing.assert_allclose(per, loop, rtol=1e-6, atol=1e-6)
    with pytest.raises(ValueError, match="multiple of key/value heads"):
        dpa(AQ[:, :, :3], AK, AV)
    with pytest.raises(ValueError, match="query dtype should be float32"):
        dpa(AQ.astype(np.float16), AK, AV)
    with pytest.raises(ValueError, match="mask dtype should be bool"):
        dpa(AQ, AK, AV, mask=AMASK.astype(np.float32))
    with pytest.raises(NotImplementedError, match="cudnn"):
        dpa(AQ, AK, AV, implementation="cudnn")
    with pytest.raises(ValueError, match="Unsupported implementation"):
        dpa(AQ, AK, AV, implementation="flash")


def test_initializers_match_jax(recorded, ours):
    keys = [k for k in recorded if k.startswith("init_")]
    exact = [k for k in keys if "orth" not in k and "delta" not in k]
    # bit for bit: srcjax.random is JAX's threefry, the scaling JAX's float32 steps
    for k in exact:
        assert ours[k].dtype == recorded[k].dtype, k
        np.testing.assert_array_equal(ours[k], recorded[k], err_msg=k)
    # orthogonal goes through a QR decomposition (NumPy's LAPACK): rounding only
    rest = [k for k in keys if k not in exact]
    assert_matches_recorded(_subset(ours, rest), _subset(recorded, rest), rtol=0, atol=2e-6)


def test_initializers_errors_and_module():
    import srcjax.nn.initializers as init_module

    from srcjax.nn import initializers as init

    assert init_module is init
    key = srcjax.random.PRNGKey(0)
    with pytest.raises(ValueError, match="at least 2D"):
        init.glorot_uniform()(key, (3,))
    with pytest.raises(ValueError, match="invalid mode"):
        init.variance_scaling(1.0, "fan_bad", "normal")(key, (2, 2))
    with pytest.raises(ValueError, match="invalid distribution"):
        init.variance_scaling(1.0, "fan_in", "cauchy")(key, (2, 2))
    with pytest.raises(ValueError, match="at least a 2D"):
        init.orthogonal()(key, (4,))
    with pytest.raises(ValueError, match="3D, 4D or 5D"):
        init.delta_orthogonal()(key, (2, 2))
    q = init.orthogonal()(key, (6, 4))
    np.testing.assert_allclose(q.T @ q, np.eye(4), atol=1e-6)


def test_tree_reduce_inside_grad(recorded, ours):
    keys = [k for k in recorded if k.startswith("tree_")]
    assert_matches_recorded(_subset(ours, keys), _subset(recorded, keys), rtol=2e-6)
    p = {"a": np.array([1.0, 2.0], np.float32), "b": (np.float32(3.0), Y)}

    def g(p):
        return srcjax.tree.reduce(lambda acc, x: acc + jnp.sum(jnp.sin(x)), p, 0.5)

    gj = srcjax.jit(srcjax.grad(g))(p)
    np.testing.assert_allclose(gj["b"][1], np.cos(Y), rtol=1e-6)
    pb = srcjax.tree_util.tree_map(lambda x: np.stack([x, 2 * x]), p)
    got = srcjax.vmap(srcjax.grad(g))(pb)
    for i in range(2):
        one = srcjax.grad(g)(srcjax.tree_util.tree_map(lambda x: x[i], pb))
        np.testing.assert_allclose(got["b"][1][i], one["b"][1], rtol=1e-6)
    # functools.reduce's errors
    with pytest.raises(TypeError, match="empty"):
        srcjax.tree.reduce(operator.add, {})
    assert srcjax.tree.reduce(operator.add, [], 7) == 7


def test_tree_transpose():
    tu = srcjax.tree_util
    outer = tu.tree_structure([0, 0])
    inner = tu.tree_structure({"a": 0, "b": 0})
    tree = [{"a": 1, "b": 2}, {"a": 3, "b": 4}]
    # JAX: {'a': [1, 3], 'b': [2, 4]} (also with inner_treedef None)
    assert srcjax.tree.transpose(outer, inner, tree) == {"a": [1, 3], "b": [2, 4]}
    assert srcjax.tree.transpose(outer, None, tree) == {"a": [1, 3], "b": [2, 4]}
    nested = ([1, (2,)], [3, (4,)], [5, (6,)])
    got = tu.tree_transpose(tu.tree_structure((0, 0, 0)), tu.tree_structure([0, (0,)]), nested)
    assert got == [(1, 3, 5), ((2, 4, 6),)]  # JAX's value
    with pytest.raises(TypeError):  # JAX: TypeError "Mismatch"
        srcjax.tree.transpose(outer, inner, [{"a": 1, "b": 2}, {"a": 3}])


def test_entropy_functions_match_jax(recorded, ours):
    keys = [k for k in recorded if k.startswith("sp_")]
    assert_matches_recorded(_subset(ours, keys), _subset(recorded, keys), rtol=2e-6)


def test_entropy_functions_derivatives_and_errors(x64):
    sp = srcjax.scipy.special
    p = np.array([0.2, 0.9, 1.7])
    q = np.array([0.6, 0.3, 2.2])
    for f in (
        lambda p: jnp.sum(sp.entr(p)),
        lambda p: jnp.sum(sp.rel_entr(p, q)),
        lambda q: jnp.sum(sp.kl_div(p, q)),
    ):
        np.testing.assert_allclose(srcjax.grad(f)(p), fd_grad(f, p), rtol=1e-7)
    np.testing.assert_allclose(srcjax.jit(sp.kl_div)(p, q), sp.kl_div(p, q), rtol=1e-12)
    with pytest.raises(ValueError, match="complex"):
        sp.entr(np.array([1 + 1j]))


def test_nan_reductions_and_angle_match_jax(recorded, ours):
    keys = [k for k in recorded if k.startswith("nan_")]
    assert_matches_recorded(_subset(ours, keys), _subset(recorded, keys), rtol=2e-6)
    rows = np.stack([NANS, 2 * NANS])
    np.testing.assert_allclose(
        srcjax.vmap(lambda x: jnp.nancumsum(x, axis=1))(rows),
        [jnp.nancumsum(x, axis=1) for x in rows],
    )
    np.testing.assert_allclose(srcjax.jit(jnp.nanprod)(NANS), jnp.nanprod(NANS))
    with pytest.raises(NotImplementedError):
        jnp.nanprod(NANS, initial=2.0)
