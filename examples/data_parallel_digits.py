"""Data-parallel training of the digits MLP with pmap over 2 CPU devices.

    python examples/data_parallel_digits.py [--steps 200] [--batch 512] [--devices 2]

Each step, every device takes its part of the batch, computes the loss and
gradient with ``value_and_grad`` and averages the gradients over the devices
with ``lax.pmean``; all devices then apply the same SGD update, so their
parameters stay equal. The same training on one device (the whole batch, one
``jit``-ed step) gives the same parameters to float32 rounding: the mean of
the parts' mean gradients is the whole batch's mean gradient. Both runs print
their throughput (examples per second), side by side.
"""

import argparse
import time

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax import lax
from srcjax.nn import log_softmax


def init_params(rng, sizes=(64, 128, 10)):
    params = {}
    for i, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:]), start=1):
        limit = np.sqrt(6.0 / (n_in + n_out))
        params[f"w{i}"] = rng.uniform(-limit, limit, (n_in, n_out)).astype(np.float32)
        params[f"b{i}"] = np.zeros(n_out, np.float32)
    return params


def loss(params, x, y_onehot):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return -jnp.mean(jnp.sum(y_onehot * log_softmax(logits), axis=-1))


LR = 0.5


def sgd(params, grads):
    return {k: params[k] - LR * grads[k] for k in params.keys()}


def step_one_device(params, x, y):
    value, grads = srcjax.value_and_grad(loss)(params, x, y)
    return sgd(params, grads), value


def step_per_device(params, x, y):
    value, grads = srcjax.value_and_grad(loss)(params, x, y)
    grads = lax.pmean(grads, "devices")  # the gradient of the whole batch
    return sgd(params, grads), lax.pmean(value, "devices")


def load(batch):
    try:
        from sklearn.datasets import load_digits

        d = load_digits()
        x, labels = d.data.astype(np.float32) / 16.0, d.target
    except ImportError:  # (scikit-learn not installed: synthetic digits-like data)
        rng = np.random.default_rng(1)
        labels = rng.integers(0, 10, 1797)
        x = (rng.normal(size=(1797, 64)) + labels[:, None] * 0.1).astype(np.float32)
    x, labels = x[:batch], labels[:batch]
    return x, np.eye(10, dtype=np.float32)[labels]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--batch", type=int, default=1792, help="examples per step (all devices)")
    ap.add_argument("--devices", type=int, default=2)
    args = ap.parse_args()
    nd = args.devices
    srcjax.config.update("jax_num_cpu_devices", nd)
    x, y = load(args.batch - args.batch % nd)
    params0 = init_params(np.random.default_rng(0))

    one = srcjax.jit(step_one_device)
    p1, v1 = one(params0, x, y)  # (specialize before timing)
    p1 = params0
    t = time.perf_counter()
    for _ in range(args.steps):
        p1, v1 = one(p1, x, y)
    t_one = time.perf_counter() - t

    per = srcjax.pmap(step_per_device, "devices", in_axes=(None, 0, 0), out_axes=None)
    xs, ys = x.reshape(nd, -1, 64), y.reshape(nd, -1, 10)
    per(params0, xs, ys)
    p2 = params0
    t = time.perf_counter()
    for _ in range(args.steps):
        p2, v2 = per(p2, xs, ys)
    t_per = time.perf_counter() - t

    diff = max(float(np.max(np.abs(p1[k] - p2[k]))) for k in p1)
    scale = max(float(np.max(np.abs(p1[k]))) for k in p1)
    n = args.steps * len(x)
    print(
        f"loss after {args.steps} steps: one device {float(v1):.6f}, {nd} devices {float(v2):.6f}"
    )
    print(f"max |params(one device) - params({nd} devices)| = {diff:.3g} (max |param| {scale:.3g})")
    print(
        f"throughput: one device {n / t_one:,.0f} examples/s, {nd} devices {n / t_per:,.0f} examples/s"
    )


if __name__ == "__main__":
    main()
