"""Second derivatives of ``jnp.prod`` under vmap (fresh user 8, p14:
``jit(vmap(hessian(f)))`` 22-79x jax.jit): the helpers of prod's rules
(``ad.group_last``, ``ad.ungroup_last``, ``ad.last_onehot``, ``ad.cumprod_jvp``,
``ad.cumprod_vjp``) batch whole, no loop over the examples or over jacfwd's
basis. Values against the float64 closed form (zeros in the input included:
the division-free paths) and against a Python loop over the examples."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.primitives.registry import REGISTRY


def scalar(x):
    return jnp.sum(jnp.sin(x) * x**2) + jnp.prod(x)


def _hessian64(x):
    x = np.asarray(x, np.float64)
    n = len(x)
    h = np.empty((n, n))
    for i in range(n):
        for k in range(n):
            if i == k:
                h[i, i] = -(x[i] ** 2) * np.sin(x[i]) + 4 * x[i] * np.cos(x[i]) + 2 * np.sin(x[i])
            else:
                h[i, k] = np.prod(np.delete(x, [i, k]))
    return h


XS = np.array(
    [
        [0.3, -1.2, 2.0, 0.7],
        [0.0, 1.5, -0.4, 2.2],  # one zero
        [0.0, 0.9, 0.0, -1.1],  # two zeros
        [1.1, 0.5, -0.8, 1.3],
        [-0.6, 2.1, 0.4, -1.7],
    ],
    np.float32,
)


@pytest.mark.parametrize(
    "make",
    [
        lambda: srcjax.vmap(srcjax.hessian(scalar)),
        lambda: srcjax.jit(srcjax.vmap(srcjax.hessian(scalar))),
        lambda: srcjax.jit(srcjax.vmap(srcjax.jacrev(srcjax.grad(scalar)))),
        lambda: srcjax.vmap(srcjax.jacfwd(srcjax.grad(scalar))),
    ],
)
def test_vmap_hessian_of_prod_matches_the_closed_form(make):
    fn = make()
    got = fn(XS)
    assert got.shape == (5, 4, 4) and got.dtype == np.float32
    want = np.stack([_hessian64(x) for x in XS])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def test_vmap_hessian_of_prod_has_no_loop():
    text = srcjax.source(srcjax.jit(srcjax.vmap(srcjax.hessian(scalar))), XS)
    assert "\n    for " not in text and "range(" not in text, text
    # the folded round trips of the nested rules are gone too
    assert "ad.unfold_axes" not in text, text


GROUP = REGISTRY["ad.group_last"]
UNGROUP = REGISTRY["ad.ungroup_last"]
ONEHOT = REGISTRY["ad.last_onehot"]
CJVP = REGISTRY["ad.cumprod_jvp"]
CVJP = REGISTRY["ad.cumprod_vjp"]


def _group(x):
    return GROUP(x, (0, 2))


def _ungroup(y, x):
    return UNGROUP(y, x, (0, 2))


def _onehot(x):
    return ONEHOT(x)


def _cjvp(t, x):
    return CJVP(t, x, -1)


def _cvjp(g, x):
    return CVJP(g, x, 1)


RNG = np.random.default_rng(17)
X3 = RNG.normal(size=(3, 2, 3, 4))
X3[1, 0, 1, 2] = 0.0
Y3 = RNG.normal(size=(3, 3, 8))
M = RNG.normal(size=(3, 2, 4))
M[2, 1, 1] = 0.0
T = RNG.normal(size=(3, 2, 4))
X3, Y3, M, T = (a.astype(np.float32) for a in (X3, Y3, M, T))


@pytest.mark.parametrize(
    "f,args,in_axes",
    [
        (_group, (X3,), 0),
        (_ungroup, (Y3, X3), 0),
        (_ungroup, (Y3, X3[0]), (0, None)),
        (_ungroup, (Y3[0], X3), (None, 0)),
        (_onehot, (M,), 0),
        (_cjvp, (T, M), 0),
        (_cjvp, (T[0], M), (None, 0)),
        (_cjvp, (T, M[0]), (0, None)),
        (_cvjp, (T, M), 0),
        (_cvjp, (T[0], M), (None, 0)),
        (_cvjp, (T, M[0]), (0, None)),
    ],
)
def test_prod_rule_helpers_batch_like_a_loop(f, args, in_axes):
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    got = srcjax.vmap(f, in_axes=axes)(*args)
    rows = [f(*[a if ax is None else a[i] for a, ax in zip(args, axes)]) for i in range(3)]
    np.testing.assert_allclose(
        np.asarray(got), np.stack([np.asarray(r) for r in rows]), rtol=1e-5, atol=1e-6
    )
    text = srcjax.source(srcjax.vmap(f, in_axes=axes), *args)
    assert "loop over the examples" not in text, text


def _third64(x):
    """d^3 prod(x) / dx_i dx_j dx_k in float64: the product of the other
    entries for distinct i, j, k, else 0."""
    x = np.asarray(x, np.float64)
    n = len(x)
    t = np.zeros((n, n, n))
    for i in range(n):
        for j in range(n):
            for k in range(n):
                if len({i, j, k}) == 3:
                    t[i, j, k] = np.prod(np.delete(x, [i, j, k]))
    return t


@pytest.mark.parametrize(
    "make",
    [
        lambda: srcjax.vmap(srcjax.jacfwd(srcjax.hessian(jnp.prod))),
        lambda: srcjax.jit(srcjax.vmap(srcjax.jacrev(srcjax.jacrev(srcjax.grad(jnp.prod))))),
        lambda: srcjax.vmap(srcjax.jacrev(srcjax.jacfwd(srcjax.grad(jnp.prod)))),
    ],
)
def test_third_derivatives_of_prod_match_the_closed_form(make):
    # prod_others' rules use prod_others again (of x with one entry set to 1):
    # every order stays division free and exact with zeros (rows 1 and 2)
    got = make()(XS)
    assert got.shape == (5, 4, 4, 4) and got.dtype == np.float32
    want = np.stack([_third64(x) for x in XS])
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.complex64])
@pytest.mark.parametrize("shape,axis", [((64, 6, 6, 6), -1), ((64, 6, 6, 6), 1), ((3, 4), 1)])
def test_short_axis_scan_is_numpys_bit_for_bit(dtype, shape, axis):
    from srcjax.primitives.ad.cumprod import _scan

    a = np.random.default_rng(3).normal(size=shape).astype(dtype)
    for op, ref in ((np.multiply, np.cumprod), (np.add, np.cumsum)):
        got, want = _scan(op, a, axis), ref(a, axis=axis)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    b = np.broadcast_to(a[:, :1], a.shape)  # a broadcast view (a batch_broadcast)
    np.testing.assert_array_equal(_scan(np.multiply, b, axis), np.cumprod(b, axis=axis))


@pytest.mark.parametrize("shape,axis", [((64, 6, 6), -1), ((3, 4), None), ((2, 3, 2), (0, 2))])
def test_prod_others_without_zeros_is_the_division_formula(shape, axis):
    # the product of the group over each element: the float64 products of the
    # others, and bit for bit the value cumprod_vjp's division formula gave
    from srcjax.primitives.ad import cumprod as C
    from srcjax.primitives.ad.static import _group_last, _last_onehot, _ungroup_last

    x = np.random.default_rng(9).normal(size=shape).astype(np.float32)
    got = REGISTRY["ad.prod_others"](x, axis)
    xr = _group_last(x, axis)
    formula = _ungroup_last(C._cumprod_vjp(_last_onehot(xr), xr, -1), x, axis)
    np.testing.assert_array_equal(got, formula)
    x64 = _group_last(x.astype(np.float64), axis)
    others = [np.prod(np.delete(x64, i, axis=-1), axis=-1) for i in range(x64.shape[-1])]
    want = _ungroup_last(np.stack(others, -1), x, axis)
    np.testing.assert_allclose(got, want, rtol=1e-6)
