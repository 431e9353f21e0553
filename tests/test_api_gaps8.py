"""API gaps (helper V): functions with ``*args`` handed straight to a transform,
defaultdict pytrees through grad/vjp/jit/vmap, ``jax.vjp`` inside a custom_vjp
bwd under jit(grad)/vmap(grad), integer ``//``/``%`` by zero under grad/jvp.

Expected values were recorded from jax 0.10.2 (CPU, /tmp/jv/bin/python) unless a
test says otherwise (finite differences, a Python loop)."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import tree_util

X = np.array([[0.5, -1.25, 2.0], [3.0, 0.25, -0.75]], np.float32)
A = np.array([1.0, 2.5, 4.0, 7.5], np.float32)
B = np.array([[1.0], [2.0]], np.float32)


def _close(got, want, rtol=1e-6, atol=1e-6):
    gl, gd = tree_util.tree_flatten(got)
    wl, wd = tree_util.tree_flatten(want)
    assert gd == wd, (gd, wd)
    for g, w in zip(gl, wl):
        w = np.asarray(w)
        assert np.shape(g) == w.shape, (np.shape(g), w.shape)
        assert np.asarray(g).dtype == w.dtype, (np.asarray(g).dtype, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)


F32 = np.float32


# ---------------------------------------------------------------------------
# 1. functions with *args passed directly to a transform


def test_vmap_atleast_nd_directly():
    # jax.vmap(jnp.atleast_2d)(X) etc. (JAX values)
    _close(srcjax.vmap(jnp.atleast_2d)(X), X.reshape(2, 1, 3))
    _close(srcjax.vmap(jnp.atleast_1d)(A), A.reshape(4, 1))
    _close(srcjax.vmap(jnp.atleast_3d)(X), X.reshape(2, 1, 3, 1))
    # two arguments: a list, as JAX
    _close(srcjax.vmap(jnp.atleast_1d)(A, A), [A.reshape(4, 1), A.reshape(4, 1)])
    _close(srcjax.vmap(srcjax.vmap(jnp.atleast_3d))(X), X.reshape(2, 3, 1, 1, 1))


def test_vmap_broadcast_arrays_meshgrid_ix_directly():
    got = srcjax.vmap(jnp.broadcast_arrays)(X, A[:2])
    # JAX: [X, [[1, 1, 1], [2.5, 2.5, 2.5]]]
    _close(got, [X, np.array([[1.0] * 3, [2.5] * 3], F32)])
    got = srcjax.vmap(jnp.meshgrid)(X, X[:, :2])  # a primitive with *xi
    want0 = np.array(
        [[[0.5, -1.25, 2.0], [0.5, -1.25, 2.0]], [[3.0, 0.25, -0.75], [3.0, 0.25, -0.75]]], F32
    )
    want1 = np.array(
        [[[0.5, 0.5, 0.5], [-1.25, -1.25, -1.25]], [[3.0, 3.0, 3.0], [0.25, 0.25, 0.25]]], F32
    )
    _close(got, [want0, want1])
    got = srcjax.vmap(jnp.ix_)(X, X)
    assert isinstance(got, tuple)
    _close(got, (X.reshape(2, 3, 1), X.reshape(2, 1, 3)))
    # einsum: subscripts unmapped, operands mapped (JAX: [5.8125, 9.625])
    got = srcjax.vmap(jnp.einsum, in_axes=(None, 0, 0))("i,i->", X, X)
    _close(got, np.array([5.8125, 9.625], F32))


_GRADIENT_JAC = np.array(
    [[-1.0, 1.0, 0.0, 0.0], [-0.5, 0.0, 0.5, 0.0], [0.0, -0.5, 0.0, 0.5], [0.0, 0.0, -1.0, 1.0]],
    F32,
)


def test_differentiate_gradient_directly():
    # jnp.gradient(f, *varargs, axis=None, edge_order=None): keyword-only too
    _close(srcjax.jacfwd(jnp.gradient)(A), _GRADIENT_JAC)
    _close(srcjax.jacrev(jnp.gradient)(A), _GRADIENT_JAC)
    y, pull = srcjax.vjp(jnp.gradient, A)
    _close(y, np.array([1.5, 1.5, 2.5, 3.5], F32))
    _close(pull(A), (np.array([-2.25, -1.0, -6.25, 9.5], F32),))
    got = srcjax.vmap(jnp.gradient)(X)
    _close(got, np.array([[-1.75, 0.75, 3.25], [-2.75, -1.875, -1.0]], F32))


def test_jvp_linearize_atleast_2d_directly():
    y, t = srcjax.jvp(jnp.atleast_2d, (A,), (2 * A,))
    _close((y, t), (A.reshape(1, 4), 2 * A.reshape(1, 4)))
    _, lin = srcjax.linearize(jnp.atleast_2d, A)
    _close(lin(A), A.reshape(1, 4))


def test_jacrev_broadcast_arrays_directly():
    got = srcjax.jacrev(jnp.broadcast_arrays, argnums=(0, 1))(A[:3], B)
    eye = np.eye(3, dtype=F32)
    db = np.zeros((2, 3, 2, 1), F32)
    db[0, :, 0, 0] = 1.0
    db[1, :, 1, 0] = 1.0
    want = [
        (np.stack([eye, eye]), np.zeros((2, 3, 2, 1), F32)),
        (np.zeros((2, 3, 3), F32), db),
    ]
    _close(got, want)


def test_user_varargs_functions():
    # a user's lambda *xs: JAX values; keyword-only parameters after *xs kept
    f = lambda *xs: jnp.sum(xs[0] * xs[1])  # noqa: E731
    _close(srcjax.grad(f, argnums=(0, 1))(A, 2 * A), (2 * A, A))
    g = lambda *xs, k=2.0: jnp.sum(xs[0] * k * xs[1])  # noqa: E731
    _close(srcjax.grad(g)(A, A, k=3.0), 3 * A)
    _close(srcjax.grad(g)(A, A), 2 * A)
    h = lambda x, y=2.0, *xs: jnp.sum(x * y)  # noqa: E731
    _close(srcjax.grad(h)(A), np.full(4, 2.0, F32))
    _close(srcjax.grad(h)(A, 3.0, 1.0), np.full(4, 3.0, F32))
    _close(srcjax.jacfwd(h)(A), np.full(4, 2.0, F32))
    _close(srcjax.vmap(srcjax.grad(lambda *xs: xs[0] * xs[1] ** 2))(A, 2 * A), 4 * A * A)
    hess = srcjax.hessian(lambda *xs: jnp.sum(xs[0] ** 3 * xs[1]))(A[:2], A[2:])
    _close(hess, np.array([[24.0, 0.0], [0.0, 112.5]], F32))
    # jit(lambda *xs) seen through by grad / vmap / jacfwd (jit passes its function on)
    k = srcjax.jit(lambda *xs: xs[0] * xs[1])
    _close(srcjax.vmap(k)(A, A), A * A)
    _close(srcjax.jacfwd(k)(A, A), np.diag(A))
    _close(srcjax.grad(srcjax.jit(lambda *xs: jnp.sum(xs[0] * xs[1])))(A, A), A)


# jit's own root needs srcjax/jit_api.py to call api.fixed_arity (handed to the
# lead: see the report); strict, so this fails once it works and the mark must go
_JIT_PENDING = pytest.mark.xfail(
    strict=True, reason="jit_api._build does not call api.fixed_arity yet"
)


@_JIT_PENDING
def test_jit_varargs_directly():
    _close(srcjax.jit(jnp.gradient)(A), np.array([1.5, 1.5, 2.5, 3.5], F32))
    got = srcjax.jit(jnp.gradient, static_argnames="axis")(X, axis=1)
    _close(got, np.array([[-1.75, 0.75, 3.25], [-2.75, -1.875, -1.0]], F32))
    _close(srcjax.jit(jnp.atleast_2d)(A, 3.0), [A.reshape(1, 4), np.array([[3.0]], F32)])
    got = srcjax.jit(jnp.einsum, static_argnums=0)("ij,ij->i", X, X)
    _close(got, np.array([5.8125, 9.625], F32))
    _close(srcjax.jit(lambda *xs: xs[0] * xs[1])(A, A), A * A)
