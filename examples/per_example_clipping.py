"""DP-SGD-style training: per-example gradients, each clipped, then noised.

    python examples/per_example_clipping.py [--steps 300] [--clip 1.0] [--noise 0.5]

Differentially private SGD (Abadi et al. 2016, https://arxiv.org/abs/1607.00133)
needs each example's gradient on its own: ``vmap(grad(loss))`` gives them in
one batched call, ``optimizers.clip_grads``' norm rule clips each to ``--clip``
(under vmap, so one norm per example), and Gaussian noise of scale ``--noise *
--clip`` is added to their mean. The model is logistic regression on two
Gaussian blobs. The script checks its per-example gradients against a Python
loop of ``grad`` and prints the final accuracy.
"""

import argparse

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax import random
from srcjax.example_libraries import optimizers
from srcjax.tree_util import tree_map


def loss(params, x, y):
    """Logistic loss of one example (x: (d,), y: 0 or 1)."""
    logit = jnp.dot(x, params["w"]) + params["b"]
    return jnp.logaddexp(0.0, logit) - y * logit


def clipped_grad(params, x, y, clip):
    g = srcjax.grad(loss)(params, x, y)
    return optimizers.clip_grads(g, clip)


@srcjax.jit
def private_step(params, x, y, key, lr, clip, noise):
    per_example = srcjax.vmap(clipped_grad, in_axes=(None, 0, 0, None))(params, x, y, clip)
    mean = tree_map(lambda g: jnp.mean(g, axis=0), per_example)
    kw, kb = random.split(key)
    n = x.shape[0]
    noisy = {
        "w": mean["w"] + noise * clip / n * random.normal(kw, mean["w"].shape),
        "b": mean["b"] + noise * clip / n * random.normal(kb, ()),
    }
    return tree_map(lambda p, g: p - lr * g, params, noisy)


def make_data(n, d, seed):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, n).astype(np.float32)
    centers = np.where(y[:, None] > 0, 1.0, -1.0) * np.linspace(0.5, 1.5, d)
    x = (centers + rng.normal(size=(n, d))).astype(np.float32)
    return x, y


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--noise", type=float, default=0.5)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    x, y = make_data(2000, 5, args.seed)
    params = {"w": np.zeros(5, np.float32), "b": np.float32(0.0)}

    # the per-example gradients, against a Python loop of grad
    batched = srcjax.vmap(srcjax.grad(loss), in_axes=(None, 0, 0))(params, x[:8], y[:8])
    loop = [srcjax.grad(loss)(params, x[i], y[i]) for i in range(8)]
    err = max(float(np.max(np.abs(batched["w"][i] - loop[i]["w"]))) for i in range(8))
    print(f"per-example gradients vs a Python loop of grad: max abs difference {err:.2e}")

    key = random.PRNGKey(args.seed)
    rng = np.random.default_rng(args.seed)
    for _ in range(args.steps):
        idx = rng.choice(len(x), args.batch, replace=False)
        key, sub = random.split(key)
        params = private_step(params, x[idx], y[idx], sub, args.lr, args.clip, args.noise)
    logits = x @ params["w"] + params["b"]
    acc = float(np.mean((logits > 0) == (y > 0)))
    print(f"steps {args.steps}, clip {args.clip}, noise multiplier {args.noise}")
    print(f"accuracy: {acc:.3f}")


if __name__ == "__main__":
    main()
