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


# session 16's debt: jacrev/jacfwd/hessian said "f_jacrev() missing ...", vjp
# "f_primal() ...", jvp "f_jvp() missing 2 required positional arguments: 'x_dot'
# and 'y_dot'". JAX 0.10.2: "f() missing 1 required positional argument: 'y'" for
# each, "f() takes 2 positional arguments but 3 were given" for one too many.
@pytest.mark.parametrize(
    "call",
    [
        lambda: srcjax.jacrev(f)(jnp.ones(2)),
        lambda: srcjax.jacfwd(f)(jnp.ones(2)),
        lambda: srcjax.hessian(f)(jnp.ones(2)),
        lambda: srcjax.vjp(f, jnp.ones(2)),
    ],
    ids=["jacrev", "jacfwd", "hessian", "vjp"],
)
def test_jacobians_name_the_users_function(call):
    with pytest.raises(TypeError) as info:
        call()
    text = str(info.value)
    assert text.startswith("f() missing 1 required positional argument: 'y'"), text


def test_jacobian_with_one_argument_too_many():
    with pytest.raises(TypeError) as info:
        srcjax.jacfwd(f)(jnp.ones(2), jnp.ones(2), 2)
    assert str(info.value) == "f() takes 2 positional arguments but 3 were given"


def test_jvp_names_the_primal_missing():
    # (srcjax's message is inspect's: "missing a required argument"; JAX's is Python's)
    with pytest.raises(TypeError) as info:
        srcjax.jvp(f, (jnp.ones(2),), (jnp.ones(2),))
    assert str(info.value) == "f() missing a required argument: 'y'"
    with pytest.raises(TypeError) as info:
        srcjax.jacrev(f)(jnp.ones(2), z=3)
    assert str(info.value).startswith("f() "), str(info.value)
