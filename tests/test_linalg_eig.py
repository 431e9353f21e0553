"""jnp.linalg.eig / eigvals / matrix_rank: values, dtypes, errors, derivatives,
vmap and jit (expected values recorded from JAX 0.10.2 on CPU where noted)."""

from __future__ import annotations

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax.config import config
from srcjax.errors import NoDerivativeRuleError

A = np.array([[1.0, 2.0, 0.5], [-3.0, 1.0, 2.0], [0.3, 0.1, -1.0]], np.float32)
AC = np.array([[1 + 1j, 2, 0.5j], [-3, 1 - 2j, 2], [0.3j, 0.1, -1.0]], np.complex64)


@pytest.fixture
def x64():
    old = config.jax_enable_x64
    config.update("jax_enable_x64", True)
    yield
    config.update("jax_enable_x64", old)


def _sorted(w):
    w = np.asarray(w)
    return w[np.lexsort((w.imag, w.real))]


# -- values and dtypes ---------------------------------------------------------------
def test_eig_matches_jax():
    w, v = jnp.linalg.eig(A)
    # recorded from JAX 0.10.2: jnp.linalg.eig(A)
    w_jax = np.array([0.9815865 + 2.361645j, 0.9815865 - 2.361645j, -0.96317357 + 0.0j])
    v_jax = np.array(
        [
            [-0.017229099 - 0.640591j, -0.017229099 + 0.640591j, 0.25915265 + 0.0j],
            [0.764804 + 0.0j, 0.764804 - 0.0j, -0.4658911 + 0.0j],
            [-0.032885365 - 0.05778889j, -0.032885365 + 0.05778889j, 0.8460411 + 0.0j],
        ]
    )
    assert w.dtype == np.complex64 and v.dtype == np.complex64
    np.testing.assert_allclose(w, w_jax, rtol=2e-6, atol=2e-6)
    np.testing.assert_allclose(v, v_jax, rtol=2e-6, atol=2e-6)
    r = jnp.linalg.eig(A)
    assert type(r).__name__ == "EigResult" and r.eigenvalues is not None
    np.testing.assert_allclose(jnp.linalg.eigvals(A), w_jax, rtol=2e-6, atol=2e-6)


def test_eig_batched_and_dtypes():
    rng = np.random.default_rng(0)
    a = rng.normal(size=(2, 3, 4, 4))
    w, v = jnp.linalg.eig(a)  # float64 input without x64: float32 -> complex64
    assert w.shape == (2, 3, 4) and v.shape == (2, 3, 4, 4) and w.dtype == np.complex64
    a32 = a.astype(np.float32)
    # the eigen equation A v = v diag(w), and the values against NumPy in float64
    resid = a32.astype(np.complex128) @ v - v * w[..., None, :]
    assert np.abs(resid).max() < 1e-5
    np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1.0, rtol=1e-5)
    for idx in np.ndindex(2, 3):
        want = np.linalg.eigvals(a32[idx].astype(np.float64))
        np.testing.assert_allclose(_sorted(w[idx]), _sorted(want), rtol=1e-5, atol=1e-5)
    assert jnp.linalg.eigvals(np.eye(3, dtype=np.int32)).dtype == np.complex64
    assert jnp.linalg.eig(AC)[1].dtype == np.complex64
    w0, v0 = jnp.linalg.eig(np.zeros((0, 0), np.float32))
    assert w0.shape == (0,) and v0.shape == (0, 0) and w0.dtype == np.complex64


def test_eig_x64(x64):
    rng = np.random.default_rng(1)
    a = rng.normal(size=(5, 5))
    w, v = jnp.linalg.eig(a)
    assert w.dtype == np.complex128 and v.dtype == np.complex128
    np.testing.assert_allclose(a @ v, v * w, atol=1e-12)
    np.testing.assert_allclose(_sorted(w), _sorted(np.linalg.eigvals(a)), rtol=1e-12)
    assert jnp.linalg.eigvals(np.eye(2, dtype=np.int64)).dtype == np.complex128


def test_eig_nonfinite_matrix_gives_nans():
    b = A.copy()
    b[0, 0] = np.nan
    c = A.copy()
    c[1, 2] = np.inf
    w, v = jnp.linalg.eig(np.stack([A, b, c]))
    # JAX: the failed matrices are NaN (real and imaginary parts), the others exact
    np.testing.assert_allclose(w[0], jnp.linalg.eigvals(A))
    assert np.isnan(w[1:].real).all() and np.isnan(w[1:].imag).all()
    assert np.isnan(v[1:].real).all() and np.isnan(v[1:].imag).all()


