"""Per-example gradients with vmap (the JAX README's example), by source transformation.

    python examples/seed_vmap.py          # prints the max difference to a Python loop
    python examples/seed_vmap.py --show   # ...and the generated batched gradient source

``vmap(functools.partial(net_grads, params))`` maps the gradient of a small tanh
MLP's loss over a batch of (input, target) pairs; the result, flattened to
``(batch, n_params)``, is checked against a Python loop of ``grad`` calls.
"""

import argparse
import functools

import numpy as np

import srcjax
import srcjax.numpy as jnp

try:
    vmap = srcjax.vmap
except AttributeError:  # until srcjax/__init__.py exports it
    from srcjax.vmap_api import vmap


def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.tanh(outputs)
    return outputs


def loss(params, inputs, targets):
    preds = predict(params, inputs)
    return jnp.sum((preds - targets) ** 2)


net_grads = srcjax.grad(loss)


def init(rng, sizes):
    return [
        (
            (rng.standard_normal((m, n)) / np.sqrt(m)).astype(np.float32),
            (0.1 * rng.standard_normal(n)).astype(np.float32),
        )
        for m, n in zip(sizes[:-1], sizes[1:])
    ]


def flatten(grads, batch):
    return np.concatenate([np.reshape(g, (batch, -1)) for layer in grads for g in layer], axis=1)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--show", action="store_true", help="print the generated source")
    parser.add_argument("--batch", type=int, default=128)
    args = parser.parse_args(argv)

    rng = np.random.default_rng(0)
    params = init(rng, [8, 16, 4])
    inputs = rng.standard_normal((args.batch, 8)).astype(np.float32)
    targets = rng.standard_normal((args.batch, 4)).astype(np.float32)

    per_example_grads = vmap(functools.partial(net_grads, params))
    if args.show:
        print(srcjax.source(per_example_grads, inputs, targets))
    batched = flatten(per_example_grads(inputs, targets), args.batch)
    looped = np.stack(
        [
            flatten([[g[None] for g in layer] for layer in net_grads(params, x, t)], 1)[0]
            for x, t in zip(inputs, targets)
        ]
    )
    n_params = sum(W.size + b.size for W, b in params)
    assert batched.shape == (args.batch, n_params), batched.shape
    diff = float(np.max(np.abs(batched - looped)))
    print(f"per-example gradients: shape {batched.shape}")
    print(f"max abs difference to a Python loop of grad: {diff:.3g}")
    assert diff < 1e-4, diff


if __name__ == "__main__":
    main()
