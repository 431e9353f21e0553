"""Fit the parameters of an ODE with ``odeint``'s adjoint gradients, as with
``jax.experimental.ode``.

    python examples/ode_adjoint.py [--steps 200] [--lr 0.03]

The port from JAX is the imports: ``import srcjax as jax`` and ``from
srcjax.experimental.ode import odeint``. The model is a Lotka-Volterra
predator-prey system; observations come from known parameters, and gradient
descent (``optimizers.adam`` from ``srcjax.example_libraries``) with
``jax.jit(jax.value_and_grad(loss))`` recovers them. ``odeint`` is JAX's
adaptive Dormand-Prince solver and its reverse-mode derivative is the adjoint
ODE solved backwards, as in JAX; the example checks that gradient against
central differences (float64) before it trains.
"""

import argparse

import numpy as np

import srcjax as jax
import srcjax.numpy as jnp
from srcjax.example_libraries import optimizers
from srcjax.experimental.ode import odeint


def lotka_volterra(state, t, params):
    prey, pred = state
    a, b, c, d = params[0], params[1], params[2], params[3]
    return (a * prey - b * prey * pred, c * prey * pred - d * pred)


TIMES = np.linspace(0.0, 6.0, 13)
TRUE = np.array([1.0, 0.5, 0.4, 1.1])
START = (1.5, 1.0)


def simulate(params, tol=1e-8):
    return odeint(lotka_volterra, START, TIMES, params, rtol=tol, atol=tol)


def loss(params, observed, tol=1e-8):
    prey, pred = simulate(params, tol)
    return jnp.mean((prey - observed[0]) ** 2 + (pred - observed[1]) ** 2)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--lr", type=float, default=0.03)
    args = parser.parse_args(argv)
    jax.config.update("jax_enable_x64", True)  # finite differences need float64

    observed = tuple(np.asarray(v) for v in simulate(TRUE))
    params = np.array([0.8, 0.6, 0.3, 1.3])
    g = jax.grad(loss)(params, observed)
    eps = 1e-6
    fd = np.array(
        [
            (loss(params + e, observed) - loss(params - e, observed)) / (2 * eps)
            for e in np.eye(4) * eps
        ]
    )
    print(f"adjoint gradient:   {np.asarray(g)}")
    print(f"finite differences: {fd}")
    print(f"max relative difference: {float(np.max(np.abs(g - fd)) / np.max(np.abs(fd))):.2e}")

    # training needs less accuracy than the gradient check
    init, update, get_params = optimizers.adam(args.lr)
    step = jax.jit(jax.value_and_grad(loss))
    state = init(params)
    first = None
    for i in range(args.steps):
        value, g = step(get_params(state), observed, 1e-6)
        first = float(value) if first is None else first
        state = update(i, g, state)
    params = get_params(state)
    print(f"loss: {first:.4f} -> {float(loss(params, observed)):.6f}")
    print(f"fitted parameters: {np.round(params, 3)} (true {TRUE})")


if __name__ == "__main__":
    main()
