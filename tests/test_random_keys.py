"""Typed PRNG keys (``random.key``, dtype ``key<fry>``) against JAX 0.10.2.

Every value marked "JAX" was recorded from jax/jaxlib 0.10.2 on CPU with the
default (partitionable) scheme, e.g. ``random.key_data(random.split(random.key(7),
(2, 3))).tolist()``; CI does not install jax.
"""

import copy
import pickle

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import dtypes, lax, random

K7 = [0, 7]
# JAX: key_data(split(key(7), (2, 3)))
SPLIT23 = [
    [[3625411723, 1954958720], [195045567, 4062205631], [966301609, 1948237315]],
    [[276534068, 1641862660], [51277378, 3088387524], [3583082021, 1947592014]],
]


def data(k):
    return random.key_data(k).tolist()


def test_key_is_typed_as_jax():
    k = random.key(7)
    assert isinstance(k, random.PRNGKeyArray)
    assert k.shape == () and k.ndim == 0 and k.size == 1 and k.itemsize == 8
    assert str(k.dtype) == "key<fry>" and k.dtype == random.key_dtype()
    assert jnp.issubdtype(k.dtype, dtypes.prng_key)
    assert jnp.issubdtype(k.dtype, dtypes.extended) and jnp.issubdtype(k.dtype, np.generic)
    assert not jnp.issubdtype(k.dtype, jnp.floating)
    assert not jnp.issubdtype(k.dtype, jnp.integer)
    assert not jnp.issubdtype(np.float32, dtypes.prng_key)
    assert jnp.issubdtype(np.float32, jnp.floating)  # (NumPy's answers unchanged)
    assert data(k) == K7
    assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 7]"  # JAX's repr
    assert random.key_impl(k) == "threefry2x32"


def test_key_data_and_wrap_key_data():
    raw = random.PRNGKey(7)
    assert data(random.wrap_key_data(raw)) == K7
    assert random.key_data(raw).tolist() == K7  # raw data is returned as it is (JAX)
    w = random.wrap_key_data(np.array(SPLIT23, np.uint32))
    assert w.shape == (2, 3) and data(w) == SPLIT23
    with pytest.raises(TypeError, match="uint32"):
        random.wrap_key_data(np.zeros(2, np.int32))
    with pytest.raises(TypeError, match="end with"):
        random.wrap_key_data(np.zeros(3, np.uint32))
    with pytest.raises(TypeError, match="already a key array"):
        random.wrap_key_data(random.key(0))


def test_split_fold_in_keep_the_kind():
    k = random.key(7)
    ks = random.split(k, (2, 3))
    assert isinstance(ks, random.PRNGKeyArray) and ks.shape == (2, 3) and data(ks) == SPLIT23
    f = random.fold_in(k, 2**32 - 1)
    assert isinstance(f, random.PRNGKeyArray) and data(f) == [3658129989, 1719350670]  # JAX
    raw = random.split(random.PRNGKey(7), (2, 3))
    assert isinstance(raw, srcjax.Array) and raw.dtype == np.uint32 and raw.tolist() == SPLIT23
    assert isinstance(random.fold_in(random.PRNGKey(7), 1), srcjax.Array)
    with pytest.raises(ValueError, match=r"single key.*shape \(2, 3\) != \(\)"):
        random.split(ks)
    with pytest.raises(ValueError, match="single key"):
        random.normal(ks)


def test_every_sampler_takes_both_kinds():
    # typed and raw keys with the same data draw the same values; JAX's values for two
    k, r = random.key(7), random.PRNGKey(7)
    assert random.uniform(k, (3,)).tolist() == pytest.approx(
        [0.6740899085998535, 0.9746168851852417, 0.3028435707092285], rel=0, abs=0
    )
    assert random.randint(k, (3,), 0, 10).tolist() == [9, 2, 0]
    assert random.beta(k, 2.0, 3.0, (2,)).tolist() == pytest.approx(
        [0.39823201298713684, 0.34409841895103455], rel=1e-6
    )
    draws = {
        "normal": lambda q: random.normal(q, (3,)),
        "bits": lambda q: random.bits(q, (3,)),
        "gamma": lambda q: random.gamma(q, 2.0, (3,)),
        "dirichlet": lambda q: random.dirichlet(q, jnp.ones(3)),
        "poisson": lambda q: random.poisson(q, 3.0, (3,)),
        "binomial": lambda q: random.binomial(q, 10, 0.3, (3,)),
        "permutation": lambda q: random.permutation(q, 5),
        "choice": lambda q: random.choice(q, 5, (3,)),
        "categorical": lambda q: random.categorical(q, jnp.zeros(4)),
        "orthogonal": lambda q: random.orthogonal(q, 3),
        "truncated_normal": lambda q: random.truncated_normal(q, -1.0, 1.0, (3,)),
        "multivariate_normal": lambda q: random.multivariate_normal(q, jnp.zeros(2), jnp.eye(2)),
        "t": lambda q: random.t(q, 3.0, (3,)),
    }
    for name, draw in draws.items():
        np.testing.assert_array_equal(draw(k), draw(r), err_msg=name)
        np.testing.assert_array_equal(srcjax.jit(draw)(k), draw(r), err_msg=name)
        v = srcjax.vmap(draw)(random.split(k, 2))
        np.testing.assert_array_equal(v, srcjax.vmap(draw)(random.split(r, 2)), err_msg=name)


