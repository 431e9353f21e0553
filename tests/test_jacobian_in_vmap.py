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


def test_grad_through_hessian_argnums_tuple():
    got = srcjax.grad(_loss(hess_argnums01))(jnp.asarray(P32))
    want = [
        [0.035108599811792374, 6.400000095367432],
        [0.7713316082954407, -12.800000190734863],
        [2.28110671043396, 19.200000762939453],
    ]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)  # recorded from JAX


# -- per-example input Jacobians (user K r10): vmap(jacfwd/jacrev(f)) is one batched
# computation (the one-hot bases and the Jacobian assembly have batching rules)
_rng = np.random.default_rng(0)
W1 = (_rng.standard_normal((3, 5)) / 2).astype(np.float32)
W2 = (_rng.standard_normal((5, 2)) / 2).astype(np.float32)
X = _rng.standard_normal((4, 3)).astype(np.float32)


def mlp(x):
    return jnp.tanh(x @ W1) @ W2


def mlp_w(w, x):
    return jnp.tanh(x @ w) @ W2


def pair(x):
    return (jnp.sin(x) * x[0], jnp.sum(x**2))


def _mlp_jac(x):
    """NumPy oracle: d mlp / dx per example, (B, 2, 3)."""
    s = 1 - np.tanh(x.astype(np.float64) @ W1) ** 2
    return np.einsum("ij,bj,jk->bki", W1, s, W2)


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_per_example_input_jacobians(mode):
    jac = getattr(srcjax, mode)
    np.testing.assert_allclose(srcjax.vmap(jac(mlp))(X), _mlp_jac(X), rtol=1e-5, atol=1e-6)
    got = srcjax.jit(srcjax.vmap(jac(mlp)))(X)
    np.testing.assert_allclose(got, _mlp_jac(X), rtol=1e-5, atol=1e-6)
    # an unbatched argument differentiated, the batched one not (NumPy oracle)
    s = 1 - np.tanh(X.astype(np.float64) @ W1) ** 2
    want = np.einsum("bi,bj,jk->bkij", X, s, W2)
    got = srcjax.vmap(jac(mlp_w), in_axes=(None, 0))(W1, X)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_nested_vmap_of_jacfwd_and_tuple_output():
    got = srcjax.vmap(srcjax.vmap(srcjax.jacfwd(mlp)))(X.reshape(2, 2, 3))
    np.testing.assert_allclose(got, _mlp_jac(X).reshape(2, 2, 2, 3), rtol=1e-5, atol=1e-6)
    j0, j1 = srcjax.vmap(srcjax.jacfwd(pair))(X)
    x = X.astype(np.float64)
    want0 = np.einsum("bi,ij->bij", np.cos(x) * x[:, :1], np.eye(3))
    want0[:, :, 0] += np.sin(x)
    np.testing.assert_allclose(j0, want0, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(j1, 2 * x, rtol=1e-6)


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_grad_of_per_example_jacobians(mode):
    jac = getattr(srcjax, mode)

    def loss(xs):
        return jnp.sum(srcjax.vmap(jac(mlp))(xs) ** 2)

    want = [  # recorded from JAX 0.10.2
        [-0.07677386701107025, -0.007448683958500624, 0.3683076500892639],
        [0.021046649664640427, 0.05236702039837837, 0.18306271731853485],
        [0.0541527234017849, 0.056050918996334076, -0.3746747374534607],
        [-0.01947510801255703, -0.03546600788831711, 0.20387738943099976],
    ]
    np.testing.assert_allclose(srcjax.jit(srcjax.grad(loss))(X), want, rtol=2e-5, atol=1e-6)


def test_per_example_jacobian_assembly_is_not_a_loop():
    # the bases and the Jacobian assembly are single batched calls: no
    # `for row in range(batch)` for them in the generated code
    text = srcjax.source(srcjax.jit(srcjax.vmap(srcjax.jacfwd(mlp))), X)
    assert "ad.basis_stack(x, lead=1)" in text
    assert "ad.jac_from_columns(" in text and "lead=1" in text
    for line in text.splitlines():
        if "basis_stack" in line or "jac_from_" in line:
            assert line.startswith("    ") and not line.startswith("        "), line
    text = srcjax.source(srcjax.jit(srcjax.vmap(srcjax.jacrev(mlp))), X)
    assert "ad.cobasis_stack(" in text and "ad.jac_from_rows(" in text
    for line in text.splitlines():
        if "cobasis_stack" in line or "jac_from_" in line:
            assert not line.startswith("        "), line


def ident(x):
    return x


@pytest.mark.parametrize("mode", ["jacfwd", "jacrev"])
def test_per_example_jacobian_of_identity_is_a_writeable_array(mode):
    # the batched one-hot basis is a read-only broadcast; the Jacobian built from
    # it is an ordinary array, as before (NumPy oracle: eye per example)
    got = srcjax.vmap(getattr(srcjax, mode)(ident))(X)
    np.testing.assert_array_equal(got, np.broadcast_to(np.eye(3, dtype=np.float32), (4, 3, 3)))
    assert isinstance(got, srcjax.Array)  # (immutable; its buffer is an ordinary array)
    assert np.asarray(got).base is None or np.asarray(got).base.flags.writeable