def test_eig_errors():
    with pytest.raises(TypeError, match="rank at least 2"):
        jnp.linalg.eig(np.ones(3, np.float32))
    with pytest.raises(ValueError, match="square"):
        jnp.linalg.eigvals(np.ones((2, 3), np.float32))
    with pytest.raises(NotImplementedError, match="float16"):
        jnp.linalg.eig(np.eye(2, dtype=np.float16))


# -- derivatives -----------------------------------------------------------------------
def _eigvals_loss(a):
    w = jnp.linalg.eigvals(a)
    return jnp.sum(jnp.real(w) * jnp.arange(3.0) + jnp.imag(w) ** 2)


def test_grad_eigvals_matches_jax():
    # recorded from JAX 0.10.2: jax.grad(_eigvals_loss)(A)
    want = np.array(
        [
            [0.532695, 5.875024, -0.37304556],
            [-4.031571, 0.5199246, -0.30306232],
            [-1.7706196, -2.6146271, 1.9473805],
        ]
    )
    got = srcjax.grad(_eigvals_loss)(A)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_grad_eigvals_finite_differences(x64):
    rng = np.random.default_rng(2)
    a = rng.normal(size=(3, 3))
    got = srcjax.grad(_eigvals_loss)(a)
    eps = 1e-6
    want = np.zeros_like(a)
    for idx in np.ndindex(3, 3):
        e = np.zeros_like(a)
        e[idx] = eps
        want[idx] = (_eigvals_loss(a + e) - _eigvals_loss(a - e)) / (2 * eps)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    # forward mode: the directional derivative of the complex eigenvalues
    t = rng.normal(size=(3, 3))
    _, dw = srcjax.jvp(jnp.linalg.eigvals, (a,), (t,))
    w_p = jnp.linalg.eigvals(a + eps * t)
    w_m = jnp.linalg.eigvals(a - eps * t)
    # (the order of the eigenvalues is stable under so small a perturbation)
    np.testing.assert_allclose(dw, (w_p - w_m) / (2 * eps), rtol=1e-6, atol=1e-7)


def _complex_loss(a):
    return jnp.sum(jnp.abs(jnp.linalg.eigvals(a)) ** 2 * jnp.arange(1.0, 4.0))


def test_grad_eigvals_complex_input_matches_jax():
    # recorded from JAX 0.10.2: jax.grad(_complex_loss)(AC)
    want = np.array(
        [
            [3.9551313 - 5.410337j, 8.430081 + 0.56910056j, 1.1903195 - 0.012776047j],
            [-5.578984 - 0.9363585j, 2.2102354 + 2.9330382j, 0.013996372 - 0.6443097j],
            [-3.5856988 - 0.43202934j, -0.9522806 + 3.8225093j, -6.1808205 - 0.38227594j],
        ]
    )
    got = srcjax.grad(_complex_loss)(AC)
    assert got.dtype == np.complex64
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_jvp_eigvals_matches_jax():
    _, dw = srcjax.jvp(jnp.linalg.eigvals, (A,), (np.ones_like(A),))
    # recorded from JAX 0.10.2
    want = np.array([1.1218035 - 0.3019602j, 1.1218035 + 0.3019602j, 0.75639296 + 0.0j])
    assert dw.dtype == np.complex64
    np.testing.assert_allclose(dw, want, rtol=1e-5, atol=1e-6)


def _eig_value_loss(a):
    return jnp.real(jnp.linalg.eig(a)[0]).sum()


def _eigvals_sum(a):
    return jnp.real(jnp.linalg.eigvals(a)).sum()


def test_eig_derivative_refused_as_in_jax():
    # JAX: NotImplementedError (eigenvector derivatives), also for eig's eigenvalues
    with pytest.raises(NoDerivativeRuleError, match="jnp.linalg.eigvals") as e:
        srcjax.grad(_eig_value_loss)(A)
    assert isinstance(e.value, NotImplementedError)
    with pytest.raises(NotImplementedError):
        srcjax.jvp(_eig_value_loss, (A,), (A,))
    # a second derivative of eigvals needs eig's: refused too (JAX: the same error)
    with pytest.raises(NotImplementedError):
        srcjax.hessian(_eigvals_sum)(A)


