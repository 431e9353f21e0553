"""A small convnet on scikit-learn's digits with stax and optimizers.adam.

    python examples/stax_digits.py [--epochs 12] [--seed 0] [--out DIR] [--show]

The JAX program this is ported from differs in its imports only: it builds the
model with ``jax.example_libraries.stax`` and trains it with
``jax.example_libraries.optimizers.adam`` inside a ``jax.jit``-ted step. Here
those are ``srcjax.example_libraries.stax`` / ``.optimizers`` and
``srcjax.jit``: the whole step (the convnet's forward pass, its gradient and
Adam's update) is one generated Python function, which ``--show`` prints.

The digits (1797 8x8 images) ship with scikit-learn: nothing is downloaded.
With matplotlib installed the loss curve is saved as ``stax_loss_curve.png`` in
``--out``. At the default settings the test accuracy is 0.97 or more (0.98x).
"""

import argparse
import os
import sys
import time

import numpy as np

import srcjax
import srcjax.numpy as jnp
from srcjax import random
from srcjax.example_libraries import optimizers, stax

# (as with JAX: a module-level model, an (init_fun, apply_fun) pair)
init_fun, predict = stax.serial(
    stax.Conv(16, (3, 3), padding="SAME"),
    stax.Relu,
    stax.Conv(32, (3, 3), padding="SAME"),
    stax.Relu,
    stax.MaxPool((2, 2), strides=(2, 2)),
    stax.Flatten,
    stax.Dense(64),
    stax.Relu,
    stax.Dense(10),
    stax.LogSoftmax,
)


def loss(params, batch):
    inputs, targets = batch
    return -jnp.mean(jnp.sum(predict(params, inputs) * targets, axis=1))


def accuracy(params, batch):
    inputs, targets = batch
    predicted = jnp.argmax(predict(params, inputs), axis=1)
    return float(jnp.mean(predicted == jnp.argmax(targets, axis=1)))


def load_data(seed):
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    x = digits.images.astype(np.float32)[..., None]  # NHWC
    y = np.eye(10, dtype=np.float32)[digits.target]
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.2, random_state=seed, stratify=digits.target
    )
    mean, std = x_train.mean(), x_train.std()  # (the training set's)
    return ((x_train - mean) / std, y_train), ((x_test - mean) / std, y_test)


def save_loss_curve(path, losses, steps_per_epoch):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    fig, ax = plt.subplots(figsize=(6, 4), dpi=100)
    ax.plot(np.arange(1, len(losses) + 1) / steps_per_epoch, losses, lw=0.8)
    ax.set_xlabel("epoch")
    ax.set_ylabel("cross-entropy (batch)")
    ax.set_yscale("log")
    ax.set_title("stax convnet on digits, srcjax.jit + optimizers.adam")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def progress_bar(total, enabled):
    """rich's progress bar on a terminal, nothing otherwise."""
    if enabled and sys.stdout.isatty():
        try:
            from rich.progress import Progress

            return Progress()
        except ImportError:
            pass
    return None


def main(argv=None):
    parser = argparse.ArgumentParser(description="A stax convnet on digits with srcjax.")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=3e-3, help="initial step size")
    parser.add_argument("--decay", type=float, default=0.9, help="step size factor per epoch")
    parser.add_argument("--train-size", type=int, default=0, help="use this many (0: all)")
    parser.add_argument("--out", default=".", help="directory for stax_loss_curve.png")
    parser.add_argument("--show", action="store_true", help="print the generated train step")
    parser.add_argument("--no-progress", action="store_true")
    args = parser.parse_args(argv)

    (x_train, y_train), test = load_data(args.seed)
    if args.train_size:
        x_train, y_train = x_train[: args.train_size], y_train[: args.train_size]
    n = len(x_train)
    steps_per_epoch = n // args.batch_size  # (full batches only: one specialization)
    # the step size decays per epoch (a schedule: a function of the step number)
    schedule = optimizers.exponential_decay(args.lr, steps_per_epoch, args.decay)
    opt_init, opt_update, get_params = optimizers.adam(schedule)

    @srcjax.jit
    def update(i, opt_state, batch):
        value, grads = srcjax.value_and_grad(loss)(get_params(opt_state), batch)
        return opt_update(i, grads, opt_state), value

    _, params = init_fun(random.PRNGKey(args.seed), (-1, 8, 8, 1))
    opt_state = opt_init(params)
    print(
        f"digits: {n} train / {len(test[0])} test images, stax convnet "
        f"(conv16-conv32-pool-dense64-dense10), adam lr={args.lr} (x{args.decay} per epoch), "
        f"batch {args.batch_size}, {args.epochs} epochs"
    )
    if args.show:
        print(srcjax.source(update, 0, opt_state, (x_train[:2], y_train[:2])))
    rng = np.random.default_rng(args.seed)
    losses = []
    step = 0
    t0 = time.perf_counter()
    bar = progress_bar(args.epochs * steps_per_epoch, not args.no_progress)
    task = bar.add_task("training", total=args.epochs * steps_per_epoch) if bar else None
    if bar:
        bar.start()
    try:
        for epoch in range(1, args.epochs + 1):
            order = rng.permutation(n)
            for k in range(steps_per_epoch):
                idx = order[k * args.batch_size : (k + 1) * args.batch_size]
                opt_state, value = update(step, opt_state, (x_train[idx], y_train[idx]))
                losses.append(float(value))
                step += 1
                if bar:
                    bar.advance(task)
            params = get_params(opt_state)
            line = (
                f"epoch {epoch:3d}  train loss {np.mean(losses[-steps_per_epoch:]):.4f}  "
                f"train acc {accuracy(params, (x_train, y_train)):.3f}  "
                f"test acc {accuracy(params, test):.3f}"
            )
            if bar:
                bar.console.print(line, highlight=False)
            else:
                print(line, flush=True)
    finally:
        if bar:
            bar.stop()
    elapsed = time.perf_counter() - t0
    os.makedirs(args.out, exist_ok=True)
    png = save_loss_curve(os.path.join(args.out, "stax_loss_curve.png"), losses, steps_per_epoch)
    print(f"loss curve saved to {png}" if png else "matplotlib not installed: no loss curve")
    print(f"trained in {elapsed:.1f} s ({update._cache_size()} specialization of the step)")
    print(f"test accuracy: {accuracy(get_params(opt_state), test):.3f}")


if __name__ == "__main__":
    main()
