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
