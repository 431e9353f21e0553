"""An adaptive-step ODE integrator with a Python ``while``, differentiated end to
end in reverse mode and checked against finite differences.

    python examples/ode_adaptive.py [--rtol 1e-6] [--t1 10.0]

The integrator is plain Python: embedded Runge-Kutta-Fehlberg 4(5) steps, a
step size that grows or shrinks with the local error estimate, and a ``while t
< t1`` loop whose trip count depends on the parameters. ``srcjax.grad`` of a
loss on the final state differentiates that program as written (the steps it
took, and the step-size control itself). JAX cannot do this in reverse mode:
``jax.grad`` of a ``lax.while_loop`` raises, so JAX users need a fixed step
count or ``odeint``'s adjoint.

The system is a damped pendulum with parameters (damping, stiffness); the
loss is the squared distance of the final state from a target.
"""

import argparse

import numpy as np

import srcjax
import srcjax.numpy as jnp

# Runge-Kutta-Fehlberg 4(5) tableau
A = [
    [],
    [1 / 4],
    [3 / 32, 9 / 32],
    [1932 / 2197, -7200 / 2197, 7296 / 2197],
    [439 / 216, -8, 3680 / 513, -845 / 4104],
    [-8 / 27, 2, -3544 / 2565, 1859 / 4104, -11 / 40],
]
B4 = [25 / 216, 0, 1408 / 2565, 2197 / 4104, -1 / 5, 0]
B5 = [16 / 135, 0, 6656 / 12825, 28561 / 56430, -9 / 50, 2 / 55]


def pendulum(y, params):
    damping, stiffness = params[0], params[1]
    return jnp.stack([y[1], -stiffness * jnp.sin(y[0]) - damping * y[1]])


def rkf45_step(y, h, params):
    ks = []
    for i in range(6):
        yi = y
        for j in range(i):
            yi = yi + h * A[i][j] * ks[j]
        ks.append(pendulum(yi, params))
    y4 = y
    y5 = y
    for i in range(6):
        y4 = y4 + h * B4[i] * ks[i]
        y5 = y5 + h * B5[i] * ks[i]
    return y5, jnp.max(jnp.abs(y5 - y4))


def integrate(params, y0, t1, rtol):
    y = y0
    t = 0.0
    h = 0.1
    steps = 0
    while t < t1:
        h = jnp.minimum(h, t1 - t)
        y_new, err = rkf45_step(y, h, params)
        tol = rtol * (1.0 + jnp.max(jnp.abs(y)))
        if err <= tol:  # accept the step
            t = t + h
            y = y_new
            steps = steps + 1
        # the usual controller: grow or shrink h by (tol / err) ** (1/5), bounded
        h = h * jnp.clip(0.9 * (tol / (err + 1e-30)) ** 0.2, 0.2, 5.0)
    return y


def loss(params, y0, t1, rtol, target):
    return jnp.sum((integrate(params, y0, t1, rtol) - target) ** 2)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rtol", type=float, default=1e-6)
    parser.add_argument("--t1", type=float, default=10.0)
    args = parser.parse_args(argv)
    srcjax.config.update("jax_enable_x64", True)  # finite differences need float64

    params = np.array([0.3, 2.0])
    y0 = np.array([1.0, 0.0])
    target = np.array([0.1, -0.2])
    g = srcjax.grad(loss)(params, y0, args.t1, args.rtol, target)
    # central differences of the same program: with a tight rtol the step sequence
    # is the same on both sides of each probe
    eps = 1e-6
    fd = np.array(
        [
            (
                loss(params + e, y0, args.t1, args.rtol, target)
                - loss(params - e, y0, args.t1, args.rtol, target)
            )
            / (2 * eps)
            for e in np.eye(2) * eps
        ]
    )
    print(f"final state: {integrate(params, y0, args.t1, args.rtol)}")
    print(f"reverse-mode gradient: {g}")
    print(f"finite differences:    {fd}")
    rel = float(np.max(np.abs(g - fd)) / np.max(np.abs(fd)))
    print(f"max relative difference: {rel:.2e}")


if __name__ == "__main__":
    main()
