"""jnp.vectorize (jax.numpy.vectorize) on srcjax.vmap.

Expected values recorded from JAX 0.10.2 (jax.numpy.vectorize with the same
functions and inputs), plus loops over NumPy and float64 finite differences.
"""

from __future__ import annotations

import functools

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

X = (np.arange(6.0, dtype=np.float32).reshape(3, 2) - 2) / 3
W = np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 1, 2)
M = np.linspace(-2, 1.5, 12, dtype=np.float32).reshape(2, 1, 3, 2)

dot = jnp.vectorize(lambda a, b: jnp.sin(a) @ b, signature="(n),(n)->()")
mv = jnp.vectorize(lambda m, v: jnp.tanh(m @ v), signature="(m,n),(n)->(m)")
el = jnp.vectorize(lambda a, b: a * jnp.exp(b))

# recorded from JAX 0.10.2
DOT = np.array(
    [
        [0.85208035, -0.23371053, -1.2194206],
        [0.31175774, -0.0467421, -0.38522577],
        [-0.22856486, 0.1402263, 0.44896895],
        [-0.76888746, 0.32719472, 1.2831637],
    ],
    dtype=np.float32,
)
MV = np.array(
    [
        [
            [0.95571554, 0.8503945, 0.55197144],
            [-0.508427, -0.33503112, -0.13552465],
            [-0.995202, -0.9606714, -0.7133341],
        ],
        [
            [-0.01515036, -0.5726891, -0.85857],
            [0.07561297, 0.2801813, 0.46211717],
            [0.1651404, 0.8417865, 0.979613],
        ],
    ],
    dtype=np.float32,
)
EL = np.array([[-0.3422781, -0.47768754], [0.0, 0.0], [0.3422781, 0.47768754]], dtype=np.float32)
GRAD_DOT = np.array(
    [[-2.4638324, -2.872687], [1.0149714, 1.0600626], [3.717563, 2.595208]], dtype=np.float32
)
GRAD_MV_M = np.array(
    [
        [[[-0.12306603, -0.32556888], [-0.41265568, -0.50338167], [-0.9788776, -1.0452721]]],
        [[[0.23437826, 0.381492], [0.8402072, 0.91928506], [0.353623, 0.4718129]]],
    ],
    dtype=np.float32,
)
GRAD_MV_X = np.array(
    [[-2.4819093, -2.4333572], [3.639672, 3.5692508], [1.0815822, 1.0889024]], dtype=np.float32
)
JAC_EL = np.array([[0.7165313, -0.47768754], [-0.17113905, 0.5134171]], dtype=np.float32)


def test_signature_values_and_broadcasting():
    out = dot(X, W)
    assert out.shape == (4, 3) and out.dtype == np.float32
    np.testing.assert_allclose(out, DOT, rtol=1e-5, atol=1e-6)
    out = mv(M, X)
    assert out.shape == (2, 3, 3)
    np.testing.assert_allclose(out, MV, rtol=1e-5, atol=1e-6)
    # a loop over the broadcast loop dimensions
    ref = np.array([[np.sin(X[j]) @ W[i, 0] for j in range(3)] for i in range(4)])
    np.testing.assert_allclose(out.shape and dot(X, W), ref, rtol=1e-5, atol=1e-6)


def test_elementwise_and_dtypes():
    np.testing.assert_allclose(el(X[:, :1], X[0]), EL, rtol=1e-6, atol=1e-7)
    out = jnp.vectorize(lambda a, b: a * b + 1)(np.arange(3), np.arange(4).reshape(4, 1))
    assert out.dtype == np.int32  # as JAX
    np.testing.assert_array_equal(out, np.arange(3) * np.arange(4).reshape(4, 1) + 1)


def test_outputs_of_any_shape_without_signature():
    f = jnp.vectorize(lambda a: jnp.stack([a, a**2, 1 - a]))
    out = f(X[:2])
    assert out.shape == (2, 2, 3)
    np.testing.assert_allclose(out, np.stack([X[:2], X[:2] ** 2, 1 - X[:2]], -1), rtol=1e-6)


def test_several_outputs():
    two = jnp.vectorize(lambda a: (a.sum(), a * 2), signature="(k)->(),(k)")
    s, d = two(X)
    np.testing.assert_allclose(s, X.sum(1), rtol=1e-6)
    np.testing.assert_allclose(d, 2 * X, rtol=1e-6)


def pw(a, p):
    return jnp.abs(a) ** p


def scaled(a, mode, k=2.0):
    if mode == "double":
        return a * k
    return a - k


