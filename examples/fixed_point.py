"""Implicit differentiation of an iterative solver with ``custom_vjp``: the JAX
documentation's ``fixed_point`` pattern ("Implicit function differentiation of
iterative implementations", in *Custom derivative rules for JAX-transformable
Python functions*), ported by changing the imports.

    python examples/fixed_point.py

``fixed_point(f, a, x0)`` iterates ``x = f(a, x)`` to convergence. Reverse
mode does not differentiate the iterations: at the solution ``x* = f(a, x*)``
the implicit function theorem gives ``a_bar = (df/da)^T w`` where ``w`` solves
``w = x_bar + (df/dx)^T w``, itself a fixed point, found by the same solver.
The example checks ``grad`` of a square root by Newton's method against
``1 / (2 sqrt(a))`` (eagerly, under ``jit`` and under ``vmap``) and the gradient
of an implicit layer ``x = tanh(W x + b)`` against the linear solve the
theorem gives.

Differences from JAX: the function given to ``fixed_point`` (``f``, a
``nondiff_argnums`` argument) may be defined inside the differentiated function
(``newton_sqrt_local`` below, as the JAX docs write it) only if it reads none of
that function's locals; and because the backward rule calls ``srcjax.vjp``,
second derivatives (``grad(grad(...))``) are refused.
"""

from functools import partial

import numpy as np

import srcjax as jax
import srcjax.numpy as jnp
from srcjax.lax import while_loop

TOL = 1e-6


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x_guess):
    def not_converged(carry):
        x_prev, x = carry
        return jnp.max(jnp.abs(x_prev - x)) > TOL

    def step(carry):
        _, x = carry
        return x, f(a, x)

    _, x_star = while_loop(not_converged, step, (x_guess, f(a, x_guess)))
    return x_star


def fixed_point_fwd(f, a, x_guess):
    x_star = fixed_point(f, a, x_guess)
    return x_star, (a, x_star)


def adjoint_step(f, packed, w):
    """One iteration of ``w = x_bar + (df/dx)^T w`` at the solution."""
    a, x_star, x_bar = packed
    _, pullback_x = jax.vjp(lambda x: f(a, x), x_star)
    return x_bar + pullback_x(w)[0]


def fixed_point_bwd(f, res, x_bar):
    a, x_star = res
    _, pullback_a = jax.vjp(lambda a: f(a, x_star), a)
    w = fixed_point(partial(adjoint_step, f), (a, x_star, x_bar), x_bar)
    (a_bar,) = pullback_a(w)
    return a_bar, jnp.zeros_like(x_star)


fixed_point.defvjp(fixed_point_fwd, fixed_point_bwd)


def newton_step(a, x):
    """Newton's method for ``x**2 = a`` (the Babylonian iteration)."""
    return 0.5 * (x + a / x)


def newton_sqrt(a):
    return fixed_point(newton_step, a, a)


def newton_sqrt_local(a):
    """The JAX docs' version: the update rule a lambda inside the function."""
    update = lambda a, x: 0.5 * (x + a / x)  # noqa: E731 - as the docs write it
    return fixed_point(update, a, a)


def layer_step(params, x):
    w, b = params
    return jnp.tanh(w @ x + b)


def implicit_layer(params):
    return jnp.sum(fixed_point(layer_step, params, jnp.zeros_like(params[1])))


def main():
    a = np.array([0.5, 2.0, 9.0], np.float32)
    exact = 0.5 / np.sqrt(a)
    eager = np.array([float(jax.grad(newton_sqrt)(float(v))) for v in a])
    jitted = np.array([float(jax.jit(jax.grad(newton_sqrt))(float(v))) for v in a])
    batched = np.asarray(jax.vmap(jax.grad(newton_sqrt))(a))
    print(f"sqrt(a) by iteration: {np.asarray(jax.vmap(newton_sqrt)(a))}")
    print(f"grad: {eager}, 1/(2 sqrt(a)): {exact}")
    local = np.array([float(jax.grad(newton_sqrt_local)(float(v))) for v in a])
    for name, got in (("eager", eager), ("jit", jitted), ("vmap", batched), ("local", local)):
        print(f"{name} max relative error: {float(np.max(np.abs(got / exact - 1))):.2e}")

    rng = np.random.RandomState(0)
    w = (0.3 * rng.normal(size=(4, 4))).astype(np.float32)
    b = rng.normal(size=4).astype(np.float32)
    g_w, g_b = jax.grad(implicit_layer)((w, b))
    # the implicit function theorem by hand: x* = tanh(W x* + b), D = 1 - x*^2,
    # d sum(x*)/db = D (I - W^T D)^-1 1 and d/dW = outer(that, x*)
    x = np.zeros(4)
    for _ in range(200):
        x = np.tanh(w @ x + b)
    d = 1 - x**2
    v = np.linalg.solve(np.eye(4) - w.T * d, np.ones(4))
    want_b = d * v
    want_w = np.outer(want_b, x)
    err = max(np.max(np.abs(g_b - want_b)), np.max(np.abs(g_w - want_w)))
    print(f"implicit layer: max abs error of grad vs the implicit function theorem: {err:.2e}")


if __name__ == "__main__":
    main()
