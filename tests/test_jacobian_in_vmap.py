"""Jacobians and Hessians called inside a vmapped function (the PINN Laplacian
pattern ``vmap(lambda x: jnp.trace(hessian(u)(x)))``), with batch sizes that
differ from the input dimension (user K bug 1), and gradients through Jacobians
of pytrees, whose cotangents arrive sparse (holes, dicts with some keys).

Expected values were recorded from JAX 0.10.2 (CPU, float32) by running the same
programs with ``jax``/``jax.numpy``.
"""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp


def u(x):
    return jnp.sum(jnp.sin(x) ** 3) + x[0] * x[-1] ** 2


def u2(x, y):
    return jnp.sum(jnp.sin(x) ** 3 * y[0]) + x[0] * y[-1] ** 2


def ud(p):
    return jnp.sum(jnp.sin(p["a"]) ** 3) * p["b"]


def lap_hessian(x):
    return jnp.trace(srcjax.hessian(u)(x))


def lap_jacfwd_grad(x):
    return jnp.trace(srcjax.jacfwd(srcjax.grad(u))(x))


def lap_jacrev_grad(x):
    return jnp.trace(srcjax.jacrev(srcjax.grad(u))(x))


def hess_argnums01(x):
    return srcjax.hessian(u2, argnums=(0, 1))(x, x * 2)[0][1][0]


def jacrev_tuple(x):
    return srcjax.jacrev(srcjax.grad(u2), argnums=(0, 1))(x, x + 1)[1][-1]


def hess_dict(x):
    return srcjax.hessian(ud)({"a": x, "b": x[0]})["a"]["b"]


P32 = np.array([[0.1, 0.2], [0.3, -0.4], [0.5, 0.6]], np.float32)  # batch 3 > dim 2
P24 = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, -0.4, 0.7, 0.2]], np.float32)  # batch 2 < dim 4

# recorded from JAX 0.10.2: vmap(f)(P)
LAP32 = [1.9114890098571777, 0.3358215093612671, 4.652470111846924]
LAP24 = [5.257358551025391, 3.6602721214294434]


@pytest.mark.parametrize(
    "f,pts,want",
    [
        (lap_hessian, P32, LAP32),
        (lap_hessian, P24, LAP24),
        (lap_jacfwd_grad, P32, LAP32),
        (lap_jacfwd_grad, P24, LAP24),
        (lap_jacrev_grad, P24, LAP24),
    ],
)
def test_laplacian_in_vmap(f, pts, want):
    got = srcjax.vmap(f)(jnp.asarray(pts))
    assert got.shape == (len(pts),) and got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_laplacian_in_vmap_jit():
    got = srcjax.jit(srcjax.vmap(lap_hessian))(jnp.asarray(P24))
    np.testing.assert_allclose(got, LAP24, rtol=1e-5)


def test_grad_of_vmapped_laplacian():
    def loss(q):
        return jnp.sum(srcjax.vmap(lap_hessian)(q) ** 2)

    got = srcjax.grad(loss)(jnp.asarray(P24))
    # recorded from JAX 0.10.2
    want = [
        [80.98717498779297, 50.84881591796875, 36.58454132080078, 18.454580307006836],
        [13.318183898925781, 12.848424911499023, -29.145591735839844, 35.40189743041992],
    ]
    np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)


def _loss(f):
    def loss(q):
        return jnp.sum(srcjax.vmap(f)(q) ** 2)

    return loss


def test_grad_through_jacobian_of_tuple_argnums():
    # the cotangent of the (rows of) jacrev's tuple output was a sparse list:
    # IndexError in ad.jac_rows_t before
    got = srcjax.grad(_loss(jacrev_tuple))(jnp.asarray(P24))
    want = [[0.0, 0.0, 0.0, 1.5127089023590088], [0.0, 0.0, 0.0, 0.26028308272361755]]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # recorded from JAX


def test_grad_through_hessian_of_dict():
    # the cotangent held only the "a" entry of the outer dict: pytree structure
    # mismatch before
    got = srcjax.grad(_loss(hess_dict))(jnp.asarray(P32))
    want = [
        [0.035108599811792374, 0.26028308272361755],
        [0.7713316082954407, -1.5127089023590088],
        [2.28110671043396, 2.7908177375793457],
    ]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)  # recorded from JAX


def test_jit_grad_through_hessian_argnums_tuple():
    got = srcjax.jit(srcjax.grad(_loss(hess_argnums01)))(jnp.asarray(P32))
    want = [
        [0.035108599811792374, 6.400000095367432],
        [0.7713316082954407, -12.800000190734863],
        [2.28110671043396, 19.200000762939453],
    ]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)  # recorded from JAX
