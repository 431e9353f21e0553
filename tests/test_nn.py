"""srcjax.nn: standardize and the where= masks of softmax / log_softmax, against
JAX 0.10.2 (recorded values), float64 finite differences, vmap vs a loop, jit
vs eager."""

# ruff: noqa: B023 (the loops' lambdas are called at once)
from __future__ import annotations

import pathlib

import numpy as np
import pytest
from helpers import assert_close, assert_matches_recorded, fd_grad, jax_recorded

import srcjax
import srcjax.numpy as jnp

RECORDED = pathlib.Path(__file__).parent / "data" / "nn_jax.npz"
X = np.array([[1.0, 2.0, 3.0, -1.0], [0.5, 0.5, 4.0, 2.0], [-2.0, 0.25, 1.5, 3.0]], np.float32)
M = np.array([[True, False, True, True], [False, False, False, False], [True, True, False, True]])
W = np.array([0.5, -1.0, 2.0, 1.5], np.float32)


def _compute(jax, jnp, nn):
    r = {}
    r["std"] = nn.standardize(X)
    r["std_axis0"] = nn.standardize(X, axis=0)
    r["std_none"] = nn.standardize(X, axis=None)
    r["std_axes"] = nn.standardize(X[None], axis=(1, 2))
    r["std_where"] = nn.standardize(X, where=M)
    r["std_mean_var"] = nn.standardize(X, mean=1.0, variance=2.0, epsilon=0.1)
    r["std_stable"] = nn.standardize(X, algorithm="stable")
    r["std_int"] = nn.standardize(np.arange(6, dtype=np.int32).reshape(2, 3))
    r["std_f16"] = nn.standardize(X.astype(np.float16))
    r["std_grad"] = jax.grad(lambda x: jnp.sum(nn.standardize(x) * W))(X)
    r["std_grad_where"] = jax.grad(lambda x: jnp.sum(nn.standardize(x, where=M[0]) * W))(X)
    r["std_grad_mean"] = jax.grad(
        lambda m: jnp.sum(nn.standardize(X, mean=m, variance=1.5) * W), argnums=0
    )(np.float32(0.3))
    r["std_vmap"] = jax.vmap(lambda x: nn.standardize(x, where=M[2]))(X)
    r["std_jit"] = jax.jit(lambda x: nn.standardize(x, axis=0))(X)
    for name, f in [("softmax", nn.softmax), ("log_softmax", nn.log_softmax)]:
        r[f"{name}_where"] = f(X, where=M)
        r[f"{name}_where_row"] = f(X, where=M[2])
        r[f"{name}_where_axis0"] = f(X, axis=0, where=M[:, :1])
        r[f"{name}_where_none"] = f(X, axis=None, where=M)
        r[f"{name}_where_int"] = f(np.arange(4), where=M[0])
        r[f"{name}_grad"] = jax.grad(
            lambda x: jnp.sum(jnp.where(M, f(x, where=M), 0.0) * jnp.sin(x))
        )(X)
        r[f"{name}_jvp"] = jax.jvp(
            lambda x: jnp.where(M, f(x, where=M), 0.0), (X,), (X * 0.5 + 1.0,)
        )[1]
        r[f"{name}_vmap"] = jax.vmap(lambda x, m: f(x, where=m))(X, M)
        r[f"{name}_vmap_grad"] = jax.vmap(
            jax.grad(lambda x, m: jnp.sum(jnp.where(m, f(x, where=m), 0.0) * W)), in_axes=(0, 0)
        )(X, M)
        r[f"{name}_jit"] = jax.jit(lambda x: f(x, where=M))(X)
    return r


def _with_jax():
    import jax
    import jax.numpy as jjnp

    return _compute(jax, jjnp, jax.nn)


def test_standardize_and_masked_softmax_match_jax():
    recorded = jax_recorded(RECORDED, _with_jax)
    ours = _compute(srcjax, jnp, srcjax.nn)
    # float16: within an ulp (JAX rounds its float16 steps differently)
    assert_matches_recorded(
        {"std_f16": ours.pop("std_f16")}, {"std_f16": recorded.pop("std_f16")}, rtol=2e-3
    )
    assert_matches_recorded(ours, recorded, rtol=2e-5, atol=2e-6)


