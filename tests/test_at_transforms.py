"""Every ``.at[...]`` method with JAX's keywords (``mode``, ``fill_value``,
``indices_are_sorted``, ``unique_indices``) eagerly and under ``jit``, ``vmap``,
``grad`` and ``jit(grad)``, with an index out of bounds (5 of 4 elements).
Values recorded from JAX 0.10.2 (its ``.at[].apply`` has no derivative, so
``apply``'s gradient is checked against finite differences)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

IDX = np.array([0, 2, 5])


def mk(jnp):
    def f_div(x, v):
        return x.at[IDX].divide(v, mode="drop", indices_are_sorted=True, unique_indices=True)

    def f_pow(x, v):
        return x.at[IDX].power(v, mode="clip", unique_indices=True)

    def f_sub(x, v):
        return x.at[IDX].subtract(v, mode="drop", indices_are_sorted=True)

    def f_apply(x, v):
        return x.at[IDX].apply(lambda t: t * 3.0, mode="drop") * v

    def f_get(x, v):
        return x.at[IDX].get(mode="fill", fill_value=-1.0, indices_are_sorted=True) * v

    def f_set(x, v):
        return x.at[IDX].set(v, mode="promise_in_bounds", unique_indices=True)

    def f_min(x, v):
        return x.at[IDX].min(v, mode="drop")

    def f_max(x, v):
        return x.at[IDX].max(v, mode="clip")

    def f_mul(x, v):
        return x.at[IDX].multiply(v, mode="drop", unique_indices=True)

    def f_add(x, v):
        return x.at[IDX].add(v, mode="clip", indices_are_sorted=True)

    return dict(
        divide=f_div,
        power=f_pow,
        subtract=f_sub,
        apply=f_apply,
        get=f_get,
        set=f_set,
        min=f_min,
        max=f_max,
        multiply=f_mul,
        add=f_add,
    )


FNS = mk(jnp)
X = np.array([1.0, 2.0, 3.0, 4.0], np.float32)
V = np.float32(2.5)
#: recorded from JAX 0.10.2 (value, vmap over two x, grads of sum(w * f) in x and v)
JAX = {
    "divide": {
        "value": [0.4000000059604645, 2.0, 1.2000000476837158, 4.0],
        "vmap": [
            [0.4000000059604645, 2.0, 1.2000000476837158, 4.0],
            [0.800000011920929, 4.0, 2.4000000953674316, 8.0],
        ],
        "grad_x": [0.4000000059604645, 2.0, 1.2000000476837158, 4.0],
        "grad_v": -1.5999999046325684,
    },
    "power": {
        "value": [1.0, 2.0, 15.588457107543945, 32.0],
        "vmap": [
            [1.0, 2.0, 15.588457107543945, 32.0],
            [5.656854152679443, 4.0, 88.18163299560547, 181.0193328857422],
        ],
        "grad_x": [2.5, 2.0, 38.97114181518555, 80.0],
        "grad_v": 228.82269287109375,
    },
    "subtract": {
        "value": [-1.5, 2.0, 0.5, 4.0],
        "vmap": [[-1.5, 2.0, 0.5, 4.0], [-0.5, 4.0, 3.5, 8.0]],
        "grad_x": [1.0, 2.0, 3.0, 4.0],
        "grad_v": -4.0,
    },
    "apply": {
        "value": [7.5, 5.0, 22.5, 10.0],
        "vmap": [[7.5, 5.0, 22.5, 10.0], [15.0, 10.0, 45.0, 20.0]],
    },
    "get": {
        "value": [2.5, 7.5, -2.5],
        "vmap": [[2.5, 7.5, -2.5], [5.0, 15.0, -2.5]],
        "grad_x": [2.5, 0.0, 5.0, 0.0],
        "grad_v": 4.0,
    },
    "set": {"value": [2.5, 2.0, 2.5, 4.0], "vmap": [[2.5, 2.0, 2.5, 4.0], [2.5, 4.0, 2.5, 8.0]]},
    "min": {
        "value": [1.0, 2.0, 2.5, 4.0],
        "vmap": [[1.0, 2.0, 2.5, 4.0], [2.0, 4.0, 2.5, 8.0]],
        "grad_x": [1.0, 2.0, 0.0, 4.0],
        "grad_v": 3.0,
    },
    "max": {
        "value": [2.5, 2.0, 3.0, 4.0],
        "vmap": [[2.5, 2.0, 3.0, 4.0], [2.5, 4.0, 6.0, 8.0]],
        "grad_x": [0.0, 2.0, 3.0, 4.0],
        "grad_v": 1.0,
    },
    "multiply": {
        "value": [2.5, 2.0, 7.5, 4.0],
        "vmap": [[2.5, 2.0, 7.5, 4.0], [5.0, 4.0, 15.0, 8.0]],
        "grad_x": [2.5, 2.0, 7.5, 4.0],
        "grad_v": 10.0,
    },
    "add": {
        "value": [3.5, 2.0, 5.5, 6.5],
        "vmap": [[3.5, 2.0, 5.5, 6.5], [4.5, 4.0, 8.5, 10.5]],
        "grad_x": [1.0, 2.0, 3.0, 4.0],
        "grad_v": 8.0,
    },
}


def _loss(f):
    return lambda x, v: (f(x, v) * jnp.arange(1.0, 1.0 + np.shape(f(x, v))[0])).sum()


def _close(got, want):
    np.testing.assert_allclose(np.asarray(got, np.float64), np.array(want, float), rtol=1e-6)


@pytest.mark.parametrize("method", sorted(JAX))
def test_at_method_eager_jit_vmap(method):
    f, want = FNS[method], JAX[method]
    _close(f(jnp.asarray(X), jnp.asarray(V)), want["value"])
    _close(srcjax.jit(f)(X, V), want["value"])
    _close(srcjax.vmap(f, (0, None))(np.stack([X, 2 * X]), V), want["vmap"])


@pytest.mark.parametrize("method", sorted(m for m in JAX if "grad_x" in JAX[m]))
def test_at_method_grad_and_jit_grad(method):
    loss, want = _loss(FNS[method]), JAX[method]
    for g in (srcjax.grad(loss, argnums=(0, 1)), srcjax.jit(srcjax.grad(loss, argnums=(0, 1)))):
        gx, gv = g(X, V)
        _close(gx, want["grad_x"])
        _close(gv, want["grad_v"])


def test_at_apply_grad_against_finite_differences():
    # (the loss is bilinear in x and v: central differences are exact up to rounding)
    loss = _loss(FNS["apply"])
    gx, gv = srcjax.grad(loss, argnums=(0, 1))(X, V)

    def f(x, v):
        return float(loss(jnp.asarray(x.astype(np.float32)), np.float32(v)))

    x, v, eps = X.astype(np.float64), float(V), 0.25
    fd_x = [(f(x + eps * e, v) - f(x - eps * e, v)) / (2 * eps) for e in np.eye(4)]
    fd_v = (f(x, v + eps) - f(x, v - eps)) / (2 * eps)
    np.testing.assert_allclose(np.asarray(gx), fd_x, rtol=1e-5)
    np.testing.assert_allclose(float(gv), fd_v, rtol=1e-5)
