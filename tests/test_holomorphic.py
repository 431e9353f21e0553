"""grad(holomorphic=True) (the autodiff cookbook; user X): the complex derivative
f'(z) of a complex function of complex inputs. Values recorded from jax 0.10.2."""

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp

Z = np.complex64(3 + 1j)


def f(z):
    return z**2 + jnp.sin(z)


def close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6)


def test_holomorphic_grad_matches_jax():
    g = srcjax.grad(f, holomorphic=True)
    close(g(Z), 4.4723616 + 1.8341556j)  # 2z + cos(z)
    assert np.asarray(g(Z)).dtype == np.complex64
    v, d = srcjax.value_and_grad(f, holomorphic=True)(Z)
    close(v, 8.217759 + 4.83656j)
    close(d, 4.4723616 + 1.8341556j)
    close(srcjax.grad(g, holomorphic=True)(Z), 1.7822405 + 1.1634403j)  # 2 - sin(z)
    close(srcjax.jit(g)(Z), 4.4723616 + 1.8341556j)
    zs = np.array([1 + 2j, 0.5 - 1j], np.complex64)
    close(srcjax.vmap(g)(zs), [4.032723 + 0.94810224j, 2.3541806 - 1.4365785j])
    close(srcjax.grad(lambda z, w: z * w, argnums=1, holomorphic=True)(Z, np.complex64(2j)), Z)


def test_holomorphic_grad_errors_as_jax():
    with pytest.raises(TypeError, match="requires inputs with complex dtype"):
        srcjax.grad(f, holomorphic=True)(np.float32(1.0))
    with pytest.raises(TypeError, match="requires outputs with complex dtype"):
        srcjax.grad(lambda z: jnp.abs(z), holomorphic=True)(Z)


def test_gradient_of_a_real_function_of_complex_input_keeps_its_dtype():
    # grad(real(z ** z)) was complex128 for a complex64 z (user X);
    # jax 0.10.2: (-0.089533865+1.0011616j), complex64
    g = srcjax.grad(lambda z: jnp.real(z**z))(np.complex64(1 + 1j))
    assert np.asarray(g).dtype == np.complex64
    close(g, -0.089533865 + 1.0011616j)


# jacfwd/jacrev/hessian(holomorphic=True) (session 16's debt: NotImplementedError).
# Values recorded from jax 0.10.2 (complex64).
ZS = np.array([1 + 2j, 0.5 - 1j], np.complex64)
WS = np.array([2 - 1j, 1j], np.complex64)


def _quad(z):
    return z * z + 1j * z


def _sin_w(z, w):
    return jnp.sin(z) * w


def _wrap(t, jit):
    return srcjax.jit(t) if jit else t


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("jac", [srcjax.jacfwd, srcjax.jacrev], ids=["jacfwd", "jacrev"])
def test_holomorphic_jacobians_match_jax(jac, jit):
    close(_wrap(jac(_quad, holomorphic=True), jit)(ZS), np.diag([2 + 5j, 1 - 1j]))
    close(_wrap(jac(lambda z: jnp.sum(z**3), holomorphic=True), jit)(ZS), [-9 + 12j, -2.25 - 3j])
    a, b = _wrap(jac(_sin_w, argnums=(0, 1), holomorphic=True), jit)(ZS, WS)
    close(a, np.diag([1.0135481 - 8.1365185j, -0.5634215 + 1.3541806j]))
    close(b, np.diag([3.1657786 + 1.9596009j, 0.7397922 - 1.0313361j]))
    out = _wrap(jac(lambda z: jnp.exp(z) * jnp.array([1.0, 2j]), holomorphic=True), jit)(
        np.complex64(0.5j)
    )
    close(out, [0.87758255 + 0.47942555j, -0.9588511 + 1.7551651j])
    assert np.asarray(out).dtype == np.complex64


def test_holomorphic_hessian_matches_jax():
    h = srcjax.hessian(lambda z: jnp.sum(z**3), holomorphic=True)
    close(h(ZS), np.diag([6 + 12j, 3 - 6j]))


@pytest.mark.parametrize("name", ["jacfwd", "jacrev"])
def test_holomorphic_jacobians_refuse_real_values_as_jax(name):
    jac = getattr(srcjax, name)
    with pytest.raises(TypeError) as info:
        jac(_quad, holomorphic=True)(np.array([1.0, 2.0], np.float32))
    assert str(info.value) == (
        f"{name} with holomorphic=True requires inputs with complex dtype, but got float32."
    )
    with pytest.raises(TypeError) as info:
        jac(jnp.abs, holomorphic=True)(ZS)
    assert str(info.value) == (
        f"{name} with holomorphic=True requires outputs with complex dtype, but got float32."
    )