def test_typed_keys_under_vmap_jit_grad():
    k = random.key(7)
    # JAX: vmap(lambda i: normal(fold_in(k, i)))(arange(3))
    got = srcjax.vmap(lambda i: random.normal(random.fold_in(k, i)))(jnp.arange(3))
    np.testing.assert_allclose(got, [1.1140471696853638, 0.4541335105895996, -0.8203861713409424])
    vk = srcjax.vmap(random.key)(jnp.arange(3))
    assert isinstance(vk, random.PRNGKeyArray) and data(vk) == [[0, 0], [0, 1], [0, 2]]
    out = srcjax.vmap(lambda q: random.split(q), out_axes=1)(random.split(k, 3))
    assert isinstance(out, random.PRNGKeyArray) and out.shape == (2, 3)
    assert data(out) == [  # JAX
        [[2737751932, 2099591257], [1294055386, 3790878917], [356214456, 562507344]],
        [[533473832, 2443621858], [1610437339, 2357010365], [2971707868, 4077493777]],
    ]
    j = srcjax.jit(lambda q: random.split(q))(k)
    assert isinstance(j, random.PRNGKeyArray) and data(j) == data(random.split(k))
    assert "k: key<fry>[]" in srcjax.source(srcjax.jit(lambda k: random.normal(k)), k)

    def loss(x, q):
        return jnp.sum(random.normal(q, (3,)) * x**2)

    g = srcjax.grad(loss)(jnp.ones(3), k)
    np.testing.assert_array_equal(g, 2 * random.normal(k, (3,)))
    with pytest.raises(srcjax.errors.NonDifferentiableError, match="key<fry>"):
        srcjax.grad(lambda q: 1.0)(k)

    # a per-example branch that re-keys some examples
    def branchy(q, x):
        if x > 0:
            q = random.fold_in(q, 1)
        return random.normal(q)

    ks = random.split(k, 3)
    xs = jnp.array([1.0, -1.0, 2.0])
    want = [branchy(q, x) for q, x in zip(ks, xs)]
    np.testing.assert_array_equal(srcjax.vmap(branchy)(ks, xs), want)
    np.testing.assert_array_equal(
        srcjax.vmap(branchy, in_axes=(None, 0))(k, xs), [branchy(k, x) for x in xs]
    )
    nested = srcjax.vmap(srcjax.vmap(lambda q: random.normal(q)))(random.split(k, (2, 3)))
    np.testing.assert_array_equal(
        nested, np.array([[random.normal(q) for q in row] for row in random.split(k, (2, 3))])
    )


def test_typed_keys_as_loop_carries():
    k = random.key(7)

    def loop(kk):
        def body(i, c):
            kk, s = c
            kk, sub = random.split(kk)
            return kk, s + random.normal(sub)

        return lax.fori_loop(0, 3, body, (kk, 0.0))

    for fn in (loop, srcjax.jit(loop)):
        kk, s = fn(k)
        assert isinstance(kk, random.PRNGKeyArray)
        assert data(kk) == [2104974619, 1294875220]  # JAX
        assert float(s) == pytest.approx(3.703960657119751, rel=1e-6)

    def scan(kk):
        def body(c, x):
            c, sub = random.split(c)
            return c, random.uniform(sub) * x

        return lax.scan(body, kk, jnp.arange(3.0))

    c, ys = srcjax.vmap(scan)(random.split(k, 2))
    assert data(c) == [[2699991503, 1641738729], [1029996795, 1139619738]]  # JAX
    np.testing.assert_allclose(
        ys,
        [
            [0.0, 0.8428968191146851, 1.3984136581420898],
            [0.0, 0.03277993202209473, 0.5413742065429688],
        ],
    )


def test_key_array_structure():
    ks = random.split(random.key(7), (2, 3))
    assert ks[1, 2].shape == () and data(ks[1, 2]) == SPLIT23[1][2]
    assert data(ks[..., 0]) == [SPLIT23[0][0], SPLIT23[1][0]]
    assert data(ks[:, None]) == [[r] for r in SPLIT23]
    assert ks.T.shape == (3, 2) and data(ks.T[2, 1]) == SPLIT23[1][2]
    assert ks.reshape(6).shape == (6,) and data(ks.ravel()[4]) == SPLIT23[1][1]
    assert len(ks) == 2 and [data(r) for r in ks] == SPLIT23
    k = random.key(7)
    f1 = random.fold_in(k, 1)
    assert data(jnp.stack([k, f1])) == [[0, 7], [195045567, 4062205631]]  # JAX
    assert jnp.concatenate([ks, ks]).shape == (4, 3)
    assert np.broadcast_to(k, (2,)).shape == (2,)
    assert jnp.where(jnp.array([True, False]), jnp.stack([k, k]), jnp.stack([f1, f1])).shape == (2,)
    assert data(jnp.where(jnp.array([True, False]), jnp.stack([k, k]), jnp.stack([f1, f1]))) == [
        K7,
        data(f1),
    ]
    assert np.moveaxis(ks, 0, 1).shape == (3, 2)
    assert (ks == ks).tolist() == [[True] * 3] * 2 and (k != f1) and bool(k == k)
    assert jnp.asarray(k) is k and data(jnp.array(ks)) == SPLIT23
    assert data(copy.deepcopy(ks)) == SPLIT23 and data(pickle.loads(pickle.dumps(ks))) == SPLIT23
    assert data(random.clone(k)) == K7 and isinstance(random.clone(k), random.PRNGKeyArray)


def test_key_array_refusals_as_jax():
    k = random.key(0)
    with pytest.raises(TypeError, match="key_data"):
        np.asarray(k)
    with pytest.raises(TypeError, match="add does not accept dtypes key<fry>"):
        k + 1
    with pytest.raises(TypeError, match="does not accept dtype key<fry>"):
        np.sin(k)
    with pytest.raises(TypeError, match="key"):
        k.astype(np.uint32)
    with pytest.raises(TypeError, match="key accepts a scalar seed"):
        random.key(np.arange(3))
