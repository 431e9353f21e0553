"""``grad`` / ``value_and_grad`` with ``allow_int=True``: integer and boolean
inputs named in ``argnums`` get JAX's ``float0`` gradient.

Expected values were recorded from jax 0.10.2 (CPU): the gradient of an integer
or boolean leaf is an array of dtype ``[('float0', 'V')]`` (``jax.dtypes.float0``)
with the leaf's shape (``()`` for Python scalars), also inside pytrees, under
``jit`` and under ``vmap`` (where it carries the batch axis, even for an
unbatched input); floating inputs keep their ordinary gradient.
"""

import numpy as np
import pytest

import srcjax as jax
import srcjax.numpy as jnp

FLOAT0 = np.dtype([("float0", "V")])


def _is_float0(g, shape):
    return isinstance(g, np.ndarray) and g.dtype == FLOAT0 and g.shape == shape


def test_float0_is_jax_dtype():
    assert jax.api.FLOAT0 == FLOAT0


def test_scalar_int_and_float():
    # jax: (Array(3., float32), float0 of shape ())
    ga, gn = jax.grad(lambda a, n: a * n, argnums=(0, 1), allow_int=True)(1.0, 3)
    assert ga.dtype == np.float32 and ga == 3.0
    assert _is_float0(gn, ())


def test_int_array_bool_and_numpy_scalars():
    ga, gn = jax.grad(lambda a, n: a * jnp.sum(n), argnums=(0, 1), allow_int=True)(
        2.0, np.arange(3, dtype=np.int32)
    )
    assert ga == 3.0 and _is_float0(gn, (3,))
    for n in (np.uint8(3), np.int32(3), True, np.bool_(True)):
        ga, gn = jax.grad(lambda a, n: a * n, argnums=(0, 1), allow_int=True)(1.0, n)
        assert ga == float(n) and _is_float0(gn, ())


def test_pytree_with_int_and_bool_leaves():
    def f(t):
        return t["a"] * jnp.sum(t["n"]) * t["b"]

    g = jax.grad(f, allow_int=True)({"a": 2.0, "n": np.arange(3, dtype=np.int32), "b": True})
    assert set(g) == {"a", "b", "n"}
    assert g["a"].dtype == np.float32 and g["a"] == 3.0  # jax: 3.0
    assert _is_float0(g["n"], (3,)) and _is_float0(g["b"], ())
    ga, gl = jax.grad(lambda a, n: a * n[0], argnums=(0, 1), allow_int=True)(1.0, [3, True])
    assert ga == 3.0 and isinstance(gl, list)
    assert _is_float0(gl[0], ()) and _is_float0(gl[1], ())


def test_only_int_and_through_integer_ops():
    assert _is_float0(jax.grad(lambda n: 1.0, allow_int=True)(3), ())
    assert _is_float0(jax.grad(lambda n: jnp.float32(n) * 2.0, allow_int=True)(3), ())
    x = np.arange(5.0, dtype=np.float32)
    ga, gn = jax.grad(lambda a, n: a * x[n], argnums=(0, 1), allow_int=True)(2.0, 3)
    assert ga == 3.0 and _is_float0(gn, ())


def test_float_inputs_unaffected():
    g = jax.grad(lambda a, n: a * n, argnums=1, allow_int=True)(1.5, np.float32(3))
    assert g.dtype == np.float32 and g == 1.5


def test_value_and_grad_and_aux():
    v, (ga, gn) = jax.value_and_grad(lambda a, n: a * n, argnums=(0, 1), allow_int=True)(1.0, 3)
    assert v == 3.0 and v.dtype == np.float32  # jax: float32 value
    assert ga == 3.0 and _is_float0(gn, ())
    (v, aux), gn = jax.value_and_grad(
        lambda a, n: (a * n, n), argnums=1, has_aux=True, allow_int=True
    )(2.0, 3)
    assert v == 6.0 and aux == 3 and _is_float0(gn, ())
    gn, aux = jax.grad(lambda a, n: (a * n, a), argnums=1, has_aux=True, allow_int=True)(2.0, 3)
    assert aux == 2.0 and _is_float0(gn, ())


def test_jit():
    ga, gn = jax.jit(jax.grad(lambda a, n: a * n, argnums=(0, 1), allow_int=True))(1.0, 3)
    assert ga == 3.0 and _is_float0(gn, ())


def test_vmap():
    g = jax.grad(lambda a, n: a * n, argnums=(0, 1), allow_int=True)
    # jax: float32 [0, 1, 2, 3] and float0 of shape (4,)
    ga, gn = jax.vmap(g)(jnp.ones(4), jnp.arange(4))
    np.testing.assert_array_equal(ga, [0.0, 1.0, 2.0, 3.0])
    assert _is_float0(gn, (4,))
    # jax: an unbatched integer input still gets a batched float0 gradient
    ga, gn = jax.vmap(g, in_axes=(0, None))(jnp.ones(4), 3)
    np.testing.assert_array_equal(ga, [3.0] * 4)
    assert _is_float0(gn, (4,))
    ga, gn = jax.vmap(g, in_axes=(None, 0))(1.0, jnp.arange(4))
    np.testing.assert_array_equal(ga, [0.0, 1.0, 2.0, 3.0])
    assert _is_float0(gn, (4,))
    t = jax.jit(jax.vmap(jax.grad(lambda t: t["a"] * t["n"], allow_int=True)))(
        {"a": jnp.ones(3), "n": jnp.arange(3)}
    )
    np.testing.assert_array_equal(t["a"], [0.0, 1.0, 2.0])
    assert _is_float0(t["n"], (3,))


def test_grad_of_grad():
    def inner(a, n):
        return jax.grad(lambda b, m: b * b * m, argnums=(0, 1), allow_int=True)(a, n)[0]

    # d/da (2 a n) = 2 n; jax: (6.0, float0 ())
    ga, gn = jax.grad(inner, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert ga == 6.0 and _is_float0(gn, ())
    assert jax.grad(inner)(2.0, 3) == 6.0


def test_without_allow_int_still_refused():
    with pytest.raises(TypeError, match="allow_int=True"):
        jax.grad(lambda a, n: a * n, argnums=(0, 1))(1.0, 3)
    with pytest.raises(TypeError):
        jax.grad(lambda a, n: a * n, argnums=(0, 1), allow_int=True)(1.0, "x")
