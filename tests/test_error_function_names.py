"""A call that does not bind names the user's function, not the generated one
(fresh user 8, c01_misc_errors.py: ``grad(f)(x)`` for ``def f(x, y)`` said
"f_grad() missing 1 required positional argument: 'y'"). JAX 0.10.2's message
for grad, jit and vmap: "f() missing 1 required positional argument: 'y'"."""

import pytest

import srcjax
import srcjax.numpy as jnp


def f(x, y):
    return jnp.sum(x * y)


@pytest.mark.parametrize("transform", [srcjax.grad, srcjax.vmap, srcjax.value_and_grad])
def test_missing_argument_names_the_users_function(transform):
    with pytest.raises(TypeError) as info:
        transform(f)(jnp.ones(2))
    text = str(info.value)
    assert text.startswith("f() missing 1 required positional argument: 'y'"), text


def test_unexpected_keyword_names_the_users_function():
    with pytest.raises(TypeError) as info:
        srcjax.grad(f)(jnp.ones(2), jnp.ones(2), z=1.0)
    assert str(info.value).startswith("f() got an unexpected keyword argument 'z'"), str(info.value)