def test_excluded_positions_and_names():
    out = jnp.vectorize(pw, excluded={1})(X, 3)
    np.testing.assert_allclose(out, np.abs(X) ** 3, rtol=1e-6)  # JAX: the same
    f = jnp.vectorize(scaled, excluded={"mode"})
    np.testing.assert_allclose(f(X, "double"), X * 2, rtol=1e-6)
    np.testing.assert_allclose(f(X, "other", 0.5), X - 0.5, rtol=1e-6)
    np.testing.assert_allclose(f(X, "double", np.array([1.0, 3.0])), X * [1, 3], rtol=1e-6)


@functools.partial(jnp.vectorize, signature="(k),(k)->(k)")
def cross3(a, b):
    return jnp.array(
        [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]
    )


@jnp.vectorize
def softplus(a):
    return jnp.log1p(jnp.exp(a))


def test_as_decorator():
    a = np.linspace(-1, 1, 12, dtype=np.float32).reshape(1, 4, 3)
    b = np.linspace(2, -1, 6, dtype=np.float32).reshape(2, 1, 3)
    out = cross3(a, b)
    assert out.shape == (2, 4, 3)
    np.testing.assert_allclose(out, np.cross(a, b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(softplus(X), np.log1p(np.exp(X)), rtol=1e-6)
    assert softplus.__name__ == "softplus"


def test_grad_of_vectorized_function():
    g = srcjax.grad(lambda z: jnp.sum(dot(z, W) ** 2))(X)
    np.testing.assert_allclose(g, GRAD_DOT, rtol=1e-5, atol=1e-6)
    gm, gx = srcjax.grad(lambda m, z: jnp.sum(mv(m, z) ** 2), argnums=(0, 1))(M, X)
    np.testing.assert_allclose(gm, GRAD_MV_M, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gx, GRAD_MV_X, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(srcjax.jacfwd(lambda z: el(z, z[::-1]))(X[0]), JAC_EL, rtol=1e-5)


def test_grad_against_finite_differences():
    x64 = X.astype(np.float64)

    def ref(z):
        return np.sum(np.log1p(np.exp(z)) * np.cos(z))

    fd = np.zeros_like(x64)
    for idx in np.ndindex(*x64.shape):
        d = np.zeros_like(x64)
        d[idx] = 1e-6
        fd[idx] = (ref(x64 + d) - ref(x64 - d)) / 2e-6
    g = srcjax.grad(lambda z: jnp.sum(softplus(z) * jnp.cos(z)))(X)
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)


def test_jit_and_vmap_of_vectorized_function():
    np.testing.assert_allclose(srcjax.jit(dot)(X, W), DOT, rtol=1e-5, atol=1e-6)
    # vmap over the leading axis of W: each row broadcasts against X
    out = srcjax.vmap(dot, in_axes=(None, 0))(X, W)
    np.testing.assert_allclose(out, DOT, rtol=1e-5, atol=1e-6)


def test_vectorize_called_inside_transformed_functions():
    c = np.float32(3.0)

    def loss(z, c):
        return jnp.sum(jnp.vectorize(lambda a: jnp.sum(a * c) ** 2, signature="(n)->()")(z))

    g = srcjax.grad(loss)(X, c)
    ref = np.broadcast_to(2 * (X * c).sum(1, keepdims=True) * c, X.shape)
    np.testing.assert_allclose(g, ref, rtol=1e-5)
    inside = srcjax.jit(
        lambda z: jnp.vectorize(lambda a, b: jnp.sin(a) @ b, signature="(n),(n)->()")(z, W)
    )
    np.testing.assert_allclose(inside(X), DOT, rtol=1e-5, atol=1e-6)
    vm = srcjax.vmap(lambda z: jnp.vectorize(pw, excluded={1})(z, 2))(X)
    np.testing.assert_allclose(vm, X**2, rtol=1e-6)
    # a decorated function called in grad of user code
    z0 = np.linspace(-1, 2, 9, dtype=np.float32).reshape(3, 3)
    g = srcjax.grad(lambda z: jnp.sum(cross3(z, z[::-1]) ** 2))(z0)
    z64 = z0.astype(np.float64)
    fd = np.zeros_like(z64)
    for idx in np.ndindex(*z64.shape):
        d = np.zeros_like(z64)
        d[idx] = 1e-6
        hi = np.sum(np.cross(z64 + d, (z64 + d)[::-1]) ** 2)
        lo = np.sum(np.cross(z64 - d, (z64 - d)[::-1]) ** 2)
        fd[idx] = (hi - lo) / 2e-6
    np.testing.assert_allclose(g, fd, rtol=1e-4, atol=1e-4)


def test_errors():
    with pytest.raises(ValueError, match="not a valid gufunc signature"):
        jnp.vectorize(pw, signature="(n)->")
    with pytest.raises(TypeError, match="can only exclude integer or string"):
        jnp.vectorize(pw, excluded={1.5})
    with pytest.raises(ValueError, match="negative"):
        jnp.vectorize(pw, excluded={-1})
    with pytest.raises(ValueError, match="does not have enough dimensions"):
        mv(X[0], X[0])
    with pytest.raises(ValueError, match="inconsistent size for core dimension 'n'"):
        dot(X, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        dot(X, np.ones((2, 2), np.float32))
    bad = jnp.vectorize(lambda a: a, signature="(n)->()")
    with pytest.raises(ValueError, match="output shape"):
        bad(X)
    notuple = jnp.vectorize(lambda a: a, signature="()->(),()")
    with pytest.raises(TypeError, match="must be a tuple"):
        notuple(X)
    with pytest.raises(ValueError, match="inconsistent size"):
        srcjax.jit(dot)(X, np.ones(3, np.float32))


def test_vectorize_bound_to_a_name_inside_transformed_code():
    # (was a clear error; a transform bound to a name is called as one written
    # in place now). Oracle: NumPy.
    def loss(z):
        f = jnp.vectorize(jnp.sin)
        return jnp.sum(f(z))

    def loss2(z):
        f = jnp.vectorize(lambda a, b: a @ b, signature="(n),(n)->()")
        return jnp.sum(f(z, z))

    np.testing.assert_allclose(srcjax.grad(loss)(X), np.cos(X), rtol=1e-6)
    np.testing.assert_allclose(srcjax.jit(loss)(X), np.sum(np.sin(X)), rtol=1e-6)
    np.testing.assert_allclose(srcjax.grad(loss2)(X), 2 * X, rtol=1e-6)
    np.testing.assert_allclose(srcjax.jit(loss2)(X), np.sum(X * X), rtol=1e-6)


def test_parameter_names_that_look_like_generated_ones():
    def f(jnp_v, plan_v, out, vmap):  # noqa: ARG001 (names only)
        return jnp_v * plan_v + out * vmap

    vf = jnp.vectorize(f)
    np.testing.assert_allclose(vf(X, 2.0, X[0], 3.0), X * 2 + X[0] * 3, rtol=1e-6)
    np.testing.assert_allclose(vf(X, plan_v=2.0, out=1.0, vmap=X), X * 2 + X, rtol=1e-6)
    g = srcjax.grad(lambda z: jnp.sum(vf(z, z, 1.0, 2.0)))(X)
    np.testing.assert_allclose(g, 2 * X, rtol=1e-6)


def test_signature_under_vmap_of_vmap():
    """Issue 20: jnp.vectorize with a signature under vmap of vmap (core
    dimensions after two mapped axes), and its gradient and jit. Oracle: NumPy
    broadcasting of the same formulas."""
    f = jnp.vectorize(lambda a, b: jnp.sum(jnp.sin(a) * b), signature="(n),(n)->()")
    g = jnp.vectorize(lambda a: jnp.outer(a, a), signature="(n)->(n,n)")
    rng = np.random.RandomState(0)
    x = rng.normal(size=(2, 3, 4, 5)).astype(np.float32)
    w = rng.normal(size=(5,)).astype(np.float32)
    vv = srcjax.vmap(srcjax.vmap(f, in_axes=(0, None)), in_axes=(0, None))
    want = np.sum(np.sin(x) * w, -1)
    np.testing.assert_allclose(vv(x, w), want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(srcjax.jit(vv)(x, w), want, rtol=1e-5, atol=1e-6)
    outer = srcjax.vmap(srcjax.vmap(g))(x)
    np.testing.assert_allclose(outer, x[..., :, None] * x[..., None, :], rtol=1e-6)
    # the mapped axes elsewhere than in front (in_axes=1 inside, 2 outside)
    xt = np.moveaxis(x, (0, 1), (2, 1))  # (4, 3, 2, 5): outer axis 2, inner axis 1
    inner = srcjax.vmap(f, in_axes=(1, None))
    np.testing.assert_allclose(
        srcjax.vmap(inner, in_axes=(2, None))(xt, w), want, rtol=1e-5, atol=1e-6
    )
    grad = srcjax.grad(lambda a, b: jnp.sum(f(a, b)))
    gg = srcjax.vmap(srcjax.vmap(grad, in_axes=(0, None)), in_axes=(0, None))(x, w)
    np.testing.assert_allclose(gg, np.cos(x) * w, rtol=1e-5, atol=1e-6)
