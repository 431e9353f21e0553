"""R6: Newton-CG for 16 independent L2-regularised logistic regressions (200
samples x 20 features each), batched with ``vmap`` under ``jit``. The
Hessian-vector product is the autodiff cookbook's ``hvp``: forward-over-reverse,
``jvp(grad(f), primals, tangents)`` with the tuples passed in as arguments. Two
Newton steps of eight conjugate-gradient iterations each."""

import jax.numpy as jnp
from jax import grad, jit, jvp, vmap

PROBLEMS = 16
SAMPLES = 200
FEATURES = 20
L2 = 1e-2
NEWTON_STEPS = 2
CG_STEPS = 8


def make_inputs(rng):
    import numpy as np

    w0 = np.zeros(FEATURES, np.float32)
    xs = rng.standard_normal((PROBLEMS, SAMPLES, FEATURES)).astype(np.float32)
    true_w = rng.standard_normal((PROBLEMS, FEATURES)).astype(np.float32)
    ys = (np.einsum("psf,pf->ps", xs, true_w) > 0).astype(np.float32)
    return w0, xs, ys


def hvp(f, primals, tangents):
    return jvp(grad(f), primals, tangents)[1]


def newton_cg(w, x, y):
    def loss(w):
        z = x @ w
        nll = jnp.mean(jnp.logaddexp(0.0, z) - y * z)
        return nll + 0.5 * L2 * jnp.sum(w * w)

    for _ in range(NEWTON_STEPS):
        g = grad(loss)(w)
        # conjugate gradient for H p = -g
        p = jnp.zeros_like(w)
        r = -g
        d = r
        rr = jnp.sum(r * r)
        for _ in range(CG_STEPS):
            hd = hvp(loss, (w,), (d,))
            alpha = rr / jnp.sum(d * hd)
            p = p + alpha * d
            r = r - alpha * hd
            rr_new = jnp.sum(r * r)
            d = r + (rr_new / rr) * d
            rr = rr_new
        w = w + p
    return w


step = jit(vmap(newton_cg, in_axes=(None, 0, 0)))
