"""Issue 20: a function defined inside the transformed function passed as a
value to a ``custom_vjp``'s ``nondiff_argnums`` parameter: the custom-derivatives
tutorial's ``fixed_point`` example as the JAX docs write it (``update = lambda a,
x: ...`` inside ``newton_sqrt``), which srcjax refused with 'a function defined
inside the transformed function cannot be passed as a value'. Oracle: the
closed form d sqrt(a)/da = 1 / (2 sqrt(a)) (JAX prints 0.35355338 at a = 2)."""

from functools import partial

import numpy as np
import pytest

import srcjax
import srcjax.numpy as jnp
from srcjax import grad, jit, vjp, vmap
from srcjax.lax import while_loop


# -- the tutorial's code, verbatim but for the imports --------------------------------
@partial(srcjax.custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x_guess):
    def cond_fun(carry):
        x_prev, x = carry
        return jnp.abs(x_prev - x) > 1e-6

    def body_fun(carry):
        _, x = carry
        return x, f(a, x)

    _, x_star = while_loop(cond_fun, body_fun, (x_guess, f(a, x_guess)))
    return x_star


def fixed_point_fwd(f, a, x_init):
    x_star = fixed_point(f, a, x_init)
    return x_star, (a, x_star)


def fixed_point_rev(f, res, x_star_bar):
    a, x_star = res
    _, vjp_a = vjp(lambda a: f(a, x_star), a)
    (a_bar,) = vjp_a(fixed_point(partial(rev_iter, f), (a, x_star, x_star_bar), x_star_bar))
    return a_bar, jnp.zeros_like(x_star)


def rev_iter(f, packed, u):
    a, x_star, x_star_bar = packed
    _, vjp_x = vjp(lambda x: f(a, x), x_star)
    return x_star_bar + vjp_x(u)[0]


fixed_point.defvjp(fixed_point_fwd, fixed_point_rev)


def newton_sqrt(a):
    update = lambda a, x: 0.5 * (x + a / x)  # noqa: E731 - as the tutorial writes it
    return fixed_point(update, a, a)


# -------------------------------------------------------------------------------------


def newton_sqrt_def(a):
    def update(a, x):
        return 0.5 * (x + a / x)

    return fixed_point(update, a, a)


def test_the_tutorials_fixed_point_with_a_local_lambda():
    np.testing.assert_allclose(float(newton_sqrt(2.0)), np.sqrt(2.0), rtol=1e-6)
    want = 0.5 / np.sqrt(2.0)  # JAX: 0.35355338
    np.testing.assert_allclose(float(grad(newton_sqrt)(2.0)), want, rtol=1e-6)
    np.testing.assert_allclose(float(jit(grad(newton_sqrt))(2.0)), want, rtol=1e-6)
    a = np.array([2.0, 4.0, 9.0], np.float32)
    np.testing.assert_allclose(vmap(grad(newton_sqrt))(a), 0.5 / np.sqrt(a), rtol=1e-6)
    np.testing.assert_allclose(float(grad(newton_sqrt_def)(2.0)), want, rtol=1e-6)
    # the generated code passes the function by a name that says what it is
    assert "update_fn" in srcjax.source(grad(newton_sqrt))


def test_a_local_function_reading_a_closed_over_value():
    """The lambda reads a variable of the enclosing (test) function, not of the
    transformed one: that is the transformed function's closure, known now."""
    half = 0.5

    def sqrt_closure(a):
        update = lambda a, x: half * (x + a / x)  # noqa: E731
        return fixed_point(update, a, a)

    np.testing.assert_allclose(float(grad(sqrt_closure)(4.0)), 0.25, rtol=1e-6)


def test_a_local_function_reading_a_local_is_refused_with_the_workaround():
    """JAX's custom_vjp refuses a nondiff function closing over a traced value
    too (closure_convert is the workaround): a located error naming the local."""

    def sqrt_reads_local(a):
        half = a * 0 + 0.5
        update = lambda a, x: half * (x + a / x)  # noqa: E731
        return fixed_point(update, a, a)

    with pytest.raises(srcjax.errors.UnsupportedSyntaxError) as info:
        grad(sqrt_reads_local)(2.0)
    msg = str(info.value)
    assert "(`update`) cannot be passed as a value to `fixed_point`" in msg
    assert "test_custom_local_fns.py:" in msg
    assert "(`half`)" in msg


def test_second_derivative_through_a_bwd_calling_vjp_is_refused_not_wrong():
    """JAX gives -0.0883883 (grad(grad(newton_sqrt))(2.)); srcjax runs a bwd
    that calls vjp as it is and refuses to differentiate it."""
    with pytest.raises(srcjax.errors.NoDerivativeRuleError, match="calls `vjp`"):
        grad(grad(newton_sqrt))(2.0)
