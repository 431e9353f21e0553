"""Reduction options JAX users pass that srcjax refused (fresh-user round 7, item
11): ``jnp.var``/``jnp.std`` with ``where=`` (the statistics of the selected
elements; NaN where no more than ``ddof`` are; unselected elements get no
gradient) and ``jnp.sum``/``jnp.prod`` with ``promote_integers=False`` (an
integer operand keeps its dtype and wraps around; bool still counts in int32).
Values, gradients and dtypes: JAX 0.10.2 (``jax.numpy`` and ``jax.grad`` of the
sum), recorded."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

X = np.array([[0.1, 0.5, 0.9], [1.0, 2.0, 4.0]], np.float32)
NAN = float("nan")

# name -> (function, JAX's value, JAX's gradient of its sum)
MASKED = {
    "var_all": (
        lambda x: jnp.var(x, where=x > 0.3),
        1.5896002054214478,
        [[0.0, -0.472, -0.312], [-0.272, 0.128, 0.928]],
    ),
    "std_all": (
        lambda x: jnp.std(x, where=x > 0.3),
        1.2607934474945068,
        [[0.0, -0.1871837079524994, -0.12373161315917969], [-0.10786858, 0.05076168, 0.36802223]],
    ),
    "var_axis1": (
        lambda x: jnp.var(x, axis=1, where=x > 0.3),
        [0.04, 1.5555557012557983],
        [[0.0, -0.2, 0.2], [-0.8888888955116272, -0.2222222238779068, 1.1111111640930176]],
    ),
    "var_axis0_ddof": (
        lambda x: jnp.var(x, axis=0, where=x > 0.3, ddof=1),
        [NAN, 1.125, 4.805000305175781],
        [[0.0, -1.5, -3.1], [NAN, 1.5, 3.1]],
    ),
    "std_keepdims_ddof": (
        lambda x: jnp.std(x, axis=1, keepdims=True, where=x > 0.3, ddof=1),
        [[0.2828426957130432], [1.5275253057479858]],
        [
            [0.0, -0.7071067690849304, 0.7071067690849304],
            [-0.4364357888698578, -0.10910894, 0.5455447],
        ],
    ),
    "std_broadcast_mask": (
        lambda x: jnp.std(x, axis=0, where=np.array([True, False, True])),
        [0.45, NAN, 1.55],
        [[-0.5, NAN, -0.5], [0.5, NAN, 0.5]],
    ),
}


@pytest.mark.parametrize("name", sorted(MASKED))
def test_var_std_where_as_jax(name):
    f, value, grad = MASKED[name]
    for g in (f, srcjax.jit(f)):
        got = np.asarray(g(X))
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, np.array(value, np.float32), rtol=2e-6)
    loss = lambda x: jnp.sum(f(x))  # noqa: E731
    for d in (srcjax.grad(loss), srcjax.jit(srcjax.grad(loss))):
        np.testing.assert_allclose(
            np.asarray(d(X)), np.array(grad, np.float32), rtol=2e-6, atol=1e-7
        )
    # per example, as JAX's vmap (each row its own call)
    rows = np.stack([X, 2 * X])
    got = np.asarray(srcjax.vmap(f)(rows))
    np.testing.assert_allclose(got[0], np.array(value, np.float32), rtol=2e-6)


# dtype -> (JAX's sum with promote_integers=False, its dtype, the default's dtype)
PROMOTE = {
    "int8": (44, "int8", "int32"),
    "uint8": (44, "uint8", "uint32"),
    "bool": (3, "int32", "int32"),
    "int16": (300, "int16", "int32"),
    "float16": (300.0, "float16", "float16"),
}


@pytest.mark.parametrize("dt", sorted(PROMOTE))
def test_sum_and_prod_promote_integers_as_jax(dt):
    value, kept, default = PROMOTE[dt]
    a = jnp.array([100, 100, 100]).astype(dt)

    def f(a):
        return (
            jnp.sum(a, promote_integers=False),
            jnp.sum(a),
            jnp.prod(a, promote_integers=False),
            a.sum(promote_integers=False),
        )

    for g in (f, srcjax.jit(f)):
        s, d, p, m = g(a)
        assert np.asarray(s).dtype == np.dtype(kept) and np.asarray(s) == value
        assert np.asarray(d).dtype == np.dtype(default)
        assert np.asarray(p).dtype == np.dtype(kept)
        assert np.asarray(m).dtype == np.dtype(kept) and np.asarray(m) == value
    # an explicit dtype wins (JAX: int32)
    assert jnp.sum(a, promote_integers=False, dtype=jnp.int32).dtype == np.int32


def test_promote_integers_under_vmap_and_grad():
    # JAX 0.10.2: vmap(sum(promote_integers=False)) of int8 rows [[100]*3, [1]*3]: [44, 3] int8
    rows = jnp.array([[100] * 3, [1] * 3], jnp.int8)
    r = srcjax.vmap(lambda a: jnp.sum(a, promote_integers=False))(rows)
    assert np.asarray(r).dtype == np.int8 and np.asarray(r).tolist() == [44, 3]
    # a float operand: the option changes nothing (grad of sum is ones)
    g = srcjax.grad(lambda x: jnp.sum(x * 2.0, promote_integers=False))(jnp.ones(3))
    np.testing.assert_array_equal(np.asarray(g), [2.0, 2.0, 2.0])