# -- vmap / jit ------------------------------------------------------------------------
def _residual(a):
    w, v = jnp.linalg.eig(a)
    return jnp.abs(a.astype(w.dtype) @ v - v * w[None, :]).max()


def test_vmap_and_jit():
    rng = np.random.default_rng(3)
    batch = rng.normal(size=(4, 3, 3)).astype(np.float32)
    w_v = srcjax.vmap(jnp.linalg.eigvals)(batch)
    np.testing.assert_array_equal(w_v, np.stack([jnp.linalg.eigvals(b) for b in batch]))
    e_v = srcjax.vmap(jnp.linalg.eig)(batch)
    for i, b in enumerate(batch):
        np.testing.assert_array_equal(e_v[1][i], jnp.linalg.eig(b)[1])
    assert (srcjax.vmap(_residual)(batch) < 1e-5).all()
    np.testing.assert_array_equal(srcjax.jit(jnp.linalg.eig)(A)[0], jnp.linalg.eig(A)[0])
    assert srcjax.jit(_residual)(A) < 1e-5
    g_v = srcjax.vmap(srcjax.grad(_eigvals_loss))(batch)
    want = np.stack([srcjax.grad(_eigvals_loss)(b) for b in batch])
    np.testing.assert_allclose(g_v, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(
        srcjax.jit(srcjax.grad(_eigvals_loss))(A), srcjax.grad(_eigvals_loss)(A), rtol=1e-6
    )


# -- matrix_rank -----------------------------------------------------------------------
M = np.array([[100.0, 0.0], [0.0, 0.1]], np.float32)


def _rank_batch():
    b = np.random.default_rng(0).normal(size=(4, 3, 5)).astype(np.float32)
    b[1, 2] = b[1, 0] + b[1, 1]
    b[2] = 0
    return b


def test_matrix_rank_matches_jax():
    # recorded from JAX 0.10.2: a given rtol is an absolute threshold there
    assert jnp.linalg.matrix_rank(M, rtol=0.01) == 2
    assert jnp.linalg.matrix_rank(M, tol=0.5) == 1
    assert jnp.linalg.matrix_rank(M, 0.05) == 2
    assert jnp.linalg.matrix_rank(M, hermitian=True) == 2
    assert jnp.linalg.matrix_rank(np.array([[1, 2], [2, 4]])) == 1
    assert jnp.linalg.matrix_rank(np.array([0, 0, 1])) == 1
    assert jnp.linalg.matrix_rank(np.zeros(3)) == 0
    assert jnp.linalg.matrix_rank(np.float32(2.0)) == 1
    np.testing.assert_array_equal(jnp.linalg.matrix_rank(M, rtol=np.array([1.0, 2.0])), [1, 1])
    b = _rank_batch()
    r = jnp.linalg.matrix_rank(b)
    assert r.dtype == np.int32
    np.testing.assert_array_equal(r, [3, 2, 0, 3])
    np.testing.assert_array_equal(
        jnp.linalg.matrix_rank(b, rtol=np.array([0.1, 1, 2, 3.0])), [3, 2, 0, 1]
    )
    # against NumPy's default tolerance (the same formula)
    np.testing.assert_array_equal(r, np.linalg.matrix_rank(b))
    with pytest.raises(ValueError, match="only one of tol or rtol"):
        jnp.linalg.matrix_rank(M, rtol=1.0, tol=1.0)


def _rank_tol1(b):
    return jnp.linalg.matrix_rank(b, tol=1.0)


def _rank_r(b, r):
    return jnp.linalg.matrix_rank(b, r)


def test_matrix_rank_vmap_jit():
    b = _rank_batch()
    np.testing.assert_array_equal(srcjax.vmap(jnp.linalg.matrix_rank)(b), [3, 2, 0, 3])
    np.testing.assert_array_equal(srcjax.jit(jnp.linalg.matrix_rank)(b), [3, 2, 0, 3])
    # recorded from JAX 0.10.2
    np.testing.assert_array_equal(srcjax.jit(_rank_tol1)(b), [2, 2, 0, 3])
    rt = np.array([0.1, 1, 2, 3.0], np.float32)
    np.testing.assert_array_equal(srcjax.vmap(_rank_r)(b, rt), [3, 2, 0, 1])
    got = srcjax.vmap(_rank_r, in_axes=(None, 0))(b[0], rt)
    np.testing.assert_array_equal(got, [3, 2, 2, 0])  # JAX 0.10.2


# -- the array API's linalg names --------------------------------------------------------
def test_array_api_names_against_numpy():
    rng = np.random.default_rng(4)
    x = rng.normal(size=(2, 3, 4)).astype(np.float32)
    np.testing.assert_allclose(
        jnp.linalg.svdvals(x), np.linalg.svd(x.astype(np.float64), compute_uv=False), rtol=1e-5
    )
    np.testing.assert_array_equal(jnp.linalg.diagonal(x, offset=1), np.diagonal(x, 1, -2, -1))
    np.testing.assert_allclose(jnp.linalg.trace(x, offset=-1), np.trace(x, -1, -2, -1), rtol=1e-6)
    o = jnp.linalg.outer(np.arange(3), np.ones(2, np.float32))
    assert o.dtype == np.float32  # JAX 0.10.2: int32 x float32 -> float32
    np.testing.assert_array_equal(o, np.outer(np.arange(3), np.ones(2)))
    u, v = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    np.testing.assert_allclose(jnp.linalg.cross(u, v), np.cross(u, v), rtol=1e-6)
    assert jnp.linalg.vecdot(np.array([1 + 1j, 2]), np.array([1j, 3])) == 7 + 1j  # JAX: (7+1j)
    np.testing.assert_allclose(
        jnp.linalg.tensordot(x, x, axes=((1, 2), (1, 2))),
        np.tensordot(x, x, ((1, 2), (1, 2))),
        rtol=1e-5,
    )
    t = rng.normal(size=(4, 6, 8, 3))
    np.testing.assert_allclose(
        jnp.linalg.tensorinv(t, ind=2), np.linalg.tensorinv(t.astype(np.float32), 2), rtol=1e-3
    )
    a = rng.normal(size=(2, 3, 6))
    b = rng.normal(size=(2, 3))
    got = jnp.linalg.tensorsolve(a, b)
    assert got.shape == (6,)
    np.testing.assert_allclose(np.tensordot(a, got, 1), b, rtol=1e-3, atol=1e-4)


def test_array_api_errors_and_jax_axes_order():
    with pytest.raises(ValueError, match="one-dimensional"):
        jnp.linalg.outer(np.ones((2, 2)), np.ones(2))
    with pytest.raises(ValueError, match="3-dimensional vectors"):
        jnp.linalg.cross(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="positive integer"):
        jnp.linalg.tensorinv(np.ones((2, 2)), ind=0)
    with pytest.raises(ValueError, match="tensorinv is only possible"):
        jnp.linalg.tensorinv(np.ones((4, 6, 8, 3)), ind=1)
    rng = np.random.default_rng(5)
    a = rng.normal(size=(2, 3, 3, 2)).astype(np.float32)
    b = rng.normal(size=(3, 2)).astype(np.float32)
    # JAX moves `axes` to the end in ascending order (NumPy: in the given order);
    # recorded from JAX 0.10.2
    want = [
        [3.108172655105591, 2.217161178588867, 0.6867710947990417],
        [-1.940964937210083, 0.17612849175930023, -1.2027206420898438],
    ]
    np.testing.assert_allclose(jnp.linalg.tensorsolve(a, b, axes=(2, 0)), want, rtol=1e-5)


def _tensor_loss(t):
    return jnp.sum(jnp.linalg.tensorinv(t, ind=1) ** 2) + jnp.sum(jnp.linalg.svdvals(t))


def test_array_api_names_transform(x64):
    rng = np.random.default_rng(6)
    t = rng.normal(size=(3, 3)) + 3 * np.eye(3)
    g = srcjax.grad(_tensor_loss)(t)
    eps = 1e-6
    want = np.zeros_like(t)
    for idx in np.ndindex(3, 3):
        e = np.zeros_like(t)
        e[idx] = eps
        want[idx] = (_tensor_loss(t + e) - _tensor_loss(t - e)) / (2 * eps)
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)
    batch = rng.normal(size=(4, 3, 3)) + 3 * np.eye(3)
    np.testing.assert_allclose(
        srcjax.vmap(_tensor_loss)(batch), [_tensor_loss(m) for m in batch], rtol=1e-12
    )
    np.testing.assert_allclose(srcjax.jit(_tensor_loss)(t), _tensor_loss(t), rtol=1e-12)
    np.testing.assert_allclose(
        srcjax.vmap(jnp.linalg.trace)(batch), np.trace(batch, 0, -2, -1), rtol=1e-12
    )
