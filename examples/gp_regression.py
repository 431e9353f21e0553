"""Gaussian-process regression: hyperparameters fitted by the gradient of the
log marginal likelihood (Cholesky factor and triangular solves).

    python examples/gp_regression.py [--n 40] [--steps 150]

An RBF kernel ``k(a, b) = s2 * exp(-|a - b|^2 / (2 l^2))`` plus noise ``n2``
on the diagonal; the negative log marginal likelihood (Rasmussen and Williams
2006, eq. 2.30) is computed with ``jnp.linalg.cholesky`` and
``srcjax.scipy.linalg.solve_triangular``, and its gradient in the three log
hyperparameters by ``srcjax.value_and_grad`` (checked against central
differences at the start). Adam (``optimizers.adam``) fits them; the script
prints the fitted values and the test error of the posterior mean.
"""

import argparse

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax.example_libraries import optimizers
from srcjax.scipy.linalg import solve_triangular


def kernel(log_params, a, b):
    log_scale, log_length, _ = log_params
    d2 = (a[:, None] - b[None, :]) ** 2
    return jnp.exp(2 * log_scale) * jnp.exp(-0.5 * d2 / jnp.exp(2 * log_length))


def neg_log_marginal_likelihood(log_params, x, y):
    n = x.shape[0]
    k = kernel(log_params, x, x) + (jnp.exp(2 * log_params[2]) + 1e-6) * jnp.eye(n)
    chol = jnp.linalg.cholesky(k)
    alpha = solve_triangular(chol, y, lower=True)
    return (
        0.5 * jnp.sum(alpha**2) + jnp.sum(jnp.log(jnp.diagonal(chol))) + 0.5 * n * np.log(2 * np.pi)
    )


def posterior_mean(log_params, x, y, x_new):
    n = x.shape[0]
    k = kernel(log_params, x, x) + (jnp.exp(2 * log_params[2]) + 1e-6) * jnp.eye(n)
    return kernel(log_params, x_new, x) @ jnp.linalg.solve(k, y)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--steps", type=int, default=150)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    srcjax.config.update("jax_enable_x64", True)

    rng = np.random.default_rng(args.seed)
    x = np.sort(rng.uniform(-3, 3, args.n))
    y = np.sin(2 * x) + 0.1 * rng.normal(size=args.n)
    x_test = np.linspace(-3, 3, 200)

    theta = np.array([0.0, 0.0, -1.0])  # log signal scale, log length scale, log noise
    value_and_grad = srcjax.jit(srcjax.value_and_grad(neg_log_marginal_likelihood))
    _, g = value_and_grad(theta, x, y)
    eps = 1e-6
    fd = np.array(
        [
            (
                neg_log_marginal_likelihood(theta + e, x, y)
                - neg_log_marginal_likelihood(theta - e, x, y)
            )
            / (2 * eps)
            for e in np.eye(3) * eps
        ]
    )
    print(f"gradient vs central differences: max abs difference {np.max(np.abs(g - fd)):.2e}")

    opt_init, opt_update, get_params = optimizers.adam(0.05)
    state = opt_init(theta)
    for i in range(args.steps):
        value, g = value_and_grad(get_params(state), x, y)
        state = opt_update(i, g, state)
        if i % 50 == 0:
            print(f"step {i:4d}  -log p(y) = {float(value):.4f}")
    theta = get_params(state)
    scale, length, noise = np.exp(theta)
    print(f"fitted: signal scale {scale:.3f}, length scale {length:.3f}, noise {noise:.3f}")
    rmse = float(np.sqrt(np.mean((posterior_mean(theta, x, y, x_test) - np.sin(2 * x_test)) ** 2)))
    print(f"posterior mean RMSE against sin(2x): {rmse:.4f}")


if __name__ == "__main__":
    main()
