"""Newton's method with srcjax.hessian, and a Hessian-free variant (jvp of grad).

    python examples/newton.py [--dim 20] [--iters 10]

Minimizes a regularized logistic-regression loss (smooth and strictly convex)
two ways: full Newton steps ``w -= solve(hessian(f)(w), grad(f)(w))``, and
Newton-CG, where conjugate gradients solve the same system with only
Hessian-vector products ``jvp(grad(f), (w,), (v,))[1]`` (forward over
reverse: the Hessian is never formed). Both converge quadratically; the script
prints the gradient norm per iteration and checks the two minimizers agree.
"""

import argparse

import numpy as np

import srcjax
import srcjax.numpy as jnp


def make_problem(n, d, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d))
    w_true = rng.normal(size=d)
    y = (x @ w_true + 0.5 * rng.normal(size=n) > 0).astype(np.float64)
    return x, y


def loss(w, x, y):
    logits = x @ w
    return jnp.mean(jnp.logaddexp(0.0, logits) - y * logits) + 0.01 * jnp.sum(w * w)


def hvp(w, v, x, y):
    """The Hessian of ``loss`` at ``w`` times ``v``, forward over reverse."""
    return srcjax.jvp(lambda u: srcjax.grad(loss)(u, x, y), (w,), (v,))[1]


def conjugate_gradient(matvec, b, iters=100, rtol=1e-14):
    x = np.zeros_like(b)
    r = b.copy()
    p = r.copy()
    rs = r @ r
    for _ in range(iters):
        ap = matvec(p)
        alpha = rs / (p @ ap)
        x = x + alpha * p
        r = r - alpha * ap
        rs_new = r @ r
        if rs_new <= (rtol**2) * (b @ b):
            break
        p = r + (rs_new / rs) * p
        rs = rs_new
    return x


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dim", type=int, default=20)
    parser.add_argument("--n", type=int, default=500)
    parser.add_argument("--iters", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    srcjax.config.update("jax_enable_x64", True)  # quadratic convergence shows in float64

    x, y = make_problem(args.n, args.dim, args.seed)
    grad_f = srcjax.jit(srcjax.grad(loss))
    hess_f = srcjax.jit(srcjax.hessian(loss))

    w = np.zeros(args.dim)
    print("Newton (srcjax.hessian):")
    for it in range(args.iters):
        g = grad_f(w, x, y)
        print(f"  iter {it}  |grad| = {np.linalg.norm(g):.3e}")
        if np.linalg.norm(g) < 1e-12:
            break
        w = w - np.linalg.solve(hess_f(w, x, y), g)
    w_newton = w

    w = np.zeros(args.dim)
    print("Newton-CG (jvp of grad, no Hessian formed):")
    for it in range(args.iters):
        g = grad_f(w, x, y)
        print(f"  iter {it}  |grad| = {np.linalg.norm(g):.3e}")
        if np.linalg.norm(g) < 1e-12:
            break
        w = w - conjugate_gradient(lambda v, w=w: hvp(w, v, x, y), g)
    final = float(np.linalg.norm(grad_f(w_newton, x, y)))
    print(f"final gradient norm: {final:.3e}")
    print(f"max difference between the two minimizers: {np.max(np.abs(w - w_newton)):.3e}")


if __name__ == "__main__":
    main()