def test_standardize_finite_differences_vmap_jit(x64):
    x = np.random.default_rng(0).normal(size=(3, 4))
    w = np.random.default_rng(1).normal(size=4)
    keep = M.copy()
    keep[1, :2] = True

    def f(x):
        return jnp.sum(srcjax.nn.standardize(x, where=keep) ** 2 * w + srcjax.nn.standardize(x) * w)

    g = srcjax.grad(f)(x)
    assert_close(g, fd_grad(f, x), rtol=1e-5, atol=1e-7)
    assert_close(srcjax.jit(f)(x), f(x), rtol=1e-12)
    assert_close(srcjax.jit(srcjax.grad(f))(x), g, rtol=1e-10)
    h = lambda v: srcjax.nn.standardize(v, axis=0)  # noqa: E731
    xs = np.random.default_rng(2).normal(size=(2, 3, 4))
    assert_close(srcjax.vmap(h)(xs), np.stack([h(v) for v in xs]), rtol=1e-12)
    vg = srcjax.vmap(srcjax.grad(lambda v: jnp.sum(srcjax.nn.standardize(v) * w)))(xs)
    lg = [srcjax.grad(lambda v: jnp.sum(srcjax.nn.standardize(v) * w))(v) for v in xs]
    assert_close(vg, np.stack(lg), rtol=1e-10)
    with pytest.raises(ValueError, match="Unknown algorithm"):
        srcjax.nn.standardize(x, algorithm="slow")


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_masked_softmax_finite_differences_vmap_jit(name, x64):
    f = getattr(srcjax.nn, name)
    x = np.random.default_rng(3).normal(size=(3, 4))
    keep = M.copy()
    keep[1, 1] = True  # (finite differences need a selected element per row)

    def loss(x):
        return jnp.sum(jnp.where(keep, f(x, where=keep), 0.0) * jnp.cos(x))

    assert_close(srcjax.grad(loss)(x), fd_grad(loss, x), rtol=1e-6, atol=1e-8)
    assert_close(srcjax.jit(srcjax.grad(loss))(x), srcjax.grad(loss)(x), rtol=1e-12)
    got = srcjax.vmap(lambda v, m: f(v, where=m))(x, keep)
    assert_close(got, np.stack([f(v, where=m) for v, m in zip(x, keep)]), rtol=1e-12)
    shared = srcjax.vmap(lambda v: f(v, where=keep[0]))(x)  # unbatched mask
    assert_close(shared, np.stack([f(v, where=keep[0]) for v in x]), rtol=1e-12)
    col = srcjax.vmap(lambda m: f(x, axis=0, where=m))(
        keep[:, :2].T[..., None]
    )  # batched mask only
    assert_close(
        col, np.stack([f(x, axis=0, where=m) for m in keep[:, :2].T[..., None]]), rtol=1e-12
    )


# Learned slopes (PReLU-style): the derivative in negative_slope/alpha was a silent
# zero (a rule for x only, and reverse mode skipped rule-less arguments). Values
# recorded from JAX 0.10.2 (x64 off).
_XS = np.array([-1.0, 2.0, -3.0, 0.0, -0.5], np.float32)


def _slope_losses():
    import srcjax.nn as nn

    return {
        "leaky_relu": lambda s: jnp.sum(nn.leaky_relu(_XS, s) ** 2),
        "elu": lambda a: jnp.sum(nn.elu(_XS, a) ** 2),
        "celu": lambda a: jnp.sum(nn.celu(_XS, a) ** 2),
    }


_SLOPE_RECORDED = {  # grad at 0.3, jit(grad) at 0.7, vmap(grad) at [0.3, 1.5]
    "leaky_relu": (6.15, 14.349999, [6.15, 30.75]),
    "elu": (0.8743795, 2.0402186, [0.8743795, 4.371897]),
    "celu": (1.3303772, 1.8401304, [1.3303772, 1.7894155]),
}


@pytest.mark.parametrize("name", sorted(_SLOPE_RECORDED))
def test_derivative_in_the_slope_parameter_matches_jax(name):
    f = _slope_losses()[name]
    at3, at7, vm = _SLOPE_RECORDED[name]
    np.testing.assert_allclose(srcjax.grad(f)(0.3), at3, rtol=1e-6)
    np.testing.assert_allclose(srcjax.jit(srcjax.grad(f))(0.7), at7, rtol=1e-6)
    np.testing.assert_allclose(srcjax.jvp(f, (0.3,), (1.0,))[1], at3, rtol=1e-6)
    got = srcjax.vmap(srcjax.grad(f))(np.array([0.3, 1.5], np.float32))
    np.testing.assert_allclose(got, vm, rtol=1e-6)


def test_per_element_slopes_match_jax():
    import srcjax.nn as nn

    def f(s):
        return jnp.sum(nn.leaky_relu(_XS, s) * nn.elu(_XS, s) + nn.celu(_XS, s + 1.0))

    ss = np.array([0.1, 0.2, 0.3, 0.4, 0.5], np.float32)
    want = [-0.10442162, 0.0, 1.0394677, 0.0, 0.15210979]  # JAX 0.10.2
    np.testing.assert_allclose(srcjax.grad(f)(ss), want, rtol=2e-6, atol=1e-7)
